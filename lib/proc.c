/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Process attribution: which processes hold a socket, by inode.
 *
 * One pass over /proc/PID/fd/ for every process, each socket link parsed
 * once and put in a hash table keyed by inode. Cost is linear in the number
 * of open files; lookups are O(1). (ss scans the same files but chains every
 * entry into 256 buckets, so -p turns quadratic with many sockets.)
 * Processes that exit or close files during the scan are skipped silently:
 * that is the normal state of a live system, not an error.
 * Socket inodes come from one sockfs for the whole host, so one scan serves
 * every network namespace.
 *
 * The same map is filled faster by a BPF iterator when the caller may load
 * one (proc_bpf.c): the kernel then walks its task and file tables once,
 * instead of a readlinkat() per descriptor.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "internal.h"
#include "proc.h"

struct owner {
	uint64_t inode;
	struct sdiag_proc proc;
};

struct sdiag_procmap {
	struct owner *owners;	/* during the scan */
	size_t n, cap;
	uint64_t *inodes;	/* after the scan: sorted, inodes[i] owned by procs[i] */
	struct sdiag_proc *procs;
	uint32_t *slots;	/* hash: index of an inode's first owner + 1, 0 = empty */
	size_t nslots;		/* power of two */
	enum sdiag_owners source;	/* SDIAG_OWNERS_PROC or SDIAG_OWNERS_BPF */
	int bpf_err;		/* why the BPF iterator was not used, or 0 */
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x7fb5d329728ea185ULL;
	x ^= x >> 27;
	return x;
}

int sd_proc_push(struct sdiag_procmap *m, uint64_t inode, const struct sdiag_proc *p)
{
	if (m->n == m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 1024;
		struct owner *o = realloc(m->owners, ncap * sizeof(*o));

		if (!o)
			return -ENOMEM;
		m->owners = o;
		m->cap = ncap;
	}
	m->owners[m->n++] = (struct owner){ .inode = inode, .proc = *p };
	return 0;
}

/* "socket:[12345]" → 12345; 0 when the link is not a socket. */
static uint64_t socket_inode(const char *link, ssize_t len)
{
	uint64_t ino = 0;

	if (len < 10 || memcmp(link, "socket:[", 8) || link[len - 1] != ']')
		return 0;
	for (ssize_t i = 8; i < len - 1; i++) {
		if (link[i] < '0' || link[i] > '9')
			return 0;
		ino = ino * 10 + (uint64_t)(link[i] - '0');
	}
	return ino;
}

static void read_comm(int piddir, char comm[16])
{
	ssize_t n;
	int fd;

	memset(comm, 0, 16);
	fd = openat(piddir, "comm", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, comm, 15);
	close(fd);
	if (n > 0 && comm[n - 1] == '\n')
		comm[n - 1] = '\0';
}

