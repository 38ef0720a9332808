// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One pass of the exporter: every table of every selected namespace dumped
 * once, each record folded into fixed-size counters (and bounded label sets)
 * in the dump's callback and forgotten. Nothing grows with the number of
 * sockets.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "daemon/exporter/exporter.h"
#include "util/clock.h"
#include "util/hash.h"

/* RTT bucket bounds in microseconds (tcp_info's unit); the last is +Inf. */
static const uint32_t rtt_bounds_us[EXP_RTT_BUCKETS - 1] = {
	100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000,
};

struct pass {
	const struct exp_config *c;
	struct exp_agg *a;
	uint32_t ns;			/* index of the namespace being dumped */
	uint8_t portidx[65536];		/* 0: not configured, else index + 1 */
	struct exp_lports lports;	/* the namespace's listening ports */
};

/* ---- bounded label sets ------------------------------------------------------------- */

int exp_set_init(struct exp_set *s, size_t cap)
{
	s->cap = cap;
	s->nslots = cap * 2;
	s->slots = calloc(s->nslots, sizeof(*s->slots));
	return s->slots ? 0 : -ENOMEM;
}

struct exp_entry *exp_set_get(struct exp_set *s, const struct exp_key *k)
{
	size_t i;

	if (!s->slots)
		return NULL;
	for (i = hash_bytes(k, sizeof(*k)) % s->nslots;; i = (i + 1) % s->nslots) {
		struct exp_entry *e = &s->slots[i];

		if (e->used && !memcmp(&e->k, k, sizeof(*k)))
			return e;
		if (!e->used)
			break;
	}
	if (s->n == s->cap) {
		s->dropped++;
		return NULL;
	}
	s->slots[i].used = true;
	s->slots[i].k = *k;
	s->n++;
	return &s->slots[i];
}

static int by_count_desc(const void *x, const void *y)
{
	const struct exp_entry *a = *(const struct exp_entry *const *)x;
	const struct exp_entry *b = *(const struct exp_entry *const *)y;

	return a->v[0] < b->v[0] ? 1 : a->v[0] > b->v[0] ? -1 : 0;
}

void exp_set_top(struct exp_set *s, size_t k, unsigned socks)
{
	struct exp_entry **v;
	size_t n = 0;

	if (s->n <= k)
		return;
	v = malloc(s->n * sizeof(*v));
	if (!v)
		k = 0;	/* no memory to choose: keep none rather than an arbitrary few */
	for (size_t i = 0; v && i < s->nslots; i++)
		if (s->slots[i].used)
			v[n++] = &s->slots[i];
	if (v)
		qsort(v, n, sizeof(*v), by_count_desc);
	for (size_t i = 0; i < s->nslots; i++) {
		struct exp_entry *e = v ? (i >= k && i < n ? v[i] : NULL) : &s->slots[i];

		if (e && e->used) {
			s->dropped += socks < 2 ? e->v[socks] : 1;
			e->used = false;
			s->n--;
		}
	}
	free(v);
}

/* ---- folding one record ----------------------------------------------------------------- */

static void fold_tcp(struct exp_tcp *t, const struct sdiag_sock *s)
{
	struct sdiag_tcp_info tcpi;
	const struct sdiag_tcp_info *ti = &tcpi;

	sdiag_sock_blob_copy(s, SDIAG_BLOB_TCP_INFO, &tcpi, sizeof(tcpi));
	t->with_info++;
	t->retrans_segs += ti->tcpi_total_retrans;
	t->lost_segs += ti->tcpi_lost;
	t->unacked_segs += ti->tcpi_unacked;
	t->bytes_sent += ti->tcpi_bytes_sent;
	t->bytes_received += ti->tcpi_bytes_received;
	t->bytes_retrans += ti->tcpi_bytes_retrans;
	if (s->state == SDIAG_SS_ESTABLISHED) {
		unsigned b = 0;

		while (b < EXP_RTT_BUCKETS - 1 && ti->tcpi_rtt > rtt_bounds_us[b])
			b++;
		t->rtt_buckets[b]++;
		t->rtt_count++;
		t->rtt_sum_s += ti->tcpi_rtt / 1e6;
	}
}

