/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * inet decoder tests: real kernel replies (tests/fixtures/inet-*.bin, made by
 * tests/fixtures/capture-inet.sh on Linux 6.18, ext = all, states = all,
 * as root) decoded offline; the sockets asserted here are the ones that
 * script creates. Plus request building and malformed input. (SMC: test_smc.c.)
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/inet_diag.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "tests/test_skip.h"
#include <libmnl/libmnl.h>
#include <linux/netlink.h>

#include "lib/core/internal.h"
#include "lib/family/family.h"
#include "tests/unit/uapi_layout.h"
#include "tests/blob_util.h"

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

#ifndef FIXTURE_DIR
#define FIXTURE_DIR "tests/fixtures"
#endif

#define MAX_FIXTURE (256 * 1024)
#define MAX_RECS 32

struct fixture {
	uint8_t *buf; /* the raw datagrams, 8-byte aligned */
	size_t len;
	struct sdiag_sock recs[MAX_RECS];
	const struct nlmsghdr *msgs[MAX_RECS];
	size_t n;
};

static void load(struct fixture *fx, const char *name, uint16_t protocol)
{
	const char *dir = getenv("SD_FIXTURES");
	char path[4096];
	FILE *f;
	const struct nlmsghdr *nlh;
	int rem;
	bool done = false;

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : FIXTURE_DIR, name);
	f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open fixture %s", path);
	fx->buf = aligned_alloc(8, MAX_FIXTURE);
	assert_non_null(fx->buf);
	fx->len = fread(fx->buf, 1, MAX_FIXTURE, f);
	fclose(f);
	assert_true(fx->len > 0 && fx->len < MAX_FIXTURE);

	fx->n = 0;
	rem = (int)fx->len;
	for (nlh = (void *)fx->buf; mnl_nlmsg_ok(nlh, rem); nlh = mnl_nlmsg_next(nlh, &rem)) {
		struct sdiag_sock s;
		int r;

		assert_false(done); /* nothing after DONE */
		memset(&s, 0, sizeof(s));
		s.protocol = protocol;
		r = sd_inet_decode(nlh, &s);
		if (nlh->nlmsg_type == NLMSG_DONE) {
			assert_int_equal(r, 0);
			assert_int_equal(*(const int *)mnl_nlmsg_get_payload(nlh), 0);
			done = true;
			continue;
		}
		assert_int_equal(r, 1);
		assert_true(fx->n < MAX_RECS);
		fx->msgs[fx->n] = nlh;
		fx->recs[fx->n++] = s;
	}
	assert_int_equal(rem, 0);
	assert_true(done);
}

static void unload(struct fixture *fx)
{
	free(fx->buf);
	fx->buf = NULL;
}

/* The record with these ports; state < 0 means any. Fails if not exactly one. */
static const struct sdiag_sock *find(const struct fixture *fx, uint16_t sport, uint16_t dport,
				     int state, size_t *ret_idx)
{
	const struct sdiag_sock *found = NULL;

	for (size_t i = 0; i < fx->n; i++) {
		const struct sdiag_sock *s = &fx->recs[i];

		if (s->inet.sport != sport || s->inet.dport != dport)
			continue;
		if (state >= 0 && s->state != state)
			continue;
		if (found)
			fail_msg("two records for %u -> %u", sport, dport);
		found = s;
		if (ret_idx)
			*ret_idx = i;
	}
	if (!found)
		fail_msg("no record for %u -> %u", sport, dport);
	return found;
}

static void assert_addr(const struct sdiag_sock *s, const uint8_t *addr, const char *text)
{
	uint8_t want[16] = { 0 };

	assert_int_equal(inet_pton(s->family, text, want), 1);
	assert_memory_equal(addr, want, 16);
}

/* Every full socket reply carries these. */
static void assert_full(const struct sdiag_sock *s)
{
	const uint64_t full = SDIAG_HAS_UID | SDIAG_HAS_INODE | SDIAG_HAS_COOKIE |
			      SDIAG_HAS_QUEUES | SDIAG_HAS_SHUTDOWN | SDIAG_HAS_MARK |
			      SDIAG_HAS_CGROUP | SDIAG_HAS_SOCKOPT | SDIAG_HAS_TOS |
			      SDIAG_HAS_CLASS_ID | SDIAG_HAS_MEMINFO | SDIAG_HAS_SKMEMINFO;

	assert_int_equal(s->has & full, full);
	assert_int_equal(s->uid, 0); /* captured as root */
	assert_true(s->inode > 0);
	assert_true(s->cookie != 0);
	assert_true(s->inet.cgroup_id != 0);
	assert_true(t_skmem(s, SDIAG_SKMEM_RCVBUF) > 0);
	assert_true(t_skmem(s, SDIAG_SKMEM_SNDBUF) > 0);
}

/* ---- IPv4 TCP ---------------------------------------------------------------------- */

