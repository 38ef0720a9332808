// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The filter builder: the parser's tree made by calls instead of text
 * (sockdiag.h, "Building a filter without text").
 *
 * Each open level keeps its terms as the parser's exprlist does: a
 * left-nested chain, `a op b` becoming the left operand of the next op, so
 * a built filter and the parsed text of the same expression are the same
 * tree (and compile to the same bytecode: test_filter_build checks it over
 * the corpus). Values reach the nodes through the parser's own value
 * checks where one exists (cgroup paths), with the same limits elsewhere.
 *
 * Errors latch: the first one is kept with its message, every later call
 * returns it and does nothing, so callers may check only the result of
 * sdiag_filter_finish().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "lib/filter/filter_parse.h"

#define MAX_DEPTH 200

struct sd_fbuild {
	struct sd_fnode *chain[MAX_DEPTH + 1]; /* per level: its terms joined so far */
	uint8_t group[MAX_DEPTH + 1];	       /* per level: enum sdiag_filter_group */
	unsigned depth;			       /* 0: the top level (an AND) */
	unsigned calls;			       /* calls after new, this one included */
	int err;			       /* the first error, latched */
	struct sdiag_filter_error msg;
};

void sd_fbuild_free(struct sd_fbuild *b)
{
	if (!b)
		return;
	for (unsigned i = 0; i <= b->depth; i++)
		sd_fnode_free(b->chain[i]);
	free(b);
}

/* Latch err with its message (the first one only); returns the latched error. */
static int fail(struct sd_fbuild *b, int err, const char *msg)
{
	if (!b->err) {
		b->err = err;
		b->msg.offset = b->calls - 1;
		b->msg.len = 0;
		snprintf(b->msg.msg, sizeof(b->msg.msg), "%s", msg);
	}
	return b->err;
}

/* The start of every call but new and finish: NULL, finished, or latched? */
static int enter(struct sdiag_filter *f)
{
	if (!f || !f->build)
		return -EINVAL;
	f->build->calls++;
	return f->build->err;
}

/* Join n (owned) to the current level's chain. */
static int add(struct sdiag_filter *f, struct sd_fnode *n)
{
	struct sd_fbuild *b = f->build;
	struct sd_fnode **c = &b->chain[b->depth];
	struct sd_fnode *j;

	if (!n)
		return fail(b, -ENOMEM, "out of memory");
	if (!*c) {
		*c = n;
		return 0;
	}
	j = sd_fnode_new(b->group[b->depth] == SDIAG_FILTER_OR ? SD_F_OR : SD_F_AND);
	if (!j) {
		sd_fnode_free(n);
		return fail(b, -ENOMEM, "out of memory");
	}
	j->a = *c;
	j->b = n;
	*c = j;
	return 0;
}

static bool eq_ne(enum sdiag_filter_cmp cmp)
{
	return cmp == SDIAG_FILTER_EQ || cmp == SDIAG_FILTER_NE;
}

static bool valid_cmp(enum sdiag_filter_cmp cmp)
{
	return (unsigned)cmp <= SDIAG_FILTER_GE;
}

/* Both enums list the operators in the same order. */
_Static_assert((int)SDIAG_FILTER_GE == (int)SD_GE && (int)SDIAG_FILTER_NE == (int)SD_NE,
	       "sdiag_filter_cmp and sd_fcmp differ");
_Static_assert((int)SDIAG_FILTER_DST == (int)SD_DIR_DST, "sdiag_filter_dir and sd_fdir differ");

SD_EXPORT int sdiag_filter_new(struct sdiag_filter **ret)
{
	struct sdiag_filter *f;

	if (!ret)
		return -EINVAL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->build = calloc(1, sizeof(*f->build));
	if (!f->build) {
		free(f);
		return -ENOMEM;
	}
	f->net_admin = sd_filter_have_net_admin();
	*ret = f;
	return 0;
}

SD_EXPORT int sdiag_filter_begin(struct sdiag_filter *f, enum sdiag_filter_group g)
{
	struct sd_fbuild *b;
	int r = enter(f);

	if (r)
		return r;
	b = f->build;
	if ((unsigned)g > SDIAG_FILTER_NOT)
		return fail(b, -EINVAL, "unknown group");
	if (b->depth == MAX_DEPTH)
		return fail(b, -EINVAL, "filter nested too deeply");
	b->depth++;
	b->group[b->depth] = (uint8_t)g;
	b->chain[b->depth] = NULL;
	return 0;
}

