// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The cookie table (ctab.h). Before it, drain kept a sorted array (bsearch),
 * top's model and the life engine each an open-addressing table of their own
 * with the same probing and backward-shift deletion written twice.
 */
#include <stdlib.h>

#include "util/ctab.h"
#include "util/hash.h"

void ctab_init(struct ctab *t, size_t esz)
{
	*t = (struct ctab){ .esz = esz < sizeof(uint64_t) ? sizeof(uint64_t) : esz };
}

void ctab_fini(struct ctab *t)
{
	free(t->v);
	free(t->idx);
	ctab_init(t, t->esz);
}

void ctab_clear(struct ctab *t)
{
	t->n = 0;
	if (t->idx)
		memset(t->idx, 0, t->icap * sizeof(*t->idx));
}

/* Where cookie is, or the empty slot where it would go (icap > 0). */
static size_t slot_of(const struct ctab *t, uint64_t cookie)
{
	size_t m = t->icap - 1, i = hash_u64(cookie) & m;

	while (t->idx[i] && ctab_cookie_at(t, t->idx[i] - 1) != cookie)
		i = (i + 1) & m;
	return i;
}

void *ctab_get(const struct ctab *t, uint64_t cookie)
{
	size_t s;

	if (!t->n)
		return NULL;
	s = slot_of(t, cookie);
	return t->idx[s] ? ctab_at(t, t->idx[s] - 1) : NULL;
}

/* Room for one more record: the array and the index (kept under half full). */
static int reserve(struct ctab *t)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		unsigned char *v = realloc(t->v, cap * t->esz);

		if (!v)
			return -1;
		t->v = v;
		t->cap = cap;
	}
	if ((t->n + 1) * 2 > t->icap) {
		size_t icap = t->icap ? t->icap * 2 : 128;
		uint32_t *idx = t->n < UINT32_MAX / 4 ? calloc(icap, sizeof(*idx)) : NULL;

		if (!idx)
			return -1;
		free(t->idx);
		t->idx = idx;
		t->icap = icap;
		for (size_t i = 0; i < t->n; i++)
			t->idx[slot_of(t, ctab_cookie_at(t, i))] = (uint32_t)(i + 1);
	}
	return 0;
}

void *ctab_add(struct ctab *t, uint64_t cookie, bool *ret_added)
{
	unsigned char *e;
	size_t s;

	if (ret_added)
		*ret_added = false;
	if (t->n) {
		s = slot_of(t, cookie);
		if (t->idx[s])
			return ctab_at(t, t->idx[s] - 1);
	}
	if (reserve(t) < 0)
		return NULL;
	s = slot_of(t, cookie);
	e = ctab_at(t, t->n);
	memset(e, 0, t->esz);
	memcpy(e, &cookie, sizeof(cookie));
	t->idx[s] = (uint32_t)(++t->n);
	if (ret_added)
		*ret_added = true;
	return e;
}

void ctab_del_at(struct ctab *t, size_t i)
{
	size_t m = t->icap - 1, hole = slot_of(t, ctab_cookie_at(t, i)), j = hole;

	/* The index: backward shift (no tombstones). */
	for (;;) {
		size_t home;

		j = (j + 1) & m;
		if (!t->idx[j])
			break;
		home = hash_u64(ctab_cookie_at(t, t->idx[j] - 1)) & m;
		/* j stays unless its home lies cyclically in (hole, j]. */
		if (hole <= j ? (hole < home && home <= j) : (hole < home || home <= j))
			continue;
		t->idx[hole] = t->idx[j];
		hole = j;
	}
	t->idx[hole] = 0;
	/* The array: the last record into the hole. */
	if (i != t->n - 1) {
		memcpy(ctab_at(t, i), ctab_at(t, t->n - 1), t->esz);
		t->idx[slot_of(t, ctab_cookie_at(t, i))] = (uint32_t)(i + 1);
	}
	t->n--;
}

bool ctab_del(struct ctab *t, uint64_t cookie)
{
	void *e = ctab_get(t, cookie);

	if (e)
		ctab_del_at(t, ctab_index(t, e));
	return e != NULL;
}
