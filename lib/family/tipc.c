/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * AF_TIPC (net/tipc/diag.c, tipc_sk_fill_sock_diag() in net/tipc/socket.c):
 * request builder and reply decoder.
 *
 * Unlike every other family the reply has a zero-length fixed header: the
 * payload is one TIPC_NLA_SOCK nest holding TIPC_NLA_SOCK_* attributes
 * (include/uapi/linux/tipc_netlink.h), with the connection and statistics in
 * nests of their own. TIPC states are TCP's numbers (TIPC_OPEN = CLOSE,
 * TIPC_LISTEN = LISTEN, TIPC_CONNECTING = SYN_SENT, ...).
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include "lib/family/family.h"

#ifndef AF_TIPC
#define AF_TIPC 30
#endif

/* Own copy of struct tipc_sock_diag_req. */
struct td_req {
	uint8_t family;
	uint8_t protocol; /* must be 0 */
	uint16_t pad;
	uint32_t states;
};

enum { TD_NLA_SOCK = 2 }; /* TIPC_NLA_SOCK, the top-level nest */

enum {
	TD_SOCK_UNSPEC,
	TD_SOCK_ADDR,	    /* u32 own node address */
	TD_SOCK_REF,	    /* u32 port id */
	TD_SOCK_CON,	    /* nest */
	TD_SOCK_HAS_PUBL,   /* flag */
	TD_SOCK_STAT,	    /* nest */
	TD_SOCK_TYPE,	    /* u32 */
	TD_SOCK_INO,	    /* u32 */
	TD_SOCK_UID,	    /* u32 */
	TD_SOCK_TIPC_STATE, /* u32 */
	TD_SOCK_COOKIE,	    /* u64 */
	TD_SOCK_PAD,
	TD_SOCK_GROUP, /* nest */
	TD_SOCK_MAX
};

enum {
	TD_CON_UNSPEC,
	TD_CON_FLAG, /* flag: type/instance follow */
	TD_CON_NODE,
	TD_CON_SOCK,
	TD_CON_TYPE,
	TD_CON_INST,
	TD_CON_MAX
};

enum {
	TD_STAT_RCVQ,  /* u32, in messages */
	TD_STAT_SENDQ, /* u32, in messages */
	TD_STAT_LINK_CONG,
	TD_STAT_CONN_CONG,
	TD_STAT_DROP, /* u32 */
	TD_STAT_MAX
};

/* sd_attr_table() policies: minimum payloads (UINT16_MAX: any length, nests). */
static const uint16_t top_policy[TD_NLA_SOCK + 1] = {
	[TD_NLA_SOCK] = UINT16_MAX,
};

static const uint16_t sock_policy[TD_SOCK_MAX] = {
	[TD_SOCK_ADDR] = 4,	     [TD_SOCK_REF] = 4,	       [TD_SOCK_CON] = UINT16_MAX,
	[TD_SOCK_STAT] = UINT16_MAX, [TD_SOCK_TYPE] = 4,       [TD_SOCK_INO] = 4,
	[TD_SOCK_UID] = 4,	     [TD_SOCK_TIPC_STATE] = 4, [TD_SOCK_COOKIE] = 8,
};

static const uint16_t con_policy[TD_CON_MAX] = {
	[TD_CON_NODE] = 4,
	[TD_CON_SOCK] = 4,
	[TD_CON_TYPE] = 4,
	[TD_CON_INST] = 4,
};

static const uint16_t stat_policy[TD_STAT_MAX] = {
	[TD_STAT_RCVQ] = 4,
	[TD_STAT_SENDQ] = 4,
};

struct nlmsghdr *sd_tipc_request(void *buf, const struct sd_req *r)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct td_req *req;

	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req = mnl_nlmsg_put_extra_header(nlh, sizeof(*req));
	req->family = AF_TIPC;
	req->states = r->states;
	return nlh;
}

static int parse_nest(const struct nlattr *nest, const uint16_t *policy, size_t n,
		      const struct nlattr **tb)
{
	return sd_attr_table(mnl_attr_get_payload(nest), mnl_attr_get_payload_len(nest), policy, n,
			     tb);
}

