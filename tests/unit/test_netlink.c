/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * AF_NETLINK decoder and request builder, offline.
 *
 * netlink-dump.bin was recorded by tests/fixtures/capture-netlink.sh in a
 * private netns holding (netlink-sockets.json): a route socket bound with
 * groups 1 and 5 that also joined 33 and 39 by NETLINK_ADD_MEMBERSHIP, an
 * unbound route socket that joined 3 and 36, a bound generic socket, and a
 * uevent socket connected to the kernel with PKTINFO and NO_ENOBUFS set. The
 * kernel's own sockets (portid 0) and capture's sock_diag socket are there too.
 * The raw dump holds the bound and subscribed route socket twice (the kernel
 * quirk dump.c removes; see the live test for that).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/test_skip.h"

#include <errno.h>
#include <sys/socket.h>
#include <linux/sock_diag.h>

#include "lib/family/family.h"
#include "tests/unit/fixture_util.h"
#include "tests/blob_util.h"

#define NL_ROUTE 0
#define NL_SOCK_DIAG 4
#define NL_UEVENT 15
#define NL_GENERIC 16

static struct fixture fx;

static int setup(void **state)
{
	(void)state;
	fixture_load(&fx, "netlink-dump.bin", sd_netlink_decode);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fixture_free(&fx);
	return 0;
}

static bool in_group(const struct sdiag_sock *s, unsigned g)
{
	size_t w = (g - 1) / 32;

	return w < s->nl.n_group_words && (s->nl.groups[w] >> ((g - 1) % 32) & 1);
}

static unsigned group_count(const struct sdiag_sock *s)
{
	unsigned n = 0;

	for (size_t w = 0; w < s->nl.n_group_words; w++)
		n += (unsigned)__builtin_popcount(s->nl.groups[w]);
	return n;
}

/* User sockets (portid != 0 or subscribed) of a protocol, with group g. */
static size_t find_user(uint16_t proto, bool bound, unsigned g, const struct sdiag_sock **ret)
{
	size_t n = 0;

	for (size_t i = 0; i < fx.n; i++) {
		const struct sdiag_sock *s = &fx.socks[i];

		if (s->protocol != proto || (s->nl.portid != 0) != bound)
			continue;
		if (g && !in_group(s, g))
			continue;
		if (!g && !bound)
			continue;
		*ret = s;
		n++;
	}
	return n;
}

static void test_every_record(void **state)
{
	(void)state;
	assert_true(fx.n >= 8);
	for (size_t i = 0; i < fx.n; i++) {
		const struct sdiag_sock *s = &fx.socks[i];

		assert_int_equal(s->table, SDIAG_T_NETLINK);
		assert_int_equal(s->family, AF_NETLINK);
		assert_true(s->type == SOCK_RAW || s->type == SOCK_DGRAM);
		assert_true(s->state == SDIAG_SS_CLOSE || s->state == SDIAG_SS_ESTABLISHED);
		assert_true(s->has & SDIAG_HAS_INODE);
		assert_true(s->has & SDIAG_HAS_COOKIE);
		assert_true(s->has & SDIAG_HAS_SKMEMINFO);
		assert_true(s->has & SDIAG_HAS_NL_FLAGS);
		assert_false(s->has & SDIAG_HAS_UID); /* netlink_diag has none */
		assert_true(t_skmem(s, SDIAG_SKMEM_RCVBUF) > 0);
		assert_int_equal(s->rqueue, t_skmem(s, SDIAG_SKMEM_RMEM_ALLOC));
	}
}

/* Groups 1, 5 (bind) and 33, 39 (second word): all there, nothing else. */
static void test_route_groups(void **state)
{
	const struct sdiag_sock *s = NULL, *first = NULL;
	size_t seen = 0;

	(void)state;
	for (size_t i = 0; i < fx.n; i++)
		if (fx.socks[i].protocol == NL_ROUTE && fx.socks[i].nl.portid &&
		    in_group(&fx.socks[i], 33)) {
			if (!first)
				first = &fx.socks[i];
			/* the kernel's double report: same socket, same bytes */
			assert_int_equal(fx.socks[i].cookie, first->cookie);
			assert_int_equal(fx.socks[i].inode, first->inode);
			seen++;
		}
	assert_int_equal(seen, 2);
	s = first;
	assert_int_equal(s->type, SOCK_RAW);
	assert_int_equal(s->state, SDIAG_SS_CLOSE);
	assert_true(s->has & SDIAG_HAS_GROUPS);
	assert_true(s->nl.n_group_words >= 2);
	assert_true(in_group(s, 1));
	assert_true(in_group(s, 5));
	assert_true(in_group(s, 33));
	assert_true(in_group(s, 39));
	assert_int_equal(group_count(s), 4);
	assert_int_equal(s->nl.dst_portid, 0);
	assert_int_equal(s->nl.dst_group, 0);
	assert_string_equal(sdiag_netlink_proto_name(s->protocol), "route");
}

