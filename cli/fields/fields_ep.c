// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Endpoint rows, one per family: the table's four columns (Local Address:,
 * Port, Peer Address:, Port) the way ss prints them, and the JSON "local" and
 * "peer" objects.
 */

#include "cli/fields/field.h"

/* The end of column k (1: Local Address:, 2: Port, 3: Peer Address:). */
#define MARK(c, k) ((c)->cols[k] = (uint32_t)(c)->b->len)

/* A JSON object member: "k":{ ... }. lit is a literal starting with the ','
 * that a first member goes without. Its length is passed as a constant (not
 * strlen(lit + first)): obuf_put() then copies with the moves of its size,
 * and GCC sees no path reading 16 bytes of an 11-byte literal (-Warray-bounds). */
static void open_obj_n(struct fctx *c, const char *lit, size_t len)
{
	if (c->first)
		obuf_put(c->b, lit + 1, len - 1);
	else
		obuf_put(c->b, lit, len);
	c->first = true;
}

#define open_obj(c, lit) open_obj_n(c, "" lit, sizeof(lit) - 1)

static void close_obj(struct fctx *c)
{
	obuf_putc(c->b, '}');
	c->first = false;
}

static void knum(struct fctx *c, const char *k, uint64_t v)
{
	fld_key_str(c, k);
	obuf_u64(c->b, v);
}

#define LOCAL ",\"local\":{"
#define PEER ",\"peer\":{"

/* ---- inet (and SMC's internal TCP socket) -------------------------------------------- */

/* SMC records carry the addresses of their internal TCP socket without a
 * family: treat all-zero tails as IPv4. */
static int inet_family(const struct sdiag_sock *s)
{
	static const uint8_t zero[12];

	if (s->family != AF_SMC)
		return s->family;
	return memcmp(s->inet.src + 4, zero, 12) || memcmp(s->inet.dst + 4, zero, 12) ?
		       AF_INET6 : AF_INET;
}

static void put_port(struct fctx *c, uint16_t port)
{
	const char *name = NULL;

	if (port == 0) {
		obuf_putc(c->b, '*');
		return;
	}
	if (!c->o->numeric) {
		switch (c->s->table) {
		case SDIAG_T_RAW:
			name = names_ipproto(c->names, port);
			break;
		case SDIAG_T_UDP:
		case SDIAG_T_UDPLITE:
			name = names_service(c->names, port, "udp");
			break;
		case SDIAG_T_SCTP:
			name = names_service(c->names, port, "sctp");
			break;
		default:
			name = names_service(c->names, port, "tcp");
			break;
		}
	}
	if (name)
		obuf_puts(c->b, name);
	else
		obuf_u64(c->b, port);
}

static bool is_v6_any(const uint8_t *a)
{
	static const uint8_t zero[16];

	return !memcmp(a, zero, 16);
}

/* Address part of an inet endpoint as ss prints it, followed by ':'. */
static void put_inet_addr(struct fctx *c, int family, const uint8_t *addr, unsigned ifindex)
{
	const struct sdiag_sock *s = c->s;
	struct obuf *a = c->b;
	const char *host = NULL, *ifname;

	if (obuf_reserve(a, 64) < 0)
		return;
	if (c->o->resolve)
		host = names_host(c->names, family, addr);
	if (host) {
		obuf_puts(a, host);
	} else if (family == AF_INET) {
		a->len += fmt_ipv4(a->p + a->len, addr);
	} else if (is_v6_any(addr) && !((s->has & SDIAG_HAS_V6ONLY) && s->inet.v6only)) {
		obuf_putc(a, '*');
	} else {
		a->p[a->len++] = '[';
		a->len += fmt_addr(a->p + a->len, AF_INET6, addr);
		a->p[a->len++] = ']';
	}
	if (ifindex) {
		ifname = names_ifname(c->names, ifindex);
		obuf_putc(a, '%');
		if (ifname)
			obuf_puts(a, ifname);
		else
			obuf_u64(a, ifindex);
	}
	obuf_putc(a, ':');
}

