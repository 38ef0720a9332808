// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ctnetlink deletes (see conntrack.h). The wire format is the kernel's
 * (linux/netfilter/nfnetlink_conntrack.h): an nfgenmsg, then CTA_TUPLE_ORIG
 * { CTA_TUPLE_IP { CTA_IP_V4_SRC/DST | CTA_IP_V6_SRC/DST }, CTA_TUPLE_PROTO
 * { CTA_PROTO_NUM, CTA_PROTO_SRC_PORT, CTA_PROTO_DST_PORT } }, CTA_ID, CTA_ZONE.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netlink.h>

#include "conntrack/conntrack.h"
#include "lib/core/nl.h"
#include "util/inaddr.h"

/* Requests per sendmsg: a failure's reply (capped: NETLINK_CAP_ACK) costs
 * about 1 KiB of receive buffer, and every one of a batch may fail. */
#define CT_BATCH 128
#define CT_MSG_MAX 160
#define CT_RCVBUF (4 << 20)

struct ct {
	struct sd_nl *nl; /* the transport: sequence numbers, sends, replies */
	uint64_t requests;
	uint8_t sbuf[CT_BATCH * CT_MSG_MAX] __attribute__((aligned(8)));
};

const char *ct_strerror(int err)
{
	if (err == -ENOPROTOOPT)
		return "this kernel has no connection tracking over netlink "
		       "(nf_conntrack_netlink): no conntrack entry can be deleted";
	if (err == -EPERM)
		return "no CAP_NET_ADMIN over the network namespace: no conntrack entry can be "
		       "deleted";
	return strerror(-err);
}

/* The transport stamps sequence numbers. */
static struct nlmsghdr *put_header(void *buf, uint16_t type, uint16_t flags, uint8_t family)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;

	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = family;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = 0;
	return nlh;
}

static void put_tuple(struct nlmsghdr *nlh, uint16_t type, const struct ct_tuple *t)
{
	struct nlattr *tup = mnl_attr_nest_start(nlh, type), *n;
	size_t alen = t->family == AF_INET ? 4 : 16;

	n = mnl_attr_nest_start(nlh, CTA_TUPLE_IP);
	mnl_attr_put(nlh, t->family == AF_INET ? CTA_IP_V4_SRC : CTA_IP_V6_SRC, alen, t->src);
	mnl_attr_put(nlh, t->family == AF_INET ? CTA_IP_V4_DST : CTA_IP_V6_DST, alen, t->dst);
	mnl_attr_nest_end(nlh, n);
	n = mnl_attr_nest_start(nlh, CTA_TUPLE_PROTO);
	mnl_attr_put_u8(nlh, CTA_PROTO_NUM, t->proto);
	if (t->proto == IPPROTO_TCP || t->proto == IPPROTO_UDP || t->proto == IPPROTO_UDPLITE ||
	    t->proto == IPPROTO_SCTP || t->proto == IPPROTO_DCCP) {
		mnl_attr_put_u16(nlh, CTA_PROTO_SRC_PORT, htons(t->sport));
		mnl_attr_put_u16(nlh, CTA_PROTO_DST_PORT, htons(t->dport));
	}
	mnl_attr_nest_end(nlh, n);
	mnl_attr_nest_end(nlh, tup);
}

struct ct_req {
	const struct ct_tuple *t;
	uint32_t id; /* 0: any */
	uint16_t zone;
};

