// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The API server, through libcurl: GET .../endpointslices, paged (limit,
 * continue), then GET ...?watch=1 from the list's resourceVersion: a stream
 * of JSON events ({"type": "ADDED|MODIFIED|DELETED|BOOKMARK|ERROR",
 * "object": ...}), parsed as they come by one json-c tokener (an event may
 * span reads; several may share one). The service account's token is read
 * for every request (the kubelet rotates it); the server's certificate is
 * checked against the service account's ca.crt.
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/common/log.h"
#include "daemon/kube/kube.h"
#include "util/clock.h"

#define PAGE_LIMIT 500
#define TOKEN_MAX 16384
/* An error body (a Status) kept for the log. */
#define BODY_LOG_MAX 200

struct kube_api {
	struct kube_api_conf conf;
	CURL *curl;
	kube_tick_cb tick;
	void *userdata;
	char err[CURL_ERROR_SIZE];
};

/* One request's parse: the objects of the body as they complete. */
struct req {
	struct kube_api *api;
	struct kube_state *st;
	struct json_tokener *tok;
	long status;		/* 0 until the first byte */
	bool watch;
	struct json_object *list; /* a list's one object */
	char **rv;		/* a watch's resourceVersion */
	size_t events;
	int verdict;		/* why the write callback stopped it */
	bool gone;		/* 410: too old */
	bool partial;		/* an object begun, not ended */
	bool changed;		/* events of this read changed the state */
	char body[BODY_LOG_MAX + 1]; /* an error status's body, for the log */
	size_t body_len;
};

int kube_api_new(struct kube_api **ret, const struct kube_api_conf *conf, kube_tick_cb tick,
		 void *userdata)
{
	struct kube_api *api;

	if (curl_global_init(CURL_GLOBAL_DEFAULT))
		return -ENOMEM;
	api = calloc(1, sizeof(*api));
	if (!api)
		return -ENOMEM;
	api->conf = *conf;
	api->tick = tick;
	api->userdata = userdata;
	api->curl = curl_easy_init();
	if (!api->curl) {
		free(api);
		return -ENOMEM;
	}
	*ret = api;
	return 0;
}

void kube_api_free(struct kube_api *api)
{
	if (!api)
		return;
	curl_easy_cleanup(api->curl);
	free(api);
	curl_global_cleanup();
}

/* "Authorization: Bearer TOKEN" from the service account's token file. */
static int auth_header(struct kube_api *api, char **ret)
{
	char path[4096], *hdr = NULL;
	ssize_t n = 0, r;
	int fd, e = 0;

	snprintf(path, sizeof(path), "%s/token", api->conf.sa_dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		daemon_log(api->conf.log_name, "%s: %s", path, strerror(e));
		return -e;
	}
	hdr = malloc(TOKEN_MAX + 32);
	if (!hdr) {
		close(fd);
		return -ENOMEM;
	}
	n = sprintf(hdr, "Authorization: Bearer ");
	while ((r = read(fd, hdr + n, (size_t)(TOKEN_MAX + 31 - n))) > 0)
		n += r;
	if (r < 0)
		e = errno;
	close(fd);
	while (n > 22 && (hdr[n - 1] == '\n' || hdr[n - 1] == '\r' || hdr[n - 1] == ' '))
		n--;
	hdr[n] = 0;
	if (e || n == 22 || strpbrk(hdr + 22, "\r\n")) {
		daemon_log(api->conf.log_name, "%s: %s", path,
			   e ? strerror(e) : "not a token (empty, or several lines)");
		free(hdr);
		return e ? -e : -EINVAL;
	}
	*ret = hdr;
	return 0;
}