static void fold_listener(struct pass *p, const struct sdiag_sock *s)
{
	struct exp_key k = { .ns = p->ns, .table = (uint8_t)s->table, .family = s->family,
			     .port = s->inet.sport };
	struct exp_entry *e;

	memcpy(k.addr, s->inet.src, s->family == AF_INET6 ? 16 : 4);
	e = exp_set_get(&p->a->listeners, &k);
	if (e) {
		e->v[0] += s->rqueue;	/* accept queue now */
		e->v[1] += s->wqueue;	/* its limit (the backlog) */
	}
}

static void fold_group(struct exp_set *set, uint32_t ns, uint8_t state, uint64_t id,
		       const char *comm)
{
	struct exp_key k = { .ns = ns, .state = state, .id = id };
	struct exp_entry *e;

	if (comm)
		memcpy(k.comm, comm, strnlen(comm, sizeof(k.comm) - 1));
	e = exp_set_get(set, &k);
	if (e)
		e->v[0]++;
}

static void fold_sock(struct pass *p, const struct sdiag_sock *s)
{
	struct exp_ns *ns = &p->a->ns[p->ns];
	unsigned t = s->table, st = s->state;
	unsigned f = t < EXP_INET_TABLES && s->family == AF_INET6;

	if (t >= SDIAG_T_MAX)
		return;
	if (st >= SDIAG_SS_MAX)
		st = SDIAG_SS_UNKNOWN;
	p->a->sockets++;
	ns->socks[t][f][st]++;
	if (t < EXP_INET_TABLES && t != SDIAG_T_RAW) {
		unsigned idx = p->portidx[s->inet.sport];

		if (idx)
			ns->ports[idx - 1][t][st]++;
		if (st == SDIAG_SS_LISTEN && p->c->listeners && (s->has & SDIAG_HAS_QUEUES))
			fold_listener(p, s);
		if (t == SDIAG_T_TCP && (s->has & SDIAG_HAS_TCP_INFO))
			fold_tcp(&ns->tcp, s);
		if (p->c->by_cgroup && (s->has & SDIAG_HAS_CGROUP))
			fold_group(&p->a->cgroups, p->ns, (uint8_t)st, s->inet.cgroup_id, NULL);
	}
	if (p->c->by_comm)
		fold_group(&p->a->comms, p->ns, (uint8_t)st, 0,
			   s->n_procs ? s->procs[0].comm : "");
	exp_conns_fold(p->c, p->a, p->ns, &p->lports, s);
}

/* A table the kernel cannot dump is counted per namespace (a metric),
 * whether or not it was configured by name; other failures are errors. */
static void table_failed(struct pass *p, enum sdiag_table t, int err)
{
	if (err == -EAFNOSUPPORT || err == -EPROTONOSUPPORT)
		p->a->ns[p->ns].unsupported |= SDIAG_TABLE_BIT(t);
	else
		p->a->dump_errors++;
}

/* ---- namespaces --------------------------------------------------------------------- */

