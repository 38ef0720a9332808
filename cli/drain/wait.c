// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sockdiag drain's wait (drain.h): the set of live connections by cookie,
 * the dumps that make it, the events that empty it, --max-age's destroys at
 * their crossings, the namespaces followed. How it works: drain.c.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/drain/drain.h"
#include "cli/run/run.h"
#include "util/clock.h"

const char *drain_ns_label(const struct drain *d)
{
	return d->many && d->cur >= 0 ? d->ns[d->cur].id.label : NULL;
}

int drain_out_ready(struct drain *d)
{
	int r = d->out ? 0 : out_new(&d->out, &d->o->out);

	if (r < 0)
		fprintf(stderr, "sockdiag drain: %s\n", strerror(-r));
	return r;
}

int drain_result_cb(const struct sdiag_sock *s, enum sdiag_destroy_result res, int err,
		     void *userdata)
{
	struct drain *d = userdata;
	struct out_extra x = { .result = sdiag_destroy_result_name(res), .netns = drain_ns_label(d) };

	switch (res) {
	case SDIAG_DESTROYED:
		d->destroyed++;
		break;
	case SDIAG_GONE:
		d->gone++;
		break;
	case SDIAG_DENIED:
		d->denied++;
		x.result_detail = "no CAP_NET_ADMIN over its network namespace";
		break;
	default:
		d->failed++;
		x.result_detail = strerror(err < 0 ? -err : EOPNOTSUPP);
		break;
	}
	if (d->aging && (res == SDIAG_DESTROYED || res == SDIAG_GONE)) {
		struct drain_conn *c = ctab_get(&d->live.t, s->cookie);

		/* Over: its destroy event, when it comes, takes nothing out. */
		if (c && !c->ended) {
			c->ended = true;
			d->live.left--;
			d->aged += res == SDIAG_DESTROYED;
		}
	}
	if (!d->out_err && !(d->out_err = drain_out_ready(d)))
		d->out_err = out_sock(d->out, s, &x);
	return 0;
}

static int collect_cb(const struct sdiag_sock *s, void *userdata)
{
	struct drain *d = userdata;
	struct drain_ns *ns = &d->ns[d->cur];
	struct drain_conn *old = ctab_get(&d->live.t, s->cookie);
	bool added;
	struct drain_conn *c = ctab_add(&d->next.t, s->cookie, &added);

	if (!c)
		return -ENOMEM;
	if (!added)
		return 0;
	/* A connection of the last set keeps its first sight; one the last set
	 * took out (its event came) and the dump still shows is not counted
	 * as new. */
	if (!old)
		d->arrived += d->dumps > 0;
	c->first_ns = old ? old->first_ns : d->now_ns;
	c->aged = old && old->aged;
	c->ns = ns->id.inode;
	ns->found++;
	if (!ts_ns(&d->max_age))
		return 0;
	/* The record to destroy it by at its crossing: kept from dump to dump. */
	if (old && old->rec) {
		c->rec = old->rec;
		old->rec = NULL;
	} else if (!(c->rec = sdiag_sock_dup(s))) {
		return -ENOMEM;
	} else {
		/* Borrowed from the process map, which the next dump's owner scan
		 * frees: not needed to destroy it. */
		c->rec->procs = NULL;
		c->rec->n_procs = 0;
	}
	return 0;
}

/* Empty the set (the records it still owns freed). */
static void set_clear(struct drain_set *st)
{
	for (size_t i = 0; i < ctab_len(&st->t); i++)
		free(((struct drain_conn *)ctab_at(&st->t, i))->rec);
	ctab_clear(&st->t);
	st->left = 0;
}

int drain_err_cb(enum sdiag_table t, int family, int err, void *userdata)
{
	(void)t;
	(void)family;
	(void)userdata;
	return err;
}

static void ns_close(struct drain_ns *ns)
{
	sdiag_destroyer_free(ns->ds);
	sdiag_watch_close(ns->w);
	sdiag_close(ns->h);
}

/* Subscribe (first), open, check (--kill, --max-age) in the namespace of fd
 * (-1: ours). Returns 0, or a negative errno after one line. */
