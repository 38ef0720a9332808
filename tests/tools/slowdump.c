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
 *
 * SLOWDUMP_HOLD=PATH (tests/kill/cli.py: a socket that goes between the dump
 * and its destroy is reported "gone"): before the first SOCK_DESTROY request
 * that names a socket (not the capability probe, whose cookie is
 * 0xfffffffe/0xffffffff), create PATH and wait until the test removes it.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/netlink.h>

#ifndef NETLINK_SOCK_DIAG
#define NETLINK_SOCK_DIAG 4
#endif
#define SOCK_DESTROY_MSG 21	/* linux/sock_diag.h */
#define REQ_COOKIE_OFF 48	/* of inet_diag_req_v2's id.idiag_cookie */

/* SLOWDUMP_HOLD: the first SOCK_DESTROY naming a socket waits for the test. */
static void maybe_hold(const void *buf, size_t len)
{
	static int held;
	const char *path = getenv("SLOWDUMP_HOLD");
	const struct nlmsghdr *h = buf;
	uint32_t cookie[2];
	struct timespec ts = { 0, 10 * 1000000L };
	int fd;

	if (!path || held || len < NLMSG_HDRLEN + REQ_COOKIE_OFF + sizeof(cookie) ||
	    h->nlmsg_type != SOCK_DESTROY_MSG)
		return;
	memcpy(cookie, (const char *)buf + NLMSG_HDRLEN + REQ_COOKIE_OFF, sizeof(cookie));
	if (cookie[0] == 0xfffffffeu && cookie[1] == 0xffffffffu)
		return;
	held = 1;
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	close(fd);
	for (int i = 0; i < 6000 && access(path, F_OK) == 0; i++)
		nanosleep(&ts, NULL);
}

static int is_sock_diag(int fd)
{
	int dom = 0, proto = 0;
	socklen_t len = sizeof(int);

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) < 0 || dom != AF_NETLINK)
		return 0;
	len = sizeof(int);
	return getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len) == 0 &&
	       proto == NETLINK_SOCK_DIAG;
}

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
	if (is_sock_diag(fd))
		maybe_hold(buf, len);
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
	if (is_sock_diag(fd))
		maybe_hold(buf, len);
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