static void test_tcp4_all(void **state)
{
	struct fixture fx;
	uint64_t cookies[MAX_RECS];

	(void)state;
	load(&fx, "inet-tcp4.bin", IPPROTO_TCP);
	/* 4 listeners (5001, 5003, 5004, MPTCP's 8001 subflow), bound-inactive
	 * 5002, 3 pairs to 5001 (one side in TIME-WAIT, its peer gone), 40004
	 * and its request socket, 40005 and its queued child, 40006 (SYN-SENT),
	 * the v4 client to 6001, 2 MPTCP subflows. */
	assert_int_equal(fx.n, 18);
	for (size_t i = 0; i < fx.n; i++) {
		const struct sdiag_sock *s = &fx.recs[i];

		assert_int_equal(s->family, AF_INET);
		assert_int_equal(s->table, SDIAG_T_TCP);
		assert_int_equal(s->protocol, IPPROTO_TCP);
		assert_int_equal(s->type, SOCK_STREAM);
		assert_true(s->has & SDIAG_HAS_TIMER);
		assert_false(s->has & (SDIAG_HAS_TCLASS | SDIAG_HAS_V6ONLY | SDIAG_HAS_MPTCP_INFO |
				       SDIAG_HAS_RAW_PROTO));
		assert_addr(s, s->inet.src, "127.0.0.1");
		cookies[i] = s->cookie;
		for (size_t j = 0; j < i; j++)
			assert_true(cookies[j] != s->cookie);
	}
	unload(&fx);
}

static void test_tcp4_listener(void **state)
{
	struct fixture fx;
	const struct sdiag_sock *s;

	(void)state;
	load(&fx, "inet-tcp4.bin", IPPROTO_TCP);
	s = find(&fx, 5001, 0, SDIAG_SS_LISTEN, NULL);
	assert_full(s);
	assert_addr(s, s->inet.dst, "0.0.0.0");
	assert_int_equal(s->rqueue, 0);
	assert_int_equal(s->wqueue, 16); /* listen(16): the backlog */
	assert_int_equal(s->inet.mark, 0x1234);
	assert_int_equal(s->shutdown, 0);
	assert_int_equal(s->inet.ifindex, 0);
	assert_true(s->has & SDIAG_HAS_TCP_INFO);
	assert_int_equal(t_tcp_info(s).tcpi_state, SDIAG_SS_LISTEN);
	assert_true(s->has & SDIAG_HAS_CONG);
	assert_string_equal(s->inet.cong, "bbr"); /* the capture host's default */
	assert_false(s->has & SDIAG_HAS_ULP);
	assert_true(s->inet.sockopt & SDIAG_SOCKOPT_IS_ICSK);
	assert_false(s->inet.sockopt & SDIAG_SOCKOPT_FREEBIND);
	unload(&fx);
}

static void test_tcp4_established(void **state)
{
	struct fixture fx;
	const struct sdiag_sock *c, *a;

	(void)state;
	load(&fx, "inet-tcp4.bin", IPPROTO_TCP);
	c = find(&fx, 40001, 5001, SDIAG_SS_ESTABLISHED, NULL);
	a = find(&fx, 5001, 40001, SDIAG_SS_ESTABLISHED, NULL);
	assert_full(c);
	assert_full(a);
	assert_addr(c, c->inet.dst, "127.0.0.1");
	assert_int_equal(c->rqueue, 0);
	assert_int_equal(a->rqueue, 5);	     /* "hello", unread */
	assert_int_equal(c->inet.tos, 0x10); /* IP_TOS */
	assert_int_equal(a->inet.tos, 0);
	/* No net_cls classid: the kernel reports SO_PRIORITY, which IP_TOS 0x10
	 * set to TC_PRIO_INTERACTIVE (6). */
	assert_int_equal(c->inet.class_id, 6);
	assert_int_equal(c->inet.mark, 0);
	assert_int_equal(a->inet.mark, 0x1234); /* inherited from the listener */

	assert_true(c->has & SDIAG_HAS_TCP_INFO);
	assert_int_equal(t_tcp_info(c).tcpi_state, SDIAG_SS_ESTABLISHED);
	assert_int_equal(t_tcp_info(c).tcpi_bytes_sent, 5);
	assert_int_equal(t_tcp_info(a).tcpi_bytes_received, 5);
	assert_true(t_tcp_info(c).tcpi_snd_mss > 0);
	assert_true(t_tcp_info(c).tcpi_rtt > 0);
	assert_true(t_tcp_info(c).tcpi_rto >= 200000); /* at least TCP_RTO_MIN, in us */
	assert_int_equal(t_tcp_info(c).tcpi_snd_cwnd, 10);
	assert_int_equal(t_tcp_info(c).tcpi_snd_wscale, t_tcp_info(a).tcpi_rcv_wscale);
	assert_true(t_tcp_info(c).tcpi_snd_wnd > 0); /* a 6.x field */

	assert_string_equal(c->inet.cong, "cubic"); /* TCP_CONGESTION */
	assert_false(c->has & (SDIAG_HAS_BBR | SDIAG_HAS_VEGAS | SDIAG_HAS_DCTCP));
	assert_string_equal(a->inet.cong, "bbr");
	assert_true(a->has & SDIAG_HAS_BBR);
	assert_false(a->has & (SDIAG_HAS_VEGAS | SDIAG_HAS_DCTCP));
	{
		struct sdiag_bbr_info bbr;

		sdiag_sock_blob_copy(a, SDIAG_BLOB_BBR, &bbr, sizeof(bbr));
		assert_true(bbr.min_rtt > 0);
	}
	unload(&fx);
}

