/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Transport: one NETLINK_SOCK_DIAG socket (libmnl), dumps with sequence and
 * port checks. Netlink's failure modes are handled here, once:
 *  - every recv uses the same 64 KiB buffer (the kernel builds chunks of up to
 *    ~32 KiB, sized from the largest buffer seen), so MSG_TRUNC cannot happen
 *    for sock_diag; if it does, the dump fails with -EMSGSIZE, never silently;
 *  - EINTR is retried; ENOBUFS cannot happen on a dump (the kernel refills only
 *    below half the receive buffer) and is reported as an error if it does;
 *  - messages with a foreign sequence number or port are dropped (leftovers of
 *    an aborted earlier dump);
 *  - a dump aborted by the caller is drained to its DONE so the socket can
 *    take the next request (otherwise the kernel answers EBUSY).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include "lib/core/internal.h"

#define SD_RECVBUF (64 * 1024)
#define SD_REQBUF (8 * 1024)
#define SD_SO_RCVBUF (1024 * 1024)

struct sd_nl {
	struct mnl_socket *sock;
	uint32_t portid;
	uint32_t seq;
	uint8_t req[SD_REQBUF] __attribute__((aligned(8)));
	uint8_t buf[SD_RECVBUF] __attribute__((aligned(8)));
};

int sd_nl_open(struct sd_nl **ret)
{
	struct sd_nl *nl;
	int r, one = 1, rcvbuf = SD_SO_RCVBUF;

	nl = calloc(1, sizeof(*nl));
	if (!nl)
		return -ENOMEM;
	nl->sock = mnl_socket_open2(NETLINK_SOCK_DIAG, SOCK_CLOEXEC);
	if (!nl->sock) {
		r = -errno;
		goto fail;
	}
	/* Trims the request echoed in error replies; best effort. */
	(void)mnl_socket_setsockopt(nl->sock, NETLINK_CAP_ACK, &one, sizeof(one));
	(void)setsockopt(mnl_socket_get_fd(nl->sock), SOL_SOCKET, SO_RCVBUF, &rcvbuf,
			 sizeof(rcvbuf));
	if (mnl_socket_bind(nl->sock, 0, MNL_SOCKET_AUTOPID) < 0) {
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
	return mnl_socket_get_fd(nl->sock);
}

void *sd_nl_reqbuf(struct sd_nl *nl, size_t *ret_size)
{
	if (ret_size)
		*ret_size = sizeof(nl->req);
	return nl->req;
}

struct dump_state {
	sd_msg_cb ahead;
	sd_msg_cb cb;
	void *data;
	int cb_err;	/* first negative return of cb; later messages are drained */
};

static int data_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct dump_state *st = arg;
	int r;

	if (st->cb_err)
		return MNL_CB_OK;
	r = st->cb(nlh, st->data);
	if (r < 0)
		st->cb_err = r;
	return MNL_CB_OK;
}

/* Returns 1 when the dump is over (DONE or ERROR seen), 0 to read on, <0 on error. */
static int run_datagram(struct sd_nl *nl, size_t len, uint32_t seq, struct dump_state *st,
			int *kerr)
{
	const struct nlmsghdr *nlh = (const struct nlmsghdr *)nl->buf;
	size_t rem = len;

	if (st->ahead && !st->cb_err) {
		int left = (int)len;

		for (; mnl_nlmsg_ok(nlh, left) && nlh->nlmsg_len <= (size_t)left;
		     nlh = mnl_nlmsg_next(nlh, &left))
			if (nlh->nlmsg_type >= NLMSG_MIN_TYPE)
				st->ahead(nlh, st->data);
		nlh = (const struct nlmsghdr *)nl->buf;
	}
	for (; mnl_nlmsg_ok(nlh, (int)rem); nlh = mnl_nlmsg_next(nlh, (int *)&rem)) {
		/* libmnl 1.0.4 accepts nlmsg_len >= 2^31 (negative as int). */
		if (nlh->nlmsg_len > rem)
			break;
		if (nlh->nlmsg_seq != seq || (nlh->nlmsg_pid && nlh->nlmsg_pid != nl->portid))
			continue; /* stale reply of an earlier request */
		switch (nlh->nlmsg_type) {
		case NLMSG_NOOP:
			continue;
		case NLMSG_DONE:
			if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(int)) {
				int e = *(const int *)mnl_nlmsg_get_payload(nlh);
				*kerr = e >= 0 ? 0 : e >= -4095 ? e : -EPROTO;
			}
			return 1;
		case NLMSG_ERROR: {
			const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

			if (mnl_nlmsg_get_payload_len(nlh) < sizeof(e->error))
				return -EBADMSG;
			/* An errno is -1..-4095; anything else is no kernel's answer. */
			*kerr = e->error < 0 && e->error >= -4095 ? e->error : -EPROTO;
			if (e->error == 0)
				*kerr = 0;
			return 1;
		}
		default:
			if (nlh->nlmsg_type < NLMSG_MIN_TYPE)
				continue;
			data_cb(nlh, st);
		}
	}
	return 0;
}

int sd_nl_dump(struct sd_nl *nl, sd_msg_cb ahead, sd_msg_cb cb, void *data)
{
	struct nlmsghdr *req = (struct nlmsghdr *)nl->req;
	struct dump_state st = { .ahead = ahead, .cb = cb, .data = data };
	int fd = mnl_socket_get_fd(nl->sock);
	int kerr = 0, r;
	uint32_t seq;

	seq = nl->seq++;
	if (nl->seq == 0)
		nl->seq = 1;
	req->nlmsg_seq = seq;
	req->nlmsg_pid = 0;
	req->nlmsg_flags |= NLM_F_REQUEST | NLM_F_DUMP;

	if (mnl_socket_sendto(nl->sock, req, req->nlmsg_len) < 0)
		return -errno;

	for (;;) {
		ssize_t n = recv(fd, nl->buf, sizeof(nl->buf), MSG_TRUNC);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if ((size_t)n > sizeof(nl->buf))
			return -EMSGSIZE;
		r = run_datagram(nl, (size_t)n, seq, &st, &kerr);
		if (r < 0)
			return r;
		if (r > 0)
			break;
	}
	if (st.cb_err)
		return st.cb_err;
	return kerr;
}

void sd_copy_struct(void *dst, size_t size, const void *src, size_t len)
{
	size_t n = len < size ? len : size;

	memcpy(dst, src, n);
	if (n < size)
		memset((uint8_t *)dst + n, 0, size - n);
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
