// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The model of sockdiag-kube-backends, pure (no I/O): the slices it knows,
 * each with the backends it serves, and every backend's count of serving
 * slices and since when it is dead. One chained hash table for each, by
 * string (uid; "ADDR:PORT/proto").
 */
#include <arpa/inet.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/kube/kube.h"
#include "util/hash.h"

#define NEVER UINT64_MAX
/* "[" + an IPv6 address + "]:65535/tcp" */
#define KEY_MAX (INET6_ADDRSTRLEN + 12)

struct node {
	struct node *next;
	char *name;
	union {
		struct {		/* a backend */
			unsigned serving; /* slices serving it */
			bool dead;
			uint64_t since_ms;
		} b;
		struct {		/* a slice */
			char **keys;	/* the backends it serves, sorted */
			size_t n;
			bool seen;	/* listed by the re-list under way */
		} s;
	};
};

struct table {
	struct node **bucket;
	size_t nb, n;
};

struct kube_state {
	struct table backends, slices;
	/* The backends marked dead, each once (a render walks these, not every
	 * backend); an entry whose node went is never left here. */
	struct node **dead;
	size_t ndead, dead_cap;
	bool dead_oom;	/* an append failed: render walks every backend */
	uint64_t ttl_ms;
};

static struct node **slot(struct table *t, const char *name)
{
	struct node **p = &t->bucket[hash_bytes(name, strlen(name)) & (t->nb - 1)];

	while (*p && strcmp((*p)->name, name))
		p = &(*p)->next;
	return p;
}

static int grow(struct table *t)
{
	size_t nb = t->nb ? t->nb * 2 : 64;
	struct node **b = calloc(nb, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < t->nb; i++) {
		for (struct node *e = t->bucket[i], *next; e; e = next) {
			size_t h = hash_bytes(e->name, strlen(e->name)) & (nb - 1);

			next = e->next;
			e->next = b[h];
			b[h] = e;
		}
	}
	free(t->bucket);
	t->bucket = b;
	t->nb = nb;
	return 0;
}

/* The node of name, made (zeroed) if new; NULL: no memory. */
static struct node *get(struct table *t, const char *name)
{
	struct node **p, *e;

	if (t->n >= t->nb && grow(t) < 0)
		return NULL;
	p = slot(t, name);
	if (*p)
		return *p;
	e = calloc(1, sizeof(*e));
	if (!e || !(e->name = strdup(name))) {
		free(e);
		return NULL;
	}
	*p = e;
	t->n++;
	return e;
}

static struct node *find(struct table *t, const char *name)
{
	return t->nb ? *slot(t, name) : NULL;
}

static void free_keys(char **keys, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
}

static void drop(struct table *t, struct node *e, bool slice)
{
	struct node **p = slot(t, e->name);

	*p = e->next;
	t->n--;
	if (slice)
		free_keys(e->s.keys, e->s.n);
	free(e->name);
	free(e);
}

int kube_state_new(struct kube_state **ret, uint64_t ttl_ms)
{
	struct kube_state *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	st->ttl_ms = ttl_ms;
	*ret = st;
	return 0;
}

static void table_free(struct table *t, bool slices)
{
	for (size_t i = 0; i < t->nb; i++) {
		for (struct node *e = t->bucket[i], *next; e; e = next) {
			next = e->next;
			if (slices)
				free_keys(e->s.keys, e->s.n);
			free(e->name);
			free(e);
		}
	}
	free(t->bucket);
}

void kube_state_free(struct kube_state *st)
{
	if (!st)
		return;
	table_free(&st->backends, false);
	table_free(&st->slices, true);
	free(st->dead);
	free(st);
}

size_t kube_state_slices(const struct kube_state *st)
{
	return st->slices.n;
}

static void mark_dead(struct kube_state *st, struct node *b, uint64_t now_ms)
{
	if (b->b.dead)
		return;
	b->b.dead = true;
	b->b.since_ms = now_ms;
	if (st->ndead == st->dead_cap) {
		size_t cap = st->dead_cap ? st->dead_cap * 2 : 64;
		struct node **v = realloc(st->dead, cap * sizeof(*v));

		if (!v) {
			st->dead_oom = true;
			return;
		}
		st->dead = v;
		st->dead_cap = cap;
	}
	st->dead[st->ndead++] = b;
}

