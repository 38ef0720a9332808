/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for what the exporter (and guard --metrics) reads from
 * outside: its configuration file (exporter_config.c, then rendered over an
 * empty pass), the HTTP request decision (http_req.c: method and URL -> page,
 * Accept -> format; the HTTP library is not involved), ADDR:PORT
 * (--listen, --metrics, `listen =`) and the escaping of label values
 * (expo.c).
 *
 * Input: one selector byte, then the bytes of that input:
 *   0  a configuration file; when accepted it must render, in both formats;
 *   1  METHOD NUL URL NUL ACCEPT (an absent part is NULL for Accept);
 *   2  ADDR:PORT; when accepted, the address printed back and parsed again
 *      must give the same socket address;
 *   3  a label value: its escaped form must be valid UTF-8 and use only the
 *      escapes \\, \" and \n, with no raw newline or quote.
 *
 * Seeds: .ci/fuzz seed() (the example configurations, requests of
 * Prometheus and curl, listen addresses, names from the tests).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/exporter/exporter.h"
#include "daemon/metrics/expo.h"
#include "daemon/metrics/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void config(const char *text)
{
	struct exp_config c;
	struct exp_agg a = { 0 };
	struct exp_counters k = { 0 };
	char err[256], *body;
	size_t len;

	exp_config_init(&c);
	if (exp_config_parse(&c, text, err, sizeof(err)) == 0) {
		if (c.n_ports > EXP_MAX_PORTS || (c.listen && !*c.listen))
			__builtin_trap();
		a.n_ports = c.n_ports;
		for (int om = 0; om < 2; om++) {
			if (exp_render(&c, &a, &k, NULL, om, &body, &len) < 0)
				continue;
			if (len != strlen(body))
				__builtin_trap();	/* no NUL inside the exposition */
			free(body);
		}
	} else if (!err[0] || strchr(err, '\n')) {
		__builtin_trap();	/* one line, always */
	}
	exp_config_fini(&c);
}

static void request(const char *in, size_t size)
{
	const char *method = in, *url = "", *accept = NULL;
	size_t l = strlen(method);
	enum http_page p;

	if (l < size) {
		url = in + l + 1;
		l += strlen(url) + 1;
		if (l < size)
			accept = in + l + 1;
	}
	p = http_route(method, url);
	if ((unsigned)p > HTTP_PAGE_NOT_FOUND)
		__builtin_trap();
	if ((p == HTTP_PAGE_BAD_METHOD) != (strcmp(method, "GET") && strcmp(method, "HEAD")))
		__builtin_trap();
	if (p == HTTP_PAGE_METRICS && strcmp(url, "/metrics"))
		__builtin_trap();
	if ((p == HTTP_PAGE_HEALTHZ && strcmp(url, "/healthz")) ||
	    (p == HTTP_PAGE_READYZ && strcmp(url, "/readyz")))
		__builtin_trap();
	if (http_wants_openmetrics(accept) && !strstr(accept, "application/openmetrics-text"))
		__builtin_trap();
}

static void listen_addr(const char *spec)
{
	struct sockaddr_storage ss, again;
	socklen_t sl, sl2;
	char host[INET6_ADDRSTRLEN], back[INET6_ADDRSTRLEN + 16], why[HTTP_LISTEN_ERRLEN];
	int r;

	r = http_parse_listen(spec, &ss, &sl, why, sizeof(why));
	if (r < 0) {
		if (!why[0] || strlen(why) >= sizeof(why))
			__builtin_trap();
		return;
	}
	if (r == HTTP_LISTEN_NAME)
		return;
	if (ss.ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ss;

		if (sl != sizeof(*s4) || !s4->sin_port)
			__builtin_trap();
		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
		snprintf(back, sizeof(back), "%s:%u", host, ntohs(s4->sin_port));
	} else if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ss;

		if (sl != sizeof(*s6) || !s6->sin6_port)
			__builtin_trap();
		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		snprintf(back, sizeof(back), "[%s]:%u", host, ntohs(s6->sin6_port));
	} else {
		__builtin_trap();
	}
	if (http_parse_listen(back, &again, &sl2, why, sizeof(why)) != 0 || sl2 != sl ||
	    memcmp(&ss, &again, sl))
		__builtin_trap();
}

/* Length of the UTF-8 sequence at p (n bytes left), 0 if invalid. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	size_t len = p[0] < 0x80 ? 1 : p[0] >= 0xc2 && p[0] < 0xe0 ? 2 :
		     p[0] >= 0xe0 && p[0] < 0xf0 ? 3 : p[0] >= 0xf0 && p[0] < 0xf5 ? 4 : 0;
	uint32_t cp;

	if (!len || len > n)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if (len == 3) {
		cp = (uint32_t)(p[0] & 0x0f) << 12 | (uint32_t)(p[1] & 0x3f) << 6;
		if (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
	} else if (len == 4) {
		cp = (uint32_t)(p[0] & 0x07) << 18 | (uint32_t)(p[1] & 0x3f) << 12;
		if (cp < 0x10000 || cp > 0x10ffff)
			return 0;
	}
	return len;
}

static void label_value(const char *v)
{
	struct expo o;
	char *body;
	size_t len;

	if (expo_open(&o, false) < 0)
		return;
	expo_value(&o, v);
	if (expo_close(&o, &body, &len) < 0)
		return;
	for (size_t i = 0; i < len;) {
		const unsigned char *p = (const unsigned char *)body + i;
		size_t l = utf8_len(p, len - i);

		if (!l || p[0] == '\n' || p[0] == '"' || p[0] == '\0')
			__builtin_trap();
		if (p[0] == '\\') {
			if (i + 1 >= len || (p[1] != '\\' && p[1] != '"' && p[1] != 'n'))
				__builtin_trap();
			l = 2;
		}
		i += l;
	}
	free(body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in;

	if (size < 1 || size > 65536)
		return 0;
	in = malloc(size);
	if (!in)
		return 0;
	memcpy(in, data + 1, size - 1);
	in[size - 1] = '\0';
	switch (data[0] & 3) {
	case 0:
		config(in);
		break;
	case 1:
		request(in, size - 1);
		break;
	case 2:
		listen_addr(in);
		break;
	case 3:
		label_value(in);
		break;
	}
	free(in);
	return 0;
}
