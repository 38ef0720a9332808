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
#include <sys/mman.h>
#include <sys/stat.h>

#include "lib/core/internal.h"
#include "lib/owners/proc.h"
#include "util/hash.h"

/* What the scan collects, per process and per socket descriptor. A process's
 * descriptors are pushed one after the other, so each refers to the last
 * task; 16 bytes a descriptor instead of a whole struct sdiag_proc. */
struct task {
	int32_t pid;
	int32_t tid;		/* 0 unless the scan is per thread */
	uint32_t uid;
	char comm[16];
};

struct owner {
	uint64_t inode;		/* during the index build: the inode's slot */
	int32_t fd;
	uint32_t task;
};

/* One socket inode: its owners are procs[first .. first + count). */
struct slot {
	uint64_t inode;
	uint32_t first;
	uint32_t count;		/* 0: an empty slot */
};

struct sdiag_procmap {
	struct owner *owners;	/* during the scan */
	size_t n, cap;
	struct task *tasks;	/* during the scan */
	size_t ntasks, tcap;
	struct sdiag_proc *procs;	/* after it: grouped by inode, by pid then fd */
	struct slot *slots;	/* open addressing, linear probing */
	size_t nslots;		/* power of two */
	enum sdiag_owners source;	/* SDIAG_OWNERS_PROC or SDIAG_OWNERS_BPF */
	int bpf_err;		/* why the BPF iterator was not used, or 0 */
};

static void *grow(void *a, size_t *cap, size_t size)
{
	size_t ncap = *cap ? *cap * 2 : 1024;
	void *b = realloc(a, ncap * size);

	if (b)
		*cap = ncap;
	return b;
}

int sd_proc_push(struct sdiag_procmap *m, uint64_t inode, const struct sdiag_proc *p)
{
	struct task *t = m->ntasks ? &m->tasks[m->ntasks - 1] : NULL;

	if (!inode)
		return 0; /* no socket has inode 0; 0 marks nothing */
	if (!t || t->pid != p->pid || t->tid != p->tid || t->uid != p->uid ||
	    memcmp(t->comm, p->comm, 16)) {
		if (m->ntasks == m->tcap) {
			t = grow(m->tasks, &m->tcap, sizeof(*t));
			if (!t)
				return -ENOMEM;
			m->tasks = t;
		}
		t = &m->tasks[m->ntasks++];
		t->pid = p->pid;
		t->tid = p->tid;
		t->uid = p->uid;
		memcpy(t->comm, p->comm, sizeof(t->comm));
	}
	if (m->n == m->cap) {
		struct owner *o = grow(m->owners, &m->cap, sizeof(*o));

		if (!o)
			return -ENOMEM;
		m->owners = o;
	}
	m->owners[m->n++] = (struct owner){ .inode = inode, .fd = p->fd,
					    .task = (uint32_t)(m->ntasks - 1) };
	return 0;
}

