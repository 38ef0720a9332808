/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sockdiag guard: close sockets stranded by a network change. The event loop
 * and what it drives; the decisions are in daemon/guard/core/.
 *
 *   cmd.c       the command line -> struct guard_cmdline
 *   setup.c     namespace, capabilities, signals
 *   loop.h      struct guard, the registry of event sources, the action path
 *   guard.c     the event loop over the registered sources; the address/link
 *               policy: rtnetlink + signalfd, resync, grace
 *   act.c       the one action path (destroy, tally, conntrack, metrics, log),
 *               the source registry, the conntrack handle
 *   rtnl.c      rtnetlink sockets: link/address dumps, events, the drain after overflow
 *   route_nl.c  RTM_GETROUTE lookups (cached per pass), route-event subscription
 *   routes.c    the route policy: a pass after route events settle
 *   reap.c      the reap policy: filters run every reap-interval, capped per pass
 *   backends.c  the dead-backends policy: the file watched, a reconcile pass
 *   metrics.c   --metrics: the loop's counters over HTTP
 *   all.c       --all-netns: a supervisor, one guard process per namespace
 */
#ifndef SOCKDIAG_GUARD_H
#define SOCKDIAG_GUARD_H

#include "daemon/guard/core/core.h"

/* The sockets an event can concern: TCP and UDP (UDP-Lite too), both families. */
#define GUARD_TABLES                                                                               \
	(SDIAG_TABLE_BIT(SDIAG_T_TCP) | SDIAG_TABLE_BIT(SDIAG_T_UDP) |                             \
	 SDIAG_TABLE_BIT(SDIAG_T_UDPLITE))

/* ---- the daemon ------------------------------------------------------------------------ */

/* The command line, as cmd.c parsed it. */
#define GUARD_NETNS_DIRS_MAX 8

struct guard_cmdline {
	const char *config_path;	/* -c, else SYSCONFDIR/sockdiag/guard.conf */
	bool config_explicit;		/* -c given: a missing file is an error */
	bool dry_run;			/* --dry-run */
	bool check;			/* --check-config */
	bool all_netns;			/* --all-netns: one child guard per namespace */
	int rtnl_rcvbuf;		/* --rtnl-rcvbuf, 0 = default */
	const char *netns;		/* -N, or NULL: the namespace it runs in */
	const char *metrics_listen;	/* --metrics HOST:PORT, or NULL */
	/* --netns-dir (repeated; NULL-terminated): where --all-netns looks for
	 * named namespaces; none given: /run/netns and /var/run/netns. */
	const char *netns_dirs[GUARD_NETNS_DIRS_MAX + 1];
};

/* Parse the options after `guard` into *g (its config_path preset to the default).
 * Returns 0, 1 after --help (printed), or -EINVAL after one line on stderr. */
int guard_parse_args(struct guard_cmdline *g, int argc, char **argv);
int cmd_guard(int argc, char **argv);
/* The daemon (guard.c), from a parsed command line. Returns the exit status. */
int guard_main(const struct guard_cmdline *opt);

/* Its set-up (setup.c). Why it could never destroy a socket (r from
 * sdiag_destroy_check), as a sentence. */
const char *guard_destroy_problem(int r);
/* Keep CAP_NET_ADMIN (if held) and nothing else: 0 or -EPERM. */
int guard_drop_capabilities(void);
/* SIGHUP, SIGINT and SIGTERM blocked and read from the returned signalfd, or -errno. */
int guard_open_signals(void);
/* setns() into -N's namespace; a one-line error on stderr. */
int guard_enter_netns(const char *spec);

#endif
