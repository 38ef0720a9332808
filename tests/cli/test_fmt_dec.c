// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Differential test of cli/fmt/fmt_dec.c, the integer-only %g / %f: millions of
 * random and edge values, each printed by it and by glibc's snprintf of the
 * same double arithmetic (ss's expressions, copied from the renderers as they
 * were before), must give the same bytes. Built with FMT_DEC_TEST, so a value
 * that fell back to snprintf inside fmt_dec.c prints "FALLBACK" and fails.
 *
 * The seed is fixed (reproducible); SOCKDIAG_FMT_SEED=N picks another and
 * SOCKDIAG_FMT_ROUNDS=N scales the random rounds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli/fmt/fmt.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static unsigned long rounds = 400000;
static unsigned long checked;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A random value of a random bit length (every magnitude equally often). */
static uint64_t any_u64(void)
{
	unsigned bits = (unsigned)(next() % 65);

	return bits == 64 ? next() : next() & ((UINT64_C(1) << bits) - 1);
}

static struct obuf ob;

static const char *ours(void)
{
	obuf_putc(&ob, '\0');
	return ob.p;
}

static void same(const char *what, uint64_t a, uint64_t b, const char *want)
{
	const char *got = ours();

	checked++;
	if (strcmp(got, want)) {
		print_error("%s(%llu, %llu): snprintf \"%s\", fmt_dec \"%s\"\n", what,
			    (unsigned long long)a, (unsigned long long)b, want, got);
		fail();
	}
	ob.len = 0;
}

/* ---- ss's expressions, with the FPU (the oracle) --------------------------------- */

static void old_bw(char *out, size_t n, bool numeric, double v)
{
	if (numeric)
		snprintf(out, n, "%.0f", v);
	else if (v >= 1e12)
		snprintf(out, n, "%.3gT", v / 1e12);
	else if (v >= 1e9)
		snprintf(out, n, "%.3gG", v / 1e9);
	else if (v >= 1e6)
		snprintf(out, n, "%.3gM", v / 1e6);
	else if (v >= 1e3)
		snprintf(out, n, "%.3gk", v / 1e3);
	else
		snprintf(out, n, "%g", v);
}

static void check_usec(uint64_t us)
{
	char want[64];

	snprintf(want, sizeof(want), "%g", us / 1000.0);
	fmt_ss_usec(&ob, us);
	same("usec", us, 0, want);
}

static void check_gain(uint64_t v)
{
	char want[64];

	snprintf(want, sizeof(want), "%g", v / 256.0);
	fmt_ss_ratio(&ob, v, 256);
	same("gain", v, 256, want);
}

static void check_rate(uint64_t bytes)
{
	char want[64];

	for (int numeric = 0; numeric < 2; numeric++) {
		old_bw(want, sizeof(want), numeric, bytes * 8.0);
		fmt_ss_rate(&ob, numeric, xd_mul(xd_u64(bytes), xd_u64(8)));
		same(numeric ? "rate -n" : "rate", bytes, 0, want);
	}
}

static void check_send(uint32_t cwnd, uint32_t mss, uint32_t rtt)
{
	char want[64];
	struct xd x;

	if (!rtt)
		return;
	old_bw(want, sizeof(want), false, (double)cwnd * mss * 8000000.0 / rtt);
	x = xd_div(xd_mul(xd_mul(xd_u64(cwnd), xd_u64(mss)), xd_u64(8000000)), xd_u64(rtt));
	fmt_ss_rate(&ob, false, x);
	same("send", (uint64_t)cwnd * mss, rtt, want);
	old_bw(want, sizeof(want), true, (double)cwnd * mss * 8000000.0 / rtt);
	fmt_ss_rate(&ob, true, x);
	same("send -n", (uint64_t)cwnd * mss, rtt, want);
}

static void check_percent(uint64_t part, uint64_t whole)
{
	char want[64];

	if (!whole)
		return;
	snprintf(want, sizeof(want), "%.1f", 100.0 * part / whole);
	fmt_ss_percent(&ob, part, whole);
	same("percent", part, whole, want);
}

/* ---- the tests ------------------------------------------------------------------------- */

/* Values where digits carry or ties may be: around powers of ten and of two. */
static uint64_t edges[256];
static size_t n_edges;

