/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Compact records -> Python objects. The fields psutil also has get psutil's
 * values: family and type as socket.AddressFamily / socket.SocketKind members,
 * laddr/raddr as addr(ip, port) or () when the port is 0 (a unix socket: its
 * path, and "" for raddr), status as psutil's strings ("NONE" but for inet
 * stream sockets).
 */
#include "python/sockdiag/sdpy.h"
#include "util/hash.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>

static PyObject *sock_repr(PyObject *self);

static PyStructSequence_Field sock_fields[] = {
	{ "fd", "a descriptor of the socket in its first owner, -1 if unknown" },
	{ "family", "socket.AddressFamily member (AF_INET, AF_INET6, AF_UNIX, ...)" },
	{ "type", "socket.SocketKind member (SOCK_STREAM, SOCK_DGRAM, ...)" },
	{ "laddr", "local address: addr(ip, port) or () (inet), the path (unix)" },
	{ "raddr", "remote address: addr(ip, port) or () (inet), \"\" (unix)" },
	{ "status", "psutil's status string (ESTABLISHED, LISTEN, ..., NONE)" },
	{ "pid", "pid of the first owner, None if unknown or not asked for" },
	{ "netid", "the socket's table, as ss's Netid column (tcp, udp, u_str, nl, ...)" },
	{ "state", "ss's state name (ESTAB, LISTEN, UNCONN, TIME-WAIT, ...)" },
	{ "cookie", "the kernel's socket cookie (its identity)" },
	{ "inode", "the socket's inode (0 for sockets without a file)" },
	{ "uid", "the socket's uid, None if the kernel did not say" },
	{ "netns", "the netns argument it was dumped with, None for the caller's" },
	{ "cgroup", "cgroup v2 path as filters take it (/system.slice/x.service; inet), None if "
		    "not reported or gone" },
	{ "cgroup_id", "cgroup v2 id (the cgroup directory's inode; inet), None if not reported" },
	{ "processes", "tuple of proc(pid, comm, fd) holding it (processes=True)" },
	{ "rqueue", "receive queue (bytes, or pending connections of a listener)" },
	{ "wqueue", "send queue (bytes, or the backlog of a listener)" },
	{ "tcp_info", "dict of struct tcp_info (details=True, TCP), else None" },
	{ NULL, NULL },
};

static PyStructSequence_Desc sock_desc = {
	"sockdiag.Socket",
	"One socket. The first seven fields are psutil's sconn (fd, family, type,\n"
	"laddr, raddr, status, pid) and unpack like it; the others are attributes.",
	sock_fields,
	SDPY_F_VISIBLE,
};

/* psutil's status names, by the kernel's TCP state. */
static const char *const status_names[SDIAG_SS_MAX] = {
	[SDIAG_SS_UNKNOWN] = "NONE",
	[SDIAG_SS_ESTABLISHED] = "ESTABLISHED",
	[SDIAG_SS_SYN_SENT] = "SYN_SENT",
	[SDIAG_SS_SYN_RECV] = "SYN_RECV",
	[SDIAG_SS_FIN_WAIT1] = "FIN_WAIT1",
	[SDIAG_SS_FIN_WAIT2] = "FIN_WAIT2",
	[SDIAG_SS_TIME_WAIT] = "TIME_WAIT",
	[SDIAG_SS_CLOSE] = "CLOSE",
	[SDIAG_SS_CLOSE_WAIT] = "CLOSE_WAIT",
	[SDIAG_SS_LAST_ACK] = "LAST_ACK",
	[SDIAG_SS_LISTEN] = "LISTEN",
	[SDIAG_SS_CLOSING] = "CLOSING",
	[SDIAG_SS_NEW_SYN_RECV] = "SYN_RECV",
	[SDIAG_SS_BOUND_INACTIVE] = "BOUND_INACTIVE",
};

