/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The guard's view (daemon/guard/core/view.c): rtnetlink messages parsed into the
 * table, the resync's difference, and the verdict over pending events judged
 * against the view after them. Messages are built here byte by byte; each
 * one that ends a buffer is malloc'd to its exact length, so an over-read
 * is an ASan error (make asan).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <net/if.h>
#include <cmocka.h>
#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include "daemon/guard/guard.h"
#include "daemon/guard/rtnl.h"

#define UPFLAGS (IFF_UP | 0x10000 /* IFF_LOWER_UP */)

static uint8_t buf[4096] __attribute__((aligned(8)));

static struct nlmsghdr *addr_msg(uint16_t type, int ifindex, const char *a, uint8_t plen)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifaddrmsg *ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	uint8_t bin[16];

	nlh->nlmsg_type = type;
	ifa->ifa_family = strchr(a, ':') ? AF_INET6 : AF_INET;
	ifa->ifa_prefixlen = plen;
	ifa->ifa_index = (uint32_t)ifindex;
	inet_pton(ifa->ifa_family, a, bin);
	mnl_attr_put(nlh, IFA_ADDRESS, ifa->ifa_family == AF_INET ? 4 : 16, bin);
	return nlh;
}

static struct nlmsghdr *link_msg(uint16_t type, int ifindex, const char *name, unsigned flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));

	nlh->nlmsg_type = type;
	ifi->ifi_index = ifindex;
	ifi->ifi_flags = flags;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	return nlh;
}

static void apply(struct guard_table *t, struct guard_pending *p, const struct nlmsghdr *nlh)
{
	assert_int_equal(guard_view_apply(t, p, nlh), 0);
}

static struct sdiag_sock tcp_from(const char *src)
{
	struct sdiag_sock s = { .table = SDIAG_T_TCP, .family = AF_INET,
				.state = SDIAG_SS_ESTABLISHED };

	inet_pton(AF_INET, src, s.inet.src);
	inet_pton(AF_INET, "10.255.0.1", s.inet.dst);
	return s;
}

/* Links 2 (vb) and 3 (d1) up; 10.9.1.5 on vb. */
static void base_view(struct guard_table *t)
{
	struct guard_pending p = { 0 };

	apply(t, &p, link_msg(RTM_NEWLINK, 2, "vb", UPFLAGS));
	apply(t, &p, link_msg(RTM_NEWLINK, 3, "d1", UPFLAGS));
	apply(t, &p, addr_msg(RTM_NEWADDR, 2, "10.9.1.5", 32));
	assert_int_equal(p.n, 0);
	guard_pending_fini(&p);
}

/* A removal and the address back in one batch: nothing stranded. */
static void removed_and_back(void **state)
{
	struct guard_config c;
	struct guard_table t = { 0 };
	struct guard_pending p = { 0 };
	struct sdiag_sock s = tcp_from("10.9.1.5");

	(void)state;
	guard_config_init(&c);
	base_view(&t);
	apply(&t, &p, addr_msg(RTM_DELADDR, 2, "10.9.1.5", 32));
	assert_int_equal(p.n, 1);
	assert_int_equal(guard_decide_all(&c, &t, &p, &s), GUARD_DESTROY);
	apply(&t, &p, addr_msg(RTM_NEWADDR, 2, "10.9.1.5", 32));
	assert_int_equal(guard_decide_all(&c, &t, &p, &s), GUARD_KEEP_STILL_ASSIGNED);
	assert_string_equal(p.what, "address 10.9.1.5/32 removed from vb");
	guard_pending_fini(&p);
	guard_table_fini(&t);
	guard_config_fini(&c);
}

/* The resync: only what the dump no longer has is pending, judged against
 * the dump. The view before (old) may hold an address the dump lacks. */
