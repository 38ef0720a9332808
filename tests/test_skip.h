/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Skips that show. cmocka's skip() alone exits 0 and meson reports OK, so a
 * case that cannot run here goes through SDIAG_SKIP(FEATURE, why...): it
 * prints "SKIP(FEATURE): why" (tests/summary.py collects these lines and, on
 * CI, fails when the kernel has FEATURE after all), counts the skip, and
 * sdiag_test_status() turns the cmocka result into the exit status: 1 if a
 * case failed, else 77 (meson: SKIP) if a case was skipped, else 0.
 * FEATURE is one of the names tests/summary.py knows how to probe.
 */
#ifndef SDIAG_TEST_SKIP_H
#define SDIAG_TEST_SKIP_H

#include <stdio.h>

static unsigned sdiag_test_skips __attribute__((unused));

#define SDIAG_SKIP(feature, ...)                                                                  \
	do {                                                                                      \
		printf("SKIP(%s): ", feature);                                                    \
		printf(__VA_ARGS__);                                                              \
		printf("\n");                                                                     \
		fflush(stdout);                                                                   \
		sdiag_test_skips++;                                                               \
		skip();                                                                           \
	} while (0)

/* FAILED: what cmocka_run_group_tests() returned (summed over groups). */
static inline int sdiag_test_status(int failed)
{
	if (failed)
		return 1;
	return sdiag_test_skips ? 77 : 0;
}

#endif
