/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SCTP through the inet decoder (lib/family/inet.c), offline.
 *
 * The development kernel has no SCTP at all (socket(AF_INET, SOCK_STREAM,
 * IPPROTO_SCTP) fails with EPROTONOSUPPORT, no sctp_diag). Real replies were
 * captured in a Debian 6.12 guest (tests/fixtures/inet-sctp*.bin, see
 * test_fixture_multihomed); the others below are what inet_sctp_diag_fill()
 * in net/sctp/diag.c sends, built through transcriptions checked against the
 * installed uapi headers
 * (uapi_layout.h for inet_diag_msg; linux/sctp.h for sctp_info):
 *   - an endpoint: NLM_F_MULTI, the socket's state (TCP numbering), accept
 *     backlog and its maximum as the queues, no timer; INET_DIAG_LOCALS;
 *   - each association after it: no NLM_F_MULTI, the association's state
 *     (enum sctp_state), the T3-rtx timer, INET_DIAG_LOCALS, CONG "reno",
 *     INET_DIAG_PEERS;
 *   - both: the common attributes (SHUTDOWN, SKV6ONLY, CGROUP_ID, SOCKOPT),
 *     SKMEMINFO and INFO (struct sctp_info) when asked.
 * LOCALS and PEERS are arrays of struct sockaddr_storage: two local and two
 * peer addresses here (multi-homed), IPv4 or IPv6 ones, borrowed as
 * inet.sctp_locals / sctp_peers and read through sdiag_sctp_addrs(). sctp_info has no place in the record (yet):
 * the test asserts it is skipped without touching the TCP/MPTCP parts.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/sctp.h>
#include <linux/sock_diag.h>
#include <cmocka.h>

#include "tests/test_skip.h"
#include <libmnl/libmnl.h>
#include <linux/netlink.h>

#include "lib/core/internal.h"
#include "lib/family/family.h"
#include "lib/ops/ops.h"
#include "tests/unit/uapi_layout.h"
#include "tests/unit/fixture_util.h"
#include "tests/blob_util.h"

#ifndef IPPROTO_SCTP
#define IPPROTO_SCTP 132
#endif

/* Attribute numbers and payloads as the kernel sends them. */
_Static_assert(INET_DIAG_INFO == 2 && INET_DIAG_CONG == 4 && INET_DIAG_SKMEMINFO == 7 &&
		       INET_DIAG_SHUTDOWN == 8 && INET_DIAG_SKV6ONLY == 11 &&
		       INET_DIAG_LOCALS == 12 && INET_DIAG_PEERS == 13 &&
		       INET_DIAG_CGROUP_ID == 21 && INET_DIAG_SOCKOPT == 22,
	       "INET_DIAG_* numbers used below");
/* Each LOCALS/PEERS entry is a whole sockaddr_storage, zero-padded. */
#define ADDR_LEN 128
_Static_assert(sizeof(struct sockaddr_storage) == ADDR_LEN, "LOCALS/PEERS entry");
/* sctp_info: its size fixes the INFO attribute's; the fields set below. */
_Static_assert(offsetof(struct sctp_info, sctpi_tag) == 0 &&
		       offsetof(struct sctp_info, sctpi_state) == 4 &&
		       offsetof(struct sctp_info, sctpi_isacks) == 56 &&
		       offsetof(struct sctp_info, sctpi_p_address) == 168,
	       "struct sctp_info");

/* T3-rtx in enum sctp_event_timeout (net/sctp/constants.h): the timer
 * inet_diag_msg_sctpasoc_fill() reports. */
#define SCTP_EVENT_TIMEOUT_T3_RTX 4

enum { ENDPOINT, ASSOC };

struct sctp_msg {
	int kind;
	uint8_t family, state;
	size_t nlocal, npeer; /* addresses in LOCALS / PEERS (0: two) */
};

