// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Field rows of the inet families (TCP, UDP, raw, MPTCP, SCTP...): the socket
 * options, timer, tcp_info, mptcp_info and congestion control, in the JSON
 * schema's order; .t places each in ss's text (see field.h).
 */

#include "cli/fields/field.h"

#define TCPI(f) AT(struct sdiag_tcp_info, tcpi_##f)
#define MPI(f) AT(struct sdiag_mptcp_info, mptcpi_##f)

static const struct sdiag_tcp_info *ti(const struct fctx *c)
{
	return fld_blob(c, SDIAG_BLOB_TCP_INFO);
}

/* ---- timer ------------------------------------------------------------------ */

static bool has_timer(const struct fctx *c)
{
	return c->s->has & SDIAG_HAS_TIMER;
}

static bool timer_on(const struct fctx *c)
{
	return c->s->inet.timer != 0;
}

static void timer_name_text(struct fctx *c, const struct field *f, uint64_t v)
{
	(void)f;
	obuf_puts(c->b, out_timer_name((unsigned)v));
}

static void timer_name_json(struct fctx *c, const struct field *f, uint64_t v)
{
	fld_key(c, f);
	fld_raw_str(c->b, out_timer_name((unsigned)v));
}

static const struct field timer_rows[] = {
	{ K("name"), L(""), SK(inet.timer), .text = timer_name_text, .json = timer_name_json },
	{ K("expires_ms"), L(","), SK(inet.expires_ms), .kind = FK_MSEC },
	{ K("retrans"), L(","), SK(inet.retrans) },
};

/* ---- socket details ------------------------------------------------------------ */

static void ifname_json(struct fctx *c, const struct field *f, uint64_t v)
{
	const char *name = names_ifname(c->names, (unsigned)v);

	if (name) {
		fld_key(c, f);
		obuf_json_cstr(c->b, name);
	}
}

static bool is_inet6(const struct fctx *c)
{
	return c->s->family == AF_INET6;
}

static void cgroup_text(struct fctx *c, const struct field *f, uint64_t v)
{
	const char *cg = names_cgroup(c->names, v);

	(void)f;
	if (cg) {
		obuf_puts(c->b, cg);
	} else {
		obuf_puts(c->b, "unreachable:");
		obuf_hex(c->b, v);
	}
}

/* JSON "cgroup": the path below the cgroup2 mount; a cgroup removed since
 * cannot be named: its id, as a string. */
static void cgroup_json(struct fctx *c, const struct field *f, uint64_t v)
{
	const char *cg = names_cgroup(c->names, v);

	fld_key(c, f);
	if (cg) {
		obuf_json_cstr(c->b, cg);
	} else {
		obuf_putc(c->b, '"');
		obuf_u64(c->b, v);
		obuf_putc(c->b, '"');
	}
}

static const char *const sockopt_names[] = {
	"recverr", "is_icsk", "freebind", "hdrincl", "mc_loop", "transparent", "mc_all",
	"nodefrag", "bind_addr_no_port", "recverr_rfc4884", "defer_connect",
};
#define N_SOCKOPT (sizeof(sockopt_names) / sizeof(sockopt_names[0]))

static void sockopt_text(struct fctx *c, const struct field *f, uint64_t v)
{
	(void)f;
	for (unsigned i = 0; i < N_SOCKOPT; i++)
		if (v & (1u << i)) {
			obuf_putc(c->b, ' ');
			obuf_puts(c->b, sockopt_names[i]);
		}
}

static void sockopt_json(struct fctx *c, const struct field *f, uint64_t v)
{
	/* The schema's name of bit 8 differs from ss's. */
	static const char *const names[N_SOCKOPT] = {
		"recverr", "is_icsk", "freebind", "hdrincl", "mc_loop", "transparent", "mc_all",
		"nodefrag", "bind_address_no_port", "recverr_rfc4884", "defer_connect",
	};

	fld_json_bits(c, f, v, names, N_SOCKOPT);
}

/* ---- tcp_info ------------------------------------------------------------------- */