int drain_ns_open(void *ctx, const struct sdiag_netns *id, int fd)
{
	struct drain *d = ctx;
	struct drain_ns *v = realloc(d->ns, (d->nns + 1) * sizeof(*v)), *ns;
	const char *in = id ? " in netns " : "", *label = id ? id->label : "";
	int r;

	if (!v)
		return -ENOMEM;
	d->ns = v;
	ns = &v[d->nns];
	*ns = (struct drain_ns){ .listed = true };
	if (id)
		ns->id = *id;
	r = sdiag_watch_open(&ns->w, opts_watch_groups(d->o), fd);
	if (r < 0) {
		fprintf(stderr, "sockdiag drain: cannot subscribe to socket-destroy events%s%s: "
				"%s\n", in, label, strerror(-r));
	} else if (d->rcvbuf && (r = sdiag_watch_set_rcvbuf(ns->w, d->rcvbuf)) < 0) {
		fprintf(stderr, "sockdiag drain: --rcvbuf: %s\n", strerror(-r));
	} else if ((r = fd < 0 ? sdiag_open(&ns->h) : sdiag_open_netns(&ns->h, fd)) < 0) {
		fprintf(stderr, "sockdiag drain: cannot open a sock_diag socket%s%s: %s\n", in,
			label, strerror(-r));
	} else if ((d->kill || ts_ns(&d->max_age)) && (r = sdiag_destroy_check(ns->h)) < 0) {
		fprintf(stderr, "sockdiag drain: %s: %s%s%s\n", d->kill ? "--kill" : "--max-age",
			r == -EPERM ? "no CAP_NET_ADMIN over the target network namespace" :
			r == -EOPNOTSUPP ? "this kernel cannot destroy sockets (no "
					   "CONFIG_INET_DIAG_DESTROY)" : strerror(-r), in, label);
	}
	if (r < 0) {
		ns_close(ns);
		return r;
	}
	d->nns++;
	return 0;
}

/* The namespace of inode (0: the one), or NULL. */
static struct drain_ns *ns_of(struct drain *d, uint64_t inode)
{
	for (size_t i = 0; i < d->nns; i++)
		if (d->ns[i].id.inode == inode)
			return &d->ns[i];
	return NULL;
}

/* --all-netns: the namespaces listed now; the new ones followed (through
 * cli/run's loop), the others marked. Returns 0 or a negative errno. */
static int relist(struct drain *d)
{
	struct sdiag_netns *now = NULL, *add;
	size_t n = 0, k = 0;
	int r = sdiag_netns_list(&now, &n);

	if (r < 0) {
		fprintf(stderr, "sockdiag drain: cannot list network namespaces: %s\n",
			strerror(-r));
		return r;
	}
	for (size_t i = 0; i < d->nns; i++) {
		d->ns[i].listed = false;
		for (size_t j = 0; j < n && !d->ns[i].listed; j++)
			d->ns[i].listed = now[j].inode == d->ns[i].id.inode;
	}
	add = now;
	for (size_t j = 0; j < n; j++)
		if (!ns_of(d, now[j].inode))
			add[k++] = now[j];
	/* One deleted between the listing and here cannot be entered: said, skipped. */
	r = k ? run_each_netns("drain", add, k, drain_ns_open, d) : 0;
	free(now);
	return r < 0 ? r : 0;
}

/* The owners now: a connection its owner closed (an orphan finishing its
 * close) no longer matches pid, comm or user. */
static int rescan_owners(struct drain *d)
{
	int r;

	sdiag_procmap_free(d->pm);
	d->pm = NULL;
	d->o->q.procmap = NULL;
	r = opts_scan_owners(d->o, "drain", &d->pm);
	if (r < 0) {
		fprintf(stderr, "sockdiag drain: cannot scan processes: %s%s\n", strerror(-r),
			opts_owners_hint(d->o, r));
		return r;
	}
	d->o->q.procmap = d->pm;
	return 0;
}

/* One namespace's dump into the next set. */
static int dump_ns(struct drain *d, size_t i)
{
	int r;

	d->cur = (int)i;
	d->ns[i].found = 0;
	r = sdiag_dump(d->ns[i].h, &d->o->q, collect_cb, drain_err_cb, d);
	d->cur = -1;
	return r;
}

/* --max-age: destroy the connections at or past it, from their records, each
 * in its namespace; each one is tried once (marked even if it cannot be, so
 * the timer moves on). Returns 0 or a negative errno. */
