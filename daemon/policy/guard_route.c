/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Route changes: an address can stay assigned while its sockets stop working
 * (a VPN takes the default route; the default moves from wlan0 to eth0 and
 * wlan0's sockets now leave through eth0 with a foreign source). After route
 * events the guard asks the kernel, for each live socket, for the route to
 * its peer with the socket's own mark, bound device and uid (RTM_GETROUTE,
 * as `ip route get PEER mark M oif DEV uid U`). A socket is stranded when the
 * kernel would choose another source for that peer and the route leaves
 * through a device that does not carry the socket's address; a socket bound
 * to a secondary address of the route's own device is fine, and so is one
 * whose peer is an address of this host (a local route: nothing leaves).
 *
 * Answers are cached per (peer, mark, device, uid) for one pass: thousands of
 * sockets to one peer cost one lookup.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>

#include "daemon/policy/policy.h"
#include "lib/core/nl.h"
#include "util/hash.h"
#include "util/inaddr.h"

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

static size_t alen(uint8_t family)
{
	return family == AF_INET ? 4 : 16;
}

void guard_route_key_of(const struct sdiag_sock *s, struct guard_route_key *ret)
{
	const uint8_t *peer;

	memset(ret, 0, sizeof(*ret));
	ret->family = in_plain(s->family, s->inet.dst, &peer);
	memcpy(ret->peer, peer, alen(ret->family));
	ret->mark = s->has & SDIAG_HAS_MARK ? s->inet.mark : 0;
	ret->oif = s->inet.ifindex;
	ret->has_uid = s->has & SDIAG_HAS_UID;
	ret->uid = ret->has_uid ? s->uid : 0;
}

static bool zero(const uint8_t *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i])
			return false;
	return true;
}

enum guard_verdict guard_decide_route(const struct guard_config *c, const struct guard_table *t,
				      const struct sdiag_sock *s,
				      const struct guard_route_answer *a)
{
	enum guard_verdict v = guard_decide_selected(c, s);
	const uint8_t *src;
	uint8_t fam;

	if (v != GUARD_DESTROY)
		return v;
	fam = in_plain(s->family, s->inet.src, &src);
	/* No route, or a peer on this host: the packets never leave by a device. */
	if (!a || a->err || a->local || !a->has_src || zero(src, alen(fam)))
		return GUARD_KEEP_UNRELATED;
	if (!memcmp(a->src, src, alen(fam)))
		return GUARD_KEEP_UNRELATED;
	/* Another address of the device the route leaves through: still its own. */
	for (size_t i = 0; i < t->n_addrs; i++)
		if (t->addrs[i].ifindex == a->oif && t->addrs[i].family == fam &&
		    !memcmp(t->addrs[i].addr, src, alen(fam)))
			return GUARD_KEEP_UNRELATED;
	return GUARD_DESTROY;
}

/* ---- the kernel's answers, cached for one pass ------------------------------------------ */

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

static int reply_attr(const struct nlattr *attr, void *data)
{
	struct guard_route_answer *a = data;
	uint16_t len = mnl_attr_get_payload_len(attr);

	switch (mnl_attr_get_type(attr)) {
	case RTA_PREFSRC:
		if (len == 4 || len == 16) {
			memcpy(a->src, mnl_attr_get_payload(attr), len);
			a->has_src = true;
		}
		break;
	case RTA_OIF:
		if (len == 4)
			a->oif = (int)mnl_attr_get_u32(attr);
		break;
	}
	return MNL_CB_OK;
}

int guard_route_parse(const struct nlmsghdr *nlh, struct guard_route_answer *a)
{
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);

	if (nlh->nlmsg_type != RTM_NEWROUTE || nlh->nlmsg_len < NLMSG_LENGTH(sizeof(struct rtmsg)))
		return 0;
	a->local = rtm->rtm_type == RTN_LOCAL;
	if (mnl_attr_parse(nlh, sizeof(struct rtmsg), reply_attr, a) < 0)
		a->err = -EBADMSG;
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
	mnl_attr_put(nlh, RTA_DST, alen(k->family), k->peer);
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

bool guard_route_event(const struct nlmsghdr *nlh)
{
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);

	if (nlh->nlmsg_type != RTM_NEWROUTE && nlh->nlmsg_type != RTM_DELROUTE)
		return false;
	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*rtm)))
		return false;
	/* Local and broadcast routes follow addresses, which the guard watches itself. */
	return rtm->rtm_table != RT_TABLE_LOCAL;
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
