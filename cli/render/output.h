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

#include "cli/fields/out_types.h"
#include "sockdiag.h"

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
