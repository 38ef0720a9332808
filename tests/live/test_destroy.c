/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Live test of destroy (sdiag_destroy, the destroyer, sdiag_kill): real
 * sockets in a fresh private network namespace per test. What the owner of a
 * destroyed socket and its peer see, every TCP state the kernel can destroy,
 * UDP bound and connected, IPv4-mapped IPv6, cookie exactness (a socket
 * recreated on the same addresses is never hit; nor is a listener that a
 * cookie-less lookup would fall back to), SO_REUSEPORT groups of 8, families
 * the kernel cannot destroy, denied without CAP_NET_ADMIN, batches.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <linux/capability.h>
#include <linux/netlink.h>
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

#include "live_util.h"
#include "netns_util.h"

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif
#ifndef SO_COOKIE
#define SO_COOKIE 57
#endif

#define T_TCP SDIAG_TABLE_BIT(SDIAG_T_TCP)
#define T_UDP SDIAG_TABLE_BIT(SDIAG_T_UDP)

static int setup(void **state)
{
	(void)state;
	netns_enter_private_or_skip();
	return 0;
}

/* ---- helpers ----------------------------------------------------------------- */

/* The dumped record of fd (a copy: free it). */
static struct sdiag_sock *record_of(int fd, uint32_t tables)
{
	struct sdiag_sock_list l = { 0 };
	const struct sdiag_sock *s;
	struct sdiag_sock *copy;

	collect_tables(&l, tables, 0);
	s = find_cookie(&l, fd_cookie(fd));
	if (!s)
		fail_msg("fd %d not in the dump (%zu records)", fd, l.n);
	copy = sdiag_sock_dup(s);
	assert_non_null(copy);
	sdiag_sock_list_free(&l);
	return copy;
}

static bool cookie_present(uint64_t cookie, uint32_t tables)
{
	struct sdiag_sock_list l = { 0 };
	bool r;

	collect_tables(&l, tables, 0);
	r = find_cookie(&l, cookie) != NULL;
	sdiag_sock_list_free(&l);
	return r;
}

static enum sdiag_destroy_result destroy_one(const struct sdiag_sock *s, int *ret_err)
{
	struct sdiag_handle *h = NULL;
	enum sdiag_destroy_result res = SDIAG_ERROR;
	int err = 1;

	assert_int_equal(sdiag_open(&h), 0);
	assert_int_equal(sdiag_destroy(h, &s, 1, &res, &err), 0);
	sdiag_close(h);
	if (ret_err)
		*ret_err = err;
	return res;
}

static void expect_destroyed(const struct sdiag_sock *s)
{
	int err = 1;
	enum sdiag_destroy_result res = destroy_one(s, &err);

	if (res != SDIAG_DESTROYED)
		fail_msg("result %s (%s), expected destroyed", sdiag_destroy_result_name(res),
			 strerror(-err));
	assert_int_equal(err, 0);
}

static int sock_error(int fd)
{
	int e = 0;
	socklen_t len = sizeof(e);

	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len), 0);
	return e;
}

/* A blocking call in a thread, to be interrupted by a destroy. */
struct blocked {
	pthread_t t;
	int fd;
	int op; /* 0 recv, 1 accept */
	volatile int started;
	ssize_t ret;
	int err;
};

static void *blocked_run(void *arg)
{
	struct blocked *b = arg;
	char buf[16];

	b->started = 1;
	b->ret = b->op ? accept(b->fd, NULL, NULL) : recv(b->fd, buf, sizeof(buf), 0);
	b->err = b->ret < 0 ? errno : 0;
	return NULL;
}

static void blocked_start(struct blocked *b, int fd, int op)
{
	memset(b, 0, sizeof(*b));
	b->fd = fd;
	b->op = op;
	assert_int_equal(pthread_create(&b->t, NULL, blocked_run, b), 0);
	while (!b->started)
		usleep(1000);
	usleep(100 * 1000); /* let it block in the kernel */
}

