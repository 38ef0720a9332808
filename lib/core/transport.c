/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Transport: every netlink socket of the tree (lib/core/nl.h says what it
 * offers), over libmnl. Netlink's failure modes are handled here, once:
 *  - every recv of a dump uses the same 64 KiB buffer (the kernel builds
 *    chunks of up to ~32 KiB, sized from the largest buffer seen), so
 *    MSG_TRUNC cannot happen for sock_diag; if it does, the dump fails with
 *    -EMSGSIZE, never silently;
 *  - EINTR is retried; ENOBUFS cannot happen on a dump (the kernel refills
 *    only below half the receive buffer) and is reported as an error if it
 *    does; on an event socket it means events were lost (-ENOBUFS), and so
 *    does an event cut short;
 *  - messages with a foreign sequence number or port are dropped (leftovers
 *    of an aborted earlier dump);
 *  - a dump aborted by the caller is drained to its DONE so the socket can
 *    take the next request (otherwise the kernel answers EBUSY);
 *  - NLM_F_DUMP_INTR: the kernel's table changed while it was dumped (it
 *    sets the flag where a generation counter moved: rtnetlink's links and
 *    addresses, conntrack; never sock_diag). Such a dump is read to its DONE
 *    and then fails with -EINTR; sd_nl_dump_retry() runs it again, at most
 *    SD_NL_DUMP_TRIES times in all (wireguard-tools' policy);
 *  - a message whose nlmsg_len runs past the datagram ends the walk of that
 *    datagram (sd_nl_first/next, with size_t lengths: no int punning);
 *  - error replies carry the kernel's extended ACK (NETLINK_EXT_ACK): its
 *    message is kept in the handle for the caller to show.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include "lib/core/internal.h"

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif
#ifndef NETLINK_GET_STRICT_CHK
#define NETLINK_GET_STRICT_CHK 12
#endif
#ifndef NLM_F_CAPPED
#define NLM_F_CAPPED 0x100
#endif
#ifndef NLM_F_ACK_TLVS
#define NLM_F_ACK_TLVS 0x200
#endif
#define SD_NLMSGERR_ATTR_MSG 1

#define SD_RECVBUF (64 * 1024)
#define SD_REQBUF (8 * 1024)
#define SD_SO_RCVBUF (1024 * 1024)
/* A batch's answers are read RX_VLEN at a time, each into one RX_SLOT of the
 * receive buffer (an error answer with NETLINK_CAP_ACK is 36 bytes, a few
 * hundred with an extended-ACK message). */
#define RX_VLEN 64
#define RX_SLOT (SD_RECVBUF / RX_VLEN)
#define PENDING 1

struct sd_nl {
	int fd;
	struct mnl_socket *sock;
	bool adopted; /* a socketpair playing the kernel: send without an address */
	uint32_t portid;
	uint32_t seq; /* the next sequence number */
	int rcvbuf, sndbuf;
	uint64_t bytes_read;
	/* The dump or request under way. */
	uint32_t cur_seq;
	bool active; /* sent, its DONE/ERROR not read yet */
	bool single; /* a request: a data message without NLM_F_MULTI ends it */
	bool intr;   /* a message carried NLM_F_DUMP_INTR */
	/* sd_nl_dump_msg's place: the next message of the datagram in buf. */
	const struct nlmsghdr *cur;
	size_t left;
	int kerr;
	char ext_ack[256];
	uint8_t req[SD_REQBUF] __attribute__((aligned(8)));
	uint8_t buf[SD_RECVBUF] __attribute__((aligned(8)));
};

/* ---- namespaces and sockets ------------------------------------------------------------- */

int sd_in_netns(int nsfd, int (*fn)(void *arg), void *arg)
{
	int self, r, r2;

	/* A netlink socket belongs to the namespace it was created in, whatever
	 * the thread does later: enter, create, come back. */
	self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0)
		return -errno;
	if (setns(nsfd, CLONE_NEWNET) < 0) {
		r = -errno;
		close(self);
		return r;
	}
	r = fn(arg);
	r2 = setns(self, CLONE_NEWNET) < 0 ? -errno : 0;
	close(self);
	/* Stranded in the other namespace: fn's result must not be used there.
	 * Callers undo fn on error; report the failure to return. */
	return r2 < 0 ? r2 : r;
}

