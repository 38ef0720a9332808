/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the push's reading back of an exposition
 * (daemon/push/model.c) and its two encoders (rw.c, otlp.c): any text is
 * parsed or refused with a line number inside it; a parsed one encodes as
 * remote write (or says it has too many labels) and as OTLP in protobuf and
 * JSON, whose output holds no raw control character.
 *
 * Seeds: tests/fuzz/seeds/push/ (an exposition of `exporter --once
 * --openmetrics`, a small one with escapes and a histogram).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/push/push.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct push_ident id = { .host = "h", .version = "1", .start_ms = 1 };
	char *text = malloc(size + 1);
	size_t lines = 1, len, n;
	uint8_t *out;
	struct pm m;
	unsigned line;
	int r;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	for (size_t i = 0; i < size && text[i]; i++)
		lines += text[i] == '\n';
	r = pm_parse(text, 1000, &m, &line);
	if (r == -EINVAL) {
		if (line < 1 || line > lines)
			abort();
		return 0;
	}
	if (r < 0)
		return 0;
	r = rw_encode(&m, &id, &out, &len, &n);
	if (r == 0)
		free(out);
	else if (r != -E2BIG && r != -ENOMEM)
		abort();
	if (otlp_encode(&m, &id, false, &out, &len, &n) == 0)
		free(out);
	if (otlp_encode(&m, &id, true, &out, &len, &n) == 0) {
		for (size_t i = 0; i < len; i++)
			if (out[i] < 0x20)
				abort();
		free(out);
	}
	pm_free(&m);
	return 0;
}