static uint32_t get_u32(const struct nlattr *a)
{
	return a ? mnl_attr_get_u32(a) : 0;
}

static int parse_con(const struct nlattr *nest, struct sdiag_tipc *t)
{
	const struct nlattr *tb[TD_CON_MAX];
	int r;

	r = parse_nest(nest, con_policy, TD_CON_MAX, tb);
	if (r < 0)
		return r;
	t->has_conn = true;
	t->conn_node = get_u32(tb[TD_CON_NODE]);
	t->conn_port = get_u32(tb[TD_CON_SOCK]);
	/* Type and instance only with TD_CON_FLAG (a named connection). */
	t->conn_type = get_u32(tb[TD_CON_TYPE]);
	t->conn_instance = get_u32(tb[TD_CON_INST]);
	return 0;
}

static int parse_stat(const struct nlattr *nest, struct sdiag_sock *s)
{
	const struct nlattr *tb[TD_STAT_MAX];
	int r;

	/* Queues are counted in messages; congestion flags and drops are
	 * not in the record. */
	r = parse_nest(nest, stat_policy, TD_STAT_MAX, tb);
	if (r < 0)
		return r;
	s->rqueue = get_u32(tb[TD_STAT_RCVQ]);
	s->wqueue = get_u32(tb[TD_STAT_SENDQ]);
	s->has |= SDIAG_HAS_QUEUES;
	return 0;
}

static int parse_sock(const struct nlattr *nest, struct sdiag_sock *s)
{
	const struct nlattr *tb[TD_SOCK_MAX];
	int r;

	r = parse_nest(nest, sock_policy, TD_SOCK_MAX, tb);
	if (r < 0)
		return r;
	if (tb[TD_SOCK_CON] && (r = parse_con(tb[TD_SOCK_CON], &s->tipc)) < 0)
		return r;
	if (tb[TD_SOCK_STAT] && (r = parse_stat(tb[TD_SOCK_STAT], s)) < 0)
		return r;
	s->tipc.ref = get_u32(tb[TD_SOCK_REF]);
	s->tipc.addr = get_u32(tb[TD_SOCK_ADDR]);
	s->type = (uint8_t)get_u32(tb[TD_SOCK_TYPE]);
	if (tb[TD_SOCK_TIPC_STATE]) {
		uint32_t st = mnl_attr_get_u32(tb[TD_SOCK_TIPC_STATE]);

		s->state = st < SDIAG_SS_MAX ? (uint8_t)st : SDIAG_SS_UNKNOWN;
	}
	if (tb[TD_SOCK_INO]) {
		s->inode = mnl_attr_get_u32(tb[TD_SOCK_INO]);
		s->has |= SDIAG_HAS_INODE;
	}
	if (tb[TD_SOCK_UID]) {
		s->uid = mnl_attr_get_u32(tb[TD_SOCK_UID]);
		s->has |= SDIAG_HAS_UID;
	}
	if (tb[TD_SOCK_COOKIE]) {
		s->cookie = mnl_attr_get_u64(tb[TD_SOCK_COOKIE]);
		s->has |= SDIAG_HAS_COOKIE;
	}
	return 0;
}

int sd_tipc_decode(const struct nlmsghdr *nlh, struct sdiag_sock *s)
{
	const struct nlattr *tb[TD_NLA_SOCK + 1];
	int r;

	if (nlh->nlmsg_type != SOCK_DIAG_BY_FAMILY)
		return 0;
	if (nlh->nlmsg_len < NLMSG_HDRLEN)
		return -EBADMSG;
	/* No fixed header: the attributes start right after nlmsghdr. */
	r = sd_attr_table(mnl_nlmsg_get_payload(nlh), nlh->nlmsg_len - NLMSG_HDRLEN, top_policy,
			  TD_NLA_SOCK + 1, tb);
	if (r < 0)
		return r;
	if (!tb[TD_NLA_SOCK])
		return -EBADMSG;
	s->table = SDIAG_T_TIPC;
	s->family = AF_TIPC;
	s->protocol = 0;
	s->has |= SDIAG_HAS_TIPC_INFO;
	r = parse_sock(tb[TD_NLA_SOCK], s);
	return r < 0 ? r : 1;
}
