/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private interface between destroy.c (the operation: what to destroy, retries,
 * results) and destroy_nl.c (the wire: a NETLINK_SOCK_DIAG socket of its own,
 * SOCK_DESTROY requests packed into one sendmsg, replies collected in bulk).
 */
#ifndef SDIAG_DESTROY_H
#define SDIAG_DESTROY_H

#include <stddef.h>
#include <stdint.h>

#include "lib/core/internal.h"

struct sd_dnl;

/*
 * Open a destroy socket in the network namespace of the socket behind
 * handle_fd (found with SIOCGSKNS, which needs CAP_NET_ADMIN over that
 * namespace: the very capability SOCK_DESTROY needs, so -EPERM here means no
 * socket there can be destroyed by us). Entering another namespace needs
 * CAP_SYS_ADMIN over it. Returns 0, -EPERM, or another negative errno.
 */
int sd_dnl_open(struct sd_dnl **ret, int handle_fd);
void sd_dnl_close(struct sd_dnl *d);

/* How many requests one batch may hold: bounded by SO_SNDBUF (the whole
 * sendmsg is rejected past it) and SO_RCVBUF (every failed request gets a
 * reply of ~800 bytes of truesize; replies past the buffer are dropped). */
unsigned sd_dnl_capacity(const struct sd_dnl *d);

/* Start an empty batch. */
void sd_dnl_reset(struct sd_dnl *d);

/*
 * Append a SOCK_DESTROY request naming s exactly as dumped (family,
 * protocol, the whole id with ifindex and cookie). variant > 0 replaces the
 * remote port with `variant`: the kernel's listener and unconnected-UDP
 * lookups ignore the remote side for matching but hash it to pick a
 * SO_REUSEPORT member. Returns 0, -ENOSPC when the batch is full, -EINVAL
 * for a record that cannot be named (not inet, no cookie).
 */
int sd_dnl_add(struct sd_dnl *d, const struct sdiag_sock *s, unsigned variant);

/* The message sd_dnl_add appends, written at buf (at least SD_DNL_MSG_MAX
 * bytes) with sequence number seq: a SOCK_DESTROY request without NLM_F_ACK.
 * Returns its length, or -EINVAL for a record that cannot be named. */
#define SD_DNL_MSG_MAX 80
int sd_dnl_build(void *buf, const struct sdiag_sock *s, unsigned variant, uint32_t seq);

/*
 * Send the batch in one sendmsg and collect the replies: errs[i] (n = the
 * number of requests added) becomes 0 or the kernel's negative errno for
 * request i. Requests go without NLM_F_ACK: the kernel runs them all before
 * sendmsg returns and answers only failures, so a request without a reply
 * succeeded. If replies were lost (ENOBUFS), requests without one get
 * -ENOBUFS (outcome unknown). Returns 0 or a negative errno for the batch.
 */
int sd_dnl_send(struct sd_dnl *d, int *errs, size_t n);

/*
 * Check that the kernel can destroy TCP sockets at all: a request naming no
 * socket (port 0, a cookie that is never handed out) gets ENOENT from a
 * kernel with CONFIG_INET_DIAG_DESTROY and EOPNOTSUPP from one without.
 * Returns 0, -EOPNOTSUPP, or another negative errno.
 */
int sd_dnl_probe(struct sd_dnl *d);

#endif
