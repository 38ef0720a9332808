/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Network namespaces: open one by the name users give it, or find them all.
 * Named namespaces live in /run/netns; any nsfs path works; "pid:N" is the
 * namespace of process N; "cgroup:PATH" and "unit:NAME" stand for the
 * namespaces of the processes in a cgroup subtree (a container found by its
 * cgroup). Enumeration takes the named ones first (/run/netns, then
 * /var/run/netns, where CNI plugins and container runtimes name theirs; the
 * second is skipped when it is the first directory, as where /var/run is a
 * link to /run), then every process's, and deduplicates by the namespace
 * inode: a namespace reachable only through /proc/PID/ns/net (a pod whose
 * runtime named none) is listed once, by its lowest pid.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/nsfs.h>

#include "lib/core/internal.h"
#include "lib/ns/ns.h"

#define NETNS_RUN_DIR "/run/netns"
#ifndef NSFS_MAGIC
#define NSFS_MAGIC 0x6e736673
#endif

/*
 * Open a network namespace file, never anything else: the path is first
 * opened O_PATH (no FIFO waits for a writer, no device is opened) and checked
 * to be an nsfs file; then opened for setns(), without blocking, checked to
 * be that same file, and asked its type.
 * -ENOTNAM: a file, but no network namespace.
 */
static int open_path(const char *path, int *ret_fd)
{
	struct statfs sfs;
	struct stat st, st2;
	int pfd, fd = -1, r;

	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, &st) < 0 || fstatfs(pfd, &sfs) < 0) {
		r = -errno;
		goto out;
	}
	r = -ENOTNAM;
	if (!S_ISREG(st.st_mode) || sfs.f_type != NSFS_MAGIC)
		goto out;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		r = -errno;
		goto out;
	}
	if (fstat(fd, &st2) < 0 || st2.st_dev != st.st_dev || st2.st_ino != st.st_ino) {
		close(fd);
		goto out;	/* replaced meanwhile */
	}
	r = ioctl(fd, NS_GET_NSTYPE);
	if (r != CLONE_NEWNET) {
		r = r < 0 && errno != ENOTTY ? -errno : -ENOTNAM;
		close(fd);
		goto out;
	}
	*ret_fd = fd;
	r = 0;
out:
	close(pfd);
	return r;
}

SD_EXPORT int sdiag_netns_open(const char *spec, int *ret_fd)
{
	char path[sizeof(NETNS_RUN_DIR) + 256];
	char *end;
	long pid;

	if (!spec || !*spec)
		return -EINVAL;
	if (!strncmp(spec, "pid:", 4)) {
		pid = strtol(spec + 4, &end, 10);
		if (end == spec + 4 || *end || pid <= 0)
			return -EINVAL;
		snprintf(path, sizeof(path), "/proc/%ld/ns/net", pid);
		return open_path(path, ret_fd);
	}
	if (strchr(spec, '/'))
		return open_path(spec, ret_fd);
	if (strlen(spec) > 255 || !strcmp(spec, ".") || !strcmp(spec, ".."))
		return -EINVAL;
	snprintf(path, sizeof(path), NETNS_RUN_DIR "/%s", spec);
	return open_path(path, ret_fd);
}

struct nslist {
	struct sdiag_netns *v;
	size_t n, cap;
};

static bool known(const struct nslist *l, uint64_t ino)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].inode == ino)
			return true;
	return false;
}

static int add(struct nslist *l, uint64_t ino, const char *label, const char *path)
{
	struct sdiag_netns *e;

	if (known(l, ino))
		return 0;
	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 16;
		struct sdiag_netns *v = realloc(l->v, ncap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = ncap;
	}
	e = &l->v[l->n++];
	memset(e, 0, sizeof(*e));
	e->inode = ino;
	snprintf(e->label, sizeof(e->label), "%s", label);
	snprintf(e->path, sizeof(e->path), "%s", path);
	return 0;
}

/* The namespaces named in run_dir. label_path: label them by their path
 * (a directory other than /run/netns, whose names are not what `-N NAME`
 * opens), else by their name. */
static int add_named(struct nslist *l, const char *run_dir, bool label_path)
{
	struct dirent *de;
	DIR *d = opendir(run_dir);
	int r = 0;

	if (!d)
		return 0; /* no named namespaces */
	while (r == 0 && (de = readdir(d))) {
		char path[PATH_MAX + 256];
		struct statfs sfs;
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", run_dir, de->d_name);
		/* A name whose mount is gone is a plain file on tmpfs, not nsfs. */
		if (statfs(path, &sfs) < 0 || sfs.f_type != NSFS_MAGIC || stat(path, &st) < 0)
			continue;
		r = add(l, st.st_ino, label_path ? path : de->d_name, path);
	}
	closedir(d);
	return r;
}

