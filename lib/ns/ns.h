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

#include "lib/core/internal.h"

/* ---- namespaces (netns.c) ------------------------------------------------------ */

/* Run fn(arg) with the calling thread in the network namespace nsfd, then
 * return to the original one. Returns fn's result, or a negative errno if the
 * namespace could not be entered or left (the caller then undoes fn's work). */
int sd_in_netns(int nsfd, int (*fn)(void *arg), void *arg);

/* ---- cgroups (cgroup.c) ------------------------------------------------------ */

/* The sorted, distinct ids of the cgroups sdiag_cgroup_walk(spec, unit)
 * visits. Returns 0 (*ret owned by the caller) or a negative errno. */
int sd_cgroup_ids(const char *spec, bool unit, uint64_t **ret, size_t *ret_n);

#endif
