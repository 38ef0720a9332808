/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Conntrack entries deleted together with sockets, over ctnetlink
 * (NETLINK_NETFILTER, libmnl), in one network namespace:
 *
 *  - a flow: the entry whose original or reply tuple is a socket's tuple
 *    (local -> peer). One IPCTNL_MSG_CT_DELETE naming that tuple finds it
 *    either way: the kernel's lookup hashes both directions of every entry.
 *    Requests go in batches, one sendmsg each, without acks: only failures
 *    are answered (ENOENT: no such entry).
 *  - a sweep: one dump of the table, a predicate on each entry's tuples,
 *    then a delete of each selected entry by original tuple, id and zone (an
 *    entry that was replaced meanwhile by one with the same tuple is kept).
 *
 * Used by `sockdiag kill --conntrack` and the guard's `conntrack = yes`.
 */
#ifndef SOCKDIAG_CT_H
#define SOCKDIAG_CT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sockdiag.h"

struct ct_tuple {
	uint8_t family; /* AF_INET or AF_INET6 */
	uint8_t proto;	/* IPPROTO_TCP, IPPROTO_UDP, ... */
	uint16_t sport, dport; /* host order */
	uint8_t src[16], dst[16];
};

/* One entry of a sweep, as dumped. */
struct ct_entry {
	struct ct_tuple orig, reply;
	uint32_t id;
	uint16_t zone;
};

struct ct;

/*
 * Open a ctnetlink socket in the network namespace of nsfd (-1: the current
 * one; another needs CAP_SYS_ADMIN over it). Returns 0; -ENOPROTOOPT when the
 * kernel has no connection tracking over netlink (nfnetlink or
 * nf_conntrack_netlink missing: see ct_strerror); another negative errno.
 */
int ct_open(struct ct **ret, int nsfd);
void ct_close(struct ct *c);
/* A one-line reason for the errors of this module. */
const char *ct_strerror(int err);

/* The tuple of an inet TCP/UDP socket as conntrack sees its packets from
 * this host: local -> peer, v4-mapped addresses as IPv4. False for sockets
 * without a peer or of other kinds. */
bool ct_tuple_of_sock(const struct sdiag_sock *s, struct ct_tuple *ret);

/* Delete the entry of each flow (n tuples). *ret_deleted: entries deleted.
 * Returns 0 or a negative errno (the first failure other than ENOENT). */
int ct_delete_flows(struct ct *c, const struct ct_tuple *t, size_t n, size_t *ret_deleted);

/* The flows of the n sockets whose result is SDIAG_DESTROYED (ct_tuple_of_sock),
 * their entries deleted: the one way every destroyer (guard, kill
 * --dead-backends) follows its destroys. *ret_deleted: entries deleted.
 * Returns 0 or a negative errno (-ENOMEM, or as ct_delete_flows). */
int ct_delete_destroyed(struct ct *c, struct sdiag_sock *const *v,
			const enum sdiag_destroy_result *res, size_t n, size_t *ret_deleted);

/* Dump the table and delete the entries match() selects. *ret_deleted:
 * entries deleted (one replaced or gone meanwhile is not counted). Returns 0
 * or a negative errno. */
typedef bool (*ct_match_fn)(const struct ct_entry *e, void *userdata);
int ct_sweep(struct ct *c, ct_match_fn match, void *userdata, size_t *ret_deleted);

/* The parser of a sweep's dump, on bytes (tests/fuzz/fuzz_ct.c,
 * tests/unit/test_ct.c): the data messages of one datagram of an
 * IPCTNL_MSG_CT_GET reply, walked as the transport walks them (sd_nl_first:
 * a message that runs past the datagram ends the walk); the transport's own
 * part of a dump (sequence, port, NLMSG_DONE and NLMSG_ERROR) is fuzz_transport's.
 * The entries match() selects are appended to d->v (d->n of them, realloc'ed:
 * the caller frees d->v); an entry without both tuples, or of another family
 * than IPv4 and IPv6, is skipped. Returns 0 or -ENOMEM. */
struct ct_dump {
	ct_match_fn match;
	void *userdata;
	struct ct_entry *v;
	size_t n, cap;
};
int ct_dump_datagram(struct ct_dump *d, const void *buf, size_t len);

/* Requests sent and replies read so far (for benchmarks). */
void ct_stats(const struct ct *c, uint64_t *ret_requests, uint64_t *ret_bytes_read);

#endif
