/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The metrics endpoint of the daemons (sockdiag exporter, guard --metrics):
 * libmicrohttpd on one event thread (epoll), /metrics rendered by scrape
 * threads, so a slow or stalled client holds a connection slot, never a
 * thread. Its limits: HTTP_CONN_LIMIT connections (later ones wait in the
 * listen queue), HTTP_PER_ADDR_LIMIT per client address (a new one takes the
 * slot of the address's connection that has waited longest for its request),
 * a request's line and headers within HTTP_HEADER_DEADLINE_S, its
 * response taken within HTTP_SEND_DEADLINE_S, 10 s of silence at most.
 * GET/HEAD only: "/" is a short HTML page, "/healthz" and "/readyz" the
 * probes (200 or 503, a word of text), "/metrics" the exposition
 * (OpenMetrics when the client's Accept asks for application/openmetrics-text,
 * else Prometheus text 0.0.4); other paths 404, other methods 405, oversized
 * requests 431/414 (by the library).
 */
#ifndef SOCKDIAG_HTTP_H
#define SOCKDIAG_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#define HTTP_CONN_LIMIT 2048
#define HTTP_PER_ADDR_LIMIT 32
#define HTTP_HEADER_DEADLINE_S 5
#define HTTP_SEND_DEADLINE_S 60

/* Render the exposition into *ret_body (malloc'd, *ret_len bytes). Called from
 * the server's scrape threads, concurrently. Returns 0 or a negative errno (500). */
typedef int (*http_metrics_fn)(void *ctx, bool openmetrics, char **ret_body, size_t *ret_len);

struct http_opts {
	const char *listen;	/* HOST:PORT, [V6ADDR]:PORT, :PORT */
	int fd;			/* a socket from http_bind() (taken over), or -1 */
	const char *title;	/* for the HTML page */
	http_metrics_fn metrics;
	/* /healthz: 200 "ok" while healthy(ctx) (NULL: always), else 503;
	 * /readyz: 200 "ready" while ready(ctx) (NULL: always), else 503.
	 * Called from the server's threads; quick, never blocking. */
	bool (*healthy)(void *ctx);
	bool (*ready)(void *ctx);
	void *ctx;
};

struct http_server;

/* Parse HOST:PORT (PORT 1-65535): HOST an IPv4 address, an IPv6 address in
 * brackets, empty (every address: [::] with IPv4 too; http_bind()), or a name.
 * Pure: returns 0 with the address, HTTP_LISTEN_NAME for a name (not resolved;
 * only the port is set), or -EINVAL and what was wrong in err ("port 'x' is not
 * a number from 1 to 65535"). */
#define HTTP_HOST_MAX 255
#define HTTP_LISTEN_NAME 1
#define HTTP_LISTEN_ERRLEN 320	/* enough for err, with an excerpt of the spec */
#define HTTP_LISTEN_FORMS "(expected HOST:PORT, [ADDR6]:PORT or :PORT)"
int http_parse_listen(const char *spec, struct sockaddr_storage *ret, socklen_t *ret_len,
		      char *err, size_t errlen);
/* http_parse_listen(), a name resolved (its first IPv4 address, else its first
 * IPv6 one; "localhost" is then 127.0.0.1, where scrape configurations point):
 * 0 or -EINVAL with "cannot resolve host 'h': ..." in err. */
int http_resolve_listen(const char *spec, struct sockaddr_storage *ret, socklen_t *ret_len,
			char *err, size_t errlen);
/* A command-line HOST:PORT (`exporter --listen`, `guard --metrics`), its syntax
 * (a name is resolved when the server binds): 0, or one line on stderr,
 * "sockdiag CMD: --OPT 'VALUE': WHY (expected HOST:PORT, [ADDR6]:PORT or :PORT)"
 * (escaped), and -EINVAL. */
int http_listen_arg(const char *cmd, const char *opt, const char *arg);
/* A listening TCP socket on HOST:PORT, for a caller that must bind before it
 * changes namespace or drops privileges. On failure a negative errno and a
 * one-line reason in err. */
int http_bind(const char *spec, int *ret_fd, char *err, size_t errlen);
/* Listen (on o->fd if >= 0, else on o->listen) and serve from threads of the
 * library's and the server's own, which start with every signal blocked. Raises
 * the soft RLIMIT_NOFILE (up to the hard one) for HTTP_CONN_LIMIT connections.
 * On failure returns a negative errno with a one-line reason in err. */
int http_start(struct http_server **ret, const struct http_opts *o, char *err, size_t errlen);
/* Accepts NULL. Waits for the scrapes under way; queued ones get 503. */
void http_stop(struct http_server *s);

/* What a request gets, from its method and URL alone. */
enum http_page {
	HTTP_PAGE_BAD_METHOD,	/* 405: not GET or HEAD */
	HTTP_PAGE_INDEX,	/* "/" */
	HTTP_PAGE_METRICS,	/* "/metrics" */
	HTTP_PAGE_HEALTHZ,	/* "/healthz" */
	HTTP_PAGE_READYZ,	/* "/readyz" */
	HTTP_PAGE_NOT_FOUND,	/* 404 */
};
enum http_page http_route(const char *method, const char *url);
/* Whether an Accept header (NULL: none) asks for OpenMetrics: it names
 * application/openmetrics-text without q=0. */
bool http_wants_openmetrics(const char *accept);

/* The exposition's content types. */
#define HTTP_CT_PROMETHEUS "text/plain; version=0.0.4; charset=utf-8"
#define HTTP_CT_OPENMETRICS "application/openmetrics-text; version=1.0.0; charset=utf-8"

#endif