/* "ADDR:PORT/proto" in the guard's spelling, the address as inet_ntop
 * writes it; false if addr is not an address of family af. */
static bool key_of(char *buf, int af, const char *addr, int port, const char *proto)
{
	unsigned char bin[16];
	char text[INET6_ADDRSTRLEN];

	if (inet_pton(af, addr, bin) != 1 || !inet_ntop(af, bin, text, sizeof(text)))
		return false;
	snprintf(buf, KEY_MAX, af == AF_INET6 ? "[%s]:%d/%s" : "%s:%d/%s", text, port, proto);
	return true;
}

int kube_state_seed(struct kube_state *st, const char *line, uint64_t now_ms)
{
	char addr[INET6_ADDRSTRLEN + 2], proto[4], key[KEY_MAX], end;
	int port, af = AF_INET;
	struct node *b;

	if (line[0] == '[') {
		if (sscanf(line, "[%47[0-9a-fA-F:.]]:%d/%3[a-z]%c", addr, &port, proto, &end) != 3)
			return -EINVAL;
		af = AF_INET6;
	} else if (sscanf(line, "%15[0-9.]:%d/%3[a-z]%c", addr, &port, proto, &end) != 3) {
		return -EINVAL;
	}
	if (port < 1 || port > 65535 || (strcmp(proto, "tcp") && strcmp(proto, "udp")) ||
	    !key_of(key, af, addr, port, proto))
		return -EINVAL;
	b = get(&st->backends, key);
	if (!b)
		return -ENOMEM;
	mark_dead(st, b, now_ms);
	return 0;
}

static const char *str_at(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string) ?
		       json_object_get_string(v) : NULL;
}

static struct json_object *at(struct json_object *o, const char *k, enum json_type type)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, type) ? v : NULL;
}

/* Serving: conditions.serving, else conditions.ready (API servers before
 * 1.20 send no serving), else yes: an absent condition means unknown, which
 * the API says to read as ready. A terminating endpoint that still serves
 * (serving true, ready false) is draining, not dead. */
static bool serving(struct json_object *ep)
{
	struct json_object *c = at(ep, "conditions", json_type_object), *v;

	if (!c)
		return true;
	if ((v = at(c, "serving", json_type_boolean)) || (v = at(c, "ready", json_type_boolean)))
		return json_object_get_boolean(v);
	return true;
}

struct keys {
	char **v;
	size_t n, cap;
};

