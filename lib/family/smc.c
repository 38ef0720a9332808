/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * smc_diag: AF_SMC sockets (SMC-R, SMC-D and their TCP fallback).
 *
 * The kernel answers only dumps, of both SMC protocols at once, and ignores
 * any state mask (dump.c filters states). The record's inet part holds the
 * internal TCP (CLC) socket's ports, addresses and bound device.
 *
 * SMC's own states are mapped onto the TCP numbering of enum sdiag_state so
 * that state filters mean the same thing for every table:
 *   ACTIVE 1 -> ESTABLISHED, INIT 2 -> SYN_SENT, CLOSED 7 -> CLOSE,
 *   LISTEN 10 -> LISTEN, PEERCLOSEWAIT1 20 -> FIN_WAIT1,
 *   PEERCLOSEWAIT2 21 and PEERFINCLOSEWAIT 25 -> FIN_WAIT2 (we closed or shut
 *   our side, waiting for the peer), APPCLOSEWAIT1/2 22/23 and
 *   APPFINCLOSEWAIT 24 -> CLOSE_WAIT (the peer closed, waiting for us),
 *   PEERABORTWAIT 26 and PROCESSABORT 27 -> CLOSING; anything else UNKNOWN.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>

#include "lib/family/family.h"

#ifndef AF_SMC
#define AF_SMC 43
#endif

#define SD_SOCK_DIAG_BY_FAMILY 20

/* Our own copies of linux/smc_diag.h. */
struct sd_smc_req {
	uint8_t family;
	uint8_t pad[2];
	uint8_t ext;
	uint8_t id[48]; /* struct inet_diag_sockid, unused by dumps */
};

struct sd_smc_msg {
	uint8_t family;
	uint8_t state;
	uint8_t mode;
	uint8_t shutdown;
	uint8_t id[48]; /* struct inet_diag_sockid of the CLC socket */
	uint32_t uid;
	uint64_t inode; /* at offset 56 */
};

_Static_assert(sizeof(struct sd_smc_req) == 52, "smc_diag_req layout");
_Static_assert(sizeof(struct sd_smc_msg) == 64, "smc_diag_msg layout");

enum {
	SD_SMC_DIAG_CONNINFO = 1,
	SD_SMC_DIAG_LGRINFO,
	SD_SMC_DIAG_SHUTDOWN,
	SD_SMC_DIAG_DMBINFO,
	SD_SMC_DIAG_FALLBACK,
	SD_SMC_DIAG_MAX_KNOWN
};

static const uint16_t smc_policy[SD_SMC_DIAG_MAX_KNOWN] = {
	[SD_SMC_DIAG_SHUTDOWN] = 1,
	[SD_SMC_DIAG_FALLBACK] = 4, /* reason; peer_diagnosis may be missing */
};

struct nlmsghdr *sd_smc_request(void *buf, const struct sd_req *r)
{
	struct nlmsghdr *nlh;
	struct sd_smc_req *req;

	(void)r; /* no state mask, no details we decode */
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = SD_SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req = mnl_nlmsg_put_extra_header(nlh, sizeof(*req));
	req->family = AF_SMC;
	return nlh;
}

static uint8_t smc_state(uint8_t st)
{
	switch (st) {
	case 1:
		return SDIAG_SS_ESTABLISHED;
	case 2:
		return SDIAG_SS_SYN_SENT;
	case 7:
		return SDIAG_SS_CLOSE;
	case 10:
		return SDIAG_SS_LISTEN;
	case 20:
		return SDIAG_SS_FIN_WAIT1;
	case 21:
	case 25:
		return SDIAG_SS_FIN_WAIT2;
	case 22:
	case 23:
	case 24:
		return SDIAG_SS_CLOSE_WAIT;
	case 26:
	case 27:
		return SDIAG_SS_CLOSING;
	default:
		return SDIAG_SS_UNKNOWN;
	}
}

int sd_smc_decode(const struct nlmsghdr *nlh, struct sdiag_sock *s)
{
	const struct nlattr *tb[SD_SMC_DIAG_MAX_KNOWN];
	struct sd_smc_msg m;
	size_t hdr = MNL_ALIGN(sizeof(m));
	int r;

	if (nlh->nlmsg_type != SD_SOCK_DIAG_BY_FAMILY)
		return 0;
	if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + sizeof(m))
		return -EBADMSG;
	memcpy(&m, mnl_nlmsg_get_payload(nlh), sizeof(m));
	/* AF_SMC sockets, or (6.11+) AF_INET/AF_INET6 ones with IPPROTO_SMC. */
	if (m.family != AF_SMC && m.family != AF_INET && m.family != AF_INET6)
		return -EBADMSG;
	r = sd_attr_table((const uint8_t *)mnl_nlmsg_get_payload(nlh) + hdr,
			  mnl_nlmsg_get_payload_len(nlh) - hdr, smc_policy, SD_SMC_DIAG_MAX_KNOWN,
			  tb);
	if (r < 0)
		return r;

	s->table = SDIAG_T_SMC;
	s->family = m.family;
	s->type = SOCK_STREAM;
	s->state = smc_state(m.state);
	sd_inet_sockid_decode(m.id, s);
	s->uid = m.uid;
	s->inode = m.inode;
	s->has |= SDIAG_HAS_UID | SDIAG_HAS_INODE | SDIAG_HAS_SMC_INFO;
	s->smc.mode = m.mode;
	if (tb[SD_SMC_DIAG_SHUTDOWN]) {
		s->shutdown = mnl_attr_get_u8(tb[SD_SMC_DIAG_SHUTDOWN]) & 3;
		s->has |= SDIAG_HAS_SHUTDOWN;
	}
	if (tb[SD_SMC_DIAG_FALLBACK]) {
		uint32_t fb[2];

		sd_copy_struct(fb, sizeof(fb), mnl_attr_get_payload(tb[SD_SMC_DIAG_FALLBACK]),
			       mnl_attr_get_payload_len(tb[SD_SMC_DIAG_FALLBACK]));
		s->smc.fallback_reason = fb[0];
		s->smc.peer_diagnosis = fb[1];
	}
	return 1;
}
