/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The filter language offline: what parses, where errors point, and what the
 * userspace matcher selects on hand-made records (precedence, inet address
 * rules, every predicate for every family), plus the state mask and the
 * tables a filter rules out.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/test_skip.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/capability.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "lib/filter/filter.h"
#include "tests/filters/corpus_util.h"

/* ---- helpers ---------------------------------------------------------------- */

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

static struct sdiag_sock inet_sock(enum sdiag_table t, const char *src, uint16_t sport,
				   const char *dst, uint16_t dport, uint8_t state)
{
	struct sdiag_sock s = { .table = t, .state = state };

	s.family = strchr(src, ':') ? AF_INET6 : AF_INET;
	assert_int_equal(inet_pton(s.family, src, s.inet.src), 1);
	assert_int_equal(inet_pton(s.family, dst, s.inet.dst), 1);
	s.inet.sport = sport;
	s.inet.dport = dport;
	s.has = SDIAG_HAS_UID | SDIAG_HAS_INODE | SDIAG_HAS_COOKIE;
	s.uid = 1000;
	s.inode = 4242;
	s.cookie = 0x1234;
	return s;
}

static struct sdiag_sock tcp(const char *src, uint16_t sport, const char *dst, uint16_t dport,
			     uint8_t state)
{
	return inet_sock(SDIAG_T_TCP, src, sport, dst, dport, state);
}

/* ---- parsing ---------------------------------------------------------------- */