/* Send up to CT_BATCH delete requests in one sendmsg; count the deleted. */
static int send_batch(struct ct *c, const struct ct_req *req, size_t n, size_t *deleted)
{
	int errs[CT_BATCH] = { 0 }, first = 0, r;
	size_t off = 0;

	for (size_t i = 0; i < n; i++) {
		struct nlmsghdr *nlh = put_header(c->sbuf + off, IPCTNL_MSG_CT_DELETE, 0,
						  req[i].t->family);

		put_tuple(nlh, CTA_TUPLE_ORIG, req[i].t);
		if (req[i].id)
			mnl_attr_put_u32(nlh, CTA_ID, htonl(req[i].id));
		if (req[i].zone)
			mnl_attr_put_u16(nlh, CTA_ZONE, htons(req[i].zone));
		off += NLMSG_ALIGN(nlh->nlmsg_len);
	}
	c->requests += n;
	/* Only failures are answered; lost answers: -ENOBUFS in errs. */
	r = sd_nl_batch(c->nl, c->sbuf, off, errs, n);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		if (!errs[i])
			(*deleted)++;
		else if (errs[i] != -ENOENT && !first)
			first = errs[i];
	}
	return first;
}

static int delete_reqs(struct ct *c, const struct ct_req *req, size_t n, size_t *ret_deleted)
{
	size_t deleted = 0;
	int r = 0, first = 0;

	for (size_t i = 0; i < n; i += CT_BATCH) {
		r = send_batch(c, req + i, n - i < CT_BATCH ? n - i : CT_BATCH, &deleted);
		if (r < 0 && !first)
			first = r;
		if (r == -ENOBUFS || r == -EPERM || r == -EOPNOTSUPP)
			break;
	}
	*ret_deleted = deleted;
	return first;
}

int ct_delete_flows(struct ct *c, const struct ct_tuple *t, size_t n, size_t *ret_deleted)
{
	struct ct_req req[CT_BATCH];
	size_t total = 0;
	int first = 0;

	for (size_t i = 0; i < n; i += CT_BATCH) {
		size_t k = n - i < CT_BATCH ? n - i : CT_BATCH, d = 0;
		int r;

		for (size_t j = 0; j < k; j++)
			req[j] = (struct ct_req){ .t = &t[i + j] };
		r = delete_reqs(c, req, k, &d);
		total += d;
		if (r < 0 && !first)
			first = r;
		if (r == -ENOBUFS || r == -EPERM || r == -EOPNOTSUPP)
			break;
	}
	*ret_deleted = total;
	return first;
}

/* ---- the dump ---------------------------------------------------------------------------- */

static int ip_cb(const struct nlattr *a, void *data)
{
	struct ct_tuple *t = data;
	uint16_t type = mnl_attr_get_type(a), len = mnl_attr_get_payload_len(a);

	if ((type == CTA_IP_V4_SRC || type == CTA_IP_V4_DST) && len == 4)
		memcpy(type == CTA_IP_V4_SRC ? t->src : t->dst, mnl_attr_get_payload(a), 4);
	else if ((type == CTA_IP_V6_SRC || type == CTA_IP_V6_DST) && len == 16)
		memcpy(type == CTA_IP_V6_SRC ? t->src : t->dst, mnl_attr_get_payload(a), 16);
	return MNL_CB_OK;
}

static int proto_cb(const struct nlattr *a, void *data)
{
	struct ct_tuple *t = data;
	uint16_t type = mnl_attr_get_type(a), len = mnl_attr_get_payload_len(a);

	if (type == CTA_PROTO_NUM && len >= 1)
		t->proto = mnl_attr_get_u8(a);
	else if (type == CTA_PROTO_SRC_PORT && len >= 2)
		t->sport = ntohs(mnl_attr_get_u16(a));
	else if (type == CTA_PROTO_DST_PORT && len >= 2)
		t->dport = ntohs(mnl_attr_get_u16(a));
	return MNL_CB_OK;
}

static int tuple_cb(const struct nlattr *a, void *data)
{
	if (mnl_attr_get_type(a) == CTA_TUPLE_IP)
		return mnl_attr_parse_nested(a, ip_cb, data) < 0 ? MNL_CB_ERROR : MNL_CB_OK;
	if (mnl_attr_get_type(a) == CTA_TUPLE_PROTO)
		return mnl_attr_parse_nested(a, proto_cb, data) < 0 ? MNL_CB_ERROR : MNL_CB_OK;
	return MNL_CB_OK;
}

