/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The exporter's pure parts: the configuration parser and the exposition. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "daemon/common/http.h"
#include "daemon/exporter/exporter.h"

static void config_defaults(void **state)
{
	struct exp_config c;
	char err[256] = "";

	(void)state;
	assert_int_equal(exp_config_parse(&c, "# nothing\n\n", err, sizeof(err)), 0);
	assert_int_equal(c.tables, SDIAG_TABLES_ALL);
	assert_true(c.tcp_info);
	assert_true(c.listeners);
	assert_false(c.by_cgroup);
	assert_false(c.by_comm);
	assert_int_equal(c.n_ports, 0);
	assert_null(c.listen);
	exp_config_fini(&c);
}

static void config_full(void **state)
{
	const char *text = "listen = [::1]:9999\n"
			   "tables = tcp udp  # comment\n"
			   "tables = unix\n"
			   "ports = 22, 443,5432\n"
			   "ports = 8080\n"
			   "tcp-info = no\n"
			   "listeners = off\n"
			   "max-listeners = 10\n"
			   "group-by-cgroup = yes\n"
			   "group-by-comm = 1\n"
			   "max-series = 7\n"
			   "cgroup-root = /\n";
	struct exp_config c;
	char err[256] = "";

	(void)state;
	assert_int_equal(exp_config_parse(&c, text, err, sizeof(err)), 0);
	assert_string_equal(c.listen, "[::1]:9999");
	assert_int_equal(c.tables, SDIAG_TABLE_BIT(SDIAG_T_TCP) | SDIAG_TABLE_BIT(SDIAG_T_UDP) |
					   SDIAG_TABLES_UNIX);
	assert_int_equal(c.n_ports, 4);
	assert_int_equal(c.ports[0], 22);
	assert_int_equal(c.ports[3], 8080);
	assert_false(c.tcp_info);
	assert_false(c.listeners);
	assert_int_equal(c.max_listeners, 10);
	assert_true(c.by_cgroup);
	assert_true(c.by_comm);
	assert_int_equal(c.max_series, 7);
	assert_string_equal(c.cgroup_root, "/");
	exp_config_fini(&c);
}

