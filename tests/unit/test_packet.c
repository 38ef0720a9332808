/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * AF_PACKET decoder and request builder, offline.
 *
 * packet-dump.bin was recorded by tests/fixtures/capture-packet.sh (as root,
 * so the filter program is visible) in a private netns holding
 * (packet-sockets.json): a SOCK_RAW socket bound to ETH_P_ALL on lo, in
 * fanout group 7 (hash), with PACKET_MR_PROMISC membership and a 4-instruction
 * classic BPF filter; and a SOCK_DGRAM socket for ETH_P_IP, not bound to a
 * device, with a TPACKET_V3 rx ring (2 blocks of 64 KiB, 2 KiB frames,
 * retire timeout 60 ms).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/test_skip.h"

#include <errno.h>
#include <sys/socket.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/sock_diag.h>

#include "lib/family/family.h"
#include "tests/unit/fixture_util.h"
#include "tests/blob_util.h"

static struct fixture fx;

static int setup(void **state)
{
	(void)state;
	fixture_load(&fx, "packet-dump.bin", sd_packet_decode);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fixture_free(&fx);
	return 0;
}

static const struct sdiag_sock *find_table(enum sdiag_table t)
{
	const struct sdiag_sock *found = NULL;

	for (size_t i = 0; i < fx.n; i++)
		if (fx.socks[i].table == t) {
			assert_null(found);
			found = &fx.socks[i];
		}
	assert_non_null(found);
	return found;
}

static void test_every_record(void **state)
{
	const uint64_t need = SDIAG_HAS_INODE | SDIAG_HAS_COOKIE | SDIAG_HAS_UID |
			      SDIAG_HAS_PKT_INFO | SDIAG_HAS_MCLIST | SDIAG_HAS_SKMEMINFO |
			      SDIAG_HAS_QUEUES;

	(void)state;
	assert_int_equal(fx.n, 2);
	for (size_t i = 0; i < fx.n; i++) {
		const struct sdiag_sock *s = &fx.socks[i];

		assert_int_equal(s->family, AF_PACKET);
		assert_int_equal(s->state, SDIAG_SS_CLOSE);
		assert_int_equal(s->has & need, need);
		assert_int_equal(s->uid, 0);
		assert_int_equal(s->protocol, s->pkt.ethertype);
		assert_true(t_skmem(s, SDIAG_SKMEM_RCVBUF) > 0);
	}
}

static void test_raw_fanout_filter(void **state)
{
	const struct sdiag_sock *s;
	const struct sock_filter *f;

	(void)state;
	s = find_table(SDIAG_T_PACKET_RAW);
	assert_int_equal(s->type, SOCK_RAW);
	assert_int_equal(s->pkt.ethertype, ETH_P_ALL);
	assert_int_equal(s->pkt.info.index, 1); /* lo */
	assert_int_equal(s->pkt.info.version, TPACKET_V1);
	assert_true(s->pkt.info.flags & 0x1); /* PDI_RUNNING */

	assert_true(s->has & SDIAG_HAS_FANOUT);
	assert_int_equal(s->pkt.fanout & 0xffff, 7);
	assert_int_equal(s->pkt.fanout >> 16, PACKET_FANOUT_HASH);

	assert_int_equal(s->pkt.n_mclist, 1);
	assert_int_equal(s->pkt.mclist[0].index, 1);
	assert_int_equal(s->pkt.mclist[0].type, PACKET_MR_PROMISC);
	assert_int_equal(s->pkt.mclist[0].count, 1);
	assert_int_equal(s->pkt.mclist[0].alen, 0);

	assert_true(s->has & SDIAG_HAS_FILTER);
	assert_int_equal(s->pkt.n_filter, 4);
	f = s->pkt.filter;
	assert_int_equal(f[0].code, BPF_LD | BPF_H | BPF_ABS);
	assert_int_equal(f[0].k, 12);
	assert_int_equal(f[1].code, BPF_JMP | BPF_JEQ | BPF_K);
	assert_int_equal(f[1].k, ETH_P_IP);
	assert_int_equal(f[1].jt, 0);
	assert_int_equal(f[1].jf, 1);
	assert_int_equal(f[2].k, 0xffff);
	assert_int_equal(f[3].code, BPF_RET | BPF_K);
	assert_int_equal(f[3].k, 0);

	assert_false(s->has & (SDIAG_HAS_RX_RING | SDIAG_HAS_TX_RING));
}

