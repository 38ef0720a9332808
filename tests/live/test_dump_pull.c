/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Live test of pull-mode dumps (sdiag_dump_begin/next/end) on the real
 * kernel, each test in a fresh private network namespace. The oracle is what
 * the test made: the cookies (SO_COOKIE) of its own sockets.
 *  - a pull dump of thousands of TCP sockets of both families (many
 *    datagrams) returns each socket exactly once, the same set as
 *    sdiag_dump's callbacks, and where() names the walk;
 *  - a dump ended midway leaves the handle usable; a second begin while one
 *    is under way is -EBUSY;
 *  - per-table families (table_afs) select IPv4 or IPv6 per table;
 *  - SDIAG_Q_SKIP_UNSUPPORTED skips a table the kernel cannot dump unless
 *    named_tables names it, and the dump goes on with the next table.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tests/test_skip.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "tests/live/live_util.h"
#include "tests/live/netns_util.h"

#define PAIRS 1500 /* per family: 3 sockets each, about 9,000 records */

struct made {
	int fds[2 * (2 * PAIRS + 1)];
	size_t n;
	int lfd[2];
};

static int setup(void **state)
{
	(void)state;
	netns_enter_private_or_skip();
	return 0;
}

static void make_tcp(struct made *m)
{
	static const int fams[] = { AF_INET, AF_INET6 };
	static const char *addrs[] = { "127.0.0.1", "::1" };

	raise_nofile();
	m->n = 0;
	for (size_t f = 0; f < 2; f++) {
		m->lfd[f] = stream_listen(fams[f], 0, addrs[f], 0, 4096);
		for (size_t i = 0; i < PAIRS; i++) {
			int c = stream_connect(fams[f], 0, addrs[f], fd_port(m->lfd[f]));
			int a = accept(m->lfd[f], NULL, NULL);

			assert_true(a >= 0);
			m->fds[m->n++] = c;
			m->fds[m->n++] = a;
		}
		m->fds[m->n++] = m->lfd[f];
	}
}

static void close_all(struct made *m)
{
	for (size_t i = 0; i < m->n; i++)
		close(m->fds[i]);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The made sockets' cookies, sorted. */
static uint64_t *made_cookies(const struct made *m)
{
	uint64_t *c = calloc(m->n, sizeof(*c));

	assert_non_null(c);
	for (size_t i = 0; i < m->n; i++)
		c[i] = fd_cookie(m->fds[i]);
	qsort(c, m->n, sizeof(*c), cmp_u64);
	return c;
}

struct got {
	uint64_t *cookies;
	size_t n, cap;
	size_t v4, v6;
};

static int got_add(const struct sdiag_sock *s, void *data)
{
	struct got *g = data;

	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 1024;
		g->cookies = realloc(g->cookies, g->cap * sizeof(*g->cookies));
		assert_non_null(g->cookies);
	}
	g->cookies[g->n++] = s->cookie;
	g->v4 += s->family == AF_INET;
	g->v6 += s->family == AF_INET6;
	return 0;
}

/* g holds exactly the made sockets, each once. */
static void assert_exactly(struct got *g, const struct made *m)
{
	uint64_t *want = made_cookies(m);

	qsort(g->cookies, g->n, sizeof(*g->cookies), cmp_u64);
	assert_int_equal(g->n, m->n);
	for (size_t i = 0; i < m->n; i++)
		assert_true(g->cookies[i] == want[i]);
	free(want);
}

