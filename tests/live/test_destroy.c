/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Live test of destroy (sdiag_destroy, the destroyer, sdiag_kill): real
 * sockets in a fresh private network namespace per test. What the owner of a
 * destroyed socket and its peer see, every TCP state the kernel can destroy,
 * UDP bound and connected, IPv4-mapped IPv6, cookie exactness (a socket
 * recreated on the same addresses is never hit; nor is a listener that a
 * cookie-less lookup would fall back to), SO_REUSEPORT groups of 8. More in
 * test_destroy_ops.c; helpers in destroy_util.h.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tests/test_skip.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/capability.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/ops/destroy.h"
#include "lib/ops/ops.h"
#include "tests/live/destroy_util.h"

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif
#ifndef SO_COOKIE
#define SO_COOKIE 57
#endif

/* ---- what owners and peers see ---------------------------------------------- */

static void test_tcp_recv_aborted_peer_reset(void **state)
{
	struct pair p;
	struct sdiag_sock *s;
	struct blocked b;
	char c;

	(void)state;
	tcp_pair(&p, AF_INET, "127.0.0.1");
	s = record_of(p.afd, T_TCP);
	assert_int_equal(s->state, SDIAG_SS_ESTABLISHED);
	blocked_start(&b, p.afd, 0);
	expect_destroyed(s);
	assert_int_equal(blocked_end(&b), ECONNABORTED);
	/* The peer got an RST. */
	assert_int_equal(recv(p.cfd, &c, 1, 0), -1);
	assert_int_equal(errno, ECONNRESET);
	/* Destroyed once: a second request finds nothing. */
	assert_int_equal(destroy_one(s, NULL), SDIAG_GONE);
	assert_false(cookie_present(s->cookie, T_TCP));
	free(s);
	pair_close(&p);
}

static void test_udp_recv_aborted(void **state)
{
	struct sdiag_sock *s;
	struct blocked b;
	int fd = udp_bound(AF_INET, "127.0.0.1", 0, false);

	(void)state;
	s = record_of(fd, T_UDP);
	blocked_start(&b, fd, 0);
	expect_destroyed(s);
	assert_int_equal(blocked_end(&b), ECONNABORTED);
	free(s);
	close(fd);
}

static void test_udplite(void **state)
{
	struct sockaddr_storage ss;
	socklen_t len = make_addr(&ss, AF_INET6, "::1", 0);
	struct sdiag_sock *s;
	int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDPLITE);

	(void)state;
	if (fd < 0)
		SDIAG_SKIP("udplite", "socket(IPPROTO_UDPLITE): %s", strerror(errno));
	assert_int_equal(bind(fd, (struct sockaddr *)&ss, len), 0);
	s = record_of(fd, SDIAG_TABLE_BIT(SDIAG_T_UDPLITE));
	assert_int_equal(s->table, SDIAG_T_UDPLITE);
	/* The kernel cannot abort UDP-Lite sockets (no diag_destroy in
	 * udplite_prot): reported unsupported, and left alone. */
	assert_false(sdiag_destroyable(s));
	{
		int err = 0;

		assert_int_equal(destroy_one(s, &err), SDIAG_UNSUPPORTED);
		assert_int_equal(err, -EOPNOTSUPP);
	}
	/* The library never sends that request; the kernel's own answer, which
	 * is why (a kernel that learns to abort UDP-Lite fails this): */
	{
		struct sdiag_handle *h = NULL;
		struct sd_dnl *d = NULL;
		int err = 0;

		assert_int_equal(sdiag_open(&h), 0);
		assert_int_equal(sd_dnl_open(&d, sd_handle_fd(h)), 0);
		sd_dnl_reset(d);
		assert_int_equal(sd_dnl_add(d, s, 0), 0);
		assert_int_equal(sd_dnl_send(d, &err, 1), 0);
		assert_int_equal(err, -EOPNOTSUPP);
		sd_dnl_close(d);
		sdiag_close(h);
	}
	assert_int_equal(sock_error(fd), 0);
	assert_true(cookie_present(s->cookie, SDIAG_TABLE_BIT(SDIAG_T_UDPLITE)));
	free(s);
	close(fd);
}

static void test_udp_connected(void **state)
{
	struct sockaddr_storage ss;
	socklen_t len;
	struct sdiag_sock *s;
	struct blocked b;
	int srv = udp_bound(AF_INET6, "::1", 0, false);
	int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	(void)state;
	len = make_addr(&ss, AF_INET6, "::1", fd_port(srv));
	assert_int_equal(connect(fd, (struct sockaddr *)&ss, len), 0);
	s = record_of(fd, T_UDP);
	assert_int_equal(s->state, SDIAG_SS_ESTABLISHED);
	blocked_start(&b, fd, 0);
	expect_destroyed(s);
	assert_int_equal(blocked_end(&b), ECONNABORTED);
	/* Now unconnected: send() has no destination. */
	assert_int_equal(send(fd, "x", 1, 0), -1);
	assert_int_equal(errno, EDESTADDRREQ);
	/* The server socket on the same port pair was not touched. */
	assert_int_equal(sock_error(srv), 0);
	free(s);
	close(fd);
	close(srv);
}