static void test_tcp4_shutdown(void **state)
{
	struct fixture fx;
	const struct sdiag_sock *c, *a;

	(void)state;
	load(&fx, "inet-tcp4.bin", IPPROTO_TCP);
	c = find(&fx, 40002, 5001, -1, NULL);
	a = find(&fx, 5001, 40002, -1, NULL);
	assert_int_equal(c->state, SDIAG_SS_FIN_WAIT2);
	assert_int_equal(c->shutdown, 2); /* shutdown(SHUT_WR): send side */
	assert_int_equal(a->state, SDIAG_SS_CLOSE_WAIT);
	assert_int_equal(a->shutdown, 1); /* the peer's FIN: receive side */
	assert_true(a->has & SDIAG_HAS_SHUTDOWN);
	unload(&fx);
}

static void test_tcp4_time_wait(void **state)
{
	struct fixture fx;
	const struct sdiag_sock *s;

	(void)state;
	load(&fx, "inet-tcp4.bin", IPPROTO_TCP);
	s = find(&fx, 40003, 5001, -1, NULL);
	assert_int_equal(s->state, SDIAG_SS_TIME_WAIT);
	assert_int_equal(s->inet.timer, 3);
	assert_true(s->inet.expires_ms > 0 && s->inet.expires_ms <= 60000);
	/* A mini-socket: the kernel's uid/inode are placeholders. */
	assert_int_equal(s->has,
			 SDIAG_HAS_COOKIE | SDIAG_HAS_QUEUES | SDIAG_HAS_TIMER | SDIAG_HAS_MARK);
	assert_int_equal(s->inode, 0);
	assert_true(s->cookie != 0);
	unload(&fx);
}

static void test_tcp4_handshake(void **state)
{
	struct fixture fx;
	const struct sdiag_sock *s;

	(void)state;
	load(&fx, "inet-tcp4.bin", IPPROTO_TCP);
	/* TCP_DEFER_ACCEPT kept the server side a request socket. */
	s = find(&fx, 5003, 40004, -1, NULL);
	assert_int_equal(s->state, SDIAG_SS_SYN_RECV);
	assert_int_equal(s->inet.timer, 1);
	assert_true(s->inet.expires_ms > 0);
	assert_int_equal(s->has,
			 SDIAG_HAS_COOKIE | SDIAG_HAS_QUEUES | SDIAG_HAS_TIMER | SDIAG_HAS_MARK);
	s = find(&fx, 40004, 5003, -1, NULL);
	assert_int_equal(s->state, SDIAG_SS_ESTABLISHED);

	/* listen(0) with one child queued: accept backlog 1 of 0. */
	s = find(&fx, 5004, 0, SDIAG_SS_LISTEN, NULL);
	assert_int_equal(s->rqueue, 1);
	assert_int_equal(s->wqueue, 0);
	/* The queued child is a full socket without a file: uid, no inode. */
	s = find(&fx, 5004, 40005, -1, NULL);
	assert_int_equal(s->state, SDIAG_SS_ESTABLISHED);
	assert_int_equal(s->has & (SDIAG_HAS_UID | SDIAG_HAS_SHUTDOWN | SDIAG_HAS_TCP_INFO),
			 SDIAG_HAS_UID | SDIAG_HAS_SHUTDOWN | SDIAG_HAS_TCP_INFO);
	assert_false(s->has & SDIAG_HAS_INODE);
	assert_int_equal(s->inode, 0);
	/* Its SYN dropped, 40006 retransmits: the SYN is its unacked byte. */
	s = find(&fx, 40006, 5004, -1, NULL);
	assert_int_equal(s->state, SDIAG_SS_SYN_SENT);
	assert_full(s);
	assert_int_equal(s->inet.timer, 1);
	assert_int_equal(s->wqueue, 1);
	assert_int_equal(t_tcp_info(s).tcpi_state, SDIAG_SS_SYN_SENT);
	unload(&fx);
}

/* Replace one record message of a fixture by a patched copy. */
static struct nlmsghdr *copy_msg(const struct nlmsghdr *nlh, size_t extra)
{
	struct nlmsghdr *c = aligned_alloc(8, (nlh->nlmsg_len + extra + 7) & ~7u);

	assert_non_null(c);
	memcpy(c, nlh, nlh->nlmsg_len);
	return c;
}

static void test_tcp4_bound_inactive(void **state)
{
	struct fixture fx;
	const struct sdiag_sock *s;
	struct sdiag_sock d;
	struct nlmsghdr *c;
	size_t idx;

	(void)state;
	load(&fx, "inet-tcp4.bin", IPPROTO_TCP);
	s = find(&fx, 5002, 0, -1, &idx);
	assert_int_equal(s->state, SDIAG_SS_BOUND_INACTIVE);
	assert_full(s);
	assert_false(s->has & (SDIAG_HAS_TCP_INFO | SDIAG_HAS_CONG | SDIAG_HAS_BBR));

	/* Outside a dump (no NLM_F_MULTI) the kernel's CLOSE stays CLOSE. */
	c = copy_msg(fx.msgs[idx], 8);
	c->nlmsg_flags &= ~NLM_F_MULTI;
	memset(&d, 0, sizeof(d));
	d.protocol = IPPROTO_TCP;
	assert_int_equal(sd_inet_decode(c, &d), 1);
	assert_int_equal(d.state, SDIAG_SS_CLOSE);

	/* Neither does a destroy broadcast (it carries INET_DIAG_PROTOCOL). */
	c->nlmsg_flags |= NLM_F_MULTI;
	mnl_attr_put_u8(c, 10 /* INET_DIAG_PROTOCOL */, IPPROTO_TCP);
	memset(&d, 0, sizeof(d));
	assert_int_equal(sd_inet_decode(c, &d), 1); /* no hint: from the attribute */
	assert_int_equal(d.table, SDIAG_T_TCP);
	assert_int_equal(d.state, SDIAG_SS_CLOSE);
	assert_false(d.has & SDIAG_HAS_RAW_PROTO);
	free(c);
	unload(&fx);
}