struct entry_parse {
	struct ct_entry *e;
	unsigned seen;
};

static int entry_cb(const struct nlattr *a, void *data)
{
	struct entry_parse *p = data;
	uint16_t type = mnl_attr_get_type(a), len = mnl_attr_get_payload_len(a);

	switch (type) {
	case CTA_TUPLE_ORIG:
	case CTA_TUPLE_REPLY:
		p->seen |= 1u << type;
		return mnl_attr_parse_nested(a, tuple_cb,
					     type == CTA_TUPLE_ORIG ? &p->e->orig : &p->e->reply) < 0 ?
			       MNL_CB_ERROR :
			       MNL_CB_OK;
	case CTA_ID:
		if (len >= 4)
			p->e->id = ntohl(mnl_attr_get_u32(a));
		break;
	case CTA_ZONE:
		if (len >= 2)
			p->e->zone = ntohs(mnl_attr_get_u16(a));
		break;
	}
	return MNL_CB_OK;
}

static int dump_cb(const struct nlmsghdr *nlh, void *data)
{
	struct ct_dump *s = data;
	const struct nfgenmsg *nfg;
	struct ct_entry e = { 0 };
	struct entry_parse p = { .e = &e };

	if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(*nfg))
		return 0;
	nfg = mnl_nlmsg_get_payload(nlh);
	if (nfg->nfgen_family != AF_INET && nfg->nfgen_family != AF_INET6)
		return 0;
	e.orig.family = e.reply.family = nfg->nfgen_family;
	if (mnl_attr_parse(nlh, sizeof(*nfg), entry_cb, &p) < 0)
		return 0; /* malformed: skipped, never deleted */
	if (p.seen != ((1u << CTA_TUPLE_ORIG) | (1u << CTA_TUPLE_REPLY)) ||
	    !s->match(&e, s->userdata))
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct ct_entry *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = e;
	return 0;
}

static int sweep_restart(void *data)
{
	((struct ct_dump *)data)->n = 0;
	return 0;
}

int ct_dump_datagram(struct ct_dump *d, const void *buf, size_t len)
{
	size_t left;
	int r = 0;

	for (const struct nlmsghdr *m = sd_nl_first(buf, len, &left); m && !r;
	     m = sd_nl_next(m, &left))
		if (m->nlmsg_type >= NLMSG_MIN_TYPE)
			r = dump_cb(m, d);
	return r;
}

static int dump(struct ct *c, struct ct_dump *s)
{
	put_header(sd_nl_reqbuf(c->nl, NULL), IPCTNL_MSG_CT_GET, NLM_F_DUMP, AF_UNSPEC);
	c->requests++;
	/* An interrupted dump is taken again (the transport's policy). */
	return sd_nl_dump_retry(c->nl, dump_cb, sweep_restart, s);
}

int ct_sweep(struct ct *c, ct_match_fn match, void *userdata, size_t *ret_deleted)
{
	struct ct_dump s = { .match = match, .userdata = userdata };
	struct ct_req req[CT_BATCH];
	size_t total = 0;
	int r, first = 0;

	r = dump(c, &s);
	if (r < 0) {
		/* ENOENT/EOPNOTSUPP: no ctnetlink behind nfnetlink */
		if (r == -EOPNOTSUPP || r == -ENOENT)
			r = -ENOPROTOOPT;
		goto out;
	}
	for (size_t i = 0; i < s.n; i += CT_BATCH) {
		size_t k = s.n - i < CT_BATCH ? s.n - i : CT_BATCH, d = 0;

		for (size_t j = 0; j < k; j++)
			req[j] = (struct ct_req){ .t = &s.v[i + j].orig,
						  .id = s.v[i + j].id,
						  .zone = s.v[i + j].zone };
		r = delete_reqs(c, req, k, &d);
		total += d;
		if (r < 0 && !first)
			first = r;
	}
	r = first;
out:
	free(s.v);
	*ret_deleted = total;
	return r;
}

