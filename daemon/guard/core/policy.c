/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The guard's policy: given what changed and one socket, destroy it or keep
 * it, and why. Pure: no I/O, so every rule is unit-tested on records.
 *
 * A socket is stranded when its local address is gone (it can never send or
 * receive another packet from it) or the device it is bound to is down.
 * Rules, in order:
 *  1. Concern: ADDR_REMOVED concerns sockets whose local address is the
 *     removed one (an IPv4 address also matches IPv4-mapped IPv6 sockets);
 *     a link-local address concerns only sockets on that interface. An address
 *     still assigned elsewhere (moved between links) strands nothing.
 *     LINK_DOWN concerns sockets bound to the device and those using any
 *     address the link had.
 *  2. State: TCP in the configured states; UDP only when connected.
 *     Unconnected UDP is never destroyed, listeners only when "listening" is
 *     configured: they hold no peer.
 *  3. Exemptions: loopback traffic, uid, cgroup, mark, destination prefix.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "daemon/guard/core/core.h"
#include "util/inaddr.h"

static size_t addr_len(uint8_t family)
{
	return family == AF_INET ? 4 : 16;
}

static bool same_addr(uint8_t fa, const uint8_t *a, uint8_t fb, const uint8_t *b)
{
	return fa == fb && !memcmp(a, b, addr_len(fa));
}

static bool in_prefix(const struct guard_prefix *p, uint8_t family, const uint8_t *a)
{
	unsigned full = p->len / 8, rest = p->len % 8;

	if (p->family != family)
		return false;
	if (memcmp(p->addr, a, full))
		return false;
	if (rest && ((p->addr[full] ^ a[full]) & (uint8_t)(0xff << (8 - rest))))
		return false;
	return true;
}

static bool is_loopback(uint8_t family, const uint8_t *a)
{
	static const uint8_t lo6[16] = { [15] = 1 };

	return family == AF_INET ? a[0] == 127 : !memcmp(a, lo6, 16);
}

static bool is_link_local(const struct guard_addr *a)
{
	if (a->family == AF_INET)
		return a->addr[0] == 169 && a->addr[1] == 254;
	return a->addr[0] == 0xfe && (a->addr[1] & 0xc0) == 0x80;
}

static bool uses_addr(const struct sdiag_sock *s, const struct guard_addr *a)
{
	const uint8_t *src;
	uint8_t fam = in_plain(s->family, s->inet.src, &src);

	if (!same_addr(fam, src, a->family, a->addr))
		return false;
	/* fe80::1 on eth0 and fe80::1 on eth1 are different addresses. */
	if (is_link_local(a) && s->inet.ifindex && (int)s->inet.ifindex != a->ifindex)
		return false;
	return true;
}

static bool concerned(const struct guard_table *t, const struct guard_event *e,
		      const struct sdiag_sock *s, enum guard_verdict *why)
{
	*why = GUARD_KEEP_UNRELATED;
	if (e->kind == GUARD_LINK_DOWN && e->ifindex && (int)s->inet.ifindex == e->ifindex)
		return true;
	for (size_t i = 0; i < e->n_addrs; i++) {
		const struct guard_addr *a = &e->addrs[i];

		if (!uses_addr(s, a))
			continue;
		/* Moved, not gone: the socket can still use it (link-local
		 * addresses are per link, so they never count as moved). */
		if (!is_link_local(a) &&
		    guard_table_has_addr(t, a->family, a->addr,
					 e->kind == GUARD_LINK_DOWN ? e->ifindex : 0)) {
			*why = GUARD_KEEP_STILL_ASSIGNED;
			continue;
		}
		return true;
	}
	return false;
}

static bool state_selected(const struct guard_config *c, const struct sdiag_sock *s)
{
	switch (s->table) {
	case SDIAG_T_TCP:
		return c->tcp_states & SDIAG_STATE_BIT(s->state);
	case SDIAG_T_UDP:
	case SDIAG_T_UDPLITE:
		return c->udp_connected && s->state == SDIAG_SS_ESTABLISHED;
	default:
		return false;
	}
}

/* Is the socket's cgroup one of those the values stand for? Never when the
 * kernel reported none (not a full socket). */
