/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The guard's view of the host and the events pending against it. Pure: no
 * I/O, so the parsers, the view updates and the resync's difference are
 * unit-tested and fuzzed on bytes.
 *
 * The view is a table of links and addresses. A dump rebuilds it; each
 * rtnetlink message updates it (guard_view_apply()), and a removal or a link
 * going down becomes a pending event. After an overflow the event socket's
 * queue holds only events older than the overflow: they are discarded
 * (guard.c), a dump is the truth, and guard_view_diff() turns what the dump
 * no longer has into the pending events.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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

#include "daemon/guard/core/core.h"

/* ---- parsing ------------------------------------------------------------------------------ */

struct attrs {
	const struct nlattr **tb;
	unsigned max;
};

static int attr_cb(const struct nlattr *a, void *data)
{
	struct attrs *at = data;
	unsigned type = mnl_attr_get_type(a);

	if (type <= at->max)
		at->tb[type] = a;
	return MNL_CB_OK;
}

/*
 * The attributes after a family header of hdrlen bytes. Bounded by
 * nlmsg_len itself: libmnl's own walk ends at the aligned length, up to three
 * bytes past a final message whose length is not a multiple of four.
 */
static int parse_attrs(const struct nlmsghdr *nlh, size_t hdrlen, const struct nlattr **tb,
		       unsigned max)
{
	struct attrs at = { tb, max };
	size_t off = MNL_NLMSG_HDRLEN + MNL_ALIGN(hdrlen);

	if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + hdrlen)
		return -EBADMSG;
	if (nlh->nlmsg_len <= off)
		return 0;
	if (mnl_attr_parse_payload((const char *)nlh + off, nlh->nlmsg_len - off, attr_cb,
				   &at) != MNL_CB_OK)
		return -EBADMSG;
	return 0;
}

/* RTM_NEWADDR/RTM_DELADDR → guard_addr; -EBADMSG if malformed, 0 if ok. */
int grtnl_parse_addr(const struct nlmsghdr *nlh, struct guard_addr *ret)
{
	const struct nlattr *tb[IFA_MAX + 1] = { 0 };
	const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	size_t alen;
	int r;

	r = parse_attrs(nlh, sizeof(*ifa), tb, IFA_MAX);
	if (r < 0)
		return r;
	if (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6)
		return -EAFNOSUPPORT;
	/* IFA_LOCAL is the local address on point-to-point links; IFA_ADDRESS
	 * the peer there, and the local address everywhere else. */
	a = tb[IFA_LOCAL] ? tb[IFA_LOCAL] : tb[IFA_ADDRESS];
	alen = ifa->ifa_family == AF_INET ? 4 : 16;
	if (!a || mnl_attr_get_payload_len(a) != alen)
		return -EBADMSG;
	memset(ret, 0, sizeof(*ret));
	ret->ifindex = (int)ifa->ifa_index;
	ret->family = ifa->ifa_family;
	ret->prefixlen = ifa->ifa_prefixlen;
	memcpy(ret->addr, mnl_attr_get_payload(a), alen);
	return 0;
}

int grtnl_parse_link(const struct nlmsghdr *nlh, struct guard_link *ret)
{
	const struct nlattr *tb[IFLA_MAX + 1] = { 0 };
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	int r;

	r = parse_attrs(nlh, sizeof(*ifi), tb, IFLA_MAX);
	if (r < 0)
		return r;
	memset(ret, 0, sizeof(*ret));
	ret->ifindex = ifi->ifi_index;
	ret->up = (ifi->ifi_flags & IFF_UP) && (ifi->ifi_flags & IFF_LOWER_UP);
	ret->loopback = ifi->ifi_flags & IFF_LOOPBACK;
	if (tb[IFLA_IFNAME]) {
		/* The kernel's name ends in a NUL; a name without one is cut
		 * at the attribute's end, never read past it. */
		size_t n = mnl_attr_get_payload_len(tb[IFLA_IFNAME]);
		const char *s = mnl_attr_get_payload(tb[IFLA_IFNAME]);
		const char *nul = memchr(s, '\0', n);

		if (nul)
			n = (size_t)(nul - s);
		if (n >= sizeof(ret->name))
			n = sizeof(ret->name) - 1;
		memcpy(ret->name, s, n);
		ret->name[n] = '\0';
	}
	return 0;
}

