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

#define SEP '\x1f'

/* v as decimal digits, NUL-terminated; returns the length. */
static size_t put_u64(char *buf, uint64_t v)
{
	size_t n = fmt_u64(buf, v);

	buf[n] = '\0';
	return n;
}

/* n / 10^d rounded to d decimals as printf's "%.*f" of the double n / 10^d would
 * round it, when the remainder is not a tie (then printf's binary value
 * decides): the length, or 0 when it is a tie. */
static size_t put_fixed(char *buf, uint64_t n, uint64_t unit, int d)
{
	uint64_t q = n / unit, r = n % unit, half = unit / 2, frac;
	uint64_t scale = d == 2 ? 100 : d == 1 ? 10 : 1;
	size_t len;

	if (r == half && unit % 2 == 0)
		return 0;
	/* q is in units of 10^-d of what is printed: n / unit * 10^-d */
	q += r > half;
	frac = q % scale;
	len = fmt_u64(buf, q / scale);
	if (d) {
		buf[len++] = '.';
		if (d == 2)
			buf[len++] = (char)('0' + frac / 10);
		buf[len++] = (char)('0' + frac % 10);
	}
	buf[len] = '\0';
	return len;
}

void top_fmt_rate(char *buf, double v)
{
	static const char sfx[] = "kMGTPE";
	int i = -1;

	if (v >= 0 && !signbit(v) && v < 999.5 && v == (double)(uint64_t)v) {
		/* "%.0f" of a whole number */
		put_u64(buf, (uint64_t)v);
		return;
	}
	if (v < 999.5) {
		snprintf(buf, 16, v > 0 && v < 9.95 && v != floor(v) ? "%.1f" : "%.0f", v);
		return;
	}
	while (v >= 999.5 && i < 5) {
		v /= 1000;
		i++;
	}
	snprintf(buf, 16, v < 9.995 ? "%.2f%c" : v < 99.95 ? "%.1f%c" : "%.0f%c", v, sfx[i]);
}

void top_fmt_rtt(char *buf, uint64_t us)
{
	double ms = (double)us / 1000;

	/* us / 1000 to 2, 1 or 0 decimals: from us / 10, us / 100, us / 1000 */
	if (!us)
		snprintf(buf, 16, "-");
	else if (!put_fixed(buf, us, ms < 9.995 ? 10 : ms < 99.95 ? 100 : 1000,
			    ms < 9.995 ? 2 : ms < 99.95 ? 1 : 0))
		snprintf(buf, 16, ms < 9.995 ? "%.2f" : ms < 99.95 ? "%.1f" : "%.0f", ms);
}

void top_fmt_owner(char *buf, size_t size, const struct top_group *g)
{
	size_t n = strnlen(g->comm, sizeof(g->comm));

	if (g->pid > 0 && !g->mixed && size >= sizeof(g->comm) + 12) {
		memcpy(buf, g->comm, n);
		buf[n] = '/';
		put_u64(buf + n + 1, (uint64_t)g->pid);
	} else if (g->pid > 0 && !g->mixed) {
		snprintf(buf, size, "%.*s/%d", (int)n, g->comm, g->pid);
	} else {
		snprintf(buf, size, "-");
	}
}

/* The table's columns after the keys. */
static const struct {
	const char *head;
	bool left;
} cols[] = {
	{ "CONNS", false }, { "CLOSED", false }, { "RX/s", false }, { "TX/s", false },
	{ "RTT(ms)", false }, { "RETR/s", false },
	{ "RECV-Q", false }, { "SEND-Q", false }, { "OWNER", true },
};
#define NCOLS (sizeof(cols) / sizeof(cols[0]))

