/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The guard's route lookups: RTM_GETROUTE over an rtnetlink socket, as
 * `ip route get PEER mark M oif DEV uid U`, for the route pass (the verdict
 * over the answers: core/route.c). Answers are cached per (peer, mark, device,
 * uid) for one pass: thousands of sockets to one peer cost one lookup.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>

#include "daemon/guard/rtnl.h"
#include "lib/core/nl.h"
#include "util/hash.h"

#ifndef RTA_UID
#define RTA_UID 25
#endif

struct entry {
	struct guard_route_key k;
	struct guard_route_answer a;
	bool used;
};

struct guard_routes {
	struct sd_nl *nl;	/* the transport: one request, one answer */
	struct entry *tab;	/* open addressing, cap a power of two */
	size_t cap, n, asked;
};

int guard_routes_open(struct guard_routes **ret)
{
	struct sd_nl_opts o = { .proto = NETLINK_ROUTE };
	struct guard_routes *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return -ENOMEM;
	err = sd_nl_open_with(&r->nl, &o);
	if (err < 0) {
		guard_routes_close(r);
		return err;
	}
	*ret = r;
	return 0;
}

void guard_routes_close(struct guard_routes *r)
{
	if (!r)
		return;
	sd_nl_close(r->nl);
	free(r->tab);
	free(r);
}

void guard_routes_reset(struct guard_routes *r)
{
	if (r->tab)
		memset(r->tab, 0, r->cap * sizeof(*r->tab));
	r->n = 0;
	r->asked = 0;
}

size_t guard_routes_asked(const struct guard_routes *r)
{
	return r->asked;
}

static uint64_t key_hash(const struct guard_route_key *k)
{
	uint8_t b[16 + 13];

	memcpy(b, k->peer, 16);
	memcpy(b + 16, &k->mark, 4);
	memcpy(b + 20, &k->oif, 4);
	memcpy(b + 24, &k->uid, 4);
	b[28] = (uint8_t)(k->family ^ (k->has_uid << 7));
	return hash_bytes(b, sizeof(b));
}

static bool key_eq(const struct guard_route_key *a, const struct guard_route_key *b)
{
	return a->family == b->family && a->mark == b->mark && a->oif == b->oif &&
	       a->has_uid == b->has_uid && a->uid == b->uid && !memcmp(a->peer, b->peer, 16);
}

static int grow(struct guard_routes *r)
{
	size_t ncap = r->cap ? r->cap * 2 : 256;
	struct entry *old = r->tab, *tab = calloc(ncap, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	for (size_t i = 0; i < r->cap; i++) {
		size_t j;

		if (!old[i].used)
			continue;
		for (j = key_hash(&old[i].k) & (ncap - 1); tab[j].used; j = (j + 1) & (ncap - 1))
			;
		tab[j] = old[i];
	}
	free(old);
	r->tab = tab;
	r->cap = ncap;
	return 0;
}

static int reply_cb(const struct nlmsghdr *nlh, void *data)
{
	return guard_route_parse(nlh, data);
}

/* One RTM_GETROUTE: a route error goes into a->err, a failure to ask is returned. */
static int ask(struct guard_routes *r, const struct guard_route_key *k,
	       struct guard_route_answer *a)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(sd_nl_reqbuf(r->nl, NULL));
	struct rtmsg *rtm;
	int err, kerr = 0;

	memset(a, 0, sizeof(*a));
	nlh->nlmsg_type = RTM_GETROUTE;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = k->family;
	rtm->rtm_dst_len = k->family == AF_INET ? 32 : 128;
	mnl_attr_put(nlh, RTA_DST, k->family == AF_INET ? 4 : 16, k->peer);
	if (k->mark)
		mnl_attr_put_u32(nlh, RTA_MARK, k->mark);
	if (k->oif)
		mnl_attr_put_u32(nlh, RTA_OIF, k->oif);
	if (k->has_uid)
		mnl_attr_put_u32(nlh, RTA_UID, k->uid);
	r->asked++;
	err = sd_nl_request(r->nl, reply_cb, a, &kerr);
	if (err < 0)
		return err;
	if (kerr)
		a->err = kerr;
	return 0;
}

int guard_routes_lookup(struct guard_routes *r, const struct guard_route_key *k,
			const struct guard_route_answer **ret)
{
	size_t i;
	int err;

	if ((r->n + 1) * 2 > r->cap && (err = grow(r)) < 0)
		return err;
	for (i = key_hash(k) & (r->cap - 1); r->tab[i].used; i = (i + 1) & (r->cap - 1))
		if (key_eq(&r->tab[i].k, k)) {
			*ret = &r->tab[i].a;
			return 0;
		}
	err = ask(r, k, &r->tab[i].a);
	if (err < 0)
		return err;
	r->tab[i].k = *k;
	r->tab[i].used = true;
	r->n++;
	*ret = &r->tab[i].a;
	return 0;
}

int guard_routes_subscribe(int fd, bool on)
{
	static const int groups[] = { RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE };

	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (setsockopt(fd, SOL_NETLINK, on ? NETLINK_ADD_MEMBERSHIP : NETLINK_DROP_MEMBERSHIP,
			       &groups[i], sizeof(groups[i])) < 0)
			return -errno;
	return 0;
}
