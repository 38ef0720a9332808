/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Text the user hands over (a -F filter file, the guard's configuration) and
 * text echoed back in error messages. Shared by cli/ and daemon/.
 */
#ifndef SOCKDIAG_TEXTFILE_H
#define SOCKDIAG_TEXTFILE_H

#include <stdbool.h>
#include <stddef.h>

/* The largest file read: a filter or a configuration is a few lines. */
#define TEXT_MAX (1024 * 1024)

/*
 * Read a whole text file: a regular file (never a FIFO, a device or a
 * directory: opened without blocking and checked first), or standard input
 * when allow_stdin and path is "-". At most TEXT_MAX bytes; a NUL byte is an
 * error naming its line and column. Returns 0 with *ret (malloc'd, NUL
 * terminated, *ret_len bytes), or a negative errno with a one-line reason in
 * err (the path not included).
 */
int text_read(const char *path, bool allow_stdin, char **ret, size_t *ret_len, char *err,
	      size_t errlen);
/* The line and column (from 1) of byte off in text. */
void text_position(const char *text, size_t off, size_t *ret_line, size_t *ret_col);
/*
 * s[0..n) for an error message: control characters, DEL, quotes and
 * backslashes escaped (\n, \t, \xNN), at most max bytes of s shown, then
 * "...". out always ends in a NUL; returns out.
 */
char *text_excerpt(char *out, size_t outlen, const char *s, size_t n, size_t max);
/* The same for a NUL-terminated string, at most 32 bytes shown. */
char *text_quote(char *out, size_t outlen, const char *s);
/* Room text_quote needs. */
#define TEXT_QUOTE_LEN (32 * 4 + 4)
#define TQ(buf, s) text_quote((buf), sizeof(buf), (s))

#endif
