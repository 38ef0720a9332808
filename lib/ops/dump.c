/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Dumps: turn a query into the kernel dumps it needs, decode each reply into
 * a record, drop duplicates, apply the filter, call back.
 *
 * Duplicates. sock_diag dumps are not snapshots: each chunk resumes at (hash
 * bucket, index), so a socket inserted or removed while the dump runs can make
 * the next chunk repeat a socket of the previous one. Such repeats are always
 * near each other, so for most tables a small window of recent cookies is
 * enough, and memory stays flat however many sockets there are. netlink_diag
 * reports a bound and subscribed socket twice, far apart (portid walk, then
 * multicast walk), so the netlink table keeps every cookie (few sockets).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/netlink.h>

#include "lib/family/family.h"
#include "lib/filter/filter.h"
#include "lib/ns/ns.h"
#include "lib/ops/ops.h"
#include "lib/owners/proc.h"
#include "util/hash.h"

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif
#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef AF_SMC
#define AF_SMC 43
#endif

struct sdiag_handle {
	struct sd_nl *nl;
};

SD_EXPORT int sdiag_open(struct sdiag_handle **ret)
{
	struct sdiag_handle *h;
	int r;

	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	r = sd_nl_open(&h->nl);
	if (r < 0) {
		free(h);
		return r;
	}
	*ret = h;
	return 0;
}

static int open_cb(void *arg)
{
	return sdiag_open(arg);
}

SD_EXPORT int sdiag_open_netns(struct sdiag_handle **ret, int nsfd)
{
	struct sdiag_handle *h = NULL;
	int r;

	r = sd_in_netns(nsfd, open_cb, &h);
	if (r < 0) {
		sdiag_close(h); /* opened, but we could not come back */
		return r;
	}
	*ret = h;
	return 0;
}

int sd_handle_fd(const struct sdiag_handle *h)
{
	return sd_nl_fd(h->nl);
}

SD_EXPORT void sdiag_close(struct sdiag_handle *h)
{
	if (!h)
		return;
	sd_nl_close(h->nl);
	free(h);
}

/* ---- duplicate suppression ------------------------------------------------- */

#define WINDOW_SLOTS 4096
#define WINDOW_GEN_SHIFT 8	/* a generation is 256 records, about one datagram */

struct seen {
	bool full;		/* remember every cookie (netlink) */
	uint64_t count;		/* records seen in this dump */
	uint64_t *keys;		/* open addressing; 0 = empty (cookies are never 0) */
	uint64_t *gens;		/* window mode: generation of each slot */
	size_t cap;		/* power of two */
	size_t used;
};

static int seen_init(struct seen *s, bool full)
{
	memset(s, 0, sizeof(*s));
	s->full = full;
	s->cap = full ? 256 : WINDOW_SLOTS;
	s->keys = calloc(s->cap, sizeof(*s->keys));
	if (!full)
		s->gens = calloc(s->cap, sizeof(*s->gens));
	if (!s->keys || (!full && !s->gens))
		return -ENOMEM;
	return 0;
}

static void seen_fini(struct seen *s)
{
	free(s->keys);
	free(s->gens);
	memset(s, 0, sizeof(*s));
}

static int seen_grow(struct seen *s)
{
	size_t ncap = s->cap * 2, i;
	uint64_t *nk = calloc(ncap, sizeof(*nk));

	if (!nk)
		return -ENOMEM;
	for (i = 0; i < s->cap; i++) {
		size_t j;

		if (!s->keys[i])
			continue;
		for (j = hash_u64(s->keys[i]) & (ncap - 1); nk[j]; j = (j + 1) & (ncap - 1))
			;
		nk[j] = s->keys[i];
	}
	free(s->keys);
	s->keys = nk;
	s->cap = ncap;
	return 0;
}