/* Each entry's family is its own: an IPv6 socket may list IPv4 addresses. */
static void put_addrs(struct nlmsghdr *nlh, uint16_t type, const char *const *ip, size_t n,
		      uint16_t port)
{
	uint8_t list[12 * ADDR_LEN];
	struct sockaddr_in *in;
	struct sockaddr_in6 *in6;

	assert_true(n <= 12);
	memset(list, 0, sizeof(list));
	for (size_t i = 0; i < n; i++) {
		uint8_t *e = list + i * ADDR_LEN;

		if (!strchr(ip[i], ':')) {
			in = (struct sockaddr_in *)e;
			in->sin_family = AF_INET;
			in->sin_port = htons(port);
			assert_int_equal(inet_pton(AF_INET, ip[i], &in->sin_addr), 1);
		} else {
			in6 = (struct sockaddr_in6 *)e;
			in6->sin6_family = AF_INET6;
			in6->sin6_port = htons(port);
			assert_int_equal(inet_pton(AF_INET6, ip[i], &in6->sin6_addr), 1);
		}
	}
	mnl_attr_put(nlh, type, n * ADDR_LEN, list);
}

/*
 * A server on 10.0.0.1 and 10.0.1.1 (or fd00::1, fd00:1::1) port 9000; its
 * association with a client at 10.0.0.2 / 10.0.1.2 (fd00::2, fd00:1::2) port
 * 40000. Attributes in the kernel's order.
 */
