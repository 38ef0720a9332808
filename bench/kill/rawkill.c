/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rawkill: the batched destroy floor. Dumps TCP sockets per address family
 * (AF_INET, then AF_INET6) in the given states on one NETLINK_SOCK_DIAG socket
 * and, for every socket message, appends a SOCK_DESTROY naming it (family,
 * protocol, the whole id as dumped) to a batch sent on a second socket once
 * full: no NLM_F_ACK, then a non-blocking drain that counts the failures.
 * Nothing is decoded beyond copying the id; no libmnl, no libsockdiag. A real
 * tool that destroys exactly what it dumped cannot do less.
 *
 * Prints "dumped D destroyed X failed F" (or nothing with -q).
 *
 * usage: rawkill [-q] [-b BATCH] [-s STATES_HEX]   (default: 1024, ss's
 *        "connected" states, as `ss -K -t` and `sockdiag kill -t --all`)
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

struct killer {
	int dfd; /* destroy socket */
	unsigned batch, n;
	uint32_t seq;
	struct req *reqs;
	long destroyed, failed;
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
		perror("rawkill: sendto");
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

static void add(struct killer *k, uint8_t family, const struct inet_diag_msg *m)
{
	struct req *q = &k->reqs[k->n++];

	memset(q, 0, sizeof(*q));
	q->nlh.nlmsg_len = sizeof(*q);
	q->nlh.nlmsg_type = SOCK_DESTROY;
	q->nlh.nlmsg_flags = NLM_F_REQUEST;
	q->nlh.nlmsg_seq = ++k->seq;
	q->r.sdiag_family = family;
	q->r.sdiag_protocol = IPPROTO_TCP;
	q->r.id = m->id;
	if (k->n == k->batch)
		flush(k);
}

/* Returns the number of socket messages, or -errno. */
static long dump_family(int fd, struct killer *k, uint8_t family, uint32_t states, uint32_t seq,
			uint8_t *buf)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct req req;
	long count = 0;

	memset(&req, 0, sizeof(req));
	req.nlh.nlmsg_len = sizeof(req);
	req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.nlh.nlmsg_seq = seq;
	req.r.sdiag_family = family;
	req.r.sdiag_protocol = IPPROTO_TCP;
	req.r.idiag_states = states;
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
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
			if (h->nlmsg_type == NLMSG_DONE) {
				flush(k);
				return count;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				return e->error < 0 ? e->error : -EPROTO;
			}
			add(k, family, NLMSG_DATA(h));
			count++;
		}
	}
}

static int open_diag(int rcvbuf)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG), one = 1;

	if (fd < 0) {
		perror("rawkill: socket");
		exit(1);
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	(void)setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	return fd;
}

int main(int argc, char **argv)
{
	struct killer k = { .batch = 1024 };
	uint32_t states = CONNECTED;
	bool quiet = false;
	uint8_t *buf;
	long total = 0, r;
	int opt, fd, sndbuf = 4 << 20;

	while ((opt = getopt(argc, argv, "qb:s:")) != -1) {
		switch (opt) {
		case 'q':
			quiet = true;
			break;
		case 'b':
			k.batch = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 's':
			states = (uint32_t)strtoul(optarg, NULL, 16);
			break;
		default:
			fprintf(stderr, "usage: rawkill [-q] [-b BATCH] [-s STATES_HEX]\n");
			return 2;
		}
	}
	if (!k.batch || k.batch > 8192) {
		fprintf(stderr, "rawkill: batch must be 1..8192\n");
		return 2;
	}
	buf = malloc(RECVBUF);
	k.reqs = calloc(k.batch, sizeof(*k.reqs));
	if (!buf || !k.reqs)
		return 1;
	fd = open_diag(1 << 20);
	k.dfd = open_diag(8 << 20); /* room for every reply of a batch */
	(void)setsockopt(k.dfd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf));
	for (int f = 0; f < 2; f++) {
		r = dump_family(fd, &k, f ? AF_INET6 : AF_INET, states, (uint32_t)f + 1, buf);
		if (r < 0) {
			fprintf(stderr, "rawkill: dump: %s\n", strerror((int)-r));
			return 1;
		}
		total += r;
	}
	if (!quiet)
		printf("dumped %ld destroyed %ld failed %ld\n", total, k.destroyed, k.failed);
	return 0;
}
