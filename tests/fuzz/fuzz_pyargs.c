// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The Python module's argument parsing (python/sockdiag/args.c), without an
 * interpreter. The first byte selects: 0 a kind name; 1 a count_by key list
 * ("lport,pid"); 2 keys one by one (the sequence form: items separated by
 * '\n'); 3 a netns argument's text, and the words for the errno of byte 1;
 * 4 a table's dump error (table byte, errno byte). Names may hold any byte,
 * NUL included (a Python str may). Checked: what parses holds no NUL and
 * means something (a kind some tables, keys 1..8, none twice, none empty);
 * what does not gives a non-empty one-line reason; the texts always end.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "python/sockdiag/args.h"

static void check_text(const char *s, size_t size)
{
	size_t n = strnlen(s, size);

	if (n == 0 || n == size || memchr(s, '\n', n))
		abort();
}

static void check_keys(const struct gkeys *k)
{
	if (k->n == 0 || k->n > SDPY_MAX_KEYS)
		abort();
	for (size_t i = 0; i < k->n; i++) {
		if ((unsigned)k->k[i] >= GK_MAX || !(gkey_defs[k->k[i]].fe & GF_PY))
			abort();
		for (size_t j = 0; j < i; j++)
			if (k->k[i] == k->k[j])
				abort();
	}
}

static void kind(const char *s, size_t n)
{
	struct sdpy_kind k;
	char msg[512];

	if (sdpy_kind_lookup(s, n, &k) == 0) {
		if (!k.tables || !k.afs || memchr(s, '\0', n) || n == 0)
			abort();
		if (k.explicit_table && (k.tables & (k.tables - 1)))
			abort();
		return;
	}
	sdpy_kind_error(s, n, msg, sizeof(msg));
	check_text(msg, sizeof(msg));
}

static void key_list(const char *s, size_t n)
{
	struct gkeys k = { 0 };
	char err[512];

	if (sdpy_keys_parse(&k, s, n, err, sizeof(err)) < 0) {
		check_text(err, sizeof(err));
		return;
	}
	check_keys(&k);
	/* An accepted list has no empty item and no NUL (no key name has one). */
	if (s[0] == ',' || s[n - 1] == ',' || memmem(s, n, ",,", 2) || memchr(s, '\0', n))
		abort();
	(void)sdpy_keys_need_procs(&k);
}

static void key_items(const char *s, size_t n)
{
	struct gkeys k = { 0 };
	const char *p = s, *end = s + n;
	char err[512];

	for (;;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (sdpy_keys_add(&k, p, len, err, sizeof(err)) < 0) {
			check_text(err, sizeof(err));
			return;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	check_keys(&k);
}

static void netns(const char *s, size_t n)
{
	char err[128];
	int r = sdpy_netns_check(s, n, err, sizeof(err));

	if ((r == 0) != (n > 0 && !memchr(s, '\0', n)))
		abort();
	if (r < 0)
		check_text(err, sizeof(err));
	if (n > 0)
		check_text(sdpy_netns_reason(-(int)(unsigned char)s[0]), 4096);
}

static void table_error(const char *s, size_t n)
{
	char msg[256];

	if (n < 2)
		return;
	sdpy_table_error((enum sdiag_table)(unsigned char)s[0], -(int)(unsigned char)s[1], msg,
			 sizeof(msg));
	check_text(msg, sizeof(msg));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;
	size_t n;

	if (size < 1)
		return 0;
	n = size - 1;
	/* A copy of exactly n bytes: ASan sees any read past a name's length. */
	s = malloc(n ? n : 1);
	if (!s)
		return 0;
	memcpy(s, data + 1, n);
	switch (data[0] % 5) {
	case 0: kind(s, n); break;
	case 1: key_list(s, n); break;
	case 2: key_items(s, n); break;
	case 3: netns(s, n); break;
	default: table_error(s, n); break;
	}
	free(s);
	return 0;
}
