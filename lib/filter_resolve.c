// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Values a filter needs that only a dump can tell, resolved by each dump in
 * its handle's namespace, never by the parser: the unix sockets a `dst GLOB`
 * names. The listeners' accepted children carry the listener's name, bound
 * datagram servers their own, so the sockets whose name matches are listed
 * once, and their inodes kept per glob.
 */
#include <errno.h>
#include <stdlib.h>

#include "filter.h"

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

struct scan {
	const char **globs;
	struct sd_fvals *vals;
	size_t *caps;
};

static int peer_cb(const struct sdiag_sock *s, void *userdata)
{
	struct scan *sc = userdata;
	char name[256];
	int r;

	if (!sd_unix_name(s, name, sizeof(name)))
		return 0;
	for (uint32_t i = 0; i < sc->vals->n_peers; i++) {
		if (!sd_glob_match(sc->globs[i], name))
			continue;
		r = add_inode(&sc->vals->peers[i], &sc->caps[i], (uint32_t)s->inode);
		if (r < 0)
			return r;
	}
	return 0;
}

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

int sd_filter_resolve(const struct sdiag_filter *f, struct sdiag_handle *h, struct sd_fvals **ret)
{
	struct sdiag_query q = { .tables = SDIAG_TABLES_UNIX, .states = SDIAG_STATES_ALL };
	struct scan sc = { 0 };
	struct sd_fvals *v = NULL;
	int r;

	*ret = NULL;
	if (!f || !f->n_peers)
		return 0;
	v = calloc(1, sizeof(*v));
	sc.globs = calloc(f->n_peers, sizeof(*sc.globs));
	sc.caps = calloc(f->n_peers, sizeof(*sc.caps));
	if (!v || !sc.globs || !sc.caps ||
	    !(v->peers = calloc(f->n_peers, sizeof(*v->peers)))) {
		r = -ENOMEM;
		goto out;
	}
	v->n_peers = f->n_peers;
	collect_globs(f->root, sc.globs);
	sc.vals = v;
	/* No filter on this dump: it cannot recurse. */
	r = sdiag_dump(h, &q, peer_cb, NULL, &sc);
	if (r < 0)
		goto out;
	for (uint32_t i = 0; i < v->n_peers; i++)
		if (v->peers[i].n)
			qsort(v->peers[i].v, v->peers[i].n, sizeof(uint32_t), cmp_u32);
	*ret = v;
	v = NULL;
out:
	sd_fvals_free(v);
	free(sc.globs);
	free(sc.caps);
	return r;
}
