// SPDX-License-Identifier: GPL-2.0-or-later
/* The CLI's formatting helpers: numbers, addresses, and above all JSON
 * string escaping of arbitrary bytes (cli/fmt/fmt.c). */
#include <inttypes.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tests/test_skip.h"
#include <sys/socket.h>

#include "cli/fmt/fmt.h"

struct json_case {
	const char *in;
	size_t len;
	const char *out;	/* expected literal, quotes included */
	bool clean;
};

#define C(in, out, clean) { in, sizeof(in) - 1, out, clean }

static const struct json_case json_cases[] = {
	C("plain /path", "\"plain /path\"", true),
	C("q\"b\\s", "\"q\\\"b\\\\s\"", true),
	C("utf8 \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
	  "\"utf8 \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"", true),
	C("nl\ntab\tcr\rbs\bff\f", "\"nl\\ntab\\tcr\\rbs\\bff\\f\"", false),
	C("ctl\x01\x1f\x7f", "\"ctl\\u0001\\u001f\\u007f\"", false),
	C("nul\0x", "\"nul\\u0000x\"", false),
	C("c1 \xc2\x85", "\"c1 \\u0085\"", false),
	C("bad \xff\xfe", "\"bad \xef\xbf\xbd\xef\xbf\xbd\"", false),
	/* overlong '/', a surrogate, past U+10FFFF, truncated at the end */
	C("\xc0\xaf", "\"\xef\xbf\xbd\xef\xbf\xbd\"", false),
	C("\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"", false),
	C("\xf4\x90\x80\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"", false),
	C("end\xe2\x82", "\"end\xef\xbf\xbd\xef\xbf\xbd\"", false),
	C("", "\"\"", true),
};

static void test_json_str(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(json_cases) / sizeof(json_cases[0]); i++) {
		const struct json_case *c = &json_cases[i];
		struct obuf b;
		bool clean;

		assert_int_equal(obuf_init(&b, 4, -1), 0);	/* small: forces growth */
		clean = obuf_json_str(&b, c->in, c->len);
		assert_int_equal(b.err, 0);
		assert_int_equal(b.len, strlen(c->out));
		assert_memory_equal(b.p, c->out, b.len);
		assert_int_equal(clean, c->clean);
		obuf_fini(&b);
	}
}

static void test_json_every_byte(void **state)
{
	uint8_t all[256];
	struct obuf b;

	(void)state;
	for (int i = 0; i < 256; i++)
		all[i] = (uint8_t)i;
	assert_int_equal(obuf_init(&b, 16, -1), 0);
	assert_false(obuf_json_str(&b, all, sizeof(all)));
	/* No raw control character and no lone high byte may remain. */
	for (size_t i = 1; i + 1 < b.len; i++) {
		uint8_t c = (uint8_t)b.p[i];

		assert_true(c >= 0x20);
		assert_true(c != 0x7f);
		if (c == '"')
			assert_int_equal(b.p[i - 1], '\\');
	}
	assert_int_equal(b.p[0], '"');
	assert_int_equal(b.p[b.len - 1], '"');
	obuf_fini(&b);
}

static void test_text_bytes(void **state)
{
	struct obuf b;

	(void)state;
	assert_int_equal(obuf_init(&b, 8, -1), 0);
	assert_false(obuf_text_bytes(&b, "a\nb\xff\xc3\xa9", 6));
	assert_int_equal(b.len, strlen("a\\x0ab\\xff\xc3\xa9"));
	assert_memory_equal(b.p, "a\\x0ab\\xff\xc3\xa9", b.len);
	b.len = 0;
	assert_true(obuf_text_bytes(&b, "/run/x.sock", 11));
	assert_memory_equal(b.p, "/run/x.sock", 11);
	obuf_fini(&b);
}

static void test_numbers(void **state)
{
	static const struct {
		uint64_t v;
		const char *s;
	} cases[] = {
		{ 0, "0" }, { 9, "9" }, { 10, "10" }, { 99, "99" }, { 100, "100" },
		{ 65535, "65535" }, { 1234567, "1234567" },
		{ UINT64_MAX, "18446744073709551615" },
	};
	char buf[24];
	struct obuf b;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = fmt_u64(buf, cases[i].v);

		assert_int_equal(n, strlen(cases[i].s));
		assert_memory_equal(buf, cases[i].s, n);
	}
	/* Every digit count and bit length, against snprintf. */
	for (int bits = 0; bits <= 64; bits++) {
		uint64_t top = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
		uint64_t vs[] = { top, top + 1, top / 10, top / 10 + 1, (top >> 1) + 1 };

		for (size_t j = 0; j < sizeof(vs) / sizeof(vs[0]); j++) {
			char want[24];
			size_t n = fmt_u64(buf, vs[j]);

			snprintf(want, sizeof(want), "%" PRIu64, vs[j]);
			assert_int_equal(n, strlen(want));
			assert_memory_equal(buf, want, n);
		}
	}
	for (uint64_t p = 1; p <= UINT64_MAX / 10; p *= 10)
		for (uint64_t v = p - 1; v <= p + 1; v++) {
			char want[24];
			size_t n = fmt_u64(buf, v);

			snprintf(want, sizeof(want), "%" PRIu64, v);
			assert_int_equal(n, strlen(want));
			assert_memory_equal(buf, want, n);
		}
	assert_int_equal(obuf_init(&b, 1, -1), 0);
	obuf_hex(&b, 0x17a7c5);
	obuf_putc(&b, ' ');
	obuf_hex(&b, 0);
	obuf_putc(&b, ' ');
	obuf_i64(&b, -42);
	assert_int_equal(b.len, strlen("17a7c5 0 -42"));
	assert_memory_equal(b.p, "17a7c5 0 -42", b.len);
	obuf_fini(&b);
}

static void test_addresses(void **state)
{
	static const struct {
		uint8_t a[4];
		const char *s;
	} v4[] = {
		{ { 0, 0, 0, 0 }, "0.0.0.0" },
		{ { 255, 255, 255, 255 }, "255.255.255.255" },
		{ { 10, 1, 20, 100 }, "10.1.20.100" },
		{ { 127, 0, 0, 1 }, "127.0.0.1" },
	};
	const uint8_t mapped[16] = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 1 };
	char buf[48];

	(void)state;
	for (size_t i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
		size_t n = fmt_ipv4(buf, v4[i].a);

		assert_int_equal(n, strlen(v4[i].s));
		assert_memory_equal(buf, v4[i].s, n);
	}
	assert_int_equal(fmt_addr(buf, AF_INET6, mapped), strlen("::ffff:192.0.2.1"));
	assert_string_equal(buf, "::ffff:192.0.2.1");
	assert_int_equal(fmt_addr(buf, AF_INET, v4[3].a), 9);
	assert_string_equal(buf, "127.0.0.1");
}

