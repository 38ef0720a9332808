/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Live test, in a private network namespace: netlink_diag reports a socket
 * that is both bound and subscribed to groups twice (portid walk, then
 * multicast walk). First show that the raw kernel dump really holds it twice
 * (decoded with sd_netlink_decode over the library's own transport), then that
 * sdiag_dump/sdiag_collect report it once, with every group. Without the
 * first part a dedupe test would pass just as well on a kernel that never
 * duplicated anything.
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
#include <sys/socket.h>
#include <linux/netlink.h>

#include "lib/core/internal.h"
#include "lib/family/family.h"
#include "tests/live/live_util.h"
#include "tests/live/netns_util.h"

struct raw_count {
	uint64_t cookie;
	unsigned n;
};

static int raw_cb(const struct nlmsghdr *nlh, void *data)
{
	struct raw_count *c = data;
	struct sdiag_sock s;
	int r;

	memset(&s, 0, sizeof(s));
	r = sd_netlink_decode(nlh, &s);
	if (r < 0)
		return r;
	if (r > 0 && s.cookie == c->cookie)
		c->n++;
	return 0;
}

/* How often the kernel's own dump reports the socket with this cookie. */
static unsigned raw_reports(uint64_t cookie)
{
	struct raw_count c = { .cookie = cookie };
	struct sd_req req = { .family = AF_NETLINK,
			      .states = SDIAG_STATES_ALL,
			      .show = SDIAG_SHOW_ALL,
			      .tables = SDIAG_TABLE_BIT(SDIAG_T_NETLINK) };
	struct sd_nl *nl = NULL;

	assert_int_equal(sd_nl_open(&nl), 0);
	assert_non_null(sd_netlink_request(sd_nl_reqbuf(nl, NULL), &req));
	assert_int_equal(sd_nl_dump(nl, NULL, raw_cb, &c), 0);
	sd_nl_close(nl);
	return c.n;
}

static int count_cb(const struct sdiag_sock *s, void *data)
{
	struct raw_count *c = data;

	if ((s->has & SDIAG_HAS_COOKIE) && s->cookie == c->cookie)
		c->n++;
	return 0;
}

static bool in_group(const struct sdiag_sock *s, unsigned g)
{
	size_t w = (g - 1) / 32;

	return w < s->nl.n_group_words && (s->nl.groups[w] >> ((g - 1) % 32) & 1);
}

/* A route socket bound with groups 1 and 5 that joined one more: extra_group, or, when 0, the
 * highest of 35..33 the kernel has (*got: which; 0 for none). */
static int make_subscribed(unsigned extra_group, unsigned *got)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = 1u << 0 | 1u << 4 };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	if (!extra_group) {
		*got = rtnl_high_group(fd);
		return fd;
	}
	assert_int_equal(setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &extra_group,
				    sizeof(extra_group)),
			 0);
	return fd;
}

static void test_bound_and_subscribed_once(void **state)
{
	SDIAG_OPTS(sdiag_query, q,
			.tables = SDIAG_TABLE_BIT(SDIAG_T_NETLINK),
			.show = SDIAG_SHOW_ALL);
	struct sdiag_sock_list l = { 0 };
	struct sdiag_handle *h = NULL;
	struct raw_count c;
	const struct sdiag_sock *s;
	unsigned hi = 0;
	int fd, fd2;

	(void)state;
	/* fd beyond the first word (35, or 33 on 5.10: asked of the kernel), fd2 in the
	 * first word's last group (32, RTNLGRP_NEXTHOP), which fd must not show. */
	fd = make_subscribed(0, &hi);
	if (!hi) {
		close(fd);
		SDIAG_SKIP("rtnl-groups", "this kernel has no rtnetlink group above 32 "
			   "(EINVAL for 33 to 35; Linux 5.8 and later have RTNLGRP_BRVLAN, 33)");
	}
	fd2 = make_subscribed(32, NULL);
	c.cookie = fd_cookie(fd);

	if (raw_reports(c.cookie) != 2)
		SDIAG_SKIP("netlink-dup", "this kernel reports a bound and subscribed netlink "
			   "socket once: no duplicate to remove");
	assert_int_equal(raw_reports(fd_cookie(fd2)), 2);

	/* Streaming API: once. */
	c.n = 0;
	assert_int_equal(sdiag_open(&h), 0);
	assert_int_equal(sdiag_dump(h, &q, count_cb, NULL, &c), 0);
	assert_int_equal(c.n, 1);
	/* A second dump on the same handle starts with a fresh cookie set. */
	c.n = 0;
	assert_int_equal(sdiag_dump(h, &q, count_cb, NULL, &c), 0);
	assert_int_equal(c.n, 1);
	sdiag_close(h);

	/* Collector: once each, with every group. */
	collect_tables(&l, SDIAG_TABLE_BIT(SDIAG_T_NETLINK), SDIAG_SHOW_ALL);
	assert_int_equal(count_cookie(&l, fd_cookie(fd)), 1);
	assert_int_equal(count_cookie(&l, fd_cookie(fd2)), 1);
	s = find_cookie(&l, fd_cookie(fd));
	assert_non_null(s);
	assert_true(in_group(s, 1));
	assert_true(in_group(s, 5));
	assert_true(in_group(s, hi));
	assert_false(in_group(s, 32));
	assert_int_equal(s->inode, fd_inode(fd));
	sdiag_sock_list_free(&l);
	close(fd);
	close(fd2);
}

/* Bound without groups, and unbound with groups: each in one walk only. */
static void test_single_walk_sockets(void **state)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct sdiag_sock_list l = { 0 };
	const struct sdiag_sock *s;
	unsigned g = 3;
	int bound, member;

	(void)state;
	bound = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	member = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	assert_true(bound >= 0 && member >= 0);
	assert_int_equal(bind(bound, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(setsockopt(member, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &g, sizeof(g)), 0);
	assert_int_equal(raw_reports(fd_cookie(bound)), 1);
	assert_int_equal(raw_reports(fd_cookie(member)), 1);

	collect_tables(&l, SDIAG_TABLE_BIT(SDIAG_T_NETLINK), SDIAG_SHOW_ALL);
	assert_int_equal(count_cookie(&l, fd_cookie(bound)), 1);
	s = find_cookie(&l, fd_cookie(member));
	assert_non_null(s);
	assert_int_equal(count_cookie(&l, fd_cookie(member)), 1);
	assert_int_equal(s->nl.portid, 0);
	assert_true(in_group(s, 3));
	sdiag_sock_list_free(&l);
	close(bound);
	close(member);
}

static int setup(void **state)
{
	(void)state;
	netns_enter_private_or_skip();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_bound_and_subscribed_once, setup),
		cmocka_unit_test_setup(test_single_walk_sockets, setup),
	};

	return sdiag_test_status(cmocka_run_group_tests_name("netlink duplicates (live)", tests, NULL, NULL));
}
