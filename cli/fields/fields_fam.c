// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Field rows of the other families: unix (vfs, pending connections), netlink
 * (protocol, groups, flags), packet (info, rings, fanout, mclist) and xdp
 * (rings, umem, statistics). Their endpoints are in fields_ep.c.
 */

#include <linux/filter.h>

#include "cli/fields/field.h"

/* ---- unix ------------------------------------------------------------------------ */

static uint64_t dev_major(const struct fctx *c) { return c->s->un.vfs_dev >> 20; }
static uint64_t dev_minor(const struct fctx *c) { return c->s->un.vfs_dev & 0xfffff; }

static const struct field vfs_rows[] = {
	{ K("ino"), L(" ino:"), SK(un.vfs_ino) },
	{ K("dev_major"), L(" dev:"), .get = dev_major },
	{ K("dev_minor"), L("/"), .get = dev_minor },
};

static void pending_text(struct fctx *c, const struct field *f, uint64_t v)
{
	(void)f;
	(void)v;
	for (size_t i = 0; i < c->s->un.n_icons; i++) {
		obuf_putc(c->b, ' ');
		obuf_u64(c->b, c->s->un.icons[i]);
	}
}

static void pending_json(struct fctx *c, const struct field *f, uint64_t v)
{
	(void)v;
	fld_key(c, f);
	obuf_putc(c->b, '[');
	for (size_t i = 0; i < c->s->un.n_icons; i++) {
		if (i)
			obuf_putc(c->b, ',');
		obuf_u64(c->b, c->s->un.icons[i]);
	}
	obuf_putc(c->b, ']');
}

/* ---- netlink ----------------------------------------------------------------------- */

static const char *const nl_flag_names[] = {
	"cb_running", "pktinfo", "broadcast_error", "no_enobufs", "listen_all_nsid", "cap_ack",
};
#define N_NL_FLAGS (sizeof(nl_flag_names) / sizeof(nl_flag_names[0]))

/* The groups a socket listens to: numbers, or with names rtnetlink's names
 * where they have one (numbers otherwise, or left out when skip_unnamed). */
static void put_groups(struct fctx *c, bool names, bool json, bool skip_unnamed)
{
	const struct sdiag_netlink *nl = &c->s->nl;
	bool first = true;

	for (size_t w = 0; w < nl->n_group_words; w++)
		for (unsigned bit = 0; bit < 32; bit++) {
			unsigned g = (unsigned)w * 32 + bit + 1;
			const char *name = NULL;

			if (!(nl->groups[w] & (UINT32_C(1) << bit)))
				continue;
			if (names)
				name = sdiag_rtnl_group_name(g);
			if (!name && skip_unnamed)
				continue;
			if (!first)
				obuf_putc(c->b, ',');
			first = false;
			if (!name)
				obuf_u64(c->b, g);
			else if (json)
				obuf_json_cstr(c->b, name);
			else
				obuf_puts(c->b, name);
		}
}

static bool has_group_words(const struct fctx *c)
{
	return c->s->nl.n_group_words != 0;
}

static bool is_rtnl(const struct fctx *c)
{
	return c->s->protocol == 0;
}

static void groups_text(struct fctx *c, const struct field *f, uint64_t v)
{
	(void)f;
	(void)v;
	put_groups(c, c->s->protocol == 0, false, false);
}

static void groups_json(struct fctx *c, const struct field *f, uint64_t v)
{
	(void)v;
	fld_key(c, f);
	obuf_putc(c->b, '[');
	put_groups(c, false, true, false);
	obuf_putc(c->b, ']');
}

static void group_names_json(struct fctx *c, const struct field *f, uint64_t v)
{
	(void)v;
	fld_key(c, f);
	obuf_putc(c->b, '[');
	put_groups(c, true, true, true);
	obuf_putc(c->b, ']');
}

static void nl_flags_text(struct fctx *c, const struct field *f, uint64_t v)
{
	bool first = true;

	(void)f;
	for (unsigned i = 0; i < N_NL_FLAGS; i++) {
		if (!(v & (1u << i)))
			continue;
		if (!first)
			obuf_putc(c->b, ',');
		first = false;
		obuf_puts(c->b, nl_flag_names[i]);
	}
}

static void nl_flags_json(struct fctx *c, const struct field *f, uint64_t v)
{
	fld_json_bits(c, f, v, nl_flag_names, N_NL_FLAGS);
}

/* ---- packet -------------------------------------------------------------------------- */

static void pkt_flags_text(struct fctx *c, const struct field *f, uint64_t v)
{
	static const char *const names[] = { "running", "auxdata", "origdev", "vnethdr", "loss" };

	(void)f;
	for (unsigned i = 0; i < 5; i++)
		if (v & (1u << i)) {
			obuf_puts(c->b, names[i]);
			obuf_putc(c->b, ' ');
		}
	if (!v)
		obuf_puts(c->b, "0 ");
}

#define RING(k, l, m, ...) { K(k), L(l), AT(struct sdiag_packet_ring, m), __VA_ARGS__ }