static int on_watch_event(struct req *q, struct json_object *ev)
{
	const char *type = json_object_get_string(json_object_object_get(ev, "type"));
	struct json_object *obj = json_object_object_get(ev, "object");
	struct json_object *md = json_object_object_get(obj, "metadata");
	const char *rv = json_object_get_string(json_object_object_get(md, "resourceVersion"));
	uint64_t now = mono_ms();
	bool changed = true;
	int r = 0;

	if (!type || !json_object_is_type(obj, json_type_object))
		return -EPROTO;
	if (!strcmp(type, "ERROR")) {
		/* A Status: 410 Gone (the resourceVersion is too old), or another. */
		int64_t code = json_object_get_int64(json_object_object_get(obj, "code"));

		if (code == 410) {
			q->gone = true;
			return -ESTALE;
		}
		daemon_log(q->api->conf.log_name, "watch: the server ends it: %lld %s",
			   (long long)code,
			   json_object_get_string(json_object_object_get(obj, "message")) ?: "");
		return -EREMOTEIO;
	}
	if (!strcmp(type, "ADDED") || !strcmp(type, "MODIFIED"))
		r = kube_slice_put(q->st, obj, now);
	else if (!strcmp(type, "DELETED"))
		r = kube_slice_del(q->st, obj, now);
	else if (!strcmp(type, "BOOKMARK"))
		changed = false;
	else
		return -EPROTO;
	if (r == -ENOMEM)
		return r;
	if (rv && *rv) {
		char *dup = strdup(rv);

		if (!dup)
			return -ENOMEM;
		free(*q->rv);
		*q->rv = dup;
	}
	q->events++;
	q->changed = q->changed || changed;
	return 0;
}

static size_t on_data(char *data, size_t size, size_t nmemb, void *userdata)
{
	struct req *q = userdata;
	size_t len = size * nmemb, off = 0;

	if (!q->status)
		curl_easy_getinfo(q->api->curl, CURLINFO_RESPONSE_CODE, &q->status);
	if (q->status != 200) {
		size_t n = len < BODY_LOG_MAX - q->body_len ? len : BODY_LOG_MAX - q->body_len;

		memcpy(q->body + q->body_len, data, n);
		q->body_len += n;
		return len;
	}
	while (off < len) {
		struct json_object *o = json_tokener_parse_ex(q->tok, data + off, (int)(len - off));
		enum json_tokener_error e = json_tokener_get_error(q->tok);

		if (e == json_tokener_continue) {
			/* Whitespace between objects is eaten; anything else starts one. */
			for (size_t i = off; i < len && !q->partial; i++)
				q->partial = !strchr(" \t\r\n", data[i]);
			break;
		}
		if (e != json_tokener_success) {
			daemon_log(q->api->conf.log_name, "%s: the server sent bad JSON: %s",
				   q->watch ? "watch" : "list", json_tokener_error_desc(e));
			q->verdict = -EPROTO;
			return 0;
		}
		off += json_tokener_get_parse_end(q->tok);
		json_tokener_reset(q->tok);
		q->partial = false;
		if (!q->watch) {
			json_object_put(q->list);
			q->list = o;
			continue;
		}
		q->verdict = on_watch_event(q, o);
		json_object_put(o);
		if (q->verdict < 0)
			return 0;
	}
	/* One write for the events of one read (a burst of them costs one). */
	if (q->watch && q->changed) {
		q->changed = false;
		if (q->api->tick(q->api->userdata, true)) {
			q->verdict = -ECANCELED;
			return 0;
		}
	}
	return len;
}

static int on_progress(void *userdata, curl_off_t dt, curl_off_t dn, curl_off_t ut,
		       curl_off_t un)
{
	struct req *q = userdata;

	if (q->api->tick(q->api->userdata, false)) {
		q->verdict = -ECANCELED;
		return 1;
	}
	return 0;
}

/* One GET of url; the body parsed into q. Returns 0 (status 200, the
 * body read to its end), -ESTALE (410), or another negative errno. */
static int get(struct req *q, const char *url, long timeout_s)
{
	struct kube_api *api = q->api;
	struct curl_slist *hdrs = NULL, *h;
	char ca[4096], *auth = NULL, *msg;
	CURL *c = api->curl;
	CURLcode cr;
	int r;

	r = auth_header(api, &auth);
	if (r < 0)
		return r;
	q->tok = json_tokener_new();
	hdrs = curl_slist_append(NULL, auth);
	h = hdrs ? curl_slist_append(hdrs, "Accept: application/json") : NULL;
	if (!q->tok || !h) {
		r = -ENOMEM;
		goto out;
	}
	snprintf(ca, sizeof(ca), "%s/ca.crt", api->conf.sa_dir);
	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_CAINFO, ca);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https,http");
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, q);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, q);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, api->err);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout_s);
	/* A peer gone without a word (a node rebooted) is found by keepalives. */
	curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(c, CURLOPT_TCP_KEEPIDLE, 30L);
	curl_easy_setopt(c, CURLOPT_TCP_KEEPINTVL, 10L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	api->err[0] = 0;
	cr = curl_easy_perform(c);
	if (q->verdict) {
		r = q->verdict;
	} else if (cr != CURLE_OK) {
		daemon_log(api->conf.log_name, "%s: %s", q->watch ? "watch" : "list",
			   api->err[0] ? api->err : curl_easy_strerror(cr));
		r = -EIO;
	} else if (q->status == 410) {
		q->gone = true;
		r = -ESTALE;
	} else if (q->status != 200) {
		q->body[q->body_len] = 0;
		msg = strpbrk(q->body, "\r\n");
		if (msg)
			*msg = 0;
		daemon_log(api->conf.log_name, "%s: HTTP status %ld: %s", q->watch ? "watch" : "list",
			   q->status, q->body);
		r = -EIO;
	} else if (q->partial) {
		daemon_log(api->conf.log_name, "%s: the body ends inside an object",
			   q->watch ? "watch" : "list");
		r = -EIO;
	}
out:
	curl_slist_free_all(hdrs);
	json_tokener_free(q->tok);
	free(auth);
	return r;
}

