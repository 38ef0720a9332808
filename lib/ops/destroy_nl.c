/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The wire side of destroy: a NETLINK_SOCK_DIAG socket of its own (never the
 * dump's), SOCK_DESTROY requests packed into one sendmsg, replies collected
 * in bulk.
 *
 * The kernel runs every message of a sendmsg synchronously, in order, before
 * sendmsg returns, and queues one NLMSG_ERROR datagram per failed request
 * (successes are acknowledged only with NLM_F_ACK). So requests go without
 * NLM_F_ACK, each with its own sequence number, and after sendmsg a
 * non-blocking drain of the receive queue tells exactly which ones failed.
 * The batch is bounded so that the worst case, every request failing, fits
 * in the receive buffer; replies lost anyway (ENOBUFS) make the requests
 * without a reply "unknown" (-ENOBUFS), never "destroyed".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <linux/sockios.h>

#include "lib/ns/ns.h"
#include "lib/ops/destroy.h"

#ifndef SOCK_DESTROY
#define SOCK_DESTROY 21
#endif
#ifndef SIOCGSKNS
#define SIOCGSKNS 0x894C
#endif
#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif
#define SD_INET_DIAG_REQ_PROTOCOL 3

/* struct inet_diag_req_v2 (uapi/linux/inet_diag.h), our own copy. */
struct sd_inet_sockid {
	uint16_t sport; /* network order */
	uint16_t dport;
	uint32_t src[4];
	uint32_t dst[4];
	uint32_t ifindex;
	uint32_t cookie[2]; /* low word, high word */
};

struct sd_inet_req_v2 {
	uint8_t family;
	uint8_t protocol;
	uint8_t ext;
	uint8_t raw_protocol; /* "pad"; the real protocol for SOCK_RAW */
	uint32_t states;
	struct sd_inet_sockid id;
};

_Static_assert(sizeof(struct sd_inet_req_v2) == 56, "inet_diag_req_v2 is 56 bytes");

#define MSG_MAX SD_DNL_MSG_MAX
_Static_assert(SD_DNL_MSG_MAX == NLMSG_ALIGN(sizeof(struct nlmsghdr)) +
					 NLMSG_ALIGN(sizeof(struct sd_inet_req_v2)) + NLA_HDRLEN +
					 sizeof(uint32_t),
	       "header, request, INET_DIAG_REQ_PROTOCOL");
#define BATCH_MAX 4096u	     /* upper bound on any batch we build */
#define REPLY_TRUESIZE 1024u /* kernel memory one error reply costs, with margin */
#define WANT_SNDBUF (1 << 20)
#define WANT_RCVBUF (4 << 20)
#define RX_VLEN 64
#define RX_SLOT 128 /* an error reply with NETLINK_CAP_ACK is 36 bytes */

struct sd_dnl {
	int fd;
	uint32_t portid;
	uint32_t seq; /* sequence number of the batch's first request */
	unsigned cap;
	unsigned n;   /* requests in the batch */
	size_t len;   /* bytes in buf */
	uint8_t *buf; /* BATCH_MAX * MSG_MAX */
	uint8_t rx[RX_VLEN][RX_SLOT] __attribute__((aligned(8)));
};

/* Set a buffer size, forcing past the sysctl limit when allowed; returns what the kernel set. */
static int set_buf(int fd, int opt, int force_opt, int want)
{
	int got = 0;
	socklen_t len = sizeof(got);

	if (setsockopt(fd, SOL_SOCKET, force_opt, &want, sizeof(want)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, opt, &want, sizeof(want));
	if (getsockopt(fd, SOL_SOCKET, opt, &got, &len) < 0)
		return 0;
	return got;
}

static int open_here(struct sd_dnl *d)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	socklen_t salen = sizeof(sa);
	int one = 1, snd, rcv;
	unsigned cap;

	d->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (d->fd < 0)
		return -errno;
	/* Error replies then echo only the request's header. Best effort. */
	(void)setsockopt(d->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	snd = set_buf(d->fd, SO_SNDBUF, SO_SNDBUFFORCE, WANT_SNDBUF);
	rcv = set_buf(d->fd, SO_RCVBUF, SO_RCVBUFFORCE, WANT_RCVBUF);
	if (bind(d->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockname(d->fd, (struct sockaddr *)&sa, &salen) < 0)
		return -errno;
	d->portid = sa.nl_pid;

	cap = BATCH_MAX;
	if (snd > 64 && (unsigned)(snd - 32) / MSG_MAX < cap)
		cap = (unsigned)(snd - 32) / MSG_MAX;
	if ((unsigned)rcv / REPLY_TRUESIZE < cap)
		cap = (unsigned)rcv / REPLY_TRUESIZE;
	d->cap = cap ? cap : 1;
	return 0;
}

static bool same_netns(int nsfd, int self)
{
	struct stat a, b;

	return fstat(nsfd, &a) == 0 && fstat(self, &b) == 0 && a.st_ino == b.st_ino &&
	       a.st_dev == b.st_dev;
}

static int open_here_cb(void *arg)
{
	return open_here(arg);
}

/* Create the socket in the namespace behind nsfd. Entering it needs
 * CAP_SYS_ADMIN over it, so stay put when we are there already. */
static int open_in(struct sd_dnl *d, int nsfd)
{
	int self, r;

	self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0)
		return -errno;
	if (same_netns(nsfd, self))
		r = open_here(d);
	else
		r = sd_in_netns(nsfd, open_here_cb, d);
	close(self);
	return r;
}

int sd_dnl_open(struct sd_dnl **ret, int handle_fd)
{
	struct sd_dnl *d;
	int nsfd = -1, r;

	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->fd = -1;
	d->seq = 1;
	d->buf = malloc((size_t)BATCH_MAX * MSG_MAX);
	if (!d->buf) {
		r = -ENOMEM;
		goto fail;
	}
	/* SIOCGSKNS checks CAP_NET_ADMIN over the socket's namespace, exactly
	 * what sock_diag_destroy() checks for the sockets in it. */
	nsfd = ioctl(handle_fd, SIOCGSKNS);
	if (nsfd < 0) {
		r = -errno;
		if (r != -ENOTTY && r != -EINVAL && r != -EOPNOTSUPP)
			goto fail;
		/* Kernel without SIOCGSKNS (< 4.9) or without netns: the
		 * handle can only be in the namespace we are in. */
		r = open_here(d);
	} else {
		r = open_in(d, nsfd);
	}
	if (r < 0)
		goto fail;
	if (nsfd >= 0)
		close(nsfd);
	*ret = d;
	return 0;
fail:
	if (nsfd >= 0)
		close(nsfd);
	sd_dnl_close(d);
	return r;
}

void sd_dnl_close(struct sd_dnl *d)
{
	if (!d)
		return;
	if (d->fd >= 0)
		close(d->fd);
	free(d->buf);
	free(d);
}

unsigned sd_dnl_capacity(const struct sd_dnl *d)
{
	return d->cap;
}

void sd_dnl_reset(struct sd_dnl *d)
{
	d->n = 0;
	d->len = 0;
}

/* The protocol the kernel's inet_diag handler table is indexed by. */
static int wire_protocol(const struct sdiag_sock *s, uint8_t *ret_raw)
{
	*ret_raw = 0;
	switch (s->table) {
	case SDIAG_T_TCP:
		return IPPROTO_TCP;
	case SDIAG_T_UDP:
		return IPPROTO_UDP;
	case SDIAG_T_UDPLITE:
		return IPPROTO_UDPLITE;
	case SDIAG_T_RAW:
		*ret_raw = s->inet.raw_protocol;
		return IPPROTO_RAW;
	default:
		return -EINVAL;
	}
}

/* Write one SOCK_DESTROY message at buf; returns its aligned length. */
static size_t put_request(void *buf, const struct sd_inet_req_v2 *req, int protocol, uint32_t seq)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct sd_inet_req_v2 *p;

	nlh->nlmsg_type = SOCK_DESTROY;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = seq;
	p = mnl_nlmsg_put_extra_header(nlh, sizeof(*p));
	memcpy(p, req, sizeof(*p));
	if (protocol > 255)
		mnl_attr_put_u32(nlh, SD_INET_DIAG_REQ_PROTOCOL, (uint32_t)protocol);
	return MNL_ALIGN(nlh->nlmsg_len);
}

int sd_dnl_build(void *buf, const struct sdiag_sock *s, unsigned variant, uint32_t seq)
{
	struct sd_inet_req_v2 req = { 0 };
	int protocol;

	if ((s->family != AF_INET && s->family != AF_INET6) || !(s->has & SDIAG_HAS_COOKIE))
		return -EINVAL;
	protocol = wire_protocol(s, &req.raw_protocol);
	if (protocol < 0)
		return protocol;
	req.family = s->family;
	req.protocol = (uint8_t)protocol;
	req.id.sport = htons(s->inet.sport);
	req.id.dport = htons(variant ? (uint16_t)variant : s->inet.dport);
	memcpy(req.id.src, s->inet.src, sizeof(req.id.src));
	memcpy(req.id.dst, s->inet.dst, sizeof(req.id.dst));
	req.id.ifindex = s->inet.ifindex;
	req.id.cookie[0] = (uint32_t)s->cookie;
	req.id.cookie[1] = (uint32_t)(s->cookie >> 32);
	return (int)put_request(buf, &req, protocol, seq);
}

int sd_dnl_add(struct sd_dnl *d, const struct sdiag_sock *s, unsigned variant)
{
	int r;

	if (d->n >= d->cap)
		return -ENOSPC;
	r = sd_dnl_build(d->buf + d->len, s, variant, d->seq + d->n);
	if (r < 0)
		return r;
	d->len += (size_t)r;
	d->n++;
	return 0;
}

/* Record the errors one datagram reports. */
static void take_replies(struct sd_dnl *d, const uint8_t *buf, size_t len, int *errs, size_t n)
{
	const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf;
	int rem = (int)len;

	for (; mnl_nlmsg_ok(nlh, rem); nlh = mnl_nlmsg_next(nlh, &rem)) {
		const struct nlmsgerr *e;
		uint32_t idx = nlh->nlmsg_seq - d->seq;

		/* libmnl 1.0.4 accepts nlmsg_len >= 2^31 (negative as int). */
		if (nlh->nlmsg_len > (uint32_t)rem)
			break;

		if (nlh->nlmsg_type != NLMSG_ERROR || idx >= n ||
		    (nlh->nlmsg_pid && nlh->nlmsg_pid != d->portid))
			continue;
		if (mnl_nlmsg_get_payload_len(nlh) < sizeof(e->error))
			continue;
		e = mnl_nlmsg_get_payload(nlh);
		/* An errno is -1..-4095; anything else is no kernel's answer. */
		errs[idx] = e->error <= 0 && e->error >= -4095 ? e->error : -EPROTO;
	}
}

#define PENDING 1

/* Read every reply queued for the batch just sent, without waiting. */
static int drain(struct sd_dnl *d, int *errs, size_t n)
{
	struct mmsghdr msgs[RX_VLEN];
	struct iovec iov[RX_VLEN];
	bool lost = false;

	for (;;) {
		int got;

		for (unsigned i = 0; i < RX_VLEN; i++) {
			iov[i] = (struct iovec){ d->rx[i], RX_SLOT };
			msgs[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i],
								 .msg_iovlen = 1 } };
		}
		got = recvmmsg(d->fd, msgs, RX_VLEN, MSG_DONTWAIT, NULL);
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
		/* A truncated reply still holds its header and error code. */
		for (int i = 0; i < got; i++)
			take_replies(d, d->rx[i],
				     msgs[i].msg_len < RX_SLOT ? msgs[i].msg_len : RX_SLOT, errs,
				     n);
		if (got < RX_VLEN)
			break;
	}
	for (size_t i = 0; i < n; i++)
		if (errs[i] == PENDING)
			errs[i] = lost ? -ENOBUFS : 0;
	return 0;
}

