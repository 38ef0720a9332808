/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Option parsing shared by the subcommands that select sockets (list, kill,
 * watch): ss's table/family/state options with ss's defaults, the display
 * options, the output format and the trailing FILTER expression.
 *
 * A subcommand with options of its own passes them in struct opt_extra; they
 * are matched before the common ones (so kill's --all can mean "no filter"
 * rather than -a).
 */
#ifndef SOCKDIAG_CLI_OPTIONS_H
#define SOCKDIAG_CLI_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "cli/render/output.h"
#include "sockdiag.h"
#include "util/argerr.h"

/* Exit codes of every subcommand built on these options. */
enum {
	EXIT_OK = 0,
	EXIT_RUNTIME = 1,	/* the dump (or a write) failed */
	EXIT_USAGE = 2,		/* bad option, unknown table/family, bad filter */
};

#define OPTS_MAX_NETNS 64
/* What the filter parser skips between words. */
#define OPTS_BLANKS " \t\r\n"

struct cli_opts {
	struct sdiag_query q;	/* tables, states, afs, show, no_kernel_filter */
	struct out_opts out;	/* renderer options (format, -n -r -H -O -Q ...) */
	/* Tables the user named (-t, -w, --vsock, -A raw, ...): when the kernel
	 * cannot dump one of these, say so; tables that only came with a
	 * default or a group (all, inet, -4) are skipped silently. */
	uint32_t explicit_tables;
	char *filter_expr;	/* the trailing arguments joined by spaces, or -F FILE's
				 * text (newlines as spaces), or NULL */
	const char *filter_file;	/* -F FILE ("-": stdin) */
	bool processes;		/* -p */
	const char *netns;	/* the last -N NAME|PATH|pid:PID|cgroup:PATH|unit:NAME */
	const char *netns_specs[OPTS_MAX_NETNS]; /* every -N, in order */
	size_t n_netns;
	bool all_netns;		/* --all-netns */
	bool summary;		/* -s: ss -s's counts instead of sockets (list) */
	bool threads;		/* -T: owners per thread (implies processes) */
	enum sdiag_owners owners;	/* --owners: how -p and process filters find owners */
	bool verbose;		/* -v: say on stderr how things were done */
	bool owners_noted;	/* opts_scan_owners said what it cannot see */
};

/* Options a subcommand adds. handle() gets getopt's value and argument; it
 * returns 0, or -EINVAL after printing a one-line error. Long-only options
 * take values from 0x100 up to (not including) OPTS_COMMON_BASE; short ones
 * must not reuse the common letters. */
#define OPTS_COMMON_BASE 0x1000

struct opt_extra {
	const struct option *longopts;	/* terminated by an all-zero entry */
	const char *shortopts;		/* getopt letters, "" if none */
	int (*handle)(void *ctx, int val, const char *arg);
	void *ctx;
	const char *usage;		/* extra lines for --help, or NULL */
	const char *synopsis;		/* after "Usage: sockdiag CMD ", default
					 * "[OPTIONS] [FILTER]" */
	/* The groups of common options this command takes (OPTS_G_*): --help
	 * shows those only, and any other is a usage error ("option '--raw' is
	 * not accepted by top"). A new common option joins a group, and so
	 * reaches only the commands that opted in to it. */
	unsigned takes;
};

/* The common options by group (opt_extra.takes); -h and -V always. */
enum {
	OPTS_G_INET = 1u << 0,		/* -t -u -4 -6 */
	OPTS_G_FAMILY = 1u << 1,	/* -f */
	OPTS_G_TABLES = 1u << 2,	/* -w -M -S -x -0 --udplite --smc --netlink --vsock
					 * --xdp --tipc -A */
	OPTS_G_STATES = 1u << 3,	/* -a -l */
	OPTS_G_BOUND = 1u << 4,		/* -B */
	OPTS_G_DETAILS = 1u << 5,	/* -o -e -m -i --tos --cgroup */
	OPTS_G_SOCKOPT = 1u << 6,	/* --inet-sockopt -b -Z -z: details of a dump */
	OPTS_G_PROCS = 1u << 7,		/* -p -T */
	OPTS_G_LAYOUT = 1u << 8,	/* -r -O -Q */
	OPTS_G_OUTPUT = 1u << 9,	/* -n -H --json --ndjson */
	OPTS_G_SUMMARY = 1u << 10,	/* -s */
	OPTS_G_NETNS = 1u << 11,	/* -N */
	OPTS_G_DUMP = 1u << 12,		/* --all-netns --no-kernel-filter --owners -v */
	OPTS_G_FILTER = 1u << 13,	/* -F */
	OPTS_G_ALL = (1u << 14) - 1,
};