/* Entering a namespace needs CAP_SYS_ADMIN over it: stay put when we are there. */
static bool in_this_netns(int nsfd)
{
	struct stat a, b;
	int self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	bool same;

	if (self < 0)
		return false;
	same = fstat(nsfd, &a) == 0 && fstat(self, &b) == 0 && a.st_ino == b.st_ino &&
	       a.st_dev == b.st_dev;
	close(self);
	return same;
}

struct open_args {
	int proto, flags;
	struct mnl_socket *sock;
};

static int open_cb(void *arg)
{
	struct open_args *a = arg;

	a->sock = mnl_socket_open2(a->proto, a->flags);
	return a->sock ? 0 : -errno;
}

/* Set a buffer size, forcing past the sysctl limit when allowed; returns what the kernel set. */
static int set_buf(int fd, int opt, int force_opt, int want)
{
	int got = 0;
	socklen_t len = sizeof(got);

	if (want > 0 && setsockopt(fd, SOL_SOCKET, force_opt, &want, sizeof(want)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, opt, &want, sizeof(want));
	if (getsockopt(fd, SOL_SOCKET, opt, &got, &len) < 0)
		return 0;
	return got;
}

int sd_nl_open_with(struct sd_nl **ret, const struct sd_nl_opts *o)
{
	struct open_args a = { .proto = o->proto,
			       .flags = SOCK_CLOEXEC | (o->nonblock ? SOCK_NONBLOCK : 0) };
	struct sd_nl *nl;
	int r, one = 1;

	nl = calloc(1, sizeof(*nl));
	if (!nl)
		return -ENOMEM;
	nl->fd = -1;
	if (o->in_netns && !in_this_netns(o->nsfd))
		r = sd_in_netns(o->nsfd, open_cb, &a);
	else
		r = open_cb(&a);
	nl->sock = a.sock;
	if (r < 0)
		goto fail;
	nl->fd = mnl_socket_get_fd(nl->sock);
	/* Error replies echo only the request's header, and carry the kernel's
	 * message (extended ACK). Both best effort. */
	(void)mnl_socket_setsockopt(nl->sock, NETLINK_CAP_ACK, &one, sizeof(one));
	(void)mnl_socket_setsockopt(nl->sock, NETLINK_EXT_ACK, &one, sizeof(one));
	if (o->strict)
		(void)mnl_socket_setsockopt(nl->sock, NETLINK_GET_STRICT_CHK, &one, sizeof(one));
	nl->sndbuf = set_buf(nl->fd, SO_SNDBUF, SO_SNDBUFFORCE, o->sndbuf);
	nl->rcvbuf = set_buf(nl->fd, SO_RCVBUF, SO_RCVBUFFORCE, o->rcvbuf);
	if (mnl_socket_bind(nl->sock, o->groups, MNL_SOCKET_AUTOPID) < 0) {
		r = -errno;
		goto fail;
	}
	nl->portid = mnl_socket_get_portid(nl->sock);
	nl->seq = 1;
	*ret = nl;
	return 0;
fail:
	sd_nl_close(nl);
	return r;
}

int sd_nl_open(struct sd_nl **ret)
{
	struct sd_nl_opts o = { .proto = NETLINK_SOCK_DIAG, .rcvbuf = SD_SO_RCVBUF };

	return sd_nl_open_with(ret, &o);
}

int sd_nl_adopt(struct sd_nl **ret, int fd, uint32_t portid)
{
	struct sd_nl *nl = calloc(1, sizeof(*nl));

	if (!nl)
		return -ENOMEM;
	nl->sock = mnl_socket_fdopen(fd);
	if (!nl->sock) {
		free(nl);
		return -errno;
	}
	nl->fd = fd;
	nl->adopted = true;
	nl->portid = portid;
	nl->seq = 1;
	*ret = nl;
	return 0;
}

void sd_nl_close(struct sd_nl *nl)
{
	if (!nl)
		return;
	if (nl->sock)
		mnl_socket_close(nl->sock);
	free(nl);
}

int sd_nl_fd(const struct sd_nl *nl)
{
	return nl->fd;
}

uint32_t sd_nl_portid(const struct sd_nl *nl)
{
	return nl->portid;
}

int sd_nl_rcvbuf(const struct sd_nl *nl)
{
	return nl->rcvbuf;
}

int sd_nl_sndbuf(const struct sd_nl *nl)
{
	return nl->sndbuf;
}

void *sd_nl_reqbuf(struct sd_nl *nl, size_t *ret_size)
{
	if (ret_size)
		*ret_size = sizeof(nl->req);
	return nl->req;
}

const char *sd_nl_ext_ack(const struct sd_nl *nl)
{
	return nl->ext_ack;
}

uint64_t sd_nl_bytes_read(const struct sd_nl *nl)
{
	return nl->bytes_read;
}

/* n consecutive sequence numbers, never 0 (some callers take 0 for "none"). */
static uint32_t take_seq(struct sd_nl *nl, uint32_t n)
{
	uint32_t s = nl->seq;

	if (s == 0 || s + n < s)
		s = 1;
	nl->seq = s + n;
	return s;
}

static int send_all(struct sd_nl *nl, const void *buf, size_t len)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	ssize_t w;

	do
		w = sendto(nl->fd, buf, len, 0, nl->adopted ? NULL : (struct sockaddr *)&kernel,
			   nl->adopted ? 0 : sizeof(kernel));
	while (w < 0 && errno == EINTR);
	return w < 0 ? -errno : 0;
}

