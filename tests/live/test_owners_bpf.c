/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The BPF owners iterator against the /proc walk, on one population, in a
 * private pid namespace with its own /proc and a private network namespace:
 *  - both give exactly the same (inode, pid, fd, uid, comm) entries for a
 *    population with sockets shared by fork and dup, a process that dropped
 *    root (not dumpable), a thread with a descriptor table of its own
 *    (unshare(CLONE_FILES): not in /proc/PID/fd, so not an owner), threads
 *    that share the table, a process in a nested pid namespace (numbered as
 *    ours numbers it, not as its own does), and non-socket descriptors;
 *  - scanned from inside a nested pid namespace, the iterator sees only that
 *    namespace's processes, numbered from 1, as its /proc does;
 *  - nothing stays loaded: the program and link of a scanner killed with
 *    SIGKILL in the middle of its scans disappear from the kernel.
 * Without the iterator (not built in, or no CAP_BPF + CAP_PERFMON) the test
 * checks that SDIAG_OWNERS_BPF fails with that reason, prints
 * SKIP(bpf_owners) (tests/kernel_probe.py knows the feature) and exits 77.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "lib/owners/proc.h"
#include "tests/live/live_util.h"
#include "tests/live/netns_util.h"

#define NOBODY 65534

/* ---- comparing the two scans ----------------------------------------------------- */

static struct sdiag_procmap *scan(enum sdiag_owners how)
{
	struct sdiag_procmap *m = NULL;

	assert_int_equal(sdiag_procmap_scan_using(&m, NULL, how), 0);
	assert_int_equal(sdiag_procmap_source(m, NULL), how);
	return m;
}

static void print_entries(const char *what, size_t n, const uint64_t *ino,
			  const struct sdiag_proc *p)
{
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%s: inode %llu pid %d fd %d uid %u comm %s\n", what,
			(unsigned long long)ino[i], p[i].pid, p[i].fd, p[i].uid, p[i].comm);
}

/* Both maps hold the same entries: their number, or -1. */
static ssize_t entries_equal(const struct sdiag_procmap *bpf, const struct sdiag_procmap *proc)
{
	struct sdiag_proc *pb = NULL, *pp = NULL;
	uint64_t *ib = NULL, *ip = NULL;
	size_t nb = 0, np = 0;
	bool same;

	if (sd_procmap_entries(bpf, &nb, &ib, &pb) || sd_procmap_entries(proc, &np, &ip, &pp))
		return -1;
	same = nb == np;
	for (size_t i = 0; same && i < nb; i++)
		same = ib[i] == ip[i] && pb[i].pid == pp[i].pid && pb[i].fd == pp[i].fd &&
		       pb[i].uid == pp[i].uid && !strcmp(pb[i].comm, pp[i].comm);
	if (!same) {
		print_entries("bpf", nb, ib, pb);
		print_entries("proc", np, ip, pp);
	}
	free(ib);
	free(pb);
	free(ip);
	free(pp);
	return same ? (ssize_t)nb : -1;
}

static size_t same_entries(const struct sdiag_procmap *bpf, const struct sdiag_procmap *proc)
{
	ssize_t n = entries_equal(bpf, proc);

	assert_true(n >= 0);
	return (size_t)n;
}

/* The owners of fd's socket in m. */
static size_t owners_of(const struct sdiag_procmap *m, int fd, const struct sdiag_proc **ret)
{
	return sdiag_procmap_lookup(m, fd_inode(fd), ret);
}

/* The socket inode of /proc/PID/fd/FD (or /proc/PID/task/TID/fd/FD), 0 if none. */
static uint64_t link_inode(pid_t pid, pid_t tid, int fd)
{
	char path[96], link[64];
	unsigned long long ino;
	ssize_t len;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/fd/%d", pid, tid, fd);
	else
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	len = readlink(path, link, sizeof(link) - 1);
	if (len <= 0)
		return 0;
	link[len] = '\0';
	return sscanf(link, "socket:[%llu]", &ino) == 1 ? ino : 0;
}

/* How many of pid's threads' descriptors are sockets that the process's
 * own table (/proc/PID/fd) does not hold; each of them must have no owner
 * in m. */
static unsigned thread_only_sockets(pid_t pid, const struct sdiag_procmap *m)
{
	char path[64];
	struct dirent *de;
	unsigned found = 0;
	DIR *tasks;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	tasks = opendir(path);
	assert_non_null(tasks);
	while ((de = readdir(tasks))) {
		pid_t tid = atoi(de->d_name);

		if (tid <= 0)
			continue;
		for (int fd = 0; fd < 64; fd++) {
			uint64_t ino = link_inode(pid, tid, fd);

			if (!ino || ino == link_inode(pid, 0, fd))
				continue;
			assert_int_equal(sdiag_procmap_lookup(m, ino, NULL), 0);
			found++;
		}
	}
	closedir(tasks);
	return found;
}