SD_EXPORT int sdiag_filter_end(struct sdiag_filter *f)
{
	struct sd_fbuild *b;
	struct sd_fnode *n;
	int r = enter(f);

	if (r)
		return r;
	b = f->build;
	if (!b->depth)
		return fail(b, -EINVAL, "sdiag_filter_end without a group to close");
	n = b->chain[b->depth];
	if (!n)
		return fail(b, -EINVAL, "empty group (a group needs a term)");
	b->chain[b->depth--] = NULL;
	if (b->group[b->depth + 1] == SDIAG_FILTER_NOT) {
		struct sd_fnode *x = sd_fnode_new(SD_F_NOT);

		if (!x)
			sd_fnode_free(n);
		else
			x->a = n;
		n = x;
	}
	return add(f, n);
}

SD_EXPORT int sdiag_filter_add_host(struct sdiag_filter *f, enum sdiag_filter_dir dir, int family,
				    const void *addr, int plen, int port)
{
	int max = family == AF_INET6 ? 128 : family == AF_INET ? 32 : 0;
	struct sd_fnode *n;
	int r = enter(f);

	if (r)
		return r;
	if ((unsigned)dir > SDIAG_FILTER_DST)
		return fail(f->build, -EINVAL, "host: unknown direction");
	if (family != AF_INET && family != AF_INET6 && (family != AF_UNSPEC || addr))
		return fail(f->build, -EINVAL,
			    "host: family AF_INET or AF_INET6 (AF_UNSPEC: no address)");
	if (plen < -1 || plen > max || (!addr && plen > 0))
		return fail(f->build, -EINVAL, "host: prefix length out of range");
	if (port < -1 || port > 65535)
		return fail(f->build, -EINVAL, "host: port out of range (0-65535, -1: any)");
	n = sd_fnode_new(SD_F_HOST);
	if (n) {
		n->dir = (uint8_t)dir;
		n->u.host.family = (uint8_t)family;
		n->u.host.plen = (uint8_t)(!addr ? 0 : plen < 0 ? max : plen);
		n->u.host.port = port;
		if (addr)
			memcpy(n->u.host.addr, addr, family == AF_INET6 ? 16 : 4);
	}
	return add(f, n);
}

/* An SD_F_NUM node (ports, uid). */
static int add_num(struct sdiag_filter *f, enum sd_ffield field, enum sdiag_filter_dir dir,
		   enum sdiag_filter_cmp cmp, uint64_t value)
{
	struct sd_fnode *n = sd_fnode_new(SD_F_NUM);

	if (n) {
		n->field = (uint8_t)field;
		n->dir = (uint8_t)dir;
		n->cmp = (uint8_t)cmp;
		n->u.num.value = value;
	}
	return add(f, n);
}

SD_EXPORT int sdiag_filter_add_port(struct sdiag_filter *f, enum sdiag_filter_dir dir,
				    enum sdiag_filter_cmp cmp, int port)
{
	int r = enter(f);

	if (r)
		return r;
	if ((unsigned)dir > SDIAG_FILTER_DST || !valid_cmp(cmp))
		return fail(f->build, -EINVAL, "port: unknown direction or comparison");
	if (port < -1 || port > 65535 || (port < 0 && cmp != SDIAG_FILTER_EQ))
		return fail(f->build, -EINVAL,
			    "port out of range (0-65535; -1, any port, only with EQ)");
	return add_num(f, SD_FLD_PORT, dir, cmp, port < 0 ? UINT64_MAX : (uint64_t)port);
}

SD_EXPORT int sdiag_filter_add_uid(struct sdiag_filter *f, enum sdiag_filter_cmp cmp, uint32_t uid)
{
	int r = enter(f);

	if (r)
		return r;
	if (!valid_cmp(cmp))
		return fail(f->build, -EINVAL, "uid: unknown comparison");
	return add_num(f, SD_FLD_UID, SDIAG_FILTER_SRC, cmp, uid);
}

