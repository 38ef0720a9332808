/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sockdiag guard: its command line. Options are parsed into a guard_cmdline
 * and handed to guard_main() (guard.c, the event loop); -N's namespace is
 * entered by guard_enter_netns() (setup.c).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/guard/guard.h"
#include "daemon/metrics/http.h"
#include "util/argerr.h"
#include "util/textfile.h"

#ifndef SOCKDIAG_SYSCONFDIR
#define SOCKDIAG_SYSCONFDIR "/etc"
#endif
#define DEFAULT_CONFIG SOCKDIAG_SYSCONFDIR "/sockdiag/guard.conf"

static void usage(FILE *f)
{
	fprintf(f, "Usage: sockdiag guard [OPTIONS]\n"
		   "A daemon: destroys the sockets a removed address or a downed link stranded.\n"
		   "Options:  -c|--config FILE (default " DEFAULT_CONFIG ";\n"
		   "          the built-in defaults when that does not exist)\n"
		   "          -N|--netns NAME|PATH|pid:PID (guard another network namespace)\n"
		   "          --all-netns (every network namespace, also those made later)\n"
		   "          --netns-dir DIR (with --all-netns: named namespaces are in DIR;\n"
		   "          repeatable; default /run/netns and /var/run/netns)\n"
		   "          --dry-run (log what would be destroyed, destroy nothing)\n"
		   "          --check-config (validate the configuration, then exit)\n"
		   "          --rtnl-rcvbuf BYTES (rtnetlink receive buffer, 4096 to 1 GiB)\n"
		   "          --metrics HOST:PORT (serve the guard's counters over HTTP)\n"
		   "          -h|--help\n"
		   "See sockdiag(8), GUARD, and sockdiag-guard.conf(5).\n");
}

int guard_parse_args(struct guard_cmdline *g, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "netns", required_argument, NULL, 'N' },
		{ "all-netns", no_argument, NULL, 'a' },
		{ "netns-dir", required_argument, NULL, 'D' },
		{ "dry-run", no_argument, NULL, 'd' },
		{ "check-config", no_argument, NULL, 'k' },
		{ "rtnl-rcvbuf", required_argument, NULL, 'b' },
		{ "metrics", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	size_t n_dirs = 0;
	int c;

	optind = 0;	/* full re-initialisation (glibc): a second parse starts clean */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:N:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			g->config_path = optarg;
			g->config_explicit = true;
			break;
		case 'N':
			if (argerr_netns_spec("guard", optarg, "NAME|PATH|pid:PID") < 0)
				return -EINVAL;
			g->netns = optarg;
			break;
		case 'a':
			g->all_netns = true;
			break;
		case 'D':
			if (!*optarg || optarg[0] != '/' || n_dirs == GUARD_NETNS_DIRS_MAX) {
				char q[TEXT_QUOTE_LEN];

				fprintf(stderr, "sockdiag guard: --netns-dir '%s': %s\n", TQ(q, optarg),
					n_dirs == GUARD_NETNS_DIRS_MAX ? "more than 8 directories"
								      : "not an absolute path");
				return -EINVAL;
			}
			g->netns_dirs[n_dirs++] = optarg;
			g->netns_dirs[n_dirs] = NULL;
			break;
		case 'd':
			g->dry_run = true;
			break;
		case 'k':
			g->check = true;
			break;
		case 'b': {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*end || v < 4096 || v > (1L << 30)) {
				char q[TEXT_QUOTE_LEN];

				fprintf(stderr, "sockdiag guard: --rtnl-rcvbuf: '%s' is not a size "
						"in bytes (4096 to 1 GiB)\n", TQ(q, optarg));
				return -EINVAL;
			}
			g->rtnl_rcvbuf = (int)v;
			break;
		}
		case 'm':
			if (http_listen_arg("guard", "metrics", optarg) < 0)
				return -EINVAL;
			g->metrics_listen = optarg;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			return argerr_getopt("guard", opts, c, argv);
		}
	}
	if (optind < argc)
		return argerr_operand("guard", argv[optind]);
	if (g->all_netns && g->netns) {
		fprintf(stderr, "sockdiag guard: --all-netns does not go with -N\n");
		return -EINVAL;
	}
	if (n_dirs && !g->all_netns) {
		fprintf(stderr, "sockdiag guard: --netns-dir goes with --all-netns only\n");
		return -EINVAL;
	}
	return 0;
}

int cmd_guard(int argc, char **argv)
{
	struct guard_cmdline opt = { .config_path = DEFAULT_CONFIG };
	int r = guard_parse_args(&opt, argc, argv);

	if (r)
		return r > 0 ? 0 : 2;
	return guard_main(&opt);
}