static int age_out(struct drain *d)
{
	uint64_t now = mono_ns();
	int r = 0;

	for (size_t k = 0; k < ctab_len(&d->live.t) && r >= 0; k++) {
		struct drain_conn *c = ctab_at(&d->live.t, k);
		struct drain_ns *ns;

		if (c->ended || c->aged || now - c->first_ns < ts_ns(&d->max_age))
			continue;
		c->aged = true; /* one that could not be destroyed is waited for */
		ns = ns_of(d, c->ns);
		if (!ns || !c->rec)
			continue;
		if (!ns->ds)
			r = sdiag_destroyer_new(&ns->ds, ns->h, drain_result_cb, d);
		if (r >= 0)
			r = sdiag_destroyer_add(ns->ds, c->rec);
	}
	for (size_t i = 0; i < d->nns && r >= 0; i++) {
		if (!d->ns[i].ds)
			continue;
		d->cur = (int)i; /* the rows' label */
		d->aging = true;
		r = sdiag_destroyer_flush(d->ns[i].ds);
		d->aging = false;
		d->cur = -1;
	}
	if (d->out && !d->out_err) /* the rows now, not at the exit */
		d->out_err = out_flush(d->out);
	d->dump_due = true; /* what arrived meanwhile: seen by the next dump */
	return r;
}

/* The dump: the new set of live connections (the old set's marks go). */
static int resync(struct drain *d)
{
	struct drain_set tmp;
	int r = 0;

	if (d->all)
		r = relist(d);
	if (r >= 0 && d->owners)
		r = rescan_owners(d);
	if (r < 0)
		return r;
	set_clear(&d->next);
	d->now_ns = mono_ns();
	for (size_t i = 0; i < d->nns && r >= 0; i++)
		r = dump_ns(d, i);
	if (r < 0)
		return r;
	/* Deleted namespaces without a connection left: let go. */
	for (size_t i = d->nns; i-- > 0;) {
		if (d->ns[i].listed || d->ns[i].found)
			continue;
		ns_close(&d->ns[i]);
		memmove(&d->ns[i], &d->ns[i + 1], (d->nns - i - 1) * sizeof(*d->ns));
		d->nns--;
	}
	d->dumps++;
	d->dump_ns = d->now_ns;
	d->dump_due = false;
	d->next.left = 0;
	for (size_t i = 0; i < ctab_len(&d->next.t); i++)
		d->next.left += !((struct drain_conn *)ctab_at(&d->next.t, i))->ended;
	tmp = d->live;
	d->live = d->next;
	d->next = tmp;
	return 0;
}

static int event_cb(const struct sdiag_sock *s, void *userdata)
{
	struct drain *d = userdata;
	struct drain_conn *c = ctab_get(&d->live.t, s->cookie);

	d->events++;
	if (c && !c->ended) {
		c->ended = true;
		d->live.left--;
		d->ended++;
	}
	return 0;
}

/* When the oldest connection left was first seen (now_ns if none); aging:
 * of those --max-age has not tried to destroy (UINT64_MAX if none). */
static uint64_t first_seen_ns(const struct drain *d, bool aging)
{
	uint64_t first = aging ? UINT64_MAX : d->now_ns;

	for (size_t i = 0; i < ctab_len(&d->live.t); i++) {
		const struct drain_conn *c = ctab_at(&d->live.t, i);

		if (!c->ended && !(aging && c->aged) && c->first_ns < first)
			first = c->first_ns;
	}
	return first;
}

static void progress(struct drain *d, const struct deadline *dl, bool force)
{
	uint64_t now = mono_ns();

	if (!force && now - d->progress_ns < 1000000000ull)
		return;
	d->progress_ns = now;
	d->now_ns = now;
	if (d->json) {
		printf("{\"event\":\"progress\",\"left\":%zu,\"oldest_ms\":%llu,\"elapsed_ms\":%llu",
		       d->live.left, (unsigned long long)((now - first_seen_ns(d, false)) / 1000000),
		       (unsigned long long)((now - d->start_ns) / 1000000));
		if (dl)
			printf(",\"time_left_ms\":%llu",
			       (unsigned long long)(deadline_left_ns(*dl) / 1000000));
		if (d->many)
			printf(",\"namespaces\":%zu", d->nns);
		printf(",\"arrived\":%llu,\"aged\":%llu,\"lost_events\":%llu,\"dumps\":%llu}\n",
		       (unsigned long long)d->arrived, (unsigned long long)d->aged,
		       (unsigned long long)d->lost, (unsigned long long)d->dumps);
		fflush(stdout);
	} else if (d->tty) {
		fprintf(stderr, "\r\033[Ksockdiag drain: %zu left, oldest seen %llus ago",
			d->live.left, (unsigned long long)((now - first_seen_ns(d, false)) / 1000000000));
		if (dl)
			fprintf(stderr, ", %llus to the timeout",
				(unsigned long long)((deadline_left_ns(*dl) + 999999999) / 1000000000));
	}
}