static void resync_diff(void **state)
{
	struct guard_config c;
	struct guard_table old = { 0 }, now = { 0 };
	struct guard_pending p = { 0 }, none = { 0 };
	struct sdiag_sock s5 = tcp_from("10.9.1.5"), s6 = tcp_from("10.9.1.6");

	(void)state;
	guard_config_init(&c);
	base_view(&old);
	apply(&old, &none, addr_msg(RTM_NEWADDR, 2, "10.9.1.6", 32));
	apply(&old, &none, addr_msg(RTM_NEWADDR, 3, "10.9.1.6", 32));
	base_view(&now);
	apply(&now, &none, addr_msg(RTM_NEWADDR, 2, "10.9.1.6", 32));
	/* Identical views: nothing pending, nothing destroyed. */
	assert_int_equal(guard_view_diff(&now, &now, &p), 0);
	assert_int_equal(p.n, 0);
	/* 10.9.1.6 left d1 and is still on vb: pending, but kept. */
	assert_int_equal(guard_view_diff(&old, &now, &p), 0);
	assert_int_equal(p.n, 1);
	assert_int_equal(guard_decide_all(&c, &now, &p, &s6), GUARD_KEEP_STILL_ASSIGNED);
	assert_int_equal(guard_decide_all(&c, &now, &p, &s5), GUARD_KEEP_UNRELATED);
	guard_pending_clear(&p);
	/* Gone from vb too: destroyed, though the old view had it on d1. */
	guard_table_del_addr(&now, &(struct guard_addr){ .ifindex = 2, .family = AF_INET,
							 .prefixlen = 32,
							 .addr = { 10, 9, 1, 6 } });
	assert_int_equal(guard_view_diff(&old, &now, &p), 0);
	assert_int_equal(p.n, 2);
	assert_int_equal(guard_decide_all(&c, &now, &p, &s6), GUARD_DESTROY);
	assert_int_equal(guard_decide_all(&c, &now, &p, &s5), GUARD_KEEP_UNRELATED);
	guard_pending_fini(&p);
	guard_pending_fini(&none);
	guard_table_fini(&old);
	guard_table_fini(&now);
	guard_config_fini(&c);
}

/* An address left only on a down link strands its sockets. */
static void down_link_does_not_hold(void **state)
{
	struct guard_config c;
	struct guard_table t = { 0 };
	struct guard_pending p = { 0 };
	struct sdiag_sock s = tcp_from("10.9.1.5");

	(void)state;
	guard_config_init(&c);
	base_view(&t);
	apply(&t, &p, addr_msg(RTM_NEWADDR, 3, "10.9.1.5", 32));
	apply(&t, &p, link_msg(RTM_NEWLINK, 2, "vb", 0));	/* vb down */
	assert_int_equal(p.n, 1);
	assert_int_equal(guard_decide_all(&c, &t, &p, &s), GUARD_KEEP_STILL_ASSIGNED);
	apply(&t, &p, link_msg(RTM_NEWLINK, 3, "d1", IFF_UP));	/* d1 lost carrier */
	assert_int_equal(p.n, 2);
	assert_int_equal(guard_decide_all(&c, &t, &p, &s), GUARD_DESTROY);
	guard_pending_fini(&p);
	guard_table_fini(&t);
	guard_config_fini(&c);
}

/* Just before destroying, the view with the events read after the socket
 * dump: what came back on its own interface strands nothing any more. */
static void recheck_after_dump(void **state)
{
	struct guard_config c;
	struct guard_table t = { 0 };
	struct guard_pending p = { 0 }, later = { 0 };
	struct sdiag_sock s = tcp_from("10.9.1.5"), ll = tcp_from("10.9.1.5");

	(void)state;
	guard_config_init(&c);
	base_view(&t);
	/* Removed, then added back while the dump ran. */
	apply(&t, &p, addr_msg(RTM_DELADDR, 2, "10.9.1.5", 32));
	assert_int_equal(guard_decide_all(&c, &t, &p, &s), GUARD_DESTROY);
	assert_int_equal(guard_recheck(&c, &t, &p, &s), GUARD_DESTROY);
	apply(&t, &later, addr_msg(RTM_NEWADDR, 2, "10.9.1.5", 32));
	assert_int_equal(guard_recheck(&c, &t, &p, &s), GUARD_KEEP_CAME_BACK);
	/* Added back on another link instead: kept too, as moved. */
	apply(&t, &later, addr_msg(RTM_DELADDR, 2, "10.9.1.5", 32));
	apply(&t, &later, addr_msg(RTM_NEWADDR, 3, "10.9.1.5", 32));
	assert_int_equal(guard_recheck(&c, &t, &p, &s), GUARD_KEEP_STILL_ASSIGNED);
	/* Another address added meanwhile: still stranded. */
	apply(&t, &later, addr_msg(RTM_DELADDR, 3, "10.9.1.5", 32));
	apply(&t, &later, addr_msg(RTM_NEWADDR, 2, "10.9.1.6", 32));
	assert_int_equal(guard_recheck(&c, &t, &p, &s), GUARD_DESTROY);
	guard_pending_clear(&p);
	/* A link down, then up again: kept; but an address it lost while down
	 * (its own event) still strands. */
	apply(&t, &later, addr_msg(RTM_NEWADDR, 2, "10.9.1.5", 32));
	apply(&t, &p, link_msg(RTM_NEWLINK, 2, "vb", 0));
	assert_int_equal(guard_decide_all(&c, &t, &p, &s), GUARD_DESTROY);
	apply(&t, &later, link_msg(RTM_NEWLINK, 2, "vb", UPFLAGS));
	assert_int_equal(guard_recheck(&c, &t, &p, &s), GUARD_KEEP_CAME_BACK);
	apply(&t, &p, addr_msg(RTM_DELADDR, 2, "10.9.1.5", 32));
	assert_int_equal(guard_recheck(&c, &t, &p, &s), GUARD_DESTROY);
	guard_pending_clear(&p);
	/* A link-local address is never "moved", but back on its link it is back. */
	ll.family = AF_INET6;
	memset(ll.inet.src, 0, sizeof(ll.inet.src));
	inet_pton(AF_INET6, "fe80::1", ll.inet.src);
	inet_pton(AF_INET6, "fe80::2", ll.inet.dst);
	ll.inet.ifindex = 2;
	apply(&t, &later, addr_msg(RTM_NEWADDR, 2, "fe80::1", 64));
	apply(&t, &p, addr_msg(RTM_DELADDR, 2, "fe80::1", 64));
	apply(&t, &later, addr_msg(RTM_NEWADDR, 2, "fe80::1", 64));
	assert_int_equal(guard_decide_all(&c, &t, &p, &ll), GUARD_DESTROY);
	assert_int_equal(guard_recheck(&c, &t, &p, &ll), GUARD_KEEP_CAME_BACK);
	assert_string_equal(guard_verdict_name(GUARD_KEEP_CAME_BACK), "came-back");
	guard_pending_fini(&p);
	guard_pending_fini(&later);
	guard_table_fini(&t);
	guard_config_fini(&c);
}

