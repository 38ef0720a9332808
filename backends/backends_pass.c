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

int backends_ct_sweep(struct ct *ct, const struct backend_set *b, size_t *ret_deleted)
{
	return ct_sweep(ct, ct_match, (void *)b, ret_deleted);
}

/* Destroy the victims, report each; the entries of the destroyed flows deleted. */
static int destroy(struct pass *p)
{
	enum sdiag_destroy_result *results = calloc(p->n, sizeof(*results));
	int *errs = calloc(p->n, sizeof(*errs));
	size_t d;
	int r = -ENOMEM;

	if (!results || !errs)
		goto out;
	r = sdiag_destroy(p->h, (const struct sdiag_sock *const *)p->victims, p->n, results,
			  errs);
	if (r < 0)
		goto out;
	for (size_t i = 0; i < p->n; i++) {
		if (results[i] == SDIAG_DESTROYED)
			p->res->destroyed++;
		else if (results[i] == SDIAG_GONE)
			p->res->gone++;
		else
			p->res->failed++;
		if (p->o->report)
			(void)p->o->report(p->victims[i], results[i], errs[i], p->o->userdata);
	}
	if (p->o->ct) {
		p->res->ct_err = ct_delete_destroyed(p->o->ct, p->victims, results, p->n, &d);
		p->res->ct_deleted += d;
	}
out:
	free(results);
	free(errs);
	return r;
}

/* The dump of one pass: the selected sockets into p (not kept, unless dry). */
static int select_into(struct pass *p, const struct backend_set *b, size_t bc_max)
{
	struct sdiag_filter *f = NULL;
	SDIAG_OPTS(sdiag_query, q,
			.tables = SDIAG_TABLE_BIT(SDIAG_T_TCP) | SDIAG_TABLE_BIT(SDIAG_T_UDP),
			.states = SDIAG_STATES_ALL &
				  ~(SDIAG_STATE_BIT(SDIAG_SS_LISTEN) | SDIAG_STATE_BIT(SDIAG_SS_CLOSE) |
				    SDIAG_STATE_BIT(SDIAG_SS_BOUND_INACTIVE)),
			.afs = SDIAG_AF_ALL,
			.flags = SDIAG_Q_SKIP_UNSUPPORTED); /* nothing to destroy there */
	int r;

	if (!b->n)
		return 0; /* an empty list destroys nothing: no dump at all */
	if (b->n <= (bc_max ? bc_max : BACKENDS_BYTECODE_MAX)) {
		r = build_filter(b, &f);
		if (r < 0)
			return r;
		q.filter = f;
		p->res->kernel_filter = true;
	}
	r = sdiag_dump(p->h, &q, pass_cb, NULL, p);
	sdiag_filter_free(f);
	return r;
}

int backends_select(struct sdiag_handle *h, const struct backend_set *b, size_t bytecode_max,
		    struct sdiag_sock ***ret_v, size_t *ret_n, bool *ret_kernel_filter)
{
	struct backends_pass_opts o = { 0 };
	struct backends_pass_result res = { 0 };
	struct pass p = { .h = h, .b = b, .o = &o, .res = &res };
	int r = select_into(&p, b, bytecode_max);

	if (r < 0) {
		for (size_t i = 0; i < p.n; i++)
			free(p.victims[i]);
		free(p.victims);
		return r;
	}
	*ret_v = p.victims;
	*ret_n = p.n;
	*ret_kernel_filter = res.kernel_filter;
	return 0;
}

int backends_pass(struct sdiag_handle *h, const struct backend_set *b,
		  const struct backends_pass_opts *opts, struct backends_pass_result *ret)
{
	struct backends_pass_result res = { 0 };
	struct pass p = { .h = h, .b = b, .o = opts, .res = &res };
	size_t d;
	int r;

	r = select_into(&p, b, opts->bytecode_max);
	if (r < 0 || opts->dry_run || !b->n)
		goto out;
	if (p.n) {
		r = destroy(&p);
		if (r < 0)
			goto out;
	}
	if (opts->ct && (res.ct_err == 0 || res.ct_err == -ENOENT)) {
		res.ct_err = backends_ct_sweep(opts->ct, b, &d);
		res.ct_deleted += d;
	}
out:
	for (size_t i = 0; i < p.n; i++)
		free(p.victims[i]);
	free(p.victims);
	if (r == 0)
		*ret = res;
	return r;
}