static void test_tcp4_mptcp_subflows(void **state)
{
	struct fixture fx;
	const struct sdiag_sock *c, *a, *l;

	(void)state;
	load(&fx, "inet-tcp4.bin", IPPROTO_TCP);
	c = find(&fx, 40021, 8001, -1, NULL);
	a = find(&fx, 8001, 40021, -1, NULL);
	l = find(&fx, 8001, 0, SDIAG_SS_LISTEN, NULL);
	assert_true(c->has & SDIAG_HAS_ULP);
	assert_string_equal(c->inet.ulp, "mptcp");
	assert_non_null(c->inet.ulp_mptcp);
	assert_true(c->inet.ulp_mptcp_len >= 4);
	assert_string_equal(a->inet.ulp, "mptcp");
	assert_non_null(a->inet.ulp_mptcp);
	/* The listener's subflow has the name only. */
	assert_string_equal(l->inet.ulp, "mptcp");
	assert_null(l->inet.ulp_mptcp);
	assert_int_equal(l->inet.ulp_mptcp_len, 0);
	unload(&fx);
}

/* ---- IPv6 TCP ---------------------------------------------------------------------- */

static void test_tcp6(void **state)
{
	struct fixture fx;
	const struct sdiag_sock *s;

	(void)state;
	load(&fx, "inet-tcp6.bin", IPPROTO_TCP);
	assert_int_equal(fx.n, 5);
	for (size_t i = 0; i < fx.n; i++) {
		assert_int_equal(fx.recs[i].family, AF_INET6);
		assert_full(&fx.recs[i]);
		assert_true(fx.recs[i].has & SDIAG_HAS_TCLASS);
	}

	s = find(&fx, 6001, 0, SDIAG_SS_LISTEN, NULL);
	assert_addr(s, s->inet.src, "::");
	assert_true(s->has & SDIAG_HAS_V6ONLY);
	assert_int_equal(s->inet.v6only, 0);
	s = find(&fx, 6002, 0, SDIAG_SS_LISTEN, NULL);
	assert_addr(s, s->inet.src, "::1");
	assert_true(s->has & SDIAG_HAS_V6ONLY);
	assert_int_equal(s->inet.v6only, 1);

	s = find(&fx, 40011, 6001, SDIAG_SS_ESTABLISHED, NULL);
	assert_addr(s, s->inet.src, "::1");
	assert_addr(s, s->inet.dst, "::1");
	assert_int_equal(s->inet.tclass, 0x20);
	assert_false(s->has & SDIAG_HAS_V6ONLY); /* only LISTEN and CLOSE report it */
	assert_int_equal(t_tcp_info(s).tcpi_state, SDIAG_SS_ESTABLISHED);

	/* An IPv4 client of the dual-stack listener: v4-mapped. */
	s = find(&fx, 6001, 40012, SDIAG_SS_ESTABLISHED, NULL);
	assert_addr(s, s->inet.src, "::ffff:127.0.0.1");
	assert_addr(s, s->inet.dst, "::ffff:127.0.0.1");
	unload(&fx);
}

/* ---- UDP --------------------------------------------------------------------------- */

static void test_udp(void **state)
{
	struct fixture fx;
	const struct sdiag_sock *s;

	(void)state;
	load(&fx, "inet-udp4.bin", IPPROTO_UDP);
	assert_int_equal(fx.n, 2);
	for (size_t i = 0; i < fx.n; i++) {
		s = &fx.recs[i];
		assert_int_equal(s->table, SDIAG_T_UDP);
		assert_int_equal(s->protocol, IPPROTO_UDP);
		assert_int_equal(s->type, SOCK_DGRAM);
		assert_full(s);
		assert_false(s->has & (SDIAG_HAS_TIMER | SDIAG_HAS_TCP_INFO | SDIAG_HAS_CONG |
				       SDIAG_HAS_BBR | SDIAG_HAS_ULP));
		assert_false(s->inet.sockopt & SDIAG_SOCKOPT_IS_ICSK);
	}
	s = find(&fx, 7001, 0, SDIAG_SS_CLOSE, NULL); /* unconnected: UNCONN */
	assert_true(s->rqueue > 3);		      /* "abc", counted as memory with overhead */
	s = find(&fx, 7002, 7001, SDIAG_SS_ESTABLISHED, NULL);
	assert_addr(s, s->inet.dst, "127.0.0.1");
	unload(&fx);

	load(&fx, "inet-udp6.bin", IPPROTO_UDP);
	assert_int_equal(fx.n, 1);
	s = find(&fx, 7003, 0, SDIAG_SS_CLOSE, NULL);
	assert_int_equal(s->family, AF_INET6);
	assert_addr(s, s->inet.src, "::1");
	assert_true(s->has & SDIAG_HAS_V6ONLY);
	assert_int_equal(s->inet.v6only, 1); /* bound to a v6 address */
	unload(&fx);
}