static int keys_add(struct keys *k, const char *key)
{
	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 8;
		char **v = realloc(k->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		k->v = v;
		k->cap = cap;
	}
	if (!(k->v[k->n] = strdup(key)))
		return -ENOMEM;
	k->n++;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted, each once. */
static void keys_sort(struct keys *k)
{
	size_t j = 0;

	if (k->n)
		qsort(k->v, k->n, sizeof(*k->v), cmp_str);
	for (size_t i = 0; i < k->n; i++) {
		if (j && !strcmp(k->v[j - 1], k->v[i]))
			free(k->v[i]);
		else
			k->v[j++] = k->v[i];
	}
	k->n = j;
}

/* The backends of one endpoint's addresses on every port of the slice. */
static int endpoint_keys(struct json_object *ep, struct json_object *ports, int af,
			 struct keys *out)
{
	struct json_object *addrs = at(ep, "addresses", json_type_array);
	size_t na = addrs ? json_object_array_length(addrs) : 0;
	size_t np = json_object_array_length(ports);
	char key[KEY_MAX];
	int r;

	for (size_t i = 0; i < na; i++) {
		struct json_object *a = json_object_array_get_idx(addrs, i);

		if (!json_object_is_type(a, json_type_string))
			continue;
		for (size_t j = 0; j < np; j++) {
			struct json_object *p = json_object_array_get_idx(ports, j);
			struct json_object *port = at(p, "port", json_type_int);
			const char *proto = str_at(p, "protocol");
			int64_t n = port ? json_object_get_int64(port) : 0;

			/* A port without a number means every port: no line says that. */
			if (n < 1 || n > 65535)
				continue;
			if (!proto || !strcmp(proto, "TCP"))
				proto = "tcp";
			else if (!strcmp(proto, "UDP"))
				proto = "udp";
			else
				continue; /* SCTP: the guard closes TCP and UDP only */
			if (!key_of(key, af, json_object_get_string(a), (int)n, proto))
				continue;
			if ((r = keys_add(out, key)) < 0)
				return r;
		}
	}
	return 0;
}

/* The backends a slice serves and those it lists not serving. */
static int slice_keys(struct json_object *slice, struct keys *live, struct keys *dead)
{
	const char *type = str_at(slice, "addressType");
	struct json_object *eps = at(slice, "endpoints", json_type_array);
	struct json_object *ports = at(slice, "ports", json_type_array);
	int af, r = 0;

	if (!type || !eps || !ports)
		return 0;
	if (!strcmp(type, "IPv4"))
		af = AF_INET;
	else if (!strcmp(type, "IPv6"))
		af = AF_INET6;
	else
		return 0; /* FQDN: no address */
	for (size_t i = 0; i < json_object_array_length(eps) && r >= 0; i++) {
		struct json_object *ep = json_object_array_get_idx(eps, i);

		if (json_object_is_type(ep, json_type_object))
			r = endpoint_keys(ep, ports, af, serving(ep) ? live : dead);
	}
	keys_sort(live);
	keys_sort(dead);
	return r;
}

/* uid, else namespace/name. */
static bool slice_id(struct json_object *slice, char *buf, size_t len)
{
	struct json_object *md = at(slice, "metadata", json_type_object);
	const char *uid = md ? str_at(md, "uid") : NULL;
	const char *ns = md ? str_at(md, "namespace") : NULL;
	const char *name = md ? str_at(md, "name") : NULL;
	int n;

	if (uid && *uid)
		n = snprintf(buf, len, "%s", uid);
	else if (name && *name)
		n = snprintf(buf, len, "%s/%s", ns ? ns : "", name);
	else
		return false;
	return n > 0 && (size_t)n < len;
}

static bool in_sorted(char **v, size_t n, const char *key)
{
	/* An empty set is not handed to bsearch (v is NULL then: UBSan). */
	return n && bsearch(&key, v, n, sizeof(*v), cmp_str) != NULL;
}

/* e's backends become keys (sorted): those it served and no longer does die. */
static int slice_set(struct kube_state *st, struct node *e, struct keys *live, uint64_t now_ms)
{
	struct node *b;

	for (size_t i = 0; i < live->n; i++) {
		if (!(b = get(&st->backends, live->v[i])))
			return -ENOMEM;
		b->b.serving++;
	}
	for (size_t i = 0; i < e->s.n; i++) {
		b = find(&st->backends, e->s.keys[i]);
		if (!b)
			continue;
		b->b.serving--;
		if (!in_sorted(live->v, live->n, e->s.keys[i]))
			mark_dead(st, b, now_ms);
	}
	free_keys(e->s.keys, e->s.n);
	e->s.keys = live->v;
	e->s.n = live->n;
	*live = (struct keys){ 0 };
	return 0;
}

int kube_slice_put(struct kube_state *st, struct json_object *slice, uint64_t now_ms)
{
	struct keys live = { 0 }, dead = { 0 };
	char id[512];
	struct node *e, *b;
	int r;

	if (!slice_id(slice, id, sizeof(id)))
		return -EINVAL;
	r = slice_keys(slice, &live, &dead);
	if (r < 0)
		goto out;
	r = -ENOMEM;
	if (!(e = get(&st->slices, id)))
		goto out;
	e->s.seen = true;
	for (size_t i = 0; i < dead.n; i++) {
		if (!(b = get(&st->backends, dead.v[i])))
			goto out;
		mark_dead(st, b, now_ms);
	}
	r = slice_set(st, e, &live, now_ms);
out:
	free_keys(live.v, live.n);
	free_keys(dead.v, dead.n);
	return r;
}

static void slice_gone(struct kube_state *st, struct node *e, uint64_t now_ms)
{
	struct keys none = { 0 };

	slice_set(st, e, &none, now_ms); /* frees, allocates nothing */
	drop(&st->slices, e, true);
}

int kube_slice_del(struct kube_state *st, struct json_object *slice, uint64_t now_ms)
{
	char id[512];
	struct node *e;

	if (!slice_id(slice, id, sizeof(id)))
		return -EINVAL;
	e = find(&st->slices, id);
	if (e)
		slice_gone(st, e, now_ms);
	return 0;
}

void kube_relist_begin(struct kube_state *st)
{
	for (size_t i = 0; i < st->slices.nb; i++)
		for (struct node *e = st->slices.bucket[i]; e; e = e->next)
			e->s.seen = false;
}

void kube_relist_end(struct kube_state *st, uint64_t now_ms)
{
	for (size_t i = 0; i < st->slices.nb; i++) {
		for (struct node *e = st->slices.bucket[i], *next; e; e = next) {
			next = e->next;
			if (!e->s.seen)
				slice_gone(st, e, now_ms);
		}
	}
}


/* Whether b is listed at now_ms; clears dead once it is served again or past
 * its TTL, and frees it when nothing refers to it any more (not dead, no slice
 * serving it). */
static bool listed(struct kube_state *st, struct node *b, uint64_t now_ms)
{
	if (b->b.dead && (b->b.serving || now_ms - b->b.since_ms >= st->ttl_ms))
		b->b.dead = false;
	if (b->b.dead)
		return true;
	if (!b->b.serving)
		drop(&st->backends, b, false);
	return false;
}

/* After an append failed: the dead list again, from every backend. */
static void dead_rebuild(struct kube_state *st)
{
	struct table *t = &st->backends;
	size_t n = 0;
	struct node **v;

	for (size_t i = 0; i < t->nb; i++)
		for (struct node *b = t->bucket[i]; b; b = b->next)
			n += b->b.dead;
	v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return;
	n = 0;
	for (size_t i = 0; i < t->nb; i++)
		for (struct node *b = t->bucket[i]; b; b = b->next)
			if (b->b.dead)
				v[n++] = b;
	free(st->dead);
	st->dead = v;
	st->dead_cap = n ? n : 1;
	st->ndead = n;
	st->dead_oom = false;
}

static int cmp_node(const void *a, const void *b)
{
	return strcmp((*(struct node *const *)a)->name, (*(struct node *const *)b)->name);
}

static const char HEADER[] = "# dead backends, written by sockdiag-kube-backends\n";

int kube_render(struct kube_state *st, uint64_t now_ms, char **ret, size_t *ret_n,
		uint64_t *ret_expiry_ms)
{
	uint64_t expiry = NEVER;
	size_t n = 0, len = sizeof(HEADER);
	char *text, *p;

	if (st->dead_oom)
		dead_rebuild(st);
	if (st->dead_oom)
		return -ENOMEM;
	for (size_t i = 0; i < st->ndead; i++) {
		struct node *b = st->dead[i];

		if (!listed(st, b, now_ms))
			continue;
		if (b->b.since_ms + st->ttl_ms < expiry)
			expiry = b->b.since_ms + st->ttl_ms;
		st->dead[n++] = b;
		len += strlen(b->name) + 1;
	}
	st->ndead = n;
	if (n)
		qsort(st->dead, n, sizeof(*st->dead), cmp_node);
	text = p = malloc(len);
	if (!text)
		return -ENOMEM;
	p = stpcpy(p, HEADER);
	for (size_t i = 0; i < n; i++) {
		p = stpcpy(p, st->dead[i]->name);
		*p++ = '\n';
	}
	*p = 0;
	*ret = text;
	*ret_n = n;
	*ret_expiry_ms = expiry;
	return 0;
}