/* The cells of a row and their lengths. */
static void cells(const struct top_group *g, double seconds, char c[NCOLS][64], size_t len[NCOLS])
{
	len[0] = put_u64(c[0], g->conns);
	len[1] = put_u64(c[1], g->closed);
	top_fmt_rate(c[2], g->rx_bps);
	top_fmt_rate(c[3], g->tx_bps);
	top_fmt_rtt(c[4], g->rtt_us);
	top_fmt_rate(c[5], seconds > 0 ? (double)g->retrans / seconds : 0);
	len[6] = put_u64(c[6], g->rqueue);
	len[7] = put_u64(c[7], g->wqueue);
	top_fmt_owner(c[8], 64, g);
	for (size_t j = 2; j < NCOLS; j++)
		if (j != 6 && j != 7)
			len[j] = strlen(c[j]);
}

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
		  const struct timespec *when, double seconds)
{
	const struct top_keys *k = tm_keys(m);
	const struct top_group *tot = tm_total(m);
	size_t n = tm_nrows(m), w[COUNT_MAX_KEYS + NCOLS] = { 0 }, cl[NCOLS];
	char c[NCOLS][64], r1[16], r2[16];

	top_fmt_rate(r1, tot->rx_bps);
	top_fmt_rate(r2, tot->tx_bps);
	put_time(b, when, false);
	obuf_printf(b, "  %.3g s  %u sockets  %u closed  RX %sB/s  TX %sB/s\n", seconds,
		    tot->conns, tot->closed, r1, r2);
	for (size_t j = 0; j < k->n; j++)
		w[j] = t->o->out.no_header ? 0 : strlen(top_key_name(k->k[j]));
	for (size_t j = 0; j < NCOLS; j++)
		w[k->n + j] = t->o->out.no_header ? 0 : strlen(cols[j].head);
	for (size_t i = 0; i < n; i++) {
		const struct top_group *g = tm_row(m, i);

		const char *f = g->key;

		for (size_t j = 0; j < k->n; j++) {
			size_t len = (size_t)(strchrnul(f, SEP) - f);

			w[j] = len > w[j] ? len : w[j];
			f += len + (f[len] != '\0');
		}
		cells(g, seconds, c, cl);
		for (size_t j = 0; j < NCOLS; j++)
			w[k->n + j] = cl[j] > w[k->n + j] ? cl[j] : w[k->n + j];
	}
	if (!t->o->out.no_header) {
		for (size_t j = 0; j < k->n; j++) {
			if (!key_shown(k->k[j]))
				continue;
			for (const char *p = top_key_name(k->k[j]); *p; p++)
				obuf_putc(b, (char)(*p - 'a' + 'A'));
			obuf_spaces(b, w[j] - strlen(top_key_name(k->k[j])) + 1);
		}
		for (size_t j = 0; j < NCOLS; j++) {
			size_t pad = w[k->n + j] - strlen(cols[j].head);

			if (!cols[j].left)
				obuf_spaces(b, pad);
			obuf_puts(b, cols[j].head);
			if (j + 1 < NCOLS)
				obuf_spaces(b, cols[j].left ? pad + 1 : 1);
		}
		obuf_putc(b, '\n');
	}
	for (size_t i = 0; i < n; i++) {
		const struct top_group *g = tm_row(m, i);

		const char *f = g->key;

		for (size_t j = 0; j < k->n; j++) {
			size_t len = (size_t)(strchrnul(f, SEP) - f);

			if (key_shown(k->k[j])) {
				put_text(b, f, len);
				obuf_spaces(b, w[j] - len + 1);
			}
			f += len + (f[len] != '\0');
		}
		cells(g, seconds, c, cl);
		for (size_t j = 0; j < NCOLS; j++) {
			size_t pad = w[k->n + j] - cl[j];

			if (!cols[j].left)
				obuf_spaces(b, pad);
			if (j + 1 == NCOLS)
				put_text(b, c[j], cl[j]);
			else
				obuf_put(b, c[j], cl[j]);
			if (j + 1 < NCOLS)
				obuf_spaces(b, cols[j].left ? pad + 1 : 1);
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
	obuf_puts(b, "\",");
	for (size_t j = 0; j < k->n; j++) {
		size_t len;
		const char *v = top_key_field(g->key, j, &len);

		obuf_putc(b, '"');
		obuf_puts(b, top_key_name(k->k[j]));
		obuf_puts(b, "\":");
		if (len == 1 && v[0] == '-')
			obuf_puts(b, "null");
		else if (top_key_number(k->k[j]))
			obuf_put(b, v, len);
		else
			obuf_json_str(b, v, len);
		obuf_putc(b, ',');
	}
	obuf_puts(b, "\"rx_bytes\":");
	obuf_u64(b, g->rx);
	obuf_puts(b, ",\"tx_bytes\":");
	obuf_u64(b, g->tx);
	obuf_puts(b, ",\"rx_bps\":");
	obuf_u64(b, (uint64_t)llround(g->rx_bps));
	obuf_puts(b, ",\"tx_bps\":");
	obuf_u64(b, (uint64_t)llround(g->tx_bps));
	obuf_puts(b, ",\"conns\":");
	obuf_u64(b, g->conns);
	obuf_puts(b, ",\"closed\":");
	obuf_u64(b, g->closed);
	obuf_puts(b, ",\"rtt_us\":");
	if (g->rtt_us)
		obuf_u64(b, g->rtt_us);
	else
		obuf_puts(b, "null");
	obuf_puts(b, ",\"retrans\":");
	obuf_u64(b, g->retrans);
	obuf_puts(b, ",\"rqueue\":");
	obuf_u64(b, g->rqueue);
	obuf_puts(b, ",\"wqueue\":");
	obuf_u64(b, g->wqueue);
	obuf_puts(b, ",\"interval_us\":");
	obuf_u64(b, (uint64_t)llround(seconds * 1e6));
	obuf_puts(b, ",\"owner\":");
	if (g->pid > 0 && !g->mixed) {
		obuf_puts(b, "{\"pid\":");
		obuf_u64(b, (uint64_t)g->pid);
		obuf_puts(b, ",\"comm\":");
		obuf_json_cstr(b, g->comm);
		obuf_putc(b, '}');
	} else {
		obuf_puts(b, "null");
	}
	obuf_putc(b, '}');
}

int batch_snapshot(const struct top_opts *t, const struct top_model *m,
		   const struct timespec *when, double seconds)
{
	enum out_format f = t->o->out.format;
	struct obuf b;
	int r;

	r = obuf_init(&b, 1 << 16, t->o->out.fd);
	if (r < 0)
		return r;
	if (f == OUT_TABLE) {
		table(&b, t, m, when, seconds);
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