/* ---- messages --------------------------------------------------------------------------- */

const struct nlmsghdr *sd_nl_first(const void *buf, size_t len, size_t *left)
{
	const struct nlmsghdr *nlh = buf;

	*left = len;
	if (len < sizeof(*nlh) || nlh->nlmsg_len < sizeof(*nlh) || nlh->nlmsg_len > len)
		return NULL;
	return nlh;
}

const struct nlmsghdr *sd_nl_next(const struct nlmsghdr *nlh, size_t *left)
{
	size_t step = NLMSG_ALIGN((size_t)nlh->nlmsg_len);

	if (step >= *left) {
		*left = 0;
		return NULL;
	}
	return sd_nl_first((const uint8_t *)nlh + step, *left - step, left);
}

/* The extended ACK's message of an NLMSG_ERROR or DONE, if it carries one. */
static void take_ext_ack(struct sd_nl *nl, const struct nlmsghdr *nlh)
{
	const uint8_t *p = mnl_nlmsg_get_payload(nlh);
	size_t plen = nlh->nlmsg_len - NLMSG_HDRLEN, off = sizeof(int);
	const struct nlattr *attr;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (nlh->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = (const void *)p;

		if (plen < sizeof(*e) || e->msg.nlmsg_len < NLMSG_HDRLEN)
			return;
		/* Without NLM_F_CAPPED the whole request is echoed before the TLVs. */
		off = sizeof(*e);
		if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
			off += (size_t)e->msg.nlmsg_len - NLMSG_HDRLEN;
	}
	off = NLMSG_ALIGN(off);
	if (off >= plen)
		return;
	mnl_attr_for_each_payload((const void *)(p + off), plen - off) {
		size_t len;

		if (mnl_attr_get_type(attr) != SD_NLMSGERR_ATTR_MSG)
			continue;
		len = strnlen(mnl_attr_get_payload(attr), mnl_attr_get_payload_len(attr));
		if (len >= sizeof(nl->ext_ack))
			len = sizeof(nl->ext_ack) - 1;
		memcpy(nl->ext_ack, mnl_attr_get_payload(attr), len);
		nl->ext_ack[len] = 0;
		return;
	}
}

/* An errno is -1..-4095; anything else is no kernel's answer. */
static int kernel_errno(int e)
{
	return e >= 0 ? 0 : e >= -4095 ? e : -EPROTO;
}

