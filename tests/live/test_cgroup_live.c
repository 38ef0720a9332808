/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup and unit filters on real sockets, in a private network namespace.
 *
 * A unique test slice under the cgroup2 mount (found in mountinfo) holds
 * two "services", sdtNNN.slice/a.service (with a child cgroup worker) and
 * b.service. One process in each of a.service, a.service/worker and b.service
 * makes a TCP listener, a connection to it (both ends) and a UDP socket; the
 * test process itself (outside the slice) holds a control pair. Each filter
 * below must select exactly the sockets of the processes it names, with the
 * kernel program (INET_DIAG_BC_CGROUP_COND alternatives) and in user space
 * alone. The slice is removed afterwards, and so is the cgroup of
 * test_resolve_again, even when a check failed.
 *
 * Names: the slice and the unit test_resolve_again looks up host-wide are
 * this run's own (pid and a random tag): another checkout running the suite
 * at once, or a run that failed before, never shares them. a.service and
 * b.service need not be unique: "unit a.service" is checked to select exactly
 * ours among every a.service of the host (the others hold no socket here).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "lib/filter/filter.h"
#include "tests/live/live_util.h"
#include "tests/live/netns_util.h"

#define PER_KID 4 /* listener, client, accepted, udp */

enum { KID_A, KID_WORKER, KID_B, N_KIDS };

static const char *const kid_cg[N_KIDS] = { "a.service", "a.service/worker", "b.service" };

struct kid {
	pid_t pid;
	int hold;
	uint64_t cookies[PER_KID];
};

static struct {
	char root[1024];  /* cgroup2 mount */
	char slice[64];	  /* "sdt<pid>x<tag>.slice" */
	char cunit[64];	  /* "sdt<pid>x<tag>c.service", made and removed by a test */
	struct kid kids[N_KIDS];
	uint64_t control[4];
	int control_fds[4];
} T;

static int cg_mkdir(const char *rel)
{
	char p[2048];

	snprintf(p, sizeof(p), "%s/%s/%s", T.root, T.slice, rel);
	return mkdir(p, 0755) < 0 ? -errno : 0;
}

static void cg_rmdir(const char *rel)
{
	char p[2048];

	snprintf(p, sizeof(p), "%s/%s%s%s", T.root, T.slice, *rel ? "/" : "", rel);
	rmdir(p);
}

/* In the child: join the cgroup, make the sockets, report their cookies. */
static void kid_main(const char *cg, uint16_t port, int report, int hold)
{
	char p[2048], pid[32];
	struct sockaddr_in6 six = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT,
				    .sin6_port = htons(port) };
	uint64_t c[PER_KID];
	int fd, l, cl, ac, u;
	char x;

	snprintf(p, sizeof(p), "%s/%s/%s/cgroup.procs", T.root, T.slice, cg);
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, pid, strlen(pid)) < 0)
		_exit(2);
	close(fd);
	l = stream_listen(AF_INET, IPPROTO_TCP, "127.0.0.1", port, 8);
	cl = stream_connect(AF_INET, IPPROTO_TCP, "127.0.0.1", port);
	ac = accept(l, NULL, NULL);
	u = socket(AF_INET6, SOCK_DGRAM, 0);
	if (u >= 0 && bind(u, (struct sockaddr *)&six, sizeof(six)) < 0)
		u = -1;
	if (l < 0 || cl < 0 || ac < 0 || u < 0)
		_exit(3);
	c[0] = fd_cookie(l);
	c[1] = fd_cookie(cl);
	c[2] = fd_cookie(ac);
	c[3] = fd_cookie(u);
	if (write(report, c, sizeof(c)) != sizeof(c))
		_exit(4);
	while (read(hold, &x, 1) > 0)
		;
	_exit(0);
}

static void kid_start(struct kid *k, const char *cg, uint16_t port)
{
	int rep[2], hold[2];

	assert_int_equal(pipe2(rep, O_CLOEXEC), 0);
	assert_int_equal(pipe2(hold, O_CLOEXEC), 0);
	k->pid = fork();
	assert_true(k->pid >= 0);
	if (k->pid == 0) {
		close(rep[0]);
		close(hold[1]);
		kid_main(cg, port, rep[1], hold[0]);
	}
	close(rep[1]);
	close(hold[0]);
	assert_int_equal(read(rep[0], k->cookies, sizeof(k->cookies)), sizeof(k->cookies));
	close(rep[0]);
	k->hold = hold[1];
}

