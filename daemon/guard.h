/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sockdiag guard: close sockets stranded by a network change.
 *
 *   guard_config.c   the configuration file: parse and validate (line-numbered errors)
 *   guard_policy.c   the pure policy: (event, address table, socket) -> destroy or not
 *   guard_view.c     rtnetlink messages parsed into the view (pure); pending events
 *   guard_rtnl.c     rtnetlink sockets: link/address dumps, events, the drain after overflow
 *   guard.c          the event loop: rtnetlink + signalfd, resync, destroy, log
 */
#ifndef SOCKDIAG_GUARD_H
#define SOCKDIAG_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sockdiag.h"

/* ---- configuration ------------------------------------------------------------ */

struct guard_prefix {
	uint8_t family;		/* AF_INET or AF_INET6 */
	uint8_t len;		/* prefix length in bits */
	uint8_t addr[16];
};

struct guard_range {
	uint32_t lo, hi;
};

struct guard_config {
	uint32_t tcp_states;		/* SDIAG_STATE_BIT mask of TCP states destroyed */
	bool udp_connected;		/* destroy connected UDP sockets */
	bool exempt_loopback;		/* never touch loopback traffic */
	bool dry_run;			/* log what would be done, destroy nothing */
	struct guard_range *exempt_uids;
	size_t n_exempt_uids;
	uint64_t *exempt_cgroups;	/* cgroup v2 ids */
	size_t n_exempt_cgroups;
	struct { uint32_t mark, mask; } *exempt_marks;
	size_t n_exempt_marks;
	struct guard_prefix *exempt_dsts;
	size_t n_exempt_dsts;
};

/* Defaults: TCP ESTAB, SYN-SENT, SYN-RECV; connected UDP; loopback exempt. */
void guard_config_init(struct guard_config *c);
void guard_config_fini(struct guard_config *c);
/*
 * Parse a configuration file's text into *c (initialised with defaults first).
 * On error returns -EINVAL and writes "LINE: message" into err; *c is then
 * left initialised to defaults (callers keep their previous configuration).
 */
int guard_config_parse(struct guard_config *c, const char *text, const char *cgroup_root,
		       char *err, size_t errlen);
int guard_config_load(struct guard_config *c, const char *path, char *err, size_t errlen);

/* ---- addresses and events --------------------------------------------------------- */

struct guard_addr {
	int ifindex;
	uint8_t family;
	uint8_t prefixlen;
	uint8_t addr[16];
};

struct guard_link {
	int ifindex;
	bool up;		/* IFF_UP and IFF_LOWER_UP (carrier) */
	bool loopback;
	char name[16];
};

/* What the host has now: rebuilt by dumps, updated by events. */
struct guard_table {
	struct guard_addr *addrs;
	size_t n_addrs, cap_addrs;
	struct guard_link *links;
	size_t n_links, cap_links;
};

void guard_table_fini(struct guard_table *t);
int guard_table_add_addr(struct guard_table *t, const struct guard_addr *a);
bool guard_table_del_addr(struct guard_table *t, const struct guard_addr *a);
int guard_table_set_link(struct guard_table *t, const struct guard_link *l);
bool guard_table_del_link(struct guard_table *t, int ifindex);
const struct guard_link *guard_table_link(const struct guard_table *t, int ifindex);
/* Is addr assigned to any interface that is up or unknown (other than
 * skip_ifindex, 0 = none skipped)? An address on a down link strands its
 * sockets as surely as a removed one. */
bool guard_table_has_addr(const struct guard_table *t, uint8_t family, const uint8_t *addr,
			  int skip_ifindex);

enum guard_event_kind {
	GUARD_ADDR_REMOVED,	/* one address left an interface */
	GUARD_LINK_DOWN,	/* a link lost IFF_UP/carrier or was removed */
};

struct guard_event {
	enum guard_event_kind kind;
	int ifindex;
	/* ADDR_REMOVED: the address. LINK_DOWN: the addresses the link had. */
	const struct guard_addr *addrs;
	size_t n_addrs;
};

/* Why a socket is or is not destroyed (for logs and tests). */
enum guard_verdict {
	GUARD_KEEP_UNRELATED,	/* the event does not concern this socket */
	GUARD_KEEP_STATE,	/* a state the configuration does not destroy */
	GUARD_KEEP_LOOPBACK,
	GUARD_KEEP_UID,
	GUARD_KEEP_CGROUP,
	GUARD_KEEP_MARK,
	GUARD_KEEP_DST,
	GUARD_KEEP_STILL_ASSIGNED, /* the address still exists on another interface */
	GUARD_DESTROY,
};

const char *guard_verdict_name(enum guard_verdict v);

/* The policy: pure, no I/O. t is the table after the event was applied. */
enum guard_verdict guard_decide(const struct guard_config *c, const struct guard_table *t,
				const struct guard_event *e, const struct sdiag_sock *s);

/* ---- the view: rtnetlink messages -> table + pending events (guard_view.c, pure) ---------- */

struct nlmsghdr;

/* Events read in one go are acted upon together: one dump, one batch of destroys. */
struct guard_pending {
	struct guard_event *ev;
	size_t n, cap;
	char what[192];		/* the first events, for the log line */
	size_t described;
};

void guard_pending_clear(struct guard_pending *p);
void guard_pending_fini(struct guard_pending *p);
/* One rtnetlink message (length checked by the caller against its buffer)
 * applied to the view t; a removal or a link going down is added to p. */
int guard_view_apply(struct guard_table *t, struct guard_pending *p, const struct nlmsghdr *nlh);
/* After a resync: what the old view had and the new dump has not (links no
 * longer up, addresses gone) becomes pending in p. */
int guard_view_diff(const struct guard_table *old, const struct guard_table *now,
		    struct guard_pending *p);
/* The verdict over every pending event, judged against the current view t:
 * destroyed if any event strands the socket, else the reason one kept it. */
enum guard_verdict guard_decide_all(const struct guard_config *c, const struct guard_table *t,
				    const struct guard_pending *p, const struct sdiag_sock *s);
void guard_fmt_addr(const struct guard_addr *a, char *buf, size_t len);

/* The sockets an event can concern: TCP and UDP (UDP-Lite too), both families. */
#define GUARD_TABLES                                                                               \
	(SDIAG_TABLE_BIT(SDIAG_T_TCP) | SDIAG_TABLE_BIT(SDIAG_T_UDP) |                             \
	 SDIAG_TABLE_BIT(SDIAG_T_UDPLITE))

/* ---- the daemon ------------------------------------------------------------------------ */

int cmd_guard(int argc, char **argv);

#endif
