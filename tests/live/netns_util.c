/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "tests/live/netns_util.h"

int netns_enter_private(void)
{
	struct ifreq ifr;
	int fd, r = 0;

	if (unshare(CLONE_NEWNET) < 0)
		return -errno;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
		r = -errno;
		goto out;
	}
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		r = -errno;
out:
	close(fd);
	return r;
}

void netns_enter_private_or_skip(void)
{
	int r = netns_enter_private();

	if (r == -EPERM) {
		fprintf(stderr, "SKIP(netns): cannot create a network namespace (need CAP_SYS_ADMIN)\n");
		exit(77);
	}
	if (r < 0) {
		fprintf(stderr, "cannot set up a private network namespace: %s\n", strerror(-r));
		exit(1);
	}
}
