// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * JSON objects, one per socket; the schema is docs/json-schema.md. Fields
 * the kernel did not send ("has" bit clear) are left out, never written as 0.
 * Strings are always valid UTF-8 JSON; names that are not clean text also
 * get an exact hex copy ("path_hex").
 */
#include <stddef.h>
#include <time.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "out_internal.h"

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef AF_SMC
#define AF_SMC 43
#endif

/* A JSON object being written: the buffer and whether a member came yet. */
struct jw {
	struct obuf *b;
	bool first;
};

/* A member name given at run time (tcp_info's table). */
static void key(struct jw *w, const char *k)
{
	struct obuf *b = w->b;

	if (!w->first)
		obuf_putc(b, ',');
	w->first = false;
	obuf_putc(b, '"');
	obuf_puts(b, k);
	obuf_puts(b, "\":");
}

/* A literal member name, with its comma and quotes, copied in one go. */
static inline void key_lit(struct jw *w, const char *lit, size_t n)
{
	obuf_put(w->b, lit + w->first, n - w->first);
	w->first = false;
}

#define KEY(w, k) key_lit((w), ",\"" k "\":", sizeof(",\"" k "\":") - 1)

static inline void knum_lit(struct jw *w, const char *lit, size_t n, uint64_t v)
{
	key_lit(w, lit, n);
	obuf_u64(w->b, v);
}

#define KNUM(w, k, v) knum_lit((w), ",\"" k "\":", sizeof(",\"" k "\":") - 1, (v))

/* A string that needs no escaping (our own ASCII names). */
static inline void raw_str(struct obuf *b, const char *v)
{
	obuf_putc(b, '"');
	obuf_puts(b, v);
	obuf_putc(b, '"');
}

#define KRAW(w, k, v) (KEY(w, k), raw_str((w)->b, (v)))
#define KSTR(w, k, v) (KEY(w, k), obuf_json_cstr((w)->b, (v)))
#define KBOOL(w, k, v) (KEY(w, k), obuf_puts((w)->b, (v) ? "true" : "false"))

static inline struct jw open_lit(struct jw *w, const char *lit, size_t n)
{
	key_lit(w, lit, n);
	obuf_putc(w->b, '{');
	return (struct jw){ w->b, true };
}

#define OPEN(w, k) open_lit((w), ",\"" k "\":", sizeof(",\"" k "\":") - 1)

static struct jw open_obj(struct jw *w, const char *k)
{
	key(w, k);
	obuf_putc(w->b, '{');
	return (struct jw){ w->b, true };
}

static void knum(struct jw *w, const char *k, uint64_t v)
{
	key(w, k);
	obuf_u64(w->b, v);
}

static void close_obj(struct jw *w)
{
	obuf_putc(w->b, '}');
}

const char *out_family_name(const struct sdiag_sock *s)
{
	/* SMC records carry their TCP socket's family. */
	if (s->table == SDIAG_T_SMC)
		return "smc";
	switch (s->family) {
	case AF_INET: return "inet";
	case AF_INET6: return "inet6";
	case AF_UNIX: return "unix";
	case AF_NETLINK: return "netlink";
	case AF_PACKET: return "packet";
	case AF_VSOCK: return "vsock";
	case AF_XDP: return "xdp";
	case AF_TIPC: return "tipc";
	case AF_SMC: return "smc";
	default: return "unknown";
	}
}

/* ---- endpoints ------------------------------------------------------------------ */

static void inet_ep(struct jw *w, const char *k, int family, const uint8_t *addr, uint16_t port)
{
	struct jw e = open_obj(w, k);
	char buf[48];
	size_t n;

	KEY(&e, "addr");
	n = fmt_addr(buf, family, addr);
	obuf_putc(e.b, '"');
	obuf_put(e.b, buf, n);
	obuf_putc(e.b, '"');
	KNUM(&e, "port", port);
	close_obj(&e);
}

