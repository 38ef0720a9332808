/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the guard's configuration parser
 * (daemon/guard/core/config.c: guard_config_parse).
 *
 * Input: a configuration file's bytes, NUL bytes included (the parser must
 * refuse those, naming where). On success the configuration's lists are
 * read; on failure the message must be one line of printable characters,
 * NUL-terminated within its buffer.
 *
 * Seeds: daemon/guard/guard.conf.example, and the configurations of the guard's
 * tests (tests/fuzz/seeds/guard_config/).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/guard/guard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct guard_config c;
	char err[512];
	int r;

	if (size > 1 << 16)
		return 0;
	memset(err, 0x55, sizeof(err));
	r = guard_config_parse_buf(&c, (const char *)data, size, err, sizeof(err));
	if (r < 0) {
		size_t n = strnlen(err, sizeof(err));

		if (n == sizeof(err) || n == 0)
			__builtin_trap();
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)err[i] < 0x20 || err[i] == 0x7f)
				__builtin_trap();
	} else {
		volatile uint64_t x = c.tcp_states;

		for (size_t i = 0; i < c.n_exempt_uids; i++)
			x += c.exempt_uids[i].lo + c.exempt_uids[i].hi;
		for (size_t i = 0; i < c.n_exempt_cgroups; i++)
			x += c.exempt_cgroups[i].n + (uint64_t)c.exempt_cgroups[i].unit;
		for (size_t i = 0; i < c.n_exempt_marks; i++)
			x += c.exempt_marks[i].mark;
		for (size_t i = 0; i < c.n_exempt_dsts; i++)
			x += c.exempt_dsts[i].addr[15];
		(void)x;
	}
	guard_config_fini(&c);
	return 0;
}
