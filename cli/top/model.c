// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sockdiag top's model: sockets by cookie, their counters from one dump to
 * the next, and the groups they add up to (see model.h).
 *
 * Sockets live in the cookie table (util/ctab.h: a dense array indexed by
 * cookie); a removed socket's place is taken by the last one. Each socket remembers its group's index, worked out again
 * only when its key may have changed (new socket, owner found, state change
 * when the keys include the state, other keys), so a refresh costs one hash
 * lookup and a few additions per socket.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "cli/fmt/fmt.h"
#include "cli/top/model.h"
#include "util/ctab.h"
#include "util/hash.h"

#define NONE UINT32_MAX
#define GONE_REFRESHES 2	/* how long a socket missing from the dumps waits for its event */
#define OWNER_TRIES 3		/* owner lookups of a socket (accept() shows the inode first) */

enum {
	TS_INFO = 1 << 0,	/* counters from tcp_info */
	TS_OWNER = 1 << 1,	/* pid and comm known */
	TS_PENDING = 1 << 2,	/* owner to look up */
	TS_GONE = 1 << 3,	/* not in the last dump */
	TS_UID = 1 << 4,
	TS_CGROUP = 1 << 5,
};

struct tsock {
	uint64_t cookie;
	uint64_t inode;
	uint64_t cgroup_id;
	uint64_t rx, tx;	/* counters at the last dump */
	uint64_t d_rx, d_tx;	/* their change at the last dump */
	uint32_t retr, d_retr;
	uint32_t rtt, rq, wq, uid;
	uint32_t gidx;
	uint32_t seen;		/* refresh of the last dump that had it */
	int32_t pid;
	uint16_t sport, dport;
	uint16_t ns;
	uint8_t family, table, state, flags, gone;
	uint8_t tries;		/* owner lookups that found none */
	uint8_t src[16], dst[16];
	char comm[16];
};

struct top_model {
	struct top_keys k;
	struct gkeys gk;	/* the same keys, for gkey_tuple() */
	struct ckeys *ck;
	const char *const *labels;
	struct ctab socks;	/* struct tsock by cookie */
	struct top_group *groups;
	size_t ng, gcap;
	uint32_t *gidx;		/* key hash: group index + 1 */
	size_t gicap;
	uint32_t *rows;
	size_t nrows;
	struct top_group total;
	uint32_t epoch;
	bool baseline;		/* no interval closed yet */
	bool unconnected;	/* count the end of unknown sockets without a peer */
	bool open;		/* between tm_begin and tm_end */
	bool ranked;		/* the groups' krank is their keys' order */
	size_t pending;
	size_t hint;		/* where the next dumped socket probably is */
	double seconds;		/* the last interval */
	enum top_col sort;
	bool ascending;
	struct obuf kb;		/* a new group's text */
	uint8_t tb[4096];	/* a socket's tuple */
};

static void set_gkeys(struct top_model *m, const struct top_keys *k)
{
	m->k = *k;
	m->gk.n = k->n;
	for (size_t i = 0; i < k->n; i++)
		m->gk.k[i] = (enum gkey)k->k[i];
}

/* ---- tables -------------------------------------------------------------------------------- */

int tm_new(struct top_model **ret, const struct top_keys *k, struct ckeys *ck,
	   const char *const *labels)
{
	struct top_model *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	set_gkeys(m, k);
	m->ck = ck;
	m->labels = labels;
	ctab_init(&m->socks, sizeof(struct tsock));
	m->gicap = 64;
	m->gidx = calloc(m->gicap, sizeof(*m->gidx));
	m->baseline = true;
	m->sort = TC_RX;
	if (!m->gidx || obuf_init(&m->kb, 512, -1) < 0) {
		tm_free(m);
		return -ENOMEM;
	}
	*ret = m;
	return 0;
}

static void groups_clear(struct top_model *m)
{
	for (size_t i = 0; i < m->ng; i++) {
		free(m->groups[i].key);
		free(m->groups[i].tuple);
	}
	m->ng = 0;
	m->nrows = 0;
	memset(m->gidx, 0, m->gicap * sizeof(*m->gidx));
}

