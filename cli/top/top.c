// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sockdiag top [OPTIONS] [FILTER]: live traffic per connection, process,
 * cgroup, unit... from the kernel's own counters (tcp_info's bytes_received
 * and bytes_acked, one dump per refresh) and the socket-destroy events that
 * carry a closing socket's final counters (model.h says how they add up).
 * A full-screen view (ui.c), or with -b, or when stdout is not a terminal,
 * one snapshot per interval as a table, JSON or NDJSON (batch.c).
 *
 * Exit status: 0 stopped by q, a signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT)
 * or --count; 1 a dump, namespace, terminal or write failure; 2 usage or
 * filter error.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/signalfd.h>

#include "cli/top/top.h"
#include "util/sigfd.h"
#include "util/textfile.h"

enum { OPT_INTERVAL = 0x100, OPT_COUNT, OPT_BY, OPT_SORT, OPT_BATCH = 'b' };

/* One line for a --by list top_keys_parse() refused, in list --count-by's words. */
static void by_error(const char *arg, const struct top_keys_error *e)
{
	char q[TEXT_QUOTE_LEN];

	fputs("sockdiag top: --by: ", stderr);
	switch (e->kind) {
	case TKE_EMPTY:
		fprintf(stderr, "an empty key in '%s' (keys are separated by single commas)\n",
			text_excerpt(q, sizeof(q), arg, strlen(arg), 32));
		break;
	case TKE_TWICE:
		fprintf(stderr, "key '%s' given twice%s\n",
			e->key == TK_COOKIE ? "conn" : top_key_name(e->key),
			e->in_conn && e->key != TK_COOKIE ? " (conn has it)" : "");
		break;
	case TKE_UNKNOWN:
	case TKE_MANY:
		fprintf(stderr, "%s '%s' (keys: %s)\n",
			e->kind == TKE_UNKNOWN ? "unknown key" : "too many keys at",
			text_excerpt(q, sizeof(q), e->at, e->len, 32), top_keys_help);
		break;
	default:
		fprintf(stderr, "no key given (keys: %s)\n", top_keys_help);
		break;
	}
}

static int top_opt(void *ctx, int val, const char *arg)
{
	struct top_opts *t = ctx;
	struct top_keys_error kerr;
	char q[TEXT_QUOTE_LEN], *end;
	int c;

	switch (val) {
	case OPT_BATCH:
		t->batch = true;
		return 0;
	case OPT_INTERVAL:
		if (opts_duration(arg, &t->interval) < 0) {
			fprintf(stderr, "sockdiag top: --interval: '%s' is not a duration "
					"(1ms to 365 days: 500ms, 2, 1.5s, 5m, 1h)\n", TQ(q, arg));
			return -EINVAL;
		}
		return 0;
	case OPT_COUNT:
		errno = 0;
		t->count = strtoull(arg, &end, 10);
		if (errno || *end || *arg < '0' || *arg > '9' || t->count == 0) {
			fprintf(stderr, "sockdiag top: --count: '%s' is not a positive number\n",
				TQ(q, arg));
			return -EINVAL;
		}
		return 0;
	case OPT_BY:
		if (top_keys_parse(&t->keys, arg, &kerr) < 0) {
			by_error(arg, &kerr);
			return -EINVAL;
		}
		return 0;
	case OPT_SORT:
		c = top_col_lookup(arg[0] == '+' ? arg + 1 : arg);
		if (c < 0) {
			fprintf(stderr, "sockdiag top: --sort: unknown column '%s' (rx, tx, conns, "
					"closed, rtt, retrans, rqueue, wqueue, key; +COLUMN: "
					"ascending)\n", TQ(q, arg));
			return -EINVAL;
		}
		t->sort = (enum top_col)c;
		t->ascending = arg[0] == '+';
		return 0;
	default:
		return -EINVAL;
	}
}

static double secs(const struct timespec *a, const struct timespec *b)
{
	return (double)(a->tv_sec - b->tv_sec) + (double)(a->tv_nsec - b->tv_nsec) / 1e9;
}

int top_events(struct top_run *r)
{
	return src_events(r->src, r->m);
}

/* a + (b - a) / 2 */
static struct timespec midpoint(const struct timespec *a, const struct timespec *b)
{
	double d = secs(b, a) / 2;
	struct timespec m = *a;

