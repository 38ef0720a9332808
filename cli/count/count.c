// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * list --count-by KEY[,KEY...]: counts of sockets grouped by the values of
 * the keys, instead of the sockets. What users otherwise write awk for.
 *
 * Each socket's group is the keys' values as a typed tuple (util/group.h),
 * counted in the grouping engine's open-addressing table: memory grows with
 * the number of groups, never with the number of sockets. Names (cgroup paths,
 * users) are looked up once per group, when the groups are printed. At the end the groups are sorted
 * (largest first, then by value) and printed as an aligned table or as JSON
 * objects {"KEY": value, ..., "count": N}; with list --interval each row or
 * object starts with the snapshot's time, as records do.
 */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "cli/count/count.h"
#include "cli/fields/names.h"
#include "cli/fmt/fmt.h"
#include "util/textfile.h"

const char *count_key_name(enum gkey k)
{
	return k < GK_MAX ? gkey_defs[k].name : NULL;
}

bool count_key_number(enum gkey k)
{
	return k < GK_MAX && gkey_defs[k].json_number;
}

int count_key_lookup(const char *name, size_t len)
{
	int k = gkey_lookup(name, len);

	return k >= 0 && (gkey_defs[k].fe & GF_CLI) ? k : -1;
}

/* One rule for every list: KEY[,KEY...], no item empty, none twice (group.c). */
int count_keys_parse(struct gkeys *ret, const char *arg)
{
	struct gkeys k = { .n = 0 };
	char err[640];

	if (gkeys_parse(&k, arg, strlen(arg), GF_CLI, GKEYS_MAX, err, sizeof(err)) < 0) {
		fprintf(stderr, "sockdiag list: --count-by: %s\n", err);
		return -EINVAL;
	}
	*ret = k;
	return 0;
}

/* A group as printed: its count and its values as text. */
struct row {
	uint64_t n;
	unsigned none;			  /* bit k: key k has no value (JSON null) */
	const char *v[GKEYS_MAX];	  /* into the text buffer */
	size_t len[GKEYS_MAX];
};

#define CG_MEMO 256
#define CG_REREAD_S 5

struct cg_memo {
	uint64_t id;
	const char *path;	/* borrowed from names; NULL: no such cgroup now */
	const char *unit;	/* within path */
	size_t unit_len;
	bool valid;
};

/* What a key's value needs: cgroup names, user names, each cached. */
struct ckeys {
	struct cg_memo memo[CG_MEMO];
	struct names *names;
	bool numeric;	   /* -n: uids, not user names */
	time_t read_at;	   /* when the cgroup names were (to be) read */
	uid_t last_uid;	   /* one-entry cache for user names */
	char last_user[64];
	bool have_user;
	char unit_buf[24];  /* a removed cgroup's id as a unit */
};

struct count {
	struct gkeys k;
	struct ckeys *ck;
	struct out_opts o;
	const struct timespec *time;	/* --interval: the snapshot's stamp, or NULL */
	struct gtab tab;
	uint8_t key[4096];		/* the tuple being built */
};

struct ckeys *ckeys_new(bool numeric)
{
	struct ckeys *c = calloc(1, sizeof(*c));

	if (c) {
		c->numeric = numeric;
		c->names = names_new(false);
		c->read_at = time(NULL);
	}
	if (c && !c->names) {
		free(c);
		c = NULL;
	}
	return c;
}

void ckeys_free(struct ckeys *c)
{
	if (!c)
		return;
	names_free(c->names);
	free(c);
}

int ckeys_forget(struct ckeys *c)
{
	struct names *n = names_new(false);

	if (!n)
		return -ENOMEM;
	names_free(c->names);
	c->names = n;
	memset(c->memo, 0, sizeof(c->memo));
	c->read_at = time(NULL);
	return 0;
}

int count_new(struct count **ret, const struct gkeys *k, const struct out_opts *o,
	      const struct timespec *time)
{
	struct count *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->k = *k;
	c->o = *o;
	c->time = time;
	c->ck = ckeys_new(o->numeric);
	if (!c->ck) {
		count_free(c);
		return -ENOMEM;
	}
	*ret = c;
	return 0;
}

void count_free(struct count *c)
{
	if (!c)
		return;
	gtab_free(&c->tab);
	ckeys_free(c->ck);
	free(c);
}

static bool is_inet(const struct sdiag_sock *s)
{
	return s->family == AF_INET || s->family == AF_INET6;
}

/* The innermost systemd unit in a cgroup path: the last component named
 * *.service, *.scope, *.slice, *.socket, *.mount or *.swap. */
static size_t unit_of(const char *path, const char **ret)
{
	static const char *const sfx[] = { ".service", ".scope", ".slice",
					   ".socket", ".mount", ".swap" };
	const char *p = path, *best = NULL;
	size_t best_len = 0;

	while (*p) {
		size_t len;

		while (*p == '/')
			p++;
		len = strcspn(p, "/");
		for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
			size_t sl = strlen(sfx[i]);

			if (len > sl && !memcmp(p + len - sl, sfx[i], sl)) {
				best = p;
				best_len = len;
			}
		}
		p += len;
	}
	*ret = best;
	return best_len;
}


