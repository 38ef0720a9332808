// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The free text ss appends after the columns for -o, -e, -m, -i and --tos,
 * in ss's words and order. Only runs when a detail option is given, so it
 * may use printf for the floating-point fields.
 */
#include <sys/socket.h>
#include <netinet/in.h>

#include "out_internal.h"

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

const char *out_timer_name(unsigned timer)
{
	static const char *const names[] = { "off", "on", "keepalive", "timewait", "persist",
					     "delack" };

	return timer < sizeof(names) / sizeof(names[0]) ? names[timer] : "unknown";
}

/* ss's print_ms_timer(): "1min23sec", "4.5ms"-like compact durations. */
static void ms_timer(struct obuf *b, unsigned timeout)
{
	unsigned secs = timeout / 1000, minutes = secs / 60, msecs = timeout % 1000;

	secs %= 60;
	if (minutes) {
		msecs = 0;
		obuf_printf(b, "%umin", minutes);
		if (minutes > 9)
			secs = 0;
	}
	if (secs) {
		if (secs > 9)
			msecs = 0;
		obuf_printf(b, "%u%s", secs, msecs ? "." : "sec");
	}
	if (msecs)
		obuf_printf(b, "%03ums", msecs);
}

static void sep(struct obuf *b, const struct out_opts *o)
{
	obuf_puts(b, o->oneline ? " " : "\n\t");
}

static void skmem(struct obuf *b, const struct sdiag_sock *s)
{
	const uint32_t *m = s->skmem;

	if (!(s->has & SDIAG_HAS_SKMEMINFO)) {
		if (s->has & SDIAG_HAS_MEMINFO)
			obuf_printf(b, " mem:(r%u,w%u,f%u,t%u)", s->inet.meminfo.rmem,
				    s->inet.meminfo.wmem, s->inet.meminfo.fmem, s->inet.meminfo.tmem);
		return;
	}
	obuf_printf(b, " skmem:(r%u,rb%u,t%u,tb%u,f%u,w%u,o%u,bl%u,d%u)",
		    m[SDIAG_SKMEM_RMEM_ALLOC], m[SDIAG_SKMEM_RCVBUF], m[SDIAG_SKMEM_WMEM_ALLOC],
		    m[SDIAG_SKMEM_SNDBUF], m[SDIAG_SKMEM_FWD_ALLOC], m[SDIAG_SKMEM_WMEM_QUEUED],
		    m[SDIAG_SKMEM_OPTMEM], m[SDIAG_SKMEM_BACKLOG], m[SDIAG_SKMEM_DROPS]);
}

/* ss's sprint_bw(): bits per second, k/M/G/T unless -n. */
static void bw(struct obuf *b, const struct out_opts *o, double v)
{
	if (o->numeric)
		obuf_printf(b, "%.0f", v);
	else if (v >= 1e12)
		obuf_printf(b, "%.3gT", v / 1e12);
	else if (v >= 1e9)
		obuf_printf(b, "%.3gG", v / 1e9);
	else if (v >= 1e6)
		obuf_printf(b, "%.3gM", v / 1e6);
	else if (v >= 1e3)
		obuf_printf(b, "%.3gk", v / 1e3);
	else
		obuf_printf(b, "%g", v);
}

static void u32f(struct obuf *b, const char *name, uint64_t v)
{
	if (!v)
		return;
	obuf_putc(b, ' ');
	obuf_puts(b, name);
	obuf_putc(b, ':');
	obuf_u64(b, v);
}

static void cong_text(struct obuf *b, const struct out_opts *o, const struct sdiag_sock *s)
{
	const struct sdiag_inet *in = &s->inet;

	if (s->has & SDIAG_HAS_DCTCP) {
		if (in->dctcp.enabled)
			obuf_printf(b, " dctcp:(ce_state:%u,alpha:%u,ab_ecn:%u,ab_tot:%u)",
				    in->dctcp.ce_state, in->dctcp.alpha, in->dctcp.ab_ecn,
				    in->dctcp.ab_tot);
		else
			obuf_puts(b, " dctcp:fallback_mode");
	}
	if (s->has & SDIAG_HAS_BBR) {
		uint64_t v = (uint64_t)in->bbr.bw_hi << 32 | in->bbr.bw_lo;

		obuf_puts(b, " bbr:(bw:");
		bw(b, o, (double)v * 8.0);
		obuf_printf(b, "bps,mrtt:%g", in->bbr.min_rtt / 1000.0);
		if (in->bbr.pacing_gain)
			obuf_printf(b, ",pacing_gain:%g", in->bbr.pacing_gain / 256.0);
		if (in->bbr.cwnd_gain)
			obuf_printf(b, ",cwnd_gain:%g", in->bbr.cwnd_gain / 256.0);
		obuf_putc(b, ')');
	}
}

