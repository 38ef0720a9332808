/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * AF_VSOCK, AF_XDP and AF_TIPC decoders and request builders, offline.
 *
 * The kernel here is built without VSOCKETS_DIAG, XDP_SOCKETS_DIAG and TIPC
 * (their dumps fail with ENOENT), so nothing could be captured: every reply
 * below is constructed in the test from the documented layouts
 * (include/uapi/linux/vm_sockets_diag.h, xdp_diag.h, tipc_netlink.h and
 * tipc_sk_fill_sock_diag() in net/tipc/socket.c). Every field and attribute
 * number the builders use is asserted against the installed uapi headers
 * (offsetof/sizeof), so the bytes are the kernel's layout, not our idea of it.
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

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef AF_TIPC
#define AF_TIPC 30
#endif

static struct nlmsghdr *start(void *buf, size_t size)
{
	struct nlmsghdr *nlh;

	memset(buf, 0, size);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_MULTI;
	return nlh;
}

static uint32_t req_u32(const struct nlmsghdr *nlh, size_t off)
{
	uint32_t v;

	memcpy(&v, (const uint8_t *)mnl_nlmsg_get_payload(nlh) + off, 4);
	return v;
}

/* ---- vsock ---------------------------------------------------------------------------- */

struct vd_msg_bytes {
	uint8_t family, type, state, shutdown;
	uint32_t src_cid, src_port, dst_cid, dst_port, ino, cookie[2];
};

static struct nlmsghdr *vsock_msg(void *buf, size_t size, uint8_t type, uint8_t st)
{
	struct nlmsghdr *nlh = start(buf, size);
	struct vd_msg_bytes *m = mnl_nlmsg_put_extra_header(nlh, sizeof(*m));

	m->family = AF_VSOCK;
	m->type = type;
	m->state = st;
	m->shutdown = 2;
	m->src_cid = 3;
	m->src_port = 1024;
	m->dst_cid = 2;
	m->dst_port = 5000;
	m->ino = 321;
	m->cookie[0] = 0xdead;
	m->cookie[1] = 0xbeef;
	return nlh;
}

static void test_vsock(void **state)
{
	uint8_t buf[256] __attribute__((aligned(8)));
	struct nlmsghdr *nlh;
	struct sdiag_sock s;

	(void)state;
	vsock_msg(buf, sizeof(buf), SOCK_STREAM, SDIAG_SS_ESTABLISHED);
	assert_int_equal(decode_one(sd_vsock_decode, buf, &s), 1);
	assert_int_equal(s.table, SDIAG_T_VSOCK_STREAM);
	assert_int_equal(s.family, AF_VSOCK);
	assert_int_equal(s.state, SDIAG_SS_ESTABLISHED);
	assert_int_equal(s.shutdown, 2);
	assert_int_equal(s.vsock.src_cid, 3);
	assert_int_equal(s.vsock.src_port, 1024);
	assert_int_equal(s.vsock.dst_cid, 2);
	assert_int_equal(s.vsock.dst_port, 5000);
	assert_int_equal(s.inode, 321);
	assert_int_equal(s.cookie, (0xbeefULL << 32) | 0xdead);
	assert_int_equal(s.has, SDIAG_HAS_INODE | SDIAG_HAS_COOKIE | SDIAG_HAS_SHUTDOWN);

	vsock_msg(buf, sizeof(buf), SOCK_DGRAM, SDIAG_SS_CLOSE);
	assert_int_equal(decode_one(sd_vsock_decode, buf, &s), 1);
	assert_int_equal(s.table, SDIAG_T_VSOCK_DGRAM);
	vsock_msg(buf, sizeof(buf), SOCK_SEQPACKET, SDIAG_SS_LISTEN);
	assert_int_equal(decode_one(sd_vsock_decode, buf, &s), 1);
	assert_int_equal(s.table, SDIAG_T_VSOCK_SEQPACKET);
	assert_int_equal(s.state, SDIAG_SS_LISTEN);

	vsock_msg(buf, sizeof(buf), SOCK_RAW, SDIAG_SS_CLOSE);
	assert_int_equal(decode_one(sd_vsock_decode, buf, &s), 0);
	nlh = vsock_msg(buf, sizeof(buf), SOCK_STREAM, SDIAG_SS_CLOSE);
	nlh->nlmsg_len -= 4;
	assert_int_equal(decode_one(sd_vsock_decode, buf, &s), -EBADMSG);
}

