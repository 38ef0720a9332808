// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The userspace matcher, the authority on what a filter selects, plus the two
 * questions the dump asks before it starts: which states can match
 * (sdiag_filter_states) and which tables cannot (sd_filter_excludes_table).
 *
 * A predicate about something a socket does not have (a port on a unix
 * socket, a path on a TCP socket, a mark the kernel did not report) is false;
 * `not` makes it true. The inet address and port tests follow the kernel's
 * inet_diag_bc_run exactly, so the bytecode and this matcher agree.
 */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "lib/filter/filter.h"
#include "util/inaddr.h"

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

static bool is_inet(const struct sdiag_sock *s)
{
	return s->family == AF_INET || s->family == AF_INET6;
}

bool sd_fcmp_u64(uint64_t v, enum sd_fcmp c, uint64_t ref)
{
	switch (c) {
	case SD_EQ:
		return v == ref;
	case SD_NE:
		return v != ref;
	case SD_LT:
		return v < ref;
	case SD_LE:
		return v <= ref;
	case SD_GT:
		return v > ref;
	default:
		return v >= ref;
	}
}

/* The first plen bits of a and b are equal (inet_diag's bitstring_match). */
static bool prefix_eq(const uint8_t *a, const uint8_t *b, unsigned plen)
{
	unsigned bytes = plen / 8, bits = plen % 8;

	if (memcmp(a, b, bytes))
		return false;
	if (bits) {
		uint8_t mask = (uint8_t)(0xff << (8 - bits));

		return ((a[bytes] ^ b[bytes]) & mask) == 0;
	}
	return true;
}

static bool match_host(const struct sd_fnode *n, const struct sdiag_sock *s)
{
	const struct sd_fhost *h = &n->u.host;
	const uint8_t *addr = n->dir == SD_DIR_SRC ? s->inet.src : s->inet.dst;
	uint16_t port = n->dir == SD_DIR_SRC ? s->inet.sport : s->inet.dport;

	if (!is_inet(s))
		return false;
	if (h->port >= 0 && h->port != port)
		return false;
	if (h->family == 0) /* AF_UNSPEC: any address */
		return true;
	if (h->family != s->family) {
		/* An IPv4 condition also matches v4-mapped addresses. */
		return s->family == AF_INET6 && h->family == AF_INET && in_v4mapped(addr) &&
		       prefix_eq(addr + 12, h->addr, h->plen);
	}
	return prefix_eq(addr, h->addr, h->plen);
}

static bool get_num(const struct sd_fnode *n, const struct sdiag_sock *s, uint64_t *v)
{
	switch (n->field) {
	case SD_FLD_PORT:
		if (is_inet(s)) {
			*v = n->dir == SD_DIR_SRC ? s->inet.sport : s->inet.dport;
			return true;
		}
		if (s->family == AF_VSOCK) {
			*v = n->dir == SD_DIR_SRC ? s->vsock.src_port : s->vsock.dst_port;
			return true;
		}
		return false;
	case SD_FLD_UID:
		*v = s->uid;
		return s->has & SDIAG_HAS_UID;
	case SD_FLD_INODE:
		*v = s->inode;
		return s->has & SDIAG_HAS_INODE;
	default:
		*v = s->cookie;
		return s->has & SDIAG_HAS_COOKIE;
	}
}

static bool match_num(const struct sd_fnode *n, const struct sdiag_sock *s)
{
	uint64_t v;

	if (!get_num(n, s, &v))
		return false;
	if (n->field == SD_FLD_PORT && n->u.num.value == UINT64_MAX)
		return true; /* sport = * */
	return sd_fcmp_u64(v, (enum sd_fcmp)n->cmp, n->u.num.value);
}

static bool match_dev(const struct sd_fnode *n, const struct sdiag_sock *s)
{
	uint64_t idx;

	if (is_inet(s))
		idx = s->inet.ifindex;
	else if (s->family == AF_PACKET && (s->has & SDIAG_HAS_PKT_INFO))
		idx = s->pkt.info.index;
	else if (s->table == SDIAG_T_XDP && (s->has & SDIAG_HAS_XDP_INFO))
		idx = s->xdp.ifindex;
	else
		return false;
	return sd_fcmp_u64(idx, (enum sd_fcmp)n->cmp, n->u.num.value);
}