static void test_accept_returns(void **state)
{
	struct sdiag_sock *s;
	struct blocked b;
	int lfd = stream_listen(AF_INET, 0, "127.0.0.1", 0, 16);
	uint16_t port = fd_port(lfd);
	struct sockaddr_storage ss;
	socklen_t len = make_addr(&ss, AF_INET, "127.0.0.1", port);
	int c;

	(void)state;
	s = record_of(lfd, T_TCP);
	assert_int_equal(s->state, SDIAG_SS_LISTEN);
	blocked_start(&b, lfd, 1);
	expect_destroyed(s);
	assert_int_equal(blocked_end(&b), EINVAL);
	assert_int_equal(sock_error(lfd), ECONNABORTED);
	/* No longer listening: connects are refused. */
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(connect(c, (struct sockaddr *)&ss, len), -1);
	assert_int_equal(errno, ECONNREFUSED);
	close(c);
	free(s);
	close(lfd);
}

/* ---- TCP states -------------------------------------------------------------- */

static void test_syn_recv(void **state)
{
	int lfd = stream_listen(AF_INET, 0, "127.0.0.1", 0, 16), c, secs = 30;
	struct sdiag_sock_list l = { 0 };
	struct sdiag_sock *req = NULL;
	char ch;

	(void)state;
	/* With TCP_DEFER_ACCEPT the final ACK without data leaves the
	 * connection a request socket (SYN-RECV) on the server side. */
	assert_int_equal(setsockopt(lfd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &secs, sizeof(secs)), 0);
	c = stream_connect(AF_INET, 0, "127.0.0.1", fd_port(lfd));
	usleep(50 * 1000);
	collect_tables(&l, T_TCP, 0);
	for (size_t i = 0; i < l.n; i++)
		if (l.socks[i]->state == SDIAG_SS_SYN_RECV)
			req = sdiag_sock_dup(l.socks[i]);
	sdiag_sock_list_free(&l);
	if (!req)
		fail_msg("no SYN-RECV request socket in the dump");
	expect_destroyed(req);
	assert_false(cookie_present(req->cookie, T_TCP));
	/* The listener itself is untouched. */
	assert_int_equal(sock_error(lfd), 0);
	/* The client's data now meets no connection: it is reset. */
	assert_int_equal(send(c, "x", 1, 0), 1);
	struct pollfd pfd = { .fd = c, .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 3000), 1);
	assert_int_equal(recv(c, &ch, 1, 0), -1);
	assert_int_equal(errno, ECONNRESET);
	free(req);
	close(c);
	close(lfd);
}

/* The kernel's own answer to a SOCK_DESTROY of the IPv6 TCP socket ::1 sport -> ::1 dport with
 * this cookie, asked with a request built here (not the library's): 0 or -errno. */
static int raw_destroy_tcp6_loopback(uint16_t sport, uint16_t dport, uint64_t cookie)
{
	struct {
		struct nlmsghdr nh;
		struct inet_diag_req_v2 r;
	} req = {
		.nh = { .nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DESTROY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK },
		.r = { .sdiag_family = AF_INET6, .sdiag_protocol = IPPROTO_TCP,
		       .idiag_states = ~0u,
		       .id = { .idiag_sport = htons(sport), .idiag_dport = htons(dport),
			       .idiag_cookie = { (uint32_t)cookie, (uint32_t)(cookie >> 32) } } },
	};
	union {
		struct nlmsghdr nh;
		char buf[256];
	} ack;
	struct nlmsgerr *e = NLMSG_DATA(&ack.nh);
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	ssize_t n;

	assert_true(fd >= 0);
	memcpy(req.r.id.idiag_src, &in6addr_loopback, 16);
	memcpy(req.r.id.idiag_dst, &in6addr_loopback, 16);
	assert_int_equal(send(fd, &req, sizeof(req), 0), (ssize_t)sizeof(req));
	n = recv(fd, &ack, sizeof(ack), 0);
	close(fd);
	assert_true(n >= (ssize_t)NLMSG_LENGTH(sizeof(*e)) && ack.nh.nlmsg_type == NLMSG_ERROR);
	return e->error;
}

/* Destroyed, on a kernel that destroys TIME-WAIT sockets (Linux 6.0 and later): where the
 * library says unsupported, the kernel itself must refuse (EOPNOTSUPP) the same socket. */
