// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * list --count-by KEY[,KEY...]: counts of sockets grouped by the values of
 * the keys, instead of the sockets. What users otherwise write awk for.
 *
 * Each socket's group is the keys' values joined into one string, counted
 * in an open-addressing hash table: memory grows with the number of
 * groups, never with the number of sockets. At the end the groups are sorted
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

#include "cli/count.h"
#include "cli/fields/names.h"
#include "cli/fmt/fmt.h"
#include "util/textfile.h"

static const struct {
	const char *name;
	bool number; /* JSON: a number, not a string (when it is one) */
} keys[CK_MAX] = {
	[CK_STATE] = { "state", false },     [CK_PROTO] = { "proto", false },
	[CK_FAMILY] = { "family", false },   [CK_NETNS] = { "netns", false },
	[CK_CGROUP] = { "cgroup", false },   [CK_UNIT] = { "unit", false },
	[CK_PROCESS] = { "process", false }, [CK_USER] = { "user", false },
	[CK_LPORT] = { "lport", true },	     [CK_RPORT] = { "rport", true },
	[CK_LADDR] = { "laddr", false },     [CK_RADDR] = { "raddr", false },
	[CK_PID] = { "pid", true },
};

#define SEP '\x1f' /* between the values of one group's key */

const char *count_key_name(enum count_key k)
{
	return k < CK_MAX ? keys[k].name : NULL;
}

bool count_key_number(enum count_key k)
{
	return k < CK_MAX && keys[k].number;
}

int count_key_lookup(const char *name, size_t len)
{
	if (len == 4 && !strncmp(name, "comm", 4))
		return CK_PROCESS; /* top's name for it */
	for (unsigned i = 0; i < CK_MAX; i++)
		if (strlen(keys[i].name) == len && !strncmp(keys[i].name, name, len))
			return (int)i;
	return -1;
}

/* One rule for every list: KEY[,KEY...], no item empty, none twice. */
int count_keys_parse(struct count_keys *ret, const char *arg)
{
	struct count_keys k = { 0 };
	const char *p = arg;
	char q[TEXT_QUOTE_LEN];

	if (!*arg) {
		fprintf(stderr, "sockdiag list: --count-by: no key given\n");
		return -EINVAL;
	}
	for (;;) {
		size_t len = strcspn(p, ",");
		int i = count_key_lookup(p, len);

		if (!len) {
			fprintf(stderr, "sockdiag list: --count-by: an empty key in '%s' (keys are "
					"separated by single commas)\n",
				text_excerpt(q, sizeof(q), arg, strlen(arg), 32));
			return -EINVAL;
		}
		if (i < 0 || k.n == COUNT_MAX_KEYS) {
			fprintf(stderr,
				"sockdiag list: --count-by: %s '%s' (keys: state, proto, family, "
				"netns, cgroup, unit, process, pid, user, lport, rport, laddr, raddr)\n",
				i < 0 ? "unknown key" : "too many keys at",
				text_excerpt(q, sizeof(q), p, len, 32));
			return -EINVAL;
		}
		if (count_keys_has(&k, (enum count_key)i)) {
			fprintf(stderr, "sockdiag list: --count-by: key '%s' given twice\n",
				keys[i].name);
			return -EINVAL;
		}
		k.k[k.n++] = (enum count_key)i;
		p += len;
		if (!*p++)
			break;
	}
	*ret = k;
	return 0;
}

bool count_keys_has(const struct count_keys *k, enum count_key key)
{
	for (size_t i = 0; i < k->n; i++)
		if (k->k[i] == key)
			return true;
	return false;
}

struct group {
	char *key; /* values joined by SEP */
	uint64_t hash;
	uint64_t n;
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
};