static void config_errors(void **state)
{
	static const struct {
		const char *text;
		const char *err;
	} bad[] = {
		{ "bogus = 1\n", "line 1: unknown key 'bogus'" },
		{ "\n\nports = 22 0\n", "line 3: ports: '0' is not a port number (1-65535)" },
		{ "ports = 70000\n", "line 1: ports: '70000' is not a port number (1-65535)" },
		{ "ports = 22\nports = 22\n", "line 2: ports: 22 listed twice" },
		{ "tables = tcp nosuch\n", "line 1: tables: unknown table 'nosuch'" },
		{ "tcp-info = maybe\n", "line 1: tcp-info: expected yes or no, got 'maybe'" },
		{ "max-series = 0\n", "line 1: max-series: '0' is not a number from 1 to 100000" },
		{ "listen = localhost:80\n",
		  "line 1: listen: 'localhost:80' is not ADDR:PORT or [ADDR6]:PORT" },
		{ "listen = 127.0.0.1:0\n",
		  "line 1: listen: '127.0.0.1:0' is not ADDR:PORT or [ADDR6]:PORT" },
		{ "cgroup-root = relative\n", "line 1: cgroup-root: 'relative' is not a directory" },
		{ "ports\n", "line 1: expected 'key = value', got 'ports'" },
		{ "# ok\nports =\n", "line 2: ports: missing value" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct exp_config c;
		char err[256] = "";

		assert_int_equal(exp_config_parse(&c, bad[i].text, err, sizeof(err)), -EINVAL);
		assert_string_equal(err, bad[i].err);
		/* Nothing of a bad file is used. */
		assert_int_equal(c.n_ports, 0);
		assert_int_equal(c.tables, SDIAG_TABLES_ALL);
		exp_config_fini(&c);
	}
}

static void config_ports_cap(void **state)
{
	char text[1024] = "ports =", err[256] = "";
	struct exp_config c;

	(void)state;
	for (int i = 1; i <= EXP_MAX_PORTS + 1; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), " %d", i);
	assert_int_equal(exp_config_parse(&c, text, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "line 1: ports: more than 64 ports");
	exp_config_fini(&c);
}

/* A hand-made pass: one namespace with an awkward label. */
static struct exp_agg *make_agg(struct exp_config *c)
{
	struct exp_agg *a = calloc(1, sizeof(*a));
	struct exp_ns *ns;

	exp_config_init(c);
	c->ports[c->n_ports++] = 22;
	a->ns = calloc(1, sizeof(*a->ns));
	a->n_ns = 1;
	a->n_ports = 1;
	ns = &a->ns[0];
	snprintf(ns->label, sizeof(ns->label), "a\"b\\c\nd");
	ns->ports = calloc(1, sizeof(*ns->ports));
	ns->socks[SDIAG_T_TCP][1][SDIAG_SS_ESTABLISHED] = 5;
	ns->socks[SDIAG_T_UNIX_STREAM][0][SDIAG_SS_LISTEN] = 2;
	ns->ports[0][SDIAG_T_TCP][SDIAG_SS_LISTEN] = 1;
	ns->tcp.rtt_buckets[0] = 2;
	ns->tcp.rtt_buckets[EXP_RTT_BUCKETS - 1] = 3;
	ns->tcp.rtt_count = 5;
	ns->tcp.rtt_sum_s = 7.5;
	ns->unsupported = SDIAG_TABLE_BIT(SDIAG_T_SCTP);
	a->sockets = 7;
	return a;
}

static char *render(const struct exp_config *c, const struct exp_agg *a, bool om)
{
	struct exp_counters k = { .passes = 3, .requests = 4, .reloads_refused = 1 };
	char *body = NULL;
	size_t len = 0;

	assert_int_equal(exp_render(c, a, &k, om, &body, &len), 0);
	assert_int_equal(strlen(body), len);
	return body;
}

/* The request decision of the metrics server (http_req.c), without the HTTP library. */
static void http_decision(void **state)
{
	(void)state;
	assert_int_equal(http_route("GET", "/metrics"), HTTP_PAGE_METRICS);
	assert_int_equal(http_route("HEAD", "/metrics"), HTTP_PAGE_METRICS);
	assert_int_equal(http_route("GET", "/"), HTTP_PAGE_INDEX);
	assert_int_equal(http_route("GET", "/metrics/"), HTTP_PAGE_NOT_FOUND);
	assert_int_equal(http_route("POST", "/metrics"), HTTP_PAGE_BAD_METHOD);
	assert_int_equal(http_route("get", "/metrics"), HTTP_PAGE_BAD_METHOD);
	/* Prometheus 2.42's Accept; curl's; OpenMetrics refused with q=0. */
	assert_true(http_wants_openmetrics(
		"application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
		"version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"));
	assert_false(http_wants_openmetrics("*/*"));
	assert_false(http_wants_openmetrics(NULL));
	assert_false(http_wants_openmetrics("application/openmetrics-text; q=0, text/plain"));
	assert_true(http_wants_openmetrics("text/plain;q=0, application/openmetrics-text"));
}

static void render_text(void **state)
{
	struct exp_config c;
	struct exp_agg *a = make_agg(&c);
	char *t = render(&c, a, false);

	(void)state;
	assert_non_null(strstr(t, "# TYPE sockdiag_sockets gauge\n"));
	assert_non_null(strstr(t, "sockdiag_sockets{netns=\"a\\\"b\\\\c\\nd\",family=\"inet6\","
				  "proto=\"tcp\",state=\"established\"} 5\n"));
	/* TCP states are there at 0; other tables only when non-zero. */
	assert_non_null(strstr(t, "family=\"inet\",proto=\"tcp\",state=\"time_wait\"} 0\n"));
	assert_non_null(strstr(t, "family=\"unix\",proto=\"stream\",state=\"listen\"} 2\n"));
	assert_null(strstr(t, "proto=\"dgram\""));
	assert_non_null(strstr(t, "proto=\"tcp\",port=\"22\",state=\"listen\"} 1\n"));
	assert_non_null(strstr(t, "proto=\"tcp\",port=\"22\",state=\"established\"} 0\n"));
	/* Buckets are cumulative. */
	assert_non_null(strstr(t, "sockdiag_tcp_rtt_seconds_bucket{netns=\"a\\\"b\\\\c\\nd\","
				  "le=\"0.00025\"} 2\n"));
	assert_non_null(strstr(t, "le=\"+Inf\"} 5\n"));
	assert_non_null(strstr(t, "sockdiag_tcp_rtt_seconds_count{"));
	assert_non_null(strstr(t, "# TYPE sockdiag_tcp_rtt_seconds histogram\n"));
	assert_non_null(strstr(t, "table=\"sctp\"} 1\n"));
	assert_non_null(strstr(t, "# TYPE sockdiag_scrape_passes_total counter\n"
				  "sockdiag_scrape_passes_total 3\n"));
	assert_non_null(strstr(t, "sockdiag_config_reloads_total{result=\"refused\"} 1\n"));
	assert_null(strstr(t, "# EOF"));
	free(t);
	exp_agg_free(a);
	exp_config_fini(&c);
}

static void render_openmetrics(void **state)
{
	struct exp_config c;
	struct exp_agg *a = make_agg(&c);
	char *t = render(&c, a, true);
	size_t len = strlen(t);

	(void)state;
	assert_non_null(strstr(t, "# TYPE sockdiag_scrape_passes counter\n"
				  "sockdiag_scrape_passes_total 3\n"));
	assert_non_null(strstr(t, "# TYPE sockdiag_tcp_rtt_seconds gaugehistogram\n"));
	assert_non_null(strstr(t, "sockdiag_tcp_rtt_seconds_gcount{"));
	assert_non_null(strstr(t, "sockdiag_tcp_rtt_seconds_gsum{"));
	assert_null(strstr(t, "sockdiag_tcp_rtt_seconds_count{"));
	assert_true(len > 6 && !strcmp(t + len - 6, "# EOF\n"));
	free(t);
	exp_agg_free(a);
	exp_config_fini(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(config_defaults),   cmocka_unit_test(config_full),
		cmocka_unit_test(config_errors),     cmocka_unit_test(config_ports_cap),
		cmocka_unit_test(render_text),	     cmocka_unit_test(render_openmetrics),
		cmocka_unit_test(http_decision),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
