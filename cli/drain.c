// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sockdiag drain [OPTIONS] FILTER: wait until no connection matches, then
 * exit 0; at --timeout, list what is left (exit 1) or, with --kill, destroy
 * it with kill's per-socket report.
 *
 * Connections are TCP sockets (-u adds UDP) in any state but LISTEN,
 * TIME-WAIT, CLOSE and SYN-RECV: listeners and TIME-WAIT never count.
 *
 * Event-driven: the destroy events are subscribed to before the first dump
 * (no end is missed in between); a dump gives the set of live connections
 * (a cookie table, util/ctab.h), each event takes one out, and when the set
 * is empty one more dump confirms it (the dump is the authority: connections
 * that arrived meanwhile make a new set). An event that does not empty the
 * set costs no dump until DUMP_GAP_NS after the last one. Lost events
 * (ENOBUFS) are counted and answered by a dump, never by a conclusion.
 * Nothing polls: the dumps follow events; the other timers are --timeout,
 * the progress and --max-age's next crossing.
 *
 * --max-age D: the kernel keeps no birth time of a socket, so a connection's
 * age counts from the first dump that showed it: one open when drain starts
 * is aged from the start; one that arrives later from the next dump (after
 * an end, at a crossing, at the confirmation), at most D after it arrived.
 * A timer wakes drain at the earliest crossing; the dump then destroys every
 * connection at or past D, reported as kill reports.
 *
 * Namespaces (--all-netns, several -N): one subscription and sock_diag
 * socket per namespace, opened through cli/run's loop; cookies are unique
 * across namespaces, so one set holds them all. --all-netns lists the
 * namespaces again at each dump: one made during the drain is followed from
 * then on (subscribed, then dumped); one no longer listed (deleted) is let
 * go once a dump finds none of its connections (our sockets keep it alive
 * until then), which is no error.
 *
 * Exit status: 0 drained (or, with --kill, everything left destroyed or
 * gone), 1 timeout with connections left (or --kill could not destroy one),
 * runtime error or interrupted by a signal, 2 usage, 3 --kill without
 * CAP_NET_ADMIN or CONFIG_INET_DIAG_DESTROY (checked at the start). Waiting
 * needs no privilege: the kernel lets anyone subscribe to the events of
 * its namespace.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/signalfd.h>

#include "cli/commands.h"
#include "cli/opts/options.h"
#include "cli/render/output.h"
#include "cli/run/run.h"
#include "util/argerr.h"
#include "util/clock.h"
#include "util/ctab.h"
#include "util/sigfd.h"
#include "util/textfile.h"

enum { EXIT_FATAL = 3 };
/* After ends that leave connections, the next dump at most this late: a
 * connection reset while its owner holds the descriptor is announced only at
 * the owner's close, and a dump does not list it (CLOSE); arrivals show too. */
#define DUMP_GAP_NS 1000000000ull
enum { OPT_TIMEOUT = 0x100, OPT_KILL, OPT_RCVBUF, OPT_MAX_AGE };

struct conn {
	uint64_t cookie;   /* first: the cookie table's key */
	uint64_t first_ns; /* when a dump first saw it (CLOCK_MONOTONIC) */
	bool ended;	   /* its destroy event came, or --max-age destroyed it */
	bool aged;	   /* --max-age tried to destroy it (once) */
};

struct set {
	struct ctab t; /* struct conn by cookie */
	size_t left;   /* not ended */
};

/* A namespace followed: its subscription and sock_diag socket. */
struct dns {
	struct sdiag_netns id;	/* label "" and inode 0: the one of -N or ours */
	struct sdiag_handle *h;
	struct sdiag_watch *w;
	struct sdiag_destroyer *ds; /* --max-age, during a dump */
	size_t found;		/* connections its last dump found */
	bool listed;		/* --all-netns: in the last listing */
};

