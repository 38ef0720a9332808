/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * TCP-info and queue predicates on real sockets, in a private namespace:
 * a dump with such a filter asks the kernel for TCP info by itself (the
 * query here never sets SDIAG_SHOW_INFO), and the values are the socket's:
 * bytes-received after N+1 bytes, rqueue with unread data (TCP and unix),
 * idle after a pause and not after fresh traffic.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "tests/live/live_util.h"
#include "tests/live/netns_util.h"

struct pair {
	int lfd, c, a;
};

static void tcp_pair(struct pair *p, uint16_t port)
{
	p->lfd = stream_listen(AF_INET, 0, "127.0.0.1", port, 4);
	p->c = stream_connect(AF_INET, 0, "127.0.0.1", port);
	p->a = accept(p->lfd, NULL, NULL);
	assert_true(p->a >= 0);
}

static void pair_close(struct pair *p)
{
	close(p->a);
	close(p->c);
	close(p->lfd);
}

static void send_all(int fd, size_t n)
{
	char buf[4096];

	memset(buf, 'x', sizeof(buf));
	while (n) {
		ssize_t w = send(fd, buf, n < sizeof(buf) ? n : sizeof(buf), 0);

		assert_true(w > 0);
		n -= (size_t)w;
	}
}

/* Wait until fd has n unread bytes. */
static void wait_unread(int fd, int n)
{
	int have = 0;

	for (int i = 0; i < 200 && have < n; i++) {
		assert_int_equal(ioctl(fd, FIONREAD, &have), 0);
		if (have < n)
			usleep(5000);
	}
	assert_int_equal(have, n);
}

static void read_all(int fd, size_t n)
{
	char buf[4096];

	while (n) {
		ssize_t r = recv(fd, buf, n < sizeof(buf) ? n : sizeof(buf), 0);

		assert_true(r > 0);
		n -= (size_t)r;
	}
}

/* Does the dump with this filter select the socket of fd? */
static bool selects(const char *expr, uint32_t tables, int fd)
{
	struct sdiag_filter_error err = { 0 };
	struct sdiag_filter *f = NULL;
	SDIAG_OPTS(sdiag_query, q, .tables = tables, .states = SDIAG_STATES_ALL);
	struct sdiag_sock_list l = { 0 };
	struct sdiag_handle *h = NULL;
	bool found;

	if (sdiag_filter_parse(&f, expr, &err) < 0)
		fail_msg("'%s': %s", expr, err.msg);
	q.filter = f;
	assert_int_equal(sdiag_open(&h), 0);
	assert_int_equal(sdiag_collect(h, &q, &l), 0);
	found = find_cookie(&l, fd_cookie(fd)) != NULL;
	sdiag_sock_list_free(&l);
	sdiag_close(h);
	sdiag_filter_free(f);
	return found;
}

#define TCP SDIAG_TABLE_BIT(SDIAG_T_TCP)

static void test_bytes_received(void **state)
{
	struct pair p;

	(void)state;
	tcp_pair(&p, 7001);
	send_all(p.c, 1001);
	read_all(p.a, 1001);
	assert_true(selects("bytes-received > 1000", TCP, p.a));
	assert_true(selects("bytes-received = 1001", TCP, p.a));
	assert_false(selects("bytes-received > 1001", TCP, p.a));
	assert_true(selects("bytes-sent = 1001", TCP, p.c));
	/* The peer's ACK may be delayed (up to 200 ms). */
	for (int i = 0; i < 100 && !selects("bytes-acked >= 1001", TCP, p.c); i++)
		usleep(10000);
	assert_true(selects("bytes-acked >= 1001 and bytes-acked <= 1002", TCP, p.c));
	assert_false(selects("bytes-received > 1000", TCP, p.c));
	pair_close(&p);
}

static void test_rqueue(void **state)
{
	struct pair p;
	int u[2];

	(void)state;
	tcp_pair(&p, 7002);
	send_all(p.c, 500);
	wait_unread(p.a, 500);
	assert_true(selects("rqueue >= 500", TCP, p.a));
	assert_false(selects("rqueue > 500", TCP, p.a));
	assert_true(selects("rqueue = 0", TCP, p.c));
	read_all(p.a, 500);
	assert_false(selects("rqueue > 0", TCP, p.a));
	pair_close(&p);

	/* Every family: unread bytes on a unix stream socket. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, u), 0);
	send_all(u[0], 10);
	wait_unread(u[1], 10);
	assert_true(selects("rqueue = 10", SDIAG_TABLES_UNIX, u[1]));
	assert_false(selects("rqueue = 10", SDIAG_TABLES_UNIX, u[0]));
	close(u[0]);
	close(u[1]);
}

static void test_idle(void **state)
{
	struct pair quiet, busy;

	(void)state;
	tcp_pair(&quiet, 7003);
	tcp_pair(&busy, 7004);
	send_all(quiet.c, 10);
	read_all(quiet.a, 10);
	usleep(1200 * 1000);
	assert_true(selects("idle > 1s", TCP, quiet.c));
	assert_true(selects("idle > 1s and last-send > 1s and last-recv > 1s", TCP, quiet.a));
	/* Traffic just before each look (a dump on a loaded machine can be slow). */
	send_all(busy.c, 10);
	read_all(busy.a, 10);
	assert_false(selects("idle > 1s", TCP, busy.c));
	send_all(busy.c, 10);
	read_all(busy.a, 10);
	assert_true(selects("not idle > 1s", TCP, busy.a));
	/* A listener has TCP info without data times: never idle. */
	assert_false(selects("idle > 1s", TCP, quiet.lfd));
	/* Loopback rtt is well under 100 ms, and nothing was retransmitted. */
	assert_true(selects("rtt < 100ms and retrans = 0 and cwnd >= 1", TCP, busy.c));
	pair_close(&quiet);
	pair_close(&busy);
}

static void write_sysctl(const char *path, const char *value)
{
	FILE *fp = fopen(path, "we");

	if (fp) {
		fputs(value, fp);
		fclose(fp);
	}
}

static int setup(void **state)
{
	(void)state;
	/* A namespace whose children get TCP hash tables of their own, so the
	 * dumps do not walk every socket of the machine. */
	if (unshare(CLONE_NEWNET) == 0)
		write_sysctl("/proc/sys/net/ipv4/tcp_child_ehash_entries", "1024");
	netns_enter_private_or_skip();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bytes_received),
		cmocka_unit_test(test_rqueue),
		cmocka_unit_test(test_idle),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
