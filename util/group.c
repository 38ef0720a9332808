// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The one grouping engine (group.h): the key table, typed key tuples, the
 * table that counts them. No output, no names resolved here: the frontends
 * (cli/count.c, cli/top/, python/sockdiag/count.c) render the values.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "util/group.h"
#include "util/hash.h"
#include "util/inaddr.h"
#include "util/textfile.h"

#define BOTH (GF_CLI | GF_PY)

const struct gkey_def gkey_defs[GK_MAX] = {
	[GK_STATE] = { "state", { 0 }, GT_INT, false, BOTH, "the socket's state" },
	[GK_PROTO] = { "proto", { "netid" }, GT_INT, false, BOTH, "tcp, udp, u_str, ..." },
	[GK_FAMILY] = { "family", { 0 }, GT_INT, false, BOTH, "the address family" },
	[GK_NETNS] = { "netns", { 0 }, GT_BYTES, false, GF_CLI, "the namespace's label" },
	[GK_CGROUP] = { "cgroup", { 0 }, GT_INT, false, BOTH, "the cgroup's path" },
	[GK_UNIT] = { "unit", { 0 }, GT_BYTES, false, GF_CLI, "the cgroup's systemd unit" },
	[GK_PROCESS] = { "process", { "comm" }, GT_BYTES, false, BOTH, "the first owner's comm" },
	[GK_USER] = { "user", { 0 }, GT_INT, false, GF_CLI, "the socket's user, by name" },
	[GK_LPORT] = { "lport", { 0 }, GT_INT, true, BOTH, "the local port" },
	[GK_RPORT] = { "rport", { 0 }, GT_INT, true, BOTH, "the peer's port" },
	[GK_LADDR] = { "laddr", { "lip" }, GT_ADDR, false, BOTH, "the local IP address" },
	[GK_RADDR] = { "raddr", { "rip", "peer" }, GT_ADDR, false, BOTH, "the peer's IP address" },
	[GK_PID] = { "pid", { 0 }, GT_INT, true, BOTH, "the first owner's pid" },
	[GK_UID] = { "uid", { 0 }, GT_INT, true, BOTH, "the socket's uid" },
	[GK_CGROUP_ID] = { "cgroup_id", { 0 }, GT_INT, true, BOTH, "the cgroup's id" },
	[GK_TYPE] = { "type", { 0 }, GT_INT, false, GF_PY, "stream, dgram, ..." },
	[GK_STATUS] = { "status", { 0 }, GT_INT, false, GF_PY, "a TCP-like socket's state" },
	[GK_LENDPOINT] = { "lendpoint", { 0 }, GT_ENDPOINT, false, GF_PY,
			   "the local (IP, port) or name" },
	[GK_RENDPOINT] = { "rendpoint", { 0 }, GT_ENDPOINT, false, GF_PY, "the peer's (IP, port)" },
	[GK_COOKIE] = { "cookie", { 0 }, GT_INT, true, 0, "the socket's cookie" },
};

static bool is(const char *name, const char *s, size_t len)
{
	return name && strlen(name) == len && !memcmp(name, s, len);
}

int gkey_lookup(const char *name, size_t len)
{
	for (int k = 0; k < GK_MAX; k++) {
		if (is(gkey_defs[k].name, name, len))
			return k;
		for (size_t a = 0; a < 3; a++)
			if (is(gkey_defs[k].aliases[a], name, len))
				return k;
	}
	return -1;
}

const char *gkeys_help(char *buf, size_t size, unsigned fe)
{
	size_t o = 0;

	buf[0] = '\0';
	for (int k = 0; k < GK_MAX && o < size; k++)
		if (gkey_defs[k].fe & fe)
			o += (size_t)snprintf(buf + o, size - o, "%s%s", o ? ", " : "",
					      gkey_defs[k].name);
	return buf;
}

bool gkeys_has(const struct gkeys *k, enum gkey key)
{
	for (size_t i = 0; i < k->n; i++)
		if (k->k[i] == key)
			return true;
	return false;
}

int gkeys_add(struct gkeys *k, const char *name, size_t len, unsigned fe, size_t max, char *err,
	      size_t size)
{
	char q[TEXT_QUOTE_LEN], help[400];
	int i = len ? gkey_lookup(name, len) : -1;

	if (!len) {
		snprintf(err, size, "an empty key");
		return -EINVAL;
	}
	if (i < 0 || !(gkey_defs[i].fe & fe)) {
		snprintf(err, size, "unknown key '%s' (keys: %s)",
			 text_excerpt(q, sizeof(q), name, len, 32), gkeys_help(help, sizeof(help), fe));
		return -EINVAL;
	}
	if (gkeys_has(k, (enum gkey)i)) {
		snprintf(err, size, "key '%s' given twice", text_excerpt(q, sizeof(q), name, len, 32));
		return -EINVAL;
	}
	if (k->n >= max || k->n >= GKEYS_MAX) {
		snprintf(err, size, "too many keys at '%s' (at most %zu)",
			 text_excerpt(q, sizeof(q), name, len, 32), max);
		return -EINVAL;
	}
	k->k[k->n++] = (enum gkey)i;
	return 0;
}

