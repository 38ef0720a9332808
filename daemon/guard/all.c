/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * guard --all-netns: a supervisor that runs one guard per network namespace.
 *
 * Each namespace gets a child process that enters it and is the ordinary
 * guard there: its own rtnetlink subscription, view, resync, timers and log
 * lines (named by the namespace). A namespace that disappears takes nothing
 * with it but its child, so the supervisor's descriptors and memory stay flat
 * however many come and go, and a crash stays in one namespace.
 *
 * The namespaces are those sdiag_netns_list() finds: named ones (/run/netns
 * and /var/run/netns, or the --netns-dir directories) and those of running
 * processes (/proc/PID/ns/net: with the host's /proc, every pod's, named or
 * not), one guard per namespace inode. The directories are watched with inotify: after a
 * change, the names are looked at every 10 ms for up to 2 s (ip netns add
 * creates the file first and bind-mounts the namespace on it after), and a
 * removed name is acted upon at once. Everything is scanned again every
 * second, which bounds the delay for namespaces without a name (containers)
 * and for those that lose their last process. A namespace seen only through
 * a process gets its guard 200 ms after it was first seen, in case a name
 * comes (ip netns add makes the namespace in a child, then mounts it).
 *
 * Our guards live in the namespaces they guard, so they keep them alive: a
 * namespace with neither a name nor any process but our guard is gone, and
 * its guard is stopped. A guard that dies is started again (1 s later,
 * doubling up to 64 s while it dies within a minute of its start), unless it exited with status
 * 2 or 3: a configuration it refuses or a namespace where it cannot destroy
 * would only fail again. A guard that may not enter its namespace exits 3.
 *
 * Without CAP_SYS_ADMIN (no namespace can be entered) or what every guard
 * needs (CAP_NET_ADMIN), the supervisor exits 3 at start, as `guard` does,
 * rather than start guards that could only fail.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <linux/magic.h>

#include "daemon/common/log.h"
#include "daemon/guard/all.h"
#include "lib/ns/ns.h"
#include "sockdiag.h"
#include "util/clock.h"
#include "util/sigfd.h"

#define SCAN_MS 1000	 /* the regular rescan */
#define FAST_MS 10	 /* after a change in /run/netns ... */
#define FAST_FOR_MS 2000 /* ... for this long */
/* A namespace seen only through a process waits this long for a name: ip
 * netns add makes it in a child process, then mounts it on its name. */
#define UNNAMED_MS 200
#define RESTART_MS 1000
#define RESTART_MAX_SHIFT 6	/* 64 s */
#define RESTART_CALM_MS 60000	/* a guard that ran this long restarts after 1 s again */

enum child_state {
	CH_WAIT,	/* to be started at due_ms */
	CH_RUNNING,
	CH_STOPPING,	/* its namespace is gone; SIGTERM sent, not reaped yet */
	CH_FAILED,	/* exited with 2 or 3: not started again while the namespace lives */
};

struct child {
	uint64_t inode;
	pid_t pid;
	uint8_t state;		/* enum child_state */
	uint8_t restarts;
	bool seen;		/* in the last scan */
	uint64_t due_ms;	/* CH_WAIT: when to start it; CH_RUNNING: when it was */
	char label[64];
};

struct sup {
	const struct guard_all_ops *ops;
	void *arg;
	const char *const *dirs;	/* of named namespaces, NULL-terminated */
	struct child *v;
	size_t n, cap;
	int sigfd, ino, tfd;
	uint64_t next_scan_ms, fast_until_ms;
	uint64_t restarts;
};

/* Tell the census (--metrics): guards running, waiting, failed. */
static void census(struct sup *s)
{
	size_t st[3] = { 0 };

	if (!s->ops->census)
		return;
	for (size_t i = 0; i < s->n; i++)
		st[s->v[i].state == CH_RUNNING ? 0 : s->v[i].state == CH_FAILED ? 2 :
		   s->v[i].state == CH_WAIT ? 1 : 0] += s->v[i].state != CH_STOPPING;
	s->ops->census(s->arg, st, s->restarts);
}

