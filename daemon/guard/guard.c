/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sockdiag guard: the event loop. rtnetlink events and signals in one poll
 * loop; each address removal or link loss becomes a guard_event, the pure
 * policy (core/policy.c) picks the stranded sockets, and they are destroyed
 * in one batch. After ENOBUFS on the rtnetlink socket events were lost, so the
 * table is rebuilt from full dumps and the difference acted upon.
 *
 * A timerfd in the same loop ends grace periods (removals held by
 * core/grace.c are judged then), runs the route pass after route events
 * (core/route.c) and the reap rules every reap-interval (reap.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <linux/rtnetlink.h>

#include "daemon/common/log.h"
#include "daemon/guard/all.h"
#include "daemon/guard/backends.h"
#include "daemon/guard/guard.h"
#include "daemon/guard/metrics.h"
#include "daemon/guard/rtnl.h"
#include "daemon/metrics/http.h"
#include "lib/core/nl.h"
#include "util/argerr.h"
#include "util/clock.h"
#include "util/textfile.h"

/* Route events come in bursts (a VPN adds a dozen routes): the pass runs
 * this long after the first, or when the grace period ends if that is later. */
#define ROUTE_SETTLE_MS 100
#define NEVER UINT64_MAX

struct guard {
	struct guard_config cfg;
	struct guard_cmdline opt;	/* dry_run there: the file can also ask */
	struct guard_table table;
	struct grtnl rtnl;
	struct sdiag_handle *h;
	int sigfd;
	struct guard_metrics *metrics;	/* NULL without --metrics */
	int timerfd;
	struct guard_grace grace;	/* removals held for the grace period */
	struct guard_routes *routes;	/* open while on-route-change = yes */
	uint64_t route_due, reap_due;	/* CLOCK_MONOTONIC ms, NEVER */
	struct guard_backends bk;	/* dead-backends, conntrack */
	bool resync_due;		/* the last resync's dumps kept being interrupted */
	char log_name[96];		/* "sockdiag-guard", "sockdiag-guard[netns X]" */
};

#define logline(...) daemon_log(g->log_name, __VA_ARGS__)

/* ---- acting ------------------------------------------------------------------------------ */

struct action {
	const struct guard *g;
	const struct guard_pending *p;	/* NULL: a route pass */
	struct sdiag_sock **victims;
	size_t n, cap;
	size_t kept[GUARD_DESTROY + 1];
	size_t no_route, lookup_errors;	/* route pass */
};

/* After route changes: the kernel's route to the socket's peer (cached). */
static enum guard_verdict route_verdict(struct action *a, const struct sdiag_sock *s)
{
	const struct guard_route_answer *ans = NULL;
	enum guard_verdict v = guard_decide_selected(&a->g->cfg, s);
	struct guard_route_key k;

	if (v != GUARD_DESTROY)
		return v;
	guard_route_key_of(s, &k);
	if (guard_routes_lookup(a->g->routes, &k, &ans) < 0) {
		a->lookup_errors++;
		return GUARD_KEEP_UNRELATED;
	}
	a->no_route += ans->err != 0;
	return guard_decide_route(&a->g->cfg, &a->g->table, s, ans);
}

static int decide_cb(const struct sdiag_sock *s, void *data)
{
	struct action *a = data;
	enum guard_verdict v = a->p ? guard_decide_all(&a->g->cfg, &a->g->table, a->p, s) :
				      route_verdict(a, s);

	a->kept[v]++;
	if (v != GUARD_DESTROY)
		return 0;
	return guard_victims_add(&a->victims, &a->n, &a->cap, s);
}

static void log_action(const struct guard *g, const struct action *a, const size_t res[5],
		       double ms)
{
	char what[256], kept[256] = "";
	size_t off = 0, nkept = 0;

	if (!a->p)
		snprintf(what, sizeof(what), "routes changed (%zu lookups, %zu peers without a route)",
			 guard_routes_asked(a->g->routes), a->no_route);
	else if (a->p->n > a->p->described)
		snprintf(what, sizeof(what), "%s and %zu more event%s", a->p->what,
			 a->p->n - a->p->described, a->p->n - a->p->described == 1 ? "" : "s");
	else
		snprintf(what, sizeof(what), "%s", a->p->what);
	for (int v = 0; v < GUARD_DESTROY; v++) {
		if (v == GUARD_KEEP_UNRELATED || !a->kept[v])
			continue;
		nkept += a->kept[v];
		if (off < sizeof(kept))
			off += (size_t)snprintf(kept + off, sizeof(kept) - off, "%s%s %zu",
						off ? ", " : "",
						guard_verdict_name((enum guard_verdict)v), a->kept[v]);
	}
	if (!a->n && !nkept)
		logline("%s: no sockets affected (%.2f ms)", what, ms);
	else if (g->opt.dry_run || g->cfg.dry_run)
		logline("%s: would destroy %zu socket%s (kept %zu%s%s) in %.2f ms", what, a->n,
			a->n == 1 ? "" : "s", nkept, off ? ": " : "", kept, ms);
	else
		logline("%s: destroyed %zu socket%s (already gone %zu, failed %zu; kept %zu%s%s) "
			"in %.2f ms",
			what, res[SDIAG_DESTROYED], res[SDIAG_DESTROYED] == 1 ? "" : "s",
			res[SDIAG_GONE], a->n - res[SDIAG_DESTROYED] - res[SDIAG_GONE], nkept,
			off ? ": " : "", kept, ms);
}

static int take_events(struct guard *g, struct guard_pending *p);

/* Victims judged again by the view as it is now (guard_recheck). */
static void recheck(struct action *a)
{
	size_t keep = 0;

	for (size_t i = 0; i < a->n; i++) {
		enum guard_verdict v = guard_recheck(&a->g->cfg, &a->g->table, a->p,
						     a->victims[i]);

		if (v == GUARD_DESTROY) {
			a->victims[keep++] = a->victims[i];
			continue;
		}
		a->kept[v]++;
		a->kept[GUARD_DESTROY]--;
		free(a->victims[i]);
	}
	a->n = keep;
}

/*
 * Act on every pending event: dump TCP and UDP without a kernel filter (TCP
 * of both families then takes one walk of the kernel's established hash,
 * the dominant cost), let the policy pick, destroy the picked in one batch.
 * Only the states the policy can destroy are dumped: the kernel then skips
 * the rest early, and never walks its bind hash for bound-inactive sockets
 * (host-wide, and never destroyable) or its listening hash unless
 * "listening" is configured.
 *
 * Then the events queued meanwhile are read (removals into later): a socket
 * made on an address after it was added back was made after the kernel
 * queued the re-add's event, so it is seen here, and kept (recheck). Returns
 * 0 or the error reading events (failed dumps and destroys are logged).
 */
static int act(struct guard *g, struct guard_pending *p, struct guard_pending *later,
	       const struct timespec *t0)
{
	const char *what = p ? p->what : "routes changed";
	SDIAG_OPTS(sdiag_query, q,
			.tables = GUARD_TABLES,
			.states = g->cfg.tcp_states |
				  (g->cfg.udp_connected ? SDIAG_STATE_BIT(SDIAG_SS_ESTABLISHED) : 0),
			.afs = SDIAG_AF_ALL,
			.flags = SDIAG_Q_SKIP_UNSUPPORTED); /* no UDP-Lite: it strands nothing */
	struct action a = { .g = g, .p = p };
	enum sdiag_destroy_result *results = NULL;
	size_t res[5] = { 0 };
	double ms;
	int r, fatal = 0;

	if (p && !p->n)
		return 0;
	if (p)
		guard_metrics_events(g->metrics, p);
	else
		guard_routes_reset(g->routes);
	/* A service restarted since has a new cgroup (a new id): look again. */
	if (g->cfg.n_exempt_cgroups || g->cfg.n_only_cgroups) {
		r = guard_config_resolve(&g->cfg);
		if (r > 0)
			logline("cgroups looked up again: %d of the configured cgroups and units "
				"changed", r);
	}
	r = sdiag_dump(g->h, &q, decide_cb, NULL, &a);
	if (r < 0) {
		guard_metrics_error(g->metrics);
		logline("%s: cannot dump sockets: %s", what, strerror(-r));
		goto out;
	}
	if (a.lookup_errors)
		logline("%s: %zu route lookups failed; their sockets are kept", what,
			a.lookup_errors);
	if (p && a.n) {
		fatal = take_events(g, later);
		if (fatal < 0)
			goto out;
		recheck(&a);
	}
	if (a.n && !g->opt.dry_run && !g->cfg.dry_run) {
		results = calloc(a.n, sizeof(*results));
		if (!results) {
			r = -ENOMEM;
			logline("%s: cannot destroy: %s", what, strerror(-r));
			goto out;
		}
		r = sdiag_destroy(g->h, (const struct sdiag_sock *const *)a.victims, a.n, results,
				  NULL);
		if (r < 0) {
			guard_metrics_error(g->metrics);
			logline("%s: cannot destroy: %s", what, strerror(-r));
			goto out;
		}
		for (size_t i = 0; i < a.n; i++)
			if ((unsigned)results[i] < 5)
				res[results[i]]++;
		guard_metrics_conntrack(g->metrics,
					guard_backends_ct_flows(&g->bk, a.victims, results, a.n));
	}
	ms = ms_since(t0);
	log_action(g, &a, res, ms);
	guard_metrics_action(g->metrics, a.kept, res, a.n, ms / 1e3, g->opt.dry_run || g->cfg.dry_run);
out:
	for (size_t i = 0; i < a.n; i++)
		free(a.victims[i]);
	free(a.victims);
	free(results);
	if (p)
		guard_pending_clear(p);
	return fatal;
}

/* ---- grace, route changes, reaping: the timer ------------------------------------------ */

/* Removals wait out the grace period; judged in on_timer(). */
static int hold(struct guard *g, struct guard_pending *p)
{
	uint64_t now = mono_ms();
	char what[128];
	int r = 0;

	for (size_t i = 0; i < p->n && r == 0; i++) {
		guard_event_describe(&g->table, &p->ev[i], what, sizeof(what));
		r = guard_grace_hold(&g->grace, &p->ev[i], what, now, g->cfg.grace_ms);
	}
	guard_pending_clear(p);
	return r;
}

/* Act on p; removals read meanwhile (act looks before destroying) are new
 * events like any other: acted upon in turn, or held for the grace period. */
static int act_all(struct guard *g, struct guard_pending *p, const struct timespec *t0)
{
	struct guard_pending later = { 0 }, *cur = p, *next = &later, *x;
	struct timespec t = *t0;
	int r;

	while ((r = act(g, cur, next, &t)) == 0 && next->n && !g->cfg.grace_ms) {
		x = cur, cur = next, next = x;
		clock_gettime(CLOCK_MONOTONIC, &t);
	}
	if (r == 0 && next->n)
		r = hold(g, next);
	guard_pending_fini(&later);
	return r;
}

/* The grace periods that ended: what came back is logged, the rest acted upon together. */
static int end_grace(struct guard *g, uint64_t now)
{
	struct guard_pending p = { 0 };
	struct guard_held *due = NULL;
	struct timespec t0;
	size_t n = 0;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = guard_grace_take(&g->grace, now, &due, &n);
	for (size_t i = 0; i < n && r == 0; i++) {
		if (guard_event_came_back(&g->table, &due[i].ev))
			logline("%s: back within the grace period (%u ms): nothing destroyed",
				due[i].what, g->cfg.grace_ms);
		else
			r = guard_held_to_pending(&due[i], &p);
	}
	guard_held_free(due, n);
	if (r == 0)
		r = act_all(g, &p, &t0);
	guard_pending_fini(&p);
	return r;
}

static void arm_timer(struct guard *g)
{
	uint64_t next = guard_grace_next(&g->grace);
	struct itimerspec its = { 0 };

	if (g->route_due < next)
		next = g->route_due;
	if (g->reap_due < next)
		next = g->reap_due;
	if (guard_backends_due(&g->bk) < next)
		next = guard_backends_due(&g->bk);
	if (next != NEVER) {
		next = next ? next : 1; /* 0 would disarm */
		its.it_value = ts_from_ms(next);
	}
	timerfd_settime(g->timerfd, TFD_TIMER_ABSTIME, &its, NULL);
}

static int on_timer(struct guard *g)
{
	uint64_t expirations, now = mono_ms();
	int r = 0;

	(void)!read(g->timerfd, &expirations, sizeof(expirations));
	if (guard_grace_next(&g->grace) <= now)
		r = end_grace(g, now);
	if (r == 0 && g->route_due <= now) {
		struct timespec t0;

		g->route_due = NEVER;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (g->routes)
			(void)act(g, NULL, NULL, &t0);
	}
	if (r == 0 && g->reap_due <= now) {
		guard_reap_all(g->h, &g->cfg, g->opt.dry_run || g->cfg.dry_run, &g->bk,
			       g->metrics, g->log_name);
		g->reap_due = mono_ms() + g->cfg.reap_interval_ms;
	}
	if (r == 0 && guard_backends_due(&g->bk) <= now)
		guard_backends_run(&g->bk, g->h, &g->cfg, g->opt.dry_run || g->cfg.dry_run,
				   g->metrics, mono_ms());
	return r;
}

/* Route events seen: one pass after they settle. */
static void routes_changed(struct guard *g)
{
	uint32_t settle = g->cfg.grace_ms > ROUTE_SETTLE_MS ? g->cfg.grace_ms : ROUTE_SETTLE_MS;

	if (g->routes && g->route_due == NEVER)
		g->route_due = mono_ms() + settle;
}

/* After the configuration was (re)loaded: route events and reaping follow it. */
static void policies_configured(struct guard *g)
{
	int r;

	if (g->cfg.on_route_change && !g->routes) {
		r = guard_routes_open(&g->routes);
		if (r == 0)
			r = guard_routes_subscribe(grtnl_event_fd(&g->rtnl), true);
		if (r < 0) {
			logline("on-route-change: cannot watch routes: %s", strerror(-r));
			guard_routes_close(g->routes);
			g->routes = NULL;
		}
	} else if (!g->cfg.on_route_change && g->routes) {
		(void)guard_routes_subscribe(grtnl_event_fd(&g->rtnl), false);
		guard_routes_close(g->routes);
		g->routes = NULL;
		g->route_due = NEVER;
	}
	g->reap_due = g->cfg.n_reaps ? mono_ms() + g->cfg.reap_interval_ms : NEVER;
	guard_backends_configure(&g->bk, &g->cfg, mono_ms());
	if (g->cfg.grace_ms || g->routes || g->cfg.n_reaps)
		logline("grace %u ms; route changes %s; %zu reap rule%s every %u s (at most %u "
			"sockets each)",
			g->cfg.grace_ms, g->routes ? "watched" : "ignored", g->cfg.n_reaps,
			g->cfg.n_reaps == 1 ? "" : "s", g->cfg.reap_interval_ms / 1000,
			g->cfg.reap_max);
}

/* ---- events and resync ----------------------------------------------------------------- */

/* Rebuild the table from dumps; what disappeared meanwhile becomes pending. */
static int resync(struct guard *g, struct guard_pending *p, bool initial)
{
	struct guard_table old = g->table, now;
	int r;

	r = grtnl_dump(&g->rtnl, &now);
	if (r == -EINTR) {
		/* Links and addresses changed during every try: a dump that
		 * skipped a present address would destroy its sockets. Keep the
		 * view as it is and resync at the next events; said once. */
		if (!g->resync_due)
			logline("resync: links and addresses changed during each of %d dumps; "
				"keeping the current view, trying again at the next events",
				SD_NL_DUMP_TRIES);
		g->resync_due = true;
		return 0;
	}
	if (r < 0) {
		const char *m = grtnl_ext_ack(&g->rtnl);

		logline("resync: cannot dump links and addresses: %s%s%s", strerror(-r),
			*m ? ": " : "", m);
		return r;
	}
	g->resync_due = false;
	g->table = now;
	if (initial) {
		logline("watching %zu links, %zu addresses", now.n_links, now.n_addrs);
		guard_table_fini(&old);
		return 0;
	}
	guard_metrics_resync(g->metrics);
	logline("resync after lost rtnetlink events: %zu links, %zu addresses", now.n_links,
		now.n_addrs);
	r = guard_view_diff(&old, &now, p);
	guard_table_fini(&old);
	return r;
}

/* Read every queued event into the view, its removals into p (after lost
 * events: a resync). */
static int take_events(struct guard *g, struct guard_pending *p)
{
	uint8_t buf[64 * 1024] __attribute__((aligned(8)));
	bool route_event = false;
	int r = 0;

	if (g->resync_due) {
		r = resync(g, p, false);
		route_event = true;
	}
	while (r == 0) {
		ssize_t n = grtnl_read_events(&g->rtnl, buf, sizeof(buf));
		const struct nlmsghdr *nlh;
		size_t left;

		if (n == -EINTR)
			continue;
		if (n == -EAGAIN)
			break;
		if (n == -ENOBUFS) {
			/* What is still queued predates the loss: applied on
			 * top of the dump it would undo it (a removal of an
			 * address added back since, an address on a link it
			 * has left again). The dump alone is the truth. */
			r = grtnl_drain(&g->rtnl);
			if (r == 0)
				r = resync(g, p, false);
			route_event = true; /* route events may be lost too */
			continue;
		}
		if (n < 0) {
			r = (int)n;
			break;
		}
		for (nlh = sd_nl_first(buf, (size_t)n, &left); r == 0 && nlh;
		     nlh = sd_nl_next(nlh, &left)) {
			route_event |= guard_route_event(nlh);
			r = guard_view_apply(&g->table, p, nlh);
		}
	}
	if (route_event)
		routes_changed(g);
	return r;
}

/* Drain the event socket, then act once on everything it said. */
static int read_events(struct guard *g)
{
	struct guard_pending p = { 0 };
	struct timespec t0;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = take_events(g, &p);
	if (r == 0 && g->cfg.grace_ms)
		r = hold(g, &p);
	else if (r == 0)
		r = act_all(g, &p, &t0);
	guard_pending_fini(&p);
	return r;
}

/* ---- set-up ----------------------------------------------------------------------------- */

/* A guard that cannot destroy would only log "denied" at the first event:
 * find out at start, with the capabilities it keeps. Returns 0, or an exit
 * status (3: it never could; 1: a runtime error) after saying why. */
static int can_destroy(struct guard *g)
{
	int r;

	if (g->opt.dry_run || g->cfg.dry_run)
		return 0;
	r = sdiag_destroy_check(g->h);
	if (r < 0)
		fprintf(stderr, "sockdiag guard: %s%s\n",
			r == -EPERM || r == -EOPNOTSUPP ? "" : "cannot open a destroy socket: ",
			guard_destroy_problem(r));
	return r == -EPERM || r == -EOPNOTSUPP ? 3 : r < 0 ? 1 : 0;
}

/* No file at the default path (and no -c): the built-in defaults apply. */
static bool config_absent(const struct guard *g)
{
	return !g->opt.config_explicit && access(g->opt.config_path, F_OK) < 0;
}

static int load_config(struct guard *g, bool reload)
{
	struct guard_config c;
	char err[512];
	int r;

	if (config_absent(g)) {
		if (reload) {
			guard_config_fini(&g->cfg);
			logline("reload: no %s; using the defaults", g->opt.config_path);
		}
		guard_config_init(&g->cfg);
		return 0;
	}
	r = guard_config_load(&c, g->opt.config_path, err, sizeof(err));
	if (r < 0) {
		char q[256];

		text_excerpt(q, sizeof(q), g->opt.config_path, strlen(g->opt.config_path), 48);
		if (reload)
			logline("reload: %s: %s; keeping the previous configuration", q, err);
		else
			fprintf(stderr, "sockdiag guard: %s: %s\n", q, err);
		return r;
	}
	/* (The --all-netns supervisor has no handle: each guard checks.) */
	if (reload && g->h && g->cfg.dry_run && !c.dry_run && !g->opt.dry_run &&
	    (r = sdiag_destroy_check(g->h)) < 0) {
		/* Started as a dry run, so never checked: stay one. */
		logline("reload: %s: dry-run = no, but %s; keeping the previous configuration",
			g->opt.config_path, guard_destroy_problem(r));
		guard_config_fini(&c);
		return r;
	}
	if (reload) {
		guard_config_fini(&g->cfg);
		logline("reloaded %s", g->opt.config_path);
	}
	g->cfg = c;
	return 0;
}

/* Returns 1 to stop, 0 to go on, <0 on error. */
static int on_signal(struct guard *g)
{
	struct signalfd_siginfo si;
	int r;

	while (read(g->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			r = load_config(g, true);
			guard_metrics_reload(g->metrics, r == 0);
			if (r == 0)
				policies_configured(g);
			continue;
		}
		logline("signal %u: exiting", si.ssi_signo);
		return 1;
	}
	return 0;
}

static int loop(struct guard *g)
{
	struct pollfd p[4] = {
		{ .fd = grtnl_event_fd(&g->rtnl), .events = POLLIN },
		{ .fd = g->sigfd, .events = POLLIN },
		{ .fd = g->timerfd, .events = POLLIN },
		{ .fd = -1, .events = POLLIN },
	};
	int r;

	for (;;) {
		arm_timer(g);
		p[3].fd = guard_backends_fd(&g->bk); /* a reload may change it */
		if (poll(p, 4, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (p[1].revents & POLLIN) {
			r = on_signal(g);
			if (r)
				return r < 0 ? r : 0;
		}
		if (p[0].revents & (POLLIN | POLLERR)) {
			r = read_events(g);
			if (r < 0)
				return r;
		}
		if (p[3].revents & POLLIN)
			guard_backends_on_event(&g->bk, mono_ms());
		if (p[2].revents & POLLIN) {
			r = on_timer(g);
			if (r < 0)
				return r;
		}
	}
}

/* Guard the namespace the process is in now (label: how to name it, or NULL).
 * metrics_fd: the bound --metrics socket, or -1 (closed here). Returns the
 * exit status. */
static int serve(struct guard *g, const char *label, int metrics_fd)
{
	int r = 0, status = 1;
	char err[256];

	guard_backends_init(&g->bk, g->log_name);
	g->sigfd = guard_open_signals();
	g->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (g->timerfd < 0) {
		fprintf(stderr, "sockdiag guard: cannot create a timer: %s\n", strerror(errno));
		goto out;
	}
	if (g->sigfd < 0 || (r = grtnl_open(&g->rtnl, g->opt.rtnl_rcvbuf)) < 0 ||
	    (r = sdiag_open(&g->h)) < 0) {
		fprintf(stderr, "sockdiag guard: cannot open netlink sockets: %s\n",
			strerror(g->sigfd < 0 ? -g->sigfd : -r));
		goto out;
	}
	r = guard_drop_capabilities();
	if (r < 0) {
		fprintf(stderr, "sockdiag guard: cannot drop capabilities\n");
		goto out;
	}
	status = can_destroy(g);
	if (status)
		goto out;
	status = 1;
	/* Its threads start without capabilities and with signals blocked. */
	if (metrics_fd >= 0) {
		r = guard_metrics_start(&g->metrics, metrics_fd, g->opt.metrics_listen, err,
					sizeof(err));
		metrics_fd = -1;
		if (r < 0) {
			fprintf(stderr, "sockdiag guard: --metrics: %s\n", err);
			goto out;
		}
	}
	if (resync(g, NULL, true) < 0)
		goto out;
	policies_configured(g);
	logline("started%s%s%s", label ? " in network namespace " : "", label ? label : "",
		g->opt.dry_run || g->cfg.dry_run ? " (dry run: nothing is destroyed)" : "");
	status = loop(g) < 0 ? 1 : 0;
out:
	guard_metrics_stop(g->metrics);
	if (metrics_fd >= 0)
		close(metrics_fd);
	sdiag_close(g->h);
	grtnl_close(&g->rtnl);
	if (g->sigfd >= 0)
		close(g->sigfd);
	if (g->timerfd >= 0)
		close(g->timerfd);
	guard_routes_close(g->routes);
	guard_backends_fini(&g->bk);
	guard_grace_fini(&g->grace);
	guard_table_fini(&g->table);
	return status;
}

/* --all-netns, in a new child already in its namespace: the guard there. */
static int serve_child(void *arg, const char *label)
{
	struct guard *g = arg;
	int status;

	snprintf(g->log_name, sizeof(g->log_name), "sockdiag-guard[netns %s]", label);
	status = serve(g, label, -1);
	guard_config_fini(&g->cfg);
	return status;
}

/* --all-netns, in the supervisor before any guard: could one destroy? */
static int check_supervisor(void *arg)
{
	struct guard *g = arg;
	int r, status;

	r = sdiag_open(&g->h);
	if (r < 0) {
		fprintf(stderr, "sockdiag guard: cannot open netlink sockets: %s\n", strerror(-r));
		return 1;
	}
	status = can_destroy(g);
	sdiag_close(g->h);
	g->h = NULL;
	return status;
}

/* --all-netns, SIGHUP in the supervisor: the guards started from now on get
 * the file as it is now (those running reload it themselves). */
static void reload_supervisor(void *arg)
{
	(void)load_config(arg, true);
}

int guard_main(const struct guard_cmdline *opt)
{
	struct guard g = { .opt = *opt, .sigfd = -1, .timerfd = -1,
			   .route_due = NEVER, .reap_due = NEVER, .log_name = "sockdiag-guard" };
	const struct guard_all_ops ops = { .run = serve_child, .reload = reload_supervisor,
					   .check = check_supervisor };
	int status = 1, metrics_fd = -1;
	char err[256];

	if (load_config(&g, false) < 0)
		return 2;
	if (g.opt.check) {
		if (config_absent(&g))
			printf("%s: no file; using the defaults\n", g.opt.config_path);
		else
			printf("%s: ok\n", g.opt.config_path);
		guard_config_fini(&g.cfg);
		return 0;
	}
	if (g.opt.all_netns) {
		/* Keeps CAP_SYS_ADMIN to enter the namespaces made later; each
		 * guard drops all but CAP_NET_ADMIN once inside. */
		status = guard_all_netns(&ops, &g);
		goto out;
	}
	/* Metrics are served from the namespace the guard was started in. */
	if (g.opt.metrics_listen &&
	    http_bind(g.opt.metrics_listen, &metrics_fd, err, sizeof(err)) < 0) {
		fprintf(stderr, "sockdiag guard: --metrics: %s\n", err);
		goto out;
	}
	if (g.opt.netns && guard_enter_netns(g.opt.netns) < 0) {
		if (metrics_fd >= 0)
			close(metrics_fd);
		goto out;
	}
	status = serve(&g, g.opt.netns, metrics_fd);
out:
	guard_config_fini(&g.cfg);
	return status;
}
