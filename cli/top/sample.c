// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sockdiag top's kernel side: per namespace one sock_diag handle for the
 * dumps (TCP with tcp_info, UDP) and one subscription to the socket-destroy
 * events; the owners of new sockets from one process scan per refresh that
 * has any (the BPF iterator or the /proc walk, as -p).
 *
 * The subscriptions are opened before the first dump, so every socket that
 * a dump has seen announces its end.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/top/top.h"

struct ns {
	struct sdiag_handle *h;
	struct sdiag_watch *w;
	const char *label;	/* NULL: ours */
};

struct top_src {
	struct cli_opts *o;
	struct sdiag_netns *list;	/* --all-netns, several -N */
	struct ns *ns;
	size_t n;
	const char **labels;
	bool owners;
	bool owners_failed;	/* said once */
	bool failed;
	uint64_t lost;
	char err[256];
	/* during a dump or a read */
	struct top_model *m;
	unsigned cur;
	int cb_err;
};

/* Handle and subscription in the namespace nsfd (-1: ours). */
static int ns_open(struct ns *n, struct cli_opts *o, int nsfd, const char *label)
{
	const char *what = label ? label : o->netns;
	int r;

	r = nsfd < 0 ? sdiag_open(&n->h) : sdiag_open_netns(&n->h, nsfd);
	if (r < 0) {
		if (what)
			fprintf(stderr, "sockdiag top: netns %s: cannot enter: %s\n", what,
				strerror(-r));
		else
			fprintf(stderr, "sockdiag top: cannot open a sock_diag socket: %s\n",
				strerror(-r));
		return r;
	}
	r = sdiag_watch_open(&n->w, opts_watch_groups(o), nsfd);
	if (r < 0) {
		fprintf(stderr, "sockdiag top: %s%s%scannot subscribe to socket-destroy events: %s\n",
			what ? "netns " : "", what ? what : "", what ? ": " : "", strerror(-r));
		return r;
	}
	n->label = label;
	return 0;
}

int src_open(struct top_src **ret, struct cli_opts *o, bool owners)
{
	struct top_src *s = calloc(1, sizeof(*s));
	size_t n = 1;
	int r = 0, fd = -1;

	if (!s)
		return -ENOMEM;
	s->o = o;
	s->owners = owners;
	if (run_netns_many(o)) {
		r = run_netns_set(o, "top", &s->list, &n);
		r = r == EXIT_USAGE ? -EINVAL : r ? -ENOENT : 0;
	}
	if (r < 0)
		goto fail;
	s->ns = calloc(n ? n : 1, sizeof(*s->ns));
	s->labels = calloc(n ? n : 1, sizeof(*s->labels));
	if (!s->ns || !s->labels) {
		r = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < n; i++, s->n++) {
		const char *label = s->list ? s->list[i].label : NULL;

		if (s->list) {
			r = sdiag_netns_open(s->list[i].path, &fd);
		} else if (o->netns) {
			r = sdiag_netns_open(o->netns, &fd);
			if (r < 0)
				argerr_netns("top", o->netns, r);
		}
		if (r < 0 && s->list)
			fprintf(stderr, "sockdiag top: netns %s: cannot enter: %s\n", label,
				strerror(-r));
		if (r >= 0)
			r = ns_open(&s->ns[i], o, fd, label);
		if (fd >= 0)
			close(fd);
		fd = -1;
		if (r < 0)
			goto fail;
		s->labels[i] = label;
	}
	s->err[0] = '\0';
	*ret = s;
	return 0;
fail:
	src_free(s);
	return r;
}

void src_free(struct top_src *s)
{
	if (!s)
		return;
	for (size_t i = 0; s->ns && i < s->n; i++) {
		sdiag_close(s->ns[i].h);
		sdiag_watch_close(s->ns[i].w);
	}
	free(s->ns);
	free(s->labels);
	free(s->list);
	free(s);
}

const char *const *src_labels(const struct top_src *s)
{
	return s->labels;
}

size_t src_pollfds(const struct top_src *s, struct pollfd *p, size_t max)
{
	size_t k = 0;

	for (size_t i = 0; i < s->n && k < max; i++)
		p[k++] = (struct pollfd){ .fd = sdiag_watch_fd(s->ns[i].w), .events = POLLIN };
	return k;
}

static int event_cb(const struct sdiag_sock *sk, void *userdata)
{
	struct top_src *s = userdata;
	int r = tm_event(s->m, sk, s->cur, s->o->q.filter);

	if (r < 0)
		s->cb_err = r;
	return r;
}

