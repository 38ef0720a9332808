/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The guard's view of rtnetlink: full dumps of links and addresses into a
 * table (guard_view.c parses), events read, and the drain after an overflow. Two sockets: one subscribed
 * to link and address events, one for dumps (a dump's replies must not mix
 * with events, and a resync must not wait behind queued events).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <net/if.h>
#ifndef IFF_LOWER_UP
#define IFF_LOWER_UP 0x10000
#endif
#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include "daemon/guard/guard.h"
#include "daemon/guard/guard_rtnl.h"

int grtnl_open(struct grtnl *g, int rcvbuf)
{
	int size = rcvbuf > 0 ? rcvbuf : 4 * 1024 * 1024, one = 1;

	memset(g, 0, sizeof(*g));
	g->events = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC | SOCK_NONBLOCK);
	g->dumps = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!g->events || !g->dumps)
		goto fail;
	if (setsockopt(mnl_socket_get_fd(g->events), SOL_SOCKET, SO_RCVBUFFORCE, &size,
		       sizeof(size)) < 0)
		(void)setsockopt(mnl_socket_get_fd(g->events), SOL_SOCKET, SO_RCVBUF, &size,
				 sizeof(size));
	(void)mnl_socket_setsockopt(g->dumps, NETLINK_GET_STRICT_CHK, &one, sizeof(one));
	if (mnl_socket_bind(g->events,
			    RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR,
			    MNL_SOCKET_AUTOPID) < 0 ||
	    mnl_socket_bind(g->dumps, 0, MNL_SOCKET_AUTOPID) < 0)
		goto fail;
	g->seq = (uint32_t)time(NULL);
	return 0;
fail:
	{
		int r = -errno;

		grtnl_close(g);
		return r ? r : -EIO;
	}
}

void grtnl_close(struct grtnl *g)
{
	if (g->events)
		mnl_socket_close(g->events);
	if (g->dumps)
		mnl_socket_close(g->dumps);
	g->events = g->dumps = NULL;
}

int grtnl_event_fd(const struct grtnl *g)
{
	return mnl_socket_get_fd(g->events);
}

static int dump_cb(const struct nlmsghdr *nlh, void *data)
{
	struct guard_table *t = data;
	struct guard_addr a;
	struct guard_link l;

	switch (nlh->nlmsg_type) {
	case RTM_NEWLINK:
		if (grtnl_parse_link(nlh, &l) == 0)
			return guard_table_set_link(t, &l) < 0 ? MNL_CB_ERROR : MNL_CB_OK;
		break;
	case RTM_NEWADDR:
		if (grtnl_parse_addr(nlh, &a) == 0)
			return guard_table_add_addr(t, &a) < 0 ? MNL_CB_ERROR : MNL_CB_OK;
		break;
	}
	return MNL_CB_OK;
}

static int dump_one(struct grtnl *g, uint16_t type, uint8_t family, struct guard_table *t)
{
	uint8_t buf[32768] __attribute__((aligned(8)));
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	uint32_t seq = ++g->seq, portid = mnl_socket_get_portid(g->dumps);
	int r;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	if (type == RTM_GETLINK) {
		struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));

		ifi->ifi_family = AF_UNSPEC;
	} else {
		struct ifaddrmsg *ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));

		ifa->ifa_family = family;
	}
	if (mnl_socket_sendto(g->dumps, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(g->dumps, buf, sizeof(buf));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		r = mnl_cb_run(buf, (size_t)n, seq, portid, dump_cb, t);
		if (r == MNL_CB_STOP)
			return 0;
		if (r == MNL_CB_ERROR)
			return errno ? -errno : -EIO;
	}
}

int grtnl_dump(struct grtnl *g, struct guard_table *ret)
{
	struct guard_table t = { 0 };
	int r;

	r = dump_one(g, RTM_GETLINK, AF_UNSPEC, &t);
	if (r == 0)
		r = dump_one(g, RTM_GETADDR, AF_INET, &t);
	if (r == 0)
		r = dump_one(g, RTM_GETADDR, AF_INET6, &t);
	if (r < 0) {
		guard_table_fini(&t);
		return r;
	}
	*ret = t;
	return 0;
}

ssize_t grtnl_read_events(struct grtnl *g, void *buf, size_t size)
{
	for (;;) {
		struct sockaddr_nl sa;
		struct iovec iov = { buf, size };
		struct msghdr mh = { .msg_name = &sa, .msg_namelen = sizeof(sa),
				     .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n = recvmsg(mnl_socket_get_fd(g->events), &mh, 0);

		if (n < 0)
			return -errno;
		if (mh.msg_flags & MSG_TRUNC)
			return -ENOBUFS; /* an event cut short is an event lost: resync */
		/* Only the kernel speaks for the host's addresses: a process
		 * able to unicast to this socket must not fake a removal. */
		if (mh.msg_namelen != sizeof(sa) || sa.nl_pid != 0)
			continue;
		return n;
	}
}

int grtnl_drain(struct grtnl *g)
{
	uint8_t buf[8192] __attribute__((aligned(8)));
	int fd = mnl_socket_get_fd(g->events);

	/* After an overflow the kernel queues nothing new until the queue is
	 * empty (the socket stays "congested"): what is queued is all older
	 * than the loss, and reading it empty is what lets events flow again.
	 * Once empty, whatever arrives is newer and the dump that follows sees
	 * it too: a host that never stops changing ends the drain by the count. */
	for (int i = 0; i < 65536; i++) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);

		if (n >= 0 || errno == EINTR || errno == ENOBUFS)
			continue;
		return errno == EAGAIN ? 0 : -errno;
	}
	return 0;
}