static int scan_pid(struct sdiag_procmap *m, int procfd, const char *name, int32_t pid)
{
	struct sdiag_proc p = { .pid = pid };
	struct stat st;
	struct dirent *de;
	DIR *fds = NULL;
	int piddir, fdfd, r = 0;
	char link[64];
	bool have_comm = false;

	piddir = openat(procfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (piddir < 0)
		return 0; /* exited */
	/* /proc/PID itself belongs to the effective uid, also when the process
	 * is not dumpable (its other files then belong to root): task_dump_owner(). */
	if (fstat(piddir, &st) == 0)
		p.uid = st.st_uid;
	fdfd = openat(piddir, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fdfd < 0)
		goto out; /* exited, or not ours to read */
	fds = fdopendir(fdfd);
	if (!fds) {
		close(fdfd);
		goto out;
	}
	while ((de = readdir(fds))) {
		ssize_t len;
		uint64_t ino;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		len = readlinkat(fdfd, de->d_name, link, sizeof(link));
		if (len <= 0 || (size_t)len >= sizeof(link))
			continue; /* closed meanwhile */
		ino = socket_inode(link, len);
		if (!ino)
			continue;
		if (!have_comm) {
			read_comm(piddir, p.comm);
			have_comm = true;
		}
		p.fd = atoi(de->d_name);
		r = sd_proc_push(m, ino, &p);
		if (r < 0)
			break;
	}
	closedir(fds);
out:
	close(piddir);
	return r;
}

static int cmp_owner(const void *a, const void *b)
{
	const struct owner *x = a, *y = b;

	if (x->inode != y->inode)
		return x->inode < y->inode ? -1 : 1;
	if (x->proc.pid != y->proc.pid)
		return x->proc.pid < y->proc.pid ? -1 : 1;
	return x->proc.fd < y->proc.fd ? -1 : x->proc.fd > y->proc.fd;
}

/*
 * Sort owners so each inode's owners are adjacent, then index the first of
 * each. The owners array turns into the procs array in place: an owner is
 * larger than its proc, so entry i is copied out before anything is written
 * over it. The peak is then one owner and one inode per descriptor, not an
 * owner, an inode and a proc (a third less with a million descriptors).
 */
static int build_index(struct sdiag_procmap *m)
{
	struct sdiag_proc *procs, *shrunk;
	size_t want = 16;

	_Static_assert(sizeof(struct owner) >= sizeof(struct sdiag_proc) &&
			       _Alignof(struct owner) >= _Alignof(struct sdiag_proc),
		       "procs are built over owners");
	if (m->n)
		qsort(m->owners, m->n, sizeof(*m->owners), cmp_owner);
	while (want < m->n * 2)
		want *= 2;
	m->slots = calloc(want, sizeof(*m->slots));
	m->inodes = malloc((m->n + 1) * sizeof(*m->inodes));
	if (!m->slots || !m->inodes)
		return -ENOMEM;
	m->nslots = want;
	procs = (struct sdiag_proc *)(void *)m->owners;
	for (size_t i = 0; i < m->n; i++) {
		struct owner o;
		size_t j;

		/* memcpy: the two views of the buffer may alias. */
		memcpy(&o, &m->owners[i], sizeof(o));
		memcpy(&procs[i], &o.proc, sizeof(o.proc));
		m->inodes[i] = o.inode;
		if (i > 0 && m->inodes[i - 1] == o.inode)
			continue;
		for (j = mix(o.inode) & (want - 1); m->slots[j]; j = (j + 1) & (want - 1))
			;
		m->slots[j] = (uint32_t)i + 1;
	}
	m->owners = NULL;
	m->cap = 0;
	shrunk = m->n ? realloc(procs, m->n * sizeof(*procs)) : NULL;
	m->procs = shrunk ? shrunk : procs;
	return 0;
}

static int walk_proc(struct sdiag_procmap *m, const char *proc_root)
{
	struct dirent *de;
	DIR *proc;
	int r = 0;

	proc = opendir(proc_root ? proc_root : "/proc");
	if (!proc)
		return -errno;
	while ((de = readdir(proc))) {
		char *end;
		long pid;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		r = scan_pid(m, dirfd(proc), de->d_name, (int32_t)pid);
		if (r < 0)
			break;
	}
	closedir(proc);
	return r;
}

SD_EXPORT int sdiag_procmap_scan_using(struct sdiag_procmap **ret, const char *proc_root,
				       enum sdiag_owners how)
{
	struct sdiag_procmap *m;
	int r;

	if (how != SDIAG_OWNERS_AUTO && how != SDIAG_OWNERS_PROC && how != SDIAG_OWNERS_BPF)
		return -EINVAL;
	if (how == SDIAG_OWNERS_BPF && proc_root)
		return -EINVAL; /* the iterator reads the kernel, not a directory */
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->source = SDIAG_OWNERS_PROC;
	if (how == SDIAG_OWNERS_BPF || (how == SDIAG_OWNERS_AUTO && !proc_root)) {
		r = sd_owners_bpf(m);
		if (r == 0)
			m->source = SDIAG_OWNERS_BPF;
		m->bpf_err = r;
	}
	if (m->source == SDIAG_OWNERS_BPF)
		r = 0;
	else if (how == SDIAG_OWNERS_BPF)
		r = m->bpf_err;
	else {
		m->n = 0; /* what the iterator read before it failed */
		r = walk_proc(m, proc_root);
	}
	if (r == 0)
		r = build_index(m);
	if (r < 0) {
		sdiag_procmap_free(m);
		return r;
	}
	*ret = m;
	return 0;
}

SD_EXPORT int sdiag_procmap_scan(struct sdiag_procmap **ret, const char *proc_root)
{
	return sdiag_procmap_scan_using(ret, proc_root,
					proc_root ? SDIAG_OWNERS_PROC : SDIAG_OWNERS_AUTO);
}

SD_EXPORT enum sdiag_owners sdiag_procmap_source(const struct sdiag_procmap *m,
						 int *ret_bpf_err)
{
	if (!m)
		return SDIAG_OWNERS_AUTO;
	if (ret_bpf_err)
		*ret_bpf_err = m->bpf_err;
	return m->source;
}

SD_EXPORT size_t sdiag_procmap_lookup(const struct sdiag_procmap *m, uint64_t inode,
				      const struct sdiag_proc **ret)
{
	size_t i, first, n = 0;

	if (!m || !inode || !m->nslots)
		return 0;
	for (i = mix(inode) & (m->nslots - 1); m->slots[i]; i = (i + 1) & (m->nslots - 1)) {
		first = m->slots[i] - 1;
		if (m->inodes[first] != inode)
			continue;
		while (first + n < m->n && m->inodes[first + n] == inode)
			n++;
		if (ret)
			*ret = &m->procs[first];
		return n;
	}
	return 0;
}

size_t sd_procmap_entries(const struct sdiag_procmap *m, const uint64_t **ret_inodes,
			  const struct sdiag_proc **ret_procs)
{
	*ret_inodes = m->inodes;
	*ret_procs = m->procs;
	return m->n;
}

SD_EXPORT void sdiag_procmap_free(struct sdiag_procmap *m)
{
	if (!m)
		return;
	free(m->owners);
	free(m->inodes);
	free(m->procs);
	free(m->slots);
	free(m);
}
