/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The filter as data: a tree of predicates joined by and/or/not, built by the
 * parser (filter.c, filter_value.c), evaluated by the matcher (filter_match.c)
 * and compiled to inet_diag bytecode (filter_bc.c). Parsing performs no socket
 * dumps: what only a dump can tell (the inodes of the unix sockets a `dst GLOB`
 * names) is resolved by each dump in its own namespace into a struct sd_fvals
 * (filter_resolve.c, fed by the dump's own listing of unix sockets). Cgroup paths and unit names are kept as written and
 * turned into sets of cgroup ids by a step of their own,
 * sd_filter_resolve_cgroups() (filter_cgroup.c), which can run again when cgroups are recreated. Matching
 * is a pure function of tree, values and record.
 */
#ifndef SDIAG_FILTER_H
#define SDIAG_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/core/internal.h"

enum sd_fkind {
	SD_F_AND,
	SD_F_OR,
	SD_F_NOT,
	SD_F_STATE,	/* u.states */
	SD_F_HOST,	/* inet src/dst: u.host */
	SD_F_NUM,	/* numeric comparison: u.num (ports, uid, inode, cookie) */
	SD_F_DEV,	/* u.num.value = ifindex, cmp EQ or NE */
	SD_F_MARK,	/* u.mark */
	SD_F_CGROUP,	/* cgroup PATH (or subtree), unit NAME (field 1): u.cg, EQ or NE */
	SD_F_AUTOBOUND, /* u.range: the ephemeral port range read at parse time */
	SD_F_TABLES,	/* proto NAME: u.tables */
	SD_F_NLPROTO,	/* u.num.value = netlink protocol */
	SD_F_NLGROUP,	/* u.num.value = group number */
	SD_F_UNIX_NAME, /* src/path GLOB on unix sockets: u.str */
	SD_F_UNIX_PEER, /* dst GLOB on unix sockets: u.peer (slot in struct sd_fvals) */
	SD_F_NETLINK,	/* netlink:PROTO:PORTID host: u.nl */
	SD_F_PACKET,	/* link:PROTO:IFINDEX host: u.pkt */
	SD_F_VSOCK,	/* vsock:CID:PORT host: u.vs */
	SD_F_PROC,	/* pid/comm/user of the owners (filter_proc.c): field = sd_fproc */
	SD_F_TCPINFO,	/* idle, rtt, rqueue, ... (filter_tcpinfo.c): field = sd_ftcp, u.num */
};

/* What SD_F_TCPINFO compares; durations in microseconds, sizes in bytes. */
enum sd_ftcp {
	SD_FTCP_IDLE,
	SD_FTCP_LAST_RECV,
	SD_FTCP_LAST_SEND,
	SD_FTCP_LAST_ACK,
	SD_FTCP_RTT,
	SD_FTCP_RTTVAR,
	SD_FTCP_RTO,
	SD_FTCP_RETRANS,
	SD_FTCP_LOST,
	SD_FTCP_UNACKED,
	SD_FTCP_CWND,
	SD_FTCP_BYTES_SENT,
	SD_FTCP_BYTES_RECEIVED,
	SD_FTCP_BYTES_ACKED,
	SD_FTCP_RQUEUE,
	SD_FTCP_WQUEUE,
};

/* What SD_F_PROC compares: u.num.value (pid, uid) or u.str (comm glob). */
enum sd_fproc { SD_FPROC_PID, SD_FPROC_COMM, SD_FPROC_USER };

/* Which side of the socket a predicate looks at. */
enum sd_fdir { SD_DIR_SRC, SD_DIR_DST };

/* Comparison operators; NE is a comparison too (false when the socket has no
 * such field), unlike `not X = v`. */
enum sd_fcmp { SD_EQ, SD_NE, SD_LT, SD_LE, SD_GT, SD_GE };

/* Numeric fields for SD_F_NUM. */
enum sd_ffield { SD_FLD_PORT, SD_FLD_UID, SD_FLD_INODE, SD_FLD_COOKIE };

struct sd_fhost {
	uint8_t family; /* AF_UNSPEC (any address), AF_INET, AF_INET6 */
	uint8_t plen;
	int32_t port; /* -1 = any */
	uint8_t addr[16];
};

struct sd_fnode {
	uint8_t kind;		/* enum sd_fkind */
	uint8_t dir;		/* enum sd_fdir */
	uint8_t cmp;		/* enum sd_fcmp */
	uint8_t field;		/* enum sd_ffield */
	struct sd_fnode *a, *b; /* operands of AND/OR (a, b) and NOT (a) */
	union {
		uint32_t states;
		uint32_t tables;
		struct sd_fhost host;
		struct {
			uint64_t value;
		} num;
		struct {
			uint32_t mark, mask;
		} mark;
		struct {
			uint16_t lo, hi;
		} range;
		char *str;
		struct {
			char *glob;
			uint32_t slot; /* index into struct sd_fvals.peers */
		} peer;
		struct {
			int32_t proto;	/* -1 any */
			int64_t portid; /* -1 any */
		} nl;
		struct {
			int32_t proto;	 /* ethertype, -1 any */
			int64_t ifindex; /* -1 any */
		} pkt;
		struct {
			int64_t cid, port; /* -1 any */
		} vs;
		struct {
			char *spec;	   /* as written: "/a/b", a subtree, "nginx.service" */
			uint64_t *ids;	   /* sorted ids, by sd_filter_resolve_cgroups */
			size_t n;
			uint32_t off, len; /* the value's place in the expression */
		} cg;
	} u;
};

struct sdiag_filter {
	struct sd_fnode *root; /* NULL: the empty filter, matches everything */
	bool net_admin;	       /* CAP_NET_ADMIN at parse time: MARK_COND may be sent */
	uint32_t n_peers;      /* SD_F_UNIX_PEER nodes (slots 0..n_peers-1) */
	struct sd_fbuild *build; /* a builder's state until sdiag_filter_finish, else NULL */
};

/* filter_build.c: a builder's state (open groups, the latched error). Accepts NULL. */
struct sd_fbuild;
void sd_fbuild_free(struct sd_fbuild *b);

/* Values resolved by a dump for one filter: per unix `dst` slot, the sorted
 * inodes of the sockets whose name matches the glob. */
struct sd_inodes {
	uint32_t *v;
	size_t n;
};

struct sd_fvals {
	struct sd_inodes *peers; /* n_peers entries */
	uint32_t n_peers;
};

/* filter_resolve.c: f's dump-time values, from the unix sockets of the
 * namespace the dump runs in. sd_fresolve_start() sets *ret NULL when f needs
 * none (0) or makes a resolution (0, or -ENOMEM); the caller feeds it every
 * unix socket with sd_fresolve_sock() (0 or -ENOMEM), then takes the values
 * with sd_fresolve_finish() (which frees the resolution) or drops it with
 * sd_fresolve_free(). Pure: nothing here dumps. */
struct sd_fresolve;
int sd_fresolve_start(const struct sdiag_filter *f, struct sd_fresolve **ret);
int sd_fresolve_sock(struct sd_fresolve *rs, const struct sdiag_sock *s);
void sd_fresolve_finish(struct sd_fresolve *rs, struct sd_fvals **ret);
void sd_fresolve_free(struct sd_fresolve *rs);
void sd_fvals_free(struct sd_fvals *v);
/* Match with resolved values (NULL: unresolved, unix `dst` matches nothing). */
bool sd_filter_match_vals(const struct sdiag_filter *f, const struct sd_fvals *v,
			  const struct sdiag_sock *s);

/* filter.c: sdiag_filter_parse with flags. SD_FPARSE_OFFLINE: no DNS lookups
 * (for the fuzzer): host names are errors. */
#define SD_FPARSE_OFFLINE 1u
int sd_filter_parse_flags(struct sdiag_filter **ret, const char *expr,
			  struct sdiag_filter_error *err, unsigned flags);
struct sd_fnode *sd_fnode_new(enum sd_fkind kind);
void sd_fnode_free(struct sd_fnode *n);

/* filter_cgroup.c: (re)compute every cgroup predicate's id set from the
 * cgroup tree as it is now. missing_ok: a path or unit that does not exist
 * matches nothing; otherwise it is an error (-ENOENT, err says which). */
int sd_filter_resolve_cgroups(struct sdiag_filter *f, bool missing_ok,
			      struct sdiag_filter_error *err);

/* filter_value.c: CAP_NET_ADMIN in the effective set (the kernel sends marks
 * and accepts MARK_COND only then). */
bool sd_filter_have_net_admin(void);

/* filter_match.c */
/* v OP ref. */
bool sd_fcmp_u64(uint64_t v, enum sd_fcmp c, uint64_t ref);
bool sd_fnode_match(const struct sd_fnode *n, const struct sd_fvals *v,
		    const struct sdiag_sock *s);
/* A unix socket's name as text: the path, or '@' and the abstract name
 * (NULs shown as '@', as ss does). False when unnamed. */
bool sd_unix_name(const struct sdiag_sock *s, char *buf, size_t size);
/* fnmatch() without flags: '*' matches '/' too, as in ss. */
bool sd_glob_match(const char *glob, const char *name);

/* filter_tcpinfo.c: TCP-info and queue predicates, user space only. */
bool sd_ftcp_match(const struct sd_fnode *n, const struct sdiag_sock *s);
uint32_t sd_ftcp_tables(const struct sd_fnode *n);
/* SDIAG_SHOW_INFO when f compares TCP info (a dump must request it), else 0. */
uint32_t sd_filter_show(const struct sdiag_filter *f);

/* filter_cgroup.c: whether the cgroup id is in the predicate's resolved set. */
bool sd_fcgroup_has(const struct sd_fnode *n, uint64_t id);

/* filter_proc.c: process predicates, user space only. */
bool sd_fproc_match(const struct sd_fnode *n, const struct sdiag_sock *s);

/* filter_bc.c: the kernel's inet_diag_bc_audit, re-implemented for tests and
 * the fuzzer. Returns 0 or the errno the kernel would give (-EINVAL, -EPERM
 * for MARK_COND without net_admin). */
int sd_bc_audit(const void *bc, size_t len, bool net_admin);
/* Run a program on an inet record the way inet_diag_bc_run does (userlocks
 * unknown: AUTO is treated as true). Returns true when accepted. */
bool sd_bc_run(const void *bc, size_t len, const struct sdiag_sock *s);

/* ---- hooks for the dump (filter_bc.c, filter_match.c) --------------------------------- */

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
