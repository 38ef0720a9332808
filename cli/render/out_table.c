// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The aligned table, with ss's columns and alignment rules (iproute2 6.1):
 * every column is as wide as its widest field, the header included when it
 * is printed; each field is padded to its column's width, the last one too
 * (so lines end in the padding ss writes); Recv-Q and Send-Q are at least 6
 * wide (ss prints them with "%-6d", also under -H); the owners (-p) and the
 * detail text (-e, -o, -i, ...) make up one column, headed "Process", which
 * follows the peer's port without a space: C_PROCESS and C_EXT are laid out
 * as one field. `diff` against ss's output is then quiet where the data agree.
 *
 * Rows are rendered into an arena, field by field, and kept until a block is
 * full (4096 rows or 1 MiB of text). Then the block's column widths are
 * merged into the running widths (which only grow, so a column never shifts
 * left between blocks, as in ss), the rows are padded into the output buffer
 * and written in large chunks. Memory is bounded by the block size.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "cli/render/output.h"
#include "cli/render/table.h"

#define BLOCK_ROWS 4096
#define BLOCK_BYTES (1u << 20)
#define WRITE_CHUNK (256u << 10)

static const struct {
	const char *header;
	bool right;		/* right-aligned */
	const char *delim;	/* printed before the column unless it is the first */
} cols[C_MAX] = {
	[C_TIME] = { "Time", false, " " },
	[C_NETNS] = { "Netns", false, " " },
	[C_RESULT] = { "Result", false, " " },
	[C_NETID] = { "Netid", false, " " },
	[C_STATE] = { "State", false, " " },
	[C_RECVQ] = { "Recv-Q", false, " " },
	[C_SENDQ] = { "Send-Q", false, " " },
	[C_LADDR] = { "Local Address:", true, " " },
	[C_LPORT] = { "Port", false, "" },
	[C_PADDR] = { "Peer Address:", true, " " },
	[C_PPORT] = { "Port", false, "" },
	[C_PROCESS] = { "Process", false, "" },	/* with C_EXT: one field */
	[C_EXT] = { "", false, "" },
};

/* ss prints the queues with "%-6d": never narrower than 6. */
#define QUEUE_MIN_WIDTH 6

struct table {
	const struct out_opts *opts;
	struct names *names;
	const struct fplan *plan;
	struct obuf *ob;	/* the output */
	struct obuf arena;	/* fields of the buffered rows */
	uint32_t *offs;		/* per row: C_MAX + 1 field boundaries in arena */
	size_t nrows;
	bool visible[C_MAX];
	size_t width[C_MAX];	/* running widths, monotone */
	bool spread_done;	/* tty: spare width distributed once */
	int vis[C_MAX];		/* visible columns but C_EXT, in order */
	int nvis;
	bool procs;		/* -p: the owners in the Process column */
	size_t line_max;	/* a row's padding and delimiters take at most this */
	/* ss's names and their lengths, looked up once */
	const char *state[SDIAG_SS_MAX];
	uint8_t state_len[SDIAG_SS_MAX];
	const char *netid[SDIAG_T_MAX];
	uint8_t netid_len[SDIAG_T_MAX];
};

static bool one_bit(uint32_t v)
{
	return v && !(v & (v - 1));
}

int table_new(struct table **ret, const struct out_opts *opts, struct names *names,
	      const struct fplan *plan, struct obuf *ob)
{
	struct table *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->opts = opts;
	t->names = names;
	t->plan = plan;
	t->ob = ob;
	t->offs = malloc(BLOCK_ROWS * (C_MAX + 1) * sizeof(*t->offs));
	if (!t->offs || obuf_init(&t->arena, BLOCK_BYTES + 64 * 1024, -1) < 0) {
		table_free(t);
		return -ENOMEM;
	}
	for (int c = 0; c < C_MAX; c++)
		t->visible[c] = true;
	t->visible[C_TIME] = opts->columns & OUT_COL_TIME;
	t->visible[C_NETNS] = opts->columns & OUT_COL_NETNS;
	t->visible[C_RESULT] = opts->columns & OUT_COL_RESULT;
	t->procs = opts->columns & OUT_COL_PROCESS;
	t->visible[C_NETID] = !one_bit(opts->tables);
	t->visible[C_STATE] = !one_bit(opts->states);
	t->visible[C_RECVQ] = t->visible[C_SENDQ] = !opts->no_queues;
	for (int c = 0; c < C_EXT; c++)
		if (t->visible[c])
			t->vis[t->nvis++] = c;
	if (t->visible[C_RECVQ])
		t->width[C_RECVQ] = t->width[C_SENDQ] = QUEUE_MIN_WIDTH;
	for (int i = 0; i < SDIAG_SS_MAX; i++) {
		t->state[i] = sdiag_state_name((enum sdiag_state)i);
		t->state_len[i] = (uint8_t)strlen(t->state[i]);
	}
	for (int i = 0; i < SDIAG_T_MAX; i++) {
		t->netid[i] = sdiag_table_netid((enum sdiag_table)i);
		t->netid_len[i] = t->netid[i] ? (uint8_t)strlen(t->netid[i]) : 0;
	}

	if (!opts->no_header) {
		uint32_t *o = t->offs;

		for (int c = 0; c < C_MAX; c++) {
			o[c] = (uint32_t)t->arena.len;
			if (t->visible[c])
				obuf_puts(&t->arena, cols[c].header);
		}
		o[C_MAX] = (uint32_t)t->arena.len;
		t->nrows = 1;
	}
	*ret = t;
	return 0;
}

