/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for what sockdiag top parses that list does not: the
 * --by key lists (cli/top/keys.c: top_keys_parse, with `conn` and list
 * --count-by's rule) and the --sort columns (top_col_lookup, +COLUMN), and
 * the row order they choose (top_rank_keys, top_sort_rows).
 *
 * Input: a --by argument, NUL, a --sort argument, NUL, then bytes that make
 * up to 24 groups (a key of up to 3 letters from a small alphabet, so that
 * keys tie, and the column values). Checked:
 *  - an accepted list has 1 to COUNT_MAX_KEYS keys, none twice, each a key
 *    top knows, TK_COOKIE exactly when `conn` was given; its names joined
 *    with commas parse to the same keys (without conn);
 *  - a refused one says why (enum top_keys_err) and points inside the
 *    argument; an unknown name is one count_key_lookup() does not know;
 *  - a column name round-trips through top_col_name();
 *  - the rows come out a permutation of the groups, in the order the
 *    model promises (the column, then RX/TX's other one, then the key), the
 *    same with the keys ranked or compared, reversed when ascending.
 *
 * Seeds: tests/fuzz/seeds/top_keys/.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/top/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                         \
	do {                             \
		if (!(c))                \
			__builtin_trap(); \
	} while (0)

#define MAXG 24

static void check_keys(const char *arg)
{
	struct top_keys k, k2;
	struct top_keys_error e;
	char joined[COUNT_MAX_KEYS * 16];
	size_t len = strlen(arg), at = 0, cookies = 0;
	int r = top_keys_parse(&k, arg, &e);

	if (r < 0) {
		CHECK(r == -22);
		CHECK(e.kind >= TKE_NONE && e.kind <= TKE_MANY);
		CHECK(e.at >= arg && e.at + e.len <= arg + len);
		if (e.kind == TKE_NONE)
			CHECK(!len);
		if (e.kind == TKE_UNKNOWN)
			CHECK(count_key_lookup(e.at, e.len) < 0 &&
			      !(e.len == 4 && !memcmp(e.at, "conn", 4)));
		if (e.kind == TKE_TWICE)
			CHECK(e.key < TK_MAX);
		return;
	}
	CHECK(k.n >= 1 && k.n <= COUNT_MAX_KEYS);
	for (size_t i = 0; i < k.n; i++) {
		CHECK(k.k[i] < TK_MAX);
		cookies += k.k[i] == TK_COOKIE;
		for (size_t j = 0; j < i; j++)
			CHECK(k.k[i] != k.k[j]);
		CHECK(top_key_name(k.k[i]) != NULL);
	}
	CHECK(cookies == (k.conn ? 1 : 0));
	if (k.conn)
		return;
	for (size_t i = 0; i < k.n; i++) {
		CHECK(k.k[i] != TK_COOKIE);
		at += (size_t)snprintf(joined + at, sizeof(joined) - at, "%s%s", i ? "," : "",
				       top_key_name(k.k[i]));
	}
	CHECK(top_keys_parse(&k2, joined, &e) == 0);
	CHECK(k2.n == k.n && !memcmp(k2.k, k.k, k.n * sizeof(k.k[0])) && !k2.conn);
}

/* A group's value of a column, as the rows are ordered by it. */
static double value(const struct top_group *g, enum top_col c)
{
	const uint64_t u64[] = { [TC_RX] = g->rx, [TC_TX] = g->tx, [TC_RTT] = g->rtt_us,
				 [TC_RETRANS] = g->retrans, [TC_RQUEUE] = g->rqueue,
				 [TC_WQUEUE] = g->wqueue, [TC_CONNS] = g->conns,
				 [TC_CLOSED] = g->closed, [TC_KEY] = 0 };

	return (double)u64[c];
}

/* <0: a before b, the way the model promises (largest first, then the key). */
static int order(const struct top_group *a, const struct top_group *b, enum top_col c)
{
	enum top_col other = c == TC_RX ? TC_TX : c == TC_TX ? TC_RX : TC_KEY;
	int s;

	if (c != TC_KEY && value(a, c) != value(b, c))
		return value(a, c) > value(b, c) ? -1 : 1;
	if (other != TC_KEY && value(a, other) != value(b, other))
		return value(a, other) > value(b, other) ? -1 : 1;
	s = strcmp(a->key, b->key);
	return (s > 0) - (s < 0);
}

static void check_sort(const char *arg, const uint8_t *p, size_t n)
{
	struct top_group g[MAXG];
	char keys[MAXG][4];
	uint32_t rows[MAXG], seen[MAXG];
	bool asc = arg[0] == '+';
	int c = top_col_lookup(asc ? arg + 1 : arg);
	size_t ng = 0;

	if (c < 0)
		return;
	CHECK(c < TC_MAX && !strcmp(top_col_name((enum top_col)c), asc ? arg + 1 : arg));
	memset(g, 0, sizeof(g));
	for (; n >= 4 && ng < MAXG; p += 4, n -= 4, ng++) {
		size_t kl = 1 + p[0] % 3;

		for (size_t i = 0; i < kl; i++)
			keys[ng][i] = (char)('a' + (p[i] >> 2) % 3);
		keys[ng][kl] = '\0';
		g[ng].key = keys[ng];
		g[ng].nkeys = 1;
		g[ng].koff[1] = (uint32_t)kl;
		g[ng].rx = p[1] % 4;
		g[ng].tx = p[2] % 4;
		g[ng].conns = p[3] % 3;
		g[ng].closed = (uint32_t)(p[1] >> 4);
		g[ng].rtt_us = p[2] >> 4;
		g[ng].retrans = p[3] >> 4;
		g[ng].rqueue = p[0] >> 4;
		g[ng].wqueue = (uint64_t)(p[1] ^ p[2]) & 3;
	}
	CHECK(top_rank_keys(g, ng) == 0);
	for (int ranked = 0; ranked < 2; ranked++) {
		for (size_t i = 0; i < ng; i++)
			rows[i] = (uint32_t)(ng - 1 - i);
		top_sort_rows(rows, ng, g, (enum top_col)c, asc, ranked);
		memset(seen, 0, sizeof(seen));
		for (size_t i = 0; i < ng; i++) {
			CHECK(rows[i] < ng && !seen[rows[i]]);
			seen[rows[i]] = 1;
		}
		for (size_t i = 0; i + 1 < ng; i++) {
			int o = order(&g[rows[i]], &g[rows[i + 1]], (enum top_col)c);

			CHECK(asc ? o >= 0 : o <= 0);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char by[257], sort[65];
	size_t n, m;

	if (size > 1024)
		return 0;
	n = strnlen((const char *)data, size);
	if (n > 256)
		return 0;
	memcpy(by, data, n);
	by[n] = '\0';
	check_keys(by);
	if (n == size)
		return 0;
	data += n + 1;
	size -= n + 1;
	m = strnlen((const char *)data, size);
	if (m > 64)
		return 0;
	memcpy(sort, data, m);
	sort[m] = '\0';
	data += m < size ? m + 1 : m;
	size -= m < size ? m + 1 : m;
	check_sort(sort, data, size);
	return 0;
}
