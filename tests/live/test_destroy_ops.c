/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Live test of destroy, continued (see test_destroy.c): families and kinds
 * the kernel cannot destroy (reported unsupported, nothing sent, sockets
 * untouched), denied without CAP_NET_ADMIN, many sockets in small batches
 * with some closed first, and sdiag_kill while another thread closes sockets.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tests/test_skip.h"

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

#include "tests/live/destroy_util.h"
#include "tests/blob_util.h"

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif
#ifndef SO_COOKIE
#define SO_COOKIE 57
#endif

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
	SDIAG_OPTS(sdiag_query, q, .tables = T_TCP);
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

/* The record a destroyer reports is the one it was given, kernel structs
 * included: their views point into a datagram gone by the time of the flush,
 * so the destroyer must keep its own copy of them. */
struct view_check {
	uint32_t want[SDIAG_SKMEM_VARS];
	unsigned calls, same;
};

static int view_cb(const struct sdiag_sock *s, enum sdiag_destroy_result res, int err,
		   void *userdata)
{
	struct view_check *v = userdata;
	uint32_t got[SDIAG_SKMEM_VARS];

	(void)res;
	(void)err;
	v->calls++;
	sdiag_sock_blob_copy(s, SDIAG_BLOB_SKMEMINFO, got, sizeof(got));
	v->same += !memcmp(got, v->want, sizeof(got));
	return 0;
}

static void test_destroyer_keeps_views(void **state)
{
	struct view_check v = { .calls = 0 };
	uint32_t datagram[SDIAG_SKMEM_VARS];
	struct sdiag_sock_list l = { 0 };
	struct sdiag_handle *h = NULL;
	struct sdiag_destroyer *d = NULL;
	struct sdiag_sock rec;
	int fd;

	(void)state;
	fd = udp_bound(AF_INET, "127.0.0.1", 0, false);
	collect_tables(&l, T_UDP, 0);
	assert_non_null(find_cookie(&l, fd_cookie(fd)));
	rec = *find_cookie(&l, fd_cookie(fd));
	for (unsigned i = 0; i < SDIAG_SKMEM_VARS; i++)
		datagram[i] = v.want[i] = 1000 + i;
	t_blob_attach(&rec, SDIAG_BLOB_SKMEMINFO, datagram, sizeof(datagram));
	rec.has |= SDIAG_HAS_SKMEMINFO;
	assert_int_equal(sdiag_open(&h), 0);
	assert_int_equal(sdiag_destroyer_new(&d, h, view_cb, &v), 0);
	assert_int_equal(sdiag_destroyer_add(d, &rec), 0);
	memset(datagram, 0xee, sizeof(datagram)); /* the next recv() */
	assert_int_equal(sdiag_destroyer_flush(d), 0);
	sdiag_destroyer_free(d);
	sdiag_close(h);
	sdiag_sock_list_free(&l);
	close(fd);
	assert_int_equal(v.calls, 1);
	assert_int_equal(v.same, 1);
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
	SDIAG_OPTS(sdiag_query, q,
			.tables = T_TCP,
			.states = SDIAG_STATE_BIT(SDIAG_SS_ESTABLISHED));
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
		cmocka_unit_test_setup(test_unsupported_families, setup),
		cmocka_unit_test_setup(test_denied, setup),
		cmocka_unit_test_setup(test_batches, setup),
		cmocka_unit_test_setup(test_destroyer_keeps_views, setup),
		cmocka_unit_test_setup(test_kill_concurrent_close, setup),
	};

	return sdiag_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
