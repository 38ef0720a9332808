// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Golden test of the renderers (cli/fields/out_types.h): hand-made records of every
 * family — also those this machine's kernel may not have (vsock, xdp, tipc,
 * smc) — rendered as table, JSON and NDJSON under many option sets, compared
 * byte for byte with tests/cli/render.golden. The golden file was produced by
 * the renderers before the field table (three hand-written switches), so it
 * pins ss's text and the JSON schema as they were.
 *
 *   test_render GOLDEN     compare (exit 1 and the first differing line)
 *   test_render            print the output (to regenerate the golden file:
 *                          only for a deliberate change of the output)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "cli/fields/field.h"
#include "cli/render/output.h"
#include "tests/blob_util.h"

#define NREC 18

static struct sdiag_sock recs[NREC];
static struct fblobs blobs[NREC];	/* the records' kernel structs (views) */
static size_t nrec;
#define TB(s) (&blobs[(s) - recs])

static const uint8_t abstract_name[] = "\0bus\0x\x01\xff";
static const uint8_t weird_path[] = "/run/q\"uote\\\tz";
static const uint32_t icons[] = { 77, 78 };
static const uint32_t groups[] = { 0x41, 0x80000000u, 0x3 };
static const struct sdiag_packet_mclist mcl[] = {
	{ .index = 1, .count = 1, .type = 1, .alen = 6, .addr = { 1, 2, 3, 4, 5, 6 } },
};
static const struct sdiag_proc procs[] = {
	{ .pid = 42, .fd = 3, .comm = "nginx" }, { .pid = 43, .fd = 7, .comm = "we\"ird\x01" },
};

/* SCTP address lists as sctp_diag sends them: whole sockaddr_storage entries. */
static uint8_t sctp_l6[2][128], sctp_l4[2][128], sctp_p4[9][128];

static void sctp_put(uint8_t *e, int family, const uint8_t *addr, uint16_t port)
{
	if (family == AF_INET) {
		struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };

		memcpy(&sin.sin_addr, addr, 4);
		memcpy(e, &sin, sizeof(sin));
	} else {
		struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_port = htons(port) };

		memcpy(&sin6.sin6_addr, addr, 16);
		memcpy(e, &sin6, sizeof(sin6));
	}
}

static struct sdiag_sock *add(enum sdiag_table table, int family, uint8_t state)
{
	struct sdiag_sock *s = &recs[nrec++];

	s->table = table;
	s->family = (uint8_t)family;
	s->state = state;
	s->inode = 1000 + nrec;
	s->cookie = 0xabc0 + nrec;
	s->has = SDIAG_HAS_INODE | SDIAG_HAS_COOKIE | SDIAG_HAS_QUEUES | SDIAG_HAS_UID;
	s->rqueue = (uint32_t)nrec;
	s->wqueue = 100 * (uint32_t)nrec;
	t_blob_attach(s, SDIAG_BLOB_TCP_INFO, &TB(s)->tcp_info, sizeof(TB(s)->tcp_info));
	t_blob_attach(s, SDIAG_BLOB_MPTCP_INFO, &TB(s)->mptcp_info, sizeof(TB(s)->mptcp_info));
	t_blob_attach(s, SDIAG_BLOB_MEMINFO, &TB(s)->meminfo, sizeof(TB(s)->meminfo));
	t_blob_attach(s, SDIAG_BLOB_SKMEMINFO, TB(s)->skmem, sizeof(TB(s)->skmem));
	t_blob_attach(s, SDIAG_BLOB_VEGAS, &TB(s)->vegas, sizeof(TB(s)->vegas));
	t_blob_attach(s, SDIAG_BLOB_DCTCP, &TB(s)->dctcp, sizeof(TB(s)->dctcp));
	t_blob_attach(s, SDIAG_BLOB_BBR, &TB(s)->bbr, sizeof(TB(s)->bbr));
	for (int i = 0; i < SDIAG_SKMEM_VARS; i++)
		TB(s)->skmem[i] = (uint32_t)(i * 1000 + nrec);
	return s;
}

