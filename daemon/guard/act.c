/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The guard's one action path (loop.h): every policy's victims are destroyed
 * in one batch, tallied by result, their flows' conntrack entries deleted,
 * counted in the metrics and logged in one line whose "kept" count says why
 * (`kept 3: loopback 1, mark 2`). Also the registry of event sources and the
 * conntrack handle, services of the guard rather than of one policy.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conntrack/conntrack.h"
#include "daemon/common/log.h"
#include "daemon/guard/loop.h"
#include "daemon/guard/metrics.h"
#include "util/clock.h"

#define logline(...) daemon_log(g->log_name, __VA_ARGS__)

bool guard_dry_run(const struct guard *g)
{
	return g->opt.dry_run || g->cfg.dry_run;
}

struct guard_source *guard_source(struct guard *g, const char *name)
{
	struct guard_source *s;

	for (size_t i = 0; i < g->n_src; i++)
		if (!strcmp(g->src[i].name, name))
			return &g->src[i];
	if (g->n_src == GUARD_MAX_SOURCES)
		return NULL;
	s = &g->src[g->n_src++];
	*s = (struct guard_source){ .name = name, .fd = -1, .due = GUARD_NEVER };
	return s;
}

/*
 * Dump TCP and UDP without a kernel filter (TCP of both families then takes
 * one walk of the kernel's established hash, the dominant cost). Only the
 * states the policy can destroy are dumped: the kernel then skips the rest
 * early, and never walks its bind hash for bound-inactive sockets (host-wide,
 * and never destroyable) or its listening hash unless "listening" is
 * configured.
 */
int guard_dump(struct guard *g, const char *what, sdiag_sock_cb cb, void *data)
{
	SDIAG_OPTS(sdiag_query, q,
			.tables = GUARD_TABLES,
			.states = g->cfg.tcp_states |
				  (g->cfg.udp_connected ? SDIAG_STATE_BIT(SDIAG_SS_ESTABLISHED) : 0),
			.afs = SDIAG_AF_ALL,
			.flags = SDIAG_Q_SKIP_UNSUPPORTED); /* no UDP-Lite: it strands nothing */
	int r;

	/* A service restarted since has a new cgroup (a new id): look again. */
	if (g->cfg.n_exempt_cgroups || g->cfg.n_only_cgroups) {
		r = guard_config_resolve(&g->cfg);
		if (r > 0)
			logline("cgroups looked up again: %d of the configured cgroups and units "
				"changed", r);
	}
	r = sdiag_dump(g->h, &q, cb, NULL, data);
	if (r < 0) {
		guard_metrics_error(g->metrics);
		logline("%s: cannot dump sockets: %s", what, strerror(-r));
	}
	return r;
}

void guard_conntrack_configure(struct guard *g)
{
	int r;

	if (g->cfg.conntrack && !g->ct) {
		r = ct_open(&g->ct, -1);
		if (r < 0)
			logline("conntrack: %s; sockets are still destroyed", ct_strerror(r));
	} else if (!g->cfg.conntrack && g->ct) {
		ct_close(g->ct);
		g->ct = NULL;
	}
}

int guard_action_judge(struct guard_action *a, const struct sdiag_sock *s, enum guard_verdict v)
{
	a->kept[v]++;
	if (v != GUARD_DESTROY)
		return 0;
	return guard_victims_add(&a->victims, &a->n, &a->cap, s);
}

/* Sockets kept for a reason ("unrelated" is none). */
static size_t nkept(const size_t kept[GUARD_DESTROY + 1])
{
	size_t n = 0;

	for (int v = 0; v < GUARD_DESTROY; v++)
		if (v != GUARD_KEEP_UNRELATED)
			n += kept[v];
	return n;
}

void guard_kept_text(const size_t kept[GUARD_DESTROY + 1], char *buf, size_t len)
{
	size_t off = (size_t)snprintf(buf, len, "kept %zu", nkept(kept));

	for (int v = 0, first = 1; v < GUARD_DESTROY && off < len; v++) {
		if (v == GUARD_KEEP_UNRELATED || !kept[v])
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s%s %zu", first ? ": " : ", ",
					guard_verdict_name((enum guard_verdict)v), kept[v]);
		first = 0;
	}
}

static void log_action(const struct guard *g, const struct guard_action *a, double ms)
{
	const size_t *res = a->res;
	char kept[256], ct[64] = "";

	guard_kept_text(a->kept, kept, sizeof(kept));
	if (g->ct && !guard_dry_run(g))
		snprintf(ct, sizeof(ct), ", %zu conntrack entr%s deleted", a->ct_deleted,
			 a->ct_deleted == 1 ? "y" : "ies");
	if (!a->n && !nkept(a->kept) && a->events)
		logline("%s: no sockets affected%s (%.2f ms)", a->what, a->tail, ms);
	else if (guard_dry_run(g))
		logline("%s: would destroy %zu socket%s (%s)%s in %.2f ms", a->what, a->n,
			a->n == 1 ? "" : "s", kept, a->tail, ms);
	else
		logline("%s: destroyed %zu socket%s (already gone %zu, failed %zu; %s)%s%s in "
			"%.2f ms",
			a->what, res[SDIAG_DESTROYED], res[SDIAG_DESTROYED] == 1 ? "" : "s",
			res[SDIAG_GONE], a->n - res[SDIAG_DESTROYED] - res[SDIAG_GONE], kept, ct,
			a->tail, ms);
}

static int destroy(struct guard *g, struct guard_action *a)
{
	int r;

	a->results = calloc(a->n, sizeof(*a->results));
	if (!a->results)
		return -ENOMEM;
	r = sdiag_destroy(g->h, (const struct sdiag_sock *const *)a->victims, a->n, a->results,
			  NULL);
	if (r < 0)
		return r;
	for (size_t i = 0; i < a->n; i++)
		if ((unsigned)a->results[i] < GUARD_DESTROY_RESULTS)
			a->res[a->results[i]]++;
	if (g->ct) {
		r = ct_delete_destroyed(g->ct, a->victims, a->results, a->n, &a->ct_deleted);
		if (r < 0)
			logline("%s: conntrack: %s", a->what, ct_strerror(r));
	}
	return 0;
}

/* The policy's own conntrack deletes (the dead backends' UDP entries). */
static void ct_more(struct guard *g, struct guard_action *a)
{
	size_t d = 0;
	int r;

	if (!g->ct || !a->ct_more)
		return;
	r = a->ct_more(g, a, &d);
	a->ct_deleted += d;
	if (r < 0 && r != -ENOENT)
		logline("%s: conntrack: %s", a->what, ct_strerror(r));
}

int guard_act(struct guard *g, struct guard_action *a)
{
	bool dry = guard_dry_run(g);
	int r = 0;
	double ms;

	if (a->n && !dry) {
		r = destroy(g, a);
		if (r < 0) {
			guard_metrics_error(g->metrics);
			logline("%s: cannot destroy: %s", a->what, strerror(-r));
			return r;
		}
	}
	if (!dry)
		ct_more(g, a);
	guard_metrics_conntrack(g->metrics, a->ct_deleted);
	ms = ms_since(&a->t0);
	if (!a->quiet || a->n || a->ct_deleted)
		log_action(g, a, ms);
	guard_metrics_action(g->metrics, a->kept, a->events ? a->res : NULL, a->n, ms / 1e3,
			     dry);
	return 0;
}

void guard_action_fini(struct guard_action *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->victims[i]);
	free(a->victims);
	free(a->results);
	a->victims = NULL;
	a->results = NULL;
	a->n = a->cap = 0;
}
