/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sockdiag._sockdiag: the module, connections() and kill(). Every call opens
 * its own handle (one netlink socket) and closes it before returning, so
 * threads never share one; dumps run without the GIL into compact C records
 * (collect.c), and Python objects are made afterwards (objects.c).
 */
#include "python/sockdiag/sdpy.h"

#include <errno.h>
#include <string.h>

struct sdpy_state *sdpy_state_of(PyObject *module)
{
	return PyModule_GetState(module);
}

/* A list of Sockets from every record of c. */
static PyObject *chunk_list(struct sdpy_state *st, const struct sdpy_chunk *c, PyObject *netns)
{
	struct sdpy_addr_cache *ac = PyMem_Calloc(1, sizeof(*ac));
	PyObject *list = ac ? PyList_New((Py_ssize_t)c->n) : PyErr_NoMemory();

	for (size_t i = 0; list && i < c->n; i++) {
		PyObject *o = sdpy_sock_new(st, c, &c->recs[i], netns, ac);

		if (!o)
			Py_CLEAR(list);
		else
			PyList_SET_ITEM(list, (Py_ssize_t)i, o);
	}
	if (ac)
		sdpy_addr_cache_clear(ac);
	PyMem_Free(ac);
	return list;
}

PyDoc_STRVAR(connections_doc,
"connections(kind='inet', filter=None, netns=None, processes=False, details=False)\n"
"--\n\n"
"The sockets of a network namespace, as a list of Socket.\n\n"
"kind: psutil's kinds (inet, inet4, inet6, tcp, tcp4, tcp6, udp, udp4, udp6,\n"
"  unix, all = tcp+udp+unix), sockdiag's tables (raw, udplite, sctp, mptcp,\n"
"  netlink, packet, packet_raw, vsock, xdp, tipc, smc, unix_stream, ...), or\n"
"  'every' (every table); or an iterable of those (their union).\n"
"filter: an expression of sockdiag(8)'s FILTER language, e.g.\n"
"  \"state established and dport = :443\" (FilterError if malformed).\n"
"netns: None (the caller's), a name under /run/netns, a path, 'pid:N', or an\n"
"  open descriptor of a namespace file (needs CAP_SYS_ADMIN).\n"
"processes: find the owning processes (Socket.pid, fd, processes), by a BPF\n"
"  iterator where it loads, else by walking /proc.\n"
"details: ask for tcp_info (Socket.tcp_info, a dict) and the other details.\n\n"
"The dump runs without the GIL; the list is built after it.");

/* ---- kill --------------------------------------------------------------- */

struct kill_ctx {
	struct sdpy_chunk c;
	struct sdpy_query *sq;
	const char **results;	/* per record */
	size_t cap;
};