struct drain {
	struct cli_opts *o;
	struct dns *ns;
	size_t nns;
	bool many;   /* --all-netns or several -N: rows say their namespace */
	bool all;    /* --all-netns: listed again at each dump */
	int cur;     /* the namespace being dumped or opened */
	struct set live, next; /* next: the dump being collected */
	uint64_t start_ns, now_ns;
	struct timespec timeout; /* zero: none */
	struct timespec max_age; /* zero: none */
	bool kill;
	bool aging;  /* destroys of --max-age under way */
	int rcvbuf;	   /* --rcvbuf: the event socket's, 0 = the library's */
	bool json; /* --json/--ndjson: drain's own lines on stdout */
	bool owners; /* a filter on pid, comm or user: the owners scanned per dump */
	struct sdiag_procmap *pm;
	bool tty;  /* stderr a terminal: one updating progress line */
	uint64_t events, ended, lost, dumps, resyncs, arrived, aged;
	uint64_t progress_ns; /* the last progress line */
	uint64_t dump_ns;     /* the last dump */
	bool dump_due;	      /* ends seen since: a dump at dump_ns + DUMP_GAP_NS */
	/* the final report */
	struct out *out;
	uint64_t destroyed, gone, denied, failed, listed;
	int out_err;
};

static int drain_opt(void *ctx, int val, const char *arg)
{
	struct drain *d = ctx;

	if (val == OPT_KILL) {
		d->kill = true;
		return 0;
	}
	if (val == OPT_RCVBUF)
		return opts_rcvbuf("drain", arg, &d->rcvbuf);
	if (val != OPT_TIMEOUT && val != OPT_MAX_AGE)
		return -EINVAL;
	if (opts_duration(arg, val == OPT_TIMEOUT ? &d->timeout : &d->max_age) < 0) {
		char q[TEXT_QUOTE_LEN];

		fprintf(stderr, "sockdiag drain: --%s: '%s' is not a duration "
				"(e.g. 30s, 500ms, 2m)\n", val == OPT_TIMEOUT ? "timeout" : "max-age",
			TQ(q, arg));
		return -EINVAL;
	}
	return 0;
}

static const char *ns_label(const struct drain *d)
{
	return d->many && d->cur >= 0 ? d->ns[d->cur].id.label : NULL;
}

static int out_ready(struct drain *d)
{
	int r = d->out ? 0 : out_new(&d->out, &d->o->out);

	if (r < 0)
		fprintf(stderr, "sockdiag drain: %s\n", strerror(-r));
	return r;
}

static int result_cb(const struct sdiag_sock *s, enum sdiag_destroy_result res, int err,
		     void *userdata)
{
	struct drain *d = userdata;
	struct out_extra x = { .result = sdiag_destroy_result_name(res), .netns = ns_label(d) };

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
		struct conn *c = ctab_get(&d->next.t, s->cookie);

		/* Over: its destroy event, when it comes, takes nothing out. */
		if (c && !c->ended) {
			c->ended = true;
			d->aged += res == SDIAG_DESTROYED;
		}
	}
	if (!d->out_err && !(d->out_err = out_ready(d)))
		d->out_err = out_sock(d->out, s, &x);
	return 0;
}

static int collect_cb(const struct sdiag_sock *s, void *userdata)
{
	struct drain *d = userdata;
	struct dns *ns = &d->ns[d->cur];
	const struct conn *old = ctab_get(&d->live.t, s->cookie);
	bool added;
	struct conn *c = ctab_add(&d->next.t, s->cookie, &added);
	int r;

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
	ns->found++;
	if (!ts_ns(&d->max_age) || c->aged || d->now_ns - c->first_ns < ts_ns(&d->max_age))
		return 0;
	c->aged = true; /* tried once: one that could not be destroyed is waited for */
	/* Old enough: destroyed after this namespace's dump (result_cb). */
	if (!ns->ds && (r = sdiag_destroyer_new(&ns->ds, ns->h, result_cb, d)) < 0)
		return r;
	return sdiag_destroyer_add(ns->ds, s);
}

static int err_cb(enum sdiag_table t, int family, int err, void *userdata)
{
	(void)t;
	(void)family;
	(void)userdata;
	return err;
}

static void ns_close(struct dns *ns)
{
	sdiag_destroyer_free(ns->ds);
	sdiag_watch_close(ns->w);
	sdiag_close(ns->h);
}

/* Subscribe (first), open, check (--kill, --max-age) in the namespace of fd
 * (-1: ours). Returns 0, or a negative errno after one line. */