enum {
	OPTS_OK = 0,
	OPTS_EXIT = 1,	/* --help or --version was printed: exit 0 */
};

/*
 * Parse argv (argv[0] is the subcommand's name, used in messages). Returns
 * OPTS_OK, OPTS_EXIT, or -EINVAL after printing one line on stderr (exit 2),
 * or -ENOMEM. On success o->filter_expr may be set; free with opts_fini().
 */
int opts_parse(struct cli_opts *o, int argc, char **argv, const struct opt_extra *extra);
void opts_fini(struct cli_opts *o);

/*
 * Parse o->filter_expr (if any) into *ret (NULL when there is none) and let
 * its state clauses replace the default states, as ss does. On a malformed
 * expression prints "sockdiag: filter: MSG", the expression and a caret line,
 * and returns -EINVAL. Also sets o->q.filter.
 */
int opts_filter(struct cli_opts *o, struct sdiag_filter **ret);

void opts_usage(FILE *f, const char *cmd, const struct opt_extra *extra);

/*
 * Scan the socket owners the way --owners says (sdiag_procmap_scan_using)
 * and, with -v, say on stderr which way ran ("sockdiag CMD: owners: BPF
 * iterator", or "/proc walk" and why not the iterator). A /proc walk without
 * CAP_SYS_PTRACE (not root) cannot see other users' descriptors: said once,
 * on stderr. Returns 0 or the scan's negative errno; prints nothing on
 * failure (opts_owners_hint() completes the caller's line).
 */
int opts_scan_owners(struct cli_opts *o, const char *cmd, struct sdiag_procmap **ret);
/* The end of a "cannot scan processes: ERROR" line: what --owners=bpf lacks and
 * the way that needs no privilege, or "". */
const char *opts_owners_hint(const struct cli_opts *o, int err);

/* DURATION (--interval): a positive number with an optional unit ms, s (the
 * default), m or h, from 1 ms to 365 days. Returns 0 or -EINVAL. */
int opts_duration(const char *arg, struct timespec *ret);
/* The destroy-event groups (SDIAG_WATCH_*) of the TCP and UDP tables and
 * address families the options select (watch, top). */
unsigned opts_watch_groups(const struct cli_opts *o);
/* --rcvbuf BYTES of the event socket (watch, drain): 4096 up to INT32_MAX.
 * Returns 0, or -EINVAL after one line naming cmd. */
int opts_rcvbuf(const char *cmd, const char *arg, int *ret);

/*
 * Whether the -N options need the namespace list of opts_netns_list (several
 * -N, or a cgroup:/unit: one) rather than one plain namespace.
 */
bool opts_netns_many(const struct cli_opts *o);
/*
 * The namespaces of every -N (sdiag_netns_list_specs). Returns 0, or prints
 * one line naming the bad spec and returns -EINVAL (no such cgroup or unit:
 * exit 2) or another negative errno (exit 1).
 */
int opts_netns_list(const struct cli_opts *o, const char *cmd, struct sdiag_netns **ret,
		    size_t *ret_n);

/*
 * Report a table the kernel could not dump (the arguments of sdiag_error_cb):
 * -EAFNOSUPPORT/-EPROTONOSUPPORT print one line ("sockdiag: raw: not
 * supported by this kernel (no raw_diag)"), once per family of tables
 * (*reported remembers): only tables named explicitly come here, the query's
 * SDIAG_Q_SKIP_UNSUPPORTED skipping the others; any other
 * error prints one line always. Returns true for a real error (exit 1),
 * false when the table is merely unsupported.
 */
bool opts_report_table_error(const struct cli_opts *o, uint32_t *reported, enum sdiag_table t,
			     int err);

/*
 * Linux dumps TCP's bound-inactive sockets (state bit 13) from 6.8 on; older
 * kernels ignore the bit and answer nothing. When the states shown are only
 * bound-inactive (-B, or a filter's "state bound-inactive") and TCP is among
 * the tables, say so on stderr on such a kernel ("this kernel (6.1.0-57-amd64)
 * does not dump bound-inactive sockets (Linux 6.8 and later do)"), so an
 * empty listing is not taken for "none". Returns true when it said so.
 */
bool opts_note_bound_inactive(const struct cli_opts *o, const char *cmd);

/* A filter error as three lines: the message (after "FILE:LINE: " when file,
 * a -F file, is given), the line of the expression around the error (escaped,
 * at most 32 bytes either side), a marker under it. */
void opts_filter_error(FILE *f, const char *file, const char *expr,
		       const struct sdiag_filter_error *err);

#endif
