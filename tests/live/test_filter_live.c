/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Filters on real sockets, in a private network (and mount) namespace with a
 * mixed population: TCP listeners, connections and TIME-WAIT sockets over
 * IPv4, IPv6 and v4-mapped addresses, a socket bound to lo, a marked socket,
 * UDP, unix stream/dgram/abstract/autobound, netlink.
 *
 * For every filter of tests/filters/corpus.txt:
 *  (a) kernel-filtered, userspace-only and "dump all, match afterwards" give
 *      the same sockets;
 *  (b) ss selects the same TCP/UDP sockets (by cookie: ss -e prints sk:COOKIE),
 *      unless the corpus line says why ss cannot be compared;
 * and (c) the ss bugs of the filter issue behave correctly: a host name with
 * several addresses, unix dst, dev with kernel filtering kept.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/test_skip.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

#include "lib/filter/filter.h"
#include "lib/ops/ops.h"
#include "tests/filters/corpus_util.h"
#include "tests/live/live_util.h"
#include "tests/live/netns_util.h"

#define MAX_FDS 64

struct pop {
	int fds[MAX_FDS];
	size_t n;
	char dir[64];
	uint64_t unix_client; /* connected to srv.sock */
	uint64_t multi[2];    /* clients of 127.0.0.2 and 127.0.0.3 */
	uint64_t bound_lo;    /* listener bound to lo */
	int tw_listen[2];     /* listeners for fresh TIME-WAIT sockets */
	time_t tw_made;
};

static struct pop pop;

static int keep(int fd)
{
	assert_true(fd >= 0);
	assert_true(pop.n < MAX_FDS);
	pop.fds[pop.n++] = fd;
	return fd;
}

static int tcp_listen_opt(int family, const char *addr, uint16_t port, int level, int opt,
			  const void *val, socklen_t vlen)
{
	struct sockaddr_storage ss;
	socklen_t len = make_addr(&ss, family, addr, port);
	int one = 1, fd = socket(family, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
	if (val)
		assert_int_equal(setsockopt(fd, level, opt, val, vlen), 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&ss, len), 0);
	assert_int_equal(listen(fd, 16), 0);
	return keep(fd);
}

/* Connect (from src:sport when given), accept; keeps both ends. Returns the
 * client fd. */
static int tcp_pair(int lfd, int family, const char *dst, uint16_t dport, const char *src,
		    uint16_t sport, int mark)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1, fd = socket(family, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	if (mark)
		assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof(mark)), 0);
	if (src) {
		assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
		len = make_addr(&ss, family, src, sport);
		assert_int_equal(bind(fd, (struct sockaddr *)&ss, len), 0);
	}
	len = make_addr(&ss, family, dst, dport);
	assert_int_equal(connect(fd, (struct sockaddr *)&ss, len), 0);
	keep(fd);
	keep(accept(lfd, NULL, NULL));
	return fd;
}

/* A connection whose client closes first: the client ends in TIME-WAIT. */
static void tcp_time_wait(int lfd, int family, const char *dst, uint16_t dport)
{
	struct sockaddr_storage ss;
	socklen_t len = make_addr(&ss, family, dst, dport);
	int c = socket(family, SOCK_STREAM, 0), a;

	assert_int_equal(connect(c, (struct sockaddr *)&ss, len), 0);
	a = accept(lfd, NULL, NULL);
	assert_true(a >= 0);
	close(c);
	usleep(20000);
	close(a);
	usleep(20000);
}

/* TIME-WAIT sockets live 60 s: make new ones when the last are 30 s old, so
 * every filter of a slow run still meets some. */
static void make_time_wait(void)
{
	tcp_time_wait(pop.tw_listen[0], AF_INET, "127.0.0.1", 5001);
	tcp_time_wait(pop.tw_listen[1], AF_INET6, "::1", 5002);
	pop.tw_made = time(NULL);
}

static void refresh_time_wait(void)
{
	if (time(NULL) - pop.tw_made >= 30)
		make_time_wait();
}

static int udp_sock(int family, const char *addr, uint16_t port, bool do_connect)
{
	struct sockaddr_storage ss;
	socklen_t len = make_addr(&ss, family, addr, port);
	int fd = socket(family, SOCK_DGRAM, 0);

	assert_true(fd >= 0);
	if (do_connect)
		assert_int_equal(connect(fd, (struct sockaddr *)&ss, len), 0);
	else
		assert_int_equal(bind(fd, (struct sockaddr *)&ss, len), 0);
	return keep(fd);
}