static void tcp_rates_text(struct obuf *b, const struct out_opts *o, const struct sdiag_sock *s);

static void tcp_info_text(struct obuf *b, const struct out_opts *o, const struct sdiag_sock *s)
{
	const struct sdiag_tcp_info *i = &s->inet.tcp_info;
	double rtt = i->tcpi_rtt;

	if (i->tcpi_options & 1)
		obuf_puts(b, " ts");
	if (i->tcpi_options & 2)
		obuf_puts(b, " sack");
	if (i->tcpi_options & 8)
		obuf_puts(b, " ecn");
	if (i->tcpi_options & 16)
		obuf_puts(b, " ecnseen");
	if (i->tcpi_options & 32)
		obuf_puts(b, " fastopen");
	if ((s->has & SDIAG_HAS_CONG) && s->inet.cong[0]) {
		obuf_putc(b, ' ');
		obuf_text_bytes(b, s->inet.cong, strnlen(s->inet.cong, sizeof(s->inet.cong)));
	}
	if (i->tcpi_options & 4)
		obuf_printf(b, " wscale:%u,%u", i->tcpi_snd_wscale, i->tcpi_rcv_wscale);
	if (i->tcpi_rto && i->tcpi_rto != 3000000)
		obuf_printf(b, " rto:%g", i->tcpi_rto / 1000.0);
	u32f(b, "backoff", i->tcpi_backoff);
	if (i->tcpi_rtt)
		obuf_printf(b, " rtt:%g/%g", i->tcpi_rtt / 1000.0, i->tcpi_rttvar / 1000.0);
	if (i->tcpi_ato)
		obuf_printf(b, " ato:%g", i->tcpi_ato / 1000.0);
	u32f(b, "mss", i->tcpi_snd_mss);
	u32f(b, "pmtu", i->tcpi_pmtu);
	u32f(b, "rcvmss", i->tcpi_rcv_mss);
	u32f(b, "advmss", i->tcpi_advmss);
	u32f(b, "cwnd", i->tcpi_snd_cwnd);
	if (i->tcpi_snd_ssthresh < 0xffff)
		u32f(b, "ssthresh", i->tcpi_snd_ssthresh);
	u32f(b, "bytes_sent", i->tcpi_bytes_sent);
	u32f(b, "bytes_retrans", i->tcpi_bytes_retrans);
	u32f(b, "bytes_acked", i->tcpi_bytes_acked);
	u32f(b, "bytes_received", i->tcpi_bytes_received);
	u32f(b, "segs_out", i->tcpi_segs_out);
	u32f(b, "segs_in", i->tcpi_segs_in);
	u32f(b, "data_segs_out", i->tcpi_data_segs_out);
	u32f(b, "data_segs_in", i->tcpi_data_segs_in);
	cong_text(b, o, s);
	if ((s->has & SDIAG_HAS_VEGAS) && s->inet.vegas.enabled && s->inet.vegas.rtt &&
	    s->inet.vegas.rtt != 0x7fffffff)
		rtt = s->inet.vegas.rtt;
	if (rtt > 0 && i->tcpi_snd_mss && i->tcpi_snd_cwnd) {
		obuf_puts(b, " send ");
		bw(b, o, (double)i->tcpi_snd_cwnd * i->tcpi_snd_mss * 8000000.0 / rtt);
		obuf_puts(b, "bps");
	}
	tcp_rates_text(b, o, s);
}