/* ---- MPTCP ------------------------------------------------------------------------- */

static void test_mptcp(void **state)
{
	struct fixture fx;
	const struct sdiag_sock *c, *a, *l;

	(void)state;
	load(&fx, "inet-mptcp4.bin", IPPROTO_MPTCP);
	assert_int_equal(fx.n, 3);
	for (size_t i = 0; i < fx.n; i++) {
		const struct sdiag_sock *s = &fx.recs[i];

		assert_int_equal(s->table, SDIAG_T_MPTCP);
		assert_int_equal(s->protocol, IPPROTO_MPTCP);
		assert_full(s);
		assert_true(s->has & SDIAG_HAS_MPTCP_INFO);
		assert_false(s->has & (SDIAG_HAS_TCP_INFO | SDIAG_HAS_ULP));
	}
	c = find(&fx, 40021, 8001, SDIAG_SS_ESTABLISHED, NULL);
	a = find(&fx, 8001, 40021, SDIAG_SS_ESTABLISHED, NULL);
	l = find(&fx, 8001, 0, SDIAG_SS_LISTEN, NULL);
	assert_true(t_mptcp_info(c).mptcpi_token != 0);
	assert_true(t_mptcp_info(a).mptcpi_token != 0);
	assert_true(t_mptcp_info(c).mptcpi_token != t_mptcp_info(a).mptcpi_token);
	assert_int_equal(t_mptcp_info(c).mptcpi_bytes_sent, 6); /* "mptcp!" */
	assert_int_equal(t_mptcp_info(a).mptcpi_bytes_received, 6);
	assert_int_equal(t_mptcp_info(l).mptcpi_token, 0);
	unload(&fx);
}

/* ---- malformed input --------------------------------------------------------------- */

/* Every cut of a real message decodes (when it lands between attributes) or
 * fails with -EBADMSG; never anything else, never a read past the cut. */
static void test_truncated(void **state)
{
	struct fixture fx;
	size_t idx;

	(void)state;
	load(&fx, "inet-tcp4.bin", IPPROTO_TCP);
	find(&fx, 40021, 8001, -1, &idx); /* the largest: ULP nest, tcp_info */
	for (uint32_t len = MNL_NLMSG_HDRLEN; len < fx.msgs[idx]->nlmsg_len; len++) {
		struct nlmsghdr *c = malloc(len); /* exact size: ASan sees overreads */
		struct sdiag_sock s;
		const struct nlattr *a;
		bool boundary = false;
		int r;

		assert_non_null(c);
		memcpy(c, fx.msgs[idx], len);
		c->nlmsg_len = len;
		/* A cut right before an attribute, or anywhere in the alignment
		 * padding after one, leaves a well-formed message. */
		mnl_attr_for_each(a, fx.msgs[idx], 72) {
			size_t off = (size_t)((const uint8_t *)a - (const uint8_t *)fx.msgs[idx]);

			if (off == len ||
			    (len >= off + a->nla_len && len <= off + MNL_ALIGN(a->nla_len)))
				boundary = true;
		}
		memset(&s, 0, sizeof(s));
		s.protocol = IPPROTO_TCP;
		r = sd_inet_decode(c, &s);
		if (len == MNL_NLMSG_HDRLEN + 72 || boundary)
			assert_int_equal(r, 1);
		else
			assert_int_equal(r, -EBADMSG);
		free(c);
	}
	unload(&fx);
}

/* build_msg() writes through struct inet_msg_bytes (uapi_layout.h, checked
 * field by field against inet_diag_msg); test_attrs_built()'s attribute
 * numbers and payload sizes are the kernel's too. */
_Static_assert(INET_DIAG_PROTOCOL == 10 && INET_DIAG_SOCKOPT == 22 && INET_DIAG_CONG == 4 &&
		       INET_DIAG_SHUTDOWN == 8,
	       "INET_DIAG_* numbers used by test_attrs_built()");
_Static_assert(sizeof(struct inet_diag_sockopt) == 2, "INET_DIAG_SOCKOPT: two bytes of bits");

/* A hand-built reply: header fields, then attributes added by the test. */
static struct nlmsghdr *build_msg(void *buf, uint8_t family, uint8_t st)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct inet_msg_bytes *m;

	nlh->nlmsg_type = 20;
	nlh->nlmsg_flags = NLM_F_MULTI;
	m = mnl_nlmsg_put_extra_header(nlh, sizeof(*m));
	m->family = family;
	m->state = st;
	m->id.sport[0] = 0x13; /* sport 5000, network order */
	m->id.sport[1] = 0x88;
	m->inode = 1; /* a full socket */
	return nlh;
}

/* The destroy event of a freed UDP socket: idiag_wqueue is sk_wmem_alloc - 1 with
 * sk_wmem_alloc already 0, that is 0xffffffff. Its Send-Q is 0 (watch printed
 * 4294967295); any other value is the kernel's. */