int gkeys_parse(struct gkeys *k, const char *list, size_t len, unsigned fe, size_t max, char *err,
		size_t size)
{
	const char *p = list, *end = list + len;
	char q[TEXT_QUOTE_LEN];

	if (len == 0) {
		snprintf(err, size, "no key given");
		return -EINVAL;
	}
	for (;;) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		size_t n = comma ? (size_t)(comma - p) : (size_t)(end - p);

		if (n == 0) {
			snprintf(err, size,
				 "an empty key in '%s' (keys are separated by single commas)",
				 text_excerpt(q, sizeof(q), list, len, 32));
			return -EINVAL;
		}
		if (gkeys_add(k, p, n, fe, max, err, size) < 0)
			return -EINVAL;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

/* ---- tuples -------------------------------------------------------------------------------- */

struct tb {
	uint8_t *p;
	size_t size, n;
};

static void put(struct tb *b, const void *v, size_t len)
{
	if (len && b->n + len <= b->size)
		memcpy(b->p + b->n, v, len);
	b->n += len;
}

static void put_u8(struct tb *b, uint8_t v)
{
	put(b, &v, 1);
}

static void put_int(struct tb *b, bool has, uint64_t v)
{
	put_u8(b, has);
	if (has)
		put(b, &v, 8);
}

static void put_bytes(struct tb *b, const void *v, size_t len)
{
	uint16_t l = len > UINT16_MAX ? UINT16_MAX : (uint16_t)len;

	put_u8(b, v != NULL);
	if (v) {
		put(b, &l, 2);
		put(b, v, l);
	}
}

static bool is_inet(const struct sdiag_sock *s)
{
	return s->family == AF_INET || s->family == AF_INET6;
}

/* An address as a key: a v4-mapped IPv6 one (a dual-stack socket's IPv4
 * peer) as the IPv4 address it is, so that one peer is one group. */
static void put_addr(struct tb *b, const struct sdiag_sock *s, const uint8_t *a, bool port,
		     uint16_t p)
{
	uint8_t v[16] = { 0 };
	uint8_t fam = s->family;

	put_u8(b, is_inet(s));
	if (!is_inet(s))
		return;
	if (fam == AF_INET6 && in_v4mapped(a)) {
		fam = AF_INET;
		memcpy(v, a + 12, 4);
	} else {
		memcpy(v, a, fam == AF_INET ? 4 : 16);
	}
	put_u8(b, fam);
	put(b, v, 16);
	if (port)
		put(b, &p, 2);
}

static void put_key(struct tb *b, enum gkey k, const struct sdiag_sock *s,
		    const struct gkey_ctx *ctx)
{
	bool cg = is_inet(s) && (s->has & SDIAG_HAS_CGROUP);
	const char *str;
	size_t len = 0;

	switch (k) {
	case GK_STATE: put_int(b, true, s->state); return;
	case GK_PROTO: put_int(b, true, s->table); return;
	case GK_FAMILY: put_int(b, true, s->table == SDIAG_T_SMC ? AF_SMC : s->family); return;
	case GK_TYPE: put_int(b, true, s->type); return;
	case GK_STATUS: put_int(b, is_inet(s) && s->type == SOCK_STREAM, s->state); return;
	case GK_NETNS:
		str = ctx && ctx->netns ? ctx->netns : NULL;
		put_bytes(b, str, str ? strlen(str) : 0);
		return;
	case GK_CGROUP:
	case GK_CGROUP_ID: put_int(b, cg, cg ? s->inet.cgroup_id : 0); return;
	case GK_UNIT:
		str = ctx && ctx->unit ? ctx->unit(ctx->arg, s, &len) : NULL;
		put_bytes(b, str, len);
		return;
	case GK_PROCESS:
		put_bytes(b, s->n_procs ? s->procs[0].comm : NULL,
			  s->n_procs ? strnlen(s->procs[0].comm, sizeof(s->procs[0].comm)) : 0);
		return;
	case GK_USER:
	case GK_UID: put_int(b, (s->has & SDIAG_HAS_UID) != 0, s->uid); return;
	case GK_LPORT: put_int(b, is_inet(s), is_inet(s) ? s->inet.sport : 0); return;
	case GK_RPORT: put_int(b, is_inet(s), is_inet(s) ? s->inet.dport : 0); return;
	case GK_LADDR: put_addr(b, s, s->inet.src, false, 0); return;
	case GK_RADDR: put_addr(b, s, s->inet.dst, false, 0); return;
	case GK_PID: put_int(b, s->n_procs > 0, s->n_procs ? (uint64_t)s->procs[0].pid : 0); return;
	case GK_LENDPOINT:
		if (s->family == AF_UNIX) {
			put_u8(b, 2); /* a name, maybe empty */
			put(b, &s->un.name_len, sizeof(s->un.name_len));
			put(b, s->un.name, s->un.name_len);
			return;
		}
		put_addr(b, s, s->inet.src, true, s->inet.sport);
		return;
	case GK_RENDPOINT: put_addr(b, s, s->inet.dst, true, s->inet.dport); return;
	case GK_COOKIE: put_int(b, true, s->cookie); return;
	default: put_u8(b, 0); return;
	}
}

size_t gkey_tuple(uint8_t *buf, size_t size, const struct gkeys *k, const struct sdiag_sock *s,
		  const struct gkey_ctx *ctx)
{
	struct tb b = { buf, size, 0 };

	for (size_t i = 0; i < k->n; i++)
		put_key(&b, k->k[i], s, ctx);
	return b.n;
}

static size_t skip(const uint8_t *t, size_t off, enum gkey k, struct gval *v)
{
	uint8_t tag = t[off++];
	uint16_t l16;
	size_t l;

	*v = (struct gval){ .none = !tag };
	if (!tag)
		return off;
	switch (gkey_defs[k].type) {
	case GT_INT: memcpy(&v->u, t + off, 8); return off + 8;
	case GT_BYTES:
		memcpy(&l16, t + off, 2);
		v->p = t + off + 2;
		v->len = l16;
		return off + 2 + l16;
	case GT_ENDPOINT:
		if (tag == 2) { /* a unix name */
			memcpy(&l, t + off, sizeof(l));
			v->family = AF_UNIX;
			v->p = t + off + sizeof(l);
			v->len = l;
			return off + sizeof(l) + l;
		}
		/* fall through */
	case GT_ADDR:
		v->family = t[off];
		v->p = t + off + 1;
		v->len = 16;
		off += 17;
		if (gkey_defs[k].type == GT_ENDPOINT) {
			memcpy(&l16, t + off, 2);
			v->u = l16;
			off += 2;
		}
		return off;
	}
	return off;
}

void gkey_field(const uint8_t *t, size_t len, const struct gkeys *k, size_t i, struct gval *v)
{
	size_t off = 0;

	(void)len;
	for (size_t j = 0; j <= i; j++)
		off = skip(t, off, k->k[j], v);
}

/* ---- the table ----------------------------------------------------------------------------- */

static int grow(struct gtab *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 64;
	struct gent *ne = calloc(ncap, sizeof(*ne));

	if (!ne)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		size_t j;

		if (!t->e[i].hash)
			continue;
		for (j = t->e[i].hash & (ncap - 1); ne[j].hash; j = (j + 1) & (ncap - 1))
			;
		ne[j] = t->e[i];
	}
	free(t->e);
	t->e = ne;
	t->cap = ncap;
	return 0;
}