#define logsup(...) daemon_log("sockdiag-guard", __VA_ARGS__)

/* In the child, every descriptor the supervisor had but stdio and keep: its
 * signalfd, inotify and timer, and those of its --metrics server (the
 * listening socket, connections being served, the server's epoll and
 * eventfds), which a fork keeps CLOEXEC or not; a guard holding a connection
 * would keep it open after the supervisor closed it. The guard opens its own. */
static void close_inherited(int keep)
{
	if (keep > 3)
		close_range(3, (unsigned)keep - 1, 0);
	if (close_range((unsigned)keep + 1, ~0U, 0) < 0) {	/* before Linux 5.9 */
		struct rlimit rl = { .rlim_cur = 1024 };

		(void)getrlimit(RLIMIT_NOFILE, &rl);
		for (rlim_t fd = (rlim_t)keep + 1; fd < rl.rlim_cur; fd++)
			close((int)fd);
		for (rlim_t fd = 3; fd < (rlim_t)keep; fd++)
			close((int)fd);
	}
}

/* The child: enter the namespace and be the guard there. Never returns. */
static void child_main(struct sup *s, pid_t parent, int nsfd, const char *c_label)
{
	char label[sizeof(((struct child *)0)->label)];
	int r;

	snprintf(label, sizeof(label), "%s", c_label); /* s->v is freed below */

	/* Not left running if the supervisor is killed (SIGKILL included);
	 * and if it died before this line, go now. */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
		_exit(1);
	close_inherited(nsfd);
	r = setns(nsfd, CLONE_NEWNET) < 0 ? -errno : 0;
	close(nsfd);
	if (r < 0) {
		daemon_log("sockdiag-guard", "netns %s: cannot enter: %s", label, strerror(-r));
		_exit(r == -EPERM ? 3 : 1); /* 3: not started again */
	}
	free(s->v);
	_exit(s->ops->run(s->arg, label));
}

/* Open the namespace at path, if it is still c's: -ENOENT when it went since
 * the scan (a name unmounted leaves a plain file behind for a moment, a
 * process gone leaves nothing), the normal race of a short-lived namespace. */
static int open_ns(const struct child *c, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct statfs sfs;
	struct stat st;

	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? -ENOENT : -errno;
	if (fstatfs(fd, &sfs) < 0 || sfs.f_type != NSFS_MAGIC || fstat(fd, &st) < 0 ||
	    (uint64_t)st.st_ino != c->inode) {
		close(fd);
		return -ENOENT;
	}
	return fd;
}

static int spawn(struct sup *s, struct child *c, const char *path)
{
	int fd = open_ns(c, path);
	pid_t pid, parent = getpid();

	if (fd < 0)
		return fd;
	pid = fork();
	if (pid < 0) {
		close(fd);
		return -errno;
	}
	if (pid == 0)
		child_main(s, parent, fd, c->label);
	close(fd);
	c->pid = pid;
	c->state = CH_RUNNING;
	c->due_ms = mono_ms();
	return 0;
}

/* Start c's guard if it is due. */
static void maybe_spawn(struct sup *s, struct child *c, const struct sdiag_netns *ns,
			uint64_t now)
{
	int r;

	if (c->state != CH_WAIT || now < c->due_ms)
		return;
	r = spawn(s, c, ns->path);
	if (r == -ENOENT)
		logsup("netns %s: gone before its guard started", c->label);
	else if (r < 0)
		logsup("netns %s: cannot start its guard: %s", c->label, strerror(-r));
	if (r < 0)
		c->due_ms = now + RESTART_MS;	/* the next scan forgets it if gone */
}

static struct child *find(struct sup *s, uint64_t inode)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].inode == inode)
			return &s->v[i];
	return NULL;
}

static bool is_child(const struct sup *s, long pid)
{
	for (size_t i = 0; i < s->n; i++)
		if ((s->v[i].state == CH_RUNNING || s->v[i].state == CH_STOPPING) &&
		    s->v[i].pid == pid)
			return true;
	return false;
}

