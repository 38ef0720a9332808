/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * count_by(): groups counted during the dump, without the GIL and without a
 * Python object per socket. Each socket's key is the bytes of the fields
 * asked for; the groups are an open-addressing hash table of those bytes, and
 * each keeps one record of its own, from which its key's Python values are
 * made at the end. Memory grows with the groups, not the sockets.
 */
#include "python/sockdiag/sdpy.h"
#include "python/sockdiag/args.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>

struct group {
	uint64_t hash, count;
	uint32_t key_off, key_len;
	uint32_t rec;		/* index in the groups' chunk */
};

struct counter {
	const struct sdpy_query *sq;
	struct sdpy_keys keys;
	struct sdpy_chunk reps;	/* one record per group */
	struct sdpy_chunk tmp;	/* the current socket's record */
	struct group *g;	/* hash table, size a power of two */
	size_t size, used;
	uint8_t *kbuf;		/* the groups' keys */
	size_t klen, kcap;
	uint8_t key[4096];	/* the current socket's key */
};

static size_t put(uint8_t *k, size_t n, const void *p, size_t len)
{
	if (len && n + len <= 4096)	/* p may be NULL when len is 0 (an empty name) */
		memcpy(k + n, p, len);
	return n + len;
}

static bool is_inet(const struct sdpy_rec *r)
{
	return r->family == AF_INET || r->family == AF_INET6;
}

/* The key's bytes for one field of r. */
static size_t key_field(const struct sdpy_chunk *c, const struct sdpy_rec *r, enum sdpy_ckey k,
			uint8_t *b, size_t n)
{
	bool local = k == SDPY_K_LADDR || k == SDPY_K_LIP || k == SDPY_K_LPORT;
	uint8_t v8;
	uint32_t v32 = UINT32_MAX;

	switch (k) {
	case SDPY_K_FAMILY: return put(b, n, &r->family, 1);
	case SDPY_K_TYPE: return put(b, n, &r->type, 1);
	case SDPY_K_STATE: return put(b, n, &r->state, 1);
	case SDPY_K_NETID: return put(b, n, &r->table, 1);
	case SDPY_K_STATUS:
		v8 = is_inet(r) && r->type == SOCK_STREAM ? r->state : 0xff;
		return put(b, n, &v8, 1);
	case SDPY_K_LADDR:
	case SDPY_K_RADDR:
		n = put(b, n, &r->family, 1);
		if (r->family == AF_UNIX && local)
			return put(b, put(b, n, &r->name_len, 4), c->arena + r->name_off, r->name_len);
		n = put(b, n, local ? r->src : r->dst, 16);
		return put(b, n, local ? &r->sport : &r->dport, 2);
	case SDPY_K_LIP:
	case SDPY_K_RIP:
		n = put(b, n, &r->family, 1);
		return is_inet(r) ? put(b, n, local ? r->src : r->dst, 16) : n;
	case SDPY_K_LPORT:
	case SDPY_K_RPORT:
		n = put(b, n, &r->family, 1);
		return is_inet(r) ? put(b, n, local ? &r->sport : &r->dport, 2) : n;
	case SDPY_K_UID:
		if (r->flags & SDPY_R_UID)
			v32 = r->uid;
		return put(b, n, &v32, 4);
	case SDPY_K_CGROUP:
	case SDPY_K_CGROUP_ID:
		v8 = (r->flags & SDPY_R_CGROUP) != 0;
		n = put(b, n, &v8, 1);
		return put(b, n, &r->cgroup, 8);
	case SDPY_K_PID:
		if (r->n_procs)
			v32 = (uint32_t)r->procs[0].pid;
		return put(b, n, &v32, 4);
	case SDPY_K_COMM:
		v8 = r->n_procs > 0;
		n = put(b, n, &v8, 1);
		return v8 ? put(b, n, r->procs[0].comm, sizeof(r->procs[0].comm)) : n;
	default:
		return n;
	}
}

static uint64_t hash(const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h | 1;	/* 0 marks an empty slot */
}

static int rehash(struct counter *ct)
{
	size_t nsize = ct->size ? ct->size * 2 : 64;
	struct group *ng = calloc(nsize, sizeof(*ng));

	if (!ng)
		return -ENOMEM;
	for (size_t i = 0; i < ct->size; i++) {
		size_t j;

		if (!ct->g[i].hash)
			continue;
		for (j = ct->g[i].hash & (nsize - 1); ng[j].hash; j = (j + 1) & (nsize - 1))
			;
		ng[j] = ct->g[i];
	}
	free(ct->g);
	ct->g = ng;
	ct->size = nsize;
	return 0;
}

