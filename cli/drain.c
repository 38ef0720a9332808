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
 * (cookies, sorted), each event takes one out, and when the set is empty one
 * more dump confirms it (the dump is the authority: connections that arrived
 * meanwhile make a new set). An event that does not empty the set costs no
 * dump until DUMP_GAP_NS after the last one. Lost events (ENOBUFS) are
 * counted and answered by a dump, never by a conclusion. Nothing polls: the
 * dumps follow events; the only other timers are --timeout and the progress.
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
#include "util/clock.h"
#include "util/sigfd.h"
#include "util/textfile.h"

enum { EXIT_FATAL = 3 };
/* After ends that leave connections, the next dump at most this late: a
 * connection reset while its owner holds the descriptor is announced only at
 * the owner's close, and a dump does not list it (CLOSE); arrivals show too. */
#define DUMP_GAP_NS 1000000000ull
enum { OPT_TIMEOUT = 0x100, OPT_KILL, OPT_RCVBUF };

struct conn {
	uint64_t cookie;
	uint64_t first_ns; /* when a dump first saw it (CLOCK_MONOTONIC) */
	bool ended;	   /* its destroy event came */
};

struct set {
	struct conn *v; /* sorted by cookie */
	size_t n, cap;
	size_t left;
};

struct drain {
	struct cli_opts *o;
	struct sdiag_handle *h;
	struct sdiag_watch *w;
	struct set live, next; /* next: the dump being collected */
	uint64_t start_ns, now_ns;
	struct timespec timeout; /* zero: none */
	bool kill;
	int rcvbuf;	   /* --rcvbuf: the event socket's, 0 = the library's */
	bool json; /* --json/--ndjson: drain's own lines on stdout */
	bool owners; /* a filter on pid, comm or user: the owners scanned per dump */
	struct sdiag_procmap *pm;
	bool tty;  /* stderr a terminal: one updating progress line */
	uint64_t events, ended, lost, dumps, resyncs, arrived;
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
	if (val != OPT_TIMEOUT)
		return -EINVAL;
	if (opts_duration(arg, &d->timeout) < 0) {
		char q[TEXT_QUOTE_LEN];

		fprintf(stderr, "sockdiag drain: --timeout: '%s' is not a duration "
				"(e.g. 30s, 500ms, 2m)\n", TQ(q, arg));
		return -EINVAL;
	}
	return 0;
}

static int cmp_conn(const void *a, const void *b)
{
	const struct conn *x = a, *y = b;

	return x->cookie < y->cookie ? -1 : x->cookie > y->cookie;
}

static struct conn *set_find(const struct set *s, uint64_t cookie)
{
	struct conn key = { .cookie = cookie };

	return s->n ? bsearch(&key, s->v, s->n, sizeof(*s->v), cmp_conn) : NULL;
}

static int collect_cb(const struct sdiag_sock *s, void *userdata)
{
	struct drain *d = userdata;
	struct set *n = &d->next;
	const struct conn *old;

	if (n->n == n->cap) {
		size_t cap = n->cap ? n->cap * 2 : 256;
		struct conn *v = realloc(n->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		n->v = v;
		n->cap = cap;
	}
	/* A connection of the last set keeps its first sight; one the last set
	 * took out (its event came) and the dump still shows is not counted
	 * as new. */
	old = set_find(&d->live, s->cookie);
	if (!old)
		d->arrived += d->dumps > 0;
	n->v[n->n++] = (struct conn){ .cookie = s->cookie,
				       .first_ns = old ? old->first_ns : d->now_ns };
	return 0;
}

static int err_cb(enum sdiag_table t, int family, int err, void *userdata)
{
	(void)t;
	(void)family;
	(void)userdata;
	return err;
}

/* The dump: the new set of live connections (the old set's marks go). */
static int resync(struct drain *d)
{
	struct set tmp;
	int r;

	d->next.n = 0;
	if (d->owners) {
		/* Owners now: a connection its owner closed (an orphan finishing
		 * its close) no longer matches pid, comm or user. */
		sdiag_procmap_free(d->pm);
		d->pm = NULL;
		d->o->q.procmap = NULL;
		r = opts_scan_owners(d->o, "drain", &d->pm);
		if (r < 0) {
			fprintf(stderr, "sockdiag drain: cannot scan processes: %s%s\n",
				strerror(-r), opts_owners_hint(d->o, r));
			return r;
		}
		d->o->q.procmap = d->pm;
	}
	d->now_ns = mono_ns();
	r = sdiag_dump(d->h, &d->o->q, collect_cb, err_cb, d);
	if (r < 0)
		return r;
	d->dumps++;
	d->dump_ns = d->now_ns;
	d->dump_due = false;
	if (d->next.n) /* an empty set has no array yet: qsort takes none */
		qsort(d->next.v, d->next.n, sizeof(*d->next.v), cmp_conn);
	d->next.left = d->next.n;
	tmp = d->live;
	d->live = d->next;
	d->next = tmp;
	return 0;
}

static int event_cb(const struct sdiag_sock *s, void *userdata)
{
	struct drain *d = userdata;
	struct conn *c = set_find(&d->live, s->cookie);

	d->events++;
	if (c && !c->ended) {
		c->ended = true;
		d->live.left--;
		d->ended++;
	}
	return 0;
}

static uint64_t oldest_ns(const struct drain *d)
{
	uint64_t first = d->now_ns;

	for (size_t i = 0; i < d->live.n; i++)
		if (!d->live.v[i].ended && d->live.v[i].first_ns < first)
			first = d->live.v[i].first_ns;
	return d->now_ns - first;
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
		       d->live.left, (unsigned long long)(oldest_ns(d) / 1000000),
		       (unsigned long long)((now - d->start_ns) / 1000000));
		if (dl)
			printf(",\"time_left_ms\":%llu",
			       (unsigned long long)(deadline_left_ns(*dl) / 1000000));
		printf(",\"arrived\":%llu,\"lost_events\":%llu}\n", (unsigned long long)d->arrived,
		       (unsigned long long)d->lost);
		fflush(stdout);
	} else if (d->tty) {
		fprintf(stderr, "\r\033[Ksockdiag drain: %zu left, oldest seen %llus ago",
			d->live.left, (unsigned long long)(oldest_ns(d) / 1000000000));
		if (dl)
			fprintf(stderr, ", %llus to the timeout",
				(unsigned long long)((deadline_left_ns(*dl) + 999999999) / 1000000000));
	}
}

