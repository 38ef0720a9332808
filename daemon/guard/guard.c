/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sockdiag guard: the event loop. rtnetlink events and signals in one poll
 * loop; each address removal or link loss becomes a guard_event, the pure
 * policy (core/policy.c) picks the stranded sockets, and they are destroyed
 * in one batch. After ENOBUFS on the rtnetlink socket events were lost, so the
 * table is rebuilt from full dumps and the difference acted upon.
 *
 * The loop polls the descriptors of the registered event sources (loop.h:
 * signals and rtnetlink here, each other policy's from its own file) and one
 * timerfd armed for the earliest deadline: grace periods ending (removals
 * held by core/grace.c are judged then), the route pass after route events
 * (routes.c), the reap rules (reap.c), the dead backends (backends.c).
 * Every policy's victims go through guard_act() (act.c).
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

#include "conntrack/conntrack.h"
#include "daemon/common/log.h"
#include "daemon/guard/all.h"
#include "daemon/guard/backends.h"
#include "daemon/guard/guard.h"
#include "daemon/guard/loop.h"
#include "daemon/guard/metrics.h"
#include "daemon/guard/rtnl.h"
#include "daemon/metrics/http.h"
#include "lib/core/nl.h"
#include "util/argerr.h"
#include "util/clock.h"
#include "util/textfile.h"

#define logline(...) daemon_log(g->log_name, __VA_ARGS__)

/* ---- acting ------------------------------------------------------------------------------ */

struct action {
	struct guard_action act;	/* what guard_act() does with the victims */
	const struct guard *g;
	const struct guard_pending *p;
};

static int decide_cb(const struct sdiag_sock *s, void *data)
{
	struct action *a = data;

	return guard_action_judge(&a->act, s,
				  guard_decide_all(&a->g->cfg, &a->g->table, a->p, s));
}

static int take_events(struct guard *g, struct guard_pending *p);

/* Victims judged again by the view as it is now (guard_recheck). */
static void recheck(struct action *a)
{
	struct guard_action *x = &a->act;
	size_t keep = 0;

	for (size_t i = 0; i < x->n; i++) {
		enum guard_verdict v = guard_recheck(&a->g->cfg, &a->g->table, a->p,
						     x->victims[i]);

		if (v == GUARD_DESTROY) {
			x->victims[keep++] = x->victims[i];
			continue;
		}
		x->kept[v]++;
		x->kept[GUARD_DESTROY]--;
		free(x->victims[i]);
	}
	x->n = keep;
}

/*
 * Act on every pending event: dump (guard_dump), let the policy pick,
 * destroy the picked in one batch (guard_act).
 *
 * Then the events queued meanwhile are read (removals into later): a socket
 * made on an address after it was added back was made after the kernel
 * queued the re-add's event, so it is seen here, and kept (recheck). Returns
 * 0 or the error reading events (failed dumps and destroys are logged).
 */
static int act(struct guard *g, struct guard_pending *p, struct guard_pending *later,
	       const struct timespec *t0)
{
	struct action a = { .g = g, .p = p, .act = { .t0 = *t0, .events = true } };
	int fatal = 0;

	if (!p->n)
		return 0;
	guard_metrics_events(g->metrics, p);
	if (guard_dump(g, p->what, decide_cb, &a) < 0)
		goto out;
	if (a.act.n) {
		fatal = take_events(g, later);
		if (fatal < 0)
			goto out;
		recheck(&a);
	}
	if (p->n > p->described)
		snprintf(a.act.what, sizeof(a.act.what), "%s and %zu more event%s", p->what,
			 p->n - p->described, p->n - p->described == 1 ? "" : "s");
	else
		snprintf(a.act.what, sizeof(a.act.what), "%s", p->what);
	(void)guard_act(g, &a.act);
out:
	guard_action_fini(&a.act);
	guard_pending_clear(p);
	return fatal;
}

/* ---- grace periods ----------------------------------------------------------------------- */

/* The grace source is due when the first held removal's period ends. */
static void grace_rearm(struct guard *g)
{
	struct guard_source *s = guard_source(g, "grace");

	if (s)
		s->due = guard_grace_next(&g->grace);
}

/* Removals wait out the grace period; judged in end_grace(). */
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
	grace_rearm(g);
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
static int end_grace(struct guard *g, struct guard_source *src, uint64_t now)
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
	src->due = guard_grace_next(&g->grace);
	if (r == 0)
		r = act_all(g, &p, &t0);
	guard_pending_fini(&p);
	return r;
}

/* After the configuration was (re)loaded: every policy follows it. */
static void policies_configured(struct guard *g)
{
	guard_routes_setup(g);
	guard_conntrack_configure(g);
	guard_reap_setup(g);
	guard_backends_setup(g);
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
		guard_routes_changed(g);
	return r;
}