static void options_text(struct fctx *c, const struct field *f, uint64_t v)
{
	static const struct { unsigned bit; const char *name; } opts[] = {
		{ 1, " ts" }, { 2, " sack" }, { 8, " ecn" }, { 16, " ecnseen" },
		{ 32, " fastopen" },
	};

	(void)f;
	/* ss reads these only with -o, -e or -b (its show_options). */
	if (!c->o->timers && !c->o->ext && !c->o->bpf)
		return;
	for (unsigned i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (v & opts[i].bit)
			obuf_puts(c->b, opts[i].name);
}

/* ss writes the -m/-i line of every inet socket (its inet_show_sock), even
 * when there is nothing to put on it, but -i alone not for UDP's. */
static uint64_t sep_kept(const struct fctx *c)
{
	if (c->o->oneline)
		return 0;
	return c->o->mem || c->s->protocol != IPPROTO_UDP;
}

static bool wscale_on(const struct fctx *c)
{
	return ti(c)->tcpi_options & 4;
}

static uint64_t snd_wscale(const struct fctx *c) { return ti(c)->tcpi_snd_wscale; }
static uint64_t rcv_wscale(const struct fctx *c) { return ti(c)->tcpi_rcv_wscale; }
static uint64_t app_limited(const struct fctx *c) { return ti(c)->tcpi_delivery_rate_app_limited; }
static uint64_t fastopen_fail(const struct fctx *c) { return ti(c)->tcpi_fastopen_client_fail; }

static bool rtt_on(const struct fctx *c)
{
	return ti(c)->tcpi_rtt != 0;
}

static bool ssthresh_on(const struct fctx *c)
{
	return ti(c)->tcpi_snd_ssthresh < 0xffff;
}

static bool rate_set(uint64_t v)
{
	return v && v != ~0ULL;
}

static bool pacing_on(const struct fctx *c)
{
	return rate_set(ti(c)->tcpi_pacing_rate);
}

static bool max_pacing_on(const struct fctx *c)
{
	return rate_set(ti(c)->tcpi_pacing_rate) && rate_set(ti(c)->tcpi_max_pacing_rate);
}

/* " rwnd_limited:12ms(33.3%)": a share of busy_time. */
static void limited_text(struct fctx *c, const struct field *f, uint64_t v)
{
	(void)f;
	obuf_u64(c->b, v / 1000);
	obuf_puts(c->b, "ms(");
	fmt_ss_percent(c->b, v, ti(c)->tcpi_busy_time);
	obuf_puts(c->b, "%)");
}

static bool busy_on(const struct fctx *c)
{
	return ti(c)->tcpi_busy_time != 0;
}

static bool retrans_on(const struct fctx *c)
{
	return ti(c)->tcpi_retrans || ti(c)->tcpi_total_retrans;
}

static bool not_listen(const struct fctx *c)
{
	return c->s->state != SDIAG_SS_LISTEN;
}

static bool min_rtt_on(const struct fctx *c)
{
	return ti(c)->tcpi_min_rtt != ~0U;
}

/* Text-only: cwnd * mss / rtt, the rate the window allows (vegas' rtt if set). */
static bool send_on(const struct fctx *c)
{
	return ti(c)->tcpi_rtt && ti(c)->tcpi_snd_mss && ti(c)->tcpi_snd_cwnd;
}

static void send_text(struct fctx *c, const struct field *f, uint64_t v)
{
	const struct sdiag_vegas_info *vegas;
	uint64_t rtt = ti(c)->tcpi_rtt;
	struct xd bits;

	(void)f;
	(void)v;
	if (c->s->has & SDIAG_HAS_VEGAS) {
		vegas = fld_blob(c, SDIAG_BLOB_VEGAS);
		if (vegas->enabled && vegas->rtt && vegas->rtt != 0x7fffffff)
			rtt = vegas->rtt;
	}
	/* ss: (double)cwnd * mss * 8000000.0 / rtt, rounded as the FPU does */
	bits = xd_mul(xd_u64(ti(c)->tcpi_snd_cwnd), xd_u64(ti(c)->tcpi_snd_mss));
	bits = xd_div(xd_mul(bits, xd_u64(8000000)), xd_u64(rtt));
	fmt_ss_rate(c->b, c->o->numeric, bits);
	obuf_puts(c->b, "bps");
}

#define TI(f, ...) { K(#f), TCPI(f), __VA_ARGS__ }
#define TT(f, lab, pos, ...) { K(#f), TCPI(f), L(lab), .t = T_TCP + (pos), __VA_ARGS__ }
#define TNZ(f, lab, pos) TT(f, lab, pos, .flags = FL_TNZ)

/* JSON: every member, in struct order; text: ss's tcp_stats_print(). */
static const struct field tcp_rows[] = {
	TI(state), TI(ca_state), TI(retransmits), TI(probes),
	TNZ(backoff, " backoff:", 11),
	TT(options, "", 0, .text = options_text),
	TT(rto, " rto:", 10, .kind = FK_USEC, .flags = FL_TNZ | FL_TSKIP, .skip = 3000000),
	TT(ato, " ato:", 14, .kind = FK_USEC, .flags = FL_TNZ),
	TNZ(snd_mss, " mss:", 15), TNZ(rcv_mss, " rcvmss:", 17),
	TNZ(unacked, " unacked:", 51),
	TT(sacked, " sacked:", 55, .flags = FL_TNZ, .twhen = not_listen),
	TNZ(lost, " lost:", 54),
	TT(retrans, " retrans:", 52, .twhen = retrans_on),
	TNZ(fackets, " fackets:", 57),
	TNZ(last_data_sent, " lastsnd:", 40), TI(last_ack_sent),
	TNZ(last_data_recv, " lastrcv:", 41), TNZ(last_ack_recv, " lastack:", 42),
	TNZ(pmtu, " pmtu:", 16), TNZ(rcv_ssthresh, " rcv_ssthresh:", 64),
	TT(rtt, " rtt:", 12, .kind = FK_USEC, .flags = FL_TNZ),
	TT(rttvar, "/", 13, .kind = FK_USEC, .twhen = rtt_on),
	TT(snd_ssthresh, " ssthresh:", 20, .flags = FL_TNZ, .twhen = ssthresh_on),
	TNZ(snd_cwnd, " cwnd:", 19), TNZ(advmss, " advmss:", 18),
	TT(reordering, " reordering:", 59, .flags = FL_TSKIP, .skip = 3),
	TT(rcv_rtt, " rcv_rtt:", 61, .kind = FK_USEC, .flags = FL_TNZ),
	TNZ(rcv_space, " rcv_space:", 63),
	TT(total_retrans, "/", 53, .twhen = retrans_on),
	TT(pacing_rate, " pacing_rate ", 43, .kind = FK_RATE, .twhen = pacing_on),
	TT(max_pacing_rate, "/", 44, .kind = FK_RATE, .twhen = max_pacing_on),
	TNZ(bytes_acked, " bytes_acked:", 23), TNZ(bytes_received, " bytes_received:", 24),
	TNZ(segs_out, " segs_out:", 25), TNZ(segs_in, " segs_in:", 26),
	TNZ(notsent_bytes, " notsent:", 65),
	TT(min_rtt, " minrtt:", 66, .kind = FK_USEC, .flags = FL_TNZ, .twhen = min_rtt_on),
	TNZ(data_segs_in, " data_segs_in:", 28), TNZ(data_segs_out, " data_segs_out:", 27),
	TT(delivery_rate, " delivery_rate ", 45, .kind = FK_RATE, .flags = FL_TNZ),
	TT(busy_time, " busy:", 49, .kind = FK_US_MS, .flags = FL_TNZ),
	TT(rwnd_limited, " rwnd_limited:", 50, .flags = FL_TNZ, .twhen = busy_on,
	   .text = limited_text),
	TT(sndbuf_limited, " sndbuf_limited:", 50, .flags = FL_TNZ, .twhen = busy_on,
	   .text = limited_text),
	TNZ(delivered, " delivered:", 46), TNZ(delivered_ce, " delivered_ce:", 47),
	TNZ(bytes_sent, " bytes_sent:", 21), TNZ(bytes_retrans, " bytes_retrans:", 22),
	TNZ(dsack_dups, " dsack_dups:", 56), TNZ(reord_seen, " reord_seen:", 60),
	TNZ(rcv_ooopack, " rcv_ooopack:", 67), TNZ(snd_wnd, " snd_wnd:", 68),
	TNZ(rcv_wnd, " rcv_wnd:", 69), TNZ(rehash, " rehash:", 70),
	TI(total_rto), TI(total_rto_recoveries), TI(total_rto_time), TI(received_ce),
	TI(delivered_e1_bytes), TI(delivered_e0_bytes), TI(delivered_ce_bytes),
	TI(received_e1_bytes), TI(received_e0_bytes), TI(received_ce_bytes),
	TI(accecn_fail_mode), TI(accecn_opt_seen),
	{ K("snd_wscale"), L(" wscale:"), .get = snd_wscale, .t = T_TCP + 9, .twhen = wscale_on },
	{ K("rcv_wscale"), L(","), .get = rcv_wscale, .t = T_TCP + 9, .twhen = wscale_on },
	{ K("delivery_rate_app_limited"), L(" app_limited"), .kind = FK_BOOL, .get = app_limited,
	  .t = T_TCP + 48, .text = fld_none, .flags = FL_TNZ },
	{ K("fastopen_client_fail"), .get = fastopen_fail },
};

/* ---- mptcp_info ----------------------------------------------------------------- */

static void mptcp_flags_text(struct fctx *c, const struct field *f, uint64_t v)
{
	(void)f;
	if (v & 1)
		obuf_puts(c->b, " fallback");
	if (v & 2)
		obuf_puts(c->b, " remote_key");
}

#define MI(f, ...) { K(#f), MPI(f), __VA_ARGS__ }
#define MT(f, lab, pos, ...) { K(#f), MPI(f), L(lab), .t = T_MPTCP + (pos), .flags = FL_TNZ, \
			       __VA_ARGS__ }