	m.tv_sec += (time_t)d;
	m.tv_nsec += (long)((d - (double)(time_t)d) * 1e9);
	if (m.tv_nsec >= 1000000000L) {
		m.tv_sec++;
		m.tv_nsec -= 1000000000L;
	}
	return m;
}

int top_refresh(struct top_run *r)
{
	struct timespec m0, m1, r0, r1, mono, real;
	bool first = !r->mono.tv_sec && !r->mono.tv_nsec;
	int e;

	clock_gettime(CLOCK_MONOTONIC, &m0);
	clock_gettime(CLOCK_REALTIME, &r0);
	tm_begin(r->m);
	e = src_dump(r->src, r->m);
	if (e < 0)
		return e;
	/* The counters were read during the dump: its middle is the snapshot's time
	 * (the process scan for new owners comes after it). */
	clock_gettime(CLOCK_MONOTONIC, &m1);
	clock_gettime(CLOCK_REALTIME, &r1);
	mono = midpoint(&m0, &m1);
	real = midpoint(&r0, &r1);
	src_owners(r->src, r->m);
	r->seconds = first ? 0 : secs(&mono, &r->mono);
	r->mono = mono;
	r->when = real;
	return tm_end(r->m, r->seconds);
}

static int open_signals(void)
{
	/* SIGQUIT (Ctrl-\) stops it too: its default, a core dump, left the
	 * terminal on the alternate screen with the cursor hidden. */
	return sigfd_open((const int[]){ SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH, 0 },
			  SFD_NONBLOCK);
}

/* Wait until `due` (CLOCK_MONOTONIC), reading destroy events as they come.
 * Returns 1 when a stop signal came, 0 at the due time, <0 on error. */
static int wait_until(struct top_run *r, int sigfd, const struct timespec *due)
{
	struct pollfd p[65];
	size_t n;

	p[0] = (struct pollfd){ .fd = sigfd, .events = POLLIN };
	n = 1 + src_pollfds(r->src, p + 1, 64);
	for (;;) {
		struct timespec now;
		double left;
		int e;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left = secs(due, &now);
		if (left <= 0)
			return 0;
		e = poll(p, n, (int)(left * 1000) + 1);
		if (e < 0 && errno != EINTR)
			return -errno;
		if (e <= 0)
			continue;
		if (p[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sigfd, &si, sizeof(si)) == sizeof(si) && si.ssi_signo != SIGWINCH)
				return 1;
		}
		for (size_t i = 1; i < n; i++)
			if (p[i].revents & POLLIN) {
				e = top_events(r);
				if (e < 0)
					return e;
				break;
			}
	}
}

static int batch_run(struct top_run *r, int sigfd)
{
	struct timespec start;
	char said[256] = "";
	int e = 0;

	/* The schedule starts once the baseline is taken (its owner scan can be slow):
	 * the first snapshot is a whole interval later. */
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (uint64_t n = 1; !r->t->count || n <= r->t->count; n++) {
		double off = (double)n * ((double)r->t->interval.tv_sec +
					  (double)r->t->interval.tv_nsec / 1e9);
		struct timespec due = start;

		due.tv_sec += (time_t)off;
		due.tv_nsec += (long)((off - (double)(time_t)off) * 1e9);
		if (due.tv_nsec >= 1000000000L) {
			due.tv_sec++;
			due.tv_nsec -= 1000000000L;
		}
		e = wait_until(r, sigfd, &due);
		if (e)
			break;
		e = top_refresh(r);
		if (e < 0)
			break;
		if (strcmp(said, src_error(r->src))) {
			snprintf(said, sizeof(said), "%s", src_error(r->src));
			if (said[0])
				fprintf(stderr, "sockdiag top: %s\n", said);
		}
		e = batch_snapshot(r->t, r->m, &r->when, r->seconds);
		if (e < 0)
			break;
	}
	if (e < 0 && e != -EPIPE)
		fprintf(stderr, "sockdiag top: %s\n", strerror(-e));
	return (e < 0 && e != -EPIPE) || src_failed(r->src) ? EXIT_RUNTIME : EXIT_OK;
}

/* The shared options top has no use for: other tables, details it does not show. */
static const char *const refuse[] = {
	"raw", "mptcp", "sctp", "udplite", "smc", "unix", "packet", "netlink", "vsock", "xdp",
	"tipc", "query", "socket", "family", "bound-inactive", "options", "extended", "memory",
	"info", "tos", "processes", "threads", "oneline", "no-queues", "inet-sockopt", "cgroup",
	"summary", "bpf", "context", "contexts", "resolve", NULL,
};

