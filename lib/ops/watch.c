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

#ifndef SO_MEMINFO
#define SO_MEMINFO 55
#endif
#ifndef SO_RCVBUFFORCE
#define SO_RCVBUFFORCE 33
#endif

#define WATCH_RCVBUF (32 * 1024 * 1024)
#define WATCH_BUF (64 * 1024)

struct sdiag_watch {
	struct sd_nl *nl; /* the transport's event socket */
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

SD_EXPORT int sdiag_watch_open(struct sdiag_watch **ret, unsigned groups, int nsfd)
{
	/* Group g is bit g-1; our SDIAG_WATCH_* bits are laid out the same way. */
	struct sd_nl_opts o = { .proto = NETLINK_SOCK_DIAG,
				.groups = groups,
				.in_netns = nsfd >= 0,
				.nsfd = nsfd,
				.rcvbuf = WATCH_RCVBUF,
				.nonblock = true };
	struct sdiag_watch *w;
	int r;

	if (!groups || (groups & ~SDIAG_WATCH_ALL))
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	r = sd_nl_open_with(&w->nl, &o);
	if (r == 0)
		r = read_drops(sd_nl_fd(w->nl), &w->drops);
	if (r < 0) {
		sdiag_watch_close(w);
		return r;
	}
	*ret = w;
	return 0;
}

SD_EXPORT int sdiag_watch_set_rcvbuf(struct sdiag_watch *w, int bytes)
{
	if (!w || bytes <= 0)
		return -EINVAL;
	if (setsockopt(sd_nl_fd(w->nl), SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)) < 0 &&
	    setsockopt(sd_nl_fd(w->nl), SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes)) < 0)
		return -errno;
	return 0;
}

SD_EXPORT int sdiag_watch_fd(const struct sdiag_watch *w)
{
	return w ? sd_nl_fd(w->nl) : -EINVAL;
}

SD_EXPORT void sdiag_watch_close(struct sdiag_watch *w)
{
	if (!w)
		return;
	sd_nl_close(w->nl);
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
static int run_events(struct sdiag_watch *w, const struct sd_nl_dgram *d,
		      const struct sdiag_filter *f, sdiag_sock_cb cb, void *userdata)
{
	enum sdiag_table t = group_table(d->groups);
	const struct nlmsghdr *nlh;
	size_t left;
	int n = 0, r;

	for (nlh = sd_nl_first(d->data, d->len, &left); nlh; nlh = sd_nl_next(nlh, &left)) {
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
	uint64_t lost = 0, cut = 0;
	uint32_t drops = 0;
	int total = 0, r;

	if (!w || !cb)
		return -EINVAL;
	/* One event per datagram: up to SD_NL_EVENTS of them per system call. */
	for (;;) {
		struct sd_nl_events ev;

		r = sd_nl_recv_events(w->nl, w->buf, sizeof(w->buf), &ev);
		if (r == -ENOBUFS)
			continue; /* counted through sk_drops below */
		if (r == -EAGAIN)
			break;
		if (r < 0)
			return r;
		cut += ev.cut;
		for (unsigned i = 0; i < ev.n; i++) {
			r = run_events(w, &ev.d[i], f, cb, userdata);
			if (r < 0)
				return r;
			total += r;
		}
		if (!ev.more)
			break; /* the queue was empty: no need to ask again */
	}
	if (read_drops(sd_nl_fd(w->nl), &drops) == 0) {
		lost = (uint32_t)(drops - w->drops);
		w->drops = drops;
	}
	if (ret_lost)
		*ret_lost = lost + cut;
	return total;
}
