// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The metrics endpoint over libmicrohttpd (see http.h).
 *
 * The library is loaded (dlopen) when a server starts, not with the program:
 * linked, it pulls in GnuTLS and seven more libraries, whose loading cost
 * every command (`sockdiag list` of an empty namespace: 9.5 ms, 4.8 MiB, of
 * which 4.3 ms and 3 MiB were theirs; bench/RESULTS.md). Each server holds
 * its own handle and function table: no globals.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <microhttpd.h>

#include "daemon/common/http.h"
#include "util/textfile.h"

#ifndef SOCKDIAG_MHD_SONAME
#error "SOCKDIAG_MHD_SONAME: libmicrohttpd's soname, found by meson"
#endif

/* A request line and headers beyond this get 431 (or 414): Prometheus sends
 * about 400 bytes. It is also each connection's whole memory pool. */
#define CONN_MEMORY (16 * 1024)
/* A client that sends nothing for this long is dropped. */
#define CONN_TIMEOUT_S 10
/* Connections at once (each a thread); later ones wait in the listen queue. */
#define CONN_LIMIT 64

/* The libmicrohttpd functions used, resolved by name from SOCKDIAG_MHD_SONAME. */
struct mhd {
	void *dl;
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
};

struct http_server {
	struct MHD_Daemon *d;
	struct mhd mhd;
	struct http_opts o;
};

static int mhd_load(struct mhd *m, char *err, size_t errlen)
{
	const struct {
		const char *name;
		void **slot;
	} fn[] = {
		{ "MHD_start_daemon", (void **)&m->start_daemon },
		{ "MHD_stop_daemon", (void **)&m->stop_daemon },
		{ "MHD_create_response_from_buffer", (void **)&m->create_response_from_buffer },
		{ "MHD_add_response_header", (void **)&m->add_response_header },
		{ "MHD_queue_response", (void **)&m->queue_response },
		{ "MHD_destroy_response", (void **)&m->destroy_response },
		{ "MHD_lookup_connection_value", (void **)&m->lookup_connection_value },
	};

	m->dl = dlopen(SOCKDIAG_MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!m->dl) {
		snprintf(err, errlen, "cannot load " SOCKDIAG_MHD_SONAME " (libmicrohttpd): %s",
			 dlerror());
		return -ENOENT;
	}
	for (size_t i = 0; i < sizeof(fn) / sizeof(fn[0]); i++) {
		*fn[i].slot = dlsym(m->dl, fn[i].name);
		if (!*fn[i].slot) {
			snprintf(err, errlen, SOCKDIAG_MHD_SONAME " has no %s", fn[i].name);
			dlclose(m->dl);
			m->dl = NULL;
			return -ENOENT;
		}
	}
	return 0;
}

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

/* A host name: the first IPv4 address getaddrinfo() gives, else the first
 * IPv6 one (one listening socket; "localhost" is then 127.0.0.1, where
 * scrape configurations point). */
static int resolve(const char *host, uint16_t port, struct sockaddr_storage *ret,
		   socklen_t *ret_len, char *err, size_t errlen)
{
	const struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL, *pick = NULL;
	char q[TEXT_QUOTE_LEN];
	int r;

	r = getaddrinfo(host, NULL, &hints, &res);
	if (r) {
		snprintf(err, errlen, "cannot resolve host '%s': %s", TQ(q, host),
			 r == EAI_SYSTEM ? strerror(errno) : gai_strerror(r));
		return -EINVAL;
	}
	for (struct addrinfo *a = res; a; a = a->ai_next)
		if ((a->ai_family == AF_INET || a->ai_family == AF_INET6) &&
		    (!pick || (pick->ai_family == AF_INET6 && a->ai_family == AF_INET)))
			pick = a;
	if (!pick) {
		snprintf(err, errlen, "host '%s' has no IPv4 or IPv6 address", TQ(q, host));
		freeaddrinfo(res);
		return -EINVAL;
	}
	memset(ret, 0, sizeof(*ret));
	memcpy(ret, pick->ai_addr, pick->ai_addrlen);
	*ret_len = pick->ai_addrlen;
	if (pick->ai_family == AF_INET)
		((struct sockaddr_in *)ret)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ret)->sin6_port = htons(port);
	freeaddrinfo(res);
	return 0;
}

int http_parse_listen(const char *spec, struct sockaddr_storage *ret, socklen_t *ret_len,
		      char *err, size_t errlen)
{
	const char *colon = strrchr(spec, ':');
	char host[256], q[TEXT_QUOTE_LEN];
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
		snprintf(err, errlen, "host name longer than %zu bytes", sizeof(host) - 1);
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
	return resolve(host, port, ret, ret_len, err, errlen);
}

int http_listen_arg(const char *cmd, const char *opt, const char *arg)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	char q[TEXT_QUOTE_LEN], why[HTTP_LISTEN_ERRLEN];

	if (http_parse_listen(arg, &ss, &sl, why, sizeof(why)) == 0)
		return 0;
	fprintf(stderr, "sockdiag %s: --%s '%s': %s " HTTP_LISTEN_FORMS "\n", cmd, opt,
		TQ(q, arg), why);
	return -EINVAL;
}

