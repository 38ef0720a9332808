/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sockdiag extension module's shared declarations. Layers, lowest first:
 *   collect.c  dumps into compact C records without the GIL (no Python here)
 *   objects.c  compact records -> Python objects (Socket, addr, tcp_info)
 *   query.c    Python arguments -> a query (kind, filter, netns, processes)
 *   module.c   connections(), count_by(), kill(), errors, the module
 *   iter.c     iter_connections() and connections(): pulled in chunks, no thread
 *   watch.c    watch(): destroy events
 *   life.c     life(): one record per ended connection
 *   count.c    count_by()'s groups, counted without the GIL
 */
#ifndef SDPY_H
#define SDPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdbool.h>
#include <stdint.h>

#include "sockdiag.h"

/* ---- collect.c: no Python object is touched there ---------------------- */

enum {
	SDPY_R_UID = 1 << 0,
	SDPY_R_CGROUP = 1 << 1,
	SDPY_R_QUEUES = 1 << 2,
};

/* One socket, what the Python objects need of it: a fraction of a struct
 * sdiag_sock, whose borrowed parts it copies (the tcp_info into the chunk). */
struct sdpy_rec {
	uint64_t cookie, inode, cgroup;
	uint32_t uid, rqueue, wqueue;
	uint32_t flags;			/* SDPY_R_* */
	uint8_t table, family, type, state;
	uint16_t sport, dport;		/* inet ports; vsock: 0 */
	uint8_t src[16], dst[16];	/* inet addresses; vsock: cid, port (host order) */
	uint32_t name_off, name_len;	/* unix name, in the chunk's arena */
	uint32_t tcpi;			/* 1 + index into the chunk's tcp_info array; 0: none */
	uint32_t n_procs;
	const struct sdiag_proc *procs;	/* borrowed from the query's process map */
};

/* A growing array of records with their variable-length parts. */
struct sdpy_chunk {
	struct sdpy_rec *recs;
	size_t n, cap;
	char *arena;
	size_t alen, acap;
	struct sdiag_tcp_info *tcpi;
	size_t ntcpi, tcpicap;
};

/* What to dump, resolved from the Python arguments (query.c). */
struct sdpy_query {
	struct sdiag_query q;
	uint8_t afs[SDIAG_T_MAX];	/* per table: the families wanted (SDIAG_AF_*) */
	uint32_t explicit_tables;	/* named one by one: a dump error there is raised */
	int failed_table;		/* 1 + the explicit table the dump failed on; 0: none */
	struct sdiag_filter *filter;	/* owned */
	struct sdiag_procmap *procmap;	/* owned */
	bool processes;			/* scan owners (asked for, or the filter needs them) */
	bool details;
	int nsfd;			/* owned, -1: the caller's namespace */
	PyObject *netns;		/* what the caller passed (str or int), or NULL */
};

void sdpy_chunk_reset(struct sdpy_chunk *c);
void sdpy_chunk_free(struct sdpy_chunk *c);
/* Append a record made from s. Returns 0 or -ENOMEM. */
int sdpy_chunk_add(struct sdpy_chunk *c, const struct sdiag_sock *s, bool details);
/* The owners (when asked for), the query's policies (per-table families,
 * unsupported tables an error only when named: the library applies both)
 * and a handle on the query's namespace. Call without the GIL. Returns 0 or
 * a negative errno. */
int sdpy_prepare(struct sdpy_query *sq, struct sdiag_handle **ret);
/* A dump's failure on table t: remembered for the exception when it is the
 * kernel's lack of support (only named tables come here). Returns err. */
int sdpy_table_err(struct sdpy_query *sq, enum sdiag_table t, int err);
/* sdiag_dump_next, remembering the table of a failure. No GIL. */
int sdpy_dump_next(struct sdiag_dump *d, struct sdpy_query *sq, const struct sdiag_sock **ret);
/* The whole dump of the query, each record to cb; the first failure stops
 * it. No GIL. Returns 0 or a negative errno. */
int sdpy_dump(struct sdiag_handle *h, struct sdpy_query *sq, sdiag_sock_cb cb, void *userdata);
/* The whole dump into c. No GIL. Returns 0 or a negative errno. */
int sdpy_collect(struct sdpy_query *sq, struct sdpy_chunk *c);

/* ---- the module's state ------------------------------------------------ */

#define SDPY_ADDR_CACHE 512

struct sdpy_state {
	PyTypeObject *sock_type;	/* sockdiag.Socket (struct sequence) */
	PyObject *addr_type;		/* sockdiag.addr(ip, port) namedtuple */
	PyObject *proc_type;		/* sockdiag.proc(pid, comm, fd) namedtuple */
	PyObject *filter_error;		/* sockdiag.FilterError */
	PyObject *family_enum, *kind_enum; /* socket.AddressFamily, socket.SocketKind */
	PyObject *family[256];		/* cached enum members, filled lazily */
	PyObject *kind[16];
	PyObject *status[SDIAG_SS_MAX];	/* psutil's names */
	PyObject *state[SDIAG_SS_MAX];	/* ss's names */
	PyObject *netid[SDIAG_T_MAX];
	PyObject *status_none;		/* "NONE" */
	PyObject *empty_str;
	PyObject *empty_tuple;
	PyTypeObject *iter_type, *watch_type, *life_type;
	PyObject **ports;		/* 65536 ints, made as needed (NULL until then) */
};

struct sdpy_state *sdpy_state_of(PyObject *module);

/* ---- objects.c --------------------------------------------------------- */

