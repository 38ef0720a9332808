/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reaping: `reap = FILTER` lines (`state close-wait and idle > 10m`) are run
 * every reap-interval. Each pass of a rule dumps with its filter (TCP info is
 * requested by the dump when the filter needs it), keeps what the exemptions
 * keep, and destroys the rest in one batch, unless more than reap-max sockets
 * match: then the rule destroys nothing that pass (a typo must not kill the
 * machine's connections), and the caller logs the refusal.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/common/log.h"
#include "daemon/guard/loop.h"
#include "util/clock.h"

/* Every destroyable state; listeners only when the rule has a state clause
 * that allows them. */
static uint32_t reap_states(const struct sdiag_filter *f)
{
	uint32_t s = sdiag_filter_states(f);

	if (s == SDIAG_STATES_ALL)
		s &= ~SDIAG_STATE_BIT(SDIAG_SS_LISTEN);
	return s & ~SDIAG_STATE_BIT(SDIAG_SS_BOUND_INACTIVE);
}

struct reap {
	const struct guard_config *c;
	struct guard_action *a;
};

static int reap_cb(const struct sdiag_sock *s, void *data)
{
	struct reap *r = data;
	enum guard_verdict v = guard_exempt(r->c, s);

	if (v == GUARD_DESTROY && r->a->n + 1 > r->c->reap_max)
		return -ECANCELED; /* enough to refuse: stop the dump */
	return guard_action_judge(r->a, s, v);
}

/* One pass of one rule: dump with its filter, apply the exemptions, destroy
 * the rest in one batch (guard_act) unless more than reap-max sockets match. */
static void reap_rule(struct guard *g, const struct guard_reap *rule)
{
	SDIAG_OPTS(sdiag_query, q,
			.tables = GUARD_TABLES,
			.states = reap_states(rule->filter),
			.afs = SDIAG_AF_ALL,
			.filter = rule->filter,
			.flags = SDIAG_Q_SKIP_UNSUPPORTED); /* UDP-Lite may be missing: nothing to reap */
	struct guard_action a = { .quiet = true };
	struct reap r = { .c = &g->cfg, .a = &a };
	int err;

	clock_gettime(CLOCK_MONOTONIC, &a.t0);
	snprintf(a.what, sizeof(a.what), "reap (line %u) '%s'", rule->line, rule->expr);
	err = sdiag_dump(g->h, &q, reap_cb, NULL, &r);
	if (err == -ECANCELED)
		daemon_log(g->log_name, "%s: refused: more than reap-max = %u sockets match; "
			   "nothing destroyed", a.what, g->cfg.reap_max);
	else if (err < 0)
		daemon_log(g->log_name, "%s: %s", a.what, strerror(-err));
	else	/* quiet: a pass that only kept is not worth a line every interval */
		(void)guard_act(g, &a);
	guard_action_fini(&a);
}

/* Every rule's pass, every reap-interval. */
static int reap_expired(struct guard *g, struct guard_source *src, uint64_t now)
{
	(void)now;
	for (size_t i = 0; i < g->cfg.n_reaps; i++)
		reap_rule(g, &g->cfg.reaps[i]);
	src->due = mono_ms() + g->cfg.reap_interval_ms;
	return 0;
}

void guard_reap_setup(struct guard *g)
{
	struct guard_source *s = guard_source(g, "reap");

	if (!s)
		return;
	s->expired = reap_expired;
	s->due = g->cfg.n_reaps ? mono_ms() + g->cfg.reap_interval_ms : GUARD_NEVER;
}