static void test_vsock_request(void **state)
{
	uint8_t buf[128] __attribute__((aligned(8)));
	struct sd_req r = { .family = AF_VSOCK, .states = 0x482 };
	const struct nlmsghdr *nlh;

	(void)state;
	memset(buf, 0xaa, sizeof(buf));
	nlh = sd_vsock_request(buf, &r);
	assert_int_equal(nlh->nlmsg_type, SOCK_DIAG_BY_FAMILY);
	assert_int_equal(nlh->nlmsg_len, NLMSG_HDRLEN + 24);
	assert_int_equal(*(const uint8_t *)mnl_nlmsg_get_payload(nlh), AF_VSOCK);
	assert_int_equal(req_u32(nlh, 4), 0x482);
	assert_int_equal(req_u32(nlh, 8), 0);  /* ino: reserved */
	assert_int_equal(req_u32(nlh, 12), 0); /* show: reserved */
}

/* ---- xdp -------------------------------------------------------------------------------- */

struct xd_msg_bytes {
	uint8_t family, type;
	uint16_t pad;
	uint32_t ino, cookie[2];
};

/* ---- the hand-built bytes against the kernel's uapi layouts --------------------------- */

#include <linux/vm_sockets_diag.h>
#include <linux/xdp_diag.h>
#include <linux/tipc_netlink.h>
#include <linux/tipc_sockets_diag.h>

#include "tests/unit/uapi_layout.h" /* SAME_FIELD */
#include "tests/blob_util.h"

SAME_FIELD(struct vd_msg_bytes, family, struct vsock_diag_msg, vdiag_family);
SAME_FIELD(struct vd_msg_bytes, type, struct vsock_diag_msg, vdiag_type);
SAME_FIELD(struct vd_msg_bytes, state, struct vsock_diag_msg, vdiag_state);
SAME_FIELD(struct vd_msg_bytes, shutdown, struct vsock_diag_msg, vdiag_shutdown);
SAME_FIELD(struct vd_msg_bytes, src_cid, struct vsock_diag_msg, vdiag_src_cid);
SAME_FIELD(struct vd_msg_bytes, src_port, struct vsock_diag_msg, vdiag_src_port);
SAME_FIELD(struct vd_msg_bytes, dst_cid, struct vsock_diag_msg, vdiag_dst_cid);
SAME_FIELD(struct vd_msg_bytes, dst_port, struct vsock_diag_msg, vdiag_dst_port);
SAME_FIELD(struct vd_msg_bytes, ino, struct vsock_diag_msg, vdiag_ino);
SAME_FIELD(struct vd_msg_bytes, cookie, struct vsock_diag_msg, vdiag_cookie);
_Static_assert(sizeof(struct vd_msg_bytes) == sizeof(struct vsock_diag_msg), "vsock_diag_msg");

SAME_FIELD(struct xd_msg_bytes, family, struct xdp_diag_msg, xdiag_family);
SAME_FIELD(struct xd_msg_bytes, type, struct xdp_diag_msg, xdiag_type);
SAME_FIELD(struct xd_msg_bytes, ino, struct xdp_diag_msg, xdiag_ino);
SAME_FIELD(struct xd_msg_bytes, cookie, struct xdp_diag_msg, xdiag_cookie);
_Static_assert(sizeof(struct xd_msg_bytes) == sizeof(struct xdp_diag_msg), "xdp_diag_msg");

/* xdp_test's attribute payloads. */
_Static_assert(sizeof(((struct xdp_diag_info *)0)->ifindex) == 4 && sizeof(struct xdp_diag_info) == 8,
	       "xdp_diag_info: u32 ifindex, queue_id");
_Static_assert(sizeof(struct xdp_diag_umem) == 8 + 8 * 4 && offsetof(struct xdp_diag_umem, refs) == 36,
	       "xdp_diag_umem: u64 size, eight u32");
_Static_assert(sizeof(struct xdp_diag_stats) == 6 * 8 &&
		       offsetof(struct xdp_diag_stats, n_fill_ring_empty) == 3 * 8 &&
		       offsetof(struct xdp_diag_stats, n_tx_ring_empty) == 5 * 8,
	       "xdp_diag_stats: six u64");
_Static_assert(XDP_DIAG_INFO == 1 && XDP_DIAG_UID == 2 && XDP_DIAG_RX_RING == 3 &&
		       XDP_DIAG_TX_RING == 4 && XDP_DIAG_UMEM == 5 && XDP_DIAG_UMEM_FILL_RING == 6 &&
		       XDP_DIAG_UMEM_COMPLETION_RING == 7 && XDP_DIAG_MEMINFO == 8 &&
		       XDP_DIAG_STATS == 9,
	       "XDP_DIAG_* attribute numbers used by test_xdp");