static int ns_open(void *ctx, const struct sdiag_netns *id, int fd)
{
	struct drain *d = ctx;
	struct dns *v = realloc(d->ns, (d->nns + 1) * sizeof(*v)), *ns;
	const char *in = id ? " in netns " : "", *label = id ? id->label : "";
	int r;

	if (!v)
		return -ENOMEM;
	d->ns = v;
	ns = &v[d->nns];
	*ns = (struct dns){ .listed = true };
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

static bool followed(const struct drain *d, uint64_t inode)
{
	for (size_t i = 0; i < d->nns; i++)
		if (d->ns[i].id.inode == inode)
			return true;
	return false;
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
		if (!followed(d, now[j].inode))
			add[k++] = now[j];
	/* One deleted between the listing and here cannot be entered: said, skipped. */
	r = k ? run_each_netns("drain", add, k, ns_open, d) : 0;
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

/* One namespace's dump into the next set, then --max-age's destroys. */
static int dump_ns(struct drain *d, size_t i)
{
	struct dns *ns = &d->ns[i];
	int r;

	d->cur = (int)i;
	ns->found = 0;
	r = sdiag_dump(ns->h, &d->o->q, collect_cb, err_cb, d);
	if (r >= 0 && ns->ds) {
		d->aging = true;
		r = sdiag_destroyer_flush(ns->ds);
		d->aging = false;
		if (d->json && d->out)
			(void)out_flush(d->out);
	}
	d->cur = -1;
	return r;
}

/* The dump: the new set of live connections (the old set's marks go). */
static int resync(struct drain *d)
{
	struct set tmp;
	int r = 0;

	if (d->all)
		r = relist(d);
	if (r >= 0 && d->owners)
		r = rescan_owners(d);
	if (r < 0)
		return r;
	ctab_clear(&d->next.t);
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
		d->next.left += !((struct conn *)ctab_at(&d->next.t, i))->ended;
	tmp = d->live;
	d->live = d->next;
	d->next = tmp;
	return 0;
}

static int event_cb(const struct sdiag_sock *s, void *userdata)
{
	struct drain *d = userdata;
	struct conn *c = ctab_get(&d->live.t, s->cookie);

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
		const struct conn *c = ctab_at(&d->live.t, i);

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

static int left_cb(const struct sdiag_sock *s, void *userdata)
{
	struct drain *d = userdata;
	struct out_extra x = { .netns = ns_label(d) };

	d->listed++;
	if (!d->out_err)
		d->out_err = out_sock(d->out, s, &x);
	return 0;
}

/* At the deadline: list what is left, or destroy it, in every namespace.
 * Returns the exit status. */
static int at_deadline(struct drain *d)
{
	int r = out_ready(d);

	if (r < 0)
		return EXIT_RUNTIME;
	for (size_t i = 0; i < d->nns && r >= 0; i++) {
		d->cur = (int)i;
		r = d->kill ? sdiag_kill(d->ns[i].h, &d->o->q, NULL, result_cb, err_cb, d)
			    : sdiag_dump(d->ns[i].h, &d->o->q, left_cb, err_cb, d);
	}
	d->cur = -1;
	if (r < 0 && d->kill) {
		fprintf(stderr, "sockdiag drain: --kill: %s\n", strerror(-r));
		return r == -EPERM || r == -EOPNOTSUPP ? EXIT_FATAL : EXIT_RUNTIME;
	}
	if (r < 0)
		return EXIT_RUNTIME;
	if (!d->kill)
		return d->listed ? EXIT_RUNTIME : EXIT_OK;
	return d->denied || d->failed ? EXIT_RUNTIME : EXIT_OK;
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
static int drain_loop(struct drain *d, int sigfd)
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
		if (ms == 0 && (d->dump_due || ts_ns(&d->max_age))) {
			/* A due dump or a crossing (the deadline was checked above). */
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

static void report(struct drain *d, const char *result)
{
	uint64_t ms = (mono_ns() - d->start_ns) / 1000000;

	if (d->tty && !d->json)
		fputs("\r\033[K", stderr);
	if (d->json) {
		if (d->out)
			(void)out_flush(d->out);
		printf("{\"event\":\"end\",\"result\":\"%s\",\"left\":%zu,\"elapsed_ms\":%llu,"
		       "\"ended\":%llu,\"arrived\":%llu,\"events\":%llu,\"lost_events\":%llu,"
		       "\"dumps\":%llu,\"resyncs\":%llu",
		       result, d->live.left, (unsigned long long)ms, (unsigned long long)d->ended,
		       (unsigned long long)d->arrived, (unsigned long long)d->events,
		       (unsigned long long)d->lost, (unsigned long long)d->dumps,
		       (unsigned long long)d->resyncs);
		if (ts_ns(&d->max_age))
			printf(",\"aged\":%llu", (unsigned long long)d->aged);
		if (d->kill || ts_ns(&d->max_age))
			printf(",\"destroyed\":%llu,\"gone\":%llu,\"denied\":%llu,\"failed\":%llu",
			       (unsigned long long)d->destroyed, (unsigned long long)d->gone,
			       (unsigned long long)d->denied, (unsigned long long)d->failed);
		printf("}\n");
		return;
	}
	/* Tenths of a second (truncated): exact times are in the JSON. */
	fprintf(stderr, "sockdiag drain: %s after %llu.%llus: %zu left, %llu ended, %llu arrived, "
			"%llu lost events\n", result, (unsigned long long)(ms / 1000),
		(unsigned long long)(ms % 1000 / 100), d->live.left, (unsigned long long)d->ended,
		(unsigned long long)d->arrived, (unsigned long long)d->lost);
	if (ts_ns(&d->max_age))
		fprintf(stderr, "sockdiag drain: %llu destroyed at --max-age\n",
			(unsigned long long)d->aged);
	if ((d->kill && strcmp(result, "drained")) || d->denied || d->failed)
		fprintf(stderr, "sockdiag drain: %llu destroyed, %llu gone, %llu denied, "
				"%llu failed\n", (unsigned long long)d->destroyed,
			(unsigned long long)d->gone, (unsigned long long)d->denied,
			(unsigned long long)d->failed);
}

/* The namespaces: -N's or ours, or the set of --all-netns or several -N
 * (cli/run). Returns 0 or an exit status after one line. */
static int drain_open(struct drain *d)
{
	struct sdiag_netns *set = NULL;
	size_t n = 0;
	int r, fd = -1;

	if (!d->many) {
		if (d->o->netns && (r = sdiag_netns_open(d->o->netns, &fd)) < 0) {
			argerr_netns("drain", d->o->netns, r);
			return EXIT_RUNTIME;
		}
		r = ns_open(d, NULL, fd);
		if (fd >= 0)
			close(fd);
	} else {
		r = run_netns_set(d->o, "drain", &set, &n);
		if (r)
			return r;
		r = run_each_netns("drain", set, n, ns_open, d);
		free(set);
		/* --all-netns: one gone since the listing is no error (said, though). */
		if (r > 0 && d->all)
			r = 0;
	}
	if (r > 0)
		return r;
	return r == -EPERM || r == -EOPNOTSUPP ? EXIT_FATAL : r < 0 ? EXIT_RUNTIME : 0;
}

static const char drain_usage[] =
	"Drain:    --timeout DURATION (then list what is left and exit 1)\n"
	"          --kill (with --timeout: destroy what is left, report each socket)\n"
	"          --max-age DURATION (destroy each connection as it gets that old,\n"
	"          counted from when drain first saw it; report each socket)\n"
	"          --rcvbuf BYTES (destroy events' receive buffer, default 32 MiB)\n"
	"          Connections: TCP (-u: also UDP) but not LISTEN, TIME-WAIT, SYN-RECV\n";

/* The checks before anything is opened. Returns 0 or EXIT_USAGE. */
static int drain_check(struct drain *d, struct cli_opts *o)
{
	if (d->kill && !ts_ns(&d->timeout)) {
		fprintf(stderr, "sockdiag drain: --kill needs --timeout (what is left at the "
				"deadline is destroyed)\n");
		return EXIT_USAGE;
	}
	if (!o->filter_expr) {
		fprintf(stderr, "sockdiag drain: no FILTER: say which connections to wait for "
				"(e.g. 'sport = :443')\n");
		return EXIT_USAGE;
	}
	if (o->explicit_tables & ~(SDIAG_TABLE_BIT(SDIAG_T_TCP) | SDIAG_TABLE_BIT(SDIAG_T_UDP))) {
		fprintf(stderr, "sockdiag drain: the kernel announces the end of TCP and UDP "
				"sockets only; select -t and/or -u\n");
		return EXIT_USAGE;
	}
	if (!o->explicit_tables)
		o->q.tables = SDIAG_TABLE_BIT(SDIAG_T_TCP);
	o->q.states = SDIAG_STATES_CONNECTED;
	return 0;
}

int cmd_drain(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "kill", no_argument, NULL, OPT_KILL },
		{ "rcvbuf", required_argument, NULL, OPT_RCVBUF },
		{ "max-age", required_argument, NULL, OPT_MAX_AGE },
		{ 0 },
	};
	struct drain d = { .cur = -1 };
	const struct opt_extra extra = {
		.longopts = longopts,
		.shortopts = "",
		.handle = drain_opt,
		.ctx = &d,
		.usage = drain_usage,
		.synopsis = "[OPTIONS] FILTER",
		.takes = OPTS_G_INET | OPTS_G_DETAILS | OPTS_G_OUTPUT | OPTS_G_NETNS |
			 OPTS_G_DUMP | OPTS_G_FILTER,
	};
	struct sdiag_filter *f = NULL;
	struct cli_opts o;
	int r, sigfd = -1, status;

	memset(&o, 0, sizeof(o));
	d.o = &o;
	ctab_init(&d.live.t, sizeof(struct conn));
	ctab_init(&d.next.t, sizeof(struct conn));
	r = opts_parse(&o, argc, argv, &extra);
	if (r == OPTS_EXIT)
		return EXIT_OK;
	if (r < 0)
		return EXIT_USAGE;
	status = drain_check(&d, &o);
	if (!status && opts_filter(&o, &f) < 0)
		status = EXIT_USAGE;
	d.owners = !status && sdiag_filter_needs_procs(f);
	d.all = o.all_netns;
	d.many = run_netns_many(&o);
	if (!status)
		status = drain_open(&d);
	if (status)
		goto out;
	status = EXIT_RUNTIME;
	d.json = o.out.format == OUT_JSON || o.out.format == OUT_NDJSON;
	if (d.json)
		o.out.format = OUT_NDJSON;
	d.tty = isatty(STDERR_FILENO);
	if (d.kill || ts_ns(&d.max_age))
		o.out.columns |= OUT_COL_RESULT;
	if (d.many)
		o.out.columns |= OUT_COL_NETNS;
	sigfd = sigfd_open((const int[]){ SIGINT, SIGTERM, SIGHUP, 0 }, SFD_NONBLOCK);
	if (sigfd < 0)
		goto out;
	d.start_ns = mono_ns();
	if (d.json)
		printf("{\"event\":\"start\",\"timeout_ms\":%llu,\"kill\":%s,\"max_age_ms\":%llu,"
		       "\"namespaces\":%zu}\n", (unsigned long long)(ts_ns(&d.timeout) / 1000000),
		       d.kill ? "true" : "false", (unsigned long long)(ts_ns(&d.max_age) / 1000000),
		       d.nns);
	fflush(stdout);
	r = drain_loop(&d, sigfd);
	if (r == 0) {
		/* --max-age: one that could not be destroyed is a failure. */
		status = d.denied || d.failed ? EXIT_RUNTIME : EXIT_OK;
		report(&d, "drained");
	} else if (r == 1) {
		status = at_deadline(&d);
		report(&d, d.kill ? "killed" : d.listed ? "timeout" : "drained");
	} else {
		fprintf(stderr, "%ssockdiag drain: %s\n", d.tty && !d.json ? "\r\033[K" : "",
			r == -EINTR ? "interrupted" : strerror(-r));
		report(&d, "interrupted");
	}
	if (d.out && out_finish(d.out) < 0 && !d.out_err)
		d.out_err = -EIO;
	if (d.out_err && d.out_err != -EPIPE)
		fprintf(stderr, "sockdiag drain: output: %s\n", strerror(-d.out_err));
out:
	out_free(d.out);
	ctab_fini(&d.live.t);
	ctab_fini(&d.next.t);
	for (size_t i = 0; i < d.nns; i++)
		ns_close(&d.ns[i]);
	free(d.ns);
	sdiag_filter_free(f);
	sdiag_procmap_free(d.pm);
	if (sigfd >= 0)
		close(sigfd);
	opts_fini(&o);
	return status;
}