static int add_group(struct counter *ct, size_t slot, uint64_t h, size_t len,
		     const struct sdiag_sock *s)
{
	int r;

	if (ct->klen + len > UINT32_MAX)
		return -ENOMEM;
	if (ct->klen + len > ct->kcap) {
		size_t ncap = ct->kcap ? ct->kcap : 4096;
		uint8_t *p;

		while (ncap < ct->klen + len)
			ncap *= 2;
		if (!(p = realloc(ct->kbuf, ncap)))
			return -ENOMEM;
		ct->kbuf = p;
		ct->kcap = ncap;
	}
	r = sdpy_chunk_add(&ct->reps, s, false);
	if (r < 0)
		return r;
	memcpy(ct->kbuf + ct->klen, ct->key, len);
	ct->g[slot] = (struct group){ .hash = h, .count = 1, .key_off = (uint32_t)ct->klen,
				      .key_len = (uint32_t)len, .rec = (uint32_t)ct->reps.n - 1 };
	ct->klen += len;
	ct->used++;
	return 0;
}

static int count_cb(const struct sdiag_sock *s, void *userdata)
{
	struct counter *ct = userdata;
	const struct sdpy_rec *r;
	size_t len = 0, slot;
	uint64_t h;
	int e;

	sdpy_chunk_reset(&ct->tmp);
	e = sdpy_chunk_add(&ct->tmp, s, false);
	if (e < 0)
		return e;
	r = &ct->tmp.recs[0];
	for (size_t i = 0; i < ct->keys.n; i++)
		len = key_field(&ct->tmp, r, ct->keys.k[i], ct->key, len);
	if (len > sizeof(ct->key))
		return -E2BIG;
	if ((ct->used + 1) * 2 > ct->size && (e = rehash(ct)) < 0)
		return e;
	h = hash(ct->key, len);
	for (slot = h & (ct->size - 1); ct->g[slot].hash; slot = (slot + 1) & (ct->size - 1)) {
		const struct group *g = &ct->g[slot];

		if (g->hash == h && g->key_len == len && !memcmp(ct->kbuf + g->key_off, ct->key, len)) {
			ct->g[slot].count++;
			return 0;
		}
	}
	return add_group(ct, slot, h, len, s);
}

static int count_run(struct sdpy_query *sq, struct counter *ct)
{
	struct sdiag_handle *h = NULL;
	int r = sdpy_prepare(sq, &h);

	if (r >= 0)
		r = sdpy_dump(h, sq, count_cb, ct);
	sdiag_close(h);
	return r;
}

static PyObject *ip_or_none(const struct sdpy_rec *r, bool local)
{
	char buf[64];

	if (!is_inet(r))
		Py_RETURN_NONE;
	if (!inet_ntop(r->family, local ? r->src : r->dst, buf, sizeof(buf)))
		return PyErr_SetFromErrno(PyExc_OSError);
	return PyUnicode_FromString(buf);
}

static PyObject *key_value(struct sdpy_state *st, const struct sdpy_chunk *c,
			   const struct sdpy_rec *r, enum sdpy_ckey k, struct sdpy_cgmap *cg)
{
	switch (k) {
	case SDPY_K_FAMILY: return sdpy_family(st, r->family);
	case SDPY_K_TYPE: return sdpy_kind(st, r->type);
	case SDPY_K_STATUS: return sdpy_status(st, r);
	case SDPY_K_STATE: return Py_NewRef(r->state < SDIAG_SS_MAX ? st->state[r->state] : Py_None);
	case SDPY_K_NETID: return Py_NewRef(r->table < SDIAG_T_MAX ? st->netid[r->table] : Py_None);
	case SDPY_K_LADDR: return sdpy_endpoint(st, c, r, true, NULL);
	case SDPY_K_RADDR: return sdpy_endpoint(st, c, r, false, NULL);
	case SDPY_K_LIP: return ip_or_none(r, true);
	case SDPY_K_RIP: return ip_or_none(r, false);
	case SDPY_K_LPORT:
		return is_inet(r) ? sdpy_port(st, r->sport) : Py_NewRef(Py_None);
	case SDPY_K_RPORT:
		return is_inet(r) ? sdpy_port(st, r->dport) : Py_NewRef(Py_None);
	case SDPY_K_UID:
		return r->flags & SDPY_R_UID ? PyLong_FromUnsignedLong(r->uid) : Py_NewRef(Py_None);
	case SDPY_K_CGROUP:
		return r->flags & SDPY_R_CGROUP ? sdpy_cgroup_path(cg, r->cgroup) : Py_NewRef(Py_None);
	case SDPY_K_CGROUP_ID:
		return r->flags & SDPY_R_CGROUP ? PyLong_FromUnsignedLongLong(r->cgroup) :
						  Py_NewRef(Py_None);
	case SDPY_K_PID:
		return r->n_procs ? PyLong_FromLong(r->procs[0].pid) : Py_NewRef(Py_None);
	case SDPY_K_COMM:
		if (!r->n_procs)
			Py_RETURN_NONE;
		return PyUnicode_DecodeFSDefaultAndSize(r->procs[0].comm,
			(Py_ssize_t)strnlen(r->procs[0].comm, sizeof(r->procs[0].comm)));
	default:
		Py_RETURN_NONE;
	}
}

