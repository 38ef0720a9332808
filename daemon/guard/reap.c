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
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/common/log.h"
#include "daemon/guard/backends.h"
#include "daemon/guard/guard.h"
#include "daemon/guard/metrics.h"
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
	struct sdiag_sock **victims;
	size_t n, cap;
	struct guard_reap_result *res;
};

static int reap_cb(const struct sdiag_sock *s, void *data)
{
	struct reap *r = data;

	if (guard_exempt(r->c, s) != GUARD_DESTROY) {
		r->res->kept++;
		return 0;
	}
	r->res->matched++;
	if (r->res->matched > r->c->reap_max)
		return -ECANCELED; /* enough to refuse: stop the dump */
	return guard_victims_add(&r->victims, &r->n, &r->cap, s);
}

int guard_reap_rule(struct sdiag_handle *h, const struct guard_config *c,
		    const struct guard_reap *rule, bool dry_run, struct guard_backends *bk,
		    struct guard_reap_result *ret)
{
	SDIAG_OPTS(sdiag_query, q,
			.tables = GUARD_TABLES,
			.states = reap_states(rule->filter),
			.afs = SDIAG_AF_ALL,
			.filter = rule->filter,
			.flags = SDIAG_Q_SKIP_UNSUPPORTED); /* UDP-Lite may be missing: nothing to reap */
	struct guard_reap_result res = { 0 };
	struct reap r = { .c = c, .res = &res };
	enum sdiag_destroy_result *results = NULL;
	int err;

	err = sdiag_dump(h, &q, reap_cb, NULL, &r);
	if (err == -ECANCELED) {
		res.refused = true;
		err = 0;
		goto out;
	}
	if (err < 0 || !r.n || dry_run)
		goto out;
	results = calloc(r.n, sizeof(*results));
	if (!results) {
		err = -ENOMEM;
		goto out;
	}
	err = sdiag_destroy(h, (const struct sdiag_sock *const *)r.victims, r.n, results, NULL);
	if (err < 0)
		goto out;
	for (size_t i = 0; i < r.n; i++) {
		if (results[i] == SDIAG_DESTROYED)
			res.destroyed++;
		else if (results[i] == SDIAG_GONE)
			res.gone++;
		else
			res.failed++;
	}
	res.ct_deleted = guard_backends_ct_flows(bk, r.victims, results, r.n);
out:
	for (size_t i = 0; i < r.n; i++)
		free(r.victims[i]);
	free(r.victims);
	free(results);
	if (err == 0)
		*ret = res;
	return err;
}

void guard_reap_all(struct sdiag_handle *h, const struct guard_config *c, bool dry,
		    struct guard_backends *bk, struct guard_metrics *m, const char *log_name)
{
	for (size_t i = 0; i < c->n_reaps; i++) {
		const struct guard_reap *rule = &c->reaps[i];
		struct guard_reap_result res;
		struct timespec t0;
		double ms;
		int r;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		r = guard_reap_rule(h, c, rule, dry, bk, &res);
		ms = ms_since(&t0);
		if (r == 0)
			guard_metrics_conntrack(m, res.ct_deleted);
		if (r < 0)
			daemon_log(log_name, "reap (line %u) '%s': %s", rule->line, rule->expr,
				   strerror(-r));
		else if (res.refused)
			daemon_log(log_name, "reap (line %u) '%s': refused: more than reap-max = %u "
				   "sockets match; nothing destroyed",
				   rule->line, rule->expr, c->reap_max);
		else if (res.matched && dry)
			daemon_log(log_name, "reap (line %u) '%s': would destroy %zu socket%s (kept "
				   "%zu exempt)",
				   rule->line, rule->expr, res.matched, res.matched == 1 ? "" : "s",
				   res.kept);
		else if (res.matched)
			daemon_log(log_name, "reap (line %u) '%s': destroyed %zu socket%s (already "
				   "gone %zu, failed %zu; kept %zu exempt) in %.2f ms",
				   rule->line, rule->expr, res.destroyed,
				   res.destroyed == 1 ? "" : "s", res.gone, res.failed, res.kept,
				   ms);
	}
}
