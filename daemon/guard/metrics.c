// SPDX-License-Identifier: GPL-2.0-or-later
/* The guard's metrics (see metrics.h and sockdiag(8), METRICS). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "daemon/guard/metrics.h"
#include "daemon/metrics/expo.h"
#include "daemon/metrics/http.h"
#include "util/clock.h"

#define LATENCY_BUCKETS 13	/* the last is +Inf */

static const double latency_bounds[LATENCY_BUCKETS - 1] = {
	0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
};
static const char *const latency_le[LATENCY_BUCKETS] = {
	"0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5",
	"1", "2.5", "+Inf",
};

struct counts {
	uint64_t events[2];		/* enum guard_event_kind */
	uint64_t results[SDIAG_ERROR + 1];	/* enum sdiag_destroy_result */
	uint64_t would_destroy;		/* dry runs */
	uint64_t kept[GUARD_DESTROY];	/* by verdict */
	uint64_t errors, resyncs, reloads_ok, reloads_refused;
	/* dead backends: passes, sockets destroyed, file errors; conntrack entries */
	uint64_t backend_passes, backend_destroyed, backend_file_errors, ct_deleted;
	uint64_t latency[LATENCY_BUCKETS];
	double latency_sum;
};

/* Shared (MAP_SHARED) with the guards an --all-netns supervisor forks, which
 * add to the same counters; the mutex is process-shared and robust (a guard
 * killed while holding it leaves it usable). */
struct shared {
	pthread_mutex_t mu;
	struct counts c;
	bool all;			/* --all-netns: the supervisor's census too */
	bool censused;			/* the first census came */
	uint64_t netns[3];		/* namespaces whose guard runs, waits, failed */
	uint64_t restarts;
	uint64_t census_ms;		/* CLOCK_MONOTONIC of the last census, else of the start */
};

struct guard_metrics {
	struct shared *sh;
	struct http_server *srv;	/* the serving process's only */
	bool owner;			/* unmaps sh */
};

static void lock(struct guard_metrics *m)
{
	if (pthread_mutex_lock(&m->sh->mu) == EOWNERDEAD)
		pthread_mutex_consistent(&m->sh->mu);
}

static void unlock(struct guard_metrics *m)
{
	pthread_mutex_unlock(&m->sh->mu);
}

static void counter(struct expo *o, const char *name, const char *help, const char *lname,
		    const char *const *lvalues, const uint64_t *v, size_t n)
{
	expo_family(o, name, "counter", help);
	for (size_t i = 0; i < n; i++) {
		if (!lvalues[i])
			continue;
		if (lname)
			fprintf(o->f, "%s_total{%s=\"%s\"} %llu\n", name, lname, lvalues[i],
				(unsigned long long)v[i]);
		else
			fprintf(o->f, "%s_total %llu\n", name, (unsigned long long)v[i]);
	}
}