static struct nlmsghdr *build(void *buf, size_t size, const struct sctp_msg *w)
{
	static const char *const l4[] = { "10.0.0.1", "10.0.1.1", "10.0.2.1" };
	static const char *const p4[] = { "10.0.0.2", "10.0.1.2", "10.0.2.2" };
	/* IPv6: the second local address is an IPv4 one (a dual-stack socket). */
	static const char *const l6[] = { "fd00::1", "192.0.2.1", "fd00:2::1" };
	static const char *const p6[] = { "fd00::2", "fd00:1::2", "fd00:2::2" };
	bool v4 = w->family == AF_INET;
	struct nlmsghdr *nlh;
	struct inet_msg_bytes *m;
	struct sctp_info info;
	uint32_t skmem[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	uint64_t cgroup = 0x1234;
	uint8_t sockopt[2] = { 0x01, 0x00 }; /* recverr */

	memset(buf, 0, size);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = w->kind == ENDPOINT ? NLM_F_MULTI : 0;
	m = mnl_nlmsg_put_extra_header(nlh, sizeof(*m));
	m->family = w->family;
	m->state = w->state;
	m->id.sport[0] = 9000 >> 8;
	m->id.sport[1] = 9000 & 0xff;
	assert_int_equal(inet_pton(w->family, v4 ? l4[0] : l6[0], m->id.src), 1);
	m->id.cookie[0] = 0xc0c0;
	m->id.cookie[1] = 0x1;
	m->uid = 1000;
	m->inode = 4242;
	if (w->kind == ENDPOINT) {
		m->rqueue = 0;	 /* accept backlog */
		m->wqueue = 128; /* its maximum */
	} else {
		m->id.dport[0] = 40000 >> 8;
		m->id.dport[1] = 40000 & 0xff;
		assert_int_equal(inet_pton(w->family, v4 ? p4[0] : p6[0], m->id.dst), 1);
		m->id.ifindex = 2;
		m->timer = SCTP_EVENT_TIMEOUT_T3_RTX;
		m->retrans = 3;
		m->expires = 2500;
		m->rqueue = 100; /* rmem_alloc */
		m->wqueue = 200; /* sndbuf_used */
	}

	mnl_attr_put_u8(nlh, INET_DIAG_SHUTDOWN, w->kind == ASSOC ? 1 : 0);
	if (!v4)
		mnl_attr_put_u8(nlh, INET_DIAG_SKV6ONLY, 1);
	mnl_attr_put(nlh, INET_DIAG_CGROUP_ID, sizeof(cgroup), &cgroup);
	mnl_attr_put(nlh, INET_DIAG_SOCKOPT, sizeof(sockopt), sockopt);
	mnl_attr_put(nlh, INET_DIAG_SKMEMINFO, sizeof(skmem), skmem);
	memset(&info, 0x5a, sizeof(info));
	info.sctpi_state = w->state;
	mnl_attr_put(nlh, INET_DIAG_INFO, sizeof(info), &info);
	put_addrs(nlh, INET_DIAG_LOCALS, v4 ? l4 : l6, w->nlocal ? w->nlocal : 2, 9000);
	if (w->kind == ASSOC) {
		mnl_attr_put_strz(nlh, INET_DIAG_CONG, "reno");
		put_addrs(nlh, INET_DIAG_PEERS, v4 ? p4 : p6, w->npeer ? w->npeer : 2, 40000);
	}
	return nlh;
}

static int decode(const struct nlmsghdr *nlh, struct sdiag_sock *s)
{
	memset(s, 0, sizeof(*s));
	s->protocol = IPPROTO_SCTP; /* dump.c's hint for an SCTP dump */
	return sd_inet_decode(nlh, s);
}

static void common(const struct sdiag_sock *s, uint8_t family)
{
	uint8_t src[16] = { 0 };

	assert_int_equal(s->table, SDIAG_T_SCTP);
	assert_int_equal(s->protocol, IPPROTO_SCTP);
	assert_int_equal(s->type, 0); /* stream or seqpacket: the reply does not say */
	assert_int_equal(s->family, family);
	assert_int_equal(inet_pton(family, family == AF_INET ? "10.0.0.1" : "fd00::1", src), 1);
	assert_memory_equal(s->inet.src, src, 16);
	assert_int_equal(s->inet.sport, 9000);
	assert_int_equal(s->cookie, 0x10000c0c0ULL);
	assert_int_equal(s->uid, 1000);
	assert_int_equal(s->inode, 4242);
	assert_int_equal(s->inet.cgroup_id, 0x1234);
	assert_int_equal(s->inet.sockopt, SDIAG_SOCKOPT_RECVERR);
	for (int i = 0; i < 9; i++)
		assert_int_equal(t_skmem(s, i), i + 1);
	assert_int_equal(s->inet.v6only, family == AF_INET6);
	/* sctp_info is not tcp_info. */
	assert_int_equal(t_tcp_info(s).tcpi_state, 0);
	assert_int_equal(t_mptcp_info(s).mptcpi_subflows, 0);
}

#define HAS_BOTH                                                                              \
	(SDIAG_HAS_UID | SDIAG_HAS_INODE | SDIAG_HAS_COOKIE | SDIAG_HAS_QUEUES |              \
	 SDIAG_HAS_SHUTDOWN | SDIAG_HAS_TIMER | SDIAG_HAS_CGROUP | SDIAG_HAS_SOCKOPT |         \
	 SDIAG_HAS_SKMEMINFO | SDIAG_HAS_SCTP_LOCALS)

static void test_endpoint(void **state)
{
	uint8_t buf[2048] __attribute__((aligned(8)));
	static const uint8_t zero[16];
	struct sdiag_sock s;

	(void)state;
	assert_int_equal(decode(build(buf, sizeof(buf), &(struct sctp_msg){ ENDPOINT, AF_INET, 10, 0, 0 }), &s), 1);
	common(&s, AF_INET);
	assert_int_equal(s.state, SDIAG_SS_LISTEN);
	assert_int_equal(s.inet.dport, 0);
	assert_memory_equal(s.inet.dst, zero, 16);
	assert_int_equal(s.inet.ifindex, 0);
	assert_int_equal(s.rqueue, 0);
	assert_int_equal(s.wqueue, 128);
	assert_int_equal(s.inet.timer, 0);
	assert_int_equal(s.inet.retrans, 0);
	assert_int_equal(s.inet.expires_ms, 0);
	assert_int_equal(s.shutdown, 0);
	assert_int_equal(s.has, HAS_BOTH);

	/* A one-to-one socket that is connected is an endpoint in TCP's
	 * ESTABLISHED; a closed one in CLOSE: passed through as they are. */
	assert_int_equal(decode(build(buf, sizeof(buf), &(struct sctp_msg){ ENDPOINT, AF_INET6, 1, 0, 0 }), &s), 1);
	common(&s, AF_INET6);
	assert_int_equal(s.state, SDIAG_SS_ESTABLISHED);
	assert_int_equal(s.has, HAS_BOTH | SDIAG_HAS_V6ONLY);
	assert_int_equal(decode(build(buf, sizeof(buf), &(struct sctp_msg){ ENDPOINT, AF_INET, 7, 0, 0 }), &s), 1);
	assert_int_equal(s.state, SDIAG_SS_CLOSE);
}

static void test_assoc(void **state)
{
	uint8_t buf[2048] __attribute__((aligned(8)));
	struct sdiag_sock s;
	uint8_t dst[16] = { 0 };
	static const struct {
		uint8_t sctp, want;
	} states[] = {
		{ 0, SDIAG_SS_CLOSE },	    { 1, SDIAG_SS_SYN_SENT },	  { 2, SDIAG_SS_SYN_SENT },
		{ 3, SDIAG_SS_ESTABLISHED }, { 4, SDIAG_SS_FIN_WAIT1 },	  { 5, SDIAG_SS_FIN_WAIT1 },
		{ 6, SDIAG_SS_CLOSE_WAIT },  { 7, SDIAG_SS_LAST_ACK },	  { 8, SDIAG_SS_UNKNOWN },
		{ 10, SDIAG_SS_UNKNOWN },    { 255, SDIAG_SS_UNKNOWN },
	};

	(void)state;
	for (int f = 0; f < 2; f++) {
		uint8_t family = f ? AF_INET6 : AF_INET;

		assert_int_equal(decode(build(buf, sizeof(buf), &(struct sctp_msg){ ASSOC, family, 3, 0, 0 }), &s), 1);
		common(&s, family);
		assert_int_equal(s.state, SDIAG_SS_ESTABLISHED);
		assert_int_equal(inet_pton(family, f ? "fd00::2" : "10.0.0.2", dst), 1);
		assert_memory_equal(s.inet.dst, dst, 16);
		assert_int_equal(s.inet.dport, 40000);
		assert_int_equal(s.inet.ifindex, 2);
		assert_int_equal(s.inet.timer, SCTP_EVENT_TIMEOUT_T3_RTX);
		assert_int_equal(s.inet.retrans, 3);
		assert_int_equal(s.inet.expires_ms, 2500);
		assert_int_equal(s.rqueue, 100);
		assert_int_equal(s.wqueue, 200);
		assert_int_equal(s.shutdown, 1);
		assert_string_equal(s.inet.cong, "reno");
		assert_int_equal(s.has, HAS_BOTH | SDIAG_HAS_CONG | SDIAG_HAS_SCTP_PEERS |
						(f ? SDIAG_HAS_V6ONLY : 0));
	}

	/* The association's own state machine, onto TCP's numbering. */
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		assert_int_equal(
			decode(build(buf, sizeof(buf), &(struct sctp_msg){ ASSOC, AF_INET, states[i].sctp, 0, 0 }), &s),
			1);
		assert_int_equal(s.state, states[i].want);
	}
}

