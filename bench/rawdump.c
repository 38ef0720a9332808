/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rawdump: the raw-dump floor. One NETLINK_SOCK_DIAG SOCK_DIAG_BY_FAMILY dump
 * per address family (AF_INET, then AF_INET6) of TCP sockets in every state,
 * no extensions, read with a 64 KiB buffer; messages are only counted, never
 * decoded. Anything a real tool does costs at least this much: the kernel's
 * walk of the socket hash tables, building the messages and copying them out.
 *
 * Plain sockets, no libmnl and no libsockdiag, so nothing of ours is measured.
 * Prints "inet N inet6 M total T" (or nothing with -q).
 *
 * -s sets the state mask (default ~0: every state, TCP_BOUND_INACTIVE included,
 * which makes the kernel also walk the bind hash table); -4 or -6 dumps only
 * that family. -L sends one legacy TCPDIAG_GETSOCK request instead, which the
 * kernel serves as a single AF_UNSPEC walk for both families (what sockdiag
 * does for TCP): the single-walk floor. -x dumps unix sockets instead (one
 * AF_UNIX dump, asking for what `sockdiag list -x` asks for: name, peer,
 * queue lengths and uid): the floor of bench/unix.sh. -e sets idiag_ext, the
 * extensions asked for (0xe: INET_DIAG_INFO, VEGASINFO and CONG, what
 * `sockdiag list -tanie` asks for): the floor of a dump with tcp_info.
 *
 * usage: rawdump [-q] [-r REPEAT] [-s STATE_MASK] [-e EXT_MASK] [-4|-6|-L|-x]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>

#define RECVBUF (64 * 1024)
#define SO_RCVBUF_SIZE (1024 * 1024)

struct req {
	struct nlmsghdr nlh;
	struct inet_diag_req_v2 r;
};

/* The legacy TCPDIAG_GETSOCK request (struct inet_diag_req): the kernel turns
 * it into a TCP dump with family AF_UNSPEC, one walk for both families. */
struct req_legacy {
	struct nlmsghdr nlh;
	struct inet_diag_req r;
};

/* Read a dump to its end. Returns the number of socket messages, or -errno. */
static long count_replies(int fd, uint32_t seq, uint8_t *buf)
{
	long count = 0;

	for (;;) {
		ssize_t n = recv(fd, buf, RECVBUF, 0);
		const struct nlmsghdr *h = (const struct nlmsghdr *)buf;
		size_t rem;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		rem = (size_t)n;
		for (; NLMSG_OK(h, rem); h = NLMSG_NEXT(h, rem)) {
			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == NLMSG_DONE)
				return count;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				return e->error < 0 ? e->error : -EPROTO;
			}
			count++;
		}
	}
}

/* Send one dump request (nlh with its length and body set) and count its replies. */
static long dump(int fd, struct nlmsghdr *nlh, uint16_t type, uint32_t seq, uint8_t *buf)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	if (sendto(fd, nlh, nlh->nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	return count_replies(fd, seq, buf);
}

static long dump_legacy(int fd, uint32_t states, uint8_t ext, uint32_t seq, uint8_t *buf)
{
	struct req_legacy req;

	memset(&req, 0, sizeof(req));
	req.nlh.nlmsg_len = sizeof(req);
	req.r.idiag_family = AF_UNSPEC;
	req.r.idiag_states = states;
	req.r.idiag_ext = ext;
	return dump(fd, &req.nlh, TCPDIAG_GETSOCK, seq, buf);
}

static long dump_unix(int fd, uint32_t states, uint32_t seq, uint8_t *buf)
{
	struct {
		struct nlmsghdr nlh;
		struct unix_diag_req r;
	} req;

	memset(&req, 0, sizeof(req));
	req.nlh.nlmsg_len = sizeof(req);
	req.r.sdiag_family = AF_UNIX;
	req.r.udiag_states = states;
	req.r.udiag_show = UDIAG_SHOW_NAME | UDIAG_SHOW_PEER | UDIAG_SHOW_RQLEN | UDIAG_SHOW_UID;
	return dump(fd, &req.nlh, SOCK_DIAG_BY_FAMILY, seq, buf);
}

static long dump_family(int fd, uint8_t family, uint32_t states, uint8_t ext, uint32_t seq,
			uint8_t *buf)
{
	struct req req;

	memset(&req, 0, sizeof(req));
	req.nlh.nlmsg_len = sizeof(req);
	req.r.sdiag_family = family;
	req.r.sdiag_protocol = IPPROTO_TCP;
	req.r.idiag_states = states;
	req.r.idiag_ext = ext;
	return dump(fd, &req.nlh, SOCK_DIAG_BY_FAMILY, seq, buf);
}

int main(int argc, char **argv)
{
	static uint8_t buf[RECVBUF] __attribute__((aligned(8)));
	int fd, opt, rcvbuf = SO_RCVBUF_SIZE, repeat = 1;
	uint32_t states = ~0u;
	uint8_t ext = 0;
	int only = 0;
	bool quiet = false, legacy = false, unix_only = false;
	long v4 = 0, v6 = 0;

	while ((opt = getopt(argc, argv, "qr:s:e:46Lx")) != -1) {
		switch (opt) {
		case 'x':
			unix_only = true;
			break;
		case 'L':
			legacy = true;
			break;
		case '4':
		case '6':
			only = opt;
			break;
		case 's':
			states = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'e':
			ext = (uint8_t)strtoul(optarg, NULL, 0);
			break;
		case 'q':
			quiet = true;
			break;
		case 'r':
			repeat = atoi(optarg);
			break;
		default:
			fprintf(stderr,
				"usage: rawdump [-q] [-r REPEAT] [-s STATE_MASK] [-e EXT_MASK] [-4|-6|-L|-x]\n");
			return 2;
		}
	}
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0) {
		perror("rawdump: socket");
		return 1;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	for (int i = 0; unix_only && i < repeat; i++) {
		v4 = dump_unix(fd, states, (uint32_t)i + 1, buf);
		if (v4 < 0) {
			fprintf(stderr, "rawdump: %s\n", strerror((int)-v4));
			return 1;
		}
	}
	if (unix_only) {
		if (!quiet)
			printf("unix %ld total %ld\n", v4, v4);
		close(fd);
		return 0;
	}
	for (int i = 0; legacy && i < repeat; i++) {
		v4 = dump_legacy(fd, states, ext, (uint32_t)i + 1, buf);
		if (v4 < 0) {
			fprintf(stderr, "rawdump: %s\n", strerror((int)-v4));
			return 1;
		}
	}
	for (int i = 0; !legacy && i < repeat; i++) {
		v4 = only == '6' ? 0 : dump_family(fd, AF_INET, states, ext, 2 * (uint32_t)i + 1, buf);
		if (v4 < 0)
			v6 = v4;
		else
			v6 = only == '4' ?
				     0 :
				     dump_family(fd, AF_INET6, states, ext, 2 * (uint32_t)i + 2, buf);
		if (v4 < 0 || v6 < 0) {
			fprintf(stderr, "rawdump: %s\n", strerror((int)-(v4 < 0 ? v4 : v6)));
			return 1;
		}
	}
	if (!quiet && legacy)
		printf("both %ld total %ld\n", v4, v4);
	else if (!quiet)
		printf("inet %ld inet6 %ld total %ld\n", v4, v6, v4 + v6);
	close(fd);
	return 0;
}
