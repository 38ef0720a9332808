/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sockdiag guard --metrics HOST:PORT: the guard's counters, served by http.c.
 * The event loop adds to them (every function accepts NULL: no --metrics);
 * the HTTP threads read them under the same mutex. With --all-netns the
 * supervisor serves them and every guard it forks adds to them: one set of
 * counters, summed over the namespaces, in shared memory.
 */
#ifndef SOCKDIAG_GUARD_METRICS_H
#define SOCKDIAG_GUARD_METRICS_H

#include <stdbool.h>
#include <stddef.h>

#include "daemon/guard/guard.h"

struct guard_metrics;

/* Serve on fd (from http_bind(), taken over), which listens on listen; all:
 * an --all-netns supervisor's (its census to come, below). On failure a
 * negative errno and a one-line reason in err. */
int guard_metrics_start(struct guard_metrics **ret, int fd, const char *listen, bool all,
			char *err, size_t errlen);
void guard_metrics_stop(struct guard_metrics *m);
/* --all-netns: in a guard the supervisor forked, a handle on the same
 * counters (shared memory), serving nothing; NULL when m is. */
struct guard_metrics *guard_metrics_share(const struct guard_metrics *m);
/* --all-netns, the supervisor's census of its namespaces (guards running,
 * waiting to start, failed), the restarts so far, when (mono_ms()). /healthz
 * fails once no census came for GUARD_METRICS_STALL_MS (the loop is stuck;
 * counted from the server's start until the first), /readyz until the first
 * (the first scan, which may be held as long as any later). A namespace whose
 * guard failed or waits makes neither fail: the supervisor is alive, and the
 * gauge sockdiag_guard_netns says so. */
#define GUARD_METRICS_STALL_MS 30000
void guard_metrics_netns(struct guard_metrics *m, const size_t states[3], uint64_t restarts,
			 uint64_t now_ms);

/* Events about to be acted upon. */
void guard_metrics_events(struct guard_metrics *m, const struct guard_pending *p);
/* One action: the verdicts (kept[v] sockets per verdict), the destroy results
 * (res[enum sdiag_destroy_result]) of n victims, seconds from the events'
 * arrival to the last destroy, whether it was a dry run. res NULL (an action
 * of reap rules or dead backends, counted by their own counters): only the
 * kept sockets. */
void guard_metrics_action(struct guard_metrics *m, const size_t kept[GUARD_DESTROY + 1],
			  const size_t *res, size_t n, double seconds, bool dry_run);
/* A dump or a destroy that failed as a whole. */
void guard_metrics_error(struct guard_metrics *m);
void guard_metrics_resync(struct guard_metrics *m);
void guard_metrics_reload(struct guard_metrics *m, bool ok);
/* A dead-backends pass: sockets it destroyed, conntrack entries it deleted. */
void guard_metrics_backends_pass(struct guard_metrics *m, size_t destroyed, size_t ct_deleted);
/* Conntrack entries deleted after the other rules' destroys. */
void guard_metrics_conntrack(struct guard_metrics *m, size_t deleted);
/* A dead-backends file that was refused. */
void guard_metrics_backends_file_error(struct guard_metrics *m);

#endif
