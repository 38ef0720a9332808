/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pure parts of the guard's policies: the grace/route/reap configuration
 * keys, the grace period's hold, coalescing and "came back" judgement, and
 * the route-change verdict.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "daemon/guard/guard.h"

/* ---- configuration ----------------------------------------------------------------- */

static void options_parse(void **state)
{
	const char *text = "grace = 2s\n"
			   "on-route-change = yes\n"
			   "reap = state close-wait and idle > 10m\n"
			   "reap = dport = :8080 and rqueue > 1M   # comment\n"
			   "reap-interval = 5m\n"
			   "reap-max = 500\n";
	struct guard_config c;
	char err[256] = "";

	(void)state;
	assert_int_equal(guard_config_parse(&c, "", err, sizeof(err)), 0);
	assert_int_equal(c.grace_ms, 0);
	assert_false(c.on_route_change);
	assert_int_equal(c.n_reaps, 0);
	assert_int_equal(c.reap_interval_ms, 60000);
	assert_int_equal(c.reap_max, 100);
	guard_config_fini(&c);

	assert_int_equal(guard_config_parse(&c, text, err, sizeof(err)), 0);
	assert_int_equal(c.grace_ms, 2000);
	assert_true(c.on_route_change);
	assert_int_equal(c.n_reaps, 2);
	assert_string_equal(c.reaps[0].expr, "state close-wait and idle > 10m");
	assert_int_equal(c.reaps[0].line, 3);
	assert_string_equal(c.reaps[1].expr, "dport = :8080 and rqueue > 1M");
	assert_non_null(c.reaps[1].filter);
	assert_int_equal(c.reap_interval_ms, 300000);
	assert_int_equal(c.reap_max, 500);
	guard_config_fini(&c);
}