static int kill_note(struct kill_ctx *k, const struct sdiag_sock *s, const char *result)
{
	int r;

	if (k->c.n == k->cap) {
		size_t ncap = k->cap ? k->cap * 2 : 256;
		const char **p = realloc(k->results, ncap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		k->results = p;
		k->cap = ncap;
	}
	r = sdpy_chunk_add(&k->c, s, false);
	if (r == 0)
		k->results[k->c.n - 1] = result;
	return r;
}

static int kill_cb(const struct sdiag_sock *s, enum sdiag_destroy_result res, int err,
		   void *userdata)
{
	(void)err;
	return kill_note(userdata, s, sdiag_destroy_result_name(res));
}

static int dry_cb(const struct sdiag_sock *s, void *userdata)
{
	return kill_note(userdata, s, sdiag_destroyable(s) ? "would-destroy" : "unsupported");
}

static int kill_err(enum sdiag_table t, int family, int err, void *userdata)
{
	struct kill_ctx *k = userdata;

	(void)family;
	return sdpy_table_err(k->sq, t, err);
}

/* Dump (dry run) or kill, without the GIL. */
static int kill_run(struct sdpy_query *sq, struct kill_ctx *k, bool dry_run)
{
	struct sdiag_handle *h = NULL;
	int r = sdpy_prepare(sq, &h);

	if (r >= 0 && dry_run)
		r = sdpy_dump(h, sq, dry_cb, k);
	else if (r >= 0) {
		r = sdiag_destroy_check(h);
		if (r >= 0)
			r = sdiag_kill(h, &sq->q, NULL, kill_cb, kill_err, k);
	}
	sdiag_close(h);
	return r;
}

PyDoc_STRVAR(kill_doc,
"kill(filter, kind='inet', netns=None, dry_run=False)\n"
"--\n\n"
"Destroy (SOCK_DESTROY) the sockets of kind that filter matches, and return\n"
"a list of (Socket, result), result one of 'destroyed', 'gone', 'unsupported',\n"
"'denied', 'error' ('would-destroy' or 'unsupported' with dry_run=True).\n\n"
"filter is required (a non-empty FILTER expression). The selection is\n"
"sockdiag kill's: the connected states only (no listener, no unconnected UDP\n"
"socket), unless filter has state clauses, which replace them. Without CAP_NET_ADMIN\n"
"over the namespace: PermissionError, before anything is destroyed. The\n"
"kernel destroys inet TCP, UDP and raw sockets; the owner of a destroyed\n"
"socket sees ECONNABORTED, a TCP peer a reset. Runs without the GIL.");

static PyObject *kill_py(PyObject *module, PyObject *args, PyObject *kwds)
{
	static char *kw[] = { "filter", "kind", "netns", "dry_run", NULL };
	struct sdpy_state *st = sdpy_state_of(module);
	PyObject *filter, *kind = NULL, *netns = NULL, *list = NULL;
	struct kill_ctx k = { 0 };
	struct sdpy_query sq;
	int dry_run = 0, r;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|OOp:kill", kw, &filter, &kind, &netns,
					 &dry_run))
		return NULL;
	if (!PyUnicode_Check(filter)) {
		PyErr_SetString(PyExc_TypeError, "kill: filter: a string (sockdiag(8)'s FILTER "
						 "language)");
		return NULL;
	}
	if (PyUnicode_GET_LENGTH(filter) == 0) {
		PyErr_SetString(PyExc_ValueError,
				"kill: filter must be a non-empty FILTER expression");
		return NULL;
	}
	if (sdpy_query_init(st, &sq, kind, filter, netns, 0, 0) < 0)
		goto out;
	/* Each table's families: the query's table_afs (sdpy_prepare). */
	/* sockdiag kill's selection (sockdiag(8), KILL): ss's default states, the connected
	 * ones (no listener, no unconnected UDP or raw socket, no TIME-WAIT), unless the
	 * filter has state clauses: those replace them. */
	sq.q.states = sdiag_filter_names_states(sq.filter) ? SDIAG_STATES_ALL :
							     SDIAG_STATES_CONNECTED;
	k.sq = &sq;
	Py_BEGIN_ALLOW_THREADS
	r = kill_run(&sq, &k, dry_run);
	Py_END_ALLOW_THREADS
	if (r < 0 && (r == -EPERM || r == -EOPNOTSUPP)) {
		sdpy_raise_errno(r, r == -EPERM ? "no CAP_NET_ADMIN over the network namespace: "
						 "no socket can be destroyed" :
						 "the kernel cannot destroy sockets "
						 "(no CONFIG_INET_DIAG_DESTROY)");
		goto out;
	}
	if (r < 0) {
		sdpy_raise_dump(&sq, r);
		goto out;
	}
	list = chunk_list(st, &k.c, sq.netns);
	for (size_t i = 0; list && i < k.c.n; i++) {
		PyObject *pair = Py_BuildValue("(Os)", PyList_GET_ITEM(list, i), k.results[i]);

		if (!pair)
			Py_CLEAR(list);
		else
			PyList_SetItem(list, (Py_ssize_t)i, pair);
	}
out:
	free(k.results);
	sdpy_chunk_free(&k.c);
	sdpy_query_free(&sq);
	return list;
}

/* ---- the module ---------------------------------------------------------- */

PyDoc_STRVAR(count_by_doc,
"count_by(keys, kind='inet', filter=None, netns=None)\n"
"--\n\n"
"Count sockets by keys: a dict {value: count} for one key, {tuple of the\n"
"keys' values: count} for several. keys is a sequence of names, or one string\n"
"of names separated by commas (none empty, none twice), those of sockdiag list\n"
"--count-by: state, proto (netid), family, laddr (lip), raddr (rip, peer): the\n"
"IP, lport, rport, uid, cgroup, cgroup_id, pid, process (comm) (pid and\n"
"process: the first owner's; they make it scan the processes), and type,\n"
"status, lendpoint, rendpoint ((ip, port) as Socket.laddr, raddr).\n"
"Values are as in Socket.\n"
"Counted in C without the GIL: memory grows with the groups, not the sockets.");