static PyObject *namedtuple(const char *name, const char *fields)
{
	PyObject *col = PyImport_ImportModule("collections");
	PyObject *fn = col ? PyObject_GetAttrString(col, "namedtuple") : NULL;
	PyObject *args = Py_BuildValue("(ss)", name, fields);
	PyObject *kw = Py_BuildValue("{ss}", "module", "sockdiag");
	PyObject *t = NULL;

	if (fn && args && kw)
		t = PyObject_Call(fn, args, kw);
	Py_XDECREF(col);
	Py_XDECREF(fn);
	Py_XDECREF(args);
	Py_XDECREF(kw);
	return t;
}

int sdpy_objects_init(struct sdpy_state *st, PyObject *module)
{
	PyObject *sock = NULL;

	st->sock_type = PyStructSequence_NewType(&sock_desc);
	if (st->sock_type) {
		/* Every field a reader needs to tell sockets apart, not just psutil's seven. */
		st->sock_type->tp_repr = sock_repr;
		PyType_Modified(st->sock_type);
	}
	st->addr_type = namedtuple("addr", "ip port");
	st->proc_type = namedtuple("proc", "pid comm fd");
	if (!st->sock_type || !st->addr_type || !st->proc_type)
		return -1;
	sock = PyImport_ImportModule("socket");
	if (!sock)
		return -1;
	st->family_enum = PyObject_GetAttrString(sock, "AddressFamily");
	st->kind_enum = PyObject_GetAttrString(sock, "SocketKind");
	Py_DECREF(sock);
	if (!st->family_enum || !st->kind_enum)
		return -1;
	for (unsigned i = 0; i < SDIAG_SS_MAX; i++) {
		st->status[i] = PyUnicode_InternFromString(status_names[i]);
		st->state[i] = PyUnicode_InternFromString(sdiag_state_name(i));
		if (!st->status[i] || !st->state[i])
			return -1;
	}
	for (unsigned t = 0; t < SDIAG_T_MAX; t++)
		if (!(st->netid[t] = PyUnicode_InternFromString(sdiag_table_netid(t))))
			return -1;
	st->status_none = PyUnicode_InternFromString("NONE");
	st->empty_str = PyUnicode_FromString("");
	st->empty_tuple = PyTuple_New(0);
	if (!st->status_none || !st->empty_str || !st->empty_tuple)
		return -1;
	if (PyModule_AddObjectRef(module, "Socket", (PyObject *)st->sock_type) < 0 ||
	    PyModule_AddObjectRef(module, "addr", st->addr_type) < 0 ||
	    PyModule_AddObjectRef(module, "proc", st->proc_type) < 0)
		return -1;
	return 0;
}

void sdpy_objects_clear(struct sdpy_state *st)
{
	Py_CLEAR(st->sock_type);
	Py_CLEAR(st->addr_type);
	Py_CLEAR(st->proc_type);
	Py_CLEAR(st->family_enum);
	Py_CLEAR(st->kind_enum);
	for (unsigned i = 0; i < 256; i++)
		Py_CLEAR(st->family[i]);
	for (unsigned i = 0; i < 16; i++)
		Py_CLEAR(st->kind[i]);
	for (unsigned i = 0; i < SDIAG_SS_MAX; i++) {
		Py_CLEAR(st->status[i]);
		Py_CLEAR(st->state[i]);
	}
	for (unsigned t = 0; t < SDIAG_T_MAX; t++)
		Py_CLEAR(st->netid[t]);
	Py_CLEAR(st->status_none);
	Py_CLEAR(st->empty_str);
	Py_CLEAR(st->empty_tuple);
	if (st->ports) {
		for (unsigned i = 0; i < 65536; i++)
			Py_CLEAR(st->ports[i]);
		PyMem_Free(st->ports);
		st->ports = NULL;
	}
}

PyObject *sdpy_port(struct sdpy_state *st, uint16_t port)
{
	if (!st->ports && !(st->ports = PyMem_Calloc(65536, sizeof(*st->ports))))
		return PyErr_NoMemory();
	if (!st->ports[port] && !(st->ports[port] = PyLong_FromLong(port)))
		return NULL;
	return Py_NewRef(st->ports[port]);
}

/* enum_type(v), or the plain int when the enum has no such member. */
static PyObject *enum_member(PyObject *enum_type, unsigned v)
{
	PyObject *n = PyLong_FromUnsignedLong(v), *m;

	if (!n)
		return NULL;
	m = PyObject_CallOneArg(enum_type, n);
	if (!m && PyErr_ExceptionMatches(PyExc_ValueError)) {
		PyErr_Clear();
		return n;
	}
	Py_DECREF(n);
	return m;
}