static const struct field ring_rows[] = {
	RING("block_size", "blk_size:", block_size), RING("block_nr", ",blk_nr:", block_nr),
	RING("frame_size", ",frm_size:", frame_size), RING("frame_nr", ",frm_nr:", frame_nr),
	RING("retire_tmo", ",tmo:", retire_tmo), { K("sizeof_priv"),
	AT(struct sdiag_packet_ring, sizeof_priv) },
	RING("features", ",features:0x", features, .kind = FK_HEX),
};

static uint64_t fanout_id(const struct fctx *c) { return c->s->pkt.fanout & 0xffff; }
static uint64_t fanout_type(const struct fctx *c) { return c->s->pkt.fanout >> 16; }

static void fanout_type_text(struct fctx *c, const struct field *f, uint64_t v)
{
	static const char *const types[] = { "hash", "lb", "cpu", "roll", "random", "qm" };

	(void)f;
	if (v < 6) {
		obuf_puts(c->b, types[v]);
	} else {
		obuf_puts(c->b, "0x");
		obuf_hex(c->b, v);
	}
}

static const struct field fanout_rows[] = {
	{ K("id"), L("id:"), .get = fanout_id },
	{ K("type"), L(",type:"), .get = fanout_type, .text = fanout_type_text },
};

static void mclist_json(struct fctx *c, const struct field *f, uint64_t v)
{
	const struct sdiag_packet *p = &c->s->pkt;
	struct obuf *b = c->b;

	(void)v;
	fld_key(c, f);
	obuf_putc(b, '[');
	for (size_t i = 0; i < p->n_mclist; i++) {
		const struct sdiag_packet_mclist *m = &p->mclist[i];

		if (i)
			obuf_putc(b, ',');
		obuf_puts(b, "{\"ifindex\":");
		obuf_u64(b, m->index);
		obuf_puts(b, ",\"count\":");
		obuf_u64(b, m->count);
		obuf_puts(b, ",\"type\":");
		obuf_u64(b, m->type);
		obuf_puts(b, ",\"addr\":\"");
		obuf_hexbytes(b, m->addr, m->alen < sizeof(m->addr) ? m->alen : sizeof(m->addr));
		obuf_puts(b, "\"}");
	}
	obuf_putc(b, ']');
}

/* -b: the classic BPF program, ss's layout / [[code,jt,jf,k],...]. */
static void bpf_text(struct fctx *c, const struct field *f, uint64_t v)
{
	const struct sock_filter *insn = c->s->pkt.filter;

	(void)f;
	(void)v;
	obuf_printf(c->b, "%zu): ", c->s->pkt.n_filter);
	for (size_t i = 0; i < c->s->pkt.n_filter; i++)
		obuf_printf(c->b, " 0x%02x %u %u %u,", insn[i].code, insn[i].jt, insn[i].jf,
			    insn[i].k);
}

static void bpf_json(struct fctx *c, const struct field *f, uint64_t v)
{
	const struct sock_filter *insn = c->s->pkt.filter;

	(void)v;
	fld_key(c, f);
	obuf_putc(c->b, '[');
	for (size_t i = 0; i < c->s->pkt.n_filter; i++)
		obuf_printf(c->b, "%s[%u,%u,%u,%u]", i ? "," : "", insn[i].code, insn[i].jt,
			    insn[i].jf, insn[i].k);
	obuf_putc(c->b, ']');
}

#define PI(k, m, ...) { K(k), SK(pkt.info.m), .has = SDIAG_HAS_PKT_INFO, __VA_ARGS__ }

static const struct field packet_rows[] = {
	PI("version", version, L("ver:"), .flags = FL_TSEP, .t = T_PKT_INFO),
	PI("reserve", reserve),
	PI("copy_thresh", copy_thresh, L(" cpy_thresh:"), .t = T_PKT_INFO),
	PI("tstamp", tstamp),
	PI("flags", flags, L(" flags( "), .tail = ")", .t = T_PKT_INFO, .text = pkt_flags_text),
	{ K("rx_ring"), L("ring_rx("), .tail = ")", .kind = FK_GROUP, SUB(ring_rows),
	  .off = offsetof(struct sdiag_sock, pkt.rx_ring), .has = SDIAG_HAS_RX_RING,
	  .flags = FL_TSEP, .t = T_PKT_RX },
	{ K("tx_ring"), L("ring_tx("), .tail = ")", .kind = FK_GROUP, SUB(ring_rows),
	  .off = offsetof(struct sdiag_sock, pkt.tx_ring), .has = SDIAG_HAS_TX_RING,
	  .flags = FL_TSEP, .t = T_PKT_TX },
	{ K("fanout"), L("fanout("), .tail = ")", .kind = FK_GROUP, SUB(fanout_rows),
	  .has = SDIAG_HAS_FANOUT, .flags = FL_TSEP, .t = T_PKT_FANOUT },
	{ K("mclist"), .has = SDIAG_HAS_MCLIST, .json = mclist_json },
	{ K("filter_len"), SK(pkt.n_filter), .has = SDIAG_HAS_FILTER },
};