static void unix_local(struct jw *w, const struct sdiag_sock *s)
{
	struct jw e = OPEN(w, "local");
	const uint8_t *p = s->un.name;
	size_t n = s->un.name_len;
	bool abstract;

	if ((s->has & SDIAG_HAS_NAME) && p && n) {
		abstract = p[0] == '\0';
		if (abstract) {
			p++;
			n--;
		} else {
			/* A filesystem name ends at its first NUL. */
			n = strnlen((const char *)p, n);
		}
		KEY(&e, "path");
		if (!obuf_json_str(e.b, p, n)) {
			KEY(&e, "path_hex");
			obuf_putc(e.b, '"');
			obuf_hexbytes(e.b, p, n);
			obuf_putc(e.b, '"');
		}
		if (abstract)
			KBOOL(&e, "abstract", true);
	}
	close_obj(&e);
}

static void endpoints(struct jw *w, const struct out_opts *o, struct names *names,
		      const struct sdiag_sock *s)
{
	struct jw e;
	const char *str;
	int fam;

	switch (s->family) {
	case AF_INET:
	case AF_INET6:
	case AF_SMC:
		fam = s->family;
		if (fam == AF_SMC) {
			static const uint8_t zero[12];

			fam = memcmp(s->inet.src + 4, zero, 12) || memcmp(s->inet.dst + 4, zero, 12) ?
				      AF_INET6 : AF_INET;
		}
		inet_ep(w, "local", fam, s->inet.src, s->inet.sport);
		inet_ep(w, "peer", fam, s->inet.dst, s->inet.dport);
		break;
	case AF_UNIX:
		unix_local(w, s);
		e = OPEN(w, "peer");
		if (s->has & SDIAG_HAS_PEER)
			KNUM(&e, "inode", s->un.peer);
		close_obj(&e);
		break;
	case AF_NETLINK:
		e = OPEN(w, "local");
		KNUM(&e, "portid", s->nl.portid);
		close_obj(&e);
		e = OPEN(w, "peer");
		KNUM(&e, "portid", s->nl.dst_portid);
		KNUM(&e, "group", s->nl.dst_group);
		close_obj(&e);
		break;
	case AF_PACKET:
		e = OPEN(w, "local");
		KNUM(&e, "protocol", s->pkt.ethertype);
		if (s->has & SDIAG_HAS_PKT_INFO) {
			KNUM(&e, "ifindex", s->pkt.info.index);
			if (s->pkt.info.index && (str = names_ifname(names, s->pkt.info.index)))
				KSTR(&e, "ifname", str);
		}
		close_obj(&e);
		e = OPEN(w, "peer");
		close_obj(&e);
		break;
	case AF_VSOCK:
		e = OPEN(w, "local");
		KNUM(&e, "cid", s->vsock.src_cid);
		KNUM(&e, "port", s->vsock.src_port);
		close_obj(&e);
		e = OPEN(w, "peer");
		KNUM(&e, "cid", s->vsock.dst_cid);
		KNUM(&e, "port", s->vsock.dst_port);
		close_obj(&e);
		break;
	case AF_XDP:
		e = OPEN(w, "local");
		if (s->has & SDIAG_HAS_XDP_INFO) {
			KNUM(&e, "ifindex", s->xdp.ifindex);
			if (s->xdp.ifindex && (str = names_ifname(names, s->xdp.ifindex)))
				KSTR(&e, "ifname", str);
			KNUM(&e, "queue_id", s->xdp.queue_id);
		}
		close_obj(&e);
		e = OPEN(w, "peer");
		close_obj(&e);
		break;
	case AF_TIPC:
		e = OPEN(w, "local");
		KNUM(&e, "node", s->tipc.addr);
		KNUM(&e, "ref", s->tipc.ref);
		close_obj(&e);
		e = OPEN(w, "peer");
		if (s->tipc.has_conn) {
			KNUM(&e, "node", s->tipc.conn_node);
			KNUM(&e, "port", s->tipc.conn_port);
		}
		close_obj(&e);
		break;
	default:
		break;
	}
	(void)o;
}

/* ---- detail blocks ------------------------------------------------------------- */

