/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * util/ctab.c, the cookie table, against a plain array as the oracle: random
 * adds, finds and deletes (small tables, so clusters wrap around the end of
 * the index and backward shifts cross it), deletes while walking, clear, and
 * records of several sizes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "util/ctab.h"

struct rec {
	uint64_t cookie;
	uint32_t payload;
	char pad[3]; /* an odd size: records are not 8-byte multiples */
};

/* The oracle: the cookies present and their payloads. */
struct oracle {
	uint64_t cookie[4096];
	uint32_t payload[4096];
	size_t n;
};

static long find_o(const struct oracle *o, uint64_t c)
{
	for (size_t i = 0; i < o->n; i++)
		if (o->cookie[i] == c)
			return (long)i;
	return -1;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Every record of the table is in the oracle with its payload, and the
 * other way round; every cookie is found at its own index. */
static void same(const struct ctab *t, const struct oracle *o)
{
	assert_int_equal(ctab_len(t), o->n);
	for (size_t i = 0; i < ctab_len(t); i++) {
		const struct rec *r = ctab_at(t, i);
		long k = find_o(o, r->cookie);

		assert_true(k >= 0);
		assert_int_equal(r->payload, o->payload[k]);
		assert_ptr_equal(ctab_get(t, r->cookie), r);
		assert_int_equal(ctab_index(t, r), i);
	}
}

static void test_random(void **state)
{
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	static struct oracle o;
	struct ctab t;

	(void)state;
	ctab_init(&t, sizeof(struct rec));
	assert_null(ctab_get(&t, 1)); /* empty, no memory: no crash */
	assert_false(ctab_del(&t, 1));
	/* Cookies from a small range: repeats, finds of present and absent ones. */
	for (int round = 0; round < 200000; round++) {
		uint64_t op = rnd(&seed) % 10, c = rnd(&seed) % 300 + 1;
		size_t limit = round < 100000 ? 60 : 3000; /* small, then large tables */
		long k = find_o(&o, c);

		if (op < 5 && (k >= 0 || o.n < limit)) {
			bool added;
			struct rec *r = ctab_add(&t, c, &added);

			assert_non_null(r);
			assert_int_equal(added, k < 0);
			assert_int_equal(r->cookie, c);
			if (added) {
				assert_int_equal(r->payload, 0);
				assert_int_equal(ctab_index(&t, r), ctab_len(&t) - 1);
				o.cookie[o.n] = c;
				k = (long)o.n++;
			}
			r->payload = (uint32_t)rnd(&seed);
			o.payload[k] = r->payload;
		} else if (op < 8) {
			assert_int_equal(ctab_del(&t, c), k >= 0);
			if (k >= 0) {
				o.cookie[k] = o.cookie[o.n - 1];
				o.payload[k] = o.payload[o.n - 1];
				o.n--;
			}
		} else {
			struct rec *r = ctab_get(&t, c);

			assert_int_equal(r != NULL, k >= 0);
			if (r)
				assert_int_equal(r->payload, o.payload[k]);
		}
		if (round % 97 == 0)
			same(&t, &o);
	}
	same(&t, &o);
	ctab_fini(&t);
	assert_int_equal(ctab_len(&t), 0);
	assert_null(ctab_get(&t, o.n ? o.cookie[0] : 1));
}

/* The walk that deletes: the last record moves into the hole, so the walk
 * stays at i after a delete (top and life walk this way). */
static void test_delete_while_walking(void **state)
{
	struct ctab t;

	(void)state;
	ctab_init(&t, sizeof(struct rec));
	for (uint64_t c = 1; c <= 5000; c++) {
		struct rec *r = ctab_add(&t, c * 0x100000001ULL, NULL);

		assert_non_null(r);
		r->payload = (uint32_t)c;
	}
	for (size_t i = 0; i < ctab_len(&t);) {
		const struct rec *r = ctab_at(&t, i);

		if (r->payload % 3)
			ctab_del_at(&t, i);
		else
			i++;
	}
	assert_int_equal(ctab_len(&t), 5000 / 3);
	for (uint64_t c = 1; c <= 5000; c++) {
		struct rec *r = ctab_get(&t, c * 0x100000001ULL);

		assert_int_equal(r != NULL, c % 3 == 0);
		if (r)
			assert_int_equal(r->payload, c);
	}
	ctab_clear(&t);
	assert_int_equal(ctab_len(&t), 0);
	assert_null(ctab_get(&t, 3 * 0x100000001ULL));
	assert_non_null(ctab_add(&t, 7, NULL)); /* usable after clear */
	assert_non_null(ctab_get(&t, 7));
	assert_int_equal(ctab_len(&t), 1);
	ctab_fini(&t);
}

/* A record of just the cookie, and a large one. */
static void test_sizes(void **state)
{
	struct big {
		uint64_t cookie;
		unsigned char b[300];
	};
	struct ctab a, b;

	(void)state;
	ctab_init(&a, sizeof(uint64_t));
	ctab_init(&b, sizeof(struct big));
	for (uint64_t c = 0; c < 1000; c++) { /* cookie 0 too: slots are not marked by it */
		struct big *g;

		assert_non_null(ctab_add(&a, c, NULL));
		g = ctab_add(&b, c, NULL);
		assert_non_null(g);
		memset(g->b, (int)(c & 0xff), sizeof(g->b));
	}
	for (uint64_t c = 0; c < 1000; c++) {
		const struct big *g = ctab_get(&b, c);

		assert_non_null(ctab_get(&a, c));
		assert_non_null(g);
		assert_int_equal(g->b[299], c & 0xff);
	}
	assert_null(ctab_get(&a, 1000));
	ctab_fini(&a);
	ctab_fini(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_delete_while_walking),
		cmocka_unit_test(test_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
