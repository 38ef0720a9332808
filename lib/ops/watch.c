/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Watch: socket-destroy events from sock_diag's multicast groups
 * (SKNLGRP_INET{,6}_{TCP,UDP}_DESTROY; the kernel has no others).
 *
 * Bursts: the receive buffer is forced large (SO_RCVBUFFORCE when allowed);
 * when it still overflows, the kernel drops events and counts each drop in
 * the socket's sk_drops, which SO_MEMINFO reads back. So a reader learns
 * exactly how many events were lost and carries on; ENOBUFS is not fatal.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include "lib/core/internal.h"
#include "lib/family/family.h"
#include "lib/ns/ns.h"

#ifndef SO_MEMINFO
#define SO_MEMINFO 55
#endif
#ifndef SO_RCVBUFFORCE
#define SO_RCVBUFFORCE 33
#endif

#define WATCH_RCVBUF (32 * 1024 * 1024)
#define WATCH_BUF (64 * 1024)

struct sdiag_watch {
	int fd;
	uint32_t drops;		/* sk_drops at the last check */
	uint8_t buf[WATCH_BUF] __attribute__((aligned(8)));
	struct sdiag_sock rec;
};

static int read_drops(int fd, uint32_t *ret)
{
	uint32_t mem[SDIAG_SKMEM_VARS] = { 0 };
	socklen_t len = sizeof(mem);

	if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mem, &len) < 0)
		return -errno;
	if (len < sizeof(mem))
		return -EOPNOTSUPP;
	*ret = mem[SDIAG_SKMEM_DROPS];
	return 0;
}

static int watch_socket(void *arg)
{
	int *ret_fd = arg;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_SOCK_DIAG);

	if (fd < 0)
		return -errno;
	*ret_fd = fd;
	return 0;
}

SD_EXPORT int sdiag_watch_open(struct sdiag_watch **ret, unsigned groups, int nsfd)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct sdiag_watch *w;
	int r, size = WATCH_RCVBUF;

	if (!groups || (groups & ~SDIAG_WATCH_ALL))
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fd = -1;
	r = nsfd >= 0 ? sd_in_netns(nsfd, watch_socket, &w->fd) : watch_socket(&w->fd);
	if (r < 0)
		goto fail;
	if (setsockopt(w->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		(void)setsockopt(w->fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	/* Group g is bit g-1; our SDIAG_WATCH_* bits are laid out the same way. */
	sa.nl_groups = groups;
	if (bind(w->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		goto fail;
	}
	r = read_drops(w->fd, &w->drops);
	if (r < 0)
		goto fail;
	*ret = w;
	return 0;
fail:
	sdiag_watch_close(w);
	return r;
}

SD_EXPORT int sdiag_watch_set_rcvbuf(struct sdiag_watch *w, int bytes)
{
	if (!w || bytes <= 0)
		return -EINVAL;
	if (setsockopt(w->fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)) < 0 &&
	    setsockopt(w->fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes)) < 0)
		return -errno;
	return 0;
}

SD_EXPORT int sdiag_watch_fd(const struct sdiag_watch *w)
{
	return w ? w->fd : -EINVAL;
}

SD_EXPORT void sdiag_watch_close(struct sdiag_watch *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	free(w);
}

static enum sdiag_table group_table(uint32_t nl_groups)
{
	if (nl_groups & ((1u << (SKNLGRP_INET_UDP_DESTROY - 1)) |
			 (1u << (SKNLGRP_INET6_UDP_DESTROY - 1))))
		return SDIAG_T_UDP;
	return SDIAG_T_TCP;
}

/* Decode one datagram's events; returns the number passed on or <0. */
static int run_events(struct sdiag_watch *w, size_t len, uint32_t nl_groups,
		      const struct sdiag_filter *f, sdiag_sock_cb cb, void *userdata)
{
	const struct nlmsghdr *nlh = (const struct nlmsghdr *)w->buf;
	enum sdiag_table t = group_table(nl_groups);
	int n = 0, r;

	for (; NLMSG_OK(nlh, len); nlh = NLMSG_NEXT(nlh, len)) {
		if (nlh->nlmsg_type != SOCK_DIAG_BY_FAMILY)
			continue;
		memset(&w->rec, 0, sizeof(w->rec));
		w->rec.table = t;
		w->rec.protocol = t == SDIAG_T_UDP ? IPPROTO_UDP : IPPROTO_TCP;
		r = sd_inet_decode(nlh, &w->rec);
		if (r <= 0)
			continue; /* a malformed event is skipped, not fatal */
		/* UDP events carry sk_wmem_alloc_get() of a socket being freed: -1. */
		if (t == SDIAG_T_UDP && w->rec.wqueue == UINT32_MAX)
			w->rec.has &= ~SDIAG_HAS_QUEUES;
		if (f && !sdiag_filter_match(f, &w->rec))
			continue;
		r = cb(&w->rec, userdata);
		if (r < 0)
			return r;
		n++;
	}
	return n;
}

SD_EXPORT int sdiag_watch_read(struct sdiag_watch *w, const struct sdiag_filter *f,
			       sdiag_sock_cb cb, void *userdata, uint64_t *ret_lost)
{
	uint64_t lost = 0;
	uint32_t drops = 0;
	int total = 0, r;

	if (!w || !cb)
		return -EINVAL;
	for (;;) {
		struct sockaddr_nl sa;
		struct iovec iov = { w->buf, sizeof(w->buf) };
		struct msghdr mh = { .msg_name = &sa, .msg_namelen = sizeof(sa),
				     .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n = recvmsg(w->fd, &mh, MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS)
				continue; /* counted through sk_drops below */
			if (errno == EAGAIN)
				break;
			return -errno;
		}
		if (sa.nl_pid != 0)
			continue; /* only the kernel sends these */
		r = run_events(w, (size_t)n, sa.nl_groups, f, cb, userdata);
		if (r < 0)
			return r;
		total += r;
	}
	if (read_drops(w->fd, &drops) == 0) {
		lost = (uint32_t)(drops - w->drops);
		w->drops = drops;
	}
	if (ret_lost)
		*ret_lost = lost;
	return total;
}
