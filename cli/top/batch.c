// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sockdiag top -b: each snapshot as an aligned table under a summary line,
 * a JSON array, or NDJSON (one object per group, stamped with the time).
 * Written through cli/fmt's buffer, as the other renderers.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/fmt/fmt.h"
#include "cli/top/top.h"

/* Text as obuf_text_bytes() writes it; printable ASCII (the usual case) at once. */
static void put_text(struct obuf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f) {
			obuf_text_bytes(b, s, n);
			return;
		}
	obuf_put(b, s, n);
}

static bool key_shown(unsigned k)
{
	return k != TK_COOKIE;
}

static void put_time(struct obuf *b, const struct timespec *ts, bool json)
{
	struct tm tm;
	char buf[40];
	size_t n;

	if (!(json ? gmtime_r(&ts->tv_sec, &tm) : localtime_r(&ts->tv_sec, &tm)))
		return;
	n = strftime(buf, sizeof(buf), json ? "%Y-%m-%dT%H:%M:%S" : "%H:%M:%S", &tm);
	obuf_put(b, buf, n);
	obuf_printf(b, json ? ".%06ldZ" : ".%06ld", ts->tv_nsec / 1000);
}

static void table(struct obuf *b, const struct top_opts *t, const struct top_model *m,
		  const struct timespec *when, double seconds, struct obuf *cb)
{
	const struct top_keys *k = tm_keys(m);
	const struct top_group *tot = tm_total(m);
	size_t n = tm_nrows(m), w[COUNT_MAX_KEYS + TOP_NCOLS] = { 0 }, cl;
	const char *c;

	put_time(b, when, false);
	obuf_printf(b, "  %.3g s  %u sockets  %u closed  RX ", seconds, tot->conns, tot->closed);
	top_put_rate(b, tot->rx_bps);
	obuf_puts(b, "B/s  TX ");
	top_put_rate(b, tot->tx_bps);
	obuf_puts(b, "B/s\n");
	for (size_t j = 0; j < k->n; j++)
		w[j] = t->o->out.no_header ? 0 : strlen(top_key_name(k->k[j]));
	for (size_t j = 0; j < TOP_NCOLS; j++)
		w[k->n + j] = t->o->out.no_header ? 0 : strlen(top_col(j)->head);
	for (size_t i = 0; i < n; i++) {
		const struct top_group *g = tm_row(m, i);

		for (size_t j = 0; j < k->n; j++) {
			size_t len;

			top_key_field(g, j, &len);
			w[j] = len > w[j] ? len : w[j];
		}
		for (size_t j = 0; j < TOP_NCOLS; j++) {
			top_cell(cb, g, seconds, j, &cl);
			w[k->n + j] = cl > w[k->n + j] ? cl : w[k->n + j];
		}
	}
	if (!t->o->out.no_header) {
		for (size_t j = 0; j < k->n; j++) {
			if (!key_shown(k->k[j]))
				continue;
			for (const char *p = top_key_name(k->k[j]); *p; p++)
				obuf_putc(b, (char)(*p - 'a' + 'A'));
			obuf_spaces(b, w[j] - strlen(top_key_name(k->k[j])) + 1);
		}
		for (size_t j = 0; j < TOP_NCOLS; j++) {
			const struct top_col_row *col = top_col(j);
			size_t pad = w[k->n + j] - strlen(col->head);

			if (!col->left)
				obuf_spaces(b, pad);
			obuf_puts(b, col->head);
			if (j + 1 < TOP_NCOLS)
				obuf_spaces(b, col->left ? pad + 1 : 1);
		}
		obuf_putc(b, '\n');
	}
	for (size_t i = 0; i < n; i++) {
		const struct top_group *g = tm_row(m, i);

		for (size_t j = 0; j < k->n; j++) {
			size_t len;
			const char *f = top_key_field(g, j, &len);

			if (key_shown(k->k[j])) {
				put_text(b, f, len);
				obuf_spaces(b, w[j] - len + 1);
			}
		}
		for (size_t j = 0; j < TOP_NCOLS; j++) {
			const struct top_col_row *col = top_col(j);
			size_t pad;

			c = top_cell(cb, g, seconds, j, &cl);
			pad = w[k->n + j] - cl;
			if (!col->left)
				obuf_spaces(b, pad);
			if (j + 1 == TOP_NCOLS)
				put_text(b, c, cl);
			else
				obuf_put(b, c, cl);
			if (j + 1 < TOP_NCOLS)
				obuf_spaces(b, col->left ? pad + 1 : 1);
		}
		obuf_putc(b, '\n');
	}
}

static void json_group(struct obuf *b, const struct top_model *m, const struct top_group *g,
		       const struct timespec *when, double seconds)
{
	const struct top_keys *k = tm_keys(m);

	obuf_puts(b, "{\"time\":\"");
	put_time(b, when, true);
	obuf_putc(b, '"');
	for (size_t j = 0; j < k->n; j++) {
		size_t len;
		const char *v = top_key_field(g, j, &len);

		obuf_puts(b, ",\"");
		obuf_puts(b, top_key_name(k->k[j]));
		obuf_puts(b, "\":");
		if (g->none & (1u << j))
			obuf_puts(b, "null");
		else if (top_key_number(k->k[j]))
			obuf_put(b, v, len);
		else
			obuf_json_str(b, v, len);
	}
	top_json_values(b, g, seconds);
	obuf_putc(b, '}');
}

int batch_snapshot(const struct top_opts *t, const struct top_model *m,
		   const struct timespec *when, double seconds)
{
	enum out_format f = t->o->out.format;
	struct obuf b, cb;
	int r;

	r = obuf_init(&b, 1 << 16, t->o->out.fd);
	if (r < 0)
		return r;
	if (f == OUT_TABLE) {
		r = obuf_init(&cb, 64, -1);
		if (r < 0) {
			obuf_fini(&b);
			return r;
		}
		table(&b, t, m, when, seconds, &cb);
		obuf_fini(&cb);
		obuf_putc(&b, '\n');
	} else {
		if (f == OUT_JSON)
			obuf_puts(&b, "[\n");
		for (size_t i = 0; i < tm_nrows(m); i++) {
			json_group(&b, m, tm_row(m, i), when, seconds);
			if (f == OUT_JSON && i + 1 < tm_nrows(m))
				obuf_putc(&b, ',');
			obuf_putc(&b, '\n');
			if (b.len > b.cap / 2 && (r = obuf_flush(&b)) < 0)
				break;
		}
		if (f == OUT_JSON)
			obuf_puts(&b, "]\n");
	}
	if (r == 0)
		r = obuf_flush(&b);
	obuf_fini(&b);
	return r;
}
