/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * TCP-info and queue predicates offline: units and errors, what they match
 * on hand-made records (absent TCP info, idle as the smaller of the two
 * "last data" times, microsecond rtt), and that the kernel program treats
 * them as "true" while the dump asks for TCP info.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "lib/filter/filter.h"
#include "tests/blob_util.h"

static struct sdiag_filter *parse_ok(const char *expr)
{
	struct sdiag_filter_error err = { 0 };
	struct sdiag_filter *f = NULL;
	int r = sdiag_filter_parse(&f, expr, &err);

	if (r != 0)
		fail_msg("'%s' did not parse: %d at %zu+%zu: %s", expr, r, err.offset, err.len,
			 err.msg);
	return f;
}

static bool matches(const char *expr, const struct sdiag_sock *s)
{
	struct sdiag_filter *f = parse_ok(expr);
	bool m = sdiag_filter_match(f, s);

	sdiag_filter_free(f);
	return m;
}

/* An established TCP socket: last data sent 5 s ago, received 700 ms ago,
 * rtt 150 ms, 10 retransmits, 3000 bytes received, 2 MiB sent. */
static struct sdiag_sock tcp_sock(void)
{
	struct sdiag_sock s = { .table = SDIAG_T_TCP, .family = AF_INET, .state = SDIAG_SS_ESTABLISHED };
	static struct sdiag_tcp_info tcpi;
	struct sdiag_tcp_info *ti = &tcpi;

	inet_pton(AF_INET, "192.0.2.1", s.inet.src);
	inet_pton(AF_INET, "192.0.2.2", s.inet.dst);
	s.inet.sport = 40000;
	s.inet.dport = 443;
	memset(ti, 0, sizeof(*ti));
	t_blob_attach(&s, SDIAG_BLOB_TCP_INFO, ti, sizeof(*ti));
	s.has = SDIAG_HAS_TCP_INFO | SDIAG_HAS_QUEUES;
	s.rqueue = 100;
	s.wqueue = 0;
	ti->tcpi_last_data_sent = 5000;
	ti->tcpi_last_data_recv = 700;
	ti->tcpi_last_ack_recv = 650;
	ti->tcpi_rtt = 150000;
	ti->tcpi_rttvar = 2500;
	ti->tcpi_rto = 354000;
	ti->tcpi_total_retrans = 10;
	ti->tcpi_lost = 1;
	ti->tcpi_unacked = 4;
	ti->tcpi_snd_cwnd = 10;
	ti->tcpi_bytes_received = 3000;
	ti->tcpi_bytes_sent = 2 << 20;
	ti->tcpi_bytes_acked = (2 << 20) - 1;
	return s;
}

