/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the sock_diag reply handling of the transport
 * (lib/core/transport.c: a dump's datagrams, sequence/port checks, DONE, ERROR,
 * truncation, the drain after an abort) and of the destroyer
 * (lib/ops/destroy_nl.c: NLMSG_ERROR replies matched to the requests of a batch).
 * A reply stream must never hang, crash, or be misread: every result the
 * destroyer reports is 0 or a negative errno the kernel could send.
 *
 * The kernel's side is played by the input: recv(), recvmmsg() and sendto()
 * are defined here, so nothing is sent to any kernel (the target also moves
 * to a new network namespace first, to be sure: it needs root).
 * Input: one byte of flags, then datagrams, each a little-endian u16 length
 * and its bytes.
 *   bit 0  transport (0) or destroyer (1)
 *   bit 1  stamp each message with the request's sequence number and port 0
 *          (so captured replies count as ours; without it they are foreign)
 *   bit 2  transport: the callback aborts the dump at its second message
 *   bits 3-7  destroyer: requests in the batch - 1
 * Seeds: the captured dumps of tests/fixtures/ framed this way (.ci/fuzz).
 */

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include "lib/core/internal.h"
#include "lib/family/family.h"
#include "lib/ops/destroy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static struct {
	bool active, stamp;
	const uint8_t *in;
	size_t len;
	uint32_t seq;	/* the first request's sequence number */
	uint32_t n;	/* requests in the last send */
} k;

static bool next_dgram(const uint8_t **p, size_t *len)
{
	size_t l;

	if (k.len < 2)
		return false;
	l = (size_t)k.in[0] | (size_t)k.in[1] << 8;
	k.in += 2;
	k.len -= 2;
	if (l > k.len)
		l = k.len;
	*p = k.in;
	*len = l;
	k.in += l;
	k.len -= l;
	return true;
}

/* Make the messages in buf[0..len) replies to our requests. */
static void stamp(uint8_t *buf, size_t len)
{
	size_t off = 0;

	while (k.stamp && off + sizeof(struct nlmsghdr) <= len) {
		struct nlmsghdr *nlh = (struct nlmsghdr *)(buf + off);

		nlh->nlmsg_seq = k.seq + (k.n ? nlh->nlmsg_seq % k.n : 0);
		nlh->nlmsg_pid = 0;
		if (nlh->nlmsg_len < sizeof(*nlh) || nlh->nlmsg_len > len - off)
			break;
		off += NLMSG_ALIGN(nlh->nlmsg_len);
	}
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to,
	       socklen_t tolen)
{
	const struct nlmsghdr *nlh = buf;

	if (!k.active)
		return syscall(SYS_sendto, fd, buf, len, flags, to, tolen);
	k.seq = len >= sizeof(*nlh) ? nlh->nlmsg_seq : 0;
	k.n = 0;
	for (size_t off = 0; off + sizeof(*nlh) <= len && nlh->nlmsg_len >= sizeof(*nlh) &&
			     nlh->nlmsg_len <= len - off;
	     off += NLMSG_ALIGN(nlh->nlmsg_len), nlh = (const void *)((const uint8_t *)buf + off))
		k.n++;
	return (ssize_t)len;
}

ssize_t recv(int fd, void *buf, size_t size, int flags)
{
	const uint8_t *p;
	size_t l, n;

	if (!k.active)
		return syscall(SYS_recvfrom, fd, buf, size, flags, NULL, NULL);
	if (!next_dgram(&p, &l)) {
		errno = EAGAIN;	/* the kernel has nothing more: no DONE came */
		return -1;
	}
	n = l < size ? l : size;
	memcpy(buf, p, n);
	stamp(buf, n);
	return (ssize_t)((flags & MSG_TRUNC) ? l : n);
}

