/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Python module's argument parsing that needs no interpreter: kind names,
 * count_by's key lists, a netns argument's text, the words of its errors. Plain
 * C over the public API (no Python.h), so that tests/fuzz/fuzz_pyargs.c runs it
 * without an interpreter; query.c and count.c turn its answers into exceptions.
 * Names come with their length: a Python str may hold NUL characters, and one
 * that does is refused, never cut short.
 */
#ifndef SDPY_ARGS_H
#define SDPY_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sockdiag.h"
#include "util/group.h"

/* What a kind name selects. */
struct sdpy_kind {
	uint32_t tables;	/* SDIAG_TABLE_BIT() mask */
	uint8_t afs;		/* SDIAG_AF_* of those tables */
	bool explicit_table;	/* one table named by itself: a dump error there is raised */
};

/* A kind: psutil's (inet, tcp4, udp6, unix, all...), a table or group of sockdiag's
 * (raw, sctp, netlink, unix_stream, vsock...), or "every". Returns 0, or -EINVAL for an
 * unknown name (or one holding a NUL). */
int sdpy_kind_lookup(const char *name, size_t len, struct sdpy_kind *ret);
/* The text of the error for an unknown kind, the name quoted. */
void sdpy_kind_error(const char *name, size_t len, char *buf, size_t size);

/* count_by's keys: the grouping engine's (util/group.h), those GF_PY offers. */
#define SDPY_MAX_KEYS 8

/* Add one key name. The CLI's rule for --count-by: no key empty, none twice, at most
 * SDPY_MAX_KEYS. Returns 0, or -EINVAL with the reason in err (one line). */
int sdpy_keys_add(struct gkeys *keys, const char *name, size_t len, char *err, size_t size);
/* A comma-separated list of keys (KEY[,KEY...]) added one by one; an empty list, or an
 * empty item ("pid,", ",pid", "pid,,lport"), is refused. Returns 0 or -EINVAL. */
int sdpy_keys_parse(struct gkeys *keys, const char *list, size_t len, char *err,
		    size_t size);
/* Whether the keys need the owners (pid, comm). */
bool sdpy_keys_need_procs(const struct gkeys *keys);

/* A netns argument's text (a name under /run/netns, a path, pid:N): not empty, no NUL.
 * Returns 0, or -EINVAL with the reason in err. */
int sdpy_netns_check(const char *spec, size_t len, char *err, size_t size);
/* What an error of sdiag_netns_open() means, in words (not strerror's "Not a XENIX named
 * type file" for -ENOTNAM). */
const char *sdpy_netns_reason(int err);

/* The text of a dump error of table t: "raw: not supported by this kernel (no raw_diag)"
 * for -EPROTONOSUPPORT and -EAFNOSUPPORT, else "raw: " and strerror. */
void sdpy_table_error(enum sdiag_table t, int err, char *buf, size_t size);

#endif