static void test_malformed(void **state)
{
	uint8_t buf[2048] __attribute__((aligned(8)));
	struct nlmsghdr *nlh;
	struct sdiag_sock s;

	(void)state;
	/* PEERS (the last attribute) cut off by the message's end. */
	nlh = build(buf, sizeof(buf), &(struct sctp_msg){ ASSOC, AF_INET, 3, 0, 0 });
	nlh->nlmsg_len -= ADDR_LEN;
	assert_int_equal(decode(nlh, &s), -EBADMSG);
	/* The header alone is a record. */
	nlh = build(buf, sizeof(buf), &(struct sctp_msg){ ASSOC, AF_INET, 3, 0, 0 });
	nlh->nlmsg_len = MNL_NLMSG_HDRLEN + sizeof(struct inet_msg_bytes);
	assert_int_equal(decode(nlh, &s), 1);
	assert_int_equal(s.state, SDIAG_SS_ESTABLISHED);
	assert_int_equal(s.has, SDIAG_HAS_UID | SDIAG_HAS_INODE | SDIAG_HAS_COOKIE |
					SDIAG_HAS_QUEUES | SDIAG_HAS_TIMER);
	/* One byte short of it is not. */
	nlh->nlmsg_len--;
	assert_int_equal(decode(nlh, &s), -EBADMSG);
}

