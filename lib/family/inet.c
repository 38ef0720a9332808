/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * inet_diag: AF_INET / AF_INET6 dumps of TCP, UDP, UDP-Lite, raw, MPTCP and
 * SCTP sockets (SOCK_DIAG_BY_FAMILY, and the legacy TCPDIAG_GETSOCK replies).
 *
 * The reply does not say which protocol table it came from (only raw sockets
 * carry INET_DIAG_PROTOCOL, and then it is the socket's own protocol), so the
 * caller passes the protocol it asked for in s->protocol; see internal.h.
 *
 * Records:
 *  - Full sockets are told from TIME_WAIT and request mini-sockets by
 *    INET_DIAG_SHUTDOWN, which the kernel sends for every full socket (3.8+)
 *    and never for mini-sockets (or by a non-zero inode on older kernels).
 *    Only full sockets get SDIAG_HAS_UID: the kernel writes 0 into uid and
 *    inode for mini-sockets, which is not uid 0. SDIAG_HAS_INODE needs a
 *    non-zero inode: full sockets without a file (children not yet accepted,
 *    orphans after close()) report 0 too.
 *  - TCP's bound-inactive sockets (asked for with state bit 13) come back with
 *    state CLOSE. A TCP dump never returns any other full socket in CLOSE (a
 *    closed TCP socket is unhashed before its state is written), so a full TCP
 *    socket in CLOSE in a dump reply (NLM_F_MULTI, no INET_DIAG_PROTOCOL, which
 *    marks destroy broadcasts of sockets that are closing) is reported as
 *    SDIAG_SS_BOUND_INACTIVE. That also keeps the state filter honest: such
 *    sockets only come when bit 13 was asked for, never for bit 7 alone.
 *  - Request sockets keep the kernel's SYN_RECV (ss prints them so too).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>

#include "lib/family/family.h"

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

#define SD_SOCK_DIAG_BY_FAMILY 20
#define SD_TCPDIAG_GETSOCK 18

/* Our own copies of linux/inet_diag.h (the installed headers may be older);
 * the request's: family.h (the destroyer sends it too). */
struct sd_inet_msg {
	uint8_t family;
	uint8_t state;
	uint8_t timer;
	uint8_t retrans;
	struct sd_inet_sockid id;
	uint32_t expires;
	uint32_t rqueue;
	uint32_t wqueue;
	uint32_t uid;
	uint32_t inode;
};

_Static_assert(sizeof(struct sd_inet_sockid) == 48, "inet_diag_sockid layout");
_Static_assert(sizeof(struct sd_inet_req_v2) == 56, "inet_diag_req_v2 layout");
_Static_assert(sizeof(struct sd_inet_msg) == 72, "inet_diag_msg layout");

/* Request attributes */
enum {
	SD_INET_DIAG_REQ_BYTECODE = 1,
	SD_INET_DIAG_REQ_PROTOCOL = 3,
};

/* Reply attributes (INET_DIAG_*, Linux 6.18) */
enum {
	SD_INET_DIAG_MEMINFO = 1,
	SD_INET_DIAG_INFO,
	SD_INET_DIAG_VEGASINFO,
	SD_INET_DIAG_CONG,
	SD_INET_DIAG_TOS,
	SD_INET_DIAG_TCLASS,
	SD_INET_DIAG_SKMEMINFO,
	SD_INET_DIAG_SHUTDOWN,
	SD_INET_DIAG_DCTCPINFO,
	SD_INET_DIAG_PROTOCOL,
	SD_INET_DIAG_SKV6ONLY,
	SD_INET_DIAG_LOCALS,
	SD_INET_DIAG_PEERS,
	SD_INET_DIAG_PAD,
	SD_INET_DIAG_MARK,
	SD_INET_DIAG_BBRINFO,
	SD_INET_DIAG_CLASS_ID,
	SD_INET_DIAG_MD5SIG,
	SD_INET_DIAG_ULP_INFO,
	SD_INET_DIAG_SK_BPF_STORAGES,
	SD_INET_DIAG_CGROUP_ID,
	SD_INET_DIAG_SOCKOPT,
	SD_INET_DIAG_MAX_KNOWN
};

/* INET_ULP_INFO_* inside INET_DIAG_ULP_INFO */
enum {
	SD_INET_ULP_INFO_NAME = 1,
	SD_INET_ULP_INFO_TLS,
	SD_INET_ULP_INFO_MPTCP,
	SD_INET_ULP_INFO_MAX_KNOWN
};

#define EXT(attr) (1u << ((attr)-1))

/*
 * Minimum payload length per attribute; 0 = not decoded (skipped). Scalars
 * must be whole; structs may be shorter (older kernels) and are zero-filled.
 */
static const uint16_t inet_policy[SD_INET_DIAG_MAX_KNOWN] = {
	[SD_INET_DIAG_MEMINFO] = 1,
	[SD_INET_DIAG_INFO] = 1,
	[SD_INET_DIAG_VEGASINFO] = 1,
	[SD_INET_DIAG_CONG] = 1,
	[SD_INET_DIAG_TOS] = 1,
	[SD_INET_DIAG_TCLASS] = 1,
	[SD_INET_DIAG_SKMEMINFO] = 4,
	[SD_INET_DIAG_SHUTDOWN] = 1,
	[SD_INET_DIAG_DCTCPINFO] = 1,
	[SD_INET_DIAG_PROTOCOL] = 1,
	[SD_INET_DIAG_SKV6ONLY] = 1,
	[SD_INET_DIAG_MARK] = 4,
	[SD_INET_DIAG_BBRINFO] = 1,
	[SD_INET_DIAG_CLASS_ID] = 4,
	/* A nest may be empty; present as a marker. */
	[SD_INET_DIAG_ULP_INFO] = UINT16_MAX,
	[SD_INET_DIAG_CGROUP_ID] = 8,
	/* Arrays of sockaddr_storage: any length, even none. */
	[SD_INET_DIAG_LOCALS] = UINT16_MAX,
	[SD_INET_DIAG_PEERS] = UINT16_MAX,
	[SD_INET_DIAG_SOCKOPT] = 1,
};

static const uint16_t ulp_policy[SD_INET_ULP_INFO_MAX_KNOWN] = {
	[SD_INET_ULP_INFO_NAME] = 1,
	[SD_INET_ULP_INFO_MPTCP] = UINT16_MAX,
};

int sd_attr_table(const void *payload, size_t len, const uint16_t *policy, size_t n,
		  const struct nlattr **tb)
{
	const struct nlattr *a = payload;
	int rem;

	if (len > INT32_MAX)
		return -EBADMSG;
	rem = (int)len;
	memset(tb, 0, n * sizeof(*tb));
	for (; mnl_attr_ok(a, rem); a = mnl_attr_next(a)) {
		uint16_t type = mnl_attr_get_type(a);
		uint16_t min;

		rem -= (int)MNL_ALIGN(a->nla_len);
		if (type >= n || !policy[type])
			continue; /* unknown or not decoded: skip */
		min = policy[type] == UINT16_MAX ? 0 : policy[type];
		if (mnl_attr_get_payload_len(a) < min)
			return -EBADMSG;
		tb[type] = a;
	}
	/* Nothing may be left but the last attribute's alignment padding
	 * (rem < 0 then): leftover bytes are a cut or garbled attribute. */
	if (rem > 0)
		return -EBADMSG;
	return 0;
}

void sd_inet_sockid_decode(const void *id, struct sdiag_sock *s)
{
	struct sd_inet_sockid sid;

	memcpy(&sid, id, sizeof(sid));
	memcpy(s->inet.src, sid.src, sizeof(s->inet.src));
	memcpy(s->inet.dst, sid.dst, sizeof(s->inet.dst));
	s->inet.sport = ntohs(sid.sport);
	s->inet.dport = ntohs(sid.dport);
	s->inet.ifindex = sid.ifindex;
	s->cookie = (uint64_t)sid.cookie[1] << 32 | sid.cookie[0];
	if (s->cookie)
		s->has |= SDIAG_HAS_COOKIE;
}

/* ---- request ------------------------------------------------------------------ */

static uint8_t inet_ext(uint32_t show)
{
	uint8_t ext = 0;

	if (show & SDIAG_SHOW_INFO)
		ext |= EXT(SD_INET_DIAG_INFO) | EXT(SD_INET_DIAG_VEGASINFO) |
		       EXT(SD_INET_DIAG_CONG);
	if (show & SDIAG_SHOW_TCP_INFO)
		ext |= EXT(SD_INET_DIAG_INFO);
	if (show & SDIAG_SHOW_MEM)
		ext |= EXT(SD_INET_DIAG_MEMINFO) | EXT(SD_INET_DIAG_SKMEMINFO);
	/* TCLASS also brings CLASS_ID, for both families. */
	if (show & SDIAG_SHOW_TOS)
		ext |= EXT(SD_INET_DIAG_TOS) | EXT(SD_INET_DIAG_TCLASS);
	return ext;
}

static uint32_t inet_states(uint32_t states)
{
	const uint32_t syn = SDIAG_STATE_BIT(SDIAG_SS_SYN_RECV) |
			     SDIAG_STATE_BIT(SDIAG_SS_NEW_SYN_RECV);

	/* Same numbering as the kernel. Request sockets are NEW_SYN_RECV inside
	 * but reported as SYN_RECV: asking for either means both. Bit 13
	 * (BOUND_INACTIVE) passes through; older kernels ignore it. */
	states &= SDIAG_STATES_ALL;
	if (states & syn)
		states |= syn;
	return states;
}

/* Largest bytecode that fits the 4 KiB request buffer internal.h promises. */
#define SD_INET_BC_MAX                                                                             \
	(4096 - MNL_NLMSG_HDRLEN - sizeof(struct sd_inet_req_v2) - 2 * MNL_ATTR_HDRLEN - 4)

/*
 * TCP of both families in one dump: the legacy TCPDIAG_GETSOCK request runs
 * the same dump with family AF_UNSPEC, so the kernel walks its (global,
 * often 256k-bucket) established hash once instead of once per family.
 * Bytecode applies as for the v2 request.
 */
static struct nlmsghdr *tcp_legacy_request(void *buf, const struct sd_req *r)
{
	struct {
		uint8_t family, src_len, dst_len, ext;
		uint8_t id[48];
		uint32_t states;
		uint32_t dbs;
	} *req;
	struct nlmsghdr *nlh;

	if (r->protocol != IPPROTO_TCP)
		return NULL;
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = SD_TCPDIAG_GETSOCK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req = mnl_nlmsg_put_extra_header(nlh, sizeof(*req));
	req->family = AF_UNSPEC;
	req->ext = inet_ext(r->show);
	req->states = inet_states(r->states);
	/* Same layout as the v2 request's id: the header port pre-filter. */
	memcpy(req->id, &(struct sd_inet_sockid){ .sport = htons(r->sport),
						  .dport = htons(r->dport) },
	       sizeof(req->id));
	if (r->bytecode)
		mnl_attr_put(nlh, SD_INET_DIAG_REQ_BYTECODE, r->bytecode_len, r->bytecode);
	return nlh;
}

struct nlmsghdr *sd_inet_request(void *buf, const struct sd_req *r)
{
	struct nlmsghdr *nlh;
	struct sd_inet_req_v2 *req;

	if (r->bytecode && r->bytecode_len > SD_INET_BC_MAX)
		return NULL;
	if (r->family == AF_UNSPEC)
		return tcp_legacy_request(buf, r);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = SD_SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req = mnl_nlmsg_put_extra_header(nlh, sizeof(*req));
	req->family = r->family;
	/* Above 255 the u8 carries the low byte (as ss does); the kernel takes
	 * the protocol from INET_DIAG_REQ_PROTOCOL (5.9+). */
	req->protocol = (uint8_t)(r->protocol & 0xff);
	req->ext = inet_ext(r->show);
	req->states = inet_states(r->states);
	/* The kernel skips sockets with other ports before building a message. */
	req->id.sport = htons(r->sport);
	req->id.dport = htons(r->dport);
	/* raw_diag's dump walks every raw socket of the family whatever this
	 * byte says; it only keys exact lookups. IPPROTO_RAW as ss sends it. */
	if (r->protocol == IPPROTO_RAW)
		req->raw_protocol = IPPROTO_RAW;
	if (r->protocol > 255)
		mnl_attr_put_u32(nlh, SD_INET_DIAG_REQ_PROTOCOL, r->protocol);
	if (r->bytecode)
		mnl_attr_put(nlh, SD_INET_DIAG_REQ_BYTECODE, r->bytecode_len, r->bytecode);
	return nlh;
}

/* ---- reply --------------------------------------------------------------------- */

static bool inet_table(uint16_t protocol, struct sdiag_sock *s)
{
	switch (protocol) {
	case IPPROTO_TCP:
		s->table = SDIAG_T_TCP;
		s->type = SOCK_STREAM;
		break;
	case IPPROTO_UDP:
		s->table = SDIAG_T_UDP;
		s->type = SOCK_DGRAM;
		break;
	case IPPROTO_UDPLITE:
		s->table = SDIAG_T_UDPLITE;
		s->type = SOCK_DGRAM;
		break;
	case IPPROTO_RAW:
		s->table = SDIAG_T_RAW;
		s->type = SOCK_RAW;
		break;
	case IPPROTO_MPTCP:
		s->table = SDIAG_T_MPTCP;
		s->type = SOCK_STREAM;
		break;
	case IPPROTO_SCTP:
		/* SOCK_STREAM or SOCK_SEQPACKET: the reply does not say. */
		s->table = SDIAG_T_SCTP;
		s->type = 0;
		break;
	default:
		return false;
	}
	s->protocol = protocol;
	return true;
}

/* inet_diag_sockopt is two bytes of bitfields, first field in the lowest bit
 * on little-endian ABIs and in the highest on big-endian ones. */
static uint16_t inet_sockopt(const struct nlattr *a)
{
	uint8_t b[2] = { 0, 0 };
	uint16_t v;

	sd_copy_struct(b, sizeof(b), mnl_attr_get_payload(a), mnl_attr_get_payload_len(a));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	for (int i = 0; i < 2; i++) {
		uint8_t x = b[i], y = 0;

		for (int bit = 0; bit < 8; bit++)
			if (x & (1u << bit))
				y |= (uint8_t)(0x80u >> bit);
		b[i] = y;
	}
#endif
	v = (uint16_t)(b[0] | b[1] << 8);
	return v & 0x07ff; /* 11 defined bits; the rest is "unused" */
}

static void copy_string(char *dst, size_t size, const struct nlattr *a)
{
	const char *src = mnl_attr_get_payload(a);
	size_t len = mnl_attr_get_payload_len(a), n = 0;

	while (n < len && n + 1 < size && src[n])
		n++;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static int decode_ulp(const struct nlattr *a, struct sdiag_sock *s)
{
	const struct nlattr *tb[SD_INET_ULP_INFO_MAX_KNOWN];
	int r;

	r = sd_attr_table(mnl_attr_get_payload(a), mnl_attr_get_payload_len(a), ulp_policy,
			  SD_INET_ULP_INFO_MAX_KNOWN, tb);
	if (r < 0)
		return r;
	if (tb[SD_INET_ULP_INFO_NAME]) {
		copy_string(s->inet.ulp, sizeof(s->inet.ulp), tb[SD_INET_ULP_INFO_NAME]);
		s->has |= SDIAG_HAS_ULP;
	}
	if (tb[SD_INET_ULP_INFO_MPTCP]) {
		s->inet.ulp_mptcp = mnl_attr_get_payload(tb[SD_INET_ULP_INFO_MPTCP]);
		s->inet.ulp_mptcp_len = mnl_attr_get_payload_len(tb[SD_INET_ULP_INFO_MPTCP]);
	}
	return 0;
}

/* Keeps a struct attribute (if present) as a view and sets its has bit. */
static void view_attr(const struct nlattr *a, enum sdiag_blob k, uint64_t bit,
		      struct sdiag_sock *s)
{
	if (a)
		sd_blob_set(s, k, mnl_attr_get_payload(a), mnl_attr_get_payload_len(a), bit);
}

static void decode_info(const struct nlattr *const *tb, struct sdiag_sock *s)
{
	struct sdiag_inet *in = &s->inet;

	if (s->table == SDIAG_T_TCP)
		view_attr(tb[SD_INET_DIAG_INFO], SDIAG_BLOB_TCP_INFO, SDIAG_HAS_TCP_INFO, s);
	else if (s->table == SDIAG_T_MPTCP)
		view_attr(tb[SD_INET_DIAG_INFO], SDIAG_BLOB_MPTCP_INFO, SDIAG_HAS_MPTCP_INFO, s);
	/* SCTP's sctp_info has no place in the record yet. */

	view_attr(tb[SD_INET_DIAG_MEMINFO], SDIAG_BLOB_MEMINFO, SDIAG_HAS_MEMINFO, s);
	view_attr(tb[SD_INET_DIAG_SKMEMINFO], SDIAG_BLOB_SKMEMINFO, SDIAG_HAS_SKMEMINFO, s);
	view_attr(tb[SD_INET_DIAG_VEGASINFO], SDIAG_BLOB_VEGAS, SDIAG_HAS_VEGAS, s);
	view_attr(tb[SD_INET_DIAG_DCTCPINFO], SDIAG_BLOB_DCTCP, SDIAG_HAS_DCTCP, s);
	view_attr(tb[SD_INET_DIAG_BBRINFO], SDIAG_BLOB_BBR, SDIAG_HAS_BBR, s);
	if (tb[SD_INET_DIAG_CONG]) {
		copy_string(in->cong, sizeof(in->cong), tb[SD_INET_DIAG_CONG]);
		s->has |= SDIAG_HAS_CONG;
	}
}

static void decode_scalars(const struct nlattr *const *tb, struct sdiag_sock *s)
{
	struct sdiag_inet *in = &s->inet;
	const struct nlattr *a;

	if ((a = tb[SD_INET_DIAG_SHUTDOWN])) {
		s->shutdown = mnl_attr_get_u8(a) & 3;
		s->has |= SDIAG_HAS_SHUTDOWN;
	}
	if ((a = tb[SD_INET_DIAG_TOS])) {
		in->tos = mnl_attr_get_u8(a);
		s->has |= SDIAG_HAS_TOS;
	}
	if ((a = tb[SD_INET_DIAG_TCLASS])) {
		in->tclass = mnl_attr_get_u8(a);
		s->has |= SDIAG_HAS_TCLASS;
	}
	if ((a = tb[SD_INET_DIAG_SKV6ONLY])) {
		in->v6only = mnl_attr_get_u8(a) ? 1 : 0;
		s->has |= SDIAG_HAS_V6ONLY;
	}
	if ((a = tb[SD_INET_DIAG_MARK])) {
		in->mark = mnl_attr_get_u32(a);
		s->has |= SDIAG_HAS_MARK;
	}
	if ((a = tb[SD_INET_DIAG_CLASS_ID])) {
		in->class_id = mnl_attr_get_u32(a);
		s->has |= SDIAG_HAS_CLASS_ID;
	}
	if ((a = tb[SD_INET_DIAG_CGROUP_ID])) {
		memcpy(&in->cgroup_id, mnl_attr_get_payload(a), sizeof(in->cgroup_id));
		s->has |= SDIAG_HAS_CGROUP;
	}
	if ((a = tb[SD_INET_DIAG_SOCKOPT])) {
		in->sockopt = inet_sockopt(a);
		s->has |= SDIAG_HAS_SOCKOPT;
	}
	/* For raw sockets this is the socket's own protocol; anywhere else
	 * (destroy broadcasts) it only named the table. */
	if ((a = tb[SD_INET_DIAG_PROTOCOL]) && s->table == SDIAG_T_RAW) {
		in->raw_protocol = mnl_attr_get_u8(a);
		s->has |= SDIAG_HAS_RAW_PROTO;
	}
}

/*
 * SCTP's address lists (net/sctp/diag.c): INET_DIAG_LOCALS, the bound
 * addresses of the endpoint or association, and INET_DIAG_PEERS, an
 * association's peer addresses (its transports), each an array of whole
 * struct sockaddr_storage (128 bytes), a sockaddr_in or sockaddr_in6 at the
 * start of each, zero-padded. The record borrows the payloads; the decoding
 * is sdiag_sctp_addrs()'s, for whoever reads them. A partial entry at the
 * end is not an entry; an entry of another family is skipped (and not
 * counted).
 */
#define SD_SCTP_ADDR_LEN 128

static bool sctp_addr(const uint8_t *p, struct sdiag_sctp_addr *x)
{
	sa_family_t fam;

	memcpy(&fam, p, sizeof(fam));
	if (fam == AF_INET) {
		struct sockaddr_in sin;

		memcpy(&sin, p, sizeof(sin));
		memcpy(x->addr, &sin.sin_addr, 4);
		x->port = ntohs(sin.sin_port);
	} else if (fam == AF_INET6) {
		struct sockaddr_in6 sin6;

		memcpy(&sin6, p, sizeof(sin6));
		memcpy(x->addr, &sin6.sin6_addr, 16);
		x->port = ntohs(sin6.sin6_port);
	} else {
		return false;
	}
	x->family = (uint8_t)fam;
	return true;
}

SD_EXPORT size_t sdiag_sctp_addrs(const struct sdiag_sock *s, enum sdiag_sctp_list which,
				  struct sdiag_sctp_addr *out, size_t max)
{
	const uint8_t *p;
	size_t len, total = 0;

	if (!s || (s->family != AF_INET && s->family != AF_INET6))
		return 0;
	if (which == SDIAG_SCTP_LOCALS && (s->has & SDIAG_HAS_SCTP_LOCALS)) {
		p = s->inet.sctp_locals;
		len = s->inet.sctp_locals_len;
	} else if (which == SDIAG_SCTP_PEERS && (s->has & SDIAG_HAS_SCTP_PEERS)) {
		p = s->inet.sctp_peers;
		len = s->inet.sctp_peers_len;
	} else {
		return 0;
	}
	if (!p)
		return 0;
	for (; len >= SD_SCTP_ADDR_LEN; len -= SD_SCTP_ADDR_LEN, p += SD_SCTP_ADDR_LEN) {
		struct sdiag_sctp_addr x = { 0 };

		if (!sctp_addr(p, &x))
			continue;
		if (total < max)
			out[total] = x;
		total++;
	}
	return total;
}

static void decode_sctp_addrs(const struct nlattr *const *tb, struct sdiag_sock *s)
{
	struct sdiag_inet *in = &s->inet;
	const struct nlattr *a;

	if (s->table != SDIAG_T_SCTP)
		return;
	a = tb[SD_INET_DIAG_LOCALS];
	if (a) {
		in->sctp_locals = mnl_attr_get_payload(a);
		in->sctp_locals_len = mnl_attr_get_payload_len(a);
		s->has |= SDIAG_HAS_SCTP_LOCALS;
	}
	a = tb[SD_INET_DIAG_PEERS];
	if (a) {
		in->sctp_peers = mnl_attr_get_payload(a);
		in->sctp_peers_len = mnl_attr_get_payload_len(a);
		s->has |= SDIAG_HAS_SCTP_PEERS;
	}
}

/*
 * sctp_diag sends endpoints (NLM_F_MULTI) with the socket's state, in the TCP
 * numbering, and each of their associations (no NLM_F_MULTI) with the
 * association's own state (enum sctp_state, net/sctp/constants.h), mapped
 * here onto the TCP numbering so that state filters mean the same thing for
 * every table: CLOSED 0 -> CLOSE, COOKIE_WAIT 1 and COOKIE_ECHOED 2 ->
 * SYN_SENT, ESTABLISHED 3 -> ESTABLISHED, SHUTDOWN_PENDING 4 and
 * SHUTDOWN_SENT 5 -> FIN_WAIT1 (we shut down), SHUTDOWN_RECEIVED 6 ->
 * CLOSE_WAIT (the peer did), SHUTDOWN_ACK_SENT 7 -> LAST_ACK.
 */
static uint8_t sctp_assoc_state(uint8_t st)
{
	static const uint8_t map[] = {
		SDIAG_SS_CLOSE,	    SDIAG_SS_SYN_SENT,	 SDIAG_SS_SYN_SENT,   SDIAG_SS_ESTABLISHED,
		SDIAG_SS_FIN_WAIT1, SDIAG_SS_FIN_WAIT1, SDIAG_SS_CLOSE_WAIT, SDIAG_SS_LAST_ACK,
	};

	return st < sizeof(map) ? map[st] : SDIAG_SS_UNKNOWN;
}

static uint8_t inet_state(const struct nlmsghdr *nlh, const struct sd_inet_msg *m, bool full,
			  const struct nlattr *const *tb, enum sdiag_table table)
{
	if (table == SDIAG_T_SCTP && !(nlh->nlmsg_flags & NLM_F_MULTI))
		return sctp_assoc_state(m->state);
	if (m->state >= SDIAG_SS_MAX)
		return SDIAG_SS_UNKNOWN;
	if (table == SDIAG_T_TCP && m->state == SDIAG_SS_CLOSE && full &&
	    (nlh->nlmsg_flags & NLM_F_MULTI) && !tb[SD_INET_DIAG_PROTOCOL])
		return SDIAG_SS_BOUND_INACTIVE;
	return m->state;
}

/* Which protocol table the message belongs to; 0 if it cannot be told. */
static uint16_t inet_protocol(const struct nlmsghdr *nlh, const struct sdiag_sock *s,
			      const struct nlattr *const *tb)
{
	if (nlh->nlmsg_type == SD_TCPDIAG_GETSOCK)
		return IPPROTO_TCP;
	if (s->protocol)
		return s->protocol;
	/* No hint: destroy broadcasts name the protocol in an attribute. */
	if (tb[SD_INET_DIAG_PROTOCOL])
		return mnl_attr_get_u8(tb[SD_INET_DIAG_PROTOCOL]);
	return 0;
}

uint64_t sd_inet_peek_inode(const struct nlmsghdr *nlh)
{
	struct sd_inet_msg m;

	if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + sizeof(m))
		return 0;
	memcpy(&m.inode, (const uint8_t *)mnl_nlmsg_get_payload(nlh) +
				 offsetof(struct sd_inet_msg, inode), sizeof(m.inode));
	return m.inode;
}

int sd_inet_decode(const struct nlmsghdr *nlh, struct sdiag_sock *s)
{
	const struct nlattr *tb[SD_INET_DIAG_MAX_KNOWN];
	struct sd_inet_msg m;
	size_t hdr = MNL_ALIGN(sizeof(m));
	uint16_t protocol;
	bool full;
	int r;

	if (nlh->nlmsg_type != SD_SOCK_DIAG_BY_FAMILY && nlh->nlmsg_type != SD_TCPDIAG_GETSOCK)
		return 0;
	if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + sizeof(m))
		return -EBADMSG;
	memcpy(&m, mnl_nlmsg_get_payload(nlh), sizeof(m));
	if (m.family != AF_INET && m.family != AF_INET6)
		return -EBADMSG;
	r = sd_attr_table((const uint8_t *)mnl_nlmsg_get_payload(nlh) + hdr,
			  mnl_nlmsg_get_payload_len(nlh) - hdr, inet_policy, SD_INET_DIAG_MAX_KNOWN,
			  tb);
	if (r < 0)
		return r;
	protocol = inet_protocol(nlh, s, tb);
	if (!protocol)
		return -EINVAL; /* the caller broke the contract: no hint */
	if (!inet_table(protocol, s))
		return 0; /* a table we do not know */

	s->family = m.family;
	sd_inet_sockid_decode(&m.id, s);
	s->rqueue = m.rqueue;
	/* UDP and raw report sk_wmem_alloc - 1: in the destroy event of a freed
	 * socket (sk_wmem_alloc already 0) that is 0 - 1. Nothing is queued. */
	s->wqueue = m.wqueue == UINT32_MAX ? 0 : m.wqueue;
	s->has |= SDIAG_HAS_QUEUES;
	s->inet.timer = m.timer;
	s->inet.retrans = m.retrans;
	s->inet.expires_ms = m.expires;
	if (s->table == SDIAG_T_TCP || s->table == SDIAG_T_MPTCP || s->table == SDIAG_T_SCTP)
		s->has |= SDIAG_HAS_TIMER;

	full = tb[SD_INET_DIAG_SHUTDOWN] || m.inode;
	if (full) {
		s->uid = m.uid;
		s->has |= SDIAG_HAS_UID;
	}
	/* 0 is "no file": a child still in the accept queue, an orphan. */
	if (m.inode) {
		s->inode = m.inode;
		s->has |= SDIAG_HAS_INODE;
	}
	s->state = inet_state(nlh, &m, full, tb, s->table);
	decode_scalars(tb, s);
	decode_info(tb, s);
	decode_sctp_addrs(tb, s);
	if (tb[SD_INET_DIAG_ULP_INFO]) {
		r = decode_ulp(tb[SD_INET_DIAG_ULP_INFO], s);
		if (r < 0)
			return r;
	}
	return 1;
}