static void inet_cols(struct fctx *c, const struct field *f, uint64_t v)
{
	const struct sdiag_sock *s = c->s;
	int fam = inet_family(s);

	(void)f;
	(void)v;
	put_inet_addr(c, fam, s->inet.src, s->inet.ifindex);
	MARK(c, 1);
	put_port(c, s->inet.sport);
	MARK(c, 2);
	put_inet_addr(c, fam, s->inet.dst, 0);
	MARK(c, 3);
	put_port(c, s->inet.dport);
}

static void inet_ep(struct fctx *c, bool peer, int family, const uint8_t *addr,
		    uint16_t port)
{
	char buf[48];
	size_t n;

	if (peer)
		open_obj(c, PEER);
	else
		open_obj(c, LOCAL);
	n = fmt_addr(buf, family, addr);
	obuf_puts(c->b, "\"addr\":\"");
	obuf_put(c->b, buf, n);
	obuf_puts(c->b, "\",\"port\":");
	obuf_u64(c->b, port);
	close_obj(c);
}

static void inet_json(struct fctx *c, const struct field *f, uint64_t v)
{
	int fam = inet_family(c->s);

	(void)f;
	(void)v;
	inet_ep(c, false, fam, c->s->inet.src, c->s->inet.sport);
	inet_ep(c, true, fam, c->s->inet.dst, c->s->inet.dport);
}

/* ---- unix ---------------------------------------------------------------------------- */

static void unix_name_text(struct obuf *a, const struct sdiag_sock *s)
{
	const uint8_t *p = s->un.name;
	size_t n = s->un.name_len;

	if (!(s->has & SDIAG_HAS_NAME) || !p || !n) {
		obuf_putc(a, '*');
		return;
	}
	if (p[0] == '\0') {
		/* Abstract: every NUL shows as '@', as ss does. */
		size_t i = 0;

		while (i < n) {
			size_t j = i;

			while (j < n && p[j] != '\0')
				j++;
			obuf_text_bytes(a, p + i, j - i);
			if (j < n)
				obuf_putc(a, '@');
			i = j + 1;
		}
		return;
	}
	obuf_text_bytes(a, p, strnlen((const char *)p, n));
}

static void unix_cols(struct fctx *c, const struct field *f, uint64_t v)
{
	struct obuf *a = c->b;

	(void)f;
	(void)v;
	unix_name_text(a, c->s);
	obuf_putc(a, ' ');
	MARK(c, 1);
	obuf_u64(a, c->s->inode);
	MARK(c, 2);
	obuf_puts(a, "* ");
	MARK(c, 3);
	obuf_u64(a, c->s->un.peer);
}

static void unix_json(struct fctx *c, const struct field *f, uint64_t v)
{
	const struct sdiag_sock *s = c->s;
	const uint8_t *p = s->un.name;
	size_t n = s->un.name_len;
	bool abstract;

	(void)f;
	(void)v;
	open_obj(c, LOCAL);
	if ((s->has & SDIAG_HAS_NAME) && p && n) {
		abstract = p[0] == '\0';
		if (abstract) {
			p++;
			n--;
		} else {
			/* A filesystem name ends at its first NUL. */
			n = strnlen((const char *)p, n);
		}
		fld_key_str(c, "path");
		if (!obuf_json_str(c->b, p, n)) {
			fld_key_str(c, "path_hex");
			obuf_putc(c->b, '"');
			obuf_hexbytes(c->b, p, n);
			obuf_putc(c->b, '"');
		}
		if (abstract)
			obuf_puts(c->b, ",\"abstract\":true");
	}
	close_obj(c);
	open_obj(c, PEER);
	if (s->has & SDIAG_HAS_PEER)
		knum(c, "inode", s->un.peer);
	close_obj(c);
}