static void tcp_info_rich(struct sdiag_sock *s)
{
	struct sdiag_tcp_info *t = &TB(s)->tcp_info;

	s->has |= SDIAG_HAS_TCP_INFO;
	t->tcpi_state = 1;
	t->tcpi_options = 1 | 2 | 4 | 8 | 16 | 32;
	t->tcpi_snd_wscale = 7;
	t->tcpi_rcv_wscale = 9;
	t->tcpi_rto = 204000;
	t->tcpi_backoff = 2;
	t->tcpi_rtt = 12345;
	t->tcpi_rttvar = 999;
	t->tcpi_ato = 40000;
	t->tcpi_snd_mss = 1448;
	t->tcpi_pmtu = 1500;
	t->tcpi_rcv_mss = 536;
	t->tcpi_advmss = 1460;
	t->tcpi_snd_cwnd = 10;
	t->tcpi_snd_ssthresh = 7;
	t->tcpi_bytes_sent = 123456789;
	t->tcpi_bytes_retrans = 1;
	t->tcpi_bytes_acked = 99999;
	t->tcpi_bytes_received = 5;
	t->tcpi_segs_out = 8;
	t->tcpi_segs_in = 9;
	t->tcpi_data_segs_out = 3;
	t->tcpi_data_segs_in = 2;
	t->tcpi_last_data_sent = 10;
	t->tcpi_last_data_recv = 20;
	t->tcpi_last_ack_recv = 30;
	t->tcpi_pacing_rate = 2495171132000ULL;
	t->tcpi_max_pacing_rate = 125000;
	t->tcpi_delivery_rate = 999499;
	t->tcpi_delivered = 11;
	t->tcpi_delivered_ce = 1;
	t->tcpi_delivery_rate_app_limited = 1;
	t->tcpi_busy_time = 3000000;
	t->tcpi_rwnd_limited = 1000000;
	t->tcpi_sndbuf_limited = 2;
	t->tcpi_unacked = 4;
	t->tcpi_retrans = 0;
	t->tcpi_total_retrans = 6;
	t->tcpi_lost = 1;
	t->tcpi_sacked = 2;
	t->tcpi_dsack_dups = 3;
	t->tcpi_fackets = 4;
	t->tcpi_reordering = 0;
	t->tcpi_reord_seen = 5;
	t->tcpi_rcv_rtt = 1000;
	t->tcpi_rcv_space = 14600;
	t->tcpi_rcv_ssthresh = 64000;
	t->tcpi_notsent_bytes = 100;
	t->tcpi_min_rtt = 15;
	t->tcpi_rcv_ooopack = 1;
	t->tcpi_snd_wnd = 65535;
	t->tcpi_rcv_wnd = 65536;
	t->tcpi_rehash = 1;
	t->tcpi_total_rto = 2;
}