static int add_ns(struct pass *p, const char *label)
{
	struct exp_agg *a = p->a;
	struct exp_ns *nv = realloc(a->ns, (a->n_ns + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	a->ns = nv;
	memset(&nv[a->n_ns], 0, sizeof(*nv));
	snprintf(nv[a->n_ns].label, sizeof(nv[a->n_ns].label), "%s", label);
	if (p->c->n_ports) {
		nv[a->n_ns].ports = calloc(p->c->n_ports, sizeof(*nv[a->n_ns].ports));
		if (!nv[a->n_ns].ports)
			return -ENOMEM;
	}
	memset(&p->lports, 0, sizeof(p->lports));
	p->ns = (uint32_t)a->n_ns++;
	return 0;
}

/* The queries of a pass: the main one, and UDP's with its memory info
 * (udp-drops) when it is asked for apart (q[1] not NULL). */
static int dump_ns(struct pass *p, struct sdiag_handle *h, const struct sdiag_query *const *q)
{
	int r = 0;

	for (unsigned i = 0; i < 2 && r >= 0; i++) {
		const struct sdiag_sock *s;
		struct sdiag_dump *d = NULL;
		enum sdiag_table t;

		if (!q[i] || !q[i]->tables)
			continue;
		r = sdiag_dump_begin(h, q[i], &d);
		while (r >= 0 && (r = sdiag_dump_next(d, &s)) != 0) {
			if (r > 0) {
				fold_sock(p, s);
			} else if (sdiag_dump_where(d, &t, NULL) == 0) {
				table_failed(p, t, r);
				r = 0;
			}
		}
		sdiag_dump_end(d);
	}
	if (r < 0) {
		p->a->ns[p->ns].failed = true;
		p->a->dump_errors++;
	}
	return r == -ENOMEM ? r : 0;
}

static int dump_all_netns(struct pass *p, const struct sdiag_query *const *q)
{
	uint64_t *inodes;
	struct sdiag_netns *list = NULL;
	size_t n = 0;
	int r;

	r = sdiag_netns_list(&list, &n);
	if (r < 0) {
		p->a->dump_errors++;
		return r;
	}
	inodes = p->c->pod_labels ? calloc(n ? n : 1, sizeof(*inodes)) : NULL;
	for (size_t i = 0; i < n && r >= 0; i++) {
		struct sdiag_handle *h = NULL;
		int fd;

		if (inodes)
			inodes[p->a->n_ns] = list[i].inode;
		r = add_ns(p, list[i].label);
		if (r < 0)
			break;
		fd = open(list[i].path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && p->c->ephemeral) {
			int rfd = exp_range_open(fd);

			exp_range_read(&p->a->ns[p->ns], rfd);
			if (rfd >= 0)
				close(rfd);
		}
		if (fd < 0 || sdiag_open_netns(&h, fd) < 0) {
			/* Gone meanwhile, or no CAP_SYS_ADMIN over it. */
			p->a->ns[p->ns].failed = true;
			p->a->dump_errors++;
		} else {
			r = dump_ns(p, h, q);
		}
		sdiag_close(h);
		if (fd >= 0)
			close(fd);
	}
	if (inodes)
		exp_pods_label(p->a, inodes, "/proc",
			       p->c->pods_dir ? p->c->pods_dir : EXP_PODS_DIR, p->c->max_pods);
	free(inodes);
	free(list);
	return r;
}

/* ---- cgroup names -------------------------------------------------------------------- */

/* The first cgroup2 mount point (in our mount namespace). */
static char *cgroup2_root(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], *root = NULL;

	if (!f)
		return NULL;
	while (!root && fgets(line, sizeof(line), f)) {
		char mnt[2048], fstype[64];
		const char *sep = strstr(line, " - ");

		if (!sep || sscanf(line, "%*s %*s %*s %*s %2047s", mnt) != 1 ||
		    sscanf(sep + 3, "%63s", fstype) != 1)
			continue;
		if (!strcmp(fstype, "cgroup2"))
			root = strdup(mnt);
	}
	fclose(f);
	return root;
}

struct cg_names {
	const uint64_t *ids;
	size_t n;
	char **paths;
};

static void cg_name(struct cg_names *w, uint64_t ino, const char *path)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->ids[i] == ino && !w->paths[i])
			w->paths[i] = strdup(path);
}

/* Depth-first over the cgroup tree: each directory's inode is its cgroup id. */
static void name_cgroups(struct cg_names *w, int dirfd, char *path, size_t len, unsigned depth)
{
	DIR *d = fdopendir(dirfd);
	struct dirent *de;

	if (!d) {
		close(dirfd);
		return;
	}
	while ((de = readdir(d))) {
		struct stat st;
		int fd;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		fd = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) < 0 ||
		    len + strlen(de->d_name) + 2 > 4096) {
			close(fd);
			continue;
		}
		snprintf(path + len, 4096 - len, "/%s", de->d_name);
		cg_name(w, st.st_ino, path);
		if (depth < 32)
			name_cgroups(w, fd, path, len + strlen(path + len), depth + 1);
		else
			close(fd);
		path[len] = '\0';
	}
	closedir(d);
}

void exp_cgroup_paths(const char *root, const uint64_t *ids, size_t n, char **paths)
{
	struct cg_names w = { .ids = ids, .n = n, .paths = paths };
	char *r = root ? strdup(root) : cgroup2_root();
	char path[4096] = "";
	struct stat st;
	int fd;

	if (!r || !n)
		goto out;
	fd = open(r, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		if (fstat(fd, &st) == 0)	/* the root cgroup is "/" */
			cg_name(&w, st.st_ino, "/");
		name_cgroups(&w, fd, path, 0, 0);
	}
out:
	free(r);
}

