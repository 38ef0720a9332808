// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sockdiag top's columns (cli/top/cols.c): the numbers it prints without printf
 * against glibc's printf of the same double under the rules top_put_rate and
 * top_put_rtt state (rates "%.0f", "%.1f" below 9.95, then k/M/G... with 2, 1
 * or 0 decimals; RTT in ms with 2, 1 or 0 decimals), over round values, ties
 * (0.125, 2.5, 9.995) and random ones; the JSON members in their order; the
 * column table's places.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/fmt/fmt.h"
#include "cli/top/top.h"

static void want_rate(char *buf, double v)
{
	static const char sfx[] = "kMGTPE";
	int i = -1;

	if (v < 999.5) {
		snprintf(buf, 32, v > 0 && v < 9.95 && v != floor(v) ? "%.1f" : "%.0f", v);
		return;
	}
	while (v >= 999.5 && i < 5) {
		v /= 1000;
		i++;
	}
	snprintf(buf, 32, v < 9.995 ? "%.2f%c" : v < 99.95 ? "%.1f%c" : "%.0f%c", v, sfx[i]);
}

static void want_rtt(char *buf, uint64_t us)
{
	double ms = (double)us / 1000;

	if (!us)
		snprintf(buf, 32, "-");
	else
		snprintf(buf, 32, ms < 9.995 ? "%.2f" : ms < 99.95 ? "%.1f" : "%.0f", ms);
}

static void check_rate(struct obuf *b, double v)
{
	char want[32];

	want_rate(want, v);
	b->len = 0;
	top_put_rate(b, v);
	obuf_putc(b, '\0');
	if (strcmp(b->p, want))
		fail_msg("rate %.17g: got %s, printf gives %s", v, b->p, want);
}

static void check_rtt(struct obuf *b, uint64_t us)
{
	char want[32];

	want_rtt(want, us);
	b->len = 0;
	top_put_rtt(b, us);
	obuf_putc(b, '\0');
	if (strcmp(b->p, want))
		fail_msg("rtt %llu: got %s, printf gives %s", (unsigned long long)us, b->p, want);
}

static void test_numbers_as_printf(void **state)
{
	static const double fixed[] = { 0, 0.04, 0.05, 0.125, 0.25, 0.5, 1, 2.5, 9.94, 9.95,
					9.949999, 99.5, 100.5, 998.5, 999.49, 999.5, 1000,
					1234.5, 9994.9, 9995, 99949, 99950, 999499, 999500,
					1.5e6, 2.5e9, 1e18, 1.8e19 };
	struct obuf b;
	uint64_t x = 88172645463325252ULL;

	(void)state;
	assert_int_equal(obuf_init(&b, 64, -1), 0);
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		check_rate(&b, fixed[i]);
	for (uint64_t us = 0; us < 200000; us += 5)
		check_rtt(&b, us);
	for (int i = 0; i < 200000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		check_rate(&b, (double)(x % 100000000) / (double)(1 + x % 997));
		check_rate(&b, (double)(x >> (x % 40)) / 7);
		check_rtt(&b, x % 10000000);
	}
	obuf_fini(&b);
}

static void test_json_and_columns(void **state)
{
	struct top_group g = { .rx = 1, .tx = 2, .rx_bps = 2.5, .tx_bps = 3.49, .conns = 4,
			       .closed = 5, .rtt_us = 0, .retrans = 6, .rqueue = 7, .wqueue = 8,
			       .pid = 42, .comm = "web" };
	struct obuf b;
	size_t len;

	(void)state;
	assert_int_equal(obuf_init(&b, 64, -1), 0);
	top_json_values(&b, &g, 2);
	obuf_putc(&b, '\0');
	assert_string_equal(b.p, ",\"rx_bytes\":1,\"tx_bytes\":2,\"rx_bps\":3,\"tx_bps\":3,"
				 "\"conns\":4,\"closed\":5,\"rtt_us\":null,\"retrans\":6,"
				 "\"rqueue\":7,\"wqueue\":8,\"interval_us\":2000000,"
				 "\"owner\":{\"pid\":42,\"comm\":\"web\"}");
	/* The columns in the table's order, each once. */
	static const char *const heads[TOP_NCOLS] = { "CONNS", "CLOSED", "RX/s", "TX/s",
						      "RTT(ms)", "RETR/s", "RECV-Q", "SEND-Q",
						      "OWNER" };
	for (size_t c = 0; c < TOP_NCOLS; c++)
		assert_string_equal(top_col(c)->head, heads[c]);
	assert_string_equal(top_cell(&b, &g, 2, 5, &len), "3");
	assert_string_equal(top_cell(&b, &g, 2, 8, &len), "web/42");
	assert_int_equal(len, 6);
	assert_string_equal(top_cell(&b, &g, 2, 4, &len), "-");
	g.mixed = true;
	assert_string_equal(top_cell(&b, &g, 2, 8, &len), "-");
	obuf_fini(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numbers_as_printf),
		cmocka_unit_test(test_json_and_columns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