bool sd_unix_name(const struct sdiag_sock *s, char *buf, size_t size)
{
	size_t i, n;

	if (s->family != AF_UNIX || !s->un.name || !s->un.name_len || size < 2)
		return false;
	n = s->un.name_len < size - 1 ? s->un.name_len : size - 1;
	if (s->un.name[0] == '\0') {
		for (i = 0; i < n; i++)
			buf[i] = s->un.name[i] ? (char)s->un.name[i] : '@';
	} else {
		for (i = 0; i < n && s->un.name[i]; i++)
			buf[i] = (char)s->un.name[i];
	}
	buf[i] = '\0';
	return true;
}

bool sd_glob_match(const char *glob, const char *name)
{
	return fnmatch(glob, name, 0) == 0;
}

static bool match_autobound(const struct sd_fnode *n, const struct sdiag_sock *s)
{
	char name[16];

	if (is_inet(s))
		return s->inet.sport >= n->u.range.lo && s->inet.sport <= n->u.range.hi;
	if (s->family == AF_UNIX) /* the kernel's autobind name: "\0" + 5 hex digits */
		return sd_unix_name(s, name, sizeof(name)) && name[0] == '@' && strlen(name) == 6 &&
		       strspn(name + 1, "0123456789abcdef") == 5;
	if (s->family == AF_NETLINK) /* autobound port ids are negative */
		return (int32_t)s->nl.portid < 0;
	if (s->family == AF_VSOCK)
		return s->vsock.src_port > 1023;
	return false;
}

static bool has_group(const struct sdiag_sock *s, uint64_t g)
{
	uint64_t w = (g - 1) / 32;

	return g >= 1 && s->nl.groups && w < s->nl.n_group_words &&
	       (s->nl.groups[w] & (1U << ((g - 1) % 32)));
}

static int cmp_inode(const void *key, const void *elem)
{
	uint32_t a = *(const uint32_t *)key, b = *(const uint32_t *)elem;

	return a < b ? -1 : a > b;
}

static bool match_peer(const struct sd_fnode *n, const struct sd_fvals *v,
		       const struct sdiag_sock *s)
{
	const struct sd_inodes *set;
	uint32_t peer = s->un.peer;

	if (!v || n->u.peer.slot >= v->n_peers)
		return false; /* not resolved: no dump said which sockets it names */
	set = &v->peers[n->u.peer.slot];
	return s->family == AF_UNIX && (s->has & SDIAG_HAS_PEER) && peer && set->n &&
	       bsearch(&peer, set->v, set->n, sizeof(peer), cmp_inode);
}