char **exp_set_cgroup_paths(const struct exp_set *s, const char *root)
{
	uint64_t *ids = calloc(s->nslots ? s->nslots : 1, sizeof(*ids));
	char **paths = calloc(s->nslots ? s->nslots : 1, sizeof(*paths));

	if (ids && paths) {
		for (size_t i = 0; i < s->nslots; i++)
			ids[i] = s->slots[i].used ? s->slots[i].k.id : UINT64_MAX;
		exp_cgroup_paths(root, ids, s->nslots, paths);
	}
	free(ids);
	return paths;
}

void exp_paths_free(char **paths, size_t n)
{
	for (size_t i = 0; paths && i < n; i++)
		free(paths[i]);
	free(paths);
}

/* ---- the pass --------------------------------------------------------------------------- */

int exp_collect(const struct exp_config *c, const struct exp_target *t, struct exp_agg **ret)
{
	SDIAG_OPTS(sdiag_query, q,
			.tables = c->tables, .states = 0, .afs = SDIAG_AF_ALL,
			.show = c->tcp_info ? SDIAG_SHOW_INFO : 0);
	/* udp-drops: UDP apart, with its memory info (the drops), the rest without. */
	bool udp = c->udp_drops && (c->tables & SDIAG_TABLE_BIT(SDIAG_T_UDP));
	SDIAG_OPTS(sdiag_query, qu, .tables = SDIAG_TABLE_BIT(SDIAG_T_UDP), .afs = SDIAG_AF_ALL,
		   .show = SDIAG_SHOW_MEM);
	const struct sdiag_query *qs[2] = { &q, udp ? &qu : NULL };
	struct sdiag_procmap *pm = NULL;
	uint64_t t0 = mono_ns();
	struct pass *p = calloc(1, sizeof(*p));
	struct exp_agg *a = calloc(1, sizeof(*a));
	int r = -ENOMEM;

	if (!p || !a)
		goto out;
	p->c = c;
	p->a = a;
	a->n_ports = c->n_ports;
	for (size_t i = 0; i < c->n_ports; i++)
		p->portidx[c->ports[i]] = (uint8_t)(i + 1);
	if (udp)
		q.tables &= ~SDIAG_TABLE_BIT(SDIAG_T_UDP);
	if ((c->listeners && exp_set_init(&a->listeners, c->max_listeners) < 0) ||
	    (c->by_cgroup && exp_set_init(&a->cgroups, c->max_series) < 0) ||
	    (c->by_comm && exp_set_init(&a->comms, c->max_series) < 0) ||
	    exp_conns_init(c, a) < 0)
		goto out;
	if (c->by_comm || c->destinations == EXP_BY_COMM) {
		/* Owners come from a /proc scan: without it every socket is comm "". */
		if (sdiag_procmap_scan(&pm, NULL) < 0)
			a->dump_errors++;
		q.procmap = pm;
	}
	if (t->all_netns) {
		r = dump_all_netns(p, qs);
	} else {
		r = add_ns(p, t->label ? t->label : "");
		if (r == 0 && c->ephemeral)
			exp_range_read(&a->ns[p->ns], t->range_fd);
		if (r == 0)
			r = dump_ns(p, t->h, qs);
	}
	if (r < 0 && !a->n_ns)
		goto out;
	r = 0;
	if (c->by_cgroup)
		a->cgroup_paths = exp_set_cgroup_paths(&a->cgroups, c->cgroup_root);
	exp_conns_done(c, a);
	a->duration_s = (double)(mono_ns() - t0) / 1e9;
	a->timestamp = (double)real_ns() / 1e9;
	*ret = a;
	a = NULL;
out:
	sdiag_procmap_free(pm);
	exp_agg_free(a);
	free(p);
	return r;
}

void exp_agg_free(struct exp_agg *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n_ns; i++)
		free(a->ns[i].ports);
	free(a->ns);
	exp_paths_free(a->cgroup_paths, a->cgroups.nslots);
	free(a->listeners.slots);
	free(a->cgroups.slots);
	free(a->comms.slots);
	exp_conns_free(a);
	free(a);
}