static void test_pull_whole(void **state)
{
	SDIAG_OPTS(sdiag_query, q, .tables = SDIAG_TABLE_BIT(SDIAG_T_TCP));
	struct got pulled = { 0 }, pushed = { 0 };
	const struct sdiag_sock *s;
	struct sdiag_handle *h;
	struct sdiag_dump *d;
	struct made m;
	enum sdiag_table t;
	int r, family;

	(void)state;
	make_tcp(&m);
	assert_int_equal(sdiag_open(&h), 0);
	assert_int_equal(sdiag_dump_begin(h, &q, &d), 0);
	assert_int_equal(sdiag_dump_where(d, &t, &family), -ENOENT);
	while ((r = sdiag_dump_next(d, &s)) == 1) {
		got_add(s, &pulled);
		assert_int_equal(sdiag_dump_where(d, &t, &family), 0);
		assert_int_equal(t, SDIAG_T_TCP);
		assert_int_equal(family, AF_UNSPEC); /* one walk of both families */
	}
	assert_int_equal(r, 0);
	assert_int_equal(sdiag_dump_next(d, &s), 0); /* the end stays the end */
	sdiag_dump_end(d);
	assert_exactly(&pulled, &m);
	assert_int_equal(pulled.v4, 2 * PAIRS + 1);
	assert_int_equal(pulled.v6, 2 * PAIRS + 1);

	/* sdiag_dump is the same loop. */
	assert_int_equal(sdiag_dump(h, &q, got_add, NULL, &pushed), 0);
	assert_exactly(&pushed, &m);
	free(pulled.cookies);
	free(pushed.cookies);
	sdiag_close(h);
	close_all(&m);
}

static void test_end_midway(void **state)
{
	SDIAG_OPTS(sdiag_query, q, .tables = SDIAG_TABLE_BIT(SDIAG_T_TCP));
	struct got g = { 0 };
	const struct sdiag_sock *s;
	struct sdiag_handle *h;
	struct sdiag_dump *d, *d2;
	struct made m;

	(void)state;
	make_tcp(&m);
	assert_int_equal(sdiag_open(&h), 0);
	assert_int_equal(sdiag_dump_begin(h, &q, &d), 0);
	for (int i = 0; i < 10; i++)
		assert_int_equal(sdiag_dump_next(d, &s), 1);
	/* One dump at a time on a handle: push or pull. */
	assert_int_equal(sdiag_dump_begin(h, &q, &d2), -EBUSY);
	assert_int_equal(sdiag_dump(h, &q, got_add, NULL, &g), -EBUSY);
	sdiag_dump_end(d); /* the rest of the kernel's dump is drained */
	sdiag_dump_end(NULL);

	assert_int_equal(sdiag_dump(h, &q, got_add, NULL, &g), 0);
	assert_exactly(&g, &m);
	free(g.cookies);
	sdiag_close(h);
	close_all(&m);
}

static void test_table_afs(void **state)
{
	SDIAG_OPTS(sdiag_query, q, .tables = SDIAG_TABLE_BIT(SDIAG_T_TCP) |
					   SDIAG_TABLE_BIT(SDIAG_T_UDP));
	int u4 = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int u6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_storage ss;
	struct sdiag_handle *h;
	struct sdiag_sock_list l = { 0 };
	struct made m;
	size_t tcp4 = 0, tcp6 = 0, udp4 = 0, udp6 = 0;

	(void)state;
	make_tcp(&m);
	assert_int_equal(bind(u4, (struct sockaddr *)&ss, make_addr(&ss, AF_INET, "127.0.0.1", 0)),
			 0);
	assert_int_equal(bind(u6, (struct sockaddr *)&ss, make_addr(&ss, AF_INET6, "::1", 0)), 0);
	q.table_afs[SDIAG_T_TCP] = SDIAG_AF_INET6;
	q.table_afs[SDIAG_T_UDP] = SDIAG_AF_INET;
	q.afs = SDIAG_AF_ALL;
	assert_int_equal(sdiag_open(&h), 0);
	assert_int_equal(sdiag_collect(h, &q, &l), 0);
	for (size_t i = 0; i < l.n; i++) {
		const struct sdiag_sock *s = l.socks[i];

		tcp4 += s->table == SDIAG_T_TCP && s->family == AF_INET;
		tcp6 += s->table == SDIAG_T_TCP && s->family == AF_INET6;
		udp4 += s->table == SDIAG_T_UDP && s->family == AF_INET;
		udp6 += s->table == SDIAG_T_UDP && s->family == AF_INET6;
	}
	assert_int_equal(tcp4, 0);
	assert_int_equal(tcp6, 2 * PAIRS + 1);
	assert_int_equal(udp4, 1);
	assert_int_equal(udp6, 0);
	assert_non_null(find_cookie(&l, fd_cookie(u4)));
	sdiag_sock_list_free(&l);
	sdiag_close(h);
	close(u4);
	close(u6);
	close_all(&m);
}

