// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The push's HTTP client and compressors (push.h). libcurl and libsnappy
 * are loaded with dlopen() when a push target is configured, as
 * libmicrohttpd is when a server starts (daemon/metrics/http.c): linked,
 * they would load into every command (libcurl brings TLS and a dozen more
 * libraries, libsnappy the C++ runtime). gzip is zlib's, linked.
 * One client is used by one thread at a time: its easy handle keeps the
 * connection to the receiver open between pushes.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <curl/curl.h>
#include <snappy-c.h>
#include <zlib.h>

#include "daemon/push/push.h"

struct push_client {
	void *dl_curl, *dl_snappy;
	CURL *easy;
	CURLcode (*global_init)(long);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_perform)(CURL *);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	void (*easy_reset)(CURL *);
	void (*easy_cleanup)(CURL *);
	const char *(*easy_strerror)(CURLcode);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
	time_t (*getdate)(const char *, const time_t *);
	snappy_status (*snappy_compress)(const char *, size_t, char *, size_t *);
	size_t (*snappy_max)(size_t);
};

static int load(void **dl, const char *soname, const char *what, const char *const *names,
		void **const *slots, size_t n, char *err, size_t errlen)
{
	*dl = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!*dl) {
		snprintf(err, errlen, "cannot load %s (%s): %s", soname, what, dlerror());
		return -ENOENT;
	}
	for (size_t i = 0; i < n; i++) {
		*slots[i] = dlsym(*dl, names[i]);
		if (!*slots[i]) {
			snprintf(err, errlen, "%s has no %s", soname, names[i]);
			return -ENOENT;
		}
	}
	return 0;
}

