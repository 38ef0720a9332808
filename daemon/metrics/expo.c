// SPDX-License-Identifier: GPL-2.0-or-later
/* Exposition formats (see expo.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/metrics/expo.h"

int expo_open(struct expo *o, bool openmetrics)
{
	memset(o, 0, sizeof(*o));
	o->om = openmetrics;
	o->f = open_memstream(&o->body, &o->len);
	return o->f ? 0 : -ENOMEM;
}

int expo_close(struct expo *o, char **ret_body, size_t *ret_len)
{
	if (o->om)
		fputs("# EOF\n", o->f);
	if (fclose(o->f) != 0) {
		free(o->body);
		return -ENOMEM;
	}
	*ret_body = o->body;
	*ret_len = o->len;
	return 0;
}

void expo_family(struct expo *o, const char *name, const char *type, const char *help)
{
	const char *suffix = !o->om && !strcmp(type, "counter") ? "_total" : "";

	if (!o->om && !strcmp(type, "gaugehistogram"))
		type = "histogram";
	fprintf(o->f, "# HELP %s%s %s\n# TYPE %s%s %s\n", name, suffix, help, name, suffix,
		type);
}

/* The length of the valid UTF-8 sequence of 2 to 4 bytes at s (no overlong
 * forms, surrogates or code points above U+10FFFF), else 0. s ends in a NUL,
 * which no check accepts: nothing past it is read. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/*
 * The value a scraper reads back is the name with valid UTF-8 kept as is,
 * and every other byte (not UTF-8, or of a control character other than
 * the newline: U+0000..U+001F, U+007F..U+009F) spelled \xHH; a backslash, the escape's own character, is doubled
 * so that no name can spell another's escape. One name, one value: distinct
 * names never make one series. Written in the exposition's own escapes
 * (backslash, quote and newline), which Prometheus and OpenMetrics share.
 */
void expo_value(struct expo *o, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	while (*s) {
		size_t n = *s >= 0x80 ? utf8_len(s) : 1;

		if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0)
			n = 0;	/* U+0080..U+009F: C1 controls, spelled out as their bytes */

		if (*s == '"')
			fputs("\\\"", o->f);
		else if (*s == '\\')
			fputs("\\\\\\\\", o->f); /* the value's \\ */
		else if (*s == '\n')
			fputs("\\n", o->f);
		else if (!n || *s < 0x20 || *s == 0x7f)
			fprintf(o->f, "\\\\x%02x", *s); /* the value's \xHH */
		else
			fwrite(s, 1, n, o->f);
		s += n ? n : 1;
	}
}


void expo_histogram(struct expo *o, const char *name, bool gauge, expo_labels_fn labels,
		    const void *arg, const char *const *le, const uint64_t *buckets, size_t n,
		    double sum)
{
	const char *g = gauge && o->om ? "g" : "";
	uint64_t cum = 0;

	for (size_t b = 0; b < n; b++) {
		cum += buckets[b];
		fprintf(o->f, "%s_bucket{", name);
		if (labels) {
			labels(o, arg);
			fputc(',', o->f);
		}
		fprintf(o->f, "le=\"%s\"} %llu\n", le[b], (unsigned long long)cum);
	}
	fprintf(o->f, "%s_%ssum%s", name, g, labels ? "{" : "");
	if (labels)
		labels(o, arg);
	fprintf(o->f, "%s %.9g\n", labels ? "}" : "", sum);
	fprintf(o->f, "%s_%scount%s", name, g, labels ? "{" : "");
	if (labels)
		labels(o, arg);
	fprintf(o->f, "%s %llu\n", labels ? "}" : "", (unsigned long long)cum);
}
