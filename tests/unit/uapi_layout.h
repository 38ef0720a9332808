/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The tests' own transcriptions of kernel message layouts, checked against
 * the installed uapi headers field by field at compile time: a test that
 * builds bytes through these structs builds the kernel's layout, and a
 * transcription that drifts (a field moved, resized or misnamed) stops the
 * build. Used by the decoders' tests for families this kernel cannot dump
 * (raw, SCTP, SMC, vsock, XDP, TIPC) and whose replies are hand-built.
 */
#ifndef SDIAG_TEST_UAPI_LAYOUT_H
#define SDIAG_TEST_UAPI_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include <linux/inet_diag.h>

/* OURS.F1 sits where the kernel's THEIRS.F2 does, with its size. */
#define SAME_FIELD(ours, f1, theirs, f2)                                                        \
	_Static_assert(offsetof(ours, f1) == offsetof(theirs, f2) &&                             \
			       sizeof(((ours *)0)->f1) == sizeof(((theirs *)0)->f2),             \
		       #ours "." #f1 " is not " #theirs "." #f2)
#define SAME_SIZE(ours, theirs) _Static_assert(sizeof(ours) == sizeof(theirs), #ours " size")

/* struct inet_diag_sockid: ports and addresses in network order. */
struct sockid_bytes {
	uint8_t sport[2], dport[2];
	uint8_t src[16], dst[16];
	uint32_t ifindex;
	uint32_t cookie[2];
};
SAME_FIELD(struct sockid_bytes, sport, struct inet_diag_sockid, idiag_sport);
SAME_FIELD(struct sockid_bytes, dport, struct inet_diag_sockid, idiag_dport);
SAME_FIELD(struct sockid_bytes, src, struct inet_diag_sockid, idiag_src);
SAME_FIELD(struct sockid_bytes, dst, struct inet_diag_sockid, idiag_dst);
SAME_FIELD(struct sockid_bytes, ifindex, struct inet_diag_sockid, idiag_if);
SAME_FIELD(struct sockid_bytes, cookie, struct inet_diag_sockid, idiag_cookie);
SAME_SIZE(struct sockid_bytes, struct inet_diag_sockid);

/* struct inet_diag_msg: the header of every inet reply (TCP, UDP, raw,
 * MPTCP, SCTP). */
struct inet_msg_bytes {
	uint8_t family, state, timer, retrans;
	struct sockid_bytes id;
	uint32_t expires, rqueue, wqueue, uid, inode;
};
SAME_FIELD(struct inet_msg_bytes, family, struct inet_diag_msg, idiag_family);
SAME_FIELD(struct inet_msg_bytes, state, struct inet_diag_msg, idiag_state);
SAME_FIELD(struct inet_msg_bytes, timer, struct inet_diag_msg, idiag_timer);
SAME_FIELD(struct inet_msg_bytes, retrans, struct inet_diag_msg, idiag_retrans);
SAME_FIELD(struct inet_msg_bytes, id, struct inet_diag_msg, id);
SAME_FIELD(struct inet_msg_bytes, expires, struct inet_diag_msg, idiag_expires);
SAME_FIELD(struct inet_msg_bytes, rqueue, struct inet_diag_msg, idiag_rqueue);
SAME_FIELD(struct inet_msg_bytes, wqueue, struct inet_diag_msg, idiag_wqueue);
SAME_FIELD(struct inet_msg_bytes, uid, struct inet_diag_msg, idiag_uid);
SAME_FIELD(struct inet_msg_bytes, inode, struct inet_diag_msg, idiag_inode);
SAME_SIZE(struct inet_msg_bytes, struct inet_diag_msg);

/* struct inet_diag_req_raw (and _v2, its alias with pad for the raw
 * protocol): what sd_inet_request() must send. */
struct inet_req_bytes {
	uint8_t family, protocol, ext, raw_protocol;
	uint32_t states;
	struct sockid_bytes id;
};
SAME_FIELD(struct inet_req_bytes, family, struct inet_diag_req_raw, sdiag_family);
SAME_FIELD(struct inet_req_bytes, protocol, struct inet_diag_req_raw, sdiag_protocol);
SAME_FIELD(struct inet_req_bytes, ext, struct inet_diag_req_raw, idiag_ext);
SAME_FIELD(struct inet_req_bytes, raw_protocol, struct inet_diag_req_raw, sdiag_raw_protocol);
SAME_FIELD(struct inet_req_bytes, states, struct inet_diag_req_raw, idiag_states);
SAME_FIELD(struct inet_req_bytes, id, struct inet_diag_req_raw, id);
SAME_SIZE(struct inet_req_bytes, struct inet_diag_req_raw);
SAME_FIELD(struct inet_req_bytes, raw_protocol, struct inet_diag_req_v2, pad);
SAME_SIZE(struct inet_req_bytes, struct inet_diag_req_v2);

#endif
