/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The wire side of destroy: a NETLINK_SOCK_DIAG socket of its own (never the
 * dump's), SOCK_DESTROY requests packed into one sendmsg, replies collected
 * in bulk (the transport's batch, sd_nl_batch).
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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <linux/sockios.h>

#include "lib/family/family.h"
#include "lib/ops/destroy.h"

#ifndef SOCK_DESTROY
#define SOCK_DESTROY 21
#endif
#ifndef SIOCGSKNS
#define SIOCGSKNS 0x894C
#endif
#define SD_INET_DIAG_REQ_PROTOCOL 3

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

struct sd_dnl {
	struct sd_nl *nl;
	unsigned cap;
	unsigned n;   /* requests in the batch */
	size_t len;   /* bytes in buf */
	uint8_t *buf; /* BATCH_MAX * MSG_MAX */
};

/* The batch's bound: the whole sendmsg must fit in SO_SNDBUF, and every
 * request's failure reply in SO_RCVBUF. */
static unsigned capacity(int snd, int rcv)
{
	unsigned cap = BATCH_MAX;

	if (snd > 64 && (unsigned)(snd - 32) / MSG_MAX < cap)
		cap = (unsigned)(snd - 32) / MSG_MAX;
	if ((unsigned)rcv / REPLY_TRUESIZE < cap)
		cap = (unsigned)rcv / REPLY_TRUESIZE;
	return cap ? cap : 1;
}

int sd_dnl_open(struct sd_dnl **ret, int handle_fd)
{
	struct sd_nl_opts o = { .proto = NETLINK_SOCK_DIAG,
				.sndbuf = WANT_SNDBUF,
				.rcvbuf = WANT_RCVBUF };
	struct sd_dnl *d;
	int r;

	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->buf = malloc((size_t)BATCH_MAX * MSG_MAX);
	if (!d->buf) {
		r = -ENOMEM;
		goto fail;
	}
	/* SIOCGSKNS checks CAP_NET_ADMIN over the socket's namespace, exactly
	 * what sock_diag_destroy() checks for the sockets in it. */
	o.nsfd = ioctl(handle_fd, SIOCGSKNS);
	o.in_netns = o.nsfd >= 0;
	if (o.nsfd < 0) {
		r = -errno;
		/* Kernel without SIOCGSKNS (< 4.9) or without netns: the
		 * handle can only be in the namespace we are in. */
		if (r != -ENOTTY && r != -EINVAL && r != -EOPNOTSUPP)
			goto fail;
	}
	r = sd_nl_open_with(&d->nl, &o);
	if (o.nsfd >= 0)
		close(o.nsfd);
	if (r < 0)
		goto fail;
	d->cap = capacity(sd_nl_sndbuf(d->nl), sd_nl_rcvbuf(d->nl));
	*ret = d;
	return 0;
fail:
	sd_dnl_close(d);
	return r;
}

void sd_dnl_close(struct sd_dnl *d)
{
	if (!d)
		return;
	sd_nl_close(d->nl);
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
	/* Its sequence number is stamped when the batch is sent. */
	r = sd_dnl_build(d->buf + d->len, s, variant, d->n);
	if (r < 0)
		return r;
	d->len += (size_t)r;
	d->n++;
	return 0;
}

int sd_dnl_send(struct sd_dnl *d, int *errs, size_t n)
{
	int r;

	if (n != d->n)
		return -EINVAL;
	r = sd_nl_batch(d->nl, d->buf, d->len, errs, n);
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
	d->len = put_request(d->buf, &req, IPPROTO_TCP, 0);
	d->n = 1;
	r = sd_dnl_send(d, &err, 1);
	if (r < 0)
		return r;
	if (err == -ENOENT || err == 0)
		return 0;
	return err;
}