/* ---- netlink ----------------------------------------------------------------------------- */

static void netlink_cols(struct fctx *c, const struct field *f, uint64_t v)
{
	const struct sdiag_sock *s = c->s;
	struct obuf *a = c->b;
	const char *str;
	char buf[64];

	(void)f;
	(void)v;
	str = c->o->numeric ? NULL : names_nl_proto_ss(s->protocol);
	if (str)
		obuf_puts(a, str);
	else
		obuf_u64(a, s->protocol);
	obuf_putc(a, ':');
	MARK(c, 1);
	str = c->o->numeric ? NULL : names_nl_owner(c->names, (int32_t)s->nl.portid, buf);
	if (str)
		obuf_puts(a, str);
	else
		obuf_i64(a, (int32_t)s->nl.portid);
	MARK(c, 2);
	if (s->state == SDIAG_SS_ESTABLISHED) {
		obuf_u64(a, s->nl.dst_group);
		obuf_putc(a, ':');
		MARK(c, 3);
		obuf_i64(a, (int32_t)s->nl.dst_portid);
	} else {
		obuf_putc(a, '*');
		MARK(c, 3);
	}
}

static void netlink_json(struct fctx *c, const struct field *f, uint64_t v)
{
	(void)f;
	(void)v;
	open_obj(c, LOCAL);
	knum(c, "portid", c->s->nl.portid);
	close_obj(c);
	open_obj(c, PEER);
	knum(c, "portid", c->s->nl.dst_portid);
	knum(c, "group", c->s->nl.dst_group);
	close_obj(c);
}

/* ---- packet, xdp: an interface --------------------------------------------------------- */

static void put_ifname(struct fctx *c, unsigned ifindex)
{
	const char *str = names_ifname(c->names, ifindex);

	if (str)
		obuf_puts(c->b, str);
	else
		obuf_u64(c->b, ifindex);
}

static void json_ifindex(struct fctx *c, unsigned ifindex)
{
	const char *str;

	knum(c, "ifindex", ifindex);
	if (ifindex && (str = names_ifname(c->names, ifindex))) {
		fld_key_str(c, "ifname");
		obuf_json_cstr(c->b, str);
	}
}

static void packet_cols(struct fctx *c, const struct field *f, uint64_t v)
{
	const struct sdiag_sock *s = c->s;
	struct obuf *a = c->b;
	const char *str;

	(void)f;
	(void)v;
	/* ss: a name unless -n, else the number in brackets, in decimal. */
	str = s->pkt.ethertype == 3 ? "*" : c->o->numeric ? NULL : names_ethertype(s->pkt.ethertype);
	if (str)
		obuf_puts(a, str);
	else
		obuf_printf(a, "[%u]", s->pkt.ethertype);
	obuf_putc(a, ':');
	MARK(c, 1);
	if (s->pkt.info.index)
		put_ifname(c, s->pkt.info.index);
	else
		obuf_putc(a, '*');
	MARK(c, 2);
	obuf_putc(a, '*');
	MARK(c, 3);
}

static void packet_json(struct fctx *c, const struct field *f, uint64_t v)
{
	(void)f;
	(void)v;
	open_obj(c, LOCAL);
	knum(c, "protocol", c->s->pkt.ethertype);
	if (c->s->has & SDIAG_HAS_PKT_INFO)
		json_ifindex(c, c->s->pkt.info.index);
	close_obj(c);
	open_obj(c, PEER);
	close_obj(c);
}

static void xdp_cols(struct fctx *c, const struct field *f, uint64_t v)
{
	const struct sdiag_sock *s = c->s;
	struct obuf *a = c->b;

	(void)f;
	(void)v;
	if (s->xdp.ifindex) {
		put_ifname(c, s->xdp.ifindex);
		obuf_putc(a, ':');
		MARK(c, 1);
		obuf_putc(a, 'q');
		obuf_u64(a, s->xdp.queue_id);
	} else {
		obuf_putc(a, '*');
		MARK(c, 1);
	}
	MARK(c, 2);
	obuf_putc(a, '*');
	MARK(c, 3);
}

