/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Live test of the dump engine on the real kernel, each test in a fresh
 * private network namespace:
 *  - families the kernel cannot dump give their distinct error through the
 *    error callback and the dump goes on with the other tables;
 *  - sdiag_open_netns sees the other namespace's sockets and only those;
 *  - a multi-datagram dump of 5k sockets reports each exactly once, also
 *    while another thread opens and closes sockets;
 *  - a callback can stop a dump and the handle stays usable.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tests/test_skip.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "tests/live/live_util.h"
#include "tests/live/netns_util.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef AF_SMC
#define AF_SMC 43
#endif

static int setup(void **state)
{
	(void)state;
	netns_enter_private_or_skip();
	return 0;
}

/* ---- unsupported families ------------------------------------------------------ */

struct err_log {
	size_t n;
	struct {
		enum sdiag_table t;
		int family;
		int err;
	} e[32];
	size_t records;
	uint64_t want_cookie; /* a unix socket dumped after the failing tables */
	bool seen;
	int stop_with; /* err_cb's return */
};

static int log_sock(const struct sdiag_sock *s, void *data)
{
	struct err_log *log = data;

	log->records++;
	if (s->cookie == log->want_cookie)
		log->seen = true;
	return 0;
}

static int log_err(enum sdiag_table t, int family, int err, void *data)
{
	struct err_log *log = data;

	assert_true(log->n < 32);
	log->e[log->n].t = t;
	log->e[log->n].family = family;
	log->e[log->n].err = err;
	log->n++;
	return log->stop_with;
}

static size_t count_errs(const struct err_log *log, enum sdiag_table t, int family, int err)
{
	size_t n = 0;

	for (size_t i = 0; i < log->n; i++)
		if (log->e[i].t == t && log->e[i].family == family && log->e[i].err == err)
			n++;
	return n;
}

struct expect {
	enum sdiag_table t;
	const char *config; /* kernel option that builds this diag module */
	int families[2];
	int err;
};

static const struct expect expects[] = {
	{ SDIAG_T_RAW, "CONFIG_INET_RAW_DIAG", { AF_INET, AF_INET6 }, -EPROTONOSUPPORT },
	{ SDIAG_T_SCTP, "CONFIG_INET_SCTP_DIAG", { AF_INET, AF_INET6 }, -EPROTONOSUPPORT },
	{ SDIAG_T_VSOCK_STREAM, "CONFIG_VSOCKETS_DIAG", { AF_VSOCK, 0 }, -EAFNOSUPPORT },
	{ SDIAG_T_XDP, "CONFIG_XDP_SOCKETS_DIAG", { AF_XDP, 0 }, -EAFNOSUPPORT },
	{ SDIAG_T_TIPC, "CONFIG_TIPC_DIAG", { AF_TIPC, 0 }, -EAFNOSUPPORT },
	{ SDIAG_T_SMC, "CONFIG_SMC_DIAG", { AF_SMC, 0 }, -EAFNOSUPPORT },
};

