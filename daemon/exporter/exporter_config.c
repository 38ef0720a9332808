// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The exporter's configuration file: the guard.conf syntax (conf.c), keys in
 * sockdiag(8), EXPORTER. Validated whole at load: the first error is
 * reported with its line and nothing of the file is used.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "daemon/common/conf.h"
#include "daemon/exporter/exporter.h"
#include "daemon/metrics/http.h"

void exp_config_init(struct exp_config *c)
{
	memset(c, 0, sizeof(*c));
	c->tables = SDIAG_TABLES_ALL;
	c->tcp_info = true;
	c->listeners = true;
	c->max_listeners = 1000;
	c->max_series = 500;
	c->max_pods = 1000;
	push_config_init(&c->push);
}

void exp_config_fini(struct exp_config *c)
{
	free(c->listen);
	free(c->cgroup_root);
	free(c->pods_dir);
	push_config_fini(&c->push);
	memset(c, 0, sizeof(*c));
}

struct parse {
	struct exp_config *c;
	bool tables_seen;
};

static int add_port(struct conf_line *l, struct exp_config *c, const char *v)
{
	uint32_t port;

	if (conf_u32(v, 10, &port) < 0 || port == 0 || port > 65535)
		return conf_fail(l, "ports: '%s' is not a port number (1-65535)", v);
	for (size_t i = 0; i < c->n_ports; i++)
		if (c->ports[i] == port)
			return conf_fail(l, "ports: %u listed twice", port);
	if (c->n_ports == EXP_MAX_PORTS)
		return conf_fail(l, "ports: more than %d ports", EXP_MAX_PORTS);
	c->ports[c->n_ports++] = (uint16_t)port;
	return 0;
}

static int add_table(struct conf_line *l, struct exp_config *c, const char *v)
{
	uint32_t m = sdiag_table_mask_by_name(v);

	if (!m)
		return conf_fail(l, "tables: unknown table '%s'", v);
	c->tables |= m;
	return 0;
}

static int set_count(struct conf_line *l, const char *key, const char *v, uint32_t max,
		     uint32_t *out)
{
	if (conf_u32(v, 10, out) < 0 || *out == 0 || *out > max)
		return conf_fail(l, "%s: '%s' is not a number from 1 to %u", key, v, max);
	return 0;
}

static int set_string(struct conf_line *l, char **out, const char *v)
{
	char *s = strdup(v);

	(void)l;
	if (!s)
		return -ENOMEM;
	free(*out);
	*out = s;
	return 0;
}

/* no | comm | cgroup */
static int owner_key(struct conf_line *l, const char *key, const char *v,
		     enum exp_owner_key *out)
{
	if (!strcmp(v, "no"))
		*out = EXP_BY_NONE;
	else if (!strcmp(v, "comm"))
		*out = EXP_BY_COMM;
	else if (!strcmp(v, "cgroup"))
		*out = EXP_BY_CGROUP;
	else
		return conf_fail(l, "%s: '%s' is not no, comm or cgroup", key, v);
	return 0;
}

static int apply(void *ctx, struct conf_line *l, const char *key, char *value)
{
	struct parse *p = ctx;
	struct exp_config *c = p->c;
	int (*add)(struct conf_line *, struct exp_config *, const char *) = NULL;
	char *save = NULL, *tok;
	int r;

	if (!strcmp(key, "tcp-info"))
		return conf_bool(l, key, value, &c->tcp_info);
	if (!strcmp(key, "listeners"))
		return conf_bool(l, key, value, &c->listeners);
	if (!strcmp(key, "group-by-cgroup"))
		return conf_bool(l, key, value, &c->by_cgroup);
	if (!strcmp(key, "group-by-comm"))
		return conf_bool(l, key, value, &c->by_comm);
	if (!strcmp(key, "ephemeral-ports"))
		return conf_bool(l, key, value, &c->ephemeral);
	if (!strcmp(key, "udp-drops"))
		return conf_bool(l, key, value, &c->udp_drops);
	if (!strcmp(key, "life"))
		return conf_bool(l, key, value, &c->life);
	if (!strcmp(key, "destinations"))
		return owner_key(l, key, value, &c->destinations);
	if (!strcmp(key, "life-by"))
		return owner_key(l, key, value, &c->life_by);
	if (!strcmp(key, "max-listeners"))
		return set_count(l, key, value, 1000000, &c->max_listeners);
	if (!strcmp(key, "max-series"))
		return set_count(l, key, value, 100000, &c->max_series);
	if (!strcmp(key, "pod-labels"))
		return conf_bool(l, key, value, &c->pod_labels);
	if (!strcmp(key, "max-pods"))
		return set_count(l, key, value, 100000, &c->max_pods);
	if (!strcmp(key, "pods-dir")) {
		if (value[0] != '/')
			return conf_fail(l, "pods-dir: '%s' is not an absolute path", value);
		return set_string(l, &c->pods_dir, value);
	}
	if (!strcmp(key, "listen")) {
		struct sockaddr_storage ss;
		char why[HTTP_LISTEN_ERRLEN + sizeof(HTTP_LISTEN_FORMS)];
		socklen_t sl;

		if (http_parse_listen(value, &ss, &sl, why, HTTP_LISTEN_ERRLEN) < 0) {
			strcat(why, " " HTTP_LISTEN_FORMS);
			return conf_fail_why(l, key, value, why);
		}
		return set_string(l, &c->listen, value);
	}
	if (!strcmp(key, "cgroup-root")) {
		struct stat st;

		if (value[0] != '/' || stat(value, &st) < 0 || !S_ISDIR(st.st_mode))
			return conf_fail(l, "cgroup-root: '%s' is not a directory", value);
		return set_string(l, &c->cgroup_root, value);
	}
	if (!strcmp(key, "ports")) {
		add = add_port;
	} else if (!strcmp(key, "tables")) {
		/* The file says which, not "these too"; later lines add up. */
		if (!p->tables_seen)
			c->tables = 0;
		p->tables_seen = true;
		add = add_table;
	} else {
		r = push_config_key(&c->push, l, key, value);
		return r <= 0 ? r : conf_fail(l, "unknown key '%s'", key);
	}
	for (tok = strtok_r(value, " \t,", &save); tok; tok = strtok_r(NULL, " \t,", &save)) {
		r = add(l, c, tok);
		if (r < 0)
			return r;
	}
	return 0;
}

int exp_config_parse(struct exp_config *c, const char *text, char *err, size_t errlen)
{
	struct parse p = { .c = c };
	int r;

	exp_config_init(c);
	r = conf_parse(text, apply, &p, err, errlen);
	if (r < 0) {
		exp_config_fini(c);
		exp_config_init(c);
	}
	return r;
}

int exp_config_load(struct exp_config *c, const char *path, char *err, size_t errlen)
{
	char *text = NULL;
	int r;

	exp_config_init(c);
	r = conf_read_file(path, &text, err, errlen);
	if (r < 0)
		return r;
	r = exp_config_parse(c, text, err, errlen);
	free(text);
	return r;
}
