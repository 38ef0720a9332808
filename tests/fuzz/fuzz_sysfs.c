/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for what the library reads from /proc, /sys and /run:
 * the cgroup2 mount in mountinfo (lib/ns/cgroup.c), walks of a cgroup tree
 * (a path, a subtree, a unit name), the /proc owner walk (lib/owners/proc.c,
 * per process and per thread), the BPF iterator's records
 * (lib/owners/proc_bpf.c) and the --all-netns scan of /run/netns and /proc
 * (lib/ns/netns.c).
 *
 * Input: one selector byte, then
 *   0     a mountinfo file: the mount point found must be a line's fifth field
 *         (unescaped), and fit the buffer;
 *   1     the iterator's records: the map must hold exactly the file records
 *         that follow a task record (inode, pid, fd), as the harness reads them;
 *   2..5  a directory tree, one entry per line (below), made in a private
 *         directory under /dev/shm, then walked:
 *         2: the first line is a cgroup spec (a path, or a subtree: a path, slash,
 *            two stars), walked as a path;
 *         3: the same as a unit name; every directory visited must exist and
 *            have the id reported;
 *         4, 5: the tree is a /proc (5: per thread), each owner found must
 *            be a socket:[N] link the tree holds, under a numeric directory;
 *            then the tree's run/ and itself as /run/netns and /proc for the
 *            namespace scan: each namespace found is a file of the tree.
 * Tree lines: "d PATH" a directory, "f PATH<TAB>TEXT" a file, "l PATH<TAB>TARGET"
 * a symbolic link (TEXT and TARGET with \n for a newline; links only for
 * 4 and 5, and only as .../fd/NAME); PATH relative, at most 8 components, no
 * "." or ".."; at most 256 entries.
 *
 * Seeds: tests/fuzz/sysfs_seeds.py captures this machine's mountinfo, and a
 * private namespace's /proc (its processes' comm and socket links), netns
 * files and iterator records shaped from them (.ci/fuzz; committed copies in
 * tests/fuzz/seeds/sysfs/).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "lib/ns/ns.h"
#include "lib/owners/bpf/owners.h"
#include "lib/owners/proc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define MAX_ENTRIES 256
#define MAX_LINKS 256

static char base[64];		/* /dev/shm/fuzz_sysfs.XXXXXX */
static char root[128];		/* base/t: the tree of one input */

static void rm_tree(void);

static void cleanup(void)
{
	rm_tree();
	rmdir(base);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(base, sizeof(base), "/dev/shm/fuzz_sysfs.XXXXXX");
	if (!mkdtemp(base)) {
		snprintf(base, sizeof(base), "/tmp/fuzz_sysfs.XXXXXX");
		if (!mkdtemp(base))
			abort();
	}
	snprintf(root, sizeof(root), "%s/t", base);
	atexit(cleanup);
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP || flag == FTW_D ? rmdir(path) : unlink(path);
}