static void test_unsupported_families(void **state)
{
	struct err_log log = { 0 };
	SDIAG_OPTS(sdiag_query, q,
			.tables = SDIAG_TABLE_BIT(SDIAG_T_RAW) | SDIAG_TABLE_BIT(SDIAG_T_SCTP) |
			          SDIAG_TABLES_VSOCK | SDIAG_TABLE_BIT(SDIAG_T_XDP) |
			          SDIAG_TABLE_BIT(SDIAG_T_TIPC) | SDIAG_TABLE_BIT(SDIAG_T_SMC) |
			          SDIAG_TABLE_BIT(SDIAG_T_UNIX_DGRAM));
	struct sdiag_handle *h;
	size_t expected_errs = 0, unknown = 0;
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv), 0);
	log.want_cookie = fd_cookie(sv[0]);
	assert_int_equal(sdiag_open(&h), 0);
	assert_int_equal(sdiag_dump(h, &q, log_sock, log_err, &log), 0);
	/* unix is dumped after raw and sctp: the dump went on past their errors. */
	assert_true(log.seen);

	for (size_t i = 0; i < sizeof(expects) / sizeof(expects[0]); i++) {
		const struct expect *x = &expects[i];
		char cfg = kconfig(x->config);

		for (size_t f = 0; f < 2 && x->families[f]; f++) {
			size_t n = count_errs(&log, x->t, x->families[f], x->err);

			if (cfg == 'n') {
				if (n != 1)
					fail_msg("%s is not set but table %d family %d did not "
						 "report %d once",
						 x->config, x->t, x->families[f], x->err);
				expected_errs++;
			} else if (cfg == 0) {
				expected_errs += n; /* config unreadable: either is right */
				unknown++;
			} else {
				assert_int_equal(n, 0);
			}
		}
	}
	/* No other error was reported. */
	assert_int_equal(log.n, expected_errs);
	if (unknown)
		fprintf(stderr, "kernel config unreadable: %zu outcomes not pinned\n", unknown);

	/* Without an error callback the first unsupported table stops the dump. */
	if (kconfig("CONFIG_INET_RAW_DIAG") == 'n') {
		SDIAG_OPTS(sdiag_query, raw,
				.tables = SDIAG_TABLE_BIT(SDIAG_T_RAW) |
				          SDIAG_TABLE_BIT(SDIAG_T_UNIX_DGRAM));
		struct sdiag_sock_list l = { 0 };

		memset(&log, 0, sizeof(log));
		log.want_cookie = fd_cookie(sv[0]);
		assert_int_equal(sdiag_dump(h, &raw, log_sock, NULL, &log), -EPROTONOSUPPORT);
		/* In ss's order unix comes before raw: dumped before the stop. */
		assert_true(log.seen);
		/* An error callback that says stop stops it, with its own error. */
		memset(&log, 0, sizeof(log));
		log.stop_with = -ECANCELED;
		assert_int_equal(sdiag_dump(h, &raw, log_sock, log_err, &log), -ECANCELED);
		assert_int_equal(log.n, 1);
		/* The collector skips the table and keeps the rest. */
		assert_int_equal(sdiag_collect(h, &raw, &l), 0);
		assert_non_null(find_cookie(&l, fd_cookie(sv[0])));
		sdiag_sock_list_free(&l);
	}
	sdiag_close(h);
	close(sv[0]);
	close(sv[1]);
}

/* ---- other namespaces ------------------------------------------------------------- */

static int unix_abstract(const char *name)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	memcpy(sun.sun_path + 1, name, strlen(name));
	assert_int_equal(
		bind(fd, (struct sockaddr *)&sun,
		     (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name))),
		0);
	return fd;
}

static uint64_t ns_inode(int fd)
{
	struct stat st;

	assert_int_equal(fstat(fd, &st), 0);
	return st.st_ino;
}

static void test_open_netns(void **state)
{
	SDIAG_OPTS(sdiag_query, q, .tables = SDIAG_TABLES_UNIX | SDIAG_TABLE_BIT(SDIAG_T_TCP));
	struct sdiag_sock_list l = { 0 };
	struct sdiag_handle *h;
	int ns_a, ns_b, self, a_unix, a_tcp, b_unix, b_tcp;

	(void)state;
	/* Namespace A: the one setup() made. Same port and name in both. */
	ns_a = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	assert_true(ns_a >= 0);
	a_unix = unix_abstract("sdiag-live-ns");
	a_tcp = stream_listen(AF_INET, 0, "127.0.0.1", 7000, 4);
	netns_enter_private_or_skip();
	ns_b = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	assert_true(ns_b >= 0);
	assert_true(ns_inode(ns_a) != ns_inode(ns_b));
	b_unix = unix_abstract("sdiag-live-ns");
	b_tcp = stream_listen(AF_INET, 0, "127.0.0.1", 7000, 4);

	assert_int_equal(sdiag_open_netns(&h, ns_a), 0);
	/* The caller's thread is back in B. */
	self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	assert_int_equal(ns_inode(self), ns_inode(ns_b));
	close(self);
	assert_int_equal(sdiag_collect(h, &q, &l), 0);
	assert_non_null(find_cookie(&l, fd_cookie(a_unix)));
	assert_non_null(find_cookie(&l, fd_cookie(a_tcp)));
	assert_null(find_cookie(&l, fd_cookie(b_unix)));
	assert_null(find_cookie(&l, fd_cookie(b_tcp)));
	sdiag_sock_list_free(&l);
	sdiag_close(h);

	assert_int_equal(sdiag_open(&h), 0);
	assert_int_equal(sdiag_collect(h, &q, &l), 0);
	assert_null(find_cookie(&l, fd_cookie(a_unix)));
	assert_null(find_cookie(&l, fd_cookie(a_tcp)));
	assert_non_null(find_cookie(&l, fd_cookie(b_unix)));
	assert_non_null(find_cookie(&l, fd_cookie(b_tcp)));
	sdiag_sock_list_free(&l);
	sdiag_close(h);

	/* Not a namespace file: an error, and the thread stays where it was. */
	assert_true(sdiag_open_netns(&h, a_unix) < 0);
	self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	assert_int_equal(ns_inode(self), ns_inode(ns_b));
	close(self);
	close(a_unix);
	close(a_tcp);
	close(b_unix);
	close(b_tcp);
	close(ns_a);
	close(ns_b);
}

