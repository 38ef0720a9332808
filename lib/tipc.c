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

#include "internal.h"

#ifndef AF_TIPC
#define AF_TIPC 30
#endif

/* Own copy of struct tipc_sock_diag_req. */
struct td_req {
	uint8_t family;
	uint8_t protocol;	/* must be 0 */
	uint16_t pad;
	uint32_t states;
};

enum { TD_NLA_SOCK = 2 };	/* TIPC_NLA_SOCK, the top-level nest */

enum {
	TD_SOCK_UNSPEC,
	TD_SOCK_ADDR,		/* u32 own node address */
	TD_SOCK_REF,		/* u32 port id */
	TD_SOCK_CON,		/* nest */
	TD_SOCK_HAS_PUBL,	/* flag */
	TD_SOCK_STAT,		/* nest */
	TD_SOCK_TYPE,		/* u32 */
	TD_SOCK_INO,		/* u32 */
	TD_SOCK_UID,		/* u32 */
	TD_SOCK_TIPC_STATE,	/* u32 */
	TD_SOCK_COOKIE,		/* u64 */
	TD_SOCK_PAD,
	TD_SOCK_GROUP,		/* nest */
	TD_SOCK_MAX
};

enum {
	TD_CON_UNSPEC,
	TD_CON_FLAG,		/* flag: type/instance follow */
	TD_CON_NODE,
	TD_CON_SOCK,
	TD_CON_TYPE,
	TD_CON_INST,
	TD_CON_MAX
};

enum {
	TD_STAT_RCVQ,		/* u32, in messages */
	TD_STAT_SENDQ,		/* u32, in messages */
	TD_STAT_LINK_CONG,
	TD_STAT_CONN_CONG,
	TD_STAT_DROP,		/* u32 */
	TD_STAT_MAX
};

static const uint16_t sock_min_len[TD_SOCK_MAX] = {
	[TD_SOCK_ADDR] = 4, [TD_SOCK_REF] = 4,	      [TD_SOCK_TYPE] = 4, [TD_SOCK_INO] = 4,
	[TD_SOCK_UID] = 4,  [TD_SOCK_TIPC_STATE] = 4, [TD_SOCK_COOKIE] = 8,
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

/* Bytes after the last attribute mnl_attr_ok() accepted; more than padding is malformed. */
static bool tail_ok(const struct nlattr *stop, const void *end)
{
	return (const char *)end - (const char *)stop < (int)sizeof(struct nlattr);
}

static const void *nest_end(const struct nlattr *nest)
{
	return (const char *)mnl_attr_get_payload(nest) + mnl_attr_get_payload_len(nest);
}

static int parse_con(const struct nlattr *nest, struct sdiag_tipc *t)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, nest) {
		uint16_t type = mnl_attr_get_type(a);

		if (type == TD_CON_UNSPEC || type == TD_CON_FLAG || type >= TD_CON_MAX)
			continue;
		if (mnl_attr_get_payload_len(a) < sizeof(uint32_t))
			return -EBADMSG;
		if (type == TD_CON_NODE)
			t->conn_node = mnl_attr_get_u32(a);
		else if (type == TD_CON_SOCK)
			t->conn_port = mnl_attr_get_u32(a);
		else if (type == TD_CON_TYPE)
			t->conn_type = mnl_attr_get_u32(a);
		else
			t->conn_instance = mnl_attr_get_u32(a);
	}
	t->has_conn = true;
	return tail_ok(a, nest_end(nest)) ? 0 : -EBADMSG;
}

static int parse_stat(const struct nlattr *nest, struct sdiag_sock *s)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, nest) {
		uint16_t type = mnl_attr_get_type(a);

		if (type != TD_STAT_RCVQ && type != TD_STAT_SENDQ)
			continue; /* congestion flags, drops: not in the record */
		if (mnl_attr_get_payload_len(a) < sizeof(uint32_t))
			return -EBADMSG;
		if (type == TD_STAT_RCVQ)
			s->rqueue = mnl_attr_get_u32(a);
		else
			s->wqueue = mnl_attr_get_u32(a);
	}
	s->has |= SDIAG_HAS_QUEUES;
	return tail_ok(a, nest_end(nest)) ? 0 : -EBADMSG;
}

static int put_sock_attr(const struct nlattr *a, uint16_t type, struct sdiag_sock *s)
{
	uint32_t v = sock_min_len[type] == 4 ? mnl_attr_get_u32(a) : 0;

	switch (type) {
	case TD_SOCK_ADDR:
		s->tipc.addr = v;
		break;
	case TD_SOCK_REF:
		s->tipc.ref = v;
		break;
	case TD_SOCK_CON:
		return parse_con(a, &s->tipc);
	case TD_SOCK_STAT:
		return parse_stat(a, s);
	case TD_SOCK_TYPE:
		s->type = (uint8_t)v;
		break;
	case TD_SOCK_INO:
		s->inode = v;
		s->has |= SDIAG_HAS_INODE;
		break;
	case TD_SOCK_UID:
		s->uid = v;
		s->has |= SDIAG_HAS_UID;
		break;
	case TD_SOCK_TIPC_STATE:
		s->state = v < SDIAG_SS_MAX ? (uint8_t)v : SDIAG_SS_UNKNOWN;
		break;
	case TD_SOCK_COOKIE:
		s->cookie = mnl_attr_get_u64(a);
		s->has |= SDIAG_HAS_COOKIE;
		break;
	default:
		break;
	}
	return 0;
}

static int parse_sock(const struct nlattr *nest, struct sdiag_sock *s)
{
	const struct nlattr *a;
	int r;

	mnl_attr_for_each_nested(a, nest) {
		uint16_t type = mnl_attr_get_type(a);

		if (type >= TD_SOCK_MAX)
			continue; /* newer kernel */
		if (mnl_attr_get_payload_len(a) < sock_min_len[type])
			return -EBADMSG;
		r = put_sock_attr(a, type, s);
		if (r < 0)
			return r;
	}
	return tail_ok(a, nest_end(nest)) ? 0 : -EBADMSG;
}

int sd_tipc_decode(const struct nlmsghdr *nlh, struct sdiag_sock *s)
{
	const struct nlattr *a;
	bool found = false;
	int r;

	if (nlh->nlmsg_type != SOCK_DIAG_BY_FAMILY)
		return 0;

	s->table = SDIAG_T_TIPC;
	s->family = AF_TIPC;
	s->has |= SDIAG_HAS_TIPC_INFO;
	mnl_attr_for_each(a, nlh, 0) {
		if (mnl_attr_get_type(a) != TD_NLA_SOCK)
			continue;
		if (found)
			return -EBADMSG; /* one socket per message */
		r = parse_sock(a, s);
		if (r < 0)
			return r;
		found = true;
	}
	if (!tail_ok(a, mnl_nlmsg_get_payload_tail(nlh)) || !found)
		return -EBADMSG;
	return 1;
}
