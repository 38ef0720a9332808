/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOCKDIAG_GUARD_RTNL_H
#define SOCKDIAG_GUARD_RTNL_H

#include <sys/types.h>

#include "daemon/guard/guard.h"

struct nlmsghdr;
struct sd_nl;

struct grtnl {
	struct sd_nl *events;	/* link + address groups, non-blocking */
	struct sd_nl *dumps;
};

/* rcvbuf: the event socket's receive buffer in bytes, 0 = 4 MiB. */
int grtnl_open(struct grtnl *g, int rcvbuf);
void grtnl_close(struct grtnl *g);
int grtnl_event_fd(const struct grtnl *g);
/* Full dump of links and addresses into a new table (*ret, caller frees).
 * -EINTR: links or addresses changed during each of SD_NL_DUMP_TRIES tries
 * of one of the dumps (NLM_F_DUMP_INTR); nothing is returned then. */
int grtnl_dump(struct grtnl *g, struct guard_table *ret);
/* One datagram of events; -EAGAIN when none, -ENOBUFS when events were lost
 * (or one was cut short). Datagrams not sent by the kernel are skipped. */
ssize_t grtnl_read_events(struct grtnl *g, void *buf, size_t size);
/* The kernel's message (extended ACK) about the last failed dump, "" if none. */
const char *grtnl_ext_ack(const struct grtnl *g);
/* Discard every queued event (they predate an overflow). 0 when empty. */
int grtnl_drain(struct grtnl *g);

/* ---- route lookups (route_nl.c) ---------------------------------------------------------- */

struct guard_routes;

int guard_routes_open(struct guard_routes **ret);
void guard_routes_close(struct guard_routes *r);
/* A new pass: forget the answers of the last one. */
void guard_routes_reset(struct guard_routes *r);
/* The answer for k: from this pass's cache, or asked of the kernel. *ret is
 * valid until the next reset. Returns 0 or a negative errno (the lookup
 * itself failed; a route error is in (*ret)->err). */
int guard_routes_lookup(struct guard_routes *r, const struct guard_route_key *k,
			const struct guard_route_answer **ret);
/* Kernel lookups made since the last reset. */
size_t guard_routes_asked(const struct guard_routes *r);
/* Subscribe fd (an rtnetlink socket) to IPv4 and IPv6 route events, or leave them. */
int guard_routes_subscribe(int fd, bool on);

#endif
