/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The guard's view of rtnetlink: full dumps of links and addresses into a
 * table (core/view.c parses), events read, and the drain after an overflow,
 * all through the transport (lib/core/nl.h). Two sockets: one subscribed
 * to link and address events, one for dumps (a dump's replies must not mix
 * with events, and a resync must not wait behind queued events).
 */
#include <errno.h>
#include <string.h>
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
#include "daemon/guard/rtnl.h"
#include "lib/core/nl.h"

int grtnl_open(struct grtnl *g, int rcvbuf)
{
	struct sd_nl_opts ev = { .proto = NETLINK_ROUTE,
				 .groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR,
				 .rcvbuf = rcvbuf > 0 ? rcvbuf : 4 * 1024 * 1024,
				 .nonblock = true };
	struct sd_nl_opts dump = { .proto = NETLINK_ROUTE, .strict = true };
	int r;

	memset(g, 0, sizeof(*g));
	r = sd_nl_open_with(&g->events, &ev);
	if (r == 0)
		r = sd_nl_open_with(&g->dumps, &dump);
	if (r < 0)
		grtnl_close(g);
	return r;
}

void grtnl_close(struct grtnl *g)
{
	sd_nl_close(g->events);
	sd_nl_close(g->dumps);
	g->events = g->dumps = NULL;
}

int grtnl_event_fd(const struct grtnl *g)
{
	return sd_nl_fd(g->events);
}

struct dump_state {
	struct guard_table *t;
	size_t n_links, n_addrs; /* what the table held before this dump */
};

static int dump_cb(const struct nlmsghdr *nlh, void *data)
{
	struct dump_state *st = data;
	struct guard_addr a;
	struct guard_link l;

	switch (nlh->nlmsg_type) {
	case RTM_NEWLINK:
		if (grtnl_parse_link(nlh, &l) == 0)
			return guard_table_set_link(st->t, &l);
		break;
	case RTM_NEWADDR:
		if (grtnl_parse_addr(nlh, &a) == 0)
			return guard_table_add_addr(st->t, &a);
		break;
	}
	return 0;
}

/* An interrupted dump is taken again: forget what its try added. */
static int dump_restart(void *data)
{
	struct dump_state *st = data;

	st->t->n_links = st->n_links;
	st->t->n_addrs = st->n_addrs;
	return 0;
}

static int dump_one(struct grtnl *g, uint16_t type, uint8_t family, struct guard_table *t)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(sd_nl_reqbuf(g->dumps, NULL));
	struct dump_state st = { .t = t, .n_links = t->n_links, .n_addrs = t->n_addrs };

	nlh->nlmsg_type = type;
	if (type == RTM_GETLINK) {
		struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));

		ifi->ifi_family = AF_UNSPEC;
	} else {
		struct ifaddrmsg *ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));

		ifa->ifa_family = family;
	}
	/* Links and addresses changing during the dump set NLM_F_DUMP_INTR:
	 * taken again, at most SD_NL_DUMP_TRIES times in all, then -EINTR. */
	return sd_nl_dump_retry(g->dumps, dump_cb, dump_restart, &st);
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
	return sd_nl_recv_event(g->events, buf, size, NULL);
}

const char *grtnl_ext_ack(const struct grtnl *g)
{
	return sd_nl_ext_ack(g->dumps);
}

int grtnl_drain(struct grtnl *g)
{
	return sd_nl_discard(g->events);
}