/* ---- pending events ----------------------------------------------------------------------- */

void guard_fmt_addr(const struct guard_addr *a, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	inet_ntop(a->family, a->addr, ip, sizeof(ip));
	snprintf(buf, len, "%s/%u", ip, a->prefixlen);
}

/* A link's name for logs: printable characters only, else "ifN". */
const char *guard_link_name(const struct guard_table *t, int ifindex, char buf[16])
{
	const struct guard_link *l = guard_table_link(t, ifindex);

	if (l && l->name[0]) {
		size_t i;

		for (i = 0; l->name[i]; i++)
			if ((unsigned char)l->name[i] <= ' ' || (unsigned char)l->name[i] >= 0x7f)
				break;
		if (!l->name[i])
			return l->name;
	}
	snprintf(buf, 16, "if%d", ifindex);
	return buf;
}

void guard_pending_clear(struct guard_pending *p)
{
	for (size_t i = 0; i < p->n; i++)
		free((void *)p->ev[i].addrs);
	p->n = 0;
	p->what[0] = '\0';
	p->described = 0;
}

void guard_pending_fini(struct guard_pending *p)
{
	guard_pending_clear(p);
	free(p->ev);
	memset(p, 0, sizeof(*p));
}

/* Takes ownership of addrs (malloc'd). */
static int pending_add(struct guard_pending *p, enum guard_event_kind kind, int ifindex,
		       struct guard_addr *addrs, size_t n_addrs, const char *what)
{
	size_t len = strlen(p->what);

	if (p->n == p->cap) {
		size_t ncap = p->cap ? p->cap * 2 : 8;
		struct guard_event *nv = realloc(p->ev, ncap * sizeof(*nv));

		if (!nv) {
			free(addrs);
			return -ENOMEM;
		}
		p->ev = nv;
		p->cap = ncap;
	}
	p->ev[p->n++] = (struct guard_event){ .kind = kind, .ifindex = ifindex,
					      .addrs = addrs, .n_addrs = n_addrs };
	if (p->described < 2 && len + strlen(what) + 3 < sizeof(p->what)) {
		snprintf(p->what + len, sizeof(p->what) - len, "%s%s", len ? ", " : "", what);
		p->described++;
	}
	return 0;
}

static int pending_addr(struct guard_pending *p, const struct guard_table *t,
			const struct guard_addr *ad)
{
	struct guard_addr *copy = malloc(sizeof(*copy));
	char what[128], as[64], ln[16];

	if (!copy)
		return -ENOMEM;
	*copy = *ad;
	guard_fmt_addr(ad, as, sizeof(as));
	snprintf(what, sizeof(what), "address %s removed from %s", as,
		 guard_link_name(t, ad->ifindex, ln));
	return pending_add(p, GUARD_ADDR_REMOVED, ad->ifindex, copy, 1, what);
}

/* The link's addresses, copied out of table t. */
static int pending_link(struct guard_pending *p, const struct guard_table *t, int ifindex,
			const char *why)
{
	struct guard_addr *addrs = calloc(t->n_addrs + 1, sizeof(*addrs));
	char what[128], ln[16];
	size_t n = 0;

	if (!addrs)
		return -ENOMEM;
	for (size_t i = 0; i < t->n_addrs; i++)
		if (t->addrs[i].ifindex == ifindex)
			addrs[n++] = t->addrs[i];
	snprintf(what, sizeof(what), "link %s %s", guard_link_name(t, ifindex, ln), why);
	return pending_add(p, GUARD_LINK_DOWN, ifindex, addrs, n, what);
}

/* ---- the view ----------------------------------------------------------------------------- */

