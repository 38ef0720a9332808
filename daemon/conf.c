// SPDX-License-Identifier: GPL-2.0-or-later
/* The line reader shared by the daemons' configuration files (see conf.h). */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

int conf_fail(struct conf_line *l, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (l->line)
		snprintf(l->err, l->errlen, "line %u: %s", l->line, msg);
	else
		snprintf(l->err, l->errlen, "%s", msg);
	return -EINVAL;
}

int conf_bool(struct conf_line *l, const char *key, const char *v, bool *out)
{
	if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "on") || !strcmp(v, "1"))
		*out = true;
	else if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "off") || !strcmp(v, "0"))
		*out = false;
	else
		return conf_fail(l, "%s: expected yes or no, got '%s'", key, v);
	return 0;
}

int conf_u32(const char *s, int base, uint32_t *out)
{
	unsigned long long v;
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || *end || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

int conf_parse(const char *text, conf_apply_fn apply, void *ctx, char *err, size_t errlen)
{
	struct conf_line l = { .err = err, .errlen = errlen };
	char *copy = strdup(text), *line, *next;
	int r = 0;

	if (errlen)
		err[0] = '\0';
	if (!copy) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	for (line = copy; line && r == 0; line = next) {
		char *hash, *eq, *key, *value;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		l.line++;
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		line = trim(line);
		if (!*line)
			continue;
		eq = strchr(line, '=');
		if (!eq) {
			r = conf_fail(&l, "expected 'key = value', got '%s'", line);
			break;
		}
		*eq = '\0';
		key = trim(line);
		value = trim(eq + 1);
		if (!*value) {
			r = conf_fail(&l, "%s: missing value", key);
			break;
		}
		r = apply(ctx, &l, key, value);
	}
	free(copy);
	if (r < 0 && errlen && !err[0]) /* out of memory: no line to blame */
		snprintf(err, errlen, "%s", strerror(-r));
	return r;
}

int conf_read_file(const char *path, char **ret, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re"), *m = NULL;
	char *text = NULL, buf[4096];
	size_t len = 0, n;
	int r = 0;

	if (!f) {
		r = -errno;
		snprintf(err, errlen, "cannot open: %s", strerror(-r));
		return r;
	}
	m = open_memstream(&text, &len);
	if (!m) {
		r = -ENOMEM;
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		goto out;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, m);
	/* A directory opens, then fails to read (EISDIR). */
	if (ferror(f))
		r = errno ? -errno : -EIO;
	if (fclose(m) != 0 && r == 0)
		r = -ENOMEM;
	if (r < 0)
		snprintf(err, errlen, "cannot read: %s", strerror(-r));
out:
	fclose(f);
	if (r < 0)
		free(text);
	else
		*ret = text ? text : strdup("");
	return r < 0 ? r : (*ret ? 0 : -ENOMEM);
}
