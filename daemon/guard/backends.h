/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The guard's dead backends (`dead-backends = PATH`: the file watched, read,
 * reconciled every backend-interval): the policy's state. See backends.c.
 */
#ifndef SOCKDIAG_GUARD_BACKENDS_H
#define SOCKDIAG_GUARD_BACKENDS_H

#include <stdbool.h>
#include <stdint.h>

#include "backends/backends.h"
#include "daemon/guard/guard.h"

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
	bool warn_exempt;	/* a list just loaded: warn of exempt backends */
};

void guard_backends_init(struct guard_backends *b, const char *log_name);
void guard_backends_fini(struct guard_backends *b);

#endif
