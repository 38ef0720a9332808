/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Between the two ways of finding socket owners: proc.c (the map, and the
 * /proc walk) and proc_bpf.c (the BPF iterator).
 */
#ifndef SDIAG_PROC_H
#define SDIAG_PROC_H

#include <stddef.h>
#include <stdint.h>

#include "sockdiag.h"

/* Record that p (pid, fd, uid, comm) holds the socket with this inode.
 * Returns 0 or -ENOMEM. */
int sd_proc_push(struct sdiag_procmap *m, uint64_t inode, const struct sdiag_proc *p);

/* The map's entries (for tests), in new arrays the caller frees: *ret_n
 * owners sorted by inode, then pid, then fd; (*ret_inodes)[i] is held by
 * (*ret_procs)[i]. Returns 0 or -ENOMEM. */
int sd_procmap_entries(const struct sdiag_procmap *m, size_t *ret_n, uint64_t **ret_inodes,
		       struct sdiag_proc **ret_procs);

/* Look-ahead for sdiag_procmap_lookup() of inode, a few dozen sockets ahead
 * of it: start loading the inode's hash slot (stage 0); once that is in the
 * cache, its owners (stage 1). Only hints: no effect on any result. */
void sd_procmap_prefetch(const struct sdiag_procmap *m, uint64_t inode, int stage);

/* Fill m through the BPF iterator. Returns 0, -EOPNOTSUPP when built without
 * it, or the negative errno of the load, attach or read (-EPERM: no
 * CAP_BPF + CAP_PERFMON). On failure m may hold part of the owners. */
int sd_owners_bpf(struct sdiag_procmap *m);
/* The iterator's records in buf[0..len) (bpf/owners.h): the complete ones are
 * pushed into m, *used says how far; *task carries the last task record over
 * to the next call. Returns 0, -EPROTO (a file before any task) or -ENOMEM. */
int sd_owners_parse(struct sdiag_procmap *m, const unsigned char *buf, size_t len, size_t *used,
		    struct sdiag_proc *task);
/* A map of the records in buf[0..len), as the iterator's scan builds it
 * (tests, fuzzers). Returns 0 (free *ret with sdiag_procmap_free), -EPROTO
 * when a record is cut short or not ours, or -ENOMEM. */
int sd_procmap_records(struct sdiag_procmap **ret, const unsigned char *buf, size_t len);

#endif
