// SPDX-License-Identifier: GPL-2.0-or-later
/* The line reader shared by the daemons' configuration files (see conf.h). */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/common/conf.h"
#include "util/textfile.h"

/*
 * fmt knows %s, %d and %u. A %s is text from the file (a key, a value, a
 * line): escaped and at most 32 bytes of it shown, so that a message stays
 * one short line whatever the file holds, and is never cut.
 */
int conf_fail(struct conf_line *l, const char *fmt, ...)
{
	char msg[768];
	size_t o = 0;
	va_list ap;

	va_start(ap, fmt);
	for (const char *f = fmt; *f && o + 1 < sizeof(msg); f++) {
		char q[TEXT_QUOTE_LEN];
		const char *add = q;

		if (*f != '%') {
			msg[o++] = *f;
			continue;
		}
		switch (*++f) {
		case 's':
			text_quote(q, sizeof(q), va_arg(ap, const char *));
			break;
		case 'd':
			snprintf(q, sizeof(q), "%d", va_arg(ap, int));
			break;
		case 'u':
			snprintf(q, sizeof(q), "%u", va_arg(ap, unsigned));
			break;
		default:
			add = "%";
			if (*f != '%')
				f = fmt + strlen(fmt) - 1;	/* unknown: a bug, stop */
		}
		for (; *add && o + 1 < sizeof(msg); add++)
			msg[o++] = *add;
	}
	va_end(ap);
	msg[o] = '\0';
	if (l->line)
		snprintf(l->err, l->errlen, "line %u: %s", l->line, msg);
	else
		snprintf(l->err, l->errlen, "%s", msg);
	return -EINVAL;
}

int conf_fail_why(struct conf_line *l, const char *key, const char *value, const char *why)
{
	char q[TEXT_QUOTE_LEN];

	text_quote(q, sizeof(q), value);
	if (l->line)
		snprintf(l->err, l->errlen, "line %u: %s: '%s': %s", l->line, key, q, why);
	else
		snprintf(l->err, l->errlen, "%s: '%s': %s", key, q, why);
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
	return conf_parse_buf(text, strlen(text), apply, ctx, err, errlen);
}

int conf_parse_buf(const char *text, size_t len, conf_apply_fn apply, void *ctx, char *err,
		   size_t errlen)
{
	struct conf_line l = { .err = err, .errlen = errlen };
	const char *nul = memchr(text, '\0', len);
	char *copy, *line, *next;
	int r = 0;

	if (errlen)
		err[0] = '\0';
	if (nul) {
		/* The rest of the file would be ignored: refuse it instead. */
		size_t ln, col;

		text_position(text, (size_t)(nul - text), &ln, &col);
		snprintf(err, errlen, "line %zu: a NUL byte at column %zu: not a text file", ln, col);
		return -EINVAL;
	}
	copy = strndup(text, len);
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
	size_t len;

	return text_read(path, false, ret, &len, err, errlen);
}