/* ---- the socket -------------------------------------------------------------------------- */

bool ct_tuple_of_sock(const struct sdiag_sock *s, struct ct_tuple *ret)
{
	struct ct_tuple t = { .family = s->family };

	if (s->family != AF_INET && s->family != AF_INET6)
		return false;
	switch (s->table) {
	case SDIAG_T_TCP:
		t.proto = IPPROTO_TCP;
		break;
	case SDIAG_T_UDP:
		t.proto = IPPROTO_UDP;
		break;
	case SDIAG_T_UDPLITE:
		t.proto = IPPROTO_UDPLITE;
		break;
	default:
		return false;
	}
	if (!s->inet.dport)
		return false;
	t.sport = s->inet.sport;
	t.dport = s->inet.dport;
	if (s->family == AF_INET6 && in_v4mapped(s->inet.src) && in_v4mapped(s->inet.dst)) {
		t.family = AF_INET;
		memcpy(t.src, s->inet.src + 12, 4);
		memcpy(t.dst, s->inet.dst + 12, 4);
	} else {
		size_t alen = s->family == AF_INET ? 4 : 16;

		memcpy(t.src, s->inet.src, alen);
		memcpy(t.dst, s->inet.dst, alen);
	}
	*ret = t;
	return true;
}

/* A request naming no entry: ENOENT from a kernel with ctnetlink. */
static int probe(struct ct *c)
{
	struct ct_tuple t = { .family = AF_INET, .proto = IPPROTO_UDP };
	struct nlmsghdr *nlh = put_header(c->sbuf, IPCTNL_MSG_CT_DELETE, NLM_F_ACK, AF_INET);
	int err = 0, r;

	put_tuple(nlh, CTA_TUPLE_ORIG, &t);
	mnl_attr_put_u32(nlh, CTA_ID, htonl(0xffffffffu));
	r = sd_nl_batch(c->nl, c->sbuf, NLMSG_ALIGN(nlh->nlmsg_len), &err, 1);
	if (r < 0)
		return r;
	if (err == -ENOENT || err == 0)
		return 0;
	if (err == -EOPNOTSUPP || err == -EPROTONOSUPPORT || err == -EAFNOSUPPORT)
		return -ENOPROTOOPT;
	return err;
}

int ct_open(struct ct **ret, int nsfd)
{
	/* A netlink socket belongs to the namespace it was created in. */
	struct sd_nl_opts o = { .proto = NETLINK_NETFILTER,
				.rcvbuf = CT_RCVBUF,
				.in_netns = nsfd >= 0,
				.nsfd = nsfd };
	struct ct *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	r = sd_nl_open_with(&c->nl, &o);
	if (r == -EPROTONOSUPPORT)
		r = -ENOPROTOOPT;
	if (r == 0)
		r = probe(c);
	if (r < 0) {
		ct_close(c);
		return r;
	}
	*ret = c;
	return 0;
}

void ct_close(struct ct *c)
{
	if (!c)
		return;
	sd_nl_close(c->nl);
	free(c);
}

void ct_stats(const struct ct *c, uint64_t *ret_requests, uint64_t *ret_bytes_read)
{
	*ret_requests = c->requests;
	*ret_bytes_read = sd_nl_bytes_read(c->nl);
}

int ct_delete_destroyed(struct ct *c, struct sdiag_sock *const *v,
			const enum sdiag_destroy_result *res, size_t n, size_t *ret_deleted)
{
	struct ct_tuple *t;
	size_t k = 0;
	int r;

	*ret_deleted = 0;
	if (!n)
		return 0;
	t = calloc(n, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (res[i] == SDIAG_DESTROYED && ct_tuple_of_sock(v[i], &t[k]))
			k++;
	r = k ? ct_delete_flows(c, t, k, ret_deleted) : 0;
	free(t);
	return r;
}