int sd_dnl_send(struct sd_dnl *d, int *errs, size_t n)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	ssize_t w;
	int r;

	if (n != d->n)
		return -EINVAL;
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		errs[i] = PENDING;
	do
		w = sendto(d->fd, d->buf, d->len, 0, (struct sockaddr *)&kernel, sizeof(kernel));
	while (w < 0 && errno == EINTR);
	if (w < 0) {
		r = -errno;
		goto out;
	}
	r = drain(d, errs, n);
out:
	d->seq += (uint32_t)n;
	if (d->seq < (uint32_t)n + 1) /* wrapped: keep clear of 0 */
		d->seq = 1;
	sd_dnl_reset(d);
	return r;
}

int sd_dnl_probe(struct sd_dnl *d)
{
	/* Port 0 on every side names no socket; the cookie is one the
	 * kernel's counter never reaches, so even a lookup that found
	 * something would fail the cookie check. */
	struct sd_inet_req_v2 req = {
		.family = AF_INET,
		.protocol = IPPROTO_TCP,
		.id.cookie = { 0xfffffffeu, 0xffffffffu },
	};
	int err = 0, r;

	sd_dnl_reset(d);
	d->len = put_request(d->buf, &req, IPPROTO_TCP, d->seq);
	d->n = 1;
	r = sd_dnl_send(d, &err, 1);
	if (r < 0)
		return r;
	if (err == -ENOENT || err == 0)
		return 0;
	return err;
}
