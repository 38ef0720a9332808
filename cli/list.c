// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sockdiag list [OPTIONS] [FILTER]: dump the selected sockets and render them.
 * With --interval DURATION [--count N]: a snapshot every DURATION (N of them,
 * or until SIGINT/SIGTERM), each its own table or JSON array (NDJSON: its
 * records), every record stamped with the snapshot's time. With --count-by
 * KEY[,KEY...]: counts grouped by the keys instead of the sockets (count.c).
 *
 * Exit status: 0 listed (possibly nothing), 1 a dump, namespace or write
 * failed (what could be listed was), 2 usage or filter error.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

#include "cli/commands.h"
#include "cli/count/count.h"
#include "cli/opts/options.h"
#include "cli/render/output.h"
#include "cli/run/run.h"
#include "cli/summary.h"
#include "util/textfile.h"

struct list_ctx {
	const struct cli_opts *opts;
	struct out *out;
	struct out_extra extra;
	uint32_t reported;	/* tables already complained about */
	bool failed;
	int out_err;		/* the renderer's error, which stops the dump */
	struct timespec snapshot;	/* --interval: when this snapshot's dump began */
	uint64_t snapshot_mono;		/* the same on CLOCK_MONOTONIC, ns */
	struct count *count;		/* --count-by: counted instead of rendered */
	const struct gkeys *keys;	/* --count-by's keys, or NULL */
	const struct sdiag_netns *ns;	/* --all-netns, several -N, -N cgroup: */
	size_t n_ns;
	const struct sdiag_query *q;	/* this snapshot's query */
	struct sdiag_handle *h;	/* -N: opened before any output */
};

/* --interval, --count (interval zero: list once) and --count-by */
struct repeat {
	struct run_sched sched;
	bool count_by;
	struct gkeys keys;
};

enum { OPT_COUNT_BY = 0x100 };

static int repeat_opt(void *ctx, int val, const char *arg)
{
	struct repeat *rp = ctx;

	if (val == OPT_COUNT_BY) {
		rp->count_by = true;
		return count_keys_parse(&rp->keys, arg);
	}
	return run_sched_opt(&rp->sched, "list", val, arg);
}

static int sock_cb(const struct sdiag_sock *s, void *userdata)
{
	struct list_ctx *c = userdata;
	int r = c->count ? count_sock(c->count, s, c->extra.netns) :
			   out_sock(c->out, s, c->extra.netns || c->extra.time ? &c->extra : NULL);

	if (r < 0)
		c->out_err = r;
	return r;
}

static int err_cb(enum sdiag_table t, int family, int err, void *userdata)
{
	struct list_ctx *c = userdata;

	(void)family;
	if (opts_report_table_error(c->opts, &c->reported, t, err))
		c->failed = true;
	return 0;
}

/*
 * ss's order: IPv4 before IPv6 in every table. The library walks TCP of both
 * families once (half the kernel's work), mixing them; the IPv6 records of
 * that walk are held back (deep copies, at most DEFER_MAX, so memory stays
 * bounded) and shown after it. Past DEFER_MAX they are dropped and an
 * IPv6-only TCP dump follows the walk; so that it comes before the tables
 * after TCP, TCP gets a dump of its own: the tables before it in the
 * library's order (sockdiag.h), TCP, then the rest.
 */
#define DEFER_MAX 8192
#define TABLES_BEFORE_TCP                                                                          \
	(SDIAG_TABLE_BIT(SDIAG_T_NETLINK) | SDIAG_TABLES_PACKET | SDIAG_TABLES_UNIX |               \
	 SDIAG_TABLE_BIT(SDIAG_T_RAW) | SDIAG_TABLE_BIT(SDIAG_T_UDP) |                            \
	 SDIAG_TABLE_BIT(SDIAG_T_UDPLITE))

struct defer {
	struct sdiag_sock **socks;
	size_t n;
	bool overflow;
};

static void defer_drop(struct defer *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->socks[i]);
	free(d->socks);
	d->socks = NULL;
	d->n = 0;
}

