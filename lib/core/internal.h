/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The library's lowest layer (lib/core/), seen by every other folder of lib/:
 *
 *   transport.c   netlink socket, send/recv, seq/portid checks, DONE/ERROR  (sd_nl_*);
 *                 the helpers every decoder uses (sd_diag_header, sd_copy_struct)
 *   record.c      names, deep copy, lists
 *
 * Only transport.c and the family decoders (lib/family/) touch struct nlmsghdr.
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

/* The fixed header (size bytes) of a SOCK_DIAG_BY_FAMILY reply of family af,
 * every family's reply starting with its u8 family: 1 with *ret set, 0 when
 * the message is of another type or family (skip it), -EBADMSG if too short. */
int sd_diag_header(const struct nlmsghdr *nlh, size_t size, uint8_t af, const void **ret);

/* Copy min(len, size) bytes of an attribute payload into a local struct,
 * zero-filling the rest (uapi structs grow between kernels). */
void sd_copy_struct(void *dst, size_t size, const void *src, size_t len);

#endif
