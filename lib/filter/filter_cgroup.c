// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cgroup predicates of the filter language:
 *
 *   cgroup PATH      the sockets of exactly that cgroup (ss's meaning)
 *   cgroup PATH/ and two stars: that cgroup and every cgroup below it
 *   unit NAME        of every cgroup directory named NAME (a systemd service,
 *                    scope or slice) and every cgroup below those
 *
 * Parsing only checks the form; sd_filter_resolve_cgroups() turns each into a
 * sorted set of cgroup ids from the tree as it is then (lib/ns/cgroup.c), so that the
 * parser stays pure and a long-running user (the guard) can resolve again
 * when a service restarts into a new cgroup (new id). Matching is a binary
 * search in the set. Only inet sockets carry a cgroup in sock_diag.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/filter/filter_parse.h"
#include "lib/ns/ns.h"

int sd_fparse_cgroup(struct sd_fparser *p, const struct sd_ftok *t, bool unit, struct sd_fnode *n)
{
	const char *v = t->text;
	size_t len = strlen(v);

	if (!len)
		return sd_ferr(p, t->off, t->len, "expected %s", unit ? "a unit name" : "a cgroup path");
	if (unit && (strchr(v, '/') || v[0] == '.' || len > 255))
		return sd_ferr(p, t->off, t->len,
			       "'%s' is not a unit name (nginx.service, user-1000.slice, ...; "
			       "for a path use cgroup)", v);
	if (!unit && (strstr(v, "/.") || v[0] == '.' || (strchr(v, '*') && (len < 3 ||
			strcmp(v + len - 3, "/**") || strchr(v, '*') != v + len - 2))))
		return sd_ferr(p, t->off, t->len,
			       "'%s' is not a cgroup path (/PATH, or /PATH/** for a subtree)", v);
	n->u.cg.spec = strdup(v);
	if (!n->u.cg.spec)
		return -ENOMEM;
	n->field = unit ? 1 : 0;
	n->u.cg.off = (uint32_t)t->off;
	n->u.cg.len = (uint32_t)t->len;
	return 0;
}

static int resolve_node(struct sd_fnode *n, bool missing_ok, struct sdiag_filter_error *err)
{
	uint64_t *ids = NULL;
	size_t nids = 0;
	int r;

	r = sd_cgroup_ids(n->u.cg.spec, n->field == 1, &ids, &nids);
	if (r == -ENOENT && missing_ok)
		r = 0;
	if (r < 0) {
		if (err && r == -ENOENT && n->field == 1)
			sd_ferr_set(err, n->u.cg.off, n->u.cg.len,
				    "no cgroup named '%s' (unit) under the cgroup2 mount", n->u.cg.spec);
		else if (err && r == -ENOENT)
			sd_ferr_set(err, n->u.cg.off, n->u.cg.len,
				    "no cgroup '%s' under the cgroup2 mount", n->u.cg.spec);
		else if (err)
			sd_ferr_set(err, n->u.cg.off, n->u.cg.len, "cgroup '%s': %s", n->u.cg.spec,
				    strerror(-r));
		return r;
	}
	free(n->u.cg.ids);
	n->u.cg.ids = ids;
	n->u.cg.n = nids;
	return 0;
}

static int resolve(struct sd_fnode *n, bool missing_ok, struct sdiag_filter_error *err)
{
	int r;

	for (; n; n = n->b) { /* right-hand chains iteratively, as sd_fnode_free */
		if (n->kind == SD_F_CGROUP)
			return resolve_node(n, missing_ok, err);
		if (n->a) {
			r = resolve(n->a, missing_ok, err);
			if (r < 0)
				return r;
		}
		if (n->kind != SD_F_AND && n->kind != SD_F_OR)
			return 0;
	}
	return 0;
}

int sd_filter_resolve_cgroups(struct sdiag_filter *f, bool missing_ok, struct sdiag_filter_error *err)
{
	if (!f)
		return -EINVAL;
	return resolve(f->root, missing_ok, err);
}

SD_EXPORT int sdiag_filter_resolve(struct sdiag_filter *f, unsigned flags,
				   struct sdiag_filter_error *err)
{
	return sd_filter_resolve_cgroups(f, flags & SDIAG_RESOLVE_MISSING_OK, err);
}

static bool uses_cgroups(const struct sd_fnode *n)
{
	for (; n; n = n->b) {
		if (n->kind == SD_F_CGROUP)
			return true;
		if (n->a && uses_cgroups(n->a))
			return true;
		if (n->kind != SD_F_AND && n->kind != SD_F_OR)
			return false;
	}
	return false;
}

SD_EXPORT bool sdiag_filter_uses_cgroups(const struct sdiag_filter *f)
{
	return f && uses_cgroups(f->root);
}

bool sd_fcgroup_has(const struct sd_fnode *n, uint64_t id)
{
	size_t lo = 0, hi = n->u.cg.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (n->u.cg.ids[mid] == id)
			return true;
		if (n->u.cg.ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}