static void xdp_json(struct fctx *c, const struct field *f, uint64_t v)
{
	(void)f;
	(void)v;
	open_obj(c, LOCAL);
	if (c->s->has & SDIAG_HAS_XDP_INFO) {
		json_ifindex(c, c->s->xdp.ifindex);
		knum(c, "queue_id", c->s->xdp.queue_id);
	}
	close_obj(c);
	open_obj(c, PEER);
	close_obj(c);
}

/* ---- vsock, tipc ----------------------------------------------------------------------------- */

static void put_cid(struct obuf *a, uint32_t v)
{
	if (v == UINT32_MAX)
		obuf_putc(a, '*');
	else
		obuf_u64(a, v);
}

static void vsock_cols(struct fctx *c, const struct field *f, uint64_t v)
{
	const struct sdiag_vsock *vs = &c->s->vsock;
	struct obuf *a = c->b;

	(void)f;
	(void)v;
	put_cid(a, vs->src_cid);
	obuf_putc(a, ':');
	MARK(c, 1);
	put_cid(a, vs->src_port);
	MARK(c, 2);
	put_cid(a, vs->dst_cid);
	obuf_putc(a, ':');
	MARK(c, 3);
	put_cid(a, vs->dst_port);
}

static void vsock_json(struct fctx *c, const struct field *f, uint64_t v)
{
	const struct sdiag_vsock *vs = &c->s->vsock;

	(void)f;
	(void)v;
	open_obj(c, LOCAL);
	knum(c, "cid", vs->src_cid);
	knum(c, "port", vs->src_port);
	close_obj(c);
	open_obj(c, PEER);
	knum(c, "cid", vs->dst_cid);
	knum(c, "port", vs->dst_port);
	close_obj(c);
}

static void tipc_cols(struct fctx *c, const struct field *f, uint64_t v)
{
	const struct sdiag_tipc *t = &c->s->tipc;
	struct obuf *a = c->b;

	(void)f;
	(void)v;
	obuf_u64(a, t->addr);
	obuf_putc(a, ':');
	MARK(c, 1);
	obuf_u64(a, t->ref);
	MARK(c, 2);
	if (t->has_conn) {
		obuf_u64(a, t->conn_node);
		obuf_putc(a, ':');
		MARK(c, 3);
		obuf_u64(a, t->conn_port);
	} else {
		obuf_putc(a, '-');
		MARK(c, 3);
	}
}

static void tipc_json(struct fctx *c, const struct field *f, uint64_t v)
{
	const struct sdiag_tipc *t = &c->s->tipc;

	(void)f;
	(void)v;
	open_obj(c, LOCAL);
	knum(c, "node", t->addr);
	knum(c, "ref", t->ref);
	close_obj(c);
	open_obj(c, PEER);
	if (t->has_conn) {
		knum(c, "node", t->conn_node);
		knum(c, "port", t->conn_port);
	}
	close_obj(c);
}

#define EP(f, tfn, jfn) { K("local"), .fams = (f), .flags = FL_CELL, .col = C_LADDR, \
			  .text = (tfn), .json = (jfn) }

const struct field fields_ep[] = {
	EP(F_INET | F_SMC, inet_cols, inet_json),
	EP(F_UNIX, unix_cols, unix_json),
	EP(F_NETLINK, netlink_cols, netlink_json),
	EP(F_PACKET, packet_cols, packet_json),
	EP(F_VSOCK, vsock_cols, vsock_json),
	EP(F_XDP, xdp_cols, xdp_json),
	EP(F_TIPC, tipc_cols, tipc_json),
};
const size_t fields_ep_n = sizeof(fields_ep) / sizeof(fields_ep[0]);
