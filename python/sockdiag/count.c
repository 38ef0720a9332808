/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * count_by(): groups counted during the dump, without the GIL and without a
 * Python object per socket, by the grouping engine the CLI's --count-by uses
 * (util/group.h): each socket's key is a typed tuple, counted in its table;
 * each group keeps one record of its own, from which its key's Python values
 * are made at the end. Memory grows with the groups, not the sockets.
 */
#include "python/sockdiag/sdpy.h"
#include "python/sockdiag/args.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>

#include "util/group.h"

struct counter {
	const struct sdpy_query *sq;
	struct gkeys keys;
	struct sdpy_chunk reps;	/* one record per group */
	struct gtab tab;
	uint8_t key[4096];	/* the current socket's tuple */
};

static bool is_inet(const struct sdpy_rec *r)
{
	return r->family == AF_INET || r->family == AF_INET6;
}

static int count_cb(const struct sdiag_sock *s, void *userdata)
{
	struct counter *ct = userdata;
	size_t len = gkey_tuple(ct->key, sizeof(ct->key), &ct->keys, s, NULL);
	bool fresh;
	long slot;
	int e;

	if (len > sizeof(ct->key))
		return -E2BIG;
	slot = gtab_add(&ct->tab, ct->key, len, &fresh);
	if (slot < 0)
		return (int)slot;
	if (!fresh)
		return 0;
	e = sdpy_chunk_add(&ct->reps, s, false);
	if (e < 0)
		return e;
	ct->tab.e[slot].aux = (uint32_t)ct->reps.n - 1;
	return 0;
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

/* An address of the tuple (a v4-mapped one already as IPv4). */
static PyObject *ip_of(const struct gval *v)
{
	char buf[64];

	if (v->none)
		Py_RETURN_NONE;
	if (!inet_ntop(v->family, v->p, buf, sizeof(buf)))
		return PyErr_SetFromErrno(PyExc_OSError);
	return PyUnicode_FromString(buf);
}

static PyObject *key_value(struct sdpy_state *st, const struct sdpy_chunk *c,
			   const struct sdpy_rec *r, enum gkey k, const struct gval *v,
			   struct sdpy_cgmap *cg)
{
	switch (k) {
	case GK_FAMILY: return sdpy_family(st, r->family);
	case GK_TYPE: return sdpy_kind(st, r->type);
	case GK_STATUS: return sdpy_status(st, r);
	case GK_STATE: return Py_NewRef(r->state < SDIAG_SS_MAX ? st->state[r->state] : Py_None);
	case GK_PROTO: return Py_NewRef(r->table < SDIAG_T_MAX ? st->netid[r->table] : Py_None);
	case GK_LENDPOINT: return sdpy_endpoint(st, c, r, true, NULL);
	case GK_RENDPOINT: return sdpy_endpoint(st, c, r, false, NULL);
	case GK_LADDR:
	case GK_RADDR: return ip_of(v);
	case GK_LPORT:
		return is_inet(r) ? sdpy_port(st, r->sport) : Py_NewRef(Py_None);
	case GK_RPORT:
		return is_inet(r) ? sdpy_port(st, r->dport) : Py_NewRef(Py_None);
	case GK_UID:
		return r->flags & SDPY_R_UID ? PyLong_FromUnsignedLong(r->uid) : Py_NewRef(Py_None);
	case GK_CGROUP:
		return r->flags & SDPY_R_CGROUP ? sdpy_cgroup_path(cg, r->cgroup) : Py_NewRef(Py_None);
	case GK_CGROUP_ID:
		return r->flags & SDPY_R_CGROUP ? PyLong_FromUnsignedLongLong(r->cgroup) :
						  Py_NewRef(Py_None);
	case GK_PID:
		return r->n_procs ? PyLong_FromLong(r->procs[0].pid) : Py_NewRef(Py_None);
	case GK_PROCESS:
		if (!r->n_procs)
			Py_RETURN_NONE;
		return PyUnicode_DecodeFSDefaultAndSize(r->procs[0].comm,
			(Py_ssize_t)strnlen(r->procs[0].comm, sizeof(r->procs[0].comm)));
	default:
		Py_RETURN_NONE;
	}
}

/* A group's key: the value itself for one key, a tuple for several. */
static PyObject *group_key(struct sdpy_state *st, const struct counter *ct, const struct gent *g,
			   struct sdpy_cgmap *cg)
{
	const struct sdpy_rec *r = &ct->reps.recs[g->aux];
	PyObject *key = ct->keys.n == 1 ? NULL : PyTuple_New((Py_ssize_t)ct->keys.n);

	if (ct->keys.n > 1 && !key)
		return NULL;
	for (size_t k = 0; k < ct->keys.n; k++) {
		struct gval v;
		PyObject *o;

		gkey_field(gtab_key(&ct->tab, g), g->len, &ct->keys, k, &v);
		o = key_value(st, &ct->reps, r, ct->keys.k[k], &v, cg);
		if (ct->keys.n == 1)
			return o;
		if (!o) {
			Py_DECREF(key);
			return NULL;
		}
		PyTuple_SET_ITEM(key, (Py_ssize_t)k, o);
	}
	return key;
}

static PyObject *result_dict(struct sdpy_state *st, const struct counter *ct)
{
	struct sdpy_cgmap cg = { 0 };
	PyObject *d = PyDict_New();

	for (size_t i = 0; d && i < ct->tab.cap; i++) {
		const struct gent *g = &ct->tab.e[i];
		PyObject *key, *n, *old;

		if (!g->hash)
			continue;
		key = group_key(st, ct, g, &cg);
		/* Two tuples may give one Python value (a removed cgroup's path): add. */
		old = key ? PyDict_GetItemWithError(d, key) : NULL;
		n = key && !PyErr_Occurred() ?
			    PyLong_FromUnsignedLongLong(g->count + (old ? PyLong_AsUnsignedLongLong(old) : 0)) :
			    NULL;
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
	gtab_free(&ct->tab);
	PyMem_Free(ct);
	sdpy_query_free(&sq);
	return res;
}
