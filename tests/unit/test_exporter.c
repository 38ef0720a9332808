/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The exporter's pure parts: the configuration parser and the exposition. */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <cmocka.h>

#include "daemon/exporter/exporter.h"
#include "daemon/metrics/http.h"

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

static const char *example_path;

/* The installed exporter.conf (the example) is the built-in defaults, key for key. */
static void config_example(void **state)
{
	struct exp_config def, ex;
	char err[256] = "";

	(void)state;
	assert_non_null(example_path);
	assert_int_equal(exp_config_parse(&def, "", err, sizeof(err)), 0);
	assert_int_equal(exp_config_load(&ex, example_path, err, sizeof(err)), 0);
	assert_null(ex.listen);
	assert_int_equal(ex.tables, def.tables);
	assert_int_equal(ex.tcp_info, def.tcp_info);
	assert_int_equal(ex.listeners, def.listeners);
	assert_int_equal(ex.max_listeners, def.max_listeners);
	assert_int_equal(ex.n_ports, def.n_ports);
	assert_int_equal(ex.by_cgroup, def.by_cgroup);
	assert_int_equal(ex.by_comm, def.by_comm);
	assert_int_equal(ex.max_series, def.max_series);
	assert_null(ex.cgroup_root);
	exp_config_fini(&def);
	exp_config_fini(&ex);
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
			   "cgroup-root = /\n"
			   "ephemeral-ports = yes\n"
			   "udp-drops = yes\n"
			   "destinations = cgroup\n"
			   "life = yes\n"
			   "life-by = comm\n";
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
	assert_true(c.ephemeral);
	assert_true(c.udp_drops);
	assert_int_equal(c.destinations, EXP_BY_CGROUP);
	assert_true(c.life);
	assert_int_equal(c.life_by, EXP_BY_COMM);
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
		{ "listen = 10.0.0.1\n", "line 1: listen: '10.0.0.1': no port (expected "
		  "HOST:PORT, [ADDR6]:PORT or :PORT)" },
		{ "listen = 127.0.0.1:0\n", "line 1: listen: '127.0.0.1:0': port '0' is not a "
		  "number from 1 to 65535 (expected HOST:PORT, [ADDR6]:PORT or :PORT)" },
		{ "listen = ::1:80\n", "line 1: listen: '::1:80': an IPv6 address goes in "
		  "brackets: [::1]:80 (expected HOST:PORT, [ADDR6]:PORT or :PORT)" },
		{ "cgroup-root = relative\n", "line 1: cgroup-root: 'relative' is not a directory" },
		{ "ports\n", "line 1: expected 'key = value', got 'ports'" },
		{ "# ok\nports =\n", "line 2: ports: missing value" },
		{ "destinations = pid\n", "line 1: destinations: 'pid' is not no, comm or cgroup" },
		{ "life-by = yes\n", "line 1: life-by: 'yes' is not no, comm or cgroup" },
		{ "life = 2\n", "line 1: life: expected yes or no, got '2'" },
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

/* --listen's spellings: a name is resolved when the server binds (localhost:
 * /etc/hosts, its IPv4 address first), an empty host is every address. */
static void listen_forms(void **state)
{
	struct sockaddr_storage ss;
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ss;
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ss;
	char err[HTTP_LISTEN_ERRLEN];
	socklen_t sl;

	(void)state;
	assert_int_equal(http_parse_listen("localhost:10113", &ss, &sl, err, sizeof(err)),
			 HTTP_LISTEN_NAME);
	assert_int_equal(http_resolve_listen("localhost:10113", &ss, &sl, err, sizeof(err)), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(ntohl(s4->sin_addr.s_addr), INADDR_LOOPBACK);
	assert_int_equal(ntohs(s4->sin_port), 10113);
	/* The resolver's words vary: what was wrong comes first. */
	assert_int_equal(http_resolve_listen("no.such.host.invalid:80", &ss, &sl, err,
					     sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "cannot resolve host 'no.such.host.invalid': "));
	assert_int_equal(http_parse_listen(":10113", &ss, &sl, err, sizeof(err)), 0);
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_true(IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr));
	assert_int_equal(ntohs(s6->sin6_port), 10113);
	assert_int_equal(http_parse_listen("[::1]:1", &ss, &sl, err, sizeof(err)), 0);
	assert_true(IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr));
	assert_int_equal(http_parse_listen("10.1.2.3:65535", &ss, &sl, err, sizeof(err)), 0);
	assert_int_equal(ntohl(s4->sin_addr.s_addr), 0x0a010203);
	assert_int_equal(http_parse_listen(":", &ss, &sl, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "port '' is not a number from 1 to 65535");
	assert_int_equal(http_parse_listen(":+80", &ss, &sl, err, sizeof(err)), -EINVAL);
	assert_int_equal(http_parse_listen("[]:80", &ss, &sl, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "'[]' is not [IPV6-ADDRESS]");
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

	assert_int_equal(exp_render(c, a, &k, NULL, om, &body, &len), 0);
	assert_int_equal(strlen(body), len);
	return body;
}

/* The request decision of the metrics server (http_req.c), without the HTTP library. */
/* exp_set_top keeps the k largest and counts the sockets of the others. */
static void set_top(void **state)
{
	static const uint64_t counts[] = { 5, 1, 9, 3, 7, 2 };
	struct exp_set s = { 0 };
	uint64_t kept[3] = { 0 };
	size_t n = 0;

	(void)state;
	assert_int_equal(exp_set_init(&s, 5), 0);
	for (size_t i = 0; i < 6; i++) {
		struct exp_key k = { .port = (uint16_t)(i + 1) };
		struct exp_entry *e = exp_set_get(&s, &k);

		if (e)
			e->v[0] = counts[i];
	}
	assert_int_equal(s.n, 5);		/* the sixth did not fit: 1 socket dropped */
	assert_int_equal(s.dropped, 1);
	exp_set_top(&s, 3, 0);
	for (size_t i = 0; i < s.nslots; i++)
		if (s.slots[i].used)
			kept[n++] = s.slots[i].v[0];
	assert_int_equal(n, 3);
	assert_int_equal(s.n, 3);
	assert_int_equal(kept[0] + kept[1] + kept[2], 9 + 7 + 5);
	assert_int_equal(s.dropped, 1 + 3 + 1);	/* + the sockets of 3 and 1 */
	free(s.slots);
}

static void http_decision(void **state)
{
	(void)state;
	assert_int_equal(http_route("GET", "/metrics"), HTTP_PAGE_METRICS);
	assert_int_equal(http_route("HEAD", "/metrics"), HTTP_PAGE_METRICS);
	assert_int_equal(http_route("GET", "/"), HTTP_PAGE_INDEX);
	assert_int_equal(http_route("GET", "/metrics/"), HTTP_PAGE_NOT_FOUND);
	/* The probes (the Kubernetes manifest's liveness and readiness). */
	assert_int_equal(http_route("GET", "/healthz"), HTTP_PAGE_HEALTHZ);
	assert_int_equal(http_route("HEAD", "/readyz"), HTTP_PAGE_READYZ);
	assert_int_equal(http_route("GET", "/healthz/"), HTTP_PAGE_NOT_FOUND);
	assert_int_equal(http_route("GET", "/readyz?verbose"), HTTP_PAGE_NOT_FOUND);
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
	assert_non_null(strstr(t, "sockdiag_sockets{netns=\"a\\\"b\\\\\\\\c\\nd\",family=\"inet6\","
				  "proto=\"tcp\",state=\"established\"} 5\n"));
	/* TCP states are there at 0; other tables only when non-zero. */
	assert_non_null(strstr(t, "family=\"inet\",proto=\"tcp\",state=\"time_wait\"} 0\n"));
	assert_non_null(strstr(t, "family=\"unix\",proto=\"stream\",state=\"listen\"} 2\n"));
	assert_null(strstr(t, "proto=\"dgram\""));
	assert_non_null(strstr(t, "proto=\"tcp\",port=\"22\",state=\"listen\"} 1\n"));
	assert_non_null(strstr(t, "proto=\"tcp\",port=\"22\",state=\"established\"} 0\n"));
	/* Buckets are cumulative. */
	assert_non_null(strstr(t, "sockdiag_tcp_rtt_seconds_bucket{netns=\"a\\\"b\\\\\\\\c\\nd\","
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

/* ---- label values: one name, one series ---------------------------------------------- */

/* Is s[0..n) valid UTF-8 (written here apart from expo.c's check)? */
static bool valid_utf8(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t len;

		if (s[i] < 0x80) {
			i++;
			continue;
		}
		len = (s[i] & 0xe0) == 0xc0 ? 2 : (s[i] & 0xf0) == 0xe0 ? 3 : (s[i] & 0xf8) == 0xf0 ? 4 : 0;
		if (!len || i + len > n)
			return false;
		cp = s[i] & (0x7f >> len);
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += len;
	}
	return true;
}

struct series {
	char *key;	/* metric name, then each decoded "name=value", NUL-separated */
	size_t len;
};

/* One sample line as Prometheus reads it: the name and the label values
 * unescaped (\\ \" \n, the only escapes the formats define: any other is
 * a test failure). Each value must be valid UTF-8. */
static struct series parse_series(const char *line, size_t n)
{
	struct series r = { malloc(n + 1), 0 };
	size_t i = 0;

	assert_non_null(r.key);
	while (i < n && line[i] != '{' && line[i] != ' ')
		r.key[r.len++] = line[i++];
	if (i < n && line[i] == '{') {
		i++;
		while (i < n && line[i] != '}') {
			size_t vstart;

			r.key[r.len++] = '\0';
			while (i < n && line[i] != '=')
				r.key[r.len++] = line[i++];
			assert_true(i + 1 < n && line[i + 1] == '"');
			r.key[r.len++] = '=';
			i += 2;
			vstart = r.len;
			while (i < n && line[i] != '"') {
				if (line[i] == '\\') {
					assert_true(i + 1 < n);
					i++;
					if (line[i] == 'n')
						r.key[r.len++] = '\n';
					else if (line[i] == '\\' || line[i] == '"')
						r.key[r.len++] = line[i];
					else
						fail_msg("escape \\%c in: %.*s", line[i], (int)n, line);
					i++;
				} else {
					r.key[r.len++] = line[i++];
				}
			}
			assert_true(valid_utf8((unsigned char *)r.key + vstart, r.len - vstart));
			assert_true(i < n);
			i++; /* the closing quote */
			if (i < n && line[i] == ',')
				i++;
		}
	}
	return r;
}

static int series_cmp(const void *a, const void *b)
{
	const struct series *x = a, *y = b;
	int c = memcmp(x->key, y->key, x->len < y->len ? x->len : y->len);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* How many samples of the exposition t repeat an earlier series. */
static size_t duplicate_series(const char *t)
{
	struct series *v = NULL;
	size_t n = 0, cap = 0, dups = 0;

	for (const char *line = t; *line;) {
		const char *end = strchr(line, '\n');

		assert_non_null(end);
		if (*line != '#') {
			if (n == cap) {
				cap = cap ? cap * 2 : 256;
				v = realloc(v, cap * sizeof(*v));
				assert_non_null(v);
			}
			v[n++] = parse_series(line, (size_t)(end - line));
		}
		line = end + 1;
	}
	qsort(v, n, sizeof(*v), series_cmp);
	for (size_t i = 1; i < n; i++)
		dups += !series_cmp(&v[i - 1], &v[i]);
	for (size_t i = 0; i < n; i++)
		free(v[i].key);
	free(v);
	return dups;
}

/* An exposition of namespaces labelled labels[0..n) (one TCP socket each). */
static char *render_labels(struct exp_config *c, const char *const *labels, size_t n)
{
	struct exp_agg *a = calloc(1, sizeof(*a));
	char *t;

	assert_non_null(a);
	exp_config_init(c);
	a->ns = calloc(n, sizeof(*a->ns));
	assert_non_null(a->ns);
	a->n_ns = n;
	for (size_t i = 0; i < n; i++) {
		snprintf(a->ns[i].label, sizeof(a->ns[i].label), "%s", labels[i]);
		a->ns[i].socks[SDIAG_T_TCP][0][SDIAG_SS_ESTABLISHED] = 1;
	}
	t = render(c, a, false);
	exp_agg_free(a);
	exp_config_fini(c);
	return t;
}

/* Valid UTF-8 kept as it is; invalid bytes spelled out, distinct. */
static void label_values_distinct(void **state)
{
	static const char *const names[] = { "caf\xc3\xa9", "caf\xc3\xa8", "a\xff", "a\xfe",
					     "a\\xff", "a\\\\xff", "tab\there", "c1\xc2\x85", "a?" };
	struct exp_config c;
	char *t = render_labels(&c, names, 6);

	(void)state;
	assert_non_null(strstr(t, "netns=\"caf\xc3\xa9\""));
	assert_non_null(strstr(t, "netns=\"caf\xc3\xa8\""));
	assert_non_null(strstr(t, "netns=\"a\\\\xff\""));	/* read back: a\xff */
	assert_non_null(strstr(t, "netns=\"a\\\\xfe\""));
	assert_non_null(strstr(t, "netns=\"a\\\\\\\\xff\""));	/* a\\xff: the name a\xff */
	assert_int_equal(duplicate_series(t), 0);
	free(t);
	t = render_labels(&c, names + 6, 3);
	assert_non_null(strstr(t, "netns=\"tab\\\\x09here\""));
	assert_non_null(strstr(t, "netns=\"c1\\\\xc2\\\\x85\""));
	assert_non_null(strstr(t, "netns=\"a?\""));
	free(t);
}

/* Property: namespaces with distinct random names (bytes drawn from a set
 * rich in escapes, UTF-8 leads and continuations) never make one series. */
static void label_values_never_collide(void **state)
{
	static const unsigned char pool[] = { 'a', 'x', 'f', '0', '?', '\\', '"', '\n', '\t', 0x7f,
					      0x80, 0x85, 0xa8, 0xa9, 0xbf, 0xc0, 0xc2, 0xc3, 0xe2, 0x82,
					      0xac, 0xed, 0xa0, 0xf0, 0x9f, 0xf4, 0x90, 0xfe, 0xff };
	enum { NS = 48, ITERATIONS = 120 };
	unsigned seed = 20261204;
	struct exp_config c;

	(void)state;
	for (int it = 0; it < ITERATIONS; it++) {
		char names[NS][8];
		const char *labels[NS];
		size_t n = 0;
		char *t;

		while (n < NS) {
			size_t len = 1 + (size_t)rand_r(&seed) % 5;
			bool dup = false;

			for (size_t k = 0; k < len; k++)
				names[n][k] = (char)pool[(size_t)rand_r(&seed) % sizeof(pool)];
			names[n][len] = '\0';
			for (size_t k = 0; k < n && !dup; k++)
				dup = !strcmp(names[k], names[n]);
			if (!dup) {
				labels[n] = names[n];
				n++;
			}
		}
		t = render_labels(&c, labels, n);
		if (duplicate_series(t))
			fail_msg("iteration %d (seed 20261204): duplicate series", it);
		free(t);
	}
}

/* pod-labels: a pod UID from fabricated /proc/PID/cgroup texts, as the
 * kubelet's two cgroup drivers, cgroup v1 and a cgroup namespace show them. */
static void pod_uid_from_cgroup(void **state)
{
	static const struct {
		const char *cgroup, *uid;	/* uid NULL: no pod */
	} cases[] = {
		{ "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0f1e2d3c_4b5a_6978"
		  "_8796_a5b4c3d2e1f0.slice/cri-containerd-0123.scope\n",
		  "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0" },
		{ "0::/kubepods.slice/kubepods-pod0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0.slice/crio-1.scope",
		  "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0" },		/* Guaranteed */
		{ "0::/kubepods/besteffort/pod11112222-3333-4444-5555-666677778888/4567ef01\n",
		  "11112222-3333-4444-5555-666677778888" },
		{ "0::/kubepods/pod11112222-3333-4444-5555-666677778888/c\n",
		  "11112222-3333-4444-5555-666677778888" },
		{ "12:pids:/kubepods/burstable/pod11112222-3333-4444-5555-666677778888/c\n"
		  "11:memory:/kubepods/burstable/pod11112222-3333-4444-5555-666677778888/c\n",
		  "11112222-3333-4444-5555-666677778888" },		/* cgroup v1 */
		{ "0::/../../kubepods-besteffort-pod11112222_3333_4444_5555_666677778888.slice/x",
		  "11112222-3333-4444-5555-666677778888" },	/* seen from a cgroup namespace */
		{ "0::/../kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod11112222_3333"
		  "_4444_5555_666677778888.slice/cri-containerd-9.scope",
		  "11112222-3333-4444-5555-666677778888" },	/* a cgroup namespace */
		{ "0::/kubepods/burstable/pod0123456789abcdef0123456789abcdef/c\n",
		  "0123456789abcdef0123456789abcdef" },		/* a static pod */
		{ "0::/init.scope\n", NULL },
		{ "0::/system.slice/kubelet.service\n", NULL },
		{ "0::/kubepods.slice/kubepods-burstable.slice\n", NULL },
		{ "0::/kubepods/burstable/podnot-a-uid/c\n", NULL },
		{ "0::/kubepods/burstable/pod11112222-3333-4444-5555-66667777888/c\n", NULL },
		{ "0::/kubepods/burstable/pod11112222-3333-4444-5555-666677778888x/c\n", NULL },
		{ "0::/user.slice/pod11112222-3333-4444-5555-666677778888/c\n", NULL },
		{ "", NULL },
	};
	char uid[EXP_POD_UID_LEN];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool got = exp_pod_uid(cases[i].cgroup, uid);

		if (got != (cases[i].uid != NULL) || (got && strcmp(uid, cases[i].uid)))
			fail_msg("%s: got %s, want %s", cases[i].cgroup, got ? uid : "none",
				 cases[i].uid ? cases[i].uid : "none");
	}
}

/* pod-labels: the kubelet's pod log directory names. */
static void pod_log_dirname(void **state)
{
	const char *uid = "11112222-3333-4444-5555-666677778888";
	char ns[64], name[254];

	(void)state;
	assert_true(exp_pod_dirname("kube-system_coredns-7d8f9_11112222-3333-4444-5555-666677778888",
				    uid, ns, sizeof(ns), name, sizeof(name)));
	assert_string_equal(ns, "kube-system");
	assert_string_equal(name, "coredns-7d8f9");
	assert_false(exp_pod_dirname("default_web_21112222-3333-4444-5555-666677778888", uid, ns,
				     sizeof(ns), name, sizeof(name)));
	assert_false(exp_pod_dirname("_web_11112222-3333-4444-5555-666677778888", uid, ns,
				     sizeof(ns), name, sizeof(name)));
	assert_false(exp_pod_dirname("default__11112222-3333-4444-5555-666677778888", uid, ns,
				     sizeof(ns), name, sizeof(name)));
	assert_false(exp_pod_dirname("11112222-3333-4444-5555-666677778888", uid, ns, sizeof(ns),
				     name, sizeof(name)));
	assert_false(exp_pod_dirname("default_web-11112222-3333-4444-5555-666677778888", uid, ns,
				     sizeof(ns), name, sizeof(name)));
	assert_false(exp_pod_dirname("default_web_11112222-3333-4444-5555-666677778888", uid, ns,
				     4, name, sizeof(name)));	/* too long for ns */
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(config_defaults),   cmocka_unit_test(config_full),
		cmocka_unit_test(config_example),
		cmocka_unit_test(config_errors),     cmocka_unit_test(config_ports_cap),
		cmocka_unit_test(listen_forms),
		cmocka_unit_test(render_text),	     cmocka_unit_test(render_openmetrics),
		cmocka_unit_test(label_values_distinct),
		cmocka_unit_test(label_values_never_collide),
		cmocka_unit_test(http_decision),
		cmocka_unit_test(set_top),
		cmocka_unit_test(pod_uid_from_cgroup),
		cmocka_unit_test(pod_log_dirname),
	};

	example_path = argc > 1 ? argv[1] : NULL;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
