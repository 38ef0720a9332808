/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The metrics endpoint of the daemons (sockdiag exporter, guard --metrics):
 * libmicrohttpd with a thread per connection, so a slow or stalled client
 * holds only its own thread and never a scrape. GET/HEAD only: "/" is a short
 * HTML page, "/metrics" the exposition (OpenMetrics when the client's Accept
 * asks for application/openmetrics-text, else Prometheus text 0.0.4); other
 * paths 404, other methods 405, oversized requests 431/414 (by the library).
 */
#ifndef SOCKDIAG_HTTP_H
#define SOCKDIAG_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* Render the exposition into *ret_body (malloc'd, *ret_len bytes). Called from
 * connection threads, concurrently. Returns 0 or a negative errno (500). */
typedef int (*http_metrics_fn)(void *ctx, bool openmetrics, char **ret_body, size_t *ret_len);

struct http_opts {
	const char *listen;	/* HOST:PORT, [V6ADDR]:PORT, :PORT */
	int fd;			/* a socket from http_bind() (taken over), or -1 */
	const char *title;	/* for the HTML page */
	http_metrics_fn metrics;
	void *ctx;
};

struct http_server;

/* Parse HOST:PORT (PORT 1-65535): HOST an IPv4 address, an IPv6 address in
 * brackets, a name (resolved now: its first IPv4 address, else its first IPv6
 * one), or empty: every address ([::] with IPv4 too; http_bind()). On failure
 * -EINVAL and what was wrong in err ("port 'x' is not a number from 1 to
 * 65535", "cannot resolve host 'h': ..."). */
#define HTTP_LISTEN_ERRLEN 320	/* enough for err, with an excerpt of the spec */
#define HTTP_LISTEN_FORMS "(expected HOST:PORT, [ADDR6]:PORT or :PORT)"
int http_parse_listen(const char *spec, struct sockaddr_storage *ret, socklen_t *ret_len,
		      char *err, size_t errlen);
/* A command-line HOST:PORT (`exporter --listen`, `guard --metrics`): 0, or one line on
 * stderr, "sockdiag CMD: --OPT 'VALUE': WHY (expected HOST:PORT, [ADDR6]:PORT or :PORT)"
 * (escaped), and -EINVAL. */
int http_listen_arg(const char *cmd, const char *opt, const char *arg);
/* A listening TCP socket on ADDR:PORT, for a caller that must bind before it
 * changes namespace or drops privileges. On failure a negative errno and a
 * one-line reason in err. */
int http_bind(const char *spec, int *ret_fd, char *err, size_t errlen);
/* Listen (on o->fd if >= 0, else on o->listen) and serve from threads of the
 * library's own, which start with every signal blocked. On failure returns a
 * negative errno with a one-line reason in err. */
int http_start(struct http_server **ret, const struct http_opts *o, char *err, size_t errlen);
/* Accepts NULL. Waits for the connection threads. */
void http_stop(struct http_server *s);

/* The exposition's content types. */
#define HTTP_CT_PROMETHEUS "text/plain; version=0.0.4; charset=utf-8"
#define HTTP_CT_OPENMETRICS "application/openmetrics-text; version=1.0.0; charset=utf-8"

#endif
