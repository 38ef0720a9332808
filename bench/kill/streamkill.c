/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * streamkill: the streaming destroy floor. One dump of the TCP sockets in the
 * given states (a legacy TCPDIAG_GETSOCK request, which the kernel serves as
 * a single AF_UNSPEC walk for both families, as sockdiag asks; -P: one
 * SOCK_DIAG_BY_FAMILY dump per family instead) on one NETLINK_SOCK_DIAG
 * socket, and after every datagram of it, before the next recv(), one
 * sendto() on a second socket carrying a SOCK_DESTROY for each socket that
 * datagram named (family, protocol, the id as dumped; no NLM_F_ACK), then a
 * non-blocking drain that counts failures. Dump and destroy interleave at the
 * finest grain a batching tool can: every peer the dump has not reached yet
 * is reset while the walk goes on, so the dump finds it gone (in CLOSE,
 * outside the states asked) instead of dumping and destroying it. Nothing is
 * decoded beyond copying ids; no libmnl, no libsockdiag.
 *
 * Prints "dumped D destroyed X failed F datagrams G" (or nothing with -q).
 *
 * usage: streamkill [-q] [-P] [-s STATES_HEX]   (default: ss's "connected"
 *        states, as `ss -K -t` and `sockdiag kill -t --all`)
 */
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

#define RECVBUF (64 * 1024)
/* A 64 KiB datagram holds fewer than 64 KiB / sizeof(inet_diag_msg) sockets. */
#define MAXBATCH (RECVBUF / sizeof(struct inet_diag_msg) + 1)
#ifndef SOCK_DESTROY
#define SOCK_DESTROY 21
#endif
#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif
/* All states but LISTEN, CLOSE, TIME-WAIT and SYN-RECV (ss's default). */
#define CONNECTED (0x3fffu & ~((1u << 10) | (1u << 7) | (1u << 6) | (1u << 3)))

struct req {
	struct nlmsghdr nlh;
	struct inet_diag_req_v2 r;
};

struct req_legacy {
	struct nlmsghdr nlh;
	struct inet_diag_req r;
};

struct killer {
	int dfd; /* destroy socket */
	unsigned n;
	uint32_t seq;
	struct req reqs[MAXBATCH];
	long destroyed, failed, datagrams;
	uint8_t rx[256];
};

static void flush(struct killer *k)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	long fails = 0;

	if (!k->n)
		return;
	if (sendto(k->dfd, k->reqs, k->n * sizeof(*k->reqs), 0, (struct sockaddr *)&sa,
		   sizeof(sa)) < 0) {
		perror("streamkill: sendto");
		exit(1);
	}
	/* Processing was synchronous: every failure's reply is queued now. */
	for (;;) {
		ssize_t r = recv(k->dfd, k->rx, sizeof(k->rx), MSG_DONTWAIT);

		if (r < 0) {
			if (errno == EINTR || errno == ENOBUFS)
				continue;
			break;
		}
		if (r >= (ssize_t)sizeof(struct nlmsghdr) &&
		    ((struct nlmsghdr *)k->rx)->nlmsg_type == NLMSG_ERROR)
			fails++;
	}
	k->failed += fails;
	k->destroyed += k->n - fails;
	k->n = 0;
}

static void add(struct killer *k, const struct inet_diag_msg *m)
{
	struct req *q = &k->reqs[k->n++];

	memset(q, 0, sizeof(*q));
	q->nlh.nlmsg_len = sizeof(*q);
	q->nlh.nlmsg_type = SOCK_DESTROY;
	q->nlh.nlmsg_flags = NLM_F_REQUEST;
	q->nlh.nlmsg_seq = ++k->seq;
	q->r.sdiag_family = m->idiag_family;
	q->r.sdiag_protocol = IPPROTO_TCP;
	q->r.id = m->id;
}

/* Read the dump with sequence seq to its end, destroying each datagram's
 * sockets before reading the next. Returns the number of socket messages,
 * or -errno. */
static long stream(int fd, struct killer *k, uint32_t seq, uint8_t *buf)
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
		k->datagrams++;
		rem = (size_t)n;
		for (; NLMSG_OK(h, rem); h = NLMSG_NEXT(h, rem)) {
			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == NLMSG_DONE) {
				flush(k);
				return count;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				return e->error < 0 ? e->error : -EPROTO;
			}
			add(k, NLMSG_DATA(h));
			count++;
		}
		flush(k);
	}
}

static long dump_one(int fd, struct killer *k, int family, uint32_t states, uint32_t seq,
		     uint8_t *buf)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct req_legacy lr;
	struct req req;
	const void *msg = &req;
	size_t len = sizeof(req);

	memset(&req, 0, sizeof(req));
	memset(&lr, 0, sizeof(lr));
	if (family == AF_UNSPEC) {
		lr.nlh.nlmsg_len = sizeof(lr);
		lr.nlh.nlmsg_type = TCPDIAG_GETSOCK;
		lr.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
		lr.nlh.nlmsg_seq = seq;
		lr.r.idiag_family = AF_UNSPEC;
		lr.r.idiag_states = states;
		msg = &lr;
		len = sizeof(lr);
	} else {
		req.nlh.nlmsg_len = sizeof(req);
		req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
		req.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
		req.nlh.nlmsg_seq = seq;
		req.r.sdiag_family = (uint8_t)family;
		req.r.sdiag_protocol = IPPROTO_TCP;
		req.r.idiag_states = states;
	}
	if (sendto(fd, msg, len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	return stream(fd, k, seq, buf);
}

static int open_diag(int rcvbuf)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG), one = 1;

	if (fd < 0) {
		perror("streamkill: socket");
		exit(1);
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	(void)setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	return fd;
}

int main(int argc, char **argv)
{
	static struct killer k;
	uint32_t states = CONNECTED;
	bool quiet = false, per_family = false;
	int families[2] = { AF_UNSPEC, -1 };
	uint8_t *buf;
	long total = 0, r;
	int opt, fd, sndbuf = 4 << 20;

	while ((opt = getopt(argc, argv, "qPs:")) != -1) {
		switch (opt) {
		case 'q':
			quiet = true;
			break;
		case 'P':
			per_family = true;
			break;
		case 's':
			states = (uint32_t)strtoul(optarg, NULL, 16);
			break;
		default:
			fprintf(stderr, "usage: streamkill [-q] [-P] [-s STATES_HEX]\n");
			return 2;
		}
	}
	if (per_family) {
		families[0] = AF_INET;
		families[1] = AF_INET6;
	}
	buf = malloc(RECVBUF);
	if (!buf)
		return 1;
	fd = open_diag(1 << 20);
	k.dfd = open_diag(8 << 20); /* room for every reply of a batch */
	(void)setsockopt(k.dfd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf));
	for (int f = 0; f < 2 && families[f] >= 0; f++) {
		r = dump_one(fd, &k, families[f], states, (uint32_t)f + 1, buf);
		if (r < 0) {
			fprintf(stderr, "streamkill: dump: %s\n", strerror((int)-r));
			return 1;
		}
		total += r;
	}
	if (!quiet)
		printf("dumped %ld destroyed %ld failed %ld datagrams %ld\n", total, k.destroyed,
		       k.failed, k.datagrams);
	free(buf);
	return 0;
}