static void test_time_wait(void **state)
{
	struct pair p;
	uint64_t cookie;
	struct sdiag_sock *s;
	uint16_t sport, dport;
	int err = 0;
	char ch;

	(void)state;
	tcp_pair(&p, AF_INET6, "::1");
	cookie = fd_cookie(p.cfd);
	sport = fd_port(p.cfd);
	dport = fd_port(p.lfd);
	close(p.cfd); /* the side closing first goes to TIME-WAIT */
	assert_int_equal(recv(p.afd, &ch, 1, 0), 0);
	close(p.afd);
	usleep(50 * 1000);
	s = NULL;
	{
		struct sdiag_sock_list l = { 0 };
		const struct sdiag_sock *t;

		collect_tables(&l, T_TCP, 0);
		t = find_cookie(&l, cookie); /* TIME-WAIT keeps the cookie */
		assert_non_null(t);
		assert_int_equal(t->state, SDIAG_SS_TIME_WAIT);
		s = sdiag_sock_dup(t);
		sdiag_sock_list_free(&l);
	}
	if (destroy_one(s, &err) == SDIAG_UNSUPPORTED) {
		assert_int_equal(err, -EOPNOTSUPP);
		assert_int_equal(raw_destroy_tcp6_loopback(sport, dport, cookie), -EOPNOTSUPP);
		assert_true(cookie_present(cookie, T_TCP));
		free(s);
		close(p.lfd);
		SDIAG_SKIP("tw-destroy", "this kernel refuses to destroy TIME-WAIT sockets "
			   "(EOPNOTSUPP, asked with a SOCK_DESTROY of its own; Linux 6.0 and later "
			   "destroy them)");
	}
	assert_int_equal(err, 0);
	assert_false(cookie_present(cookie, T_TCP));
	free(s);
	close(p.lfd);
}

static void test_v4_mapped(void **state)
{
	int lfd = stream_listen(AF_INET6, 0, "::", 0, 16), c, a;
	struct sdiag_sock *s;
	struct blocked b;
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	(void)state;
	c = stream_connect(AF_INET, 0, "127.0.0.1", fd_port(lfd));
	a = accept(lfd, NULL, NULL);
	assert_true(a >= 0);
	s = record_of(a, T_TCP);
	assert_int_equal(s->family, AF_INET6);
	assert_memory_equal(s->inet.src, mapped, sizeof(mapped));
	assert_memory_equal(s->inet.dst, mapped, sizeof(mapped));
	blocked_start(&b, a, 0);
	expect_destroyed(s);
	assert_int_equal(blocked_end(&b), ECONNABORTED);
	/* The dual-stack listener was not hit. */
	assert_int_equal(sock_error(lfd), 0);
	assert_true(cookie_present(fd_cookie(lfd), T_TCP));
	free(s);
	close(a);
	close(c);
	close(lfd);
}

/* ---- exactness ------------------------------------------------------------- */

/* A connection closed after the dump and recreated on the same 4-tuple:
 * the old record must not destroy the new socket. */
