/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sockdiag drain, between its two files: drain.c (the command: options,
 * checks, the namespaces opened, the deadline, the report) and wait.c (the
 * wait: the set of connections, dumps, events, --max-age, the namespaces
 * followed). See drain.c for how it works.
 */
#ifndef SOCKDIAG_CLI_DRAIN_DRAIN_H
#define SOCKDIAG_CLI_DRAIN_DRAIN_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "cli/opts/options.h"
#include "cli/render/output.h"
#include "util/ctab.h"

enum { EXIT_FATAL = 3 };
/* After ends that leave connections, the next dump at most this late: a
 * connection reset while its owner holds the descriptor is announced only at
 * the owner's close, and a dump does not list it (CLOSE); arrivals show too. */
#define DUMP_GAP_NS 1000000000ull

struct drain_conn {
	uint64_t cookie;   /* first: the cookie table's key */
	uint64_t first_ns; /* when a dump first saw it (CLOCK_MONOTONIC) */
	uint64_t ns;	   /* its namespace's inode (0: the one namespace) */
	struct sdiag_sock *rec; /* --max-age: its record, to destroy it by */
	bool ended;	   /* its destroy event came, or --max-age destroyed it */
	bool aged;	   /* --max-age tried to destroy it (once) */
};

struct drain_set {
	struct ctab t; /* struct drain_conn by cookie */
	size_t left;   /* not ended */
};

/* A namespace followed: its subscription and sock_diag socket. */
struct drain_ns {
	struct sdiag_netns id;	/* label "" and inode 0: the one of -N or ours */
	struct sdiag_handle *h;
	struct sdiag_watch *w;
	struct sdiag_destroyer *ds; /* --max-age */
	size_t found;		/* connections its last dump found */
	bool listed;		/* --all-netns: in the last listing */
};

struct drain {
	struct cli_opts *o;
	struct drain_ns *ns;
	size_t nns;
	bool many;   /* --all-netns or several -N: rows say their namespace */
	bool all;    /* --all-netns: listed again at each dump */
	int cur;     /* the namespace being dumped or opened */
	struct drain_set live, next; /* next: the dump being collected */
	uint64_t start_ns, now_ns;
	struct timespec timeout; /* zero: none */
	struct timespec max_age; /* zero: none */
	bool kill;
	bool aging;  /* destroys of --max-age under way */
	int rcvbuf;	   /* --rcvbuf: the event socket's, 0 = the library's */
	bool json; /* --json/--ndjson: drain's own lines on stdout */
	bool owners; /* a filter on pid, comm or user: the owners scanned per dump */
	struct sdiag_procmap *pm;
	bool tty;  /* stderr a terminal: one updating progress line */
	uint64_t events, ended, lost, dumps, resyncs, arrived, aged;
	uint64_t progress_ns; /* the last progress line */
	uint64_t dump_ns;     /* the last dump */
	bool dump_due;	      /* ends seen since: a dump at dump_ns + DUMP_GAP_NS */
	/* the final report */
	struct out *out;
	uint64_t destroyed, gone, denied, failed, listed;
	int out_err;
};

int cmd_drain(int argc, char **argv);

/* wait.c */

/* A row's namespace label: that of the namespace at hand, with several. */
const char *drain_ns_label(const struct drain *d);
/* The renderer, made at its first row. Returns 0 or a negative errno (said). */
int drain_out_ready(struct drain *d);
/* kill's per-socket report (and --max-age's destroys taken out of the set). */
int drain_result_cb(const struct sdiag_sock *s, enum sdiag_destroy_result res, int err,
		    void *userdata);
int drain_err_cb(enum sdiag_table t, int family, int err, void *userdata);
/* Follow one more namespace (run_ns_fn): subscribe first, open, check
 * --kill/--max-age. id NULL, fd -1: ours. Returns 0 or a negative errno (said). */
int drain_ns_open(void *ctx, const struct sdiag_netns *id, int fd);
/* Every namespace and set let go. */
void drain_free(struct drain *d);
/* Returns 0 drained, 1 at the deadline with connections left, or a negative
 * errno (-EINTR: a signal). */
int drain_loop(struct drain *d, int sigfd);

#endif
