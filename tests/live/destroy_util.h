/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers of the destroy live tests (test_destroy.c, test_destroy_ops.c):
 * records of real sockets, one-socket destroys, blocked calls to interrupt,
 * TCP pairs, UDP sockets. They fail the running cmocka test on any
 * unexpected error.
 */
#ifndef SOCKDIAG_TESTS_DESTROY_UTIL_H
#define SOCKDIAG_TESTS_DESTROY_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "tests/live/live_util.h"
#include "tests/live/netns_util.h"

#define T_TCP SDIAG_TABLE_BIT(SDIAG_T_TCP)
#define T_UDP SDIAG_TABLE_BIT(SDIAG_T_UDP)

static inline int setup(void **state)
{
	(void)state;
	netns_enter_private_or_skip();
	return 0;
}

/* ---- helpers ----------------------------------------------------------------- */

/* The dumped record of fd (a copy: free it). */
static inline struct sdiag_sock *record_of(int fd, uint32_t tables)
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

static inline bool cookie_present(uint64_t cookie, uint32_t tables)
{
	struct sdiag_sock_list l = { 0 };
	bool r;

	collect_tables(&l, tables, 0);
	r = find_cookie(&l, cookie) != NULL;
	sdiag_sock_list_free(&l);
	return r;
}

static inline enum sdiag_destroy_result destroy_one(const struct sdiag_sock *s, int *ret_err)
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

static inline void expect_destroyed(const struct sdiag_sock *s)
{
	int err = 1;
	enum sdiag_destroy_result res = destroy_one(s, &err);

	if (res != SDIAG_DESTROYED)
		fail_msg("result %s (%s), expected destroyed", sdiag_destroy_result_name(res),
			 strerror(-err));
	assert_int_equal(err, 0);
}

static inline int sock_error(int fd)
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

static inline void *blocked_run(void *arg)
{
	struct blocked *b = arg;
	char buf[16];

	b->started = 1;
	b->ret = b->op ? accept(b->fd, NULL, NULL) : recv(b->fd, buf, sizeof(buf), 0);
	b->err = b->ret < 0 ? errno : 0;
	return NULL;
}

static inline void blocked_start(struct blocked *b, int fd, int op)
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
static inline int blocked_end(struct blocked *b)
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

static inline void tcp_pair(struct pair *p, int family, const char *addr)
{
	p->lfd = stream_listen(family, 0, addr, 0, 16);
	p->cfd = stream_connect(family, 0, addr, fd_port(p->lfd));
	p->afd = accept(p->lfd, NULL, NULL);
	assert_true(p->afd >= 0);
}

static inline void pair_close(struct pair *p)
{
	close(p->lfd);
	close(p->cfd);
	close(p->afd);
}

static inline int udp_bound(int family, const char *addr, uint16_t port, bool reuseport)
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
static inline void close_rst(int fd)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
	close(fd);
}

#endif
