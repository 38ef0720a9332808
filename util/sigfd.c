// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/signalfd.h>

#include "util/sigfd.h"

int sigfd_open(const int *sigs, int flags)
{
	sigset_t mask;
	int fd, r;

	sigemptyset(&mask);
	for (; *sigs; sigs++)
		sigaddset(&mask, *sigs);
	r = pthread_sigmask(SIG_BLOCK, &mask, NULL);
	if (r)
		return -r;
	fd = signalfd(-1, &mask, SFD_CLOEXEC | flags);
	return fd < 0 ? -errno : fd;
}