/* The requests the builders must produce. */
_Static_assert(sizeof(struct vsock_diag_req) == 24 &&
		       offsetof(struct vsock_diag_req, vdiag_states) == 4 &&
		       offsetof(struct vsock_diag_req, vdiag_ino) == 8 &&
		       offsetof(struct vsock_diag_req, vdiag_show) == 12,
	       "vsock_diag_req");
_Static_assert(sizeof(struct xdp_diag_req) == 20 && offsetof(struct xdp_diag_req, xdiag_show) == 8,
	       "xdp_diag_req");
_Static_assert(sizeof(struct tipc_sock_diag_req) == 8 &&
		       offsetof(struct tipc_sock_diag_req, tidiag_states) == 4,
	       "tipc_sock_diag_req");

static struct nlmsghdr *xdp_msg(void *buf, size_t size)
{
	struct nlmsghdr *nlh = start(buf, size);
	struct xd_msg_bytes *m = mnl_nlmsg_put_extra_header(nlh, sizeof(*m));

	m->family = AF_XDP;
	m->type = SOCK_RAW;
	m->ino = 77;
	m->cookie[0] = 5;
	return nlh;
}

static void test_xdp(void **state)
{
	uint8_t buf[1024] __attribute__((aligned(8)));
	uint32_t info[2] = { 4, 1 }, mem[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	struct {
		uint64_t size;
		uint32_t id, num_pages, chunk_size, headroom, ifindex, queue_id, flags, refs;
	} umem = { 1 << 20, 3, 256, 4096, 0, 4, 1, 1, 2 };
	uint64_t stats[6] = { 10, 11, 12, 13, 14, 15 };
	struct nlmsghdr *nlh;
	struct sdiag_sock s;

	(void)state;
	nlh = xdp_msg(buf, sizeof(buf));
	mnl_attr_put(nlh, 1, sizeof(info), info);
	mnl_attr_put_u32(nlh, 2, 1000);
	mnl_attr_put_u32(nlh, 3, 2048);
	mnl_attr_put_u32(nlh, 4, 1024);
	mnl_attr_put(nlh, 5, sizeof(umem), &umem);
	mnl_attr_put_u32(nlh, 6, 4096);
	mnl_attr_put_u32(nlh, 7, 512);
	mnl_attr_put(nlh, 8, sizeof(mem), mem);
	mnl_attr_put(nlh, 9, sizeof(stats), stats);
	mnl_attr_put_u32(nlh, 30, 1); /* unknown: skipped */
	assert_int_equal(decode_one(sd_xdp_decode, buf, &s), 1);
	assert_int_equal(s.table, SDIAG_T_XDP);
	assert_int_equal(s.family, AF_XDP);
	assert_int_equal(s.state, SDIAG_SS_CLOSE);
	assert_int_equal(s.inode, 77);
	assert_int_equal(s.cookie, 5);
	assert_int_equal(s.xdp.ifindex, 4);
	assert_int_equal(s.xdp.queue_id, 1);
	assert_int_equal(s.uid, 1000);
	assert_int_equal(s.xdp.rx_entries, 2048);
	assert_int_equal(s.xdp.tx_entries, 1024);
	assert_int_equal(s.xdp.fill_entries, 4096);
	assert_int_equal(s.xdp.completion_entries, 512);
	assert_int_equal(s.xdp.umem_size, 1 << 20);
	assert_int_equal(s.xdp.umem_id, 3);
	assert_int_equal(s.xdp.umem_num_pages, 256);
	assert_int_equal(s.xdp.umem_chunk_size, 4096);
	assert_int_equal(s.xdp.umem_ifindex, 4);
	assert_int_equal(s.xdp.umem_queue_id, 1);
	assert_int_equal(s.xdp.umem_flags, 1);
	assert_int_equal(s.xdp.umem_refs, 2);
	assert_int_equal(t_skmem(&s, SDIAG_SKMEM_DROPS), 9);
	assert_int_equal(s.xdp.rx_dropped, 10);
	assert_int_equal(s.xdp.fill_empty, 13);
	assert_int_equal(s.xdp.tx_empty, 15);
	assert_true(s.has & SDIAG_HAS_XDP_INFO);
	assert_true(s.has & SDIAG_HAS_XDP_RINGS);
	assert_true(s.has & SDIAG_HAS_XDP_UMEM);
	assert_true(s.has & SDIAG_HAS_XDP_STATS);
	assert_true(s.has & SDIAG_HAS_UID);

	/* A bare socket: no attributes, no "has" bits beyond the header. */
	xdp_msg(buf, sizeof(buf));
	assert_int_equal(decode_one(sd_xdp_decode, buf, &s), 1);
	assert_int_equal(s.has, SDIAG_HAS_INODE | SDIAG_HAS_COOKIE);
}

static void test_xdp_malformed(void **state)
{
	uint8_t buf[256] __attribute__((aligned(8)));
	struct nlmsghdr *nlh;
	struct sdiag_sock s;

	(void)state;
	nlh = xdp_msg(buf, sizeof(buf));
	mnl_attr_put(nlh, 3, 2, "ab"); /* ring too short */
	assert_int_equal(decode_one(sd_xdp_decode, buf, &s), -EBADMSG);
	nlh = xdp_msg(buf, sizeof(buf));
	mnl_attr_put_u32(nlh, 2, 1);
	nlh->nlmsg_len += 8; /* garbage that is not an attribute */
	memset((uint8_t *)mnl_nlmsg_get_payload_tail(nlh) - 8, 0xff, 2);
	memset((uint8_t *)mnl_nlmsg_get_payload_tail(nlh) - 6, 0, 6);
	assert_int_equal(decode_one(sd_xdp_decode, buf, &s), -EBADMSG);
	nlh = xdp_msg(buf, sizeof(buf));
	((struct xd_msg_bytes *)mnl_nlmsg_get_payload(nlh))->family = AF_PACKET;
	assert_int_equal(decode_one(sd_xdp_decode, buf, &s), 0);
}

static void test_xdp_request(void **state)
{
	uint8_t buf[128] __attribute__((aligned(8)));
	struct sd_req r = { .family = AF_XDP, .states = SDIAG_STATES_ALL };
	const struct nlmsghdr *nlh;

	(void)state;
	nlh = sd_xdp_request(buf, &r);
	assert_int_equal(nlh->nlmsg_len, NLMSG_HDRLEN + 20);
	assert_int_equal(*(const uint8_t *)mnl_nlmsg_get_payload(nlh), AF_XDP);
	assert_int_equal(req_u32(nlh, 8), 0x1f); /* INFO RING_CFG UMEM MEMINFO STATS */
}

/* ---- tipc ------------------------------------------------------------------------------- */

enum {
	NLA_SOCK = 2,
	SOCK_ADDR = 1,
	SOCK_REF,
	SOCK_CON,
	SOCK_HAS_PUBL,
	SOCK_STAT,
	SOCK_TYPE,
	SOCK_INO,
	SOCK_UID,
	SOCK_TIPC_STATE,
	SOCK_COOKIE,
	SOCK_PAD,
	CON_FLAG = 1,
	CON_NODE,
	CON_SOCK,
	CON_TYPE,
	CON_INST,
	STAT_RCVQ = 0,
	STAT_SENDQ,
	STAT_LINK_CONG,
	STAT_CONN_CONG,
	STAT_DROP,
};

/* The attribute numbers above are the kernel's (tipc_netlink.h); (int): two enums. */
_Static_assert((int)NLA_SOCK == TIPC_NLA_SOCK && (int)SOCK_ADDR == TIPC_NLA_SOCK_ADDR &&
		       (int)SOCK_REF == TIPC_NLA_SOCK_REF && (int)SOCK_CON == TIPC_NLA_SOCK_CON &&
		       (int)SOCK_HAS_PUBL == TIPC_NLA_SOCK_HAS_PUBL && (int)SOCK_STAT == TIPC_NLA_SOCK_STAT &&
		       (int)SOCK_TYPE == TIPC_NLA_SOCK_TYPE && (int)SOCK_INO == TIPC_NLA_SOCK_INO &&
		       (int)SOCK_UID == TIPC_NLA_SOCK_UID && (int)SOCK_TIPC_STATE == TIPC_NLA_SOCK_TIPC_STATE &&
		       (int)SOCK_COOKIE == TIPC_NLA_SOCK_COOKIE && (int)SOCK_PAD == TIPC_NLA_SOCK_PAD,
	       "TIPC_NLA_SOCK_*");
_Static_assert((int)CON_FLAG == TIPC_NLA_CON_FLAG && (int)CON_NODE == TIPC_NLA_CON_NODE &&
		       (int)CON_SOCK == TIPC_NLA_CON_SOCK && (int)CON_TYPE == TIPC_NLA_CON_TYPE &&
		       (int)CON_INST == TIPC_NLA_CON_INST,
	       "TIPC_NLA_CON_*");
_Static_assert((int)STAT_RCVQ == TIPC_NLA_SOCK_STAT_RCVQ && (int)STAT_SENDQ == TIPC_NLA_SOCK_STAT_SENDQ &&
		       (int)STAT_LINK_CONG == TIPC_NLA_SOCK_STAT_LINK_CONG &&
		       (int)STAT_CONN_CONG == TIPC_NLA_SOCK_STAT_CONN_CONG &&
		       (int)STAT_DROP == TIPC_NLA_SOCK_STAT_DROP,
	       "TIPC_NLA_SOCK_STAT_*");

/* As tipc_sk_fill_sock_diag() lays it out: no fixed header, one nest. */
static struct nlmsghdr *tipc_msg(void *buf, size_t size, bool connected)
{
	struct nlmsghdr *nlh = start(buf, size);
	struct nlattr *sock, *nest;

	sock = mnl_attr_nest_start(nlh, NLA_SOCK);
	mnl_attr_put_u32(nlh, SOCK_REF, 0x1234);
	mnl_attr_put_u32(nlh, SOCK_ADDR, 0x01001001);
	if (connected) {
		nest = mnl_attr_nest_start(nlh, SOCK_CON);
		mnl_attr_put_u32(nlh, CON_NODE, 0x01001002);
		mnl_attr_put_u32(nlh, CON_SOCK, 0x5678);
		mnl_attr_put(nlh, CON_FLAG, 0, NULL);
		mnl_attr_put_u32(nlh, CON_TYPE, 18888);
		mnl_attr_put_u32(nlh, CON_INST, 17);
		mnl_attr_nest_end(nlh, nest);
	} else {
		mnl_attr_put(nlh, SOCK_HAS_PUBL, 0, NULL);
	}
	mnl_attr_put_u32(nlh, SOCK_TYPE, SOCK_SEQPACKET);
	mnl_attr_put_u32(nlh, SOCK_TIPC_STATE, connected ? SDIAG_SS_ESTABLISHED : SDIAG_SS_LISTEN);
	mnl_attr_put_u32(nlh, SOCK_INO, 999);
	mnl_attr_put_u32(nlh, SOCK_UID, 1001);
	mnl_attr_put(nlh, SOCK_PAD, 0, NULL);
	mnl_attr_put_u64(nlh, SOCK_COOKIE, 0x1122334455667788ULL);
	nest = mnl_attr_nest_start(nlh, SOCK_STAT);
	mnl_attr_put_u32(nlh, STAT_RCVQ, 3);
	mnl_attr_put_u32(nlh, STAT_SENDQ, 4);
	mnl_attr_put_u32(nlh, STAT_DROP, 5);
	mnl_attr_put(nlh, STAT_LINK_CONG, 0, NULL);
	mnl_attr_nest_end(nlh, nest);
	mnl_attr_put_u32(nlh, 40, 1); /* unknown: skipped */
	mnl_attr_nest_end(nlh, sock);
	return nlh;
}

static void test_tipc(void **state)
{
	uint8_t buf[1024] __attribute__((aligned(8)));
	struct sdiag_sock s;

	(void)state;
	tipc_msg(buf, sizeof(buf), true);
	assert_int_equal(decode_one(sd_tipc_decode, buf, &s), 1);
	assert_int_equal(s.table, SDIAG_T_TIPC);
	assert_int_equal(s.family, AF_TIPC);
	assert_int_equal(s.type, SOCK_SEQPACKET);
	assert_int_equal(s.state, SDIAG_SS_ESTABLISHED);
	assert_int_equal(s.inode, 999);
	assert_int_equal(s.uid, 1001);
	assert_int_equal(s.cookie, 0x1122334455667788ULL);
	assert_int_equal(s.rqueue, 3);
	assert_int_equal(s.wqueue, 4);
	assert_int_equal(s.tipc.ref, 0x1234);
	assert_int_equal(s.tipc.addr, 0x01001001);
	assert_true(s.tipc.has_conn);
	assert_int_equal(s.tipc.conn_node, 0x01001002);
	assert_int_equal(s.tipc.conn_port, 0x5678);
	assert_int_equal(s.tipc.conn_type, 18888);
	assert_int_equal(s.tipc.conn_instance, 17);
	assert_true(s.has & SDIAG_HAS_TIPC_INFO);
	assert_true(s.has & SDIAG_HAS_INODE);
	assert_true(s.has & SDIAG_HAS_COOKIE);
	assert_true(s.has & SDIAG_HAS_UID);
	assert_true(s.has & SDIAG_HAS_QUEUES);

	tipc_msg(buf, sizeof(buf), false);
	assert_int_equal(decode_one(sd_tipc_decode, buf, &s), 1);
	assert_int_equal(s.state, SDIAG_SS_LISTEN);
	assert_false(s.tipc.has_conn);
	assert_int_equal(s.tipc.conn_port, 0);
}

static void test_tipc_malformed(void **state)
{
	uint8_t buf[1024] __attribute__((aligned(8)));
	struct nlmsghdr *nlh;
	struct nlattr *sock, *con;
	struct sdiag_sock s;

	(void)state;
	/* No socket nest at all. */
	nlh = start(buf, sizeof(buf));
	mnl_attr_put_u32(nlh, 1, 5);
	assert_int_equal(decode_one(sd_tipc_decode, buf, &s), -EBADMSG);
	nlh = start(buf, sizeof(buf));
	assert_int_equal(decode_one(sd_tipc_decode, buf, &s), -EBADMSG);

	/* A u32 that is two bytes. */
	nlh = start(buf, sizeof(buf));
	sock = mnl_attr_nest_start(nlh, NLA_SOCK);
	mnl_attr_put(nlh, SOCK_INO, 2, "ab");
	mnl_attr_nest_end(nlh, sock);
	assert_int_equal(decode_one(sd_tipc_decode, buf, &s), -EBADMSG);

	/* A cookie that is four bytes. */
	nlh = start(buf, sizeof(buf));
	sock = mnl_attr_nest_start(nlh, NLA_SOCK);
	mnl_attr_put_u32(nlh, SOCK_COOKIE, 1);
	mnl_attr_nest_end(nlh, sock);
	assert_int_equal(decode_one(sd_tipc_decode, buf, &s), -EBADMSG);

	/* A nested attribute running past its nest. */
	nlh = start(buf, sizeof(buf));
	sock = mnl_attr_nest_start(nlh, NLA_SOCK);
	con = mnl_attr_nest_start(nlh, SOCK_CON);
	mnl_attr_put_u32(nlh, CON_NODE, 1);
	mnl_attr_nest_end(nlh, con);
	mnl_attr_nest_end(nlh, sock);
	((struct nlattr *)mnl_attr_get_payload(con))->nla_len = 12;
	assert_int_equal(decode_one(sd_tipc_decode, buf, &s), -EBADMSG);

	/* Not a socket message. */
	nlh = tipc_msg(buf, sizeof(buf), false);
	nlh->nlmsg_type = NLMSG_DONE;
	assert_int_equal(decode_one(sd_tipc_decode, buf, &s), 0);
}

static void test_tipc_request(void **state)
{
	uint8_t buf[128] __attribute__((aligned(8)));
	struct sd_req r = { .family = AF_TIPC, .states = 0x482 };
	const struct nlmsghdr *nlh;

	(void)state;
	memset(buf, 0xaa, sizeof(buf));
	nlh = sd_tipc_request(buf, &r);
	assert_int_equal(nlh->nlmsg_type, SOCK_DIAG_BY_FAMILY);
	assert_int_equal(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_DUMP);
	assert_int_equal(nlh->nlmsg_len, NLMSG_HDRLEN + 8);
	assert_int_equal(*(const uint8_t *)mnl_nlmsg_get_payload(nlh), AF_TIPC);
	assert_int_equal(((const uint8_t *)mnl_nlmsg_get_payload(nlh))[1], 0);
	assert_int_equal(req_u32(nlh, 4), 0x482);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vsock),
		cmocka_unit_test(test_vsock_request),
		cmocka_unit_test(test_xdp),
		cmocka_unit_test(test_xdp_malformed),
		cmocka_unit_test(test_xdp_request),
		cmocka_unit_test(test_tipc),
		cmocka_unit_test(test_tipc_malformed),
		cmocka_unit_test(test_tipc_request),
	};

	return sdiag_test_status(cmocka_run_group_tests_name("vsock xdp tipc (constructed)", tests, NULL, NULL));
}
