// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One reconcile pass against the dead backends (backends.h).
 *
 * One query covers every backend: TCP and UDP of both families, in every
 * state but LISTEN and the unconnected/bound ones, so the kernel never walks
 * its listening or bind hashes and never sends an unconnected UDP socket.
 * Up to bytecode_max backends, the filter `dst A:P or dst [B]:Q ...` (made
 * with the library's filter builder, no text) goes to the kernel as
 * INET_DIAG bytecode (the library's compiler; an IPv4 term
 * also matches v4-mapped peers there) and only sockets to a backend cross to
 * user space. Above it the bytecode would outgrow what the kernel takes and
 * the matcher would walk a long OR per socket: the dump is then unfiltered
 * and each socket costs one hash lookup. Either way the hash set decides:
 * the bytecode only pre-selects.
 *
 * The selected sockets are destroyed after the dump (destroying during it
 * could make the kernel's resumed walk skip live sockets).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "backends/backends.h"
#include "conntrack/conntrack.h"

struct pass {
	struct sdiag_handle *h;
	const struct backend_set *b;
	const struct backends_pass_opts *o;
	struct backends_pass_result *res;
	struct sdiag_sock **victims;
	size_t n, cap;
};

/* Is s a socket this pass destroys (before exemptions)? */
static bool selected(const struct backend_set *b, const struct sdiag_sock *s)
{
	const struct backend *be;
	unsigned proto;

	if (s->family != AF_INET && s->family != AF_INET6)
		return false;
	if (s->table == SDIAG_T_TCP) {
		if (s->state == SDIAG_SS_LISTEN || s->state == SDIAG_SS_CLOSE ||
		    s->state == SDIAG_SS_BOUND_INACTIVE)
			return false;
		proto = BACKEND_TCP;
	} else if (s->table == SDIAG_T_UDP) {
		/* Connected: ESTABLISHED with a peer. An unconnected socket's
		 * destroy would release its autobound port (cilium#48564). */
		if (s->state != SDIAG_SS_ESTABLISHED)
			return false;
		proto = BACKEND_UDP;
	} else {
		return false;
	}
	if (!s->inet.dport)
		return false;
	be = backends_find(b, s->family, s->inet.dst, s->inet.dport);
	return be && (be->protos & proto);
}

static int pass_cb(const struct sdiag_sock *s, void *data)
{
	struct pass *p = data;

	if (!selected(p->b, s))
		return 0;
	p->res->selected++;
	if (p->o->keep && p->o->keep(s, p->o->userdata)) {
		p->res->kept++;
		return 0;
	}
	if (p->o->dry_run)
		return p->o->would ? p->o->would(s, p->o->userdata) : 0;
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		struct sdiag_sock **v = realloc(p->victims, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->victims = v;
		p->cap = cap;
	}
	p->victims[p->n] = sdiag_sock_dup(s);
	if (!p->victims[p->n])
		return -ENOMEM;
	p->n++;
	return 0;
}

/* `dst 10.0.0.1:53 or dst [fd00::1]:53 ...` made with the library's builder
 * (the parser's tree: the library compiles it to bytecode per family). Its
 * errors latch: only finish's result counts. */
static int build_filter(const struct backend_set *b, struct sdiag_filter **ret)
{
	struct sdiag_filter *f = NULL;
	int r;

	r = sdiag_filter_new(&f);
	if (r < 0)
		return r;
	sdiag_filter_begin(f, SDIAG_FILTER_OR);
	for (size_t i = 0; i < b->n; i++)
		sdiag_filter_add_host(f, SDIAG_FILTER_DST, b->v[i].family, b->v[i].addr, -1,
				      b->v[i].port);
	sdiag_filter_end(f);
	r = sdiag_filter_finish(f, NULL);
	if (r < 0) {
		sdiag_filter_free(f);
		return r;
	}
	*ret = f;
	return 0;
}

/* The UDP conntrack entries of a UDP backend: to it (original destination:
 * no DNAT, or a VIP with DNAT seen from the reply) or from it (reply source,
 * the DNAT'ed backend of kube-proxy's services). */
static bool ct_match(const struct ct_entry *e, void *data)
{
	const struct backend_set *b = data;
	const struct backend *be;

	if (e->orig.proto != IPPROTO_UDP)
		return false;
	be = backends_find(b, e->orig.family, e->orig.dst, e->orig.dport);
	if (be && (be->protos & BACKEND_UDP))
		return true;
	be = backends_find(b, e->reply.family, e->reply.src, e->reply.sport);
	return be && (be->protos & BACKEND_UDP);
}

/* Destroy the victims, report each, collect the flows of the destroyed. */
static int destroy(struct pass *p, struct ct_tuple **ret_flows, size_t *ret_nflows)
{
	enum sdiag_destroy_result *results = calloc(p->n, sizeof(*results));
	int *errs = calloc(p->n, sizeof(*errs));
	struct ct_tuple *flows = p->o->ct ? calloc(p->n, sizeof(*flows)) : NULL;
	size_t nflows = 0;
	int r = -ENOMEM;

	if (!results || !errs || (p->o->ct && !flows))
		goto out;
	r = sdiag_destroy(p->h, (const struct sdiag_sock *const *)p->victims, p->n, results,
			  errs);
	if (r < 0)
		goto out;
	for (size_t i = 0; i < p->n; i++) {
		if (results[i] == SDIAG_DESTROYED) {
			p->res->destroyed++;
			if (flows && ct_tuple_of_sock(p->victims[i], &flows[nflows]))
				nflows++;
		} else if (results[i] == SDIAG_GONE) {
			p->res->gone++;
		} else {
			p->res->failed++;
		}
		if (p->o->report)
			(void)p->o->report(p->victims[i], results[i], errs[i], p->o->userdata);
	}
out:
	free(results);
	free(errs);
	if (r < 0) {
		free(flows);
		return r;
	}
	*ret_flows = flows;
	*ret_nflows = nflows;
	return 0;
}

int backends_pass(struct sdiag_handle *h, const struct backend_set *b,
		  const struct backends_pass_opts *opts, struct backends_pass_result *ret)
{
	size_t bc_max = opts->bytecode_max ? opts->bytecode_max : BACKENDS_BYTECODE_MAX;
	struct backends_pass_result res = { 0 };
	struct pass p = { .h = h, .b = b, .o = opts, .res = &res };
	struct sdiag_filter *f = NULL;
	struct ct_tuple *flows = NULL;
	size_t nflows = 0, d;
	SDIAG_OPTS(sdiag_query, q,
			.tables = SDIAG_TABLE_BIT(SDIAG_T_TCP) | SDIAG_TABLE_BIT(SDIAG_T_UDP),
			.states = SDIAG_STATES_ALL &
				  ~(SDIAG_STATE_BIT(SDIAG_SS_LISTEN) | SDIAG_STATE_BIT(SDIAG_SS_CLOSE) |
				    SDIAG_STATE_BIT(SDIAG_SS_BOUND_INACTIVE)),
			.afs = SDIAG_AF_ALL,
			.flags = SDIAG_Q_SKIP_UNSUPPORTED); /* nothing to destroy there */
	int r = 0;

	if (!b->n)
		goto out; /* an empty list destroys nothing: no dump at all */
	if (b->n <= bc_max) {
		r = build_filter(b, &f);
		if (r < 0)
			goto out;
		q.filter = f;
		res.kernel_filter = true;
	}
	r = sdiag_dump(h, &q, pass_cb, NULL, &p);
	if (r < 0 || opts->dry_run)
		goto out;
	if (p.n) {
		r = destroy(&p, &flows, &nflows);
		if (r < 0)
			goto out;
	}
	if (opts->ct) {
		int e = 0;

		if (nflows) {
			e = ct_delete_flows(opts->ct, flows, nflows, &d);
			res.ct_deleted += d;
		}
		if (e == 0 || e == -ENOENT) {
			e = ct_sweep(opts->ct, ct_match, (void *)b, &d);
			res.ct_deleted += d;
		}
		res.ct_err = e;
	}
out:
	for (size_t i = 0; i < p.n; i++)
		free(p.victims[i]);
	free(p.victims);
	free(flows);
	sdiag_filter_free(f);
	if (r == 0)
		*ret = res;
	return r;
}
