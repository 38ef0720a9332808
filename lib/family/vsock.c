/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * AF_VSOCK (net/vmw_vsock/diag.c): request builder and reply decoder.
 *
 * Reply: struct vsock_diag_msg and no attributes. The kernel filters by
 * vdiag_states; vdiag_ino and vdiag_show are reserved and must be 0.
 * Unbound sockets are not listed by the kernel.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include "lib/family/family.h"

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

/* Own copies of the uapi (include/uapi/linux/vm_sockets_diag.h). */
struct vd_req {
	uint8_t family;
	uint8_t protocol; /* must be 0 */
	uint16_t pad;
	uint32_t states;
	uint32_t ino;  /* reserved, 0 */
	uint32_t show; /* reserved, 0 */
	uint32_t cookie[2];
};

struct vd_msg {
	uint8_t family;
	uint8_t type;
	uint8_t state;
	uint8_t shutdown;
	uint32_t src_cid;
	uint32_t src_port;
	uint32_t dst_cid;
	uint32_t dst_port;
	uint32_t ino;
	uint32_t cookie[2];
};

struct nlmsghdr *sd_vsock_request(void *buf, const struct sd_req *r)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct vd_req *req;

	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req = mnl_nlmsg_put_extra_header(nlh, sizeof(*req));
	req->family = AF_VSOCK;
	req->states = r->states;
	return nlh;
}

int sd_vsock_decode(const struct nlmsghdr *nlh, struct sdiag_sock *s)
{
	const struct vd_msg *m;
	int r;

	r = sd_diag_header(nlh, sizeof(*m), AF_VSOCK, (const void **)&m);
	if (r <= 0)
		return r;
	switch (m->type) {
	case SOCK_STREAM:
		s->table = SDIAG_T_VSOCK_STREAM;
		break;
	case SOCK_DGRAM:
		s->table = SDIAG_T_VSOCK_DGRAM;
		break;
	case SOCK_SEQPACKET:
		s->table = SDIAG_T_VSOCK_SEQPACKET;
		break;
	default:
		return 0;
	}

	s->family = AF_VSOCK;
	s->protocol = 0; /* no protocol numbers here */
	s->type = m->type;
	/* vsock uses the TCP state numbers (sk_state). */
	s->state = m->state < SDIAG_SS_MAX ? m->state : SDIAG_SS_UNKNOWN;
	s->shutdown = m->shutdown;
	s->vsock.src_cid = m->src_cid;
	s->vsock.src_port = m->src_port;
	s->vsock.dst_cid = m->dst_cid;
	s->vsock.dst_port = m->dst_port;
	s->inode = m->ino;
	s->cookie = (uint64_t)m->cookie[1] << 32 | m->cookie[0];
	s->has |= SDIAG_HAS_INODE | SDIAG_HAS_COOKIE | SDIAG_HAS_SHUTDOWN;
	return 1;
}