enum step { STEP_SKIP, STEP_DATA, STEP_END };

/* What one message of the dump or request under way is: a stale reply or a
 * NOOP to skip, a data message, or its end (DONE, ERROR, a single answer's
 * last data message: nl->active cleared, nl->kerr set). */
static enum step step(struct sd_nl *nl, const struct nlmsghdr *nlh)
{
	if (nlh->nlmsg_seq != nl->cur_seq || (nlh->nlmsg_pid && nlh->nlmsg_pid != nl->portid))
		return STEP_SKIP; /* stale reply of an earlier request */
	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		nl->intr = true;
	switch (nlh->nlmsg_type) {
	case NLMSG_NOOP:
		return STEP_SKIP;
	case NLMSG_DONE:
		if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(int))
			nl->kerr = kernel_errno(*(const int *)mnl_nlmsg_get_payload(nlh));
		if (nl->kerr)
			take_ext_ack(nl, nlh);
		nl->active = false;
		return STEP_END;
	case NLMSG_ERROR: {
		const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

		nl->active = false;
		if (mnl_nlmsg_get_payload_len(nlh) < sizeof(e->error))
			nl->kerr = -EBADMSG;
		else
			nl->kerr = kernel_errno(e->error);
		if (nl->kerr)
			take_ext_ack(nl, nlh);
		return STEP_END;
	}
	default:
		if (nlh->nlmsg_type < NLMSG_MIN_TYPE)
			return STEP_SKIP;
		return STEP_DATA;
	}
}

/* The messages of one datagram of the dump or request under way. Returns 1
 * when it is over (DONE, ERROR, a single answer seen), 0 to read on, or cb's
 * negative return (then the rest of the datagram is still searched for the
 * end). cb NULL: data messages are dropped (a drain). */
static int run_datagram(struct sd_nl *nl, size_t len, sd_msg_cb ahead, sd_msg_cb cb, void *data)
{
	const struct nlmsghdr *nlh;
	size_t left;
	int cb_err = 0, r;

	if (ahead)
		for (nlh = sd_nl_first(nl->buf, len, &left); nlh; nlh = sd_nl_next(nlh, &left))
			if (nlh->nlmsg_type >= NLMSG_MIN_TYPE)
				ahead(nlh, data);
	for (nlh = sd_nl_first(nl->buf, len, &left); nlh; nlh = sd_nl_next(nlh, &left)) {
		enum step st = step(nl, nlh);

		if (st == STEP_END)
			return cb_err ? cb_err : 1;
		if (st == STEP_SKIP)
			continue;
		if (cb && !cb_err && (r = cb(nlh, data)) < 0)
			cb_err = r;
		if (nl->single && !(nlh->nlmsg_flags & NLM_F_MULTI)) {
			nl->active = false;
			return cb_err ? cb_err : 1;
		}
	}
	return cb_err;
}

/* ---- dumps and requests ----------------------------------------------------------------- */

static int start(struct sd_nl *nl, uint16_t flags, bool single)
{
	struct nlmsghdr *req = (struct nlmsghdr *)nl->req;
	int r;

	sd_nl_dump_end(nl);
	nl->cur_seq = take_seq(nl, 1);
	req->nlmsg_seq = nl->cur_seq;
	req->nlmsg_pid = 0;
	req->nlmsg_flags |= flags;
	nl->single = single;
	nl->cur = NULL;
	nl->intr = false;
	nl->kerr = 0;
	nl->ext_ack[0] = 0;
	r = send_all(nl, req, req->nlmsg_len);
	if (r < 0)
		return r;
	nl->active = true;
	return 0;
}

int sd_nl_dump_begin(struct sd_nl *nl)
{
	return start(nl, NLM_F_REQUEST | NLM_F_DUMP, false);
}

/* One datagram into the receive buffer: its length or a negative errno. A
 * socket error or a truncated datagram ends the dump without a drain (its
 * DONE may be what was lost; later replies are dropped by their sequence). */
