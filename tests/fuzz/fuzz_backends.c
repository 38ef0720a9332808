// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The dead-backends file parser (backends/backends.c): any bytes either
 * parse or give "line L, column C: ..." (or the cap); what parses is a set in
 * which every backend is found, and whose formatted list parses to the same set.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backends.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct backend_set s, again;
	char err[256], *text;
	size_t off = 0;
	int r;

	r = backends_parse(&s, (const char *)data, size, 1000, err, sizeof(err));
	if (r < 0) {
		if (r != -ENOMEM && strncmp(err, "line ", 5) != 0)
			abort();
		return 0;
	}
	text = malloc(s.n * (BACKEND_STRLEN + 6) + 1);
	if (!text)
		abort();
	for (size_t i = 0; i < s.n; i++) {
		const struct backend *b = &s.v[i];

		if (backends_find(&s, b->family, b->addr, b->port) != b)
			abort();
		backend_format(b, text + off, BACKEND_STRLEN);
		off += strlen(text + off);
		off += (size_t)sprintf(text + off, "%s\n",
				       b->protos == BACKEND_TCP ? "/tcp" :
				       b->protos == BACKEND_UDP ? "/udp" : "");
	}
	if (backends_parse(&again, text, off, 1000, err, sizeof(err)) < 0 ||
	    !backends_equal(&s, &again))
		abort();
	backends_free(&again);
	backends_free(&s);
	free(text);
	return 0;
}