PyDoc_STRVAR(iter_doc,
"iter_connections(kind='inet', filter=None, netns=None, processes=False, details=False)\n"
"--\n\n"
"As connections(), one Socket at a time. The caller's thread pulls the dump\n"
"1024 records at a time (without the GIL), then makes them Sockets: no thread,\n"
"and memory stays constant in the number of sockets (the process\n"
"map of processes=True is the exception: it holds every socket descriptor).\n"
"Sockets come as the kernel dumps them: the netlink dump stays open while\n"
"the generator is alive, and a socket may be reported that has closed since.");

PyDoc_STRVAR(watch_doc,
"watch(filter=None, netns=None)\n"
"--\n\n"
"An iterator of Socket: the TCP and UDP sockets (IPv4 and IPv6) the kernel\n"
"destroys from now on, that filter matches (state CLOSE; uid and inode 0).\n"
"Iterating blocks; read(timeout) returns what arrives within timeout seconds.\n"
"The object has fileno() (for select/poll), close(), .lost (events the\n"
"kernel dropped) and is a context manager.");

PyDoc_STRVAR(life_doc,
"life(filter=None, netns=None, interval=1.0, bpf=False, dump_budget=None)\n"
"--\n\n"
"An iterator of dicts: one per TCP or UDP connection that ends from now on\n"
"(the records of `sockdiag life --json`: outcome, duration, payload bytes,\n"
"RTT, owner...), that filter matches; the sockets are dumped every interval\n"
"seconds (first seen, owners, ends while held), later when a dump costs more\n"
"than dump_budget percent of a core (None: 0.25; 0: never later). bpf=True:\n"
"exact TCP starts and owners, as --bpf. Iterating blocks. The object has\n"
"close(), .lost (events the kernel dropped), .bpf_lost and is a context manager.");

static PyMethodDef methods[] = {
	{ "connections", (PyCFunction)(void (*)(void))sdpy_connections, METH_VARARGS | METH_KEYWORDS,
	  connections_doc },
	{ "iter_connections", (PyCFunction)(void (*)(void))sdpy_iter_connections,
	  METH_VARARGS | METH_KEYWORDS, iter_doc },
	{ "count_by", (PyCFunction)(void (*)(void))sdpy_count_by, METH_VARARGS | METH_KEYWORDS,
	  count_by_doc },
	{ "kill", (PyCFunction)(void (*)(void))kill_py, METH_VARARGS | METH_KEYWORDS, kill_doc },
	{ "watch", (PyCFunction)(void (*)(void))sdpy_watch, METH_VARARGS | METH_KEYWORDS,
	  watch_doc },
	{ "life", (PyCFunction)(void (*)(void))sdpy_life, METH_VARARGS | METH_KEYWORDS, life_doc },
	{ NULL, NULL, 0, NULL },
};

static int mod_clear(PyObject *m)
{
	struct sdpy_state *st = sdpy_state_of(m);

	if (st) {
		sdpy_objects_clear(st);
		Py_CLEAR(st->filter_error);
		Py_CLEAR(st->iter_type);
		Py_CLEAR(st->watch_type);
		Py_CLEAR(st->life_type);
	}
	return 0;
}

static void mod_free(void *m)
{
	mod_clear(m);
}

static struct PyModuleDef moddef = {
	PyModuleDef_HEAD_INIT,
	.m_name = "sockdiag._sockdiag",
	.m_doc = "The C part of sockdiag: see help(sockdiag).",
	.m_size = sizeof(struct sdpy_state),
	.m_methods = methods,
	.m_clear = mod_clear,
	.m_free = mod_free,
};

PyDoc_STRVAR(filter_error_doc,
"A malformed filter expression (a ValueError). Attributes: position (the\n"
"byte offset of the offending token in the expression's UTF-8), length (its\n"
"length in bytes), expression.");

PyMODINIT_FUNC PyInit__sockdiag(void);
PyMODINIT_FUNC PyInit__sockdiag(void)
{
	PyObject *m = PyModule_Create(&moddef);
	struct sdpy_state *st;

	if (!m)
		return NULL;
	st = sdpy_state_of(m);
	st->filter_error = PyErr_NewExceptionWithDoc("sockdiag.FilterError", filter_error_doc,
						     PyExc_ValueError, NULL);
	if (!st->filter_error || PyModule_AddObjectRef(m, "FilterError", st->filter_error) < 0 ||
	    sdpy_objects_init(st, m) < 0 || sdpy_iter_init(st, m) < 0 ||
	    sdpy_watch_init(st, m) < 0 || sdpy_life_init(st, m) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