static int defer_push(struct defer *d, const struct sdiag_sock *s)
{
	if (d->overflow)
		return 0;
	if (d->n == DEFER_MAX) {
		defer_drop(d);
		d->overflow = true;
		return 0;
	}
	if (!d->socks) {
		d->socks = malloc(DEFER_MAX * sizeof(*d->socks));
		if (!d->socks)
			return -ENOMEM;
	}
	d->socks[d->n] = sdiag_sock_dup(s);
	if (!d->socks[d->n])
		return -ENOMEM;
	d->n++;
	return 0;
}

/* One dump of q, each record rendered; with df, the IPv6 records of a walk
 * of both families held back in it. 0 or a negative errno that should stop
 * everything (the renderer's); a dump error is reported and stops nothing. */
static int pull(struct list_ctx *c, struct sdiag_handle *h, const struct sdiag_query *q,
		struct defer *df)
{
	const struct sdiag_sock *s;
	struct sdiag_dump *d = NULL;
	enum sdiag_table t;
	int r, family;

	r = sdiag_dump_begin(h, q, &d);
	while (r >= 0 && (r = sdiag_dump_next(d, &s)) != 0) {
		if (r < 0) {
			sdiag_dump_where(d, &t, &family);
			r = err_cb(t, family, r, c);
		} else if (df && s->family == AF_INET6 && sdiag_dump_where(d, NULL, &family) == 0 &&
			   family == AF_UNSPEC) {
			r = defer_push(df, s);
		} else {
			r = sock_cb(s, c);
		}
	}
	sdiag_dump_end(d);
	return r;
}

/* TCP alone, in ss's order. */
static int pull_tcp(struct list_ctx *c, struct sdiag_handle *h, const struct sdiag_query *q)
{
	struct defer df = { 0 };
	int r = pull(c, h, q, &df);

	for (size_t i = 0; i < df.n && r >= 0; i++)
		r = sock_cb(df.socks[i], c);
	defer_drop(&df);
	if (r >= 0 && df.overflow) {
		struct sdiag_query q6 = *q;

		memset(q6.table_afs, 0, sizeof(q6.table_afs));
		q6.afs = SDIAG_AF_INET6;
		r = pull(c, h, &q6, NULL);
	}
	return r;
}

/* Every table of q in ss's order. */
static int dump_ss_order(struct list_ctx *c, struct sdiag_handle *h, const struct sdiag_query *q)
{
	const uint32_t tcp = SDIAG_TABLE_BIT(SDIAG_T_TCP);
	struct sdiag_query part = *q;
	int r = 0;

	if (!(q->tables & tcp))
		return pull(c, h, q, NULL);
	part.tables = q->tables & TABLES_BEFORE_TCP;
	if (part.tables)
		r = pull(c, h, &part, NULL);
	part.tables = tcp;
	if (r >= 0)
		r = pull_tcp(c, h, &part);
	part.tables = q->tables & ~(TABLES_BEFORE_TCP | tcp);
	if (r >= 0 && part.tables)
		r = pull(c, h, &part, NULL);
	return r;
}

/* Dump one namespace (nsfd -1: ours). Returns 0 or a negative errno that
 * should stop everything (a write error). */
static int list_one(struct list_ctx *c, const struct sdiag_query *q, int nsfd, const char *label)
{
	struct sdiag_handle *h = c->h;
	int r = 0;

	if (!h)
		r = nsfd < 0 ? sdiag_open(&h) : sdiag_open_netns(&h, nsfd);
	if (r < 0) {
		if (nsfd >= 0)	/* named by its label, or as given to -N */
			fprintf(stderr, "sockdiag list: netns %s: cannot enter: %s\n",
				label ? label : c->opts->netns, strerror(-r));
		else
			fprintf(stderr, "sockdiag: cannot open a sock_diag socket: %s\n",
				strerror(-r));
		c->failed = true;
		return 0;
	}
	c->extra.netns = label;
	c->reported = 0;
	r = dump_ss_order(c, h, q);
	if (h != c->h)
		sdiag_close(h);
	if (c->out_err)
		return c->out_err;
	if (r < 0) {
		fprintf(stderr, "sockdiag: dump%s%s: %s\n", label ? " in netns " : "",
			label ? label : "", strerror(-r));
		c->failed = true;
	}
	return 0;
}