int cmd_top(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "count", required_argument, NULL, OPT_COUNT },
		{ "by", required_argument, NULL, OPT_BY },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "batch", no_argument, NULL, OPT_BATCH },
		{ 0 },
	};
	struct top_opts t = { .interval = { 1, 0 }, .sort = TC_RX };
	const struct opt_extra extra = {
		.longopts = longopts,
		.shortopts = "b",
		.handle = top_opt,
		.ctx = &t,
		.refuse = refuse,
		.usage = "Top:      -b|--batch (snapshots on stdout, not the full-screen view; also\n"
			 "          when stdout is not a terminal, and with --json/--ndjson)\n"
			 "          --interval DURATION (refresh every DURATION, default 1s: 500ms,\n"
			 "          2, 5m)\n"
			 "          --count N (N refreshes, then exit)\n"
			 "          --by KEY[,KEY...] (one row per group of: conn (each socket),\n"
			 "          pid, comm, cgroup, cgroup_id, unit, user, uid, raddr (peer),\n"
			 "          rport, laddr, lport, netns, state, proto, family; default pid;\n"
			 "          also their other names: process, rip, lip, netid)\n"
			 "          --sort COLUMN (rx (default), tx, conns, closed, rtt, retrans,\n"
			 "          rqueue, wqueue, key; +COLUMN: ascending)\n",
	};
	struct top_run run = { .t = &t };
	struct ckeys *ck = NULL;
	struct sdiag_filter *f = NULL;
	struct cli_opts o;
	int r, sigfd = -1, status = EXIT_RUNTIME;

	top_keys_parse(&t.keys, "pid", &(struct top_keys_error){ 0 });
	r = opts_parse(&o, argc, argv, &extra);
	if (r == OPTS_EXIT)
		return EXIT_OK;
	if (r < 0)
		return r == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
	t.o = &o;
	o.q.tables &= SDIAG_TABLE_BIT(SDIAG_T_TCP) | SDIAG_TABLE_BIT(SDIAG_T_UDP);
	o.q.show |= SDIAG_SHOW_TCP_INFO;	/* the counters; not the congestion control */
	r = opts_filter(&o, &f);
	if (r < 0) {
		status = r == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
		if (r != -EINVAL)
			fprintf(stderr, "sockdiag top: filter: %s\n", strerror(-r));
		goto out;
	}
	t.batch = t.batch || o.out.format != OUT_TABLE || !isatty(STDOUT_FILENO) ||
		  !isatty(STDIN_FILENO);
	if (!t.batch && !ui_available()) {
		fprintf(stderr, "sockdiag top: built without ncurses: no full-screen view; "
				"use -b (batch mode)\n");
		goto out;
	}
	t.owners = true;
	sigfd = open_signals();
	if (sigfd < 0) {
		fprintf(stderr, "sockdiag top: signals: %s\n", strerror(-sigfd));
		goto out;
	}
	r = src_open(&run.src, &o, t.owners);
	if (r < 0) {
		status = r == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
		goto out;
	}
	ck = ckeys_new(o.out.numeric);
	if (!ck || tm_new(&run.m, &t.keys, ck, src_labels(run.src)) < 0) {
		fprintf(stderr, "sockdiag top: %s\n", strerror(ENOMEM));
		goto out;
	}
	tm_sort(run.m, t.sort, t.ascending);
	tm_unconnected(run.m, o.q.states & (SDIAG_STATE_BIT(SDIAG_SS_LISTEN) |
					    SDIAG_STATE_BIT(SDIAG_SS_CLOSE)));
	r = top_refresh(&run); /* the baseline: counters to take deltas from */
	if (r < 0) {
		fprintf(stderr, "sockdiag top: %s\n", strerror(-r));
		goto out;
	}
	if (o.verbose)
		fprintf(stderr, "sockdiag top: %zu sockets at the start, counting from now\n",
			tm_nsocks(run.m));
	status = t.batch ? batch_run(&run, sigfd) : ui_run(&run, sigfd);
out:
	tm_free(run.m);
	ckeys_free(ck);
	src_free(run.src);
	sdiag_filter_free(f);
	if (sigfd >= 0)
		close(sigfd);
	opts_fini(&o);
	return status;
}