static int cmp_pid_name(const void *a, const void *b)
{
	return atol(*(const char *const *)a) > atol(*(const char *const *)b) ? 1 : -1;
}

static int add_processes(struct nslist *l, const char *proc_root)
{
	struct dirent *de;
	DIR *d = opendir(proc_root);
	char **pids = NULL;
	size_t n = 0, cap = 0;
	int r = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		if (n == cap) {
			char **np = realloc(pids, (cap = cap ? cap * 2 : 256) * sizeof(*np));

			if (!np) {
				r = -ENOMEM;
				goto out;
			}
			pids = np;
		}
		pids[n] = strdup(de->d_name);
		if (!pids[n]) {
			r = -ENOMEM;
			goto out;
		}
		n++;
	}
	/* Lowest pid first, so a namespace is labelled by its oldest process. */
	if (n)
		qsort(pids, n, sizeof(*pids), cmp_pid_name);
	for (size_t i = 0; i < n && r == 0; i++) {
		char path[PATH_MAX + 300], label[32];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s/ns/net", proc_root, pids[i]);
		if (stat(path, &st) < 0)
			continue; /* exited, or a kernel thread we may not see */
		snprintf(label, sizeof(label), "pid:%s", pids[i]);
		r = add(l, st.st_ino, label, path);
	}
out:
	for (size_t i = 0; i < n; i++)
		free(pids[i]);
	free(pids);
	closedir(d);
	return r;
}

/* ---- the namespaces of the processes in cgroups ------------------------------- */

struct cgscan {
	char root[1024];
	char **pids;
	size_t n, cap;
};

static int cgroup_procs(const char *path, uint64_t id, void *userdata)
{
	struct cgscan *c = userdata;
	char file[1024 + 4096 + 16], line[32];
	FILE *f;
	int r = 0;

	(void)id;
	snprintf(file, sizeof(file), "%s%s/cgroup.procs", c->root, strcmp(path, "/") ? path : "");
	f = fopen(file, "re");
	if (!f)
		return 0; /* removed meanwhile */
	while (r == 0 && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!*line)
			continue;
		if (c->n == c->cap) {
			size_t ncap = c->cap ? c->cap * 2 : 64;
			char **np = realloc(c->pids, ncap * sizeof(*np));

			if (!np) {
				r = -ENOMEM;
				break;
			}
			c->pids = np;
			c->cap = ncap;
		}
		c->pids[c->n] = strdup(line);
		r = c->pids[c->n] ? 0 : -ENOMEM;
		c->n += r == 0;
	}
	fclose(f);
	return r;
}

/* "SPEC pid:PID" in size bytes; a SPEC too long keeps its kind and its end,
 * the most specific part ("cgroup:.../docker-0123abcd.scope pid:42"). */
static void cgroup_label(char *buf, size_t size, const char *spec, const char *pid)
{
	size_t kind = strcspn(spec, ":") + 1, len = strlen(spec), plen = strlen(pid);
	size_t room, n = 0;

	if (size < plen + 6 + kind + 3 + 9) {	/* no room to shorten: cut the end */
		snprintf(buf, size, "%s", spec);
		return;
	}
	room = size - 1 - plen - 5;	/* " pid:" */
	if (len <= room) {
		memcpy(buf, spec, len);
		n = len;
	} else {
		memcpy(buf, spec, kind);
		memcpy(buf + kind, "...", 3);
		n = room - kind - 3;
		memcpy(buf + kind + 3, spec + len - n, n);
		n += kind + 3;
	}
	memcpy(buf + n, " pid:", 5);
	memcpy(buf + n + 5, pid, plen + 1);
}

/* cgroup:PATH (PATH and every cgroup below) or unit:NAME. Labels name the
 * spec and the lowest pid seen in each namespace. */
