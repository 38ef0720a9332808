/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Python arguments -> a query: kinds (psutil's and sockdiag's tables), the
 * filter, the namespace; and negative errnos -> Python exceptions.
 */
#include "python/sockdiag/sdpy.h"
#include "python/sockdiag/args.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

PyObject *sdpy_raise_errno(int err, const char *what)
{
	int e = err < 0 ? -err : err;
	PyObject *exc = Py_BuildValue("(is)", e, what ? what : strerror(e));

	if (exc) {
		/* OSError(errno, ...) picks the subclass: PermissionError, ... */
		PyErr_SetObject(PyExc_OSError, exc);
		Py_DECREF(exc);
	}
	return NULL;
}

PyObject *sdpy_raise_dump(const struct sdpy_query *sq, int err)
{
	char msg[256];

	if (!sq->failed_table)
		return sdpy_raise_errno(err, NULL);
	sdpy_table_error((enum sdiag_table)(sq->failed_table - 1), err, msg, sizeof(msg));
	return sdpy_raise_errno(err, msg);
}

PyObject *sdpy_value_error(const char *what, const char *msg)
{
	PyObject *m = what ? PyUnicode_FromFormat("%s: ", what) : PyUnicode_FromString(""), *rest;

	rest = m ? PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "replace") : NULL;
	if (rest)
		PyUnicode_AppendAndDel(&m, rest);
	if (m) {
		PyErr_SetObject(PyExc_ValueError, m);
		Py_DECREF(m);
	}
	return NULL;
}

static void add_tables(struct sdpy_query *sq, const struct sdpy_kind *k)
{
	if (k->explicit_table)
		sq->explicit_tables |= k->tables;
	sq->q.tables |= k->tables;
	for (unsigned t = 0; t < SDIAG_T_MAX; t++)
		if (k->tables & SDIAG_TABLE_BIT(t))
			sq->afs[t] |= k->afs;
}

/* Add one kind name (a str) to sq. Returns 0 or -1 (ValueError). */
static int add_kind(struct sdpy_query *sq, PyObject *name)
{
	struct sdpy_kind k;
	Py_ssize_t len;
	const char *s = PyUnicode_AsUTF8AndSize(name, &len);
	char msg[512];

	if (!s)
		return -1;
	if (sdpy_kind_lookup(s, (size_t)len, &k) < 0) {
		sdpy_kind_error(s, (size_t)len, msg, sizeof(msg));
		sdpy_value_error(NULL, msg);
		return -1;
	}
	add_tables(sq, &k);
	return 0;
}

static int parse_kinds(struct sdpy_query *sq, PyObject *kind)
{
	PyObject *it, *item;
	int r = 0;

	if (!kind || kind == Py_None) {
		struct sdpy_kind k = { 0 };

		(void)sdpy_kind_lookup("inet", 4, &k);	/* psutil's default */
		add_tables(sq, &k);
		return 0;
	}
	if (PyUnicode_Check(kind))
		return add_kind(sq, kind);
	it = PyBytes_Check(kind) || PyByteArray_Check(kind) ? NULL : PyObject_GetIter(kind);
	if (!it) {
		PyErr_Clear();
		PyErr_SetString(PyExc_TypeError, "kind: a string or an iterable of strings");
		return -1;
	}
	while (r == 0 && (item = PyIter_Next(it))) {
		if (!PyUnicode_Check(item)) {
			PyErr_SetString(PyExc_TypeError, "kind: a string or an iterable of strings");
			r = -1;
		} else
			r = add_kind(sq, item);
		Py_DECREF(item);
	}
	Py_DECREF(it);
	if (r == 0 && PyErr_Occurred())
		r = -1;
	if (r == 0 && !sq->q.tables) {
		PyErr_SetString(PyExc_ValueError, "kind: no kind given");
		r = -1;
	}
	return r;
}

static void filter_error(struct sdpy_state *st, PyObject *expr,
			 const struct sdiag_filter_error *fe)
{
	PyObject *exc, *v;

	exc = PyObject_CallFunction(st->filter_error, "s", fe->msg);
	if (!exc)
		return;
	if ((v = PyLong_FromSize_t(fe->offset)) && PyObject_SetAttrString(exc, "position", v) == 0) {
		Py_DECREF(v);
		if ((v = PyLong_FromSize_t(fe->len)) && PyObject_SetAttrString(exc, "length", v) == 0 &&
		    PyObject_SetAttrString(exc, "expression", expr) == 0)
			PyErr_SetObject(st->filter_error, exc);
	}
	Py_XDECREF(v);
	Py_DECREF(exc);
}

