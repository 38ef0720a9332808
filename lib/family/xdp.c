/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * AF_XDP (net/xdp/xsk_diag.c): request builder and reply decoder.
 *
 * Reply: struct xdp_diag_msg, then XDP_DIAG_* attributes (this enum does
 * start with a NONE entry). XDP sockets have no state: reported as CLOSE.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include "lib/family/family.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif

/* Own copies of the uapi (include/uapi/linux/xdp_diag.h). */
struct xd_req {
	uint8_t family;
	uint8_t protocol;
	uint16_t pad;
	uint32_t ino;
	uint32_t show;
	uint32_t cookie[2];
};

struct xd_msg {
	uint8_t family;
	uint8_t type;
	uint16_t pad;
	uint32_t ino;
	uint32_t cookie[2];
};

struct xd_info {
	uint32_t ifindex;
	uint32_t queue_id;
};

struct xd_umem {
	uint64_t size;
	uint32_t id;
	uint32_t num_pages;
	uint32_t chunk_size;
	uint32_t headroom;
	uint32_t ifindex;
	uint32_t queue_id;
	uint32_t flags;
	uint32_t refs;
};

struct xd_stats {
	uint64_t rx_dropped;
	uint64_t rx_invalid;
	uint64_t rx_full;
	uint64_t fill_ring_empty;
	uint64_t tx_invalid;
	uint64_t tx_ring_empty;
};

enum {
	XD_SHOW_INFO = 1 << 0,
	XD_SHOW_RING_CFG = 1 << 1,
	XD_SHOW_UMEM = 1 << 2,
	XD_SHOW_MEMINFO = 1 << 3,
	XD_SHOW_STATS = 1 << 4,
};

enum {
	XD_ATTR_NONE,
	XD_ATTR_INFO,
	XD_ATTR_UID,
	XD_ATTR_RX_RING,
	XD_ATTR_TX_RING,
	XD_ATTR_UMEM,
	XD_ATTR_UMEM_FILL_RING,
	XD_ATTR_UMEM_COMPLETION_RING,
	XD_ATTR_MEMINFO,
	XD_ATTR_STATS,
	XD_ATTR_MAX
};

/* sd_attr_table() policy: minimum payload of each attribute decoded
 * (UINT16_MAX: any length; structs are copied min(len, ours)). */
static const uint16_t policy[XD_ATTR_MAX] = {
	[XD_ATTR_INFO] = UINT16_MAX,
	[XD_ATTR_UID] = 4,
	[XD_ATTR_RX_RING] = 4,
	[XD_ATTR_TX_RING] = 4,
	[XD_ATTR_UMEM] = UINT16_MAX,
	[XD_ATTR_UMEM_FILL_RING] = 4,
	[XD_ATTR_UMEM_COMPLETION_RING] = 4,
	[XD_ATTR_MEMINFO] = UINT16_MAX,
	[XD_ATTR_STATS] = UINT16_MAX,
};

struct nlmsghdr *sd_xdp_request(void *buf, const struct sd_req *r)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct xd_req *req;

	(void)r; /* no states: dump.c filters them */
	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req = mnl_nlmsg_put_extra_header(nlh, sizeof(*req));
	req->family = AF_XDP;
	req->show = XD_SHOW_INFO | XD_SHOW_RING_CFG | XD_SHOW_UMEM | XD_SHOW_MEMINFO |
		    XD_SHOW_STATS;
	return nlh;
}

static void put_umem(struct sdiag_xdp *x, const void *p, size_t len)
{
	struct xd_umem u;

	sd_copy_struct(&u, sizeof(u), p, len);
	x->umem_size = u.size;
	x->umem_id = u.id;
	x->umem_num_pages = u.num_pages;
	x->umem_chunk_size = u.chunk_size;
	x->umem_headroom = u.headroom;
	x->umem_ifindex = u.ifindex;
	x->umem_queue_id = u.queue_id;
	x->umem_flags = u.flags;
	x->umem_refs = u.refs;
}

static void put_stats(struct sdiag_xdp *x, const void *p, size_t len)
{
	struct xd_stats st;

	sd_copy_struct(&st, sizeof(st), p, len);
	x->rx_dropped = st.rx_dropped;
	x->rx_invalid = st.rx_invalid;
	x->rx_full = st.rx_full;
	x->fill_empty = st.fill_ring_empty;
	x->tx_invalid = st.tx_invalid;
	x->tx_empty = st.tx_ring_empty;
}

static void put_attr(const struct nlattr *a, uint16_t type, struct sdiag_sock *s)
{
	const void *p = mnl_attr_get_payload(a);
	uint16_t len = mnl_attr_get_payload_len(a);
	struct xd_info info;

	switch (type) {
	case XD_ATTR_INFO:
		sd_copy_struct(&info, sizeof(info), p, len);
		s->xdp.ifindex = info.ifindex;
		s->xdp.queue_id = info.queue_id;
		s->has |= SDIAG_HAS_XDP_INFO;
		break;
	case XD_ATTR_UID:
		s->uid = mnl_attr_get_u32(a);
		s->has |= SDIAG_HAS_UID;
		break;
	case XD_ATTR_RX_RING:
		s->xdp.rx_entries = mnl_attr_get_u32(a);
		s->has |= SDIAG_HAS_XDP_RINGS;
		break;
	case XD_ATTR_TX_RING:
		s->xdp.tx_entries = mnl_attr_get_u32(a);
		s->has |= SDIAG_HAS_XDP_RINGS;
		break;
	case XD_ATTR_UMEM_FILL_RING:
		s->xdp.fill_entries = mnl_attr_get_u32(a);
		s->has |= SDIAG_HAS_XDP_RINGS;
		break;
	case XD_ATTR_UMEM_COMPLETION_RING:
		s->xdp.completion_entries = mnl_attr_get_u32(a);
		s->has |= SDIAG_HAS_XDP_RINGS;
		break;
	case XD_ATTR_UMEM:
		put_umem(&s->xdp, p, len);
		s->has |= SDIAG_HAS_XDP_UMEM;
		break;
	case XD_ATTR_MEMINFO:
		/* No queue counters: like ss, show the memory. */
		sd_skmem_queues(s, p, len);
		break;
	case XD_ATTR_STATS:
		put_stats(&s->xdp, p, len);
		s->has |= SDIAG_HAS_XDP_STATS;
		break;
	default:
		break;
	}
}

int sd_xdp_decode(const struct nlmsghdr *nlh, struct sdiag_sock *s)
{
	const struct xd_msg *m;
	const struct nlattr *tb[XD_ATTR_MAX];
	int r;

	r = sd_diag_header(nlh, sizeof(*m), AF_XDP, (const void **)&m);
	if (r <= 0)
		return r;

	s->table = SDIAG_T_XDP;
	s->family = AF_XDP;
	s->protocol = 0; /* no protocol numbers here */
	s->type = m->type;
	s->state = SDIAG_SS_CLOSE;
	s->inode = m->ino;
	s->cookie = (uint64_t)m->cookie[1] << 32 | m->cookie[0];
	s->has |= SDIAG_HAS_INODE | SDIAG_HAS_COOKIE;

	r = sd_attr_table(mnl_nlmsg_get_payload_offset(nlh, sizeof(*m)),
			  nlh->nlmsg_len - NLMSG_HDRLEN - sizeof(*m), policy, XD_ATTR_MAX, tb);
	if (r < 0)
		return r;
	for (uint16_t t = 0; t < XD_ATTR_MAX; t++)
		if (tb[t])
			put_attr(tb[t], t, s);
	return 1;
}
