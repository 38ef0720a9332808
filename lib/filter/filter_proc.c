// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Process predicates of the filter language: `pid`, `comm` and `user` look
 * at the processes that hold a socket (struct sdiag_sock.procs, attached by
 * the dump when the query carries a process map).
 *
 * They exist only in user space: the kernel knows nothing of file
 * descriptors, so the bytecode compiler treats them as unknown (true when
 * over-approximating) and this matcher decides.
 *
 * A socket with no known owner has no pid, comm or user: every comparison is
 * false, `not` makes it true. With several owners, `=`, `<`, `<=`, `>`, `>=`
 * hold when some owner satisfies them; `!=` holds when the socket has owners
 * and none of them equals the value (so `pid != 1` never selects a socket
 * that pid 1 holds, even when another process holds it too).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/filter/filter_parse.h"

int sd_fparse_proc(struct sd_fparser *p, const char *kw, enum sd_fcmp cmp, const struct sd_ftok *v,
		   struct sd_fnode **ret)
{
	struct sd_fnode *n;
	uint64_t val = 0;
	int r = 0;

	n = sd_fnode_new(SD_F_PROC);
	if (!n)
		return -ENOMEM;
	n->cmp = (uint8_t)cmp;
	if (!strcmp(kw, "comm")) {
		n->field = SD_FPROC_COMM;
		if (!*v->text || strlen(v->text) > 255)
			r = sd_ferr(p, v->off, v->len, "expected a command name glob");
		else if (!(n->u.str = strdup(v->text)))
			r = -ENOMEM;
	} else if (!strcmp(kw, "user")) {
		n->field = SD_FPROC_USER;
		/* A number is a uid, anything else a user name (getpwnam). */
		r = sd_fparse_number(p, v, SD_FLD_UID, &val);
		n->u.num.value = val;
	} else {
		n->field = SD_FPROC_PID;
		r = sd_fparse_number(p, v, SD_FLD_INODE, &val);
		if (r == 0 && (val == 0 || val > INT32_MAX))
			r = sd_ferr(p, v->off, v->len, "pid %s out of range (1-2147483647)",
				    v->text);
		n->u.num.value = val;
	}
	if (r < 0) {
		sd_fnode_free(n);
		return r;
	}
	*ret = n;
	return 0;
}

static bool cmp_val(uint64_t v, enum sd_fcmp c, uint64_t ref)
{
	switch (c) {
	case SD_LT:
		return v < ref;
	case SD_LE:
		return v <= ref;
	case SD_GT:
		return v > ref;
	case SD_GE:
		return v >= ref;
	default: /* EQ; NE is "no owner equal", decided by the caller */
		return v == ref;
	}
}

static bool owner_matches(const struct sd_fnode *n, const struct sdiag_proc *p, enum sd_fcmp cmp)
{
	char comm[sizeof(p->comm) + 1];

	switch (n->field) {
	case SD_FPROC_COMM:
		memcpy(comm, p->comm, sizeof(p->comm));
		comm[sizeof(p->comm)] = '\0';
		return sd_glob_match(n->u.str, comm);
	case SD_FPROC_USER:
		return cmp_val(p->uid, cmp, n->u.num.value);
	default:
		return p->pid > 0 && cmp_val((uint64_t)p->pid, cmp, n->u.num.value);
	}
}

bool sd_fproc_match(const struct sd_fnode *n, const struct sdiag_sock *s)
{
	bool ne = n->cmp == SD_NE;
	enum sd_fcmp cmp = ne ? SD_EQ : (enum sd_fcmp)n->cmp;

	if (!s->procs || !s->n_procs)
		return false;
	for (size_t i = 0; i < s->n_procs; i++)
		if (owner_matches(n, &s->procs[i], cmp))
			return !ne;
	return ne;
}

static bool node_needs_procs(const struct sd_fnode *n)
{
	for (; n; n = n->b) {
		if (n->kind == SD_F_PROC)
			return true;
		if (n->a && node_needs_procs(n->a))
			return true;
	}
	return false;
}

SD_EXPORT bool sdiag_filter_needs_procs(const struct sdiag_filter *f)
{
	return f && node_needs_procs(f->root);
}