#define TI(f) { #f, offsetof(struct sdiag_tcp_info, tcpi_##f), \
		sizeof(((struct sdiag_tcp_info *)0)->tcpi_##f) }

static const struct field {
	const char *name;
	size_t off;
	size_t size;
} tcp_fields[] = {
	TI(state), TI(ca_state), TI(retransmits), TI(probes), TI(backoff), TI(options),
	TI(rto), TI(ato), TI(snd_mss), TI(rcv_mss), TI(unacked), TI(sacked), TI(lost),
	TI(retrans), TI(fackets), TI(last_data_sent), TI(last_ack_sent), TI(last_data_recv),
	TI(last_ack_recv), TI(pmtu), TI(rcv_ssthresh), TI(rtt), TI(rttvar), TI(snd_ssthresh),
	TI(snd_cwnd), TI(advmss), TI(reordering), TI(rcv_rtt), TI(rcv_space), TI(total_retrans),
	TI(pacing_rate), TI(max_pacing_rate), TI(bytes_acked), TI(bytes_received), TI(segs_out),
	TI(segs_in), TI(notsent_bytes), TI(min_rtt), TI(data_segs_in), TI(data_segs_out),
	TI(delivery_rate), TI(busy_time), TI(rwnd_limited), TI(sndbuf_limited), TI(delivered),
	TI(delivered_ce), TI(bytes_sent), TI(bytes_retrans), TI(dsack_dups), TI(reord_seen),
	TI(rcv_ooopack), TI(snd_wnd), TI(rcv_wnd), TI(rehash), TI(total_rto),
	TI(total_rto_recoveries), TI(total_rto_time), TI(received_ce), TI(delivered_e1_bytes),
	TI(delivered_e0_bytes), TI(delivered_ce_bytes), TI(received_e1_bytes),
	TI(received_e0_bytes), TI(received_ce_bytes), TI(accecn_fail_mode), TI(accecn_opt_seen),
};

#define MI(f) { #f, offsetof(struct sdiag_mptcp_info, mptcpi_##f), \
		sizeof(((struct sdiag_mptcp_info *)0)->mptcpi_##f) }

static const struct field mptcp_fields[] = {
	MI(subflows), MI(add_addr_signal), MI(add_addr_accepted), MI(subflows_max),
	MI(add_addr_signal_max), MI(add_addr_accepted_max), MI(flags), MI(token), MI(write_seq),
	MI(snd_una), MI(rcv_nxt), MI(local_addr_used), MI(local_addr_max), MI(csum_enabled),
	MI(retransmits), MI(bytes_retrans), MI(bytes_sent), MI(bytes_received), MI(bytes_acked),
	MI(subflows_total), MI(endp_laminar_max), MI(last_data_sent), MI(last_data_recv),
	MI(last_ack_recv),
};

static void fields(struct jw *w, const void *base, const struct field *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const uint8_t *p = (const uint8_t *)base + f[i].off;
		uint64_t v = 0;

		switch (f[i].size) {
		case 1: v = *p; break;
		case 2: { uint16_t x; memcpy(&x, p, 2); v = x; break; }
		case 4: { uint32_t x; memcpy(&x, p, 4); v = x; break; }
		case 8: memcpy(&v, p, 8); break;
		}
		knum(w, f[i].name, v);
	}
}

static void tcp_info_json(struct jw *w, const struct sdiag_sock *s)
{
	const struct sdiag_tcp_info *ti = &s->inet.tcp_info;
	struct jw t = OPEN(w, "tcp_info");

	fields(&t, ti, tcp_fields, sizeof(tcp_fields) / sizeof(tcp_fields[0]));
	KNUM(&t, "snd_wscale", ti->tcpi_snd_wscale);
	KNUM(&t, "rcv_wscale", ti->tcpi_rcv_wscale);
	KBOOL(&t, "delivery_rate_app_limited", ti->tcpi_delivery_rate_app_limited);
	KNUM(&t, "fastopen_client_fail", ti->tcpi_fastopen_client_fail);
	close_obj(&t);
}

static void cong_json(struct jw *w, const struct sdiag_sock *s)
{
	const struct sdiag_inet *in = &s->inet;
	struct jw c;

	if ((s->has & SDIAG_HAS_CONG) && in->cong[0]) {
		KEY(w, "cong");
		obuf_json_str(w->b, in->cong, strnlen(in->cong, sizeof(in->cong)));
	}
	if (s->has & SDIAG_HAS_VEGAS) {
		c = OPEN(w, "vegas");
		KNUM(&c, "enabled", in->vegas.enabled);
		KNUM(&c, "rttcnt", in->vegas.rttcnt);
		KNUM(&c, "rtt", in->vegas.rtt);
		KNUM(&c, "minrtt", in->vegas.minrtt);
		close_obj(&c);
	}
	if (s->has & SDIAG_HAS_DCTCP) {
		c = OPEN(w, "dctcp");
		KNUM(&c, "enabled", in->dctcp.enabled);
		KNUM(&c, "ce_state", in->dctcp.ce_state);
		KNUM(&c, "alpha", in->dctcp.alpha);
		KNUM(&c, "ab_ecn", in->dctcp.ab_ecn);
		KNUM(&c, "ab_tot", in->dctcp.ab_tot);
		close_obj(&c);
	}
	if (s->has & SDIAG_HAS_BBR) {
		c = OPEN(w, "bbr");
		KNUM(&c, "bw", (uint64_t)in->bbr.bw_hi << 32 | in->bbr.bw_lo);
		KNUM(&c, "min_rtt", in->bbr.min_rtt);
		KNUM(&c, "pacing_gain", in->bbr.pacing_gain);
		KNUM(&c, "cwnd_gain", in->bbr.cwnd_gain);
		close_obj(&c);
	}
	if ((s->has & SDIAG_HAS_ULP) && in->ulp[0]) {
		KEY(w, "ulp");
		obuf_json_str(w->b, in->ulp, strnlen(in->ulp, sizeof(in->ulp)));
	}
}

static void skmem_json(struct jw *w, const struct sdiag_sock *s)
{
	static const char *const names[SDIAG_SKMEM_VARS] = {
		"rmem_alloc", "rcvbuf", "wmem_alloc", "sndbuf", "fwd_alloc",
		"wmem_queued", "optmem", "backlog", "drops",
	};
	struct jw m;

	if (s->has & SDIAG_HAS_SKMEMINFO) {
		m = OPEN(w, "skmem");
		for (int i = 0; i < SDIAG_SKMEM_VARS; i++)
			knum(&m, names[i], s->skmem[i]);
		close_obj(&m);
	}
	if ((s->family == AF_INET || s->family == AF_INET6) && (s->has & SDIAG_HAS_MEMINFO)) {
		m = OPEN(w, "meminfo");
		KNUM(&m, "rmem", s->inet.meminfo.rmem);
		KNUM(&m, "wmem", s->inet.meminfo.wmem);
		KNUM(&m, "fmem", s->inet.meminfo.fmem);
		KNUM(&m, "tmem", s->inet.meminfo.tmem);
		close_obj(&m);
	}
}

static void sockopt_json(struct jw *w, uint16_t v)
{
	static const char *const names[] = { "recverr", "is_icsk", "freebind", "hdrincl",
					     "mc_loop", "transparent", "mc_all", "nodefrag",
					     "bind_address_no_port", "recverr_rfc4884",
					     "defer_connect" };
	bool first = true;

	KEY(w, "sockopt");
	obuf_putc(w->b, '[');
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(v & (1u << i)))
			continue;
		if (!first)
			obuf_putc(w->b, ',');
		first = false;
		obuf_json_cstr(w->b, names[i]);
	}
	obuf_putc(w->b, ']');
}