static int render(void *ctx, bool openmetrics, char **ret_body, size_t *ret_len)
{
	static const char *const kinds[2] = { "address_removed", "link_down" };
	static const char *const outcomes[4] = { "destroyed", "already_gone", "failed",
						 "would_destroy" };
	static const char *const none[1] = { "" };
	const char *reasons[GUARD_DESTROY];
	struct guard_metrics *m = ctx;
	uint64_t outcome[4], reloads[2];
	struct counts c;
	struct expo o;

	struct shared sh;

	lock(m);
	sh = *m->sh;
	c = sh.c;
	unlock(m);
	outcome[0] = c.results[SDIAG_DESTROYED];
	outcome[1] = c.results[SDIAG_GONE];
	outcome[2] = c.results[SDIAG_UNSUPPORTED] + c.results[SDIAG_DENIED] +
		     c.results[SDIAG_ERROR];
	outcome[3] = c.would_destroy;
	reloads[0] = c.reloads_ok;
	reloads[1] = c.reloads_refused;
	for (int v = 0; v < GUARD_DESTROY; v++)	/* "unrelated" is not a reason to keep */
		reasons[v] = v == GUARD_KEEP_UNRELATED ? NULL
						       : guard_verdict_name((enum guard_verdict)v);
	if (expo_open(&o, openmetrics) < 0)
		return -ENOMEM;
	counter(&o, "sockdiag_guard_events", "Address removals and links lost, acted upon.",
		"kind", kinds, c.events, 2);
	counter(&o, "sockdiag_guard_sockets",
		"Sockets the policy picked, by outcome of the destroy.", "outcome", outcomes,
		outcome, 4);
	counter(&o, "sockdiag_guard_kept_sockets",
		"Sockets a policy concerned that it kept, by reason.", "reason", reasons,
		c.kept, GUARD_DESTROY);
	counter(&o, "sockdiag_guard_resyncs",
		"Full dumps of links and addresses after lost rtnetlink events.", NULL, none,
		&c.resyncs, 1);
	counter(&o, "sockdiag_guard_errors", "Socket dumps or destroy batches that failed.",
		NULL, none, &c.errors, 1);
	counter(&o, "sockdiag_guard_config_reloads",
		"Configuration reloads (SIGHUP) taken or refused.", "result",
		(const char *const[]){ "ok", "refused" }, reloads, 2);
	counter(&o, "sockdiag_guard_backend_passes", "Dead-backend reconcile passes.", NULL, none,
		&c.backend_passes, 1);
	counter(&o, "sockdiag_guard_backend_sockets_destroyed",
		"Sockets connected to a dead backend that a pass destroyed.", NULL, none,
		&c.backend_destroyed, 1);
	counter(&o, "sockdiag_guard_backend_file_errors",
		"Dead-backends files refused (unreadable, malformed, above dead-backends-max).",
		NULL, none, &c.backend_file_errors, 1);
	counter(&o, "sockdiag_guard_conntrack_entries_deleted",
		"Conntrack entries deleted (conntrack = yes), by every kind of rule.", NULL, none,
		&c.ct_deleted, 1);
	if (sh.all) {
		expo_family(&o, "sockdiag_guard_netns", "gauge",
			    "Network namespaces guarded (--all-netns), by the state of their guard.");
		for (int i = 0; i < 3; i++)
			fprintf(o.f, "sockdiag_guard_netns{state=\"%s\"} %llu\n",
				(const char *const[]){ "running", "waiting", "failed" }[i],
				(unsigned long long)sh.netns[i]);
		counter(&o, "sockdiag_guard_netns_restarts",
			"Guards of a namespace that died and were started again.", NULL, none,
			&sh.restarts, 1);
	}
	expo_family(&o, "sockdiag_guard_decision_to_destroy_seconds", "histogram",
		    "From the events' arrival to the last destroy of the sockets they stranded.");
	expo_histogram(&o, "sockdiag_guard_decision_to_destroy_seconds", false, NULL, NULL,
		       latency_le, c.latency, LATENCY_BUCKETS, c.latency_sum);
	return expo_close(&o, ret_body, ret_len);
}

/* A supervisor (--all-netns) is live while its loop takes a census (every
 * scan, at least once a second; the first within GUARD_METRICS_STALL_MS of
 * the start), ready after the first; a single guard once it serves. */
static uint64_t census_ms(void *ctx)
{
	struct guard_metrics *m = ctx;
	uint64_t t;

	lock(m);
	t = m->sh->all ? m->sh->census_ms : UINT64_MAX;
	unlock(m);
	return t;
}

static bool healthy(void *ctx)
{
	uint64_t t = census_ms(ctx);

	return t == UINT64_MAX || mono_ms() - t < GUARD_METRICS_STALL_MS;
}

static bool ready(void *ctx)
{
	struct guard_metrics *m = ctx;
	bool r;

	lock(m);
	r = !m->sh->all || m->sh->censused;
	unlock(m);
	return r && healthy(ctx);
}

int guard_metrics_start(struct guard_metrics **ret, int fd, const char *listen, bool all,
			char *err, size_t errlen)
{
	struct guard_metrics *m = calloc(1, sizeof(*m));
	pthread_mutexattr_t a;
	int r;

	if (m)
		m->sh = mmap(NULL, sizeof(*m->sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			     -1, 0);
	if (!m || m->sh == MAP_FAILED) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		close(fd);
		free(m);
		return -ENOMEM;
	}
	m->owner = true;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&m->sh->mu, &a);
	pthread_mutexattr_destroy(&a);
	/* Before the server answers: a supervisor is not ready until its first census. */
	m->sh->all = all;
	m->sh->census_ms = mono_ms();
	r = http_start(&m->srv, &(struct http_opts){ .listen = listen, .fd = fd, .title = "sockdiag guard",
						     .metrics = render, .healthy = healthy,
						     .ready = ready, .ctx = m },
		       err, errlen);
	if (r < 0) {
		m->srv = NULL;
		guard_metrics_stop(m);
		return r;
	}
	*ret = m;
	return 0;
}

