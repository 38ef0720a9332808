/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The guard's pure parts: configuration parsing and the destroy policy. */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "tests/test_skip.h"

#include "daemon/guard/guard.h"

/* ---- configuration ----------------------------------------------------------------- */

static void config_defaults(void **state)
{
	struct guard_config c;
	char err[256] = "";

	(void)state;
	assert_int_equal(guard_config_parse(&c, "# nothing\n\n", err, sizeof(err)), 0);
	assert_int_equal(c.tcp_states, SDIAG_STATE_BIT(SDIAG_SS_ESTABLISHED) |
					       SDIAG_STATE_BIT(SDIAG_SS_SYN_SENT) |
					       SDIAG_STATE_BIT(SDIAG_SS_SYN_RECV));
	assert_true(c.udp_connected);
	assert_true(c.exempt_loopback);
	assert_false(c.dry_run);
	guard_config_fini(&c);
}

static void config_full(void **state)
{
	const char *text = "tcp-states = established fin-wait-1  # comment\n"
			   "udp-connected = no\n"
			   "exempt-loopback = off\n"
			   "exempt-uid = 0 1000-1999\n"
			   "exempt-uid = 65534\n"
			   "exempt-cgroup = /\n"
			   "exempt-mark = 0x100/0xff00, 7\n"
			   "exempt-dst = 10.0.0.0/8 fd00::/8 192.0.2.1\n"
			   "dry-run = yes\n";
	struct guard_config c;
	char err[256] = "";

	(void)state;
	assert_int_equal(guard_config_parse(&c, text, err, sizeof(err)), 0);
	assert_int_equal(c.tcp_states, SDIAG_STATE_BIT(SDIAG_SS_ESTABLISHED) |
					       SDIAG_STATE_BIT(SDIAG_SS_FIN_WAIT1));
	assert_false(c.udp_connected);
	assert_false(c.exempt_loopback);
	assert_true(c.dry_run);
	assert_int_equal(c.n_exempt_uids, 3);
	assert_int_equal(c.exempt_uids[1].lo, 1000);
	assert_int_equal(c.exempt_uids[1].hi, 1999);
	assert_int_equal(c.exempt_uids[2].lo, 65534);
	assert_int_equal(c.n_exempt_cgroups, 1);
	assert_int_equal(c.n_exempt_marks, 2);
	assert_int_equal(c.exempt_marks[0].mark, 0x100);
	assert_int_equal(c.exempt_marks[0].mask, 0xff00);
	assert_int_equal(c.exempt_marks[1].mask, 0xffffffff);
	assert_int_equal(c.n_exempt_dsts, 3);
	assert_int_equal(c.exempt_dsts[0].family, AF_INET);
	assert_int_equal(c.exempt_dsts[0].len, 8);
	assert_int_equal(c.exempt_dsts[1].family, AF_INET6);
	assert_int_equal(c.exempt_dsts[2].len, 32);
	guard_config_fini(&c);
}

/* The exemption a dead backend's address falls under (guard_exempt_peer),
 * and the key it is named by in the warning. */
static void exempt_peer(void **state)
{
	const char *text = "exempt-dst = 10.0.0.0/8 fd00::/8\n";
	uint8_t a[16] = { 0 };
	struct guard_config c;
	char err[256] = "";

	(void)state;
	assert_int_equal(guard_config_parse(&c, text, err, sizeof(err)), 0);
	inet_pton(AF_INET, "127.0.0.1", a);
	assert_int_equal(guard_exempt_peer(&c, AF_INET, a), GUARD_KEEP_LOOPBACK);
	assert_string_equal(guard_verdict_key(GUARD_KEEP_LOOPBACK), "exempt-loopback");
	inet_pton(AF_INET6, "::ffff:127.0.0.2", a);	/* v4-mapped: as IPv4 */
	assert_int_equal(guard_exempt_peer(&c, AF_INET6, a), GUARD_KEEP_LOOPBACK);
	inet_pton(AF_INET6, "::1", a);
	assert_int_equal(guard_exempt_peer(&c, AF_INET6, a), GUARD_KEEP_LOOPBACK);
	inet_pton(AF_INET, "10.1.2.3", a);
	assert_int_equal(guard_exempt_peer(&c, AF_INET, a), GUARD_KEEP_DST);
	assert_string_equal(guard_verdict_key(GUARD_KEEP_DST), "exempt-dst");
	inet_pton(AF_INET6, "fd00::10", a);
	assert_int_equal(guard_exempt_peer(&c, AF_INET6, a), GUARD_KEEP_DST);
	inet_pton(AF_INET, "192.0.2.1", a);
	assert_int_equal(guard_exempt_peer(&c, AF_INET, a), GUARD_DESTROY);
	c.exempt_loopback = false;
	inet_pton(AF_INET, "127.0.0.1", a);
	assert_int_equal(guard_exempt_peer(&c, AF_INET, a), GUARD_DESTROY);
	guard_config_fini(&c);
}

