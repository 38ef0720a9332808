// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The metrics endpoint over libmicrohttpd (see http.h).
 *
 * The library is loaded (dlopen) when a server starts, not with the program:
 * linked, it pulls in GnuTLS and seven more libraries, whose loading cost
 * every command (`sockdiag list` of an empty namespace: 9.5 ms, 4.8 MiB, of
 * which 4.3 ms and 3 MiB were theirs; bench/RESULTS.md). Each server holds
 * its own handle and function table: no globals.
 *
 * Threads: one event thread (the library's, epoll) reads every connection,
 * so a slow client costs a connection slot and its 16 KiB pool, never a
 * thread; /metrics requests are suspended and rendered by scrape threads
 * (started as needed, at most SCRAPE_THREADS, which may all wait for one
 * exporter pass), then resumed; a watchdog thread closes the connections
 * that miss their deadline (the library's own timeout restarts with every
 * byte: a client sending a byte every few seconds would hold its slot for
 * ever). At CONN_LIMIT connections the event thread stops accepting and new
 * ones wait in the listen queue.
 *
 * One address holds at most PER_ADDR_LIMIT connections, and a new one from an
 * address at its cap is never refused for slow clients: it takes the slot of
 * that address's connection that has waited longest for its request's line
 * and headers (a new connection, or one kept alive after a response), which
 * is closed. Many slow clients behind one address (a NAT, a process on the
 * Prometheus host) thus only churn among themselves, and a scraper from the
 * same address, which sends its request as soon as it connects, is served:
 * it would lose its slot only if PER_ADDR_LIMIT - 1 more connections came
 * from its address before its request did. Refusing the newcomer instead (as
 * libmicrohttpd's own per-address limit does) let 40 slow clients on the
 * scraper's address starve every scrape. Only when every connection of the
 * address has sent its request (being answered) is the new one closed.
 *
 * libmicrohttpd 0.9.75 closes the connection after a response queued from
 * the first call for a request: a GET or HEAD is answered from a later one,
 * so its connection can be kept alive (Prometheus reuses them); other methods
 * get their 405 at once, their body unread, and the connection closed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <microhttpd.h>

#include "daemon/metrics/http.h"
#include "util/clock.h"
#include "util/textfile.h"

#ifndef SOCKDIAG_MHD_SONAME
#error "SOCKDIAG_MHD_SONAME: libmicrohttpd's soname, found by meson"
#endif

/* A request line and headers beyond this get 431 (or 414): Prometheus sends
 * about 400 bytes. It is also each connection's whole memory pool. */
#define CONN_MEMORY (16 * 1024)
/* A client that sends nothing for this long is dropped (the library's timer). */
#define CONN_TIMEOUT_S 10
/* A request's line and headers complete within this, from the connection (or
 * the previous response) on, however slowly they trickle in. */
#define HEADER_DEADLINE_MS (HTTP_HEADER_DEADLINE_S * 1000)
/* A response is taken by the client within this. */
#define SEND_DEADLINE_MS (HTTP_SEND_DEADLINE_S * 1000)
/* How often the watchdog looks. */
#define WATCH_MS 250
/* Connections at once; later ones wait in the listen queue (LISTEN_BACKLOG,
 * capped by net.core.somaxconn). Lowered when RLIMIT_NOFILE cannot be raised. */
#define CONN_LIMIT HTTP_CONN_LIMIT
#define LISTEN_BACKLOG 4096
/* Threads rendering /metrics at once: concurrent scrapes of the exporter wait
 * for one pass, so as many as this share it. */
#define SCRAPE_THREADS 64
/* Connections of one client address (see the top of the file). */
#define PER_ADDR_LIMIT HTTP_PER_ADDR_LIMIT

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
	__typeof__(MHD_get_connection_info) *get_connection_info;
	__typeof__(MHD_suspend_connection) *suspend_connection;
	__typeof__(MHD_resume_connection) *resume_connection;
};

/* One TCP connection (the library's socket context). */
struct conn {
	struct conn *prev, *next;	/* in http_server.conns */
	int fd;
	int64_t deadline;		/* ms, CLOCK_MONOTONIC; 0: none (being rendered) */
	uint64_t wait_seq;		/* when it started waiting for a request (order) */
	bool waiting;			/* for a request's line and headers */
	bool doomed;			/* shut down (evicted or refused): closing */
	uint8_t family;			/* of the client's address, v4-mapped as AF_INET */
	uint8_t addr[16];
};

/* One /metrics request, from its suspension to its response. */
struct job {
	struct job *next;		/* in http_server.queue */
	struct MHD_Connection *c;
	struct conn *conn;
	bool om, queued, done;
	int r;
	char *body;
	size_t len;
};

struct http_server {
	struct MHD_Daemon *d;
	struct mhd mhd;
	struct http_opts o;
	pthread_mutex_t mu;
	pthread_cond_t wake;		/* scrape threads: a job, or stop */
	pthread_cond_t tick;		/* the watchdog: stop */
	struct conn *conns;
	uint64_t wait_seq;
	struct job *queue, **queue_tail;
	pthread_t scrapers[SCRAPE_THREADS], watchdog;
	unsigned nscrapers, idle;
	bool stopping, watching;
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
		{ "MHD_get_connection_info", (void **)&m->get_connection_info },
		{ "MHD_suspend_connection", (void **)&m->suspend_connection },
		{ "MHD_resume_connection", (void **)&m->resume_connection },
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

static struct conn *conn_of(const struct mhd *m, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		m->get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

static void set_deadline(struct http_server *s, struct conn *conn, int64_t deadline)
{
	if (!conn)
		return;
	pthread_mutex_lock(&s->mu);
	conn->deadline = deadline;
	pthread_mutex_unlock(&s->mu);
}

/* The connection waits for a request's line and headers (waiting) or has
 * them; under s->mu. */
static void set_waiting(struct http_server *s, struct conn *conn, bool waiting)
{
	conn->waiting = waiting;
	if (waiting) {
		conn->wait_seq = ++s->wait_seq;
		conn->deadline = (int64_t)mono_ms() + HEADER_DEADLINE_MS;
	}
}

/* Render one job (a scrape thread; the connection is suspended). */
static void job_run(struct http_server *s, struct job *j)
{
	j->r = s->o.metrics(s->o.ctx, j->om, &j->body, &j->len);
	pthread_mutex_lock(&s->mu);
	j->done = true;
	if (j->conn)
		j->conn->deadline = (int64_t)mono_ms() + SEND_DEADLINE_MS;
	pthread_mutex_unlock(&s->mu);
	s->mhd.resume_connection(j->c);
}

static void *scraper(void *arg)
{
	struct http_server *s = arg;
	struct job *j;

	pthread_mutex_lock(&s->mu);
	for (;;) {
		while (!s->queue && !s->stopping) {
			s->idle++;
			pthread_cond_wait(&s->wake, &s->mu);
			s->idle--;
		}
		j = s->queue;
		if (!j)
			break;
		s->queue = j->next;
		if (!s->queue)
			s->queue_tail = &s->queue;
		if (s->stopping) {	/* not started: 503 */
			j->r = -ESHUTDOWN;
			j->done = true;
			pthread_mutex_unlock(&s->mu);
			s->mhd.resume_connection(j->c);
		} else {
			pthread_mutex_unlock(&s->mu);
			job_run(s, j);
		}
		pthread_mutex_lock(&s->mu);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* Queue a job for the scrape threads, starting one more if none is idle.
 * Returns false if it cannot be queued (no thread at all). */
static bool job_queue(struct http_server *s, struct job *j)
{
	sigset_t all, old;
	bool ok = true;

	pthread_mutex_lock(&s->mu);
	if (!s->idle && s->nscrapers < SCRAPE_THREADS) {
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		if (pthread_create(&s->scrapers[s->nscrapers], NULL, scraper, s) == 0)
			s->nscrapers++;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (!s->nscrapers) {
		ok = false;
	} else {
		if (j->conn)
			j->conn->deadline = 0;
		*s->queue_tail = j;
		s->queue_tail = &j->next;
		pthread_cond_signal(&s->wake);
	}
	pthread_mutex_unlock(&s->mu);
	return ok;
}

/* /metrics: the second call suspends the connection and queues it for a
 * scrape thread; the call after its resumption answers. */
static enum MHD_Result metrics_page(struct http_server *s, struct MHD_Connection *c,
				    struct job **jp)
{
	const struct mhd *m = &s->mhd;
	struct job *j = *jp;
	char msg[128], *body;
	bool done;

	if (!j->queued) {
		j->queued = true;
		j->c = c;
		j->conn = conn_of(m, c);
		j->om = http_wants_openmetrics(
			m->lookup_connection_value(c, MHD_HEADER_KIND, "Accept"));
		m->suspend_connection(c);
		if (!job_queue(s, j)) {
			m->resume_connection(c);
			j->r = -EAGAIN;
			j->done = true;
		}
		return MHD_YES;
	}
	pthread_mutex_lock(&s->mu);
	done = j->done;
	pthread_mutex_unlock(&s->mu);
	if (!done)
		return MHD_YES;
	if (j->r >= 0) {
		body = j->body;
		j->body = NULL;
		return reply(m, c, MHD_HTTP_OK, j->om ? HTTP_CT_OPENMETRICS : HTTP_CT_PROMETHEUS,
			     body, j->len, true, NULL);
	}
	snprintf(msg, sizeof(msg), "cannot collect metrics: %s\n", strerror(-j->r));
	body = strdup(msg);
	if (!body)
		return MHD_NO;
	return reply(m, c, j->r == -ESHUTDOWN || j->r == -EAGAIN ?
			   MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_INTERNAL_SERVER_ERROR,
		     "text/plain; charset=utf-8", body, strlen(body), true, NULL);
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
	enum http_page page = http_route(method, url);
	struct conn *conn;
	char *body = NULL;

	(void)version;
	(void)upload_data;
	if (!*con_cls) {
		/* The line and headers are in: no longer evictable. A GET or
		 * HEAD is answered from a later call (*con_cls: the job, or s
		 * itself), another method at once: its connection is closed
		 * after the 405, its body never read. */
		conn = conn_of(m, c);
		if (conn) {
			pthread_mutex_lock(&s->mu);
			conn->waiting = false;
			pthread_mutex_unlock(&s->mu);
		}
		if (page != HTTP_PAGE_BAD_METHOD) {
			*con_cls = page == HTTP_PAGE_METRICS ? calloc(1, sizeof(struct job)) : s;
			return *con_cls ? MHD_YES : MHD_NO;
		}
	}
	if (*upload_size) {	/* a GET's body: read and dropped */
		*upload_size = 0;
		return MHD_YES;
	}
	switch (page) {
	case HTTP_PAGE_METRICS:
		return metrics_page(s, c, (struct job **)con_cls);
	case HTTP_PAGE_INDEX:
		set_deadline(s, conn_of(m, c), (int64_t)mono_ms() + SEND_DEADLINE_MS);
		if (asprintf(&body, page_fmt, s->o.title, s->o.title) < 0)
			return MHD_NO;
		return reply(m, c, MHD_HTTP_OK, "text/html; charset=utf-8", body, strlen(body), true,
			     NULL);
	case HTTP_PAGE_HEALTHZ:
	case HTTP_PAGE_READYZ: {
		bool (*fn)(void *) = page == HTTP_PAGE_HEALTHZ ? s->o.healthy : s->o.ready;
		bool up = !fn || fn(s->o.ctx);

		set_deadline(s, conn_of(m, c), (int64_t)mono_ms() + SEND_DEADLINE_MS);
		return reply_text(m, c, up ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE,
				  up ? (page == HTTP_PAGE_HEALTHZ ? "ok\n" : "ready\n")
				     : (page == HTTP_PAGE_HEALTHZ ? "unhealthy\n" : "not ready\n"),
				  NULL);
	}
	case HTTP_PAGE_BAD_METHOD:
		set_deadline(s, conn_of(m, c), (int64_t)mono_ms() + SEND_DEADLINE_MS);
		return reply_text(m, c, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n",
				  "GET, HEAD");
	case HTTP_PAGE_NOT_FOUND:
		break;
	}
	set_deadline(s, conn_of(m, c), (int64_t)mono_ms() + SEND_DEADLINE_MS);
	return reply_text(m, c, MHD_HTTP_NOT_FOUND, "not found: try /metrics\n", NULL);
}

/* A request is over (answered, or its connection gone): its job goes, and the
 * next request on the connection has HEADER_DEADLINE_MS for its headers. */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct http_server *s = cls;
	struct conn *conn = conn_of(&s->mhd, c);
	struct job *j = *con_cls == (void *)s ? NULL : *con_cls;

	(void)toe;
	if (conn) {
		pthread_mutex_lock(&s->mu);
		set_waiting(s, conn, true);
		pthread_mutex_unlock(&s->mu);
	}
	*con_cls = NULL;
	if (j) {
		free(j->body);
		free(j);
	}
}

/* The client's address of a connection, v4-mapped IPv6 as IPv4 (a [::]
 * listener sees IPv4 clients so). */
static void conn_addr(struct conn *conn, const struct sockaddr *sa)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

	if (!sa)
		return;
	if (sa->sa_family == AF_INET) {
		conn->family = AF_INET;
		memcpy(conn->addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6 && !memcmp(&s6->sin6_addr, mapped, 12)) {
		conn->family = AF_INET;
		memcpy(conn->addr, (const uint8_t *)&s6->sin6_addr + 12, 4);
	} else if (sa->sa_family == AF_INET6) {
		conn->family = AF_INET6;
		memcpy(conn->addr, &s6->sin6_addr, 16);
	}
}

/* A new connection (not linked yet) from an address at PER_ADDR_LIMIT: the
 * address's connection that has waited longest for a request is closed for
 * it, or, when none waits, the new one (see the top of the file). The event
 * thread then reads the end of the stream and closes it. Under s->mu. */
static void admit(struct http_server *s, struct conn *nc)
{
	struct conn *oldest = NULL, *victim;
	unsigned n = 0;

	for (struct conn *c = s->conns; c; c = c->next) {
		if (c->doomed || c->family != nc->family ||
		    memcmp(c->addr, nc->addr, sizeof(c->addr)))
			continue;
		n++;
		if (c->waiting && (!oldest || c->wait_seq < oldest->wait_seq))
			oldest = c;
	}
	if (n < PER_ADDR_LIMIT)
		return;
	victim = oldest ? oldest : nc;
	shutdown(victim->fd, SHUT_RDWR);
	victim->doomed = true;
	victim->deadline = 0;
}

/* Connections are tracked for the watchdog and the per-address cap; the
 * library calls CLOSED before it closes the descriptor, so the watchdog and
 * admit() (under s->mu) never touch a descriptor number that was reused. */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct http_server *s = cls;
	struct conn *conn = *socket_context;
	const union MHD_ConnectionInfo *ci, *ca;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		ci = s->mhd.get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		ca = s->mhd.get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		conn = ci ? calloc(1, sizeof(*conn)) : NULL;
		if (!conn)	/* only the library's idle timeout, then */
			return;
		conn->fd = ci->connect_fd;
		conn_addr(conn, ca ? ca->client_addr : NULL);
		pthread_mutex_lock(&s->mu);
		set_waiting(s, conn, true);
		admit(s, conn);
		conn->next = s->conns;
		if (s->conns)
			s->conns->prev = conn;
		s->conns = conn;
		pthread_mutex_unlock(&s->mu);
		*socket_context = conn;
		return;
	}
	if (!conn)
		return;
	pthread_mutex_lock(&s->mu);
	if (conn->prev)
		conn->prev->next = conn->next;
	else
		s->conns = conn->next;
	if (conn->next)
		conn->next->prev = conn->prev;
	pthread_mutex_unlock(&s->mu);
	free(conn);
	*socket_context = NULL;
}

/* Every WATCH_MS: a connection past its deadline is shut down; the event
 * thread sees the end of its stream and closes it. */
static void *watchdog(void *arg)
{
	struct http_server *s = arg;
	struct timespec ts;

	pthread_mutex_lock(&s->mu);
	while (!s->stopping) {
		int64_t now = (int64_t)mono_ms();

		for (struct conn *c = s->conns; c; c = c->next) {
			if (c->deadline && c->deadline <= now) {
				shutdown(c->fd, SHUT_RDWR);
				c->deadline = 0;
			}
		}
		ts = ts_from_ms(mono_ms() + WATCH_MS);
		pthread_cond_timedwait(&s->tick, &s->mu, &ts);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* libmicrohttpd's own messages (a client that sent garbage, ...) are not
 * the daemon's business: dropped. */
static void quiet_logger(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	(void)fmt;
	(void)ap;
}

/* A name: the first IPv4 address getaddrinfo() gives, else the first IPv6
 * one (one listening socket). */
static int resolve(const char *host, struct sockaddr_storage *ret, socklen_t *ret_len,
		   char *err, size_t errlen)
{
	const struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL, *pick = NULL;
	uint16_t port = ((struct sockaddr_in *)ret)->sin_port;
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
		((struct sockaddr_in *)ret)->sin_port = port;
	else
		((struct sockaddr_in6 *)ret)->sin6_port = port;
	freeaddrinfo(res);
	return 0;
}

int http_resolve_listen(const char *spec, struct sockaddr_storage *ret, socklen_t *ret_len,
			char *err, size_t errlen)
{
	char host[HTTP_HOST_MAX + 1];
	int r;

	r = http_parse_listen(spec, ret, ret_len, err, errlen);
	if (r != HTTP_LISTEN_NAME)
		return r;
	snprintf(host, sizeof(host), "%.*s", (int)(strrchr(spec, ':') - spec), spec);
	return resolve(host, ret, ret_len, err, errlen);
}

int http_bind(const char *spec, int *ret_fd, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	char why[HTTP_LISTEN_ERRLEN];
	socklen_t sl;
	int fd, one = 1, r;
	bool any;

	r = http_resolve_listen(spec, &ss, &sl, why, sizeof(why));
	if (r < 0) {
		char q[TEXT_QUOTE_LEN];

		snprintf(err, errlen, "listen '%s': %s", TQ(q, spec), why);
		return r;
	}
	/* :PORT is every address: [::] taking IPv4 too, or 0.0.0.0 on a
	 * kernel without IPv6. A named IPv6 address is that address only. */
	any = spec[0] == ':';
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 && any && errno == EAFNOSUPPORT) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		uint16_t port = ((struct sockaddr_in6 *)&ss)->sin6_port;

		memset(&ss, 0, sizeof(ss));
		s4->sin_family = AF_INET;
		s4->sin_port = port;
		s4->sin_addr.s_addr = htonl(INADDR_ANY);
		sl = sizeof(*s4);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	}
	if (ss.ss_family == AF_INET6 && any)
		one = 0;
	if (fd < 0 ||
	    (ss.ss_family == AF_INET6 &&
	     setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0) ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &(int){ 1 }, sizeof(int)) < 0 ||
	    bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, LISTEN_BACKLOG) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot listen on %s: %s", spec, strerror(-r));
		if (fd >= 0)
			close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

/* Connections the descriptor limit allows (raised to its hard limit if
 * needed), keeping 128 for the rest of the daemon. */
static unsigned conn_limit(void)
{
	struct rlimit rl;
	rlim_t want = CONN_LIMIT + 128;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 64;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want
										   : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= want)
		return CONN_LIMIT;
	return rl.rlim_cur > 256 ? (unsigned)(rl.rlim_cur - 128) : (unsigned)(rl.rlim_cur / 2);
}

/* The threads and the library's daemon; s is set up. */
static int server_run(struct http_server *s, int fd)
{
	unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME |
			 MHD_USE_ERROR_LOG;
	sigset_t all, old;
	int r = 0;

	/* The daemons read their signals from a signalfd in the main thread:
	 * none may land in the library's threads or ours. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	if (pthread_create(&s->watchdog, NULL, watchdog, s) != 0) {
		r = -EAGAIN;
		goto out;
	}
	s->watching = true;
	s->d = s->mhd.start_daemon(flags, 0, NULL, NULL, on_request, s,
				MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONN_TIMEOUT_S,
				MHD_OPTION_CONNECTION_LIMIT, conn_limit(),
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
				MHD_OPTION_EXTERNAL_LOGGER, quiet_logger, NULL,
				MHD_OPTION_END);
	if (!s->d)
		r = -EIO;
out:
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

/* Stop our threads: queued jobs are answered 503, running ones finish, every
 * suspended connection is resumed (the library must not stop with one). */
static void threads_stop(struct http_server *s)
{
	pthread_mutex_lock(&s->mu);
	s->stopping = true;
	pthread_cond_broadcast(&s->wake);
	pthread_cond_signal(&s->tick);
	pthread_mutex_unlock(&s->mu);
	for (unsigned i = 0; i < s->nscrapers; i++)
		pthread_join(s->scrapers[i], NULL);
	if (s->watching)
		pthread_join(s->watchdog, NULL);
}

static void server_free(struct http_server *s)
{
	if (s->mhd.dl)
		dlclose(s->mhd.dl);
	pthread_cond_destroy(&s->wake);
	pthread_cond_destroy(&s->tick);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

int http_start(struct http_server **ret, const struct http_opts *o, char *err, size_t errlen)
{
	struct http_server *s = NULL;
	pthread_condattr_t ca;
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
	s->queue_tail = &s->queue;
	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, NULL);
	pthread_cond_init(&s->tick, &ca);
	pthread_condattr_destroy(&ca);
	r = mhd_load(&s->mhd, err, errlen);
	if (r >= 0) {
		r = server_run(s, fd);
		if (r < 0)
			snprintf(err, errlen, "cannot serve HTTP on %s", o->listen);
	}
	if (r < 0) {
		threads_stop(s);
		close(fd);
		server_free(s);
		return r;
	}
	*ret = s;
	return 0;
}

void http_stop(struct http_server *s)
{
	if (!s)
		return;
	threads_stop(s);
	s->mhd.stop_daemon(s->d);	/* closes the listening socket */
	server_free(s);
}