static ssize_t recv_one(struct sd_nl *nl)
{
	for (;;) {
		ssize_t n = recv(nl->fd, nl->buf, sizeof(nl->buf), MSG_TRUNC);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (size_t)n > sizeof(nl->buf)) {
			nl->active = false;
			return n < 0 ? -errno : -EMSGSIZE;
		}
		nl->bytes_read += (uint64_t)n;
		return n;
	}
}

int sd_nl_dump_next(struct sd_nl *nl, sd_msg_cb ahead, sd_msg_cb cb, void *data)
{
	ssize_t n;
	int r;

	if (!nl->active)
		return -EINVAL;
	n = recv_one(nl);
	if (n < 0)
		return (int)n;
	r = run_datagram(nl, (size_t)n, ahead, cb, data);
	if (r < 0)
		return r;
	if (r == 0)
		return 1;
	if (nl->kerr)
		return nl->kerr;
	return nl->intr ? -EINTR : 0;
}

void sd_nl_dump_end(struct sd_nl *nl)
{
	nl->cur = NULL;
	while (nl->active) {
		ssize_t n = recv_one(nl);

		if (n >= 0)
			(void)run_datagram(nl, (size_t)n, NULL, NULL, NULL);
	}
}

int sd_nl_dump_msg(struct sd_nl *nl, sd_msg_cb ahead, void *data, const struct nlmsghdr **ret)
{
	for (;;) {
		const struct nlmsghdr *nlh = nl->cur;
		ssize_t n;

		if (nlh) {
			nl->cur = sd_nl_next(nlh, &nl->left);
			switch (step(nl, nlh)) {
			case STEP_SKIP:
				continue;
			case STEP_DATA:
				*ret = nlh;
				return 1;
			case STEP_END:
				nl->cur = NULL;
				return nl->kerr ? nl->kerr : nl->intr ? -EINTR : 0;
			}
		}
		if (!nl->active)
			return -EINVAL;
		n = recv_one(nl);
		if (n < 0)
			return (int)n;
		if (ahead)
			for (nlh = sd_nl_first(nl->buf, (size_t)n, &nl->left); nlh;
			     nlh = sd_nl_next(nlh, &nl->left))
				if (nlh->nlmsg_type >= NLMSG_MIN_TYPE)
					ahead(nlh, data);
		nl->cur = sd_nl_first(nl->buf, (size_t)n, &nl->left);
	}
}

static int run_to_end(struct sd_nl *nl, sd_msg_cb ahead, sd_msg_cb cb, void *data)
{
	int r;

	while ((r = sd_nl_dump_next(nl, ahead, cb, data)) > 0)
		;
	sd_nl_dump_end(nl);
	return r;
}

int sd_nl_dump(struct sd_nl *nl, sd_msg_cb ahead, sd_msg_cb cb, void *data)
{
	int r = sd_nl_dump_begin(nl);

	return r < 0 ? r : run_to_end(nl, ahead, cb, data);
}

int sd_nl_dump_retry(struct sd_nl *nl, sd_msg_cb cb, int (*restart)(void *data), void *data)
{
	int r = -EINTR;

	for (int i = 0; i < SD_NL_DUMP_TRIES && r == -EINTR; i++) {
		if (i > 0 && (!restart || (r = restart(data)) < 0))
			return r;
		r = sd_nl_dump(nl, NULL, cb, data);
	}
	return r;
}

int sd_nl_request(struct sd_nl *nl, sd_msg_cb cb, void *data, int *ret_kerr)
{
	int r = start(nl, NLM_F_REQUEST, true);

	if (r == 0)
		r = run_to_end(nl, NULL, cb, data);
	*ret_kerr = nl->kerr;
	return r == nl->kerr ? 0 : r;
}

/* ---- batches ---------------------------------------------------------------------------- */