static int setup(void **state)
{
	(void)state;
	netns_enter_private_or_skip();
	if (sdiag_cgroup_root(T.root, sizeof(T.root)) < 0) {
		printf("SKIP(cgroup2): no cgroup2 mount\n");
		exit(77);
	}
	{
		unsigned tag = 0;
		int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

		if (fd < 0 || read(fd, &tag, sizeof(tag)) != sizeof(tag))
			tag = (unsigned)time(NULL);
		if (fd >= 0)
			close(fd);
		snprintf(T.slice, sizeof(T.slice), "sdt%dx%08x.slice", (int)getpid(), tag);
		snprintf(T.cunit, sizeof(T.cunit), "sdt%dx%08xc.service", (int)getpid(), tag);
	}
	if (cg_mkdir("") < 0 || cg_mkdir("a.service") < 0 || cg_mkdir("a.service/worker") < 0 ||
	    cg_mkdir("b.service") < 0) {
		printf("SKIP(cgroup2): cannot create test cgroups under %s\n", T.root);
		exit(77);
	}
	for (int i = 0; i < N_KIDS; i++)
		kid_start(&T.kids[i], kid_cg[i], (uint16_t)(7001 + i));
	T.control_fds[0] = stream_listen(AF_INET, IPPROTO_TCP, "127.0.0.1", 7100, 8);
	T.control_fds[1] = stream_connect(AF_INET, IPPROTO_TCP, "127.0.0.1", 7100);
	T.control_fds[2] = socket(AF_INET, SOCK_DGRAM, 0);
	{
		struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(7100),
					   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

		assert_int_equal(bind(T.control_fds[2], (struct sockaddr *)&sin, sizeof(sin)), 0);
	}
	T.control_fds[3] = accept(T.control_fds[0], NULL, NULL);
	for (int i = 0; i < 4; i++)
		T.control[i] = fd_cookie(T.control_fds[i]);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (int i = 0; i < N_KIDS; i++) {
		if (T.kids[i].pid <= 0)
			continue;
		/* Later kids inherited earlier kids' hold pipes: kill, don't wait for EOF. */
		close(T.kids[i].hold);
		kill(T.kids[i].pid, SIGKILL);
		waitpid(T.kids[i].pid, NULL, 0);
	}
	for (int i = 0; i < 4; i++)
		close(T.control_fds[i]);
	cg_rmdir(T.cunit); /* left by a failed test_resolve_again */
	cg_rmdir("a.service/worker");
	cg_rmdir("a.service");
	cg_rmdir("b.service");
	cg_rmdir("");
	return 0;
}

/* The cookies of TCP/UDP sockets f selects in this namespace. */
static size_t selected(const char *expr, bool no_kernel, uint64_t *out, size_t max)
{
	struct sdiag_filter_error err = { 0 };
	struct sdiag_filter *f = NULL;
	SDIAG_OPTS(sdiag_query, q,
			.tables = SDIAG_TABLE_BIT(SDIAG_T_TCP) | SDIAG_TABLE_BIT(SDIAG_T_UDP),
			.states = SDIAG_STATES_ALL,
			.no_kernel_filter = no_kernel);
	struct sdiag_handle *h = NULL;
	struct sdiag_sock_list l = { 0 };
	size_t n = 0;

	if (sdiag_filter_parse(&f, expr, &err) < 0)
		fail_msg("'%s': %s", expr, err.msg);
	q.filter = f;
	assert_int_equal(sdiag_open(&h), 0);
	assert_int_equal(sdiag_collect(h, &q, &l), 0);
	for (size_t i = 0; i < l.n && n < max; i++)
		out[n++] = l.socks[i]->cookie;
	sdiag_sock_list_free(&l);
	sdiag_close(h);
	sdiag_filter_free(f);
	return n;
}

static bool has(const uint64_t *v, size_t n, uint64_t c)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == c)
			return true;
	return false;
}

/* expr must select exactly the sockets of the kids in mask (bit i = kid i)
 * plus the control sockets when control is set, in both modes. */
static void expect(const char *expr, unsigned mask, bool control)
{
	for (int mode = 0; mode < 2; mode++) {
		uint64_t got[64];
		size_t n = selected(expr, mode, got, 64), want = 0;

		for (int k = 0; k < N_KIDS; k++)
			for (int j = 0; j < PER_KID; j++) {
				bool in = has(got, n, T.kids[k].cookies[j]);

				if (in != !!(mask & (1u << k)))
					fail_msg("'%s' (%s): socket %d of %s %s", expr,
						 mode ? "user space" : "kernel", j, kid_cg[k],
						 in ? "selected" : "missing");
				want += in;
			}
		for (int j = 0; j < 4; j++) {
			bool in = has(got, n, T.control[j]);

			if (in != control)
				fail_msg("'%s' (%s): control socket %d %s", expr,
					 mode ? "user space" : "kernel", j,
					 in ? "selected" : "missing");
			want += in;
		}
		if (n != want)
			fail_msg("'%s': %zu sockets selected, %zu expected", expr, n, want);
	}
}