static void make_edges(void)
{
	uint64_t p = 1;

	for (int i = 0; i < 20; i++, p *= 10) {
		uint64_t v[] = { p - 1, p, p + 1, p / 2 * 1, p * 5 / 10 + 1, 5 * p - 1, 5 * p,
				 999 * (p / 1000 ? p / 1000 : 1) + 500 };

		for (size_t j = 0; j < sizeof(v) / sizeof(v[0]) && n_edges < 200; j++)
			edges[n_edges++] = v[j];
	}
	for (int s = 52; s < 64 && n_edges < 256; s += 3) {
		edges[n_edges++] = (UINT64_C(1) << s) - 1;
		edges[n_edges++] = (UINT64_C(1) << s) + 1;
	}
	if (n_edges < 256)
		edges[n_edges++] = UINT64_MAX;
}

static void test_usec(void **state)
{
	(void)state;
	for (uint64_t us = 0; us < 2000000; us++)	/* every value below 2 s */
		check_usec(us);
	for (size_t i = 0; i < n_edges; i++)
		check_usec(edges[i] & 0xffffffff);
	for (unsigned long i = 0; i < rounds; i++)
		check_usec(next() & 0xffffffff);
}

static void test_gain(void **state)
{
	(void)state;
	for (uint64_t v = 0; v < 300000; v++)
		check_gain(v);
	for (unsigned long i = 0; i < rounds; i++)
		check_gain(next() & 0xffffffff);
}

static void test_rate(void **state)
{
	(void)state;
	for (uint64_t v = 0; v < 300000; v++)
		check_rate(v);
	for (size_t i = 0; i < n_edges; i++) {
		check_rate(edges[i]);
		check_rate(edges[i] / 8);
		check_rate(edges[i] / 8 + 1);
	}
	for (unsigned long i = 0; i < rounds; i++)
		check_rate(any_u64());
}

static void test_send(void **state)
{
	(void)state;
	for (unsigned long i = 0; i < rounds; i++) {
		uint32_t cwnd = (uint32_t)any_u64(), mss = (uint32_t)any_u64();

		check_send(cwnd, mss, (uint32_t)any_u64());
		check_send(cwnd % 100, 1448, (uint32_t)(next() % 100000));
	}
	check_send(UINT32_MAX, UINT32_MAX, 1);
	check_send(10, 65483, 3);
}

static void test_percent(void **state)
{
	(void)state;
	for (uint64_t w = 1; w <= 400; w++)
		for (uint64_t p = 0; p <= w; p++)
			check_percent(p, w);
	for (unsigned long i = 0; i < rounds; i++) {
		uint64_t w = any_u64();

		check_percent(w ? next() % w : 0, w);
		check_percent(any_u64(), any_u64());
	}
	for (size_t i = 0; i < n_edges; i++)
		for (size_t j = 0; j < n_edges; j += 7)
			check_percent(edges[i], edges[j]);
}

/* The formatter alone, over doubles of every exponent the renderers can make. */
static void test_any_double(void **state)
{
	char want[96];

	(void)state;
	for (unsigned long i = 0; i < rounds; i++) {
		struct xd x = { any_u64() >> 11, (int)(next() % 101) - 60 };
		double d = (double)x.m;

		for (int e = x.e; e > 0; e--)
			d *= 2.0;
		for (int e = x.e; e < 0; e++)
			d *= 0.5;
		for (int prec = 1; prec <= 10; prec++) {
			snprintf(want, sizeof(want), "%.*g", prec, d);
			obuf_xd_g(&ob, x, prec);
			same("%g", x.m, (uint64_t)(int64_t)x.e, want);
		}
		if (x.e <= 20) {
			for (int dec = 0; dec <= 3; dec++) {
				snprintf(want, sizeof(want), "%.*f", dec, d);
				obuf_xd_f(&ob, x, dec);
				same("%f", x.m, (uint64_t)(int64_t)x.e, want);
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usec),
		cmocka_unit_test(test_gain),
		cmocka_unit_test(test_rate),
		cmocka_unit_test(test_send),
		cmocka_unit_test(test_percent),
		cmocka_unit_test(test_any_double),
	};
	const char *env = getenv("SOCKDIAG_FMT_SEED");
	uint64_t seed;
	int r;

	if (env && strtoull(env, NULL, 0))
		rng = strtoull(env, NULL, 0);
	seed = rng;
	env = getenv("SOCKDIAG_FMT_ROUNDS");
	if (env)
		rounds = strtoul(env, NULL, 0);
	make_edges();
	if (obuf_init(&ob, 256, -1) < 0)
		return 1;
	r = cmocka_run_group_tests(tests, NULL, NULL);
	printf("# %lu values compared with snprintf (seed %#llx)\n", checked,
	       (unsigned long long)seed);
	obuf_fini(&ob);
	return r;
}