int src_events(struct top_src *s, struct top_model *m)
{
	s->m = m;
	for (size_t i = 0; i < s->n; i++) {
		uint64_t lost = 0;
		int r;

		s->cur = (unsigned)i;
		s->cb_err = 0;
		r = sdiag_watch_read(s->ns[i].w, NULL, event_cb, s, &lost);
		if (s->cb_err)
			return s->cb_err;
		if (r < 0) {
			snprintf(s->err, sizeof(s->err), "destroy events%s%s: %s",
				 s->labels[i] ? " in netns " : "", s->labels[i] ? s->labels[i] : "",
				 strerror(-r));
			s->failed = true;
		}
		if (lost) {
			s->lost += lost;
			snprintf(s->err, sizeof(s->err), "%llu destroy events lost (receive queue "
				 "overflow): closed sockets missing", (unsigned long long)s->lost);
		}
	}
	return 0;
}

/* A table of namespace i could not be dumped: said in the status line. */
static void table_failed(struct top_src *s, enum sdiag_table t, int err)
{
	/* Only tables named with -A come here (SDIAG_Q_SKIP_UNSUPPORTED). */
	if (err == -EAFNOSUPPORT || err == -EPROTONOSUPPORT)
		snprintf(s->err, sizeof(s->err), "%s: not supported by this kernel",
			 sdiag_table_netid(t));
	else
		snprintf(s->err, sizeof(s->err), "%s: %s", sdiag_table_netid(t), strerror(-err));
	s->failed = true;
}

/* One namespace's dump into the model, pulled. Returns 0, the model's
 * negative errno (which stops the sample), or 1 with *ret_err the dump's
 * failure to begin. */
static int pull_ns(struct top_src *s, struct top_model *m, const struct sdiag_query *q,
		   unsigned i, int *ret_err)
{
	const struct sdiag_sock *sk;
	struct sdiag_dump *d;
	enum sdiag_table t;
	int r;

	*ret_err = sdiag_dump_begin(s->ns[i].h, q, &d);
	if (*ret_err < 0)
		return 1;
	while ((r = sdiag_dump_next(d, &sk)) != 0) {
		if (r > 0 && (r = tm_sock(m, sk, i)) < 0)
			break;
		if (r < 0 && sdiag_dump_where(d, &t, NULL) == 0) {
			table_failed(s, t, r);
			r = 0;
		}
	}
	sdiag_dump_end(d);
	return r;
}

static bool owner_lookup(void *ud, uint64_t inode, int32_t *ret_pid, char ret_comm[16])
{
	const struct sdiag_proc *p;

	if (!sdiag_procmap_lookup(ud, inode, &p))
		return false;
	*ret_pid = p->pid;
	memcpy(ret_comm, p->comm, 16);
	return true;
}

/* One process scan, or NULL (the error said once in the status). */
static struct sdiag_procmap *scan(struct top_src *s)
{
	struct sdiag_procmap *pm = NULL;
	int r = sdiag_procmap_scan_using(&pm, NULL, s->o->owners);

	if (r < 0) {
		snprintf(s->err, sizeof(s->err), "cannot scan processes: %s%s", strerror(-r),
			 s->o->owners == SDIAG_OWNERS_BPF ? " (--owners=bpf)" : "");
		if (!s->owners_failed)
			s->failed = true;
		s->owners_failed = true;
		return NULL;
	}
	return pm;
}

int src_dump(struct top_src *s, struct top_model *m)
{
	struct sdiag_query q = s->o->q;
	int r = 0;

	/* A filter on pid, comm or user needs every socket's owners, each time;
	 * otherwise only new sockets need theirs, after the dump. */
	q.procmap = sdiag_filter_needs_procs(q.filter) ? scan(s) : NULL;
	s->m = m;
	for (size_t i = 0; i < s->n; i++) {
		int err;

		r = pull_ns(s, m, &q, (unsigned)i, &err);
		if (r < 0)
			goto out;
		if (r > 0) {
			snprintf(s->err, sizeof(s->err), "dump%s%s: %s",
				 s->labels[i] ? " in netns " : "", s->labels[i] ? s->labels[i] : "",
				 strerror(-err));
			s->failed = true;
		}
	}
	/* Sockets destroyed during the dump: their events are folded now, against
	 * the counters this dump saw (or the previous one's, if it missed them). */
	r = src_events(s, m);
out:
	if (r == 0 && q.procmap && s->owners && tm_owners_pending(m))
		tm_owners(m, owner_lookup, (void *)q.procmap);
	sdiag_procmap_free((struct sdiag_procmap *)q.procmap);
	return r;
}

void src_owners(struct top_src *s, struct top_model *m)
{
	struct sdiag_procmap *pm;

	if (!s->owners || !tm_owners_pending(m))
		return;
	pm = scan(s);
	if (pm)
		tm_owners(m, owner_lookup, pm);
	sdiag_procmap_free(pm);
}

const char *src_error(const struct top_src *s)
{
	return s->err;
}

bool src_failed(const struct top_src *s)
{
	return s->failed;
}

uint64_t src_lost(const struct top_src *s)
{
	return s->lost;
}
