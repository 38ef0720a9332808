/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Python arguments -> a query: kinds (psutil's and sockdiag's tables), the
 * filter, the namespace; and negative errnos -> Python exceptions.
 */
#include "python/sockdiag/sdpy.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#define T(x) SDIAG_TABLE_BIT(SDIAG_T_##x)

/* psutil's kinds: tables and address families. */
static const struct {
	const char *name;
	uint32_t tables;
	uint8_t afs;
} psutil_kinds[] = {
	{ "inet", T(TCP) | T(UDP), SDIAG_AF_ALL },
	{ "inet4", T(TCP) | T(UDP), SDIAG_AF_INET },
	{ "inet6", T(TCP) | T(UDP), SDIAG_AF_INET6 },
	{ "tcp", T(TCP), SDIAG_AF_ALL },
	{ "tcp4", T(TCP), SDIAG_AF_INET },
	{ "tcp6", T(TCP), SDIAG_AF_INET6 },
	{ "udp", T(UDP), SDIAG_AF_ALL },
	{ "udp4", T(UDP), SDIAG_AF_INET },
	{ "udp6", T(UDP), SDIAG_AF_INET6 },
	{ "unix", SDIAG_TABLES_UNIX, SDIAG_AF_ALL },
	{ "all", T(TCP) | T(UDP) | SDIAG_TABLES_UNIX, SDIAG_AF_ALL },
};

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

/* Add one kind name to sq. Returns 0 or -1 (ValueError). */
static int add_kind(struct sdpy_query *sq, const char *name)
{
	uint32_t mask = 0;
	uint8_t afs = SDIAG_AF_ALL;

	for (size_t i = 0; i < sizeof(psutil_kinds) / sizeof(psutil_kinds[0]); i++) {
		if (!strcmp(name, psutil_kinds[i].name)) {
			mask = psutil_kinds[i].tables;
			afs = psutil_kinds[i].afs;
			break;
		}
	}
	if (!mask && !strcmp(name, "every"))
		mask = sdiag_table_mask_by_name("all");
	else if (!mask && strcmp(name, "all") && strcmp(name, "inet") && strcmp(name, "unix")) {
		mask = sdiag_table_mask_by_name(name);
		if (mask && !(mask & (mask - 1)))
			sq->explicit_tables |= mask;
	}
	if (!mask) {
		PyErr_Format(PyExc_ValueError,
			     "unknown kind '%s' (psutil's: inet, inet4, inet6, tcp, tcp4, tcp6, udp, "
			     "udp4, udp6, unix, all; tables: raw, udplite, sctp, mptcp, netlink, "
			     "packet, vsock, xdp, tipc, smc, unix_stream, ...; every)",
			     name);
		return -1;
	}
	sq->q.tables |= mask;
	for (unsigned t = 0; t < SDIAG_T_MAX; t++)
		if (mask & SDIAG_TABLE_BIT(t))
			sq->afs[t] |= afs;
	return 0;
}

static int parse_kinds(struct sdpy_query *sq, PyObject *kind)
{
	PyObject *it, *item;
	int r = 0;

	if (!kind || kind == Py_None)
		return add_kind(sq, "inet");
	if (PyUnicode_Check(kind)) {
		const char *s = PyUnicode_AsUTF8(kind);

		return s ? add_kind(sq, s) : -1;
	}
	it = PyObject_GetIter(kind);
	if (!it) {
		PyErr_SetString(PyExc_TypeError, "kind: a string or an iterable of strings");
		return -1;
	}
	while (r == 0 && (item = PyIter_Next(it))) {
		const char *s = PyUnicode_Check(item) ? PyUnicode_AsUTF8(item) : NULL;

		if (!s && !PyErr_Occurred())
			PyErr_SetString(PyExc_TypeError, "kind: a string or an iterable of strings");
		r = s ? add_kind(sq, s) : -1;
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
	if (!PyUnicode_FSConverter(netns, &path))
		return -1;
	Py_BEGIN_ALLOW_THREADS
	r = sdiag_netns_open(PyBytes_AS_STRING(path), &fd);
	Py_END_ALLOW_THREADS
	Py_DECREF(path);
	if (r < 0) {
		PyObject *exc = Py_BuildValue("(isO)", -r, strerror(-r), netns);

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
