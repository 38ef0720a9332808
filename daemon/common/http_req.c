// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The metrics endpoint's decisions, apart from the HTTP library (see http.h):
 * ADDR:PORT, which page a request gets, which format its Accept asks for.
 * Pure functions of their arguments: the unit tests and fuzzers call them
 * without libmicrohttpd.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/common/http.h"
#include "util/textfile.h"

int http_parse_listen(const char *spec, struct sockaddr_storage *ret, socklen_t *ret_len)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon, *h = host;
	unsigned long port;
	size_t hlen;
	char *end;

	colon = strrchr(spec, ':');
	if (!colon || colon == spec)
		return -EINVAL;
	hlen = (size_t)(colon - spec);
	if (hlen >= sizeof(host))
		return -EINVAL;
	memcpy(host, spec, hlen);
	host[hlen] = '\0';
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || port == 0 || port > 65535 || colon[1] == '-' ||
	    colon[1] == '+')
		return -EINVAL;
	memset(ret, 0, sizeof(*ret));
	if (host[0] == '[' && hlen > 2 && host[hlen - 1] == ']') {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ret;

		host[hlen - 1] = '\0';
		h = host + 1;
		if (inet_pton(AF_INET6, h, &s6->sin6_addr) != 1)
			return -EINVAL;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		*ret_len = sizeof(*s6);
		return 0;
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ret;

		if (inet_pton(AF_INET, h, &s4->sin_addr) != 1)
			return -EINVAL;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		*ret_len = sizeof(*s4);
	}
	return 0;
}

int http_listen_arg(const char *cmd, const char *opt, const char *arg)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	char q[TEXT_QUOTE_LEN];

	if (http_parse_listen(arg, &ss, &sl) == 0)
		return 0;
	fprintf(stderr, "sockdiag %s: --%s '%s': expected ADDR:PORT or [ADDR6]:PORT\n", cmd, opt,
		TQ(q, arg));
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