/* How many addresses the tests ask sdiag_sctp_addrs() for (the CLI shows 8). */
#define KEEP 8

/* s's list which has want addresses (max 0 counts them too), the first
 * ones ip[0..) (their own families) on port; nothing written past max. */
static void check_addrs(const struct sdiag_sock *s, enum sdiag_sctp_list which,
			const char *const *ip, size_t want, uint16_t port)
{
	struct sdiag_sctp_addr a[KEEP + 1];

	memset(a, 0xee, sizeof(a));
	assert_int_equal(sdiag_sctp_addrs(s, which, a, KEEP), want);
	assert_int_equal(sdiag_sctp_addrs(s, which, NULL, 0), want);
	for (size_t i = 0; i < want && i < KEEP; i++) {
		uint8_t addr[16] = { 0 };
		int fam = strchr(ip[i], ':') ? AF_INET6 : AF_INET;

		assert_int_equal(inet_pton(fam, ip[i], addr), 1);
		assert_int_equal(a[i].family, fam);
		assert_int_equal(a[i].port, port);
		assert_memory_equal(a[i].addr, addr, 16);
	}
	assert_int_equal(a[want < KEEP ? want : KEEP].family, 0xee);
}

/* Multi-homing: every address of LOCALS and PEERS, in order, each with its
 * own family and port. */
