/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Between the operations (lib/ops/): dump.c (the handle, a query's dumps,
 * pull-mode and with callbacks, filter), dump_seen.c (dedupe), destroy.c +
 * destroy_nl.c, watch.c.
 */
#ifndef SDIAG_OPS_H
#define SDIAG_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/core/internal.h"

/* The handle's diag socket descriptor (dump.c). */
int sd_handle_fd(const struct sdiag_handle *h);

/* The key dumps drop repeated records by: the cookie, and for an SCTP
 * association also its peer (it shares its socket's cookie) (dump.c). */
uint64_t sd_dedup_key(const struct sdiag_sock *s);

/* The address families (enum sdiag_af) q wants of inet table t: the
 * table's own (table_afs), else the query's afs, else both (dump.c). */
struct sdiag_query;
uint32_t sd_query_afs(const struct sdiag_query *q, enum sdiag_table t);

/* The cookies a dump has seen (dump_seen.c): a window of recent ones, or
 * every one (full: netlink_diag reports a socket twice, far apart). */
struct sd_seen {
	bool full;		/* remember every cookie (netlink) */
	uint64_t count;		/* records seen in this dump */
	uint64_t *keys;		/* open addressing; 0 = empty (cookies are never 0) */
	uint64_t *gens;		/* window mode: generation of each slot */
	size_t cap;		/* power of two */
	size_t used;
};

/* 0 or -ENOMEM. */
int sd_seen_init(struct sd_seen *s, bool full);
void sd_seen_fini(struct sd_seen *s);
/* 1 if the key was seen already (within the window), 0 if new, <0 on error. */
int sd_seen_check(struct sd_seen *s, uint64_t key);

/* The values f's unix `dst GLOB`s name in h's namespace now (*ret NULL when
 * f names none): one dump of the unix sockets. 0 or a negative errno. */
struct sdiag_filter;
struct sd_fvals;
int sd_dump_resolve(struct sdiag_handle *h, const struct sdiag_filter *f,
		    struct sd_fvals **ret);

#endif