/* The cgroup path and unit of an id, through a small direct-mapped cache:
 * sockets of a few cgroups arrive interleaved, and every one needs them. */
static const struct cg_memo *cg_lookup(struct ckeys *c, uint64_t id)
{
	struct cg_memo *m = &c->memo[id % CG_MEMO];

	if (!m->valid || m->id != id) {
		m->path = names_cgroup(c->names, id);
		/* A cgroup made since the names were read (top runs for long):
		 * read them again, at most every few seconds. */
		if (!m->path && time(NULL) - c->read_at >= CG_REREAD_S && ckeys_forget(c) == 0)
			m->path = names_cgroup(c->names, id);
		m->id = id;
		m->valid = true;
		m->unit_len = m->path ? unit_of(m->path, &m->unit) : 0;
	}
	return m;
}


static void put_user(struct ckeys *c, struct obuf *b, uint32_t uid)
{
	struct passwd *pw;

	if (!c->have_user || c->last_uid != uid) {
		pw = c->numeric ? NULL : getpwuid(uid);
		if (pw && strlen(pw->pw_name) < sizeof(c->last_user))
			strcpy(c->last_user, pw->pw_name);
		else
			snprintf(c->last_user, sizeof(c->last_user), "%u", uid);
		c->last_uid = uid;
		c->have_user = true;
	}
	obuf_puts(b, c->last_user);
}

/* The unit key's bytes: the innermost unit of the cgroup's path; a removed
 * cgroup's id; NULL ("-") for none. */
static const char *unit_cb(void *arg, const struct sdiag_sock *s, size_t *len)
{
	struct ckeys *c = arg;
	const struct cg_memo *m;
	if (!is_inet(s) || !(s->has & SDIAG_HAS_CGROUP))
		return NULL;
	m = cg_lookup(c, s->inet.cgroup_id);
	if (m->unit_len) {
		*len = m->unit_len;
		return m->unit;
	}
	if (m->path)
		return NULL;
	*len = fmt_u64(c->unit_buf, s->inet.cgroup_id);
	return c->unit_buf;
}

struct gkey_ctx ckeys_ctx(struct ckeys *c, const char *netns)
{
	return (struct gkey_ctx){ .netns = netns, .unit = unit_cb, .arg = c };
}

void ckeys_text(struct ckeys *c, struct obuf *b, enum gkey key, const struct gval *v)
{
	const struct cg_memo *m;
	const char *str = NULL;
	char buf[64];

	if (v->none) {
		obuf_putc(b, '-');
		return;
	}
	switch (gkey_defs[key].type) {
	case GT_ADDR:
	case GT_ENDPOINT: obuf_put(b, buf, fmt_addr(buf, v->family, v->p)); return;
	case GT_BYTES:
		if (v->len)
			obuf_put(b, (const char *)v->p, v->len);
		else
			obuf_putc(b, '-');
		return;
	case GT_INT: break;
	}
	switch (key) {
	case GK_STATE: str = sdiag_state_name((unsigned)v->u); break;
	case GK_PROTO: str = sdiag_table_netid((enum sdiag_table)v->u); break;
	case GK_FAMILY:
		str = out_family_name(&(struct sdiag_sock){ .family = (uint8_t)v->u });
		break;
	case GK_CGROUP:
		m = cg_lookup(c, v->u);
		str = m->path;
		break;
	case GK_USER: put_user(c, b, (uint32_t)v->u); return;
	default: break;
	}
	if (str)
		obuf_puts(b, *str ? str : "-");
	else
		obuf_u64(b, v->u);
}

int count_sock(struct count *c, const struct sdiag_sock *s, const char *netns)
{
	struct gkey_ctx ctx = ckeys_ctx(c->ck, netns);
	size_t len = gkey_tuple(c->key, sizeof(c->key), &c->k, s, &ctx);
	bool fresh;

	if (len > sizeof(c->key))
		return -E2BIG;
	return gtab_add(&c->tab, c->key, len, &fresh) < 0 ? -ENOMEM : 0;
}

static int cmp_field(const struct row *x, const struct row *y, size_t k)
{
	size_t n = x->len[k] < y->len[k] ? x->len[k] : y->len[k];
	int r = memcmp(x->v[k], y->v[k], n);

	if (r || x->len[k] == y->len[k])
		return r;
	return x->len[k] < y->len[k] ? -1 : 1;
}

/* Largest first, then by the values' text, key by key. */
static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	for (size_t k = 0; k < GKEYS_MAX && x->len[k] + y->len[k]; k++) {
		int r = cmp_field(x, y, k);

		if (r)
			return r;
	}
	return 0;
}

