/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The guard's decisions and their configuration, free of the event loop and of
 * sockets (tests/tools/check-layers.py checks that no object here links a socket
 * call):
 *
 *   config.c   the configuration file: parse and validate (line-numbered errors)
 *   options.c  the keys of the grace, route and reap policies
 *   policy.c   the pure policy: (event, address table, socket) -> destroy or not
 *   view.c     rtnetlink messages parsed into the view (pure); pending events
 *   grace.c    removals held for the grace period, judged when it ends (pure)
 *   route.c    route changes: the key, the kernel's answer parsed, the stranded-source
 *              verdict (the lookups themselves: daemon/guard/route_nl.c)
 *
 * The loop (daemon/guard/) calls these; nothing here calls back into it.
 */
#ifndef SOCKDIAG_GUARD_CORE_H
#define SOCKDIAG_GUARD_CORE_H

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

/* reap = FILTER: sockets the filter selects are destroyed every reap-interval. */
struct guard_reap {
	char *expr;
	struct sdiag_filter *filter;
	unsigned line;			/* in the configuration file, for the log */
};

/* exempt-cgroup/only-cgroup and -unit values: a cgroup path (a subtree when
 * it ends in slash-two-stars) or a unit name, with the ids it stands for now. */
struct guard_cgroup {
	char *spec;
	bool unit;
	uint64_t *ids;		/* sorted; re-resolved by guard_config_resolve() */
	size_t n;
};

struct guard_config {
	uint32_t tcp_states;		/* SDIAG_STATE_BIT mask of TCP states destroyed */
	bool udp_connected;		/* destroy connected UDP sockets */
	bool exempt_loopback;		/* never touch loopback traffic */
	bool dry_run;			/* log what would be done, destroy nothing */
	struct guard_range *exempt_uids;
	size_t n_exempt_uids;
	struct guard_cgroup *exempt_cgroups;	/* never destroy sockets of these */
	size_t n_exempt_cgroups;
	struct guard_cgroup *only_cgroups;	/* if any: destroy only sockets of these */
	size_t n_only_cgroups;
	struct { uint32_t mark, mask; } *exempt_marks;
	size_t n_exempt_marks;
	struct guard_prefix *exempt_dsts;
	size_t n_exempt_dsts;
	uint32_t grace_ms;		/* grace = DURATION: 0 acts at once */
	bool on_route_change;		/* judge sources after route changes */
	struct guard_reap *reaps;
	size_t n_reaps;
	uint32_t reap_interval_ms;	/* default 60 s */
	uint32_t reap_max;		/* per rule and pass; above it the rule destroys nothing */
	char *backends_path;		/* dead-backends = PATH (absolute), or NULL */
	uint32_t backend_interval_ms;	/* default 10 s; 0 = only when the file changes */
	uint32_t backends_max;		/* dead-backends-max: a longer file is refused */
	bool conntrack;			/* delete the conntrack entries of what is destroyed */
};

struct conf_line;

/* options.c: the keys grace, on-route-change, reap, reap-interval,
 * reap-max, dead-backends, backend-interval, dead-backends-max and conntrack. Returns 1 when key is none of them, 0 when taken, -EINVAL after
 * conf_fail(), -ENOMEM. */
int guard_options_apply(struct guard_config *c, struct conf_line *l, const char *key,
			const char *value);
void guard_options_init(struct guard_config *c);
void guard_options_fini(struct guard_config *c);
/* "0", "500ms", "2s", "5m", "1h" -> milliseconds (at most 24 h). */
int guard_parse_duration(const char *s, uint32_t *ret_ms);

/* Defaults: TCP ESTAB, SYN-SENT, SYN-RECV; connected UDP; loopback exempt. */
void guard_config_init(struct guard_config *c);
void guard_config_fini(struct guard_config *c);
/*
 * Parse a configuration file's text into *c (initialised with defaults first).
 * On error returns -EINVAL and writes "LINE: message" into err; *c is then
 * left initialised to defaults (callers keep their previous configuration).
 */
