/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The route policy (`on-route-change = yes`): after route events settle, a
 * pass dumps the sockets the address/link policy could destroy and asks the
 * kernel for each peer's route (route_nl.c, cached per pass); a socket whose
 * source address the route would no longer use is stranded
 * (core/route.c's verdict), and guard_act() destroys it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "daemon/common/log.h"
#include "daemon/guard/loop.h"
#include "util/clock.h"

/* Route events come in bursts (a VPN adds a dozen routes): the pass runs
 * this long after the first, or when the grace period ends if that is later. */
#define ROUTE_SETTLE_MS 100

struct route_pass {
	struct guard_action act;
	const struct guard *g;
	size_t no_route, lookup_errors;
};

/* The kernel's route to the socket's peer (cached). */
static int route_cb(const struct sdiag_sock *s, void *data)
{
	struct route_pass *rp = data;
	const struct guard_route_answer *ans = NULL;
	enum guard_verdict v = guard_decide_selected(&rp->g->cfg, s);
	struct guard_route_key k;

	if (v == GUARD_DESTROY) {
		guard_route_key_of(s, &k);
		if (guard_routes_lookup(rp->g->routes, &k, &ans) < 0) {
			rp->lookup_errors++;
			v = GUARD_KEEP_UNRELATED;
		} else {
			rp->no_route += ans->err != 0;
			v = guard_decide_route(&rp->g->cfg, &rp->g->table, s, ans);
		}
	}
	return guard_action_judge(&rp->act, s, v);
}

static int route_pass(struct guard *g, struct guard_source *src, uint64_t now)
{
	struct route_pass rp = { .g = g, .act = { .events = true } };

	(void)now;
	src->due = GUARD_NEVER;
	if (!g->routes)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &rp.act.t0);
	guard_routes_reset(g->routes);
	if (guard_dump(g, "routes changed", route_cb, &rp) == 0) {
		if (rp.lookup_errors)
			daemon_log(g->log_name, "routes changed: %zu route lookups failed; their "
				   "sockets are kept", rp.lookup_errors);
		snprintf(rp.act.what, sizeof(rp.act.what),
			 "routes changed (%zu lookups, %zu peers without a route)",
			 guard_routes_asked(g->routes), rp.no_route);
		(void)guard_act(g, &rp.act);
	}
	guard_action_fini(&rp.act);
	return 0;
}

void guard_routes_changed(struct guard *g)
{
	uint32_t settle = g->cfg.grace_ms > ROUTE_SETTLE_MS ? g->cfg.grace_ms : ROUTE_SETTLE_MS;
	struct guard_source *s = guard_source(g, "routes");

	if (g->routes && s && s->due == GUARD_NEVER)
		s->due = mono_ms() + settle;
}

void guard_routes_setup(struct guard *g)
{
	struct guard_source *s = guard_source(g, "routes");
	int r;

	if (s)
		s->expired = route_pass;
	if (g->cfg.on_route_change && !g->routes) {
		r = guard_routes_open(&g->routes);
		if (r == 0)
			r = guard_routes_subscribe(grtnl_event_fd(&g->rtnl), true);
		if (r < 0) {
			daemon_log(g->log_name, "on-route-change: cannot watch routes: %s",
				   strerror(-r));
			guard_routes_close(g->routes);
			g->routes = NULL;
		}
	} else if (!g->cfg.on_route_change && g->routes) {
		(void)guard_routes_subscribe(grtnl_event_fd(&g->rtnl), false);
		guard_routes_close(g->routes);
		g->routes = NULL;
		if (s)
			s->due = GUARD_NEVER;
	}
}
