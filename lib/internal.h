/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private interfaces between the library's layers:
 *
 *   transport.c   netlink socket, send/recv, seq/portid checks, DONE/ERROR  (sd_nl_*)
 *   inet.c unix.c netlink.c packet.c vsock.c xdp.c tipc.c smc.c
 *                 one decoder per family: request builder + reply decoder  (sd_<fam>_*)
 *   record.c      names, deep copy, lists
 *   dump.c        which kernel dumps a query needs, dedupe, filter, callbacks
 *
 * Only transport.c and the family files touch struct nlmsghdr.
 */
#ifndef SDIAG_INTERNAL_H
#define SDIAG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sockdiag.h"

#define SD_EXPORT __attribute__((visibility("default")))

struct nlmsghdr;
struct nlattr;

/* ---- transport ------------------------------------------------------------ */

struct sd_nl;

/* Called for each data message of a dump. Return 0 to go on, negative to abort
 * (the dump is then drained so the socket stays usable). */
typedef int (*sd_msg_cb)(const struct nlmsghdr *nlh, void *data);

int sd_nl_open(struct sd_nl **ret);
void sd_nl_close(struct sd_nl *nl);
/* A scratch buffer of at least 4 KiB to build one request in. */
void *sd_nl_reqbuf(struct sd_nl *nl, size_t *ret_size);
/* The socket's descriptor (destroy.c asks it for its namespace). */
int sd_nl_fd(const struct sd_nl *nl);
/* The handle's diag socket descriptor (dump.c). */
int sd_handle_fd(const struct sdiag_handle *h);

/* The key dumps drop repeated records by: the cookie, and for an SCTP
 * association also its peer (it shares its socket's cookie) (dump.c). */
uint64_t sd_dedup_key(const struct sdiag_sock *s);
/*
 * Send the request in nl's request buffer (as built by a family's request
 * builder, with nlmsg_len set) as a dump, and call cb for every reply message
 * until NLMSG_DONE. Returns 0, the negative errno the kernel reported (in
 * NLMSG_ERROR or in DONE's payload), or cb's negative return.
 * ahead (may be NULL) is called for every data message of a datagram before
 * cb sees the first of them, to start loading what cb will need (its return
 * is ignored).
 */
int sd_nl_dump(struct sd_nl *nl, sd_msg_cb ahead, sd_msg_cb cb, void *data);

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

/* The fixed header (size bytes) of a SOCK_DIAG_BY_FAMILY reply of family af,
 * every family's reply starting with its u8 family: 1 with *ret set, 0 when
 * the message is of another type or family (skip it), -EBADMSG if too short. */
int sd_diag_header(const struct nlmsghdr *nlh, size_t size, uint8_t af, const void **ret);

/* Copy min(len, size) bytes of an attribute payload into a local struct,
 * zero-filling the rest (uapi structs grow between kernels). */
void sd_copy_struct(void *dst, size_t size, const void *src, size_t len);

/* ---- namespaces (netns.c) ------------------------------------------------------ */

/* Run fn(arg) with the calling thread in the network namespace nsfd, then
 * return to the original one. Returns fn's result, or a negative errno if the
 * namespace could not be entered or left (the caller then undoes fn's work). */
int sd_in_netns(int nsfd, int (*fn)(void *arg), void *arg);

/* ---- cgroups (cgroup.c) ------------------------------------------------------ */

/* The sorted, distinct ids of the cgroups sdiag_cgroup_walk(spec, unit)
 * visits. Returns 0 (*ret owned by the caller) or a negative errno. */
int sd_cgroup_ids(const char *spec, bool unit, uint64_t **ret, size_t *ret_n);

/* ---- filter hooks (filter.c; see sockdiag.h) --------------------------------- */

/* Compile the inet-applicable part of f to INET_DIAG_REQ_BYTECODE for one
 * address family. Returns the length written into *ret (caller frees), 0 when
 * nothing can be pushed down (no kernel filter), or a negative errno. */
int sd_filter_bytecode(const struct sdiag_filter *f, uint8_t family, void **ret);
/* The ports every socket matching f must have (a top-level "sport = N" or
 * "dport = N"), 0 where there is none: the inet request header's pre-filter. */
void sd_filter_exact_ports(const struct sdiag_filter *f, uint16_t *ret_sport, uint16_t *ret_dport);
/* True when no socket of table t can ever match f (so the dump is skipped). */
bool sd_filter_excludes_table(const struct sdiag_filter *f, enum sdiag_table t);

#endif
