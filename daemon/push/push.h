/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Push: the exporter's metrics sent to a receiver instead of (besides)
 * being scraped. One model, two encoders: a pass is rendered as the scrape
 * renders it (the OpenMetrics exposition, exporter_render.c), parsed back
 * into samples (model.c), and encoded as a Prometheus remote-write 1.0
 * WriteRequest (rw.c: protobuf, snappy) or an OTLP/HTTP
 * ExportMetricsServiceRequest (otlp.c: protobuf or JSON, gzip), so every
 * series pushed is a series scraped, whatever metrics the renderer grows.
 *
 *   pb.c       the protobuf wire format (writing)
 *   model.c    OpenMetrics text -> families and samples
 *   rw.c       samples -> remote write
 *   otlp.c     samples -> OTLP (names: the mapping table of sockdiag(8))
 *   client.c   HTTP POST (libcurl), snappy, gzip; libcurl and libsnappy are
 *              loaded with dlopen() when a push target is configured
 *   push.c     the pusher: interval, bounded queue, backoff, Retry-After,
 *              self-metrics; --once
 *   conf.c     the push keys of exporter.conf
 */
#ifndef SOCKDIAG_PUSH_H
#define SOCKDIAG_PUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct conf_line;

/* ---- configuration (conf.c) --------------------------------------------------- */

#define PUSH_MAX_HEADERS 16

struct push_config {
	char *rw_url;			/* remote-write-url */
	char *otlp_url;			/* otlp-endpoint, /v1/metrics added to a bare host */
	bool otlp_json;			/* otlp-format = json */
	bool otlp_gzip;			/* otlp-compression = gzip */
	uint32_t interval_ms;		/* push-interval */
	uint32_t timeout_ms;		/* push-timeout */
	uint32_t queue;			/* push-queue: batches kept per target */
	char *headers[PUSH_MAX_HEADERS];	/* push-header, "Name: value" */
	size_t n_headers;
};

void push_config_init(struct push_config *c);
void push_config_fini(struct push_config *c);
/* Takes key if it is a push key: 1 (not one), 0, or -EINVAL after conf_fail. */
int push_config_key(struct push_config *c, struct conf_line *l, const char *key, char *value);
/* A URL for --remote-write / --otlp / the keys: NULL, or why not. */
const char *push_url_check(const char *url);
/* Set a target's URL (otlp: /v1/metrics added to a URL without a path). */
int push_config_url(struct push_config *c, bool otlp, const char *url);
bool push_configured(const struct push_config *c);

/* ---- the model (model.c) ----------------------------------------------------------- */

enum pm_type { PM_UNKNOWN, PM_GAUGE, PM_COUNTER, PM_HISTOGRAM, PM_GAUGEHISTOGRAM };

struct pm_label {
	const char *name, *value;	/* value unescaped: what a scraper reads */
};

struct pm_sample {
	const char *name;		/* as exposed: x, x_total, x_bucket, x_gsum... */
	size_t label0, n_labels;	/* in pm.labels */
	double value;
};

struct pm_family {
	const char *name, *help;
	enum pm_type type;
	size_t sample0, n_samples;	/* in pm.samples */
};

struct pm {
	char *text;			/* the exposition, cut into the strings */
	struct pm_family *fams;
	size_t n_fams;
	struct pm_sample *samples;
	size_t n_samples;
	struct pm_label *labels;
	size_t n_labels;
	int64_t time_ms;		/* CLOCK_REALTIME of the samples */
};

/* Parse an OpenMetrics exposition (text, NUL-terminated, taken over: freed
 * by pm_free, also on failure). Returns 0, -EINVAL (*line: the bad line,
 * 1-based) or -ENOMEM. */
int pm_parse(char *text, int64_t time_ms, struct pm *ret, unsigned *line);
void pm_free(struct pm *m);
/* The value of label name of sample s, or NULL. */
const char *pm_label(const struct pm *m, const struct pm_sample *s, const char *name);

/* ---- encoders (rw.c, otlp.c) --------------------------------------------------------- */

/* Labels every remote-written series gets (job, instance), sorted in. */
struct push_ident {
	const char *host;		/* host.name, instance */
	const char *node, *pod, *pod_ns, *pod_uid;	/* k8s.*, NULL when not given */
	const char *version;		/* the scope's version */
	int64_t start_ms;		/* the counters' start time */
};

/* Fill id from the environment (see sockdiag(8), PUSH); host is a buffer. */
void push_ident_env(struct push_ident *id, char *host, size_t hostlen);

/* The WriteRequest, uncompressed. Returns 0 with *ret (malloc'd). */
int rw_encode(const struct pm *m, const struct push_ident *id, uint8_t **ret, size_t *ret_len,
	      size_t *ret_samples);
/* The ExportMetricsServiceRequest, protobuf or JSON. */
int otlp_encode(const struct pm *m, const struct push_ident *id, bool json, uint8_t **ret,
		size_t *ret_len, size_t *ret_points);
/* The OTLP name, unit and attribute key of a Prometheus metric / label. */
void otlp_metric_name(const char *prom, enum pm_type t, char *name, size_t len,
		      const char **unit);
const char *otlp_attr_key(const char *label);

/* ---- HTTP (client.c) --------------------------------------------------------------- */

struct push_client;

struct push_reply {
	long status;			/* HTTP status, 0: no answer */
	int64_t retry_after_ms;		/* -1: none */
	char err[160];			/* why there was no answer / the body's start */
};

/* Load libcurl (and libsnappy / zlib as needed). err says what is missing. */
int push_client_new(struct push_client **ret, char *err, size_t errlen);
void push_client_free(struct push_client *c);
int push_snappy(struct push_client *c, const uint8_t *in, size_t len, uint8_t **ret,
		size_t *ret_len);
int push_gzip(const uint8_t *in, size_t len, uint8_t **ret, size_t *ret_len);
/* POST body to url with the headers (NULL-terminated) and the configured
 * ones; 0 with *r filled (any status), or -ENOMEM. */
int push_post(struct push_client *c, const char *url, const char *const *headers,
	      const struct push_config *conf, const uint8_t *body, size_t len,
	      struct push_reply *r);

/* ---- the pusher (push.c) ---------------------------------------------------------- */

/* The exposition of a new pass, OpenMetrics (exporter.c's shared pass). */
typedef int (*push_collect_fn)(void *ctx, char **ret_body, size_t *ret_len);

struct pusher;

/* Exit statuses of --once with a push target. */
#define PUSH_EXIT_REFUSED 4	/* a receiver answered, not 2xx */
#define PUSH_EXIT_UNREACHABLE 5	/* no answer: connection, DNS, timeout */

int pusher_new(struct pusher **ret, const struct push_config *c, push_collect_fn collect,
	       void *ctx, char *err, size_t errlen);
/* Start the thread (pushes every interval until pusher_free). */
int pusher_start(struct pusher *p);
/* One push to every target, no retry: 0, PUSH_EXIT_REFUSED, PUSH_EXIT_UNREACHABLE or 1. */
int pusher_once(struct pusher *p);
void pusher_free(struct pusher *p);
/* Append the push self-metrics to an exposition (before "# EOF" in
 * OpenMetrics). NULL p: nothing. */
int pusher_render(struct pusher *p, bool openmetrics, char **body, size_t *len);

#endif