static int ignore(const struct sdiag_sock *s, void *data)
{
	(void)s;
	(void)data;
	return 0;
}

/* Pull q to its end: records, and the errors with their tables. */
static size_t pull_errors(struct sdiag_handle *h, const struct sdiag_query *q, int *errs,
			  enum sdiag_table *tables, bool *saw_unix)
{
	const struct sdiag_sock *s;
	struct sdiag_dump *d;
	size_t n = 0;
	int r;

	assert_int_equal(sdiag_dump_begin(h, q, &d), 0);
	while ((r = sdiag_dump_next(d, &s)) != 0) {
		if (r > 0) {
			*saw_unix |= s->family == AF_UNIX;
			continue;
		}
		assert_true(n < 8);
		errs[n] = r;
		assert_int_equal(sdiag_dump_where(d, &tables[n], NULL), 0);
		n++;
	}
	sdiag_dump_end(d);
	return n;
}

static void test_skip_unsupported(void **state)
{
	/* In the library's order: unix, raw, vsock. */
	SDIAG_OPTS(sdiag_query, q,
		.tables = SDIAG_TABLE_BIT(SDIAG_T_RAW) | SDIAG_TABLES_VSOCK |
			  SDIAG_TABLE_BIT(SDIAG_T_UNIX_DGRAM));
	enum sdiag_table tables[8];
	int errs[8], sv[2];
	struct sdiag_handle *h;
	bool saw_unix = false;
	size_t n;

	(void)state;
	/* As test_list_live's unsupported families: pinned where the kernel
	 * config says these are missing (the development kernel). */
	if (kconfig("CONFIG_INET_RAW_DIAG") != 'n' || kconfig("CONFIG_VSOCKETS_DIAG") != 'n') {
		fprintf(stderr, "raw_diag or vsock_diag built: the skip policy is not pinned\n");
		return;
	}
	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(sdiag_open(&h), 0);

	/* No policy: each unsupported unit is an error, and the dump goes on. */
	n = pull_errors(h, &q, errs, tables, &saw_unix);
	assert_int_equal(n, 3); /* raw IPv4, raw IPv6, vsock */
	assert_int_equal(errs[0], -EPROTONOSUPPORT);
	assert_int_equal(tables[0], SDIAG_T_RAW);
	assert_int_equal(errs[1], -EPROTONOSUPPORT);
	assert_int_equal(tables[1], SDIAG_T_RAW);
	assert_int_equal(errs[2], -EAFNOSUPPORT);
	assert_int_equal(tables[2], SDIAG_T_VSOCK_STREAM);
	assert_true(saw_unix);

	/* Skipped: nothing named. */
	q.flags = SDIAG_Q_SKIP_UNSUPPORTED;
	saw_unix = false;
	assert_int_equal(pull_errors(h, &q, errs, tables, &saw_unix), 0);
	assert_true(saw_unix);

	/* Named: a table of the vsock group is enough to name the group's dump. */
	q.named_tables = SDIAG_TABLE_BIT(SDIAG_T_VSOCK_DGRAM);
	n = pull_errors(h, &q, errs, tables, &saw_unix);
	assert_int_equal(n, 1);
	assert_int_equal(errs[0], -EAFNOSUPPORT);
	assert_int_equal(tables[0], SDIAG_T_VSOCK_STREAM);

	/* sdiag_dump under the same policy: no callback needed for the skip. */
	q.named_tables = 0;
	assert_int_equal(sdiag_dump(h, &q, ignore, NULL, NULL), 0);
	q.named_tables = SDIAG_TABLE_BIT(SDIAG_T_RAW);
	assert_int_equal(sdiag_dump(h, &q, ignore, NULL, NULL), -EPROTONOSUPPORT);
	sdiag_close(h);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_pull_whole, setup),
		cmocka_unit_test_setup(test_end_midway, setup),
		cmocka_unit_test_setup(test_table_afs, setup),
		cmocka_unit_test_setup(test_skip_unsupported, setup),
	};

	return sdiag_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