static void test_dgram_ring(void **state)
{
	const struct sdiag_sock *s;

	(void)state;
	s = find_table(SDIAG_T_PACKET_DGRAM);
	assert_int_equal(s->type, SOCK_DGRAM);
	assert_int_equal(s->pkt.ethertype, ETH_P_IP);
	assert_int_equal(s->pkt.info.index, 0);
	assert_int_equal(s->pkt.info.version, TPACKET_V3);
	assert_true(s->has & SDIAG_HAS_RX_RING);
	assert_false(s->has & SDIAG_HAS_TX_RING);
	assert_int_equal(s->pkt.rx_ring.block_size, 65536);
	assert_int_equal(s->pkt.rx_ring.block_nr, 2);
	assert_int_equal(s->pkt.rx_ring.frame_size, 2048);
	assert_int_equal(s->pkt.rx_ring.frame_nr, 64);
	assert_int_equal(s->pkt.rx_ring.retire_tmo, 60);
	/* The mclist nest is sent even when empty. */
	assert_true(s->has & SDIAG_HAS_MCLIST);
	assert_int_equal(s->pkt.n_mclist, 0);
	assert_false(s->has & (SDIAG_HAS_FANOUT | SDIAG_HAS_FILTER));
}

/* A deep copy owns its mclist and filter. */
static void test_dup(void **state)
{
	const struct sdiag_sock *s;
	struct sdiag_sock *c;

	(void)state;
	s = find_table(SDIAG_T_PACKET_RAW);
	c = sdiag_sock_dup(s);
	assert_non_null(c);
	assert_ptr_not_equal(c->pkt.filter, s->pkt.filter);
	assert_memory_equal(c->pkt.filter, s->pkt.filter, 4 * 8);
	assert_ptr_not_equal(c->pkt.mclist, s->pkt.mclist);
	assert_int_equal(c->pkt.mclist[0].type, PACKET_MR_PROMISC);
	free(c);
}

/* ---- constructed messages ------------------------------------------------------ */

struct pd_msg_bytes {
	uint8_t family, type;
	uint16_t num;
	uint32_t ino, cookie[2];
};

static struct nlmsghdr *build(void *buf, uint8_t family, uint8_t type)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct pd_msg_bytes *m;

	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	m = mnl_nlmsg_put_extra_header(nlh, sizeof(*m));
	m->family = family;
	m->type = type;
	m->num = 0x86dd;
	m->ino = 9;
	m->cookie[0] = 10;
	return nlh;
}

static void test_constructed(void **state)
{
	uint8_t buf[1024] __attribute__((aligned(8))) = { 0 };
	struct sdiag_packet_mclist mc[2] = {
		{ .index = 2,
		  .count = 1,
		  .type = PACKET_MR_MULTICAST,
		  .alen = 6,
		  .addr = { 0x01, 0x00, 0x5e, 0, 0, 1 } },
		{ .index = 3, .count = 2, .type = PACKET_MR_ALLMULTI },
	};
	uint32_t info[4] = { 5, TPACKET_V2, 64, 0 }; /* shorter than ours: tail zeroed */
	struct nlmsghdr *nlh;
	struct nlattr *nest;
	struct sdiag_sock s;

	(void)state;
	nlh = build(buf, AF_PACKET, SOCK_DGRAM);
	mnl_attr_put(nlh, 0, sizeof(info), info);
	nest = mnl_attr_nest_start(nlh, 1);
	memcpy(mnl_nlmsg_get_payload_tail(nlh), mc, sizeof(mc));
	nlh->nlmsg_len += sizeof(mc);
	mnl_attr_nest_end(nlh, nest);
	mnl_attr_put(nlh, 7, 0, NULL); /* filter hidden (no CAP_NET_ADMIN) */
	mnl_attr_put_u32(nlh, 99, 1);  /* unknown: skipped */
	mnl_attr_put_u32(nlh, 5, 1234);
	assert_int_equal(decode_one(sd_packet_decode, buf, &s), 1);
	assert_int_equal(s.table, SDIAG_T_PACKET_DGRAM);
	assert_int_equal(s.pkt.ethertype, 0x86dd);
	assert_int_equal(s.inode, 9);
	assert_int_equal(s.cookie, 10);
	assert_int_equal(s.pkt.info.index, 5);
	assert_int_equal(s.pkt.info.version, TPACKET_V2);
	assert_int_equal(s.pkt.info.reserve, 64);
	assert_int_equal(s.pkt.info.flags, 0);
	assert_int_equal(s.pkt.n_mclist, 2);
	assert_int_equal(s.pkt.mclist[0].alen, 6);
	assert_int_equal(s.pkt.mclist[0].addr[5], 1);
	assert_int_equal(s.pkt.mclist[1].index, 3);
	assert_int_equal(s.pkt.mclist[1].count, 2);
	assert_true(s.has & SDIAG_HAS_FILTER);
	assert_int_equal(s.pkt.n_filter, 0);
	assert_null(s.pkt.filter);
	assert_int_equal(s.uid, 1234);
	assert_false(s.has & SDIAG_HAS_SKMEMINFO);

	/* Not ours. */
	build(buf, AF_PACKET, SOCK_STREAM);
	assert_int_equal(decode_one(sd_packet_decode, buf, &s), 0);
	build(buf, AF_NETLINK, SOCK_RAW);
	assert_int_equal(decode_one(sd_packet_decode, buf, &s), 0);
}

