/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the CLI's JSON string escaper (cli/fmt/fmt.c,
 * obuf_json_str), which writes unix socket names: arbitrary bytes.
 *
 * Input: the bytes of a name. Checked, with an independent strict decoder
 * (RFC 8259 strings, Unicode table 3-7 UTF-8):
 *  - the output is one valid JSON string: quoted, no raw control character,
 *    only the escapes JSON has, valid UTF-8 throughout (no overlong forms,
 *    no surrogates, nothing past U+10FFFF);
 *  - its decoded value is valid UTF-8, and equals the input whenever the
 *    input is valid UTF-8 (escaped control characters come back);
 *  - the "clean" answer is exactly "valid UTF-8 without control characters"
 *    (U+0000-U+001F, U+007F-U+009F): the promise behind path_hex
 *    (docs/json-schema.md). Any violation aborts.
 *
 * Seeds: none needed (libFuzzer starts from the empty input).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/fmt/fmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Length of the strict UTF-8 sequence at p (1-4), 0 if invalid. */
static size_t utf8_len(const uint8_t *p, size_t n, uint32_t *ret_cp)
{
	uint8_t c = p[0];
	uint8_t lo = 0x80, hi = 0xbf;
	size_t len;
	uint32_t cp;

	if (c < 0x80) {
		*ret_cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;	/* no surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;	/* nothing past U+10FFFF */
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		uint8_t b = p[i];

		if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xbf))
			return 0;
		cp = cp << 6 | (b & 0x3f);
	}
	*ret_cp = cp;
	return len;
}

static bool is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);
}

static int hexval(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static void put_utf8(uint8_t *out, size_t *n, uint32_t cp)
{
	if (cp < 0x80) {
		out[(*n)++] = (uint8_t)cp;
	} else if (cp < 0x800) {
		out[(*n)++] = (uint8_t)(0xc0 | cp >> 6);
		out[(*n)++] = (uint8_t)(0x80 | (cp & 0x3f));
	} else {
		out[(*n)++] = (uint8_t)(0xe0 | cp >> 12);
		out[(*n)++] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
		out[(*n)++] = (uint8_t)(0x80 | (cp & 0x3f));
	}
}

/* Decode the JSON string s[0..n) into out (at least n bytes); abort if it is
 * not exactly one valid JSON string. Returns the decoded length. */
static size_t json_decode(const uint8_t *s, size_t n, uint8_t *out)
{
	size_t i = 1, o = 0;

	if (n < 2 || s[0] != '"' || s[n - 1] != '"')
		abort();
	while (i < n - 1) {
		uint32_t cp;
		size_t len;

		if (s[i] == '"' || s[i] < 0x20)
			abort();	/* unescaped quote or raw control character */
		if (s[i] != '\\') {
			len = utf8_len(s + i, n - 1 - i, &cp);
			if (!len)
				abort();	/* the output is not UTF-8 */
			memcpy(out + o, s + i, len);
			o += len;
			i += len;
			continue;
		}
		if (i + 1 >= n - 1)
			abort();
		switch (s[i + 1]) {
		case '"': out[o++] = '"'; break;
		case '\\': out[o++] = '\\'; break;
		case '/': out[o++] = '/'; break;
		case 'b': out[o++] = '\b'; break;
		case 'f': out[o++] = '\f'; break;
		case 'n': out[o++] = '\n'; break;
		case 'r': out[o++] = '\r'; break;
		case 't': out[o++] = '\t'; break;
		case 'u':
			if (i + 6 > n - 1)
				abort();
			cp = 0;
			for (int k = 2; k < 6; k++) {
				int h = hexval(s[i + k]);

				if (h < 0)
					abort();
				cp = cp << 4 | (uint32_t)h;
			}
			if (cp >= 0xd800 && cp <= 0xdfff)
				abort();	/* we never need surrogate pairs */
			put_utf8(out, &o, cp);
			i += 6;
			continue;
		default:
			abort();
		}
		i += 2;
	}
	return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct obuf b;
	uint8_t *dec;
	size_t n, i = 0;
	bool clean, valid = true, controls = false;

	if (size > 4096 || obuf_init(&b, 64, -1) < 0)
		return 0;
	clean = obuf_json_str(&b, data, size);
	if (b.err)
		goto out;
	while (i < size) {
		uint32_t cp;
		size_t len = utf8_len(data + i, size - i, &cp);

		if (!len) {
			valid = false;
			i++;
			continue;
		}
		controls |= is_control(cp);
		i += len;
	}
	if (clean != (valid && !controls))
		abort();
	dec = malloc(b.len + 1);
	if (!dec)
		goto out;
	n = json_decode((const uint8_t *)b.p, b.len, dec);
	for (i = 0; i < n;) {
		uint32_t cp;
		size_t len = utf8_len(dec + i, n - i, &cp);

		if (!len)
			abort();	/* the decoded value is not UTF-8 */
		i += len;
	}
	if (valid && (n != size || memcmp(dec, data, size) != 0))
		abort();	/* valid UTF-8 must come back exactly */
	free(dec);
out:
	obuf_fini(&b);
	return 0;
}