static void test_addrs(void **state)
{
	static const char *const l4[] = { "10.0.0.1", "10.0.1.1" }, *const p4[] = { "10.0.0.2", "10.0.1.2" };
	static const char *const l6[] = { "fd00::1", "192.0.2.1" }, *const p6[] = { "fd00::2", "fd00:1::2" };
	static const char *const many[] = { "10.9.0.1", "10.9.0.2", "10.9.0.3", "10.9.0.4",
					    "10.9.0.5", "10.9.0.6", "10.9.0.7", "10.9.0.8",
					    "10.9.0.9", "10.9.0.10" };
	uint8_t buf[4096] __attribute__((aligned(8)));
	struct nlmsghdr *nlh;
	struct nlattr *a;
	struct sdiag_sock s, *dup;
	struct sdiag_sctp_addr got[10] = { 0 };

	(void)state;
	assert_int_equal(decode(build(buf, sizeof(buf), &(struct sctp_msg){ ASSOC, AF_INET, 3, 0, 0 }), &s), 1);
	check_addrs(&s, SDIAG_SCTP_LOCALS, l4, 2, 9000);
	check_addrs(&s, SDIAG_SCTP_PEERS, p4, 2, 40000);
	assert_int_equal(decode(build(buf, sizeof(buf), &(struct sctp_msg){ ASSOC, AF_INET6, 3, 0, 0 }), &s), 1);
	check_addrs(&s, SDIAG_SCTP_LOCALS, l6, 2, 9000);
	check_addrs(&s, SDIAG_SCTP_PEERS, p6, 2, 40000);
	/* The lists are borrowed from the reply: a copy has its own. */
	dup = sdiag_sock_dup(&s);
	assert_non_null(dup);
	memset(buf, 0, sizeof(buf));
	check_addrs(dup, SDIAG_SCTP_LOCALS, l6, 2, 9000);
	check_addrs(dup, SDIAG_SCTP_PEERS, p6, 2, 40000);
	free(dup);
	/* An endpoint has no peers. */
	assert_int_equal(decode(build(buf, sizeof(buf), &(struct sctp_msg){ ENDPOINT, AF_INET6, 10, 0, 0 }), &s), 1);
	check_addrs(&s, SDIAG_SCTP_LOCALS, l6, 2, 9000);
	check_addrs(&s, SDIAG_SCTP_PEERS, NULL, 0, 0);
	assert_null(s.inet.sctp_peers);
	assert_false(s.has & SDIAG_HAS_SCTP_PEERS);
	/* One address each: a single-homed association. */
	assert_int_equal(decode(build(buf, sizeof(buf),
				      &(struct sctp_msg){ ASSOC, AF_INET, 3, 1, 1 }), &s), 1);
	check_addrs(&s, SDIAG_SCTP_LOCALS, l4, 1, 9000);
	check_addrs(&s, SDIAG_SCTP_PEERS, p4, 1, 40000);

	/* More peers than asked for: the first ones, and the count. */
	nlh = build(buf, sizeof(buf), &(struct sctp_msg){ ENDPOINT, AF_INET, 10, 0, 0 });
	put_addrs(nlh, INET_DIAG_PEERS, many, 10, 7);
	assert_int_equal(decode(nlh, &s), 1);
	check_addrs(&s, SDIAG_SCTP_PEERS, many, 10, 7);
	assert_int_equal(sdiag_sctp_addrs(&s, SDIAG_SCTP_PEERS, got, 3), 10);
	assert_int_equal(got[2].addr[3], 3);
	assert_int_equal(got[3].family, 0);
	assert_int_equal(sdiag_sctp_addrs(&s, SDIAG_SCTP_PEERS, got, 10), 10);
	assert_int_equal(got[9].addr[3], 10);
	assert_int_equal(got[9].port, 7);
	/* Not another family's record (the union), nor a list without its bit. */
	s.family = AF_UNIX;
	assert_int_equal(sdiag_sctp_addrs(&s, SDIAG_SCTP_PEERS, got, 10), 0);
	s.family = AF_INET;
	s.has &= ~SDIAG_HAS_SCTP_PEERS;
	assert_int_equal(sdiag_sctp_addrs(&s, SDIAG_SCTP_PEERS, got, 10), 0);

	/* An empty list is sent (no address): present, none. A partial entry
	 * at the end is none; an entry of another family is skipped. */
	nlh = build(buf, sizeof(buf), &(struct sctp_msg){ ENDPOINT, AF_INET, 10, 0, 0 });
	nlh->nlmsg_len = MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct inet_msg_bytes));
	mnl_attr_put(nlh, INET_DIAG_LOCALS, 0, NULL);
	assert_int_equal(decode(nlh, &s), 1);
	assert_true(s.has & SDIAG_HAS_SCTP_LOCALS);
	check_addrs(&s, SDIAG_SCTP_LOCALS, NULL, 0, 0);
	nlh->nlmsg_len = MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct inet_msg_bytes));
	put_addrs(nlh, INET_DIAG_PEERS, many, 3, 7);
	a = (struct nlattr *)((uint8_t *)nlh + MNL_NLMSG_HDRLEN +
			      MNL_ALIGN(sizeof(struct inet_msg_bytes)));
	((struct sockaddr *)(void *)((uint8_t *)mnl_attr_get_payload(a) + ADDR_LEN))->sa_family =
		AF_UNIX;
	a->nla_len -= ADDR_LEN - 20; /* the third entry: 20 bytes of 128 */
	nlh->nlmsg_len = MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct inet_msg_bytes)) +
			 MNL_ALIGN(a->nla_len);
	assert_int_equal(decode(nlh, &s), 1);
	check_addrs(&s, SDIAG_SCTP_PEERS, many, 1, 7);

	/* Only SCTP's replies are read so (no other table sends them). */
	nlh = build(buf, sizeof(buf), &(struct sctp_msg){ ASSOC, AF_INET, 3, 0, 0 });
	memset(&s, 0, sizeof(s));
	s.protocol = IPPROTO_TCP;
	assert_int_equal(sd_inet_decode(nlh, &s), 1);
	assert_false(s.has & (SDIAG_HAS_SCTP_LOCALS | SDIAG_HAS_SCTP_PEERS));
	assert_null(s.inet.sctp_locals);
	assert_int_equal(sdiag_sctp_addrs(&s, SDIAG_SCTP_LOCALS, got, 10), 0);
}

