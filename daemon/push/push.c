// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The pusher (push.h): one thread that collects a pass every push-interval
 * (the exporter's shared pass: a scrape under way answers it too), encodes
 * it once per target and queues the payload; each target sends its queue's
 * oldest payload first. A receiver that fails is retried with exponential
 * backoff (1 s doubling, at most 5 intervals and 5 minutes) or after its
 * Retry-After (429, 503; at most 15 minutes); meanwhile new passes queue
 * up to push-queue payloads per target and the oldest is dropped, counted
 * and logged: a receiver that is down costs push-queue payloads of memory.
 * A 4xx other than 429 is the payload's fault: it is dropped, not retried.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/common/log.h"
#include "daemon/metrics/expo.h"
#include "daemon/push/push.h"
#include "util/clock.h"

#define logline(...) daemon_log("sockdiag-exporter", __VA_ARGS__)
#define RETRY_AFTER_MAX_MS (15 * 60 * 1000)

struct batch {
	struct batch *next;
	size_t len, samples;
	uint8_t body[];
};

struct target {
	const char *name;		/* the log's and the label's */
	bool otlp;
	const char *url;
	const char *headers[4];
	struct batch *head, *tail;
	size_t n, bytes;
	int64_t retry_at;		/* CLOCK_MONOTONIC ms */
	uint32_t backoff_ms;
	unsigned fails;			/* in a row */
	uint64_t ok, failed, dropped_samples, dropped_at_fail;
};

struct pusher {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop, started;
	pthread_t th;
	struct push_config conf;	/* a copy: the reloads keep theirs */
	struct target t[2];
	size_t n_t;
	struct push_client *client;
	push_collect_fn collect;
	void *ctx;
	struct push_ident id;
	char host[256];
};

static const char *env2(const char *a, const char *b)
{
	const char *v = getenv(a);

	return v && *v ? v : getenv(b);
}

void push_ident_env(struct push_ident *id, char *host, size_t hostlen)
{
	memset(id, 0, sizeof(*id));
	if (gethostname(host, hostlen) < 0 || !host[0])
		snprintf(host, hostlen, "localhost");
	host[hostlen - 1] = 0;
	id->host = host;
	/* The Downward API's usual names (fieldRef spec.nodeName, metadata.name,
	 * metadata.namespace, metadata.uid), K8S_* first. */
	id->node = env2("K8S_NODE_NAME", "NODE_NAME");
	id->pod = env2("K8S_POD_NAME", "POD_NAME");
	id->pod_ns = env2("K8S_NAMESPACE_NAME", "POD_NAMESPACE");
	id->pod_uid = env2("K8S_POD_UID", "POD_UID");
	id->version = SOCKDIAG_PUSH_VERSION;
	id->start_ms = (int64_t)real_ms();
}

static int dup_config(struct push_config *d, const struct push_config *s)
{
	*d = *s;
	d->rw_url = s->rw_url ? strdup(s->rw_url) : NULL;
	d->otlp_url = s->otlp_url ? strdup(s->otlp_url) : NULL;
	for (size_t i = 0; i < s->n_headers; i++)
		d->headers[i] = strdup(s->headers[i]);
	if ((s->rw_url && !d->rw_url) || (s->otlp_url && !d->otlp_url))
		return -ENOMEM;
	for (size_t i = 0; i < s->n_headers; i++)
		if (!d->headers[i])
			return -ENOMEM;
	return 0;
}

int pusher_new(struct pusher **ret, const struct push_config *c, push_collect_fn collect,
	       void *ctx, char *err, size_t errlen)
{
	struct pusher *p = calloc(1, sizeof(*p));
	int r;

	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->collect = collect;
	p->ctx = ctx;
	push_ident_env(&p->id, p->host, sizeof(p->host));
	r = dup_config(&p->conf, c);
	if (r < 0) {
		snprintf(err, errlen, "%s", strerror(-r));
		goto fail;
	}
	if (p->conf.rw_url)
		p->t[p->n_t++] = (struct target){
			.name = "remote_write", .url = p->conf.rw_url,
			.headers = { "Content-Encoding: snappy", "Content-Type: application/x-protobuf",
				     "X-Prometheus-Remote-Write-Version: 0.1.0", NULL },
		};
	if (p->conf.otlp_url) {
		struct target *t = &p->t[p->n_t++];

		*t = (struct target){ .name = "otlp", .otlp = true, .url = p->conf.otlp_url };
		t->headers[0] = p->conf.otlp_json ? "Content-Type: application/json"
						  : "Content-Type: application/x-protobuf";
		t->headers[1] = p->conf.otlp_gzip ? "Content-Encoding: gzip" : NULL;
	}
	r = push_client_new(&p->client, err, errlen);
	if (r < 0)
		goto fail;
	*ret = p;
	return 0;
fail:
	pusher_free(p);
	return r;
}

static void drop_head(struct target *t)
{
	struct batch *b = t->head;

	t->head = b->next;
	if (!t->head)
		t->tail = NULL;
	t->n--;
	t->bytes -= b->len;
	free(b);
}

/* The pass encoded for one target. */
static int encode(struct pusher *p, const struct target *t, const struct pm *m,
		  struct batch **ret)
{
	uint8_t *raw = NULL, *z = NULL;
	size_t len = 0, zlen = 0, samples = 0;
	struct batch *b;
	int r;

	if (t->otlp)
		r = otlp_encode(m, &p->id, p->conf.otlp_json, &raw, &len, &samples);
	else
		r = rw_encode(m, &p->id, &raw, &len, &samples);
	if (r == 0 && !t->otlp)
		r = push_snappy(p->client, raw, len, &z, &zlen);
	else if (r == 0 && p->conf.otlp_gzip)
		r = push_gzip(raw, len, &z, &zlen);
	if (r < 0)
		goto out;
	if (z) {
		free(raw);
		raw = z;
		len = zlen;
	}
	b = malloc(sizeof(*b) + len);
	if (!b) {
		r = -ENOMEM;
		goto out;
	}
	b->next = NULL;
	b->len = len;
	b->samples = samples;
	memcpy(b->body, raw, len);
	*ret = b;
out:
	free(raw);
	return r;
}

/* A pass, parsed. */
static int collect(struct pusher *p, struct pm *m)
{
	char *body = NULL;
	size_t len = 0;
	unsigned line;
	int r = p->collect(p->ctx, &body, &len);

	if (r < 0)
		return r;
	r = pm_parse(body, (int64_t)real_ms(), m, &line);
	if (r == -EINVAL)
		logline("push: the exposition's line %u does not parse; nothing pushed", line);
	return r;
}

static void enqueue(struct pusher *p)
{
	struct batch *b[2] = { NULL, NULL };
	struct pm m;
	int r = collect(p, &m);

	if (r < 0) {
		logline("push: no pass to push: %s", strerror(-r));
		return;
	}
	for (size_t i = 0; i < p->n_t; i++) {
		r = encode(p, &p->t[i], &m, &b[i]);
		if (r < 0)
			logline("push %s: cannot encode: %s", p->t[i].name, strerror(-r));
	}
	pm_free(&m);
	pthread_mutex_lock(&p->mu);
	for (size_t i = 0; i < p->n_t; i++) {
		struct target *t = &p->t[i];

		if (!b[i])
			continue;
		if (t->n == p->conf.queue) {
			t->dropped_samples += t->head->samples;
			logline("push %s: queue full (%zu payloads, %zu KiB): dropped the oldest "
				"(%zu samples; %llu dropped in all)",
				t->name, t->n, (t->bytes + 1023) / 1024, t->head->samples,
				(unsigned long long)t->dropped_samples);
			drop_head(t);
		}
		if (t->tail)
			t->tail->next = b[i];
		else
			t->head = b[i];
		t->tail = b[i];
		t->n++;
		t->bytes += b[i]->len;
	}
	pthread_mutex_unlock(&p->mu);
}

static bool accepted(long status)
{
	return status >= 200 && status < 300;
}

/* Send the target's oldest payload; called without p->mu, which guards the
 * queue's links and the counters (the thread alone adds and removes). */
static void send_head(struct pusher *p, struct target *t)
{
	struct batch *b = t->head;
	uint32_t max = p->conf.interval_ms * 5, wait;
	struct push_reply rep;
	int64_t now;

	if (push_post(p->client, t->url, t->headers, &p->conf, b->body, b->len, &rep) < 0)
		rep.status = 0, snprintf(rep.err, sizeof(rep.err), "out of memory");
	now = (int64_t)mono_ms();
	pthread_mutex_lock(&p->mu);
	if (accepted(rep.status)) {
		t->ok++;
		if (t->fails)
			logline("push %s: accepted again (HTTP %ld) after %u failed attempts; %llu "
				"samples dropped meanwhile",
				t->name, rep.status, t->fails,
				(unsigned long long)(t->dropped_samples - t->dropped_at_fail));
		t->fails = 0;
		t->backoff_ms = 0;
		t->retry_at = 0;
		drop_head(t);
		pthread_mutex_unlock(&p->mu);
		return;
	}
	t->failed++;
	if (!t->fails++)
		t->dropped_at_fail = t->dropped_samples;
	if (rep.status >= 400 && rep.status < 500 && rep.status != 429) {
		/* The receiver refuses this payload: sending it again would not help. */
		t->dropped_samples += b->samples;
		logline("push %s: refused (HTTP %ld: %s); dropped the payload (%zu samples)",
			t->name, rep.status, rep.err, b->samples);
		drop_head(t);
		pthread_mutex_unlock(&p->mu);
		return;
	}
	if (max > 300000)
		max = 300000;
	if (max < 1000)
		max = 1000;
	t->backoff_ms = t->backoff_ms ? t->backoff_ms * 2 : 1000;
	if (t->backoff_ms > max)
		t->backoff_ms = max;
	wait = t->backoff_ms;
	if (rep.retry_after_ms >= 0)
		wait = rep.retry_after_ms > RETRY_AFTER_MAX_MS ? RETRY_AFTER_MAX_MS
							       : (uint32_t)rep.retry_after_ms;
	t->retry_at = now + wait;
	if (t->fails == 1) {
		if (rep.status)
			logline("push %s: HTTP %ld%s%s; retrying in %u ms%s", t->name, rep.status,
				rep.err[0] ? ": " : "", rep.err, wait,
				rep.retry_after_ms >= 0 ? " (Retry-After)" : ", backing off");
		else
			logline("push %s: no answer: %s; retrying in %u ms, backing off", t->name,
				rep.err, wait);
	}
	pthread_mutex_unlock(&p->mu);
}

static void *run(void *arg)
{
	struct pusher *p = arg;
	int64_t next = (int64_t)mono_ms();

	pthread_mutex_lock(&p->mu);
	while (!p->stop) {
		int64_t now = (int64_t)mono_ms(), until = next;
		bool sent = false;

		/* The queues first: a receiver back after an outage gets the backlog
		 * (at most push-queue payloads) before the next pass is queued behind
		 * it, else a queue that was full would stay full. */
		for (size_t i = 0; i < p->n_t && !p->stop; i++) {
			struct target *t = &p->t[i];

			if (!t->head || t->retry_at > now)
				continue;
			pthread_mutex_unlock(&p->mu);
			send_head(p, t);
			pthread_mutex_lock(&p->mu);
			sent = true;
		}
		if (sent)
			continue;
		if (now >= next) {
			pthread_mutex_unlock(&p->mu);
			enqueue(p);
			pthread_mutex_lock(&p->mu);
			next += p->conf.interval_ms;
			if (next <= now)
				next = now + p->conf.interval_ms;
			continue;
		}
		for (size_t i = 0; i < p->n_t; i++)
			if (p->t[i].head && p->t[i].retry_at < until)
				until = p->t[i].retry_at;
		if (until > now) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);	/* the condition's clock */
			ts = ts_from_ns(ts_ns(&ts) + (uint64_t)(until - now) * 1000000u);
			pthread_cond_timedwait(&p->cv, &p->mu, &ts);
		}
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int pusher_start(struct pusher *p)
{
	int r = pthread_create(&p->th, NULL, run, p);

	if (r)
		return -r;
	p->started = true;
	return 0;
}

int pusher_once(struct pusher *p)
{
	int status = 0;
	struct pm m;
	int r = collect(p, &m);

	if (r < 0) {
		fprintf(stderr, "sockdiag exporter: %s\n", strerror(-r));
		return 1;
	}
	for (size_t i = 0; i < p->n_t; i++) {
		struct target *t = &p->t[i];
		struct batch *b = NULL;
		struct push_reply rep;

		r = encode(p, t, &m, &b);
		if (r == 0)
			r = push_post(p->client, t->url, t->headers, &p->conf, b->body, b->len,
				      &rep);
		free(b);
		if (r < 0) {
			fprintf(stderr, "sockdiag exporter: push %s: %s\n", t->name, strerror(-r));
			status = status ? status : 1;
		} else if (!rep.status) {
			fprintf(stderr, "sockdiag exporter: push %s: no answer: %s\n", t->name,
				rep.err);
			status = PUSH_EXIT_UNREACHABLE;
		} else if (!accepted(rep.status)) {
			fprintf(stderr, "sockdiag exporter: push %s: refused: HTTP %ld%s%s\n",
				t->name, rep.status, rep.err[0] ? ": " : "", rep.err);
			if (status != PUSH_EXIT_UNREACHABLE)
				status = PUSH_EXIT_REFUSED;
		}
	}
	pm_free(&m);
	return status;
}

void pusher_free(struct pusher *p)
{
	if (!p)
		return;
	if (p->started) {
		pthread_mutex_lock(&p->mu);
		p->stop = true;
		pthread_cond_signal(&p->cv);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->th, NULL);	/* a send under way: at most push-timeout */
	}
	for (size_t i = 0; i < p->n_t; i++)
		while (p->t[i].head)
			drop_head(&p->t[i]);
	push_client_free(p->client);
	push_config_fini(&p->conf);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

int pusher_render(struct pusher *p, bool openmetrics, char **body, size_t *len)
{
	struct expo o;
	size_t keep = *len;
	char *nb;
	size_t nl;
	int r;

	if (!p)
		return 0;
	if (openmetrics && keep >= 6 && !memcmp(*body + keep - 6, "# EOF\n", 6))
		keep -= 6;
	if (expo_open(&o, openmetrics) < 0)
		return -ENOMEM;
	fwrite(*body, 1, keep, o.f);
	pthread_mutex_lock(&p->mu);
	expo_family(&o, "sockdiag_push_requests", "counter",
		    "Pushes sent, by target and result (ok: a 2xx answer).");
	for (size_t i = 0; i < p->n_t; i++)
		fprintf(o.f,
			"sockdiag_push_requests_total{target=\"%s\",result=\"ok\"} %llu\n"
			"sockdiag_push_requests_total{target=\"%s\",result=\"failed\"} %llu\n",
			p->t[i].name, (unsigned long long)p->t[i].ok, p->t[i].name,
			(unsigned long long)p->t[i].failed);
	expo_family(&o, "sockdiag_push_dropped_samples", "counter",
		    "Samples never delivered: the queue was full, or the receiver refused them.");
	for (size_t i = 0; i < p->n_t; i++)
		fprintf(o.f, "sockdiag_push_dropped_samples_total{target=\"%s\"} %llu\n",
			p->t[i].name, (unsigned long long)p->t[i].dropped_samples);
	expo_family(&o, "sockdiag_push_queue_payloads", "gauge",
		    "Payloads waiting for the receiver (at most push-queue).");
	for (size_t i = 0; i < p->n_t; i++)
		fprintf(o.f, "sockdiag_push_queue_payloads{target=\"%s\"} %zu\n", p->t[i].name,
			p->t[i].n);
	expo_family(&o, "sockdiag_push_queue_bytes", "gauge",
		    "Bytes of the payloads waiting for the receiver.");
	for (size_t i = 0; i < p->n_t; i++)
		fprintf(o.f, "sockdiag_push_queue_bytes{target=\"%s\"} %zu\n", p->t[i].name,
			p->t[i].bytes);
	pthread_mutex_unlock(&p->mu);
	r = expo_close(&o, &nb, &nl);
	if (r < 0)
		return r;
	free(*body);
	*body = nb;
	*len = nl;
	return 0;
}