static void rm_tree(void)
{
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- 0: mountinfo ------------------------------------------------------------- */

static void mountinfo(const uint8_t *data, size_t size)
{
	char buf[64], big[1024];
	FILE *fp;
	int r;

	for (int pass = 0; pass < 2; pass++) {
		char *out = pass ? big : buf;
		size_t n = pass ? sizeof(big) : sizeof(buf);

		fp = fmemopen((void *)data, size, "r");
		if (!fp)
			return;
		r = sd_cgroup_root_in(fp, out, n);
		fclose(fp);
		if (r != 0 && r != -ENOENT && r != -ENAMETOOLONG)
			__builtin_trap();
		if (r == 0 && strlen(out) >= n)
			__builtin_trap();
		/* Unescaping only shortens: the field was in the input. */
		if (r == 0 && strlen(out) > size)
			__builtin_trap();
	}
}

/* ---- 1: the iterator's records ----------------------------------------------- */

static void records(const uint8_t *data, size_t size)
{
	struct sdiag_procmap *m;
	size_t off = 0, nfiles = 0;
	int32_t pid = 0;
	int r;

	r = sd_procmap_records(&m, data, size);
	if (r < 0) {
		if (r != -EPROTO && r != -ENOMEM)
			__builtin_trap();
		return;
	}
	/* Walk the records as owners.h describes them; each file must be found. */
	while (size - off >= sizeof(struct sd_owners_file)) {
		struct sd_owners_task t;
		struct sd_owners_file f;
		const struct sdiag_proc *p;
		size_t n;
		bool found = false;

		memcpy(&t.tag, data + off, sizeof(t.tag));
		if (t.tag == SD_OWNERS_TASK) {
			if (size - off < sizeof(t))
				__builtin_trap();	/* accepted a cut task record */
			memcpy(&t, data + off, sizeof(t));
			pid = t.pid;
			off += sizeof(t);
			continue;
		}
		memcpy(&f, data + off, sizeof(f));
		off += sizeof(f);
		nfiles++;
		n = sdiag_procmap_lookup(m, f.inode, &p);
		for (size_t i = 0; i < n; i++)
			found |= p[i].pid == pid && p[i].fd == (int32_t)f.fd;
		if (f.inode && !found)
			__builtin_trap();
	}
	if (off != size)
		__builtin_trap();	/* accepted trailing bytes */
	(void)nfiles;
	sdiag_procmap_free(m);
}

/* ---- a tree from the input ----------------------------------------------------- */

struct tree {
	bool proc;			/* links allowed, in fd/ directories only */
	uint64_t links[MAX_LINKS];	/* the N of each socket:[N] link made */
	size_t n_links;
	char spec[512];			/* the first line, for the cgroup walks */
};

/* "\n" in TEXT is a newline. */
static size_t unescape(char *s)
{
	char *w = s, *r = s;

	for (; *r; r++) {
		if (r[0] == '\\' && r[1] == 'n') {
			*w++ = '\n';
			r++;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
	return (size_t)(w - s);
}

static bool safe_path(const char *p)
{
	int depth = 0;

	if (!*p || *p == '/' || strlen(p) > 200)
		return false;
	for (const char *c = p; *c; depth++) {
		size_t l = strcspn(c, "/");

		if (!l || (l == 1 && c[0] == '.') || (l == 2 && c[0] == '.' && c[1] == '.') ||
		    depth >= 8)
			return false;
		c += l;
		if (*c)
			c++;
	}
	return true;
}

static void mkparents(char *full)
{
	for (char *s = full + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(full, 0755);
		*s = '/';
	}
}

static void tree_make(char *text, struct tree *t)
{
	char *line, *save = NULL;
	int n = 0;

	mkdir(root, 0755);
	line = strtok_r(text, "\n", &save);
	if (line)
		snprintf(t->spec, sizeof(t->spec), "%s", line);
	for (; line && n < MAX_ENTRIES; line = strtok_r(NULL, "\n", &save), n++) {
		char full[512], *tab, *path = line + 2;
		char kind = line[0];

		if (strlen(line) < 3 || line[1] != ' ')
			continue;
		tab = strchr(path, '\t');
		if (tab)
			*tab++ = '\0';
		if (!safe_path(path))
			continue;
		snprintf(full, sizeof(full), "%s/%s", root, path);
		mkparents(full);
		if (kind == 'd') {
			mkdir(full, 0755);
		} else if (kind == 'f' && tab) {
			int fd = open(full, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			size_t l = unescape(tab);

			if (fd >= 0) {
				if (write(fd, tab, l) < 0) {
					/* a full /dev/shm: the tree is smaller, that is all */
				}
				close(fd);
			}
		} else if (kind == 'l' && tab && *tab && t->proc && strstr(path, "fd/") &&
			   !strchr(strstr(path, "fd/") + 3, '/') &&
			   (path == strstr(path, "fd/") || strstr(path, "fd/")[-1] == '/')) {
			/* Only descriptors: a link elsewhere would lead the walk out of
			 * the tree (cgroupfs and a /proc/PID hold no other links). */
			unsigned long long ino;
			char *end;

			unescape(tab);
			if (symlink(tab, full) < 0 || t->n_links == MAX_LINKS ||
			    strncmp(tab, "socket:[", 8) || tab[8] < '0' || tab[8] > '9')
				continue;
			errno = 0;
			ino = strtoull(tab + 8, &end, 10);
			if (!errno && !strcmp(end, "]"))
				t->links[t->n_links++] = ino;
		}
	}
}

/* ---- 2, 3: cgroup walks -------------------------------------------------------- */

struct seen {
	int n;
};

static int visited(const char *path, uint64_t id, void *userdata)
{
	struct seen *s = userdata;
	char full[8192];
	struct stat st;

	if (path[0] != '/' || strstr(path, "//") || strstr(path, "/./") || strstr(path, "/../"))
		__builtin_trap();
	snprintf(full, sizeof(full), "%s%s", root, strcmp(path, "/") ? path : "");
	if (stat(full, &st) < 0 || !S_ISDIR(st.st_mode) || (uint64_t)st.st_ino != id)
		__builtin_trap();
	s->n++;
	return 0;
}

/* ---- 4, 5: /proc and the namespace scan ---------------------------------------- */

static void proc_walk(const struct tree *t, bool threads)
{
	struct sdiag_procmap *m;
	struct sdiag_netns *ns;
	size_t n_ns;
	char run[256];
	uint64_t *inodes;
	struct sdiag_proc *procs;
	size_t n;

	if (sdiag_procmap_scan_using(&m, root,
				     SDIAG_OWNERS_PROC | (threads ? SDIAG_OWNERS_THREADS : 0)) == 0) {
		if (sd_procmap_entries(m, &n, &inodes, &procs) == 0) {
			for (size_t i = 0; i < n; i++) {
				bool made = false;

				for (size_t j = 0; j < t->n_links; j++)
					made |= t->links[j] == inodes[i];
				if (!made || procs[i].pid <= 0 ||
				    sdiag_procmap_lookup(m, inodes[i], NULL) == 0)
					__builtin_trap();
			}
			free(inodes);
			free(procs);
		}
		sdiag_procmap_free(m);
	}
	snprintf(run, sizeof(run), "%s/run", root);
	if (sd_netns_list_at(run, root, &ns, &n_ns) == 0) {
		for (size_t i = 0; i < n_ns; i++) {
			struct stat st;

			if (strncmp(ns[i].path, root, strlen(root)) || stat(ns[i].path, &st) < 0 ||
			    (uint64_t)st.st_ino != ns[i].inode || !ns[i].label[0])
				__builtin_trap();
		}
		free(ns);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tree *t;
	char *text;

	if (size < 1 || size > 16384)
		return 0;
	switch (data[0] % 6) {
	case 0:
		mountinfo(data + 1, size - 1);
		return 0;
	case 1:
		records(data + 1, size - 1);
		return 0;
	}
	t = calloc(1, sizeof(*t));
	text = malloc(size);
	if (!t || !text) {
		free(t);
		free(text);
		return 0;
	}
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	rm_tree();
	t->proc = data[0] % 6 >= 4;
	tree_make(text, t);
	switch (data[0] % 6) {
	case 2:
	case 3: {
		struct seen s = { 0 };
		int r = sd_cgroup_walk_at(root, t->spec[0] ? t->spec : "/", data[0] % 6 == 3,
					  visited, &s);

		if (r > 0 && r != s.n)
			__builtin_trap();
		if (r == 0)
			__builtin_trap();	/* nothing visited is -ENOENT */
		break;
	}
	default:
		proc_walk(t, data[0] % 6 == 5);
		break;
	}
	rm_tree();
	free(text);
	free(t);
	return 0;
}