static void inet_json(struct jw *w, const struct out_opts *o, struct names *names,
		      const struct sdiag_sock *s)
{
	const struct sdiag_inet *in = &s->inet;
	const char *str;
	struct jw t;

	if (in->ifindex) {
		KNUM(w, "ifindex", in->ifindex);
		if ((str = names_ifname(names, in->ifindex)))
			KSTR(w, "ifname", str);
	}
	if (s->has & SDIAG_HAS_RAW_PROTO)
		KNUM(w, "raw_protocol", in->raw_protocol);
	if (s->has & SDIAG_HAS_V6ONLY)
		KBOOL(w, "v6only", in->v6only);
	if ((o->timers || o->ext) && (s->has & SDIAG_HAS_TIMER)) {
		t = OPEN(w, "timer");
		KRAW(&t, "name", out_timer_name(in->timer));
		KNUM(&t, "expires_ms", in->expires_ms);
		KNUM(&t, "retrans", in->retrans);
		close_obj(&t);
	}
	if (o->ext) {
		if (s->has & SDIAG_HAS_MARK)
			KNUM(w, "mark", in->mark);
		if (s->has & SDIAG_HAS_CGROUP)
			KNUM(w, "cgroup_id", in->cgroup_id);
	}
	if ((o->ext || o->sockopt) && (s->has & SDIAG_HAS_SOCKOPT))
		sockopt_json(w, in->sockopt);
	if (o->tos) {
		if (s->has & SDIAG_HAS_TOS)
			KNUM(w, "tos", in->tos);
		if (s->has & SDIAG_HAS_TCLASS)
			KNUM(w, "tclass", in->tclass);
		if (s->has & SDIAG_HAS_CLASS_ID)
			KNUM(w, "class_id", in->class_id);
	}
	if (o->info) {
		if (s->has & SDIAG_HAS_TCP_INFO)
			tcp_info_json(w, s);
		if (s->has & SDIAG_HAS_MPTCP_INFO) {
			t = OPEN(w, "mptcp_info");
			fields(&t, &in->mptcp_info, mptcp_fields,
			       sizeof(mptcp_fields) / sizeof(mptcp_fields[0]));
			close_obj(&t);
		}
		cong_json(w, s);
	}
}

