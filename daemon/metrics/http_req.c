// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The metrics endpoint's decisions, apart from the HTTP library (see http.h):
 * HOST:PORT, which page a request gets, which format its Accept asks for.
 * Pure functions of their arguments: the unit tests and fuzzers call them
 * without libmicrohttpd.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/metrics/http.h"
#include "util/textfile.h"

/* PORT: 1-65535, digits only. */
static int parse_port(const char *p, uint16_t *ret)
{
	unsigned long v;
	char *end;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(p, &end, 10);
	if (*end || errno || v == 0 || v > 65535)
		return -EINVAL;
	*ret = (uint16_t)v;
	return 0;
}

int http_parse_listen(const char *spec, struct sockaddr_storage *ret, socklen_t *ret_len,
		      char *err, size_t errlen)
{
	const char *colon = strrchr(spec, ':');
	char host[HTTP_HOST_MAX + 1], q[TEXT_QUOTE_LEN];
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ret;
	struct sockaddr_in *s4 = (struct sockaddr_in *)ret;
	uint16_t port;
	size_t hlen;

	if (!colon) {
		snprintf(err, errlen, "no port");
		return -EINVAL;
	}
	if (parse_port(colon + 1, &port) < 0) {
		snprintf(err, errlen, "port '%s' is not a number from 1 to 65535",
			 TQ(q, colon + 1));
		return -EINVAL;
	}
	hlen = (size_t)(colon - spec);
	if (hlen >= sizeof(host)) {
		snprintf(err, errlen, "host name longer than %d bytes", HTTP_HOST_MAX);
		return -EINVAL;
	}
	memcpy(host, spec, hlen);
	host[hlen] = '\0';
	memset(ret, 0, sizeof(*ret));
	if (!hlen) {	/* :PORT: every address, IPv6 and IPv4 (http_bind) */
		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_any;
		s6->sin6_port = htons(port);
		*ret_len = sizeof(*s6);
		return 0;
	}
	if (host[0] == '[') {
		if (hlen < 3 || host[hlen - 1] != ']') {
			snprintf(err, errlen, "'%s' is not [IPV6-ADDRESS]", TQ(q, host));
			return -EINVAL;
		}
		host[hlen - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &s6->sin6_addr) != 1) {
			snprintf(err, errlen, "'%s' is not an IPv6 address", TQ(q, host + 1));
			return -EINVAL;
		}
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		*ret_len = sizeof(*s6);
		return 0;
	}
	if (strchr(host, ':')) {
		snprintf(err, errlen, "an IPv6 address goes in brackets: [%s]:%u", TQ(q, host),
			 port);
		return -EINVAL;
	}
	if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		*ret_len = sizeof(*s4);
		return 0;
	}
	/* A name: resolved when the server binds (http_resolve_listen). */
	s4->sin_port = htons(port);
	*ret_len = 0;
	return HTTP_LISTEN_NAME;
}

int http_listen_arg(const char *cmd, const char *opt, const char *arg)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	char q[TEXT_QUOTE_LEN], why[HTTP_LISTEN_ERRLEN];

	if (http_parse_listen(arg, &ss, &sl, why, sizeof(why)) >= 0)
		return 0;
	fprintf(stderr, "sockdiag %s: --%s '%s': %s " HTTP_LISTEN_FORMS "\n", cmd, opt,
		TQ(q, arg), why);
	return -EINVAL;
}

enum http_page http_route(const char *method, const char *url)
{
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return HTTP_PAGE_BAD_METHOD;
	if (!strcmp(url, "/"))
		return HTTP_PAGE_INDEX;
	if (!strcmp(url, "/metrics"))
		return HTTP_PAGE_METRICS;
	if (!strcmp(url, "/healthz"))
		return HTTP_PAGE_HEALTHZ;
	if (!strcmp(url, "/readyz"))
		return HTTP_PAGE_READYZ;
	return HTTP_PAGE_NOT_FOUND;
}

/* Accept: application/openmetrics-text (any version, q > 0) wins. */
bool http_wants_openmetrics(const char *accept)
{
	const char *p;

	if (!accept)
		return false;
	for (p = accept; (p = strstr(p, "application/openmetrics-text")); p++) {
		const char *end = strchr(p, ','), *q = strstr(p, "q=");

		if (q && (!end || q < end) && strtod(q + 2, NULL) <= 0.0)
			continue;
		return true;
	}
	return false;
}
