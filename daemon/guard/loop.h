/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The guard's insides, shared by the loop (guard.c), the action path (act.c)
 * and the policies (guard.c's address/link/route events, reap.c,
 * backends.c): struct guard, the registry of event sources, one action path.
 *
 * A policy is one file: a setup function that registers its source(s)
 * (guard_source_add: a descriptor to poll and/or a deadline, and what to do
 * when the descriptor is readable or the deadline has passed), called from
 * policies_configured() in guard.c; its passes pick victims and hand them to
 * guard_act(), which destroys, tallies, deletes their conntrack entries,
 * counts and logs.
 */
#ifndef SOCKDIAG_GUARD_LOOP_H
#define SOCKDIAG_GUARD_LOOP_H

#include <stdint.h>
#include <time.h>

#include "daemon/guard/backends.h"
#include "daemon/guard/guard.h"
#include "daemon/guard/rtnl.h"

#define GUARD_NEVER UINT64_MAX
/* enum sdiag_destroy_result's values: SDIAG_DESTROYED .. SDIAG_ERROR */
#define GUARD_DESTROY_RESULTS (SDIAG_ERROR + 1)
#define GUARD_MAX_SOURCES 8

struct guard;
struct ct;

/* One event source: a descriptor polled (fd >= 0) and/or a deadline (due,
 * CLOCK_MONOTONIC ms, GUARD_NEVER: none). A handler returns 0, 1 to stop
 * the loop, or a negative errno (the loop ends with an error). */
struct guard_source {
	const char *name;
	int fd;
	uint64_t due;
	int (*ready)(struct guard *g, struct guard_source *s);
	int (*expired)(struct guard *g, struct guard_source *s, uint64_t now);
	void *data;
};

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
	struct guard_backends bk;	/* dead-backends */
	struct ct *ct;			/* conntrack = yes, and the kernel has ctnetlink */
	bool resync_due;		/* the last resync's dumps kept being interrupted */
	struct guard_source src[GUARD_MAX_SOURCES];
	size_t n_src;
	char log_name[96];		/* "sockdiag-guard", "sockdiag-guard[netns X]" */
};

/* The source registered under name (added the first time, fd -1, never
 * due), or NULL when the registry is full. Its fields are the policy's to
 * set; the loop polls what they say at each turn. */
struct guard_source *guard_source(struct guard *g, const char *name);

bool guard_dry_run(const struct guard *g);

/* One action of a policy. The policy fills what, victims (owned, freed by
 * guard_act) and kept (per verdict, GUARD_DESTROY: the victims picked). */
struct guard_action {
	char what[256];			/* "address 10.9.0.2/16 removed from vb" */
	struct sdiag_sock **victims;
	size_t n, cap;
	size_t kept[GUARD_DESTROY + 1];
	struct timespec t0;		/* when the work began (the log's ms) */
	bool events;			/* address/link/route events: the outcome and latency metrics */
	bool quiet;			/* no line unless sockets were picked or
					 * conntrack entries deleted */
	/* Optional, after the destroy (not in a dry run): more conntrack
	 * entries to delete (the dead backends' UDP entries), added to
	 * ct_deleted; a negative errno is logged. */
	int (*ct_more)(struct guard *g, struct guard_action *a, size_t *ret_deleted);
	void *data;			/* the policy's, for ct_more */
	/* Filled by guard_act: */
	size_t res[GUARD_DESTROY_RESULTS];
	enum sdiag_destroy_result *results; /* per victim (NULL: none destroyed) */
	size_t ct_deleted;
	char tail[160];			/* said after the counts (", 2 backends") */
};

/* Count s as kept for verdict v, or (GUARD_DESTROY) add it to the victims. */
int guard_action_judge(struct guard_action *a, const struct sdiag_sock *s, enum guard_verdict v);
/* Destroy the victims in one batch (not in a dry run), tally the results,
 * delete the conntrack entries of the destroyed flows, count, log one line.
 * Returns 0 or the error of the batch (logged). Frees the victims. */
int guard_act(struct guard *g, struct guard_action *a);
void guard_action_fini(struct guard_action *a);
/* "kept 3: loopback 1, mark 2" (or "kept 0") into buf. */
void guard_kept_text(const size_t kept[GUARD_DESTROY + 1], char *buf, size_t len);

/* The sockets the address/link and route policies can destroy, dumped to cb
 * (TCP and UDP, the configured states, no kernel filter), the cgroups of the
 * exemptions looked up again first. A failed dump is logged (under what) and
 * counted; returns 0 or its error. */
int guard_dump(struct guard *g, const char *what, sdiag_sock_cb cb, void *data);

/* conntrack = yes: the handle opened (once, logged if impossible) or closed. */
void guard_conntrack_configure(struct guard *g);

/* Policies (one file each): set up after every (re)load of the configuration. */
void guard_routes_setup(struct guard *g);
void guard_reap_setup(struct guard *g);
void guard_backends_setup(struct guard *g);
/* Route events were seen: a route pass once they settle. */
void guard_routes_changed(struct guard *g);

#endif