static void netlink_json(struct jw *w, const struct out_opts *o, const struct sdiag_sock *s)
{
	static const char *const flag_names[] = { "cb_running", "pktinfo", "broadcast_error",
						  "no_enobufs", "listen_all_nsid", "cap_ack" };
	bool first = true;

	KNUM(w, "protocol", s->protocol);
	if (s->has & SDIAG_HAS_GROUPS) {
		KEY(w, "groups");
		obuf_putc(w->b, '[');
		for (size_t i = 0; i < s->nl.n_group_words; i++)
			for (unsigned bit = 0; bit < 32; bit++) {
				if (!(s->nl.groups[i] & (UINT32_C(1) << bit)))
					continue;
				if (!first)
					obuf_putc(w->b, ',');
				first = false;
				obuf_u64(w->b, i * 32 + bit + 1);
			}
		obuf_putc(w->b, ']');
		if (o->ext && s->protocol == 0) {
			first = true;
			KEY(w, "group_names");
			obuf_putc(w->b, '[');
			for (size_t i = 0; i < s->nl.n_group_words; i++)
				for (unsigned bit = 0; bit < 32; bit++) {
					unsigned g = (unsigned)i * 32 + bit + 1;
					const char *n = sdiag_rtnl_group_name(g);

					if (!(s->nl.groups[i] & (UINT32_C(1) << bit)) || !n)
						continue;
					if (!first)
						obuf_putc(w->b, ',');
					first = false;
					obuf_json_cstr(w->b, n);
				}
			obuf_putc(w->b, ']');
		}
	}
	if (o->ext && (s->has & SDIAG_HAS_NL_FLAGS)) {
		first = true;
		KEY(w, "flags");
		obuf_putc(w->b, '[');
		for (unsigned i = 0; i < 6; i++) {
			if (!(s->nl.flags & (1u << i)))
				continue;
			if (!first)
				obuf_putc(w->b, ',');
			first = false;
			obuf_json_cstr(w->b, flag_names[i]);
		}
		obuf_putc(w->b, ']');
	}
}

static void ring_json(struct jw *w, const char *k, const struct sdiag_packet_ring *r)
{
	struct jw e = open_obj(w, k);

	KNUM(&e, "block_size", r->block_size);
	KNUM(&e, "block_nr", r->block_nr);
	KNUM(&e, "frame_size", r->frame_size);
	KNUM(&e, "frame_nr", r->frame_nr);
	KNUM(&e, "retire_tmo", r->retire_tmo);
	KNUM(&e, "sizeof_priv", r->sizeof_priv);
	KNUM(&e, "features", r->features);
	close_obj(&e);
}

