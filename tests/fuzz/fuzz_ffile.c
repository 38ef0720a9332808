/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the -F reader and the filter error display: the input
 * is a file's contents, handed to `list -F` through a memfd (a regular file),
 * so it goes through util/textfile.c (size cap, NUL bytes) and the newline
 * folding of cli/opts/options.c; the expression is then parsed offline and, when
 * malformed, the error is rendered as `sockdiag list` shows it. That text
 * must be three lines of printable bytes, of bounded length however long the
 * file: nothing of the input reaches a terminal raw.
 *
 * Seeds: the lines of tests/filters/corpus.txt (.ci/fuzz), some with a NUL.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "cli/opts/options.h"
#include "lib/filter/filter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], *argv[4], *text = NULL;
	struct sdiag_filter_error err = { 0 };
	struct sdiag_filter *f = NULL;
	struct cli_opts o;
	size_t len = 0;
	FILE *m;
	int fd, r, nl = 0;

	if (size > 1 << 16)
		return 0;
	fd = memfd_create("fuzz-F", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	argv[0] = (char *)"list";
	argv[1] = (char *)"-F";
	argv[2] = path;
	argv[3] = NULL;
	r = opts_parse(&o, 3, argv, NULL);
	close(fd);
	if (r != OPTS_OK)
		return 0;	/* a NUL, or nothing left to show */
	if (o.filter_expr && memchr(data, '\0', size))
		__builtin_trap();	/* a NUL must never pass */
	if (o.filter_expr &&
	    sd_filter_parse_flags(&f, o.filter_expr, &err, SD_FPARSE_OFFLINE) == -22) {
		if (strnlen(err.msg, sizeof(err.msg)) >= sizeof(err.msg) - 1)
			__builtin_trap();	/* a message filling the buffer may be cut */
		m = open_memstream(&text, &len);
		if (m) {
			opts_filter_error(m, "fuzz", o.filter_expr, &err);
			fclose(m);
			for (size_t i = 0; i < len; i++) {
				nl += text[i] == '\n';
				if (((unsigned char)text[i] < 0x20 && text[i] != '\n') ||
				    text[i] == 0x7f)
					__builtin_trap();
			}
			if (nl != 3 || len > 1200)
				__builtin_trap();
			free(text);
		}
	}
	sdiag_filter_free(f);
	opts_fini(&o);
	return 0;
}