/* A node holding a 32-bit set (states, tables). */
static int add_set(struct sdiag_filter *f, enum sd_fkind kind, uint32_t mask)
{
	struct sd_fnode *n = sd_fnode_new(kind);

	if (n && kind == SD_F_STATE)
		n->u.states = mask;
	else if (n)
		n->u.tables = mask;
	return add(f, n);
}

SD_EXPORT int sdiag_filter_add_states(struct sdiag_filter *f, uint32_t mask)
{
	int r = enter(f);

	if (r)
		return r;
	if (mask & ~(uint32_t)SDIAG_STATES_ALL)
		return fail(f->build, -EINVAL, "states: bits outside SDIAG_STATES_ALL");
	return add_set(f, SD_F_STATE, mask);
}

SD_EXPORT int sdiag_filter_add_tables(struct sdiag_filter *f, uint32_t mask)
{
	int r = enter(f);

	if (r)
		return r;
	if (!mask || (mask & ~(uint32_t)SDIAG_TABLES_ALL))
		return fail(f->build, -EINVAL, "tables: empty, or bits outside SDIAG_TABLES_ALL");
	return add_set(f, SD_F_TABLES, mask);
}

SD_EXPORT int sdiag_filter_add_dev(struct sdiag_filter *f, enum sdiag_filter_cmp cmp,
				   unsigned ifindex)
{
	struct sd_fnode *n;
	int r = enter(f);

	if (r)
		return r;
	if (!eq_ne(cmp))
		return fail(f->build, -EINVAL, "dev takes only EQ or NE");
	n = sd_fnode_new(SD_F_DEV);
	if (n) {
		n->cmp = (uint8_t)cmp;
		n->u.num.value = ifindex;
	}
	return add(f, n);
}

SD_EXPORT int sdiag_filter_add_fwmark(struct sdiag_filter *f, enum sdiag_filter_cmp cmp,
				      uint32_t mark, uint32_t mask)
{
	struct sd_fnode *n;
	int r = enter(f);

	if (r)
		return r;
	if (!eq_ne(cmp))
		return fail(f->build, -EINVAL, "fwmark takes only EQ or NE");
	if (!sd_filter_have_net_admin())
		return fail(f->build, -EPERM,
			    "fwmark needs CAP_NET_ADMIN (the kernel shows marks only to it)");
	n = sd_fnode_new(SD_F_MARK);
	if (n) {
		n->cmp = (uint8_t)cmp;
		n->u.mark.mark = mark;
		n->u.mark.mask = mask;
	}
	return add(f, n);
}

SD_EXPORT int sdiag_filter_add_cgroup(struct sdiag_filter *f, enum sdiag_filter_cmp cmp, bool unit,
				      const char *path)
{
	struct sd_fparser p = { .expr = path };
	struct sd_ftok t;
	struct sd_fnode *n;
	int r = enter(f);

	if (r)
		return r;
	if (!eq_ne(cmp) || !path)
		return fail(f->build, -EINVAL, "cgroup takes only EQ or NE, and a path");
	p.err = &f->build->msg;
	t = (struct sd_ftok){ .text = path, .off = f->build->calls - 1 };
	n = sd_fnode_new(SD_F_CGROUP);
	if (!n)
		return fail(f->build, -ENOMEM, "out of memory");
	n->cmp = (uint8_t)cmp;
	/* The parser's own check of the form; its message goes to msg. */
	r = sd_fparse_cgroup(&p, &t, unit, n);
	if (r < 0) {
		sd_fnode_free(n);
		if (!p.err_set)
			return fail(f->build, r, "out of memory");
		f->build->err = r;
		return r;
	}
	return add(f, n);
}

SD_EXPORT int sdiag_filter_finish(struct sdiag_filter *f, struct sdiag_filter_error *err)
{
	struct sd_fbuild *b;
	int r;

	if (!f || !f->build)
		return -EINVAL;
	b = f->build;
	b->calls++;
	if (!b->err && b->depth)
		fail(b, -EINVAL, "a group is left open (sdiag_filter_begin without end)");
	if (!b->err) {
		f->root = b->chain[0];
		b->chain[0] = NULL;
		r = sd_filter_resolve_cgroups(f, false, &b->msg);
		if (r < 0)
			b->err = r;
	}
	if (b->err) {
		if (err)
			*err = b->msg;
		return b->err;
	}
	sd_fbuild_free(b);
	f->build = NULL;
	return 0;
}