/* ---- the population --------------------------------------------------------------- */

/* A kid runs body(arg) after fork, then tells the parent it is ready and
 * waits to be killed. */
struct kid {
	pid_t pid;
};

static void kid_start(struct kid *k, const char *name, void (*body)(void *), void *arg)
{
	int ready[2];
	char c = 0;

	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	k->pid = fork();
	assert_true(k->pid >= 0);
	if (k->pid == 0) {
		close(ready[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_NAME, name);
		if (body)
			body(arg);
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
}

static void kid_end(struct kid *k)
{
	kill(k->pid, SIGKILL);
	waitpid(k->pid, NULL, 0);
}

static void drop_root(void *arg)
{
	(void)arg;
	if (setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY))
		_exit(1);
}

struct threads {
	int own[3];	/* sockets in the table of a thread that unshared it */
	int shared;	/* a socket a sharing thread opened */
};

static void *own_table(void *arg)
{
	struct threads *t = arg;

	if (unshare(CLONE_FILES) < 0)
		return NULL;
	for (int i = 0; i < 3; i++)
		t->own[i] = socket(AF_INET, SOCK_DGRAM, 0);
	for (;;)
		pause();
	return NULL;
}

static void *sharing(void *arg)
{
	struct threads *t = arg;

	t->shared = socket(AF_UNIX, SOCK_DGRAM, 0);
	for (;;)
		pause();
	return NULL;
}

/* Two threads: one with a table of its own, one sharing ours. The
 * descriptors are reported through a pipe to the test. */
static void threaded(void *arg)
{
	int *report = arg;
	struct threads t = { { -1, -1, -1 }, -1 };
	pthread_t a, b;

	if (pthread_create(&a, NULL, own_table, &t) || pthread_create(&b, NULL, sharing, &t))
		_exit(1);
	while (t.own[2] < 0 || t.shared < 0)
		usleep(1000);
	if (write(report[1], &t, sizeof(t)) != (ssize_t)sizeof(t))
		_exit(1);
}

/* A process in a pid namespace of its own: pid 1 there. It sends our
 * number for it (its pid seen from here comes from fork in the middle
 * process) and holds a socket. */
static void nested(void *arg)
{
	int *report = arg, hold[2], msg[2];
	pid_t inner;
	int s;

	if (pipe(hold) || unshare(CLONE_NEWPID) < 0)
		_exit(1);
	inner = fork();
	if (inner < 0)
		_exit(1);
	if (inner == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_NAME, "nested");
		s = socket(AF_INET6, SOCK_DGRAM, 0);
		if (s < 0 || getpid() != 1 || write(hold[1], &s, sizeof(s)) != sizeof(s))
			_exit(1);
		for (;;)
			pause();
	}
	close(hold[1]);
	/* Ours, then the socket's descriptor: in one write, in this order. */
	msg[0] = inner;
	if (read(hold[0], &msg[1], sizeof(msg[1])) != sizeof(msg[1]) ||
	    write(report[1], msg, sizeof(msg)) != sizeof(msg))
		_exit(1);
}