struct count {
	struct count_keys k;
	struct ckeys *ck;
	struct out_opts o;
	const struct timespec *time;	/* --interval: the snapshot's stamp, or NULL */
	struct group *tab; /* open addressing, key NULL = empty */
	size_t cap, used;
	struct obuf kb;	   /* the group key being built */
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

int count_new(struct count **ret, const struct count_keys *k, const struct out_opts *o,
	      const struct timespec *time)
{
	struct count *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->k = *k;
	c->o = *o;
	c->time = time;
	c->cap = 64;
	c->tab = calloc(c->cap, sizeof(*c->tab));
	c->ck = ckeys_new(o->numeric);
	if (!c->tab || !c->ck || obuf_init(&c->kb, 1024, -1) < 0) {
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
	for (size_t i = 0; c->tab && i < c->cap; i++)
		free(c->tab[i].key);
	free(c->tab);
	ckeys_free(c->ck);
	obuf_fini(&c->kb);
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

static void put_user(struct ckeys *c, struct obuf *b, const struct sdiag_sock *s)
{
	struct passwd *pw;

	if (!(s->has & SDIAG_HAS_UID)) {
		obuf_putc(b, '-');
		return;
	}
	if (!c->have_user || c->last_uid != s->uid) {
		pw = c->numeric ? NULL : getpwuid(s->uid);
		if (pw && strlen(pw->pw_name) < sizeof(c->last_user))
			strcpy(c->last_user, pw->pw_name);
		else
			snprintf(c->last_user, sizeof(c->last_user), "%u", s->uid);
		c->last_uid = s->uid;
		c->have_user = true;
	}
	obuf_puts(b, c->last_user);
}

/* An address as a key: a v4-mapped IPv6 one (a dual-stack socket's IPv4 peer) as
 * the IPv4 address it is, so that one peer is one group, whichever socket saw it. */
static void put_addr(struct obuf *b, const struct sdiag_sock *s, const uint8_t *a)
{
	struct in6_addr in6;
	char buf[64];

	if (!is_inet(s)) {
		obuf_putc(b, '-');
		return;
	}
	memcpy(&in6, a, sizeof(in6));
	if (s->family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&in6))
		obuf_put(b, buf, fmt_addr(buf, AF_INET, a + 12));
	else
		obuf_put(b, buf, fmt_addr(buf, s->family, a));
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

void ckeys_put(struct ckeys *c, struct obuf *b, enum count_key key, const struct sdiag_sock *s,
	       const char *netns)
{
	bool cg = is_inet(s) && (s->has & SDIAG_HAS_CGROUP);
	const struct cg_memo *m = NULL;
	const char *path = NULL, *str = NULL;

	if (cg && (key == CK_CGROUP || key == CK_UNIT)) {
		m = cg_lookup(c, s->inet.cgroup_id);
		path = m->path;
	}

	switch (key) {
	case CK_STATE: str = sdiag_state_name(s->state); break;
	case CK_PROTO: str = sdiag_table_netid(s->table); break;
	case CK_FAMILY: str = out_family_name(s); break;
	case CK_NETNS: str = netns; break;
	case CK_CGROUP:
		if (cg && !path)
			obuf_u64(b, s->inet.cgroup_id); /* removed since: its id */
		str = cg ? path : NULL;
		break;
	case CK_UNIT:
		if (m && m->unit_len)
			obuf_put(b, m->unit, m->unit_len);
		else if (cg && !path)
			obuf_u64(b, s->inet.cgroup_id);
		else
			obuf_putc(b, '-');
		return;
	case CK_PROCESS: str = s->n_procs ? s->procs[0].comm : NULL; break;
	case CK_PID:
		if (!s->n_procs)
			break;
		obuf_u64(b, (uint64_t)s->procs[0].pid);
		return;
	case CK_USER: put_user(c, b, s); return;
	case CK_LPORT:
	case CK_RPORT:
		if (!is_inet(s))
			break;
		obuf_u64(b, key == CK_LPORT ? s->inet.sport : s->inet.dport);
		return;
	case CK_LADDR: put_addr(b, s, s->inet.src); return;
	case CK_RADDR: put_addr(b, s, s->inet.dst); return;
	default: break;
	}
	if (key == CK_CGROUP && cg && !path)
		return;
	obuf_puts(b, str && *str ? str : "-");
}

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001b3ULL;
	return h ? h : 1;
}

static int grow(struct count *c)
{
	size_t ncap = c->cap * 2;
	struct group *nt = calloc(ncap, sizeof(*nt));

	if (!nt)
		return -ENOMEM;
	for (size_t i = 0; i < c->cap; i++) {
		size_t j;

		if (!c->tab[i].key)
			continue;
		for (j = c->tab[i].hash & (ncap - 1); nt[j].key; j = (j + 1) & (ncap - 1))
			;
		nt[j] = c->tab[i];
	}
	free(c->tab);
	c->tab = nt;
	c->cap = ncap;
	return 0;
}

int count_sock(struct count *c, const struct sdiag_sock *s, const char *netns)
{
	struct obuf *b = &c->kb;
	const char *buf;
	uint64_t h;
	size_t i;

	b->len = 0;
	for (size_t k = 0; k < c->k.n; k++) {
		if (k)
			obuf_putc(b, SEP);
		ckeys_put(c->ck, b, c->k.k[k], s, netns ? netns : "-");
	}
	if (b->err)
		return b->err;
	buf = b->p;
	h = hash_bytes(buf, b->len);
	for (i = h & (c->cap - 1); c->tab[i].key; i = (i + 1) & (c->cap - 1))
		if (c->tab[i].hash == h && !strncmp(c->tab[i].key, buf, b->len) &&
		    !c->tab[i].key[b->len]) {
			c->tab[i].n++;
			return 0;
		}
	c->tab[i].key = strndup(buf, b->len);
	if (!c->tab[i].key)
		return -ENOMEM;
	c->tab[i].hash = h;
	c->tab[i].n = 1;
	if (++c->used * 2 > c->cap)
		return grow(c);
	return 0;
}

static int cmp_group(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(x->key, y->key);
}

/* The k-th value of a group's key: start and length. */
static const char *field(const char *key, size_t k, size_t *len)
{
	while (k--)
		key = strchr(key, SEP) + 1;
	*len = strcspn(key, "\x1f");
	return key;
}

static void json_group(struct count *c, struct obuf *b, const struct group *g,
		       const char *time, size_t time_len)
{
	obuf_putc(b, '{');
	if (time_len) {
		obuf_puts(b, "\"time\":\"");
		obuf_put(b, time, time_len);
		obuf_puts(b, "\",");
	}
	for (size_t k = 0; k < c->k.n; k++) {
		size_t len;
		const char *v = field(g->key, k, &len);

		obuf_putc(b, '"');
		obuf_puts(b, keys[c->k.k[k]].name);
		obuf_puts(b, "\":");
		if (len == 1 && v[0] == '-')
			obuf_puts(b, "null");
		else if (keys[c->k.k[k]].number)
			obuf_put(b, v, len);
		else
			obuf_json_str(b, v, len);
		obuf_putc(b, ',');
	}
	obuf_puts(b, "\"count\":");
	obuf_u64(b, g->n);
	obuf_putc(b, '}');
}

static void table_rows(struct count *c, struct obuf *b, const struct group *v, size_t n,
		       const char *time, size_t time_len)
{
	size_t w[COUNT_MAX_KEYS + 1] = { 0 };

	for (size_t k = 0; k < c->k.n; k++)
		w[k] = c->o.no_header ? 0 : strlen(keys[c->k.k[k]].name);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < c->k.n; k++) {
			size_t len;

			field(v[i].key, k, &len);
			if (len > w[k])
				w[k] = len;
		}
	if (!c->o.no_header) {
		if (time_len) {
			obuf_puts(b, "TIME");
			obuf_spaces(b, time_len - 4 + 1);
		}
		for (size_t k = 0; k < c->k.n; k++) {
			for (const char *p = keys[c->k.k[k]].name; *p; p++)
				obuf_putc(b, (char)(*p - 'a' + 'A'));
			obuf_spaces(b, w[k] - strlen(keys[c->k.k[k]].name) + 1);
		}
		obuf_puts(b, "COUNT\n");
	}
	for (size_t i = 0; i < n; i++) {
		if (time_len) {
			obuf_put(b, time, time_len);
			obuf_putc(b, ' ');
		}
		for (size_t k = 0; k < c->k.n; k++) {
			size_t len;
			const char *f = field(v[i].key, k, &len);

			obuf_text_bytes(b, f, len);
			obuf_spaces(b, w[k] - len + 1);
		}
		obuf_u64(b, v[i].n);
		obuf_putc(b, '\n');
		if (b->len > b->cap / 2 && obuf_flush(b) < 0)
			return;
	}
}

int count_finish(struct count *c)
{
	struct group *v = NULL;
	char time[48];
	size_t time_len = 0;
	struct obuf b;
	size_t n = 0;
	int r;

	r = obuf_init(&b, 1 << 16, c->o.fd);
	if (r < 0)
		return r;
	v = malloc((c->used ? c->used : 1) * sizeof(*v));
	if (!v) {
		obuf_fini(&b);
		return -ENOMEM;
	}
	for (size_t i = 0; i < c->cap; i++)
		if (c->tab[i].key)
			v[n++] = c->tab[i];
	qsort(v, n, sizeof(*v), cmp_group);
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
	free(v);
	return r;
}
