// SPDX-License-Identifier: GPL-2.0-or-later
/* The renderer front end: picks table, JSON or NDJSON (see output.h). */
#include <errno.h>
#include <stdlib.h>

#include "cli/render/output.h"
#include "cli/render/table.h"

#define OUT_BUF (512u << 10)
#define JSON_CHUNK (64u << 10)
#define NDJSON_BLOCK 4096	/* records per flush */

struct out {
	struct out_opts opts;
	struct obuf ob;
	struct names *names;
	struct fplan *plan;
	struct table *table;
	uint64_t count;
	bool finished;
};

int out_new(struct out **ret, const struct out_opts *opts)
{
	struct out *o = calloc(1, sizeof(*o));
	int r = -ENOMEM;

	if (!o)
		return -ENOMEM;
	o->opts = *opts;
	o->names = names_new(opts->resolve);
	if (!o->names || obuf_init(&o->ob, OUT_BUF, opts->fd) < 0)
		goto fail;
	r = fplan_new(&o->plan, &o->opts);
	if (r < 0)
		goto fail;
	if (opts->format == OUT_TABLE) {
		r = table_new(&o->table, &o->opts, o->names, o->plan, &o->ob);
		if (r < 0)
			goto fail;
	}
	*ret = o;
	return 0;
fail:
	out_free(o);
	return r;
}

int out_sock(struct out *o, const struct sdiag_sock *s, const struct out_extra *extra)
{
	struct obuf *b = &o->ob;

	switch (o->opts.format) {
	case OUT_TABLE:
		o->count++;
		return table_sock(o->table, s, extra);
	case OUT_JSON:
		obuf_puts(b, o->count ? ",\n" : "[\n");
		fplan_json(o->plan, o->names, b, s, extra);
		o->count++;
		if (b->len >= JSON_CHUNK)
			return obuf_flush(b);
		break;
	case OUT_NDJSON:
		fplan_json(o->plan, o->names, b, s, extra);
		obuf_putc(b, '\n');
		o->count++;
		if (b->len >= JSON_CHUNK || o->count % NDJSON_BLOCK == 0)
			return obuf_flush(b);
		break;
	}
	return b->err;
}

int out_flush(struct out *o)
{
	if (o->opts.format == OUT_TABLE)
		return table_flush(o->table);
	return obuf_flush(&o->ob);
}

int out_finish(struct out *o)
{
	if (o->finished)
		return o->ob.err;
	o->finished = true;
	if (o->opts.format == OUT_JSON)
		obuf_puts(&o->ob, o->count ? "\n]\n" : "[]\n");
	return out_flush(o);
}

void out_free(struct out *o)
{
	if (!o)
		return;
	table_free(o->table);
	fplan_free(o->plan);
	names_free(o->names);
	obuf_fini(&o->ob);
	free(o);
}