/*
 * The key a record is deduplicated by: its cookie, except for SCTP, where
 * sctp_diag sends an endpoint and then each of its associations with the
 * socket's one cookie (a one-to-many socket has many). An association is
 * told apart by its peer (address and port, unique per socket). Only
 * associations carry INET_DIAG_PEERS (SDIAG_HAS_SCTP_PEERS); an endpoint is
 * keyed by its cookie alone, even a connected one-to-one socket's, whose
 * endpoint record names the same peer as its association.
 */
uint64_t sd_dedup_key(const struct sdiag_sock *s)
{
	uint64_t h = 0, w;

	if (s->table != SDIAG_T_SCTP || !(s->has & SDIAG_HAS_SCTP_PEERS))
		return s->cookie;
	for (size_t i = 0; i < sizeof(s->inet.dst); i += sizeof(w)) {
		memcpy(&w, s->inet.dst + i, sizeof(w));
		h = hash_u64(h ^ w);
	}
	h = hash_u64(h ^ s->inet.dport) ^ s->cookie;
	return h ? h : 1;	/* 0 means "no key" to the seen table */
}

/* Returns 1 if the cookie was seen already (within the window), 0 if new, <0 on error. */
static int seen_check(struct seen *s, uint64_t cookie)
{
	size_t i;

	if (!cookie)
		return 0;
	if (!s->full) {
		uint64_t gen = s->count++ >> WINDOW_GEN_SHIFT;

		i = hash_u64(cookie) & (s->cap - 1);
		if (s->keys[i] == cookie && s->gens[i] + 2 >= gen)
			return 1;
		/* Overwrite: an evicted cookie only weakens suppression. */
		s->keys[i] = cookie;
		s->gens[i] = gen;
		return 0;
	}
	for (i = hash_u64(cookie) & (s->cap - 1); s->keys[i]; i = (i + 1) & (s->cap - 1))
		if (s->keys[i] == cookie)
			return 1;
	s->keys[i] = cookie;
	if (++s->used * 2 > s->cap)
		return seen_grow(s) < 0 ? -ENOMEM : 0;
	return 0;
}

/* ---- one kernel dump ---------------------------------------------------------- */

struct unit {
	enum sdiag_table table;	/* the table errors are reported against */
	uint8_t family;
	uint16_t protocol;
	uint32_t tables;	/* tables this dump returns */
	struct nlmsghdr *(*request)(void *buf, const struct sd_req *r);
	int (*decode)(const struct nlmsghdr *nlh, struct sdiag_sock *s);
	uint64_t (*peek_inode)(const struct nlmsghdr *nlh);	/* for the look-ahead */
};

/* The owner look-ahead: a message's hash slot is asked for when the
 * datagram's look-ahead pass reaches it, its owners AHEAD messages later. */
#define AHEAD 32

/* A TCP walk of both families holds its IPv6 records back, so that they come
 * after the IPv4 ones as from ss's two dumps. Bounded: past DEFER_MAX records
 * they are dropped and a second, IPv6-only, dump follows the walk instead. */
#define DEFER_MAX 8192

struct defer {
	bool on;
	bool overflow;
	struct sdiag_sock **socks;
	size_t n;
};

struct run {
	const struct sdiag_query *q;
	const struct unit *unit;
	uint32_t states;
	sdiag_sock_cb cb;
	void *userdata;
	int cb_err;		/* the caller's callback stopped the dump */
	struct sd_fvals *vals;	/* the filter's values resolved for this dump */
	struct seen seen;
	struct sdiag_sock rec;
	uint64_t ahead[AHEAD];	/* inodes of the last messages looked ahead at */
	size_t nahead;
	struct defer defer;
};

/* The owners of each socket are looked up at random places of a map of
 * megabytes: one cache miss for the slot, one for the owners, which would be
 * most of -p's cost. Ask for both before the datagram's messages are decoded. */
static int ahead_cb(const struct nlmsghdr *nlh, void *data)
{
	struct run *run = data;
	uint64_t inode = run->unit->peek_inode(nlh);
	uint64_t *old = &run->ahead[run->nahead++ % AHEAD];

	sd_procmap_prefetch(run->q->procmap, inode, 0);
	sd_procmap_prefetch(run->q->procmap, *old, 1);
	*old = inode;
	return 0;
}

