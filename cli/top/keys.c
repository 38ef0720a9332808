// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sockdiag top's keys (--by) and columns (--sort): count.c's keys (list
 * --count-by), plus `conn`, one row per socket: its protocol, addresses,
 * ports and cookie.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/top/model.h"

const char top_keys_help[] = "conn, pid, comm, cgroup, cgroup_id, unit, user, uid, raddr (peer), "
			     "rport, laddr, lport, netns, state, proto, family";

const char *top_key_name(unsigned k)
{
	if (k == GK_PROCESS)
		return "comm"; /* list --count-by's "process" */
	return k < GK_MAX ? gkey_defs[k].name : NULL;
}

bool top_key_number(unsigned k)
{
	return k < GK_MAX && gkey_defs[k].json_number;
}

bool top_keys_need_owner(const struct top_keys *k)
{
	for (size_t i = 0; i < k->n; i++)
		if (k->k[i] == GK_PID || k->k[i] == GK_PROCESS)
			return true;
	return false;
}

static bool keys_has(const struct top_keys *k, unsigned key)
{
	for (size_t i = 0; i < k->n; i++)
		if (k->k[i] == key)
			return true;
	return false;
}

int top_keys_parse(struct top_keys *ret, const char *arg, struct top_keys_error *err)
{
	static const unsigned conn[] = { GK_PROTO, GK_LADDR, GK_LPORT, GK_RADDR, GK_RPORT,
					 TK_COOKIE };
	struct top_keys k = { .n = 0 };
	const char *p = arg;

	*err = (struct top_keys_error){ .kind = TKE_NONE, .at = arg };
	if (!*arg)
		return -EINVAL;
	for (;;) {
		size_t len = strcspn(p, ",");
		int i = count_key_lookup(p, len);
		bool is_conn = len == 4 && !strncmp(p, "conn", 4);
		const unsigned *add = is_conn ? conn : (const unsigned[]){ (unsigned)i };
		size_t nadd = is_conn ? sizeof(conn) / sizeof(conn[0]) : 1;

		*err = (struct top_keys_error){ .at = p, .len = len };
		if (!len) {
			err->kind = TKE_EMPTY;
			err->at = arg;
			err->len = strlen(arg);
			return -EINVAL;
		}
		if (!is_conn && i < 0) {
			err->kind = TKE_UNKNOWN;
			return -EINVAL;
		}
		if (is_conn && k.conn) {
			err->kind = TKE_TWICE;
			err->key = TK_COOKIE;
			err->in_conn = true;
			return -EINVAL;
		}
		for (size_t j = 0; j < nadd; j++)
			if (keys_has(&k, add[j])) {
				err->kind = TKE_TWICE;
				err->key = add[j];
				err->in_conn = is_conn || k.conn;
				return -EINVAL;
			}
		if (k.n + nadd > COUNT_MAX_KEYS) {
			err->kind = TKE_MANY;
			return -EINVAL;
		}
		memcpy(k.k + k.n, add, nadd * sizeof(*add));
		k.conn = k.conn || is_conn;
		k.n += nadd;
		p += len;
		if (!*p++)
			break;
	}
	*ret = k;
	return 0;
}

const char *top_key_field(const struct top_group *g, size_t k, size_t *len)
{
	*len = g->koff[k + 1] - g->koff[k];
	return g->key + g->koff[k];
}

int top_key_cmp(const struct top_group *a, const struct top_group *b)
{
	for (size_t k = 0; k < a->nkeys && k < b->nkeys; k++) {
		size_t la, lb;
		const char *x = top_key_field(a, k, &la), *y = top_key_field(b, k, &lb);
		int c = memcmp(x, y, la < lb ? la : lb);

		if (c || la != lb)
			return c ? c : la < lb ? -1 : 1;
	}
	return (a->nkeys > b->nkeys) - (a->nkeys < b->nkeys);
}

/* ---- sorting ------------------------------------------------------------------------------- */

