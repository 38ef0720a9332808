// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The connection-life engine: a table of the sockets the dumps have seen,
 * keyed by cookie (unique across namespaces; util/ctab.h); an entry lives from the first dump
 * that shows the socket to its record (or, for one recorded by a dump, to
 * its destroy event). Memory is bounded by the live sockets.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include "life/life.h"
#include "util/clock.h"
#include "util/ctab.h"

struct entry {
	uint64_t cookie;	/* first: the cookie table's key */
	uint32_t gen;		/* the last dump that showed it */
	bool reported;		/* recorded by a dump: drop its destroy event */
	bool aborted;		/* destroyed by this process */
	struct life_rec r;	/* tuple, first seen, last state, owners, counters */
};

struct life_ns {
	struct sdiag_handle *h;
	struct sdiag_watch *w;
};

struct life {
	struct life_ns *ns;
	size_t n, ns_cap;
	struct life_opts o;
	struct ctab tab;	/* struct entry by cookie */
	/* Listening ports (ns << 16 | port), sorted, of the last dump; the next. */
	uint32_t *lports, *lnext;
	size_t nl, capl, nnext, capnext;
	uint32_t gen;
	/* during a read or a dump */
	unsigned cur;
	life_cb cb;
	void *ud;
	int cb_err;
	int count;
	const struct sdiag_procmap *pm;
};

static const char *const outcome_names[LIFE_OUTCOMES] = {
	[LIFE_OK] = "ok",		[LIFE_REFUSED] = "refused", [LIFE_TIMEOUT] = "timeout",
	[LIFE_RESET] = "reset",		[LIFE_ABORTED] = "aborted",
	[LIFE_UNACCEPTED] = "dropped",
};

const char *life_outcome_name(enum life_outcome o)
{
	return o < LIFE_OUTCOMES ? outcome_names[o] : "?";
}

static struct entry *find(struct life *l, uint64_t cookie)
{
	return ctab_get(&l->tab, cookie);
}

/* The last entry moves into e's place. */
static void del(struct life *l, struct entry *e)
{
	ctab_del_at(&l->tab, ctab_index(&l->tab, e));
}