/* The second half of ss's tcp_stats_print(): rates, limits, counters. */
static void tcp_rates_text(struct obuf *b, const struct out_opts *o, const struct sdiag_sock *s)
{
	const struct sdiag_tcp_info *i = &s->inet.tcp_info;

	u32f(b, "lastsnd", i->tcpi_last_data_sent);
	u32f(b, "lastrcv", i->tcpi_last_data_recv);
	u32f(b, "lastack", i->tcpi_last_ack_recv);
	if (i->tcpi_pacing_rate && i->tcpi_pacing_rate != ~0ULL) {
		obuf_puts(b, " pacing_rate ");
		bw(b, o, i->tcpi_pacing_rate * 8.0);
		obuf_puts(b, "bps");
		if (i->tcpi_max_pacing_rate && i->tcpi_max_pacing_rate != ~0ULL) {
			obuf_putc(b, '/');
			bw(b, o, i->tcpi_max_pacing_rate * 8.0);
			obuf_puts(b, "bps");
		}
	}
	if (i->tcpi_delivery_rate) {
		obuf_puts(b, " delivery_rate ");
		bw(b, o, i->tcpi_delivery_rate * 8.0);
		obuf_puts(b, "bps");
	}
	u32f(b, "delivered", i->tcpi_delivered);
	u32f(b, "delivered_ce", i->tcpi_delivered_ce);
	if (i->tcpi_delivery_rate_app_limited)
		obuf_puts(b, " app_limited");
	if (i->tcpi_busy_time) {
		obuf_printf(b, " busy:%llums", (unsigned long long)i->tcpi_busy_time / 1000);
		if (i->tcpi_rwnd_limited)
			obuf_printf(b, " rwnd_limited:%llums(%.1f%%)",
				    (unsigned long long)i->tcpi_rwnd_limited / 1000,
				    100.0 * i->tcpi_rwnd_limited / i->tcpi_busy_time);
		if (i->tcpi_sndbuf_limited)
			obuf_printf(b, " sndbuf_limited:%llums(%.1f%%)",
				    (unsigned long long)i->tcpi_sndbuf_limited / 1000,
				    100.0 * i->tcpi_sndbuf_limited / i->tcpi_busy_time);
	}
	u32f(b, "unacked", i->tcpi_unacked);
	if (i->tcpi_retrans || i->tcpi_total_retrans)
		obuf_printf(b, " retrans:%u/%u", i->tcpi_retrans, i->tcpi_total_retrans);
	u32f(b, "lost", i->tcpi_lost);
	if (s->state != SDIAG_SS_LISTEN)
		u32f(b, "sacked", i->tcpi_sacked);
	u32f(b, "dsack_dups", i->tcpi_dsack_dups);
	u32f(b, "fackets", i->tcpi_fackets);
	if (i->tcpi_reordering != 3)
		obuf_printf(b, " reordering:%u", i->tcpi_reordering);
	u32f(b, "reord_seen", i->tcpi_reord_seen);
	if (i->tcpi_rcv_rtt)
		obuf_printf(b, " rcv_rtt:%g", i->tcpi_rcv_rtt / 1000.0);
	u32f(b, "rcv_space", i->tcpi_rcv_space);
	u32f(b, "rcv_ssthresh", i->tcpi_rcv_ssthresh);
	u32f(b, "notsent", i->tcpi_notsent_bytes);
	if (i->tcpi_min_rtt && i->tcpi_min_rtt != ~0U)
		obuf_printf(b, " minrtt:%g", i->tcpi_min_rtt / 1000.0);
	u32f(b, "rcv_ooopack", i->tcpi_rcv_ooopack);
	u32f(b, "snd_wnd", i->tcpi_snd_wnd);
	u32f(b, "rcv_wnd", i->tcpi_rcv_wnd);
	u32f(b, "rehash", i->tcpi_rehash);
}