static void test_freed_wqueue(void **state)
{
	uint8_t buf[1024] __attribute__((aligned(8)));
	struct inet_msg_bytes *m;
	struct nlmsghdr *nlh;
	struct sdiag_sock s;

	(void)state;
	for (int i = 0; i < 2; i++) {
		nlh = build_msg(buf, AF_INET, 7 /* CLOSE */);
		mnl_attr_put_u8(nlh, INET_DIAG_PROTOCOL, IPPROTO_UDP);
		m = mnl_nlmsg_get_payload(nlh);
		m->rqueue = 5;
		m->wqueue = i ? 0xfffffffeu : 0xffffffffu;
		memset(&s, 0, sizeof(s));
		s.protocol = IPPROTO_UDP;
		assert_int_equal(sd_inet_decode(nlh, &s), 1);
		assert_true(s.has & SDIAG_HAS_QUEUES);
		assert_int_equal(s.rqueue, 5);
		assert_int_equal(s.wqueue, i ? 0xfffffffeu : 0);
	}
}

static void test_malformed(void **state)
{
	uint8_t buf[1024] __attribute__((aligned(8)));
	struct nlmsghdr *nlh;
	struct sdiag_sock s;
	uint16_t two = 0;

	(void)state;
	/* A u32 attribute with 2 bytes. */
	nlh = build_msg(buf, AF_INET, 1);
	mnl_attr_put(nlh, 15 /* MARK */, sizeof(two), &two);
	memset(&s, 0, sizeof(s));
	s.protocol = IPPROTO_TCP;
	assert_int_equal(sd_inet_decode(nlh, &s), -EBADMSG);

	/* An attribute claiming more than the message holds. */
	nlh = build_msg(buf, AF_INET, 1);
	mnl_attr_put_u32(nlh, 15, 7);
	((struct nlattr *)((uint8_t *)nlh + MNL_NLMSG_HDRLEN + 72))->nla_len = 12;
	memset(&s, 0, sizeof(s));
	s.protocol = IPPROTO_TCP;
	assert_int_equal(sd_inet_decode(nlh, &s), -EBADMSG);

	/* A malformed ULP nest. */
	nlh = build_msg(buf, AF_INET, 1);
	{
		struct nlattr *nest = mnl_attr_nest_start(nlh, 19 /* ULP_INFO */);

		mnl_attr_put_strz(nlh, 1, "tls");
		mnl_attr_nest_end(nlh, nest);
		((struct nlattr *)(nest + 1))->nla_len = 40;
	}
	memset(&s, 0, sizeof(s));
	s.protocol = IPPROTO_TCP;
	assert_int_equal(sd_inet_decode(nlh, &s), -EBADMSG);

	/* Not an inet family. */
	nlh = build_msg(buf, AF_UNIX, 1);
	memset(&s, 0, sizeof(s));
	s.protocol = IPPROTO_TCP;
	assert_int_equal(sd_inet_decode(nlh, &s), -EBADMSG);

	/* Not a sock_diag reply: skipped. */
	nlh = build_msg(buf, AF_INET, 1);
	nlh->nlmsg_type = NLMSG_DONE;
	assert_int_equal(sd_inet_decode(nlh, &s), 0);

	/* A protocol we have no table for: skipped. */
	nlh = build_msg(buf, AF_INET, 1);
	memset(&s, 0, sizeof(s));
	s.protocol = 33; /* DCCP, gone */
	assert_int_equal(sd_inet_decode(nlh, &s), 0);

	/* No protocol hint and nothing in the message to tell: a caller bug. */
	memset(&s, 0, sizeof(s));
	assert_int_equal(sd_inet_decode(nlh, &s), -EINVAL);

	/* The legacy TCPDIAG_GETSOCK reply is TCP. */
	nlh->nlmsg_type = 18;
	memset(&s, 0, sizeof(s));
	assert_int_equal(sd_inet_decode(nlh, &s), 1);
	assert_int_equal(s.table, SDIAG_T_TCP);
	assert_int_equal(s.inet.sport, 5000);

	/* A state beyond the enum is UNKNOWN, not a shift past 31 downstream. */
	nlh = build_msg(buf, AF_INET, 200);
	memset(&s, 0, sizeof(s));
	s.protocol = IPPROTO_TCP;
	assert_int_equal(sd_inet_decode(nlh, &s), 1);
	assert_int_equal(s.state, SDIAG_SS_UNKNOWN);
}

/* tcp_info is a view of what the kernel sent: an older kernel's shorter one
 * (232 bytes in 6.1) copies out zero-filled; a newer kernel's longer one is
 * passed through whole, cut only by a caller whose struct is shorter. */
