// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sockdiag top's columns, declared once for the full-screen view (ui.c) and the
 * batch output (batch.c), as cli/fields declares list's: a row per value of a
 * group, in the JSON order, with its table column (head, screen width, the
 * priority it is dropped with on a narrow screen, alignment, --sort column)
 * and its formatters. The numbers are printed without printf, by cli/fmt's
 * printf-exact %f (fmt_dec.c).
 */
#include <math.h>
#include <string.h>

#include "cli/fmt/fmt.h"
#include "cli/top/top.h"

/* A double as cli/fmt's exact m * 2^e (v finite, >= 0). */
static struct xd xd_of(double v)
{
	int e;
	double f = frexp(v, &e);

	if (v <= 0 || !isfinite(v))
		return (struct xd){ 0, 0 };
	return (struct xd){ (uint64_t)ldexp(f, 53), e - 53 };
}

void top_put_rate(struct obuf *b, double v)
{
	static const char sfx[] = "kMGTPE";
	int i = -1;

	if (v < 999.5) {
		obuf_xd_f(b, xd_of(v), v > 0 && v < 9.95 && v != floor(v) ? 1 : 0);
		return;
	}
	while (v >= 999.5 && i < 5) {
		v /= 1000;
		i++;
	}
	obuf_xd_f(b, xd_of(v), v < 9.995 ? 2 : v < 99.95 ? 1 : 0);
	obuf_putc(b, sfx[i]);
}

void top_put_rtt(struct obuf *b, uint64_t us)
{
	struct xd ms = xd_div(xd_u64(us), xd_u64(1000));
	double d = (double)us / 1000;

	if (!us)
		obuf_putc(b, '-');
	else
		obuf_xd_f(b, ms, d < 9.995 ? 2 : d < 99.95 ? 1 : 0);
}

void top_put_owner(struct obuf *b, const struct top_group *g)
{
	if (g->pid > 0 && !g->mixed) {
		obuf_put(b, g->comm, strnlen(g->comm, sizeof(g->comm)));
		obuf_putc(b, '/');
		obuf_u64(b, (uint64_t)g->pid);
	} else {
		obuf_putc(b, '-');
	}
}

/* ---- the rows ------------------------------------------------------------------------------ */

static void t_conns(struct obuf *b, const struct top_group *g, double s)
{
	(void)s;
	obuf_u64(b, g->conns);
}

static void t_closed(struct obuf *b, const struct top_group *g, double s)
{
	(void)s;
	obuf_u64(b, g->closed);
}

static void t_rx(struct obuf *b, const struct top_group *g, double s)
{
	(void)s;
	top_put_rate(b, g->rx_bps);
}

static void t_tx(struct obuf *b, const struct top_group *g, double s)
{
	(void)s;
	top_put_rate(b, g->tx_bps);
}

static void t_rtt(struct obuf *b, const struct top_group *g, double s)
{
	(void)s;
	top_put_rtt(b, g->rtt_us);
}

static void t_retrans(struct obuf *b, const struct top_group *g, double s)
{
	top_put_rate(b, s > 0 ? (double)g->retrans / s : 0);
}

static void t_rqueue(struct obuf *b, const struct top_group *g, double s)
{
	(void)s;
	obuf_u64(b, g->rqueue);
}

static void t_wqueue(struct obuf *b, const struct top_group *g, double s)
{
	(void)s;
	obuf_u64(b, g->wqueue);
}

static void t_owner(struct obuf *b, const struct top_group *g, double s)
{
	(void)s;
	top_put_owner(b, g);
}

static void j_owner(struct obuf *b, const struct top_group *g, double s)
{
	(void)s;
	if (g->pid > 0 && !g->mixed) {
		obuf_puts(b, "{\"pid\":");
		obuf_u64(b, (uint64_t)g->pid);
		obuf_puts(b, ",\"comm\":");
		obuf_json_cstr(b, g->comm);
		obuf_putc(b, '}');
	} else {
		obuf_puts(b, "null");
	}
}