/* The groups as rows of text, into t (which must not move afterwards). */
static int make_rows(struct count *c, struct row *v, struct obuf *t)
{
	size_t n = 0;

	for (size_t i = 0; i < c->tab.cap; i++) {
		const struct gent *e = &c->tab.e[i];
		size_t off[GKEYS_MAX];

		if (!e->hash)
			continue;
		v[n] = (struct row){ .n = e->count };
		for (size_t k = 0; k < c->k.n; k++) {
			struct gval g;

			gkey_field(gtab_key(&c->tab, e), e->len, &c->k, k, &g);
			off[k] = t->len;
			ckeys_text(c->ck, t, c->k.k[k], &g);
			v[n].len[k] = t->len - off[k];
			if (g.none || (gkey_defs[c->k.k[k]].type == GT_BYTES && !g.len))
				v[n].none |= 1u << k;
		}
		for (size_t k = 0; k < c->k.n; k++)
			v[n].v[k] = (const char *)(uintptr_t)off[k]; /* an offset until t is done */
		n++;
	}
	if (t->err)
		return t->err;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < c->k.n; k++)
			v[i].v[k] = t->p + (uintptr_t)v[i].v[k];
	return 0;
}

static void json_group(struct count *c, struct obuf *b, const struct row *g,
		       const char *time, size_t time_len)
{
	obuf_putc(b, '{');
	if (time_len) {
		obuf_puts(b, "\"time\":\"");
		obuf_put(b, time, time_len);
		obuf_puts(b, "\",");
	}
	for (size_t k = 0; k < c->k.n; k++) {
		obuf_putc(b, '"');
		obuf_puts(b, gkey_defs[c->k.k[k]].name);
		obuf_puts(b, "\":");
		if (g->none & (1u << k))
			obuf_puts(b, "null");
		else if (gkey_defs[c->k.k[k]].json_number)
			obuf_put(b, g->v[k], g->len[k]);
		else
			obuf_json_str(b, g->v[k], g->len[k]);
		obuf_putc(b, ',');
	}
	obuf_puts(b, "\"count\":");
	obuf_u64(b, g->n);
	obuf_putc(b, '}');
}

static void table_rows(struct count *c, struct obuf *b, const struct row *v, size_t n,
		       const char *time, size_t time_len)
{
	size_t w[COUNT_MAX_KEYS + 1] = { 0 };

	for (size_t k = 0; k < c->k.n; k++)
		w[k] = c->o.no_header ? 0 : strlen(gkey_defs[c->k.k[k]].name);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < c->k.n; k++)
			if (v[i].len[k] > w[k])
				w[k] = v[i].len[k];
	if (!c->o.no_header) {
		if (time_len) {
			obuf_puts(b, "TIME");
			obuf_spaces(b, time_len - 4 + 1);
		}
		for (size_t k = 0; k < c->k.n; k++) {
			const char *name = gkey_defs[c->k.k[k]].name;

			for (const char *p = name; *p; p++)
				obuf_putc(b, *p >= 'a' && *p <= 'z' ? (char)(*p - 'a' + 'A') : *p);
			obuf_spaces(b, w[k] - strlen(name) + 1);
		}
		obuf_puts(b, "COUNT\n");
	}
	for (size_t i = 0; i < n; i++) {
		if (time_len) {
			obuf_put(b, time, time_len);
			obuf_putc(b, ' ');
		}
		for (size_t k = 0; k < c->k.n; k++) {
			obuf_text_bytes(b, v[i].v[k], v[i].len[k]);
			obuf_spaces(b, w[k] - v[i].len[k] + 1);
		}
		obuf_u64(b, v[i].n);
		obuf_putc(b, '\n');
		if (b->len > b->cap / 2 && obuf_flush(b) < 0)
			return;
	}
}

int count_finish(struct count *c)
{
	struct row *v = NULL;
	char time[48];
	size_t time_len = 0;
	struct obuf b, t;
	size_t n = c->tab.used;
	int r;

	r = obuf_init(&b, 1 << 16, c->o.fd);
	if (r < 0)
		return r;
	r = obuf_init(&t, 1 << 16, -1);
	v = malloc((n ? n : 1) * sizeof(*v));
	if (r < 0 || !v || (r = make_rows(c, v, &t)) < 0) {
		obuf_fini(&b);
		obuf_fini(&t);
		free(v);
		return r < 0 ? r : -ENOMEM;
	}
	qsort(v, n, sizeof(*v), cmp_row);
	if (c->time)
		time_len = out_time_fmt(time, c->time, c->o.format != OUT_TABLE);
	if (c->o.format == OUT_TABLE) {
		table_rows(c, &b, v, n, time, time_len);
	} else {
		if (c->o.format == OUT_JSON)
			obuf_puts(&b, "[\n");
		for (size_t i = 0; i < n; i++) {
			json_group(c, &b, &v[i], time, time_len);
			if (c->o.format == OUT_JSON && i + 1 < n)
				obuf_putc(&b, ',');
			obuf_putc(&b, '\n');
			if (b.len > b.cap / 2 && (r = obuf_flush(&b)) < 0)
				break;
		}
		if (c->o.format == OUT_JSON)
			obuf_puts(&b, "]\n");
	}
	if (r == 0)
		r = obuf_flush(&b);
	obuf_fini(&b);
	obuf_fini(&t);
	free(v);
	return r;
}
