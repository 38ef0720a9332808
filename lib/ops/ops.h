/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Between the operations (lib/ops/): dump.c (the handle, a query's dumps,
 * dedupe, filter, callbacks), destroy.c + destroy_nl.c, watch.c.
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

/* The values f's unix `dst GLOB`s name in h's namespace now (*ret NULL when
 * f names none): one dump of the unix sockets. 0 or a negative errno. */
struct sdiag_filter;
struct sd_fvals;
int sd_dump_resolve(struct sdiag_handle *h, const struct sdiag_filter *f,
		    struct sd_fvals **ret);

#endif
