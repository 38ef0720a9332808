/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * life(): one dict per ended connection (the engine of life/life.h), the
 * members of `sockdiag life --json`'s records. Waiting runs without the GIL;
 * the engine's reads and dumps make the dicts with it.
 */
#include "python/sockdiag/sdpy.h"
#include "life/life.h"
#include "util/clock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <unistd.h>

#include "util/inaddr.h"

struct sdpy_life {
	PyObject_HEAD
	struct life *l;
	struct sdiag_filter *filter;
	PyObject *netns;
	PyObject *pending;	/* list of dicts not yet returned */
	uint64_t next_poll;
	unsigned long long lost;
	uint64_t bpf_lost;	/* after close(): the ring's losses */
};

static PyObject *addr_obj(const struct life_rec *r, bool local)
{
	const uint8_t *a = local ? r->src : r->dst;
	uint8_t fam = in_plain(r->family, a, &a);
	char buf[INET6_ADDRSTRLEN];

	inet_ntop(fam, a, buf, sizeof(buf));
	return Py_BuildValue("{s:s,s:H}", "addr", buf, "port", local ? r->sport : r->dport);
}

static int put(PyObject *d, const char *k, PyObject *v)
{
	int r = v ? PyDict_SetItemString(d, k, v) : -1;

	Py_XDECREF(v);
	return r;
}

static int rec_cb(const struct life_rec *r, void *ud)
{
	struct sdpy_life *lo = ud;
	PyObject *d = PyDict_New();
	char cookie[24];
	int e = d ? 0 : -1;

	snprintf(cookie, sizeof(cookie), "%llx", (unsigned long long)r->cookie);
	e = e ?: put(d, "time", PyFloat_FromDouble((double)r->end_ms / 1000));
	e = e ?: put(d, "start", r->start_ms ? PyFloat_FromDouble((double)r->start_ms / 1000)
					  : Py_NewRef(Py_None));
	e = e ?: put(d, "duration_ms", r->start_ms ? PyLong_FromUnsignedLongLong(r->end_ms -
										   r->start_ms)
						   : Py_NewRef(Py_None));
	e = e ?: put(d, "start_exact", PyBool_FromLong(r->start_exact));
	if (lo->netns)
		e = e ?: put(d, "netns", Py_NewRef(lo->netns));
	e = e ?: put(d, "proto", PyUnicode_FromString(r->proto == IPPROTO_UDP ? "udp" : "tcp"));
	e = e ?: put(d, "local", addr_obj(r, true));
	e = e ?: put(d, "peer", addr_obj(r, false));
	e = e ?: put(d, "cookie", PyUnicode_FromString(cookie));
	e = e ?: put(d, "state", PyUnicode_FromString(r->state ? sdiag_state_name(r->state) : ""));
	e = e ?: put(d, "outcome", PyUnicode_FromString(life_outcome_name(r->outcome)));
	e = e ?: put(d, "seen_closed", PyBool_FromLong(r->by_poll));
	if (r->has_info) {
		e = e ?: put(d, "bytes_acked", PyLong_FromUnsignedLongLong(r->bytes_acked));
		e = e ?: put(d, "bytes_received", PyLong_FromUnsignedLongLong(r->bytes_received));
		e = e ?: put(d, "segs_out", PyLong_FromUnsignedLong(r->segs_out));
		e = e ?: put(d, "segs_in", PyLong_FromUnsignedLong(r->segs_in));
		e = e ?: put(d, "retrans", PyLong_FromUnsignedLong(r->total_retrans));
		e = e ?: put(d, "rtt_us", PyLong_FromUnsignedLong(r->rtt_us));
		e = e ?: put(d, "min_rtt_us", PyLong_FromUnsignedLong(r->min_rtt_us));
		e = e ?: put(d, "delivery_rate", PyLong_FromUnsignedLongLong(r->delivery_rate));
	}
	if (r->has_queues) {
		e = e ?: put(d, "recv_q", PyLong_FromUnsignedLong(r->rqueue));
		e = e ?: put(d, "send_q", PyLong_FromUnsignedLong(r->wqueue));
	}
	if (r->has_drops)
		e = e ?: put(d, "drops", PyLong_FromUnsignedLong(r->drops));
	e = e ?: put(d, "owner", r->pid ? Py_BuildValue("{s:i,s:s#}", "pid", r->pid, "comm",
							r->comm, (Py_ssize_t)strnlen(r->comm, 16))
					 : Py_NewRef(Py_None));
	if (r->cgroup_id)
		e = e ?: put(d, "cgroup_id", PyLong_FromUnsignedLongLong(r->cgroup_id));
	e = e ?: PyList_Append(lo->pending, d);
	Py_XDECREF(d);
	return e < 0 ? -ENOMEM : 0;
}

