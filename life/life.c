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
#include <unistd.h>
#include <netinet/in.h>
#include <sys/stat.h>

#include "life/life.h"
#include "life/life_bpf.h"
#include "util/clock.h"
#include "util/ctab.h"

struct entry {
	uint64_t cookie;	/* first: the cookie table's key */
	uint32_t gen;		/* the last dump that showed it */
	bool reported;		/* recorded by a dump: drop its destroy event */
	bool aborted;		/* destroyed by this process */
	bool bpf_only;		/* known from the tracepoint, not yet from a dump */
	bool owner_asked;	/* looked up once, at the first dump that showed it */
	int err;		/* --bpf: the error it ended with (bpf_ev), 0 none */
	struct life_rec r;	/* tuple, first seen, last state, owners, counters */
};

struct life_ns {
	struct sdiag_handle *h;
	struct sdiag_watch *w;
	uint32_t inum;		/* the namespace's inode (the tracepoint's records name it) */
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
	struct life_bpf *bpf;	/* --bpf loaded; else NULL and bpf_err says why */
	int bpf_err;
	/* during a read or a dump */
	unsigned cur;
	life_cb cb;
	void *ud;
	int cb_err;
	int count;
	/* Sockets this poll's dumps found without an owner: (cookie, inode). */
	uint64_t *want;
	size_t nwant, capwant;
	/* The last poll: its CPU time, the gap it set, the next one's due time. */
	uint64_t cpu_ns, gap_ns, due;
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

/* Room for want elements of size bytes in the growing array *p of *cap. */
static int room(void *p, size_t *cap, size_t want, size_t size)
{
	void **a = p, *n;
	size_t c = *cap ? *cap : 64;

	if (want <= *cap)
		return 0;
	while (c < want)
		c *= 2;
	n = realloc(*a, c * size);
	if (!n)
		return -ENOMEM;
	*a = n;
	*cap = c;
	return 0;
}

static int add_listener(struct life *l, const struct sdiag_sock *s)
{
	if (room(&l->lnext, &l->capnext, l->nnext + 1, sizeof(*l->lnext)) < 0)
		return -ENOMEM;
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

	r->passive = passive;
	if (aborted) {
		r->outcome = LIFE_ABORTED;
	} else if (!ti->tcpi_bytes_acked && !ti->tcpi_bytes_received && !ti->tcpi_segs_out) {
		/* tcp_disconnect() moved write_seq past the largest window the
		 * peer offered (+2): 3 or less, the peer never answered. */
		if (wqueue > 3) {
			r->outcome = LIFE_UNACCEPTED;
			r->passive = true;
			return;
		}
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
	r->passive = passive;
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

/* Destroyed on this host: by this process, or (--bpf) it closed with
 * ECONNABORTED, tcp_abort()'s error. */
static bool destroyed_here(const struct entry *e)
{
	return e->aborted || e->err == ECONNABORTED;
}

/* The outcome the error it ended with says (--bpf: the errno its owner got),
 * else the one judged. */
static enum life_outcome by_errno(bool aborted, int err, enum life_outcome judged)
{
	return aborted				  ? LIFE_ABORTED
	       : err == ETIMEDOUT		  ? LIFE_TIMEOUT
	       : err == ECONNREFUSED		  ? LIFE_REFUSED
	       : err == ECONNRESET || err == EPIPE ? LIFE_RESET
						  : judged;
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
 * cleared (a failed connect: peer port 0); a tracepoint's entry has none. */
static bool event_match(const struct life *l, const struct entry *e, const struct sdiag_sock *s)
{
	struct sdiag_sock t;

	if (!e || !e->r.cookie || s->inet.dport)
		return sdiag_filter_match(l->o.filter, s);
	t = *s;
	memcpy(t.inet.src, e->r.src, 16);
	memcpy(t.inet.dst, e->r.dst, 16);
	t.inet.sport = e->r.sport;
	t.inet.dport = e->r.dport;
	return sdiag_filter_match(l->o.filter, &t);
}

/* A tracepoint record: a birth (the exact start), an owner's call or an end
 * with an error. A socket no dump has seen gets an entry of its own (bpf_only). */
static void bpf_ev(const struct sd_life_ev *ev, uint64_t ms, void *ud)
{
	struct life *l = ud;
	struct entry *e = find(l, ev->cookie);

	if (!e) {
		size_t i = 0;

		while (i < l->n && l->ns[i].inum != ev->netns)
			i++;
		if (i == l->n || !(e = add(l, ev->cookie)))
			return; /* a namespace let go; out of memory: start not exact */
		e->bpf_only = true;
		e->gen = l->gen;
		e->r.ns = (unsigned)i;
	}
	if (e->reported)
		return;
	if (ev->kind & SD_LIFE_BIRTH) {
		e->r.start_ms = ms;
		e->r.start_exact = true;
	}
	if (ev->cgroup_id && !e->r.cgroup_id)
		e->r.cgroup_id = ev->cgroup_id;
	if ((ev->kind & SD_LIFE_OWNER) && ev->pid > 0 && !e->r.pid) {
		e->r.pid = ev->pid;
		memcpy(e->r.comm, ev->comm, sizeof(e->r.comm));
	}
	/* An orphan's error reached no one (a client that closed, then reset by a
	 * listener closed with it queued, saw success): the tcp_info judges. */
	if ((ev->kind & SD_LIFE_END) && (!(ev->kind & SD_LIFE_ORPHAN) || ev->err == ECONNABORTED))
		e->err = ev->err;
}

static void bpf_read(struct life *l)
{
	if (l->bpf)
		life_bpf_drain(l->bpf, bpf_ev, l);
}

static int event_cb(const struct sdiag_sock *s, void *ud)
{
	struct life *l = ud;
	struct entry *e = find(l, s->cookie);
	struct sdiag_tcp_info ti;
	struct life_rec r;
	bool aborted = false;
	int err = 0;

	if (!e && l->bpf) { /* born after the ring was read, ended since */
		bpf_read(l);
		e = find(l, s->cookie);
	}

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
		aborted = destroyed_here(e);
		err = e->err;
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
	r.outcome = by_errno(aborted, err, r.outcome);
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
	bpf_read(l); /* births before the ends they belong to */
	r = sdiag_watch_read(l->ns[i].w, NULL, event_cb, l, ret_lost);
	if (l->cb_err)
		return l->cb_err;
	return r < 0 ? r : l->count;
}

static int want_owner(struct life *l, uint64_t cookie, uint64_t inode)
{
	if (room(&l->want, &l->capwant, l->nwant + 2, sizeof(*l->want)) < 0)
		return -ENOMEM;
	l->want[l->nwant++] = cookie;
	l->want[l->nwant++] = inode;
	return 0;
}

/* The owners of the sockets the dumps found without one: the processes'
 * descriptors are scanned only then (a scan costs as much as every
 * process's descriptors, socket or not: most of an idle poll's time). */
static void find_owners(struct life *l)
{
	struct sdiag_procmap *pm = NULL;

	if (l->nwant && sdiag_procmap_scan(&pm, NULL) == 0) {
		for (size_t i = 0; i < l->nwant; i += 2) {
			struct entry *e = find(l, l->want[i]);
			const struct sdiag_proc *p;

			if (e && !e->r.pid && sdiag_procmap_lookup(pm, l->want[i + 1], &p)) {
				e->r.pid = p->pid;
				memcpy(e->r.comm, p->comm, sizeof(e->r.comm));
			}
		}
		sdiag_procmap_free(pm);
	}
	l->nwant = 0;
}

static int seen(struct life *l, const struct sdiag_sock *s)
{
	struct entry *e = find(l, s->cookie);
	struct sdiag_tcp_info ti;

	/* The kernel filter passed it; the rest of the filter is ours. */
	if (s->state == SDIAG_SS_LISTEN)
		return s->table == SDIAG_T_TCP ? add_listener(l, s) : 0;
	/* A timewait socket carries no tcp_info (a FIN-WAIT-2 one passes the state
	 * filter, under a cookie of its own): its connection's socket is freed and
	 * recorded by its destroy event; this one is no second connection. */
	if (s->table == SDIAG_T_TCP && !(s->has & SDIAG_HAS_TCP_INFO))
		return 0;
	if (l->o.filter && !sdiag_filter_match(l->o.filter, s))
		return 0;
	if (!e) {
		e = add(l, s->cookie);
		if (!e)
			return -ENOMEM;
		e->r.start_ms = real_ms();
		e->r.ns = l->cur;
	} else if (e->reported) {
		return 0;
	}
	if (l->o.owners && !e->r.pid && !e->owner_asked && s->inode) {
		e->owner_asked = true;
		if (want_owner(l, s->cookie, s->inode) < 0)
			return -ENOMEM;
	}
	e->bpf_only = false;
	e->gen = l->gen;
	e->r.state = s->state;
	/* The tuple the first time (a tracepoint's entry has none), and while connected. */
	if (!e->r.cookie || s->inet.dport)
		take_tuple(&e->r, s);
	if (s->has & SDIAG_HAS_QUEUES) {
		e->r.has_queues = true;
		e->r.rqueue = s->rqueue;
		e->r.wqueue = s->wqueue;
	}
	if (s->table == SDIAG_T_UDP && (s->has & SDIAG_HAS_SKMEMINFO)) {
		uint32_t mem[SDIAG_SKMEM_VARS];

		if (sdiag_sock_blob_copy(s, SDIAG_BLOB_SKMEMINFO, mem, sizeof(mem)) >
		    SDIAG_SKMEM_DROPS * sizeof(mem[0])) {
			e->r.has_drops = true;
			e->r.drops = mem[SDIAG_SKMEM_DROPS];
		}
	}
	take_info(&e->r, s, &ti);
	return 0;
}

/* The gap after the poll that started at t0 and cost cpu ns: the interval,
 * or what keeps the polls within the budget, up to LIFE_STRETCH intervals. */
static void schedule(struct life *l, uint64_t t0, uint64_t cpu)
{
	uint64_t iv = l->o.interval_ns ? l->o.interval_ns : 1000000000ull;
	uint32_t ppm = l->o.budget_ppm ? l->o.budget_ppm : LIFE_BUDGET_PPM;
	uint64_t gap = iv, need = ppm == LIFE_BUDGET_OFF ? 0 : cpu * 1000000 / ppm;

	if (need > gap)
		gap = need < iv * LIFE_STRETCH ? need : iv * LIFE_STRETCH;
	l->cpu_ns = cpu;
	l->gap_ns = gap;
	l->due = t0 + gap;
}

uint64_t life_due(const struct life *l)
{
	return l->due;
}

void life_poll_cost(const struct life *l, uint64_t *ret_cpu_ns, uint64_t *ret_gap_ns)
{
	*ret_cpu_ns = l->cpu_ns;
	*ret_gap_ns = l->gap_ns;
}

int life_poll(struct life *l, life_cb cb, void *ud, uint64_t *ret_lost)
{
	/* UDP's drop counter is in the socket's meminfo: asked only when UDP is. */
	SDIAG_OPTS(sdiag_query, q, .tables = l->o.tables, .afs = l->o.afs,
		   .show = SDIAG_SHOW_TCP_INFO |
			   (l->o.tables & SDIAG_TABLE_BIT(SDIAG_T_UDP) ? SDIAG_SHOW_MEM : 0),
		   .filter = NULL,
		   /* Full sockets only: a TIME_WAIT or request socket is not one. */
		   .states = SDIAG_STATES_ALL & ~(SDIAG_STATE_BIT(SDIAG_SS_TIME_WAIT) |
						  SDIAG_STATE_BIT(SDIAG_SS_NEW_SYN_RECV)));
	uint64_t lost = 0, more, cpu = 0, c0, t0 = mono_ns();
	int r = 0, n = 0;

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
		c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		r = sdiag_dump_begin(l->ns[i].h, &q, &d);
		if (r < 0)
			break;
		while ((r = sdiag_dump_next(d, &s)) != 0) {
			if (r > 0 && (r = seen(l, s)) < 0)
				break;
			r = 0; /* a table the kernel cannot dump is skipped */
		}
		sdiag_dump_end(d);
		cpu += clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		if (r < 0)
			break;
		r = life_events(l, i, cb, ud, &more);
		lost += more;
		if (r > 0)
			n += r;
	}
	find_owners(l);
	schedule(l, t0, cpu);
	listeners_done(l);
	if (ret_lost)
		*ret_lost = lost;
	if (r < 0)
		return r;
	/* Alive in the last dump, in none now, no destroy event: ended while held.
	 * The kernel unhashes a closing socket (which dumps then miss) just before
	 * the tracepoint fires: the ring is read once more for the ends since. */
	bpf_read(l);
	l->cb = cb;
	l->ud = ud;
	l->count = 0;
	for (size_t i = 0; i < ctab_len(&l->tab); i++) {
		struct entry *e = ctab_at(&l->tab, i);

		if (e->reported || e->gen == l->gen)
			continue;
		if (e->bpf_only) {
			/* Born, never dumped, no end in two dumps: its destroy event was
			 * lost (counted) or filtered; forgotten without a record. One
			 * that ended with an error (held, no tuple) waits for its event. */
			if (l->gen - e->gen >= 2 && !e->err) {
				del(l, e);
				i--; /* backward shift may have moved another entry here */
			}
			continue;
		}
		e->reported = true;
		e->r.by_poll = true;
		e->r.passive = e->r.proto == IPPROTO_TCP && listening(l, e->r.ns, e->r.sport);
		e->r.has_info = false; /* the last dump's counters, not the final ones */
		e->r.outcome = by_errno(destroyed_here(e), e->err,
					e->r.proto == IPPROTO_TCP ? LIFE_RESET : LIFE_OK);
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

int life_bpf_error(const struct life *l)
{
	return l->bpf ? 0 : l->bpf_err;
}

uint64_t life_bpf_missed(const struct life *l)
{
	return l->bpf ? life_bpf_lost(l->bpf) : 0;
}

const char *life_bpf_why(int err)
{
	return err == -EOPNOTSUPP ? "built without BPF (clang's BPF target, bpftool or the libbpf "
				    "headers missing at build time)"
	       : err == -ENOENT   ? "no kernel BTF (/sys/kernel/btf/vmlinux)"
	       : err == -EPERM	  ? "not permitted (needs CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN)"
				  : strerror(-err);
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

static int ns_inode(int fd, uint32_t *ret)
{
	struct stat st;

	if ((fd < 0 ? stat("/proc/self/ns/net", &st) : fstat(fd, &st)) < 0)
		return -errno;
	*ret = (uint32_t)st.st_ino;
	return 0;
}

/* Subscribe in nsfd (-1: ours) and open its dump handle, as namespace l->n. */
static int ns_open(struct life *l, int fd)
{
	struct life_ns *n = &l->ns[l->n];
	int r;

	memset(n, 0, sizeof(*n));
	/* Subscribed before the first dump: every socket it sees announces its end. */
	r = sdiag_watch_open(&n->w, l->o.groups, fd);
	if (r == 0)
		r = ns_inode(fd, &n->inum);
	if (r == 0 && l->bpf)
		r = life_bpf_net(l->bpf, n->inum, 1);
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
	if (l->bpf)
		life_bpf_net(l->bpf, l->ns[i].inum, 0);
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

static bool has_inode(const struct sdiag_netns *ns, size_t n, uint64_t inode)
{
	for (size_t i = 0; i < n; i++)
		if (ns[i].inode == inode)
			return true;
	return false;
}

int life_follow_all(struct life *l, struct sdiag_netns **ns, size_t *nns, life_cb cb, void *ud,
		    uint64_t *ret_lost)
{
	struct sdiag_netns *now = NULL;
	size_t n = 0;
	uint64_t lost;
	int r = sdiag_netns_list(&now, &n);

	*ret_lost = 0;
	if (r < 0)
		return r;
	for (size_t i = *nns; i-- > 0;) {
		if (has_inode(now, n, (*ns)[i].inode))
			continue;
		r = life_events(l, i, cb, ud, &lost);
		*ret_lost += lost;
		life_ns_remove(l, i);
		memmove(&(*ns)[i], &(*ns)[i + 1], (*nns - i - 1) * sizeof(**ns));
		(*nns)--;
		if (r < 0)
			goto out;
	}
	r = 0;
	for (size_t i = 0; i < n; i++) {
		struct sdiag_netns *g;
		int fd, k;

		if (has_inode(*ns, *nns, now[i].inode) || sdiag_netns_open(now[i].path, &fd) < 0)
			continue; /* followed, or gone already */
		g = realloc(*ns, (*nns + 1) * sizeof(*g));
		k = g ? life_ns_add(l, fd) : -ENOMEM;
		close(fd);
		if (g)
			*ns = g;
		if (k < 0) {
			r = k;
			break;
		}
		(*ns)[(*nns)++] = now[i];
	}
out:
	free(now);
	return r;
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
	/* Loaded before the first subscription: every namespace is followed from its start. */
	l->bpf_err = o->bpf ? life_bpf_open(&l->bpf) : -ENODATA;
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
	life_bpf_close(l->bpf);
	free(l->ns);
	ctab_fini(&l->tab);
	free(l->lports);
	free(l->lnext);
	free(l->want);
	free(l);
}