/* Read namespace i's pending events. Returns 0, or a negative errno. */
static int read_events(struct drain *d, size_t i, bool *must_dump)
{
	uint64_t lost = 0, ended = d->ended;
	int r = sdiag_watch_read(d->ns[i].w, NULL, event_cb, d, &lost);

	if (r < 0 && r != -ENOBUFS)
		return r;
	if (lost || r == -ENOBUFS) {
		d->lost += lost ? lost : 1;
		d->resyncs++;
		*must_dump = true;
	}
	if (!d->live.left)
		*must_dump = true;
	else if (d->ended > ended)
		d->dump_due = true;
	return 0;
}

/* The poll timeout: the earliest of --timeout, the due dump, --max-age's
 * next crossing and (with a progress line) a second. */
static int next_ms(struct drain *d, const struct deadline *dl)
{
	int ms = dl ? deadline_poll_ms(*dl) : -1;

	if ((d->json || d->tty) && (ms < 0 || ms > 1000))
		ms = 1000;
	if (d->dump_due) {
		int due = deadline_poll_ms(deadline_at(d->dump_ns + DUMP_GAP_NS));

		if (ms < 0 || due < ms)
			ms = due;
	}
	if (ts_ns(&d->max_age) && first_seen_ns(d, true) != UINT64_MAX) {
		int age = deadline_poll_ms(deadline_at(first_seen_ns(d, true) +
						       ts_ns(&d->max_age)));

		if (ms < 0 || age < ms)
			ms = age;
	}
	return ms;
}

/* Returns 0 drained, 1 at the deadline with connections left, or a negative
 * errno (-EINTR: a signal). */
int drain_loop(struct drain *d, int sigfd)
{
	struct deadline dl = deadline_at(d->start_ns + ts_ns(&d->timeout));
	bool has_dl = ts_ns(&d->timeout) != 0;
	struct pollfd *p = NULL;
	int r = resync(d);

	while (r >= 0 && d->live.left) {
		bool must_dump = false;
		struct pollfd *q = realloc(p, (d->nns + 1) * sizeof(*p));
		int ms;

		if (!q) {
			r = -ENOMEM;
			break;
		}
		p = q;
		progress(d, has_dl ? &dl : NULL, false);
		if (has_dl && !deadline_left_ns(dl)) {
			r = 1;
			break;
		}
		ms = next_ms(d, has_dl ? &dl : NULL);
		if (ms == 0 && ts_ns(&d->max_age) && first_seen_ns(d, true) != UINT64_MAX &&
		    !deadline_left_ns(deadline_at(first_seen_ns(d, true) + ts_ns(&d->max_age)))) {
			r = age_out(d);
			if (r >= 0 && !d->live.left)
				r = resync(d); /* the confirmation */
			continue;
		}
		if (ms == 0 && d->dump_due) {
			r = resync(d);
			continue;
		}
		for (size_t i = 0; i < d->nns; i++)
			p[i] = (struct pollfd){ .fd = sdiag_watch_fd(d->ns[i].w), .events = POLLIN };
		p[d->nns] = (struct pollfd){ .fd = sigfd, .events = POLLIN };
		if (poll(p, d->nns + 1, ms) < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (p[d->nns].revents & POLLIN) {
			r = -EINTR;
			break;
		}
		for (size_t i = 0; i < d->nns && r >= 0; i++)
			if (p[i].revents & (POLLIN | POLLERR))
				r = read_events(d, i, &must_dump);
		if (r >= 0 && must_dump)
			r = resync(d);
	}
	free(p);
	return r;
}


void drain_free(struct drain *d)
{
	set_clear(&d->live);
	set_clear(&d->next);
	ctab_fini(&d->live.t);
	ctab_fini(&d->next.t);
	for (size_t i = 0; i < d->nns; i++)
		ns_close(&d->ns[i]);
	free(d->ns);
	d->ns = NULL;
	d->nns = 0;
	sdiag_procmap_free(d->pm);
	d->pm = NULL;
}