static void packet_json(struct jw *w, const struct out_opts *o, const struct sdiag_sock *s)
{
	const struct sdiag_packet *p = &s->pkt;
	struct jw k, e;

	if (!o->ext)
		return;
	k = OPEN(w, "packet");
	if (s->has & SDIAG_HAS_PKT_INFO) {
		KNUM(&k, "version", p->info.version);
		KNUM(&k, "reserve", p->info.reserve);
		KNUM(&k, "copy_thresh", p->info.copy_thresh);
		KNUM(&k, "tstamp", p->info.tstamp);
		KNUM(&k, "flags", p->info.flags);
	}
	if (s->has & SDIAG_HAS_RX_RING)
		ring_json(&k, "rx_ring", &p->rx_ring);
	if (s->has & SDIAG_HAS_TX_RING)
		ring_json(&k, "tx_ring", &p->tx_ring);
	if (s->has & SDIAG_HAS_FANOUT) {
		e = OPEN(&k, "fanout");
		KNUM(&e, "id", p->fanout & 0xffff);
		KNUM(&e, "type", p->fanout >> 16);
		close_obj(&e);
	}
	if (s->has & SDIAG_HAS_MCLIST) {
		KEY(&k, "mclist");
		obuf_putc(k.b, '[');
		for (size_t i = 0; i < p->n_mclist; i++) {
			const struct sdiag_packet_mclist *m = &p->mclist[i];
			struct jw x = { k.b, true };

			if (i)
				obuf_putc(k.b, ',');
			obuf_putc(k.b, '{');
			KNUM(&x, "ifindex", m->index);
			KNUM(&x, "count", m->count);
			KNUM(&x, "type", m->type);
			KEY(&x, "addr");
			obuf_putc(k.b, '"');
			obuf_hexbytes(k.b, m->addr,
				      m->alen < sizeof(m->addr) ? m->alen : sizeof(m->addr));
			obuf_putc(k.b, '"');
			obuf_putc(k.b, '}');
		}
		obuf_putc(k.b, ']');
	}
	if (s->has & SDIAG_HAS_FILTER)
		KNUM(&k, "filter_len", p->n_filter);
	close_obj(&k);
}

static void xdp_json(struct jw *w, const struct out_opts *o, const struct sdiag_sock *s)
{
	const struct sdiag_xdp *x = &s->xdp;
	struct jw k;

	if (!o->ext)
		return;
	k = OPEN(w, "xdp");
	if (s->has & SDIAG_HAS_XDP_RINGS) {
		KNUM(&k, "rx_entries", x->rx_entries);
		KNUM(&k, "tx_entries", x->tx_entries);
		KNUM(&k, "fill_entries", x->fill_entries);
		KNUM(&k, "completion_entries", x->completion_entries);
	}
	if (s->has & SDIAG_HAS_XDP_UMEM) {
		KNUM(&k, "umem_id", x->umem_id);
		KNUM(&k, "umem_size", x->umem_size);
		KNUM(&k, "umem_num_pages", x->umem_num_pages);
		KNUM(&k, "umem_chunk_size", x->umem_chunk_size);
		KNUM(&k, "umem_headroom", x->umem_headroom);
		KNUM(&k, "umem_ifindex", x->umem_ifindex);
		KNUM(&k, "umem_queue_id", x->umem_queue_id);
		KNUM(&k, "umem_flags", x->umem_flags);
		KNUM(&k, "umem_refs", x->umem_refs);
	}
	if (s->has & SDIAG_HAS_XDP_STATS) {
		KNUM(&k, "rx_dropped", x->rx_dropped);
		KNUM(&k, "rx_invalid", x->rx_invalid);
		KNUM(&k, "rx_full", x->rx_full);
		KNUM(&k, "fill_empty", x->fill_empty);
		KNUM(&k, "tx_invalid", x->tx_invalid);
		KNUM(&k, "tx_empty", x->tx_empty);
	}
	close_obj(&k);
}

static void unix_json(struct jw *w, const struct out_opts *o, const struct sdiag_sock *s)
{
	struct jw v;

	if (!o->ext)
		return;
	if (s->has & SDIAG_HAS_VFS) {
		v = OPEN(w, "vfs");
		KNUM(&v, "ino", s->un.vfs_ino);
		KNUM(&v, "dev_major", s->un.vfs_dev >> 20);
		KNUM(&v, "dev_minor", s->un.vfs_dev & 0xfffff);
		close_obj(&v);
	}
	if (s->has & SDIAG_HAS_ICONS) {
		KEY(w, "pending");
		obuf_putc(w->b, '[');
		for (size_t i = 0; i < s->un.n_icons; i++) {
			if (i)
				obuf_putc(w->b, ',');
			obuf_u64(w->b, s->un.icons[i]);
		}
		obuf_putc(w->b, ']');
	}
}

