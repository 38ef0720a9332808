/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * watch(): the kernel's socket-destroy events as an iterator of Socket.
 * Waiting (poll) and reading run without the GIL; a signal interrupts the
 * wait and its Python handler runs (KeyboardInterrupt...).
 */
#include "python/sockdiag/sdpy.h"
#include "util/clock.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

struct sdpy_watch {
	PyObject_HEAD
	struct sdpy_state *st;
	PyObject *module;
	PyObject *netns;
	struct sdiag_watch *w;
	struct sdiag_filter *filter;
	struct sdpy_chunk c;	/* events read, not yet returned */
	size_t pos;
	unsigned long long lost;
};

static int closed(struct sdpy_watch *wo)
{
	if (wo->w)
		return 0;
	PyErr_SetString(PyExc_ValueError, "watch: operation on a closed watch");
	return -1;
}

static int event_cb(const struct sdiag_sock *s, void *userdata)
{
	return sdpy_chunk_add(userdata, s, false);
}

/* Read what is pending into wo->c (emptied first when all was returned). */
static int read_pending(struct sdpy_watch *wo)
{
	uint64_t lost = 0;
	int r;

	if (wo->pos >= wo->c.n) {
		sdpy_chunk_reset(&wo->c);
		wo->pos = 0;
	}
	Py_BEGIN_ALLOW_THREADS
	r = sdiag_watch_read(wo->w, wo->filter, event_cb, &wo->c, &lost);
	Py_END_ALLOW_THREADS
	wo->lost += lost;
	if (r < 0) {
		sdpy_raise_errno(r, NULL);
		return -1;
	}
	return 0;
}

static double now(void)
{
	return (double)mono_ns() / 1e9;
}

/* Wait until readable or timeout seconds (< 0: forever). Returns 1 readable,
 * 0 timed out, -1 with an exception (a signal handler's). */
static int wait_readable(struct sdpy_watch *wo, double timeout)
{
	double end = timeout >= 0 ? now() + timeout : 0;
	struct pollfd p = { .fd = sdiag_watch_fd(wo->w), .events = POLLIN };
	int r, ms;

	for (;;) {
		ms = -1;
		if (timeout >= 0) {
			double left = end - now();

			ms = left <= 0 ? 0 : (int)ceil(left * 1000 > INT32_MAX ? INT32_MAX : left * 1000);
		}
		Py_BEGIN_ALLOW_THREADS
		r = poll(&p, 1, ms);
		Py_END_ALLOW_THREADS
		if (r >= 0)
			return r > 0;
		if (errno != EINTR) {
			PyErr_SetFromErrno(PyExc_OSError);
			return -1;
		}
		if (PyErr_CheckSignals() < 0)
			return -1;
	}
}

static PyObject *watch_next(PyObject *self)
{
	struct sdpy_watch *wo = (struct sdpy_watch *)self;

	if (closed(wo) < 0)
		return NULL;
	while (wo->pos >= wo->c.n) {
		if (wait_readable(wo, -1) < 0 || read_pending(wo) < 0)
			return NULL;
	}
	return sdpy_sock_new(wo->st, &wo->c, &wo->c.recs[wo->pos++], wo->netns, NULL);
}

PyDoc_STRVAR(read_doc,
"read(timeout=None)\n--\n\n"
"The events pending, or else those that arrive within timeout seconds\n"
"(None: wait for at least one), as a list of Socket (maybe empty).");

static PyObject *watch_read(PyObject *self, PyObject *args, PyObject *kwds)
{
	static char *kw[] = { "timeout", NULL };
	struct sdpy_watch *wo = (struct sdpy_watch *)self;
	PyObject *tobj = Py_None, *list;
	double timeout = -1, end;
	int r;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:read", kw, &tobj))
		return NULL;
	if (tobj != Py_None) {
		timeout = PyFloat_AsDouble(tobj);
		if (timeout == -1 && PyErr_Occurred())
			return NULL;
		if (timeout < 0 || isnan(timeout)) {
			PyErr_SetString(PyExc_ValueError, "read: timeout must be >= 0 or None");
			return NULL;
		}
	}
	if (closed(wo) < 0 || read_pending(wo) < 0)
		return NULL;
	/* Events the filter drops wake the poll too: wait on until one matches or the
	 * time is up (read(0.2) returned [] at once after an unmatched event). */
	end = timeout >= 0 ? now() + timeout : 0;
	while (wo->pos >= wo->c.n) {
		double left = timeout >= 0 ? end - now() : -1;

		if (timeout >= 0 && left < 0)
			left = 0;
		r = wait_readable(wo, left);
		if (r < 0 || (r > 0 && read_pending(wo) < 0))
			return NULL;
		if (r == 0)
			break;
	}
	list = PyList_New(0);
	while (list && wo->pos < wo->c.n) {
		PyObject *o = sdpy_sock_new(wo->st, &wo->c, &wo->c.recs[wo->pos], wo->netns, NULL);

		if (!o || PyList_Append(list, o) < 0)
			Py_CLEAR(list);
		Py_XDECREF(o);
		wo->pos++;
	}
	return list;
}

