/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The signals a command or daemon handles in its poll loop, read from a
 * signalfd (each had its own copy of these lines).
 */
#ifndef SOCKDIAG_SIGFD_H
#define SOCKDIAG_SIGFD_H

/* Block the signals of sigs (0-terminated) in this thread, and in the threads
 * it starts later, and return a signalfd that reads them (SFD_CLOEXEC, plus
 * flags: SFD_NONBLOCK), or a negative errno. */
int sigfd_open(const int *sigs, int flags);

#endif
