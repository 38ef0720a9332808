// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * OTLP/HTTP metrics (opentelemetry/proto/collector/metrics/v1): one
 * ResourceMetrics (host.name, the k8s.* the environment gives, service.name),
 * one ScopeMetrics ("sockdiag"), one Metric per family. Encoded once, by one
 * walk, as protobuf or as OTLP's JSON (lowerCamelCase keys, 64-bit integers
 * as strings, enums as numbers): each writer call names both the field
 * number and the JSON key.
 *
 * Types: gauge -> Gauge; counter -> Sum (monotonic, cumulative, started when
 * the exporter did); histogram -> Histogram (cumulative); gaugehistogram ->
 * Histogram, cumulative from the pass (start = time: the distribution of the
 * sockets open then, not an accumulation). Names and attributes: the table
 * below and sockdiag(8), PUSH.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/push/pb.h"
#include "daemon/push/push.h"

/* Prometheus name -> OTLP name where a semantic convention exists. */
static const struct {
	const char *prom, *otlp, *unit;
} semconv[] = {
	{ "sockdiag_sockets", "system.network.connection.count", "{connection}" },
};

/* Label -> attribute key (semantic conventions), and values renamed. */
static const struct {
	const char *label, *key;
} attrs[] = {
	{ "proto", "network.transport" },
	{ "family", "network.type" },
	{ "state", "network.connection.state" },
	{ "port", "network.local.port" },
	{ "address", "network.local.address" },
	{ "local_address", "network.local.address" },
	{ "peer_address", "network.peer.address" },
	{ "peer_port", "network.peer.port" },
};

static const struct {
	const char *label, *from, *to;
} values[] = {
	{ "family", "inet", "ipv4" },
	{ "family", "inet6", "ipv6" },
	{ "state", "syn_recv", "syn_received" },
	{ "state", "fin_wait1", "fin_wait_1" },
	{ "state", "fin_wait2", "fin_wait_2" },
};

/* Unit suffixes: left out of the name, said as the unit (UCUM). Nouns that
 * count stay in the name and give an annotation. */
static const struct {
	const char *suffix, *unit;
	bool strip;
} units[] = {
	{ "_seconds", "s", true }, { "_bytes", "By", true }, { "_sockets", "{socket}", false },
	{ "_segments", "{segment}", false }, { "_length", "{connection}", false },
	{ "_limit", "{connection}", false },
};

const char *otlp_attr_key(const char *label)
{
	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
		if (!strcmp(attrs[i].label, label))
			return attrs[i].key;
	return NULL;	/* sockdiag.LABEL */
}

static const char *attr_value(const char *label, const char *v)
{
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		if (!strcmp(values[i].label, label) && !strcmp(values[i].from, v))
			return values[i].to;
	return v;
}

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n >= k && !memcmp(s + n - k, suffix, k);
}

void otlp_metric_name(const char *prom, enum pm_type t, char *name, size_t len,
		      const char **unit)
{
	const char *rest = prom;
	size_t n;

	(void)t;
	for (size_t i = 0; i < sizeof(semconv) / sizeof(semconv[0]); i++)
		if (!strcmp(semconv[i].prom, prom)) {
			snprintf(name, len, "%s", semconv[i].otlp);
			*unit = semconv[i].unit;
			return;
		}
	if (!strncmp(rest, "sockdiag_", 9))
		rest += 9;
	n = strlen(rest);
	*unit = "1";
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (ends_with(rest, n, units[i].suffix)) {
			*unit = units[i].unit;
			if (units[i].strip)
				n -= strlen(units[i].suffix);
			break;
		}
	snprintf(name, len, "sockdiag.%.*s", (int)n, rest);
}

/* ---- one writer, two encodings -------------------------------------------------------- */

#define DEPTH 16

struct out {
	bool json;
	struct pb pb;
	FILE *f;
	bool more[DEPTH];	/* JSON: a member was written at this level */
	unsigned depth;
};