static const struct field mptcp_rows[] = {
	MT(subflows, " subflows:", 0), MT(add_addr_signal, " add_addr_signal:", 1),
	MT(add_addr_accepted, " add_addr_accepted:", 2), MT(subflows_max, " subflows_max:", 3),
	MT(add_addr_signal_max, " add_addr_signal_max:", 4),
	MT(add_addr_accepted_max, " add_addr_accepted_max:", 5),
	MT(flags, "", 6, .text = mptcp_flags_text),
	MT(token, " token:", 7, .kind = FK_HEX), MT(write_seq, " write_seq:", 8, .kind = FK_HEX),
	MT(snd_una, " snd_una:", 9, .kind = FK_HEX), MT(rcv_nxt, " rcv_nxt:", 10, .kind = FK_HEX),
	MI(local_addr_used), MI(local_addr_max), MI(csum_enabled), MI(retransmits),
	MI(bytes_retrans), MT(bytes_sent, " bytes_sent:", 11),
	MT(bytes_received, " bytes_received:", 12), MT(bytes_acked, " bytes_acked:", 13),
	MI(subflows_total), MI(endp_laminar_max), MI(last_data_sent), MI(last_data_recv),
	MI(last_ack_recv),
};

/* ---- congestion control -------------------------------------------------------------- */