int guard_view_apply(struct guard_table *t, struct guard_pending *p, const struct nlmsghdr *nlh)
{
	struct guard_addr ad;
	struct guard_link l;
	const struct guard_link *old;
	bool was_up;
	int r = 0;

	switch (nlh->nlmsg_type) {
	case RTM_NEWADDR:
		if (grtnl_parse_addr(nlh, &ad) == 0)
			r = guard_table_add_addr(t, &ad);
		break;
	case RTM_DELADDR:
		if (grtnl_parse_addr(nlh, &ad) == 0) {
			guard_table_del_addr(t, &ad);
			r = pending_addr(p, t, &ad);
		}
		break;
	case RTM_NEWLINK:
		if (grtnl_parse_link(nlh, &l) < 0)
			break;
		old = guard_table_link(t, l.ifindex);
		was_up = old && old->up;
		r = guard_table_set_link(t, &l);
		if (r == 0 && was_up && !l.up)
			r = pending_link(p, t, l.ifindex, "went down");
		break;
	case RTM_DELLINK:
		if (grtnl_parse_link(nlh, &l) < 0)
			break;
		r = pending_link(p, t, l.ifindex, "removed");
		guard_table_del_link(t, l.ifindex);
		for (size_t i = t->n_addrs; i-- > 0;)
			if (t->addrs[i].ifindex == l.ifindex)
				guard_table_del_addr(t, &t->addrs[i]);
		break;
	}
	return r;
}

static bool table_has(const struct guard_table *t, const struct guard_addr *a)
{
	for (size_t i = 0; i < t->n_addrs; i++)
		if (t->addrs[i].ifindex == a->ifindex && t->addrs[i].family == a->family &&
		    !memcmp(t->addrs[i].addr, a->addr, a->family == AF_INET ? 4 : 16))
			return true;
	return false;
}

int guard_view_diff(const struct guard_table *old, const struct guard_table *now,
		    struct guard_pending *p)
{
	int r = 0;

	for (size_t i = 0; i < old->n_links && r == 0; i++) {
		const struct guard_link *n = guard_table_link(now, old->links[i].ifindex);

		if (old->links[i].up && (!n || !n->up))
			r = pending_link(p, old, old->links[i].ifindex,
					 n ? "went down" : "removed");
	}
	for (size_t i = 0; i < old->n_addrs && r == 0; i++)
		if (!table_has(now, &old->addrs[i]))
			r = pending_addr(p, old, &old->addrs[i]);
	return r;
}

enum guard_verdict guard_decide_all(const struct guard_config *c, const struct guard_table *t,
				    const struct guard_pending *p, const struct sdiag_sock *s)
{
	enum guard_verdict v = GUARD_KEEP_UNRELATED;

	for (size_t i = 0; i < p->n; i++) {
		enum guard_verdict e = guard_decide(c, t, &p->ev[i], s);

		if (e == GUARD_DESTROY)
			return e;
		if (e != GUARD_KEEP_UNRELATED)
			v = e;
	}
	return v;
}

enum guard_verdict guard_recheck(const struct guard_config *c, const struct guard_table *t,
				 const struct guard_pending *p, const struct sdiag_sock *s)
{
	enum guard_verdict v = GUARD_KEEP_UNRELATED;

	for (size_t i = 0; i < p->n; i++) {
		enum guard_verdict e = guard_decide(c, t, &p->ev[i], s);

		/* Back on its own interface (the policy alone would call a
		 * global address "still assigned", a link-local one gone):
		 * a socket made after the removal, on the address back
		 * again, is live and has never been without it. */
		if ((e == GUARD_DESTROY || e == GUARD_KEEP_STILL_ASSIGNED) &&
		    guard_event_came_back(t, &p->ev[i]))
			e = GUARD_KEEP_CAME_BACK;
		if (e == GUARD_DESTROY)
			return e;
		if (e != GUARD_KEEP_UNRELATED && v != GUARD_KEEP_CAME_BACK)
			v = e;
	}
	return v;
}
