// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sockdiag-kube-backends' model (daemon/kube/slices.c), without a server:
 * EndpointSlice objects written here -> the file's text, byte for byte, and
 * that text parsed by the guard's own parser (backends_parse) with the
 * backends the test expects. Serving and ready conditions, addresses
 * normalised and refused, FQDN slices, SCTP and portless ports, a backend
 * served by another slice, deletes, a re-list that drops a slice, the TTL on
 * the caller's clock, seeds.
 */
#include <errno.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "backends/backends.h"
#include "daemon/kube/kube.h"

#define HEADER "# dead backends, written by sockdiag-kube-backends\n"
#define TTL 600000

/* A slice: uid, addressType, ports ("53/UDP,53/TCP", "" for none), endpoints
 * ("ADDR=ready/serving" with y, n or - (absent) for each, ';'-separated). */
static struct json_object *slice(const char *uid, const char *type, const char *ports,
				 const char *eps)
{
	char buf[4096], *p = buf, *save, *tok, copy[1024];

	p += sprintf(p, "{\"metadata\":{\"uid\":\"%s\",\"name\":\"n-%s\",\"namespace\":\"ns\"},"
		     "\"addressType\":\"%s\",\"ports\":[", uid, uid, type);
	snprintf(copy, sizeof(copy), "%s", ports);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *slash = strchr(tok, '/');

		*slash = 0;
		p += sprintf(p, "%s{%s%s%s\"protocol\":\"%s\"}", p[-1] == '[' ? "" : ",",
			     *tok ? "\"port\":" : "", tok, *tok ? "," : "", slash + 1);
	}
	p += sprintf(p, "],\"endpoints\":[");
	snprintf(copy, sizeof(copy), "%s", eps);
	for (tok = strtok_r(copy, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
		char *eq = strchr(tok, '='), r = eq[1], s = eq[3];

		*eq = 0;
		p += sprintf(p, "%s{\"addresses\":[\"%s\"],\"conditions\":{", p[-1] == '[' ? "" : ",",
			     tok);
		if (r != '-')
			p += sprintf(p, "\"ready\":%s%s", r == 'y' ? "true" : "false",
				     s != '-' ? "," : "");
		if (s != '-')
			p += sprintf(p, "\"serving\":%s", s == 'y' ? "true" : "false");
		p += sprintf(p, "}}");
	}
	sprintf(p, "]}");
	struct json_object *o = json_tokener_parse(buf);

	assert_non_null(o);
	return o;
}

static void put(struct kube_state *st, struct json_object *o, uint64_t now)
{
	assert_int_equal(kube_slice_put(st, o, now), 0);
	json_object_put(o);
}

static void del(struct kube_state *st, struct json_object *o, uint64_t now)
{
	assert_int_equal(kube_slice_del(st, o, now), 0);
	json_object_put(o);
}

/* The file at now: exactly want (after the header), which the guard's parser
 * reads as nbackends ADDR:PORT pairs. */
static void expect(struct kube_state *st, uint64_t now, const char *want, size_t nbackends,
		   uint64_t want_expiry)
{
	struct backend_set set = { 0 };
	char *text = NULL, err[256];
	uint64_t expiry;
	size_t n;

	assert_int_equal(kube_render(st, now, &text, &n, &expiry), 0);
	assert_string_equal(text + strlen(HEADER), want);
	assert_memory_equal(text, HEADER, strlen(HEADER));
	assert_int_equal(expiry, want_expiry);
	assert_int_equal(backends_parse(&set, text, strlen(text), 1000, err, sizeof(err)), 0);
	assert_int_equal(set.n, nbackends);
	backends_free(&set);
	free(text);
}

static struct kube_state *state(void)
{
	struct kube_state *st;

	assert_int_equal(kube_state_new(&st, TTL), 0);
	return st;
}

static void test_conditions(void **unused)
{
	struct kube_state *st = state();

	/* ready/serving: y/y live; n/y draining (live); n/n, y/n and n/- dead; -/- live. */
	put(st, slice("a", "IPv4", "80/TCP", "10.0.0.1=y/y;10.0.0.2=n/y;10.0.0.3=n/n;"
					    "10.0.0.4=y/n;10.0.0.5=n/-;10.0.0.6=-/-"), 1000);
	expect(st, 1000, "10.0.0.3:80/tcp\n10.0.0.4:80/tcp\n10.0.0.5:80/tcp\n", 3, 1000 + TTL);
	kube_state_free(st);
}

static void test_addresses_ports(void **unused)
{
	struct kube_state *st = state();

	/* IPv6 normalised and bracketed; a bad address, SCTP, a portless port and
	 * an FQDN slice give nothing; a protocol left out is TCP. */
	put(st, slice("a", "IPv6", "53/UDP,9/SCTP,/TCP", "FD00:0:0::5=n/n;10.0.0.1=n/n"), 5);
	put(st, slice("b", "FQDN", "80/TCP", "db.example.com=n/n"), 5);
	put(st, json_tokener_parse("{\"metadata\":{\"uid\":\"c\"},\"addressType\":\"IPv4\","
				   "\"ports\":[{\"port\":8080}],\"endpoints\":[{\"addresses\":"
				   "[\"10.1.1.1\"],\"conditions\":{\"ready\":false}}]}"), 5);
	expect(st, 5, "10.1.1.1:8080/tcp\n[fd00::5]:53/udp\n", 2, 5 + TTL);
	kube_state_free(st);
}