void table_free(struct table *t)
{
	if (!t)
		return;
	obuf_fini(&t->arena);
	free(t->offs);
	free(t);
}

/* ---- fields ------------------------------------------------------------------ */

/* Column c from its row, when the column is shown (an empty cell when the
 * row has nothing to say). */
static void put_cell(struct table *t, enum col c, const struct sdiag_sock *s,
		     const struct out_extra *x, uint32_t *o)
{
	o[c] = (uint32_t)t->arena.len;
	if (t->visible[c])
		fplan_cell(t->plan, t->names, &t->arena, s, x, c, o + c);
}

/* The endpoint columns, from the family's row (fields_ep.c). */
static void put_endpoints(struct table *t, const struct sdiag_sock *s, uint32_t *o)
{
	struct obuf *a = &t->arena;

	o[C_LADDR] = (uint32_t)a->len;
	if (!fplan_cell(t->plan, t->names, a, s, NULL, C_LADDR, o + C_LADDR)) {
		obuf_putc(a, '?');
		o[C_LADDR + 1] = (uint32_t)a->len;
		o[C_LPORT + 1] = (uint32_t)a->len;
		obuf_putc(a, '?');
		o[C_PADDR + 1] = (uint32_t)a->len;
	}
	o[C_PPORT + 1] = (uint32_t)a->len;
}

int table_sock(struct table *t, const struct sdiag_sock *s, const struct out_extra *x)
{
	struct obuf *a = &t->arena;
	uint32_t *o;

	if (t->nrows == BLOCK_ROWS || a->len >= BLOCK_BYTES) {
		int r = table_flush(t);

		if (r < 0)
			return r;
	}
	o = t->offs + t->nrows * (C_MAX + 1);
	put_cell(t, C_TIME, s, x, o);
	put_cell(t, C_NETNS, s, x, o);
	put_cell(t, C_RESULT, s, x, o);
	o[C_NETID] = (uint32_t)a->len;
	if (t->visible[C_NETID] && s->table < SDIAG_T_MAX)
		obuf_put(a, t->netid[s->table], t->netid_len[s->table]);
	o[C_STATE] = (uint32_t)a->len;
	if (t->visible[C_STATE]) {
		unsigned st = s->state < SDIAG_SS_MAX ? s->state : 0;

		obuf_put(a, t->state[st], t->state_len[st]);
	}
	o[C_RECVQ] = (uint32_t)a->len;
	if (t->visible[C_RECVQ])
		obuf_u64(a, s->rqueue);
	o[C_SENDQ] = (uint32_t)a->len;
	if (t->visible[C_SENDQ])
		obuf_u64(a, s->wqueue);
	put_endpoints(t, s, o);
	o[C_PROCESS] = (uint32_t)a->len;
	if (t->procs)
		fplan_cell(t->plan, t->names, a, s, x, C_PROCESS, o + C_PROCESS);
	o[C_EXT] = (uint32_t)a->len;
	fplan_text(t->plan, t->names, a, s);
	if (x && x->result_detail) {
		obuf_puts(a, " (");
		obuf_puts(a, x->result_detail);
		obuf_putc(a, ')');
	}
	o[C_MAX] = (uint32_t)a->len;
	t->nrows++;
	return a->err;
}

/* ---- rendering ---------------------------------------------------------------- */

