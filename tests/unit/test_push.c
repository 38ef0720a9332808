/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The push's pure parts: protobuf bytes (golden, by hand from the wire format's
 * rules), the exposition read back, the OTLP names, the push keys. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "daemon/exporter/exporter.h"
#include "daemon/push/pb.h"
#include "daemon/push/push.h"

static void expect_bytes(struct pb *p, const uint8_t *want, size_t n)
{
	uint8_t *got;
	size_t len;

	assert_int_equal(pb_finish(p, &got, &len), 0);
	assert_int_equal(len, n);
	assert_memory_equal(got, want, n);
	free(got);
}

static void pb_scalars(void **state)
{
	struct pb p;
	static const uint8_t want[] = {
		0x08, 0xac, 0x02,			/* 1: varint 300 */
		0x10, 0x01,				/* 2: sint64 -1 (zigzag 1) */
		0x18, 0x00,				/* 3: varint 0 */
		0x21, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f,	/* 4: double 1.0 */
		0x29, 0x2a, 0, 0, 0, 0, 0, 0, 0,	/* 5: fixed64 42 */
		0x32, 0x03, 'a', 'b', 'c',		/* 6: string */
		0x80, 0x01, 0x01,			/* 16: varint 1 (two-byte tag) */
		0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, /* 2^64-1 */
	};

	(void)state;
	pb_init(&p);
	pb_varint(&p, 1, 300);
	pb_sint64(&p, 2, -1);
	pb_varint(&p, 3, 0);
	pb_double(&p, 4, 1.0);
	pb_fixed64(&p, 5, 42);
	pb_string(&p, 6, "abc");
	pb_varint(&p, 16, 1);
	pb_varint(&p, 1, UINT64_MAX);
	expect_bytes(&p, want, sizeof(want));
}

/* Nested messages: a short one keeps its one-byte length, a long one (203
 * bytes) moves to make room for two, an empty one is 0. */
static void pb_nested(void **state)
{
	uint8_t want[7 + 3 + 3 + 3 + 200 + 2], x[200];
	struct pb p;
	size_t m, n = 0, inner;

	(void)state;
	memset(x, 'x', sizeof(x));
	pb_init(&p);
	m = pb_begin(&p, 1);
	pb_string(&p, 2, "abc");
	pb_end(&p, m);
	want[n++] = 0x0a, want[n++] = 0x05, want[n++] = 0x12, want[n++] = 0x03;
	memcpy(want + n, "abc", 3), n += 3;
	m = pb_begin(&p, 3);
	inner = pb_begin(&p, 1);
	pb_bytes(&p, 1, x, sizeof(x));
	pb_end(&p, inner);
	pb_end(&p, m);
	/* 3: 206 bytes = 1: (203 bytes = 1: 200 bytes) */
	want[n++] = 0x1a, want[n++] = 0xce, want[n++] = 0x01;
	want[n++] = 0x0a, want[n++] = 0xcb, want[n++] = 0x01;
	want[n++] = 0x0a, want[n++] = 0xc8, want[n++] = 0x01;
	memcpy(want + n, x, sizeof(x)), n += sizeof(x);
	m = pb_begin(&p, 4);
	pb_end(&p, m);
	want[n++] = 0x22, want[n++] = 0x00;
	expect_bytes(&p, want, n);
}

static void pb_packed(void **state)
{
	static const uint8_t want[] = {
		0x32, 0x10, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,
		0x3a, 0x08, 0, 0, 0, 0, 0, 0, 0xe0, 0x3f,	/* 0.5 */
	};
	struct pb p;

	(void)state;
	pb_init(&p);
	pb_packed_fixed64(&p, 6, (const uint64_t[]){ 1, 2 }, 2);
	pb_packed_double(&p, 7, (const double[]){ 0.5 }, 1);
	pb_packed_double(&p, 8, NULL, 0);	/* nothing: an empty packed field is left out */
	expect_bytes(&p, want, sizeof(want));
}

static void model_parse(void **state)
{
	char *text = strdup("# HELP a_b Help text.\n# TYPE a_b gauge\n"
			    "a_b{x=\"q\\\"\\\\\\n\",y=\"\"} 3\na_b 4.5\n"
			    "# HELP c Passes.\n# TYPE c counter\nc_total 5\n"
			    "# TYPE h gaugehistogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\n"
			    "h_gsum 0.5\nh_gcount 2\n# EOF\n");
	struct pm m;
	unsigned line;

	(void)state;
	assert_int_equal(pm_parse(text, 1234, &m, &line), 0);
	assert_int_equal(m.n_fams, 3);
	assert_string_equal(m.fams[0].name, "a_b");
	assert_string_equal(m.fams[0].help, "Help text.");
	assert_int_equal(m.fams[0].type, PM_GAUGE);
	assert_int_equal(m.fams[0].n_samples, 2);
	assert_int_equal(m.fams[1].type, PM_COUNTER);
	assert_int_equal(m.fams[2].type, PM_GAUGEHISTOGRAM);
	assert_int_equal(m.fams[2].n_samples, 4);
	assert_int_equal(m.n_samples, 7);
	assert_string_equal(pm_label(&m, &m.samples[0], "x"), "q\"\\\n");
	assert_string_equal(pm_label(&m, &m.samples[0], "y"), "");
	assert_null(pm_label(&m, &m.samples[1], "x"));
	assert_true(m.samples[1].value == 4.5);
	assert_string_equal(m.samples[2].name, "c_total");
	assert_true(m.samples[4].value == 2);
	assert_int_equal(m.time_ms, 1234);
	pm_free(&m);
}

