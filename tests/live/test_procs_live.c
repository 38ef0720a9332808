/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Live test of process attribution and the process filters, each test in a
 * fresh private network namespace:
 *  - a socket shared by three processes (fork) under two descriptors each
 *    (dup) has exactly those six owners, sorted, with their comm and uid;
 *    a socket nobody holds yet (in the accept queue) has none;
 *  - pid, comm and user match the owners, with the documented meaning of
 *    `!=` and `not`, also combined with kernel-side predicates; they are never
 *    compiled to bytecode and a query without a process map matches nothing;
 *  - the owner's uid is its effective uid, also for a process that dropped
 *    root without exec (not dumpable: its /proc files but /proc/PID belong
 *    to root);
 *  - processes that exit and close descriptors during the scan are not errors;
 *  - a fabricated /proc tree: pid directories without fd/, non-socket links,
 *    malformed socket links, non-pid entries are skipped; owners read out of
 *    order (readdir's) are listed by pid, then fd.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tests/test_skip.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "lib/filter/filter.h"
#include "tests/live/live_util.h"
#include "tests/live/netns_util.h"

#define NOBODY 65534

static int setup(void **state)
{
	(void)state;
	netns_enter_private_or_skip();
	return 0;
}

/* ---- a shared listener ---------------------------------------------------------- */

struct kid {
	pid_t pid;
	int hold; /* write end: closing it lets the kid exit */
};

/* Fork a kid named name that keeps every inherited descriptor until released. */
static void kid_start(struct kid *k, const char *name)
{
	int ready[2], hold[2];
	char c = 0;

	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	assert_int_equal(pipe2(hold, O_CLOEXEC), 0);
	k->pid = fork();
	assert_true(k->pid >= 0);
	if (k->pid == 0) {
		close(ready[0]);
		close(hold[1]);
		prctl(PR_SET_NAME, name);
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		while (read(hold[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(ready[1]);
	close(hold[0]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	k->hold = hold[1];
}

static void kid_end(struct kid *k)
{
	int status;

	close(k->hold);
	assert_int_equal(waitpid(k->pid, &status, 0), k->pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

struct world {
	int lis, lis_dup; /* the listener, shared with both kids */
	int mine;	  /* a listener only this process holds */
	int client;	  /* connected to lis, never accepted */
	uint16_t port;
	struct kid kids[2];
	struct child_sock nobody; /* a socket of a process running as NOBODY */
};

static int make_udp(void *arg)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	(void)arg;
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		return -errno; /* unbound UDP sockets are not in the dump */
	return fd;
}

static void world_start(struct world *w)
{
	/* First: its process must not inherit the others. */
	child_sock_start(&w->nobody, NOBODY, make_udp, NULL);
	w->lis = stream_listen(AF_INET, 0, "127.0.0.1", 0, 16);
	w->port = fd_port(w->lis);
	w->lis_dup = dup(w->lis);
	assert_true(w->lis_dup >= 0);
	kid_start(&w->kids[0], "sdprocs-kid1");
	kid_start(&w->kids[1], "sdprocs-kid2");
	w->mine = stream_listen(AF_INET, 0, "127.0.0.1", 0, 16);
	w->client = stream_connect(AF_INET, 0, "127.0.0.1", w->port);
}

static void world_end(struct world *w)
{
	/* Latest first: each child inherited the earlier ones' hold pipes. */
	kid_end(&w->kids[1]);
	kid_end(&w->kids[0]);
	child_sock_end(&w->nobody);
	close(w->client);
	close(w->mine);
	close(w->lis_dup);
	close(w->lis);
}

static void self_comm(char comm[16])
{
	int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	assert_true(fd >= 0);
	memset(comm, 0, 16);
	n = read(fd, comm, 15);
	close(fd);
	assert_true(n > 0);
	if (comm[n - 1] == '\n')
		comm[n - 1] = '\0';
}

static void check_owners(const struct sdiag_proc *p, size_t n, const struct world *w)
{
	pid_t pids[3] = { getpid(), w->kids[0].pid, w->kids[1].pid };
	const char *names[3] = { NULL, "sdprocs-kid1", "sdprocs-kid2" };
	int lo = w->lis < w->lis_dup ? w->lis : w->lis_dup;
	int hi = w->lis < w->lis_dup ? w->lis_dup : w->lis;
	char me[16];

	self_comm(me);
	names[0] = me;
	assert_int_equal(n, 6);
	for (size_t i = 0; i < n; i++) {
		size_t k;

		if (i) /* sorted by pid, then fd */
			assert_true(p[i - 1].pid < p[i].pid ||
				    (p[i - 1].pid == p[i].pid && p[i - 1].fd < p[i].fd));
		for (k = 0; k < 3 && pids[k] != p[i].pid; k++)
			;
		assert_true(k < 3);
		assert_int_equal(p[i].fd, i % 2 ? hi : lo);
		assert_string_equal(p[i].comm, names[k]);
		assert_int_equal(p[i].uid, 0);
	}
	/* Each of the three pids exactly twice (with both descriptors). */
	assert_int_equal(p[0].pid, p[1].pid);
	assert_int_equal(p[2].pid, p[3].pid);
	assert_int_equal(p[4].pid, p[5].pid);
	assert_true(p[1].pid != p[2].pid && p[3].pid != p[4].pid);
}

/* The record of a listener (state LISTEN, local port) or of the unaccepted
 * server end (ESTABLISHED, local port). */
static const struct sdiag_sock *find_port(const struct sdiag_sock_list *l, uint16_t port,
					  uint8_t state)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->socks[i]->inet.sport == port && l->socks[i]->state == state)
			return l->socks[i];
	return NULL;
}

static void test_shared_owners(void **state)
{
	SDIAG_OPTS(sdiag_query, q,
			.tables = SDIAG_TABLE_BIT(SDIAG_T_TCP) |
			          SDIAG_TABLE_BIT(SDIAG_T_UDP));
	struct sdiag_procmap *pm = NULL;
	struct sdiag_sock_list l = { 0 };
	struct sdiag_handle *h = NULL;
	const struct sdiag_sock *s;
	const struct sdiag_proc *p = NULL;
	struct world w;
	size_t n;

	(void)state;
	world_start(&w);
	assert_int_equal(sdiag_procmap_scan(&pm, NULL), 0);

	/* The map alone. */
	n = sdiag_procmap_lookup(pm, fd_inode(w.lis), &p);
	check_owners(p, n, &w);
	n = sdiag_procmap_lookup(pm, fd_inode(w.mine), &p);
	assert_int_equal(n, 1);
	assert_int_equal(p[0].pid, getpid());
	assert_int_equal(p[0].fd, w.mine);
	assert_int_equal(sdiag_procmap_lookup(pm, 0, &p), 0);
	assert_int_equal(sdiag_procmap_lookup(NULL, fd_inode(w.lis), &p), 0);

	/* Attached by the dump. */
	assert_int_equal(sdiag_open(&h), 0);
	q.procmap = pm;
	assert_int_equal(sdiag_collect(h, &q, &l), 0);
	s = find_cookie(&l, fd_cookie(w.lis));
	assert_non_null(s);
	check_owners(s->procs, s->n_procs, &w);
	s = find_cookie(&l, fd_cookie(w.client));
	assert_non_null(s);
	assert_int_equal(s->n_procs, 1);
	assert_int_equal(s->procs[0].fd, w.client);
	/* The server end waits in the accept queue: no descriptor, no owner. */
	s = find_port(&l, w.port, SDIAG_SS_ESTABLISHED);
	assert_non_null(s);
	assert_int_equal(s->n_procs, 0);
	/* A process that dropped root: its fd/ is root's, its euid is not. */
	s = find_cookie(&l, w.nobody.cookie);
	assert_non_null(s);
	assert_int_equal(s->n_procs, 1);
	assert_int_equal(s->procs[0].pid, w.nobody.pid);
	assert_int_equal(s->procs[0].uid, NOBODY);
	sdiag_sock_list_free(&l);

	/* Without a map: no owners. */
	q.procmap = NULL;
	assert_int_equal(sdiag_collect(h, &q, &l), 0);
	s = find_cookie(&l, fd_cookie(w.lis));
	assert_non_null(s);
	assert_int_equal(s->n_procs, 0);
	assert_null(s->procs);
	sdiag_sock_list_free(&l);

	sdiag_close(h);
	sdiag_procmap_free(pm);
	world_end(&w);
}

/* ---- filters ---------------------------------------------------------------------- */

enum { W_LIS = 1, W_MINE = 2, W_CLIENT = 4, W_QUEUED = 8, W_NOBODY = 16 };

/* Which of the world's sockets expr selects (W_* bits), with the map (or not)
 * and with or without the kernel filter. */
static unsigned select_world(struct sdiag_handle *h, const struct world *w,
			     const struct sdiag_procmap *pm, const char *expr, bool kernel)
{
	SDIAG_OPTS(sdiag_query, q,
			.tables = SDIAG_TABLE_BIT(SDIAG_T_TCP) |
			          SDIAG_TABLE_BIT(SDIAG_T_UDP),
			.procmap = pm,
			.no_kernel_filter = !kernel);
	struct sdiag_filter_error err = { 0 };
	struct sdiag_filter *f = NULL;
	struct sdiag_sock_list l = { 0 };
	unsigned got = 0;

	if (sdiag_filter_parse(&f, expr, &err) < 0)
		fail_msg("filter '%s': %s", expr, err.msg);
	assert_true(sdiag_filter_needs_procs(f));
	q.filter = f;
	assert_int_equal(sdiag_collect(h, &q, &l), 0);
	for (size_t i = 0; i < l.n; i++) {
		const struct sdiag_sock *s = l.socks[i];

		if (s->cookie == fd_cookie(w->lis))
			got |= W_LIS;
		else if (s->cookie == fd_cookie(w->mine))
			got |= W_MINE;
		else if (s->cookie == fd_cookie(w->client))
			got |= W_CLIENT;
		else if (s->cookie == w->nobody.cookie)
			got |= W_NOBODY;
		else if (s->inet.sport == w->port && s->state == SDIAG_SS_ESTABLISHED)
			got |= W_QUEUED;
		else
			fail_msg("filter '%s' selected an unknown socket", expr);
	}
	sdiag_sock_list_free(&l);
	sdiag_filter_free(f);
	return got;
}

static void expect(struct sdiag_handle *h, const struct world *w, const struct sdiag_procmap *pm,
		   unsigned want, const char *fmt, ...)
{
	char expr[256];
	unsigned got[2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(expr, sizeof(expr), fmt, ap);
	va_end(ap);
	got[0] = select_world(h, w, pm, expr, true);
	got[1] = select_world(h, w, pm, expr, false);
	if (got[0] != want || got[1] != want)
		fail_msg("'%s': selected %#x (kernel filter) / %#x (user space), expected %#x",
			 expr, got[0], got[1], want);
}

static void test_filters(void **state)
{
	const unsigned all = W_LIS | W_MINE | W_CLIENT | W_QUEUED | W_NOBODY;
	struct sdiag_procmap *pm = NULL;
	struct sdiag_handle *h = NULL;
	struct passwd *pw;
	struct world w;
	pid_t k1, k2;

	(void)state;
	world_start(&w);
	k1 = w.kids[0].pid;
	k2 = w.kids[1].pid;
	assert_int_equal(sdiag_open(&h), 0);
	assert_int_equal(sdiag_procmap_scan(&pm, NULL), 0);

	expect(h, &w, pm, W_LIS, "pid = %d", k1);
	expect(h, &w, pm, W_LIS, "pid == %d", k2);
	expect(h, &w, pm, W_LIS | W_MINE | W_CLIENT, "pid = %d", getpid());
	expect(h, &w, pm, W_NOBODY, "pid = %d", w.nobody.pid);
	/* != : has owners, none of them that pid; `not` also takes the ownerless. */
	expect(h, &w, pm, W_MINE | W_CLIENT | W_NOBODY, "pid != %d", k1);
	expect(h, &w, pm, W_MINE | W_CLIENT | W_NOBODY | W_QUEUED, "not pid = %d", k1);
	expect(h, &w, pm, all & ~W_QUEUED, "pid >= 1");
	expect(h, &w, pm, 0, "pid < 1");
	expect(h, &w, pm, W_LIS, "pid = %d or pid = %d", k1, k2);
	expect(h, &w, pm, W_LIS, "pid = %d and pid = %d", k1, getpid());

	expect(h, &w, pm, W_LIS, "comm = sdprocs-kid*");
	expect(h, &w, pm, W_LIS, "comm = 'sdprocs-kid2'");
	expect(h, &w, pm, W_LIS, "comm = sdprocs-kid[12]");
	expect(h, &w, pm, 0, "comm = sdprocs-nobody");
	expect(h, &w, pm, W_MINE | W_CLIENT | W_NOBODY, "comm != sdprocs-kid1");

	/* Combined with what the kernel filters. */
	expect(h, &w, pm, W_LIS, "sport = :%u and comm = sdprocs-kid1", w.port);
	expect(h, &w, pm, W_LIS | W_QUEUED, "sport = :%u and (pid = %d or not comm = *)", w.port,
	       k2);
	expect(h, &w, pm, W_QUEUED, "sport = :%u and not pid >= 1", w.port);

	expect(h, &w, pm, W_NOBODY, "user = %d", NOBODY);
	expect(h, &w, pm, W_LIS | W_MINE | W_CLIENT, "user = root");
	expect(h, &w, pm, W_LIS | W_MINE | W_CLIENT, "user = 0");
	expect(h, &w, pm, W_LIS | W_MINE | W_CLIENT, "user != %d", NOBODY);
	pw = getpwuid(NOBODY);
	if (pw)
		expect(h, &w, pm, W_NOBODY, "user = %s", pw->pw_name);
	else
		print_message("no user name for uid %d: name lookup not checked\n", NOBODY);

	/* Without a process map nothing has owners. */
	expect(h, &w, NULL, 0, "pid = %d", k1);
	expect(h, &w, NULL, all, "not comm = *");

	sdiag_procmap_free(pm);
	sdiag_close(h);
	world_end(&w);
}

static void test_filter_parse(void **state)
{
	static const char *const bad[] = {
		"pid = abc", "pid = 0",	 "pid = 99999999999",		"pid",	    "comm",
		"comm < x",  "user < 5", "user = no-such-user-sdprocs", "pid = -1", "comm = ''",
	};
	static const struct {
		const char *expr;
		bool needs;
	} needs[] = {
		{ "sport = :80", false },
		{ "pid = 1", true },
		{ "not (sport = :1 or comm = x)", true },
		{ "sport = :1 and dport = :2 and user = 0", true },
		{ "(((uid = 0)))", false },
	};
	struct sdiag_filter_error err;
	struct sdiag_filter *f = NULL, *g = NULL;
	void *bc1 = NULL, *bc2 = NULL;
	int n1, n2;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&err, 0, sizeof(err));
		if (sdiag_filter_parse(&f, bad[i], &err) != -EINVAL)
			fail_msg("'%s' parsed", bad[i]);
		assert_true(err.msg[0]);
	}
	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++) {
		assert_int_equal(sdiag_filter_parse(&f, needs[i].expr, &err), 0);
		assert_int_equal(sdiag_filter_needs_procs(f), needs[i].needs);
		sdiag_filter_free(f);
	}
	assert_false(sdiag_filter_needs_procs(NULL));

	/* Never in the kernel's bytecode: alone nothing is pushed down; with a
	 * port the program is the port's alone. */
	assert_int_equal(sdiag_filter_parse(&f, "pid = 1 and comm = x or user = 0", &err), 0);
	assert_int_equal(sd_filter_bytecode(f, AF_INET, &bc1), 0);
	free(bc1);
	bc1 = NULL;
	sdiag_filter_free(f);
	assert_int_equal(sdiag_filter_parse(&f, "sport = :80 and comm = nginx", &err), 0);
	assert_int_equal(sdiag_filter_parse(&g, "sport = :80", &err), 0);
	n1 = sd_filter_bytecode(f, AF_INET, &bc1);
	n2 = sd_filter_bytecode(g, AF_INET, &bc2);
	assert_true(n1 > 0);
	assert_int_equal(n1, n2);
	assert_memory_equal(bc1, bc2, (size_t)n1);
	free(bc1);
	free(bc2);
	sdiag_filter_free(f);
	sdiag_filter_free(g);
}

/* ---- churn ------------------------------------------------------------------------ */

/* Forks short-lived processes that open sockets and exit, and closes and
 * reopens its own, until killed. */
static void churn(void)
{
	int fds[64];

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (unsigned i = 0;; i++) {
		pid_t p = fork();

		if (p == 0) {
			for (int k = 0; k < 64; k++)
				socket(AF_INET, SOCK_DGRAM, 0);
			_exit(0);
		}
		if (p > 0)
			waitpid(p, NULL, 0);
		for (int k = 0; k < 64; k++)
			fds[k] = socket(AF_UNIX, SOCK_DGRAM, 0);
		for (int k = 0; k < 64; k++)
			close(fds[k]);
		(void)i;
	}
}

static void test_scan_churn(void **state)
{
	pid_t churners[2];
	int keep;

	(void)state;
	for (int i = 0; i < 2; i++) {
		churners[i] = fork();
		assert_true(churners[i] >= 0);
		if (churners[i] == 0)
			churn();
	}
	keep = socket(AF_INET, SOCK_DGRAM, 0); /* after the forks: ours alone */
	assert_true(keep >= 0);
	for (int i = 0; i < 200; i++) {
		struct sdiag_procmap *pm = NULL;
		const struct sdiag_proc *p = NULL;

		assert_int_equal(sdiag_procmap_scan(&pm, NULL), 0);
		assert_int_equal(sdiag_procmap_lookup(pm, fd_inode(keep), &p), 1);
		assert_int_equal(p->pid, getpid());
		assert_int_equal(p->fd, keep);
		sdiag_procmap_free(pm);
	}
	for (int i = 0; i < 2; i++) {
		kill(churners[i], SIGKILL);
		waitpid(churners[i], NULL, 0);
	}
	close(keep);
}

/* ---- a fabricated /proc --------------------------------------------------------- */

static void put_file(const char *dir, const char *name, const char *text)
{
	char path[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void put_link(const char *dir, const char *name, const char *target)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(symlink(target, path), 0);
}

static void mkdir_in(const char *root, const char *sub)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/%s", root, sub);
	assert_int_equal(mkdir(path, 0755), 0);
}

static void test_fake_proc(void **state)
{
	char root[] = "/tmp/sdprocs-fakeproc.XXXXXX", d[128], cmd[160];
	struct sdiag_procmap *pm = NULL;
	const struct sdiag_proc *p = NULL;

	(void)state;
	assert_non_null(mkdtemp(root));
	/* 100: two descriptors of socket 777, a pipe, a malformed link, a file. */
	mkdir_in(root, "100");
	mkdir_in(root, "100/fd");
	snprintf(d, sizeof(d), "%s/100", root);
	put_file(d, "comm", "alpha\n");
	assert_int_equal(chown(d, 1001, 1001), 0); /* as /proc/PID: the euid */
	snprintf(d, sizeof(d), "%s/100/fd", root);
	put_link(d, "3", "socket:[777]");
	put_link(d, "4", "pipe:[5]");
	put_link(d, "5", "socket:[777]");
	put_link(d, "6", "socket:[12a]");
	put_link(d, "7", "/dev/null");
	put_link(d, "8", "socket:[]");
	/* 200: root's, 777 and 888. */
	mkdir_in(root, "200");
	mkdir_in(root, "200/fd");
	snprintf(d, sizeof(d), "%s/200", root);
	put_file(d, "comm", "beta");
	snprintf(d, sizeof(d), "%s/200/fd", root);
	put_link(d, "1", "socket:[777]");
	put_link(d, "9", "socket:[888]");
	/* 500 then 450 (created in that order, which tmpfs's readdir keeps),
	 * both holding 999, 500 under fd 9 then fd 2: owners are still listed
	 * by pid, then fd. */
	mkdir_in(root, "500");
	mkdir_in(root, "500/fd");
	snprintf(d, sizeof(d), "%s/500", root);
	put_file(d, "comm", "late");
	snprintf(d, sizeof(d), "%s/500/fd", root);
	put_link(d, "9", "socket:[999]");
	put_link(d, "2", "socket:[999]");
	mkdir_in(root, "450");
	mkdir_in(root, "450/fd");
	snprintf(d, sizeof(d), "%s/450", root);
	put_file(d, "comm", "early");
	snprintf(d, sizeof(d), "%s/450/fd", root);
	put_link(d, "4", "socket:[999]");
	/* 300 exited: a directory without fd/; 400 a plain file; non-pids. */
	mkdir_in(root, "300");
	put_file(root, "400", "");
	mkdir_in(root, "sys");
	mkdir_in(root, "0");
	mkdir_in(root, "12x");
	put_link(root, "self", "100");

	assert_int_equal(sdiag_procmap_scan(&pm, root), 0);
	assert_int_equal(sdiag_procmap_lookup(pm, 777, &p), 3);
	assert_int_equal(p[0].pid, 100);
	assert_int_equal(p[0].fd, 3);
	assert_string_equal(p[0].comm, "alpha");
	assert_int_equal(p[0].uid, 1001);
	assert_int_equal(p[1].pid, 100);
	assert_int_equal(p[1].fd, 5);
	assert_int_equal(p[2].pid, 200);
	assert_int_equal(p[2].fd, 1);
	assert_string_equal(p[2].comm, "beta");
	assert_int_equal(p[2].uid, getuid());
	assert_int_equal(sdiag_procmap_lookup(pm, 888, &p), 1);
	assert_int_equal(p[0].fd, 9);
	assert_int_equal(sdiag_procmap_lookup(pm, 999, &p), 3);
	assert_int_equal(p[0].pid, 450);
	assert_int_equal(p[0].fd, 4);
	assert_string_equal(p[0].comm, "early");
	assert_int_equal(p[1].pid, 500);
	assert_int_equal(p[1].fd, 2);
	assert_int_equal(p[2].pid, 500);
	assert_int_equal(p[2].fd, 9);
	assert_string_equal(p[2].comm, "late");
	assert_int_equal(sdiag_procmap_lookup(pm, 12, &p), 0);
	assert_int_equal(sdiag_procmap_lookup(pm, 5, &p), 0);
	assert_int_equal(sdiag_procmap_lookup(pm, 998, &p), 0);
	sdiag_procmap_free(pm);

	/* An empty root: a map with nothing in it. */
	snprintf(d, sizeof(d), "%s/sys", root);
	assert_int_equal(sdiag_procmap_scan(&pm, d), 0);
	assert_int_equal(sdiag_procmap_lookup(pm, 777, &p), 0);
	sdiag_procmap_free(pm);
	pm = NULL;
	snprintf(d, sizeof(d), "%s/missing", root);
	assert_int_equal(sdiag_procmap_scan(&pm, d), -ENOENT);
	assert_null(pm);
	sdiag_procmap_free(NULL);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

/* An index of megabytes (BIG_FDS owners: the slots and the owners arrays
 * each above the 2 MiB from which they are allocated as huge pages). */
#define BIG_FDS 80000
#define BIG_INODE 5000000

static void test_fake_proc_big(void **state)
{
	char root[] = "/tmp/sdprocs-bigproc.XXXXXX", d[128], name[16], link[32], cmd[160];
	struct sdiag_procmap *pm = NULL;
	const struct sdiag_proc *p = NULL;
	int dfd;

	(void)state;
	assert_non_null(mkdtemp(root));
	mkdir_in(root, "700");
	mkdir_in(root, "700/fd");
	snprintf(d, sizeof(d), "%s/700", root);
	put_file(d, "comm", "big");
	snprintf(d, sizeof(d), "%s/700/fd", root);
	dfd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	for (int i = 0; i < BIG_FDS; i++) {
		snprintf(name, sizeof(name), "%d", i);
		snprintf(link, sizeof(link), "socket:[%d]", BIG_INODE + i);
		assert_int_equal(symlinkat(link, dfd, name), 0);
	}
	close(dfd);

	assert_int_equal(sdiag_procmap_scan(&pm, root), 0);
	for (int i = 0; i < BIG_FDS; i++) {
		assert_int_equal(sdiag_procmap_lookup(pm, BIG_INODE + (uint64_t)i, &p), 1);
		assert_int_equal(p[0].pid, 700);
		assert_int_equal(p[0].fd, i);
	}
	assert_string_equal(p[0].comm, "big");
	assert_int_equal(sdiag_procmap_lookup(pm, BIG_INODE - 1, &p), 0);
	assert_int_equal(sdiag_procmap_lookup(pm, BIG_INODE + BIG_FDS, &p), 0);
	sdiag_procmap_free(pm);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

/*
 * The scans read /proc. In a pid namespace of our own, with its own /proc,
 * they see only this test's processes: exact, and fast whatever the host
 * runs. We are its pid 1; when we exit, every process we left is killed.
 */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_shared_owners, setup),
		cmocka_unit_test_setup(test_filters, setup),
		cmocka_unit_test(test_filter_parse),
		cmocka_unit_test_setup(test_scan_churn, setup),
		cmocka_unit_test(test_fake_proc),
		cmocka_unit_test(test_fake_proc_big),
	};
	int status;
	pid_t pid;

	if (unshare(CLONE_NEWPID | CLONE_NEWNS) < 0) {
		fprintf(stderr, "SKIP(netns): no private pid namespace: %s\n", strerror(errno));
		return errno == EPERM ? 77 : 1;
	}
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
			fprintf(stderr, "cannot mount a private /proc: %s\n", strerror(errno));
			_exit(1);
		}
		exit(sdiag_test_status(cmocka_run_group_tests(tests, NULL, NULL)));
	}
	/* _exit: LeakSanitizer's tracer cannot be spawned into a pid namespace
	 * whose init has exited (ENOMEM); the child did the leak check. */
	if (waitpid(pid, &status, 0) != pid)
		_exit(1);
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}