static void test_parse_good(void **state)
{
	static const char *const good[] = {
		"",
		"   ",
		"sport = :22",
		"sport :22",
		"sport 22",
		"( sport = :22 )",
		"(sport = :22)",
		"!(sport = :22)",
		"not not sport = :22",
		"state established ( dport = :ssh or sport = :ssh )",
		"exclude syn-recv excl time-wait",
		"state ESTABLISHED",
		"src \"/tmp/a b/*\"",
		"path '*.sock'",
		"dst [fe80::1]/64:22",
		"dst [fe80::]/10",
		"dst [2001:db8::1]:443",
		"src 192.168.0.0/16:*",
		"cookie 0xffffffffffffffff",
		"inode 4294967295",
		"uid nobody",
		"group rtnlgrp_link",
		"netlink-proto sock_diag",
		"src vsock:2:1024",
		"src vsock:*:*",
		"src link:ip:lo",
		"src netlink:*:kernel",
		"dev = 1",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		sdiag_filter_free(parse_ok(good[i]));
}

static void test_parse_corpus(void **state)
{
	struct corpus c;

	(void)state;
	assert_int_equal(corpus_load(&c), 0);
	assert_true(c.n >= 100);
	for (size_t i = 0; i < c.n; i++)
		sdiag_filter_free(parse_ok(c.v[i].expr));
	corpus_free(&c);
}

static void test_parse_errors(void **state)
{
	static const struct {
		const char *expr;
		size_t off, len;
		const char *msg;
	} bad[] = {
		{ "state foo", 6, 3, "unknown state 'foo'" },
		{ "state new-syn-recv", 6, 12, "use 'syn-recv'" },
		{ "state", 5, 0, "expected a state name" },
		{ "exclude", 7, 0, "expected a state name" },
		{ "sport = :99999", 8, 6, "out of range" },
		{ "sport = :65536", 8, 6, "out of range" },
		{ "sport = :nosuchservice", 8, 14, "unknown port or service" },
		{ "sport = :", 8, 1, "expected a port" },
		{ "sport >", 7, 0, "expected a port" },
		{ "sport > :*", 8, 2, "only works with =" },
		{ "src 1.2.3.4/33", 11, 3, "bad prefix length '/33'" },
		{ "src 1.2.3.4/x", 11, 2, "bad prefix length" },
		{ "src 1.2.3.4/", 11, 1, "bad prefix length" },
		{ "src [::1]/129", 9, 4, "bad prefix length '/129'" },
		{ "dst 10.0.0.1:70000", 13, 5, "out of range" },
		{ "dst [::1]:70000", 10, 5, "out of range" },
		{ "dst [::1", 4, 4, "missing ']'" },
		{ "dst [::1]x", 9, 1, "expected ':PORT'" },
		{ "dst 300.1.1.1", 4, 9, "malformed IPv4 address '300.1.1.1'" },
		{ "dst 1.2.3.4.5", 4, 9, "malformed IPv4 address '1.2.3.4.5'" },
		{ "dst 1.2.3.4.5:80", 4, 9, "malformed IPv4 address '1.2.3.4.5'" },
		{ "src 10.0.0.256/8", 4, 10, "malformed IPv4 address" },
		{ "src no-such-host.invalid", 4, 20, "cannot resolve host" },
		{ "src no-such-host.invalid/8", 4, 20, "not a numeric address" },
		{ "dev nosuchdev0", 4, 10, "unknown device 'nosuchdev0'" },
		{ "dev", 3, 0, "expected a device" },
		{ "dev > lo", 4, 1, "only = or !=" },
		{ "fwmark x", 7, 1, "bad mark" },
		{ "fwmark 1/y", 9, 1, "bad mask" },
		{ "cgroup /no/such/cgroup/here", 7, 20, "no cgroup '/no/such/cgroup/here'" },
		{ "cgroup /no/such/**", 7, 11, "no cgroup '/no/such/**'" },
		{ "unit no-such-unit-here.service", 5, 25, "no cgroup named 'no-such-unit" },
		{ "unit a/b.service", 5, 11, "is not a unit name" },
		{ "cgroup /a/*/b", 7, 6, "is not a cgroup path" },
		{ "cgroup /a/../b", 7, 7, "is not a cgroup path" },
		{ "unit", 4, 0, "expected a unit name" },
		{ "proto foo", 6, 3, "unknown socket kind 'foo'" },
		{ "netlink-proto 32", 14, 2, "out of range" },
		{ "netlink-proto nosuch", 14, 6, "unknown netlink protocol" },
		{ "group 0", 6, 1, "out of range" },
		{ "group nosuchgroup", 6, 11, "unknown group" },
		{ "uid nosuchuser_xyz", 4, 14, "unknown user" },
		{ "inode 4294967296", 6, 10, "out of range" },
		{ "cookie abc", 7, 3, "expected a number" },
		{ "sport = :22 and", 15, 0, "found end of filter" },
		{ "sport = :22 or or sport = :80", 15, 2, "found 'or'" },
		{ "( sport = :22", 13, 0, "expected ')' to close the '(' at offset 0" },
		{ "sport = :22 )", 12, 1, "unexpected ')'" },
		{ "()", 1, 1, "expected a condition" },
		{ "foo", 0, 3, "found 'foo'" },
		{ "sport = :22 bar", 12, 3, "found 'bar'" },
		{ "src \"unterminated", 4, 13, "unterminated quote" },
		{ "!", 1, 0, "found end of filter" },
		{ "src", 3, 0, "expected an address" },
		{ "src link:nosuchproto", 9, 11, "unknown link protocol" },
		{ "src vsock:x", 10, 1, "bad vsock CID" },
		{ "src netlink:route:x", 18, 1, "bad netlink port id" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sdiag_filter_error err = { 0 };
		struct sdiag_filter *f = NULL;
		/* Offline: "cannot resolve" must not wait for DNS. */
		int r = sd_filter_parse_flags(&f, bad[i].expr, &err, SD_FPARSE_OFFLINE);

		/* Missing cgroups are found by the resolution step, after parsing. */
		if (r == 0 && sd_filter_resolve_cgroups(f, false, &err) < 0) {
			sdiag_filter_free(f);
			f = NULL;
			r = -EINVAL;
		}
		if (r != -EINVAL || err.offset != bad[i].off || err.len != bad[i].len ||
		    !strstr(err.msg, bad[i].msg))
			fail_msg("'%s': got %d at %zu+%zu '%s'; want -EINVAL at %zu+%zu '%s'",
				 bad[i].expr, r, err.offset, err.len, err.msg, bad[i].off,
				 bad[i].len, bad[i].msg);
		assert_null(f);
	}
}

static void test_parse_deep(void **state)
{
	char buf[2048];
	struct sdiag_filter_error err = { 0 };
	struct sdiag_filter *f = NULL;
	size_t n = 0;

	(void)state;
	for (int i = 0; i < 300; i++)
		buf[n++] = '(';
	memcpy(buf + n, "sport = :1", 10);
	n += 10;
	for (int i = 0; i < 300; i++)
		buf[n++] = ')';
	buf[n] = '\0';
	assert_int_equal(sdiag_filter_parse(&f, buf, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "nested too deeply"));
}

/* Drop CAP_NET_ADMIN in a child: fwmark is then a clear error, not ss's
 * silently empty (or full) result. */
static void test_fwmark_needs_net_admin(void **state)
{
	pid_t pid;
	int status;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct data[2];
		struct sdiag_filter_error err = { 0 };
		struct sdiag_filter *f = NULL;

		if (syscall(SYS_capget, &hdr, data) < 0)
			_exit(2);
		data[0].effective &= ~(1U << CAP_NET_ADMIN);
		if (syscall(SYS_capset, &hdr, data) < 0)
			_exit(3);
		if (sdiag_filter_parse(&f, "sport = :22 and fwmark 0x1", &err) != -EPERM)
			_exit(4);
		if (err.offset != 23 || err.len != 3 || !strstr(err.msg, "CAP_NET_ADMIN"))
			_exit(5);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---- matching ------------------------------------------------------------------ */

static void test_precedence(void **state)
{
	/* ss: and/or have equal precedence, left to right. */
	struct sdiag_sock a = tcp("127.0.0.1", 1, "127.0.0.1", 9, SDIAG_SS_ESTABLISHED);

	(void)state;
	/* (sport 1 or sport 2) and dport 3: false here; "or binds looser" would say true. */
	assert_false(matches("sport = :1 or sport = :2 and dport = :3", &a));
	assert_false(matches("sport = :1 or sport = :2 dport = :3", &a));
	assert_true(matches("sport = :1 or ( sport = :2 and dport = :3 )", &a));
	/* (sport 2 and dport 3) or sport 1 */
	assert_true(matches("sport = :2 and dport = :3 or sport = :1", &a));
	/* not binds to one primary */
	assert_true(matches("not sport = :2 and dport = :9", &a));
	assert_false(matches("not ( sport = :1 and dport = :9 )", &a));
	assert_true(matches("! ! sport = :1", &a));
	assert_true(matches("", &a));
}

static void test_ports(void **state)
{
	struct sdiag_sock s = tcp("127.0.0.1", 5000, "127.0.0.1", 40000, SDIAG_SS_ESTABLISHED);
	struct sdiag_sock un = { .table = SDIAG_T_UNIX_STREAM, .family = AF_UNIX };
	struct sdiag_sock vs = { .table = SDIAG_T_VSOCK_STREAM, .family = AF_VSOCK };

	(void)state;
	assert_true(matches("sport = :5000", &s));
	assert_true(matches("sport 5000", &s));
	assert_false(matches("sport != :5000", &s));
	assert_true(matches("sport >= :5000", &s));
	assert_false(matches("sport > :5000", &s));
	assert_true(matches("sport <= :5000", &s));
	assert_false(matches("sport < :5000", &s));
	assert_true(matches("sport lt :5001", &s));
	assert_true(matches("dport gt :39999", &s));
	assert_true(matches("sport = :*", &s));
	/* A socket without ports fails every comparison, != included; not negates. */
	assert_false(matches("sport = :5000", &un));
	assert_false(matches("sport != :5000", &un));
	assert_false(matches("sport < :5000", &un));
	assert_false(matches("sport = :*", &un));
	assert_true(matches("not sport = :5000", &un));
	vs.vsock.src_port = 1024;
	vs.vsock.dst_port = 7;
	assert_true(matches("sport = :1024 and dport = :7", &vs));
}

static void test_hosts(void **state)
{
	struct sdiag_sock v4 = tcp("10.1.2.3", 22, "192.168.1.9", 40000, SDIAG_SS_ESTABLISHED);
	struct sdiag_sock v6 = tcp("2001:db8::1", 22, "2001:db8::2", 40000, SDIAG_SS_ESTABLISHED);
	struct sdiag_sock m = tcp("::ffff:10.1.2.3", 22, "::ffff:192.168.1.9", 1, 1);
	struct sdiag_sock un = { .table = SDIAG_T_UNIX_STREAM, .family = AF_UNIX };

	(void)state;
	assert_true(matches("src 10.1.2.3", &v4));
	assert_true(matches("src 10.0.0.0/8", &v4));
	assert_true(matches("src 10.1.2.0/23", &v4));
	assert_false(matches("src 10.1.4.0/23", &v4));
	assert_true(matches("src 10.1.2.3:22", &v4));
	assert_false(matches("src 10.1.2.3:23", &v4));
	assert_true(matches("dst 192.168.0.0/16:40000", &v4));
	assert_true(matches("src *:22", &v4));
	assert_true(matches("src :22", &v4));
	assert_true(matches("src *", &v4));
	assert_false(matches("src *", &un));
	assert_true(matches("src 0.0.0.0/0", &v4));
	/* Families: an IPv6 condition never matches IPv4 and vice versa... */
	assert_false(matches("src [2001:db8::1]", &v4));
	assert_false(matches("src 10.1.2.3", &v6));
	assert_false(matches("src 0.0.0.0/0", &v6));
	assert_true(matches("src [2001:db8::]/32", &v6));
	assert_true(matches("src 2001:db8::1", &v6));
	assert_true(matches("src [2001:db8::1]:22", &v6));
	assert_true(matches("src inet6:[::]/0", &v6));
	/* ...except that IPv4 conditions see v4-mapped addresses (as the kernel). */
	assert_true(matches("src 10.1.2.3", &m));
	assert_true(matches("dst 192.168.1.0/24", &m));
	assert_true(matches("src 0.0.0.0/0", &m));
	assert_true(matches("src [::ffff:10.1.2.3]", &m));
	assert_false(matches("src [::ffff:10.1.2.3]", &v4));
	/* A host name: any of its addresses. */
	assert_true(matches("dst localhost or src 10.1.2.3", &v4));
	assert_false(matches("src localhost", &v4));
	assert_false(matches("src != 10.1.2.3", &v4));
}

static void test_states_match(void **state)
{
	struct sdiag_sock est = tcp("127.0.0.1", 1, "127.0.0.1", 2, SDIAG_SS_ESTABLISHED);
	struct sdiag_sock lis = tcp("127.0.0.1", 1, "0.0.0.0", 0, SDIAG_SS_LISTEN);
	struct sdiag_sock tw = tcp("127.0.0.1", 1, "127.0.0.1", 2, SDIAG_SS_TIME_WAIT);

	(void)state;
	assert_true(matches("state established", &est));
	assert_false(matches("state established", &lis));
	assert_true(matches("state established state listening", &lis));
	assert_true(matches("exclude listening", &est));
	assert_false(matches("exclude listening", &lis));
	assert_true(matches("state connected", &tw));
	assert_false(matches("state connected", &lis));
	assert_true(matches("state bucket", &tw));
	assert_false(matches("state big", &tw));
	assert_true(matches("state big", &lis));
	assert_true(matches("state synchronized", &est));
	assert_true(matches("state all exclude time-wait", &est));
	assert_false(matches("state all exclude time-wait", &tw));
	assert_true(matches("state listening or state time-wait", &tw));
	assert_true(matches("not state listening", &tw));
}

static void test_other_predicates(void **state)
{
	static const uint8_t path[] = "/run/foo.sock";
	static const uint8_t auto_name[] = "\0"
					   "1f2e3";
	static const uint8_t abstract[] = "\0"
					  "my-service";
	static const uint32_t groups[2] = { 1U << 0, 1U << 1 }; /* groups 1 and 34 */
	struct sdiag_sock un = { .table = SDIAG_T_UNIX_STREAM,
				 .family = AF_UNIX,
				 .state = SDIAG_SS_LISTEN };
	struct sdiag_sock nl = { .table = SDIAG_T_NETLINK, .family = AF_NETLINK, .protocol = 0 };
	struct sdiag_sock t = tcp("127.0.0.1", 5000, "127.0.0.1", 40000, SDIAG_SS_ESTABLISHED);

	(void)state;
	un.un.name = path;
	un.un.name_len = sizeof(path) - 1;
	un.has = SDIAG_HAS_NAME | SDIAG_HAS_INODE;
	un.inode = 77;
	assert_true(matches("path /run/*.sock", &un));
	assert_true(matches("src /run/foo.sock", &un));
	assert_true(matches("src unix:*foo*", &un));
	assert_false(matches("path /var/*", &un));
	assert_false(matches("path /run/*", &t));
	assert_true(matches("proto unix and proto u_str", &un));
	assert_false(matches("proto u_dgr", &un));
	assert_true(matches("inode 77", &un));
	assert_false(matches("uid 0", &un)); /* no uid reported: no match */
	assert_false(matches("autobound", &un));
	un.un.name = auto_name;
	un.un.name_len = sizeof(auto_name) - 1;
	assert_true(matches("autobound", &un));
	assert_true(matches("src @1f2e3", &un));
	un.un.name = abstract;
	un.un.name_len = sizeof(abstract) - 1;
	assert_false(matches("autobound", &un));
	assert_true(matches("src @my-*", &un));

	nl.nl.portid = 0xfffff000; /* negative: kernel-assigned */
	nl.nl.groups = groups;
	nl.nl.n_group_words = 2;
	assert_true(matches("netlink-proto route", &nl));
	assert_true(matches("nlproto rtnl", &nl));
	assert_false(matches("netlink-proto generic", &nl));
	assert_true(matches("group 1 and group 34", &nl));
	assert_false(matches("group 2", &nl));
	assert_true(matches("group link", &nl)); /* RTNLGRP_LINK = 1 */
	assert_true(matches("autobound", &nl));
	assert_true(matches("src netlink:route", &nl));
	assert_false(matches("src netlink:route:kernel", &nl));
	assert_false(matches("netlink-proto route", &t));
	assert_false(matches("group 1", &t));

	assert_true(matches("uid 1000 and uid >= 1000 and uid < 1001", &t));
	assert_true(matches("cookie 0x1234 and inode 4242", &t));
	assert_true(matches("proto tcp and not proto udp", &t));
	assert_true(matches("proto inet", &t));
	assert_false(matches("dev lo", &t)); /* not bound to a device */
	assert_true(matches("dev != lo", &t));
	t.inet.ifindex = 1;
	assert_true(matches("dev lo and dev 1", &t));
	/* fwmark and cgroup: only what the kernel reported can match. */
	assert_false(matches("fwmark 0", &t));
	assert_false(matches("fwmark != 0", &t));
	assert_true(matches("not fwmark 0", &t));
	t.has |= SDIAG_HAS_MARK;
	t.inet.mark = 0x31;
	assert_true(matches("fwmark 0x31 and fwmark 0x1/0xf and fwmark != 0x30", &t));
	assert_false(matches("fwmark 0x30", &t));
	t.has |= SDIAG_HAS_CGROUP;
	t.inet.cgroup_id = 1;
	assert_true(matches("cgroup / or cgroup != /", &t));
	/* autobound on inet: inside the ephemeral port range read at parse time */
	t.inet.sport = 40000;
	assert_true(matches("autobound", &t));
	t.inet.sport = 80;
	assert_false(matches("autobound", &t));
}

/* ---- states, tables ------------------------------------------------------------ */

static uint32_t states_of(const char *expr)
{
	struct sdiag_filter *f = parse_ok(expr);
	uint32_t m = sdiag_filter_states(f);

	sdiag_filter_free(f);
	return m;
}

#define SB(x) SDIAG_STATE_BIT(SDIAG_SS_##x)

static void test_filter_states(void **state)
{
	(void)state;
	assert_int_equal(states_of(""), SDIAG_STATES_ALL);
	assert_int_equal(states_of("sport = :22"), SDIAG_STATES_ALL);
	assert_int_equal(states_of("state established"), SB(ESTABLISHED));
	assert_int_equal(states_of("state established state listening"),
			 SB(ESTABLISHED) | SB(LISTEN));
	assert_int_equal(states_of("exclude listening"), SDIAG_STATES_ALL & ~SB(LISTEN));
	assert_int_equal(states_of("state established sport = :22"), SB(ESTABLISHED));
	assert_int_equal(states_of("state established and state listening"), 0);
	assert_int_equal(states_of("state established or state listening"),
			 SB(ESTABLISHED) | SB(LISTEN));
	/* or with a non-state predicate can be true in any state */
	assert_int_equal(states_of("state established or sport = :22"), SDIAG_STATES_ALL);
	assert_int_equal(states_of("not state listening"), SDIAG_STATES_ALL & ~SB(LISTEN));
	assert_int_equal(states_of("not ( state listening and sport = :22 )"), SDIAG_STATES_ALL);
	assert_int_equal(states_of("not ( state listening or state closed )"),
			 SDIAG_STATES_ALL & ~(SB(LISTEN) | SB(CLOSE)));
	assert_int_equal(states_of("state bucket"), SB(SYN_RECV) | SB(TIME_WAIT));
	assert_int_equal(states_of("state connected"),
			 SDIAG_STATES_ALL & ~(SB(LISTEN) | SB(CLOSE)));
}

static bool names_states(const char *expr)
{
	struct sdiag_filter *f = parse_ok(expr);
	bool x = sdiag_filter_names_states(f);

	sdiag_filter_free(f);
	return x;
}

/* Whether the state clauses replace the default states (list, kill, Python's kill):
 * any clause, even one that allows every state or sits under not/or. */
static void test_filter_names_states(void **state)
{
	(void)state;
	assert_false(sdiag_filter_names_states(NULL));
	assert_false(names_states(""));
	assert_false(names_states("sport = :22 or dport = :22"));
	assert_false(names_states("comm 'state'"));
	assert_true(names_states("state all"));
	assert_true(names_states("state established"));
	assert_true(names_states("exclude listening"));
	assert_true(names_states("excl time-wait and sport = :22"));
	assert_true(names_states("sport = :22 or not ( dport = :1 and state listening )"));
}

static bool excludes(const char *expr, enum sdiag_table t)
{
	struct sdiag_filter *f = parse_ok(expr);
	bool x = sd_filter_excludes_table(f, t);

	sdiag_filter_free(f);
	return x;
}

static void test_excludes_table(void **state)
{
	(void)state;
	assert_false(excludes("", SDIAG_T_UNIX_STREAM));
	assert_true(excludes("proto tcp", SDIAG_T_UDP));
	assert_false(excludes("proto tcp", SDIAG_T_TCP));
	assert_false(excludes("not proto tcp", SDIAG_T_UDP));
	assert_true(excludes("not proto tcp", SDIAG_T_TCP));
	assert_true(excludes("sport = :80", SDIAG_T_UNIX_STREAM));
	assert_true(excludes("sport = :80", SDIAG_T_NETLINK));
	assert_true(excludes("sport = :80", SDIAG_T_PACKET_RAW));
	assert_false(excludes("sport = :80", SDIAG_T_TCP));
	assert_false(excludes("sport = :80", SDIAG_T_VSOCK_STREAM));
	assert_false(excludes("not sport = :80", SDIAG_T_UNIX_STREAM));
	assert_true(excludes("path /x/*", SDIAG_T_TCP));
	assert_false(excludes("path /x/*", SDIAG_T_UNIX_DGRAM));
	assert_true(excludes("src 1.2.3.4 and path /x", SDIAG_T_TCP));
	assert_true(excludes("src 1.2.3.4 and path /x", SDIAG_T_UNIX_STREAM));
	assert_false(excludes("src 1.2.3.4 or path /x", SDIAG_T_UNIX_STREAM));
	assert_true(excludes("netlink-proto route", SDIAG_T_UDP));
	assert_true(excludes("proto tcp and proto udp", SDIAG_T_TCP));
	assert_false(excludes("uid 0", SDIAG_T_NETLINK));
	assert_true(excludes("src unix:/x/* or netlink-proto route", SDIAG_T_TCP));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_corpus),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_deep),
		cmocka_unit_test(test_fwmark_needs_net_admin),
		cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_ports),
		cmocka_unit_test(test_hosts),
		cmocka_unit_test(test_states_match),
		cmocka_unit_test(test_other_predicates),
		cmocka_unit_test(test_filter_states),
		cmocka_unit_test(test_filter_names_states),
		cmocka_unit_test(test_excludes_table),
	};

	return sdiag_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