static bool in_cgroups(const struct guard_cgroup *v, size_t n, const struct sdiag_sock *s)
{
	if (!(s->has & SDIAG_HAS_CGROUP))
		return false;
	for (size_t i = 0; i < n; i++) {
		size_t lo = 0, hi = v[i].n;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (v[i].ids[mid] == s->inet.cgroup_id)
				return true;
			if (v[i].ids[mid] < s->inet.cgroup_id)
				lo = mid + 1;
			else
				hi = mid;
		}
	}
	return false;
}

static enum guard_verdict exempt(const struct guard_config *c, const struct sdiag_sock *s)
{
	const uint8_t *src, *dst;
	uint8_t fs = in_plain(s->family, s->inet.src, &src);
	uint8_t fd = in_plain(s->family, s->inet.dst, &dst);

	if (c->exempt_loopback && (is_loopback(fs, src) || is_loopback(fd, dst)))
		return GUARD_KEEP_LOOPBACK;
	if (s->has & SDIAG_HAS_UID)
		for (size_t i = 0; i < c->n_exempt_uids; i++)
			if (s->uid >= c->exempt_uids[i].lo && s->uid <= c->exempt_uids[i].hi)
				return GUARD_KEEP_UID;
	if (c->n_only_cgroups && !in_cgroups(c->only_cgroups, c->n_only_cgroups, s))
		return GUARD_KEEP_NOT_ONLY;
	if (in_cgroups(c->exempt_cgroups, c->n_exempt_cgroups, s))
		return GUARD_KEEP_CGROUP;
	if (s->has & SDIAG_HAS_MARK)
		for (size_t i = 0; i < c->n_exempt_marks; i++)
			if ((s->inet.mark & c->exempt_marks[i].mask) == c->exempt_marks[i].mark)
				return GUARD_KEEP_MARK;
	for (size_t i = 0; i < c->n_exempt_dsts; i++)
		if (in_prefix(&c->exempt_dsts[i], fd, dst))
			return GUARD_KEEP_DST;
	return GUARD_DESTROY;
}

enum guard_verdict guard_decide(const struct guard_config *c, const struct guard_table *t,
				const struct guard_event *e, const struct sdiag_sock *s)
{
	enum guard_verdict why;

	if (s->family != AF_INET && s->family != AF_INET6)
		return GUARD_KEEP_UNRELATED;
	if (!concerned(t, e, s, &why))
		return why;
	if (!state_selected(c, s))
		return GUARD_KEEP_STATE;
	return exempt(c, s);
}

enum guard_verdict guard_exempt(const struct guard_config *c, const struct sdiag_sock *s)
{
	if (s->family != AF_INET && s->family != AF_INET6)
		return GUARD_KEEP_UNRELATED;
	return exempt(c, s);
}

enum guard_verdict guard_exempt_peer(const struct guard_config *c, uint8_t family,
				     const uint8_t addr[16])
{
	const uint8_t *a;
	uint8_t f = in_plain(family, addr, &a);

	if (c->exempt_loopback && is_loopback(f, a))
		return GUARD_KEEP_LOOPBACK;
	for (size_t i = 0; i < c->n_exempt_dsts; i++)
		if (in_prefix(&c->exempt_dsts[i], f, a))
			return GUARD_KEEP_DST;
	return GUARD_DESTROY;
}

const char *guard_verdict_key(enum guard_verdict v)
{
	switch (v) {
	case GUARD_KEEP_LOOPBACK:
		return "exempt-loopback";
	case GUARD_KEEP_UID:
		return "exempt-uid";
	case GUARD_KEEP_CGROUP:
		return "exempt-cgroup";
	case GUARD_KEEP_NOT_ONLY:
		return "only-cgroup";
	case GUARD_KEEP_MARK:
		return "exempt-mark";
	case GUARD_KEEP_DST:
		return "exempt-dst";
	default:
		return guard_verdict_name(v);
	}
}

enum guard_verdict guard_decide_selected(const struct guard_config *c, const struct sdiag_sock *s)
{
	if (s->family != AF_INET && s->family != AF_INET6)
		return GUARD_KEEP_UNRELATED;
	if (!state_selected(c, s))
		return GUARD_KEEP_STATE;
	return exempt(c, s);
}

