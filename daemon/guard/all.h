/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guard --all-netns: one guard process per network namespace (all.c). */
#ifndef SOCKDIAG_GUARD_ALL_H
#define SOCKDIAG_GUARD_ALL_H

#include <stddef.h>
#include <stdint.h>

struct guard_all_ops {
	/* In a new child process already in the namespace labelled label: be
	 * the guard there. Returns the child's exit status. */
	int (*run)(void *arg, const char *label);
	/* SIGHUP in the supervisor, before it is passed on to every guard:
	 * read the configuration again for the guards started later. */
	void (*reload)(void *arg);
	/* In the supervisor, before any guard starts: 0 when a guard could work
	 * (the checks of `guard` itself: CAP_NET_ADMIN, unless a dry run), else
	 * the exit status, after one line on stderr. */
	int (*check)(void *arg);
	/* The directories of named namespaces (NULL-terminated), or NULL: those
	 * of sdiag_netns_list(), /run/netns and /var/run/netns. */
	const char *const *netns_dirs;
	/* After every scan and every guard's exit (NULL: not told): how many
	 * namespaces have a guard running, waiting to start, failed (not
	 * started again), and how many restarts there were. */
	void (*census)(void *arg, const size_t states[3], uint64_t restarts);
};

/* Supervise until SIGTERM/SIGINT, which stop every guard too. Returns the
 * exit status: 3 at once, after one line on stderr, without CAP_SYS_ADMIN
 * (no namespace can be entered) or when ops->check() says 3. */
int guard_all_netns(const struct guard_all_ops *ops, void *arg);

#endif
