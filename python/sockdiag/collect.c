/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Dumps into compact records, without the GIL: nothing here touches a Python
 * object, so the callers release the GIL around every function of this file.
 */
#include "python/sockdiag/sdpy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

void sdpy_chunk_reset(struct sdpy_chunk *c)
{
	c->n = 0;
	c->alen = 0;
	c->ntcpi = 0;
}

void sdpy_chunk_free(struct sdpy_chunk *c)
{
	if (!c)
		return;
	free(c->recs);
	free(c->arena);
	free(c->tcpi);
	memset(c, 0, sizeof(*c));
}

/* Make room for one more element of size sz in *arr (n used of *cap). */
static int grow(void **arr, size_t *cap, size_t need, size_t sz)
{
	size_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 256;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*arr, ncap * sz);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

static void fill_inet(struct sdpy_rec *r, const struct sdiag_sock *s)
{
	memcpy(r->src, s->inet.src, 16);
	memcpy(r->dst, s->inet.dst, 16);
	r->sport = s->inet.sport;
	r->dport = s->inet.dport;
	if (s->has & SDIAG_HAS_CGROUP) {
		r->cgroup = s->inet.cgroup_id;
		r->flags |= SDPY_R_CGROUP;
	}
}

static int fill_unix(struct sdpy_chunk *c, struct sdpy_rec *r, const struct sdiag_sock *s)
{
	size_t len = (s->has & SDIAG_HAS_NAME) ? s->un.name_len : 0;
	int e;

	if (!len)
		return 0;
	if (len > UINT32_MAX || c->alen + len > UINT32_MAX)
		return -ENOMEM;
	e = grow((void **)&c->arena, &c->acap, c->alen + len, 1);
	if (e < 0)
		return e;
	memcpy(c->arena + c->alen, s->un.name, len);
	r->name_off = (uint32_t)c->alen;
	r->name_len = (uint32_t)len;
	c->alen += len;
	return 0;
}

static int fill_tcpi(struct sdpy_chunk *c, struct sdpy_rec *r, const struct sdiag_sock *s)
{
	int e = grow((void **)&c->tcpi, &c->tcpicap, c->ntcpi + 1, sizeof(*c->tcpi));

	if (e < 0)
		return e;
	sdiag_sock_blob_copy(s, SDIAG_BLOB_TCP_INFO, &c->tcpi[c->ntcpi++], sizeof(*c->tcpi));
	r->tcpi = (uint32_t)c->ntcpi;
	return 0;
}

int sdpy_chunk_add(struct sdpy_chunk *c, const struct sdiag_sock *s, bool details)
{
	struct sdpy_rec *r;
	int e = grow((void **)&c->recs, &c->cap, c->n + 1, sizeof(*c->recs));

	if (e < 0)
		return e;
	r = &c->recs[c->n];
	memset(r, 0, sizeof(*r));
	r->table = (uint8_t)s->table;
	r->family = s->family;
	r->type = s->type;
	r->state = s->state;
	r->cookie = s->cookie;
	r->inode = s->inode;
	if (s->has & SDIAG_HAS_UID) {
		r->uid = s->uid;
		r->flags |= SDPY_R_UID;
	}
	if (s->has & SDIAG_HAS_QUEUES) {
		r->rqueue = s->rqueue;
		r->wqueue = s->wqueue;
		r->flags |= SDPY_R_QUEUES;
	}
	r->procs = s->procs;
	r->n_procs = (uint32_t)s->n_procs;
	switch (s->family) {
	case AF_INET:
	case AF_INET6:
		fill_inet(r, s);
		if (details && (s->has & SDIAG_HAS_TCP_INFO))
			e = fill_tcpi(c, r, s);
		break;
	case AF_UNIX:
		e = fill_unix(c, r, s);
		break;
	case AF_VSOCK:
		memcpy(r->src, &s->vsock.src_cid, 4);
		memcpy(r->src + 4, &s->vsock.src_port, 4);
		memcpy(r->dst, &s->vsock.dst_cid, 4);
		memcpy(r->dst + 4, &s->vsock.dst_port, 4);
		break;
	default:
		break;
	}
	if (e < 0)
		return e;
	c->n++;
	return 0;
}

int sdpy_prepare(struct sdpy_query *sq, struct sdiag_handle **ret)
{
	int r;

	if (sq->processes && !sq->procmap) {
		r = sdiag_procmap_scan(&sq->procmap, NULL);
		if (r < 0)
			return r;
		sq->q.procmap = sq->procmap;
	}
	/* The library applies both policies: each table's families, and a
	 * table the kernel cannot dump is an error only if it was named. */
	_Static_assert(sizeof(sq->afs) <= sizeof(sq->q.table_afs), "a table_afs per table");
	memcpy(sq->q.table_afs, sq->afs, sizeof(sq->afs));
	sq->q.flags |= SDIAG_Q_SKIP_UNSUPPORTED;
	sq->q.named_tables = sq->explicit_tables;
	return sq->nsfd >= 0 ? sdiag_open_netns(ret, sq->nsfd) : sdiag_open(ret);
}

int sdpy_table_err(struct sdpy_query *sq, enum sdiag_table t, int err)
{
	if (err == -EAFNOSUPPORT || err == -EPROTONOSUPPORT)
		sq->failed_table = (int)t + 1;
	return err;
}

int sdpy_dump_next(struct sdiag_dump *d, struct sdpy_query *sq, const struct sdiag_sock **ret)
{
	enum sdiag_table t;
	int r = sdiag_dump_next(d, ret);

	if (r < 0 && sdiag_dump_where(d, &t, NULL) == 0)
		sdpy_table_err(sq, t, r);
	return r;
}

int sdpy_dump(struct sdiag_handle *h, struct sdpy_query *sq, sdiag_sock_cb cb, void *userdata)
{
	const struct sdiag_sock *s;
	struct sdiag_dump *d;
	int r = sdiag_dump_begin(h, &sq->q, &d);

	if (r < 0)
		return r;
	while ((r = sdpy_dump_next(d, sq, &s)) > 0 && (r = cb(s, userdata)) >= 0)
		;
	sdiag_dump_end(d);
	return r;
}

struct collect_ctx {
	struct sdpy_chunk *c;
	bool details;
};

static int collect_cb(const struct sdiag_sock *s, void *userdata)
{
	struct collect_ctx *cc = userdata;

	return sdpy_chunk_add(cc->c, s, cc->details);
}

int sdpy_collect(struct sdpy_query *sq, struct sdpy_chunk *c)
{
	struct collect_ctx cc = { .c = c, .details = sq->details };
	struct sdiag_handle *h = NULL;
	int r;

	r = sdpy_prepare(sq, &h);
	if (r >= 0)
		r = sdpy_dump(h, sq, collect_cb, &cc);
	sdiag_close(h);
	return r;
}
