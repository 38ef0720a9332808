/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The tree's one hash function: FNV-1a 64 over bytes, and a 64-bit integer
 * mixer (the finaliser of splitmix64) for keys that are one integer (cookies,
 * inodes). Both never return 0, so a table may mark its empty slots with 0.
 */
#ifndef SOCKDIAG_UTIL_HASH_H
#define SOCKDIAG_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_FNV_OFFSET 0xcbf29ce484222325ULL
#define HASH_FNV_PRIME 0x100000001b3ULL

/* Fold n more bytes into h (start with HASH_FNV_OFFSET). */
static inline uint64_t hash_more(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * HASH_FNV_PRIME;
	return h;
}

static inline uint64_t hash_bytes(const void *p, size_t n)
{
	uint64_t h = hash_more(HASH_FNV_OFFSET, p, n);

	return h ? h : 1;
}

static inline uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x ? x : 1;
}

#endif