/* The Socket fields, in order; the first SDPY_F_VISIBLE are psutil's sconn. */
enum {
	SDPY_F_FD,
	SDPY_F_FAMILY,
	SDPY_F_TYPE,
	SDPY_F_LADDR,
	SDPY_F_RADDR,
	SDPY_F_STATUS,
	SDPY_F_PID,
	SDPY_F_VISIBLE,
	SDPY_F_NETID = SDPY_F_VISIBLE,
	SDPY_F_STATE,
	SDPY_F_COOKIE,
	SDPY_F_INODE,
	SDPY_F_UID,
	SDPY_F_NETNS,
	SDPY_F_CGROUP,
	SDPY_F_CGROUP_ID,
	SDPY_F_PROCESSES,
	SDPY_F_RQUEUE,
	SDPY_F_WQUEUE,
	SDPY_F_TCP_INFO,
	SDPY_F_MAX
};

/* cgroup ids -> paths (relative to the cgroup2 mount), from one walk of the tree made
 * when the first id is looked up. */
struct sdpy_cgmap {
	struct sdpy_cg {
		uint64_t id;
		char *path;
	} *e;
	size_t n, cap;
	bool done;
};

/* Recently made address strings (most sockets share a few addresses), and the cgroup
 * paths of one call. */
struct sdpy_addr_cache {
	struct {
		uint8_t family;
		uint8_t addr[16];
		PyObject *str;
	} e[SDPY_ADDR_CACHE];
	struct sdpy_cgmap cg;
};

int sdpy_objects_init(struct sdpy_state *st, PyObject *module);
void sdpy_objects_clear(struct sdpy_state *st);
PyObject *sdpy_family(struct sdpy_state *st, unsigned family);
PyObject *sdpy_port(struct sdpy_state *st, uint16_t port);
PyObject *sdpy_kind(struct sdpy_state *st, unsigned type);
/* The endpoint objects: laddr (local true) or raddr of r. New references. */
PyObject *sdpy_endpoint(struct sdpy_state *st, const struct sdpy_chunk *c,
			const struct sdpy_rec *r, bool local, struct sdpy_addr_cache *ac);
PyObject *sdpy_status(struct sdpy_state *st, const struct sdpy_rec *r);
PyObject *sdpy_procs(struct sdpy_state *st, const struct sdpy_rec *r);
/* The path of cgroup id ("/system.slice/x.service"), or None if it is not there (any
 * more). m may be NULL (a walk for this one id). New reference. */
PyObject *sdpy_cgroup_path(struct sdpy_cgmap *m, uint64_t id);
void sdpy_cgmap_clear(struct sdpy_cgmap *m);
/* A Socket. netns: what the caller named (NULL: None). New reference. */
PyObject *sdpy_sock_new(struct sdpy_state *st, const struct sdpy_chunk *c,
			const struct sdpy_rec *r, PyObject *netns, struct sdpy_addr_cache *ac);
/* Append a Socket for every record of c to list. Returns 0 or -1. */
int sdpy_chunk_to_list(struct sdpy_state *st, const struct sdpy_chunk *c, PyObject *netns,
		       PyObject *list);
void sdpy_addr_cache_clear(struct sdpy_addr_cache *ac);

/* ---- query.c ----------------------------------------------------------- */

/* Fill sq from the arguments (any may be NULL/None). Returns 0, or -1 with
 * an exception set; sdpy_query_free() in both cases. */
int sdpy_query_init(struct sdpy_state *st, struct sdpy_query *sq, PyObject *kind,
		    PyObject *filter, PyObject *netns, int processes, int details);
void sdpy_query_free(struct sdpy_query *sq);
/* Parse a filter expression (FilterError, PermissionError...). Returns 0 or -1. */
int sdpy_filter_parse(struct sdpy_state *st, PyObject *expr, struct sdiag_filter **ret);
/* Open the namespace netns names (str, os.PathLike: a spec; int: a descriptor,
 * duplicated). *ret_fd -1 for None. Returns 0 or -1 with an exception. */
int sdpy_netns_fd(PyObject *netns, int *ret_fd);
/* Raise the exception for a negative errno: PermissionError, OSError... */
PyObject *sdpy_raise_errno(int err, const char *what);
/* Raise a dump's error: for a table the kernel cannot dump, its name and module ("raw:
 * not supported by this kernel (no raw_diag)"). Returns NULL. */
PyObject *sdpy_raise_dump(const struct sdpy_query *sq, int err);
/* ValueError("what: msg"), msg UTF-8 (bytes that are not: replaced). Returns NULL. */
PyObject *sdpy_value_error(const char *what, const char *msg);

/* ---- types ------------------------------------------------------------- */

int sdpy_iter_init(struct sdpy_state *st, PyObject *module);
PyObject *sdpy_iter_connections(PyObject *module, PyObject *args, PyObject *kwds);
/* connections(): the iterator's pipeline drained into a list (the dump of one
 * chunk overlaps the making of the previous one's objects). */
PyObject *sdpy_connections(PyObject *module, PyObject *args, PyObject *kwds);
int sdpy_watch_init(struct sdpy_state *st, PyObject *module);
PyObject *sdpy_watch(PyObject *module, PyObject *args, PyObject *kwds);
int sdpy_life_init(struct sdpy_state *st, PyObject *module);
PyObject *sdpy_life(PyObject *module, PyObject *args, PyObject *kwds);
PyObject *sdpy_count_by(PyObject *module, PyObject *args, PyObject *kwds);

#endif