/* A namespace found only through one of our guards (its label is the lowest
 * pid inside) may have nothing else left. Is any other process in it? */
static bool held_by_others(const struct sup *s, uint64_t inode)
{
	struct dirent *de;
	DIR *d = opendir("/proc");
	bool found = false;

	if (!d)
		return true; /* cannot tell: keep it */
	while (!found && (de = readdir(d))) {
		char path[64];
		struct stat st;
		long pid = strtol(de->d_name, NULL, 10);

		if (pid <= 0 || pid == (long)getpid() || is_child(s, pid))
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/ns/net", pid);
		found = stat(path, &st) == 0 && (uint64_t)st.st_ino == inode;
	}
	closedir(d);
	return found;
}

/* Found through a process and not started yet: a name may still come. */
static bool waits_for_name(const struct child *c)
{
	return c->state == CH_WAIT && !c->pid && !strncmp(c->label, "net:[", 5);
}

static struct child *add_child(struct sup *s, const struct sdiag_netns *ns, uint64_t now)
{
	bool named = strncmp(ns->label, "pid:", 4) != 0;
	struct child *c;

	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct child *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		s->v = v;
		s->cap = cap;
	}
	c = &s->v[s->n++];
	memset(c, 0, sizeof(*c));
	c->inode = ns->inode;
	c->state = CH_WAIT;
	c->due_ms = named ? now : now + UNNAMED_MS;
	/* Named: its name. Else its inode (as readlink /proc/PID/ns/net shows
	 * it) and the lowest pid in it when it was found. */
	if (named)
		snprintf(c->label, sizeof(c->label), "%s", ns->label);
	else
		snprintf(c->label, sizeof(c->label), "net:[%llu] %.24s",
			 (unsigned long long)ns->inode, ns->label);
	return c;
}

/* Compare what exists with what is guarded: start guards for new namespaces
 * (and those due again), stop those whose namespace is gone. */
static int scan(struct sup *s)
{
	struct sdiag_netns *ns = NULL;
	size_t n = 0, k = 0;
	uint64_t now = mono_ms();
	int r;

	s->next_scan_ms = now + SCAN_MS;
	r = sd_netns_list_dirs(s->dirs, "/proc", &ns, &n);
	if (r < 0) {
		logsup("cannot list network namespaces: %s", strerror(-r));
		return 0;
	}
	for (size_t i = 0; i < s->n; i++)
		s->v[i].seen = false;
	for (size_t i = 0; i < n; i++) {
		struct child *c = find(s, ns[i].inode);

		if (!strncmp(ns[i].label, "pid:", 4) && is_child(s, atol(ns[i].label + 4)) &&
		    !held_by_others(s, ns[i].inode))
			continue; /* only our guard is left in it: gone */
		if (!c)
			c = add_child(s, &ns[i], now);
		if (!c) {
			free(ns);
			return -ENOMEM;
		}
		if (waits_for_name(c) && strncmp(ns[i].label, "pid:", 4)) {
			/* The name came: guarded now, under it. */
			snprintf(c->label, sizeof(c->label), "%s", ns[i].label);
			c->due_ms = now;
		}
		c->seen = true;
		maybe_spawn(s, c, &ns[i], now);
	}
	free(ns);
	/* Gone: stop the guard (forgotten once reaped), forget the namespace. */
	for (size_t i = 0; i < s->n; i++) {
		struct child *c = &s->v[i];

		if (!c->seen && c->state == CH_RUNNING) {
			kill(c->pid, SIGTERM);
			c->state = CH_STOPPING;
			logsup("netns %s: gone; its guard (pid %ld) is stopped", c->label,
			       (long)c->pid);
		}
		if (!c->seen && c->state != CH_STOPPING)
			continue;
		s->v[k++] = *c;
	}
	s->n = k;
	census(s);
	return 0;
}