void tm_free(struct top_model *m)
{
	if (!m)
		return;
	if (m->gidx)
		groups_clear(m);
	free(m->groups);
	free(m->gidx);
	free(m->rows);
	ctab_fini(&m->socks);
	obuf_fini(&m->kb);
	free(m);
}

static struct tsock *sock_at(const struct top_model *m, size_t i)
{
	return ctab_at(&m->socks, i);
}

/* Remove socket i: its place is taken by the last one. */
static void sock_remove(struct top_model *m, size_t i)
{
	const struct tsock *t = sock_at(m, i);

	if (t->gidx != NONE)
		m->groups[t->gidx].refs--;
	if (t->flags & TS_PENDING)
		m->pending--;
	ctab_del_at(&m->socks, i);
}

/* A new group's key as text, from its tuple: 0 or -ENOMEM. */
static int group_text(struct top_model *m, struct top_group *g)
{
	struct obuf *b = &m->kb;

	b->len = 0;
	g->nkeys = (uint8_t)m->gk.n;
	for (size_t k = 0; k < m->gk.n; k++) {
		enum gkey key = m->gk.k[k];
		struct gval v;

		g->koff[k] = (uint32_t)b->len;
		gkey_field(g->tuple, g->tlen, &m->gk, k, &v);
		ckeys_text(m->ck, b, key, &v);
		if (v.none || (gkey_defs[key].type == GT_BYTES && !v.len))
			g->none |= 1u << k;
	}
	g->koff[m->gk.n] = (uint32_t)b->len;
	if (b->err)
		return b->err;
	g->key = strndup(b->p, b->len);
	return g->key ? 0 : -ENOMEM;
}

/* The group of a tuple (len bytes in m->tb): found or added. Returns its index or NONE. */
static uint32_t group_of(struct top_model *m, size_t len)
{
	size_t mask = m->gicap - 1, i;
	uint64_t h = hash_bytes(m->tb, len);
	struct top_group *g;

	for (i = h & mask; m->gidx[i]; i = (i + 1) & mask) {
		g = &m->groups[m->gidx[i] - 1];
		if (g->hash == h && g->tlen == len && !memcmp(g->tuple, m->tb, len))
			return m->gidx[i] - 1;
	}
	if (m->ng == m->gcap) {
		size_t ncap = m->gcap ? m->gcap * 2 : 64;

		g = realloc(m->groups, ncap * sizeof(*g));
		if (!g)
			return NONE;
		m->groups = g;
		m->gcap = ncap;
	}
	g = &m->groups[m->ng];
	memset(g, 0, sizeof(*g));
	g->tuple = malloc(len ? len : 1);
	if (!g->tuple)
		return NONE;
	memcpy(g->tuple, m->tb, len);
	g->tlen = (uint32_t)len;
	if (group_text(m, g) < 0) {
		free(g->tuple);
		free(g->key);
		return NONE;
	}
	g->hash = h;
	m->ranked = false;
	m->gidx[i] = (uint32_t)(++m->ng);
	if (m->ng * 2 > m->gicap) {
		size_t ncap = m->gicap * 2;
		uint32_t *ni = calloc(ncap, sizeof(*ni));

		if (!ni)
			return NONE; /* the group exists; the table is merely full-ish */
		for (size_t j = 0; j < m->ng; j++) {
			size_t k = m->groups[j].hash & (ncap - 1);

			while (ni[k])
				k = (k + 1) & (ncap - 1);
			ni[k] = (uint32_t)(j + 1);
		}
		free(m->gidx);
		m->gidx = ni;
		m->gicap = ncap;
	}
	return (uint32_t)(m->ng - 1);
}