static void test_exact_subtree_unit(void **state)
{
	char e[1536];

	(void)state;
	snprintf(e, sizeof(e), "cgroup /%s/a.service", T.slice);
	expect(e, 1u << KID_A, false);
	snprintf(e, sizeof(e), "cgroup %s/%s/a.service/worker", T.root, T.slice);
	expect(e, 1u << KID_WORKER, false); /* the full path works too */
	snprintf(e, sizeof(e), "cgroup /%s/a.service/**", T.slice);
	expect(e, 1u << KID_A | 1u << KID_WORKER, false);
	snprintf(e, sizeof(e), "cgroup /%s/**", T.slice);
	expect(e, 7, false);
	snprintf(e, sizeof(e), "cgroup /%s", T.slice);
	expect(e, 0, false); /* exact: nobody lives in the slice itself */
	snprintf(e, sizeof(e), "unit %s", T.slice);
	expect(e, 7, false);
	/* Other a.service/b.service directories on this host hold no socket of
	 * this namespace: the unit selects exactly ours. */
	expect("unit a.service", 1u << KID_A | 1u << KID_WORKER, false);
	expect("unit b.service", 1u << KID_B, false);
	expect("unit worker", 1u << KID_WORKER, false);
	expect("unit a.service or unit b.service", 7, false);
	snprintf(e, sizeof(e), "not cgroup /%s/**", T.slice);
	expect(e, 0, true);
	snprintf(e, sizeof(e), "cgroup != /%s/a.service/** and not unit b.service", T.slice);
	expect(e, 0, true);
}

/* The inet program carries one CGROUP_COND per cgroup of the set. */
static void test_pushed_to_kernel(void **state)
{
	struct sdiag_filter_error err = { 0 };
	struct sdiag_filter *f = NULL;
	char e[512];
	void *bc = NULL;
	int n, conds = 0;

	(void)state;
	snprintf(e, sizeof(e), "cgroup /%s/**", T.slice);
	assert_int_equal(sdiag_filter_parse(&f, e, &err), 0);
	n = sd_filter_bytecode(f, AF_INET, &bc);
	assert_true(n > 0);
	assert_int_equal(sd_bc_audit(bc, (size_t)n, false), 0);
	for (int off = 0; off < n;) {
		const uint8_t *op = (const uint8_t *)bc + off;

		conds += op[0] == 13; /* INET_DIAG_BC_CGROUP_COND */
		off += op[1];
	}
	assert_int_equal(conds, 4); /* the slice, a, a/worker, b */
	free(bc);
	sdiag_filter_free(f);
}

/* A cgroup recreated under the same path has a new id: resolving again
 * follows it; a cgroup that is gone is an error unless missing_ok. */
static void test_resolve_again(void **state)
{
	struct sdiag_filter_error err = { 0 };
	struct sdiag_filter *f = NULL;
	char e[512];
	uint64_t before;

	(void)state;
	assert_int_equal(cg_mkdir(T.cunit), 0);
	snprintf(e, sizeof(e), "unit %s", T.cunit);
	assert_int_equal(sdiag_filter_parse(&f, e, &err), 0);
	assert_int_equal(f->root->u.cg.n, 1);
	before = f->root->u.cg.ids[0];
	cg_rmdir(T.cunit);
	assert_int_equal(sdiag_filter_resolve(f, 0, &err), -ENOENT);
	assert_non_null(strstr(err.msg, T.cunit));
	assert_int_equal(f->root->u.cg.ids[0], before); /* kept on error */
	assert_int_equal(sdiag_filter_resolve(f, SDIAG_RESOLVE_MISSING_OK, &err), 0);
	assert_int_equal(f->root->u.cg.n, 0);
	assert_int_equal(cg_mkdir(T.cunit), 0);
	assert_int_equal(sdiag_filter_resolve(f, 0, &err), 0);
	assert_int_equal(f->root->u.cg.n, 1);
	assert_true(f->root->u.cg.ids[0] != before);
	cg_rmdir(T.cunit);
	sdiag_filter_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_subtree_unit),
		cmocka_unit_test(test_pushed_to_kernel),
		cmocka_unit_test(test_resolve_again),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