static bool has_tcp_info(const struct fctx *c)
{
	return c->s->has & SDIAG_HAS_TCP_INFO;
}

static const struct sdiag_dctcp_info *dctcp(const struct fctx *c)
{
	return fld_blob(c, SDIAG_BLOB_DCTCP);
}

static bool dctcp_on(const struct fctx *c)
{
	return has_tcp_info(c) && dctcp(c)->enabled;
}

static bool dctcp_off(const struct fctx *c)
{
	return has_tcp_info(c) && !dctcp(c)->enabled;
}

static uint64_t bbr_bw(const struct fctx *c)
{
	const struct sdiag_bbr_info *bbr = fld_blob(c, SDIAG_BLOB_BBR);

	return (uint64_t)bbr->bw_hi << 32 | bbr->bw_lo;
}

static const struct field vegas_rows[] = {
	{ K("enabled"), AT(struct sdiag_vegas_info, enabled) }, { K("rttcnt"), AT(struct sdiag_vegas_info, rttcnt) },
	{ K("rtt"), AT(struct sdiag_vegas_info, rtt) }, { K("minrtt"), AT(struct sdiag_vegas_info, minrtt) },
};

static const struct field dctcp_rows[] = {
	{ K("enabled"), AT(struct sdiag_dctcp_info, enabled) },
	{ K("ce_state"), L("ce_state:"), AT(struct sdiag_dctcp_info, ce_state) },
	{ K("alpha"), L(",alpha:"), AT(struct sdiag_dctcp_info, alpha) },
	{ K("ab_ecn"), L(",ab_ecn:"), AT(struct sdiag_dctcp_info, ab_ecn) },
	{ K("ab_tot"), L(",ab_tot:"), AT(struct sdiag_dctcp_info, ab_tot) },
};