int guard_config_parse(struct guard_config *c, const char *text, char *err, size_t errlen);
/* The same over len bytes: a NUL byte among them is an error naming its line. */
int guard_config_parse_buf(struct guard_config *c, const char *text, size_t len, char *err,
			   size_t errlen);
/* Read and parse a file: a regular file of at most 1 MiB (util/textfile.c);
 * err then says why not ("cannot open: ...", "not a regular file (a FIFO)"). */
int guard_config_load(struct guard_config *c, const char *path, char *err, size_t errlen);
/*
 * Resolve the cgroup paths and units of the configuration again against the
 * cgroup tree as it is now: a restarted service has a new cgroup (a new id);
 * one that is gone stands for nothing until it comes back. Returns the number
 * of values whose ids changed, or -ENOMEM.
 */
int guard_config_resolve(struct guard_config *c);

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
	GUARD_KEEP_NOT_ONLY,	/* only-cgroup/only-unit are set, and it is in none of them */
	GUARD_KEEP_MARK,
	GUARD_KEEP_DST,
	GUARD_KEEP_STILL_ASSIGNED, /* the address still exists on another interface */
	GUARD_KEEP_CAME_BACK,	/* picked, but what was removed is back before the destroy */
	GUARD_DESTROY,
};

const char *guard_verdict_name(enum guard_verdict v);

/* The policy: pure, no I/O. t is the table after the event was applied. */
enum guard_verdict guard_decide(const struct guard_config *c, const struct guard_table *t,
				const struct guard_event *e, const struct sdiag_sock *s);

/* ---- the view: rtnetlink messages -> table + pending events (view.c, pure) ---------- */

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
/*
 * A socket guard_decide_all() picked, judged again just before it is destroyed
 * against the view t as it is then (the events read after the socket dump
 * applied): an event whose removal came back (guard_event_came_back: the
 * address on its interface again, the link up again) strands nothing now.
 * GUARD_DESTROY if another event still strands it, else GUARD_KEEP_CAME_BACK
 * (or the reason another event gives).
 */
enum guard_verdict guard_recheck(const struct guard_config *c, const struct guard_table *t,
				 const struct guard_pending *p, const struct sdiag_sock *s);
void guard_fmt_addr(const struct guard_addr *a, char *buf, size_t len);
/* A link's name for logs: printable characters only, else "ifN" in buf. */
const char *guard_link_name(const struct guard_table *t, int ifindex, char buf[16]);

/* Rules 2 and 3 alone (state, exemptions): GUARD_DESTROY when the socket is
 * in a destroyed state and no exemption keeps it. For route changes and reaping. */
enum guard_verdict guard_decide_selected(const struct guard_config *c, const struct sdiag_sock *s);
/* The exemption that keeps every socket whose peer is addr (AF_INET or
 * AF_INET6, v4-mapped as IPv4): GUARD_KEEP_LOOPBACK, GUARD_KEEP_DST, or
 * GUARD_DESTROY (a dead backend the guard could close clients of). */
enum guard_verdict guard_exempt_peer(const struct guard_config *c, uint8_t family,
				     const uint8_t addr[16]);
/* The configuration key behind an exemption's verdict ("exempt-loopback"). */
const char *guard_verdict_key(enum guard_verdict v);
/* Rule 3 alone: an exemption's verdict, or GUARD_DESTROY. */
enum guard_verdict guard_exempt(const struct guard_config *c, const struct sdiag_sock *s);

/* ---- victims: the records a pass selects (policy.c) --------------------------- */

/* Append a deep copy of s to the growing array *v (n used, cap allocated): 0 or -ENOMEM. */
int guard_victims_add(struct sdiag_sock ***v, size_t *n, size_t *cap,
		      const struct sdiag_sock *s);