/* ---- many sockets, churn ------------------------------------------------------------- */

#define N_PAIRS 2500
#define SET_SIZE (1u << 16)

struct cookie_set {
	uint64_t keys[SET_SIZE];
};

/* Returns false if the cookie was already there. */
static bool set_add(struct cookie_set *set, uint64_t c)
{
	size_t i = (size_t)(c * 0x9e3779b97f4a7c15ULL >> 48);

	for (; set->keys[i]; i = (i + 1) & (SET_SIZE - 1))
		if (set->keys[i] == c)
			return false;
	set->keys[i] = c;
	return true;
}

static bool set_has(const struct cookie_set *set, uint64_t c)
{
	size_t i = (size_t)(c * 0x9e3779b97f4a7c15ULL >> 48);

	for (; set->keys[i]; i = (i + 1) & (SET_SIZE - 1))
		if (set->keys[i] == c)
			return true;
	return false;
}

struct dump_check {
	struct cookie_set seen;
	size_t records;
	size_t dups;
	uint64_t dup_cookie;
};

static int check_cb(const struct sdiag_sock *s, void *data)
{
	struct dump_check *dc = data;

	dc->records++;
	assert_true(s->has & SDIAG_HAS_COOKIE);
	if (!set_add(&dc->seen, s->cookie)) {
		dc->dups++;
		dc->dup_cookie = s->cookie;
	}
	return 0;
}

struct churn {
	atomic_bool stop;
	bool udp; /* bind UDP sockets on port instead of connecting */
	size_t rounds;
	uint16_t port;
};

static void *churn_thread(void *arg)
{
	struct churn *ch = arg;
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(ch->port),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int one = 1;

	while (!atomic_load(&ch->stop)) {
		int c = socket(AF_INET, (ch->udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC, 0);
		int l = ch->udp ? -1 : socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (ch->udp && c >= 0) {
			/* Joins the hash slot the dump is walking, at its head. */
			setsockopt(c, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
			bind(c, (struct sockaddr *)&sin, sizeof(sin));
		} else if (c >= 0 && connect(c, (struct sockaddr *)&sin, sizeof(sin)) == 0) {
			/* A connection closed with RST (no TIME-WAIT piles up)
			 * and a short-lived listener on an ephemeral port. */
			setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		}
		if (l >= 0)
			listen(l, 1);
		if (c >= 0)
			close(c);
		if (l >= 0)
			close(l);
		ch->rounds++;
	}
	return NULL;
}

static void *accept_thread(void *arg)
{
	int lfd = *(int *)arg;
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0)
			return NULL; /* listener shut down */
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(fd);
	}
}

/* Dumps while the churn thread runs: a socket may be missed or repeated by
 * the kernel's walk, but the library must never report a cookie twice. */