/* Drain the event socket, then act once on everything it said. */
static int read_events(struct guard *g, struct guard_source *src)
{
	struct guard_pending p = { 0 };
	struct timespec t0;
	int r;

	(void)src;
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
static int on_signal(struct guard *g, struct guard_source *src)
{
	struct signalfd_siginfo si;
	int r;

	while (read(src->fd, &si, sizeof(si)) == sizeof(si)) {
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

/* One timerfd armed for the earliest deadline of every source. */
static void arm_timer(struct guard *g)
{
	uint64_t next = GUARD_NEVER;
	struct itimerspec its = { 0 };

	for (size_t i = 0; i < g->n_src; i++)
		if (g->src[i].due < next)
			next = g->src[i].due;
	if (next != GUARD_NEVER) {
		next = next ? next : 1; /* 0 would disarm */
		its.it_value = ts_from_ms(next);
	}
	timerfd_settime(g->timerfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* Poll every registered source's descriptor and the timer; the readable
 * ones' ready(), then the due ones' expired(), in the order registered. */
static int loop(struct guard *g)
{
	struct pollfd p[GUARD_MAX_SOURCES + 1];
	struct guard_source *of[GUARD_MAX_SOURCES];
	uint64_t expirations, now;
	nfds_t n;
	int r;

	for (;;) {
		arm_timer(g);
		n = 0;
		for (size_t i = 0; i < g->n_src; i++) {
			if (g->src[i].fd < 0 || !g->src[i].ready)
				continue;
			of[n] = &g->src[i];
			p[n++] = (struct pollfd){ .fd = g->src[i].fd, .events = POLLIN };
		}
		p[n] = (struct pollfd){ .fd = g->timerfd, .events = POLLIN };
		if (poll(p, n + 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (nfds_t i = 0; i < n; i++) {
			if (!(p[i].revents & (POLLIN | POLLERR)))
				continue;
			r = of[i]->ready(g, of[i]);
			if (r)
				return r < 0 ? r : 0;
		}
		if (!(p[n].revents & POLLIN))
			continue;
		(void)!read(g->timerfd, &expirations, sizeof(expirations));
		now = mono_ms();
		for (size_t i = 0; i < g->n_src; i++) {
			if (g->src[i].due > now || !g->src[i].expired)
				continue;
			r = g->src[i].expired(g, &g->src[i], now);
			if (r)
				return r < 0 ? r : 0;
		}
	}
}

/* The loop's own sources: signals, rtnetlink events, grace periods ending. */
static int register_sources(struct guard *g)
{
	struct guard_source *sig = guard_source(g, "signals");
	struct guard_source *ev = guard_source(g, "rtnetlink");
	struct guard_source *gr = guard_source(g, "grace");

	if (!sig || !ev || !gr)
		return -ENOSPC;
	sig->fd = g->sigfd;
	sig->ready = on_signal;
	ev->fd = grtnl_event_fd(&g->rtnl);
	ev->ready = read_events;
	gr->expired = end_grace;
	return 0;
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
		r = guard_metrics_start(&g->metrics, metrics_fd, g->opt.metrics_listen, false,
					err, sizeof(err));
		metrics_fd = -1;
		if (r < 0) {
			fprintf(stderr, "sockdiag guard: --metrics: %s\n", err);
			goto out;
		}
	}
	if (register_sources(g) < 0 || resync(g, NULL, true) < 0)
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
	ct_close(g->ct);
	g->ct = NULL;
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
	/* The supervisor's counters (shared memory), not its server. */
	g->metrics = guard_metrics_share(g->metrics);
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

/* --all-netns --metrics: the supervisor's census. */
static void census_supervisor(void *arg, const size_t states[3], uint64_t restarts)
{
	struct guard *g = arg;

	guard_metrics_netns(g->metrics, states, restarts, mono_ms());
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
			   .log_name = "sockdiag-guard" };
	const struct guard_all_ops ops = { .run = serve_child, .reload = reload_supervisor,
					   .check = check_supervisor,
					   .netns_dirs = opt->netns_dirs,
					   .census = census_supervisor };
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
	/* Metrics are served from the namespace the guard was started in. */
	if (g.opt.metrics_listen &&
	    http_bind(g.opt.metrics_listen, &metrics_fd, err, sizeof(err)) < 0) {
		fprintf(stderr, "sockdiag guard: --metrics: %s\n", err);
		goto out;
	}
	if (g.opt.all_netns) {
		/* Keeps CAP_SYS_ADMIN to enter the namespaces made later; each
		 * guard drops all but CAP_NET_ADMIN once inside, and counts
		 * into the supervisor's metrics. */
		if (metrics_fd >= 0 &&
		    guard_metrics_start(&g.metrics, metrics_fd, g.opt.metrics_listen, true, err,
					sizeof(err)) < 0) {
			fprintf(stderr, "sockdiag guard: --metrics: %s\n", err);
			goto out;
		}
		status = guard_all_netns(&ops, &g);
		guard_metrics_stop(g.metrics);
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