static void key(struct out *o, const char *k)
{
	if (o->more[o->depth])
		fputc(',', o->f);
	o->more[o->depth] = true;
	if (k)
		fprintf(o->f, "\"%s\":", k);
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* A nested message (k NULL: an element of the array opened with arr). */
static size_t begin(struct out *o, unsigned field, const char *k)
{
	if (!o->json)
		return pb_begin(&o->pb, field);
	key(o, k);
	fputc('{', o->f);
	if (o->depth + 1 < DEPTH)
		o->more[++o->depth] = false;
	return 0;
}

static void end(struct out *o, size_t mark)
{
	if (!o->json)
		return pb_end(&o->pb, mark);
	fputc('}', o->f);
	o->depth--;
}

/* A repeated field: JSON's array around the elements; nothing in protobuf. */
static void arr(struct out *o, const char *k)
{
	if (!o->json)
		return;
	key(o, k);
	fputc('[', o->f);
	o->more[++o->depth] = false;
}

static void arr_end(struct out *o)
{
	if (!o->json)
		return;
	fputc(']', o->f);
	o->depth--;
}

static void str(struct out *o, unsigned field, const char *k, const char *v)
{
	if (!o->json)
		return pb_string(&o->pb, field, v);
	key(o, k);
	json_str(o->f, v);
}

/* enum, uint32, bool: a JSON number (true/false for a bool). */
static void num(struct out *o, unsigned field, const char *k, uint64_t v, bool boolean)
{
	if (!o->json)
		return pb_varint(&o->pb, field, v);
	key(o, k);
	if (boolean)
		fputs(v ? "true" : "false", o->f);
	else
		fprintf(o->f, "%llu", (unsigned long long)v);
}

/* fixed64, sfixed64 (signed): JSON strings. */
static void fixed(struct out *o, unsigned field, const char *k, uint64_t v, bool is_signed)
{
	if (!o->json)
		return pb_fixed64(&o->pb, field, v);
	key(o, k);
	if (is_signed)
		fprintf(o->f, "\"%lld\"", (long long)v);
	else
		fprintf(o->f, "\"%llu\"", (unsigned long long)v);
}

static void json_double(FILE *f, double v)
{
	if (isnan(v))
		fputs("\"NaN\"", f);
	else if (isinf(v))
		fputs(v > 0 ? "\"Infinity\"" : "\"-Infinity\"", f);
	else
		fprintf(f, "%.17g", v);
}

static void dbl(struct out *o, unsigned field, const char *k, double v)
{
	if (!o->json)
		return pb_double(&o->pb, field, v);
	key(o, k);
	json_double(o->f, v);
}

static void packed_u64(struct out *o, unsigned field, const char *k, const uint64_t *v, size_t n)
{
	if (!o->json)
		return pb_packed_fixed64(&o->pb, field, v, n);
	arr(o, k);
	for (size_t i = 0; i < n; i++) {
		key(o, NULL);
		fprintf(o->f, "\"%llu\"", (unsigned long long)v[i]);
	}
	arr_end(o);
}

static void packed_dbl(struct out *o, unsigned field, const char *k, const double *v, size_t n)
{
	if (!o->json)
		return pb_packed_double(&o->pb, field, v, n);
	arr(o, k);
	for (size_t i = 0; i < n; i++) {
		key(o, NULL);
		json_double(o->f, v[i]);
	}
	arr_end(o);
}

/* KeyValue { string key = 1; AnyValue value = 2; }, AnyValue { string_value = 1;
 * int_value = 3; }, as the element field of a repeated attributes field. */
static void kv(struct out *o, unsigned field, const char *k, const char *v, bool integer)
{
	size_t m = begin(o, field, NULL), a;

	str(o, 1, "key", k);
	a = begin(o, 2, "value");
	if (!integer) {
		str(o, 1, "stringValue", v);
	} else if (!o->json) {
		pb_varint(&o->pb, 3, strtoull(v, NULL, 10));
	} else {
		key(o, "intValue");
		json_str(o->f, v);
	}
	end(o, a);
	end(o, m);
}

/* A port label with a number (an int attribute); "other" (a cap's
 * remainder) stays a string. */
static bool is_port(const char *label, const char *v)
{
	if (strcmp(label, "port") && strcmp(label, "peer_port"))
		return false;
	if (!*v || strlen(v) > 5)
		return false;
	for (; *v; v++)
		if (*v < '0' || *v > '9')
			return false;
	return true;
}

/* The attributes of a sample (field: 7 in NumberDataPoint, 9 in
 * HistogramDataPoint), le left out. */
static void attributes(struct out *o, unsigned field, const struct pm *m,
		       const struct pm_sample *s)
{
	char buf[128];

	arr(o, "attributes");
	for (size_t i = 0; i < s->n_labels; i++) {
		const struct pm_label *l = &m->labels[s->label0 + i];
		const char *k = otlp_attr_key(l->name);

		/* An empty value is no label to Prometheus: no attribute either. */
		if (!strcmp(l->name, "le") || !l->value[0])
			continue;
		/* network.type is ipv4 or ipv6: unix, netlink... keep sockdiag's key. */
		if (!k || (!strcmp(l->name, "family") && strncmp(l->value, "inet", 4))) {
			snprintf(buf, sizeof(buf), "sockdiag.%s", l->name);
			k = buf;
		}
		kv(o, field, k, attr_value(l->name, l->value), is_port(l->name, l->value));
	}
	arr_end(o);
}

/* ---- metrics ------------------------------------------------------------------------ */

static uint64_t ns(int64_t ms)
{
	return (uint64_t)ms * 1000000u;
}

/* NumberDataPoint { attributes = 7; start_time_unix_nano = 2; time_unix_nano = 3;
 * as_double = 4; as_int = 6 (sfixed64) } */
static void number_point(struct out *o, const struct pm *m, const struct pm_sample *s,
			 int64_t start_ms, bool integer)
{
	size_t mk = begin(o, 1, NULL);

	attributes(o, 7, m, s);
	if (start_ms >= 0)
		fixed(o, 2, "startTimeUnixNano", ns(start_ms), false);
	fixed(o, 3, "timeUnixNano", ns(m->time_ms), false);
	if (integer)
		fixed(o, 6, "asInt", (uint64_t)(int64_t)s->value, true);
	else
		dbl(o, 4, "asDouble", s->value);
	end(o, mk);
}

/* A count as exposed: NaN and negatives 0, past 2^64 saturated (a cast would
 * be undefined). */
static uint64_t count_of(double v)
{
	if (!(v > 0))
		return 0;
	return v < 18446744073709551616.0 ? (uint64_t)v : UINT64_MAX;
}

static bool same_labels(const struct pm *m, const struct pm_sample *a, const struct pm_sample *b)
{
	for (size_t i = 0; i < a->n_labels; i++) {
		const struct pm_label *l = &m->labels[a->label0 + i];
		const char *v;

		if (!strcmp(l->name, "le"))
			continue;
		v = pm_label(m, b, l->name);
		if (!v || strcmp(v, l->value))
			return false;
	}
	return true;
}

#define MAX_BUCKETS 64

/* One HistogramDataPoint from the run of _bucket samples at s[0..] and the
 * family's _sum/_gsum and _count/_gcount with the same labels: { attributes = 9;
 * start = 2; time = 3; count = 4; sum = 5; bucket_counts = 6 (not cumulative);
 * explicit_bounds = 7 }. Returns the samples of the run. */
static size_t histogram_point(struct out *o, const struct pm *m, const struct pm_family *f,
			      size_t first, int64_t start_ms)
{
	const struct pm_sample *s = &m->samples[first], *end_s = &m->samples[f->sample0 + f->n_samples];
	uint64_t counts[MAX_BUCKETS], prev = 0, count = 0;
	double bounds[MAX_BUCKETS], sum = 0;
	size_t n = 0, nb = 0, mk;

	for (; s + n < end_s && n < MAX_BUCKETS; n++) {
		const struct pm_sample *b = s + n;
		size_t len = strlen(b->name);
		const char *le;

		if (len < 7 || strcmp(b->name + len - 7, "_bucket") || !same_labels(m, s, b))
			break;
		le = pm_label(m, b, "le");
		counts[n] = count_of(b->value) - prev;
		prev = count_of(b->value);
		if (le && strcmp(le, "+Inf"))
			bounds[nb++] = strtod(le, NULL);
	}
	count = prev;
	for (const struct pm_sample *x = &m->samples[f->sample0]; x < end_s; x++) {
		size_t len = strlen(x->name);

		if ((ends_with(x->name, len, "_sum") || ends_with(x->name, len, "_gsum")) &&
		    same_labels(m, s, x) && x->n_labels == s->n_labels - 1)
			sum = x->value;
	}
	mk = begin(o, 1, NULL);
	attributes(o, 9, m, s);
	fixed(o, 2, "startTimeUnixNano", ns(start_ms), false);
	fixed(o, 3, "timeUnixNano", ns(m->time_ms), false);
	fixed(o, 4, "count", count, false);
	dbl(o, 5, "sum", sum);
	packed_u64(o, 6, "bucketCounts", counts, n);
	packed_dbl(o, 7, "explicitBounds", bounds, nb);
	end(o, mk);
	return n ? n : 1;
}

static void metric(struct out *o, const struct pm *m, const struct pm_family *f,
		   const struct push_ident *id)
{
	char name[160];
	const char *unit;
	size_t mk, data, len = strlen(f->name);
	bool hist = f->type == PM_HISTOGRAM || f->type == PM_GAUGEHISTOGRAM;
	bool updown = !strcmp(f->name, "sockdiag_sockets");
	bool integer = !ends_with(f->name, len, "_seconds");

	/* One value type per metric: as_int when every value is a whole number
	 * (within 2^53, checked before the conversion, which is undefined past it). */
	for (size_t i = f->sample0; i < f->sample0 + f->n_samples && integer; i++)
		integer = fabs(m->samples[i].value) < 9007199254740992.0 &&
			  m->samples[i].value == (double)(int64_t)m->samples[i].value;

	otlp_metric_name(f->name, f->type, name, sizeof(name), &unit);
	mk = begin(o, 2, NULL);
	str(o, 1, "name", name);
	str(o, 2, "description", f->help);
	str(o, 3, "unit", unit);
	if (f->type == PM_COUNTER || updown)
		data = begin(o, 7, "sum");	/* Sum */
	else if (hist)
		data = begin(o, 9, "histogram");
	else
		data = begin(o, 5, "gauge");
	arr(o, "dataPoints");
	for (size_t i = f->sample0; i < f->sample0 + f->n_samples;) {
		const struct pm_sample *s = &m->samples[i];
		size_t l = strlen(s->name);

		if (!hist) {
			number_point(o, m, s, f->type == PM_COUNTER || updown ? id->start_ms : -1,
				     integer);
			i++;
		} else if (ends_with(s->name, l, "_bucket")) {
			i += histogram_point(o, m, f, i, f->type == PM_GAUGEHISTOGRAM
							     ? m->time_ms : id->start_ms);
		} else {
			i++;	/* _sum, _count: in the bucket run's point */
		}
	}
	arr_end(o);
	if (f->type == PM_COUNTER) {
		num(o, 2, "aggregationTemporality", 2, false);	/* CUMULATIVE */
		num(o, 3, "isMonotonic", 1, true);
	} else if (updown || hist) {
		num(o, 2, "aggregationTemporality", 2, false);	/* an UpDownCounter: not monotonic */
	}
	end(o, data);
	end(o, mk);
}

static void resource(struct out *o, const struct push_ident *id)
{
	const struct {
		const char *k, *v;
	} r[] = {
		{ "service.name", "sockdiag-exporter" }, { "service.version", id->version },
		{ "host.name", id->host },		  { "k8s.node.name", id->node },
		{ "k8s.namespace.name", id->pod_ns },	  { "k8s.pod.name", id->pod },
		{ "k8s.pod.uid", id->pod_uid },
	};
	size_t mk = begin(o, 1, "resource");

	arr(o, "attributes");
	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		if (r[i].v && r[i].v[0])
			kv(o, 1, r[i].k, r[i].v, false);
	arr_end(o);
	end(o, mk);
}

/* ExportMetricsServiceRequest { repeated ResourceMetrics resource_metrics = 1; }
 * ResourceMetrics { Resource resource = 1; repeated ScopeMetrics scope_metrics = 2; }
 * ScopeMetrics { InstrumentationScope scope = 1; repeated Metric metrics = 2; }
 * Metric { name = 1; description = 2; unit = 3; gauge = 5; sum = 7; histogram = 9; } */
int otlp_encode(const struct pm *m, const struct push_ident *id, bool json, uint8_t **ret,
		size_t *ret_len, size_t *ret_points)
{
	struct out o = { .json = json };
	char *buf = NULL;
	size_t len = 0, rm, sm, sc;

	pb_init(&o.pb);
	if (json) {
		o.f = open_memstream(&buf, &len);
		if (!o.f)
			return -ENOMEM;
		fputc('{', o.f);
	}
	arr(&o, "resourceMetrics");
	rm = begin(&o, 1, NULL);
	resource(&o, id);
	arr(&o, "scopeMetrics");
	sm = begin(&o, 2, NULL);
	sc = begin(&o, 1, "scope");
	str(&o, 1, "name", "sockdiag");
	str(&o, 2, "version", id->version);
	end(&o, sc);
	arr(&o, "metrics");
	for (size_t i = 0; i < m->n_fams; i++)
		if (m->fams[i].n_samples)
			metric(&o, m, &m->fams[i], id);
	arr_end(&o);
	end(&o, sm);
	arr_end(&o);
	end(&o, rm);
	arr_end(&o);
	*ret_points = m->n_samples;
	if (!json)
		return pb_finish(&o.pb, ret, ret_len);
	fputc('}', o.f);
	if (fclose(o.f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	*ret = (uint8_t *)buf;
	*ret_len = len;
	return 0;
}