static int url_of(struct kube_api *api, char *buf, size_t len, const char *query)
{
	int n;

	if (api->conf.ns)
		n = snprintf(buf, len, "%s/apis/discovery.k8s.io/v1/namespaces/%s/endpointslices?%s",
			     api->conf.server, api->conf.ns, query);
	else
		n = snprintf(buf, len, "%s/apis/discovery.k8s.io/v1/endpointslices?%s",
			     api->conf.server, query);
	return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

/* A list page's items into st; its continue token and resourceVersion. */
static int take_page(struct req *q, char **cont, char **rv)
{
	struct json_object *items = json_object_object_get(q->list, "items");
	struct json_object *md = json_object_object_get(q->list, "metadata");
	const char *c = json_object_get_string(json_object_object_get(md, "continue"));
	const char *v = json_object_get_string(json_object_object_get(md, "resourceVersion"));
	uint64_t now = mono_ms();

	if (!json_object_is_type(items, json_type_array) || !v || !*v) {
		daemon_log(q->api->conf.log_name, "list: not an EndpointSliceList");
		return -EPROTO;
	}
	for (size_t i = 0; i < json_object_array_length(items); i++)
		if (kube_slice_put(q->st, json_object_array_get_idx(items, i), now) == -ENOMEM)
			return -ENOMEM;
	free(*cont);
	free(*rv);
	*cont = c && *c ? strdup(c) : NULL;
	*rv = strdup(v);
	return *rv && (!c || !*c || *cont) ? 0 : -ENOMEM;
}

int kube_list(struct kube_api *api, struct kube_state *st, char **rv)
{
	char url[8192], query[4096], *cont = NULL, *esc;
	int r;

	kube_relist_begin(st);
	do {
		struct req q = { .api = api, .st = st };

		esc = cont ? curl_easy_escape(api->curl, cont, 0) : NULL;
		snprintf(query, sizeof(query), "limit=%d%s%s", PAGE_LIMIT, esc ? "&continue=" : "",
			 esc ? esc : "");
		curl_free(esc);
		r = url_of(api, url, sizeof(url), query);
		if (r == 0)
			r = get(&q, url, 120);
		if (r == 0)
			r = take_page(&q, &cont, rv);
		json_object_put(q.list);
		/* A continue token too old: the list starts again (a new snapshot). */
		if (r == -ESTALE && cont) {
			daemon_log(api->conf.log_name, "list: continue token expired: listing again");
			free(cont);
			cont = NULL;
			kube_relist_begin(st);
			r = 0;
			continue;
		}
	} while (r == 0 && cont);
	free(cont);
	if (r == 0)
		kube_relist_end(st, mono_ms());
	return r;
}

int kube_watch(struct kube_api *api, struct kube_state *st, char **rv, size_t *ret_events)
{
	struct req q = { .api = api, .st = st, .watch = true, .rv = rv };
	char url[8192], query[1024], *esc = curl_easy_escape(api->curl, *rv, 0);
	int r;

	if (!esc)
		return -ENOMEM;
	snprintf(query, sizeof(query),
		 "watch=1&allowWatchBookmarks=true&resourceVersion=%s&timeoutSeconds=%u", esc,
		 api->conf.watch_timeout_s);
	curl_free(esc);
	r = url_of(api, url, sizeof(url), query);
	/* The server ends the watch at timeoutSeconds; a minute more is a hang. */
	if (r == 0)
		r = get(&q, url, (long)api->conf.watch_timeout_s + 60);
	*ret_events = q.events;
	return r;
}