static void test_tcp_info_sizes(void **state)
{
	uint8_t buf[2048] __attribute__((aligned(8)));
	uint8_t info[400], out[512];
	struct sdiag_tcp_info ti;
	struct nlmsghdr *nlh;
	struct sdiag_sock s, *d;
	const uint8_t *p = (const uint8_t *)&ti;
	const void *v;
	size_t len;

	(void)state;
	assert_int_equal(sizeof(struct sdiag_tcp_info), 280);
	memset(info, 0xab, sizeof(info));
	nlh = build_msg(buf, AF_INET, 1);
	mnl_attr_put(nlh, 2 /* INFO */, 232, info);
	memset(&s, 0xee, sizeof(s)); /* absent views must not rely on the caller */
	memset(&s.has, 0, sizeof(s.has));
	s.protocol = IPPROTO_TCP;
	assert_int_equal(sd_inet_decode(nlh, &s), 1);
	assert_true(s.has & SDIAG_HAS_TCP_INFO);
	memset(&ti, 0xee, sizeof(ti));
	assert_int_equal(sdiag_sock_blob_copy(&s, SDIAG_BLOB_TCP_INFO, &ti, sizeof(ti)), 232);
	for (size_t i = 0; i < 232; i++)
		assert_int_equal(p[i], 0xab);
	for (size_t i = 232; i < sizeof(ti); i++)
		assert_int_equal(p[i], 0);
	assert_int_equal(t_tcp_info(&s).tcpi_total_rto, 0);   /* a 6.7 field */
	assert_int_equal(t_tcp_info(&s).tcpi_received_ce, 0); /* a 6.18 field */
	/* Views the kernel did not send: none, whatever the record held. */
	assert_null(sdiag_sock_blob(&s, SDIAG_BLOB_MPTCP_INFO, &len));
	assert_int_equal(len, 0);
	memset(&ti, 0xee, sizeof(ti));
	assert_int_equal(sdiag_sock_blob_copy(&s, SDIAG_BLOB_BBR, &ti, sizeof(ti)), 0);
	for (size_t i = 0; i < sizeof(ti); i++)
		assert_int_equal(p[i], 0);
	assert_null(sdiag_sock_blob(&s, SDIAG_BLOB_MAX, NULL));

	nlh = build_msg(buf, AF_INET6, 1);
	mnl_attr_put(nlh, 2, sizeof(info), info);
	memset(&s, 0, sizeof(s));
	s.protocol = IPPROTO_TCP;
	assert_int_equal(sd_inet_decode(nlh, &s), 1);
	/* Today's caller gets its 280 bytes, a newer one all 400, the view all. */
	assert_int_equal(sdiag_sock_blob_copy(&s, SDIAG_BLOB_TCP_INFO, &ti, sizeof(ti)), 400);
	for (size_t i = 0; i < sizeof(ti); i++)
		assert_int_equal(p[i], 0xab);
	memset(out, 0, sizeof(out));
	assert_int_equal(sdiag_sock_blob_copy(&s, SDIAG_BLOB_TCP_INFO, out, sizeof(out)), 400);
	assert_memory_equal(out, info, sizeof(info));
	assert_int_equal(out[400], 0);
	v = sdiag_sock_blob(&s, SDIAG_BLOB_TCP_INFO, &len);
	assert_int_equal(len, 400);
	assert_memory_equal(v, info, sizeof(info));
	assert_int_equal(t_mptcp_info(&s).mptcpi_subflows, 0); /* untouched neighbour */

	/* A copy carries its own views, whole, after the datagram is gone. */
	d = sdiag_sock_dup(&s);
	assert_non_null(d);
	memset(buf, 0, sizeof(buf));
	v = sdiag_sock_blob(d, SDIAG_BLOB_TCP_INFO, &len);
	assert_int_equal(len, 400);
	assert_memory_equal(v, info, sizeof(info));
	assert_int_equal((uintptr_t)v % 8, 0);
	free(d);
}

static void test_attrs_built(void **state)
{
	uint8_t buf[1024] __attribute__((aligned(8)));
	uint8_t sockopt[2] = { 0x05, 0x02 };
	struct nlmsghdr *nlh;
	struct sdiag_sock s;

	(void)state;
	/* A raw socket of protocol ICMP, its SOCKOPT bits, an over-long cong name. */
	nlh = build_msg(buf, AF_INET, 7);
	mnl_attr_put_u8(nlh, 10 /* PROTOCOL */, IPPROTO_ICMP);
	mnl_attr_put(nlh, 22 /* SOCKOPT */, sizeof(sockopt), sockopt);
	mnl_attr_put_strz(nlh, 4 /* CONG */, "a_very_long_congestion_name");
	mnl_attr_put_u8(nlh, 8 /* SHUTDOWN */, 3);
	mnl_attr_put_u32(nlh, 99, 1); /* unknown: skipped */
	memset(&s, 0, sizeof(s));
	s.protocol = IPPROTO_RAW;
	assert_int_equal(sd_inet_decode(nlh, &s), 1);
	assert_int_equal(s.table, SDIAG_T_RAW);
	assert_int_equal(s.type, SOCK_RAW);
	assert_int_equal(s.protocol, IPPROTO_RAW);
	assert_true(s.has & SDIAG_HAS_RAW_PROTO);
	assert_int_equal(s.inet.raw_protocol, IPPROTO_ICMP);
	assert_int_equal(s.state, SDIAG_SS_CLOSE); /* not TCP: CLOSE stays */
	assert_false(s.has & SDIAG_HAS_TIMER);
	assert_int_equal(s.inet.sockopt, SDIAG_SOCKOPT_RECVERR | SDIAG_SOCKOPT_FREEBIND |
						 SDIAG_SOCKOPT_RECVERR_RFC4884);
	assert_string_equal(s.inet.cong, "a_very_long_con");
	assert_int_equal(s.shutdown, 3);
}

/* ---- requests ---------------------------------------------------------------------- */

/* The request as the kernel reads it: struct inet_diag_req_raw
 * (uapi_layout.h), which is inet_diag_req_v2 with the pad named. */