static void model_errors(void **state)
{
	static const struct {
		const char *text;
		unsigned line;
	} bad[] = {
		{ "a 1\n", 1 },				/* a sample before any family */
		{ "# TYPE a gauge\na{x=1} 2\n", 2 },	/* an unquoted value */
		{ "# TYPE a gauge\na 1x\n", 2 },
		{ "# TYPE a gauge\na{x=\"\\t\"} 1\n", 2 },	/* an escape the format lacks */
		{ "# TYPE a gauge\na{x=\"1\" 1\n", 2 },
		{ "# TYPE a summary\n", 1 },
		{ "# TYPE a gauge\n\n", 2 },
		{ "# FOO a\n", 1 },
		{ "#\n", 1 },		/* (the fuzzer's: read past the line's end) */
		{ "# TYPE a gauge\n#HELP a x\n", 2 },
	};
	struct pm m;
	unsigned line;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(pm_parse(strdup(bad[i].text), 0, &m, &line), -EINVAL);
		assert_int_equal(line, bad[i].line);
	}
}

static void otlp_names(void **state)
{
	static const struct {
		const char *prom, *otlp, *unit;
	} t[] = {
		{ "sockdiag_sockets", "system.network.connection.count", "{connection}" },
		{ "sockdiag_tcp_rtt_seconds", "sockdiag.tcp_rtt", "s" },
		{ "sockdiag_tcp_sent_bytes", "sockdiag.tcp_sent", "By" },
		{ "sockdiag_port_sockets", "sockdiag.port_sockets", "{socket}" },
		{ "sockdiag_tcp_lost_segments", "sockdiag.tcp_lost_segments", "{segment}" },
		{ "sockdiag_scrape_passes", "sockdiag.scrape_passes", "1" },
	};
	char name[128];
	const char *unit;

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		otlp_metric_name(t[i].prom, PM_GAUGE, name, sizeof(name), &unit);
		assert_string_equal(name, t[i].otlp);
		assert_string_equal(unit, t[i].unit);
	}
	assert_string_equal(otlp_attr_key("state"), "network.connection.state");
	assert_null(otlp_attr_key("netns"));
}

static void config_keys(void **state)
{
	struct exp_config c;
	char err[256] = "";

	(void)state;
	assert_int_equal(exp_config_parse(&c, "", err, sizeof(err)), 0);
	assert_false(push_configured(&c.push));
	assert_int_equal(c.push.interval_ms, 60000);
	assert_int_equal(c.push.queue, 5);
	exp_config_fini(&c);
	assert_int_equal(exp_config_parse(&c,
			 "remote-write-url = http://h:9090/api/v1/write\n"
			 "otlp-endpoint = https://collector:4318\n"
			 "push-interval = 500ms\npush-timeout = 2m\npush-queue = 3\n"
			 "push-header = Authorization: Bearer s3cret\npush-header = X-A: b\n"
			 "otlp-format = json\notlp-compression = gzip\n",
			 err, sizeof(err)), 0);
	assert_string_equal(c.push.rw_url, "http://h:9090/api/v1/write");
	assert_string_equal(c.push.otlp_url, "https://collector:4318/v1/metrics");
	assert_int_equal(c.push.interval_ms, 500);
	assert_int_equal(c.push.timeout_ms, 120000);
	assert_int_equal(c.push.queue, 3);
	assert_int_equal(c.push.n_headers, 2);
	assert_string_equal(c.push.headers[0], "Authorization: Bearer s3cret");
	assert_true(c.push.otlp_json && c.push.otlp_gzip);
	exp_config_fini(&c);
	assert_int_equal(exp_config_parse(&c, "otlp-endpoint = http://c:4318/\n", err,
					  sizeof(err)), 0);
	assert_string_equal(c.push.otlp_url, "http://c:4318/v1/metrics");
	exp_config_fini(&c);
	assert_int_equal(exp_config_parse(&c, "otlp-endpoint = http://c:4318/otlp/v1/metrics\n",
					  err, sizeof(err)), 0);
	assert_string_equal(c.push.otlp_url, "http://c:4318/otlp/v1/metrics");
	exp_config_fini(&c);
}

static void config_errors(void **state)
{
	static const struct {
		const char *text, *err;
	} bad[] = {
		{ "remote-write-url = ftp://x/\n",
		  "line 1: remote-write-url: 'ftp://x/': not an http:// or https:// URL" },
		{ "otlp-endpoint = http:///v1\n", "line 1: otlp-endpoint: 'http:///v1': no host" },
		{ "push-interval = 50ms\n", "line 1: push-interval: '50ms' is not a duration" },
		{ "push-interval = 2h\n", "line 1: push-interval: '2h' is not a duration" },
		{ "push-interval = -1\n", "line 1: push-interval: '-1' is not a duration" },
		{ "push-queue = 0\n", "line 1: push-queue: '0' is not a number from 1 to 1000" },
		{ "\npush-header = Bearer s3cret\n", "line 2: push-header: not 'Name: value'" },
		{ "push-header = A B: s3cret\n", "line 1: push-header: not 'Name: value'" },
		{ "otlp-format = xml\n", "line 1: otlp-format: 'xml' is not protobuf or json" },
	};
	struct exp_config c;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(exp_config_parse(&c, bad[i].text, err, sizeof(err)), -EINVAL);
		if (strncmp(err, bad[i].err, strlen(bad[i].err)))
			fail_msg("%s: got '%s'", bad[i].text, err);
		/* A header's value is a secret: never in a message. */
		assert_null(strstr(err, "s3cret"));
		exp_config_fini(&c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pb_scalars),	cmocka_unit_test(pb_nested),
		cmocka_unit_test(pb_packed),	cmocka_unit_test(model_parse),
		cmocka_unit_test(model_errors), cmocka_unit_test(otlp_names),
		cmocka_unit_test(config_keys),	cmocka_unit_test(config_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
