// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Values a filter needs that only a dump can tell, resolved by each dump in
 * its handle's namespace, never by the parser: the unix sockets a `dst GLOB`
 * names. The listeners' accepted children carry the listener's name, bound
 * datagram servers their own, so the sockets whose name matches are listed
 * once, and their inodes kept per glob. The dump (lib/ops/dump.c) lists the
 * unix sockets and feeds them here: this file never dumps.
 */
#include <errno.h>
#include <stdlib.h>

#include "lib/filter/filter.h"

static void collect_globs(const struct sd_fnode *n, const char **globs)
{
	for (; n; n = n->b) {
		if (n->kind == SD_F_UNIX_PEER) {
			globs[n->u.peer.slot] = n->u.peer.glob;
			return;
		}
		collect_globs(n->a, globs);
	}
}

static int add_inode(struct sd_inodes *set, size_t *cap, uint32_t ino)
{
	if (set->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		uint32_t *v = realloc(set->v, ncap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		set->v = v;
		*cap = ncap;
	}
	set->v[set->n++] = ino;
	return 0;
}

struct sd_fresolve {
	const char **globs;	/* per slot */
	size_t *caps;		/* per slot: allocated entries of vals->peers[slot] */
	struct sd_fvals *vals;
};

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

void sd_fvals_free(struct sd_fvals *v)
{
	if (!v)
		return;
	for (uint32_t i = 0; i < v->n_peers; i++)
		free(v->peers[i].v);
	free(v->peers);
	free(v);
}

void sd_fresolve_free(struct sd_fresolve *rs)
{
	if (!rs)
		return;
	sd_fvals_free(rs->vals);
	free(rs->globs);
	free(rs->caps);
	free(rs);
}

int sd_fresolve_start(const struct sdiag_filter *f, struct sd_fresolve **ret)
{
	struct sd_fresolve *rs;

	*ret = NULL;
	if (!f || !f->n_peers)
		return 0;
	rs = calloc(1, sizeof(*rs));
	if (!rs)
		return -ENOMEM;
	rs->vals = calloc(1, sizeof(*rs->vals));
	rs->globs = calloc(f->n_peers, sizeof(*rs->globs));
	rs->caps = calloc(f->n_peers, sizeof(*rs->caps));
	if (!rs->vals || !rs->globs || !rs->caps ||
	    !(rs->vals->peers = calloc(f->n_peers, sizeof(*rs->vals->peers)))) {
		sd_fresolve_free(rs);
		return -ENOMEM;
	}
	rs->vals->n_peers = f->n_peers;
	collect_globs(f->root, rs->globs);
	*ret = rs;
	return 0;
}

int sd_fresolve_sock(struct sd_fresolve *rs, const struct sdiag_sock *s)
{
	struct sd_fvals *v = rs->vals;
	char name[256];
	int r;

	if (!sd_unix_name(s, name, sizeof(name)))
		return 0;
	for (uint32_t i = 0; i < v->n_peers; i++) {
		if (!sd_glob_match(rs->globs[i], name))
			continue;
		r = add_inode(&v->peers[i], &rs->caps[i], (uint32_t)s->inode);
		if (r < 0)
			return r;
	}
	return 0;
}

void sd_fresolve_finish(struct sd_fresolve *rs, struct sd_fvals **ret)
{
	struct sd_fvals *v = rs->vals;

	for (uint32_t i = 0; i < v->n_peers; i++)
		if (v->peers[i].n)
			qsort(v->peers[i].v, v->peers[i].n, sizeof(uint32_t), cmp_u32);
	*ret = v;
	rs->vals = NULL;
	sd_fresolve_free(rs);
}
