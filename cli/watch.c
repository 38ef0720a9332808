// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sockdiag watch [OPTIONS] [FILTER]: print socket-destroy events as they come.
 *
 * The kernel announces the end of TCP and UDP sockets, IPv4 and IPv6 (the
 * only sock_diag multicast groups there are), so -t/-u/-4/-6 pick groups and
 * the filter selects among the events. State options are ignored: every
 * event reports the socket's final state, normally CLOSE.
 * When events come faster than they are read the kernel drops some; each
 * loss is reported on stderr with its exact count and watching goes on.
 * -N as list takes it: one namespace, or several (-N repeated, cgroup:PATH,
 * unit:NAME: the namespaces found at start), each with a subscription of its
 * own and its events labelled (Netns column, "netns" member).
 *
 * Exit status: 0 stopped by a signal or --count reached, 1 runtime error,
 * 2 usage or filter error.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/signalfd.h>

#include "cli/commands.h"
#include "cli/opts/options.h"
#include "cli/render/output.h"
#include "cli/run/run.h"
#include "util/sigfd.h"
#include "util/textfile.h"

struct watch_ctx {
	struct out *out;
	struct out_extra extra;
	struct timespec now;
	uint64_t count;		/* events printed */
	uint64_t limit;		/* --count: stop after this many, 0 = never */
	uint64_t lost;
	int rcvbuf;		/* --rcvbuf, 0 = the library's default */
	int out_err;
};

enum { OPT_COUNT = 0x100, OPT_RCVBUF };

static int watch_opt(void *ctx, int val, const char *arg)
{
	struct watch_ctx *w = ctx;
	char *end;

	if (val == OPT_RCVBUF)
		return opts_rcvbuf("watch", arg, &w->rcvbuf);
	if (val != OPT_COUNT)
		return -EINVAL;
	errno = 0;
	/* strtoull takes "-1" as 2^64-1: digits only. */
	w->limit = arg[0] >= '0' && arg[0] <= '9' ? strtoull(arg, &end, 10) : 0;
	if (errno || w->limit == 0 || *end) {
		char q[TEXT_QUOTE_LEN];

		fprintf(stderr, "sockdiag watch: --count: '%s' is not a positive number\n",
			TQ(q, arg));
		return -EINVAL;
	}
	return 0;
}

static int event_cb(const struct sdiag_sock *s, void *userdata)
{
	struct watch_ctx *w = userdata;
	int r;

	if (w->limit && w->count >= w->limit)
		return 0;
	r = out_sock(w->out, s, &w->extra);
	if (r < 0) {
		w->out_err = r;
		return r;
	}
	w->count++;
	return 0;
}

static int open_signals(void)
{
	return sigfd_open((const int[]){ SIGINT, SIGTERM, SIGHUP, 0 }, SFD_NONBLOCK);
}

/* The subscriptions: one per namespace (labels NULL: just ours or -N's). */
struct watches {
	struct sdiag_watch **w;
	const struct sdiag_netns *ns;	/* several: ws->n of them, labelled; else NULL */
	size_t n;
};

