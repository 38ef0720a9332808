/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The "key = value" configuration files of the daemons (guard.conf,
 * exporter.conf): '#' comments, blank lines, one key per line, the first
 * error reported as "line N: message". The callers own the keys.
 */
#ifndef SOCKDIAG_CONF_H
#define SOCKDIAG_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct conf_line {
	unsigned line;		/* 1-based; 0 once the whole file was read */
	char *err;
	size_t errlen;
};

/* Called for each "key = value" line (value non-empty, both trimmed; value
 * may be modified). Returns 0, -EINVAL after conf_fail(), or -ENOMEM. */
typedef int (*conf_apply_fn)(void *ctx, struct conf_line *l, const char *key, char *value);

/* Write "line N: message" (just "message" for line 0) into l->err; returns
 * -EINVAL. fmt knows %s (text from the file: escaped, at most 32 bytes
 * shown), %d and %u. */
__attribute__((format(printf, 2, 3))) int conf_fail(struct conf_line *l, const char *fmt, ...);
/* "KEY: 'VALUE': WHY", VALUE escaped and cut as conf_fail's %s, WHY as it is
 * (a parser's own message, which escaped what it quotes). Returns -EINVAL. */
int conf_fail_why(struct conf_line *l, const char *key, const char *value, const char *why);

/* Walk text's lines through apply, stopping at the first error. Returns 0
 * or the error; err then holds the message (strerror for -ENOMEM). */
int conf_parse(const char *text, conf_apply_fn apply, void *ctx, char *err, size_t errlen);
/* The same over len bytes: a NUL byte among them is an error naming its line. */
int conf_parse_buf(const char *text, size_t len, conf_apply_fn apply, void *ctx, char *err,
		   size_t errlen);

/* Read a whole file (NUL-terminated, *ret freed by the caller): a regular
 * file of at most 1 MiB without a NUL byte (util/textfile.c). On failure
 * returns a negative errno with the reason in err ("cannot open: ...", "not
 * a regular file (a FIFO)", "a NUL byte at line 2, column 5: ..."); the
 * caller names the file. */
int conf_read_file(const char *path, char **ret, char *err, size_t errlen);

/* yes/true/on/1 and no/false/off/0; else conf_fail naming the key. */
int conf_bool(struct conf_line *l, const char *key, const char *v, bool *out);
/* Decimal (base 10) or C-style (base 0) unsigned 32-bit number, whole string. */
int conf_u32(const char *s, int base, uint32_t *out);

#endif
