/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * AF_PACKET (net/packet/diag.c): request builder and reply decoder.
 *
 * Reply: struct packet_diag_msg, then PACKET_DIAG_* attributes (enum starts
 * at 0). Packet sockets have no state; they are reported as CLOSE ("UNCONN").
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include "lib/family/family.h"

/* Own copies of the uapi (include/uapi/linux/packet_diag.h). */
struct pd_req {
	uint8_t family;
	uint8_t protocol; /* must be 0 */
	uint16_t pad;
	uint32_t ino; /* ignored */
	uint32_t show;
	uint32_t cookie[2]; /* ignored */
};

struct pd_msg {
	uint8_t family;
	uint8_t type;
	uint16_t num; /* bound ethertype, host order */
	uint32_t ino;
	uint32_t cookie[2];
};

enum {
	PD_SHOW_INFO = 0x01,
	PD_SHOW_MCLIST = 0x02,
	PD_SHOW_RING_CFG = 0x04,
	PD_SHOW_FANOUT = 0x08,
	PD_SHOW_MEMINFO = 0x10,
	PD_SHOW_FILTER = 0x20,
};

enum {
	PD_ATTR_INFO,
	PD_ATTR_MCLIST,
	PD_ATTR_RX_RING,
	PD_ATTR_TX_RING,
	PD_ATTR_FANOUT,
	PD_ATTR_UID,
	PD_ATTR_MEMINFO,
	PD_ATTR_FILTER,
	PD_ATTR_MAX
};

#define PD_MCLIST_SIZE 44     /* struct packet_diag_mclist */
#define PD_FILTER_INSN_SIZE 8 /* struct sock_filter */

_Static_assert(sizeof(struct sdiag_packet_mclist) == PD_MCLIST_SIZE, "mclist layout");
_Static_assert(sizeof(struct sdiag_packet_info) == 24, "packet info layout");
_Static_assert(sizeof(struct sdiag_packet_ring) == 28, "packet ring layout");

/* sd_attr_table() policy: minimum payload of each attribute decoded
 * (UINT16_MAX: any length; structs that may grow are copied min(len, ours)). */
static const uint16_t policy[PD_ATTR_MAX] = {
	[PD_ATTR_INFO] = UINT16_MAX,	[PD_ATTR_MCLIST] = UINT16_MAX,
	[PD_ATTR_RX_RING] = UINT16_MAX, [PD_ATTR_TX_RING] = UINT16_MAX,
	[PD_ATTR_FANOUT] = 4,		[PD_ATTR_UID] = 4,
	[PD_ATTR_MEMINFO] = UINT16_MAX, [PD_ATTR_FILTER] = UINT16_MAX,
};

struct nlmsghdr *sd_packet_request(void *buf, const struct sd_req *r)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct pd_req *req;

	(void)r; /* no states, no protocol filter: the kernel refuses protocol != 0 */
	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req = mnl_nlmsg_put_extra_header(nlh, sizeof(*req));
	req->family = AF_PACKET;
	req->show = PD_SHOW_INFO | PD_SHOW_MCLIST | PD_SHOW_RING_CFG | PD_SHOW_FANOUT |
		    PD_SHOW_MEMINFO | PD_SHOW_FILTER;
	return nlh;
}

static void put_attr(const struct nlattr *a, uint16_t type, struct sdiag_sock *s)
{
	const void *p = mnl_attr_get_payload(a);
	uint16_t len = mnl_attr_get_payload_len(a);

	switch (type) {
	case PD_ATTR_INFO:
		sd_copy_struct(&s->pkt.info, sizeof(s->pkt.info), p, len);
		s->has |= SDIAG_HAS_PKT_INFO;
		break;
	case PD_ATTR_MCLIST:
		/* A nest holding a bare array, not attributes; present even if empty. */
		s->pkt.mclist = len >= PD_MCLIST_SIZE ? p : NULL;
		s->pkt.n_mclist = len / PD_MCLIST_SIZE;
		s->has |= SDIAG_HAS_MCLIST;
		break;
	case PD_ATTR_RX_RING:
		sd_copy_struct(&s->pkt.rx_ring, sizeof(s->pkt.rx_ring), p, len);
		s->has |= SDIAG_HAS_RX_RING;
		break;
	case PD_ATTR_TX_RING:
		sd_copy_struct(&s->pkt.tx_ring, sizeof(s->pkt.tx_ring), p, len);
		s->has |= SDIAG_HAS_TX_RING;
		break;
	case PD_ATTR_FANOUT:
		s->pkt.fanout = mnl_attr_get_u32(a);
		s->has |= SDIAG_HAS_FANOUT;
		break;
	case PD_ATTR_UID:
		s->uid = mnl_attr_get_u32(a);
		s->has |= SDIAG_HAS_UID;
		break;
	case PD_ATTR_MEMINFO:
		/* No queue counters: like ss, show the memory. */
		sd_skmem_queues(s, p, len);
		break;
	case PD_ATTR_FILTER:
		/* Zero-length when the requester lacks CAP_NET_ADMIN: a filter is
		 * attached but its program is hidden (has bit set, n_filter 0). */
		s->pkt.filter = len >= PD_FILTER_INSN_SIZE ? p : NULL;
		s->pkt.n_filter = len / PD_FILTER_INSN_SIZE;
		s->has |= SDIAG_HAS_FILTER;
		break;
	default:
		break;
	}
}

int sd_packet_decode(const struct nlmsghdr *nlh, struct sdiag_sock *s)
{
	const struct pd_msg *m;
	const struct nlattr *tb[PD_ATTR_MAX];
	int r;

	r = sd_diag_header(nlh, sizeof(*m), AF_PACKET, (const void **)&m);
	if (r <= 0)
		return r;
	switch (m->type) {
	case SOCK_RAW:
		s->table = SDIAG_T_PACKET_RAW;
		break;
	case SOCK_DGRAM:
		s->table = SDIAG_T_PACKET_DGRAM;
		break;
	default:
		return 0;
	}

	s->family = AF_PACKET;
	s->type = m->type;
	s->state = SDIAG_SS_CLOSE;
	s->protocol = m->num;
	s->pkt.ethertype = m->num;
	s->inode = m->ino;
	s->cookie = (uint64_t)m->cookie[1] << 32 | m->cookie[0];
	s->has |= SDIAG_HAS_INODE | SDIAG_HAS_COOKIE;

	r = sd_attr_table(mnl_nlmsg_get_payload_offset(nlh, sizeof(*m)),
			  nlh->nlmsg_len - NLMSG_HDRLEN - sizeof(*m), policy, PD_ATTR_MAX, tb);
	if (r < 0)
		return r;
	for (uint16_t t = 0; t < PD_ATTR_MAX; t++)
		if (tb[t])
			put_attr(tb[t], t, s);
	return 1;
}
