/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The configuration keys of the grace period, route changes, reaping, dead
 * backends and conntrack (sockdiag-guard.conf(5)), kept apart from the
 * address/exemption keys of config.c, which calls guard_options_apply()
 * for keys it does not know.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/common/conf.h"
#include "daemon/guard/core/core.h"
#include "util/textfile.h"

#define DAY_MS (24u * 3600u * 1000u)

void guard_options_init(struct guard_config *c)
{
	c->grace_ms = 0;
	c->on_route_change = false;
	c->reaps = NULL;
	c->n_reaps = 0;
	c->reap_interval_ms = 60 * 1000;
	c->reap_max = 100;
	c->backends_path = NULL;
	c->backend_interval_ms = 10 * 1000;
	c->backends_max = 65536;
	c->conntrack = false;
}

void guard_options_fini(struct guard_config *c)
{
	for (size_t i = 0; i < c->n_reaps; i++) {
		free(c->reaps[i].expr);
		sdiag_filter_free(c->reaps[i].filter);
	}
	free(c->reaps);
	c->reaps = NULL;
	c->n_reaps = 0;
	free(c->backends_path);
	c->backends_path = NULL;
}

int guard_parse_duration(const char *s, uint32_t *ret_ms)
{
	static const struct {
		const char *unit;
		uint64_t ms;
	} units[] = { { "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 } };
	unsigned long long n;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || n > DAY_MS)
		return -EINVAL;
	if (!*end) {
		if (n)
			return -EINVAL; /* a unit is required: 10 what? */
		*ret_ms = 0;
		return 0;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit)) {
			if (n * units[i].ms > DAY_MS)
				return -EINVAL;
			*ret_ms = (uint32_t)(n * units[i].ms);
			return 0;
		}
	return -EINVAL;
}

static int add_reap(struct guard_config *c, struct conf_line *l, const char *value)
{
	struct sdiag_filter_error ferr = { 0 };
	struct sdiag_filter *f = NULL;
	struct guard_reap *v;
	int r;

	r = sdiag_filter_parse(&f, value, &ferr);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		/* ferr.msg is the library's message, its quoted input already escaped
		 * (conf_fail would escape and cut it again); the excerpt is quoted here. */
		char ex[TEXT_QUOTE_LEN], q[TEXT_QUOTE_LEN];

		snprintf(ex, sizeof(ex), "%.*s", (int)(ferr.len ? ferr.len : 1), value + ferr.offset);
		text_quote(q, sizeof(q), ex);
		snprintf(l->err, l->errlen, "line %u: reap: %s (at '%s', offset %zu)", l->line,
			 ferr.msg, q, ferr.offset);
		return -EINVAL;
	}
	v = realloc(c->reaps, (c->n_reaps + 1) * sizeof(*v));
	if (!v) {
		sdiag_filter_free(f);
		return -ENOMEM;
	}
	c->reaps = v;
	v[c->n_reaps] = (struct guard_reap){ .expr = strdup(value), .filter = f, .line = l->line };
	if (!v[c->n_reaps].expr) {
		sdiag_filter_free(f);
		return -ENOMEM;
	}
	c->n_reaps++;
	return 0;
}

int guard_options_apply(struct guard_config *c, struct conf_line *l, const char *key,
			const char *value)
{
	uint32_t n;

	if (!strcmp(key, "grace")) {
		if (guard_parse_duration(value, &c->grace_ms) < 0)
			goto bad_duration;
		return 0;
	}
	if (!strcmp(key, "reap-interval")) {
		if (guard_parse_duration(value, &c->reap_interval_ms) < 0)
			goto bad_duration;
		if (c->reap_interval_ms < 1000)
			return conf_fail(l, "reap-interval: '%s' is shorter than 1s", value);
		return 0;
	}
	if (!strcmp(key, "on-route-change"))
		return conf_bool(l, key, value, &c->on_route_change);
	if (!strcmp(key, "reap-max")) {
		if (conf_u32(value, 10, &n) < 0 || n < 1 || n > 1000000)
			return conf_fail(l, "reap-max: '%s' is not a number from 1 to 1000000",
					 value);
		c->reap_max = n;
		return 0;
	}
	if (!strcmp(key, "reap"))
		return add_reap(c, l, value);
	if (!strcmp(key, "dead-backends")) {
		/* Absolute: the daemon's working directory is nobody's business. */
		if (value[0] != '/')
			return conf_fail(l, "dead-backends: '%s' is not an absolute path", value);
		free(c->backends_path);
		c->backends_path = strdup(value);
		return c->backends_path ? 0 : -ENOMEM;
	}
	if (!strcmp(key, "backend-interval")) {
		if (guard_parse_duration(value, &c->backend_interval_ms) < 0)
			goto bad_duration;
		if (c->backend_interval_ms && c->backend_interval_ms < 1000)
			return conf_fail(l, "backend-interval: '%s' is shorter than 1s (0: only when "
					 "the file changes)", value);
		return 0;
	}
	if (!strcmp(key, "dead-backends-max")) {
		if (conf_u32(value, 10, &n) < 0 || n < 1 || n > 1000000)
			return conf_fail(l, "dead-backends-max: '%s' is not a number from 1 to "
					 "1000000", value);
		c->backends_max = n;
		return 0;
	}
	if (!strcmp(key, "conntrack"))
		return conf_bool(l, key, value, &c->conntrack);
	return 1;
bad_duration:
	return conf_fail(l, "%s: '%s' is not a duration (0, 500ms, 30s, 5m, 1h; at most 24h)", key,
			 value);
}