/* "socket:[12345]" → 12345; 0 when the link is not a socket. */
static uint64_t socket_inode(const char *link, ssize_t len)
{
	uint64_t ino = 0;

	if (len < 10 || memcmp(link, "socket:[", 8) || link[len - 1] != ']')
		return 0;
	for (ssize_t i = 8; i < len - 1; i++) {
		uint64_t d = (uint64_t)(link[i] - '0');

		if (link[i] < '0' || link[i] > '9' || ino > (UINT64_MAX - d) / 10)
			return 0; /* not a number, or not one an inode can be */
		ino = ino * 10 + d;
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

/* The socket descriptors of one task directory (/proc/PID or
 * /proc/PID/task/TID), as p's (pid, tid, uid); comm read from it. */
static int scan_fds(struct sdiag_procmap *m, int taskdir, struct sdiag_proc *p)
{
	struct dirent *de;
	DIR *fds = NULL;
	int fdfd, r = 0;
	char link[64];
	bool have_comm = false;

	fdfd = openat(taskdir, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fdfd < 0)
		return 0; /* exited, or not ours to read */
	fds = fdopendir(fdfd);
	if (!fds) {
		close(fdfd);
		return 0;
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
			read_comm(taskdir, p->comm);
			have_comm = true;
		}
		p->fd = atoi(de->d_name);
		r = sd_proc_push(m, ino, p);
		if (r < 0)
			break;
	}
	closedir(fds);
	return r;
}

/* ss -T: every thread's descriptor table, the main thread's first (threads
 * share one table unless one was unshared, so most sockets show up once per
 * thread, as in ss). */
static int scan_threads(struct sdiag_procmap *m, int piddir, struct sdiag_proc *p)
{
	struct dirent *de;
	DIR *tasks;
	int taskfd, r = 0;

	p->tid = p->pid;
	r = scan_fds(m, piddir, p);
	taskfd = openat(piddir, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r < 0 || taskfd < 0)
		return r;
	tasks = fdopendir(taskfd);
	if (!tasks) {
		close(taskfd);
		return 0;
	}
	while (r == 0 && (de = readdir(tasks))) {
		long tid = strtol(de->d_name, NULL, 10);
		int tdir;

		if (tid <= 0 || tid > INT32_MAX || tid == p->pid)
			continue;
		tdir = openat(taskfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (tdir < 0)
			continue; /* exited */
		p->tid = (int32_t)tid;
		r = scan_fds(m, tdir, p);
		close(tdir);
	}
	closedir(tasks);
	return r;
}

static int scan_pid(struct sdiag_procmap *m, int procfd, const char *name, int32_t pid,
		    bool threads)
{
	struct sdiag_proc p = { .pid = pid };
	struct stat st;
	int piddir, r;

	piddir = openat(procfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (piddir < 0)
		return 0; /* exited */
	/* /proc/PID itself belongs to the effective uid, also when the process
	 * is not dumpable (its other files then belong to root): task_dump_owner(). */
	if (fstat(piddir, &st) == 0)
		p.uid = st.st_uid;
	r = threads ? scan_threads(m, piddir, &p) : scan_fds(m, piddir, &p);
	close(piddir);
	return r;
}

static int cmp_proc(const void *a, const void *b)
{
	const struct sdiag_proc *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->fd < y->fd ? -1 : x->fd > y->fd;
}

static struct slot *slot_of(struct slot *slots, size_t nslots, uint64_t inode)
{
	size_t i;

	for (i = hash_u64(inode) & (nslots - 1); slots[i].count; i = (i + 1) & (nslots - 1))
		if (slots[i].inode == inode)
			break;
	return &slots[i];
}

/*
 * The index is looked up once per socket at random places: in 4 KiB pages a
 * table of megabytes costs a TLB miss on top of each cache miss. Large
 * arrays are aligned to huge pages, and their whole huge pages advised as
 * transparent huge pages (a hint: the kernel may ignore it). Freed with free().
 */
#define HUGE_PAGE (2u << 20)

static void *index_alloc(size_t size, bool zero)
{
	void *p;

	if (size < HUGE_PAGE)
		return zero ? calloc(1, size) : malloc(size);
	if (posix_memalign(&p, HUGE_PAGE, size))
		return NULL;
	/* Only the whole huge pages: a tail rounded up to one would be resident
	 * in full (2 MiB more per array at worst, for no fewer misses). */
	madvise(p, size & ~(size_t)(HUGE_PAGE - 1), MADV_HUGEPAGE);
	if (zero)
		memset(p, 0, size);
	return p;
}

/*
 * Group the owners by inode without sorting them: count each inode's owners
 * in its hash slot, give each slot its range of procs, and place every owner
 * there in the order of the scan. Both scans go by pid and then descriptor,
 * so the groups come out sorted; a group that does not (a /proc whose
 * readdir order is another) is sorted on its own. Linear in the number of
 * descriptors, and the peak is the 16-byte owners, the slots and the procs.
 */
static int build_index(struct sdiag_procmap *m)
{
	size_t want = 16, sum = 0;

	while (want < m->n + m->n / 4)
		want *= 2;
	m->slots = index_alloc(want * sizeof(*m->slots), true);
	m->procs = index_alloc((m->n ? m->n : 1) * sizeof(*m->procs), false);
	if (!m->slots || !m->procs)
		return -ENOMEM;
	m->nslots = want;
	for (size_t i = 0; i < m->n; i++) {
		struct slot *sl = slot_of(m->slots, want, m->owners[i].inode);

		sl->inode = m->owners[i].inode;
		sl->count++;
		m->owners[i].inode = (uint64_t)(sl - m->slots);
	}
	for (size_t j = 0; j < want; j++) {
		if (!m->slots[j].count)
			continue;
		m->slots[j].first = (uint32_t)sum;
		sum += m->slots[j].count;
		m->slots[j].count = 0;
	}
	for (size_t i = 0; i < m->n; i++) {
		struct slot *sl = &m->slots[m->owners[i].inode];
		const struct task *t = &m->tasks[m->owners[i].task];
		struct sdiag_proc *p = &m->procs[sl->first + sl->count++];

		p->pid = t->pid;
		p->tid = t->tid;
		p->fd = m->owners[i].fd;
		p->uid = t->uid;
		memcpy(p->comm, t->comm, sizeof(p->comm));
	}
	for (size_t j = 0; j < want; j++) {
		struct sdiag_proc *g = &m->procs[m->slots[j].first];

		for (uint32_t k = 1; k < m->slots[j].count; k++)
			if (cmp_proc(&g[k - 1], &g[k]) > 0) {
				qsort(g, m->slots[j].count, sizeof(*g), cmp_proc);
				break;
			}
	}
	free(m->owners);
	free(m->tasks);
	m->owners = NULL;
	m->tasks = NULL;
	m->cap = m->tcap = 0;
	return 0;
}

static int walk_proc(struct sdiag_procmap *m, const char *proc_root, bool threads)
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
		if (*end || pid <= 0 || pid > INT32_MAX) /* not a pid: not in a real /proc */
			continue;
		r = scan_pid(m, dirfd(proc), de->d_name, (int32_t)pid, threads);
		if (r < 0)
			break;
	}
	closedir(proc);
	return r;
}

SD_EXPORT int sdiag_procmap_scan_using(struct sdiag_procmap **ret, const char *proc_root,
				       enum sdiag_owners how)
{
	bool threads = how & SDIAG_OWNERS_THREADS;
	struct sdiag_procmap *m;
	int r;

	how = (enum sdiag_owners)(how & ~SDIAG_OWNERS_THREADS);
	if (how != SDIAG_OWNERS_AUTO && how != SDIAG_OWNERS_PROC && how != SDIAG_OWNERS_BPF)
		return -EINVAL;
	if (how == SDIAG_OWNERS_BPF && proc_root)
		return -EINVAL; /* the iterator reads the kernel, not a directory */
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->source = SDIAG_OWNERS_PROC;
	if (threads) {
		/* The iterator reads a process's table once: the walk, per thread. */
		m->bpf_err = how == SDIAG_OWNERS_BPF ? -EOPNOTSUPP : 0;
		how = SDIAG_OWNERS_PROC;
	}
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
		m->n = m->ntasks = 0; /* what the iterator read before it failed */
		r = walk_proc(m, proc_root, threads);
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

int sd_procmap_records(struct sdiag_procmap **ret, const unsigned char *buf, size_t len)
{
	struct sdiag_proc task = { 0 };
	struct sdiag_procmap *m;
	size_t used = 0;
	int r;

	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->source = SDIAG_OWNERS_BPF;
	r = sd_owners_parse(m, buf, len, &used, &task);
	if (r == 0 && used != len)
		r = -EPROTO; /* a record cut short */
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
	const struct slot *sl;

	if (!m || !inode || !m->nslots)
		return 0;
	sl = slot_of(m->slots, m->nslots, inode);
	if (!sl->count)
		return 0;
	if (ret)
		*ret = &m->procs[sl->first];
	return sl->count;
}

void sd_procmap_prefetch(const struct sdiag_procmap *m, uint64_t inode, int stage)
{
	const struct slot *sl;

	if (!m->nslots || !inode)
		return;
	if (stage == 0) {
		__builtin_prefetch(&m->slots[hash_u64(inode) & (m->nslots - 1)]);
		return;
	}
	sl = slot_of(m->slots, m->nslots, inode);
	if (sl->count) {
		const struct sdiag_proc *p = &m->procs[sl->first];

		__builtin_prefetch(p);
		__builtin_prefetch((const char *)(p + 1) - 1); /* may straddle two lines */
	}
}

static int cmp_entry(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	return x->inode < y->inode ? -1 : x->inode > y->inode;
}

int sd_procmap_entries(const struct sdiag_procmap *m, size_t *ret_n, uint64_t **ret_inodes,
		       struct sdiag_proc **ret_procs)
{
	struct slot *groups = NULL;
	struct sdiag_proc *procs = NULL;
	uint64_t *inodes = NULL;
	size_t ng = 0, n = 0;
	int r = -ENOMEM;

	groups = malloc((m->nslots ? m->nslots : 1) * sizeof(*groups));
	inodes = malloc((m->n ? m->n : 1) * sizeof(*inodes));
	procs = malloc((m->n ? m->n : 1) * sizeof(*procs));
	if (!groups || !inodes || !procs)
		goto out;
	for (size_t j = 0; j < m->nslots; j++)
		if (m->slots[j].count)
			groups[ng++] = m->slots[j];
	qsort(groups, ng, sizeof(*groups), cmp_entry);
	for (size_t g = 0; g < ng; g++)
		for (uint32_t k = 0; k < groups[g].count; k++, n++) {
			inodes[n] = groups[g].inode;
			procs[n] = m->procs[groups[g].first + k];
		}
	*ret_n = n;
	*ret_inodes = inodes;
	*ret_procs = procs;
	inodes = NULL;
	procs = NULL;
	r = 0;
out:
	free(groups);
	free(inodes);
	free(procs);
	return r;
}

SD_EXPORT void sdiag_procmap_free(struct sdiag_procmap *m)
{
	if (!m)
		return;
	free(m->owners);
	free(m->tasks);
	free(m->procs);
	free(m->slots);
	free(m);
}