static void build(void)
{
	static const uint8_t v6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	struct sdiag_sock *s;

	/* TCP over IPv4: everything -e, -o, -m, -i, --tos and --inet-sockopt show. */
	s = add(SDIAG_T_TCP, AF_INET, SDIAG_SS_ESTABLISHED);
	memcpy(s->inet.src, "\x7f\x00\x00\x01", 4);
	memcpy(s->inet.dst, "\x0a\x01\x02\x03", 4);
	s->inet.sport = 61999;
	s->inet.dport = 443;
	s->inet.ifindex = 4242;
	s->inet.timer = 2;
	s->inet.expires_ms = 83123;
	s->inet.retrans = 1;
	s->uid = 1000;
	s->shutdown = 1;
	s->inet.mark = 0x42;
	s->inet.cgroup_id = 0x7fffffff12345ULL;
	s->inet.tos = 0x10;
	s->inet.class_id = 0;
	s->inet.sockopt = 0x7ff;
	s->has |= SDIAG_HAS_TIMER | SDIAG_HAS_SHUTDOWN | SDIAG_HAS_MARK | SDIAG_HAS_CGROUP |
		  SDIAG_HAS_TOS | SDIAG_HAS_CLASS_ID | SDIAG_HAS_SOCKOPT | SDIAG_HAS_SKMEMINFO |
		  SDIAG_HAS_MEMINFO | SDIAG_HAS_CONG | SDIAG_HAS_DCTCP;
	TB(s)->meminfo = (struct sdiag_meminfo){ 1, 2, 3, 4 };
	tcp_info_rich(s);
	strcpy(s->inet.cong, "dctcp");
	TB(s)->dctcp = (struct sdiag_dctcp_info){ 1, 3, 1024, 5, 6 };
	s->procs = procs;
	s->n_procs = 2;

	/* TCP over IPv6, listening, v6only, bbr + vegas, mptcp, ulp, meminfo only. */
	s = add(SDIAG_T_TCP, AF_INET6, SDIAG_SS_LISTEN);
	memcpy(s->inet.src, v6, 16);
	s->inet.sport = 22;
	s->inet.v6only = 1;
	s->inet.tclass = 0x20;
	s->inet.timer = 0;
	s->has |= SDIAG_HAS_V6ONLY | SDIAG_HAS_TCLASS | SDIAG_HAS_TIMER | SDIAG_HAS_MEMINFO |
		  SDIAG_HAS_CONG | SDIAG_HAS_BBR | SDIAG_HAS_VEGAS | SDIAG_HAS_MPTCP_INFO |
		  SDIAG_HAS_ULP | SDIAG_HAS_DCTCP;
	tcp_info_rich(s);
	TB(s)->tcp_info.tcpi_rto = 3000000;
	TB(s)->tcp_info.tcpi_reordering = 3;
	TB(s)->tcp_info.tcpi_min_rtt = ~0U;
	TB(s)->tcp_info.tcpi_pacing_rate = ~0ULL;
	TB(s)->tcp_info.tcpi_snd_ssthresh = 0xffff;
	TB(s)->tcp_info.tcpi_busy_time = 0;
	TB(s)->tcp_info.tcpi_retrans = 1;
	strcpy(s->inet.cong, "bbr");
	TB(s)->bbr = (struct sdiag_bbr_info){ 0x2345, 1, 2500, 739, 512 };
	TB(s)->vegas = (struct sdiag_vegas_info){ 1, 2, 777, 5 };
	TB(s)->dctcp.enabled = 0;
	TB(s)->mptcp_info.mptcpi_subflows = 2;
	TB(s)->mptcp_info.mptcpi_flags = 3;
	TB(s)->mptcp_info.mptcpi_token = 0xdeadbeef;
	TB(s)->mptcp_info.mptcpi_write_seq = 0x123456789aULL;
	TB(s)->mptcp_info.mptcpi_bytes_sent = 77;
	strcpy(s->inet.ulp, "tls");

	/* UDP: -i shows nothing, so no empty detail line. */
	s = add(SDIAG_T_UDP, AF_INET, SDIAG_SS_CLOSE);
	s->inet.sport = 5353;
	s->has |= SDIAG_HAS_SKMEMINFO;

	/* raw IPv6 with its protocol, bound to a device */
	s = add(SDIAG_T_RAW, AF_INET6, SDIAG_SS_CLOSE);
	s->inet.sport = 58;
	s->inet.ifindex = 1;
	s->inet.raw_protocol = 58;
	s->has |= SDIAG_HAS_RAW_PROTO;

	/* SMC: its internal TCP socket's addresses, IPv6. */
	s = add(SDIAG_T_SMC, AF_SMC, SDIAG_SS_ESTABLISHED);
	memcpy(s->inet.src, v6, 16);
	memcpy(s->inet.dst, v6, 16);
	s->inet.sport = 1;
	s->inet.dport = 2;
	s->smc = (struct sdiag_smc){ 1, 0x5, 0x6 };
	s->has |= SDIAG_HAS_SMC_INFO | SDIAG_HAS_SHUTDOWN | SDIAG_HAS_SKMEMINFO;

	/* unix: abstract name with odd bytes, vfs, pending connections */
	s = add(SDIAG_T_UNIX_STREAM, AF_UNIX, SDIAG_SS_LISTEN);
	s->un.name = abstract_name;
	s->un.name_len = sizeof(abstract_name) - 1;
	s->un.vfs_ino = 5;
	s->un.vfs_dev = 254u << 20 | 3;
	s->un.icons = icons;
	s->un.n_icons = 2;
	s->shutdown = 2;
	s->has |= SDIAG_HAS_NAME | SDIAG_HAS_VFS | SDIAG_HAS_ICONS | SDIAG_HAS_SHUTDOWN |
		  SDIAG_HAS_SKMEMINFO;
	s = add(SDIAG_T_UNIX_DGRAM, AF_UNIX, SDIAG_SS_ESTABLISHED);
	s->un.name = weird_path;
	s->un.name_len = sizeof(weird_path);
	s->un.peer = 99;
	s->has |= SDIAG_HAS_NAME | SDIAG_HAS_PEER;

	/* netlink: rtnetlink with groups past 32, flags; a connected one */
	s = add(SDIAG_T_NETLINK, AF_NETLINK, SDIAG_SS_CLOSE);
	s->protocol = 0;
	s->nl.portid = 0;
	s->nl.groups = groups;
	s->nl.n_group_words = 3;
	s->nl.flags = 0x2a;
	s->has |= SDIAG_HAS_GROUPS | SDIAG_HAS_NL_FLAGS | SDIAG_HAS_SKMEMINFO;
	s = add(SDIAG_T_NETLINK, AF_NETLINK, SDIAG_SS_ESTABLISHED);
	s->protocol = 16;
	s->nl.portid = (uint32_t)-5;
	s->nl.dst_portid = 7;
	s->nl.dst_group = 3;

	/* packet: unknown ethertype, rings, fanout of an unknown type, mclist, filter */
	s = add(SDIAG_T_PACKET_RAW, AF_PACKET, SDIAG_SS_CLOSE);
	s->pkt.ethertype = 0x1234;
	s->pkt.info = (struct sdiag_packet_info){ 4242, 2, 1, 3, 4, 0 };
	s->pkt.rx_ring = (struct sdiag_packet_ring){ 65536, 2, 2048, 64, 60, 8, 1 };
	s->pkt.tx_ring = (struct sdiag_packet_ring){ 4096, 1, 1024, 4, 0, 0, 0 };
	s->pkt.fanout = 77 | 9u << 16;
	s->pkt.mclist = mcl;
	s->pkt.n_mclist = 1;
	s->pkt.n_filter = 4;
	s->has |= SDIAG_HAS_PKT_INFO | SDIAG_HAS_RX_RING | SDIAG_HAS_TX_RING | SDIAG_HAS_FANOUT |
		  SDIAG_HAS_MCLIST | SDIAG_HAS_FILTER | SDIAG_HAS_SKMEMINFO;
	s = add(SDIAG_T_PACKET_DGRAM, AF_PACKET, SDIAG_SS_CLOSE);
	s->pkt.ethertype = 3;
	s->pkt.info.flags = 0x1f;
	s->pkt.fanout = 1 | 1u << 16;
	s->has |= SDIAG_HAS_PKT_INFO | SDIAG_HAS_FANOUT;

	/* vsock, xdp, tipc and an unknown family */
	s = add(SDIAG_T_VSOCK_STREAM, AF_VSOCK, SDIAG_SS_LISTEN);
	s->vsock = (struct sdiag_vsock){ UINT32_MAX, 1234, UINT32_MAX, UINT32_MAX };
	s = add(SDIAG_T_XDP, AF_XDP, SDIAG_SS_CLOSE);
	s->xdp = (struct sdiag_xdp){ .ifindex = 4242, .queue_id = 3, .rx_entries = 1,
				     .tx_entries = 2, .fill_entries = 3, .completion_entries = 4,
				     .umem_id = 5, .umem_num_pages = 6, .umem_chunk_size = 2048,
				     .umem_headroom = 8, .umem_ifindex = 4242, .umem_queue_id = 3,
				     .umem_flags = 3, .umem_refs = 2, .umem_size = 1ULL << 33,
				     .rx_dropped = 1, .rx_invalid = 2, .rx_full = 3,
				     .fill_empty = 4, .tx_invalid = 5, .tx_empty = 6 };
	s->has |= SDIAG_HAS_XDP_INFO | SDIAG_HAS_XDP_RINGS | SDIAG_HAS_XDP_UMEM |
		  SDIAG_HAS_XDP_STATS;
	s = add(SDIAG_T_TIPC, AF_TIPC, SDIAG_SS_ESTABLISHED);
	s->tipc = (struct sdiag_tipc){ 11, 12, 13, 14, 15, 16, true };
	s = add(SDIAG_T_TIPC, AF_TIPC, SDIAG_SS_LISTEN);
	s->tipc.ref = 3;
	s = add(SDIAG_T_TCP, 99, SDIAG_SS_CLOSE);

	/* SCTP, multi-homed: an IPv6 endpoint bound to an IPv6 and an IPv4
	 * address (locals only), and an IPv4 association with two addresses on
	 * each side and one more peer than the output shows (8). */
	s = add(SDIAG_T_SCTP, AF_INET6, SDIAG_SS_LISTEN);
	memcpy(s->inet.src, v6, 16);
	s->inet.sport = 9000;
	sctp_put(sctp_l6[0], AF_INET6, v6, 9000);
	sctp_put(sctp_l6[1], AF_INET, (uint8_t[]){ 10, 0, 1, 1 }, 9000);
	s->inet.sctp_locals = sctp_l6;
	s->inet.sctp_locals_len = sizeof(sctp_l6);
	s->has |= SDIAG_HAS_SCTP_LOCALS | SDIAG_HAS_SKMEMINFO;
	s = add(SDIAG_T_SCTP, AF_INET, SDIAG_SS_ESTABLISHED);
	memcpy(s->inet.src, (uint8_t[]){ 10, 0, 0, 1 }, 4);
	memcpy(s->inet.dst, (uint8_t[]){ 10, 0, 0, 2 }, 4);
	s->inet.sport = 9000;
	s->inet.dport = 99;
	sctp_put(sctp_l4[0], AF_INET, (uint8_t[]){ 10, 0, 0, 1 }, 9000);
	sctp_put(sctp_l4[1], AF_INET, (uint8_t[]){ 10, 0, 1, 1 }, 9000);
	s->inet.sctp_locals = sctp_l4;
	s->inet.sctp_locals_len = sizeof(sctp_l4);
	for (int i = 0; i < 9; i++)
		sctp_put(sctp_p4[i], AF_INET, (uint8_t[]){ 10, 0, (uint8_t)i, 2 }, 99);
	s->inet.sctp_peers = sctp_p4;
	s->inet.sctp_peers_len = sizeof(sctp_p4);
	s->has |= SDIAG_HAS_SCTP_LOCALS | SDIAG_HAS_SCTP_PEERS;
}

