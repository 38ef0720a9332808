/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The guard's configuration file: "key = value" lines, '#' comments, keys
 * that take lists may repeat (values add up). See sockdiag-guard.conf(5).
 * Everything is validated at load; the first error is reported with its line
 * number and nothing of the file is used.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "daemon/common/conf.h"
#include "daemon/guard/core/core.h"

void guard_config_init(struct guard_config *c)
{
	memset(c, 0, sizeof(*c));
	c->tcp_states = SDIAG_STATE_BIT(SDIAG_SS_ESTABLISHED) | SDIAG_STATE_BIT(SDIAG_SS_SYN_SENT) |
			SDIAG_STATE_BIT(SDIAG_SS_SYN_RECV);
	c->udp_connected = true;
	c->exempt_loopback = true;
	guard_options_init(c);
}

static void cgroups_free(struct guard_cgroup *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].spec);
		free(v[i].ids);
	}
	free(v);
}

static int collect_id(const char *path, uint64_t id, void *userdata)
{
	struct guard_cgroup *g = userdata;
	uint64_t *v = realloc(g->ids, (g->n + 1) * sizeof(*v));

	(void)path;
	if (!v)
		return -ENOMEM;
	v[g->n++] = id;
	g->ids = v;
	return 0;
}

static int cmp_id(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The ids g stands for now (none when it does not exist: *ret_missing).
 * Returns 1 when they changed, 0 when not, or -ENOMEM. */
static int resolve_one(struct guard_cgroup *g, bool *ret_missing)
{
	struct guard_cgroup now = { .spec = g->spec, .unit = g->unit };
	bool same;
	int r;

	r = sdiag_cgroup_walk(g->spec, g->unit, collect_id, &now);
	if (r == -ENOMEM) {
		free(now.ids);
		return r;
	}
	*ret_missing = r < 0; /* no such cgroup, a malformed name, no cgroup2 */
	if (r < 0)
		now.n = 0;
	if (now.n)
		qsort(now.ids, now.n, sizeof(*now.ids), cmp_id);
	same = now.n == g->n && (!now.n || !memcmp(now.ids, g->ids, now.n * sizeof(*now.ids)));
	free(g->ids);
	g->ids = now.ids;
	g->n = now.n;
	return !same;
}

int guard_config_resolve(struct guard_config *c)
{
	int changed = 0, r;
	bool missing;

	for (size_t i = 0; i < c->n_exempt_cgroups + c->n_only_cgroups; i++) {
		r = resolve_one(i < c->n_exempt_cgroups ? &c->exempt_cgroups[i] :
							  &c->only_cgroups[i - c->n_exempt_cgroups],
				&missing);
		if (r == -ENOMEM)
			return r;
		changed += r == 1;
	}
	return changed;
}

void guard_config_fini(struct guard_config *c)
{
	free(c->exempt_uids);
	cgroups_free(c->exempt_cgroups, c->n_exempt_cgroups);
	cgroups_free(c->only_cgroups, c->n_only_cgroups);
	free(c->exempt_marks);
	free(c->exempt_dsts);
	guard_options_fini(c);
	memset(c, 0, sizeof(*c));
}

struct parse {
	struct guard_config *c;
	const char *key;	/* the key being read */
	struct conf_line *l;	/* the line being read, for errors */
	bool states_seen;	/* the first tcp-states line replaces the defaults */
};

static void *grow(void *v, size_t n, size_t size)
{
	/* Lists are short: grow one element at a time. */
	return realloc(v, (n + 1) * size);
}

/* base 0 takes 0x hex (marks); uids are decimal, so "010" is 10, not 8. */
static int parse_u32(const char *s, int base, uint32_t *out)
{
	return conf_u32(s, base, out);
}

static int add_states(struct parse *p, const char *v)
{
	static const struct {
		const char *name;
		enum sdiag_state s;
	} names[] = {
		{ "established", SDIAG_SS_ESTABLISHED }, { "syn-sent", SDIAG_SS_SYN_SENT },
		{ "syn-recv", SDIAG_SS_SYN_RECV },	 { "fin-wait-1", SDIAG_SS_FIN_WAIT1 },
		{ "fin-wait-2", SDIAG_SS_FIN_WAIT2 },	 { "close-wait", SDIAG_SS_CLOSE_WAIT },
		{ "last-ack", SDIAG_SS_LAST_ACK },	 { "closing", SDIAG_SS_CLOSING },
		{ "time-wait", SDIAG_SS_TIME_WAIT },	 { "listening", SDIAG_SS_LISTEN },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(v, names[i].name)) {
			p->c->tcp_states |= SDIAG_STATE_BIT(names[i].s);
			return 0;
		}
	return conf_fail(p->l, "tcp-states: unknown state '%s'", v);
}

static int add_uid(struct parse *p, const char *v)
{
	struct guard_config *c = p->c;
	struct guard_range r;
	char lo[32], *dash;

	/* A longer token is no uid range; copying it cut short could make one. */
	if (snprintf(lo, sizeof(lo), "%s", v) >= (int)sizeof(lo))
		return conf_fail(p->l, "exempt-uid: '%s' is not a uid or uid range (A-B)", v);
	dash = strchr(lo, '-');
	if (dash)
		*dash = '\0';
	if (parse_u32(lo, 10, &r.lo) < 0 ||
	    (dash ? parse_u32(dash + 1, 10, &r.hi) : (r.hi = r.lo, 0)) < 0)
		return conf_fail(p->l, "exempt-uid: '%s' is not a uid or uid range (A-B)", v);
	if (r.hi < r.lo)
		return conf_fail(p->l, "exempt-uid: empty range '%s'", v);
	c->exempt_uids = grow(c->exempt_uids, c->n_exempt_uids, sizeof(r));
	if (!c->exempt_uids)
		return -ENOMEM;
	c->exempt_uids[c->n_exempt_uids++] = r;
	return 0;
}

/* exempt-cgroup, only-cgroup: "/PATH", a subtree, or a unit name; exempt-unit,
 * only-unit: a unit name. It must exist now (a typo is caught at load). */
static int add_cgroup(struct parse *p, const char *v)
{
	struct guard_config *c = p->c;
	bool only = !strncmp(p->key, "only-", 5), unit = !!strstr(p->key, "-unit");
	struct guard_cgroup **set = only ? &c->only_cgroups : &c->exempt_cgroups;
	size_t *n = only ? &c->n_only_cgroups : &c->n_exempt_cgroups;
	struct guard_cgroup g = { 0 };
	bool missing = false;
	int r;

	if (v[0] != '/')
		unit = true; /* a unit name wherever a cgroup is accepted */
	else if (unit)
		return conf_fail(p->l, "%s: '%s' is a path, not a unit name (use %s-cgroup)",
				 p->key, v, only ? "only" : "exempt");
	g.spec = strdup(v);
	g.unit = unit;
	if (!g.spec)
		return -ENOMEM;
	r = resolve_one(&g, &missing);
	if (r < 0 || missing) {
		free(g.spec);
		free(g.ids);
		if (r == -ENOMEM)
			return r;
		return conf_fail(p->l, unit ? "%s: no cgroup named '%s' (unit)" :
					      "%s: no cgroup '%s' under the cgroup2 mount",
				 p->key, v);
	}
	*set = grow(*set, *n, sizeof(g));
	if (!*set) {
		free(g.spec);
		free(g.ids);
		return -ENOMEM;
	}
	(*set)[(*n)++] = g;
	return 0;
}

static int add_mark(struct parse *p, const char *v)
{
	struct guard_config *c = p->c;
	uint32_t mark, mask = UINT32_MAX;
	char buf[64], *slash;

	if (snprintf(buf, sizeof(buf), "%s", v) >= (int)sizeof(buf))
		return conf_fail(p->l, "exempt-mark: '%s' is not MARK or MARK/MASK", v);
	slash = strchr(buf, '/');
	if (slash)
		*slash = '\0';
	if (parse_u32(buf, 0, &mark) < 0 || (slash && parse_u32(slash + 1, 0, &mask) < 0))
		return conf_fail(p->l, "exempt-mark: '%s' is not MARK or MARK/MASK", v);
	c->exempt_marks = grow(c->exempt_marks, c->n_exempt_marks, sizeof(*c->exempt_marks));
	if (!c->exempt_marks)
		return -ENOMEM;
	c->exempt_marks[c->n_exempt_marks].mark = mark & mask;
	c->exempt_marks[c->n_exempt_marks].mask = mask;
	c->n_exempt_marks++;
	return 0;
}

static int add_dst(struct parse *p, const char *v)
{
	struct guard_config *c = p->c;
	struct guard_prefix pf = { 0 };
	char buf[128], *slash;
	uint32_t len;
	unsigned max;

	if (snprintf(buf, sizeof(buf), "%s", v) >= (int)sizeof(buf))
		return conf_fail(p->l, "exempt-dst: '%s' is not an IPv4 or IPv6 address", v);
	slash = strchr(buf, '/');
	if (slash)
		*slash = '\0';
	if (inet_pton(AF_INET, buf, pf.addr) == 1)
		pf.family = AF_INET;
	else if (inet_pton(AF_INET6, buf, pf.addr) == 1)
		pf.family = AF_INET6;
	else
		return conf_fail(p->l, "exempt-dst: '%s' is not an IPv4 or IPv6 address", buf);
	max = pf.family == AF_INET ? 32 : 128;
	len = max;
	if (slash && (parse_u32(slash + 1, 10, &len) < 0 || len > max))
		return conf_fail(p->l, "exempt-dst: bad prefix length in '%s' (0-%u)", v, max);
	pf.len = (uint8_t)len;
	c->exempt_dsts = grow(c->exempt_dsts, c->n_exempt_dsts, sizeof(pf));
	if (!c->exempt_dsts)
		return -ENOMEM;
	c->exempt_dsts[c->n_exempt_dsts++] = pf;
	return 0;
}

/* Apply one "key = value" line; list keys take several space-separated values. */
static int apply(void *ctx, struct conf_line *l, const char *key, char *value)
{
	struct parse *p = ctx;
	int (*add)(struct parse *, const char *) = NULL;
	char *save = NULL, *tok;
	int r;

	p->l = l;
	p->key = key;
	if (!strcmp(key, "udp-connected"))
		return conf_bool(p->l, key, value, &p->c->udp_connected);
	if (!strcmp(key, "exempt-loopback"))
		return conf_bool(p->l, key, value, &p->c->exempt_loopback);
	if (!strcmp(key, "dry-run"))
		return conf_bool(p->l, key, value, &p->c->dry_run);
	if (!strcmp(key, "tcp-states")) {
		/* The file says which, not "these too"; later lines add up. */
		if (!p->states_seen)
			p->c->tcp_states = 0;
		p->states_seen = true;
		add = add_states;
	} else if (!strcmp(key, "exempt-uid")) {
		add = add_uid;
	} else if (!strcmp(key, "exempt-cgroup") || !strcmp(key, "exempt-unit") ||
		   !strcmp(key, "only-cgroup") || !strcmp(key, "only-unit")) {
		add = add_cgroup;
	} else if (!strcmp(key, "exempt-mark")) {
		add = add_mark;
	} else if (!strcmp(key, "exempt-dst")) {
		add = add_dst;
	} else {
		/* grace, on-route-change, reap...: options.c */
		r = guard_options_apply(p->c, p->l, key, value);
		return r == 1 ? conf_fail(p->l, "unknown key '%s'", key) : r;
	}
	for (tok = strtok_r(value, " \t,", &save); tok; tok = strtok_r(NULL, " \t,", &save)) {
		r = add(p, tok);
		if (r < 0)
			return r;
	}
	return 0;
}

int guard_config_parse(struct guard_config *c, const char *text, char *err, size_t errlen)
{
	return guard_config_parse_buf(c, text, strlen(text), err, errlen);
}

int guard_config_parse_buf(struct guard_config *c, const char *text, size_t len, char *err,
			   size_t errlen)
{
	struct parse p = { .c = c };
	int r;

	guard_config_init(c);
	r = conf_parse_buf(text, len, apply, &p, err, errlen);
	if (r == 0 && !c->tcp_states && !c->udp_connected) {
		snprintf(err, errlen, "configuration destroys nothing: no tcp-states and "
				      "udp-connected = no");
		r = -EINVAL;
	}
	if (r < 0) {
		guard_config_fini(c);
		guard_config_init(c);
	}
	return r;
}

int guard_config_load(struct guard_config *c, const char *path, char *err, size_t errlen)
{
	char *text = NULL;
	int r;

	guard_config_init(c);
	r = conf_read_file(path, &text, err, errlen);
	if (r < 0)
		return r;
	r = guard_config_parse(c, text, err, errlen);
	free(text);
	return r;
}