static void churn_dumps(struct sdiag_handle *h, const struct sdiag_query *q,
			const struct cookie_set *stable, struct dump_check *dc, size_t n_stable,
			int rounds)
{
	for (int round = 0; round < rounds; round++) {
		size_t found = 0;

		memset(dc, 0, sizeof(*dc));
		assert_int_equal(sdiag_dump(h, q, check_cb, NULL, dc), 0);
		if (dc->dups)
			fail_msg("round %d: cookie %llu reported twice (%zu duplicates)", round,
				 (unsigned long long)dc->dup_cookie, dc->dups);
		for (size_t i = 0; i < SET_SIZE; i++)
			if (stable->keys[i] && set_has(&dc->seen, stable->keys[i]))
				found++;
		/* Skips are rare (a removal before the resume point of a chunk). */
		assert_true(found >= n_stable * 9 / 10);
	}
}

static void make_pairs(int lfd, int *fds)
{
	for (int i = 0; i < N_PAIRS; i++) {
		fds[2 * i] = stream_connect(AF_INET, 0, "127.0.0.1", 7100);
		fds[2 * i + 1] = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		assert_true(fds[2 * i + 1] >= 0);
	}
}

static void test_many_and_churn(void **state)
{
	SDIAG_OPTS(sdiag_query, q, .tables = SDIAG_TABLE_BIT(SDIAG_T_TCP));
	struct cookie_set *stable = calloc(1, sizeof(*stable));
	struct dump_check *dc = calloc(1, sizeof(*dc));
	struct churn ch = { .port = 7101 };
	struct sdiag_handle *h;
	pthread_t churner, acceptor;
	int *fds = calloc(2 * N_PAIRS, sizeof(int));
	int lfd, clfd;

	(void)state;
	assert_non_null(stable);
	assert_non_null(dc);
	assert_non_null(fds);
	raise_nofile();
	lfd = stream_listen(AF_INET, 0, "127.0.0.1", 7100, 4096);
	make_pairs(lfd, fds);
	for (int i = 0; i < 2 * N_PAIRS; i++)
		assert_true(set_add(stable, fd_cookie(fds[i])));
	assert_true(set_add(stable, fd_cookie(lfd)));

	/* Quiet: exactly the 5001 sockets, each once, over many datagrams. */
	assert_int_equal(sdiag_open(&h), 0);
	assert_int_equal(sdiag_dump(h, &q, check_cb, NULL, dc), 0);
	assert_int_equal(dc->dups, 0);
	assert_int_equal(dc->records, 2 * N_PAIRS + 1);
	for (size_t i = 0; i < SET_SIZE; i++)
		if (stable->keys[i])
			assert_true(set_has(&dc->seen, stable->keys[i]));

	clfd = stream_listen(AF_INET, 0, "127.0.0.1", ch.port, 4096);
	assert_int_equal(pthread_create(&acceptor, NULL, accept_thread, &clfd), 0);
	assert_int_equal(pthread_create(&churner, NULL, churn_thread, &ch), 0);
	churn_dumps(h, &q, stable, dc, 2 * N_PAIRS + 1, 10);
	atomic_store(&ch.stop, true);
	assert_int_equal(pthread_join(churner, NULL), 0);
	shutdown(clfd, SHUT_RDWR);
	assert_int_equal(pthread_join(acceptor, NULL), 0);
	fprintf(stderr, "churn: %zu connect/listen rounds during 10 dumps\n", ch.rounds);
	assert_true(ch.rounds > 0);

	sdiag_close(h);
	close(clfd);
	for (int i = 0; i < 2 * N_PAIRS; i++)
		close(fds[i]);
	close(lfd);
	free(fds);
	free(dc);
	free(stable);
}

/* 5000 UDP sockets on one address and port share one hash slot; the churn
 * thread adds sockets at its head while the dump walks it by index, so the
 * kernel's chunks overlap and repeat sockets: the library drops the repeats. */
