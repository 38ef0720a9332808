/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Duplicate suppression for dumps (dump.c). sock_diag dumps are not
 * snapshots: each chunk resumes at (hash bucket, index), so a socket inserted
 * or removed while the dump runs can make the next chunk repeat a socket of
 * the previous one. Such repeats are always near each other, so for most
 * tables a small window of recent cookies is enough, and memory stays flat
 * however many sockets there are. netlink_diag reports a bound and subscribed
 * socket twice, far apart (portid walk, then multicast walk), so the netlink
 * table keeps every cookie (few sockets).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ops/ops.h"
#include "util/hash.h"

#define WINDOW_SLOTS 4096
#define WINDOW_GEN_SHIFT 8	/* a generation is 256 records, about one datagram */

int sd_seen_init(struct sd_seen *s, bool full)
{
	memset(s, 0, sizeof(*s));
	s->full = full;
	s->cap = full ? 256 : WINDOW_SLOTS;
	s->keys = calloc(s->cap, sizeof(*s->keys));
	if (!full)
		s->gens = calloc(s->cap, sizeof(*s->gens));
	if (!s->keys || (!full && !s->gens))
		return -ENOMEM;
	return 0;
}

void sd_seen_fini(struct sd_seen *s)
{
	free(s->keys);
	free(s->gens);
	memset(s, 0, sizeof(*s));
}

static int seen_grow(struct sd_seen *s)
{
	size_t ncap = s->cap * 2, i;
	uint64_t *nk = calloc(ncap, sizeof(*nk));

	if (!nk)
		return -ENOMEM;
	for (i = 0; i < s->cap; i++) {
		size_t j;

		if (!s->keys[i])
			continue;
		for (j = hash_u64(s->keys[i]) & (ncap - 1); nk[j]; j = (j + 1) & (ncap - 1))
			;
		nk[j] = s->keys[i];
	}
	free(s->keys);
	s->keys = nk;
	s->cap = ncap;
	return 0;
}

/*
 * The key a record is deduplicated by: its cookie, except for SCTP, where
 * sctp_diag sends an endpoint and then each of its associations with the
 * socket's one cookie (a one-to-many socket has many). An association is
 * told apart by its peer (address and port, unique per socket). Only
 * associations carry INET_DIAG_PEERS (SDIAG_HAS_SCTP_PEERS); an endpoint is
 * keyed by its cookie alone, even a connected one-to-one socket's, whose
 * endpoint record names the same peer as its association.
 */
uint64_t sd_dedup_key(const struct sdiag_sock *s)
{
	uint64_t h = 0, w;

	if (s->table != SDIAG_T_SCTP || !(s->has & SDIAG_HAS_SCTP_PEERS))
		return s->cookie;
	for (size_t i = 0; i < sizeof(s->inet.dst); i += sizeof(w)) {
		memcpy(&w, s->inet.dst + i, sizeof(w));
		h = hash_u64(h ^ w);
	}
	h = hash_u64(h ^ s->inet.dport) ^ s->cookie;
	return h ? h : 1;	/* 0 means "no key" to the seen table */
}

/* Returns 1 if the cookie was seen already (within the window), 0 if new, <0 on error. */
int sd_seen_check(struct sd_seen *s, uint64_t cookie)
{
	size_t i;

	if (!cookie)
		return 0;
	if (!s->full) {
		uint64_t gen = s->count++ >> WINDOW_GEN_SHIFT;

		i = hash_u64(cookie) & (s->cap - 1);
		if (s->keys[i] == cookie && s->gens[i] + 2 >= gen)
			return 1;
		/* Overwrite: an evicted cookie only weakens suppression. */
		s->keys[i] = cookie;
		s->gens[i] = gen;
		return 0;
	}
	for (i = hash_u64(cookie) & (s->cap - 1); s->keys[i]; i = (i + 1) & (s->cap - 1))
		if (s->keys[i] == cookie)
			return 1;
	s->keys[i] = cookie;
	if (++s->used * 2 > s->cap)
		return seen_grow(s) < 0 ? -ENOMEM : 0;
	return 0;
}