static const struct field bbr_rows[] = {
	{ K("bw"), L("bw:"), .get = bbr_bw, .kind = FK_RATE },
	{ K("min_rtt"), L(",mrtt:"), AT(struct sdiag_bbr_info, min_rtt), .kind = FK_USEC },
	{ K("pacing_gain"), L(",pacing_gain:"), AT(struct sdiag_bbr_info, pacing_gain), .kind = FK_GAIN,
	  .flags = FL_TNZ },
	{ K("cwnd_gain"), L(",cwnd_gain:"), AT(struct sdiag_bbr_info, cwnd_gain), .kind = FK_GAIN,
	  .flags = FL_TNZ },
};

/* ---- SCTP's address lists (multi-homing) ------------------------------------------- */

/* How many addresses of a list the output shows; "<key>_total" (JSON) or
 * ",..." (table) says when the kernel sent more. */
#define SCTP_SHOWN 8

static size_t sctp_list(const struct fctx *c, bool peers, struct sdiag_sctp_addr a[SCTP_SHOWN])
{
	return sdiag_sctp_addrs(c->s, peers ? SDIAG_SCTP_PEERS : SDIAG_SCTP_LOCALS, a, SCTP_SHOWN);
}

static size_t sctp_kept(size_t n)
{
	return n < SCTP_SHOWN ? n : SCTP_SHOWN;
}

/* ss's " locals:A,B" / " peers:A,B": hosts only (format_host_sa()); a list
 * longer than SCTP_SHOWN ends in ",...". */
static void sctp_addrs_text(struct fctx *c, bool peers)
{
	struct sdiag_sctp_addr a[SCTP_SHOWN];
	size_t n = sctp_list(c, peers, a);
	char buf[48];

	for (size_t i = 0; i < sctp_kept(n); i++) {
		const char *host = c->o->resolve ? names_host(c->names, a[i].family, a[i].addr) :
						   NULL;

		if (i)
			obuf_putc(c->b, ',');
		if (host)
			obuf_puts(c->b, host);
		else
			obuf_put(c->b, buf, fmt_addr(buf, a[i].family, a[i].addr));
	}
	if (n > SCTP_SHOWN)
		obuf_puts(c->b, ",...");
}

/* JSON: an array of {"addr","port"} objects like "local"; when the kernel
 * sent more than SCTP_SHOWN, "<key>_total" follows with their number. */
static void sctp_addrs_json(struct fctx *c, const struct field *f, bool peers)
{
	struct sdiag_sctp_addr a[SCTP_SHOWN];
	size_t n = sctp_list(c, peers, a);
	char buf[48];

	fld_key(c, f);
	obuf_putc(c->b, '[');
	for (size_t i = 0; i < sctp_kept(n); i++) {
		obuf_puts(c->b, i ? ",{\"addr\":\"" : "{\"addr\":\"");
		obuf_put(c->b, buf, fmt_addr(buf, a[i].family, a[i].addr));
		obuf_puts(c->b, "\",\"port\":");
		obuf_u64(c->b, a[i].port);
		obuf_putc(c->b, '}');
	}
	obuf_putc(c->b, ']');
	if (n > SCTP_SHOWN) {
		fld_key_str(c, peers ? "peer_addrs_total" : "local_addrs_total");
		obuf_u64(c->b, n);
	}
}