/* The key of a socket: its tuple, from a record made of what the socket keeps. */
static uint32_t sock_group(struct top_model *m, const struct tsock *t)
{
	struct sdiag_proc p = { .pid = t->pid };
	struct sdiag_sock s = { .table = t->table, .family = t->family, .state = t->state,
				.uid = t->uid, .cookie = t->cookie };
	struct gkey_ctx ctx = ckeys_ctx(m->ck, m->labels ? m->labels[t->ns] : NULL);
	size_t len;

	memcpy(p.comm, t->comm, sizeof(p.comm));
	s.has = (t->flags & TS_UID ? SDIAG_HAS_UID : 0) | (t->flags & TS_CGROUP ? SDIAG_HAS_CGROUP : 0);
	if (t->family == AF_INET || t->family == AF_INET6) {
		memcpy(s.inet.src, t->src, 16);
		memcpy(s.inet.dst, t->dst, 16);
		s.inet.sport = t->sport;
		s.inet.dport = t->dport;
		s.inet.cgroup_id = t->cgroup_id;
	}
	if (t->flags & TS_OWNER) {
		s.procs = &p;
		s.n_procs = 1;
	}
	len = gkey_tuple(m->tb, sizeof(m->tb), &m->gk, &s, &ctx);
	return len > sizeof(m->tb) ? NONE : group_of(m, len);
}

/* ---- the refresh --------------------------------------------------------------------------- */

void tm_begin(struct top_model *m)
{
	m->epoch++;
	m->open = true;
}

static bool has_key(const struct top_model *m, unsigned key)
{
	for (size_t i = 0; i < m->k.n; i++)
		if (m->k.k[i] == key)
			return true;
	return false;
}

static void ungroup(struct top_model *m, struct tsock *t)
{
	if (t->gidx != NONE)
		m->groups[t->gidx].refs--;
	t->gidx = NONE;
}

static void copy_identity(struct tsock *t, const struct sdiag_sock *s, unsigned ns)
{
	t->cookie = s->cookie;
	t->inode = s->inode;
	t->table = (uint8_t)s->table;
	t->family = s->family;
	t->state = s->state;
	t->ns = (uint16_t)ns;
	t->gidx = NONE;
	if (s->has & SDIAG_HAS_UID) {
		t->uid = s->uid;
		t->flags |= TS_UID;
	}
	if (s->family == AF_INET || s->family == AF_INET6) {
		memcpy(t->src, s->inet.src, 16);
		memcpy(t->dst, s->inet.dst, 16);
		t->sport = s->inet.sport;
		t->dport = s->inet.dport;
		if (s->has & SDIAG_HAS_CGROUP) {
			t->cgroup_id = s->inet.cgroup_id;
			t->flags |= TS_CGROUP;
		}
	}
}

static uint64_t diff64(uint64_t now, uint64_t then)
{
	return now >= then ? now - then : 0;
}

int tm_sock(struct top_model *m, const struct sdiag_sock *s, unsigned ns)
{
	struct sdiag_tcp_info tcpi;
	const struct sdiag_tcp_info *ti = &tcpi;
	bool info = (s->has & SDIAG_HAS_TCP_INFO) && s->table == SDIAG_T_TCP;
	struct tsock *t;
	bool added = false;

	if (!(s->has & SDIAG_HAS_COOKIE) || (s->family != AF_INET && s->family != AF_INET6))
		return 0;
	sdiag_sock_blob_copy(s, SDIAG_BLOB_TCP_INFO, &tcpi, sizeof(tcpi));
	/* The dumps come in the order of the last one, which is the array's. */
	if (m->hint < ctab_len(&m->socks) && sock_at(m, m->hint)->cookie == s->cookie)
		t = sock_at(m, m->hint);
	else
		t = ctab_add(&m->socks, s->cookie, &added);
	if (!t)
		return -ENOMEM;
	if (added) {
		copy_identity(t, s, ns);
		if (t->inode) {
			t->flags |= TS_PENDING;
			m->pending++;
		}
		/* A socket born since the last dump carried its bytes in this interval. */
		if (info && !m->baseline) {
			t->d_rx = ti->tcpi_bytes_received;
			t->d_tx = ti->tcpi_bytes_acked;
			t->d_retr = ti->tcpi_total_retrans;
		}
	} else {
		if (t->seen != m->epoch) /* not a second report of it in this refresh */
			t->d_rx = t->d_tx = t->d_retr = 0;
		if (info && (t->flags & TS_INFO)) {
			t->d_rx += diff64(ti->tcpi_bytes_received, t->rx);
			t->d_tx += diff64(ti->tcpi_bytes_acked, t->tx);
			t->d_retr += (uint32_t)diff64(ti->tcpi_total_retrans, t->retr);
		}
		if (t->state != s->state) {
			t->state = s->state;
			if (has_key(m, GK_STATE))
				ungroup(m, t);
		}
		if (!t->inode && s->inode) {	/* accepted since */
			t->inode = s->inode;
			t->tries = 0;
			if (!(t->flags & TS_PENDING)) {
				t->flags |= TS_PENDING;
				m->pending++;
			}
		}
	}
	t->flags &= (uint8_t)~(TS_GONE | TS_INFO);
	t->gone = 0;
	if (info) {
		t->flags |= TS_INFO;
		t->rx = ti->tcpi_bytes_received;
		t->tx = ti->tcpi_bytes_acked;
		t->retr = ti->tcpi_total_retrans;
		t->rtt = ti->tcpi_rtt;
	} else {
		t->rtt = 0;
	}
	t->rq = (s->has & SDIAG_HAS_QUEUES) ? s->rqueue : 0;
	t->wq = (s->has & SDIAG_HAS_QUEUES) ? s->wqueue : 0;
	t->seen = m->epoch;
	m->hint = ctab_index(&m->socks, t) + 1;
	return 0;
}

