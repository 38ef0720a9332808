/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The library's lowest layer (lib/core/), seen by every other folder of lib/:
 *
 *   transport.c   every netlink socket of the tree: dumps, requests, batches,
 *                 events (sd_nl_*, declared in nl.h, which daemon/ includes too);
 *                 the helpers every decoder uses (sd_diag_header, sd_copy_struct,
 *                 sd_blob_set)
 *   record.c      names, deep copy, lists
 *
 * Only transport.c and the family decoders (lib/family/) touch struct nlmsghdr.
 */
#ifndef SDIAG_INTERNAL_H
#define SDIAG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sockdiag.h"
#include "lib/core/nl.h"

#define SD_EXPORT __attribute__((visibility("default")))

struct nlmsghdr;
struct nlattr;

/* ---- options structs (opts.c) --------------------------------------------------- */

#define SD_OFFSETOFEND(type, member) (offsetof(type, member) + sizeof(((type *)0)->member))
/* What this library knows of each options struct: up to the end of its last
 * member. A member appended at the end moves these (the assertions in opts.c
 * fail to build until they do). */
#define SD_QUERY_KNOWN SD_OFFSETOFEND(struct sdiag_query, table_afs)
#define SD_KILL_OPTS_KNOWN SD_OFFSETOFEND(struct sdiag_kill_opts, mptcp_subflows)

/* A caller's options struct (its leading size_t sz) into ours (size bytes, of
 * which the library knows the first known): min(sz, size) bytes, the rest
 * zero, and dst's sz set to size. The kernel's copy_struct_from_user() rule:
 * -EINVAL when src's sz cannot even hold itself, -E2BIG when src is longer
 * than known and a byte past known is not zero, or longer than a page. */
int sd_opts_load(void *dst, size_t size, size_t known, const void *src);

/* ---- records (record.c) ---------------------------------------------------------- */

/* Whether s points into a datagram (names, arrays, kernel structs' views):
 * then keeping it past the callback takes sdiag_sock_dup(), not a copy. */
bool sd_sock_borrows(const struct sdiag_sock *s);

/* ---- decoders' helpers (transport.c; the transport itself: nl.h) ---------------- */

/* The fixed header (size bytes) of a SOCK_DIAG_BY_FAMILY reply of family af,
 * every family's reply starting with its u8 family: 1 with *ret set, 0 when
 * the message is of another type or family (skip it), -EBADMSG if too short. */
int sd_diag_header(const struct nlmsghdr *nlh, size_t size, uint8_t af, const void **ret);

/* Copy min(len, size) bytes of an attribute payload into a local struct,
 * zero-filling the rest (uapi structs grow between kernels). */
void sd_copy_struct(void *dst, size_t size, const void *src, size_t len);

/* Keep an attribute payload as view k of s (borrowed from the datagram, as
 * the kernel sent it) and set bit in s->has. */
void sd_blob_set(struct sdiag_sock *s, enum sdiag_blob k, const void *p, size_t len,
		 uint64_t bit);
/* SK_MEMINFO_* (the skmem view) of a family without queue counters: the view,
 * and rmem_alloc / wmem_alloc as the queues, as ss shows them. */
void sd_skmem_queues(struct sdiag_sock *s, const void *p, size_t len);

#endif