PyObject *sdpy_family(struct sdpy_state *st, unsigned family)
{
	if (family > 255)
		return PyLong_FromUnsignedLong(family);
	if (!st->family[family] && !(st->family[family] = enum_member(st->family_enum, family)))
		return NULL;
	return Py_NewRef(st->family[family]);
}

PyObject *sdpy_kind(struct sdpy_state *st, unsigned type)
{
	if (type > 15)
		return PyLong_FromUnsignedLong(type);
	if (!st->kind[type] && !(st->kind[type] = enum_member(st->kind_enum, type)))
		return NULL;
	return Py_NewRef(st->kind[type]);
}

void sdpy_addr_cache_clear(struct sdpy_addr_cache *ac)
{
	for (unsigned i = 0; i < SDPY_ADDR_CACHE; i++)
		Py_CLEAR(ac->e[i].str);
	sdpy_cgmap_clear(&ac->cg);
}

/* ---- cgroup paths ------------------------------------------------------- */

void sdpy_cgmap_clear(struct sdpy_cgmap *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->e[i].path);
	free(m->e);
	memset(m, 0, sizeof(*m));
}

static int cg_add(const char *path, uint64_t id, void *userdata)
{
	struct sdpy_cgmap *m = userdata;

	if (m->n == m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 64;
		struct sdpy_cg *e = realloc(m->e, ncap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		m->e = e;
		m->cap = ncap;
	}
	m->e[m->n].path = strdup(path);
	if (!m->e[m->n].path)
		return -ENOMEM;
	m->e[m->n++].id = id;
	return 0;
}

static int cg_cmp(const void *a, const void *b)
{
	const struct sdpy_cg *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

PyObject *sdpy_cgroup_path(struct sdpy_cgmap *m, uint64_t id)
{
	struct sdpy_cgmap one = { 0 };
	struct sdpy_cg key = { .id = id }, *e;
	PyObject *o;
	int r = 0;

	if (!m)
		m = &one;
	if (!m->done) {
		/* The whole tree once (no GIL meanwhile); a cgroup missing from it is gone. */
		Py_BEGIN_ALLOW_THREADS
		r = sdiag_cgroup_walk("/**", false, cg_add, m);
		if (r >= 0)
			qsort(m->e, m->n, sizeof(*m->e), cg_cmp);
		Py_END_ALLOW_THREADS
		m->done = true;
	}
	if (r == -ENOMEM) {
		sdpy_cgmap_clear(&one);
		return PyErr_NoMemory();
	}
	e = m->n ? bsearch(&key, m->e, m->n, sizeof(*m->e), cg_cmp) : NULL;
	o = e ? PyUnicode_DecodeFSDefault(e->path) : Py_NewRef(Py_None);
	sdpy_cgmap_clear(&one);
	return o;
}

static PyObject *ip_str(uint8_t family, const uint8_t *a, struct sdpy_addr_cache *ac)
{
	size_t alen = family == AF_INET ? 4 : 16;
	char buf[INET6_ADDRSTRLEN];
	PyObject *s;
	unsigned i = (unsigned)(hash_bytes(a, alen) % SDPY_ADDR_CACHE);

	if (ac && ac->e[i].str && ac->e[i].family == family && !memcmp(ac->e[i].addr, a, alen))
		return Py_NewRef(ac->e[i].str);
	if (!inet_ntop(family, a, buf, sizeof(buf)))
		return PyErr_SetFromErrno(PyExc_OSError);
	s = PyUnicode_DecodeASCII(buf, (Py_ssize_t)strlen(buf), NULL);
	if (s && ac) {
		Py_XSETREF(ac->e[i].str, Py_NewRef(s));
		ac->e[i].family = family;
		memcpy(ac->e[i].addr, a, alen);
	}
	return s;
}

/* addr(ip, port), built as the namedtuple's own __new__ would (it is a
 * tuple subclass without slots): one allocation. */
static PyObject *addr_new(struct sdpy_state *st, PyObject *a, PyObject *b)
{
	PyTypeObject *t = (PyTypeObject *)st->addr_type;
	PyObject *o;

	if (!a || !b) {
		Py_XDECREF(a);
		Py_XDECREF(b);
		return NULL;
	}
	o = t->tp_alloc(t, 2);
	if (!o) {
		Py_DECREF(a);
		Py_DECREF(b);
		return NULL;
	}
	PyTuple_SET_ITEM(o, 0, a);
	PyTuple_SET_ITEM(o, 1, b);
	return o;
}

/* As /proc/net/unix shows it (psutil's source): a path up to its NUL, an
 * abstract name as '@' and its bytes with NULs as '@'. */
static PyObject *unix_name(struct sdpy_state *st, const struct sdpy_chunk *c,
			   const struct sdpy_rec *r)
{
	const char *p = c->arena + r->name_off;
	size_t len = r->name_len;
	char small[256], *buf;
	PyObject *s;

	if (!len)
		return Py_NewRef(st->empty_str);
	if (p[0])
		return PyUnicode_DecodeFSDefaultAndSize(p, (Py_ssize_t)strnlen(p, len));
	buf = len <= sizeof(small) ? small : PyMem_Malloc(len);
	if (!buf)
		return PyErr_NoMemory();
	for (size_t i = 0; i < len; i++)
		buf[i] = p[i] ? p[i] : '@';
	s = PyUnicode_DecodeFSDefaultAndSize(buf, (Py_ssize_t)len);
	if (buf != small)
		PyMem_Free(buf);
	return s;
}

PyObject *sdpy_endpoint(struct sdpy_state *st, const struct sdpy_chunk *c,
			const struct sdpy_rec *r, bool local, struct sdpy_addr_cache *ac)
{
	const uint8_t *a = local ? r->src : r->dst;
	uint16_t port = local ? r->sport : r->dport;
	uint32_t cid, vport;

	switch (r->family) {
	case AF_INET:
	case AF_INET6:
		if (!port)
			return Py_NewRef(st->empty_tuple);
		return addr_new(st, ip_str(r->family, a, ac), sdpy_port(st, port));
	case AF_UNIX:
		return local ? unix_name(st, c, r) : Py_NewRef(st->empty_str);
	case AF_VSOCK:
		memcpy(&cid, a, 4);
		memcpy(&vport, a + 4, 4);
		return addr_new(st, PyLong_FromUnsignedLong(cid), PyLong_FromUnsignedLong(vport));
	default:
		return Py_NewRef(st->empty_tuple);
	}
}

PyObject *sdpy_status(struct sdpy_state *st, const struct sdpy_rec *r)
{
	bool tcpish = (r->family == AF_INET || r->family == AF_INET6) && r->type == SOCK_STREAM;

	if (!tcpish || r->state >= SDIAG_SS_MAX)
		return Py_NewRef(st->status_none);
	return Py_NewRef(st->status[r->state]);
}

PyObject *sdpy_procs(struct sdpy_state *st, const struct sdpy_rec *r)
{
	PyObject *t = PyTuple_New(r->n_procs);

	for (uint32_t i = 0; t && i < r->n_procs; i++) {
		const struct sdiag_proc *p = &r->procs[i];
		PyObject *o = PyObject_CallFunction(st->proc_type, "iNi", (int)p->pid,
			PyUnicode_DecodeFSDefaultAndSize(p->comm, (Py_ssize_t)strnlen(p->comm, sizeof(p->comm))),
			(int)p->fd);

		if (!o)
			Py_CLEAR(t);
		else
			PyTuple_SET_ITEM(t, i, o);
	}
	return t;
}

#define TI(m) { #m, offsetof(struct sdiag_tcp_info, tcpi_##m), \
		sizeof(((struct sdiag_tcp_info *)0)->tcpi_##m) }
static const struct {
	const char *name;
	unsigned short off, size;
} tcpi_fields[] = {
	TI(state), TI(ca_state), TI(retransmits), TI(probes), TI(backoff), TI(options),
	/* snd_wscale .. fastopen_client_fail: bit fields, added by tcp_info() */
	TI(rto), TI(ato), TI(snd_mss), TI(rcv_mss), TI(unacked), TI(sacked), TI(lost),
	TI(retrans), TI(fackets), TI(last_data_sent), TI(last_ack_sent), TI(last_data_recv),
	TI(last_ack_recv), TI(pmtu), TI(rcv_ssthresh), TI(rtt), TI(rttvar), TI(snd_ssthresh),
	TI(snd_cwnd), TI(advmss), TI(reordering), TI(rcv_rtt), TI(rcv_space), TI(total_retrans),
	TI(pacing_rate), TI(max_pacing_rate), TI(bytes_acked), TI(bytes_received), TI(segs_out),
	TI(segs_in), TI(notsent_bytes), TI(min_rtt), TI(data_segs_in), TI(data_segs_out),
	TI(delivery_rate), TI(busy_time), TI(rwnd_limited), TI(sndbuf_limited), TI(delivered),
	TI(delivered_ce), TI(bytes_sent), TI(bytes_retrans), TI(dsack_dups), TI(reord_seen),
	TI(rcv_ooopack), TI(snd_wnd), TI(rcv_wnd), TI(rehash), TI(total_rto),
	TI(total_rto_recoveries), TI(total_rto_time), TI(received_ce), TI(delivered_e1_bytes),
	TI(delivered_e0_bytes), TI(delivered_ce_bytes), TI(received_e1_bytes),
	TI(received_e0_bytes), TI(received_ce_bytes), TI(accecn_fail_mode), TI(accecn_opt_seen),
};
#undef TI

static int dict_put(PyObject *d, const char *k, PyObject *v)
{
	int r = v ? PyDict_SetItemString(d, k, v) : -1;

	Py_XDECREF(v);
	return r;
}

/* struct tcp_info as a dict, named as sockdiag's JSON (no tcpi_ prefix). */
static PyObject *tcp_info(const struct sdiag_tcp_info *ti)
{
	PyObject *d = PyDict_New();

	if (!d)
		return NULL;
	for (size_t i = 0; i < sizeof(tcpi_fields) / sizeof(tcpi_fields[0]); i++) {
		const uint8_t *p = (const uint8_t *)ti + tcpi_fields[i].off;
		unsigned long long v = 0;
		uint8_t u8;
		uint16_t u16;
		uint32_t u32;
		uint64_t u64;

		switch (tcpi_fields[i].size) {
		case 1: memcpy(&u8, p, 1); v = u8; break;
		case 2: memcpy(&u16, p, 2); v = u16; break;
		case 4: memcpy(&u32, p, 4); v = u32; break;
		default: memcpy(&u64, p, 8); v = u64; break;
		}
		if (dict_put(d, tcpi_fields[i].name, PyLong_FromUnsignedLongLong(v)) < 0)
			goto fail;
	}
	if (dict_put(d, "snd_wscale", PyLong_FromLong(ti->tcpi_snd_wscale)) < 0 ||
	    dict_put(d, "rcv_wscale", PyLong_FromLong(ti->tcpi_rcv_wscale)) < 0 ||
	    dict_put(d, "delivery_rate_app_limited",
		     PyBool_FromLong(ti->tcpi_delivery_rate_app_limited)) < 0 ||
	    dict_put(d, "fastopen_client_fail", PyLong_FromLong(ti->tcpi_fastopen_client_fail)) < 0)
		goto fail;
	return d;
fail:
	Py_DECREF(d);
	return NULL;
}

static PyObject *sock_repr(PyObject *self)
{
	return PyUnicode_FromFormat("sockdiag.Socket(netid=%R, state=%R, laddr=%R, raddr=%R, "
				    "cookie=%R, fd=%R, pid=%R)",
				    PyStructSequence_GET_ITEM(self, SDPY_F_NETID),
				    PyStructSequence_GET_ITEM(self, SDPY_F_STATE),
				    PyStructSequence_GET_ITEM(self, SDPY_F_LADDR),
				    PyStructSequence_GET_ITEM(self, SDPY_F_RADDR),
				    PyStructSequence_GET_ITEM(self, SDPY_F_COOKIE),
				    PyStructSequence_GET_ITEM(self, SDPY_F_FD),
				    PyStructSequence_GET_ITEM(self, SDPY_F_PID));
}

static PyObject *opt_u64(bool has, uint64_t v)
{
	return has ? PyLong_FromUnsignedLongLong(v) : Py_NewRef(Py_None);
}

PyObject *sdpy_sock_new(struct sdpy_state *st, const struct sdpy_chunk *c,
			const struct sdpy_rec *r, PyObject *netns, struct sdpy_addr_cache *ac)
{
	PyObject *o = PyStructSequence_New(st->sock_type);
	PyObject *v[SDPY_F_MAX];
	bool owned = r->n_procs > 0;

	if (!o)
		return NULL;
	v[SDPY_F_FD] = PyLong_FromLong(owned ? r->procs[0].fd : -1);
	v[SDPY_F_FAMILY] = sdpy_family(st, r->family);
	v[SDPY_F_TYPE] = sdpy_kind(st, r->type);
	v[SDPY_F_LADDR] = sdpy_endpoint(st, c, r, true, ac);
	v[SDPY_F_RADDR] = sdpy_endpoint(st, c, r, false, ac);
	v[SDPY_F_STATUS] = sdpy_status(st, r);
	v[SDPY_F_PID] = owned ? PyLong_FromLong(r->procs[0].pid) : Py_NewRef(Py_None);
	v[SDPY_F_NETID] = Py_NewRef(r->table < SDIAG_T_MAX ? st->netid[r->table] : Py_None);
	v[SDPY_F_STATE] = Py_NewRef(r->state < SDIAG_SS_MAX ? st->state[r->state] : Py_None);
	v[SDPY_F_COOKIE] = PyLong_FromUnsignedLongLong(r->cookie);
	v[SDPY_F_INODE] = PyLong_FromUnsignedLongLong(r->inode);
	v[SDPY_F_UID] = opt_u64(r->flags & SDPY_R_UID, r->uid);
	v[SDPY_F_NETNS] = Py_NewRef(netns ? netns : Py_None);
	v[SDPY_F_CGROUP] = r->flags & SDPY_R_CGROUP ?
				   sdpy_cgroup_path(ac ? &ac->cg : NULL, r->cgroup) :
				   Py_NewRef(Py_None);
	v[SDPY_F_CGROUP_ID] = opt_u64(r->flags & SDPY_R_CGROUP, r->cgroup);
	v[SDPY_F_PROCESSES] = owned ? sdpy_procs(st, r) : Py_NewRef(st->empty_tuple);
	v[SDPY_F_RQUEUE] = opt_u64(r->flags & SDPY_R_QUEUES, r->rqueue);
	v[SDPY_F_WQUEUE] = opt_u64(r->flags & SDPY_R_QUEUES, r->wqueue);
	v[SDPY_F_TCP_INFO] = r->tcpi ? tcp_info(&c->tcpi[r->tcpi - 1]) : Py_NewRef(Py_None);
	for (int i = 0; i < SDPY_F_MAX; i++) {
		if (!v[i]) {
			for (int k = 0; k < SDPY_F_MAX; k++)
				if (k != i)
					Py_XDECREF(v[k]);
			Py_DECREF(o);
			return NULL;
		}
	}
	for (int i = 0; i < SDPY_F_MAX; i++)
		PyStructSequence_SET_ITEM(o, i, v[i]);
	return o;
}

int sdpy_chunk_to_list(struct sdpy_state *st, const struct sdpy_chunk *c, PyObject *netns,
		       PyObject *list)
{
	struct sdpy_addr_cache *ac = PyMem_Calloc(1, sizeof(*ac));
	int r = 0;

	if (!ac) {
		PyErr_NoMemory();
		return -1;
	}
	for (size_t i = 0; i < c->n; i++) {
		PyObject *o = sdpy_sock_new(st, c, &c->recs[i], netns, ac);

		if (!o || PyList_Append(list, o) < 0) {
			Py_XDECREF(o);
			r = -1;
			break;
		}
		Py_DECREF(o);
	}
	sdpy_addr_cache_clear(ac);
	PyMem_Free(ac);
	return r;
}