/* The owner of the sockets a group lost since the last interval. */
static void ev_owner(struct top_group *g, const struct tsock *t)
{
	if (g->ev_pid < 0)
		return;
	if (!(t->flags & TS_OWNER) || (g->ev_pid && g->ev_pid != t->pid)) {
		g->ev_pid = -1;
		return;
	}
	g->ev_pid = t->pid;
	memcpy(g->ev_comm, t->comm, sizeof(g->ev_comm));
}

int tm_event(struct top_model *m, const struct sdiag_sock *s, unsigned ns,
	     const struct sdiag_filter *f)
{
	struct sdiag_tcp_info tcpi;
	const struct sdiag_tcp_info *ti = &tcpi;
	bool info = (s->has & SDIAG_HAS_TCP_INFO) && s->table == SDIAG_T_TCP;
	struct tsock *t = ctab_get(&m->socks, s->cookie);
	uint64_t rx = 0, tx = 0, retr = 0;
	struct top_group *g;
	uint32_t gi;

	sdiag_sock_blob_copy(s, SDIAG_BLOB_TCP_INFO, &tcpi, sizeof(tcpi));
	if (t) {
		/* Seen by this refresh's dump, not summed yet: what it saw first. */
		if (m->open && t->seen == m->epoch) {
			rx = t->d_rx;
			tx = t->d_tx;
			retr = t->d_retr;
		}
		if (info && (t->flags & TS_INFO)) {
			rx += diff64(ti->tcpi_bytes_received, t->rx);
			tx += diff64(ti->tcpi_bytes_acked, t->tx);
			retr += diff64(ti->tcpi_total_retrans, t->retr);
		} else if (info && !t->rx && !t->tx) { /* seen without counters */
			rx = ti->tcpi_bytes_received;
			tx = ti->tcpi_bytes_acked;
			retr = ti->tcpi_total_retrans;
		}
		if (t->gidx == NONE)
			t->gidx = sock_group(m, t);
		else
			m->groups[t->gidx].refs--;
		gi = t->gidx;
		if (gi != NONE)
			ev_owner(&m->groups[gi], t);
		t->gidx = NONE;
		sock_remove(m, ctab_index(&m->socks, t));
	} else {
		struct tsock u = { 0 };

		/* Born and gone between two dumps: all its bytes are new. Before the
		 * first interval there is no telling, and nothing is counted. */
		if (m->baseline || !(s->has & SDIAG_HAS_COOKIE) ||
		    (!s->inet.dport && !m->unconnected) || (f && !sdiag_filter_match(f, s)))
			return 0;
		copy_identity(&u, s, ns);
		if (info) {
			rx = ti->tcpi_bytes_received;
			tx = ti->tcpi_bytes_acked;
			retr = ti->tcpi_total_retrans;
		}
		gi = sock_group(m, &u);
		if (gi != NONE)
			ev_owner(&m->groups[gi], &u);
	}
	if (gi == NONE)
		return -ENOMEM;
	g = &m->groups[gi];
	g->ev_rx += rx;
	g->ev_tx += tx;
	g->ev_retrans += retr;
	g->ev_closed++;
	return 0;
}

