// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The run loop's pieces the commands share (run.h): --interval/--count and
 * the namespace set. Before, list, kill and top each had their copy; the two
 * netns_set() copies had drifted (kill ran an empty pass on an empty set).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/run/run.h"
#include "util/argerr.h"
#include "util/textfile.h"

int run_sched_opt(struct run_sched *s, const char *cmd, int val, const char *arg)
{
	char q[TEXT_QUOTE_LEN], *end;

	switch (val) {
	case RUN_OPT_INTERVAL:
		if (opts_duration(arg, &s->interval) < 0) {
			fprintf(stderr, "sockdiag %s: --interval: '%s' is not a duration "
					"(1ms to 365 days: 500ms, 2, 1.5s, 5m, 1h)\n", cmd, TQ(q, arg));
			return -EINVAL;
		}
		return 0;
	case RUN_OPT_COUNT:
		errno = 0;
		s->count = strtoull(arg, &end, 10);
		if (errno || *end || *arg < '0' || *arg > '9' || s->count == 0) {
			fprintf(stderr, "sockdiag %s: --count: '%s' is not a positive number\n", cmd,
				TQ(q, arg));
			return -EINVAL;
		}
		return 0;
	default:
		return -ENOENT;
	}
}

bool run_netns_many(const struct cli_opts *o)
{
	return o->all_netns || opts_netns_many(o);
}

int run_netns_set(const struct cli_opts *o, const char *cmd, struct sdiag_netns **ns, size_t *n)
{
	int r;

	if (o->all_netns) {
		r = sdiag_netns_list(ns, n);
		if (r < 0)
			fprintf(stderr, "sockdiag %s: cannot list network namespaces: %s\n", cmd,
				strerror(-r));
		return r < 0 ? EXIT_RUNTIME : 0;
	}
	r = opts_netns_list(o, cmd, ns, n);
	if (r < 0)
		return r == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
	if (!*n) {
		/* Nothing to run on: an error, not an empty table (sockdiag(8), -N). */
		fprintf(stderr, "sockdiag %s: -N: no process in those cgroups, no namespace\n", cmd);
		return EXIT_RUNTIME;
	}
	return 0;
}

int run_each_netns(const char *cmd, const struct sdiag_netns *ns, size_t n, run_ns_fn fn,
		   void *ctx)
{
	int worst = 0;

	for (size_t i = 0; i < n; i++) {
		int fd = -1, r;

		r = sdiag_netns_open(ns[i].path, &fd);
		if (r < 0) {
			fprintf(stderr, "sockdiag %s: netns %s: cannot enter: %s\n", cmd, ns[i].label,
				strerror(-r));
			worst = worst ? worst : EXIT_RUNTIME;
			continue;
		}
		r = fn(ctx, &ns[i], fd);
		close(fd);
		if (r < 0)
			return r;
		if (r > worst)
			worst = r;
	}
	return worst;
}

int run_stream_done(const char *cmd, const char *noun, uint64_t n, uint64_t lost,
		    const char *more, int r)
{
	fprintf(stderr, "sockdiag %s: %llu %s%s, %llu lost%s\n", cmd, (unsigned long long)n, noun,
		n == 1 ? "" : "s", (unsigned long long)lost, more);
	if (r < 0 && r != -EPIPE)
		fprintf(stderr, "sockdiag %s: %s\n", cmd, strerror(-r));
	return r < 0 && r != -EPIPE ? EXIT_RUNTIME : EXIT_OK;
}
