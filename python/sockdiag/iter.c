/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * iter_connections(): constant memory. libsockdiag's dump is a callback that
 * runs to its end, so a thread of ours runs it (without the GIL), filling one
 * chunk of CHUNK records while the consumer turns the other into Sockets; the
 * producer waits for a free chunk, so at most two exist. The handle is used by
 * that thread only. Dropping the iterator cancels the dump and joins it.
 */
#include "python/sockdiag/sdpy.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#define CHUNK 1024

struct sdpy_iter {
	PyObject_HEAD
	struct sdpy_state *st;
	PyObject *module;
	struct sdpy_query sq;
	struct sdpy_chunk chunks[2];
	struct sdpy_chunk *fill;	/* the producer's */
	struct sdpy_chunk *ready;	/* handed over, not yet taken */
	struct sdpy_chunk *spare;	/* given back by the consumer */
	struct sdpy_chunk *cur;		/* the consumer's */
	size_t pos;
	struct sdpy_addr_cache *ac;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool started, done, cancel;
	int err;
};

/* Producer: hand the full chunk over and take the spare one. With the lock. */
static int hand_over(struct sdpy_iter *it)
{
	while (it->ready && !it->cancel)
		pthread_cond_wait(&it->cond, &it->lock);
	while (!it->spare && !it->cancel)
		pthread_cond_wait(&it->cond, &it->lock);
	if (it->cancel)
		return -ECANCELED;
	it->ready = it->fill;
	it->fill = it->spare;
	it->spare = NULL;
	sdpy_chunk_reset(it->fill);
	pthread_cond_broadcast(&it->cond);
	return 0;
}

static int produce_cb(const struct sdiag_sock *s, void *userdata)
{
	struct sdpy_iter *it = userdata;
	int r = sdpy_chunk_add(it->fill, s, it->sq.details);

	if (r == 0 && it->fill->n >= CHUNK) {
		pthread_mutex_lock(&it->lock);
		r = hand_over(it);
		pthread_mutex_unlock(&it->lock);
	}
	return r;
}

static void *producer(void *arg)
{
	struct sdpy_iter *it = arg;
	struct sdiag_handle *h = NULL;
	int r = sdpy_prepare(&it->sq, &h);

	if (r >= 0)
		r = sdpy_dump(h, &it->sq, produce_cb, it);
	sdiag_close(h);
	pthread_mutex_lock(&it->lock);
	if (r >= 0 && it->fill->n)
		r = hand_over(it);
	it->err = r < 0 ? r : 0;
	it->done = true;
	pthread_cond_broadcast(&it->cond);
	pthread_mutex_unlock(&it->lock);
	return NULL;
}

/* Consumer: give cur back, wait for the next chunk. Without the GIL.
 * Returns false at the end. */
static bool take(struct sdpy_iter *it)
{
	bool more;

	pthread_mutex_lock(&it->lock);
	if (it->cur) {
		it->spare = it->cur;
		it->cur = NULL;
		pthread_cond_broadcast(&it->cond);
	}
	while (!it->ready && !it->done)
		pthread_cond_wait(&it->cond, &it->lock);
	more = it->ready != NULL;
	if (more) {
		it->cur = it->ready;
		it->ready = NULL;
		pthread_cond_broadcast(&it->cond);
	}
	pthread_mutex_unlock(&it->lock);
	it->pos = 0;
	return more;
}

static PyObject *iter_next(PyObject *self)
{
	struct sdpy_iter *it = (struct sdpy_iter *)self;
	bool more = true;

	if (!it->started)
		return NULL;
	if (!it->cur || it->pos >= it->cur->n) {
		Py_BEGIN_ALLOW_THREADS
		more = take(it);
		Py_END_ALLOW_THREADS
	}
	if (!more) {
		if (it->err)
			sdpy_raise_dump(&it->sq, it->err);
		it->err = 0;
		return NULL;	/* StopIteration */
	}
	return sdpy_sock_new(it->st, it->cur, &it->cur->recs[it->pos++], it->sq.netns, it->ac);
}

static void iter_dealloc(PyObject *self)
{
	struct sdpy_iter *it = (struct sdpy_iter *)self;
	PyTypeObject *tp = Py_TYPE(self);

	if (it->started) {
		pthread_mutex_lock(&it->lock);
		it->cancel = true;
		pthread_cond_broadcast(&it->cond);
		pthread_mutex_unlock(&it->lock);
		Py_BEGIN_ALLOW_THREADS
		pthread_join(it->thread, NULL);
		Py_END_ALLOW_THREADS
	}
	pthread_mutex_destroy(&it->lock);
	pthread_cond_destroy(&it->cond);
	sdpy_chunk_free(&it->chunks[0]);
	sdpy_chunk_free(&it->chunks[1]);
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
	int processes = 0, details = 0, r;
	struct sdpy_iter *it;
	sigset_t all, old;

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
	pthread_mutex_init(&it->lock, NULL);
	pthread_cond_init(&it->cond, NULL);
	it->fill = &it->chunks[0];
	it->spare = &it->chunks[1];
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
	/* The thread takes no signal: Python handles them in the main thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&it->thread, NULL, producer, it);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		Py_DECREF(it);
		sdpy_raise_errno(r, NULL);
		return NULL;
	}
	it->started = true;
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
	bool more;

	while (list) {
		Py_BEGIN_ALLOW_THREADS
		more = take(it);
		Py_END_ALLOW_THREADS
		if (!more)
			break;
		for (; list && it->pos < it->cur->n; it->pos++) {
			PyObject *o = sdpy_sock_new(it->st, it->cur, &it->cur->recs[it->pos],
						    it->sq.netns, it->ac);

			if (!o || PyList_Append(list, o) < 0)
				Py_CLEAR(list);
			Py_XDECREF(o);
		}
	}
	if (gc_was)
		PyGC_Enable();
	if (list && it->err) {
		sdpy_raise_dump(&it->sq, it->err);
		Py_CLEAR(list);
	}
	Py_XDECREF(it);
	return list;
}