static void test_same_answers(void **state)
{
	struct kid forks[3], nobody, threads, nest;
	struct sdiag_procmap *bpf, *proc;
	const struct sdiag_proc *p;
	int lst, dup_lst, cli, srv, pair[2], rep[2], msg[2], nfd, junk, notsock;
	struct threads t;
	pid_t nest_pid;
	size_t n;

	(void)state;
	lst = stream_listen(AF_INET, IPPROTO_TCP, "127.0.0.1", 0, 16);
	dup_lst = dup(lst);
	cli = stream_connect(AF_INET, IPPROTO_TCP, "127.0.0.1", fd_port(lst));
	srv = accept(lst, NULL, NULL);
	assert_true(srv >= 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
	notsock = open("/dev/null", O_RDONLY | O_CLOEXEC);
	for (int i = 0; i < 3; i++)
		kid_start(&forks[i], i == 2 ? "a-fifteen-chars" : "forked", NULL, NULL);
	kid_start(&nobody, "nobody", drop_root, NULL);
	assert_int_equal(pipe(rep), 0);
	kid_start(&threads, "threads", threaded, rep);
	assert_int_equal(read(rep[0], &t, sizeof(t)), sizeof(t));
	kid_start(&nest, "nest-parent", nested, rep);
	assert_int_equal(read(rep[0], msg, sizeof(msg)), sizeof(msg));
	nest_pid = msg[0];
	nfd = msg[1];
	junk = socket(AF_INET, SOCK_DGRAM, 0); /* after the forks: ours alone */

	bpf = scan(SDIAG_OWNERS_BPF);
	proc = scan(SDIAG_OWNERS_PROC);
	n = same_entries(bpf, proc);
	/* What the two agree on is what it should be. */
	/* Two descriptors in each of: us, the six kids, the nested process. */
	assert_int_equal(owners_of(bpf, lst, &p), 2 * 8);
	assert_int_equal(p[0].pid, getpid());
	assert_int_equal(p[0].fd, lst);
	assert_int_equal(p[1].fd, dup_lst);
	assert_int_equal(owners_of(bpf, junk, &p), 1);
	assert_int_equal(p[0].pid, 1); /* we are pid 1 of our namespace */
	for (size_t i = 0; i < sdiag_procmap_lookup(bpf, fd_inode(srv), &p); i++)
		if (p[i].pid == nobody.pid)
			assert_int_equal(p[i].uid, NOBODY);
		else if (p[i].pid == forks[2].pid)
			assert_string_equal(p[i].comm, "a-fifteen-chars");
	/* The thread with its own table: its sockets have no owner; the
	 * sharing thread's socket is the process's. */
	assert_int_equal(thread_only_sockets(threads.pid, bpf), 3);
	assert_int_equal(sdiag_procmap_lookup(bpf, link_inode(threads.pid, 0, t.shared), &p), 1);
	assert_int_equal(p[0].pid, threads.pid);
	assert_int_equal(p[0].fd, t.shared);
	assert_string_equal(p[0].comm, "threads");
	/* The nested process as our namespace numbers it. */
	assert_int_equal(sdiag_procmap_lookup(bpf, link_inode(nest_pid, 0, nfd), &p), 1);
	assert_int_equal(p[0].pid, nest_pid);
	assert_string_equal(p[0].comm, "nested");
	assert_true(n > 20);
	sdiag_procmap_free(bpf);
	sdiag_procmap_free(proc);

	for (int i = 0; i < 3; i++)
		kid_end(&forks[i]);
	kid_end(&nobody);
	kid_end(&threads);
	kid_end(&nest);
	close(rep[0]);
	close(rep[1]);
	close(notsock);
	close(junk);
	close(pair[0]);
	close(pair[1]);
	close(srv);
	close(cli);
	close(dup_lst);
	close(lst);
}


/* ---- from inside a nested pid namespace --------------------------------------------- */

/* In a new pid namespace with its own /proc: both scans agree, pid 1 is the
 * scanner, and a socket only the outside holds has no owner. Returns an exit
 * status for the test to check. */
static int nested_scan(uint64_t outside)
{
	struct sdiag_procmap *bpf = NULL, *proc = NULL;
	const struct sdiag_proc *p = NULL;
	int in, r = 0;

	if (unshare(CLONE_NEWNS) || mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
		return 10;
	in = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (sdiag_procmap_scan_using(&bpf, NULL, SDIAG_OWNERS_BPF) ||
	    sdiag_procmap_scan_using(&proc, NULL, SDIAG_OWNERS_PROC))
		r = 11;
	else if (entries_equal(bpf, proc) < 1)
		r = 12;
	else if (sdiag_procmap_lookup(bpf, outside, NULL) != 0)
		r = 13;
	else if (sdiag_procmap_lookup(bpf, fd_inode(in), &p) != 1 || p->pid != 1 || p->fd != in)
		r = 14;
	sdiag_procmap_free(bpf);
	sdiag_procmap_free(proc);
	return r;
}

static void test_nested_view(void **state)
{
	int s = socket(AF_INET, SOCK_DGRAM, 0), status;
	uint64_t outside = fd_inode(s);
	pid_t pid;

	(void)state;
	assert_true(outside != 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(s); /* only the outside holds it now */
		if (unshare(CLONE_NEWPID))
			_exit(9);
		pid = fork();
		if (pid == 0)
			_exit(nested_scan(outside));
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
			_exit(8);
		_exit(WEXITSTATUS(status));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close(s);
}

/* ---- nothing left loaded ---------------------------------------------------------- */

/* The id after "KEY:\t" in /proc/PID/fdinfo/FD, or 0. */
static uint32_t fdinfo_id(pid_t pid, const char *fd, const char *key)
{
	char path[384], line[128];
	uint32_t id = 0;
	size_t kl = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid, fd);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ':')
			id = (uint32_t)strtoul(line + kl + 1, NULL, 10);
	fclose(f);
	return id;
}

/* Wait until pid holds a BPF link: its link and program ids. */
static bool find_link(pid_t pid, uint32_t *link_id, uint32_t *prog_id)
{
	char path[64], lpath[384], target[64];

	time_t end = time(NULL) + 20;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	while (time(NULL) < end) {
		DIR *d = opendir(path);
		struct dirent *de;

		if (!d)
			return false;
		while ((de = readdir(d))) {
			ssize_t len;

			snprintf(lpath, sizeof(lpath), "%s/%s", path, de->d_name);
			len = readlink(lpath, target, sizeof(target) - 1);
			if (len <= 0)
				continue;
			target[len] = '\0';
			if (strcmp(target, "anon_inode:bpf_link"))
				continue;
			*link_id = fdinfo_id(pid, de->d_name, "link_id");
			*prog_id = fdinfo_id(pid, de->d_name, "prog_id");
			if (*link_id && *prog_id) {
				closedir(d);
				return true;
			}
		}
		closedir(d);
	}
	return false;
}

static int bpf_get_fd_by_id(int cmd, uint32_t id)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	if (cmd == BPF_LINK_GET_FD_BY_ID)
		attr.link_id = id;
	else
		attr.prog_id = id;
	return (int)syscall(__NR_bpf, cmd, &attr, sizeof(attr));
}

