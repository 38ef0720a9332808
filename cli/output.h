/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Renderers shared by the subcommands (list, kill, watch): an aligned table
 * like ss's, a streamed JSON array, or NDJSON. No globals: everything a
 * renderer needs is in struct out_opts, copied at out_new().
 *
 *	struct out *o;
 *	out_new(&o, &opts);
 *	for each socket: out_sock(o, s, &extra);   // extra may be NULL
 *	out_finish(o);                              // flush, close the array
 *	out_free(o);
 *
 * Memory stays flat in the number of sockets: the table buffers at most one
 * block of rows (4096 rows or 1 MiB) to compute column widths, which only
 * grow from block to block; JSON is written element by element.
 */
#ifndef SOCKDIAG_CLI_OUTPUT_H
#define SOCKDIAG_CLI_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "sockdiag.h"

enum out_format {
	OUT_TABLE,
	OUT_JSON,	/* one array, streamed */
	OUT_NDJSON,	/* one object a line */
};

/* Optional columns (table) / fields (JSON) that subcommands switch on. */
enum out_column {
	OUT_COL_TIME = 1 << 0,		/* watch: event time */
	OUT_COL_NETNS = 1 << 1,		/* --all-netns: namespace label */
	OUT_COL_RESULT = 1 << 2,	/* kill: destroyed, gone, unsupported, denied, error */
	OUT_COL_PROCESS = 1 << 3,	/* -p: owners (struct sdiag_sock.procs) */
};

struct out_opts {
	enum out_format format;
	int fd;			/* where to write (normally 1) */
	uint32_t tables;	/* tables selected: Netid column hidden when only one */
	uint32_t states;	/* states selected: State column hidden when only one */
	unsigned columns;	/* enum out_column */
	bool numeric;		/* -n: no service or netlink process names */
	bool resolve;		/* -r: host names */
	bool no_header;		/* -H */
	bool oneline;		/* -O: details on the socket's line */
	bool no_queues;		/* -Q: no Recv-Q/Send-Q columns */
	bool timers;		/* -o */
	bool ext;		/* -e */
	bool mem;		/* -m */
	bool info;		/* -i */
	bool tos;		/* --tos */
	bool sockopt;		/* --inet-sockopt */
	bool bpf;		/* -b: packet sockets' classic BPF filters */
	bool cgroup;		/* --cgroup: the cgroup path (also with -e) */
};

/* Per-socket additions; every member is optional (NULL = absent). */
struct out_extra {
	const char *result;		/* kill: the outcome for this socket */
	const char *result_detail;	/* kill: error text, e.g. strerror */
	const char *netns;		/* namespace label */
	uint64_t netns_inode;		/* its inode (JSON netns_inode), 0 = absent */
	const struct timespec *time;	/* watch: when the event was read (CLOCK_REALTIME) */
};

struct out;

/* Returns 0 or -ENOMEM. The options are copied. */
int out_new(struct out **ret, const struct out_opts *opts);
/* Render one socket. Returns 0 or a negative errno (write error, -EPIPE...). */
int out_sock(struct out *o, const struct sdiag_sock *s, const struct out_extra *extra);
/* Write what is buffered now (NDJSON: every record so far); for watch. */
int out_flush(struct out *o);
/* Write everything and close the JSON array. Returns 0 or a negative errno. */
int out_finish(struct out *o);
/* Accepts NULL. */
void out_free(struct out *o);

#endif