static void config_errors(void **state)
{
	static const struct {
		const char *text;
		const char *err;
	} bad[] = {
		{ "bogus = 1\n", "line 1: unknown key 'bogus'" },
		{ "\n\ntcp-states = established nosuch\n", "line 3: tcp-states: unknown state 'nosuch'" },
		{ "udp-connected = maybe\n", "line 1: udp-connected: expected yes or no, got 'maybe'" },
		{ "exempt-uid = 5-3\n", "line 1: exempt-uid: empty range '5-3'" },
		{ "exempt-uid = x\n", "line 1: exempt-uid: 'x' is not a uid or uid range (A-B)" },
		{ "exempt-dst = 10.0.0.0/33\n", "line 1: exempt-dst: bad prefix length in '10.0.0.0/33' (0-32)" },
		{ "exempt-dst = nope\n", "line 1: exempt-dst: 'nope' is not an IPv4 or IPv6 address" },
		{ "exempt-mark = 1/x\n", "line 1: exempt-mark: '1/x' is not MARK or MARK/MASK" },
		{ "exempt-cgroup = no-such-unit-x.service\n", "line 1: exempt-cgroup: no cgroup named 'no-such-unit-x.service' (unit)" },
		{ "only-unit = no-such-unit-x.service\n", "line 1: only-unit: no cgroup named 'no-such-unit-x.service' (unit)" },
		{ "exempt-cgroup = /no/such/cgroup/x\n", "line 1: exempt-cgroup: no cgroup '/no/such/cgroup/x' under the cgroup2 mount" },
		{ "exempt-unit = /a/b\n", "line 1: exempt-unit: '/a/b' is a path, not a unit name (use exempt-cgroup)" },
		{ "just words\n", "line 1: expected 'key = value', got 'just words'" },
		{ "dry-run =\n", "line 1: dry-run: missing value" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct guard_config c;
		char err[256] = "";

		assert_int_equal(guard_config_parse(&c, bad[i].text, err, sizeof(err)),
				 -EINVAL);
		assert_string_equal(err, bad[i].err);
		/* A bad file leaves defaults, never half a configuration. */
		assert_true(c.exempt_loopback);
		assert_int_equal(c.n_exempt_uids, 0);
		guard_config_fini(&c);
	}
}

/* dead-backends, backend-interval, dead-backends-max, conntrack. */
static void config_backends(void **state)
{
	static const struct {
		const char *text;
		const char *err;
	} bad[] = {
		{ "dead-backends = backends.txt\n",
		  "line 1: dead-backends: 'backends.txt' is not an absolute path" },
		{ "backend-interval = 500ms\n",
		  "line 1: backend-interval: '500ms' is shorter than 1s (0: only when the file "
		  "changes)" },
		{ "backend-interval = 10\n", "line 1: backend-interval: '10' is not a duration (0, "
					     "500ms, 30s, 5m, 1h; at most 24h)" },
		{ "dead-backends-max = 0\n",
		  "line 1: dead-backends-max: '0' is not a number from 1 to 1000000" },
		{ "conntrack = maybe\n", "line 1: conntrack: expected yes or no, got 'maybe'" },
	};
	struct guard_config c;
	char err[256] = "";

	(void)state;
	assert_int_equal(guard_config_parse(&c, "", err, sizeof(err)), 0);
	assert_null(c.backends_path);
	assert_int_equal(c.backend_interval_ms, 10000);
	assert_int_equal(c.backends_max, 65536);
	assert_false(c.conntrack);
	guard_config_fini(&c);
	assert_int_equal(guard_config_parse(&c,
					    "dead-backends = /run/x/backends\n"
					    "backend-interval = 0\n"
					    "dead-backends-max = 10\n"
					    "conntrack = yes\n",
					    err, sizeof(err)),
			 0);
	assert_string_equal(c.backends_path, "/run/x/backends");
	assert_int_equal(c.backend_interval_ms, 0);
	assert_int_equal(c.backends_max, 10);
	assert_true(c.conntrack);
	guard_config_fini(&c);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(guard_config_parse(&c, bad[i].text, err, sizeof(err)), -EINVAL);
		assert_string_equal(err, bad[i].err);
		assert_null(c.backends_path);
		guard_config_fini(&c);
	}
}