/* ---- real replies: tests/fixtures/inet-sctp*.bin (capture-sctp.sh, Debian's 6.12) ---- */

static int dec_sctp(const struct nlmsghdr *nlh, struct sdiag_sock *s)
{
	s->protocol = IPPROTO_SCTP;
	return sd_inet_decode(nlh, s);
}

/* The one record with these ports, an association (peers) or an endpoint. */
static const struct sdiag_sock *find(const struct fixture *fx, uint16_t sport, uint16_t dport,
				     bool assoc)
{
	const struct sdiag_sock *hit = NULL;

	for (size_t i = 0; i < fx->n; i++) {
		const struct sdiag_sock *s = &fx->socks[i];

		if (s->inet.sport != sport || s->inet.dport != dport ||
		    !(s->has & SDIAG_HAS_SCTP_PEERS) != !assoc)
			continue;
		assert_null(hit); /* one of each: the dump repeats none */
		hit = s;
	}
	assert_non_null(hit);
	return hit;
}

/* s's list which as a set: exactly ip[0..want) (any order) on port. */
static void same_addrs(const struct sdiag_sock *s, enum sdiag_sctp_list which,
		       const char *const *ip, size_t want, uint16_t port)
{
	struct sdiag_sctp_addr a[KEEP];
	size_t n = sdiag_sctp_addrs(s, which, a, KEEP);

	assert_int_equal(n, want);
	for (size_t i = 0; i < want; i++) {
		uint8_t addr[16] = { 0 };
		int fam = strchr(ip[i], ':') ? AF_INET6 : AF_INET, found = 0;

		assert_int_equal(inet_pton(fam, ip[i], addr), 1);
		for (size_t j = 0; j < n; j++)
			found += a[j].family == fam && a[j].port == port &&
				 !memcmp(a[j].addr, addr, 16);
		assert_int_equal(found, 1);
	}
}

/*
 * capture-sctp.sh: a one-to-one listener on 127.0.0.1 + 127.0.0.2 port 9001,
 * a client bound to 127.0.0.1 + 127.0.0.4 port 41001 connected to it (its
 * endpoint and association, and the accepted socket's), and an IPv6 listener
 * on ::1 with 127.0.0.3 added, port 9002. What sctp_bindx() bound is what
 * LOCALS lists; each association's PEERS are the other side's addresses.
 */
