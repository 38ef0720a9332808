/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * iter_connections(): constant memory, no thread. libsockdiag's dump is
 * pull-mode (sdiag_dump_begin/next/end): each refill pulls up to CHUNK
 * records into one chunk without the GIL, then the caller's thread turns
 * them into Sockets one by one. Memory: one chunk and the library's one
 * datagram, whatever the number of sockets. Dropping the iterator ends the
 * dump (the library drains the kernel's rest).
 */
#include "python/sockdiag/sdpy.h"

#include <errno.h>
#include <string.h>

#define CHUNK 1024

struct sdpy_iter {
	PyObject_HEAD
	struct sdpy_state *st;
	PyObject *module;
	struct sdpy_query sq;
	struct sdpy_chunk chunk;
	size_t pos;
	struct sdpy_addr_cache *ac;
	struct sdiag_handle *h;
	struct sdiag_dump *dump;
	bool begun, done, running;
	int err;
};

/* Open and begin on the first refill (errors surface while iterating, as
 * the dump's own do). No GIL. */
static int begin(struct sdpy_iter *it)
{
	int r = sdpy_prepare(&it->sq, &it->h);

	if (r >= 0)
		r = sdiag_dump_begin(it->h, &it->sq.q, &it->dump);
	return r;
}

/* Refill the chunk with up to CHUNK records. No GIL. */
static void refill(struct sdpy_iter *it)
{
	int r = 0;

	sdpy_chunk_reset(&it->chunk);
	it->pos = 0;
	if (!it->begun) {
		it->begun = true;
		r = begin(it);
	}
	while (r >= 0 && it->chunk.n < CHUNK) {
		const struct sdiag_sock *s;

		r = sdpy_dump_next(it->dump, &it->sq, &s);
		if (r <= 0)
			break;
		r = sdpy_chunk_add(&it->chunk, s, it->sq.details);
		if (r == 0)
			r = 1;
	}
	if (r <= 0) {	/* the end, or the first failure ends it */
		it->done = true;
		it->err = r;
		sdiag_dump_end(it->dump);
		it->dump = NULL;
		sdiag_close(it->h);
		it->h = NULL;
	}
}

/* Make the chunk hold a record at pos, refilling it without the GIL.
 * Returns 1, 0 at the end, -1 with an exception set. */
static int take(struct sdpy_iter *it)
{
	if (it->pos < it->chunk.n)
		return 1;
	if (it->done) {
		it->chunk.n = 0;
		return 0;
	}
	if (it->running) {
		PyErr_SetString(PyExc_ValueError, "iterator already executing");
		return -1;
	}
	it->running = true;
	Py_BEGIN_ALLOW_THREADS
	refill(it);
	Py_END_ALLOW_THREADS
	it->running = false;
	return it->pos < it->chunk.n ? 1 : 0;
}

/* The end: the dump's error raised once, or StopIteration (NULL, no error). */
static PyObject *stop(struct sdpy_iter *it)
{
	if (it->err < 0)
		sdpy_raise_dump(&it->sq, it->err);
	it->err = 0;
	return NULL;
}

static PyObject *iter_next(PyObject *self)
{
	struct sdpy_iter *it = (struct sdpy_iter *)self;
	int r = take(it);

	if (r < 0)
		return NULL;
	if (r == 0)
		return stop(it);
	return sdpy_sock_new(it->st, &it->chunk, &it->chunk.recs[it->pos++], it->sq.netns, it->ac);
}

static void iter_dealloc(PyObject *self)
{
	struct sdpy_iter *it = (struct sdpy_iter *)self;
	PyTypeObject *tp = Py_TYPE(self);

	if (it->dump || it->h) {
		Py_BEGIN_ALLOW_THREADS
		sdiag_dump_end(it->dump);	/* drains what the kernel still sends */
		sdiag_close(it->h);
		Py_END_ALLOW_THREADS
	}
	sdpy_chunk_free(&it->chunk);
	sdpy_query_free(&it->sq);
	if (it->ac) {
		sdpy_addr_cache_clear(it->ac);
		PyMem_Free(it->ac);
	}
	Py_XDECREF(it->module);
	tp->tp_free(self);
	Py_DECREF(tp);
}

static PyType_Slot iter_slots[] = {
	{ Py_tp_dealloc, iter_dealloc },
	{ Py_tp_iter, PyObject_SelfIter },
	{ Py_tp_iternext, iter_next },
	{ Py_tp_doc, "iter_connections()'s iterator: Sockets as the kernel dumps them." },
	{ 0, NULL },
};

static PyType_Spec iter_spec = {
	.name = "sockdiag.ConnectionIterator",
	.basicsize = sizeof(struct sdpy_iter),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
	.slots = iter_slots,
};

int sdpy_iter_init(struct sdpy_state *st, PyObject *module)
{
	st->iter_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &iter_spec, NULL);
	if (!st->iter_type)
		return -1;
	return PyModule_AddObjectRef(module, "ConnectionIterator", (PyObject *)st->iter_type);
}

static struct sdpy_iter *iter_new(PyObject *module, PyObject *args, PyObject *kwds,
				   const char *fmt)
{
	static char *kw[] = { "kind", "filter", "netns", "processes", "details", NULL };
	struct sdpy_state *st = sdpy_state_of(module);
	PyObject *kind = NULL, *filter = NULL, *netns = NULL;
	int processes = 0, details = 0;
	struct sdpy_iter *it;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, fmt, kw, &kind, &filter, &netns,
					 &processes, &details))
		return NULL;
	it = PyObject_New(struct sdpy_iter, st->iter_type);
	if (!it)
		return NULL;
	memset((char *)it + sizeof(PyObject), 0, sizeof(*it) - sizeof(PyObject));
	it->st = st;
	it->module = Py_NewRef(module);
	it->sq.nsfd = -1;
	it->ac = PyMem_Calloc(1, sizeof(*it->ac));
	if (!it->ac) {
		Py_DECREF(it);
		PyErr_NoMemory();
		return NULL;
	}
	if (sdpy_query_init(st, &it->sq, kind, filter, netns, processes, details) < 0) {
		Py_DECREF(it);
		return NULL;
	}
	return it;
}

PyObject *sdpy_iter_connections(PyObject *module, PyObject *args, PyObject *kwds)
{
	return (PyObject *)iter_new(module, args, kwds, "|OOOpp:iter_connections");
}

PyObject *sdpy_connections(PyObject *module, PyObject *args, PyObject *kwds)
{
	struct sdpy_iter *it = iter_new(module, args, kwds, "|OOOpp:connections");
	PyObject *list = it ? PyList_New(0) : NULL;
	/* Sockets, addrs and tcp_info dicts hold no cycles: collections the new objects
	 * would trigger (each walking the whole heap) find nothing of ours. */
	int gc_was = PyGC_Disable();

	while (list) {
		int r = take(it);

		if (r <= 0) {
			if (r == 0)
				stop(it);	/* raises the dump's error, if any */
			if (PyErr_Occurred())
				Py_CLEAR(list);
			break;
		}
		for (; list && it->pos < it->chunk.n; it->pos++) {
			PyObject *o = sdpy_sock_new(it->st, &it->chunk, &it->chunk.recs[it->pos],
						    it->sq.netns, it->ac);

			if (!o || PyList_Append(list, o) < 0)
				Py_CLEAR(list);
			Py_XDECREF(o);
		}
	}
	if (gc_was)
		PyGC_Enable();
	Py_XDECREF(it);
	return list;
}
