/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * list --count-by: counts grouped by keys instead of sockets (count.c).
 *
 *	count_keys_parse(&k, "unit,state");
 *	count_new(&c, &k, &out_opts, t);  // format, fd, -H, -n; t: --interval's stamp
 *	for each socket: count_sock(c, s, netns_label);
 *	count_finish(c);                   // sort, print
 *	count_free(c);
 *
 * Memory grows with the number of groups, not of sockets.
 */
#ifndef SOCKDIAG_CLI_COUNT_H
#define SOCKDIAG_CLI_COUNT_H

#include "cli/render/output.h"
#include "util/group.h"

/* The keys are the grouping engine's (util/group.h): GK_*, struct gkeys. */
#define COUNT_MAX_KEYS GKEYS_MAX

/* "state,unit": returns 0, or -EINVAL after printing one line. */
int count_keys_parse(struct gkeys *ret, const char *arg);
/* A key's name ("state", ...) and whether JSON shows its values as numbers. */
const char *count_key_name(enum gkey k);
bool count_key_number(enum gkey k);
/* The key a name or alias means (len bytes; "comm" is process, "peer" raddr), if
 * the CLI offers it, or -1. */
int count_key_lookup(const char *name, size_t len);

/* Keys' values as text ("-" when the socket has none), for list and top
 * (cli/top/): cgroup paths, units and users, each cached. */
struct ckeys;
struct obuf;

struct ckeys *ckeys_new(bool numeric);
/* A tuple value of key as text ("-": none). */
void ckeys_text(struct ckeys *c, struct obuf *b, enum gkey key, const struct gval *v);
/* The context gkey_tuple() needs for netns and unit. */
struct gkey_ctx ckeys_ctx(struct ckeys *c, const char *netns);
/* Forget the cgroup names read so far (cgroups created since are found). */
int ckeys_forget(struct ckeys *c);
void ckeys_free(struct ckeys *c);

struct count;

/* time: the snapshot's time (list --interval), or NULL: with it, every group
 * is stamped (a TIME column, a "time" member first), as records are. */
int count_new(struct count **ret, const struct gkeys *k, const struct out_opts *o,
	      const struct timespec *time);
/* Count one socket. Returns 0 or -ENOMEM. */
int count_sock(struct count *c, const struct sdiag_sock *s, const char *netns);
/* Print the groups. Returns 0 or a negative errno (write error). */
int count_finish(struct count *c);
void count_free(struct count *c);

#endif