static void test_lifecycle(void **unused)
{
	struct kube_state *st = state();

	put(st, slice("a", "IPv4", "53/UDP,53/TCP", "10.0.0.1=y/y;10.0.0.2=y/y"), 0);
	put(st, slice("b", "IPv4", "53/TCP", "10.0.0.2=y/y"), 0);
	expect(st, 0, "", 0, UINT64_MAX);
	/* 10.0.0.2 leaves a: its UDP backend is dead, its TCP one served by b. */
	put(st, slice("a", "IPv4", "53/UDP,53/TCP", "10.0.0.1=y/y"), 10);
	expect(st, 10, "10.0.0.2:53/udp\n", 1, 10 + TTL);
	/* b deleted: 10.0.0.2:53/tcp dies too, later. */
	del(st, slice("b", "IPv4", "", ""), 20);
	expect(st, 20, "10.0.0.2:53/tcp\n10.0.0.2:53/udp\n", 1, 10 + TTL);
	/* Served again in a new slice: no longer dead. */
	put(st, slice("c", "IPv4", "53/TCP", "10.0.0.2=y/y"), 30);
	expect(st, 30, "10.0.0.2:53/udp\n", 1, 10 + TTL);
	/* The TTL, on the caller's clock. */
	expect(st, 10 + TTL - 1, "10.0.0.2:53/udp\n", 1, 10 + TTL);
	expect(st, 10 + TTL, "", 0, UINT64_MAX);
	/* A delete of a slice never seen changes nothing; one without an id is refused. */
	del(st, slice("zz", "IPv4", "", ""), 40);
	struct json_object *anon = json_tokener_parse("{\"metadata\":{}}");
	assert_int_equal(kube_slice_put(st, anon, 40), -EINVAL);
	json_object_put(anon);
	assert_int_equal(kube_state_slices(st), 2);
	kube_state_free(st);
}

static void test_relist_and_seed(void **unused)
{
	struct kube_state *st = state();

	assert_int_equal(kube_state_seed(st, "10.9.9.9:80/tcp", 0), 0);
	assert_int_equal(kube_state_seed(st, "[fd00:0::1]:53/udp", 0), 0);
	assert_int_equal(kube_state_seed(st, "10.0.0.1:53/udp", 0), 0);
	assert_int_equal(kube_state_seed(st, "10.0.0.1:53", 0), -EINVAL);
	assert_int_equal(kube_state_seed(st, "10.0.0.1:0/tcp", 0), -EINVAL);
	assert_int_equal(kube_state_seed(st, "10.0.0.1:53/sctp", 0), -EINVAL);
	assert_int_equal(kube_state_seed(st, "300.0.0.1:53/tcp", 0), -EINVAL);
	assert_int_equal(kube_state_seed(st, "10.0.0.1:53/tcp x", 0), -EINVAL);
	kube_relist_begin(st);
	put(st, slice("a", "IPv4", "53/UDP", "10.0.0.1=y/y"), 5);
	put(st, slice("b", "IPv6", "443/TCP", "fd00::7=y/y"), 5);
	kube_relist_end(st, 5);
	/* Seeds stay dead unless served (10.0.0.1:53/udp is). */
	expect(st, 5, "10.9.9.9:80/tcp\n[fd00::1]:53/udp\n", 2, TTL);
	/* A re-list without b: b's backends die. */
	kube_relist_begin(st);
	put(st, slice("a", "IPv4", "53/UDP", "10.0.0.1=y/y"), 50);
	kube_relist_end(st, 50);
	assert_int_equal(kube_state_slices(st), 1);
	expect(st, 50, "10.9.9.9:80/tcp\n[fd00::1]:53/udp\n[fd00::7]:443/tcp\n", 3, TTL);
	kube_state_free(st);
}

/* TTL 0: nothing is ever listed. Many slices: the tables grow. */
static void test_ttl0_and_growth(void **unused)
{
	struct kube_state *st;
	char uid[16], ep[64];

	assert_int_equal(kube_state_new(&st, 0), 0);
	put(st, slice("a", "IPv4", "80/TCP", "10.0.0.3=n/n"), 1);
	expect(st, 1, "", 0, UINT64_MAX);
	kube_state_free(st);
	st = state();
	for (int i = 0; i < 3000; i++) {
		snprintf(uid, sizeof(uid), "u%d", i);
		snprintf(ep, sizeof(ep), "10.%d.%d.1=y/y", i / 256, i % 256);
		put(st, slice(uid, "IPv4", "80/TCP", ep), 0);
	}
	for (int i = 0; i < 3000; i += 2) {
		snprintf(uid, sizeof(uid), "u%d", i);
		del(st, slice(uid, "IPv4", "", ""), 1);
	}
	assert_int_equal(kube_state_slices(st), 1500);
	char *text;
	size_t n;
	uint64_t expiry;
	assert_int_equal(kube_render(st, 1, &text, &n, &expiry), 0);
	assert_int_equal(n, 1500);
	assert_non_null(strstr(text, "\n10.11.182.1:80/tcp\n")); /* 2998 */
	assert_null(strstr(text, "\n10.11.183.1:80/tcp\n"));	  /* 2999: served */
	free(text);
	kube_state_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conditions),
		cmocka_unit_test(test_addresses_ports),
		cmocka_unit_test(test_lifecycle),
		cmocka_unit_test(test_relist_and_seed),
		cmocka_unit_test(test_ttl0_and_growth),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
