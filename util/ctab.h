/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cookie table (ctab.c): records keyed by a socket's cookie, for the
 * commands that follow sockets from dump to dump and event to event (drain,
 * top's model, the life engine). The records are a dense array, each one
 * beginning with its uint64_t cookie (the caller's struct, any size): walk
 * them by index; an index of the array by cookie (open addressing, linear
 * probing, hashed with util/hash.h, backward-shift deletion) finds one.
 *
 *	struct ctab t;
 *	ctab_init(&t, sizeof(struct conn));	// struct conn { uint64_t cookie; ... }
 *	struct conn *c = ctab_add(&t, cookie, &fresh);	// zeroed but its cookie if fresh
 *	c = ctab_get(&t, cookie);			// NULL: none
 *	for (size_t i = 0; i < ctab_len(&t); i++) ... ctab_at(&t, i) ...
 *	ctab_del_at(&t, i);	// the last record moves to i
 *	ctab_fini(&t);
 *
 * Adding may move every record (pointers and the array are then stale);
 * deleting moves the last one into the hole. Cookies are unique across
 * network namespaces: one table serves several.
 */
#ifndef SOCKDIAG_UTIL_CTAB_H
#define SOCKDIAG_UTIL_CTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct ctab {
	unsigned char *v;	/* n records of esz bytes, each starting with its cookie */
	size_t esz, n, cap;
	uint32_t *idx;		/* slot: record index + 1, 0 empty */
	size_t icap;		/* slots: 0 or a power of two over twice n */
};

/* An empty table of records of esz bytes (at least 8: the cookie); no memory yet. */
void ctab_init(struct ctab *t, size_t esz);
/* Frees the memory; the table is then empty (and may be used again). */
void ctab_fini(struct ctab *t);
/* No record left; the memory is kept for the next ones. */
void ctab_clear(struct ctab *t);

static inline size_t ctab_len(const struct ctab *t)
{
	return t->n;
}

static inline void *ctab_at(const struct ctab *t, size_t i)
{
	return t->v + i * t->esz;
}

static inline uint64_t ctab_cookie_at(const struct ctab *t, size_t i)
{
	uint64_t c;

	memcpy(&c, ctab_at(t, i), sizeof(c));
	return c;
}

/* The index of record e (a pointer into the table). */
static inline size_t ctab_index(const struct ctab *t, const void *e)
{
	return (size_t)((const unsigned char *)e - t->v) / t->esz;
}

/* The record of cookie, or NULL. */
void *ctab_get(const struct ctab *t, uint64_t cookie);
/* The record of cookie; one is added (at index ctab_len() - 1, zeroed but for
 * its cookie) if there was none, and *ret_added (may be NULL) says so.
 * Returns NULL when out of memory (the table unchanged). */
void *ctab_add(struct ctab *t, uint64_t cookie, bool *ret_added);
/* Remove record i (< ctab_len()): the last record takes index i. */
void ctab_del_at(struct ctab *t, size_t i);
/* Remove cookie's record; returns whether there was one. */
bool ctab_del(struct ctab *t, uint64_t cookie);

#endif