static const struct {
	const char *name;
	struct out_opts o;
} sets[] = {
	{ "plain", { .numeric = true } },
	{ "-o", { .numeric = true, .timers = true } },
	{ "-e", { .numeric = true, .ext = true } },
	{ "-m", { .numeric = true, .mem = true } },
	{ "-i", { .numeric = true, .info = true } },
	{ "-i (names)", { .info = true } },
	{ "--tos --inet-sockopt", { .numeric = true, .tos = true, .sockopt = true } },
	{ "-eimo --tos --inet-sockopt -p", { .numeric = true, .ext = true, .info = true,
	  .mem = true, .timers = true, .tos = true, .sockopt = true,
	  .columns = OUT_COL_PROCESS } },
	{ "-Oeimo", { .numeric = true, .oneline = true, .ext = true, .info = true, .mem = true,
	  .timers = true } },
	{ "-HQ", { .numeric = true, .no_header = true, .no_queues = true } },
};

/* Render every record under o into a string (malloc'd). */
static char *render(struct out_opts o, enum out_format fmt, bool extras, size_t *len)
{
	static const struct timespec ts = { 1700000000, 123456789 };
	struct out_extra x = { .result = "destroyed", .result_detail = "Operation \"x\"",
			       .netns = "ns\x01", .netns_inode = 4026531840u, .time = &ts };
	struct out *out;
	char *buf = NULL;
	int fd = memfd_create("render", 0);
	off_t n;

	if (fd < 0)
		return NULL;
	o.format = fmt;
	o.fd = fd;
	o.tables = ~0u;
	o.states = ~0u;
	if (extras)
		o.columns |= OUT_COL_TIME | OUT_COL_NETNS | OUT_COL_RESULT;
	if (out_new(&out, &o) < 0)
		goto out;
	for (size_t i = 0; i < nrec; i++)
		if (out_sock(out, &recs[i], extras ? &x : NULL) < 0)
			break;
	out_finish(out);
	out_free(out);
	n = lseek(fd, 0, SEEK_CUR);
	buf = malloc((size_t)n + 1);
	if (buf && pread(fd, buf, (size_t)n, 0) == n) {
		buf[n] = '\0';
		*len = (size_t)n;
	} else {
		free(buf);
		buf = NULL;
	}
out:
	close(fd);
	return buf;
}

