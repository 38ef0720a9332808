/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * capture FAMILY OUTFILE [PROTO]
 *
 * Record one sock_diag dump as golden bytes for the offline decoder tests.
 * The request is built by the library's own request builder (SDIAG_SHOW_ALL,
 * every state), sent on a private NETLINK_SOCK_DIAG socket, and every reply
 * datagram is appended verbatim to OUTFILE, terminating NLMSG_DONE included.
 * Iterating the file with mnl_nlmsg_ok()/mnl_nlmsg_next() walks all replies.
 *
 * FAMILY: inet, inet6, unix, netlink, packet.
 * PROTO (inet/inet6 only): tcp (default), udp, udplite, raw, mptcp, sctp.
 *
 * Exit status: 0 on success, 1 on a usage error, 2 on a system or kernel error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>

#include "lib/core/internal.h"
#include "lib/family/family.h"

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

#define RECV_SIZE (64 * 1024)
#define REQ_SIZE (8 * 1024)

struct target {
	struct sd_req req;
	struct nlmsghdr *(*build)(void *buf, const struct sd_req *r);
};

static int parse_inet_proto(const char *name, uint16_t *ret_proto, uint32_t *ret_table)
{
	static const struct {
		const char *name;
		uint16_t proto;
		enum sdiag_table table;
	} protos[] = {
		{ "tcp", IPPROTO_TCP, SDIAG_T_TCP },
		{ "udp", IPPROTO_UDP, SDIAG_T_UDP },
		{ "udplite", IPPROTO_UDPLITE, SDIAG_T_UDPLITE },
		{ "raw", IPPROTO_RAW, SDIAG_T_RAW },
		{ "mptcp", IPPROTO_MPTCP, SDIAG_T_MPTCP },
		{ "sctp", IPPROTO_SCTP, SDIAG_T_SCTP },
	};

	for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
		if (!strcmp(name, protos[i].name)) {
			*ret_proto = protos[i].proto;
			*ret_table = SDIAG_TABLE_BIT(protos[i].table);
			return 0;
		}
	return -EINVAL;
}

static int parse_target(int argc, char **argv, struct target *t)
{
	const char *fam = argv[1];
	const char *proto = argc > 3 ? argv[3] : "tcp";

	memset(t, 0, sizeof(*t));
	t->req.states = SDIAG_STATES_ALL;
	t->req.show = SDIAG_SHOW_ALL;
	if (!strcmp(fam, "inet") || !strcmp(fam, "inet6")) {
		t->req.family = fam[4] == '6' ? AF_INET6 : AF_INET;
		t->build = sd_inet_request;
		return parse_inet_proto(proto, &t->req.protocol, &t->req.tables);
	}
	if (argc > 3)
		return -EINVAL;
	if (!strcmp(fam, "unix")) {
		t->req.family = AF_UNIX;
		t->req.tables = SDIAG_TABLES_UNIX;
		t->build = sd_unix_request;
	} else if (!strcmp(fam, "netlink")) {
		t->req.family = AF_NETLINK;
		t->req.tables = SDIAG_TABLE_BIT(SDIAG_T_NETLINK);
		t->build = sd_netlink_request;
	} else if (!strcmp(fam, "packet")) {
		t->req.family = AF_PACKET;
		t->req.tables = SDIAG_TABLES_PACKET;
		t->build = sd_packet_request;
	} else {
		return -EINVAL;
	}
	return 0;
}

/* Returns 1 when the datagram ends the dump, 0 to read on, <0 for a kernel error. */
static int scan_datagram(const void *buf, size_t len, uint32_t seq)
{
	const struct nlmsghdr *nlh = buf;
	int rem = (int)len;

	for (; mnl_nlmsg_ok(nlh, rem); nlh = mnl_nlmsg_next(nlh, &rem)) {
		if (nlh->nlmsg_seq != seq)
			continue;
		if (nlh->nlmsg_type == NLMSG_DONE)
			return 1;
		if (nlh->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

			if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*e))
				return -EBADMSG;
			return e->error < 0 ? e->error : 1;
		}
	}
	return 0;
}

static int run_capture(const struct target *t, FILE *out)
{
	static uint8_t req[REQ_SIZE] __attribute__((aligned(8)));
	static uint8_t buf[RECV_SIZE] __attribute__((aligned(8)));
	struct mnl_socket *nl = NULL;
	struct nlmsghdr *nlh;
	uint32_t seq = 1;
	int r;

	nl = mnl_socket_open(NETLINK_SOCK_DIAG);
	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		r = -errno;
		goto out;
	}
	nlh = t->build(req, &t->req);
	if (!nlh) {
		r = -EMSGSIZE;
		goto out;
	}
	nlh->nlmsg_seq = seq;
	nlh->nlmsg_pid = 0;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		r = -errno;
		goto out;
	}
	for (;;) {
		ssize_t n = recv(mnl_socket_get_fd(nl), buf, sizeof(buf), MSG_TRUNC);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			goto out;
		}
		if ((size_t)n > sizeof(buf)) {
			r = -EMSGSIZE;
			goto out;
		}
		if (fwrite(buf, 1, (size_t)n, out) != (size_t)n) {
			r = -EIO;
			goto out;
		}
		r = scan_datagram(buf, (size_t)n, seq);
		if (r != 0)
			break;
	}
	if (r > 0)
		r = 0;
out:
	mnl_socket_close(nl);
	return r;
}

int main(int argc, char **argv)
{
	struct target t;
	FILE *out;
	int r;

	if (argc < 3 || argc > 4 || parse_target(argc, argv, &t) < 0) {
		fprintf(stderr,
			"usage: %s inet|inet6|unix|netlink|packet OUTFILE "
			"[tcp|udp|udplite|raw|mptcp|sctp]\n",
			argv[0]);
		return 1;
	}
	out = fopen(argv[2], "wb");
	if (!out) {
		fprintf(stderr, "%s: %s\n", argv[2], strerror(errno));
		return 2;
	}
	r = run_capture(&t, out);
	if (fclose(out) != 0 && r == 0)
		r = -errno;
	if (r < 0) {
		fprintf(stderr, "capture: %s\n", strerror(-r));
		return 2;
	}
	return 0;
}