static void test_udp_slot_churn(void **state)
{
	SDIAG_OPTS(sdiag_query, q,
			.tables = SDIAG_TABLE_BIT(SDIAG_T_UDP),
			.afs = SDIAG_AF_INET);
	struct cookie_set *stable = calloc(1, sizeof(*stable));
	struct dump_check *dc = calloc(1, sizeof(*dc));
	struct churn ch = { .port = 7200, .udp = true };
	int *fds = calloc(2 * N_PAIRS, sizeof(int));
	struct sdiag_handle *h;
	pthread_t churner;
	int one = 1;

	(void)state;
	assert_non_null(stable);
	assert_non_null(dc);
	assert_non_null(fds);
	raise_nofile();
	for (int i = 0; i < 2 * N_PAIRS; i++) {
		struct sockaddr_storage ss;
		socklen_t len = make_addr(&ss, AF_INET, "127.0.0.1", ch.port);

		fds[i] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		assert_true(fds[i] >= 0);
		assert_int_equal(setsockopt(fds[i], SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)),
				 0);
		assert_int_equal(bind(fds[i], (struct sockaddr *)&ss, len), 0);
		assert_true(set_add(stable, fd_cookie(fds[i])));
	}
	assert_int_equal(sdiag_open(&h), 0);
	assert_int_equal(sdiag_dump(h, &q, check_cb, NULL, dc), 0);
	assert_int_equal(dc->dups, 0);
	assert_int_equal(dc->records, 2 * N_PAIRS);

	assert_int_equal(pthread_create(&churner, NULL, churn_thread, &ch), 0);
	churn_dumps(h, &q, stable, dc, 2 * N_PAIRS, 30);
	atomic_store(&ch.stop, true);
	assert_int_equal(pthread_join(churner, NULL), 0);
	fprintf(stderr, "udp churn: %zu bind/close rounds during 30 dumps\n", ch.rounds);
	assert_true(ch.rounds > 0);
	sdiag_close(h);
	for (int i = 0; i < 2 * N_PAIRS; i++)
		close(fds[i]);
	free(fds);
	free(dc);
	free(stable);
}

/* ---- callbacks ------------------------------------------------------------------------ */

struct stopper {
	size_t n;
	size_t stop_at;
};

static int stop_cb(const struct sdiag_sock *s, void *data)
{
	struct stopper *st = data;

	(void)s;
	if (++st->n == st->stop_at)
		return -ECANCELED;
	return 0;
}

/* A callback's error stops the dump and comes back from sdiag_dump; the
 * handle then serves the next dump in full (the aborted one was drained). */
static void test_callback_stop(void **state)
{
	SDIAG_OPTS(sdiag_query, q, .tables = SDIAG_TABLES_UNIX);
	struct sdiag_sock_list l = { 0 };
	struct sdiag_handle *h;
	struct stopper st = { 0 };
	int sv[200][2];

	(void)state;
	for (int i = 0; i < 200; i++)
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv[i]), 0);
	assert_int_equal(sdiag_open(&h), 0);
	st.stop_at = 10;
	assert_int_equal(sdiag_dump(h, &q, stop_cb, NULL, &st), -ECANCELED);
	assert_int_equal(st.n, 10);
	assert_int_equal(sdiag_collect(h, &q, &l), 0);
	assert_int_equal(l.n, 400);
	for (int i = 0; i < 200; i++) {
		assert_non_null(find_cookie(&l, fd_cookie(sv[i][0])));
		assert_non_null(find_cookie(&l, fd_cookie(sv[i][1])));
	}
	/* dump and collect agree. */
	memset(&st, 0, sizeof(st));
	assert_int_equal(sdiag_dump(h, &q, stop_cb, NULL, &st), 0);
	assert_int_equal(st.n, l.n);
	sdiag_sock_list_free(&l);
	/* No tables asked for: nothing, and no error. */
	q.tables = 0;
	assert_int_equal(sdiag_collect(h, &q, &l), 0);
	assert_int_equal(l.n, 0);
	sdiag_sock_list_free(&l);
	sdiag_close(h);
	for (int i = 0; i < 200; i++) {
		close(sv[i][0]);
		close(sv[i][1]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_unsupported_families, setup),
		cmocka_unit_test_setup(test_open_netns, setup),
		cmocka_unit_test_setup(test_many_and_churn, setup),
		cmocka_unit_test_setup(test_udp_slot_churn, setup),
		cmocka_unit_test_setup(test_callback_stop, setup),
	};

	return sdiag_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
