/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for our copies of the kernel's bytecode audit and
 * interpreter (lib/filter/filter_bc.c), which the filter tests rely on.
 *
 * Input: a program. If sd_bc_audit() accepts it, sd_bc_run() must stay
 * inside it and terminate on any record (the audit's promise: every jump
 * goes forward and lands on an op or on the end, +4 at most).
 *
 * Seeds: any program sd_filter_bytecode() emits (tests/unit/test_bytecode.c
 * lists several byte for byte).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "lib/filter/filter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sdiag_sock s;
	uint8_t *copy;

	if (size > 65535 || sd_bc_audit(data, size, true) != 0)
		return 0;
	/* An exact-size copy, so ASan sees any read past the program. */
	copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	for (unsigned i = 0; i < 8; i++) {
		memset(&s, 0, sizeof(s));
		s.table = SDIAG_T_TCP;
		s.family = i & 1 ? AF_INET6 : AF_INET;
		s.inet.sport = (uint16_t)(i * 8191);
		s.inet.dport = (uint16_t)(i * 4093);
		memset(s.inet.src, (int)i, sizeof(s.inet.src));
		s.inet.ifindex = i % 3;
		s.has = i & 2 ? SDIAG_HAS_MARK | SDIAG_HAS_CGROUP : 0;
		(void)sd_bc_run(copy, size, &s);
	}
	free(copy);
	return 0;
}
