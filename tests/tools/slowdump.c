/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * slowdump.so: an LD_PRELOAD shim that makes every sock_diag request take
 * SLOWDUMP_MS milliseconds longer, so that a test can be sure requests
 * arrive while the exporter's pass is still under way
 * (tests/exporter/exporter_e2e.py: concurrent scrapes share one pass).
 * With SLOWDUMP_RANDOM=SEED each request waits a random 0..SLOWDUMP_MS ms
 * instead (tests/guard/guard_race.sh: the guard's dumps, as slow as on a busy
 * host, by varying amounts).
 * It wraps send(), sendto() and sendmsg() on NETLINK_SOCK_DIAG sockets and
 * sleeps before the real call. Nothing else changes.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>
#include <sys/socket.h>
#include <linux/netlink.h>

#ifndef NETLINK_SOCK_DIAG
#define NETLINK_SOCK_DIAG 4
#endif

static void maybe_sleep(int fd)
{
	const char *ms = getenv("SLOWDUMP_MS");
	int dom = 0, proto = 0;
	socklen_t len = sizeof(int);
	struct timespec ts;
	long v;

	if (!ms || getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) < 0 || dom != AF_NETLINK)
		return;
	len = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len) < 0 ||
	    proto != NETLINK_SOCK_DIAG)
		return;
	v = strtol(ms, NULL, 10);
	if (getenv("SLOWDUMP_RANDOM")) {
		static unsigned seed;

		if (!seed)
			seed = (unsigned)strtoul(getenv("SLOWDUMP_RANDOM"), NULL, 10) | 1;
		v = v > 0 ? (long)(rand_r(&seed) % (v + 1)) : 0;
	}
	ts.tv_sec = v / 1000;
	ts.tv_nsec = (v % 1000) * 1000000L;
	nanosleep(&ts, NULL);
}

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	static ssize_t (*real)(int, const void *, size_t, int);

	if (!real)
		real = (ssize_t(*)(int, const void *, size_t, int))dlsym(RTLD_NEXT, "send");
	maybe_sleep(fd);
	return real(fd, buf, len, flags);
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to,
	       socklen_t tolen)
{
	static ssize_t (*real)(int, const void *, size_t, int, const struct sockaddr *,
			       socklen_t);

	if (!real)
		real = (ssize_t(*)(int, const void *, size_t, int, const struct sockaddr *,
				   socklen_t))dlsym(RTLD_NEXT, "sendto");
	maybe_sleep(fd);
	return real(fd, buf, len, flags, to, tolen);
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	static ssize_t (*real)(int, const struct msghdr *, int);

	if (!real)
		real = (ssize_t(*)(int, const struct msghdr *, int))dlsym(RTLD_NEXT, "sendmsg");
	maybe_sleep(fd);
	return real(fd, msg, flags);
}