static socklen_t unix_addr(struct sockaddr_un *sun, const char *path, bool abstract)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (abstract) {
		strcpy(sun->sun_path + 1, path);
		return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(path));
	}
	strcpy(sun->sun_path, path);
	return sizeof(*sun);
}

static void make_unix(void)
{
	struct sockaddr_un sun;
	char path[128];
	socklen_t len;
	int l, c, d;

	snprintf(path, sizeof(path), "%s/srv.sock", pop.dir);
	l = keep(socket(AF_UNIX, SOCK_STREAM, 0));
	len = unix_addr(&sun, path, false);
	assert_int_equal(bind(l, (struct sockaddr *)&sun, len), 0);
	assert_int_equal(listen(l, 4), 0);
	c = keep(socket(AF_UNIX, SOCK_STREAM, 0));
	assert_int_equal(connect(c, (struct sockaddr *)&sun, len), 0);
	keep(accept(l, NULL, NULL));
	pop.unix_client = fd_cookie(c);

	l = keep(socket(AF_UNIX, SOCK_STREAM, 0));
	len = unix_addr(&sun, "sdfilter-abstract", true);
	assert_int_equal(bind(l, (struct sockaddr *)&sun, len), 0);
	assert_int_equal(listen(l, 4), 0);

	d = keep(socket(AF_UNIX, SOCK_DGRAM, 0));
	snprintf(path, sizeof(path), "%s/dgram.sock", pop.dir);
	len = unix_addr(&sun, path, false);
	assert_int_equal(bind(d, (struct sockaddr *)&sun, len), 0);
	d = keep(socket(AF_UNIX, SOCK_DGRAM, 0)); /* autobind */
	sun.sun_family = AF_UNIX;
	assert_int_equal(bind(d, (struct sockaddr *)&sun, sizeof(sa_family_t)), 0);
}

static void make_netlink(void)
{
	struct sockaddr_nl snl = { .nl_family = AF_NETLINK, .nl_groups = RTMGRP_LINK };
	int fd = keep(socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE));

	assert_int_equal(bind(fd, (struct sockaddr *)&snl, sizeof(snl)), 0);
	fd = keep(socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC));
	snl.nl_groups = 0;
	assert_int_equal(bind(fd, (struct sockaddr *)&snl, sizeof(snl)), 0);
}

