// SPDX-License-Identifier: GPL-2.0-or-later
/* Exposition formats (see expo.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/common/expo.h"

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

void expo_value(struct expo *o, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '\\' || ch == '"')
			fprintf(o->f, "\\%c", ch);
		else if (ch == '\n')
			fputs("\\n", o->f);
		else
			fputc(ch < 0x20 || ch >= 0x7f ? '?' : ch, o->f);
	}
}

static void label(struct expo *o, const char *lname, const char *lvalue, bool more)
{
	if (!lname)
		return;
	fprintf(o->f, "%s=\"", lname);
	expo_value(o, lvalue);
	fputs(more ? "\"," : "\"", o->f);
}

void expo_histogram(struct expo *o, const char *name, bool gauge, const char *lname,
		    const char *lvalue, const char *const *le, const uint64_t *buckets, size_t n,
		    double sum)
{
	const char *g = gauge && o->om ? "g" : "";
	uint64_t cum = 0;

	for (size_t b = 0; b < n; b++) {
		cum += buckets[b];
		fprintf(o->f, "%s_bucket{", name);
		label(o, lname, lvalue, true);
		fprintf(o->f, "le=\"%s\"} %llu\n", le[b], (unsigned long long)cum);
	}
	fprintf(o->f, "%s_%ssum%s", name, g, lname ? "{" : "");
	label(o, lname, lvalue, false);
	fprintf(o->f, "%s %.9g\n", lname ? "}" : "", sum);
	fprintf(o->f, "%s_%scount%s", name, g, lname ? "{" : "");
	label(o, lname, lvalue, false);
	fprintf(o->f, "%s %llu\n", lname ? "}" : "", (unsigned long long)cum);
}