static void test_malformed(void **state)
{
	uint8_t buf[512] __attribute__((aligned(8))) = { 0 };
	struct nlmsghdr *nlh;
	struct nlattr *a;
	struct sdiag_sock s;

	(void)state;
	nlh = build(buf, AF_PACKET, SOCK_RAW);
	mnl_attr_put(nlh, 4, 3, "abc"); /* FANOUT too short */
	assert_int_equal(decode_one(sd_packet_decode, buf, &s), -EBADMSG);

	nlh = build(buf, AF_PACKET, SOCK_RAW);
	mnl_attr_put(nlh, 5, 1, "a"); /* UID too short */
	assert_int_equal(decode_one(sd_packet_decode, buf, &s), -EBADMSG);

	nlh = build(buf, AF_PACKET, SOCK_RAW);
	a = mnl_nlmsg_get_payload_tail(nlh);
	mnl_attr_put_u32(nlh, 5, 1);
	a->nla_len = 0xffff; /* beyond the message */
	assert_int_equal(decode_one(sd_packet_decode, buf, &s), -EBADMSG);

	nlh = build(buf, AF_PACKET, SOCK_RAW);
	nlh->nlmsg_len = NLMSG_HDRLEN + 8;
	assert_int_equal(decode_one(sd_packet_decode, buf, &s), -EBADMSG);
}

static void test_request(void **state)
{
	uint8_t buf[256] __attribute__((aligned(8)));
	struct sd_req r = { .family = AF_PACKET, .states = SDIAG_STATES_ALL, .show = 0 };
	const struct nlmsghdr *nlh;
	const uint8_t *p;
	uint32_t v;

	(void)state;
	memset(buf, 0xaa, sizeof(buf));
	nlh = sd_packet_request(buf, &r);
	assert_int_equal(nlh->nlmsg_type, SOCK_DIAG_BY_FAMILY);
	assert_int_equal(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_DUMP);
	assert_int_equal(nlh->nlmsg_len, NLMSG_HDRLEN + 20);
	p = mnl_nlmsg_get_payload(nlh);
	assert_int_equal(p[0], AF_PACKET);
	assert_int_equal(p[1], 0); /* anything else is EINVAL */
	memcpy(&v, p + 8, 4);
	assert_int_equal(v, 0x3f);
}

int main(void)
{
	const struct CMUnitTest fixture_tests[] = {
		cmocka_unit_test(test_every_record),
		cmocka_unit_test(test_raw_fanout_filter),
		cmocka_unit_test(test_dgram_ring),
		cmocka_unit_test(test_dup),
	};
	const struct CMUnitTest built_tests[] = {
		cmocka_unit_test(test_constructed),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_request),
	};
	int r;

	r = cmocka_run_group_tests_name("packet fixture", fixture_tests, setup, teardown);
	r += cmocka_run_group_tests_name("packet constructed", built_tests, NULL, NULL);
	return sdiag_test_status(r);
}