static void defer_drop(struct defer *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->socks[i]);
	free(d->socks);
	d->socks = NULL;
	d->n = 0;
}

static int defer_push(struct defer *d, const struct sdiag_sock *s)
{
	if (d->overflow)
		return 0;
	if (d->n == DEFER_MAX) {
		defer_drop(d);
		d->overflow = true;
		return 0;
	}
	if (!d->socks) {
		d->socks = malloc(DEFER_MAX * sizeof(*d->socks));
		if (!d->socks)
			return -ENOMEM;
	}
	d->socks[d->n] = sdiag_sock_dup(s);
	if (!d->socks[d->n])
		return -ENOMEM;
	d->n++;
	return 0;
}

static int msg_cb(const struct nlmsghdr *nlh, void *data)
{
	struct run *run = data;
	struct sdiag_sock *s = &run->rec;
	int r;

	memset(s, 0, sizeof(*s));
	s->protocol = run->unit->protocol;	/* the decoder's table hint (internal.h) */
	r = run->unit->decode(nlh, s);
	if (r <= 0)
		return r;
	if (!(run->unit->tables & SDIAG_TABLE_BIT(s->table)) ||
	    !(run->q->tables & SDIAG_TABLE_BIT(s->table)))
		return 0;
	/* Families whose kernel ignores the state mask are filtered here.
	 * Request sockets (NEW_SYN_RECV in the kernel) come back as SYN_RECV. */
	if (!(run->states & SDIAG_STATE_BIT(s->state)) &&
	    !(s->state == SDIAG_SS_SYN_RECV && (run->states & SDIAG_STATE_BIT(SDIAG_SS_NEW_SYN_RECV))))
		return 0;
	if (s->has & SDIAG_HAS_COOKIE) {
		r = seen_check(&run->seen, sd_dedup_key(s));
		if (r != 0)
			return r < 0 ? r : 0;
	}
	if (run->q->procmap)
		s->n_procs = sdiag_procmap_lookup(run->q->procmap, s->inode, &s->procs);
	if (run->q->filter && !sd_filter_match_vals(run->q->filter, run->vals, s))
		return 0;
	if (run->defer.on && s->family == AF_INET6)
		return defer_push(&run->defer, s);
	r = run->cb(s, run->userdata);
	if (r < 0)
		run->cb_err = r;
	return r;
}

/* The kernel says ENOENT when it has no diag handler: for a whole family in
 * NLMSG_ERROR, for one inet protocol in DONE. Make that distinct. */
static int map_unsupported(const struct unit *u, int err)
{
	if (err != -ENOENT)
		return err;
	if (u->family == AF_INET || u->family == AF_INET6 || u->family == AF_UNSPEC)
		return -EPROTONOSUPPORT;
	return -EAFNOSUPPORT;
}

static int run_unit(struct sdiag_handle *h, struct run *run, const struct unit *u)
{
	const struct sdiag_query *q = run->q;
	struct sd_req req = {
		.family = u->family,
		.protocol = u->protocol,
		.states = run->states,
		.show = q->show | sd_filter_show(q->filter), /* TCP-info predicates need it */
		.tables = q->tables & u->tables,
	};
	void *bc = NULL;
	int r;

	if (q->filter && !q->no_kernel_filter &&
	    (u->family == AF_INET || u->family == AF_INET6 || u->family == AF_UNSPEC)) {
		/* AF_UNSPEC: both programs are the same (tcp_both_in_one). */
		r = sd_filter_bytecode(q->filter, u->family == AF_UNSPEC ? AF_INET : u->family, &bc);
		if (r >= 0)
			sd_filter_exact_ports(q->filter, &req.sport, &req.dport);
		if (r < 0)
			return r;
		req.bytecode = bc;
		req.bytecode_len = (size_t)r;
	}
	r = seen_init(&run->seen, u->table == SDIAG_T_NETLINK);
	if (r < 0)
		goto out;
	run->unit = u;
	u->request(sd_nl_reqbuf(h->nl, NULL), &req);
	r = sd_nl_dump(h->nl, q->procmap && u->peek_inode ? ahead_cb : NULL, msg_cb, run);
	if (r < 0)
		r = map_unsupported(u, r);
out:
	seen_fini(&run->seen);
	free(bc);
	return r;
}