static void mptcp_info_text(struct obuf *b, const struct sdiag_sock *s)
{
	const struct sdiag_mptcp_info *m = &s->inet.mptcp_info;

	u32f(b, "subflows", m->mptcpi_subflows);
	u32f(b, "add_addr_signal", m->mptcpi_add_addr_signal);
	u32f(b, "add_addr_accepted", m->mptcpi_add_addr_accepted);
	u32f(b, "subflows_max", m->mptcpi_subflows_max);
	u32f(b, "add_addr_signal_max", m->mptcpi_add_addr_signal_max);
	u32f(b, "add_addr_accepted_max", m->mptcpi_add_addr_accepted_max);
	if (m->mptcpi_flags & 1)
		obuf_puts(b, " fallback");
	if (m->mptcpi_flags & 2)
		obuf_puts(b, " remote_key");
	if (m->mptcpi_token)
		obuf_printf(b, " token:%x", m->mptcpi_token);
	if (m->mptcpi_write_seq)
		obuf_printf(b, " write_seq:%llx", (unsigned long long)m->mptcpi_write_seq);
	if (m->mptcpi_snd_una)
		obuf_printf(b, " snd_una:%llx", (unsigned long long)m->mptcpi_snd_una);
	if (m->mptcpi_rcv_nxt)
		obuf_printf(b, " rcv_nxt:%llx", (unsigned long long)m->mptcpi_rcv_nxt);
	u32f(b, "bytes_sent", m->mptcpi_bytes_sent);
	u32f(b, "bytes_received", m->mptcpi_bytes_received);
	u32f(b, "bytes_acked", m->mptcpi_bytes_acked);
}

/* uid:, ino:, sk:, fwmark:, cgroup: as ss's sock_details_print(). */
static void sock_details(struct obuf *b, struct names *names, const struct sdiag_sock *s)
{
	const char *cg;

	if ((s->has & SDIAG_HAS_UID) && s->uid)
		u32f(b, "uid", s->uid);
	if (s->has & SDIAG_HAS_INODE) {
		obuf_puts(b, " ino:");
		obuf_u64(b, s->inode);
	}
	if (s->has & SDIAG_HAS_COOKIE) {
		obuf_puts(b, " sk:");
		obuf_hex(b, s->cookie);
	}
	if (s->family != AF_INET && s->family != AF_INET6)
		return;
	if ((s->has & SDIAG_HAS_MARK) && s->inet.mark)
		obuf_printf(b, " fwmark:0x%x", s->inet.mark);
	if ((s->has & SDIAG_HAS_CGROUP) && s->inet.cgroup_id) {
		cg = names ? names_cgroup(names, s->inet.cgroup_id) : NULL;
		if (cg)
			obuf_printf(b, " cgroup:%s", cg);
		else
			obuf_printf(b, " cgroup:unreachable:%llx",
				    (unsigned long long)s->inet.cgroup_id);
	}
}

static void shutdown_arrows(struct obuf *b, const struct sdiag_sock *s)
{
	if (!(s->has & SDIAG_HAS_SHUTDOWN))
		return;
	obuf_putc(b, ' ');
	obuf_putc(b, s->shutdown & 1 ? '-' : '<');
	obuf_putc(b, '-');
	obuf_putc(b, s->shutdown & 2 ? '-' : '>');
}

static void sockopt_text(struct obuf *b, const struct out_opts *o, uint16_t v)
{
	static const char *const names[] = { "recverr", "is_icsk", "freebind", "hdrincl",
					     "mc_loop", "transparent", "mc_all", "nodefrag",
					     "bind_addr_no_port", "recverr_rfc4884",
					     "defer_connect" };

	obuf_puts(b, o->oneline ? " inet-sockopt: (" : "\n\tinet-sockopt: (");
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (v & (1u << i)) {
			obuf_putc(b, ' ');
			obuf_puts(b, names[i]);
		}
	obuf_putc(b, ')');
}