int sdpy_filter_parse(struct sdpy_state *st, PyObject *expr, struct sdiag_filter **ret)
{
	struct sdiag_filter_error fe = { 0 };
	struct sdiag_filter *f = NULL;
	const char *s;
	Py_ssize_t n;
	int r;

	*ret = NULL;
	if (!expr || expr == Py_None)
		return 0;
	if (!PyUnicode_Check(expr)) {
		PyErr_SetString(PyExc_TypeError, "filter: a string (sockdiag(8)'s FILTER language)");
		return -1;
	}
	s = PyUnicode_AsUTF8AndSize(expr, &n);
	if (!s)
		return -1;
	if (strlen(s) != (size_t)n) {
		PyErr_SetString(PyExc_ValueError, "filter: embedded NUL");
		return -1;
	}
	/* Host and service names may be resolved: no GIL meanwhile. */
	Py_BEGIN_ALLOW_THREADS
	r = sdiag_filter_parse(&f, s, &fe);
	Py_END_ALLOW_THREADS
	if (r == -EINVAL) {
		filter_error(st, expr, &fe);
		return -1;
	}
	if (r < 0) {
		sdpy_raise_errno(r, fe.msg[0] ? fe.msg : NULL);
		return -1;
	}
	*ret = f;
	return 0;
}

int sdpy_netns_fd(PyObject *netns, int *ret_fd)
{
	PyObject *path;
	long v;
	int fd, r;

	*ret_fd = -1;
	if (!netns || netns == Py_None)
		return 0;
	if (PyLong_Check(netns)) {
		v = PyLong_AsLong(netns);
		if (v == -1 && PyErr_Occurred())
			return -1;
		if (v < 0 || v > INT32_MAX) {
			PyErr_SetString(PyExc_ValueError, "netns: a descriptor >= 0");
			return -1;
		}
		fd = fcntl((int)v, F_DUPFD_CLOEXEC, 0);
		if (fd < 0) {
			PyErr_SetFromErrno(PyExc_OSError);
			return -1;
		}
		*ret_fd = fd;
		return 0;
	}
	if (PyUnicode_Check(netns)) {
		Py_ssize_t len;
		const char *s = PyUnicode_AsUTF8AndSize(netns, &len);
		char msg[128];

		if (!s)
			return -1;
		if (sdpy_netns_check(s, (size_t)len, msg, sizeof(msg)) < 0) {
			PyErr_SetString(PyExc_ValueError, msg);
			return -1;
		}
	}
	if (!PyUnicode_FSConverter(netns, &path))
		return -1;
	if (PyBytes_GET_SIZE(path) == 0) {
		Py_DECREF(path);
		PyErr_SetString(PyExc_ValueError, "netns: an empty name");
		return -1;
	}
	Py_BEGIN_ALLOW_THREADS
	r = sdiag_netns_open(PyBytes_AS_STRING(path), &fd);
	Py_END_ALLOW_THREADS
	Py_DECREF(path);
	if (r < 0) {
		PyObject *exc = Py_BuildValue("(isO)", -r, sdpy_netns_reason(r), netns);

		if (exc) {
			PyErr_SetObject(PyExc_OSError, exc);
			Py_DECREF(exc);
		}
		return -1;
	}
	*ret_fd = fd;
	return 0;
}

int sdpy_query_init(struct sdpy_state *st, struct sdpy_query *sq, PyObject *kind,
		    PyObject *filter, PyObject *netns, int processes, int details)
{
	memset(sq, 0, sizeof(*sq));
	sq->q.sz = sizeof(sq->q);
	sq->nsfd = -1;
	if (parse_kinds(sq, kind) < 0 || sdpy_filter_parse(st, filter, &sq->filter) < 0 ||
	    sdpy_netns_fd(netns, &sq->nsfd) < 0)
		return -1;
	for (unsigned t = 0; t < SDIAG_T_MAX; t++)
		sq->q.afs |= sq->afs[t];	/* the union; sdpy_query_wants() sorts */
	sq->q.filter = sq->filter;
	sq->details = details;
	sq->q.show = details ? SDIAG_SHOW_ALL : 0;
	sq->processes = processes || sdiag_filter_needs_procs(sq->filter);
	if (netns && netns != Py_None)
		sq->netns = Py_NewRef(netns);
	return 0;
}

void sdpy_query_free(struct sdpy_query *sq)
{
	sdiag_filter_free(sq->filter);
	sdiag_procmap_free(sq->procmap);
	if (sq->nsfd >= 0)
		close(sq->nsfd);
	Py_CLEAR(sq->netns);
	memset(sq, 0, sizeof(*sq));
	sq->nsfd = -1;
}