static void options_errors(void **state)
{
	static const struct {
		const char *text;
		const char *err;
	} bad[] = {
		{ "grace = 10\n", "line 1: grace: '10' is not a duration" },
		{ "grace = 2x\n", "line 1: grace: '2x' is not a duration" },
		{ "grace = 25h\n", "at most 24h" },
		{ "\nreap-interval = 500ms\n", "line 2: reap-interval: '500ms' is shorter than 1s" },
		{ "on-route-change = maybe\n", "line 1: on-route-change: expected yes or no" },
		{ "reap-max = 0\n", "line 1: reap-max: '0' is not a number from 1 to 1000000" },
		{ "reap-max = -1\n", "reap-max: '-1' is not a number" },
		{ "reap = idle > 10\n", "line 1: reap: 'idle' needs a duration" },
		{ "reap = idle > 10m and\n", "line 1: reap: expected a condition, found end of filter" },
		{ "reap = bogus\n", "found 'bogus' (at 'bogus', offset 0)" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct guard_config c;
		char err[256] = "";

		assert_int_equal(guard_config_parse(&c, bad[i].text, err, sizeof(err)),
				 -EINVAL);
		if (!strstr(err, bad[i].err))
			fail_msg("'%s': got '%s', want '%s'", bad[i].text, err, bad[i].err);
		/* Defaults again: nothing of a bad file is used. */
		assert_int_equal(c.n_reaps, 0);
		assert_int_equal(c.grace_ms, 0);
		guard_config_fini(&c);
	}
}

/* ---- grace -------------------------------------------------------------------------- */

static struct guard_addr addr4(int ifindex, const char *a)
{
	struct guard_addr ad = { .ifindex = ifindex, .family = AF_INET, .prefixlen = 24 };

	assert_int_equal(inet_pton(AF_INET, a, ad.addr), 1);
	return ad;
}

static void grace_hold_take(void **state)
{
	struct guard_addr a = addr4(2, "10.0.0.2"), b = addr4(3, "10.0.1.2");
	struct guard_event ea = { GUARD_ADDR_REMOVED, 2, &a, 1 };
	struct guard_event eb = { GUARD_ADDR_REMOVED, 3, &b, 1 };
	struct guard_event link = { GUARD_LINK_DOWN, 2, &a, 1 };
	struct guard_grace g = { 0 };
	struct guard_held *due = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(guard_grace_next(&g), UINT64_MAX);
	assert_int_equal(guard_grace_hold(&g, &ea, "a", 1000, 500), 0);
	/* The same removal again (a flap) keeps its first end. */
	assert_int_equal(guard_grace_hold(&g, &ea, "a again", 1300, 500), 0);
	assert_int_equal(guard_grace_hold(&g, &eb, "b", 1200, 500), 0);
	assert_int_equal(guard_grace_hold(&g, &link, "link", 1250, 500), 0);
	assert_int_equal(g.n, 3);
	assert_int_equal(guard_grace_next(&g), 1500);

	assert_int_equal(guard_grace_take(&g, 1499, &due, &n), 0);
	assert_int_equal(n, 0);
	guard_held_free(due, n);
	assert_int_equal(guard_grace_take(&g, 1500, &due, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(due[0].what, "a");
	assert_int_equal(due[0].ev.n_addrs, 1);
	assert_memory_equal(due[0].ev.addrs, &a, sizeof(a)); /* a copy, owned */
	guard_held_free(due, n);
	assert_int_equal(guard_grace_next(&g), 1700);
	/* Everything due at once is taken together. */
	assert_int_equal(guard_grace_take(&g, 5000, &due, &n), 0);
	assert_int_equal(n, 2);
	guard_held_free(due, n);
	assert_int_equal(g.n, 0);
	guard_grace_fini(&g);
}

static void grace_came_back(void **state)
{
	struct guard_addr a = addr4(2, "10.0.0.2");
	struct guard_event ea = { GUARD_ADDR_REMOVED, 2, &a, 1 };
	struct guard_event ld = { GUARD_LINK_DOWN, 2, &a, 1 };
	struct guard_link up = { .ifindex = 2, .up = true, .name = "eth0" };
	struct guard_addr other_if = addr4(3, "10.0.0.2");
	struct guard_table t = { 0 };
	char what[128];

	(void)state;
	assert_false(guard_event_came_back(&t, &ea));
	assert_false(guard_event_came_back(&t, &ld));
	/* On another interface it did not come back (the policy judges a move). */
	assert_int_equal(guard_table_add_addr(&t, &other_if), 0);
	assert_false(guard_event_came_back(&t, &ea));
	assert_int_equal(guard_table_set_link(&t, &up), 0);
	assert_true(guard_event_came_back(&t, &ld));
	assert_int_equal(guard_table_add_addr(&t, &a), 0);
	assert_true(guard_event_came_back(&t, &ea));
	guard_event_describe(&t, &ea, what, sizeof(what));
	assert_string_equal(what, "address 10.0.0.2/24 removed from eth0");
	guard_event_describe(&t, &ld, what, sizeof(what));
	assert_string_equal(what, "link eth0 went down");
	/* Back on a link that is down: not back. */
	up.up = false;
	assert_int_equal(guard_table_set_link(&t, &up), 0);
	assert_false(guard_event_came_back(&t, &ea));
	assert_false(guard_event_came_back(&t, &ld));
	guard_table_fini(&t);
}

/* ---- route changes -------------------------------------------------------------------- */

static struct sdiag_sock tcp4(const char *src, const char *dst)
{
	struct sdiag_sock s = { .table = SDIAG_T_TCP, .family = AF_INET,
				.state = SDIAG_SS_ESTABLISHED };

	assert_int_equal(inet_pton(AF_INET, src, s.inet.src), 1);
	assert_int_equal(inet_pton(AF_INET, dst, s.inet.dst), 1);
	s.has = SDIAG_HAS_UID | SDIAG_HAS_MARK;
	s.uid = 1000;
	s.inet.mark = 0x20;
	return s;
}

static struct guard_route_answer answer(int oif, const char *src)
{
	struct guard_route_answer a = { .oif = oif, .has_src = true };

	assert_int_equal(inet_pton(AF_INET, src, a.src), 1);
	return a;
}

static void route_decide(void **state)
{
	struct guard_config c;
	struct guard_table t = { 0 };
	struct guard_addr wlan = addr4(3, "192.168.1.5"), eth = addr4(2, "10.0.0.5"),
			  eth2 = addr4(2, "10.0.0.6");
	struct sdiag_sock s = tcp4("192.168.1.5", "198.51.100.7");
	struct guard_route_answer via_eth = answer(2, "10.0.0.5"),
				  via_wlan = answer(3, "192.168.1.5"), none = { .err = -ENETUNREACH };
	struct guard_route_key k;
	char err[128];

	(void)state;
	assert_int_equal(guard_config_parse(&c, "exempt-mark = 0x10/0xf0\n", err,
					    sizeof(err)), 0);
	assert_int_equal(guard_table_add_addr(&t, &wlan), 0);
	assert_int_equal(guard_table_add_addr(&t, &eth), 0);
	assert_int_equal(guard_table_add_addr(&t, &eth2), 0);

	/* The default moved to eth0: wlan0's socket would leave with a foreign source. */
	assert_int_equal(guard_decide_route(&c, &t, &s, &via_eth), GUARD_DESTROY);
	assert_int_equal(guard_decide_route(&c, &t, &s, &via_wlan), GUARD_KEEP_UNRELATED);
	assert_int_equal(guard_decide_route(&c, &t, &s, &none), GUARD_KEEP_UNRELATED);
	/* A peer that is an address of this host (10.0.0.5 from 192.168.1.5): local. */
	via_eth.local = true;
	assert_int_equal(guard_decide_route(&c, &t, &s, &via_eth), GUARD_KEEP_UNRELATED);
	via_eth.local = false;
	/* Bound to a secondary address of the device the route uses: its own. */
	s = tcp4("10.0.0.6", "198.51.100.7");
	assert_int_equal(guard_decide_route(&c, &t, &s, &via_eth), GUARD_KEEP_UNRELATED);
	/* Exemptions and states apply. */
	s = tcp4("192.168.1.5", "198.51.100.7");
	s.inet.mark = 0x15;
	assert_int_equal(guard_decide_route(&c, &t, &s, &via_eth), GUARD_KEEP_MARK);
	s.inet.mark = 0;
	s.state = SDIAG_SS_LISTEN;
	assert_int_equal(guard_decide_route(&c, &t, &s, &via_eth), GUARD_KEEP_STATE);

	/* The key: IPv4-mapped peers as IPv4, with mark, bound device and uid. */
	memset(&s, 0, sizeof(s));
	s.family = AF_INET6;
	s.has = SDIAG_HAS_UID | SDIAG_HAS_MARK;
	s.uid = 7;
	s.inet.mark = 3;
	s.inet.ifindex = 9;
	assert_int_equal(inet_pton(AF_INET6, "::ffff:198.51.100.7", s.inet.dst), 1);
	guard_route_key_of(&s, &k);
	assert_int_equal(k.family, AF_INET);
	assert_memory_equal(k.peer, "\xc6\x33\x64\x07", 4);
	assert_int_equal(k.mark, 3);
	assert_int_equal(k.oif, 9);
	assert_true(k.has_uid);
	assert_int_equal(k.uid, 7);
	guard_table_fini(&t);
	guard_config_fini(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(options_parse),   cmocka_unit_test(options_errors),
		cmocka_unit_test(grace_hold_take), cmocka_unit_test(grace_came_back),
		cmocka_unit_test(route_decide),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