/* A name in dir mounted (nsfs) that no guard has yet? */
static bool named_pending_in(struct sup *s, const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	bool found = false;

	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		char path[4096 + 256];
		const struct child *c;
		struct statfs sfs;
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%.4095s/%s", dir, de->d_name);
		if (statfs(path, &sfs) < 0 || sfs.f_type != NSFS_MAGIC || stat(path, &st) < 0)
			continue;
		c = find(s, (uint64_t)st.st_ino);
		found = !c || waits_for_name(c);
	}
	closedir(d);
	return found;
}

static bool named_pending(struct sup *s)
{
	for (size_t i = 0; s->dirs[i]; i++)
		if (named_pending_in(s, s->dirs[i]))
			return true;
	return false;
}

static void reap(struct sup *s)
{
	uint64_t now = mono_ms();
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (size_t i = 0; i < s->n; i++) {
			struct child *c = &s->v[i];
			bool refused = WIFEXITED(status) &&
				       (WEXITSTATUS(status) == 2 || WEXITSTATUS(status) == 3);
			unsigned delay;

			if (c->pid != pid || (c->state != CH_RUNNING && c->state != CH_STOPPING))
				continue;
			if (c->state == CH_STOPPING) {
				/* Its namespace is gone: forget it. */
				s->v[i] = s->v[--s->n];
				break;
			}
			if (refused) {
				c->state = CH_FAILED;
				logsup("netns %s: its guard exited (status %d); not restarted "
				       "while the namespace exists", c->label,
				       WEXITSTATUS(status));
				break;
			}
			if (now - c->due_ms > RESTART_CALM_MS)
				c->restarts = 0; /* it had run well for a while */
			delay = RESTART_MS << (c->restarts < RESTART_MAX_SHIFT ? c->restarts :
							     RESTART_MAX_SHIFT);
			c->restarts++;
			s->restarts++;
			c->state = CH_WAIT;
			c->due_ms = now + delay;
			logsup("netns %s: its guard (pid %ld) died (%s %d); restarted in %u s",
			       c->label, (long)pid, WIFEXITED(status) ? "status" : "signal",
			       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
			       delay / 1000);
			break;
		}
	}
}

/* Returns 1 to exit, 0 to go on. */
static int on_signal(struct sup *s)
{
	struct signalfd_siginfo si;

	while (read(s->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			reap(s);
			census(s);
		} else if (si.ssi_signo == SIGHUP) {
			s->ops->reload(s->arg);
			for (size_t i = 0; i < s->n; i++)
				if (s->v[i].state == CH_RUNNING)
					kill(s->v[i].pid, SIGHUP);
		} else {
			logsup("signal %u: exiting", si.ssi_signo);
			return 1;
		}
	}
	return 0;
}

/* The next wake-up: the regular scan, a guard due to start, the fast window. */
static void arm(struct sup *s)
{
	uint64_t now = mono_ms(), next = s->next_scan_ms;
	struct itimerspec it = { 0 };

	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].state == CH_WAIT && s->v[i].due_ms < next)
			next = s->v[i].due_ms;
	if (s->fast_until_ms > now && now + FAST_MS < next)
		next = now + FAST_MS;
	next = next > now ? next : now + 1;
	it.it_value = ts_from_ms(next);
	timerfd_settime(s->tfd, TFD_TIMER_ABSTIME, &it, NULL);
}

static int on_timer(struct sup *s)
{
	uint64_t ticks, now = mono_ms();
	bool due = now >= s->next_scan_ms;

	(void)!read(s->tfd, &ticks, sizeof(ticks));
	for (size_t i = 0; i < s->n && !due; i++)
		due = s->v[i].state == CH_WAIT && s->v[i].due_ms <= now;
	if (!due && s->fast_until_ms > now)
		due = named_pending(s);
	return due ? scan(s) : 0;
}

static int on_inotify(struct sup *s)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	while (read(s->ino, buf, sizeof(buf)) > 0)
		; /* which name does not matter: the scan compares everything */
	s->fast_until_ms = mono_ms() + FAST_FOR_MS;
	return scan(s);
}