int recvmmsg(int fd, struct mmsghdr *msgs, unsigned int vlen, int flags, struct timespec *t)
{
	unsigned i;

	if (!k.active)
		return (int)syscall(SYS_recvmmsg, fd, msgs, vlen, flags, t);
	for (i = 0; i < vlen; i++) {
		const uint8_t *p;
		size_t l, n;

		if (!next_dgram(&p, &l))
			break;
		n = l < msgs[i].msg_hdr.msg_iov[0].iov_len ? l : msgs[i].msg_hdr.msg_iov[0].iov_len;
		memcpy(msgs[i].msg_hdr.msg_iov[0].iov_base, p, n);
		stamp(msgs[i].msg_hdr.msg_iov[0].iov_base, n);
		msgs[i].msg_len = (unsigned)n;
		msgs[i].msg_hdr.msg_flags = n < l ? MSG_TRUNC : 0;
	}
	if (!i) {
		errno = EAGAIN;
		return -1;
	}
	return (int)i;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* Nothing reaches a kernel, but the sockets are real: make them in a
	 * namespace of our own, never the host's. */
	if (unshare(CLONE_NEWNET) < 0) {
		perror("fuzz_replies: unshare(CLONE_NEWNET) (needs root)");
		exit(1);
	}
	return 0;
}

struct dump_ctx {
	unsigned seen, abort_at;
};

static int msg_cb(const struct nlmsghdr *nlh, void *data)
{
	struct dump_ctx *c = data;
	struct sdiag_sock s;

	memset(&s, 0, sizeof(s));
	(void)sd_inet_decode(nlh, &s);
	memset(&s, 0, sizeof(s));
	(void)sd_unix_decode(nlh, &s);
	if (++c->seen == c->abort_at)
		return -ECANCELED;
	return 0;
}

static void transport(unsigned flags)
{
	struct dump_ctx c = { .abort_at = flags & 4 ? 2 : 0 };
	struct sd_nl *nl = NULL;
	struct nlmsghdr *req;

	if (sd_nl_open(&nl) < 0)
		return;
	/* Two dumps on one socket: the second starts after whatever the
	 * first left (an abort drains to DONE; a stale reply is foreign). */
	for (int i = 0; i < 2; i++) {
		int r;

		req = sd_nl_reqbuf(nl, NULL);
		memset(req, 0, NLMSG_HDRLEN);
		req->nlmsg_len = NLMSG_HDRLEN;
		req->nlmsg_type = SOCK_DIAG_BY_FAMILY;
		r = sd_nl_dump(nl, NULL, msg_cb, &c);
		if (r > 0 || r < -4095)
			__builtin_trap();
	}
	sd_nl_close(nl);
}

static void destroyer(unsigned flags)
{
	unsigned n = (flags >> 3) + 1;
	struct sd_nl *nl = NULL;
	struct sd_dnl *d = NULL;
	int errs[32];

	if (sd_nl_open(&nl) < 0)
		return;
	if (sd_dnl_open(&d, sd_nl_fd(nl)) < 0)
		goto out;
	for (unsigned i = 0; i < n; i++) {
		struct sdiag_sock s = { .table = SDIAG_T_TCP, .family = AF_INET,
					.protocol = 6, .state = SDIAG_SS_ESTABLISHED,
					.cookie = 1000 + i };

		s.inet.sport = (uint16_t)(40000 + i);
		s.inet.dport = 443;
		if (sd_dnl_add(d, &s, 0) < 0)
			goto out;
	}
	if (sd_dnl_send(d, errs, n) == 0)
		for (unsigned i = 0; i < n; i++)
			if (errs[i] > 0 || errs[i] < -4095)
				__builtin_trap();
out:
	sd_dnl_close(d);
	sd_nl_close(nl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned flags;

	if (size < 1 || size > 1 << 20)
		return 0;
	flags = data[0];
	k.in = data + 1;
	k.len = size - 1;
	k.stamp = flags & 2;
	k.active = true;
	if (flags & 1)
		destroyer(flags);
	else
		transport(flags);
	k.active = false;
	return 0;
}
