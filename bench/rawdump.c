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
 * usage: rawdump [-q] [-r REPEAT]
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
#define SO_RCVBUF_SIZE (1024 * 1024)

struct req {
	struct nlmsghdr nlh;
	struct inet_diag_req_v2 r;
};

/* Returns the number of socket messages, or -errno. */
static long dump_family(int fd, uint8_t family, uint32_t seq, uint8_t *buf)
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
	req.r.idiag_states = ~0u;
	req.r.idiag_ext = 0;
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

int main(int argc, char **argv)
{
	static uint8_t buf[RECVBUF] __attribute__((aligned(8)));
	int fd, opt, rcvbuf = SO_RCVBUF_SIZE, repeat = 1;
	bool quiet = false;
	long v4 = 0, v6 = 0;

	while ((opt = getopt(argc, argv, "qr:")) != -1) {
		switch (opt) {
		case 'q':
			quiet = true;
			break;
		case 'r':
			repeat = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: rawdump [-q] [-r REPEAT]\n");
			return 2;
		}
	}
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0) {
		perror("rawdump: socket");
		return 1;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	for (int i = 0; i < repeat; i++) {
		v4 = dump_family(fd, AF_INET, 2 * (uint32_t)i + 1, buf);
		v6 = v4 < 0 ? v4 : dump_family(fd, AF_INET6, 2 * (uint32_t)i + 2, buf);
		if (v4 < 0 || v6 < 0) {
			fprintf(stderr, "rawdump: %s\n", strerror((int)-(v4 < 0 ? v4 : v6)));
			return 1;
		}
	}
	if (!quiet)
		printf("inet %ld inet6 %ld total %ld\n", v4, v6, v4 + v6);
	close(fd);
	return 0;
}