static int setup(struct sup *s)
{
	s->sigfd = sigfd_open((const int[]){ SIGTERM, SIGINT, SIGHUP, SIGCHLD, 0 }, SFD_NONBLOCK);
	if (s->sigfd < 0)
		return s->sigfd;
	s->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	s->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (s->sigfd < 0 || s->tfd < 0 || s->ino < 0)
		return -errno;
	/* As ip netns does on first use; then the directory is watched even
	 * before the first namespace is named. (A read-only mount of the
	 * host's directory in a container exists already.) */
	for (size_t i = 0; s->dirs[i]; i++) {
		const char *dir = s->dirs[i];

		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			logsup("cannot create %s (%s): names there are found by the "
			       "periodic scan only", dir, strerror(errno));
		else if (inotify_add_watch(s->ino, dir, IN_CREATE | IN_DELETE | IN_MOVED_TO |
							       IN_MOVED_FROM | IN_ATTRIB) < 0)
			logsup("cannot watch %s (%s): names there are found by the periodic "
			       "scan only", dir, strerror(errno));
	}
	return 0;
}

/* May this process enter network namespaces? setns() into its own asks for
 * CAP_SYS_ADMIN as into any other. */
static int can_enter(void)
{
	int fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC), r;

	if (fd < 0)
		return -errno;
	r = setns(fd, CLONE_NEWNET) < 0 ? -errno : 0;
	close(fd);
	return r;
}

int guard_all_netns(const struct guard_all_ops *ops, void *arg)
{
	struct sup s = { .ops = ops, .arg = arg, .sigfd = -1, .ino = -1, .tfd = -1,
			 .dirs = ops->netns_dirs && ops->netns_dirs[0] ? ops->netns_dirs : sd_netns_dirs };
	char dirs[256] = "";
	int r;

	r = can_enter();
	if (r < 0) {
		fprintf(stderr, "sockdiag guard: --all-netns: cannot enter network namespaces: %s\n",
			r == -EPERM ? "no CAP_SYS_ADMIN (run it as root, or grant it "
				      "CAP_SYS_ADMIN and CAP_NET_ADMIN)" : strerror(-r));
		return r == -EPERM ? 3 : 1;
	}
	r = ops->check(arg);
	if (r)
		return r;
	r = setup(&s);
	if (r < 0) {
		fprintf(stderr, "sockdiag guard: --all-netns: %s\n", strerror(-r));
		goto out;
	}
	r = scan(&s);
	if (r < 0)
		goto out;
	for (size_t i = 0, len = 0; s.dirs[i] && len < sizeof(dirs); i++)
		len += (size_t)snprintf(dirs + len, sizeof(dirs) - len, "%s%s", i ? " " : "",
					s.dirs[i]);
	logsup("started: every network namespace (%zu now; %s watched, all rescanned every "
	       "%d ms)", s.n, dirs, SCAN_MS);
	for (;;) {
		struct pollfd p[3] = {
			{ .fd = s.sigfd, .events = POLLIN },
			{ .fd = s.ino, .events = POLLIN },
			{ .fd = s.tfd, .events = POLLIN },
		};

		arm(&s);
		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if ((p[0].revents & POLLIN) && on_signal(&s)) {
			r = 0;
			break;
		}
		if ((p[1].revents & POLLIN) && (r = on_inotify(&s)) < 0)
			break;
		if ((p[2].revents & POLLIN) && (r = on_timer(&s)) < 0)
			break;
	}
out:
	for (size_t i = 0; i < s.n; i++)
		if (s.v[i].state == CH_RUNNING || s.v[i].state == CH_STOPPING)
			kill(s.v[i].pid, SIGTERM);
	while (waitpid(-1, NULL, 0) > 0)
		;
	free(s.v);
	if (s.sigfd >= 0)
		close(s.sigfd);
	if (s.ino >= 0)
		close(s.ino);
	if (s.tfd >= 0)
		close(s.tfd);
	return r < 0 ? 1 : 0;
}
