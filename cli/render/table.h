/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The aligned table (out_table.c), private to the renderers of cli/render/. */
#ifndef SOCKDIAG_CLI_TABLE_H
#define SOCKDIAG_CLI_TABLE_H

#include "cli/fields/field.h"

struct table;
struct fplan;

int table_new(struct table **ret, const struct out_opts *opts, struct names *names,
	      const struct fplan *plan, struct obuf *ob);
int table_sock(struct table *t, const struct sdiag_sock *s, const struct out_extra *x);
/* Render buffered rows into ob and write it. */
int table_flush(struct table *t);
void table_free(struct table *t);

#endif