/* Wait for events or the next dump, then read or dump. 0 or -1 with an exception. */
static int step(struct sdpy_life *lo)
{
	size_t n = life_n(lo->l);
	struct pollfd p[64];
	uint64_t lost = 0, now = mono_ns();
	int r, ms;

	if (now >= lo->next_poll) {
		r = life_poll(lo->l, rec_cb, lo, &lost);
		lo->next_poll = life_due(lo->l);
		lo->lost += lost;
		if (r < 0 && !PyErr_Occurred())
			sdpy_raise_errno(r, NULL);
		return r < 0 ? -1 : 0;
	}
	ms = (int)((lo->next_poll - now + 999999) / 1000000);
	for (size_t i = 0; i < n && i < 64; i++)
		p[i] = (struct pollfd){ .fd = life_fd(lo->l, i), .events = POLLIN };
	Py_BEGIN_ALLOW_THREADS
	r = poll(p, n < 64 ? n : 64, ms);
	Py_END_ALLOW_THREADS
	if (r < 0) {
		if (errno != EINTR) {
			PyErr_SetFromErrno(PyExc_OSError);
			return -1;
		}
		return PyErr_CheckSignals();
	}
	for (size_t i = 0; i < n && i < 64; i++) {
		if (!(p[i].revents & (POLLIN | POLLERR)))
			continue;
		r = life_events(lo->l, i, rec_cb, lo, &lost);
		lo->lost += lost;
		if (r < 0) {
			if (!PyErr_Occurred())
				sdpy_raise_errno(r, NULL);
			return -1;
		}
	}
	return 0;
}

static PyObject *life_next(PyObject *self)
{
	struct sdpy_life *lo = (struct sdpy_life *)self;
	PyObject *d;

	if (!lo->l) {
		PyErr_SetString(PyExc_ValueError, "life: operation on a closed life");
		return NULL;
	}
	while (PyList_GET_SIZE(lo->pending) == 0)
		if (step(lo) < 0)
			return NULL;
	d = Py_NewRef(PyList_GET_ITEM(lo->pending, 0));
	if (PyList_SetSlice(lo->pending, 0, 1, NULL) < 0)
		Py_CLEAR(d);
	return d;
}

static PyObject *life_close(PyObject *self, PyObject *unused)
{
	struct sdpy_life *lo = (struct sdpy_life *)self;

	(void)unused;
	if (lo->l)
		lo->bpf_lost = life_bpf_missed(lo->l);
	life_free(lo->l);
	lo->l = NULL;
	Py_RETURN_NONE;
}

static PyObject *life_enter(PyObject *self, PyObject *unused)
{
	(void)unused;
	return Py_NewRef(self);
}

static PyObject *life_exit(PyObject *self, PyObject *args)
{
	(void)args;
	return life_close(self, NULL);
}

static PyObject *life_lost(PyObject *self, void *closure)
{
	(void)closure;
	return PyLong_FromUnsignedLongLong(((struct sdpy_life *)self)->lost);
}

static PyObject *life_bpf_lost_get(PyObject *self, void *closure)
{
	const struct sdpy_life *lo = (const struct sdpy_life *)self;

	(void)closure;
	return PyLong_FromUnsignedLongLong(lo->l ? life_bpf_missed(lo->l) : lo->bpf_lost);
}

static void life_dealloc(PyObject *self)
{
	struct sdpy_life *lo = (struct sdpy_life *)self;
	PyTypeObject *tp = Py_TYPE(self);

	life_free(lo->l);
	sdiag_filter_free(lo->filter);
	Py_XDECREF(lo->pending);
	Py_XDECREF(lo->netns);
	tp->tp_free(self);
	Py_DECREF(tp);
}