/* One namespace of the set, labelled (--all-netns, several -N). */
static int list_ns(void *ctx, const struct sdiag_netns *ns, int fd)
{
	struct list_ctx *c = ctx;
	int r;

	c->extra.netns_inode = ns->inode;
	r = list_one(c, c->q, fd, ns->label);
	c->extra.netns_inode = 0;
	return r;
}

static int open_netns(const char *spec, struct sdiag_handle **ret)
{
	int fd = -1, r;

	r = sdiag_netns_open(spec, &fd);
	if (r >= 0)
		r = sdiag_open_netns(ret, fd);
	if (fd >= 0)
		close(fd);
	if (r < 0)
		argerr_netns("list", spec, r);
	return r;
}

static int run(struct cli_opts *o, struct list_ctx *c)
{
	struct sdiag_procmap *pm = NULL;
	struct sdiag_query q = o->q;
	int r = 0;

	/* Scan only when asked: -p, a filter on pid/comm/user, --count-by process. */
	if (o->processes || sdiag_filter_needs_procs(o->q.filter) ||
	    (c->keys && (gkeys_has(c->keys, GK_PROCESS) || gkeys_has(c->keys, GK_PID)))) {
		r = opts_scan_owners(o, "list", &pm);
		if (r < 0) {
			fprintf(stderr, "sockdiag: cannot scan processes: %s%s\n", strerror(-r),
				opts_owners_hint(o, r));
			c->failed = true;
			if (o->owners == SDIAG_OWNERS_BPF)
				return 0; /* the iterator was asked for: no list without it */
		}
		q.procmap = pm;
	}
	if (run_netns_many(o)) {
		c->q = &q;
		r = run_each_netns("list", c->ns, c->n_ns, list_ns, c);
		if (r > 0)
			c->failed = true;
		r = r < 0 ? r : 0;
	} else {
		r = list_one(c, &q, -1, NULL);	/* in c->h's namespace when -N opened one */
	}
	if (r >= 0)
		r = c->count ? count_finish(c->count) : out_finish(c->out);
	sdiag_procmap_free(pm);
	return r;
}

/* Block SIGINT and SIGTERM: --interval waits for them between snapshots and
 * stops cleanly, never in the middle of one. */
static void block_stop_signals(sigset_t *mask)
{
	sigemptyset(mask);
	sigaddset(mask, SIGINT);
	sigaddset(mask, SIGTERM);
	sigprocmask(SIG_BLOCK, mask, NULL);
}

/* Sleep until the nth snapshot is due. Returns true when a stop signal came
 * instead, or is pending: a snapshot that takes longer than the interval
 * leaves no time to sleep, and the signal must still stop us. */
static bool wait_next(const sigset_t *mask, const struct run_sched *sched, uint64_t start,
		      uint64_t n)
{
	struct deadline due = run_due(sched, start, n);
	struct timespec left;

	for (;;) {
		left = ts_from_ns(deadline_left_ns(due));
		if (sigtimedwait(mask, NULL, &left) >= 0)
			return true;
		if (errno != EAGAIN && errno != EINTR)
			return false;
		if (!deadline_left_ns(due))
			return false;
	}
}

/* One listing (one snapshot): its own renderer, so each table has its header
 * and each JSON array is closed. Returns 0 or a negative errno. */
static int snapshot(struct cli_opts *o, struct list_ctx *c)
{
	int r;

	/* Stamped first: the schedule counts from the first stamp, so stamp i
	 * is at least i intervals after it (a late wake-up does not push the
	 * next snapshots back: two neighbours may be closer than an interval). */
	if (c->extra.time) {
		clock_gettime(CLOCK_REALTIME, &c->snapshot);
		c->snapshot_mono = mono_ns();
	}
	r = c->keys ? count_new(&c->count, c->keys, &o->out, c->extra.time) :
		      out_new(&c->out, &o->out);
	if (r < 0) {
		fprintf(stderr, "sockdiag: %s\n", strerror(-r));
		return r;
	}
	r = run(o, c);
	if (r < 0 && r != -EPIPE)
		fprintf(stderr, "sockdiag: write: %s\n", strerror(-r));
	out_free(c->out);
	c->out = NULL;
	count_free(c->count);
	c->count = NULL;
	return r;
}