/* Read the pending events. Returns 0, or a negative errno. */
static int read_events(struct drain *d, bool *must_dump)
{
	uint64_t lost = 0, ended = d->ended;
	int r = sdiag_watch_read(d->w, NULL, event_cb, d, &lost);

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

static int result_cb(const struct sdiag_sock *s, enum sdiag_destroy_result res, int err,
		     void *userdata)
{
	struct drain *d = userdata;
	struct out_extra x = { .result = sdiag_destroy_result_name(res) };

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
	if (!d->out_err)
		d->out_err = out_sock(d->out, s, &x);
	return 0;
}

static int left_cb(const struct sdiag_sock *s, void *userdata)
{
	struct drain *d = userdata;

	d->listed++;
	if (!d->out_err)
		d->out_err = out_sock(d->out, s, NULL);
	return 0;
}

/* At the deadline: list what is left, or destroy it. Returns the exit status. */
static int at_deadline(struct drain *d)
{
	int r = out_new(&d->out, &d->o->out);

	if (r < 0) {
		fprintf(stderr, "sockdiag drain: %s\n", strerror(-r));
		return EXIT_RUNTIME;
	}
	if (!d->kill) {
		r = sdiag_dump(d->h, &d->o->q, left_cb, err_cb, d);
		if (r < 0)
			return EXIT_RUNTIME;
		return d->listed ? EXIT_RUNTIME : EXIT_OK;
	}
	r = sdiag_kill(d->h, &d->o->q, NULL, result_cb, err_cb, d);
	if (r < 0) {
		fprintf(stderr, "sockdiag drain: --kill: %s\n", strerror(-r));
		return r == -EPERM || r == -EOPNOTSUPP ? EXIT_FATAL : EXIT_RUNTIME;
	}
	return d->denied || d->failed ? EXIT_RUNTIME : EXIT_OK;
}

/* Returns 0 drained, 1 at the deadline with connections left, or a negative
 * errno (-EINTR: a signal). */
static int drain_loop(struct drain *d, int sigfd)
{
	struct deadline dl = deadline_at(d->start_ns + ts_ns(&d->timeout));
	bool has_dl = ts_ns(&d->timeout) != 0;
	struct pollfd p[2] = {
		{ .fd = sdiag_watch_fd(d->w), .events = POLLIN },
		{ .fd = sigfd, .events = POLLIN },
	};
	int r = resync(d);

	while (r >= 0 && d->live.left) {
		bool must_dump = false;
		int ms = has_dl ? deadline_poll_ms(dl) : -1;

		progress(d, has_dl ? &dl : NULL, false);
		if ((d->json || d->tty) && (ms < 0 || ms > 1000))
			ms = 1000;
		if (d->dump_due) {
			struct deadline due = deadline_at(d->dump_ns + DUMP_GAP_NS);
			int due_ms = deadline_poll_ms(due);

			if (!deadline_left_ns(due)) {
				r = resync(d);
				continue;
			}
			if (ms < 0 || due_ms < ms)
				ms = due_ms;
		}
		if (has_dl && !deadline_left_ns(dl))
			return 1;
		if (poll(p, 2, ms) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (p[1].revents & POLLIN)
			return -EINTR;
		if (p[0].revents & (POLLIN | POLLERR))
			r = read_events(d, &must_dump);
		if (r >= 0 && must_dump)
			r = resync(d);
	}
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
		if (d->kill)
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
	if (d->kill && strcmp(result, "drained"))
		fprintf(stderr, "sockdiag drain: %llu destroyed, %llu gone, %llu denied, "
				"%llu failed\n", (unsigned long long)d->destroyed,
			(unsigned long long)d->gone, (unsigned long long)d->denied,
			(unsigned long long)d->failed);
}

/* Handle, subscription (first), in -N's namespace or ours. Returns 0 or an
 * exit status after one line. */
static int drain_open(struct drain *d)
{
	int r, fd = -1;

	if (d->o->netns && (r = sdiag_netns_open(d->o->netns, &fd)) < 0) {
		argerr_netns("drain", d->o->netns, r);
		return EXIT_RUNTIME;
	}
	r = sdiag_watch_open(&d->w, opts_watch_groups(d->o), fd);
	if (r < 0) {
		fprintf(stderr, "sockdiag drain: cannot subscribe to socket-destroy events: %s\n",
			strerror(-r));
	} else if (d->rcvbuf && (r = sdiag_watch_set_rcvbuf(d->w, d->rcvbuf)) < 0) {
		fprintf(stderr, "sockdiag drain: --rcvbuf: %s\n", strerror(-r));
	} else {
		r = fd < 0 ? sdiag_open(&d->h) : sdiag_open_netns(&d->h, fd);
		if (r < 0)
			fprintf(stderr, "sockdiag drain: cannot open a sock_diag socket: %s\n",
				strerror(-r));
	}
	if (fd >= 0)
		close(fd);
	if (r < 0)
		return EXIT_RUNTIME;
	if (d->kill && (r = sdiag_destroy_check(d->h)) < 0) {
		fprintf(stderr, "sockdiag drain: --kill: %s\n",
			r == -EPERM ? "no CAP_NET_ADMIN over the target network namespace" :
			r == -EOPNOTSUPP ? "this kernel cannot destroy sockets (no "
					   "CONFIG_INET_DIAG_DESTROY)" : strerror(-r));
		return r == -EPERM || r == -EOPNOTSUPP ? EXIT_FATAL : EXIT_RUNTIME;
	}
	return 0;
}

static const char drain_usage[] =
	"Drain:    --timeout DURATION (then list what is left and exit 1)\n"
	"          --kill (with --timeout: destroy what is left, report each socket)\n"
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
	if (o->all_netns || opts_netns_many(o)) {
		fprintf(stderr, "sockdiag drain: one network namespace at a time (one -N)\n");
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
		{ 0 },
	};
	struct drain d = { 0 };
	const struct opt_extra extra = {
		.longopts = longopts,
		.shortopts = "",
		.handle = drain_opt,
		.ctx = &d,
		.usage = drain_usage,
		.synopsis = "[OPTIONS] FILTER",
		.takes = OPTS_G_INET | OPTS_G_DETAILS | OPTS_G_OUTPUT | OPTS_G_NETNS |
			 OPTS_G_FILTER,
	};
	struct sdiag_filter *f = NULL;
	struct cli_opts o;
	int r, sigfd = -1, status;

	memset(&o, 0, sizeof(o));
	d.o = &o;
	r = opts_parse(&o, argc, argv, &extra);
	if (r == OPTS_EXIT)
		return EXIT_OK;
	if (r < 0)
		return EXIT_USAGE;
	status = drain_check(&d, &o);
	if (!status && opts_filter(&o, &f) < 0)
		status = EXIT_USAGE;
	d.owners = !status && sdiag_filter_needs_procs(f);
	if (!status)
		status = drain_open(&d);
	if (status)
		goto out;
	status = EXIT_RUNTIME;
	d.json = o.out.format == OUT_JSON || o.out.format == OUT_NDJSON;
	if (d.json)
		o.out.format = OUT_NDJSON;
	d.tty = isatty(STDERR_FILENO);
	if (d.kill)
		o.out.columns |= OUT_COL_RESULT;
	sigfd = sigfd_open((const int[]){ SIGINT, SIGTERM, SIGHUP, 0 }, SFD_NONBLOCK);
	if (sigfd < 0)
		goto out;
	d.start_ns = mono_ns();
	if (d.json)
		printf("{\"event\":\"start\",\"timeout_ms\":%llu,\"kill\":%s}\n",
		       (unsigned long long)(ts_ns(&d.timeout) / 1000000), d.kill ? "true" : "false");
	fflush(stdout);
	r = drain_loop(&d, sigfd);
	if (r == 0) {
		status = EXIT_OK;
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
	free(d.live.v);
	free(d.next.v);
	sdiag_watch_close(d.w);
	sdiag_close(d.h);
	sdiag_filter_free(f);
	sdiag_procmap_free(d.pm);
	if (sigfd >= 0)
		close(sigfd);
	opts_fini(&o);
	return status;
}
