/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * util/group.c's table (gtab_add, gtab_find) against a plain array as the
 * oracle: keys of several lengths (the empty one among them, and keys that
 * are prefixes of others), looked up before and after they are added, across
 * the table's growths; counts and the caller's aux kept.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "util/group.h"

#define NKEYS 700

struct oracle {
	uint8_t key[NKEYS][12];
	size_t len[NKEYS];
	uint64_t count[NKEYS];
	size_t n;
};

static long find_o(const struct oracle *o, const uint8_t *k, size_t len)
{
	for (size_t i = 0; i < o->n; i++)
		if (o->len[i] == len && !memcmp(o->key[i], k, len))
			return (long)i;
	return -1;
}

static void test_gtab_oracle(void **state)
{
	static struct oracle o;
	struct gtab t = { 0 };
	uint64_t s = 0x9e3779b97f4a7c15ull;
	uint8_t k[12];

	(void)state;
	memset(k, 0, sizeof(k));
	assert_int_equal(gtab_find(&t, k, 4), -1);	/* an empty table */
	for (int step = 0; step < 20000; step++) {
		size_t len;
		long oi, slot;
		bool fresh;

		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		len = s % 13;				/* 0..12 bytes */
		memset(k, 0, sizeof(k));
		memcpy(k, &s, len < 8 ? len : 8);	/* short keys repeat often */
		if (len > 8)
			k[8] = (uint8_t)(s >> 60);
		k[0] &= 0x3;
		oi = find_o(&o, k, len);
		slot = gtab_find(&t, k, len);
		if (oi < 0) {
			assert_int_equal(slot, -1);
			if (o.n == NKEYS || (s >> 40) % 3)
				continue;		/* looked up only */
		} else {
			assert_true(slot >= 0);
			assert_int_equal(t.e[slot].aux, (uint32_t)oi);
			assert_int_equal(t.e[slot].count, o.count[oi]);
			assert_int_equal(t.e[slot].len, len);
			assert_memory_equal(gtab_key(&t, &t.e[slot]), k, len);
		}
		slot = gtab_add(&t, k, len, &fresh);
		assert_true(slot >= 0);
		assert_int_equal(fresh, oi < 0);
		if (oi < 0) {
			oi = (long)o.n++;
			memcpy(o.key[oi], k, len);
			o.len[oi] = len;
			t.e[slot].aux = (uint32_t)oi;
		}
		o.count[oi]++;
		assert_int_equal(gtab_find(&t, k, len), slot);
	}
	assert_int_equal(t.used, o.n);
	assert_true(o.n > 300);	/* the table grew several times */
	for (size_t i = 0; i < o.n; i++) {
		long slot = gtab_find(&t, o.key[i], o.len[i]);

		assert_true(slot >= 0);
		assert_int_equal(t.e[slot].aux, i);
		assert_int_equal(t.e[slot].count, o.count[i]);
	}
	gtab_free(&t);
	assert_int_equal(gtab_find(&t, k, 0), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gtab_oracle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