static void locals_text(struct fctx *c, const struct field *f, uint64_t v)
{
	(void)f;
	(void)v;
	sctp_addrs_text(c, false);
}

static void peers_text(struct fctx *c, const struct field *f, uint64_t v)
{
	(void)f;
	(void)v;
	sctp_addrs_text(c, true);
}

static void locals_json(struct fctx *c, const struct field *f, uint64_t v)
{
	(void)v;
	sctp_addrs_json(c, f, false);
}

static void peers_json(struct fctx *c, const struct field *f, uint64_t v)
{
	(void)v;
	sctp_addrs_json(c, f, true);
}

/* ss prints them with -m or -i, after skmem (sctp_show_info()), when the
 * list is not empty. */
static bool has_locals(const struct fctx *c)
{
	return sdiag_sctp_addrs(c->s, SDIAG_SCTP_LOCALS, NULL, 0) != 0;
}

static bool has_peers(const struct fctx *c)
{
	return sdiag_sctp_addrs(c->s, SDIAG_SCTP_PEERS, NULL, 0) != 0;
}

/* ---- the inet rows, in JSON order ------------------------------------------------------- */

const struct field fields_inet[] = {
	{ K("ifindex"), SK(inet.ifindex), .fams = F_INET, .flags = FL_JNZ },
	{ K("ifname"), SK(inet.ifindex), .fams = F_INET, .flags = FL_JNZ, .json = ifname_json },
	{ K("raw_protocol"), SK(inet.raw_protocol), .fams = F_INET, .has = SDIAG_HAS_RAW_PROTO },
	{ K("v6only"), L(" v6only:"), SK(inet.v6only), .kind = FK_BOOL, .fams = F_INET,
	  .has = SDIAG_HAS_V6ONLY, .topt = O_EXT, .t = T_V6ONLY, .twhen = is_inet6 },
	{ K("timer"), L(" timer:("), .tail = ")", .kind = FK_GROUP, SUB(timer_rows),
	  .fams = F_INET, .jopt = O_TIMERS | O_EXT, .topt = O_TIMERS | O_EXT, .t = T_TIMER,
	  .jwhen = has_timer, .twhen = timer_on },
	{ K("mark"), L(" fwmark:0x"), SK(inet.mark), .kind = FK_HEX, .fams = F_INET,
	  .has = SDIAG_HAS_MARK, .jopt = O_EXT, .topt = O_EXT, .flags = FL_TNZ, .t = T_FWMARK },
	{ K("cgroup"), SK(inet.cgroup_id), .kind = FK_FN, .fams = F_INET,
	  .has = SDIAG_HAS_CGROUP, .jopt = O_EXT | O_CGROUP, .json = cgroup_json },
	{ K("cgroup_id"), L(" cgroup:"), SK(inet.cgroup_id), .fams = F_INET,
	  .has = SDIAG_HAS_CGROUP, .jopt = O_EXT | O_CGROUP, .topt = O_EXT | O_CGROUP,
	  .flags = FL_TNZ, .t = T_CGROUP, .text = cgroup_text },
	{ K("sockopt"), L("inet-sockopt: ("), .tail = ")", SK(inet.sockopt), .fams = F_INET,
	  .has = SDIAG_HAS_SOCKOPT, .jopt = O_EXT | O_SOCKOPT, .topt = O_SOCKOPT,
	  .flags = FL_TSEP, .t = T_SOCKOPT, .text = sockopt_text, .json = sockopt_json },
	{ K("tos"), L(" tos:"), SK(inet.tos), .kind = FK_ALTHEX, .fams = F_INET,
	  .has = SDIAG_HAS_TOS, .jopt = O_TOS, .topt = O_TOS, .t = T_TOS },
	{ K("tclass"), L(" tclass:"), SK(inet.tclass), .kind = FK_ALTHEX, .fams = F_INET,
	  .has = SDIAG_HAS_TCLASS, .jopt = O_TOS, .topt = O_TOS, .t = T_TCLASS },
	{ K("class_id"), L(" class_id:"), SK(inet.class_id), .kind = FK_ALTHEX, .fams = F_INET,
	  .has = SDIAG_HAS_CLASS_ID, .jopt = O_TOS, .topt = O_TOS, .t = T_CLASS_ID },
	/* Text only: the line of -m and -i (taken back when it stays empty, but
	 * where ss prints it anyway: an empty line of spaces in the table). */
	{ .kind = FK_SEP, .fams = F_INET, .topt = O_MEM | O_INFO, .flags = FL_TKEEP,
	  .t = T_SEP, .get = sep_kept },
	{ K("tcp_info"), .kind = FK_GROUP, SUB(tcp_rows), BLOB(SDIAG_BLOB_TCP_INFO), .fams = F_INET,
	  .has = SDIAG_HAS_TCP_INFO, .jopt = O_INFO, .topt = O_INFO },
	{ L(" send "), .kind = FK_FN, .fams = F_INET, .has = SDIAG_HAS_TCP_INFO, .topt = O_INFO,
	  .t = T_TCP + 39, .twhen = send_on, .text = send_text },
	{ K("mptcp_info"), .kind = FK_GROUP, SUB(mptcp_rows), BLOB(SDIAG_BLOB_MPTCP_INFO),
	  .fams = F_INET, .has = SDIAG_HAS_MPTCP_INFO, .jopt = O_INFO, .topt = O_INFO },
	{ K("cong"), L(" "), SK(inet.cong), .kind = FK_STR, .fams = F_INET,
	  .has = SDIAG_HAS_CONG, .jopt = O_INFO, .topt = O_INFO, .flags = FL_JNZ | FL_TNZ,
	  .t = T_TCP + 8, .twhen = has_tcp_info },
	{ K("vegas"), .kind = FK_GROUP, SUB(vegas_rows), BLOB(SDIAG_BLOB_VEGAS), .fams = F_INET,
	  .has = SDIAG_HAS_VEGAS,
	  .jopt = O_INFO },
	{ K("dctcp"), L(" dctcp:("), .tail = ")", .kind = FK_GROUP, SUB(dctcp_rows),
	  BLOB(SDIAG_BLOB_DCTCP), .fams = F_INET, .has = SDIAG_HAS_DCTCP, .jopt = O_INFO, .topt = O_INFO,
	  .t = T_TCP + 29, .twhen = dctcp_on },
	{ L(" dctcp:fallback_mode"), .kind = FK_LIT, .fams = F_INET, .has = SDIAG_HAS_DCTCP,
	  .topt = O_INFO, .t = T_TCP + 29, .twhen = dctcp_off },
	{ K("bbr"), L(" bbr:("), .tail = ")", .kind = FK_GROUP, SUB(bbr_rows),
	  BLOB(SDIAG_BLOB_BBR), .fams = F_INET,
	  .has = SDIAG_HAS_BBR, .jopt = O_INFO, .topt = O_INFO, .t = T_TCP + 30,
	  .twhen = has_tcp_info },
	{ K("ulp"), L(" tcp-ulp-"), SK(inet.ulp), .kind = FK_STR, .fams = F_INET,
	  .has = SDIAG_HAS_ULP, .jopt = O_INFO, .topt = O_INFO,
	  .flags = FL_JNZ | FL_TNZ | FL_RAW, .t = T_ULP },
	{ K("local_addrs"), L(" locals:"), .kind = FK_FN, .fams = F_INET,
	  .has = SDIAG_HAS_SCTP_LOCALS, .topt = O_MEM | O_INFO, .t = T_SKMEM + 1,
	  .twhen = has_locals, .text = locals_text, .json = locals_json },
	{ K("peer_addrs"), L(" peers:"), .kind = FK_FN, .fams = F_INET,
	  .has = SDIAG_HAS_SCTP_PEERS, .topt = O_MEM | O_INFO, .t = T_SKMEM + 2,
	  .twhen = has_peers, .text = peers_text, .json = peers_json },
};
const size_t fields_inet_n = sizeof(fields_inet) / sizeof(fields_inet[0]);