static void test_request(void **state)
{
	uint8_t buf[4096] __attribute__((aligned(8)));
	uint8_t bc[8] = { 2, 8, 12, 0, 0, 0, 0x89, 0x13 };
	struct sd_req r = {
		.family = AF_INET,
		.protocol = IPPROTO_TCP,
		.states = SDIAG_STATE_BIT(SDIAG_SS_ESTABLISHED) |
			  SDIAG_STATE_BIT(SDIAG_SS_SYN_RECV),
		.show = SDIAG_SHOW_ALL,
	};
	struct nlmsghdr *nlh;
	struct inet_req_bytes v;
	const struct nlattr *a;
	int n = 0;

	(void)state;
	nlh = sd_inet_request(buf, &r);
	assert_ptr_equal(nlh, buf);
	assert_int_equal(nlh->nlmsg_len, 16 + 56);
	assert_int_equal(nlh->nlmsg_type, 20);
	assert_int_equal(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_DUMP);
	memcpy(&v, mnl_nlmsg_get_payload(nlh), sizeof(v));
	assert_int_equal(v.family, AF_INET);
	assert_int_equal(v.protocol, IPPROTO_TCP);
	assert_int_equal(v.ext, 0x7f); /* MEMINFO..SKMEMINFO */
	assert_int_equal(v.raw_protocol, 0);
	assert_int_equal(v.states, (1u << 1) | (1u << 3) | (1u << 12));
	{
		static const struct sockid_bytes zero;

		assert_memory_equal(&v.id, &zero, sizeof(zero));
	}

	/* Details one by one; bound-inactive passes through. */
	r.show = SDIAG_SHOW_INFO;
	r.states = SDIAG_STATE_BIT(SDIAG_SS_BOUND_INACTIVE);
	memcpy(&v, mnl_nlmsg_get_payload(sd_inet_request(buf, &r)), sizeof(v));
	assert_int_equal(v.ext, 0x0e); /* INFO, VEGASINFO, CONG */
	assert_int_equal(v.states, 1u << 13);
	r.show = SDIAG_SHOW_TCP_INFO;
	memcpy(&v, mnl_nlmsg_get_payload(sd_inet_request(buf, &r)), sizeof(v));
	assert_int_equal(v.ext, 0x02); /* INFO alone */
	r.show = SDIAG_SHOW_MEM;
	memcpy(&v, mnl_nlmsg_get_payload(sd_inet_request(buf, &r)), sizeof(v));
	assert_int_equal(v.ext, 0x41); /* MEMINFO, SKMEMINFO */
	r.show = SDIAG_SHOW_TOS | SDIAG_SHOW_EXT;
	memcpy(&v, mnl_nlmsg_get_payload(sd_inet_request(buf, &r)), sizeof(v));
	assert_int_equal(v.ext, 0x30); /* TOS, TCLASS (and so CLASS_ID) */

	/* MPTCP: the low byte, the real protocol in INET_DIAG_REQ_PROTOCOL. */
	r.family = AF_INET6;
	r.protocol = IPPROTO_MPTCP;
	nlh = sd_inet_request(buf, &r);
	memcpy(&v, mnl_nlmsg_get_payload(nlh), sizeof(v));
	assert_int_equal(v.family, AF_INET6);
	assert_int_equal(v.protocol, IPPROTO_MPTCP & 0xff);
	assert_int_equal(nlh->nlmsg_len, 16 + 56 + 8);
	mnl_attr_for_each(a, nlh, 56) {
		assert_int_equal(mnl_attr_get_type(a), 3);
		assert_int_equal(mnl_attr_get_payload_len(a), 4);
		assert_int_equal(mnl_attr_get_u32(a), IPPROTO_MPTCP);
		n++;
	}
	assert_int_equal(n, 1);

	/* RAW: IPPROTO_RAW in the pad byte; bytecode as given. */
	r.protocol = IPPROTO_RAW;
	r.bytecode = bc;
	r.bytecode_len = sizeof(bc);
	nlh = sd_inet_request(buf, &r);
	memcpy(&v, mnl_nlmsg_get_payload(nlh), sizeof(v));
	assert_int_equal(v.protocol, IPPROTO_RAW);
	assert_int_equal(v.raw_protocol, IPPROTO_RAW);
	n = 0;
	mnl_attr_for_each(a, nlh, 56) {
		assert_int_equal(mnl_attr_get_type(a), 1);
		assert_int_equal(mnl_attr_get_payload_len(a), sizeof(bc));
		assert_memory_equal(mnl_attr_get_payload(a), bc, sizeof(bc));
		n++;
	}
	assert_int_equal(n, 1);

	/* Bytecode that cannot fit the promised 4 KiB buffer is refused. */
	r.bytecode_len = 4096;
	assert_null(sd_inet_request(buf, &r));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tcp4_all),
		cmocka_unit_test(test_tcp4_listener),
		cmocka_unit_test(test_tcp4_established),
		cmocka_unit_test(test_tcp4_shutdown),
		cmocka_unit_test(test_tcp4_time_wait),
		cmocka_unit_test(test_tcp4_handshake),
		cmocka_unit_test(test_tcp4_bound_inactive),
		cmocka_unit_test(test_tcp4_mptcp_subflows),
		cmocka_unit_test(test_tcp6),
		cmocka_unit_test(test_udp),
		cmocka_unit_test(test_mptcp),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_freed_wqueue),
		cmocka_unit_test(test_tcp_info_sizes),
		cmocka_unit_test(test_attrs_built),
		cmocka_unit_test(test_request),
	};

	return sdiag_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