/* Record the errors one datagram of answers reports. */
static void take_answers(struct sd_nl *nl, size_t len, const uint8_t *buf, uint32_t base,
			 int *errs, size_t n)
{
	const struct nlmsghdr *nlh;
	size_t left;

	for (nlh = sd_nl_first(buf, len, &left); nlh; nlh = sd_nl_next(nlh, &left)) {
		const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
		uint32_t i = nlh->nlmsg_seq - base;

		if (nlh->nlmsg_type != NLMSG_ERROR || i >= n ||
		    (nlh->nlmsg_pid && nlh->nlmsg_pid != nl->portid) ||
		    mnl_nlmsg_get_payload_len(nlh) < sizeof(e->error))
			continue;
		/* A positive "error" is no kernel's answer either. */
		errs[i] = e->error > 0 ? -EPROTO : kernel_errno(e->error);
		if (errs[i] && !nl->ext_ack[0])
			take_ext_ack(nl, nlh);
	}
}

/* Read every answer queued for the batch just sent, without waiting. */
static int drain_answers(struct sd_nl *nl, uint32_t base, int *errs, size_t n)
{
	struct mmsghdr msgs[RX_VLEN];
	struct iovec iov[RX_VLEN];
	bool lost = false;

	for (;;) {
		int got;

		for (unsigned i = 0; i < RX_VLEN; i++) {
			iov[i] = (struct iovec){ nl->buf + i * RX_SLOT, RX_SLOT };
			msgs[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i],
								 .msg_iovlen = 1 } };
		}
		got = recvmmsg(nl->fd, msgs, RX_VLEN, MSG_DONTWAIT, NULL);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				lost = true;
				continue;
			}
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			return -errno;
		}
		for (int i = 0; i < got; i++)
			nl->bytes_read += msgs[i].msg_len;
		for (int i = 0; i < got; i++)
			take_answers(nl, msgs[i].msg_len < RX_SLOT ? msgs[i].msg_len : RX_SLOT,
				     nl->buf + i * RX_SLOT, base, errs, n);
		if (got < RX_VLEN)
			break;
	}
	for (size_t i = 0; i < n; i++)
		if (errs[i] == PENDING)
			errs[i] = lost ? -ENOBUFS : 0;
	return 0;
}

int sd_nl_batch(struct sd_nl *nl, void *buf, size_t len, int *errs, size_t n)
{
	size_t off = 0, i = 0;
	uint32_t base;
	int r;

	if (!n)
		return len ? -EINVAL : 0;
	sd_nl_dump_end(nl);
	base = take_seq(nl, (uint32_t)n);
	while (off < len) {
		struct nlmsghdr *nlh = (struct nlmsghdr *)((uint8_t *)buf + off);

		if (i >= n || len - off < sizeof(*nlh) || nlh->nlmsg_len < sizeof(*nlh) ||
		    nlh->nlmsg_len > len - off)
			return -EINVAL;
		nlh->nlmsg_seq = base + (uint32_t)i;
		nlh->nlmsg_pid = 0;
		errs[i++] = PENDING;
		off += NLMSG_ALIGN((size_t)nlh->nlmsg_len);
	}
	if (i != n)
		return -EINVAL;
	nl->ext_ack[0] = 0;
	r = send_all(nl, buf, len);
	if (r < 0)
		return r;
	/* The kernel ran every request before sendmsg returned. */
	return drain_answers(nl, base, errs, n);
}

/* ---- events ----------------------------------------------------------------------------- */

/* Only the kernel speaks for the host: a process able to unicast to an event
 * socket must not fake an event. */
static bool from_kernel(const struct sockaddr_nl *sa, socklen_t len)
{
	return len == sizeof(*sa) && sa->nl_family == AF_NETLINK && sa->nl_pid == 0;
}