struct guard_metrics *guard_metrics_share(const struct guard_metrics *m)
{
	struct guard_metrics *c;

	if (!m || !(c = calloc(1, sizeof(*c))))
		return NULL;
	c->sh = m->sh;
	return c;
}

void guard_metrics_netns(struct guard_metrics *m, const size_t states[3], uint64_t restarts,
			 uint64_t now_ms)
{
	if (!m)
		return;
	lock(m);
	m->sh->all = true;
	for (int i = 0; i < 3; i++)
		m->sh->netns[i] = states[i];
	m->sh->restarts = restarts;
	m->sh->census_ms = now_ms;
	m->sh->censused = true;
	unlock(m);
}

void guard_metrics_stop(struct guard_metrics *m)
{
	if (!m)
		return;
	http_stop(m->srv);
	if (m->owner) {
		pthread_mutex_destroy(&m->sh->mu);
		munmap(m->sh, sizeof(*m->sh));
	}
	free(m);
}

void guard_metrics_events(struct guard_metrics *m, const struct guard_pending *p)
{
	if (!m)
		return;
	lock(m);
	for (size_t i = 0; i < p->n; i++)
		if ((unsigned)p->ev[i].kind < 2)
			m->sh->c.events[p->ev[i].kind]++;
	unlock(m);
}

void guard_metrics_action(struct guard_metrics *m, const size_t kept[GUARD_DESTROY + 1],
			  const size_t *res, size_t n, double seconds, bool dry_run)
{
	unsigned b = 0;

	if (!m)
		return;
	lock(m);
	for (int v = 0; v < GUARD_DESTROY; v++)
		m->sh->c.kept[v] += kept[v];
	if (!res) {
		unlock(m);
		return;
	}
	if (dry_run) {
		m->sh->c.would_destroy += n;
	} else {
		size_t reported = 0;

		for (int i = 0; i <= SDIAG_ERROR; i++) {
			m->sh->c.results[i] += res[i];
			reported += res[i];
		}
		/* Victims without a result: the batch failed as a whole. */
		m->sh->c.results[SDIAG_ERROR] += n > reported ? n - reported : 0;
	}
	if (n && !dry_run) {
		while (b < LATENCY_BUCKETS - 1 && seconds > latency_bounds[b])
			b++;
		m->sh->c.latency[b]++;
		m->sh->c.latency_sum += seconds;
	}
	unlock(m);
}

#define BUMP(m, field)                                                                             \
	do {                                                                                       \
		if (m) {                                                                           \
			lock(m);                                                                   \
			(m)->sh->c.field++;                                                        \
			unlock(m);                                                                 \
		}                                                                                  \
	} while (0)

void guard_metrics_error(struct guard_metrics *m)
{
	BUMP(m, errors);
}

void guard_metrics_resync(struct guard_metrics *m)
{
	BUMP(m, resyncs);
}

void guard_metrics_reload(struct guard_metrics *m, bool ok)
{
	if (ok)
		BUMP(m, reloads_ok);
	else
		BUMP(m, reloads_refused);
}

void guard_metrics_backends_pass(struct guard_metrics *m, size_t destroyed, size_t ct_deleted)
{
	if (!m)
		return;
	lock(m);
	m->sh->c.backend_passes++;
	m->sh->c.backend_destroyed += destroyed;
	m->sh->c.ct_deleted += ct_deleted;
	unlock(m);
}

void guard_metrics_conntrack(struct guard_metrics *m, size_t deleted)
{
	if (!m || !deleted)
		return;
	lock(m);
	m->sh->c.ct_deleted += deleted;
	unlock(m);
}

void guard_metrics_backends_file_error(struct guard_metrics *m)
{
	BUMP(m, backend_file_errors);
}