static bool match_leaf(const struct sd_fnode *n, const struct sd_fvals *v,
		       const struct sdiag_sock *s)
{
	char name[256];

	switch (n->kind) {
	case SD_F_STATE:
		return s->state < 32 && (n->u.states & SDIAG_STATE_BIT(s->state));
	case SD_F_HOST:
		return match_host(n, s);
	case SD_F_NUM:
		return match_num(n, s);
	case SD_F_DEV:
		return match_dev(n, s);
	case SD_F_MARK:
		if (!is_inet(s) || !(s->has & SDIAG_HAS_MARK))
			return false;
		return ((s->inet.mark & n->u.mark.mask) == n->u.mark.mark) == (n->cmp == SD_EQ);
	case SD_F_CGROUP:
		if (!is_inet(s) || !(s->has & SDIAG_HAS_CGROUP))
			return false;
		return sd_fcgroup_has(n, s->inet.cgroup_id) == (n->cmp == SD_EQ);
	case SD_F_AUTOBOUND:
		return match_autobound(n, s);
	case SD_F_TABLES:
		return (unsigned)s->table < SDIAG_T_MAX &&
		       (n->u.tables & SDIAG_TABLE_BIT(s->table));
	case SD_F_NLPROTO:
		return s->family == AF_NETLINK && s->protocol == n->u.num.value;
	case SD_F_NLGROUP:
		return s->family == AF_NETLINK && has_group(s, n->u.num.value);
	case SD_F_UNIX_NAME:
		return sd_unix_name(s, name, sizeof(name)) && sd_glob_match(n->u.str, name);
	case SD_F_UNIX_PEER:
		return match_peer(n, v, s);
	case SD_F_NETLINK:
		if (s->family != AF_NETLINK)
			return false;
		if (n->u.nl.proto >= 0 && s->protocol != n->u.nl.proto)
			return false;
		return n->u.nl.portid < 0 ||
		       n->u.nl.portid == (n->dir == SD_DIR_SRC ? s->nl.portid : s->nl.dst_portid);
	case SD_F_PACKET:
		if (s->family != AF_PACKET || n->dir != SD_DIR_SRC)
			return false;
		if (n->u.pkt.proto >= 0 && s->pkt.ethertype != n->u.pkt.proto)
			return false;
		return n->u.pkt.ifindex < 0 ||
		       ((s->has & SDIAG_HAS_PKT_INFO) && s->pkt.info.index == n->u.pkt.ifindex);
	case SD_F_VSOCK:
		if (s->family != AF_VSOCK)
			return false;
		if (n->u.vs.cid >= 0 &&
		    n->u.vs.cid != (n->dir == SD_DIR_SRC ? s->vsock.src_cid : s->vsock.dst_cid))
			return false;
		return n->u.vs.port < 0 ||
		       n->u.vs.port ==
			       (n->dir == SD_DIR_SRC ? s->vsock.src_port : s->vsock.dst_port);
	case SD_F_PROC:
		return sd_fproc_match(n, s);
	case SD_F_TCPINFO:
		return sd_ftcp_match(n, s);
	default:
		return false;
	}
}

bool sd_fnode_match(const struct sd_fnode *n, const struct sd_fvals *v,
		    const struct sdiag_sock *s)
{
	/* Iterate down the right-hand side; left-nested chains recurse. */
	for (;;) {
		switch (n->kind) {
		case SD_F_AND:
			if (!sd_fnode_match(n->a, v, s))
				return false;
			n = n->b;
			break;
		case SD_F_OR:
			if (sd_fnode_match(n->a, v, s))
				return true;
			n = n->b;
			break;
		case SD_F_NOT:
			return !sd_fnode_match(n->a, v, s);
		default:
			return match_leaf(n, v, s);
		}
	}
}

bool sd_filter_match_vals(const struct sdiag_filter *f, const struct sd_fvals *v,
			  const struct sdiag_sock *s)
{
	/* A builder's filter before a successful sdiag_filter_finish matches
	 * nothing: a forgotten finish must not select every socket (for a kill). */
	if (f && f->build)
		return false;
	return !f || !f->root || sd_fnode_match(f->root, v, s);
}

SD_EXPORT bool sdiag_filter_match(const struct sdiag_filter *f, const struct sdiag_sock *s)
{
	return sd_filter_match_vals(f, NULL, s);
}

/* The states for which n can be true (neg: for which it can be false). */
static uint32_t node_states(const struct sd_fnode *n, bool neg)
{
	uint32_t a, b;

	switch (n->kind) {
	case SD_F_AND:
	case SD_F_OR:
		a = node_states(n->a, neg);
		b = node_states(n->b, neg);
		return (n->kind == SD_F_AND) != neg ? a & b : a | b;
	case SD_F_NOT:
		return node_states(n->a, !neg);
	case SD_F_STATE:
		return neg ? SDIAG_STATES_ALL & ~n->u.states : n->u.states;
	default:
		return SDIAG_STATES_ALL;
	}
}

SD_EXPORT uint32_t sdiag_filter_states(const struct sdiag_filter *f)
{
	if (!f || !f->root)
		return SDIAG_STATES_ALL;
	return node_states(f->root, false);
}

static bool node_names_states(const struct sd_fnode *n)
{
	switch (n->kind) {
	case SD_F_AND:
	case SD_F_OR:
		return node_names_states(n->a) || node_names_states(n->b);
	case SD_F_NOT:
		return node_names_states(n->a);
	case SD_F_STATE:
		return true;
	default:
		return false;
	}
}