static uint64_t n_rx(const struct top_group *g, double s) { (void)s; return g->rx; }
static uint64_t n_tx(const struct top_group *g, double s) { (void)s; return g->tx; }
static uint64_t n_rx_bps(const struct top_group *g, double s) { (void)s; return (uint64_t)llround(g->rx_bps); }
static uint64_t n_tx_bps(const struct top_group *g, double s) { (void)s; return (uint64_t)llround(g->tx_bps); }
static uint64_t n_conns(const struct top_group *g, double s) { (void)s; return g->conns; }
static uint64_t n_closed(const struct top_group *g, double s) { (void)s; return g->closed; }
static uint64_t n_rtt(const struct top_group *g, double s) { (void)s; return g->rtt_us; }
static uint64_t n_retrans(const struct top_group *g, double s) { (void)s; return g->retrans; }
static uint64_t n_rqueue(const struct top_group *g, double s) { (void)s; return g->rqueue; }
static uint64_t n_wqueue(const struct top_group *g, double s) { (void)s; return g->wqueue; }
static uint64_t n_interval(const struct top_group *g, double s) { (void)g; return (uint64_t)llround(s * 1e6); }

/* JSON order; .col: the place in the table (-1: JSON only). */
const struct top_col_row top_rows[TOP_NROWS] = {
	{ "rx_bytes", .num = n_rx, .col = -1 },
	{ "tx_bytes", .num = n_tx, .col = -1 },
	{ "rx_bps", "RX/s", 7, 0, false, TC_RX, 2, n_rx_bps, t_rx, NULL, false },
	{ "tx_bps", "TX/s", 7, 0, false, TC_TX, 3, n_tx_bps, t_tx, NULL, false },
	{ "conns", "CONNS", 6, 3, false, TC_CONNS, 0, n_conns, t_conns, NULL, false },
	{ "closed", "CLOSED", 6, 5, false, TC_CLOSED, 1, n_closed, t_closed, NULL, false },
	{ "rtt_us", "RTT(ms)", 7, 4, false, TC_RTT, 4, n_rtt, t_rtt, NULL, true },
	{ "retrans", "RETR/s", 6, 6, false, TC_RETRANS, 5, n_retrans, t_retrans, NULL, false },
	{ "rqueue", "RECV-Q", 7, 7, false, TC_RQUEUE, 6, n_rqueue, t_rqueue, NULL, false },
	{ "wqueue", "SEND-Q", 7, 8, false, TC_WQUEUE, 7, n_wqueue, t_wqueue, NULL, false },
	{ "interval_us", .num = n_interval, .col = -1 },
	{ "owner", "OWNER", 16, 9, true, TC_MAX, 8, NULL, t_owner, j_owner, false },
};

const struct top_col_row *top_col(size_t c)
{
	for (size_t i = 0; i < TOP_NROWS; i++)
		if (top_rows[i].col == (int)c)
			return &top_rows[i];
	return NULL;
}

const char *top_cell(struct obuf *b, const struct top_group *g, double seconds, size_t c,
		     size_t *len)
{
	b->len = 0;
	top_col(c)->text(b, g, seconds);
	*len = b->len;
	if (obuf_reserve(b, 1) == 0)
		b->p[b->len] = '\0';
	return b->err ? "" : b->p;
}

void top_json_values(struct obuf *b, const struct top_group *g, double seconds)
{
	for (size_t i = 0; i < TOP_NROWS; i++) {
		const struct top_col_row *r = &top_rows[i];

		obuf_puts(b, ",\"");
		obuf_puts(b, r->json);
		obuf_puts(b, "\":");
		if (r->jtext)
			r->jtext(b, g, seconds);
		else if (r->null_if_zero && !r->num(g, seconds))
			obuf_puts(b, "null");
		else
			obuf_u64(b, r->num(g, seconds));
	}
}