ssize_t sd_nl_recv_event(struct sd_nl *nl, void *buf, size_t size, uint32_t *ret_groups)
{
	for (;;) {
		struct sockaddr_nl sa;
		struct iovec iov = { buf, size };
		struct msghdr mh = { .msg_name = &sa, .msg_namelen = sizeof(sa),
				     .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n = recvmsg(nl->fd, &mh, MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EWOULDBLOCK ? -EAGAIN : -errno;
		}
		if (mh.msg_flags & MSG_TRUNC)
			return -ENOBUFS; /* an event cut short is an event lost */
		if (!from_kernel(&sa, mh.msg_namelen))
			continue;
		if (ret_groups)
			*ret_groups = sa.nl_groups;
		return n;
	}
}

int sd_nl_recv_events(struct sd_nl *nl, void *buf, size_t size, struct sd_nl_events *ev)
{
	struct sockaddr_nl sa[SD_NL_EVENTS];
	struct mmsghdr m[SD_NL_EVENTS];
	struct iovec iov[SD_NL_EVENTS];
	size_t slot = size / SD_NL_EVENTS;
	int got;

	for (unsigned i = 0; i < SD_NL_EVENTS; i++) {
		iov[i] = (struct iovec){ (uint8_t *)buf + i * slot, slot };
		m[i] = (struct mmsghdr){ .msg_hdr = { .msg_name = &sa[i], .msg_namelen = sizeof(sa[i]),
						      .msg_iov = &iov[i], .msg_iovlen = 1 } };
	}
	do
		got = recvmmsg(nl->fd, m, SD_NL_EVENTS, MSG_DONTWAIT, NULL);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	ev->n = ev->cut = 0;
	ev->more = got == SD_NL_EVENTS;
	for (int i = 0; i < got; i++) {
		if (m[i].msg_hdr.msg_flags & MSG_TRUNC)
			ev->cut++; /* an event cut short is an event lost */
		else if (from_kernel(&sa[i], m[i].msg_hdr.msg_namelen))
			ev->d[ev->n++] = (struct sd_nl_dgram){ iov[i].iov_base, m[i].msg_len,
							       sa[i].nl_groups };
	}
	return 0;
}

int sd_nl_discard(struct sd_nl *nl)
{
	/* After an overflow the kernel queues nothing new until the queue is
	 * empty (the socket stays "congested"): what is queued is all older
	 * than the loss, and reading it empty is what lets events flow again.
	 * A host that never stops changing ends the drain by the count. */
	for (int i = 0; i < 65536; i++) {
		ssize_t n = recv(nl->fd, nl->buf, sizeof(nl->buf), MSG_DONTWAIT | MSG_TRUNC);

		if (n >= 0 || errno == EINTR || errno == ENOBUFS)
			continue;
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
	}
	return 0;
}

/* ---- what every decoder uses ------------------------------------------------------------ */

void sd_copy_struct(void *dst, size_t size, const void *src, size_t len)
{
	size_t n = len < size ? len : size;

	memcpy(dst, src, n);
	if (n < size)
		memset((uint8_t *)dst + n, 0, size - n);
}

void sd_blob_set(struct sdiag_sock *s, enum sdiag_blob k, const void *p, size_t len,
		 uint64_t bit)
{
	s->blob[k] = p;
	s->blob_len[k] = (uint16_t)(len < UINT16_MAX ? len : UINT16_MAX);
	s->has |= bit;
}

void sd_skmem_queues(struct sdiag_sock *s, const void *p, size_t len)
{
	uint32_t m[SDIAG_SKMEM_WMEM_ALLOC + 1];

	sd_blob_set(s, SDIAG_BLOB_SKMEMINFO, p, len, SDIAG_HAS_SKMEMINFO | SDIAG_HAS_QUEUES);
	sd_copy_struct(m, sizeof(m), p, len);
	s->rqueue = m[SDIAG_SKMEM_RMEM_ALLOC];
	s->wqueue = m[SDIAG_SKMEM_WMEM_ALLOC];
}

int sd_diag_header(const struct nlmsghdr *nlh, size_t size, uint8_t af, const void **ret)
{
	const uint8_t *p;

	if (nlh->nlmsg_type != SOCK_DIAG_BY_FAMILY)
		return 0;
	if (nlh->nlmsg_len < NLMSG_HDRLEN + size)
		return -EBADMSG;
	p = mnl_nlmsg_get_payload(nlh);
	if (p[0] != af)
		return 0;
	*ret = p;
	return 1;
}
