/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Destroy: close sockets through SOCK_DESTROY, exactly and in batches.
 *
 * Exactness. Every request names the socket as the dump reported it,
 * cookie included, so a socket that closed and was replaced on the same
 * addresses is never hit (the kernel answers ENOENT: "gone"). Listener and
 * unconnected-UDP lookups pick one SO_REUSEPORT member by hashing the
 * request's remote side, so a member whose cookie did not match may still
 * exist: such requests are retried with other remote ports (which the
 * lookup ignores for matching) before the socket is called gone.
 *
 * Streaming. A destroyer holds at most one batch of records; results come
 * back through a callback, in the order the records were added, so memory
 * stays flat however many sockets are destroyed.
 *
 * Passes. sdiag_kill destroys while it dumps. Dumps resume each chunk at
 * (hash bucket, index), and every socket destroyed removes an entry before
 * that index, so the rest of the dump can skip live sockets. A kill
 * therefore dumps again while the previous pass destroyed anything, acting
 * only on sockets it has not reported yet. Those are told by cookie, and
 * only the cookies of sockets that a later dump can show again are kept: a
 * TCP socket the kernel destroyed is unhashed (tcp_done) and can at most
 * be reported as bound-inactive, which later passes do not dump; anything
 * else (UDP keeps an explicitly bound socket hashed, a failure leaves the
 * socket as it was) is remembered. Killing every TCP socket so remembers
 * nothing, and costs no lookup in a table larger than the caches.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <libmnl/libmnl.h>

#include "lib/ops/destroy.h"
#include "lib/ops/ops.h"
#include "util/hash.h"

#define DEFAULT_BATCH 1024u
#define REUSEPORT_TRIES 64u /* remote ports tried before "gone" */
#define DEFAULT_PASSES 4u

struct pend {
	struct sdiag_sock *s; /* our copy: &rec, or a sdiag_sock_dup() one */
	struct sdiag_sock rec; /* inline copy of a record with nothing borrowed */
	unsigned variant;     /* remote port used for the next request; 0 = as dumped */
	bool done;
	int err;
	enum sdiag_destroy_result res;
};

struct sdiag_destroyer {
	struct sd_dnl *nl;
	sdiag_destroy_cb cb;
	void *userdata;
	unsigned batch; /* records held before a flush */
	unsigned n;
	struct pend *pend; /* batch entries */
	unsigned *wire;	   /* pend index of each request on the wire */
	int *errs;
};

SD_EXPORT const char *sdiag_destroy_result_name(enum sdiag_destroy_result r)
{
	static const char *const names[] = {
		[SDIAG_DESTROYED] = "destroyed",
		[SDIAG_GONE] = "gone",
		[SDIAG_UNSUPPORTED] = "unsupported",
		[SDIAG_DENIED] = "denied",
		[SDIAG_ERROR] = "error",
	};

	return (unsigned)r < sizeof(names) / sizeof(names[0]) ? names[r] : NULL;
}

