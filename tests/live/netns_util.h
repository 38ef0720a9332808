/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Live tests never touch the host's network namespace: each test first moves
 * the calling thread into a fresh, private one with only "lo", brought up.
 */
#ifndef SOCKDIAG_TESTS_NETNS_UTIL_H
#define SOCKDIAG_TESTS_NETNS_UTIL_H

/* unshare(CLONE_NEWNET) and bring lo up. Returns 0 or a negative errno. */
int netns_enter_private(void);

/* Like netns_enter_private(), but exits with 77 (meson: skipped) when the
 * namespace cannot be created (no CAP_SYS_ADMIN), and 1 on other errors.
 * For a cmocka setup function or main(). */
void netns_enter_private_or_skip(void);

#endif
