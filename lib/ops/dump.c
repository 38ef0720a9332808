/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Dumps: turn a query into the kernel dumps it needs (units: one table, or
 * a group of tables, in one family or both), decode each reply into a record,
 * drop duplicates (dump_seen.c), apply the filter, hand it over. Pull-mode:
 * sdiag_dump_next() reads a datagram when the last one is used up and lends
 * one record at a time, so a dump's memory is one datagram buffer, one record
 * and the duplicate window, whatever the number of sockets; sdiag_dump() is a
 * loop over it that calls back. The records come in the kernel's order, table
 * by table (walk_order); a TCP walk of both families mixes them (ss's order,
 * IPv4 first, is the CLI's: cli/list.c).
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
	bool busy;	/* a pull-mode dump is under way */
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

/* ---- the units: one kernel dump each ---------------------------------------- */

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
/* Every inet table in both families, and every other unit. */
#define MAX_UNITS 32

struct sdiag_dump {
	struct sdiag_handle *h;
	const struct sdiag_query *q;	/* &qcopy */
	struct sdiag_query qcopy;	/* the caller's, loaded by sd_opts_load() */
	uint32_t states;
	struct sd_fvals *vals;	/* the filter's values resolved for this dump */
	struct unit units[MAX_UNITS];
	size_t n_units, next;	/* next: the unit to start */
	const struct unit *unit; /* the unit under way, or the last one */
	bool running;		/* its kernel dump is under way */
	void *bc;		/* its kernel filter */
	struct sd_seen seen;
	struct sdiag_sock rec;	/* the one record, lent by sdiag_dump_next */
	uint64_t ahead[AHEAD];	/* inodes of the last messages looked ahead at */
	size_t nahead;
};

/* The owners of each socket are looked up at random places of a map of
 * megabytes: one cache miss for the slot, one for the owners, which would be
 * most of -p's cost. Ask for both before the datagram's messages are decoded. */
static int ahead_cb(const struct nlmsghdr *nlh, void *data)
{
	struct sdiag_dump *d = data;
	uint64_t inode = d->unit->peek_inode(nlh);
	uint64_t *old = &d->ahead[d->nahead++ % AHEAD];

	sd_procmap_prefetch(d->q->procmap, inode, 0);
	sd_procmap_prefetch(d->q->procmap, *old, 1);
	*old = inode;
	return 0;
}

/* One data message into d->rec: 1 if the caller gets it, 0 if not (another
 * table, state, a duplicate, filtered out), or a negative errno. */
static int take_msg(struct sdiag_dump *d, const struct nlmsghdr *nlh)
{
	struct sdiag_sock *s = &d->rec;
	int r;

	memset(s, 0, sizeof(*s));
	s->protocol = d->unit->protocol;	/* the decoder's table hint (internal.h) */
	r = d->unit->decode(nlh, s);
	if (r <= 0)
		return r;
	if (!(d->unit->tables & SDIAG_TABLE_BIT(s->table)) ||
	    !(d->q->tables & SDIAG_TABLE_BIT(s->table)))
		return 0;
	/* Families whose kernel ignores the state mask are filtered here.
	 * Request sockets (NEW_SYN_RECV in the kernel) come back as SYN_RECV. */
	if (!(d->states & SDIAG_STATE_BIT(s->state)) &&
	    !(s->state == SDIAG_SS_SYN_RECV && (d->states & SDIAG_STATE_BIT(SDIAG_SS_NEW_SYN_RECV))))
		return 0;
	if (s->has & SDIAG_HAS_COOKIE) {
		r = sd_seen_check(&d->seen, sd_dedup_key(s));
		if (r != 0)
			return r < 0 ? r : 0;
	}
	if (d->q->procmap)
		s->n_procs = sdiag_procmap_lookup(d->q->procmap, s->inode, &s->procs);
	if (d->q->filter && !sd_filter_match_vals(d->q->filter, d->vals, s))
		return 0;
	return 1;
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

static void unit_finish(struct sdiag_dump *d)
{
	if (d->running)
		sd_nl_dump_end(d->h->nl);
	d->running = false;
	sd_seen_fini(&d->seen);
	free(d->bc);
	d->bc = NULL;
}

/* Send d->unit's request. 0 or a negative errno. */
static int unit_start(struct sdiag_dump *d)
{
	const struct sdiag_query *q = d->q;
	const struct unit *u = d->unit;
	struct sd_req req = {
		.family = u->family,
		.protocol = u->protocol,
		.states = d->states,
		.show = q->show | sd_filter_show(q->filter), /* TCP-info predicates need it */
		.tables = q->tables & u->tables,
	};
	int r;

	if (q->filter && !q->no_kernel_filter &&
	    (u->family == AF_INET || u->family == AF_INET6 || u->family == AF_UNSPEC)) {
		/* AF_UNSPEC: both programs are the same (tcp_both_in_one). */
		r = sd_filter_bytecode(q->filter, u->family == AF_UNSPEC ? AF_INET : u->family,
				       &d->bc);
		if (r < 0)
			return r;
		sd_filter_exact_ports(q->filter, &req.sport, &req.dport);
		req.bytecode = d->bc;
		req.bytecode_len = (size_t)r;
	}
	r = sd_seen_init(&d->seen, u->table == SDIAG_T_NETLINK);
	if (r < 0)
		return r;
	u->request(sd_nl_reqbuf(d->h->nl, NULL), &req);
	r = sd_nl_dump_begin(d->h->nl);
	d->running = r == 0;
	d->nahead = 0;
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

uint32_t sd_query_afs(const struct sdiag_query *q, enum sdiag_table t)
{
	uint32_t afs = q->table_afs[t] ? q->table_afs[t] : q->afs;

	return afs ? afs & SDIAG_AF_ALL : SDIAG_AF_ALL;
}

static void add_inet_units(struct sdiag_dump *d, size_t i)
{
	static const uint8_t fams[] = { AF_INET, AF_INET6 };
	const struct sdiag_query *q = d->q;
	enum sdiag_table t = inet_tables[i].table;
	uint32_t afs = sd_query_afs(q, t);
	struct unit u = {
		.table = t,
		.family = AF_UNSPEC,
		.protocol = inet_tables[i].protocol,
		.tables = SDIAG_TABLE_BIT(t),
		.request = sd_inet_request,
		.decode = sd_inet_decode,
		.peek_inode = sd_inet_peek_inode,
	};

	if (!(q->tables & u.tables) || table_excluded(q, u.tables))
		return;
	if (t == SDIAG_T_TCP && tcp_both_in_one(q, afs)) {
		d->units[d->n_units++] = u;
		return;
	}
	for (size_t f = 0; f < 2; f++) {
		if (!(afs & (f == 0 ? SDIAG_AF_INET : SDIAG_AF_INET6)))
			continue;
		u.family = fams[f];
		d->units[d->n_units++] = u;
	}
}

/* The library's order of the tables, ss's (iproute2 6.1's main()): netlink,
 * packet, unix, raw, udp, tcp, sctp, vsock, tipc, xdp, mptcp; udplite, which
 * ss does not show, after udp, and smc last. sockdiag.h documents it. */
static const enum sdiag_table walk_order[] = {
	SDIAG_T_NETLINK, SDIAG_T_PACKET_RAW, SDIAG_T_UNIX_STREAM, SDIAG_T_RAW,
	SDIAG_T_UDP,	 SDIAG_T_UDPLITE,    SDIAG_T_TCP,	  SDIAG_T_SCTP,
	SDIAG_T_VSOCK_STREAM, SDIAG_T_TIPC,  SDIAG_T_XDP,	  SDIAG_T_MPTCP,
	SDIAG_T_SMC,
};

static void add_units(struct sdiag_dump *d, enum sdiag_table t)
{
	const struct sdiag_query *q = d->q;

	for (size_t i = 0; i < sizeof(inet_tables) / sizeof(inet_tables[0]); i++)
		if (inet_tables[i].table == t)
			add_inet_units(d, i);
	for (size_t i = 0; i < sizeof(other_units) / sizeof(other_units[0]); i++) {
		const struct unit *u = &other_units[i];

		if (u->table == t && (q->tables & u->tables) && !table_excluded(q, u->tables))
			d->units[d->n_units++] = *u;
	}
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
	SDIAG_OPTS(sdiag_query, q,
			.tables = SDIAG_TABLES_UNIX,
			.states = SDIAG_STATES_ALL);
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

/* ---- pull-mode dumps ------------------------------------------------------------- */

SD_EXPORT int sdiag_dump_begin(struct sdiag_handle *h, const struct sdiag_query *q,
			       struct sdiag_dump **ret)
{
	struct sdiag_dump *d;
	int r;

	if (!h || !q || !ret)
		return -EINVAL;
	if (h->busy)
		return -EBUSY;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	r = sd_opts_load(&d->qcopy, sizeof(d->qcopy), SD_QUERY_KNOWN, q);
	if (r < 0) {
		free(d);
		return r;
	}
	d->h = h;
	q = d->q = &d->qcopy;
	d->states = q->states ? q->states : SDIAG_STATES_ALL;
	if (q->filter)
		d->states &= sdiag_filter_states(q->filter);
	/* Unix `dst GLOB` names sockets of this namespace, now (only unix
	 * sockets have peers it could match). */
	if (d->states && q->filter && (q->tables & SDIAG_TABLES_UNIX) &&
	    !table_excluded(q, SDIAG_TABLES_UNIX)) {
		r = sd_dump_resolve(h, q->filter, &d->vals);
		if (r < 0) {
			free(d);
			return r;
		}
	}
	for (size_t i = 0; d->states && i < sizeof(walk_order) / sizeof(walk_order[0]); i++)
		add_units(d, walk_order[i]);
	h->busy = true;
	*ret = d;
	return 0;
}

/* A table's failure under the query's policy: 0 to skip it, or err. */
static int unit_failed(struct sdiag_dump *d, int err)
{
	err = map_unsupported(d->unit, err);
	if (!(d->q->flags & SDIAG_Q_SKIP_UNSUPPORTED) ||
	    (err != -EAFNOSUPPORT && err != -EPROTONOSUPPORT))
		return err;
	/* A group (unix, packet, vsock) is one dump: named if any of it is. */
	return d->q->named_tables & d->q->tables & d->unit->tables ? err : 0;
}

SD_EXPORT int sdiag_dump_next(struct sdiag_dump *d, const struct sdiag_sock **ret)
{
	const struct nlmsghdr *nlh;
	int r;

	if (!d || !ret)
		return -EINVAL;
	for (;;) {
		if (!d->running) {
			if (d->next == d->n_units)
				return 0;
			d->unit = &d->units[d->next++];
			r = unit_start(d);
			if (r < 0) {
				unit_finish(d);
				if ((r = unit_failed(d, r)) < 0)
					return r;
				continue;
			}
		}
		r = sd_nl_dump_msg(d->h->nl, d->q->procmap && d->unit->peek_inode ? ahead_cb : NULL,
				   d, &nlh);
		if (r > 0) {
			r = take_msg(d, nlh);
			if (r > 0) {
				*ret = &d->rec;
				return 1;
			}
			if (r == 0)
				continue;
		} else if (r == 0) {	/* this table's dump is complete */
			unit_finish(d);
			continue;
		}
		/* A failure: the rest of this table's dump is drained. */
		unit_finish(d);
		if ((r = unit_failed(d, r)) < 0)
			return r;
	}
}

SD_EXPORT int sdiag_dump_where(const struct sdiag_dump *d, enum sdiag_table *ret_table,
			       int *ret_family)
{
	const struct unit *u = d ? d->unit : NULL;
	enum sdiag_table t;

	if (!u)
		return -ENOENT;
	/* Name the first table of the group the caller actually asked for. */
	t = u->table;
	for (unsigned i = 0; i < SDIAG_T_MAX; i++)
		if (u->tables & d->q->tables & SDIAG_TABLE_BIT(i)) {
			t = (enum sdiag_table)i;
			break;
		}
	if (ret_table)
		*ret_table = t;
	if (ret_family)
		*ret_family = u->family;
	return 0;
}

SD_EXPORT void sdiag_dump_end(struct sdiag_dump *d)
{
	if (!d)
		return;
	unit_finish(d);
	sd_fvals_free(d->vals);
	d->h->busy = false;
	free(d);
}

SD_EXPORT int sdiag_dump(struct sdiag_handle *h, const struct sdiag_query *q, sdiag_sock_cb cb,
			 sdiag_error_cb err_cb, void *userdata)
{
	const struct sdiag_sock *s;
	struct sdiag_dump *d;
	int r;

	if (!cb)
		return -EINVAL;
	r = sdiag_dump_begin(h, q, &d);
	if (r < 0)
		return r;
	while ((r = sdiag_dump_next(d, &s)) != 0) {
		enum sdiag_table t;
		int family;

		if (r > 0) {
			r = cb(s, userdata);
			if (r < 0)
				break;
			continue;
		}
		if (!err_cb)
			break;
		sdiag_dump_where(d, &t, &family);
		r = err_cb(t, family, r, userdata);
		if (r < 0)
			break;
	}
	sdiag_dump_end(d);
	return r < 0 ? r : 0;
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

SD_EXPORT int sdiag_collect(struct sdiag_handle *h, const struct sdiag_query *q,
			    struct sdiag_sock_list *ret)
{
	struct sdiag_sock_list l = { 0 };
	struct collect c = { .l = &l };
	struct sdiag_query all;
	int r;

	if (!q)
		return -EINVAL;
	r = sd_opts_load(&all, sizeof(all), SD_QUERY_KNOWN, q);
	if (r < 0)
		return r;
	/* every table the kernel cannot dump is skipped */
	all.flags |= SDIAG_Q_SKIP_UNSUPPORTED;
	all.named_tables = 0;
	r = sdiag_dump(h, &all, collect_cb, NULL, &c);
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
