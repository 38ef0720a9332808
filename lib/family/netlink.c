/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * AF_NETLINK (net/netlink/diag.c): request builder and reply decoder.
 *
 * Reply: struct netlink_diag_msg, then NETLINK_DIAG_* attributes (enum starts
 * at 0). The group bitmap has as many words as the protocol has groups, so it
 * is handed on as a borrowed array of any length. The kernel reports a socket
 * that is both bound and subscribed twice; dump.c drops the second report.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include "lib/family/family.h"

/* Own copies of the uapi (include/uapi/linux/netlink_diag.h). */
struct nd_req {
	uint8_t family;
	uint8_t protocol;
	uint16_t pad;
	uint32_t ino; /* ignored by the kernel */
	uint32_t show;
	uint32_t cookie[2]; /* ignored by the kernel */
};

struct nd_msg {
	uint8_t family;
	uint8_t type;
	uint8_t protocol;
	uint8_t state;
	uint32_t portid;
	uint32_t dst_portid;
	uint32_t dst_group;
	uint32_t ino;
	uint32_t cookie[2];
};

#define ND_PROTO_ALL 255

enum {
	ND_SHOW_MEMINFO = 0x1,
	ND_SHOW_GROUPS = 0x2,
	ND_SHOW_FLAGS = 0x8,
};

enum {
	ND_ATTR_MEMINFO,
	ND_ATTR_GROUPS,
	ND_ATTR_RX_RING, /* dead since 4.6 (netlink mmap removed) */
	ND_ATTR_TX_RING,
	ND_ATTR_FLAGS,
	ND_ATTR_MAX
};

/* Kernel values of ndiag_state (sk_state of a netlink socket). */
enum {
	ND_STATE_DISCONNECTED = 0,
	ND_STATE_CONNECTED = 1,
	ND_STATE_UNCONNECTED = 7,
};

/* sd_attr_table() policy: minimum payload of each attribute decoded
 * (UINT16_MAX: any length); the dead ring attributes are skipped. */
static const uint16_t policy[ND_ATTR_MAX] = {
	[ND_ATTR_MEMINFO] = UINT16_MAX, /* copied min(len, ours) */
	[ND_ATTR_GROUPS] = UINT16_MAX,
	[ND_ATTR_FLAGS] = 4,
};

struct nlmsghdr *sd_netlink_request(void *buf, const struct sd_req *r)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nd_req *req;

	(void)r; /* the kernel ignores states; dump.c filters them */
	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req = mnl_nlmsg_put_extra_header(nlh, sizeof(*req));
	req->family = AF_NETLINK;
	req->protocol = ND_PROTO_ALL;
	/* Meminfo is nine u32 per socket and there are few netlink sockets. */
	req->show = ND_SHOW_MEMINFO | ND_SHOW_GROUPS | ND_SHOW_FLAGS;
	return nlh;
}

static uint8_t map_state(uint8_t state)
{
	switch (state) {
	case ND_STATE_CONNECTED:
		return SDIAG_SS_ESTABLISHED;
	case ND_STATE_DISCONNECTED:
	case ND_STATE_UNCONNECTED:
		return SDIAG_SS_CLOSE;
	default:
		return SDIAG_SS_UNKNOWN;
	}
}

static void put_attr(const struct nlattr *a, uint16_t type, struct sdiag_sock *s)
{
	const void *p = mnl_attr_get_payload(a);
	uint16_t len = mnl_attr_get_payload_len(a);

	switch (type) {
	case ND_ATTR_MEMINFO:
		/* No queue counters: like ss, show the memory. */
		sd_skmem_queues(s, p, len);
		break;
	case ND_ATTR_GROUPS:
		/* unsigned long[] in the kernel; as u32 words this is the same
		 * bit order on little-endian machines. */
		s->nl.groups = p;
		s->nl.n_group_words = len / sizeof(uint32_t);
		s->has |= SDIAG_HAS_GROUPS;
		break;
	case ND_ATTR_FLAGS:
		s->nl.flags = mnl_attr_get_u32(a);
		s->has |= SDIAG_HAS_NL_FLAGS;
		break;
	default:
		break;
	}
}

int sd_netlink_decode(const struct nlmsghdr *nlh, struct sdiag_sock *s)
{
	const struct nd_msg *m;
	const struct nlattr *tb[ND_ATTR_MAX];
	int r;

	r = sd_diag_header(nlh, sizeof(*m), AF_NETLINK, (const void **)&m);
	if (r <= 0)
		return r;

	s->table = SDIAG_T_NETLINK;
	s->family = AF_NETLINK;
	s->type = m->type;
	s->protocol = m->protocol;
	s->state = map_state(m->state);
	s->nl.portid = m->portid;
	s->nl.dst_portid = m->dst_portid;
	s->nl.dst_group = m->dst_group;
	s->inode = m->ino;
	s->cookie = (uint64_t)m->cookie[1] << 32 | m->cookie[0];
	s->has |= SDIAG_HAS_INODE | SDIAG_HAS_COOKIE;

	r = sd_attr_table(mnl_nlmsg_get_payload_offset(nlh, sizeof(*m)),
			  nlh->nlmsg_len - NLMSG_HDRLEN - sizeof(*m), policy, ND_ATTR_MAX, tb);
	if (r < 0)
		return r;
	for (uint16_t t = 0; t < ND_ATTR_MAX; t++)
		if (tb[t])
			put_attr(tb[t], t, s);
	return 1;
}
