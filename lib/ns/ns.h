/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Namespaces and cgroups (lib/ns/): entering a network namespace for the
 * length of a call (netns.c), the cgroup2 tree and its ids (cgroup.c).
 */
#ifndef SDIAG_NS_H
#define SDIAG_NS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/core/internal.h"

/* ---- namespaces (netns.c) ------------------------------------------------------ */

/* sd_in_netns(): lib/core/nl.h (the transport opens sockets in namespaces). */
/* sdiag_netns_list() over other directories than /run/netns and /proc (tests,
 * fuzzers): the same scan, the same labels, paths under them. */
int sd_netns_list_at(const char *run_dir, const char *proc_root, struct sdiag_netns **ret,
		     size_t *ret_n);
/* The same over the directories of named namespaces dirs (NULL-terminated; one
 * that is an earlier one under another path, or missing, is skipped). Names
 * in /run/netns are labelled NAME, in the others by their path. */
int sd_netns_list_dirs(const char *const *dirs, const char *proc_root, struct sdiag_netns **ret,
		       size_t *ret_n);
/* The directories sdiag_netns_list() reads: /run/netns, /var/run/netns. */
extern const char *const sd_netns_dirs[];

/* ---- cgroups (cgroup.c) ------------------------------------------------------ */

/* The sorted, distinct ids of the cgroups sdiag_cgroup_walk(spec, unit)
 * visits. Returns 0 (*ret owned by the caller) or a negative errno. */
int sd_cgroup_ids(const char *spec, bool unit, uint64_t **ret, size_t *ret_n);
/* The cgroup2 mount point in a mountinfo stream (octal escapes undone): 0,
 * -ENOENT (none) or -ENAMETOOLONG (size). */
int sd_cgroup_root_in(FILE *fp, char *buf, size_t size);
/* sdiag_cgroup_walk() under the mount point mnt. */
int sd_cgroup_walk_at(const char *mnt, const char *spec, bool unit, sdiag_cgroup_cb cb,
		      void *userdata);

#endif