size_t tm_owners_pending(const struct top_model *m)
{
	return m->pending;
}

void tm_owners(struct top_model *m, tm_lookup_fn lookup, void *ud)
{
	bool regroup = top_keys_need_owner(&m->k);

	for (size_t i = 0; i < ctab_len(&m->socks) && m->pending; i++) {
		struct tsock *t = sock_at(m, i);
		bool found;

		if (!(t->flags & TS_PENDING))
			continue;
		found = lookup(ud, t->inode, &t->pid, t->comm);
		/* accept() shows the inode before it installs the descriptor: a
		 * scan in between finds no owner. Asked again next time. */
		if (!found && ++t->tries < OWNER_TRIES)
			continue;
		t->flags &= (uint8_t)~TS_PENDING;
		m->pending--;
		if (!found)
			continue;
		t->flags |= TS_OWNER;
		if (regroup)
			ungroup(m, t);
	}
}

/* Drop the groups nothing points to and nothing happened in; renumber. */
static void groups_compact(struct top_model *m)
{
	uint32_t *map;
	size_t n = 0, drop = 0;

	for (size_t i = 0; i < m->ng; i++)
		drop += !m->groups[i].refs && !m->groups[i].ev_closed;
	if (!drop)
		return;
	map = malloc(m->ng * sizeof(*map));
	if (!map)
		return; /* kept: only memory is lost */
	for (size_t i = 0; i < m->ng; i++) {
		struct top_group *g = &m->groups[i];

		if (!g->refs && !g->ev_closed) {
			free(g->key);
			free(g->tuple);
			map[i] = NONE;
			continue;
		}
		map[i] = (uint32_t)n;
		m->groups[n++] = *g;
	}
	m->ng = n;
	memset(m->gidx, 0, m->gicap * sizeof(*m->gidx));
	for (size_t j = 0; j < n; j++) {
		size_t k = m->groups[j].hash & (m->gicap - 1);

		while (m->gidx[k])
			k = (k + 1) & (m->gicap - 1);
		m->gidx[k] = (uint32_t)(j + 1);
	}
	for (size_t i = 0; i < ctab_len(&m->socks); i++)
		if (sock_at(m, i)->gidx != NONE)
			sock_at(m, i)->gidx = map[sock_at(m, i)->gidx];
	free(map);
}

void tm_sort(struct top_model *m, enum top_col col, bool ascending)
{
	m->sort = col;
	m->ascending = ascending;
	if (!m->nrows)
		return;
	if (!m->ranked)
		m->ranked = top_rank_keys(m->groups, m->ng) == 0;
	top_sort_rows(m->rows, m->nrows, m->groups, col, ascending, m->ranked);
}

static void add_owner(struct top_group *g, const struct tsock *t)
{
	if (g->mixed)
		return;
	if (!(t->flags & TS_OWNER) || (g->pid && g->pid != t->pid)) {
		g->mixed = true;
		g->pid = 0;
		return;
	}
	g->pid = t->pid;
	memcpy(g->comm, t->comm, sizeof(g->comm));
}

