/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The guard's dead backends (`dead-backends = PATH`: the file watched, read,
 * reconciled every backend-interval) and its conntrack socket (`conntrack =
 * yes`, for every kind of rule). See guard_backends.c.
 */
#ifndef SOCKDIAG_GUARD_BACKENDS_H
#define SOCKDIAG_GUARD_BACKENDS_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/common/backends.h"
#include "daemon/guard/guard.h"

struct ct;
struct guard_metrics;

struct guard_backends {
	const char *log_name;
	char *path;		/* the file, NULL: none configured */
	char *dir;		/* its directory */
	const char *name;	/* its last component (in path) */
	int ifd;		/* inotify, -1 */
	int wd;			/* the directory's watch, -1: none (yet, or lost) */
	bool watch_logged;	/* why it cannot be watched was said */
	struct backend_set set;	/* the list in force */
	bool loaded;		/* a list is in force (read once, or the file missing) */
	uint64_t read_due;	/* read the file again, CLOCK_MONOTONIC ms; NEVER: no */
	bool read_complete;	/* ... because a write of it ended (else: only if
				 * it is still gone: it was removed) */
	uint64_t pass_due;	/* next pass (forced or periodic) */
	uint64_t watch_due;	/* try to watch the directory again */
	uint32_t interval_ms, max;
	struct ct *ct;		/* conntrack = yes, and the kernel has ctnetlink */
};

void guard_backends_init(struct guard_backends *b, const char *log_name);
void guard_backends_fini(struct guard_backends *b);
/* After the configuration was (re)loaded: follow its dead-backends, backend-
 * interval, dead-backends-max and conntrack keys; the file is read again and
 * a pass made at now_ms. */
void guard_backends_configure(struct guard_backends *b, const struct guard_config *c,
			      uint64_t now_ms);
/* The inotify descriptor to poll (-1: none). */
int guard_backends_fd(const struct guard_backends *b);
/* Events in the file's directory: those that end a write of the file (a
 * close after writing, a rename onto it, a ConfigMap's ..data swap), its
 * removal and the directory's own removal read it again shortly; the rest
 * (other names, a file still being written) are ignored. */
void guard_backends_on_event(struct guard_backends *b, uint64_t now_ms);
/* When the next pass is due (UINT64_MAX: none). */
uint64_t guard_backends_due(const struct guard_backends *b);
/* What is due: the watch tried again, the file read again (a pass follows
 * only when the list changed), the pass. */
void guard_backends_run(struct guard_backends *b, struct sdiag_handle *h,
			const struct guard_config *c, bool dry_run, struct guard_metrics *m,
			uint64_t now_ms);
/* conntrack = yes: delete the entries of the flows of the n sockets whose
 * result is SDIAG_DESTROYED. Returns the entries deleted (a failure is logged). */
size_t guard_backends_ct_flows(struct guard_backends *b, struct sdiag_sock *const *v,
			       const enum sdiag_destroy_result *res, size_t n);

#endif