const char *guard_verdict_name(enum guard_verdict v)
{
	static const char *const names[] = {
		[GUARD_KEEP_UNRELATED] = "unrelated",
		[GUARD_KEEP_STATE] = "state",
		[GUARD_KEEP_LOOPBACK] = "loopback",
		[GUARD_KEEP_UID] = "uid",
		[GUARD_KEEP_CGROUP] = "cgroup",
		[GUARD_KEEP_NOT_ONLY] = "not in only-cgroup",
		[GUARD_KEEP_MARK] = "mark",
		[GUARD_KEEP_DST] = "destination",
		[GUARD_KEEP_STILL_ASSIGNED] = "still-assigned",
		[GUARD_KEEP_CAME_BACK] = "came-back",
		[GUARD_DESTROY] = "destroy",
	};

	return (unsigned)v < sizeof(names) / sizeof(names[0]) ? names[v] : "?";
}

/* ---- the address table ------------------------------------------------------------- */

/* 10.0.0.1/24 and 10.0.0.1/16 can both be on one link: removing one leaves
 * the address assigned, so the prefix length is part of an entry's key. */
static bool addr_eq(const struct guard_addr *a, const struct guard_addr *b)
{
	return a->ifindex == b->ifindex && a->prefixlen == b->prefixlen &&
	       same_addr(a->family, a->addr, b->family, b->addr);
}

int guard_table_add_addr(struct guard_table *t, const struct guard_addr *a)
{
	for (size_t i = 0; i < t->n_addrs; i++)
		if (addr_eq(&t->addrs[i], a)) {
			t->addrs[i] = *a;
			return 0;
		}
	if (t->n_addrs == t->cap_addrs) {
		size_t ncap = t->cap_addrs ? t->cap_addrs * 2 : 16;
		struct guard_addr *n = realloc(t->addrs, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->addrs = n;
		t->cap_addrs = ncap;
	}
	t->addrs[t->n_addrs++] = *a;
	return 0;
}

bool guard_table_del_addr(struct guard_table *t, const struct guard_addr *a)
{
	for (size_t i = 0; i < t->n_addrs; i++)
		if (addr_eq(&t->addrs[i], a)) {
			t->addrs[i] = t->addrs[--t->n_addrs];
			return true;
		}
	return false;
}

int guard_table_set_link(struct guard_table *t, const struct guard_link *l)
{
	for (size_t i = 0; i < t->n_links; i++)
		if (t->links[i].ifindex == l->ifindex) {
			t->links[i] = *l;
			return 0;
		}
	if (t->n_links == t->cap_links) {
		size_t ncap = t->cap_links ? t->cap_links * 2 : 16;
		struct guard_link *n = realloc(t->links, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->links = n;
		t->cap_links = ncap;
	}
	t->links[t->n_links++] = *l;
	return 0;
}

bool guard_table_del_link(struct guard_table *t, int ifindex)
{
	for (size_t i = 0; i < t->n_links; i++)
		if (t->links[i].ifindex == ifindex) {
			t->links[i] = t->links[--t->n_links];
			return true;
		}
	return false;
}

const struct guard_link *guard_table_link(const struct guard_table *t, int ifindex)
{
	for (size_t i = 0; i < t->n_links; i++)
		if (t->links[i].ifindex == ifindex)
			return &t->links[i];
	return NULL;
}

bool guard_table_has_addr(const struct guard_table *t, uint8_t family, const uint8_t *addr,
			  int skip_ifindex)
{
	for (size_t i = 0; i < t->n_addrs; i++) {
		const struct guard_addr *a = &t->addrs[i];

		const struct guard_link *l;

		if (skip_ifindex && a->ifindex == skip_ifindex)
			continue;
		if (!same_addr(a->family, a->addr, family, addr))
			continue;
		l = guard_table_link(t, a->ifindex);
		if (!l || l->up)
			return true;
	}
	return false;
}

void guard_table_fini(struct guard_table *t)
{
	free(t->addrs);
	free(t->links);
	memset(t, 0, sizeof(*t));
}

int guard_victims_add(struct sdiag_sock ***v, size_t *n, size_t *cap,
		      const struct sdiag_sock *s)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct sdiag_sock **nv = realloc(*v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = ncap;
	}
	(*v)[*n] = sdiag_sock_dup(s);
	if (!(*v)[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}