/* True once neither the link nor the program exists (freeing is deferred
 * to RCU and work queues: wait up to 10 s). */
static bool gone(uint32_t link_id, uint32_t prog_id)
{
	for (int i = 0; i < 1000; i++) {
		int l = bpf_get_fd_by_id(BPF_LINK_GET_FD_BY_ID, link_id);
		int le = errno;
		int p = bpf_get_fd_by_id(BPF_PROG_GET_FD_BY_ID, prog_id);
		int pe = errno;

		if (l >= 0)
			close(l);
		if (p >= 0)
			close(p);
		if (l < 0 && le == ENOENT && p < 0 && pe == ENOENT)
			return true;
		usleep(10000);
	}
	return false;
}

/* A scanner killed with SIGKILL in the middle of its scans leaves nothing
 * loaded; so does one that finishes. */
static void test_nothing_left(void **state)
{
	uint32_t link_id = 0, prog_id = 0;
	pid_t pid;

	(void)state;
	for (int finish = 0; finish < 2; finish++) {
		int go[2];
		char c = 0;

		assert_int_equal(pipe2(go, O_CLOEXEC | O_NONBLOCK), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(go[1]);
			for (unsigned i = 0; i < 100000; i++) {
				struct sdiag_procmap *m = NULL;

				int r = sdiag_procmap_scan_using(&m, NULL, SDIAG_OWNERS_BPF);

				if (r < 0) {
					fprintf(stderr, "scanner: %s\n", strerror(-r));
					_exit(1);
				}
				sdiag_procmap_free(m);
				/* finish: stop once the parent closed its end (it saw a link). */
				if (finish && i > 0 && read(go[0], &c, 1) == 0)
					_exit(0);
			}
			_exit(0);
		}
		close(go[0]);
		assert_true(find_link(pid, &link_id, &prog_id));
		if (finish)
			close(go[1]); /* read() returns 0: the scanner exits by itself */
		else
			kill(pid, SIGKILL);
		assert_int_equal(waitpid(pid, NULL, 0), pid);
		if (!finish)
			close(go[1]);
		assert_true(gone(link_id, prog_id));
	}
}

/* Skip (77) when the iterator cannot be used here, after checking that
 * asking for it says why. */
static void need_iterator(void)
{
	struct sdiag_procmap *m = NULL;
	int r = sdiag_procmap_scan_using(&m, NULL, SDIAG_OWNERS_BPF);

#ifndef SD_HAVE_BPF_OWNERS
	if (r != -EOPNOTSUPP) {
		fprintf(stderr, "built without the iterator, yet SDIAG_OWNERS_BPF gave %d\n", r);
		exit(1);
	}
#endif
	if (r < 0) {
		printf("SKIP(bpf_owners): no BPF owners iterator: %s\n", strerror(-r));
		exit(77);
	}
	sdiag_procmap_free(m);
	/* A /proc root makes no sense for the iterator. */
	if (sdiag_procmap_scan_using(&m, "/proc", SDIAG_OWNERS_BPF) != -EINVAL) {
		fprintf(stderr, "SDIAG_OWNERS_BPF with a proc_root was accepted\n");
		exit(1);
	}
}

static int setup(void **state)
{
	(void)state;
	netns_enter_private_or_skip();
	return 0;
}

/*
 * Everything runs in a pid namespace of our own with its own /proc, where we
 * are pid 1: both scans see only this test's processes, and when we exit
 * every process we left is killed.
 */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_same_answers, setup),
		cmocka_unit_test_setup(test_nested_view, setup),
		cmocka_unit_test(test_nothing_left),
	};
	int status;
	pid_t pid;

	if (unshare(CLONE_NEWPID | CLONE_NEWNS) < 0) {
		fprintf(stderr, "SKIP: no private pid namespace: %s\n", strerror(errno));
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
		need_iterator();
		exit(cmocka_run_group_tests(tests, NULL, NULL));
	}
	if (waitpid(pid, &status, 0) != pid)
		_exit(1);
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}