static void test_fixture_multihomed(void **state)
{
	static const char *const srv[] = { "127.0.0.1", "127.0.0.2" };
	static const char *const cli[] = { "127.0.0.1", "127.0.0.4" };
	static const char *const dual[] = { "::1", "127.0.0.3" };
	struct fixture *fx = malloc(sizeof(*fx));
	const struct sdiag_sock *s;

	(void)state;
	assert_non_null(fx);
	fixture_load(fx, "inet-sctp4.bin", dec_sctp);
	assert_int_equal(fx->n, 5);
	s = find(fx, 9001, 0, false); /* the listener */
	assert_int_equal(s->state, SDIAG_SS_LISTEN);
	same_addrs(s, SDIAG_SCTP_LOCALS, srv, 2, 9001);
	same_addrs(s, SDIAG_SCTP_PEERS, NULL, 0, 0);
	for (int side = 0; side < 2; side++) {
		uint16_t sport = side ? 9001 : 41001, dport = side ? 41001 : 9001;
		const char *const *mine = side ? srv : cli, *const *theirs = side ? cli : srv;

		/* The connected socket's endpoint: its locals, no peers. */
		s = find(fx, sport, dport, false);
		assert_int_equal(s->state, SDIAG_SS_ESTABLISHED);
		same_addrs(s, SDIAG_SCTP_LOCALS, mine, 2, sport);
		same_addrs(s, SDIAG_SCTP_PEERS, NULL, 0, 0);
		/* Its association: both sides' two addresses. */
		s = find(fx, sport, dport, true);
		assert_int_equal(s->state, SDIAG_SS_ESTABLISHED);
		assert_true(s->has & SDIAG_HAS_SCTP_LOCALS);
		same_addrs(s, SDIAG_SCTP_LOCALS, mine, 2, sport);
		same_addrs(s, SDIAG_SCTP_PEERS, theirs, 2, dport);
	}
	fixture_free(fx);

	fixture_load(fx, "inet-sctp6.bin", dec_sctp);
	assert_int_equal(fx->n, 1);
	s = find(fx, 9002, 0, false);
	assert_int_equal(s->family, AF_INET6);
	same_addrs(s, SDIAG_SCTP_LOCALS, dual, 2, 9002);
	fixture_free(fx);
	free(fx);
}

/*
 * Dumps drop a record whose key they saw just before (lib/ops/dump.c): an
 * association shares its socket's cookie with the endpoint record sent just
 * before it, and with every other association of a one-to-many socket, so
 * its key must tell them apart, while a repeat of the same record (a dump
 * chunk resumed over it) keeps the same key.
 */
static void test_dedup_key(void **state)
{
	uint8_t buf[2048] __attribute__((aligned(8)));
	struct sdiag_sock ep, a, a2, again, tcp;

	(void)state;
	assert_int_equal(decode(build(buf, sizeof(buf), &(struct sctp_msg){ ENDPOINT, AF_INET, 10, 0, 0 }), &ep), 1);
	assert_int_equal(decode(build(buf, sizeof(buf), &(struct sctp_msg){ ASSOC, AF_INET, 3, 0, 0 }), &a), 1);
	assert_int_equal(decode(build(buf, sizeof(buf), &(struct sctp_msg){ ASSOC, AF_INET, 3, 0, 0 }), &again), 1);
	assert_int_equal(ep.cookie, a.cookie);
	assert_int_equal(sd_dedup_key(&ep), ep.cookie);
	assert_int_not_equal(sd_dedup_key(&a), 0);
	assert_int_not_equal(sd_dedup_key(&a), sd_dedup_key(&ep));
	assert_int_equal(sd_dedup_key(&a), sd_dedup_key(&again));

	/* Another association of the same socket: another peer port, or
	 * another peer address on the same port. */
	a2 = a;
	a2.inet.dport = 40001;
	assert_int_not_equal(sd_dedup_key(&a2), sd_dedup_key(&a));
	assert_int_not_equal(sd_dedup_key(&a2), sd_dedup_key(&ep));
	a2 = a;
	a2.inet.dst[3] ^= 1;
	assert_int_not_equal(sd_dedup_key(&a2), sd_dedup_key(&a));

	/* A connected one-to-one socket's endpoint names the association's
	 * peer too (inet_diag_msg_common_fill()): still not its association. */
	ep.inet.dport = a.inet.dport;
	memcpy(ep.inet.dst, a.inet.dst, sizeof(ep.inet.dst));
	assert_int_equal(sd_dedup_key(&ep), ep.cookie);
	assert_int_not_equal(sd_dedup_key(&a), sd_dedup_key(&ep));

	/* Every other table: the cookie, whatever the peer. */
	tcp = a;
	tcp.table = SDIAG_T_TCP;
	assert_int_equal(sd_dedup_key(&tcp), tcp.cookie);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_endpoint),
		cmocka_unit_test(test_assoc),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_addrs),
		cmocka_unit_test(test_fixture_multihomed),
		cmocka_unit_test(test_dedup_key),
	};

	return sdiag_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