/* Joined by setsockopt without bind: portid 0, still reported. */
static void test_unbound_member(void **state)
{
	const struct sdiag_sock *s = NULL;

	(void)state;
	assert_int_equal(find_user(NL_ROUTE, false, 36, &s), 1);
	assert_true(in_group(s, 3));
	assert_int_equal(group_count(s), 2);
	assert_int_equal(s->type, SOCK_RAW);
}

static void test_connected_flags(void **state)
{
	const struct sdiag_sock *s = NULL;

	(void)state;
	assert_int_equal(find_user(NL_UEVENT, true, 0, &s), 1);
	assert_int_equal(s->state, SDIAG_SS_ESTABLISHED);
	assert_int_equal(s->nl.dst_portid, 0);
	assert_int_equal(s->nl.flags, 0x2 | 0x8); /* PKTINFO, NO_ENOBUFS */
	assert_false(s->has & SDIAG_HAS_GROUPS);  /* never joined a group */
}

static void test_generic_and_kernel(void **state)
{
	const struct sdiag_sock *s = NULL;
	size_t kernel = 0, diag_running = 0;

	(void)state;
	assert_int_equal(find_user(NL_GENERIC, true, 0, &s), 1);
	assert_int_equal(s->type, SOCK_RAW);
	assert_int_equal(s->nl.flags, 0);
	assert_string_equal(sdiag_netlink_proto_name(s->protocol), "generic");
	for (size_t i = 0; i < fx.n; i++) {
		const struct sdiag_sock *k = &fx.socks[i];

		/* Kernel-side sockets: DGRAM, portid 0. */
		if (k->type == SOCK_DGRAM && k->nl.portid == 0)
			kernel++;
		/* capture's own socket, mid-dump */
		if (k->protocol == NL_SOCK_DIAG && k->nl.portid && (k->nl.flags & 0x1))
			diag_running++;
	}
	assert_true(kernel >= 4);
	assert_int_equal(diag_running, 1);
}

/* ---- constructed messages ------------------------------------------------------ */

struct nd_msg_bytes {
	uint8_t family, type, protocol, state;
	uint32_t portid, dst_portid, dst_group, ino, cookie[2];
};

static struct nlmsghdr *build(void *buf, uint8_t family, uint8_t state)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nd_msg_bytes *m;

	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	m = mnl_nlmsg_put_extra_header(nlh, sizeof(*m));
	m->family = family;
	m->type = SOCK_RAW;
	m->protocol = 12;
	m->state = state;
	m->portid = 1000;
	m->dst_portid = 2000;
	m->dst_group = 3;
	m->ino = 55;
	m->cookie[0] = 1;
	m->cookie[1] = 2;
	return nlh;
}

/* A protocol with 128 groups: the bitmap is four words; group 100 is in the last. */
static void test_wide_groups(void **state)
{
	uint8_t buf[512] __attribute__((aligned(8))) = { 0 };
	uint32_t bits[4] = { 0x1, 0, 0, 1u << (100 - 1 - 96) | 1u << 31 };
	struct nlmsghdr *nlh;
	struct sdiag_sock s;

	(void)state;
	nlh = build(buf, AF_NETLINK, 1);
	mnl_attr_put(nlh, 1, sizeof(bits), bits);
	assert_int_equal(decode_one(sd_netlink_decode, buf, &s), 1);
	assert_int_equal(s.nl.n_group_words, 4);
	assert_true(in_group(&s, 1));
	assert_true(in_group(&s, 100));
	assert_true(in_group(&s, 128));
	assert_false(in_group(&s, 99));
	assert_int_equal(group_count(&s), 3);
	assert_int_equal(s.protocol, 12);
	assert_int_equal(s.state, SDIAG_SS_ESTABLISHED);
	assert_int_equal(s.nl.portid, 1000);
	assert_int_equal(s.nl.dst_portid, 2000);
	assert_int_equal(s.nl.dst_group, 3);
	assert_int_equal(s.inode, 55);
	assert_int_equal(s.cookie, (2ULL << 32) | 1);
}