static PyObject *result_dict(struct sdpy_state *st, const struct counter *ct)
{
	struct sdpy_cgmap cg = { 0 };
	PyObject *d = PyDict_New();

	for (size_t i = 0; d && i < ct->size; i++) {
		const struct group *g = &ct->g[i];
		const struct sdpy_rec *r = &ct->reps.recs[g->rec];
		PyObject *key, *n;

		if (!g->hash)
			continue;
		key = PyTuple_New((Py_ssize_t)ct->keys.n);
		for (size_t k = 0; key && k < ct->keys.n; k++) {
			PyObject *v = key_value(st, &ct->reps, r, ct->keys.k[k], &cg);

			if (!v)
				Py_CLEAR(key);
			else
				PyTuple_SET_ITEM(key, (Py_ssize_t)k, v);
		}
		n = key ? PyLong_FromUnsignedLongLong(g->count) : NULL;
		if (!n || PyDict_SetItem(d, key, n) < 0)
			Py_CLEAR(d);
		Py_XDECREF(key);
		Py_XDECREF(n);
	}
	sdpy_cgmap_clear(&cg);
	return d;
}

/* keys: a str (one key, or several separated by commas) or a sequence of str, as the
 * CLI's --count-by takes them (args.c). */
static int parse_keys(struct counter *ct, PyObject *keys)
{
	const char *tmsg = "count_by: keys: a string or a sequence of strings";
	PyObject *seq;
	Py_ssize_t len;
	const char *s;
	char err[512];
	int r = -1;

	if (PyUnicode_Check(keys)) {
		s = PyUnicode_AsUTF8AndSize(keys, &len);
		if (!s)
			return -1;
		if (sdpy_keys_parse(&ct->keys, s, (size_t)len, err, sizeof(err)) < 0) {
			sdpy_value_error("count_by", err);
			return -1;
		}
		return 0;
	}
	if (PyBytes_Check(keys) || PyByteArray_Check(keys)) {
		PyErr_SetString(PyExc_TypeError, tmsg);
		return -1;
	}
	seq = PySequence_Fast(keys, tmsg);
	if (!seq)
		return -1;
	if (PySequence_Fast_GET_SIZE(seq) == 0) {
		sdpy_value_error("count_by", "no key given");
		goto out;
	}
	for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
		PyObject *o = PySequence_Fast_GET_ITEM(seq, i);

		if (!PyUnicode_Check(o)) {
			PyErr_SetString(PyExc_TypeError, tmsg);
			goto out;
		}
		s = PyUnicode_AsUTF8AndSize(o, &len);
		if (!s)
			goto out;
		if (sdpy_keys_add(&ct->keys, s, (size_t)len, err, sizeof(err)) < 0) {
			sdpy_value_error("count_by", err);
			goto out;
		}
	}
	r = 0;
out:
	Py_DECREF(seq);
	return r;
}

PyObject *sdpy_count_by(PyObject *module, PyObject *args, PyObject *kwds)
{
	static char *kw[] = { "keys", "kind", "filter", "netns", NULL };
	struct sdpy_state *st = sdpy_state_of(module);
	PyObject *keys, *kind = NULL, *filter = NULL, *netns = NULL, *res = NULL;
	struct counter *ct = PyMem_Calloc(1, sizeof(*ct));
	struct sdpy_query sq;
	int r;

	if (!ct)
		return PyErr_NoMemory();
	memset(&sq, 0, sizeof(sq));
	sq.nsfd = -1;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|OOO:count_by", kw, &keys, &kind, &filter,
					 &netns) ||
	    parse_keys(ct, keys) < 0 ||
	    sdpy_query_init(st, &sq, kind, filter, netns, sdpy_keys_need_procs(&ct->keys), 0) < 0)
		goto out;
	ct->sq = &sq;
	Py_BEGIN_ALLOW_THREADS
	r = count_run(&sq, ct);
	Py_END_ALLOW_THREADS
	if (r < 0)
		sdpy_raise_dump(&sq, r);
	else
		res = result_dict(st, ct);
out:
	sdpy_chunk_free(&ct->reps);
	sdpy_chunk_free(&ct->tmp);
	free(ct->g);
	free(ct->kbuf);
	PyMem_Free(ct);
	sdpy_query_free(&sq);
	return res;
}