static void test_parse_good(void **state)
{
	static const char *const good[] = {
		"idle > 10m", "idle>10m", "idle gt 1h", "idle >= 0", "last-recv < 500ms",
		"last-send <= 2s", "last-ack != 1m", "rtt > 150ms and retrans > 10",
		"rttvar = 0", "rto < 1s", "lost > 0", "unacked >= 3", "cwnd < 10",
		"bytes-sent > 1G", "bytes-received >= 1500", "bytes-acked > 64K",
		"rqueue > 0", "wqueue >= 4k", "state close-wait and idle > 10m",
		"not idle > 1s", "sport = :22 and (rtt > 1s or retrans > 100)",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		sdiag_filter_free(parse_ok(good[i]));
}

static void test_parse_bad(void **state)
{
	static const struct {
		const char *expr;
		size_t off, len;
		const char *msg;
	} bad[] = {
		{ "idle > 10", 7, 2, "'10' has no unit (ms, s, m or h)" },
		{ "idle 10m", 0, 4, "needs a comparison" },
		{ "idle", 0, 4, "needs a comparison" },
		{ "idle >", 6, 0, "needs a value after the comparison" },
		{ "idle > 10x", 7, 3, "unknown unit 'x'" },
		{ "idle > 1.5s", 7, 4, "whole numbers" },
		{ "idle > -1s", 7, 3, "needs a duration" },
		{ "rtt > 10K", 6, 3, "unknown unit 'K'" },
		{ "rqueue > 10ms", 9, 4, "needs a size" },
		{ "retrans > 10s", 10, 3, "needs a count: unknown unit 's'" },
		{ "bytes-sent > 99999999999G", 13, 12, "too large" },
		{ "idle > 99999999999999999999s", 7, 21, "too large" },
		{ "idle > (", 7, 1, "needs a value" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sdiag_filter_error err = { 0 };
		struct sdiag_filter *f = NULL;
		int r = sd_filter_parse_flags(&f, bad[i].expr, &err, SD_FPARSE_OFFLINE);

		if (r != -EINVAL || err.offset != bad[i].off || err.len != bad[i].len ||
		    !strstr(err.msg, bad[i].msg))
			fail_msg("'%s': got %d at %zu+%zu '%s'; want -EINVAL at %zu+%zu '%s'",
				 bad[i].expr, r, err.offset, err.len, err.msg, bad[i].off,
				 bad[i].len, bad[i].msg);
		assert_null(f);
	}
}

static void test_match(void **state)
{
	struct sdiag_sock s = tcp_sock();

	(void)state;
	/* idle: the smaller of the two, 700 ms. */
	assert_true(matches("idle > 699ms", &s));
	assert_false(matches("idle > 700ms", &s));
	assert_true(matches("idle >= 700ms", &s));
	assert_false(matches("idle > 1s", &s));
	assert_true(matches("last-send > 4s and last-send < 6s", &s));
	assert_true(matches("last-recv = 700ms", &s));
	assert_true(matches("last-ack < 651ms and last-ack > 649ms", &s));
	/* rtt is kept in microseconds. */
	assert_false(matches("rtt > 150ms", &s));
	assert_true(matches("rtt >= 150ms", &s));
	assert_true(matches("rtt < 151ms", &s));
	assert_true(matches("rttvar > 2ms and rttvar < 3ms", &s));
	assert_true(matches("rto > 350ms and rto < 1s", &s));
	assert_true(matches("retrans = 10 and lost = 1 and unacked = 4 and cwnd = 10", &s));
	assert_false(matches("retrans > 10", &s));
	assert_true(matches("bytes-received > 2999 and bytes-received < 3K", &s));
	assert_true(matches("bytes-sent = 2M and bytes-sent < 1G", &s));
	assert_true(matches("bytes-acked < 2M and bytes-acked > 2047K", &s));
	assert_true(matches("rqueue = 100 and wqueue = 0", &s));
	assert_true(matches("state established and idle < 1m", &s));
	assert_false(matches("state close-wait and idle < 1m", &s));
	assert_true(matches("idle != 1s", &s));

	/* Without TCP info (TIME-WAIT, request sockets): comparisons are false, `not` true. */
	s.has &= ~SDIAG_HAS_TCP_INFO;
	assert_false(matches("idle >= 0", &s));
	assert_false(matches("idle != 1s", &s));
	assert_true(matches("not idle > 1s", &s));
	assert_true(matches("rqueue = 100", &s)); /* queues are not TCP info */
	s.has &= ~SDIAG_HAS_QUEUES;
	assert_false(matches("rqueue >= 0", &s));

	/* A unix socket has queues, no TCP info. */
	memset(&s, 0, sizeof(s));
	s.table = SDIAG_T_UNIX_STREAM;
	s.family = AF_UNIX;
	s.has = SDIAG_HAS_QUEUES | SDIAG_HAS_TCP_INFO; /* even a stray bit is not TCP info */
	s.rqueue = 5;
	assert_true(matches("rqueue > 4", &s));
	assert_false(matches("rqueue > 5", &s));
	assert_false(matches("idle >= 0", &s));
}

/* The kernel cannot test them: a conjunct is "true" there (either way round). */
static void test_bytecode_true(void **state)
{
	static const char *const pairs[][2] = {
		{ "sport = :22 and idle > 1s", "sport = :22" },
		{ "sport = :22 and not idle > 1s", "sport = :22" },
		{ "idle > 1s and dport = :443 and rqueue > 0", "dport = :443" },
		{ "state established and rtt > 150ms", "state established" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		struct sdiag_filter *a = parse_ok(pairs[i][0]), *b = parse_ok(pairs[i][1]);
		void *ba = NULL, *bb = NULL;
		int na = sd_filter_bytecode(a, AF_INET, &ba), nb = sd_filter_bytecode(b, AF_INET, &bb);

		assert_int_equal(na, nb);
		if (na > 0)
			assert_memory_equal(ba, bb, (size_t)na);
		free(ba);
		free(bb);
		sdiag_filter_free(a);
		sdiag_filter_free(b);
	}
}

static void test_show_and_tables(void **state)
{
	struct sdiag_filter *f;

	(void)state;
	f = parse_ok("sport = :22 or idle > 1s");
	assert_int_equal(sd_filter_show(f), SDIAG_SHOW_INFO);
	sdiag_filter_free(f);
	f = parse_ok("not (rtt > 1s)");
	assert_int_equal(sd_filter_show(f), SDIAG_SHOW_INFO);
	sdiag_filter_free(f);
	f = parse_ok("rqueue > 0 and wqueue > 0");
	assert_int_equal(sd_filter_show(f), 0);
	assert_false(sd_filter_excludes_table(f, SDIAG_T_UNIX_STREAM));
	sdiag_filter_free(f);
	f = parse_ok("idle > 1s");
	assert_true(sd_filter_excludes_table(f, SDIAG_T_UDP));
	assert_true(sd_filter_excludes_table(f, SDIAG_T_UNIX_STREAM));
	assert_false(sd_filter_excludes_table(f, SDIAG_T_TCP));
	sdiag_filter_free(f);
	f = parse_ok("not idle > 1s");
	assert_false(sd_filter_excludes_table(f, SDIAG_T_UDP));
	sdiag_filter_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_bytecode_true),
		cmocka_unit_test(test_show_and_tables),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