/* ---- xdp ------------------------------------------------------------------------------ */

static bool has_rings(const struct fctx *c) { return c->s->has & SDIAG_HAS_XDP_RINGS; }
static bool has_umem(const struct fctx *c) { return c->s->has & SDIAG_HAS_XDP_UMEM; }
static uint64_t umem_zc(const struct fctx *c) { return c->s->xdp.umem_flags & 1; }

#define XR(k, l, pos, has_, ...) { K(#k), L(l), SK(xdp.k), .has = SDIAG_HAS_XDP_##has_, \
				    .t = T_XDP_##pos, __VA_ARGS__ }

static const struct field xdp_rows[] = {
	XR(rx_entries, "rx(entries:", RINGS, RINGS, .tail = ")", .flags = FL_TSEP),
	XR(tx_entries, " tx(entries:", RINGS, RINGS, .tail = ")"),
	/* In the text after the umem, and only with it. */
	{ K("fill_entries"), L(" fr(entries:"), .tail = ")", SK(xdp.fill_entries),
	  .t = T_XDP_UMEM + 1, .jwhen = has_rings, .twhen = has_umem },
	{ K("completion_entries"), L(" cr(entries:"), .tail = ")", SK(xdp.completion_entries),
	  .t = T_XDP_UMEM + 1, .jwhen = has_rings, .twhen = has_umem },
	XR(umem_id, "umem(id:", UMEM, UMEM, .flags = FL_TSEP),
	XR(umem_size, ",size:", UMEM, UMEM), XR(umem_num_pages, ",num_pages:", UMEM, UMEM),
	XR(umem_chunk_size, ",chunk_size:", UMEM, UMEM),
	XR(umem_headroom, ",headroom:", UMEM, UMEM), XR(umem_ifindex, ",ifindex:", UMEM, UMEM),
	XR(umem_queue_id, ",qid:", UMEM, UMEM),
	{ K("umem_flags"), SK(xdp.umem_flags), .has = SDIAG_HAS_XDP_UMEM },
	{ L(",zc:"), .get = umem_zc, .has = SDIAG_HAS_XDP_UMEM, .t = T_XDP_UMEM },
	XR(umem_refs, ",refs:", UMEM, UMEM, .tail = ")"),
	XR(rx_dropped, "stats(rx dropped:", STATS, STATS, .flags = FL_TSEP),
	XR(rx_invalid, ",rx invalid:", STATS, STATS), XR(rx_full, ",rx queue full:", STATS, STATS),
	XR(fill_empty, ",rx fill ring empty:", STATS, STATS),
	XR(tx_invalid, ",tx invalid:", STATS, STATS),
	XR(tx_empty, ",tx ring empty:", STATS, STATS, .tail = ")"),
};

const struct field fields_fam[] = {
	{ K("vfs"), L(""), .kind = FK_GROUP, SUB(vfs_rows), .fams = F_UNIX, .has = SDIAG_HAS_VFS,
	  .jopt = O_EXT, .topt = O_EXT, .t = T_VFS },
	{ K("pending"), L(" peers:"), .fams = F_UNIX, .has = SDIAG_HAS_ICONS, .jopt = O_EXT,
	  .topt = O_EXT, .t = T_PEERS, .text = pending_text, .json = pending_json },
	{ K("protocol"), SK(protocol), .fams = F_NETLINK },
	{ K("groups"), L(" groups:"), .fams = F_NETLINK, .has = SDIAG_HAS_GROUPS, .topt = O_EXT,
	  .t = T_NL_GROUPS, .twhen = has_group_words, .text = groups_text,
	  .json = groups_json },
	{ K("group_names"), .fams = F_NETLINK, .has = SDIAG_HAS_GROUPS, .jopt = O_EXT,
	  .jwhen = is_rtnl, .json = group_names_json },
	{ K("flags"), L(" flags:("), .tail = ")", SK(nl.flags), .fams = F_NETLINK,
	  .has = SDIAG_HAS_NL_FLAGS, .jopt = O_EXT, .topt = O_EXT, .flags = FL_TNZ,
	  .t = T_NL_FLAGS, .text = nl_flags_text, .json = nl_flags_json },
	/* ss puts a tab before netlink's skmem, even with -O */
	{ L("\t"), .kind = FK_LIT, .fams = F_NETLINK, .topt = O_MEM, .t = T_SKMEM },
	{ K("packet"), .kind = FK_GROUP, SUB(packet_rows), .fams = F_PACKET, .jopt = O_EXT,
	  .topt = O_EXT },
	{ K("xdp"), .kind = FK_GROUP, SUB(xdp_rows), .fams = F_XDP, .jopt = O_EXT, .topt = O_EXT },
	{ K("bpf_filter"), L("bpf filter ("), .fams = F_PACKET, .has = SDIAG_HAS_FILTER,
	  .jopt = O_BPF, .topt = O_BPF, .flags = FL_TSEP, .t = T_BPF, .text = bpf_text,
	  .json = bpf_json },
};
const size_t fields_fam_n = sizeof(fields_fam) / sizeof(fields_fam[0]);
