/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * list --count-by: counts grouped by keys instead of sockets (count.c).
 *
 *	count_keys_parse(&k, "unit,state");
 *	count_new(&c, &k, &out_opts, t);  // format, fd, -H, -n; t: --interval's stamp
 *	for each socket: count_sock(c, s, netns_label);
 *	count_finish(c);                   // sort, print
 *	count_free(c);
 *
 * Memory grows with the number of groups, not of sockets.
 */
#ifndef SOCKDIAG_CLI_COUNT_H
#define SOCKDIAG_CLI_COUNT_H

#include "cli/render/output.h"

enum count_key {
	CK_STATE,
	CK_PROTO,   /* the table's ss name: tcp, udp, u_str, ... */
	CK_FAMILY,
	CK_NETNS,   /* the namespace label (--all-netns, -N), "-" for ours */
	CK_CGROUP,  /* path below the cgroup2 mount; a removed cgroup: its id */
	CK_UNIT,    /* innermost *.service/.scope/.slice/... of the cgroup path */
	CK_PROCESS, /* comm of the first owner (needs the process scan) */
	CK_USER,    /* the socket's uid, by name unless -n */
	CK_LPORT,
	CK_RPORT,
	CK_LADDR,
	CK_RADDR,
	CK_PID,     /* pid of the first owner (needs the process scan) */
	CK_MAX
};

#define COUNT_MAX_KEYS 12

struct count_keys {
	enum count_key k[COUNT_MAX_KEYS];
	size_t n;
};

/* "state,unit": returns 0, or -EINVAL after printing one line. */
int count_keys_parse(struct count_keys *ret, const char *arg);
bool count_keys_has(const struct count_keys *k, enum count_key key);
/* A key's name ("state", ...) and whether JSON shows its values as numbers. */
const char *count_key_name(enum count_key k);
bool count_key_number(enum count_key k);
/* The key of that name (len bytes; "comm" is process), or -1. */
int count_key_lookup(const char *name, size_t len);

/* A key's value for one socket, as a group's key holds it: "-" when the
 * socket has none (also shared with top: cli/top/). Cached names inside. */
struct ckeys;
struct obuf;

struct ckeys *ckeys_new(bool numeric);
void ckeys_put(struct ckeys *c, struct obuf *b, enum count_key key, const struct sdiag_sock *s,
	       const char *netns);
/* Forget the cgroup names read so far (cgroups created since are found). */
int ckeys_forget(struct ckeys *c);
void ckeys_free(struct ckeys *c);

struct count;

/* time: the snapshot's time (list --interval), or NULL: with it, every group
 * is stamped (a TIME column, a "time" member first), as records are. */
int count_new(struct count **ret, const struct count_keys *k, const struct out_opts *o,
	      const struct timespec *time);
/* Count one socket. Returns 0 or -ENOMEM. */
int count_sock(struct count *c, const struct sdiag_sock *s, const char *netns);
/* Print the groups. Returns 0 or a negative errno (write error). */
int count_finish(struct count *c);
void count_free(struct count *c);

#endif