static void test_cookie_recreated_connection(void **state)
{
	int lfd = stream_listen(AF_INET, 0, "127.0.0.1", 0, 16), one = 1;
	struct sockaddr_storage ss, cs;
	socklen_t len = make_addr(&ss, AF_INET, "127.0.0.1", fd_port(lfd));
	socklen_t clen = make_addr(&cs, AF_INET, "127.0.0.1", 40001);
	struct sdiag_sock *old_c, *old_a;
	int c, a, c2, a2;

	(void)state;
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(setsockopt(c, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
	assert_int_equal(bind(c, (struct sockaddr *)&cs, clen), 0);
	assert_int_equal(connect(c, (struct sockaddr *)&ss, len), 0);
	a = accept(lfd, NULL, NULL);
	old_c = record_of(c, T_TCP);
	old_a = record_of(a, T_TCP);
	close_rst(c);
	usleep(20 * 1000);
	close(a);

	c2 = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(setsockopt(c2, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
	assert_int_equal(bind(c2, (struct sockaddr *)&cs, clen), 0);
	assert_int_equal(connect(c2, (struct sockaddr *)&ss, len), 0);
	a2 = accept(lfd, NULL, NULL);
	assert_true(a2 >= 0);
	assert_true(fd_cookie(c2) != old_c->cookie);

	/* Same 4-tuples, old cookies: gone, and nothing touched. The server
	 * side's local address is the listener's: without the cookie the
	 * kernel's lookup would have fallen back to the listener. */
	assert_int_equal(destroy_one(old_c, NULL), SDIAG_GONE);
	assert_int_equal(destroy_one(old_a, NULL), SDIAG_GONE);
	assert_int_equal(sock_error(c2), 0);
	assert_int_equal(sock_error(a2), 0);
	assert_int_equal(sock_error(lfd), 0);
	assert_int_equal(send(c2, "ok", 2, 0), 2);
	{
		char buf[2];

		assert_int_equal(recv(a2, buf, 2, 0), 2);
	}
	free(old_c);
	free(old_a);
	close(c2);
	close(a2);
	close(lfd);
}

/* A listener closed after the dump and replaced on the same port. */
static void test_cookie_recreated_listener(void **state)
{
	int l1 = stream_listen(AF_INET, 0, "127.0.0.1", 0, 16), l2, c;
	uint16_t port = fd_port(l1);
	struct sdiag_sock *old;

	(void)state;
	old = record_of(l1, T_TCP);
	close(l1);
	l2 = stream_listen(AF_INET, 0, "127.0.0.1", port, 16);
	assert_int_equal(destroy_one(old, NULL), SDIAG_GONE);
	assert_int_equal(sock_error(l2), 0);
	c = stream_connect(AF_INET, 0, "127.0.0.1", port);
	close(c);
	free(old);
	close(l2);
}

/* A record without a cookie is never sent (the kernel would take any socket
 * on those addresses, or the listener behind them). */
static void test_no_cookie_never_sent(void **state)
{
	int lfd = stream_listen(AF_INET, 0, "127.0.0.1", 0, 16), err = 0;
	struct sdiag_sock *s;

	(void)state;
	s = record_of(lfd, T_TCP);
	s->has &= ~(uint64_t)SDIAG_HAS_COOKIE;
	assert_int_equal(destroy_one(s, &err), SDIAG_ERROR);
	assert_int_equal(err, -EINVAL);
	assert_int_equal(sock_error(lfd), 0);
	free(s);
	close(lfd);
}

static int reuseport_listener(uint16_t port)
{
	struct sockaddr_storage ss;
	socklen_t len = make_addr(&ss, AF_INET, "127.0.0.1", port);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	assert_true(fd >= 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)), 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&ss, len), 0);
	assert_int_equal(listen(fd, 16), 0);
	return fd;
}

/* Every member of a group of 8 is destroyed, whatever member the kernel's
 * hash picks first. tcp: listeners; udp: bound sockets. */
static void reuseport_group(bool tcp)
{
	struct sdiag_sock *recs[8];
	enum sdiag_destroy_result res[8];
	int errs[8], fds[8];
	struct sdiag_handle *h = NULL;
	uint16_t port;

	fds[0] = tcp ? reuseport_listener(0) : udp_bound(AF_INET, "127.0.0.1", 0, true);
	port = fd_port(fds[0]);
	for (int i = 1; i < 8; i++)
		fds[i] = tcp ? reuseport_listener(port) :
			       udp_bound(AF_INET, "127.0.0.1", port, true);
	for (int i = 0; i < 8; i++)
		recs[i] = record_of(fds[i], tcp ? T_TCP : T_UDP);

	assert_int_equal(sdiag_open(&h), 0);
	assert_int_equal(sdiag_destroy(h, (const struct sdiag_sock *const *)recs, 8, res, errs), 0);
	sdiag_close(h);
	for (int i = 0; i < 8; i++) {
		if (res[i] != SDIAG_DESTROYED)
			fail_msg("member %d: %s (%s)", i, sdiag_destroy_result_name(res[i]),
				 strerror(-errs[i]));
		assert_int_equal(sock_error(fds[i]), ECONNABORTED);
		free(recs[i]);
		close(fds[i]);
	}
}

static void test_reuseport_tcp(void **state)
{
	(void)state;
	reuseport_group(true);
}

static void test_reuseport_udp(void **state)
{
	(void)state;
	reuseport_group(false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_tcp_recv_aborted_peer_reset, setup),
		cmocka_unit_test_setup(test_udp_recv_aborted, setup),
		cmocka_unit_test_setup(test_udp_connected, setup),
		cmocka_unit_test_setup(test_udplite, setup),
		cmocka_unit_test_setup(test_accept_returns, setup),
		cmocka_unit_test_setup(test_syn_recv, setup),
		cmocka_unit_test_setup(test_time_wait, setup),
		cmocka_unit_test_setup(test_v4_mapped, setup),
		cmocka_unit_test_setup(test_cookie_recreated_connection, setup),
		cmocka_unit_test_setup(test_cookie_recreated_listener, setup),
		cmocka_unit_test_setup(test_no_cookie_never_sent, setup),
		cmocka_unit_test_setup(test_reuseport_tcp, setup),
		cmocka_unit_test_setup(test_reuseport_udp, setup),
	};

	return sdiag_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