static void time_json(struct jw *w, const struct timespec *ts)
{
	struct tm tm;
	char buf[40];
	size_t n;

	if (!gmtime_r(&ts->tv_sec, &tm))
		return;
	n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	KEY(w, "time");
	obuf_putc(w->b, '"');
	obuf_put(w->b, buf, n);
	obuf_printf(w->b, ".%06ldZ\"", ts->tv_nsec / 1000);
}

static void procs_json(struct jw *w, const struct sdiag_sock *s)
{
	KEY(w, "processes");
	obuf_putc(w->b, '[');
	for (size_t i = 0; i < s->n_procs; i++) {
		const struct sdiag_proc *p = &s->procs[i];
		struct jw e = { w->b, true };

		if (i)
			obuf_putc(w->b, ',');
		obuf_putc(w->b, '{');
		KEY(&e, "comm");
		obuf_json_str(w->b, p->comm, strnlen(p->comm, sizeof(p->comm)));
		KNUM(&e, "pid", (uint32_t)p->pid);
		KNUM(&e, "fd", (uint32_t)p->fd);
		obuf_putc(w->b, '}');
	}
	obuf_putc(w->b, ']');
}

void json_sock(struct obuf *b, const struct out_opts *o, struct names *names,
	       const struct sdiag_sock *s, const struct out_extra *x)
{
	struct jw w = { b, true };
	const char *str;
	char num[24];

	obuf_putc(b, '{');
	if (x && x->time)
		time_json(&w, x->time);
	if (x && x->netns)
		KSTR(&w, "netns", x->netns);
	if (x && x->netns_inode)
		KNUM(&w, "netns_inode", x->netns_inode);
	if (x && x->result)
		KSTR(&w, "result", x->result);
	if (x && x->result_detail)
		KSTR(&w, "result_detail", x->result_detail);
	KRAW(&w, "family", out_family_name(s));
	KRAW(&w, "netid", sdiag_table_netid(s->table) ? sdiag_table_netid(s->table) : "?");
	str = s->family == AF_NETLINK ? sdiag_netlink_proto_name(s->protocol)
				      : sdiag_table_proto(s->table);
	if (!str) {
		num[fmt_u64(num, s->protocol)] = '\0';
		str = num;
	}
	KRAW(&w, "proto", str);
	KRAW(&w, "state", sdiag_state_name(s->state));
	endpoints(&w, o, names, s);
	if (s->has & SDIAG_HAS_QUEUES) {
		KNUM(&w, "recv_q", s->rqueue);
		KNUM(&w, "send_q", s->wqueue);
	}
	if (s->has & SDIAG_HAS_INODE)
		KNUM(&w, "inode", s->inode);
	if (s->has & SDIAG_HAS_COOKIE) {
		KEY(&w, "cookie");
		obuf_putc(b, '"');
		obuf_hex(b, s->cookie);
		obuf_putc(b, '"');
	}
	if (s->has & SDIAG_HAS_UID)
		KNUM(&w, "uid", s->uid);
	if (o->ext && (s->has & SDIAG_HAS_SHUTDOWN))
		KNUM(&w, "shutdown", s->shutdown);
	switch (s->family) {
	case AF_INET:
	case AF_INET6:
		inet_json(&w, o, names, s);
		break;
	case AF_UNIX:
		unix_json(&w, o, s);
		break;
	case AF_NETLINK:
		netlink_json(&w, o, s);
		break;
	case AF_PACKET:
		packet_json(&w, o, s);
		break;
	case AF_XDP:
		xdp_json(&w, o, s);
		break;
	default:
		break;
	}
	if (s->table == SDIAG_T_SMC && (s->has & SDIAG_HAS_SMC_INFO)) {
		struct jw m = OPEN(&w, "smc");

		KRAW(&m, "mode", s->smc.mode == 0 ? "smcr" : s->smc.mode == 1 ? "fallback" :
			  s->smc.mode == 2 ? "smcd" : "unknown");
		KNUM(&m, "fallback_reason", s->smc.fallback_reason);
		KNUM(&m, "peer_diagnosis", s->smc.peer_diagnosis);
		close_obj(&m);
	}
	if (o->mem)
		skmem_json(&w, s);
	if (o->columns & OUT_COL_PROCESS)
		procs_json(&w, s);
	obuf_putc(b, '}');
}