static void inet_text(struct obuf *b, const struct out_opts *o, struct names *names,
		      const struct sdiag_sock *s)
{
	const struct sdiag_inet *in = &s->inet;
	bool is_udp = s->table == SDIAG_T_UDP || s->table == SDIAG_T_UDPLITE;
	size_t mark, after_sep;

	if ((o->timers || o->ext) && in->timer) {
		obuf_printf(b, " timer:(%s,", out_timer_name(in->timer));
		ms_timer(b, in->expires_ms);
		obuf_printf(b, ",%u)", in->retrans);
	}
	if (o->ext) {
		sock_details(b, names, s);
		if (s->family == AF_INET6 && (s->has & SDIAG_HAS_V6ONLY))
			obuf_printf(b, " v6only:%u", in->v6only);
		shutdown_arrows(b, s);
	}
	if (o->tos) {
		if (s->has & SDIAG_HAS_TOS)
			obuf_printf(b, " tos:%#x", in->tos);
		if (s->has & SDIAG_HAS_TCLASS)
			obuf_printf(b, " tclass:%#x", in->tclass);
		if (s->has & SDIAG_HAS_CLASS_ID)
			obuf_printf(b, " class_id:%#x", in->class_id);
	}
	if (o->sockopt && (s->has & SDIAG_HAS_SOCKOPT))
		sockopt_text(b, o, in->sockopt);
	if (!(o->mem || (o->info && !is_udp)))
		return;
	mark = b->len;
	sep(b, o);
	after_sep = b->len;
	if (o->mem)
		skmem(b, s);
	if (o->info) {
		if (s->has & SDIAG_HAS_TCP_INFO)
			tcp_info_text(b, o, s);
		if (s->has & SDIAG_HAS_MPTCP_INFO)
			mptcp_info_text(b, s);
		if ((s->has & SDIAG_HAS_ULP) && in->ulp[0])
			obuf_printf(b, " tcp-ulp-%.*s", (int)sizeof(in->ulp), in->ulp);
	}
	/* Nothing to show (no tcp_info for this socket): no empty line either. */
	if (b->len == after_sep)
		b->len = mark;
}

static void netlink_text(struct obuf *b, const struct out_opts *o, const struct sdiag_sock *s)
{
	static const char *const flag_names[] = { "cb_running", "pktinfo", "broadcast_error",
						  "no_enobufs", "listen_all_nsid", "cap_ack" };

	if (o->ext) {
		sock_details(b, NULL, s);
		if ((s->has & SDIAG_HAS_GROUPS) && s->nl.n_group_words) {
			bool first = true;

			obuf_puts(b, " groups:");
			for (size_t w = 0; w < s->nl.n_group_words; w++) {
				for (unsigned bit = 0; bit < 32; bit++) {
					unsigned g = (unsigned)w * 32 + bit + 1;
					const char *name;

					if (!(s->nl.groups[w] & (UINT32_C(1) << bit)))
						continue;
					if (!first)
						obuf_putc(b, ',');
					first = false;
					name = s->protocol == 0 ? sdiag_rtnl_group_name(g) : NULL;
					if (name)
						obuf_puts(b, name);
					else
						obuf_u64(b, g);
				}
			}
		}
		if ((s->has & SDIAG_HAS_NL_FLAGS) && s->nl.flags) {
			bool first = true;

			obuf_puts(b, " flags:(");
			for (unsigned i = 0; i < 6; i++) {
				if (!(s->nl.flags & (1u << i)))
					continue;
				if (!first)
					obuf_putc(b, ',');
				first = false;
				obuf_puts(b, flag_names[i]);
			}
			obuf_putc(b, ')');
		}
	}
	if (o->mem) {
		obuf_putc(b, '\t');
		skmem(b, s);
	}
}

static void ring_text(struct obuf *b, const struct out_opts *o, const char *name,
		      const struct sdiag_packet_ring *r)
{
	sep(b, o);
	obuf_printf(b, "%s(blk_size:%u,blk_nr:%u,frm_size:%u,frm_nr:%u,tmo:%u,features:0x%x)",
		    name, r->block_size, r->block_nr, r->frame_size, r->frame_nr, r->retire_tmo,
		    r->features);
}

