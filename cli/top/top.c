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

enum { OPT_BY = 0x100, OPT_SORT, OPT_BATCH = 'b' };

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
	char q[TEXT_QUOTE_LEN];
	int c;

	switch (val) {
	case OPT_BATCH:
		t->batch = true;
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
		c = run_sched_opt(&t->sched, "top", val, arg);
		return c == -ENOENT ? -EINVAL : c;
	}
}

int top_events(struct top_run *r)
{
	return src_events(r->src, r->m);
}

int top_refresh(struct top_run *r)
{
	uint64_t m0, m1, r0, r1, mono;
	bool first = !r->mono;
	int e;

	m0 = mono_ns();
	r0 = real_ns();
	tm_begin(r->m);
	e = src_dump(r->src, r->m);
	if (e < 0)
		return e;
	/* The counters were read during the dump: its middle is the snapshot's time
	 * (the process scan for new owners comes after it). */
	m1 = mono_ns();
	r1 = real_ns();
	mono = m0 + (m1 - m0) / 2;
	src_owners(r->src, r->m);
	r->seconds = first ? 0 : (double)(mono - r->mono) / 1e9;
	r->mono = mono;
	r->when = ts_from_ns(r0 + (r1 > r0 ? (r1 - r0) / 2 : 0));
	return tm_end(r->m, r->seconds);
}

static int open_signals(void)
{
	/* SIGQUIT (Ctrl-\) stops it too: its default, a core dump, left the
	 * terminal on the alternate screen with the cursor hidden. */
	return sigfd_open((const int[]){ SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH, 0 },
			  SFD_NONBLOCK);
}

/* Wait until `due`, reading destroy events as they come.
 * Returns 1 when a stop signal came, 0 at the due time, <0 on error. */
static int wait_until(struct top_run *r, int sigfd, struct deadline due)
{
	struct pollfd p[65];
	size_t n;

	p[0] = (struct pollfd){ .fd = sigfd, .events = POLLIN };
	n = 1 + src_pollfds(r->src, p + 1, 64);
	for (;;) {
		int e;

		if (!deadline_left_ns(due))
			return 0;
		e = poll(p, n, deadline_poll_ms(due));
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
	const struct run_sched *s = &r->t->sched;
	char said[256] = "";
	uint64_t start;
	int e = 0;

	/* The schedule starts once the baseline is taken (its owner scan can be slow):
	 * the first snapshot is a whole interval later. */
	start = mono_ns();
	for (uint64_t n = 1; !s->count || n <= s->count; n++) {
		e = wait_until(r, sigfd, run_due(s, start, n));
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

int cmd_top(int argc, char **argv)
{
	static const struct option longopts[] = {
		RUN_SCHED_LONGOPTS,
		{ "by", required_argument, NULL, OPT_BY },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "batch", no_argument, NULL, OPT_BATCH },
		{ 0 },
	};
	struct top_opts t = { .sched.interval = { 1, 0 }, .sort = TC_RX };
	const struct opt_extra extra = {
		.longopts = longopts,
		.shortopts = "b",
		.handle = top_opt,
		.ctx = &t,
		/* TCP and UDP, their counters: no other table, no detail it does not show. */
		.takes = OPTS_G_INET | OPTS_G_STATES | OPTS_G_OUTPUT | OPTS_G_NETNS |
			 OPTS_G_DUMP | OPTS_G_FILTER,
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
