/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the renderers are asked for (struct out_opts) and what a caller adds
 * to a record (struct out_extra): below the fields, which read both. */
#ifndef SOCKDIAG_CLI_OUT_TYPES_H
#define SOCKDIAG_CLI_OUT_TYPES_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

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

#endif
