// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cgroup v2: where it is mounted, and the directories a cgroup path, a
 * subtree (PATH, a slash and two stars) or a unit name (every directory
 * called NAME, and all below it) stand for. A cgroup's id, the number
 * sock_diag reports in INET_DIAG_CGROUP_ID, is the inode number of its
 * directory (kernfs).
 *
 * Hybrid hosts mount cgroup2 at /sys/fs/cgroup/unified, pure v2 ones at
 * /sys/fs/cgroup: the mount is read from /proc/self/mountinfo, never assumed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "lib/core/internal.h"
#include "lib/ns/ns.h"

#define MAX_DEPTH 64 /* one descriptor per level is open during the walk */
#define PATH_CAP 4096

/* mountinfo writes a space, tab, newline and backslash in a path as \ooo. */
static void unoctal(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

int sd_cgroup_root_in(FILE *fp, char *buf, size_t size)
{
	char line[4096];

	while (fgets(line, sizeof(line), fp)) {
		char mnt[1024], fstype[64];
		const char *sep = strstr(line, " - ");

		if (!sep || sscanf(sep, " - %63s", fstype) != 1 || strcmp(fstype, "cgroup2"))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %1023s", mnt) == 1) {
			unoctal(mnt);
			if (strlen(mnt) >= size)
				return -ENAMETOOLONG;
			strcpy(buf, mnt);
			return 0;
		}
	}
	return -ENOENT;
}

SD_EXPORT int sdiag_cgroup_root(char *buf, size_t size)
{
	FILE *fp = fopen("/proc/self/mountinfo", "re");
	int r;

	if (!fp)
		return -errno;
	r = sd_cgroup_root_in(fp, buf, size);
	fclose(fp);
	return r;
}

struct walk {
	const char *unit;     /* unit mode: the directory name sought, else NULL */
	sdiag_cgroup_cb cb;
	void *userdata;
	char path[PATH_CAP];  /* relative to the mount, "" for the root */
	int visited;
};

static int visit(struct walk *w, int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return errno == ENOENT ? 0 : -errno; /* removed meanwhile */
	w->visited++;
	return w->cb(w->path[0] ? w->path : "/", (uint64_t)st.st_ino, w->userdata);
}

/* Walk below fd (which it closes). collect: report every directory. */
static int walk_dir(struct walk *w, int fd, bool collect, int depth)
{
	size_t plen = strlen(w->path);
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (collect) {
		r = visit(w, fd);
		if (r < 0) {
			close(fd);
			return r;
		}
	}
	if (depth >= MAX_DEPTH) {
		close(fd);
		return 0;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while (r == 0 && (de = readdir(d))) {
		size_t l = strlen(de->d_name);
		int sub;

		if (de->d_name[0] == '.' || (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		if (plen + 1 + l + 1 > PATH_CAP)
			continue;
		sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sub < 0)
			continue; /* a file, or gone */
		w->path[plen] = '/';
		memcpy(w->path + plen + 1, de->d_name, l + 1);
		r = walk_dir(w, sub, collect || (w->unit && !strcmp(de->d_name, w->unit)),
			     depth + 1);
		w->path[plen] = '\0';
	}
	closedir(d);
	return r;
}

/* A path as users write it: relative to the mount ("/a/b", "a/b"), or the
 * full path under the mount. Sets w->path (no trailing '/'). */
static int normalize(struct walk *w, const char *mnt, const char *spec, size_t len)
{
	size_t ml = strlen(mnt);

	if (!strncmp(spec, mnt, ml) && (spec[ml] == '/' || ml == len)) {
		spec += ml;
		len -= ml;
	}
	while (len && spec[len - 1] == '/')
		len--;
	while (len && spec[0] == '/') {
		spec++;
		len--;
	}
	if (len + 2 > PATH_CAP)
		return -ENAMETOOLONG;
	if (len) {
		w->path[0] = '/';
		memcpy(w->path + 1, spec, len);
	}
	w->path[len ? len + 1 : 0] = '\0';
	/* No way out of the mount, and no hidden names. */
	if (strstr(w->path, "/.") || strstr(w->path, "//"))
		return -EINVAL;
	return 0;
}

SD_EXPORT int sdiag_cgroup_walk(const char *spec, bool unit, sdiag_cgroup_cb cb, void *userdata)
{
	char mnt[1024];
	int r;

	if (!spec || !cb || !*spec)
		return -EINVAL;
	r = sdiag_cgroup_root(mnt, sizeof(mnt));
	if (r < 0)
		return r;
	return sd_cgroup_walk_at(mnt, spec, unit, cb, userdata);
}

int sd_cgroup_walk_at(const char *mnt, const char *spec, bool unit, sdiag_cgroup_cb cb,
		      void *userdata)
{
	struct walk *w = NULL;
	char full[1024 + PATH_CAP];
	size_t len;
	bool tree = false;
	int fd, r;

	if (!spec || !cb || !*spec || strlen(mnt) >= 1024)
		return -EINVAL;
	len = strlen(spec);
	if (unit && (strchr(spec, '/') || spec[0] == '.' || len > 255))
		return -EINVAL;
	if (!unit && len >= 3 && !strcmp(spec + len - 3, "/**")) {
		tree = true;
		len -= 3;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->cb = cb;
	w->userdata = userdata;
	if (unit) {
		w->unit = spec;
	} else {
		r = normalize(w, mnt, spec, len);
		if (r < 0)
			goto out;
	}
	snprintf(full, sizeof(full), "%s%s", mnt, w->path);
	fd = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		r = errno == ENOTDIR ? -ENOENT : -errno;
		goto out;
	}
	if (!unit && !tree) {
		r = visit(w, fd);
		close(fd);
	} else {
		r = walk_dir(w, fd, tree, 0);
	}
	if (r == 0)
		r = w->visited ? w->visited : -ENOENT;
out:
	free(w);
	return r;
}

struct idset {
	uint64_t *v;
	size_t n, cap;
};

static int add_id(const char *path, uint64_t id, void *userdata)
{
	struct idset *s = userdata;

	(void)path;
	if (s->n == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 16;
		uint64_t *nv = realloc(s->v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = ncap;
	}
	s->v[s->n++] = id;
	return 0;
}

static int cmp_id(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int sd_cgroup_ids(const char *spec, bool unit, uint64_t **ret, size_t *ret_n)
{
	struct idset s = { 0 };
	size_t n = 0;
	int r;

	r = sdiag_cgroup_walk(spec, unit, add_id, &s);
	if (r < 0) {
		free(s.v);
		return r;
	}
	qsort(s.v, s.n, sizeof(*s.v), cmp_id);
	for (size_t i = 0; i < s.n; i++) /* bind mounts can show a cgroup twice */
		if (!n || s.v[n - 1] != s.v[i])
			s.v[n++] = s.v[i];
	*ret = s.v;
	*ret_n = n;
	return 0;
}