static int add_cgroup(struct nslist *l, const char *spec)
{
	bool unit = !strncmp(spec, "unit:", 5);
	const char *what = spec + (unit ? 5 : 7);
	struct cgscan c = { .n = 0 };
	char tree[4096 + 4];
	int r;

	r = sdiag_cgroup_root(c.root, sizeof(c.root));
	if (r < 0)
		return r;
	if (!unit) {
		size_t len = strlen(what);

		if (len + 4 > sizeof(tree))
			return -ENAMETOOLONG;
		/* Always the subtree: a container's processes live below its cgroup. */
		snprintf(tree, sizeof(tree), "%s%s", what,
			 len >= 3 && !strcmp(what + len - 3, "/**") ? "" :
			 what[len ? len - 1 : 0] == '/' ? "**" : "/**");
		what = tree;
	}
	r = sdiag_cgroup_walk(what, unit, cgroup_procs, &c);
	if (r > 0 && c.n)
		qsort(c.pids, c.n, sizeof(*c.pids), cmp_pid_name);
	for (size_t i = 0; r > 0 && i < c.n; i++) {
		char path[64], label[64];
		struct stat st;

		snprintf(path, sizeof(path), "/proc/%s/ns/net", c.pids[i]);
		if (stat(path, &st) < 0)
			continue; /* exited */
		cgroup_label(label, sizeof(label), spec, c.pids[i]);
		if (add(l, st.st_ino, label, path) < 0)
			r = -ENOMEM;
	}
	for (size_t i = 0; i < c.n; i++)
		free(c.pids[i]);
	free(c.pids);
	return r < 0 ? r : 0;
}

static int add_spec(struct nslist *l, const char *spec)
{
	char path[sizeof(NETNS_RUN_DIR) + 256];
	struct stat st;
	int fd, r;

	if (!strncmp(spec, "cgroup:", 7) || !strncmp(spec, "unit:", 5))
		return add_cgroup(l, spec);
	r = sdiag_netns_open(spec, &fd);
	if (r < 0)
		return r;
	r = fstat(fd, &st) < 0 ? -errno : 0;
	close(fd);
	if (r < 0)
		return r;
	/* Reopen by the same path later: pid:N and names are paths too. */
	if (!strncmp(spec, "pid:", 4))
		snprintf(path, sizeof(path), "/proc/%s/ns/net", spec + 4);
	else if (strchr(spec, '/'))
		snprintf(path, sizeof(path), "%s", spec);
	else
		snprintf(path, sizeof(path), NETNS_RUN_DIR "/%s", spec);
	return add(l, st.st_ino, spec, path);
}

SD_EXPORT int sdiag_netns_list_specs(const char *const *specs, size_t n, struct sdiag_netns **ret,
				     size_t *ret_n, size_t *ret_bad)
{
	struct nslist l = { 0 };
	int r = 0;
	size_t i;

	for (i = 0; i < n && r == 0; i++)
		r = add_spec(&l, specs[i]);
	if (r < 0) {
		if (ret_bad)
			*ret_bad = i - 1;
		free(l.v);
		return r;
	}
	*ret = l.v;
	*ret_n = l.n;
	return 0;
}

SD_EXPORT int sdiag_netns_list(struct sdiag_netns **ret, size_t *ret_n)
{
	return sd_netns_list_dirs(sd_netns_dirs, "/proc", ret, ret_n);
}

const char *const sd_netns_dirs[] = { NETNS_RUN_DIR, "/var/run/netns", NULL };

int sd_netns_list_at(const char *run_dir, const char *proc_root, struct sdiag_netns **ret,
		     size_t *ret_n)
{
	return sd_netns_list_dirs((const char *const[]){ run_dir, NULL }, proc_root, ret, ret_n);
}

/* Was dirs[i] one of dirs[0..i-1] (the same directory, by device and inode)? */
static bool dir_seen(const char *const *dirs, size_t i)
{
	struct stat st, st2;

	if (stat(dirs[i], &st) < 0)
		return true; /* none: nothing to list */
	for (size_t j = 0; j < i; j++)
		if (stat(dirs[j], &st2) == 0 && st2.st_dev == st.st_dev && st2.st_ino == st.st_ino)
			return true;
	return false;
}

int sd_netns_list_dirs(const char *const *dirs, const char *proc_root, struct sdiag_netns **ret,
		       size_t *ret_n)
{
	struct nslist l = { 0 };
	int r = 0;

	for (size_t i = 0; r == 0 && dirs[i]; i++)
		if (!dir_seen(dirs, i))
			r = add_named(&l, dirs[i], strcmp(dirs[i], NETNS_RUN_DIR) != 0);
	if (r == 0)
		r = add_processes(&l, proc_root);
	if (r < 0) {
		free(l.v);
		return r;
	}
	*ret = l.v;
	*ret_n = l.n;
	return 0;
}