static double val(const struct top_group *g, enum top_col c)
{
	switch (c) {
	case TC_RX: return (double)g->rx;
	case TC_TX: return (double)g->tx;
	case TC_CONNS: return g->conns;
	case TC_CLOSED: return g->closed;
	case TC_RTT: return (double)g->rtt_us;
	case TC_RETRANS: return (double)g->retrans;
	case TC_RQUEUE: return (double)g->rqueue;
	case TC_WQUEUE: return (double)g->wqueue;
	default: return 0;
	}
}

static int cmp_key(const void *a, const void *b, void *arg)
{
	const struct top_group *g = arg;

	return top_key_cmp(&g[*(const uint32_t *)a], &g[*(const uint32_t *)b]);
}

int top_rank_keys(struct top_group *g, size_t ng)
{
	uint32_t *ix = malloc((ng ? ng : 1) * sizeof(*ix));

	if (!ix)
		return -ENOMEM;
	for (size_t i = 0; i < ng; i++)
		ix[i] = (uint32_t)i;
	qsort_r(ix, ng, sizeof(*ix), cmp_key, g);
	for (size_t i = 0; i < ng; i++)
		g[ix[i]].krank = (uint32_t)i;
	free(ix);
	return 0;
}

/* A row with its sort values worked out once: the column, the other one, the key's rank. */
struct sortent {
	double a, b;
	uint32_t rank, gi;
};

static int cmp_ent(const void *pa, const void *pb, void *arg)
{
	const struct sortent *x = pa, *y = pb;
	int c;

	if (x->a != y->a)
		c = x->a > y->a ? -1 : 1;
	else if (x->b != y->b)
		c = x->b > y->b ? -1 : 1;
	else
		c = x->rank < y->rank ? -1 : x->rank > y->rank;
	return *(const bool *)arg ? -c : c;
}

struct sortctx {
	const struct top_group *g;
	enum top_col col, other;
	bool ascending, ranked;
};

/* The same order without the values worked out (no memory for them). */
static int cmp_rows(const void *a, const void *b, void *arg)
{
	const struct sortctx *s = arg;
	const struct top_group *x = &s->g[*(const uint32_t *)a], *y = &s->g[*(const uint32_t *)b];
	int c;

	if (s->col != TC_KEY && val(x, s->col) != val(y, s->col))
		c = val(x, s->col) > val(y, s->col) ? -1 : 1;
	else if (s->other != TC_KEY && val(x, s->other) != val(y, s->other))
		c = val(x, s->other) > val(y, s->other) ? -1 : 1;
	else if (s->ranked)
		c = x->krank < y->krank ? -1 : x->krank > y->krank;
	else
		c = top_key_cmp(x, y);
	return s->ascending ? -c : c;
}

void top_sort_rows(uint32_t *rows, size_t n, const struct top_group *g, enum top_col col,
		   bool ascending, bool ranked)
{
	struct sortctx s = { g, col, col == TC_RX ? TC_TX : col == TC_TX ? TC_RX : TC_KEY,
			     ascending, ranked };
	struct sortent *e = ranked ? malloc((n ? n : 1) * sizeof(*e)) : NULL;

	if (!e) {
		qsort_r(rows, n, sizeof(*rows), cmp_rows, &s);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct top_group *r = &g[rows[i]];

		e[i] = (struct sortent){ .a = col == TC_KEY ? 0 : val(r, col),
					 .b = s.other == TC_KEY ? 0 : val(r, s.other),
					 .rank = r->krank, .gi = rows[i] };
	}
	qsort_r(e, n, sizeof(*e), cmp_ent, &s.ascending);
	for (size_t i = 0; i < n; i++)
		rows[i] = e[i].gi;
	free(e);
}

static const char *const col_names[TC_MAX] = {
	[TC_KEY] = "key",	 [TC_RX] = "rx",	   [TC_TX] = "tx",
	[TC_CONNS] = "conns",	 [TC_CLOSED] = "closed",   [TC_RTT] = "rtt",
	[TC_RETRANS] = "retrans", [TC_RQUEUE] = "rqueue", [TC_WQUEUE] = "wqueue",
};

int top_col_lookup(const char *name)
{
	for (int i = 0; i < TC_MAX; i++)
		if (!strcmp(name, col_names[i]))
			return i;
	return -1;
}

const char *top_col_name(enum top_col c)
{
	return c < TC_MAX ? col_names[c] : NULL;
}
