/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the netlink transport (lib/core/transport.c): the
 * datagram walk, sequence and port checks, DONE/ERROR, NLM_F_DUMP_INTR and
 * its retries, the extended-ACK parser, a batch's answers, the event reader.
 * The kernel is played by the input through one end of an AF_UNIX datagram
 * socketpair the transport adopts (non-blocking: a dump without its DONE
 * ends with EAGAIN instead of waiting), so no root is needed and nothing
 * reaches a kernel's netlink. Whatever arrives, the transport must not hang,
 * crash or read outside a datagram, and every errno it reports is one.
 * Input: one byte of flags, then datagrams, each a little-endian u16 length
 * and its bytes.
 *   bits 0-1  0 a dump, 1 a dump retried (sd_nl_dump_retry), 2 a request,
 *             3 a batch
 *   bit 2     stamp each message with a sequence number of ours (1 + its own
 *             modulo the number of requests) and port 0
 *   bit 3     the callback aborts at the second message
 *   bits 4-7  batch: requests - 1; a dump: bit 4 pulls it one message at a
 *             time (sd_nl_dump_msg, the look-ahead on), the callback run on
 *             each message handed over
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>

#include "lib/core/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct run {
	unsigned seen, abort_at;
	uint32_t sum;
};

static int msg_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct run *r = arg;
	const uint8_t *p = mnl_nlmsg_get_payload(nlh);

	/* Touch every byte the message claims: ASan sees a read past the datagram. */
	for (size_t i = 0; i < mnl_nlmsg_get_payload_len(nlh); i++)
		r->sum += p[i];
	r->seen++;
	return r->abort_at && r->seen == r->abort_at ? -ECANCELED : 0;
}

static int restart_cb(void *arg)
{
	((struct run *)arg)->seen = 0;
	return 0;
}

static void stamp(uint8_t *buf, size_t len, uint32_t n)
{
	const struct nlmsghdr *m;
	size_t left;

	for (m = sd_nl_first(buf, len, &left); m; m = sd_nl_next(m, &left)) {
		struct nlmsghdr *w = (struct nlmsghdr *)m;

		w->nlmsg_seq = 1 + w->nlmsg_seq % n;
		w->nlmsg_pid = 0;
	}
}

/* The dump pulled message by message; cb's error ends it with a drain. */
static int pull(struct sd_nl *nl, struct run *run)
{
	const struct nlmsghdr *nlh;
	struct run ahead = { 0 };
	int r = sd_nl_dump_begin(nl);

	while (r >= 0 && (r = sd_nl_dump_msg(nl, msg_cb, &ahead, &nlh)) > 0)
		if ((r = msg_cb(nlh, run)) < 0)
			sd_nl_dump_end(nl);
	return r;
}

static bool plausible(int r)
{
	return r <= 0 && r >= -4095;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t dg[65536] __attribute__((aligned(8)));
	struct run run = { 0 };
	struct sd_nl *nl;
	unsigned mode, nreq;
	int sv[2], r = 0;
	int errs[16];

	if (size < 1)
		return 0;
	mode = data[0] & 3;
	nreq = mode == 3 ? 1u + (data[0] >> 4) : mode == 1 ? SD_NL_DUMP_TRIES : 1;
	if (data[0] & 8)
		run.abort_at = 2;
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) < 0)
		return 0;
	if (sd_nl_adopt(&nl, sv[0], 77) < 0) {
		close(sv[0]);
		close(sv[1]);
		return 0;
	}
	for (size_t off = 1; off + 2 <= size;) {
		size_t l = (size_t)data[off] | (size_t)data[off + 1] << 8;

		off += 2;
		if (l > size - off)
			l = size - off;
		memcpy(dg, data + off, l);
		if (data[0] & 4)
			stamp(dg, l, nreq);
		if (send(sv[1], dg, l, MSG_DONTWAIT) < 0)
			break;
		off += l;
	}
	if (mode == 3) {
		uint8_t req[16 * NLMSG_HDRLEN] __attribute__((aligned(8)));

		memset(req, 0, sizeof(req));
		for (unsigned i = 0; i < nreq; i++) {
			struct nlmsghdr *m = (struct nlmsghdr *)(req + i * NLMSG_HDRLEN);

			m->nlmsg_len = NLMSG_HDRLEN;
			m->nlmsg_type = 100;
			m->nlmsg_flags = NLM_F_REQUEST;
		}
		r = sd_nl_batch(nl, req, nreq * NLMSG_HDRLEN, errs, nreq);
		for (unsigned i = 0; r == 0 && i < nreq; i++)
			if (!plausible(errs[i]))
				abort();
		/* Whatever was not taken as an answer is read as events. */
		if (nreq & 1) {
			while (sd_nl_recv_event(nl, dg, sizeof(dg), NULL) != -EAGAIN)
				;
		} else {
			struct sd_nl_events ev;

			while (sd_nl_recv_events(nl, dg, sizeof(dg), &ev) == 0 && ev.more)
				;
		}
	} else {
		struct nlmsghdr *q = mnl_nlmsg_put_header(sd_nl_reqbuf(nl, NULL));

		q->nlmsg_type = 100;
		if (mode == 0 && (data[0] & 0x10))
			r = pull(nl, &run);
		else if (mode == 0)
			r = sd_nl_dump(nl, NULL, msg_cb, &run);
		else if (mode == 1)
			r = sd_nl_dump_retry(nl, msg_cb, restart_cb, &run);
		else {
			int kerr = 1;

			r = sd_nl_request(nl, msg_cb, &run, &kerr);
			if (!plausible(kerr))
				abort();
		}
	}
	if (!plausible(r))
		abort();
	if (strlen(sd_nl_ext_ack(nl)) >= 256)
		abort();
	sd_nl_close(nl);
	close(sv[1]);
	return 0;
}
