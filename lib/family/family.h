/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The per-family decoders (lib/family/, one file per family): each a request
 * builder sd_<fam>_request() and a reply decoder sd_<fam>_decode(), driven by
 * attribute policy tables. Above the transport, below everything else.
 */
#ifndef SDIAG_FAMILY_H
#define SDIAG_FAMILY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/core/internal.h"

/* ---- the inet request on the wire (inet.c builds dumps, lib/ops/destroy_nl.c
 * SOCK_DESTROY): our own copy of linux/inet_diag.h's struct inet_diag_req_v2 -- */

struct sd_inet_sockid {
	uint16_t sport; /* network order */
	uint16_t dport;
	uint32_t src[4]; /* network order; IPv4 in [0] */
	uint32_t dst[4];
	uint32_t ifindex;
	uint32_t cookie[2]; /* low word, high word */
};

struct sd_inet_req_v2 {
	uint8_t family;
	uint8_t protocol;
	uint8_t ext;
	uint8_t raw_protocol; /* "pad" outside struct inet_diag_req_raw */
	uint32_t states;
	struct sd_inet_sockid id;
};

/* ---- per-family decoders ------------------------------------------------------ */

/* Everything a request builder needs to know. */
struct sd_req {
	uint8_t family;		/* AF_INET, AF_INET6, AF_UNIX, ... */
	uint16_t protocol;	/* inet: IPPROTO_*; 0 otherwise */
	uint32_t states;	/* SDIAG_STATE_BIT mask, never 0 */
	uint32_t show;		/* enum sdiag_show */
	uint32_t tables;	/* tables wanted (e.g. which unix types) */
	uint16_t sport, dport;	/* inet only: header pre-filter (host order), 0 = any */
	const void *bytecode;	/* inet only: INET_DIAG_REQ_BYTECODE payload, or NULL */
	size_t bytecode_len;
};

/*
 * A request builder writes a complete message (struct nlmsghdr with type
 * SOCK_DIAG_BY_FAMILY and flags NLM_F_REQUEST|NLM_F_DUMP, payload, attributes)
 * into buf and returns it. The transport fills in seq and portid.
 *
 * A decoder fills *s (zeroed by the caller) from one reply message.
 * Before the call the caller sets s->protocol to the sd_req.protocol of the
 * request the reply answers (0 for families without one): inet replies do not
 * say which protocol table they come from. The decoder sets s->table (and its
 * final s->protocol) itself. sd_inet_decode() without that hint (0) takes the
 * protocol from INET_DIAG_PROTOCOL (destroy broadcasts carry it) or, for
 * TCPDIAG_GETSOCK replies, TCP; otherwise it returns -EINVAL.
 * Returns 1 when *s is a record, 0 when the message is to be skipped
 * (not of the kind asked for), or a negative errno (-EBADMSG when malformed).
 * Borrowed pointers in *s point into nlh.
 * A request builder returns NULL when the request cannot fit (inet: bytecode
 * longer than the 4 KiB buffer allows).
 */
struct nlmsghdr *sd_inet_request(void *buf, const struct sd_req *r);
int sd_inet_decode(const struct nlmsghdr *nlh, struct sdiag_sock *s);
/* The socket inode of an inet reply, without decoding it; 0 when the
 * message is not one (for look-ahead: sd_nl_dump's ahead). */
uint64_t sd_inet_peek_inode(const struct nlmsghdr *nlh);
/* Decode a struct inet_diag_sockid (48 B, any alignment) into s->inet's
 * ports, addresses and ifindex and s->cookie (inet.c; SMC uses it too). */
void sd_inet_sockid_decode(const void *id, struct sdiag_sock *s);
/* Policy-driven attribute walk (inet.c): tb[type] = last attribute of each
 * type < n whose policy[type] is non-zero (payload at least policy[type]
 * bytes; UINT16_MAX = any length), others skipped. -EBADMSG when an
 * attribute is shorter than its policy or cut off at the end. */
int sd_attr_table(const void *payload, size_t len, const uint16_t *policy, size_t n,
		  const struct nlattr **tb);

struct nlmsghdr *sd_unix_request(void *buf, const struct sd_req *r);
int sd_unix_decode(const struct nlmsghdr *nlh, struct sdiag_sock *s);

struct nlmsghdr *sd_netlink_request(void *buf, const struct sd_req *r);
int sd_netlink_decode(const struct nlmsghdr *nlh, struct sdiag_sock *s);

struct nlmsghdr *sd_packet_request(void *buf, const struct sd_req *r);
int sd_packet_decode(const struct nlmsghdr *nlh, struct sdiag_sock *s);

struct nlmsghdr *sd_vsock_request(void *buf, const struct sd_req *r);
int sd_vsock_decode(const struct nlmsghdr *nlh, struct sdiag_sock *s);

struct nlmsghdr *sd_xdp_request(void *buf, const struct sd_req *r);
int sd_xdp_decode(const struct nlmsghdr *nlh, struct sdiag_sock *s);

struct nlmsghdr *sd_tipc_request(void *buf, const struct sd_req *r);
int sd_tipc_decode(const struct nlmsghdr *nlh, struct sdiag_sock *s);

struct nlmsghdr *sd_smc_request(void *buf, const struct sd_req *r);
int sd_smc_decode(const struct nlmsghdr *nlh, struct sdiag_sock *s);

#endif
