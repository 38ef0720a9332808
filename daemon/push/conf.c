// SPDX-License-Identifier: GPL-2.0-or-later
/* The push keys of exporter.conf (push.h; sockdiag(8), PUSH). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/common/conf.h"
#include "daemon/push/push.h"

void push_config_init(struct push_config *c)
{
	memset(c, 0, sizeof(*c));
	c->interval_ms = 60000;
	c->timeout_ms = 10000;
	c->queue = 5;
}

void push_config_fini(struct push_config *c)
{
	free(c->rw_url);
	free(c->otlp_url);
	for (size_t i = 0; i < c->n_headers; i++)
		free(c->headers[i]);
	memset(c, 0, sizeof(*c));
}

bool push_configured(const struct push_config *c)
{
	return c->rw_url || c->otlp_url;
}

const char *push_url_check(const char *url)
{
	const char *host;

	if (!strncmp(url, "http://", 7))
		host = url + 7;
	else if (!strncmp(url, "https://", 8))
		host = url + 8;
	else
		return "not an http:// or https:// URL";
	if (!*host || *host == '/')
		return "no host";
	for (const char *p = url; *p; p++)
		if ((unsigned char)*p <= 0x20 || *p == 0x7f)
			return "a space or control character";
	return NULL;
}

int push_config_url(struct push_config *c, bool otlp, const char *url)
{
	const char *host = strstr(url, "://") + 3, *path = strchr(host, '/');
	char **slot = otlp ? &c->otlp_url : &c->rw_url;
	size_t n = strlen(url);
	char *s;

	/* OTLP's base URL (OTEL_EXPORTER_OTLP_ENDPOINT's rule): a URL without a
	 * path gets the metrics path. */
	if (otlp && (!path || !strcmp(path, "/"))) {
		if (path)
			n--;
		s = malloc(n + sizeof("/v1/metrics"));
		if (s) {
			memcpy(s, url, n);
			strcpy(s + n, "/v1/metrics");
		}
	} else {
		s = strdup(url);
	}
	if (!s)
		return -ENOMEM;
	free(*slot);
	*slot = s;
	return 0;
}

/* 90, 90s, 500ms, 2m: milliseconds within [min, max]. */
static int duration(const char *v, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long long n = strtoull(v, &end, 10), mul = 1000;

	if (end == v || *v == '-')
		return -EINVAL;
	if (!strcmp(end, "ms"))
		mul = 1;
	else if (!strcmp(end, "m"))
		mul = 60000;
	else if (*end && strcmp(end, "s"))
		return -EINVAL;
	if (n > max / mul || n * mul < min)
		return -EINVAL;
	*out = (uint32_t)(n * mul);
	return 0;
}

/* "Name: value": a token, a colon, a value without control characters. */
static bool header_ok(const char *h)
{
	const char *colon = strchr(h, ':');

	if (!colon || colon == h)
		return false;
	for (const char *p = h; p < colon; p++)
		if (*p <= 0x20 || *p >= 0x7f || strchr("()<>@,;\\\"/[]?={}", *p))
			return false;
	for (const char *p = colon; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

int push_config_key(struct push_config *c, struct conf_line *l, const char *key, char *value)
{
	const char *why;
	uint32_t n;

	if (!strcmp(key, "remote-write-url") || !strcmp(key, "otlp-endpoint")) {
		why = push_url_check(value);
		if (why)
			return conf_fail_why(l, key, value, why);
		return push_config_url(c, key[0] == 'o', value);
	}
	if (!strcmp(key, "otlp-format")) {
		if (strcmp(value, "protobuf") && strcmp(value, "json"))
			return conf_fail(l, "otlp-format: '%s' is not protobuf or json", value);
		c->otlp_json = value[0] == 'j';
		return 0;
	}
	if (!strcmp(key, "otlp-compression")) {
		if (strcmp(value, "gzip") && strcmp(value, "none"))
			return conf_fail(l, "otlp-compression: '%s' is not gzip or none", value);
		c->otlp_gzip = value[0] == 'g';
		return 0;
	}
	if (!strcmp(key, "push-interval")) {
		if (duration(value, 100, 86400000, &c->interval_ms) < 0)
			return conf_fail(l, "push-interval: '%s' is not a duration from 100ms "
					    "to 24h (90, 90s, 500ms, 2m)", value);
		return 0;
	}
	if (!strcmp(key, "push-timeout")) {
		if (duration(value, 100, 600000, &c->timeout_ms) < 0)
			return conf_fail(l, "push-timeout: '%s' is not a duration from 100ms "
					    "to 10m (10, 10s, 500ms)", value);
		return 0;
	}
	if (!strcmp(key, "push-queue")) {
		if (conf_u32(value, 10, &n) < 0 || n == 0 || n > 1000)
			return conf_fail(l, "push-queue: '%s' is not a number from 1 to 1000",
					 value);
		c->queue = n;
		return 0;
	}
	if (!strcmp(key, "push-header")) {
		char *h;

		/* The value is a secret (a token): never quoted in a message. */
		if (!header_ok(value))
			return conf_fail(l, "push-header: not 'Name: value' (a header name, a "
					    "colon, no control characters)");
		if (c->n_headers == PUSH_MAX_HEADERS)
			return conf_fail(l, "push-header: more than %d headers", PUSH_MAX_HEADERS);
		h = strdup(value);
		if (!h)
			return -ENOMEM;
		c->headers[c->n_headers++] = h;
		return 0;
	}
	return 1;
}