static enum MHD_Result reply(const struct mhd *m, struct MHD_Connection *c, unsigned status,
			     const char *ctype, void *body, size_t len, bool owned,
			     const char *allow)
{
	struct MHD_Response *resp;
	enum MHD_Result r;

	resp = m->create_response_from_buffer(len, body,
					      owned ? MHD_RESPMEM_MUST_FREE
						    : MHD_RESPMEM_PERSISTENT);
	if (!resp) {
		if (owned)
			free(body);
		return MHD_NO;
	}
	m->add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	m->add_response_header(resp, "X-Content-Type-Options", "nosniff");
	if (allow)
		m->add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
	r = m->queue_response(c, status, resp);
	m->destroy_response(resp);
	return r;
}

static enum MHD_Result reply_text(const struct mhd *m, struct MHD_Connection *c, unsigned status,
				  const char *text, const char *allow)
{
	return reply(m, c, status, "text/plain; charset=utf-8", (void *)text, strlen(text), false,
		     allow);
}

/* Accept: application/openmetrics-text (any version, q > 0) wins. */
static bool wants_openmetrics(const struct mhd *m, struct MHD_Connection *c)
{
	const char *accept = m->lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
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

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_size, void **con_cls)
{
	static const char page_fmt[] =
		"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title></head>\n"
		"<body><h1>%s</h1>\n<p><a href=\"/metrics\">Metrics</a></p>\n"
		"<p>See sockdiag(8), METRICS.</p></body></html>\n";
	struct http_server *s = cls;
	const struct mhd *m = &s->mhd;
	bool om;
	char *body = NULL;
	size_t len = 0;
	int r;

	(void)version;
	(void)upload_data;
	(void)upload_size;
	(void)con_cls;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(m, c, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n",
				  "GET, HEAD");
	if (!strcmp(url, "/")) {
		if (asprintf(&body, page_fmt, s->o.title, s->o.title) < 0)
			return MHD_NO;
		return reply(m, c, MHD_HTTP_OK, "text/html; charset=utf-8", body, strlen(body), true,
			     NULL);
	}
	if (strcmp(url, "/metrics"))
		return reply_text(m, c, MHD_HTTP_NOT_FOUND, "not found: try /metrics\n", NULL);
	om = wants_openmetrics(m, c);
	r = s->o.metrics(s->o.ctx, om, &body, &len);
	if (r < 0) {
		char msg[128];

		snprintf(msg, sizeof(msg), "cannot collect metrics: %s\n", strerror(-r));
		body = strdup(msg);
		if (!body)
			return MHD_NO;
		return reply(m, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8", body,
			     strlen(body), true, NULL);
	}
	return reply(m, c, MHD_HTTP_OK, om ? HTTP_CT_OPENMETRICS : HTTP_CT_PROMETHEUS, body, len,
		     true, NULL);
}

/* libmicrohttpd's own messages (a client that sent garbage, ...) are not
 * the daemon's business: dropped. */
static void quiet_logger(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	(void)fmt;
	(void)ap;
}

int http_bind(const char *spec, int *ret_fd, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd, one = 1, r;

	char why[HTTP_LISTEN_ERRLEN];
	bool any;

	r = http_parse_listen(spec, &ss, &sl, why, sizeof(why));
	if (r < 0) {
		char q[TEXT_QUOTE_LEN];

		snprintf(err, errlen, "listen '%s': %s", TQ(q, spec), why);
		return r;
	}
	/* :PORT is every address: [::] taking IPv4 too, or 0.0.0.0 on a
	 * kernel without IPv6. A named IPv6 address is that address only. */
	any = spec[0] == ':';
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 && any && errno == EAFNOSUPPORT) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		uint16_t port = ((struct sockaddr_in6 *)&ss)->sin6_port;

		memset(&ss, 0, sizeof(ss));
		s4->sin_family = AF_INET;
		s4->sin_port = port;
		s4->sin_addr.s_addr = htonl(INADDR_ANY);
		sl = sizeof(*s4);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	}
	if (ss.ss_family == AF_INET6 && any)
		one = 0;
	if (fd < 0 ||
	    (ss.ss_family == AF_INET6 &&
	     setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0) ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &(int){ 1 }, sizeof(int)) < 0 ||
	    bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, 64) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot listen on %s: %s", spec, strerror(-r));
		if (fd >= 0)
			close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

int http_start(struct http_server **ret, const struct http_opts *o, char *err, size_t errlen)
{
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			 MHD_USE_ERROR_LOG;
	struct http_server *s = NULL;
	sigset_t all, old;
	int fd = o->fd, r;

	if (fd < 0) {
		r = http_bind(o->listen, &fd, err, errlen);
		if (r < 0)
			return r;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		close(fd);
		return -ENOMEM;
	}
	s->o = *o;
	r = mhd_load(&s->mhd, err, errlen);
	if (r < 0) {
		close(fd);
		free(s);
		return r;
	}
	/* The daemons read their signals from a signalfd in the main thread:
	 * none may land in the library's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	s->d = s->mhd.start_daemon(flags, 0, NULL, NULL, on_request, s,
				MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONN_TIMEOUT_S,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONN_LIMIT,
				MHD_OPTION_EXTERNAL_LOGGER, quiet_logger, NULL,
				MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!s->d) {
		snprintf(err, errlen, "cannot serve HTTP on %s", o->listen);
		close(fd);
		dlclose(s->mhd.dl);
		free(s);
		return -EIO;
	}
	*ret = s;
	return 0;
}

void http_stop(struct http_server *s)
{
	if (!s)
		return;
	s->mhd.stop_daemon(s->d);	/* closes the listening socket */
	dlclose(s->mhd.dl);
	free(s);
}