static void test_states(void **state)
{
	uint8_t buf[256] __attribute__((aligned(8))) = { 0 };
	struct sdiag_sock s;

	(void)state;
	build(buf, AF_NETLINK, 0); /* connected, then disconnected */
	assert_int_equal(decode_one(sd_netlink_decode, buf, &s), 1);
	assert_int_equal(s.state, SDIAG_SS_CLOSE);
	build(buf, AF_NETLINK, 7);
	assert_int_equal(decode_one(sd_netlink_decode, buf, &s), 1);
	assert_int_equal(s.state, SDIAG_SS_CLOSE);
	build(buf, AF_NETLINK, 1);
	assert_int_equal(decode_one(sd_netlink_decode, buf, &s), 1);
	assert_int_equal(s.state, SDIAG_SS_ESTABLISHED);
	build(buf, AF_NETLINK, 99);
	assert_int_equal(decode_one(sd_netlink_decode, buf, &s), 1);
	assert_int_equal(s.state, SDIAG_SS_UNKNOWN);
	build(buf, AF_UNIX, 7);
	assert_int_equal(decode_one(sd_netlink_decode, buf, &s), 0);
}

static void test_attrs_and_malformed(void **state)
{
	uint8_t buf[512] __attribute__((aligned(8))) = { 0 };
	uint32_t mem[10] = { 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 }; /* a newer, longer one */
	struct nlmsghdr *nlh;
	struct sdiag_sock s;

	(void)state;
	nlh = build(buf, AF_NETLINK, 7);
	mnl_attr_put(nlh, 2, 16, mem); /* dead RX_RING: ignored */
	mnl_attr_put(nlh, 9, 4, mem);  /* unknown: skipped */
	mnl_attr_put(nlh, 0, sizeof(mem), mem);
	mnl_attr_put_u32(nlh, 4, 0x20);
	assert_int_equal(decode_one(sd_netlink_decode, buf, &s), 1);
	assert_int_equal(t_skmem(&s, SDIAG_SKMEM_DROPS), 15);
	assert_int_equal(s.rqueue, 7);
	assert_int_equal(s.wqueue, 9);
	assert_int_equal(s.nl.flags, 0x20);
	assert_false(s.has & SDIAG_HAS_GROUPS);

	nlh = build(buf, AF_NETLINK, 7);
	mnl_attr_put(nlh, 4, 2, mem); /* FLAGS too short */
	assert_int_equal(decode_one(sd_netlink_decode, buf, &s), -EBADMSG);

	nlh = build(buf, AF_NETLINK, 7);
	mnl_attr_put_u32(nlh, 4, 1);
	nlh->nlmsg_len -= 2; /* attribute cut short */
	assert_int_equal(decode_one(sd_netlink_decode, buf, &s), -EBADMSG);

	nlh = build(buf, AF_NETLINK, 7);
	nlh->nlmsg_len = NLMSG_HDRLEN + 27; /* fixed header cut short */
	assert_int_equal(decode_one(sd_netlink_decode, buf, &s), -EBADMSG);
}

static void test_request(void **state)
{
	uint8_t buf[256] __attribute__((aligned(8)));
	struct sd_req r = { .family = AF_NETLINK, .states = 1u << 7 };
	const struct nlmsghdr *nlh;
	const uint8_t *p;
	uint32_t v;

	(void)state;
	memset(buf, 0xaa, sizeof(buf));
	nlh = sd_netlink_request(buf, &r);
	assert_int_equal(nlh->nlmsg_type, SOCK_DIAG_BY_FAMILY);
	assert_int_equal(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_DUMP);
	assert_int_equal(nlh->nlmsg_len, NLMSG_HDRLEN + 20);
	p = mnl_nlmsg_get_payload(nlh);
	assert_int_equal(p[0], AF_NETLINK);
	assert_int_equal(p[1], 255); /* NDIAG_PROTO_ALL */
	memcpy(&v, p + 8, 4);
	assert_int_equal(v, 0x1 | 0x2 | 0x8); /* MEMINFO GROUPS FLAGS */
}

int main(void)
{
	const struct CMUnitTest fixture_tests[] = {
		cmocka_unit_test(test_every_record),	   cmocka_unit_test(test_route_groups),
		cmocka_unit_test(test_unbound_member),	   cmocka_unit_test(test_connected_flags),
		cmocka_unit_test(test_generic_and_kernel),
	};
	const struct CMUnitTest built_tests[] = {
		cmocka_unit_test(test_wide_groups),
		cmocka_unit_test(test_states),
		cmocka_unit_test(test_attrs_and_malformed),
		cmocka_unit_test(test_request),
	};
	int r;

	r = cmocka_run_group_tests_name("netlink fixture", fixture_tests, setup, teardown);
	r += cmocka_run_group_tests_name("netlink constructed", built_tests, NULL, NULL);
	return sdiag_test_status(r);
}