/* ---- grace period (grace.c, pure) ----------------------------------------------- */

/* One removal held until due_ms (CLOCK_MONOTONIC milliseconds). */
struct guard_held {
	struct guard_event ev;	/* ev.addrs owned */
	uint64_t due_ms;
	char what[128];		/* "address 10.0.0.2/24 removed from eth0" */
};

struct guard_grace {
	struct guard_held *v;
	size_t n, cap;
};

void guard_grace_fini(struct guard_grace *g);
/* Hold e (addresses copied) until now + grace. The same removal (address and
 * interface, or link) held already keeps its earlier end: a flapping address
 * is judged once, grace after it first went. */
int guard_grace_hold(struct guard_grace *g, const struct guard_event *e, const char *what,
		     uint64_t now_ms, uint32_t grace_ms);
/* The earliest end of a held removal, UINT64_MAX when none is held. */
uint64_t guard_grace_next(const struct guard_grace *g);
/* Move the removals due at now into *ret (n in *ret_n; free with guard_held_free). */
int guard_grace_take(struct guard_grace *g, uint64_t now_ms, struct guard_held **ret,
		     size_t *ret_n);
void guard_held_free(struct guard_held *v, size_t n);
/* Has what e removed come back in t: the address on the same interface (that
 * is up), or the link up again? */
bool guard_event_came_back(const struct guard_table *t, const struct guard_event *e);
/* "address 10.0.0.2/24 removed from eth0", "link eth0 went down" (t: the view after it). */
void guard_event_describe(const struct guard_table *t, const struct guard_event *e, char *buf,
			  size_t len);
/* Move a held removal into p (its addresses too), to be acted upon. */
int guard_held_to_pending(struct guard_held *h, struct guard_pending *p);

/* ---- route changes (route.c) ------------------------------------------------------- */

/* What the kernel is asked: the route to peer with the socket's mark, bound
 * device and uid (`ip route get PEER mark M oif DEV uid U`). */
struct guard_route_key {
	uint8_t family;
	uint8_t peer[16];
	uint32_t mark;
	uint32_t oif;
	uint32_t uid;
	bool has_uid;
};

struct guard_route_answer {
	int err;		/* 0, or the kernel's -errno (no route: -ENETUNREACH, ...) */
	int oif;		/* the device the route leaves through */
	uint8_t src[16];	/* the preferred source (RTA_PREFSRC), same family as the key */
	bool has_src;
	bool local;		/* RTN_LOCAL: the peer is an address of this host */
};

/* The key of an inet socket (IPv4-mapped peers as IPv4). */
void guard_route_key_of(const struct sdiag_sock *s, struct guard_route_key *ret);
/* The policy (pure): a socket is stranded when the kernel would send to its
 * peer from another source, through a device that does not carry the
 * socket's own address. No route: kept (nothing better to use). */
enum guard_verdict guard_decide_route(const struct guard_config *c, const struct guard_table *t,
				      const struct sdiag_sock *s,
				      const struct guard_route_answer *a);
/* One message of the answer to an RTM_GETROUTE into *a (zeroed by the caller):
 * an RTM_NEWROUTE's type, device and preferred source; -EBADMSG in a->err for
 * malformed attributes; other messages are ignored. Returns 0. (The socket,
 * sequence numbers and NLMSG_ERROR answers: the transport, lib/core/nl.h.) */
int guard_route_parse(const struct nlmsghdr *nlh, struct guard_route_answer *a);
/* Is this rtnetlink message a route change worth a pass (not the local table)? */
bool guard_route_event(const struct nlmsghdr *nlh);

/* rtnetlink address and link messages (view.c): -EBADMSG if
 * malformed, -EAFNOSUPPORT for other families. */
int grtnl_parse_addr(const struct nlmsghdr *nlh, struct guard_addr *ret);
int grtnl_parse_link(const struct nlmsghdr *nlh, struct guard_link *ret);

#endif