/* Repeated list keys add up (tcp-states too, past its first line); uids are
 * decimal; a token too long for its buffer is refused, not cut short. */
static void config_lists(void **state)
{
	const char *text = "tcp-states = established\n"
			   "tcp-states = time-wait\n"
			   "exempt-uid = 010 0x10\n";
	struct guard_config c;
	char err[256] = "", longuid[64];

	(void)state;
	assert_int_equal(guard_config_parse(&c, text, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "line 3: exempt-uid: '0x10' is not a uid or uid range (A-B)");
	guard_config_fini(&c);
	assert_int_equal(guard_config_parse(&c, "tcp-states = established\n"
						"tcp-states = time-wait\nexempt-uid = 010\n",
					    err, sizeof(err)), 0);
	assert_int_equal(c.tcp_states, SDIAG_STATE_BIT(SDIAG_SS_ESTABLISHED) |
					       SDIAG_STATE_BIT(SDIAG_SS_TIME_WAIT));
	assert_int_equal(c.n_exempt_uids, 1);
	assert_int_equal(c.exempt_uids[0].lo, 10);
	guard_config_fini(&c);
	/* 40 zeros and a 5: cut to 31 characters it would read as uid 0. */
	snprintf(longuid, sizeof(longuid), "exempt-uid = %040d5\n", 0);
	assert_int_equal(guard_config_parse(&c, longuid, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "line 1: exempt-uid:"));
	guard_config_fini(&c);
	/* Nothing left to destroy is refused, with no line to blame. */
	assert_int_equal(guard_config_parse(&c, "tcp-states = ,\nudp-connected = no\n", err,
					    sizeof(err)), -EINVAL);
	assert_string_equal(err, "configuration destroys nothing: no tcp-states and "
				 "udp-connected = no");
	guard_config_fini(&c);
}

/* ---- policy ----------------------------------------------------------------------------- */

static struct sdiag_sock tcp(const char *src, const char *dst, enum sdiag_state st)
{
	struct sdiag_sock s = { .table = SDIAG_T_TCP, .protocol = 6, .state = st };

	if (strchr(src, ':')) {
		s.family = AF_INET6;
		inet_pton(AF_INET6, src, s.inet.src);
		inet_pton(AF_INET6, dst, s.inet.dst);
	} else {
		s.family = AF_INET;
		inet_pton(AF_INET, src, s.inet.src);
		inet_pton(AF_INET, dst, s.inet.dst);
	}
	s.inet.sport = 40000;
	s.inet.dport = 443;
	return s;
}

static struct guard_addr addr(int ifindex, const char *a)
{
	struct guard_addr g = { .ifindex = ifindex };

	g.family = strchr(a, ':') ? AF_INET6 : AF_INET;
	inet_pton(g.family, a, g.addr);
	g.prefixlen = g.family == AF_INET ? 24 : 64;
	return g;
}

static enum guard_verdict decide_removed(const struct guard_config *c,
					 const struct guard_table *t, const struct guard_addr *a,
					 const struct sdiag_sock *s)
{
	struct guard_event e = { .kind = GUARD_ADDR_REMOVED, .ifindex = a->ifindex,
				 .addrs = a, .n_addrs = 1 };

	return guard_decide(c, t, &e, s);
}

static void policy_addr_removed(void **state)
{
	struct guard_config c;
	struct guard_table t = { 0 };
	struct guard_addr gone = addr(2, "10.0.0.2");
	struct sdiag_sock s;

	(void)state;
	guard_config_init(&c);

	s = tcp("10.0.0.2", "10.0.0.1", SDIAG_SS_ESTABLISHED);
	assert_int_equal(decide_removed(&c, &t, &gone, &s), GUARD_DESTROY);
	s = tcp("10.0.0.3", "10.0.0.1", SDIAG_SS_ESTABLISHED);
	assert_int_equal(decide_removed(&c, &t, &gone, &s), GUARD_KEEP_UNRELATED);
	/* Listeners hold no peer: never destroyed. */
	s = tcp("10.0.0.2", "0.0.0.0", SDIAG_SS_LISTEN);
	assert_int_equal(decide_removed(&c, &t, &gone, &s), GUARD_KEEP_STATE);
	s = tcp("10.0.0.2", "10.0.0.1", SDIAG_SS_SYN_SENT);
	assert_int_equal(decide_removed(&c, &t, &gone, &s), GUARD_DESTROY);
	s = tcp("10.0.0.2", "10.0.0.1", SDIAG_SS_TIME_WAIT);
	assert_int_equal(decide_removed(&c, &t, &gone, &s), GUARD_KEEP_STATE);
	/* IPv4-mapped IPv6 socket on the removed IPv4 address. */
	s = tcp("::ffff:10.0.0.2", "::ffff:10.0.0.1", SDIAG_SS_ESTABLISHED);
	assert_int_equal(decide_removed(&c, &t, &gone, &s), GUARD_DESTROY);
	/* UDP: connected only. */
	s = tcp("10.0.0.2", "10.0.0.1", SDIAG_SS_ESTABLISHED);
	s.table = SDIAG_T_UDP;
	assert_int_equal(decide_removed(&c, &t, &gone, &s), GUARD_DESTROY);
	s.state = SDIAG_SS_CLOSE;
	assert_int_equal(decide_removed(&c, &t, &gone, &s), GUARD_KEEP_STATE);
	/* Moved to another interface: still usable. */
	{
		struct guard_addr moved = addr(3, "10.0.0.2");

		assert_int_equal(guard_table_add_addr(&t, &moved), 0);
		s = tcp("10.0.0.2", "10.0.0.1", SDIAG_SS_ESTABLISHED);
		assert_int_equal(decide_removed(&c, &t, &gone, &s), GUARD_KEEP_STILL_ASSIGNED);
	}
	guard_table_fini(&t);
	/* The same address twice on one link (/24 and /16): removing one
	 * leaves the other, and the socket keeps working. */
	{
		struct guard_addr wide = addr(2, "10.0.0.2");

		wide.prefixlen = 16;
		assert_int_equal(guard_table_add_addr(&t, &gone), 0);
		assert_int_equal(guard_table_add_addr(&t, &wide), 0);
		assert_true(guard_table_del_addr(&t, &gone));
		assert_int_equal(t.n_addrs, 1);
		s = tcp("10.0.0.2", "10.0.0.1", SDIAG_SS_ESTABLISHED);
		assert_int_equal(decide_removed(&c, &t, &gone, &s), GUARD_KEEP_STILL_ASSIGNED);
	}
	guard_table_fini(&t);
	guard_config_fini(&c);
}

static void policy_link_local(void **state)
{
	struct guard_config c;
	struct guard_table t = { 0 };
	struct guard_addr gone = addr(2, "fe80::1");
	struct sdiag_sock s;

	(void)state;
	guard_config_init(&c);
	s = tcp("fe80::1", "fe80::2", SDIAG_SS_ESTABLISHED);
	s.inet.ifindex = 2;
	assert_int_equal(decide_removed(&c, &t, &gone, &s), GUARD_DESTROY);
	/* The same link-local address on another interface is another address. */
	s.inet.ifindex = 3;
	assert_int_equal(decide_removed(&c, &t, &gone, &s), GUARD_KEEP_UNRELATED);
	/* ...and it still existing elsewhere does not save the socket on link 2. */
	{
		struct guard_addr other = addr(3, "fe80::1");

		assert_int_equal(guard_table_add_addr(&t, &other), 0);
		s.inet.ifindex = 2;
		assert_int_equal(decide_removed(&c, &t, &gone, &s), GUARD_DESTROY);
	}
	guard_table_fini(&t);
	guard_config_fini(&c);
}

static void policy_link_down(void **state)
{
	struct guard_config c;
	struct guard_table t = { 0 };
	struct guard_addr had[2] = { addr(4, "192.0.2.10"), addr(4, "2001:db8::10") };
	struct guard_event e = { .kind = GUARD_LINK_DOWN, .ifindex = 4, .addrs = had,
				 .n_addrs = 2 };
	struct sdiag_sock s;

	(void)state;
	guard_config_init(&c);
	/* Addresses stay assigned to a downed link: that does not save them. */
	assert_int_equal(guard_table_add_addr(&t, &had[0]), 0);
	s = tcp("192.0.2.10", "198.51.100.1", SDIAG_SS_ESTABLISHED);
	assert_int_equal(guard_decide(&c, &t, &e, &s), GUARD_DESTROY);
	s = tcp("2001:db8::10", "2001:db8::1", SDIAG_SS_ESTABLISHED);
	assert_int_equal(guard_decide(&c, &t, &e, &s), GUARD_DESTROY);
	/* Bound to the device, whatever its address. */
	s = tcp("203.0.113.5", "198.51.100.1", SDIAG_SS_ESTABLISHED);
	s.inet.ifindex = 4;
	assert_int_equal(guard_decide(&c, &t, &e, &s), GUARD_DESTROY);
	s.inet.ifindex = 5;
	assert_int_equal(guard_decide(&c, &t, &e, &s), GUARD_KEEP_UNRELATED);
	guard_table_fini(&t);
	guard_config_fini(&c);
}

static void policy_exemptions(void **state)
{
	const char *text = "exempt-uid = 1000-1999\nexempt-mark = 0x100/0xff00\n"
			   "exempt-dst = 10.8.0.0/16\n";
	struct guard_config c;
	struct guard_table t = { 0 };
	struct guard_addr gone = addr(2, "10.0.0.2");
	struct guard_addr lo = addr(1, "127.0.0.1");
	struct sdiag_sock s;
	char err[128];

	(void)state;
	assert_int_equal(guard_config_parse(&c, text, err, sizeof(err)), 0);
	s = tcp("10.0.0.2", "10.0.0.1", SDIAG_SS_ESTABLISHED);
	s.has |= SDIAG_HAS_UID;
	s.uid = 1500;
	assert_int_equal(decide_removed(&c, &t, &gone, &s), GUARD_KEEP_UID);
	s.uid = 2000;
	assert_int_equal(decide_removed(&c, &t, &gone, &s), GUARD_DESTROY);
	s.has |= SDIAG_HAS_MARK;
	s.inet.mark = 0x1ff; /* 0x1ff & 0xff00 == 0x100 */
	assert_int_equal(decide_removed(&c, &t, &gone, &s), GUARD_KEEP_MARK);
	s.inet.mark = 0x200;
	assert_int_equal(decide_removed(&c, &t, &gone, &s), GUARD_DESTROY);
	s = tcp("10.0.0.2", "10.8.3.4", SDIAG_SS_ESTABLISHED);
	assert_int_equal(decide_removed(&c, &t, &gone, &s), GUARD_KEEP_DST);
	/* A uid that was not reported is not uid 0: no exemption by accident. */
	s = tcp("10.0.0.2", "10.0.0.1", SDIAG_SS_ESTABLISHED);
	s.uid = 1500;
	assert_int_equal(decide_removed(&c, &t, &gone, &s), GUARD_DESTROY);
	/* Loopback traffic. */
	s = tcp("127.0.0.1", "127.0.0.1", SDIAG_SS_ESTABLISHED);
	assert_int_equal(decide_removed(&c, &t, &lo, &s), GUARD_KEEP_LOOPBACK);
	guard_config_fini(&c);
}

/* only-cgroup/only-unit and exempt-cgroup on fabricated id sets: the policy
 * alone (resolution is tested below and end to end). */
static void policy_cgroups(void **state)
{
	struct guard_cgroup only = { .spec = (char *)"a.service", .unit = true,
				     .ids = (uint64_t[]){ 5, 7, 9 }, .n = 3 };
	struct guard_cgroup ex = { .spec = (char *)"/a.service/keep", .ids = (uint64_t[]){ 9 },
				   .n = 1 };
	struct guard_config c;
	struct guard_table t = { 0 };
	struct guard_addr gone = addr(2, "10.0.0.2");
	struct sdiag_sock s = tcp("10.0.0.2", "10.0.0.1", SDIAG_SS_ESTABLISHED);

	(void)state;
	guard_config_init(&c);
	assert_int_equal(decide_removed(&c, &t, &gone, &s), GUARD_DESTROY);
	c.only_cgroups = &only;
	c.n_only_cgroups = 1;
	/* No cgroup reported (not a full socket): not one of "only"'s. */
	assert_int_equal(decide_removed(&c, &t, &gone, &s), GUARD_KEEP_NOT_ONLY);
	s.has |= SDIAG_HAS_CGROUP;
	s.inet.cgroup_id = 7;
	assert_int_equal(decide_removed(&c, &t, &gone, &s), GUARD_DESTROY);
	s.inet.cgroup_id = 8;
	assert_int_equal(decide_removed(&c, &t, &gone, &s), GUARD_KEEP_NOT_ONLY);
	s.inet.cgroup_id = 9;
	c.exempt_cgroups = &ex;
	c.n_exempt_cgroups = 1;
	assert_int_equal(decide_removed(&c, &t, &gone, &s), GUARD_KEEP_CGROUP);
	s.inet.cgroup_id = 5;
	assert_int_equal(decide_removed(&c, &t, &gone, &s), GUARD_DESTROY);
	c.n_only_cgroups = 0;
	s.inet.cgroup_id = 8;
	assert_int_equal(decide_removed(&c, &t, &gone, &s), GUARD_DESTROY);
	assert_string_equal(guard_verdict_name(GUARD_KEEP_NOT_ONLY), "not in only-cgroup");
}

/* The cgroup config_cgroups_resolved makes: a name of this run's own (pid and
 * time), removed by its teardown even when a check failed. */
static char cg_dir[1200], cg_sub[1300];

static int cgroups_teardown(void **state)
{
	(void)state;
	if (cg_sub[0])
		rmdir(cg_sub);
	if (cg_dir[0])
		rmdir(cg_dir);
	return 0;
}

/* Units and subtrees resolve to every cgroup below; a service restarted into
 * a new cgroup (same name, new id) is followed by guard_config_resolve(). */
static void config_cgroups_resolved(void **state)
{
	char root[1024], name[64], text[512], err[256] = "";
	char *dir = cg_dir, *sub = cg_sub;
	struct timespec now;
	struct guard_config c;
	uint64_t old;

	(void)state;
	if (sdiag_cgroup_root(root, sizeof(root)) < 0)
		SDIAG_SKIP("cgroup2", "no cgroup2 mount");
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(name, sizeof(name), "sdt%dx%lxg.service", (int)getpid(), (unsigned long)now.tv_nsec);
	snprintf(cg_dir, sizeof(cg_dir), "%s/%s", root, name);
	snprintf(cg_sub, sizeof(cg_sub), "%s/sub", cg_dir);
	if (mkdir(dir, 0755) < 0)
		SDIAG_SKIP("cgroup2", "cannot create a test cgroup under %s", root);
	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(text, sizeof(text), "only-unit = %s\nexempt-cgroup = /%s/**\n", name, name);
	assert_int_equal(guard_config_parse(&c, text, err, sizeof(err)), 0);
	assert_int_equal(c.n_only_cgroups, 1);
	assert_int_equal(c.only_cgroups[0].n, 2);
	assert_int_equal(c.exempt_cgroups[0].n, 2);
	assert_int_equal(guard_config_resolve(&c), 0); /* nothing changed */
	old = c.only_cgroups[0].ids[0] < c.only_cgroups[0].ids[1] ? c.only_cgroups[0].ids[0] :
								     c.only_cgroups[0].ids[1];
	rmdir(sub);
	assert_int_equal(guard_config_resolve(&c), 2);
	assert_int_equal(c.only_cgroups[0].n, 1);
	rmdir(dir);
	assert_int_equal(guard_config_resolve(&c), 2);
	assert_int_equal(c.only_cgroups[0].n, 0); /* gone: stands for nothing */
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(guard_config_resolve(&c), 2);
	assert_int_equal(c.only_cgroups[0].n, 1);
	assert_true(c.only_cgroups[0].ids[0] != old);
	rmdir(dir);
	guard_config_fini(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(config_defaults),   cmocka_unit_test(config_full),
		cmocka_unit_test(config_errors),     cmocka_unit_test(config_lists),
		cmocka_unit_test(config_backends),   cmocka_unit_test(exempt_peer),
		cmocka_unit_test(policy_addr_removed),
		cmocka_unit_test(policy_link_local), cmocka_unit_test(policy_link_down),
		cmocka_unit_test(policy_exemptions),
		cmocka_unit_test(policy_cgroups),
		cmocka_unit_test_teardown(config_cgroups_resolved, cgroups_teardown),
	};

	return sdiag_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