/* fmt_copy (and obuf_put through it) at every length around its cases: each
 * byte copied, nothing written before or after the copy. The source is an
 * exact-size heap block, so a read past s[n) shows under ASan. */
static void test_copy_lengths(void **state)
{
	char dst[128];

	(void)state;
	for (size_t n = 0; n <= 80; n++) {
		volatile size_t vn = n;	/* not a constant: the hand-written paths */
		char *src = malloc(n ? n : 1);
		struct obuf b;

		assert_non_null(src);
		for (size_t i = 0; i < n; i++)
			src[i] = (char)('A' + (i * 7 + n) % 26);
		memset(dst, '#', sizeof(dst));
		fmt_copy(dst + 8, src, vn);
		for (size_t i = 0; i < sizeof(dst); i++)
			assert_int_equal(dst[i], i < 8 || i >= 8 + n ? '#' : src[i - 8]);

		assert_int_equal(obuf_init(&b, 16, -1), 0);
		obuf_putc(&b, '<');
		obuf_put(&b, src, vn);
		obuf_put(&b, src, vn);
		obuf_putc(&b, '>');
		assert_int_equal(b.len, 2 * n + 2);
		assert_memory_equal(b.p + 1, src, n);
		assert_memory_equal(b.p + 1 + n, src, n);
		assert_int_equal(b.p[2 * n + 1], '>');
		obuf_fini(&b);
		free(src);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_str),
		cmocka_unit_test(test_json_every_byte),
		cmocka_unit_test(test_text_bytes),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_addresses),
		cmocka_unit_test(test_copy_lengths),
	};

	return sdiag_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