/* Wait for the call to return (at most 3 s); returns its errno (0 = success). */
static int blocked_end(struct blocked *b)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 3;
	if (pthread_timedjoin_np(b->t, NULL, &ts) != 0)
		fail_msg("the blocked call did not return after the destroy");
	return b->ret < 0 ? b->err : 0;
}

struct pair {
	int lfd, cfd, afd;
};

static void tcp_pair(struct pair *p, int family, const char *addr)
{
	p->lfd = stream_listen(family, 0, addr, 0, 16);
	p->cfd = stream_connect(family, 0, addr, fd_port(p->lfd));
	p->afd = accept(p->lfd, NULL, NULL);
	assert_true(p->afd >= 0);
}

static void pair_close(struct pair *p)
{
	close(p->lfd);
	close(p->cfd);
	close(p->afd);
}

static int udp_bound(int family, const char *addr, uint16_t port, bool reuseport)
{
	struct sockaddr_storage ss;
	socklen_t len = make_addr(&ss, family, addr, port);
	int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0), one = 1;

	assert_true(fd >= 0);
	if (reuseport)
		assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)), 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&ss, len), 0);
	return fd;
}

/* Close with an immediate RST: the socket is gone at once (no TIME-WAIT). */
static void close_rst(int fd)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
	close(fd);
}

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
		skip(); /* kernel without UDP-Lite */
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

static void test_time_wait(void **state)
{
	struct pair p;
	uint64_t cookie;
	struct sdiag_sock *s;
	char ch;

	(void)state;
	tcp_pair(&p, AF_INET6, "::1");
	cookie = fd_cookie(p.cfd);
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
	expect_destroyed(s);
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

/* ---- what cannot be destroyed ---------------------------------------------------- */

static void test_unsupported_families(void **state)
{
	uint32_t tables = SDIAG_TABLES_UNIX | SDIAG_TABLE_BIT(SDIAG_T_NETLINK) |
			  SDIAG_TABLES_PACKET | SDIAG_TABLE_BIT(SDIAG_T_MPTCP);
	struct sdiag_sock_list l = { 0 };
	struct sdiag_handle *h = NULL;
	enum sdiag_destroy_result *res;
	int *errs, sv[2], nl, pk, ml;
	size_t mine = 0;
	char buf[4];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	assert_true(nl >= 0);
	{
		struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

		/* Unbound netlink sockets are in no table netlink_diag walks. */
		assert_int_equal(bind(nl, (struct sockaddr *)&sa, sizeof(sa)), 0);
	}
	pk = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(pk >= 0);
	ml = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_MPTCP);
	if (ml >= 0) {
		struct sockaddr_storage ss;
		socklen_t len = make_addr(&ss, AF_INET, "127.0.0.1", 0);

		assert_int_equal(bind(ml, (struct sockaddr *)&ss, len), 0);
		assert_int_equal(listen(ml, 4), 0);
	}
	collect_tables(&l, tables, 0);
	res = calloc(l.n + 1, sizeof(*res));
	errs = calloc(l.n + 1, sizeof(*errs));
	assert_int_equal(sdiag_open(&h), 0);
	assert_int_equal(
		sdiag_destroy(h, (const struct sdiag_sock *const *)l.socks, l.n, res, errs), 0);
	sdiag_close(h);
	for (size_t i = 0; i < l.n; i++) {
		assert_false(sdiag_destroyable(l.socks[i]));
		assert_int_equal(res[i], SDIAG_UNSUPPORTED);
		assert_int_equal(errs[i], -EOPNOTSUPP);
		if (l.socks[i]->cookie == fd_cookie(sv[0]) || l.socks[i]->cookie == fd_cookie(nl) ||
		    l.socks[i]->cookie == fd_cookie(pk) ||
		    (ml >= 0 && l.socks[i]->cookie == fd_cookie(ml)))
			mine++;
	}
	assert_int_equal(mine, ml >= 0 ? 4 : 3);
	/* Still alive. */
	assert_int_equal(send(sv[0], "abc", 3, 0), 3);
	assert_int_equal(recv(sv[1], buf, sizeof(buf), 0), 3);
	free(res);
	free(errs);
	sdiag_sock_list_free(&l);
	close(sv[0]);
	close(sv[1]);
	close(nl);
	close(pk);
	if (ml >= 0)
		close(ml);
}