SD_EXPORT bool sdiag_filter_names_states(const struct sdiag_filter *f)
{
	return f && f->root && node_names_states(f->root);
}

#define T(x) SDIAG_TABLE_BIT(SDIAG_T_##x)

/* Tables where the leaf can be true. */
static uint32_t leaf_tables(const struct sd_fnode *n)
{
	const uint32_t inet = SDIAG_TABLES_INET | T(SMC);

	switch (n->kind) {
	case SD_F_HOST:
	case SD_F_MARK:
	case SD_F_CGROUP:
		return inet;
	case SD_F_NUM:
		return n->field == SD_FLD_PORT ? inet | SDIAG_TABLES_VSOCK : SDIAG_TABLES_ALL;
	case SD_F_DEV:
		return inet | SDIAG_TABLES_PACKET | T(XDP);
	case SD_F_AUTOBOUND:
		return inet | SDIAG_TABLES_UNIX | T(NETLINK) | SDIAG_TABLES_VSOCK;
	case SD_F_TABLES:
		return n->u.tables;
	case SD_F_NLPROTO:
	case SD_F_NLGROUP:
	case SD_F_NETLINK:
		return T(NETLINK);
	case SD_F_UNIX_NAME:
		return SDIAG_TABLES_UNIX;
	case SD_F_UNIX_PEER:
		return SDIAG_TABLES_UNIX;
	case SD_F_PACKET:
		return n->dir == SD_DIR_SRC ? SDIAG_TABLES_PACKET : 0;
	case SD_F_VSOCK:
		return SDIAG_TABLES_VSOCK;
	case SD_F_STATE:
		return n->u.states ? SDIAG_TABLES_ALL : 0;
	case SD_F_TCPINFO:
		return sd_ftcp_tables(n);
	default:
		return SDIAG_TABLES_ALL;
	}
}

/* Tables where n can be true (neg: can be false). Over-approximations. */
static uint32_t node_tables(const struct sd_fnode *n, bool neg)
{
	uint32_t a, b;

	switch (n->kind) {
	case SD_F_AND:
	case SD_F_OR:
		a = node_tables(n->a, neg);
		b = node_tables(n->b, neg);
		return (n->kind == SD_F_AND) != neg ? a & b : a | b;
	case SD_F_NOT:
		return node_tables(n->a, !neg);
	case SD_F_TABLES:
		return neg ? SDIAG_TABLES_ALL & ~n->u.tables : n->u.tables;
	default:
		return neg ? SDIAG_TABLES_ALL : leaf_tables(n);
	}
}

bool sd_filter_excludes_table(const struct sdiag_filter *f, enum sdiag_table t)
{
	if (!f || !f->root || (unsigned)t >= SDIAG_T_MAX)
		return false;
	return !(node_tables(f->root, false) & SDIAG_TABLE_BIT(t));
}

/* A conjunct "sport = N" / "dport = N" at the top level of f (under ANDs
 * only): every matching socket has that port, so the kernel may pre-filter
 * on it in the request header, before it builds any message. */
static uint16_t exact_port(const struct sd_fnode *n, uint8_t dir)
{
	uint16_t p;

	if (!n)
		return 0;
	if (n->kind == SD_F_AND) {
		p = exact_port(n->a, dir);
		return p ? p : exact_port(n->b, dir);
	}
	if (n->kind == SD_F_NUM && n->field == SD_FLD_PORT && n->cmp == SD_EQ && n->dir == dir &&
	    n->u.num.value > 0 && n->u.num.value <= UINT16_MAX)
		return (uint16_t)n->u.num.value;
	return 0;
}

void sd_filter_exact_ports(const struct sdiag_filter *f, uint16_t *ret_sport, uint16_t *ret_dport)
{
	*ret_sport = f ? exact_port(f->root, SD_DIR_SRC) : 0;
	*ret_dport = f ? exact_port(f->root, SD_DIR_DST) : 0;
}