static const struct {
	enum sdiag_table table;
	uint16_t protocol;
} inet_tables[] = {
	{ SDIAG_T_TCP, IPPROTO_TCP },	  { SDIAG_T_UDP, IPPROTO_UDP },
	{ SDIAG_T_UDPLITE, IPPROTO_UDPLITE }, { SDIAG_T_RAW, IPPROTO_RAW },
	{ SDIAG_T_MPTCP, IPPROTO_MPTCP }, { SDIAG_T_SCTP, IPPROTO_SCTP },
};

static const struct unit other_units[] = {
	{ SDIAG_T_UNIX_STREAM, AF_UNIX, 0, SDIAG_TABLES_UNIX, sd_unix_request, sd_unix_decode, NULL },
	{ SDIAG_T_NETLINK, AF_NETLINK, 0, SDIAG_TABLE_BIT(SDIAG_T_NETLINK), sd_netlink_request,
	  sd_netlink_decode, NULL },
	{ SDIAG_T_PACKET_RAW, AF_PACKET, 0, SDIAG_TABLES_PACKET, sd_packet_request,
	  sd_packet_decode, NULL },
	{ SDIAG_T_VSOCK_STREAM, AF_VSOCK, 0, SDIAG_TABLES_VSOCK, sd_vsock_request,
	  sd_vsock_decode, NULL },
	{ SDIAG_T_XDP, AF_XDP, 0, SDIAG_TABLE_BIT(SDIAG_T_XDP), sd_xdp_request, sd_xdp_decode, NULL },
	{ SDIAG_T_TIPC, AF_TIPC, 0, SDIAG_TABLE_BIT(SDIAG_T_TIPC), sd_tipc_request,
	  sd_tipc_decode, NULL },
	{ SDIAG_T_SMC, AF_SMC, 0, SDIAG_TABLE_BIT(SDIAG_T_SMC), sd_smc_request, sd_smc_decode, NULL },
};

/* One TCP dump can serve both families (sd_inet_request's legacy request)
 * when both are wanted and the kernel filter, if any, is the same program
 * for both. It halves the kernel's walk of its established hash. */
static bool tcp_both_in_one(const struct sdiag_query *q, uint32_t afs)
{
	void *b4 = NULL, *b6 = NULL;
	bool same;
	int n4, n6;

	if (afs != SDIAG_AF_ALL)
		return false;
	if (!q->filter || q->no_kernel_filter)
		return true;
	n4 = sd_filter_bytecode(q->filter, AF_INET, &b4);
	n6 = sd_filter_bytecode(q->filter, AF_INET6, &b6);
	same = n4 >= 0 && n4 == n6 && (n4 == 0 || !memcmp(b4, b6, (size_t)n4));
	free(b4);
	free(b6);
	return same;
}

static int report(struct run *run, const struct unit *u, sdiag_error_cb err_cb, int err)
{
	enum sdiag_table t = u->table;

	if (run->cb_err)
		return run->cb_err;

	/* Name the first table of the group the caller actually asked for. */
	for (unsigned i = 0; i < SDIAG_T_MAX; i++)
		if (u->tables & run->q->tables & SDIAG_TABLE_BIT(i)) {
			t = (enum sdiag_table)i;
			break;
		}
	if (!err_cb)
		return err;
	return err_cb(t, u->family, err, run->userdata);
}

static bool table_excluded(const struct sdiag_query *q, uint32_t tables)
{
	if (!q->filter)
		return false;
	for (unsigned i = 0; i < SDIAG_T_MAX; i++)
		if ((tables & q->tables & SDIAG_TABLE_BIT(i)) &&
		    !sd_filter_excludes_table(q->filter, (enum sdiag_table)i))
			return false;
	return true;
}

