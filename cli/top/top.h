/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sockdiag top, between its parts: top.c (the command, options, the loop),
 * sample.c (dumps, destroy events, owners: the kernel side), model.c (pure:
 * counters to groups), batch.c (a snapshot as a table, JSON or NDJSON, and
 * the number formats the screen shares), ui.c (the ncurses screen).
 */
#ifndef SOCKDIAG_CLI_TOP_TOP_H
#define SOCKDIAG_CLI_TOP_TOP_H

#include <poll.h>
#include <stdbool.h>
#include <time.h>

#include "cli/opts/options.h"
#include "cli/run/run.h"
#include "cli/top/model.h"

struct top_opts {
	struct cli_opts *o;		/* the shared options (query, format, -N ...) */
	struct run_sched sched;		/* --interval (default 1 s), --count (0: until
					 * stopped) */
	struct top_keys keys;		/* --by */
	enum top_col sort;		/* --sort */
	bool ascending;
	bool batch;			/* -b, or stdout not a terminal */
	bool owners;			/* look owners up (keys or the owner column need them) */
};

/* One running top: what a refresh needs, and what the last one gave. */
struct top_run {
	struct top_opts *t;
	struct top_src *src;
	struct top_model *m;
	uint64_t mono;		/* the last refresh's time, CLOCK_MONOTONIC ns */
	struct timespec when;	/* the same, CLOCK_REALTIME (the snapshot's time) */
	double seconds;		/* the interval it closed */
};

/* The subcommand (top.c; also listed in cli/commands.h, the dispatcher's table). */
int cmd_top(int argc, char **argv);

/* Dumps, events, owners, groups (top.c). Returns 0 or a negative errno. */
int top_refresh(struct top_run *r);
/* Read the destroy events that are pending (between refreshes). */
int top_events(struct top_run *r);

/* ---- sample.c: where the numbers come from ----------------------------------------------- */

struct top_src;

/* Open a handle and a destroy-event subscription in each namespace the
 * options name (ours when none). Prints one line and returns a negative
 * errno on failure; -EINVAL for a usage error (exit 2). */
int src_open(struct top_src **ret, struct cli_opts *o, bool owners);
void src_free(struct top_src *s);
/* The namespace labels, index = the model's ns (NULL: ours). */
const char *const *src_labels(const struct top_src *s);
/* pollfds for the event subscriptions: fills at most max, returns how many. */
size_t src_pollfds(const struct top_src *s, struct pollfd *p, size_t max);
/* Read every pending destroy event into the model. Returns 0 or a negative errno. */
int src_events(struct top_src *s, struct top_model *m);
/* One refresh's dumps and the events read after them into the model, between
 * tm_begin and tm_end, which the caller does. Problems are counted, and
 * their message is in src_error(); returns 0 or -ENOMEM. */
int src_dump(struct top_src *s, struct top_model *m);
/* The owners of the sockets new since the last refresh: one process scan. */
void src_owners(struct top_src *s, struct top_model *m);
/* The last problem ("" none), and whether there was any since the start. */
const char *src_error(const struct top_src *s);
bool src_failed(const struct top_src *s);
/* Events the kernel dropped (receive queue overflow) since the start. */
uint64_t src_lost(const struct top_src *s);

/* ---- batch.c ------------------------------------------------------------------------------ */

/* One snapshot in o's format to o->out.fd. Returns 0 or a negative errno. */
int batch_snapshot(const struct top_opts *t, const struct top_model *m,
		   const struct timespec *when, double seconds);

/* ---- cols.c ------------------------------------------------------------------------------- */

/* A group's value: its JSON member and, if the table shows it, its column. */
struct top_col_row {
	const char *json;	/* its JSON member */
	const char *head;	/* its column's head; NULL: JSON only */
	int width;		/* the column's width on the screen */
	int prio;		/* dropped first when the screen is narrow: the highest */
	bool left;		/* aligned left */
	enum top_col sort;	/* the --sort column it shows, TC_MAX none */
	int col;		/* its place among the columns after the keys; -1 none */
	uint64_t (*num)(const struct top_group *g, double seconds);	/* its JSON number */
	void (*text)(struct obuf *b, const struct top_group *g, double seconds); /* its cell */
	void (*jtext)(struct obuf *b, const struct top_group *g, double seconds); /* JSON not a number */
	bool null_if_zero;	/* JSON: null for 0 */
};

#define TOP_NROWS 12
#define TOP_NCOLS 9
extern const struct top_col_row top_rows[TOP_NROWS];
/* The c-th column after the keys (c < TOP_NCOLS). */
const struct top_col_row *top_col(size_t c);
/* Column c's cell for g, into the scratch buffer b: NUL-terminated, its length in len. */
const char *top_cell(struct obuf *b, const struct top_group *g, double seconds, size_t c,
		     size_t *len);
/* g's values as JSON members, each preceded by a comma: ,"rx_bytes":1,... */
void top_json_values(struct obuf *b, const struct top_group *g, double seconds);
/* Numbers as the table and the screen show them: bytes per second "0", "999", "1.23k",
 * "45.6M"; microseconds as milliseconds "0.05", "12.3", "1234" ("-": 0); a count per
 * second "0", "0.5"; the owner of a group "comm/pid", "-" when its sockets have several
 * or none. printf's digits, without printf (cli/fmt). */
void top_put_rate(struct obuf *b, double v);
void top_put_rtt(struct obuf *b, uint64_t us);
void top_put_owner(struct obuf *b, const struct top_group *g);

/* ---- ui.c --------------------------------------------------------------------------------- */

/* The full-screen view until q, SIGINT or SIGTERM. Returns an exit status. */
int ui_run(struct top_run *r, int sigfd);
/* Whether the screen was built in (ncurses found at build time). */
bool ui_available(void);

#endif