/* A copy of the message just built, in a buffer of exactly len bytes. */
static struct nlmsghdr *exact(size_t len)
{
	struct nlmsghdr *m = malloc(len);

	assert_non_null(m);
	memcpy(m, buf, len);
	m->nlmsg_len = (uint32_t)len;
	return m;
}

/* A final message whose length is not a multiple of four ends inside the
 * address attribute: refused, and nothing past its end is read. */
static void parse_unaligned_end(void **state)
{
	struct guard_addr a;
	struct nlmsghdr *m;

	(void)state;
	addr_msg(RTM_NEWADDR, 2, "fd00::1", 64);
	for (size_t cut = 1; cut <= 3; cut++) {
		m = exact(MNL_NLMSG_HDRLEN + sizeof(struct ifaddrmsg) + 4 + 16 - cut);
		assert_int_equal(grtnl_parse_addr(m, &a), -EBADMSG);
		free(m);
	}
	m = exact(((struct nlmsghdr *)buf)->nlmsg_len);
	assert_int_equal(grtnl_parse_addr(m, &a), 0);
	assert_int_equal(a.ifindex, 2);
	assert_int_equal(a.addr[0], 0xfd);
	assert_int_equal(a.addr[15], 1);
	free(m);
	/* Shorter than the ifaddrmsg. */
	m = exact(NLMSG_HDRLEN + 4);
	assert_int_equal(grtnl_parse_addr(m, &a), -EBADMSG);
	free(m);
}

/* IFLA_IFNAME without its NUL: cut at the attribute's end. */
static void parse_name_without_nul(void **state)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	struct guard_link l;
	struct nlmsghdr *m;

	(void)state;
	nlh->nlmsg_type = RTM_NEWLINK;
	ifi->ifi_index = 7;
	mnl_attr_put(nlh, IFLA_IFNAME, 4, "eth0");	/* no NUL, ends the message */
	m = exact(nlh->nlmsg_len);
	assert_int_equal(grtnl_parse_link(m, &l), 0);
	assert_string_equal(l.name, "eth0");
	free(m);
	nlh = mnl_nlmsg_put_header(buf);
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	mnl_attr_put(nlh, IFLA_IFNAME, 21, "abcdefghijklmnopqrstu");
	m = exact(nlh->nlmsg_len);
	assert_int_equal(grtnl_parse_link(m, &l), 0);
	assert_string_equal(l.name, "abcdefghijklmno");
	free(m);
}

/* A control character in a link's name never reaches a log line. */
static void name_in_log_is_printable(void **state)
{
	struct guard_table t = { 0 };
	struct guard_pending p = { 0 };

	(void)state;
	apply(&t, &p, link_msg(RTM_NEWLINK, 4, "x\033[2J", UPFLAGS));
	apply(&t, &p, addr_msg(RTM_NEWADDR, 4, "10.1.1.1", 24));
	apply(&t, &p, addr_msg(RTM_DELADDR, 4, "10.1.1.1", 24));
	assert_string_equal(p.what, "address 10.1.1.1/24 removed from if4");
	guard_pending_fini(&p);
	guard_table_fini(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(removed_and_back),
		cmocka_unit_test(resync_diff),
		cmocka_unit_test(down_link_does_not_hold),
		cmocka_unit_test(recheck_after_dump),
		cmocka_unit_test(parse_unaligned_end),
		cmocka_unit_test(parse_name_without_nul),
		cmocka_unit_test(name_in_log_is_printable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