SD_EXPORT bool sdiag_destroyable(const struct sdiag_sock *s)
{
	if (!s || (s->family != AF_INET && s->family != AF_INET6))
		return false;
	switch (s->table) {
	case SDIAG_T_TCP:
		/* Bound-inactive sockets (the kernel reports them as CLOSE) are
		 * in no lookup table. */
		return s->state != SDIAG_SS_CLOSE && s->state != SDIAG_SS_BOUND_INACTIVE;
	case SDIAG_T_UDP:
	case SDIAG_T_RAW:
		return true;
	default:
		/* MPTCP and SCTP diag handlers have no destroy operation; the
		 * UDP-Lite one has, but UDP-Lite sockets lack the protocol's
		 * abort (udplite_prot has no diag_destroy: EOPNOTSUPP). */
		return false;
	}
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* Sockets found by a lookup that SO_REUSEPORT selection applies to. */
static bool reuseport_lookup(const struct sdiag_sock *s)
{
	if (s->table == SDIAG_T_TCP)
		return s->state == SDIAG_SS_LISTEN;
	if (s->table == SDIAG_T_UDP || s->table == SDIAG_T_UDPLITE)
		return s->inet.dport == 0 && all_zero(s->inet.dst, sizeof(s->inet.dst));
	return false;
}

static enum sdiag_destroy_result map_result(const struct sdiag_sock *s, int err)
{
	switch (err) {
	case 0:
		return SDIAG_DESTROYED;
	case -ENOENT:
		return SDIAG_GONE;
	case -EPERM:
	case -EACCES:
		return SDIAG_DENIED;
	case -EOPNOTSUPP:
		return SDIAG_UNSUPPORTED;
	case -EINVAL:
		/* A well-formed request naming a listener: the kernel refuses to
		 * abort MPTCP's listening subflows (tcp_abort_override). */
		if (s->table == SDIAG_T_TCP && s->state == SDIAG_SS_LISTEN)
			return SDIAG_UNSUPPORTED;
		return SDIAG_ERROR;
	default:
		return SDIAG_ERROR;
	}
}

SD_EXPORT int sdiag_destroyer_new(struct sdiag_destroyer **ret, struct sdiag_handle *h,
				  sdiag_destroy_cb cb, void *userdata)
{
	struct sdiag_destroyer *d;
	int r;

	if (!ret || !h || !cb)
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->cb = cb;
	d->userdata = userdata;
	r = sd_dnl_open(&d->nl, sd_handle_fd(h));
	if (r < 0)
		goto fail;
	r = sd_dnl_probe(d->nl);
	if (r < 0)
		goto fail;
	r = sdiag_destroyer_set_batch(d, DEFAULT_BATCH);
	if (r < 0)
		goto fail;
	*ret = d;
	return 0;
fail:
	sdiag_destroyer_free(d);
	return r;
}

SD_EXPORT int sdiag_destroy_check(struct sdiag_handle *h)
{
	struct sd_dnl *nl = NULL;
	int r;

	if (!h)
		return -EINVAL;
	r = sd_dnl_open(&nl, sd_handle_fd(h));
	if (r >= 0)
		r = sd_dnl_probe(nl);
	sd_dnl_close(nl);
	return r < 0 ? r : 0;
}

SD_EXPORT int sdiag_destroyer_set_batch(struct sdiag_destroyer *d, unsigned n)
{
	unsigned cap = sd_dnl_capacity(d->nl);
	struct pend *p;
	unsigned *w;
	int *e;
	int r;

	if (!n)
		return -EINVAL;
	r = sdiag_destroyer_flush(d);
	if (r < 0)
		return r;
	if (n > cap)
		n = cap;
	p = calloc(n, sizeof(*p));
	w = calloc(n, sizeof(*w));
	e = calloc(n, sizeof(*e));
	if (!p || !w || !e) {
		free(p);
		free(w);
		free(e);
		return -ENOMEM;
	}
	free(d->pend);
	free(d->wire);
	free(d->errs);
	d->pend = p;
	d->wire = w;
	d->errs = e;
	d->batch = n;
	return (int)n;
}

SD_EXPORT int sdiag_destroyer_add(struct sdiag_destroyer *d, const struct sdiag_sock *s)
{
	struct pend *p;
	int r;

	if (!d || !s)
		return -EINVAL;
	if (d->n == d->batch) {
		r = sdiag_destroyer_flush(d);
		if (r < 0)
			return r;
	}
	p = &d->pend[d->n];
	p->variant = 0;
	p->done = false;
	p->err = 0;
	p->res = SDIAG_DESTROYED;
	/* Most records (inet, no details asked for) borrow nothing: a copy in
	 * place spares a malloc and a free per socket. */
	if (!sd_sock_borrows(s)) {
		p->rec = *s;
		p->s = &p->rec;
	} else {
		p->s = sdiag_sock_dup(s);
		if (!p->s)
			return -ENOMEM;
	}
	if (!sdiag_destroyable(s)) {
		/* Never sent: the kernel has no way to destroy it. */
		p->done = true;
		p->err = -EOPNOTSUPP;
		p->res = SDIAG_UNSUPPORTED;
	}
	d->n++;
	return 0;
}

static void finish(struct pend *p, int err)
{
	p->done = true;
	p->err = err;
	p->res = map_result(p->s, err);
}

/* One round trip: every unfinished entry's request in one sendmsg. Returns
 * how many entries are still unfinished (retries), or a negative errno. */
static int round_trip(struct sdiag_destroyer *d)
{
	unsigned k = 0, again = 0;
	int r;

	sd_dnl_reset(d->nl);
	for (unsigned i = 0; i < d->n; i++) {
		struct pend *p = &d->pend[i];

		if (p->done)
			continue;
		r = sd_dnl_add(d->nl, p->s, p->variant);
		if (r < 0) {
			/* Cannot be named exactly (no cookie): never sent. */
			p->done = true;
			p->err = r;
			p->res = SDIAG_ERROR;
			continue;
		}
		d->wire[k++] = i;
	}
	if (!k)
		return 0;
	r = sd_dnl_send(d->nl, d->errs, k);
	for (unsigned j = 0; j < k; j++) {
		struct pend *p = &d->pend[d->wire[j]];
		int err = r < 0 ? r : d->errs[j];

		if (err == -ENOENT && reuseport_lookup(p->s) && p->variant + 1 < REUSEPORT_TRIES) {
			p->variant++;
			again++;
			continue;
		}
		finish(p, err);
	}
	return (int)again;
}

SD_EXPORT int sdiag_destroyer_flush(struct sdiag_destroyer *d)
{
	int r = 0, cr = 0;

	if (!d)
		return -EINVAL;
	while ((r = round_trip(d)) > 0)
		;
	/* Report every entry, in order, even after a callback asked to stop:
	 * the records were acted upon and the copies must go. */
	for (unsigned i = 0; i < d->n; i++) {
		struct pend *p = &d->pend[i];

		if (!p->done)
			finish(p, r < 0 ? r : -EIO);
		if (!cr)
			cr = d->cb(p->s, p->res, p->err, d->userdata);
		if (p->s != &p->rec)
			free(p->s);
		p->s = NULL;
	}
	d->n = 0;
	return r < 0 ? r : cr < 0 ? cr : 0;
}

SD_EXPORT void sdiag_destroyer_free(struct sdiag_destroyer *d)
{
	if (!d)
		return;
	for (unsigned i = 0; i < d->n; i++)
		if (d->pend[i].s != &d->pend[i].rec)
			free(d->pend[i].s);
	free(d->pend);
	free(d->wire);
	free(d->errs);
	sd_dnl_close(d->nl);
	free(d);
}

/* ---- sdiag_destroy: a set of records ------------------------------------------- */

struct array_run {
	enum sdiag_destroy_result *res;
	int *errs;
	size_t i;
};

static int array_cb(const struct sdiag_sock *s, enum sdiag_destroy_result res, int err,
		    void *userdata)
{
	struct array_run *a = userdata;

	(void)s;
	a->res[a->i] = res;
	if (a->errs)
		a->errs[a->i] = err;
	a->i++;
	return 0;
}

SD_EXPORT int sdiag_destroy(struct sdiag_handle *h, const struct sdiag_sock *const *socks, size_t n,
			    enum sdiag_destroy_result *ret_results, int *ret_errs)
{
	struct array_run a = { 0 };
	struct sdiag_destroyer *d = NULL;
	int r;

	if (!h || (n && (!socks || !ret_results)))
		return -EINVAL;
	a.res = malloc((n ? n : 1) * sizeof(*a.res));
	a.errs = malloc((n ? n : 1) * sizeof(*a.errs));
	if (!a.res || !a.errs) {
		r = -ENOMEM;
		goto out;
	}
	r = sdiag_destroyer_new(&d, h, array_cb, &a);
	if (r < 0)
		goto out;
	for (size_t i = 0; i < n && r >= 0; i++)
		r = sdiag_destroyer_add(d, socks[i]);
	if (r >= 0)
		r = sdiag_destroyer_flush(d);
	if (r < 0)
		goto out;
	memcpy(ret_results, a.res, n * sizeof(*a.res));
	if (ret_errs)
		memcpy(ret_errs, a.errs, n * sizeof(*a.errs));
	r = 0;
out:
	sdiag_destroyer_free(d);
	free(a.res);
	free(a.errs);
	return r;
}

/* ---- sdiag_kill: dump and destroy ------------------------------------------------ */

/* Cookies already reported, so that later passes act on new sockets only. */
struct cookie_set {
	uint64_t *keys; /* open addressing; 0 = empty (cookies are never 0) */
	size_t cap;	/* power of two */
	size_t used;
};

static int set_grow(struct cookie_set *c)
{
	size_t ncap = c->cap ? c->cap * 2 : 1024;
	uint64_t *nk = calloc(ncap, sizeof(*nk));

	if (!nk)
		return -ENOMEM;
	for (size_t i = 0; i < c->cap; i++) {
		size_t j;

		if (!c->keys[i])
			continue;
		for (j = hash_u64(c->keys[i]) & (ncap - 1); nk[j]; j = (j + 1) & (ncap - 1))
			;
		nk[j] = c->keys[i];
	}
	free(c->keys);
	c->keys = nk;
	c->cap = ncap;
	return 0;
}

/* Returns 1 if present, 0 if inserted now, or a negative errno. */
static int set_insert(struct cookie_set *c, uint64_t key)
{
	size_t i;

	if ((c->used + 1) * 2 > c->cap && set_grow(c) < 0)
		return -ENOMEM;
	for (i = hash_u64(key) & (c->cap - 1); c->keys[i]; i = (i + 1) & (c->cap - 1))
		if (c->keys[i] == key)
			return 1;
	c->keys[i] = key;
	c->used++;
	return 0;
}

static bool set_has(const struct cookie_set *c, uint64_t key)
{
	if (!c->cap)
		return false;
	for (size_t i = hash_u64(key) & (c->cap - 1); c->keys[i]; i = (i + 1) & (c->cap - 1))
		if (c->keys[i] == key)
			return true;
	return false;
}

struct kill_run {
	struct sdiag_destroyer *d;
	struct cookie_set seen;	  /* every socket reported */
	struct cookie_set tokens; /* --mptcp-subflows: tokens of matched MPTCP sockets */
	unsigned pass;
	uint64_t destroyed; /* in the current dump */
	sdiag_destroy_cb cb;
	sdiag_error_cb err_cb;
	void *userdata;
};

/* Whether a later pass's dump can show this socket again (see the top). */
static bool may_reappear(const struct sdiag_sock *s, enum sdiag_destroy_result res)
{
	return !(s->table == SDIAG_T_TCP && res == SDIAG_DESTROYED);
}

static int kill_result_cb(const struct sdiag_sock *s, enum sdiag_destroy_result res, int err,
			  void *userdata)
{
	struct kill_run *k = userdata;
	int r, cr;

	if (res == SDIAG_DESTROYED)
		k->destroyed++;
	/* The caller hears every result, even when remembering it fails. */
	cr = k->cb(s, res, err, k->userdata);
	if ((s->has & SDIAG_HAS_COOKIE) && may_reappear(s, res)) {
		r = set_insert(&k->seen, s->cookie);
		if (r < 0 && !cr)
			cr = r;
	}
	return cr;
}

static int kill_sock_cb(const struct sdiag_sock *s, void *userdata)
{
	struct kill_run *k = userdata;
	int r;

	if (k->pass > 0 && (!(s->has & SDIAG_HAS_COOKIE) || !sdiag_destroyable(s))) {
		/* Later passes look for destroyable sockets the first one's dump
		 * skipped; a record without a cookie cannot be told apart from
		 * one reported before. */
		return 0;
	}
	/* Reported by an earlier dump. (Repeats within one dump are the dump
	 * layer's to drop.) */
	if ((s->has & SDIAG_HAS_COOKIE) && set_has(&k->seen, s->cookie))
		return 0;
	if (s->table == SDIAG_T_MPTCP && k->tokens.keys && (s->has & SDIAG_HAS_MPTCP_INFO)) {
		struct sdiag_mptcp_info mi;

		sdiag_sock_blob_copy(s, SDIAG_BLOB_MPTCP_INFO, &mi, sizeof(mi));
		r = mi.mptcpi_token ? set_insert(&k->tokens, mi.mptcpi_token) : 0;
		if (r < 0)
			return r;
	}
	return sdiag_destroyer_add(k->d, s);
}

/* Later passes stay quiet about tables the first pass already reported. */
static int kill_err_cb(enum sdiag_table t, int family, int err, void *userdata)
{
	struct kill_run *k = userdata;

	if (k->pass > 0 && (err == -EAFNOSUPPORT || err == -EPROTONOSUPPORT))
		return 0;
	if (!k->err_cb)
		return err;
	return k->err_cb(t, family, err, k->userdata);
}

/* MPTCP_SUBFLOW_ATTR_TOKEN_LOC of a subflow's ULP info: its connection's token. */
static uint32_t subflow_token(const struct sdiag_sock *s)
{
	const struct nlattr *attr;

	if (!s->inet.ulp_mptcp || strcmp(s->inet.ulp, "mptcp") != 0)
		return 0;
	mnl_attr_for_each_payload(s->inet.ulp_mptcp, s->inet.ulp_mptcp_len) {
		if (mnl_attr_get_type(attr) == 2 /* MPTCP_SUBFLOW_ATTR_TOKEN_LOC */ &&
		    mnl_attr_get_payload_len(attr) >= sizeof(uint32_t))
			return mnl_attr_get_u32(attr);
	}
	return 0;
}

static int subflow_cb(const struct sdiag_sock *s, void *userdata)
{
	struct kill_run *k = userdata;
	uint32_t token = subflow_token(s);

	if (!token || !set_has(&k->tokens, token) || set_has(&k->seen, s->cookie))
		return 0;
	return sdiag_destroyer_add(k->d, s);
}

/* The TCP subflows of the MPTCP connections the first pass matched. */
static int kill_subflows(struct sdiag_handle *h, const struct sdiag_query *q, struct kill_run *k)
{
	SDIAG_OPTS(sdiag_query, sq,
			.tables = SDIAG_TABLE_BIT(SDIAG_T_TCP),
			.states = SDIAG_STATES_ALL & ~SDIAG_STATE_BIT(SDIAG_SS_LISTEN),
			.afs = sd_query_afs(q, SDIAG_T_MPTCP),
			.show = SDIAG_SHOW_INFO); /* carries the ULP info */
	int r;

	if (!k->tokens.used)
		return 0;
	r = sdiag_dump(h, &sq, subflow_cb, kill_err_cb, k);
	if (r >= 0)
		r = sdiag_destroyer_flush(k->d);
	return r;
}

/* One dump and the destroys it queued. Returns how many were destroyed, or a
 * negative errno. */
static int64_t kill_dump(struct sdiag_handle *h, const struct sdiag_query *uq, struct kill_run *k)
{
	int r;

	k->destroyed = 0;
	r = sdiag_dump(h, uq, kill_sock_cb, kill_err_cb, k);
	if (r >= 0)
		r = sdiag_destroyer_flush(k->d);
	return r < 0 ? r : (int64_t)k->destroyed;
}

/*
 * One pass: a dump per inet table and address family (TCP: one for both
 * families), flushing after each so that destroys land while their own dump
 * runs, then, in the first pass,
 * one for every other table (nothing there can be destroyed, but it is
 * reported). again[af] collects the tables whose dump destroyed something:
 * the only dumps that can have skipped a live socket, hence the only ones the
 * next pass repeats.
 */
static int kill_pass(struct sdiag_handle *h, const struct sdiag_query *pq, const uint32_t todo[2],
		     uint32_t again[2], struct kill_run *k)
{
	static const uint32_t afs[2] = { SDIAG_AF_INET, SDIAG_AF_INET6 };
	struct sdiag_query uq = *pq;
	int64_t n;

	/* Each dump names its family in afs; todo holds the tables' own. */
	memset(uq.table_afs, 0, sizeof(uq.table_afs));
	again[0] = again[1] = 0;
	for (unsigned t = 0; t < SDIAG_T_MAX; t++) {
		uint32_t bit = SDIAG_TABLE_BIT(t);

		/* TCP of both families: one dump, which the dump layer serves
		 * with a single walk of the kernel's established hash. */
		if (t == SDIAG_T_TCP && (todo[0] & bit) && (todo[1] & bit)) {
			uq.tables = bit;
			uq.afs = SDIAG_AF_ALL;
			n = kill_dump(h, &uq, k);
			if (n < 0)
				return (int)n;
			if (n > 0) {
				again[0] |= bit;
				again[1] |= bit;
			}
			continue;
		}
		for (unsigned f = 0; f < 2; f++) {
			if (!(todo[f] & SDIAG_TABLE_BIT(t)))
				continue;
			uq.tables = SDIAG_TABLE_BIT(t);
			uq.afs = afs[f];
			n = kill_dump(h, &uq, k);
			if (n < 0)
				return (int)n;
			if (n > 0)
				again[f] |= SDIAG_TABLE_BIT(t);
		}
	}
	uq.tables = pq->tables & ~SDIAG_TABLES_INET;
	uq.afs = pq->afs;
	if (k->pass == 0 && uq.tables) {
		n = kill_dump(h, &uq, k);
		if (n < 0)
			return (int)n;
	}
	return 0;
}

SD_EXPORT int sdiag_kill(struct sdiag_handle *h, const struct sdiag_query *q,
			 const struct sdiag_kill_opts *o, sdiag_destroy_cb cb,
			 sdiag_error_cb err_cb, void *userdata)
{
	struct kill_run k = { .cb = cb, .err_cb = err_cb, .userdata = userdata };
	struct sdiag_kill_opts oo = { .sz = sizeof(oo) };
	struct sdiag_query qq, pq;
	uint32_t todo[2], again[2];
	unsigned passes;
	int r;

	if (!h || !q || !cb)
		return -EINVAL;
	r = sd_opts_load(&qq, sizeof(qq), SD_QUERY_KNOWN, q);
	if (r == 0 && o)
		r = sd_opts_load(&oo, sizeof(oo), SD_KILL_OPTS_KNOWN, o);
	if (r < 0)
		return r;
	q = &qq;
	o = &oo;
	passes = o->max_passes ? o->max_passes : DEFAULT_PASSES;
	r = sdiag_destroyer_new(&k.d, h, kill_result_cb, &k);
	if (r < 0)
		return r;
	if (o->batch) {
		r = sdiag_destroyer_set_batch(k.d, o->batch);
		if (r < 0)
			goto out;
	}
	pq = *q;
	if (o->mptcp_subflows && (q->tables & SDIAG_TABLE_BIT(SDIAG_T_MPTCP))) {
		r = set_grow(&k.tokens); /* non-NULL keys: collect tokens */
		if (r < 0)
			goto out;
		pq.show |= SDIAG_SHOW_INFO; /* carries the MPTCP token */
	}
	todo[0] = todo[1] = 0;
	for (unsigned t = 0; t < SDIAG_T_MAX; t++) {
		uint32_t bit = SDIAG_TABLE_BIT(t) & q->tables & SDIAG_TABLES_INET;
		uint32_t afs = sd_query_afs(q, (enum sdiag_table)t);

		todo[0] |= afs & SDIAG_AF_INET ? bit : 0;
		todo[1] |= afs & SDIAG_AF_INET6 ? bit : 0;
	}
	for (k.pass = 0; k.pass < passes && (todo[0] | todo[1]); k.pass++) {
		r = kill_pass(h, &pq, todo, again, &k);
		if (r >= 0 && k.pass == 0)
			r = kill_subflows(h, q, &k);
		if (r < 0)
			break;
		todo[0] = again[0];
		todo[1] = again[1];
		/* Later passes skip what cannot be destroyed: bound-inactive
		 * sockets (among them every explicitly bound socket the first
		 * pass destroyed or reset) need not even be dumped. */
		if (!pq.states)
			pq.states = SDIAG_STATES_ALL;
		pq.states &= ~SDIAG_STATE_BIT(SDIAG_SS_BOUND_INACTIVE);
		if (!pq.states)
			break;
	}
	/* Only non-inet tables asked for: the first pass never ran. */
	if (r >= 0 && k.pass == 0 && (q->tables & ~SDIAG_TABLES_INET)) {
		todo[0] = todo[1] = 0;
		r = kill_pass(h, &pq, todo, again, &k);
	}
out:
	/* On error the records still queued were never sent: drop them. */
	sdiag_destroyer_free(k.d);
	free(k.seen.keys);
	free(k.tokens.keys);
	return r < 0 ? r : 0;
}