static void packet_text(struct obuf *b, const struct out_opts *o, const struct sdiag_sock *s)
{
	static const char *const fanout_types[] = { "hash", "lb", "cpu", "roll", "random", "qm" };
	static const char *const flags[] = { "running", "auxdata", "origdev", "vnethdr", "loss" };
	const struct sdiag_packet *p = &s->pkt;

	if (o->ext) {
		sock_details(b, NULL, s);
		if (s->has & SDIAG_HAS_PKT_INFO) {
			sep(b, o);
			obuf_printf(b, "ver:%u cpy_thresh:%u flags( ", p->info.version,
				    p->info.copy_thresh);
			for (unsigned i = 0; i < 5; i++)
				if (p->info.flags & (1u << i))
					obuf_printf(b, "%s ", flags[i]);
			if (!p->info.flags)
				obuf_puts(b, "0 ");
			obuf_putc(b, ')');
		}
		if (s->has & SDIAG_HAS_RX_RING)
			ring_text(b, o, "ring_rx", &p->rx_ring);
		if (s->has & SDIAG_HAS_TX_RING)
			ring_text(b, o, "ring_tx", &p->tx_ring);
		if (s->has & SDIAG_HAS_FANOUT) {
			unsigned type = p->fanout >> 16;

			sep(b, o);
			obuf_printf(b, "fanout(id:%u,type:", p->fanout & 0xffff);
			if (type < 6)
				obuf_puts(b, fanout_types[type]);
			else
				obuf_printf(b, "0x%x", type);
			obuf_putc(b, ')');
		}
	}
	if (o->mem)
		skmem(b, s);
}

static void xdp_text(struct obuf *b, const struct out_opts *o, const struct sdiag_sock *s)
{
	const struct sdiag_xdp *x = &s->xdp;

	if (o->ext) {
		sock_details(b, NULL, s);
		if (s->has & SDIAG_HAS_XDP_RINGS) {
			sep(b, o);
			obuf_printf(b, "rx(entries:%u) tx(entries:%u)", x->rx_entries,
				    x->tx_entries);
		}
		if (s->has & SDIAG_HAS_XDP_UMEM) {
			sep(b, o);
			obuf_printf(b,
				    "umem(id:%u,size:%llu,num_pages:%u,chunk_size:%u,headroom:%u,"
				    "ifindex:%u,qid:%u,zc:%u,refs:%u) fr(entries:%u) cr(entries:%u)",
				    x->umem_id, (unsigned long long)x->umem_size, x->umem_num_pages,
				    x->umem_chunk_size, x->umem_headroom, x->umem_ifindex,
				    x->umem_queue_id, x->umem_flags & 1, x->umem_refs,
				    x->fill_entries, x->completion_entries);
		}
		if (s->has & SDIAG_HAS_XDP_STATS) {
			sep(b, o);
			obuf_printf(b,
				    "stats(rx dropped:%llu,rx invalid:%llu,rx queue full:%llu,"
				    "rx fill ring empty:%llu,tx invalid:%llu,tx ring empty:%llu)",
				    (unsigned long long)x->rx_dropped,
				    (unsigned long long)x->rx_invalid, (unsigned long long)x->rx_full,
				    (unsigned long long)x->fill_empty,
				    (unsigned long long)x->tx_invalid, (unsigned long long)x->tx_empty);
		}
	}
	if (o->mem)
		skmem(b, s);
}

void detail_text(struct obuf *b, const struct out_opts *o, struct names *names,
		 const struct sdiag_sock *s)
{
	if (!(o->timers || o->ext || o->mem || o->info || o->tos || o->sockopt))
		return;
	switch (s->family) {
	case AF_INET:
	case AF_INET6:
		inet_text(b, o, names, s);
		break;
	case AF_UNIX:
		if (o->mem)
			skmem(b, s);
		if (!o->ext)
			break;
		sock_details(b, NULL, s);
		shutdown_arrows(b, s);
		if (s->has & SDIAG_HAS_VFS)
			obuf_printf(b, " ino:%u dev:%u/%u", s->un.vfs_ino, s->un.vfs_dev >> 20,
				    s->un.vfs_dev & 0xfffff);
		if (s->has & SDIAG_HAS_ICONS) {
			obuf_puts(b, " peers:");
			for (size_t i = 0; i < s->un.n_icons; i++) {
				obuf_putc(b, ' ');
				obuf_u64(b, s->un.icons[i]);
			}
		}
		break;
	case AF_NETLINK:
		netlink_text(b, o, s);
		break;
	case AF_PACKET:
		packet_text(b, o, s);
		break;
	case AF_XDP:
		xdp_text(b, o, s);
		break;
	default:
		if (o->ext)
			sock_details(b, NULL, s);
		if (o->mem)
			skmem(b, s);
		break;
	}
}