int main(int argc, char **argv)
{
	static const char *const fmt_names[] = { "table", "json", "ndjson" };
	FILE *out = stdout;
	char *all = NULL, *golden = NULL;
	size_t all_len = 0, golden_len = 0, line = 1;
	int r = 1;

	setenv("TZ", "UTC", 1);
	build();
	if (argc > 1)
		out = open_memstream(&all, &all_len);
	if (!out)
		return 1;
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
		for (int f = OUT_TABLE; f <= OUT_NDJSON; f++)
			for (int extras = 0; extras < 2; extras++) {
				size_t len = 0;
				char *text = render(sets[i].o, (enum out_format)f, extras, &len);

				if (!text)
					return 1;
				fprintf(out, "== %s %s%s\n", sets[i].name, fmt_names[f],
					extras ? " +extras" : "");
				fwrite(text, 1, len, out);
				free(text);
			}
	if (argc == 1)
		return 0;
	fclose(out);
	{
		FILE *g = fopen(argv[1], "r");

		if (!g || getdelim(&golden, &golden_len, '\0', g) < 0) {
			fprintf(stderr, "test_render: cannot read %s\n", argv[1]);
			return 1;
		}
		golden_len = strlen(golden);
		fclose(g);
	}
	for (size_t i = 0; i < all_len || i < golden_len; i++) {
		if (i < all_len && i < golden_len && all[i] == golden[i]) {
			line += all[i] == '\n';
			continue;
		}
		fprintf(stderr, "test_render: output differs from %s at line %zu\n", argv[1], line);
		goto done;
	}
	printf("ok: %zu bytes as %s\n", all_len, argv[1]);
	r = 0;
done:
	free(all);
	free(golden);
	return r;
}
