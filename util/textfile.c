// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Reading user text without hanging, growing without bound or cutting it at
 * a NUL; echoing it back without sending the terminal escape sequences or a
 * whole file's contents.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "util/textfile.h"

void text_position(const char *text, size_t off, size_t *ret_line, size_t *ret_col)
{
	size_t line = 1, col = 1;

	for (size_t i = 0; i < off; i++) {
		if (text[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	*ret_line = line;
	*ret_col = col;
}

static int read_fd(int fd, char **ret, size_t *ret_len, char *err, size_t errlen)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap + 1), *nb;
	int r = 0;

	while (buf) {
		const char *nul;
		ssize_t n;

		if (len == cap) {
			if (cap > TEXT_MAX)
				break;
			cap *= 2;
			nb = realloc(buf, cap + 1);
			if (!nb)
				break;
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			snprintf(err, errlen, "cannot read: %s", strerror(-r));
			goto fail;
		}
		/* Checked as it comes: /dev/zero as stdin ends at once. */
		nul = n > 0 ? memchr(buf + len, '\0', (size_t)n) : NULL;
		if (nul) {
			size_t line, col;

			text_position(buf, (size_t)(nul - buf), &line, &col);
			snprintf(err, errlen, "a NUL byte at line %zu, column %zu: not a text file",
				 line, col);
			r = -EINVAL;
			goto fail;
		}
		if (n == 0) {
			if (len > TEXT_MAX)
				break;
			buf[len] = '\0';
			*ret = buf;
			*ret_len = len;
			return 0;
		}
		len += (size_t)n;
	}
	if (!buf) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	r = len > TEXT_MAX ? -EFBIG : -ENOMEM;
	if (r == -EFBIG)
		snprintf(err, errlen, "larger than %d KiB: not a filter or configuration file",
			 TEXT_MAX / 1024);
	else
		snprintf(err, errlen, "%s", strerror(ENOMEM));
fail:
	free(buf);
	return r;
}

int text_read(const char *path, bool allow_stdin, char **ret, size_t *ret_len, char *err,
	      size_t errlen)
{
	struct stat st;
	int fd, r;

	if (allow_stdin && !strcmp(path, "-"))
		return read_fd(STDIN_FILENO, ret, ret_len, err, errlen);
	/* O_NONBLOCK: a FIFO opens at once instead of waiting for a writer. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot open: %s", strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot open: %s", strerror(-r));
	} else if (!S_ISREG(st.st_mode)) {
		r = -EINVAL;
		snprintf(err, errlen, "not a regular file (%s)",
			 S_ISDIR(st.st_mode)  ? "a directory" :
			 S_ISFIFO(st.st_mode) ? "a FIFO" :
			 S_ISCHR(st.st_mode)  ? "a character device" :
			 S_ISBLK(st.st_mode)  ? "a block device" :
			 S_ISSOCK(st.st_mode) ? "a socket" :
						"not a file");
	} else if (st.st_size > TEXT_MAX) {
		r = -EFBIG;
		snprintf(err, errlen, "larger than %d KiB: not a filter or configuration file",
			 TEXT_MAX / 1024);
	} else {
		r = read_fd(fd, ret, ret_len, err, errlen);
	}
	close(fd);
	return r;
}

char *text_excerpt(char *out, size_t outlen, const char *s, size_t n, size_t max)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	if (!outlen)
		return out;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char e[5];
		size_t el = 0;

		if (i == max) {
			if (o + 3 < outlen) {
				memcpy(out + o, "...", 3);
				o += 3;
			}
			break;
		}
		if (c == '\n' || c == '\t' || c == '\\' || c == '\'') {
			e[el++] = '\\';
			e[el++] = c == '\n' ? 'n' : c == '\t' ? 't' : (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			e[el++] = '\\';
			e[el++] = 'x';
			e[el++] = hex[c >> 4];
			e[el++] = hex[c & 15];
		} else {
			e[el++] = (char)c;
		}
		if (o + el >= outlen)
			break;
		memcpy(out + o, e, el);
		o += el;
	}
	out[o] = '\0';
	return out;
}

char *text_quote(char *out, size_t outlen, const char *s)
{
	return text_excerpt(out, outlen, s, strlen(s), 32);
}