/* Sum the sockets into their groups, rates over `seconds`, the rows. */
static int aggregate(struct top_model *m, double seconds)
{
	struct top_group *tot = &m->total;
	uint32_t *rows;

	for (size_t i = 0; i < m->ng; i++) {
		struct top_group *g = &m->groups[i];

		g->rx = g->ev_rx;
		g->tx = g->ev_tx;
		g->retrans = g->ev_retrans;
		g->closed = (uint32_t)g->ev_closed;
		g->ev_rx = g->ev_tx = g->ev_retrans = g->ev_closed = 0;
		g->rqueue = g->wqueue = g->rtt_sum = 0;
		g->conns = g->rtt_n = 0;
		g->pid = g->ev_pid > 0 ? g->ev_pid : 0;
		g->mixed = g->ev_pid < 0;
		memcpy(g->comm, g->ev_comm, sizeof(g->comm));
		g->ev_pid = 0;
	}
	for (size_t i = 0; i < ctab_len(&m->socks); i++) {
		struct tsock *t = sock_at(m, i);
		struct top_group *g;

		if (t->gidx == NONE) {
			t->gidx = sock_group(m, t);
			if (t->gidx == NONE)
				return -ENOMEM;
			m->groups[t->gidx].refs++;
		}
		if (t->flags & TS_GONE)
			continue;
		g = &m->groups[t->gidx];
		g->rx += t->d_rx;
		g->tx += t->d_tx;
		g->retrans += t->d_retr;
		g->rqueue += t->rq;
		g->wqueue += t->wq;
		g->conns++;
		if (t->rtt) {
			g->rtt_sum += t->rtt;
			g->rtt_n++;
		}
		add_owner(g, t);
	}
	rows = realloc(m->rows, (m->ng ? m->ng : 1) * sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	m->rows = rows;
	m->nrows = 0;
	memset(tot, 0, sizeof(*tot));
	for (size_t i = 0; i < m->ng; i++) {
		struct top_group *g = &m->groups[i];

		g->rtt_us = g->rtt_n ? g->rtt_sum / g->rtt_n : 0;
		g->rx_bps = seconds > 0 ? (double)g->rx / seconds : 0;
		g->tx_bps = seconds > 0 ? (double)g->tx / seconds : 0;
		if (!g->conns && !g->closed && !g->rx && !g->tx)
			continue;
		m->rows[m->nrows++] = (uint32_t)i;
		tot->rx += g->rx;
		tot->tx += g->tx;
		tot->retrans += g->retrans;
		tot->rqueue += g->rqueue;
		tot->wqueue += g->wqueue;
		tot->conns += g->conns;
		tot->closed += g->closed;
		tot->rtt_sum += g->rtt_sum;
		tot->rtt_n += g->rtt_n;
	}
	tot->rtt_us = tot->rtt_n ? tot->rtt_sum / tot->rtt_n : 0;
	tot->rx_bps = seconds > 0 ? (double)tot->rx / seconds : 0;
	tot->tx_bps = seconds > 0 ? (double)tot->tx / seconds : 0;
	tm_sort(m, m->sort, m->ascending);
	return 0;
}

int tm_end(struct top_model *m, double seconds)
{
	/* Sockets missing from this dump: no traffic now; forgotten after a while
	 * (their destroy event, if one comes, finds them until then). */
	for (size_t i = ctab_len(&m->socks); i-- > 0;) {
		struct tsock *t = sock_at(m, i);

		if (t->seen == m->epoch)
			continue;
		t->flags |= TS_GONE;
		t->d_rx = t->d_tx = t->d_retr = 0;
		if (++t->gone > GONE_REFRESHES)
			sock_remove(m, i);
	}
	groups_compact(m);
	m->seconds = seconds;
	m->baseline = false;
	m->open = false;
	return aggregate(m, seconds);
}

int tm_set_keys(struct top_model *m, const struct top_keys *k)
{
	set_gkeys(m, k);
	groups_clear(m);
	for (size_t i = 0; i < ctab_len(&m->socks); i++)
		sock_at(m, i)->gidx = NONE;
	return aggregate(m, m->seconds);
}

void tm_unconnected(struct top_model *m, bool on)
{
	m->unconnected = on;
}

const struct top_keys *tm_keys(const struct top_model *m)
{
	return &m->k;
}

size_t tm_nrows(const struct top_model *m)
{
	return m->nrows;
}

const struct top_group *tm_row(const struct top_model *m, size_t i)
{
	return i < m->nrows ? &m->groups[m->rows[i]] : NULL;
}

const struct top_group *tm_total(const struct top_model *m)
{
	return &m->total;
}

size_t tm_nsocks(const struct top_model *m)
{
	return ctab_len(&m->socks);
}

size_t tm_ngroups(const struct top_model *m)
{
	return m->ng;
}