/* Both TCP families in one walk, the IPv6 records after the IPv4 ones. */
static int dump_tcp_both(struct sdiag_handle *h, struct run *run, sdiag_error_cb err_cb)
{
	struct unit u = {
		.table = SDIAG_T_TCP,
		.family = AF_UNSPEC,
		.protocol = IPPROTO_TCP,
		.tables = SDIAG_TABLE_BIT(SDIAG_T_TCP),
		.request = sd_inet_request,
		.decode = sd_inet_decode,
		.peek_inode = sd_inet_peek_inode,
	};
	struct defer *d = &run->defer;
	int r;

	d->on = true;
	d->overflow = false;
	r = run_unit(h, run, &u);
	d->on = false;
	if (r < 0) {
		defer_drop(d);
		return report(run, &u, err_cb, r);
	}
	if (d->overflow) {
		u.family = AF_INET6;
		r = run_unit(h, run, &u);
		return r < 0 ? report(run, &u, err_cb, r) : 0;
	}
	for (size_t i = 0; i < d->n && r == 0; i++) {
		r = run->cb(d->socks[i], run->userdata);
		if (r < 0)
			run->cb_err = r;
	}
	defer_drop(d);
	return r;
}

static int dump_inet(struct sdiag_handle *h, struct run *run, size_t i, uint32_t afs,
		     sdiag_error_cb err_cb)
{
	static const uint8_t fams[] = { AF_INET, AF_INET6 };
	const struct sdiag_query *q = run->q;
	uint32_t bit = SDIAG_TABLE_BIT(inet_tables[i].table);
	int r;

	if (!(q->tables & bit) || table_excluded(q, bit))
		return 0;
	if (inet_tables[i].table == SDIAG_T_TCP && tcp_both_in_one(q, afs))
		return dump_tcp_both(h, run, err_cb);
	for (size_t f = 0; f < 2; f++) {
		struct unit u = {
			.table = inet_tables[i].table,
			.family = fams[f],
			.protocol = inet_tables[i].protocol,
			.tables = bit,
			.request = sd_inet_request,
			.decode = sd_inet_decode,
			.peek_inode = sd_inet_peek_inode,
		};

		if (!(afs & (f == 0 ? SDIAG_AF_INET : SDIAG_AF_INET6)))
			continue;
		r = run_unit(h, run, &u);
		if (r < 0 && (r = report(run, &u, err_cb, r)) < 0)
			return r;
	}
	return 0;
}

/* ss's order of the tables (iproute2 6.1's main()): netlink, packet, unix,
 * raw, udp, tcp, sctp, vsock, tipc, xdp, mptcp; udplite, which ss does not
 * show, after udp, and smc last. Within an inet table IPv4 comes first. */
static const enum sdiag_table ss_order[] = {
	SDIAG_T_NETLINK, SDIAG_T_PACKET_RAW, SDIAG_T_UNIX_STREAM, SDIAG_T_RAW,
	SDIAG_T_UDP,	 SDIAG_T_UDPLITE,    SDIAG_T_TCP,	  SDIAG_T_SCTP,
	SDIAG_T_VSOCK_STREAM, SDIAG_T_TIPC,  SDIAG_T_XDP,	  SDIAG_T_MPTCP,
	SDIAG_T_SMC,
};

static int dump_table(struct sdiag_handle *h, struct run *run, enum sdiag_table t, uint32_t afs,
		      sdiag_error_cb err_cb)
{
	const struct sdiag_query *q = run->q;
	int r;

	for (size_t i = 0; i < sizeof(inet_tables) / sizeof(inet_tables[0]); i++)
		if (inet_tables[i].table == t)
			return dump_inet(h, run, i, afs, err_cb);
	for (size_t i = 0; i < sizeof(other_units) / sizeof(other_units[0]); i++) {
		const struct unit *u = &other_units[i];

		if (u->table != t || !(q->tables & u->tables) || table_excluded(q, u->tables))
			continue;
		r = run_unit(h, run, u);
		if (r < 0 && (r = report(run, u, err_cb, r)) < 0)
			return r;
	}
	return 0;
}