/* ---- permission ------------------------------------------------------------------- */

static int drop_net_admin(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data) < 0)
		return -errno;
	data[CAP_NET_ADMIN / 32].effective &= ~(1u << (CAP_NET_ADMIN % 32));
	data[CAP_NET_ADMIN / 32].permitted &= ~(1u << (CAP_NET_ADMIN % 32));
	return syscall(SYS_capset, &hdr, data) < 0 ? -errno : 0;
}

static int count_cb(const struct sdiag_sock *s, enum sdiag_destroy_result res, int err,
		    void *userdata)
{
	int *counts = userdata;

	(void)s;
	(void)err;
	counts[res]++;
	return 0;
}

/* Child: 0 = as expected, else the step that failed. */
static int denied_child(void)
{
	struct sdiag_handle *h = NULL;
	struct sdiag_destroyer *d = NULL;
	struct sdiag_sock_list l = { 0 };
	struct sdiag_query q = { .tables = T_TCP };
	int counts[SDIAG_ERROR + 1] = { 0 };
	int lfd = stream_listen(AF_INET, 0, "127.0.0.1", 0, 4);

	if (sdiag_open(&h) < 0 || sdiag_collect(h, &q, &l) < 0 || l.n != 1)
		return 2;
	/* Created with the capability, used without it: every request denied. */
	if (sdiag_destroyer_new(&d, h, count_cb, counts) < 0)
		return 3;
	if (drop_net_admin() < 0)
		return 4;
	if (sdiag_destroyer_add(d, l.socks[0]) < 0 || sdiag_destroyer_flush(d) < 0)
		return 5;
	if (counts[SDIAG_DENIED] != 1 || sock_error(lfd) != 0)
		return 6;
	sdiag_destroyer_free(d);
	/* Without the capability: refused up front. */
	d = NULL;
	if (sdiag_destroyer_new(&d, h, count_cb, counts) != -EPERM)
		return 7;
	return 0;
}

static void test_denied(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(denied_child());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status))
		fail_msg("denied child failed at step %d", WEXITSTATUS(status));
}

/* ---- batches and kills --------------------------------------------------------------- */

/* Many sockets in small batches, some closed before the destroy: exactly
 * those are gone, the others destroyed, results in order. */
static void test_batches(void **state)
{
	enum { N = 600 };
	int fds[N], counts[SDIAG_ERROR + 1] = { 0 };
	struct sdiag_sock *recs[N];
	struct sdiag_handle *h = NULL;
	struct sdiag_destroyer *d = NULL;
	struct sdiag_sock_list l = { 0 };

	(void)state;
	raise_nofile();
	for (int i = 0; i < N; i++)
		fds[i] = udp_bound(i % 2 ? AF_INET6 : AF_INET, i % 2 ? "::1" : "127.0.0.1", 0,
				   false);
	collect_tables(&l, T_UDP, 0);
	for (int i = 0; i < N; i++) {
		const struct sdiag_sock *s = find_cookie(&l, fd_cookie(fds[i]));

		assert_non_null(s);
		recs[i] = sdiag_sock_dup(s);
	}
	sdiag_sock_list_free(&l);
	for (int i = 0; i < N; i += 3) {
		close(fds[i]);
		fds[i] = -1;
	}
	assert_int_equal(sdiag_open(&h), 0);
	assert_int_equal(sdiag_destroyer_new(&d, h, count_cb, counts), 0);
	assert_int_equal(sdiag_destroyer_set_batch(d, 7), 7);
	for (int i = 0; i < N; i++)
		assert_int_equal(sdiag_destroyer_add(d, recs[i]), 0);
	assert_int_equal(sdiag_destroyer_flush(d), 0);
	sdiag_destroyer_free(d);
	sdiag_close(h);
	assert_int_equal(counts[SDIAG_GONE], N / 3);
	assert_int_equal(counts[SDIAG_DESTROYED], N - N / 3);
	for (int i = 0; i < N; i++) {
		if (fds[i] >= 0) {
			assert_int_equal(sock_error(fds[i]), ECONNABORTED);
			close(fds[i]);
		}
		free(recs[i]);
	}
}