int cmd_list(int argc, char **argv)
{
	static const struct option longopts[] = {
		RUN_SCHED_LONGOPTS,
		{ "count-by", required_argument, NULL, OPT_COUNT_BY },
		{ 0 },
	};
	struct repeat rp = { .count_by = false };
	const struct opt_extra extra = {
		.longopts = longopts,
		.shortopts = "",
		.handle = repeat_opt,
		.ctx = &rp,
		.takes = OPTS_G_ALL,
		.usage = "Repeat:   --interval DURATION (a snapshot every DURATION: 500ms, 2s,\n"
			 "          1m; each record stamped with its time)\n"
			 "          --count N (with --interval: N snapshots, then exit)\n"
			 "Count:    --count-by KEY[,KEY...] (counts instead of sockets, grouped\n"
			 "          by state, proto, family, netns, cgroup, unit, process, pid,\n"
			 "          user, lport, rport, laddr, raddr)\n",
	};
	struct sdiag_filter *f = NULL;
	struct list_ctx c = { 0 };
	struct sdiag_netns *ns = NULL;
	size_t n_ns = 0;
	uint64_t start = 0;
	struct cli_opts o;
	sigset_t stop;
	int r, status;

	r = opts_parse(&o, argc, argv, &extra);
	if (r == OPTS_EXIT)
		return EXIT_OK;
	if (r < 0)
		return r == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
	if (rp.sched.count && !run_interval_ns(&rp.sched)) {
		fprintf(stderr, "sockdiag list: --count needs --interval\n");
		status = EXIT_USAGE;
		goto out;
	}
	if (o.summary) {
		if (o.filter_expr || o.all_netns) {
			fprintf(stderr, "sockdiag list: --summary counts every socket of one "
				"namespace: it takes no %s\n", o.all_netns ? "--all-netns" : "FILTER");
			status = EXIT_USAGE;
		} else {
			status = summary_run(&o);
		}
		goto out;
	}
	r = opts_filter(&o, &f);
	if (r < 0) {
		status = r == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
		if (r != -EINVAL)
			fprintf(stderr, "sockdiag: filter: %s\n", strerror(-r));
		goto out;
	}
	if (run_netns_many(&o)) {
		status = run_netns_set(&o, "list", &ns, &n_ns);
		if (status)
			goto out;
		o.out.columns |= OUT_COL_NETNS;
	}
	opts_note_bound_inactive(&o, "list");
	c.opts = &o;
	c.ns = ns;
	c.n_ns = n_ns;
	c.keys = rp.count_by ? &rp.keys : NULL;
	/* A namespace that cannot be entered prints nothing on stdout. */
	if (o.netns && !opts_netns_many(&o) && open_netns(o.netns, &c.h) < 0) {
		status = EXIT_RUNTIME;
		goto out;
	}
	if (!run_interval_ns(&rp.sched)) {
		r = snapshot(&o, &c);
		/* The reader went away (a closed pipe): not a failure of ours. */
		status = (r < 0 && r != -EPIPE) || c.failed ? EXIT_RUNTIME : EXIT_OK;
		goto out;
	}
	o.out.columns |= OUT_COL_TIME;
	c.extra.time = &c.snapshot;
	block_stop_signals(&stop);
	for (uint64_t n = 1;; n++) {
		r = snapshot(&o, &c);
		if (n == 1)
			start = c.snapshot_mono;
		if (r < 0 || (rp.sched.count && n >= rp.sched.count) ||
		    wait_next(&stop, &rp.sched, start, n))
			break;
	}
	status = (r < 0 && r != -EPIPE) || c.failed ? EXIT_RUNTIME : EXIT_OK;
out:
	free(ns);
	sdiag_close(c.h);
	sdiag_filter_free(f);
	opts_fini(&o);
	return status;
}
