// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * How the commands run, written once: the set of namespaces of --all-netns
 * or several -N (and the loop over it), and the schedule of --interval and
 * --count (their parsing and the due time of the nth run, integer
 * nanoseconds on util/clock.h). list, kill, top and drain use it.
 */
#ifndef SOCKDIAG_CLI_RUN_H
#define SOCKDIAG_CLI_RUN_H

#include <getopt.h>
#include <stdint.h>
#include <time.h>

#include "cli/opts/options.h"
#include "util/clock.h"

/* ---- --interval DURATION, --count N ---- */

struct run_sched {
	struct timespec interval;	/* zero: none given */
	uint64_t count;			/* runs; 0: until stopped */
};

enum { RUN_OPT_INTERVAL = 0x180, RUN_OPT_COUNT };

#define RUN_SCHED_LONGOPTS                                                                         \
	{ "interval", required_argument, NULL, RUN_OPT_INTERVAL },                                 \
	{ "count", required_argument, NULL, RUN_OPT_COUNT }

/* Take --interval or --count of command cmd ("list", "top") into s.
 * Returns 0, -EINVAL after printing why, or -ENOENT when val is neither. */
int run_sched_opt(struct run_sched *s, const char *cmd, int val, const char *arg);

static inline uint64_t run_interval_ns(const struct run_sched *s)
{
	return ts_ns(&s->interval);
}

/* The nth run's due time: start_ns + n intervals (CLOCK_MONOTONIC). A late
 * run does not push the later ones back. */
static inline struct deadline run_due(const struct run_sched *s, uint64_t start_ns, uint64_t n)
{
	return deadline_at(start_ns + n * run_interval_ns(s));
}

/* ---- the namespaces of --all-netns, several -N, -N cgroup:/unit: ---- */

/* Whether the options name a set of namespaces (run them one by one). */
bool run_netns_many(const struct cli_opts *o);

/* The set, in *ns (free()) and *n. Returns 0, or an exit status after
 * printing why: EXIT_USAGE for a bad -N, EXIT_RUNTIME when the namespaces
 * cannot be listed or the set is empty (nothing to run on is an error,
 * reported before any output). */
int run_netns_set(const struct cli_opts *o, const char *cmd, struct sdiag_netns **ns, size_t *n);

/* One namespace of the set: fd is open on it (closed after the call).
 * Returns an exit status (the worst is kept) or a negative errno (stops). */
typedef int (*run_ns_fn)(void *ctx, const struct sdiag_netns *ns, int fd);

/* fn on every namespace of the set in turn; one that cannot be entered is
 * reported ("sockdiag CMD: netns LABEL: cannot enter: REASON") and skipped
 * with EXIT_RUNTIME. Returns the worst exit status, or fn's negative errno. */
int run_each_netns(const char *cmd, const struct sdiag_netns *ns, size_t n, run_ns_fn fn,
		   void *ctx);

/* The end of a stream of events (watch, life): "sockdiag CMD: N NOUNs, M lost" and the
 * text more (life's ", K not traced") on stderr, the error r (< 0) unless the reader went
 * away (-EPIPE); returns the exit status. */
int run_stream_done(const char *cmd, const char *noun, uint64_t n, uint64_t lost,
		    const char *more, int r);

#endif