/* On a terminal, spread spare width over the columns once, as ss does. */
static void spread(struct table *t)
{
	struct winsize ws;
	size_t total = 0, n = 0, pad, rem, screen = 0;
	const char *env = getenv("COLUMNS");
	bool first = true;

	t->spread_done = true;
	if (!isatty(t->ob->fd))
		return;
	/* COLUMNS is the user's word, not a promise: a terminal is at most a
	 * few thousand columns wide, and padding is written for every row. */
	if (env && atoi(env) > 0)
		screen = (size_t)atoi(env) < 4096 ? (size_t)atoi(env) : 4096;
	else if (ioctl(t->ob->fd, TIOCGWINSZ, &ws) == 0)
		screen = ws.ws_col;
	if (!screen)
		return;
	for (int c = 0; c < C_EXT; c++) {
		if (!t->visible[c])
			continue;
		total += t->width[c] + (first ? 0 : strlen(cols[c].delim));
		first = false;
		n++;
	}
	if (!n || total >= screen)
		return;
	pad = screen - total;
	rem = pad % n;
	for (int c = 0; c < C_EXT; c++) {
		if (!t->visible[c])
			continue;
		t->width[c] += pad / n + (rem ? 1 : 0);
		if (rem)
			rem--;
	}
}

static const char spaces8[8] = "        ";

/* Copies and fills in 8-byte steps: both buffers have slack past the end. */
static inline char *fill_spaces(char *d, size_t n)
{
	for (size_t i = 0; i < n; i += 8)
		memcpy(d + i, spaces8, 8);
	return d + n;
}

static inline char *copy8(char *d, const char *src, size_t n)
{
	for (size_t i = 0; i < n; i += 8)
		memcpy(d + i, src + i, 8);
	return d + n;
}

/* Where column c's field ends: the Process column takes the detail text too. */
static inline uint32_t field_end(const uint32_t *o, int c)
{
	return c == C_PROCESS ? o[C_MAX] : o[c + 1];
}

/* Render the buffered rows. The column plan and widths are copied to locals
 * first: the output is written through char pointers, which may alias
 * anything, so fields of *t would be reloaded after every store. */
static int render_rows(struct table *t)
{
	struct obuf *b = t->ob;
	const char *src = t->arena.p;
	size_t width[C_MAX], line_max = t->line_max;
	bool right[C_MAX], delim[C_MAX];
	int vis[C_MAX], nvis = t->nvis;

	for (int k = 0; k < nvis; k++) {
		int c = t->vis[k];

		vis[k] = c;
		width[k] = t->width[c];
		right[k] = cols[c].right;
		delim[k] = k && cols[c].delim[0];
	}
	for (size_t i = 0; i < t->nrows; i++) {
		const uint32_t *o = t->offs + i * (C_MAX + 1);
		char *d;

		if (b->len >= WRITE_CHUNK && obuf_flush(b) < 0)
			return b->err;
		if (obuf_reserve(b, line_max + (o[C_MAX] - o[0]) + 32) < 0)
			return b->err;
		d = b->p + b->len;
		for (int k = 0; k < nvis; k++) {
			size_t off = o[vis[k]], len = field_end(o, vis[k]) - off;
			size_t pad = width[k] > len ? width[k] - len : 0;

			if (delim[k])
				*d++ = ' ';
			if (right[k])
				d = fill_spaces(d, pad);
			d = copy8(d, src + off, len);
			if (!right[k])
				d = fill_spaces(d, pad);
		}
		*d++ = '\n';
		b->len = (size_t)(d - b->p);
	}
	return 0;
}

int table_flush(struct table *t)
{
	int r;

	if (!t->nrows)
		return t->arena.err;
	/* Slack for render_row's 8-byte copies past the last field. */
	if (obuf_reserve(&t->arena, 16) < 0)
		return t->arena.err;
	for (size_t i = 0; i < t->nrows; i++) {
		const uint32_t *o = t->offs + i * (C_MAX + 1);

		for (int k = 0; k < t->nvis; k++) {
			int c = t->vis[k];

			if (field_end(o, c) - o[c] > t->width[c])
				t->width[c] = field_end(o, c) - o[c];
		}
	}
	if (!t->spread_done)
		spread(t);
	t->line_max = 0;
	for (int k = 0; k < t->nvis; k++)
		t->line_max += t->width[t->vis[k]] + 1;
	r = render_rows(t);
	if (r < 0)
		return r;
	r = t->arena.err;
	t->nrows = 0;
	t->arena.len = 0;
	if (r < 0)
		return r;
	return obuf_flush(t->ob);
}
