/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOCKDIAG_GUARD_RTNL_H
#define SOCKDIAG_GUARD_RTNL_H

#include <sys/types.h>

#include "daemon/guard/guard.h"

struct mnl_socket;
struct nlmsghdr;

struct grtnl {
	struct mnl_socket *events;	/* link + address groups, non-blocking */
	struct mnl_socket *dumps;
	uint32_t seq;
};

/* rcvbuf: the event socket's receive buffer in bytes, 0 = 4 MiB. */
int grtnl_open(struct grtnl *g, int rcvbuf);
void grtnl_close(struct grtnl *g);
int grtnl_event_fd(const struct grtnl *g);
/* Full dump of links and addresses into a new table (*ret, caller frees). */
int grtnl_dump(struct grtnl *g, struct guard_table *ret);
/* One datagram of events; -EAGAIN when none, -ENOBUFS when events were lost
 * (or one was cut short). Datagrams not sent by the kernel are skipped. */
ssize_t grtnl_read_events(struct grtnl *g, void *buf, size_t size);
/* Discard every queued event (they predate an overflow). 0 when empty. */
int grtnl_drain(struct grtnl *g);

#endif