static PyObject *watch_close(PyObject *self, PyObject *unused)
{
	struct sdpy_watch *wo = (struct sdpy_watch *)self;

	(void)unused;
	sdiag_watch_close(wo->w);
	wo->w = NULL;
	Py_RETURN_NONE;
}

static PyObject *watch_fileno(PyObject *self, PyObject *unused)
{
	struct sdpy_watch *wo = (struct sdpy_watch *)self;

	(void)unused;
	if (closed(wo) < 0)
		return NULL;
	return PyLong_FromLong(sdiag_watch_fd(wo->w));
}

static PyObject *watch_enter(PyObject *self, PyObject *unused)
{
	(void)unused;
	return Py_NewRef(self);
}

static PyObject *watch_exit(PyObject *self, PyObject *args)
{
	(void)args;
	return watch_close(self, NULL);
}

static PyObject *watch_lost(PyObject *self, void *closure)
{
	(void)closure;
	return PyLong_FromUnsignedLongLong(((struct sdpy_watch *)self)->lost);
}

static void watch_dealloc(PyObject *self)
{
	struct sdpy_watch *wo = (struct sdpy_watch *)self;
	PyTypeObject *tp = Py_TYPE(self);

	sdiag_watch_close(wo->w);
	sdiag_filter_free(wo->filter);
	sdpy_chunk_free(&wo->c);
	Py_XDECREF(wo->netns);
	Py_XDECREF(wo->module);
	tp->tp_free(self);
	Py_DECREF(tp);
}

static PyMethodDef watch_methods[] = {
	{ "read", (PyCFunction)(void (*)(void))watch_read, METH_VARARGS | METH_KEYWORDS, read_doc },
	{ "fileno", watch_fileno, METH_NOARGS, "The descriptor to poll." },
	{ "close", watch_close, METH_NOARGS, "Stop watching (idempotent)." },
	{ "__enter__", watch_enter, METH_NOARGS, NULL },
	{ "__exit__", watch_exit, METH_VARARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef watch_getset[] = {
	{ "lost", watch_lost, NULL, "events the kernel dropped (receive queue full)", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot watch_slots[] = {
	{ Py_tp_dealloc, watch_dealloc },
	{ Py_tp_iter, PyObject_SelfIter },
	{ Py_tp_iternext, watch_next },
	{ Py_tp_methods, watch_methods },
	{ Py_tp_getset, watch_getset },
	{ Py_tp_doc, "watch()'s iterator of destroyed sockets (see sockdiag.watch)." },
	{ 0, NULL },
};

static PyType_Spec watch_spec = {
	.name = "sockdiag.Watch",
	.basicsize = sizeof(struct sdpy_watch),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
	.slots = watch_slots,
};

int sdpy_watch_init(struct sdpy_state *st, PyObject *module)
{
	st->watch_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &watch_spec, NULL);
	if (!st->watch_type)
		return -1;
	return PyModule_AddObjectRef(module, "Watch", (PyObject *)st->watch_type);
}

PyObject *sdpy_watch(PyObject *module, PyObject *args, PyObject *kwds)
{
	static char *kw[] = { "filter", "netns", NULL };
	struct sdpy_state *st = sdpy_state_of(module);
	PyObject *filter = NULL, *netns = NULL;
	struct sdpy_watch *wo;
	int nsfd = -1, r;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "|OO:watch", kw, &filter, &netns))
		return NULL;
	wo = PyObject_New(struct sdpy_watch, st->watch_type);
	if (!wo)
		return NULL;
	memset((char *)wo + sizeof(PyObject), 0, sizeof(*wo) - sizeof(PyObject));
	wo->st = st;
	wo->module = Py_NewRef(module);
	if (netns && netns != Py_None)
		wo->netns = Py_NewRef(netns);
	if (sdpy_filter_parse(st, filter, &wo->filter) < 0 || sdpy_netns_fd(netns, &nsfd) < 0) {
		Py_DECREF(wo);
		return NULL;
	}
	Py_BEGIN_ALLOW_THREADS
	r = sdiag_watch_open(&wo->w, SDIAG_WATCH_ALL, nsfd);
	Py_END_ALLOW_THREADS
	if (nsfd >= 0)
		close(nsfd);
	if (r < 0) {
		Py_DECREF(wo);
		return sdpy_raise_errno(r, NULL);
	}
	return (PyObject *)wo;
}