int push_client_new(struct push_client **ret, char *err, size_t errlen)
{
	struct push_client *c = calloc(1, sizeof(*c));
	static const char *const curl_names[] = {
		"curl_global_init", "curl_easy_init", "curl_easy_setopt", "curl_easy_perform",
		"curl_easy_getinfo", "curl_easy_reset", "curl_easy_cleanup", "curl_easy_strerror",
		"curl_slist_append", "curl_slist_free_all", "curl_getdate",
	};
	static const char *const snappy_names[] = { "snappy_compress",
						    "snappy_max_compressed_length" };
	int r;

	if (!c)
		return -ENOMEM;
	{
		void **const curl_slots[] = {
			(void **)&c->global_init,  (void **)&c->easy_init,
			(void **)&c->easy_setopt,  (void **)&c->easy_perform,
			(void **)&c->easy_getinfo, (void **)&c->easy_reset,
			(void **)&c->easy_cleanup, (void **)&c->easy_strerror,
			(void **)&c->slist_append, (void **)&c->slist_free_all,
			(void **)&c->getdate,
		};
		void **const snappy_slots[] = { (void **)&c->snappy_compress,
						(void **)&c->snappy_max };

		r = load(&c->dl_curl, SOCKDIAG_CURL_SONAME, "libcurl", curl_names, curl_slots,
			 sizeof(curl_names) / sizeof(curl_names[0]), err, errlen);
		if (r == 0)
			r = load(&c->dl_snappy, SOCKDIAG_SNAPPY_SONAME, "libsnappy", snappy_names,
				 snappy_slots, 2, err, errlen);
	}
	if (r == 0 && c->global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(err, errlen, "libcurl: global initialisation failed");
		r = -EIO;
	}
	if (r == 0 && !(c->easy = c->easy_init())) {
		snprintf(err, errlen, "libcurl: no easy handle");
		r = -ENOMEM;
	}
	if (r < 0) {
		push_client_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

void push_client_free(struct push_client *c)
{
	if (!c)
		return;
	if (c->easy)
		c->easy_cleanup(c->easy);
	/* libcurl stays loaded: curl_global_cleanup is not thread-safe and
	 * TLS libraries do not like being unloaded. */
	if (c->dl_snappy)
		dlclose(c->dl_snappy);
	free(c);
}

int push_snappy(struct push_client *c, const uint8_t *in, size_t len, uint8_t **ret,
		size_t *ret_len)
{
	size_t n = c->snappy_max(len);
	char *out = malloc(n ? n : 1);

	if (!out)
		return -ENOMEM;
	if (c->snappy_compress((const char *)in, len, out, &n) != SNAPPY_OK) {
		free(out);
		return -EIO;
	}
	*ret = (uint8_t *)out;
	*ret_len = n;
	return 0;
}

int push_gzip(const uint8_t *in, size_t len, uint8_t **ret, size_t *ret_len)
{
	z_stream z = { 0 };
	size_t cap;
	uint8_t *out;
	int r;

	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	cap = deflateBound(&z, len);
	out = malloc(cap);
	if (!out) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	r = deflate(&z, Z_FINISH);
	deflateEnd(&z);
	if (r != Z_STREAM_END) {
		free(out);
		return -EIO;
	}
	*ret = out;
	*ret_len = cap - z.avail_out;
	return 0;
}

struct reply_ctx {
	struct push_client *c;
	struct push_reply *r;
	size_t body;		/* bytes of the body kept in r->err */
};

/* Retry-After: delta-seconds or an HTTP-date. */
static size_t on_header(char *buf, size_t size, size_t n, void *ctx)
{
	struct reply_ctx *x = ctx;
	size_t len = size * n;
	char v[64];

	if (len > 12 && len < 12 + sizeof(v) && !strncasecmp(buf, "Retry-After:", 12)) {
		char *p = v, *end;
		long long s;

		memcpy(v, buf + 12, len - 12);
		v[len - 12] = 0;
		while (*p == ' ' || *p == '\t')
			p++;
		p[strcspn(p, "\r\n")] = 0;
		s = strtoll(p, &end, 10);
		if (end != p && !*end && s >= 0) {
			x->r->retry_after_ms = s * 1000;
		} else {
			time_t now = time(NULL), t = x->c->getdate(p, &now);

			if (t != (time_t)-1)
				x->r->retry_after_ms = t > now ? (int64_t)(t - now) * 1000 : 0;
		}
	}
	return len;
}

/* The body's start, for the log (what the receiver says is wrong). */
static size_t on_body(char *buf, size_t size, size_t n, void *ctx)
{
	struct reply_ctx *x = ctx;
	size_t len = size * n, room = sizeof(x->r->err) - 1 - x->body;

	if (len < room)
		room = len;
	for (size_t i = 0; i < room; i++) {
		char ch = buf[i];

		x->r->err[x->body++] = ch >= 0x20 && ch < 0x7f ? ch : ' ';
	}
	x->r->err[x->body] = 0;
	return len;
}

int push_post(struct push_client *c, const char *url, const char *const *headers,
	      const struct push_config *conf, const uint8_t *body, size_t len,
	      struct push_reply *r)
{
	struct reply_ctx x = { .c = c, .r = r };
	struct curl_slist *h = NULL, *t;
	CURLcode e;
	CURL *k = c->easy;

	memset(r, 0, sizeof(*r));
	r->retry_after_ms = -1;
	for (size_t i = 0; headers[i]; i++) {
		t = c->slist_append(h, headers[i]);
		if (!t)
			goto nomem;
		h = t;
	}
	for (size_t i = 0; i < conf->n_headers; i++) {
		t = c->slist_append(h, conf->headers[i]);
		if (!t)
			goto nomem;
		h = t;
	}
	c->easy_reset(k);
	c->easy_setopt(k, CURLOPT_URL, url);
	c->easy_setopt(k, CURLOPT_PROTOCOLS_STR, "http,https");
	c->easy_setopt(k, CURLOPT_NOSIGNAL, 1L);
	c->easy_setopt(k, CURLOPT_TIMEOUT_MS, (long)conf->timeout_ms);
	c->easy_setopt(k, CURLOPT_CONNECTTIMEOUT_MS, (long)conf->timeout_ms);
	c->easy_setopt(k, CURLOPT_USERAGENT, "sockdiag-exporter/" SOCKDIAG_PUSH_VERSION);
	c->easy_setopt(k, CURLOPT_HTTPHEADER, h);
	c->easy_setopt(k, CURLOPT_POSTFIELDS, (const char *)body);
	c->easy_setopt(k, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	c->easy_setopt(k, CURLOPT_HEADERFUNCTION, on_header);
	c->easy_setopt(k, CURLOPT_HEADERDATA, &x);
	c->easy_setopt(k, CURLOPT_WRITEFUNCTION, on_body);
	c->easy_setopt(k, CURLOPT_WRITEDATA, &x);
	e = c->easy_perform(k);
	if (e == CURLE_OK) {
		c->easy_getinfo(k, CURLINFO_RESPONSE_CODE, &r->status);
	} else {
		r->status = 0;
		snprintf(r->err, sizeof(r->err), "%s", c->easy_strerror(e));
	}
	c->easy_setopt(k, CURLOPT_HTTPHEADER, NULL);
	c->slist_free_all(h);
	return 0;
nomem:
	c->slist_free_all(h);
	return -ENOMEM;
}