/* /etc/hosts of this mount namespace only: "multihost" has two addresses. */
static void private_hosts(void)
{
	char hosts[128];
	FILE *fp;

	assert_int_equal(unshare(CLONE_NEWNS), 0);
	assert_int_equal(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	snprintf(hosts, sizeof(hosts), "%s/hosts", pop.dir);
	fp = fopen(hosts, "we");
	assert_non_null(fp);
	fprintf(fp, "127.0.0.1 localhost\n::1 localhost\n"
		    "127.0.0.2 multihost\n127.0.0.3 multihost\n");
	fclose(fp);
	assert_int_equal(mount(hosts, "/etc/hosts", NULL, MS_BIND, NULL), 0);
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
	int zero = 0, mark = 0x10, l1, l2, l3, l4, l5, l6;

	(void)state;
	/* First a namespace whose children get their own small TCP/UDP hash
	 * tables, so dumps do not walk every socket of the machine. */
	if (unshare(CLONE_NEWNET) == 0) {
		write_sysctl("/proc/sys/net/ipv4/tcp_child_ehash_entries", "1024");
		write_sysctl("/proc/sys/net/ipv4/udp_child_hash_entries", "256");
	}
	netns_enter_private_or_skip();
	snprintf(pop.dir, sizeof(pop.dir), "/tmp/sdfilter.XXXXXX");
	assert_non_null(mkdtemp(pop.dir));
	private_hosts();

	l1 = tcp_listen_opt(AF_INET, "127.0.0.1", 5000, 0, 0, NULL, 0);
	l2 = tcp_listen_opt(AF_INET, "0.0.0.0", 5001, 0, 0, NULL, 0);
	l3 = tcp_listen_opt(AF_INET6, "::1", 5002, 0, 0, NULL, 0);
	l4 = tcp_listen_opt(AF_INET6, "::", 5003, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	l5 = tcp_listen_opt(AF_INET, "127.0.0.1", 5004, SOL_SOCKET, SO_BINDTODEVICE, "lo", 3);
	l6 = tcp_listen_opt(AF_INET, "127.0.0.1", 5005, SOL_SOCKET, SO_MARK, &mark, sizeof(mark));
	pop.bound_lo = fd_cookie(l5);

	tcp_pair(l1, AF_INET, "127.0.0.1", 5000, NULL, 0, 0);
	tcp_pair(l1, AF_INET, "127.0.0.1", 5000, "127.0.0.1", 6000, 0);
	tcp_pair(l3, AF_INET6, "::1", 5002, NULL, 0, 0);
	tcp_pair(l4, AF_INET, "127.0.0.1", 5003, NULL, 0, 0); /* v4-mapped server side */
	tcp_pair(l4, AF_INET6, "::1", 5003, NULL, 0, 0);
	tcp_pair(l5, AF_INET, "127.0.0.1", 5004, NULL, 0, 0);
	tcp_pair(l6, AF_INET, "127.0.0.1", 5005, NULL, 0, mark);
	pop.multi[0] = fd_cookie(tcp_pair(l2, AF_INET, "127.0.0.2", 5001, NULL, 0, 0));
	pop.multi[1] = fd_cookie(tcp_pair(l2, AF_INET, "127.0.0.3", 5001, NULL, 0, 0));
	pop.tw_listen[0] = l2;
	pop.tw_listen[1] = l3;
	make_time_wait();

	udp_sock(AF_INET, "127.0.0.1", 5353, false);
	udp_sock(AF_INET6, "::1", 5354, false);
	udp_sock(AF_INET, "127.0.0.1", 5353, true);
	make_unix();
	make_netlink();
	return 0;
}

static int teardown(void **state)
{
	char path[128];

	(void)state;
	for (size_t i = 0; i < pop.n; i++)
		close(pop.fds[i]);
	umount("/etc/hosts");
	snprintf(path, sizeof(path), "%s/srv.sock", pop.dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/dgram.sock", pop.dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/hosts", pop.dir);
	unlink(path);
	rmdir(pop.dir);
	return 0;
}

/* ---- selections ------------------------------------------------------------------ */

struct cookies {
	uint64_t *v;
	size_t n;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void cookies_add(struct cookies *c, uint64_t v)
{
	c->v = realloc(c->v, (c->n + 1) * sizeof(*c->v));
	assert_non_null(c->v);
	c->v[c->n++] = v;
}

static void cookies_sort(struct cookies *c)
{
	if (c->n)
		qsort(c->v, c->n, sizeof(*c->v), cmp_u64);
}

static bool cookies_has(const struct cookies *c, uint64_t v)
{
	return c->n && bsearch(&v, c->v, c->n, sizeof(v), cmp_u64);
}

static bool cookies_eq(const struct cookies *a, const struct cookies *b)
{
	return a->n == b->n && (!a->n || !memcmp(a->v, b->v, a->n * sizeof(*a->v)));
}

/* The tables the population uses (others would only make the kernel try to
 * load diag modules on every dump). */
#define ALL_TABLES                                                                                 \
	(SDIAG_TABLES_INET | SDIAG_TABLES_UNIX | SDIAG_TABLES_PACKET |                             \
	 SDIAG_TABLE_BIT(SDIAG_T_NETLINK))
#define SS_TABLES (SDIAG_TABLE_BIT(SDIAG_T_TCP) | SDIAG_TABLE_BIT(SDIAG_T_UDP))

/* The cookies sdiag_collect selects with filter f (NULL: match afterwards with
 * match_f instead), restricted to tables. */
static void select_sockets(struct cookies *out, const struct sdiag_filter *f, bool no_kernel,
			   const struct sdiag_filter *match_f, uint32_t tables)
{
	/* Every state but bound-inactive, whose kernel walk covers the machine-wide
	 * bind hash (slow on a busy machine; ss 6.1 does not ask for it either). */
	SDIAG_OPTS(sdiag_query, q,
			.tables = tables,
			.states = SDIAG_STATES_ALL & ~SDIAG_STATE_BIT(SDIAG_SS_BOUND_INACTIVE),
			.filter = f,
			.no_kernel_filter = no_kernel,
			/* What the dump adds for f itself, for matching afterwards. */
			.show = sd_filter_show(match_f));
	struct sdiag_sock_list l = { 0 };
	struct sdiag_handle *h = NULL;
	struct sd_fvals *vals = NULL;

	assert_int_equal(sdiag_open(&h), 0);
	assert_int_equal(sdiag_collect(h, &q, &l), 0);
	/* Matching afterwards needs what a dump would have resolved. */
	if (match_f)
		assert_int_equal(sd_dump_resolve(h, match_f, &vals), 0);
	sdiag_close(h);
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < l.n; i++) {
		assert_true(l.socks[i]->has & SDIAG_HAS_COOKIE);
		/* The dumping socket itself differs from one dump to the next. */
		if (l.socks[i]->family == AF_NETLINK && l.socks[i]->protocol == NETLINK_SOCK_DIAG)
			continue;
		if (!match_f || sd_filter_match_vals(match_f, vals, l.socks[i]))
			cookies_add(out, l.socks[i]->cookie);
	}
	sd_fvals_free(vals);
	sdiag_sock_list_free(&l);
	cookies_sort(out);
}

/* ss -H -n -a -e -t -u FILTER, as a cookie set. Returns ss's exit status. */
static int ss_select(struct cookies *out, const char *expr)
{
	char *words = strdup(expr), *argv[64] = { "ss", "-H", "-n", "-a", "-e", "-t", "-u" };
	char buf[65536];
	size_t argc = 7, got = 0;
	int pfd[2], status;
	pid_t pid;
	ssize_t r;

	assert_non_null(words);
	for (char *w = strtok(words, " "); w && argc < 63; w = strtok(NULL, " "))
		argv[argc++] = w;
	argv[argc] = NULL;
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(pfd[1], 1);
		execvp("ss", argv);
		_exit(127);
	}
	close(pfd[1]);
	while ((r = read(pfd[0], buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)r;
	buf[got] = '\0';
	close(pfd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	free(words);
	memset(out, 0, sizeof(*out));
	for (char *p = strstr(buf, " sk:"); p; p = strstr(p + 1, " sk:"))
		cookies_add(out, strtoull(p + 4, NULL, 16));
	cookies_sort(out);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static struct sdiag_filter *parse_ok(const char *expr)
{
	struct sdiag_filter_error err = { 0 };
	struct sdiag_filter *f = NULL;
	int r = sdiag_filter_parse(&f, expr, &err);

	if (r != 0)
		fail_msg("'%s' did not parse: %d at %zu: %s", expr, r, err.offset, err.msg);
	return f;
}

static void print_diff(const char *what, const struct cookies *a, const struct cookies *b)
{
	for (size_t i = 0; i < a->n; i++)
		if (!cookies_has(b, a->v[i]))
			print_message("  only in %s: cookie %llx\n", what,
				      (unsigned long long)a->v[i]);
}

/* Keep in c only the sockets of both snapshots a and b (sorted). */
static void cookies_keep(struct cookies *c, const struct cookies *a, const struct cookies *b)
{
	size_t n = 0;

	for (size_t i = 0; i < c->n; i++)
		if (cookies_has(a, c->v[i]) && cookies_has(b, c->v[i]))
			c->v[n++] = c->v[i];
	c->n = n;
}

/* The TCP TIME-WAIT sockets whose records carry no mark: before Linux 5.14 (commit "inet_diag:
 * add support for tw_mark") the kernel sends none for them, and its bytecode takes their mark
 * as 0 where sockdiag leaves an absent mark unmatched (sockdiag(8), FILTER). Empty from 5.14. */
static void time_wait_without_mark(struct cookies *out)
{
	SDIAG_OPTS(sdiag_query, q,
			.tables = SDIAG_TABLE_BIT(SDIAG_T_TCP),
			.states = SDIAG_STATE_BIT(SDIAG_SS_TIME_WAIT),
			.show = SDIAG_SHOW_EXT);
	struct sdiag_sock_list l = { 0 };
	struct sdiag_handle *h = NULL;

	assert_int_equal(sdiag_open(&h), 0);
	assert_int_equal(sdiag_collect(h, &q, &l), 0);
	sdiag_close(h);
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < l.n; i++)
		if (l.socks[i]->state == SDIAG_SS_TIME_WAIT && !(l.socks[i]->has & SDIAG_HAS_MARK))
			cookies_add(out, l.socks[i]->cookie);
	sdiag_sock_list_free(&l);
	cookies_sort(out);
}

/* Drop from c the sockets in x. */
static void cookies_drop(struct cookies *c, const struct cookies *x)
{
	size_t n = 0;

	for (size_t i = 0; i < c->n; i++)
		if (!cookies_has(x, c->v[i]))
			c->v[n++] = c->v[i];
	c->n = n;
}

/*
 * One filter: (a) three selections agree, (b) ss agrees. There is no retry: any difference
 * is printed and counts. Only the sockets of an unfiltered dump before and one after are
 * compared: in a slow run (TCG, a loaded machine: 533 s for the corpus) a TIME-WAIT socket of
 * the population expires, or the server side of a fresh one ends its LAST-ACK, between two
 * of the selections.
 */
static bool check_filter(const struct corpus_entry *e, bool *ret_nonempty)
{
	struct sdiag_filter *f = parse_ok(e->expr);
	struct cookies k, u, m, ks = { 0 }, s = { 0 }, before, after;
	bool ok = true;
	int st = 0;

	select_sockets(&before, NULL, false, NULL, ALL_TABLES);
	select_sockets(&k, f, false, NULL, ALL_TABLES);
	select_sockets(&u, f, true, NULL, ALL_TABLES);
	select_sockets(&m, NULL, false, f, ALL_TABLES);
	if (!e->noss) {
		st = ss_select(&s, e->expr);
		select_sockets(&ks, f, false, NULL, SS_TABLES);
	}
	select_sockets(&after, NULL, false, NULL, ALL_TABLES);
	cookies_keep(&k, &before, &after);
	cookies_keep(&u, &before, &after);
	cookies_keep(&m, &before, &after);
	cookies_keep(&s, &before, &after);
	cookies_keep(&ks, &before, &after);
	if (strstr(e->expr, "fwmark")) {
		/* Before 5.14 ss takes a TIME-WAIT socket's unknown mark as 0. */
		struct cookies nomark;

		time_wait_without_mark(&nomark);
		cookies_drop(&s, &nomark);
		cookies_drop(&ks, &nomark);
		free(nomark.v);
	}
	free(before.v);
	free(after.v);
	*ret_nonempty = k.n > 0;
	if (!cookies_eq(&k, &u) || !cookies_eq(&k, &m)) {
		ok = false;
		print_message("'%s': kernel-filtered %zu, userspace %zu, matched after %zu\n",
			      e->expr, k.n, u.n, m.n);
		print_diff("kernel-filtered", &k, &m);
		print_diff("matched after", &m, &k);
		print_diff("userspace", &u, &k);
	}
	if (!e->noss) {
		if (st != 0 || !cookies_eq(&ks, &s)) {
			ok = false;
			print_message("'%s': ss (exit %d) %zu sockets, sockdiag %zu\n", e->expr, st,
				      s.n, ks.n);
			print_diff("sockdiag", &ks, &s);
			print_diff("ss", &s, &ks);
		}
	}
	free(ks.v);
	free(s.v);
	free(k.v);
	free(u.v);
	free(m.v);
	sdiag_filter_free(f);
	return ok;
}

/* (a) and (b) over the whole corpus. */
static void test_corpus(void **state)
{
	struct corpus c;
	size_t compared = 0, nonempty = 0, failures = 0;

	(void)state;
	assert_int_equal(corpus_load(&c), 0);
	for (size_t i = 0; i < c.n; i++) {
		bool ne = false;

		refresh_time_wait();
		failures += !check_filter(&c.v[i], &ne);
		nonempty += ne;
		compared += !c.v[i].noss;
	}
	print_message("%zu filters, %zu select something, %zu compared with ss, %zu failed\n", c.n,
		      nonempty, compared, failures);
	assert_int_equal(failures, 0);
	/* The corpus must exercise the population, not select nothing. */
	assert_true(nonempty > c.n / 2);
	assert_true(compared >= 100);
	corpus_free(&c);
}

/* (c) ss's bugs. */
static void test_multi_address_host(void **state)
{
	struct sdiag_filter *f = parse_ok("dst multihost");
	struct cookies k, u, s;

	(void)state;
	select_sockets(&k, f, false, NULL, ALL_TABLES);
	select_sockets(&u, f, true, NULL, ALL_TABLES);
	assert_true(cookies_eq(&k, &u));
	/* Both clients, of 127.0.0.2 and of 127.0.0.3 (ss keeps only one). */
	assert_int_equal(k.n, 2);
	assert_true(cookies_has(&k, pop.multi[0]));
	assert_true(cookies_has(&k, pop.multi[1]));
	ss_select(&s, "dst multihost");
	print_message("ss 'dst multihost' selects %zu of the 2 sockets\n", s.n);
	free(k.v);
	free(u.v);
	free(s.v);
	sdiag_filter_free(f);
}

static void test_unix_dst(void **state)
{
	char expr[160];
	struct sdiag_filter *f;
	struct cookies k;

	(void)state;
	snprintf(expr, sizeof(expr), "dst %s/srv.sock", pop.dir);
	f = parse_ok(expr);
	select_sockets(&k, f, false, NULL, ALL_TABLES);
	/* The client connected to srv.sock, and only it. */
	assert_int_equal(k.n, 1);
	assert_true(cookies_has(&k, pop.unix_client));
	free(k.v);
	sdiag_filter_free(f);
	snprintf(expr, sizeof(expr), "src %s/srv.sock", pop.dir);
	f = parse_ok(expr);
	select_sockets(&k, f, false, NULL, ALL_TABLES);
	assert_int_equal(k.n, 2); /* the listener and its accepted socket */
	assert_false(cookies_has(&k, pop.unix_client));
	free(k.v);
	sdiag_filter_free(f);
}

/* The parser performs no dump: a unix `dst` names the sockets that exist when
 * a dump runs, in that dump's namespace, not those of parse time. */
static void test_unix_dst_resolved_by_dump(void **state)
{
	struct sdiag_filter *f = parse_ok("dst @sdfilter-late");
	struct sdiag_sock_list l = { 0 };
	SDIAG_OPTS(sdiag_query, q, .tables = SDIAG_TABLES_UNIX);
	struct sdiag_handle *h = NULL;
	struct sockaddr_un sun;
	socklen_t len = unix_addr(&sun, "sdfilter-late", true);
	struct cookies k;
	int lfd, c, a;

	(void)state;
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sun, len), 0);
	assert_int_equal(listen(lfd, 4), 0);
	assert_int_equal(connect(c, (struct sockaddr *)&sun, len), 0);
	a = accept(lfd, NULL, NULL);
	assert_true(a >= 0);
	select_sockets(&k, f, false, NULL, ALL_TABLES);
	assert_int_equal(k.n, 1);
	assert_true(cookies_has(&k, fd_cookie(c)));
	free(k.v);
	/* Matched alone, without a dump, nothing resolved it: no match. */
	assert_int_equal(sdiag_open(&h), 0);
	assert_int_equal(sdiag_collect(h, &q, &l), 0);
	sdiag_close(h);
	for (size_t i = 0; i < l.n; i++)
		assert_false(sdiag_filter_match(f, l.socks[i]));
	assert_true(l.n >= 3);
	sdiag_sock_list_free(&l);
	close(a);
	close(c);
	close(lfd);
	sdiag_filter_free(f);
}

static void test_dev_keeps_kernel_filter(void **state)
{
	struct sdiag_filter *f = parse_ok("dev lo and sport = :5004");
	struct cookies k, u;
	void *bc = NULL;
	int n;

	(void)state;
	n = sd_filter_bytecode(f, AF_INET, &bc);
	assert_true(n >= 16); /* DEV_COND and the port test */
	free(bc);
	select_sockets(&k, f, false, NULL, ALL_TABLES);
	select_sockets(&u, f, true, NULL, ALL_TABLES);
	assert_true(cookies_eq(&k, &u));
	/* The listener bound to lo and its accepted connection (which inherits it). */
	assert_true(cookies_has(&k, pop.bound_lo));
	assert_int_equal(k.n, 2);
	free(k.v);
	free(u.v);
	sdiag_filter_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus),
		cmocka_unit_test(test_multi_address_host),
		cmocka_unit_test(test_unix_dst),
		cmocka_unit_test(test_unix_dst_resolved_by_dump),
		cmocka_unit_test(test_dev_keeps_kernel_filter),
	};

	return sdiag_test_status(cmocka_run_group_tests(tests, setup, teardown));
}