static PyMethodDef life_methods[] = {
	{ "close", life_close, METH_NOARGS, "Stop (idempotent)." },
	{ "__enter__", life_enter, METH_NOARGS, NULL },
	{ "__exit__", life_exit, METH_VARARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef life_getset[] = {
	{ "lost", life_lost, NULL, "events the kernel dropped (receive queue full)", NULL },
	{ "bpf_lost", life_bpf_lost_get, NULL,
	  "bpf=True: tracepoint records the ring buffer had no room for (births, owners, ends: "
	  "not exact, not missing)", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot life_slots[] = {
	{ Py_tp_dealloc, life_dealloc },
	{ Py_tp_iter, PyObject_SelfIter },
	{ Py_tp_iternext, life_next },
	{ Py_tp_methods, life_methods },
	{ Py_tp_getset, life_getset },
	{ Py_tp_doc, "life()'s iterator of ended connections (see sockdiag.life)." },
	{ 0, NULL },
};

static PyType_Spec life_spec = {
	.name = "sockdiag.Life",
	.basicsize = sizeof(struct sdpy_life),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
	.slots = life_slots,
};

int sdpy_life_init(struct sdpy_state *st, PyObject *module)
{
	st->life_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &life_spec, NULL);
	if (!st->life_type)
		return -1;
	return PyModule_AddObjectRef(module, "Life", (PyObject *)st->life_type);
}

PyObject *sdpy_life(PyObject *module, PyObject *args, PyObject *kwds)
{
	static char *kw[] = { "filter", "netns", "interval", "bpf", "dump_budget", NULL };
	struct sdpy_state *st = sdpy_state_of(module);
	PyObject *filter = NULL, *netns = NULL, *budget_obj = Py_None;
	struct life_opts o = { .groups = SDIAG_WATCH_ALL, .owners = true,
			       .tables = SDIAG_TABLE_BIT(SDIAG_T_TCP) |
					 SDIAG_TABLE_BIT(SDIAG_T_UDP) };
	double interval = 1.0, budget = 0;
	struct sdpy_life *lo;
	int nsfd = -1, bpf = 0, r;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "|OOdpO:life", kw, &filter, &netns,
					 &interval, &bpf, &budget_obj))
		return NULL;
	o.bpf = bpf;
	if (!(interval > 0) || interval > 86400) {
		PyErr_SetString(PyExc_ValueError, "life: interval must be > 0 seconds");
		return NULL;
	}
	/* dump_budget: percent of a core (as --dump-budget), 0 off; None: the default. */
	if (budget_obj != Py_None) {
		budget = PyFloat_AsDouble(budget_obj);
		if (budget == -1 && PyErr_Occurred())
			return NULL;
		if (!(budget == 0 || (budget >= 0.001 && budget <= 100))) {
			PyErr_SetString(PyExc_ValueError, "life: dump_budget must be 0 (off) or a "
					"percentage of a core from 0.001 to 100");
			return NULL;
		}
		o.budget_ppm = budget == 0 ? LIFE_BUDGET_OFF : (uint32_t)(budget * 10000 + 0.5);
	}
	lo = PyObject_New(struct sdpy_life, st->life_type);
	if (!lo)
		return NULL;
	memset((char *)lo + sizeof(PyObject), 0, sizeof(*lo) - sizeof(PyObject));
	o.interval_ns = (uint64_t)(interval * 1e9);
	lo->pending = PyList_New(0);
	if (netns && netns != Py_None)
		lo->netns = Py_NewRef(netns);
	if (!lo->pending || sdpy_filter_parse(st, filter, &lo->filter) < 0 ||
	    sdpy_netns_fd(netns, &nsfd) < 0) {
		Py_DECREF(lo);
		return NULL;
	}
	o.filter = lo->filter;
	o.nsfds = nsfd >= 0 ? &nsfd : NULL;
	o.n = nsfd >= 0 ? 1 : 0;
	Py_BEGIN_ALLOW_THREADS
	r = life_open(&lo->l, &o);
	Py_END_ALLOW_THREADS
	if (nsfd >= 0)
		close(nsfd);
	if (r < 0) {
		Py_DECREF(lo);
		return sdpy_raise_errno(r, NULL);
	}
	/* bpf=True that cannot load: a warning, and the starts are first seen (as the CLI). */
	if (bpf && (r = life_bpf_error(lo->l)) &&
	    PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "life: bpf: cannot load the tracepoint "
			     "program: %s; starts are first seen", life_bpf_why(r)) < 0) {
		Py_DECREF(lo);
		return NULL;
	}
	return (PyObject *)lo;
}
