/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The grace period: with `grace = DURATION`, a removal (an address leaving an
 * interface, a link going down) is held, and judged when the grace period
 * ends against the view as it is then: if what went came back on the same
 * interface, nothing is destroyed; otherwise the removal is acted upon as if
 * it had just happened. The same removal seen again while held (a flapping
 * address) keeps its first end, so it is judged once, and never later than
 * grace after it first went. Pure: the event loop owns the clock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "daemon/guard/core/core.h"

static void held_clear(struct guard_held *h)
{
	free((void *)h->ev.addrs);
	h->ev.addrs = NULL;
}

void guard_held_free(struct guard_held *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		held_clear(&v[i]);
	free(v);
}

void guard_grace_fini(struct guard_grace *g)
{
	guard_held_free(g->v, g->n);
	memset(g, 0, sizeof(*g));
}

static bool same_addr(const struct guard_addr *a, const struct guard_addr *b)
{
	return a->ifindex == b->ifindex && a->family == b->family &&
	       !memcmp(a->addr, b->addr, a->family == AF_INET ? 4 : 16);
}

/* The same removal: one address from one interface, or one link. */
static bool same_removal(const struct guard_event *a, const struct guard_event *b)
{
	if (a->kind != b->kind || a->ifindex != b->ifindex)
		return false;
	if (a->kind == GUARD_LINK_DOWN)
		return true;
	return a->n_addrs == 1 && b->n_addrs == 1 && same_addr(&a->addrs[0], &b->addrs[0]);
}

int guard_grace_hold(struct guard_grace *g, const struct guard_event *e, const char *what,
		     uint64_t now_ms, uint32_t grace_ms)
{
	struct guard_addr *addrs = NULL;
	struct guard_held *h;

	for (size_t i = 0; i < g->n; i++)
		if (same_removal(&g->v[i].ev, e)) {
			/* A link's address list may have grown: keep the larger. */
			if (e->kind == GUARD_LINK_DOWN && e->n_addrs > g->v[i].ev.n_addrs)
				break;
			return 0;
		}
	if (e->n_addrs) {
		addrs = malloc(e->n_addrs * sizeof(*addrs));
		if (!addrs)
			return -ENOMEM;
		memcpy(addrs, e->addrs, e->n_addrs * sizeof(*addrs));
	}
	for (size_t i = 0; i < g->n; i++)
		if (same_removal(&g->v[i].ev, e)) { /* a link, now with more addresses */
			free((void *)g->v[i].ev.addrs);
			g->v[i].ev.addrs = addrs;
			g->v[i].ev.n_addrs = e->n_addrs;
			return 0;
		}
	if (g->n == g->cap) {
		size_t ncap = g->cap ? g->cap * 2 : 8;
		struct guard_held *v = realloc(g->v, ncap * sizeof(*v));

		if (!v) {
			free(addrs);
			return -ENOMEM;
		}
		g->v = v;
		g->cap = ncap;
	}
	h = &g->v[g->n++];
	memset(h, 0, sizeof(*h));
	h->ev = *e;
	h->ev.addrs = addrs;
	h->due_ms = now_ms + grace_ms;
	strncpy(h->what, what, sizeof(h->what) - 1);
	return 0;
}

uint64_t guard_grace_next(const struct guard_grace *g)
{
	uint64_t next = UINT64_MAX;

	for (size_t i = 0; i < g->n; i++)
		if (g->v[i].due_ms < next)
			next = g->v[i].due_ms;
	return next;
}

int guard_grace_take(struct guard_grace *g, uint64_t now_ms, struct guard_held **ret,
		     size_t *ret_n)
{
	struct guard_held *out;
	size_t n = 0, keep = 0;

	out = calloc(g->n ? g->n : 1, sizeof(*out));
	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < g->n; i++) {
		if (g->v[i].due_ms <= now_ms)
			out[n++] = g->v[i];
		else
			g->v[keep++] = g->v[i];
	}
	g->n = keep;
	*ret = out;
	*ret_n = n;
	return 0;
}

static bool link_up(const struct guard_table *t, int ifindex)
{
	const struct guard_link *l = guard_table_link(t, ifindex);

	return l && l->up;
}

void guard_event_describe(const struct guard_table *t, const struct guard_event *e, char *buf,
			  size_t len)
{
	char as[64], ln[16];
	const char *name = guard_link_name(t, e->ifindex, ln);

	if (e->kind == GUARD_LINK_DOWN) {
		snprintf(buf, len, "link %s %s", name,
			 guard_table_link(t, e->ifindex) ? "went down" : "removed");
		return;
	}
	as[0] = '\0';
	if (e->n_addrs)
		guard_fmt_addr(&e->addrs[0], as, sizeof(as));
	snprintf(buf, len, "address %s removed from %s", as, name);
}

int guard_held_to_pending(struct guard_held *h, struct guard_pending *p)
{
	size_t len = strlen(p->what);

	if (p->n == p->cap) {
		size_t ncap = p->cap ? p->cap * 2 : 8;
		struct guard_event *v = realloc(p->ev, ncap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->ev = v;
		p->cap = ncap;
	}
	p->ev[p->n++] = h->ev;
	h->ev.addrs = NULL;
	if (p->described < 2 && len + strlen(h->what) + 3 < sizeof(p->what)) {
		snprintf(p->what + len, sizeof(p->what) - len, "%s%s", len ? ", " : "", h->what);
		p->described++;
	}
	return 0;
}

bool guard_event_came_back(const struct guard_table *t, const struct guard_event *e)
{
	if (e->kind == GUARD_LINK_DOWN)
		return link_up(t, e->ifindex);
	for (size_t i = 0; i < e->n_addrs; i++) {
		bool found = false;

		for (size_t j = 0; j < t->n_addrs && !found; j++)
			found = same_addr(&t->addrs[j], &e->addrs[i]);
		if (!found || (guard_table_link(t, e->ifindex) && !link_up(t, e->ifindex)))
			return false;
	}
	return true;
}