/* The slot of key's group, else the empty slot where it would go. */
static size_t probe(const struct gtab *t, const uint8_t *key, size_t len, uint64_t h)
{
	size_t i;

	for (i = h & (t->cap - 1); t->e[i].hash; i = (i + 1) & (t->cap - 1))
		if (t->e[i].hash == h && t->e[i].len == len && !memcmp(t->kb + t->e[i].off, key, len))
			break;
	return i;
}

long gtab_find(const struct gtab *t, const uint8_t *key, size_t len)
{
	size_t i;

	if (!t->cap)
		return -1;
	i = probe(t, key, len, hash_bytes(key, len));
	return t->e[i].hash ? (long)i : -1;
}

long gtab_add(struct gtab *t, const uint8_t *key, size_t len, bool *ret_new)
{
	uint64_t h = hash_bytes(key, len);
	size_t i;

	*ret_new = false;
	if ((t->used + 1) * 2 > t->cap && grow(t) < 0)
		return -ENOMEM;
	i = probe(t, key, len, h);
	if (t->e[i].hash) {
		t->e[i].count++;
		return (long)i;
	}
	if (t->klen + len > UINT32_MAX)
		return -ENOMEM;
	if (t->klen + len > t->kcap) {
		size_t ncap = t->kcap ? t->kcap : 4096;
		uint8_t *p;

		while (ncap < t->klen + len)
			ncap *= 2;
		p = realloc(t->kb, ncap);
		if (!p)
			return -ENOMEM;
		t->kb = p;
		t->kcap = ncap;
	}
	if (len)
		memcpy(t->kb + t->klen, key, len);
	t->e[i] = (struct gent){ .hash = h, .count = 1, .off = (uint32_t)t->klen,
				 .len = (uint32_t)len };
	t->klen += len;
	t->used++;
	*ret_new = true;
	return (long)i;
}

void gtab_free(struct gtab *t)
{
	free(t->e);
	free(t->kb);
	*t = (struct gtab){ 0 };
}