/* Returns 0 when stopped normally, a negative errno on failure. */
static int watch_loop(struct watch_ctx *w, const struct watches *ws,
		      const struct sdiag_filter *f, int sigfd)
{
	struct pollfd *p = calloc(ws->n + 1, sizeof(*p));
	uint64_t lost;
	int r = 0;

	if (!p)
		return -ENOMEM;
	for (size_t i = 0; i < ws->n; i++)
		p[i] = (struct pollfd){ .fd = sdiag_watch_fd(ws->w[i]), .events = POLLIN };
	p[ws->n] = (struct pollfd){ .fd = sigfd, .events = POLLIN };
	for (;;) {
		if (poll(p, ws->n + 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (p[ws->n].revents & POLLIN)
			break;
		clock_gettime(CLOCK_REALTIME, &w->now);
		for (size_t i = 0; i < ws->n && r >= 0; i++) {
			if (!(p[i].revents & (POLLIN | POLLERR)))
				continue;
			w->extra.netns = ws->ns ? ws->ns[i].label : NULL;
			w->extra.netns_inode = ws->ns ? ws->ns[i].inode : 0;
			r = sdiag_watch_read(ws->w[i], f, event_cb, w, &lost);
			if (r < 0)
				r = w->out_err ? w->out_err : r;
			else if (lost) {
				w->lost += lost;
				fprintf(stderr, "sockdiag watch: %llu event%s lost (receive queue "
						"overflow)%s%s\n", (unsigned long long)lost,
					lost == 1 ? "" : "s", ws->ns ? " in netns " : "",
					ws->ns ? ws->ns[i].label : "");
			}
		}
		if (r >= 0)
			r = out_flush(w->out);
		if (r < 0 || (w->limit && w->count >= w->limit))
			break;
	}
	free(p);
	return r < 0 ? r : 0;
}

/* One subscription per namespace of -N (several, cgroup:, unit:), or one in
 * ours or -N's. Returns 0 or an exit status after one line on stderr. */
static int watches_open(struct watches *ws, const struct cli_opts *o, unsigned groups,
			int rcvbuf, struct sdiag_netns **ns_out)
{
	struct sdiag_netns *ns = NULL;
	size_t n = 1;
	int r, nsfd = -1;

	if (opts_netns_many(o)) {
		r = opts_netns_list(o, "watch", &ns, &n);
		if (r < 0)
			return r == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
		*ns_out = ns;
		if (!n) {
			fprintf(stderr, "sockdiag watch: -N: no process in those cgroups, "
					"no namespace to watch\n");
			return EXIT_RUNTIME;
		}
	}
	ws->w = calloc(n, sizeof(*ws->w));
	if (!ws->w)
		return EXIT_RUNTIME;
	for (size_t i = 0; i < n; i++) {
		const char *spec = ns ? ns[i].path : o->netns;

		if (ns) {
			nsfd = open(spec, O_RDONLY | O_CLOEXEC);
			r = nsfd < 0 ? -errno : 0;
		} else {
			r = spec ? sdiag_netns_open(spec, &nsfd) : 0;
		}
		if (r < 0) {
			if (ns)
				fprintf(stderr, "sockdiag watch: netns %s: cannot enter: %s\n",
					ns[i].label, strerror(-r));
			else
				argerr_netns("watch", spec, r);
			return EXIT_RUNTIME;
		}
		r = sdiag_watch_open(&ws->w[i], groups, nsfd);
		if (nsfd >= 0)
			close(nsfd);
		nsfd = -1;
		ws->n = i + (r >= 0);
		ws->ns = ns;
		if (r < 0) {
			fprintf(stderr, "sockdiag watch: cannot subscribe to socket-destroy events%s%s: "
					"%s\n", ns ? " in netns " : "", ns ? ns[i].label : "",
				strerror(-r));
			return EXIT_RUNTIME;
		}
		if (rcvbuf && (r = sdiag_watch_set_rcvbuf(ws->w[i], rcvbuf)) < 0) {
			fprintf(stderr, "sockdiag watch: --rcvbuf: %s\n", strerror(-r));
			return EXIT_RUNTIME;
		}
	}
	return 0;
}

int cmd_watch(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "count", required_argument, NULL, OPT_COUNT },
		{ "rcvbuf", required_argument, NULL, OPT_RCVBUF },
		{ 0 },
	};
	struct watch_ctx w = { .extra = { .time = &w.now } };
	const struct opt_extra extra = {
		.longopts = longopts,
		.shortopts = "",
		.handle = watch_opt,
		.ctx = &w,
		/* The kernel announces TCP and UDP only, with no owner and no state to
		 * choose. */
		.takes = OPTS_G_INET | OPTS_G_FAMILY | OPTS_G_DETAILS | OPTS_G_LAYOUT |
			 OPTS_G_OUTPUT | OPTS_G_NETNS | OPTS_G_FILTER,
		.usage = "Watch:    --count N (stop after N events)\n"
			 "          --rcvbuf BYTES (receive buffer, default 32 MiB)\n",
	};
	struct sdiag_filter *f = NULL;
	struct watches ws = { 0 };
	struct sdiag_netns *ns = NULL;
	struct cli_opts o;
	int r, sigfd = -1, status = EXIT_RUNTIME;
	unsigned groups;

	r = opts_parse(&o, argc, argv, &extra);
	if (r == OPTS_EXIT)
		return EXIT_OK;
	if (r < 0)
		return EXIT_USAGE;
	if (o.all_netns || o.processes) {
		fprintf(stderr, "sockdiag watch: %s is not supported for events\n",
			o.all_netns ? "--all-netns" : "-p");
		status = EXIT_USAGE;
		goto out;
	}
	if (opts_filter(&o, &f) < 0) {
		status = EXIT_USAGE;
		goto out;
	}
	if (sdiag_filter_needs_procs(f)) {
		/* A destroyed socket has no descriptor left: pid/comm/user never match. */
		fprintf(stderr, "sockdiag watch: pid, comm and user are not supported for events "
				"(a destroyed socket has no owner)\n");
		status = EXIT_USAGE;
		goto out;
	}
	groups = opts_watch_groups(&o);
	if (!groups || (o.explicit_tables & ~(SDIAG_TABLE_BIT(SDIAG_T_TCP) |
					       SDIAG_TABLE_BIT(SDIAG_T_UDP)))) {
		fprintf(stderr, "sockdiag watch: the kernel reports only TCP and UDP socket "
				"destruction; select -t and/or -u\n");
		status = EXIT_USAGE;
		goto out;
	}
	status = watches_open(&ws, &o, groups, w.rcvbuf, &ns);
	if (status)
		goto out;
	status = EXIT_RUNTIME;
	sigfd = open_signals();
	o.out.columns |= OUT_COL_TIME | (ws.ns ? OUT_COL_NETNS : 0);
	if (sigfd < 0 || out_new(&w.out, &o.out) < 0)
		goto out;
	r = watch_loop(&w, &ws, f, sigfd);
	if (out_finish(w.out) < 0 && r == 0)
		r = -EIO;
	status = run_stream_done("watch", "event", w.count, w.lost, "", r);
out:
	out_free(w.out);
	for (size_t i = 0; i < ws.n; i++)
		sdiag_watch_close(ws.w[i]);
	free(ws.w);
	free(ns);
	sdiag_filter_free(f);
	if (sigfd >= 0)
		close(sigfd);
	opts_fini(&o);
	return status;
}
