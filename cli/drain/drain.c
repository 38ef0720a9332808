// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sockdiag drain [OPTIONS] FILTER: wait until no connection matches, then
 * exit 0; at --timeout, list what is left (exit 1) or, with --kill, destroy
 * it with kill's per-socket report.
 *
 * Connections are TCP sockets (-u adds UDP) in any state but LISTEN,
 * TIME-WAIT, CLOSE and SYN-RECV: listeners and TIME-WAIT never count.
 * This file is the command; wait.c the wait (drain.h between them).
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
 * an end or a crossing, at the confirmation). Each entry then keeps its
 * record (sdiag_sock_dup), and a timer at the earliest crossing destroys
 * every connection at or past D from those records, at once (a dump can take
 * long on a host with many sockets), reported as kill reports; a dump
 * follows (DUMP_GAP_NS), which sees what arrived.
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
 * gone), 1 timeout with connections left (or --kill or --max-age could not
 * destroy one), runtime error or interrupted by a signal, 2 usage, 3 --kill
 * or --max-age without CAP_NET_ADMIN or CONFIG_INET_DIAG_DESTROY (checked at
 * the start). Waiting
 * needs no privilege: the kernel lets anyone subscribe to the events of
 * its namespace.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/signalfd.h>

#include "cli/drain/drain.h"
#include "cli/run/run.h"
#include "util/argerr.h"
#include "util/clock.h"
#include "util/sigfd.h"
#include "util/textfile.h"

enum { OPT_TIMEOUT = 0x100, OPT_KILL, OPT_RCVBUF, OPT_MAX_AGE };

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

static int left_cb(const struct sdiag_sock *s, void *userdata)
{
	struct drain *d = userdata;
	struct out_extra x = { .netns = drain_ns_label(d) };

	d->listed++;
	if (!d->out_err)
		d->out_err = out_sock(d->out, s, &x);
	return 0;
}

/* At the deadline: list what is left, or destroy it, in every namespace.
 * Returns the exit status. */
static int at_deadline(struct drain *d)
{
	int r = drain_out_ready(d);

	if (r < 0)
		return EXIT_RUNTIME;
	for (size_t i = 0; i < d->nns && r >= 0; i++) {
		d->cur = (int)i;
		r = d->kill ? sdiag_kill(d->ns[i].h, &d->o->q, NULL, drain_result_cb, drain_err_cb, d)
			    : sdiag_dump(d->ns[i].h, &d->o->q, left_cb, drain_err_cb, d);
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
		r = drain_ns_open(d, NULL, fd);
		if (fd >= 0)
			close(fd);
	} else {
		r = run_netns_set(d->o, "drain", &set, &n);
		if (r)
			return r;
		r = run_each_netns("drain", set, n, drain_ns_open, d);
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
	ctab_init(&d.live.t, sizeof(struct drain_conn));
	ctab_init(&d.next.t, sizeof(struct drain_conn));
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
	drain_free(&d);
	sdiag_filter_free(f);
	if (sigfd >= 0)
		close(sigfd);
	opts_fini(&o);
	return status;
}
