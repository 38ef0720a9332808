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
 *
 * Exit status: 0 stopped by a signal or --count reached, 1 runtime error,
 * 2 usage or filter error.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/signalfd.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/render/output.h"
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

	if (val == OPT_RCVBUF) {
		long v;

		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno || *end || v < 4096 || v > INT32_MAX) {
			char q[TEXT_QUOTE_LEN];

			fprintf(stderr, "sockdiag watch: --rcvbuf: '%s' is not a size in bytes "
					"(>= 4096)\n", TQ(q, arg));
			return -EINVAL;
		}
		w->rcvbuf = (int)v;
		return 0;
	}
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

static unsigned groups_for(const struct cli_opts *o)
{
	uint32_t afs = o->q.afs ? o->q.afs : SDIAG_AF_ALL;
	unsigned g = 0;

	if (o->q.tables & SDIAG_TABLE_BIT(SDIAG_T_TCP))
		g |= (afs & SDIAG_AF_INET ? SDIAG_WATCH_TCP4 : 0) |
		     (afs & SDIAG_AF_INET6 ? SDIAG_WATCH_TCP6 : 0);
	if (o->q.tables & SDIAG_TABLE_BIT(SDIAG_T_UDP))
		g |= (afs & SDIAG_AF_INET ? SDIAG_WATCH_UDP4 : 0) |
		     (afs & SDIAG_AF_INET6 ? SDIAG_WATCH_UDP6 : 0);
	return g;
}

static int open_signals(void)
{
	sigset_t mask;
	int fd;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return -errno;
	fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

/* Returns 0 when stopped normally, a negative errno on failure. */
static int watch_loop(struct watch_ctx *w, struct sdiag_watch *sw, const struct sdiag_filter *f,
		      int sigfd)
{
	struct pollfd p[2] = {
		{ .fd = sdiag_watch_fd(sw), .events = POLLIN },
		{ .fd = sigfd, .events = POLLIN },
	};
	uint64_t lost;
	int r;

	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (p[1].revents & POLLIN)
			return 0;
		clock_gettime(CLOCK_REALTIME, &w->now);
		r = sdiag_watch_read(sw, f, event_cb, w, &lost);
		if (r < 0)
			return w->out_err ? w->out_err : r;
		if (lost) {
			w->lost += lost;
			fprintf(stderr, "sockdiag watch: %llu event%s lost (receive queue overflow)\n",
				(unsigned long long)lost, lost == 1 ? "" : "s");
		}
		r = out_flush(w->out);
		if (r < 0)
			return r;
		if (w->limit && w->count >= w->limit)
			return 0;
	}
}

int cmd_watch(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "count", required_argument, NULL, OPT_COUNT },
		{ "rcvbuf", required_argument, NULL, OPT_RCVBUF },
		{ 0 },
	};
	struct watch_ctx w = { .extra = { .time = &w.now } };
	/* The kernel announces TCP and UDP only, with no owner and no state to choose. */
	static const char *const refuse[] = {
		"raw", "mptcp", "sctp", "udplite", "smc", "unix", "packet", "netlink", "vsock",
		"xdp", "tipc", "query", "socket", "all", "listening", "bound-inactive",
		"processes", "owners", "verbose", "all-netns", "no-kernel-filter", "inet-sockopt",
		"summary", "threads", "bpf", "context", "contexts", NULL,
	};
	const struct opt_extra extra = {
		.longopts = longopts,
		.shortopts = "",
		.handle = watch_opt,
		.ctx = &w,
		.refuse = refuse,
		.usage = "Watch:    --count N (stop after N events)\n"
			 "          --rcvbuf BYTES (receive buffer, default 32 MiB)\n",
	};
	struct sdiag_filter *f = NULL;
	struct sdiag_watch *sw = NULL;
	struct cli_opts o;
	int r, nsfd = -1, sigfd = -1, status = EXIT_RUNTIME;
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
	groups = groups_for(&o);
	if (!groups || (o.explicit_tables & ~(SDIAG_TABLE_BIT(SDIAG_T_TCP) |
					       SDIAG_TABLE_BIT(SDIAG_T_UDP)))) {
		fprintf(stderr, "sockdiag watch: the kernel reports only TCP and UDP socket "
				"destruction; select -t and/or -u\n");
		status = EXIT_USAGE;
		goto out;
	}
	if (opts_netns_many(&o)) {
		fprintf(stderr, "sockdiag watch: one -N NAME|PATH|pid:PID only\n");
		status = EXIT_USAGE;
		goto out;
	}
	if (o.netns && (r = sdiag_netns_open(o.netns, &nsfd)) < 0) {
		argerr_netns("watch", o.netns, r);
		goto out;
	}
	r = sdiag_watch_open(&sw, groups, nsfd);
	if (r < 0) {
		fprintf(stderr, "sockdiag watch: cannot subscribe to socket-destroy events: %s\n",
			strerror(-r));
		goto out;
	}
	if (w.rcvbuf && (r = sdiag_watch_set_rcvbuf(sw, w.rcvbuf)) < 0) {
		fprintf(stderr, "sockdiag watch: --rcvbuf: %s\n", strerror(-r));
		goto out;
	}
	sigfd = open_signals();
	o.out.columns |= OUT_COL_TIME;
	if (sigfd < 0 || out_new(&w.out, &o.out) < 0)
		goto out;
	r = watch_loop(&w, sw, f, sigfd);
	if (out_finish(w.out) < 0 && r == 0)
		r = -EIO;
	fprintf(stderr, "sockdiag watch: %llu event%s, %llu lost\n", (unsigned long long)w.count,
		w.count == 1 ? "" : "s", (unsigned long long)w.lost);
	if (r < 0 && r != -EPIPE)
		fprintf(stderr, "sockdiag watch: %s\n", strerror(-r));
	status = r < 0 && r != -EPIPE ? EXIT_RUNTIME : EXIT_OK;
out:
	out_free(w.out);
	sdiag_watch_close(sw);
	sdiag_filter_free(f);
	if (nsfd >= 0)
		close(nsfd);
	if (sigfd >= 0)
		close(sigfd);
	opts_fini(&o);
	return status;
}