struct kill_count {
	int counts[SDIAG_ERROR + 1];
	uint64_t *cookies;
	size_t n, cap;
};

static int kill_cb(const struct sdiag_sock *s, enum sdiag_destroy_result res, int err,
		   void *userdata)
{
	struct kill_count *k = userdata;

	(void)err;
	k->counts[res]++;
	for (size_t i = 0; i < k->n; i++)
		if (k->cookies[i] == s->cookie)
			fail_msg("socket %llu reported twice", (unsigned long long)s->cookie);
	if (k->n == k->cap) {
		k->cap = k->cap ? k->cap * 2 : 1024;
		k->cookies = realloc(k->cookies, k->cap * sizeof(*k->cookies));
		assert_non_null(k->cookies);
	}
	k->cookies[k->n++] = s->cookie;
	return 0;
}

struct closer {
	int *fds;
	int n;
};

static void *closer_run(void *arg)
{
	struct closer *c = arg;

	for (int i = 0; i < c->n; i += 2) {
		close_rst(c->fds[i]);
		c->fds[i] = -1;
	}
	return NULL;
}

/* sdiag_kill of every established TCP socket while another thread closes
 * half the clients: each socket reported once, destroyed or gone, none left. */
static void test_kill_concurrent_close(void **state)
{
	enum { N = 1500 };
	static int lfd, cfd[N], afd[N];
	struct sdiag_query q = { .tables = T_TCP, .states = SDIAG_STATE_BIT(SDIAG_SS_ESTABLISHED) };
	struct kill_count k = { 0 };
	struct sdiag_handle *h = NULL;
	struct sdiag_sock_list l = { 0 };
	struct closer cl = { cfd, N };
	pthread_t t;

	(void)state;
	raise_nofile();
	lfd = stream_listen(AF_INET, 0, "127.0.0.1", 0, 4096);
	for (int i = 0; i < N; i++) {
		cfd[i] = stream_connect(AF_INET, 0, "127.0.0.1", fd_port(lfd));
		afd[i] = accept(lfd, NULL, NULL);
		assert_true(afd[i] >= 0);
	}
	assert_int_equal(sdiag_open(&h), 0);
	assert_int_equal(pthread_create(&t, NULL, closer_run, &cl), 0);
	assert_int_equal(sdiag_kill(h, &q, NULL, kill_cb, NULL, &k), 0);
	pthread_join(t, NULL);
	sdiag_close(h);
	assert_int_equal(k.counts[SDIAG_ERROR], 0);
	assert_int_equal(k.counts[SDIAG_DENIED], 0);
	assert_int_equal(k.counts[SDIAG_UNSUPPORTED], 0);
	assert_true(k.counts[SDIAG_DESTROYED] > 0);
	/* Nothing established is left, and the listener is untouched. */
	collect_tables(&l, T_TCP, 0);
	for (size_t i = 0; i < l.n; i++)
		assert_int_not_equal(l.socks[i]->state, SDIAG_SS_ESTABLISHED);
	assert_non_null(find_cookie(&l, fd_cookie(lfd)));
	assert_int_equal(sock_error(lfd), 0);
	sdiag_sock_list_free(&l);
	fprintf(stderr, "# kill: destroyed %d, gone %d, reported %zu\n", k.counts[SDIAG_DESTROYED],
		k.counts[SDIAG_GONE], k.n);
	for (int i = 0; i < N; i++) {
		if (cfd[i] >= 0)
			close(cfd[i]);
		close(afd[i]);
	}
	close(lfd);
	free(k.cookies);
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
		cmocka_unit_test_setup(test_unsupported_families, setup),
		cmocka_unit_test_setup(test_denied, setup),
		cmocka_unit_test_setup(test_batches, setup),
		cmocka_unit_test_setup(test_kill_concurrent_close, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