static int peer_cb(const struct sdiag_sock *s, void *data)
{
	return sd_fresolve_sock(data, s);
}

/* The values f's unix `dst GLOB`s name in h's namespace now: one dump of the
 * unix sockets, without a filter (so it cannot recurse), fed to the filter. */
int sd_dump_resolve(struct sdiag_handle *h, const struct sdiag_filter *f,
		    struct sd_fvals **ret)
{
	struct sdiag_query q = { .tables = SDIAG_TABLES_UNIX, .states = SDIAG_STATES_ALL };
	struct sd_fresolve *rs;
	int r;

	r = sd_fresolve_start(f, &rs);
	if (r < 0 || !rs)
		return r;
	r = sdiag_dump(h, &q, peer_cb, NULL, rs);
	if (r < 0) {
		sd_fresolve_free(rs);
		return r;
	}
	sd_fresolve_finish(rs, ret);
	return 0;
}

SD_EXPORT int sdiag_dump(struct sdiag_handle *h, const struct sdiag_query *q, sdiag_sock_cb cb,
			 sdiag_error_cb err_cb, void *userdata)
{
	struct run *run;
	uint32_t afs = q->afs ? q->afs : SDIAG_AF_ALL;
	int r = 0;

	if (!h || !q || !cb)
		return -EINVAL;
	run = calloc(1, sizeof(*run));
	if (!run)
		return -ENOMEM;
	run->q = q;
	run->cb = cb;
	run->userdata = userdata;
	run->states = q->states ? q->states : SDIAG_STATES_ALL;
	if (q->filter)
		run->states &= sdiag_filter_states(q->filter);
	if (!run->states)
		goto out;
	/* Unix `dst GLOB` names sockets of this namespace, now (only unix
	 * sockets have peers it could match). */
	if (q->filter && (q->tables & SDIAG_TABLES_UNIX) && !table_excluded(q, SDIAG_TABLES_UNIX)) {
		r = sd_dump_resolve(h, q->filter, &run->vals);
		if (r < 0)
			goto out;
	}

	for (size_t i = 0; i < sizeof(ss_order) / sizeof(ss_order[0]); i++) {
		r = dump_table(h, run, ss_order[i], afs, err_cb);
		if (r < 0)
			goto out;
	}
	r = 0;
out:
	sd_fvals_free(run->vals);
	free(run);
	return r;
}

/* ---- collector ------------------------------------------------------------------ */

struct collect {
	struct sdiag_sock_list *l;
	size_t cap;
};

static int collect_cb(const struct sdiag_sock *s, void *data)
{
	struct collect *c = data;
	struct sdiag_sock *copy;

	if (c->l->n == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 64;
		struct sdiag_sock **n = realloc(c->l->socks, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->l->socks = n;
		c->cap = ncap;
	}
	copy = sdiag_sock_dup(s);
	if (!copy)
		return -ENOMEM;
	c->l->socks[c->l->n++] = copy;
	return 0;
}

static int collect_err_cb(enum sdiag_table t, int family, int err, void *data)
{
	(void)t;
	(void)family;
	(void)data;
	return err == -EAFNOSUPPORT || err == -EPROTONOSUPPORT ? 0 : err;
}

SD_EXPORT int sdiag_collect(struct sdiag_handle *h, const struct sdiag_query *q,
			    struct sdiag_sock_list *ret)
{
	struct sdiag_sock_list l = { 0 };
	struct collect c = { .l = &l };
	int r;

	r = sdiag_dump(h, q, collect_cb, collect_err_cb, &c);
	if (r < 0) {
		sdiag_sock_list_free(&l);
		return r;
	}
	*ret = l;
	return 0;
}

SD_EXPORT void sdiag_sock_list_free(struct sdiag_sock_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		free(l->socks[i]);
	free(l->socks);
	l->socks = NULL;
	l->n = 0;
}
