/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nodestroy.so: an LD_PRELOAD shim that makes the running kernel look like
 * one built without CONFIG_INET_DIAG_DESTROY, for tests/kill/cli.py and
 * tests/guard/guard_e2e.sh.
 *
 * Such a kernel answers every SOCK_DESTROY with EOPNOTSUPP before it looks
 * for the socket (inet_diag_cmd_exact(): the handler has no .destroy). This
 * shim wraps recvmmsg() and recvmsg() and rewrites the error of every
 * NLMSG_ERROR reply to a SOCK_DESTROY request (the reply quotes the request's
 * header) to -EOPNOTSUPP. The destroyer's probe, a request that names no
 * socket, then fails as it would on such a kernel, before anything is sent
 * for a real socket. Nothing else is changed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/netlink.h>

#define SOCK_DESTROY_TYPE 21

static void rewrite(void *buf, size_t len)
{
	struct nlmsghdr *nlh = buf;
	int rem = (int)len;

	for (; NLMSG_OK(nlh, rem); nlh = NLMSG_NEXT(nlh, rem)) {
		struct nlmsgerr *e = NLMSG_DATA(nlh);

		if (nlh->nlmsg_type != NLMSG_ERROR || nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
			continue;
		if (e->msg.nlmsg_type == SOCK_DESTROY_TYPE && e->error != 0)
			e->error = -EOPNOTSUPP;
	}
}

static void rewrite_msg(const struct msghdr *m, size_t len)
{
	/* Replies arrive in the first buffer, possibly truncated (MSG_TRUNC
	 * lengths exceed it): the headers that fit are rewritten. */
	if (m->msg_iovlen >= 1)
		rewrite(m->msg_iov[0].iov_base,
			len < m->msg_iov[0].iov_len ? len : m->msg_iov[0].iov_len);
}

int recvmmsg(int fd, struct mmsghdr *msgs, unsigned int vlen, int flags,
	     struct timespec *timeout)
{
	static int (*real)(int, struct mmsghdr *, unsigned int, int, struct timespec *);
	int n;

	if (!real)
		real = (int (*)(int, struct mmsghdr *, unsigned int, int,
				struct timespec *))dlsym(RTLD_NEXT, "recvmmsg");
	n = real(fd, msgs, vlen, flags, timeout);
	for (int i = 0; i < n; i++)
		rewrite_msg(&msgs[i].msg_hdr, msgs[i].msg_len);
	return n;
}

ssize_t recvmsg(int fd, struct msghdr *m, int flags)
{
	static ssize_t (*real)(int, struct msghdr *, int);
	ssize_t n;

	if (!real)
		real = (ssize_t (*)(int, struct msghdr *, int))dlsym(RTLD_NEXT, "recvmsg");
	n = real(fd, m, flags);
	if (n > 0 && !(flags & MSG_PEEK))
		rewrite_msg(m, (size_t)n);
	return n;
}
