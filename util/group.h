/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one grouping engine (group.c): the key vocabulary that list --count-by,
 * top --by and Python's count_by share, a socket's key as a typed tuple, and
 * the open-addressing table that counts the tuples (also the exporter's table
 * of connection-end label sets: any bytes as a key, aux the caller's index).
 *
 *	struct gkeys k;
 *	gkeys_parse(&k, "raddr,state", GF_CLI, err, sizeof(err));
 *	struct gtab t = { 0 };
 *	for each socket:
 *		len = gkey_tuple(buf, sizeof(buf), &k, s, &ctx);
 *		gtab_add(&t, buf, len, &slot);  // t.e[slot].count++ done
 *	for each slot with t.e[i].hash: gkey_field(t.kb + e->off, e->len, &k, i, &v)
 *	gtab_free(&t);
 *
 * A tuple is, per key, one byte (0: the socket has no value, the key's "none")
 * and the value: an integer (8 bytes), an address (family and 16 bytes, a
 * v4-mapped IPv6 address as the IPv4 one it is), or bytes (2-byte length and
 * the bytes: comm, netns label, unit). Hashed once with util/hash.h; no text.
 * Each frontend renders the values: text with "-" for none, JSON with null,
 * as the table's json type says; Python None.
 */
#ifndef SOCKDIAG_UTIL_GROUP_H
#define SOCKDIAG_UTIL_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sockdiag.h"

/* The keys; the first thirteen in list --count-by's historical order. */
enum gkey {
	GK_STATE,
	GK_PROTO,     /* the table: its ss name tcp, udp, u_str, ...; Python: netid */
	GK_FAMILY,    /* the address family (SMC's records: AF_SMC) */
	GK_NETNS,     /* the namespace label (bytes from the caller) */
	GK_CGROUP,    /* the cgroup id, rendered as its path */
	GK_UNIT,      /* the innermost systemd unit of the cgroup (bytes from the caller) */
	GK_PROCESS,   /* comm of the first owner; alias comm */
	GK_USER,      /* the uid, rendered as a user name */
	GK_LPORT,
	GK_RPORT,
	GK_LADDR,     /* the local IP; alias lip */
	GK_RADDR,     /* the peer IP; aliases rip, peer */
	GK_PID,       /* pid of the first owner */
	GK_UID,       /* the uid, a number */
	GK_CGROUP_ID, /* the cgroup id, a number */
	GK_TYPE,      /* SOCK_STREAM, ... */
	GK_STATUS,    /* a TCP-like socket's state, else none */
	GK_LENDPOINT, /* the local (IP, port), a unix socket's name (Python's old laddr) */
	GK_RENDPOINT, /* the peer (IP, port) (Python's old raddr) */
	GK_COOKIE,    /* the socket's cookie: top's conn, no frontend's by name */
	GK_MAX
};

enum gtype { GT_INT, GT_ADDR, GT_BYTES, GT_ENDPOINT };

/* The frontends that offer a key. */
#define GF_CLI 1u /* list --count-by, top --by */
#define GF_PY 2u  /* count_by() */

struct gkey_def {
	const char *name;	   /* the canonical name */
	const char *aliases[3];	   /* older spellings, accepted everywhere */
	enum gtype type;
	bool json_number;	   /* JSON: a number (else a string); none is null */
	unsigned fe;		   /* GF_* */
	const char *help;
};

extern const struct gkey_def gkey_defs[GK_MAX];

/* The key a name or alias means (len bytes), or -1. */
int gkey_lookup(const char *name, size_t len);

#define GKEYS_MAX 12

struct gkeys {
	enum gkey k[GKEYS_MAX];
	size_t n;
};

/* One rule for every frontend: KEY[,KEY...], no item empty, none twice, at
 * most max keys, each offered by fe. Returns 0, or -EINVAL with one line in err. */
int gkeys_add(struct gkeys *k, const char *name, size_t len, unsigned fe, size_t max, char *err,
	      size_t size);
int gkeys_parse(struct gkeys *k, const char *list, size_t len, unsigned fe, size_t max, char *err,
		size_t size);
bool gkeys_has(const struct gkeys *k, enum gkey key);
/* The canonical names a frontend offers, ", "-separated, into buf. */
const char *gkeys_help(char *buf, size_t size, unsigned fe);

/* What the caller resolves: the GT_BYTES keys netns and unit. NULL: none. */
struct gkey_ctx {
	const char *netns;
	const char *(*unit)(void *arg, const struct sdiag_sock *s, size_t *len);
	void *arg;
};

/* A socket's tuple for the keys, into buf. Returns its length (> size: too long,
 * nothing usable). */
size_t gkey_tuple(uint8_t *buf, size_t size, const struct gkeys *k, const struct sdiag_sock *s,
		  const struct gkey_ctx *ctx);

struct gval {
	bool none;
	uint64_t u;		/* GT_INT; GT_ADDR/GT_ENDPOINT: the port */
	uint8_t family;		/* GT_ADDR, GT_ENDPOINT */
	const uint8_t *p;	/* GT_ADDR: 16 bytes; GT_BYTES/GT_ENDPOINT (unix): the bytes */
	size_t len;
};

/* The i-th value of a tuple made for k. */
void gkey_field(const uint8_t *t, size_t len, const struct gkeys *k, size_t i, struct gval *v);

/* The table: open addressing, linear probing, hash 0 = empty slot. */
struct gent {
	uint64_t hash, count;
	uint32_t off, len;	/* the tuple in kb */
	uint32_t aux;		/* the caller's (Python: its record's index) */
};

struct gtab {
	struct gent *e;
	size_t cap, used;
	uint8_t *kb;		/* the groups' tuples */
	size_t klen, kcap;
};

/* Count one tuple: its group's count goes up by one. *ret_new: whether the
 * group is new. Returns the slot (>= 0) or -ENOMEM. */
long gtab_add(struct gtab *t, const uint8_t *key, size_t len, bool *ret_new);
/* The slot of key's group, or -1: none (the table unchanged). */
long gtab_find(const struct gtab *t, const uint8_t *key, size_t len);
static inline const uint8_t *gtab_key(const struct gtab *t, const struct gent *e)
{
	return t->kb + e->off;
}
void gtab_free(struct gtab *t);

#endif
