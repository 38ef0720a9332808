/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The netlink transport (lib/core/transport.c): the only code of the tree that
 * sends to or receives from a netlink socket, for every protocol (sock_diag,
 * rtnetlink, ctnetlink). Internal: never exported from the shared library;
 * lib/ uses it through internal.h, daemon/ (which links the static archive)
 * includes this header.
 *
 * Four ways to talk, each with its failure modes handled here once:
 *  - dumps (sd_nl_dump_begin/next/end, sd_nl_dump_msg for one message at a
 *    time, or sd_nl_dump in one call): sequence and port checks, DONE/ERROR,
 *    MSG_TRUNC, a dump abandoned midway drained;
 *    NLM_F_DUMP_INTR (the kernel's table changed during the dump) makes the
 *    dump fail with -EINTR once read to its end; sd_nl_dump_retry() retries
 *    it SD_NL_DUMP_TRIES times in all, then returns -EINTR;
 *  - one request, one answer (sd_nl_request);
 *  - batches (sd_nl_batch): many requests in one sendmsg, without acks, the
 *    failures drained into one errno per request;
 *  - events (sd_nl_recv_event): multicast datagrams, ENOBUFS and MSG_TRUNC
 *    reported as lost events, datagrams not sent by the kernel skipped.
 * The kernel's extended-ACK message of the last failure is kept in the handle
 * (sd_nl_ext_ack); nothing here prints.
 */
#ifndef SDIAG_NL_H
#define SDIAG_NL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct nlmsghdr;
struct sd_nl;

/* Called for each data message. Return 0 to go on, negative to stop (a dump
 * is then drained so the socket stays usable). */
typedef int (*sd_msg_cb)(const struct nlmsghdr *nlh, void *data);

struct sd_nl_opts {
	int proto;	 /* NETLINK_SOCK_DIAG, NETLINK_ROUTE, NETLINK_NETFILTER... */
	uint32_t groups; /* multicast groups to join at bind (group g is bit g-1) */
	bool in_netns;	 /* open in the network namespace of nsfd (else: the current one) */
	int nsfd;
	int rcvbuf;	 /* bytes, forced past net.core.rmem_max when allowed; 0: default */
	int sndbuf;	 /* the same for sending; 0: default */
	bool nonblock;	 /* SOCK_NONBLOCK: a socket the caller polls */
	bool strict;	 /* NETLINK_GET_STRICT_CHK (rtnetlink: dump filters checked) */
};

/* Open and bind a netlink socket. A namespace other than the current one is
 * entered for the socket() call (CAP_SYS_ADMIN over it); the current one is
 * recognised and not entered. Returns 0 or a negative errno. */
int sd_nl_open_with(struct sd_nl **ret, const struct sd_nl_opts *o);
/* A NETLINK_SOCK_DIAG socket for dumps, here. */
int sd_nl_open(struct sd_nl **ret);
/* Wrap a datagram socket that plays the kernel (tests: one end of a
 * socketpair; the transport takes ownership of fd). */
int sd_nl_adopt(struct sd_nl **ret, int fd, uint32_t portid);
void sd_nl_close(struct sd_nl *nl);

int sd_nl_fd(const struct sd_nl *nl);
uint32_t sd_nl_portid(const struct sd_nl *nl);
/* The receive and send buffer sizes the kernel granted (0 if unknown). */
int sd_nl_rcvbuf(const struct sd_nl *nl);
int sd_nl_sndbuf(const struct sd_nl *nl);
/* A scratch buffer of at least 4 KiB to build one request in (dumps and
 * sd_nl_request send it). */
void *sd_nl_reqbuf(struct sd_nl *nl, size_t *ret_size);
/* The kernel's extended-ACK message (NLMSGERR_ATTR_MSG) of the last failed
 * request, dump or batch; "" when it gave none. Valid until the next call. */
const char *sd_nl_ext_ack(const struct sd_nl *nl);
/* Bytes read from dumps, answers and batches so far (benchmarks). */
uint64_t sd_nl_bytes_read(const struct sd_nl *nl);

/* ---- the messages of one datagram ------------------------------------------------------- */

/* for (m = sd_nl_first(buf, len, &left); m; m = sd_nl_next(m, &left)): every
 * whole message of a datagram; a message whose length is shorter than its
 * header or runs past the datagram ends the walk (libmnl 1.0.4 accepts
 * nlmsg_len >= 2^31). */
const struct nlmsghdr *sd_nl_first(const void *buf, size_t len, size_t *left);
const struct nlmsghdr *sd_nl_next(const struct nlmsghdr *nlh, size_t *left);

/* ---- dumps ------------------------------------------------------------------------------ */

/* How many times sd_nl_dump_retry() runs a dump the kernel marks interrupted. */
#define SD_NL_DUMP_TRIES 4

/* Send the request in the request buffer (nlmsg_len set) as a dump: sequence
 * number, port and NLM_F_REQUEST | NLM_F_DUMP are stamped. An unfinished
 * earlier dump is drained first. Returns 0 or a negative errno. */
int sd_nl_dump_begin(struct sd_nl *nl);
/*
 * Read one datagram of the dump begun and pass its data messages to cb
 * (ahead, may be NULL: to each data message of the datagram before cb sees the
 * first, to start loading what cb will need; its return is ignored).
 * Returns 1: read on; 0: the dump is complete; or a negative errno: the
 * kernel's (NLMSG_ERROR, DONE's payload), cb's, -EMSGSIZE (a datagram
 * truncated), -EINTR (the dump was complete but marked NLM_F_DUMP_INTR: its
 * records may be inconsistent), or the socket's.
 */
int sd_nl_dump_next(struct sd_nl *nl, sd_msg_cb ahead, sd_msg_cb cb, void *data);
/*
 * The dump begun, one data message at a time (the caller owns the loop, for
 * a pull-mode dump): *ret points into the receive buffer, valid until the
 * next call on nl. A datagram is read when the last one is used up (ahead as
 * for sd_nl_dump_next, once per datagram). Returns 1 (*ret set), 0: the dump
 * is complete, or a negative errno as sd_nl_dump_next. Not to be mixed with
 * sd_nl_dump_next within one dump.
 */
int sd_nl_dump_msg(struct sd_nl *nl, sd_msg_cb ahead, void *data, const struct nlmsghdr **ret);
/* Read and drop the rest of an unfinished dump (after a negative return of
 * cb, or a caller stopping early), so the socket can take the next request. */
void sd_nl_dump_end(struct sd_nl *nl);
/* begin, next until done, end: the whole dump. An interrupted dump is not
 * retried (its records already went to cb): -EINTR. */
int sd_nl_dump(struct sd_nl *nl, sd_msg_cb ahead, sd_msg_cb cb, void *data);
/* The dump, retried while the kernel marks it interrupted: restart(data)
 * discards what cb collected before each new try. After SD_NL_DUMP_TRIES
 * interrupted tries in a row: -EINTR. */
int sd_nl_dump_retry(struct sd_nl *nl, sd_msg_cb cb, int (*restart)(void *data), void *data);

/* ---- one request, one answer ------------------------------------------------------------ */

/* Send the request in the request buffer (NLM_F_REQUEST, a sequence number
 * and the port stamped) and pass its answer's data messages to cb, until
 * NLMSG_ERROR, DONE or a data message that is not part of a multi-part
 * answer. *ret_kerr: 0 or the kernel's negative errno (its answer). Returns
 * 0, or a negative errno for a failure to ask (the socket's) or cb's. */
int sd_nl_request(struct sd_nl *nl, sd_msg_cb cb, void *data, int *ret_kerr);

/* ---- batches ---------------------------------------------------------------------------- */

/*
 * Send the n messages at buf (len bytes, each NLMSG_ALIGNed) in one sendmsg
 * and collect the failures. Sequence numbers are stamped here: message i
 * gets the batch's base + i. Requests without NLM_F_ACK are answered only
 * when they fail; the kernel runs every message before sendmsg returns, so a
 * non-blocking drain of the receive queue finds every answer: errs[i]
 * becomes 0 (no answer, or an ACK) or the kernel's negative errno. When
 * answers were lost (ENOBUFS: the receive buffer overflowed), requests
 * without one get -ENOBUFS (outcome unknown). Returns 0, or a negative errno
 * for the batch as a whole (-EINVAL: buf does not hold n messages; the
 * send's errno).
 */
int sd_nl_batch(struct sd_nl *nl, void *buf, size_t len, int *errs, size_t n);

/* ---- events ----------------------------------------------------------------------------- */

/*
 * One datagram of a multicast socket into buf, without waiting. Returns its
 * length; -EAGAIN when none is queued; -ENOBUFS when events were lost (the
 * queue overflowed, or one came cut short: MSG_TRUNC); another negative
 * errno. Datagrams not sent by the kernel are skipped (a process able to
 * unicast to the socket must not fake an event). *ret_groups (may be NULL):
 * the groups the datagram was sent to.
 */
ssize_t sd_nl_recv_event(struct sd_nl *nl, void *buf, size_t size, uint32_t *ret_groups);
/* Up to SD_NL_EVENTS datagrams in one call (recvmmsg), without waiting, each
 * into its slot of buf (size / SD_NL_EVENTS bytes; an event longer than its
 * slot is lost). Returns 0 with ev filled: the datagrams the kernel sent,
 * those cut short (ev->cut: lost), whether the read was full (ev->more: more
 * may be queued; otherwise the queue was empty); -EAGAIN when none was
 * queued; -ENOBUFS when events were lost (the queue overflowed); another
 * negative errno. */
#define SD_NL_EVENTS 16
struct sd_nl_dgram {
	const void *data;
	size_t len;
	uint32_t groups;
};
struct sd_nl_events {
	unsigned n, cut;
	bool more;
	struct sd_nl_dgram d[SD_NL_EVENTS];
};
int sd_nl_recv_events(struct sd_nl *nl, void *buf, size_t size, struct sd_nl_events *ev);
/* Discard every queued datagram (events older than an overflow): 0 once the
 * queue is empty, or after 65536 datagrams on a host that never stops. */
int sd_nl_discard(struct sd_nl *nl);

/* ---- namespaces ------------------------------------------------------------------------- */

/* Run fn(arg) with the calling thread in the network namespace nsfd, then
 * return to the original one: sockets made by fn stay in that namespace.
 * Returns fn's result, or a negative errno if the namespace could not be
 * entered or left (the caller then undoes fn's work). */
int sd_in_netns(int nsfd, int (*fn)(void *arg), void *arg);

#endif