static struct entry *add(struct life *l, uint64_t cookie)
{
	return ctab_add(&l->tab, cookie, NULL);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Is port a listening port of namespace ns (in the last dump)? */
static bool listening(const struct life *l, unsigned ns, uint16_t port)
{
	uint32_t key = (uint32_t)ns << 16 | port;

	return l->nl && bsearch(&key, l->lports, l->nl, sizeof(key), cmp_u32);
}

static int add_listener(struct life *l, const struct sdiag_sock *s)
{
	if (l->nnext == l->capnext) {
		size_t cap = l->capnext ? l->capnext * 2 : 64;
		uint32_t *p = realloc(l->lnext, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		l->lnext = p;
		l->capnext = cap;
	}
	l->lnext[l->nnext++] = (uint32_t)l->cur << 16 | s->inet.sport;
	return 0;
}

/* The listeners of this dump become the ones to judge by. */
static void listeners_done(struct life *l)
{
	uint32_t *t = l->lports;
	size_t cap = l->capl;

	if (l->nnext) /* none: no array to sort (qsort takes none) */
		qsort(l->lnext, l->nnext, sizeof(*l->lnext), cmp_u32);
	l->lports = l->lnext;
	l->capl = l->capnext;
	l->nl = l->nnext;
	l->lnext = t;
	l->capnext = cap;
	l->nnext = 0;
}

static void take_tuple(struct life_rec *r, const struct sdiag_sock *s)
{
	r->cookie = s->cookie;
	r->family = s->family;
	r->proto = s->protocol;
	memcpy(r->src, s->inet.src, 16);
	memcpy(r->dst, s->inet.dst, 16);
	r->sport = s->inet.sport;
	r->dport = s->inet.dport;
	if (s->has & SDIAG_HAS_CGROUP)
		r->cgroup_id = s->inet.cgroup_id;
}

/* The counters of a tcp_info; returns false without one. */
static bool take_info(struct life_rec *r, const struct sdiag_sock *s, struct sdiag_tcp_info *ti)
{
	memset(ti, 0, sizeof(*ti));
	if (!(s->has & SDIAG_HAS_TCP_INFO) ||
	    sdiag_sock_blob_copy(s, SDIAG_BLOB_TCP_INFO, ti, sizeof(*ti)) == 0)
		return false;
	r->has_info = true;
	r->bytes_acked = ti->tcpi_bytes_acked;
	r->bytes_received = ti->tcpi_bytes_received;
	r->segs_out = ti->tcpi_segs_out;
	r->segs_in = ti->tcpi_segs_in;
	r->total_retrans = ti->tcpi_total_retrans;
	r->rtt_us = ti->tcpi_rtt;
	r->min_rtt_us = ti->tcpi_min_rtt == UINT32_MAX ? 0 : ti->tcpi_min_rtt;
	r->delivery_rate = ti->tcpi_delivery_rate;
	return true;
}

/*
 * The outcome from the final tcp_info. A connect that failed has had its
 * counters and peer cleared by tcp_disconnect(): none sent, none acked;
 * it retransmitted its SYN (timeout) or was answered by a RST (refused);
 * the same cleared record on a listening port is a child the listener
 * dropped before accept(). An established one counts its SYN (active side)
 * and its FIN in bytes_acked when the FIN was acknowledged: ok; else reset,
 * or timeout when it was retransmitting.
 */
static void judge(struct life *l, struct life_rec *r, const struct sdiag_tcp_info *ti,
		  uint32_t wqueue, bool aborted)
{
	uint64_t sent = ti->tcpi_bytes_sent - ti->tcpi_bytes_retrans, acked, d, segs, extra;
	bool passive = listening(l, r->ns, r->sport), fin;

	if (aborted) {
		r->outcome = LIFE_ABORTED;
	} else if (!ti->tcpi_bytes_acked && !ti->tcpi_bytes_received && !ti->tcpi_segs_out) {
		/* tcp_disconnect() moved write_seq past the largest window the
		 * peer offered (+2): 3 or less, the peer never answered. */
		if (wqueue > 3)
			r->outcome = LIFE_UNACCEPTED;
		else
			r->outcome = ti->tcpi_retransmits || ti->tcpi_backoff ? LIFE_TIMEOUT
									       : LIFE_REFUSED;
		return;
	}
	/* bytes_acked counts the SYN (active side only) and our FIN once acked:
	 * d, bytes_acked less the payload sent, is 2 (active, FIN acked), 1
	 * (active without it, or passive with it) or 0 (passive without it).
	 * At 1 a listening port a dump saw says passive; else tcpi_delivered,
	 * which counts the handshake and the FIN one segment each beside the
	 * data segments: two more than those when the FIN was acknowledged. */
	acked = ti->tcpi_bytes_acked;
	d = acked > sent ? acked - sent : 0;
	segs = ti->tcpi_data_segs_out > ti->tcpi_total_retrans
		       ? ti->tcpi_data_segs_out - ti->tcpi_total_retrans : 0;
	if (d == 1 && !passive)
		passive = ti->tcpi_delivered >= segs + 2;
	fin = d >= 1u + !passive;
	extra = (uint64_t)!passive + fin;
	r->bytes_acked = acked - (acked < extra ? acked : extra);
	if (fin && ti->tcpi_bytes_received)
		r->bytes_received = ti->tcpi_bytes_received - 1;
	if (aborted)
		return;
	/* Our FIN acknowledged, or all our data acknowledged and only our FIN
	 * outstanding (write_seq - snd_una = 1: we had closed, then the peer
	 * reset it, as a listener closed with the connection in its queue). */
	if (fin || wqueue == 1)
		r->outcome = LIFE_OK;
	else
		r->outcome = ti->tcpi_retransmits || ti->tcpi_backoff ? LIFE_TIMEOUT : LIFE_RESET;
}

static int emit(struct life *l, struct life_rec *r)
{
	int e;

	r->end_ms = real_ms();
	e = l->cb(r, l->ud);
	if (e < 0)
		return l->cb_err = e;
	l->count++;
	return 0;
}

/* The filter on an event, with the tuple a dump saw when the event's was
 * cleared (a failed connect: peer port 0). */
static bool event_match(const struct life *l, const struct entry *e, const struct sdiag_sock *s)
{
	struct sdiag_sock t;

	if (!e || s->inet.dport)
		return sdiag_filter_match(l->o.filter, s);
	t = *s;
	memcpy(t.inet.src, e->r.src, 16);
	memcpy(t.inet.dst, e->r.dst, 16);
	t.inet.sport = e->r.sport;
	t.inet.dport = e->r.dport;
	return sdiag_filter_match(l->o.filter, &t);
}

static int event_cb(const struct sdiag_sock *s, void *ud)
{
	struct life *l = ud;
	struct entry *e = find(l, s->cookie);
	struct sdiag_tcp_info ti;
	struct life_rec r;
	bool aborted = false;

	if (e && e->reported) {
		del(l, e);
		return 0;
	}
	/* A listener (or a socket never connected): no peer, not a connection. */
	if (!e && s->table == SDIAG_T_TCP && !s->inet.dport &&
	    !memcmp(s->inet.dst, (const uint8_t[16]){ 0 }, 16))
		return 0;
	if (l->o.filter && !event_match(l, e, s)) {
		if (e)
			del(l, e);
		return 0;
	}
	if (e) {
		r = e->r;
		aborted = e->aborted;
		del(l, e);
	} else {
		memset(&r, 0, sizeof(r));
		r.ns = l->cur;
	}
	/* The destroy event keeps what tcp_disconnect() left: keep the dump's tuple. */
	if (!r.cookie || s->inet.dport)
		take_tuple(&r, s);
	if (s->has & SDIAG_HAS_QUEUES) {
		r.has_queues = true;
		r.rqueue = s->rqueue;
		r.wqueue = s->wqueue;
	}
	r.has_info = false;
	if (take_info(&r, s, &ti))
		judge(l, &r, &ti, s->has & SDIAG_HAS_QUEUES ? s->wqueue : 0, aborted);
	else
		r.outcome = aborted ? LIFE_ABORTED : LIFE_OK;
	return emit(l, &r);
}

int life_events(struct life *l, size_t i, life_cb cb, void *ud, uint64_t *ret_lost)
{
	int r;

	l->cur = (unsigned)i;
	l->cb = cb;
	l->ud = ud;
	l->cb_err = 0;
	l->count = 0;
	r = sdiag_watch_read(l->ns[i].w, NULL, event_cb, l, ret_lost);
	if (l->cb_err)
		return l->cb_err;
	return r < 0 ? r : l->count;
}

static int seen(struct life *l, const struct sdiag_sock *s)
{
	struct entry *e = find(l, s->cookie);
	struct sdiag_tcp_info ti;

	/* The kernel filter passed it; the rest of the filter is ours. */
	if (s->state == SDIAG_SS_LISTEN)
		return s->table == SDIAG_T_TCP ? add_listener(l, s) : 0;
	if (l->o.filter && !sdiag_filter_match(l->o.filter, s))
		return 0;
	if (!e) {
		e = add(l, s->cookie);
		if (!e)
			return -ENOMEM;
		e->r.start_ms = real_ms();
		e->r.ns = l->cur;
		take_tuple(&e->r, s);
		if (s->n_procs) {
			e->r.pid = s->procs[0].pid;
			memcpy(e->r.comm, s->procs[0].comm, sizeof(e->r.comm));
		}
	} else if (e->reported) {
		return 0;
	}
	e->gen = l->gen;
	e->r.state = s->state;
	if (s->inet.dport)
		take_tuple(&e->r, s);
	if (s->has & SDIAG_HAS_QUEUES) {
		e->r.has_queues = true;
		e->r.rqueue = s->rqueue;
		e->r.wqueue = s->wqueue;
	}
	take_info(&e->r, s, &ti);
	return 0;
}

int life_poll(struct life *l, life_cb cb, void *ud, uint64_t *ret_lost)
{
	SDIAG_OPTS(sdiag_query, q, .tables = l->o.tables, .afs = l->o.afs,
		   .show = SDIAG_SHOW_TCP_INFO, .filter = NULL,
		   /* Full sockets only: a TIME_WAIT or request socket is not one. */
		   .states = SDIAG_STATES_ALL & ~(SDIAG_STATE_BIT(SDIAG_SS_TIME_WAIT) |
						  SDIAG_STATE_BIT(SDIAG_SS_NEW_SYN_RECV)));
	struct sdiag_procmap *pm = NULL;
	uint64_t lost = 0, more;
	int r = 0, n = 0;

	if (l->o.owners && sdiag_procmap_scan(&pm, NULL) == 0)
		q.procmap = pm;
	l->gen++;
	for (size_t i = 0; i < l->n && r >= 0; i++) {
		const struct sdiag_sock *s;
		struct sdiag_dump *d;

		/* Events first: a socket ended before the dump is recorded by its event. */
		r = life_events(l, i, cb, ud, &more);
		lost += more;
		if (r < 0)
			break;
		n += r;
		l->cur = (unsigned)i;
		r = sdiag_dump_begin(l->ns[i].h, &q, &d);
		if (r < 0)
			break;
		while ((r = sdiag_dump_next(d, &s)) != 0) {
			if (r > 0 && (r = seen(l, s)) < 0)
				break;
			r = 0; /* a table the kernel cannot dump is skipped */
		}
		sdiag_dump_end(d);
		if (r < 0)
			break;
		r = life_events(l, i, cb, ud, &more);
		lost += more;
		if (r > 0)
			n += r;
	}
	sdiag_procmap_free(pm);
	listeners_done(l);
	if (ret_lost)
		*ret_lost = lost;
	if (r < 0)
		return r;
	/* Alive in the last dump, in none now, no destroy event: ended while held. */
	l->cb = cb;
	l->ud = ud;
	l->count = 0;
	for (size_t i = 0; i < ctab_len(&l->tab); i++) {
		struct entry *e = ctab_at(&l->tab, i);

		if (e->reported || e->gen == l->gen)
			continue;
		e->reported = true;
		e->r.by_poll = true;
		e->r.has_info = false; /* the last dump's counters, not the final ones */
		e->r.outcome = e->aborted ? LIFE_ABORTED
			       : e->r.proto == IPPROTO_TCP ? LIFE_RESET : LIFE_OK;
		if (emit(l, &e->r) < 0)
			return l->cb_err;
	}
	return n + l->count;
}

void life_mark_destroyed(struct life *l, uint64_t cookie)
{
	struct entry *e = find(l, cookie);

	if (e)
		e->aborted = true;
}

size_t life_live(const struct life *l)
{
	return ctab_len(&l->tab);
}

size_t life_n(const struct life *l)
{
	return l->n;
}

int life_fd(const struct life *l, size_t i)
{
	return sdiag_watch_fd(l->ns[i].w);
}

/* Subscribe in nsfd (-1: ours) and open its dump handle, as namespace l->n. */
static int ns_open(struct life *l, int fd)
{
	struct life_ns *n = &l->ns[l->n];
	int r;

	memset(n, 0, sizeof(*n));
	/* Subscribed before the first dump: every socket it sees announces its end. */
	r = sdiag_watch_open(&n->w, l->o.groups, fd);
	if (r == 0 && l->o.rcvbuf)
		r = sdiag_watch_set_rcvbuf(n->w, l->o.rcvbuf);
	if (r == 0)
		r = fd < 0 ? sdiag_open(&n->h) : sdiag_open_netns(&n->h, fd);
	if (r < 0) {
		sdiag_watch_close(n->w);
		sdiag_close(n->h);
		return r;
	}
	return (int)l->n++;
}

int life_ns_add(struct life *l, int nsfd)
{
	if (l->n == l->ns_cap) {
		size_t cap = l->ns_cap ? l->ns_cap * 2 : 4;
		struct life_ns *ns = realloc(l->ns, cap * sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		l->ns = ns;
		l->ns_cap = cap;
	}
	return ns_open(l, nsfd);
}

void life_ns_remove(struct life *l, size_t i)
{
	if (i >= l->n)
		return;
	sdiag_watch_close(l->ns[i].w);
	sdiag_close(l->ns[i].h);
	memmove(&l->ns[i], &l->ns[i + 1], (l->n - i - 1) * sizeof(*l->ns));
	l->n--;
	/* Its sockets leave with it; the later ones move down one. */
	for (size_t k = 0; k < ctab_len(&l->tab); k++) {
		struct entry *e = ctab_at(&l->tab, k);

		if (e->r.ns < i)
			continue;
		if (e->r.ns == i) {
			del(l, e);
			k--; /* the last entry moved here */
		} else {
			e->r.ns--;
		}
	}
	l->nl = 0; /* listening ports by index: stale until the next dump */
}

int life_open(struct life **ret, const struct life_opts *o)
{
	struct life *l = calloc(1, sizeof(*l));
	size_t n = o->nsfds ? o->n : 1;
	int r = 0;

	if (!l)
		return -ENOMEM;
	l->o = *o;
	ctab_init(&l->tab, sizeof(struct entry));
	for (size_t i = 0; i < n && r >= 0; i++)
		r = life_ns_add(l, o->nsfds ? o->nsfds[i] : -1);
	if (r < 0) {
		life_free(l);
		return r;
	}
	*ret = l;
	return 0;
}

void life_free(struct life *l)
{
	if (!l)
		return;
	for (size_t i = 0; l->ns && i < l->n; i++) {
		sdiag_watch_close(l->ns[i].w);
		sdiag_close(l->ns[i].h);
	}
	free(l->ns);
	ctab_fini(&l->tab);
	free(l->lports);
	free(l->lnext);
	free(l);
}
