/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The netlink transport (lib/core/transport.c) against a kernel played by
 * the test: one end of an AF_UNIX datagram socketpair is adopted as the
 * transport's socket, the test holds the other. Replies are queued before
 * the call (sequence numbers are predictable: a new handle starts at 1), and
 * what the transport sent is read back from the test's end: the oracle for
 * how many times a dump was asked for.
 *  - NLM_F_DUMP_INTR: an interrupted dump fails with -EINTR once read to its
 *    DONE; sd_nl_dump_retry() asks again SD_NL_DUMP_TRIES times in all (and
 *    calls restart between tries), then returns -EINTR; a clean try in
 *    between ends it with that try's records only;
 *  - an aborted dump is drained: the next dump on the socket sees only its
 *    own records;
 *  - stale sequence numbers are dropped; a message whose length runs past
 *    its datagram ends that datagram's walk (a 2^31 length included);
 *  - sd_nl_dump_msg hands over one data message at a time across datagrams
 *    (NOOPs and stale ones skipped, the look-ahead once per datagram), ends
 *    with 0, the kernel's errno or -EINTR, and a dump ended early with
 *    sd_nl_dump_end is drained;
 *  - the kernel's extended-ACK message is kept for the caller, with and
 *    without NLM_F_CAPPED;
 *  - a batch: sequence numbers stamped, failures matched to requests;
 *  - an event datagram not sent by the kernel is skipped.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tests/test_skip.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>

#include "lib/core/internal.h"

#define T_DATA 100 /* a data message type (>= NLMSG_MIN_TYPE) */

struct fixture {
	struct sd_nl *nl;
	int kernel; /* the test's end */
};

static int setup(void **state)
{
	static struct fixture f;
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(sd_nl_adopt(&f.nl, sv[0], 4242), 0);
	f.kernel = sv[1];
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	sd_nl_close(f->nl);
	close(f->kernel);
	return 0;
}

/* A datagram being built. */
struct dgram {
	uint8_t buf[4096] __attribute__((aligned(8)));
	size_t len;
};

static struct nlmsghdr *put(struct dgram *d, uint16_t type, uint16_t flags, uint32_t seq,
			    const void *payload, size_t plen)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)(d->buf + d->len);

	memset(nlh, 0, NLMSG_SPACE(plen));
	nlh->nlmsg_len = (uint32_t)NLMSG_LENGTH(plen);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = flags;
	nlh->nlmsg_seq = seq;
	if (plen)
		memcpy(NLMSG_DATA(nlh), payload, plen);
	d->len += NLMSG_SPACE(plen);
	return nlh;
}

static void data(struct dgram *d, uint32_t seq, uint32_t value, uint16_t flags)
{
	put(d, T_DATA, NLM_F_MULTI | flags, seq, &value, sizeof(value));
}

static void done(struct dgram *d, uint32_t seq, uint16_t flags)
{
	int zero = 0;

	put(d, NLMSG_DONE, NLM_F_MULTI | flags, seq, &zero, sizeof(zero));
}

static void queue(struct fixture *f, struct dgram *d)
{
	assert_int_equal(send(f->kernel, d->buf, d->len, 0), (ssize_t)d->len);
	memset(d, 0, sizeof(*d));
}

/* Read what the transport sent: the number of requests, their sequence
 * numbers into seqs. */
static size_t requests(struct fixture *f, uint32_t *seqs, size_t max)
{
	uint8_t buf[8192] __attribute__((aligned(8)));
	size_t n = 0;
	ssize_t len;

	while ((len = recv(f->kernel, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		const struct nlmsghdr *nlh;
		size_t left;

		for (nlh = sd_nl_first(buf, (size_t)len, &left); nlh; nlh = sd_nl_next(nlh, &left)) {
			assert_true(nlh->nlmsg_flags & NLM_F_REQUEST);
			if (n < max)
				seqs[n] = nlh->nlmsg_seq;
			n++;
		}
	}
	return n;
}

struct seen {
	uint32_t v[64];
	size_t n;
	unsigned restarts;
	int fail_at; /* cb returns -ECANCELED at this record (1-based); 0: never */
};

static int seen_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct seen *s = arg;
	uint32_t v;

	memcpy(&v, NLMSG_DATA(nlh), sizeof(v));
	if (s->n < 64)
		s->v[s->n] = v;
	s->n++;
	return s->fail_at && s->n == (size_t)s->fail_at ? -ECANCELED : 0;
}

static int restart_cb(void *arg)
{
	struct seen *s = arg;

	s->n = 0;
	s->restarts++;
	return 0;
}

static void put_request(struct sd_nl *nl)
{
	struct nlmsghdr *req = mnl_nlmsg_put_header(sd_nl_reqbuf(nl, NULL));

	req->nlmsg_type = T_DATA;
}

/* Every try interrupted: SD_NL_DUMP_TRIES requests, restart between them, -EINTR. */
static void test_intr_retried_then_error(void **state)
{
	struct fixture *f = *state;
	struct seen s = { 0 };
	struct dgram d = { 0 };
	uint32_t seqs[16];

	for (uint32_t seq = 1; seq <= SD_NL_DUMP_TRIES; seq++) {
		data(&d, seq, seq * 10, 0);
		data(&d, seq, seq * 10 + 1, NLM_F_DUMP_INTR);
		queue(f, &d);
		done(&d, seq, NLM_F_DUMP_INTR);
		queue(f, &d);
	}
	put_request(f->nl);
	assert_int_equal(sd_nl_dump_retry(f->nl, seen_cb, restart_cb, &s), -EINTR);
	assert_int_equal(requests(f, seqs, 16), SD_NL_DUMP_TRIES);
	for (uint32_t i = 0; i < SD_NL_DUMP_TRIES; i++)
		assert_int_equal(seqs[i], i + 1);
	assert_int_equal(s.restarts, SD_NL_DUMP_TRIES - 1);
	/* The last try was read to its end: nothing is left queued. */
	assert_int_equal(recv(sd_nl_fd(f->nl), d.buf, sizeof(d.buf), MSG_DONTWAIT), -1);
	assert_int_equal(errno, EAGAIN);
}

/* Interrupted once, then clean: 0 and the clean try's records only. */
static void test_intr_then_clean(void **state)
{
	struct fixture *f = *state;
	struct seen s = { 0 };
	struct dgram d = { 0 };
	uint32_t seqs[4];

	data(&d, 1, 7, NLM_F_DUMP_INTR);
	done(&d, 1, NLM_F_DUMP_INTR);
	queue(f, &d);
	data(&d, 2, 20, 0);
	data(&d, 2, 21, 0);
	done(&d, 2, 0);
	queue(f, &d);
	put_request(f->nl);
	assert_int_equal(sd_nl_dump_retry(f->nl, seen_cb, restart_cb, &s), 0);
	assert_int_equal(requests(f, seqs, 4), 2);
	assert_int_equal(s.restarts, 1);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.v[0], 20);
	assert_int_equal(s.v[1], 21);
}

/* The flag on DONE alone (the kernel checks consistency there too); no retry
 * without restart: sd_nl_dump returns -EINTR after one request. */
static void test_intr_on_done_only(void **state)
{
	struct fixture *f = *state;
	struct seen s = { 0 };
	struct dgram d = { 0 };
	uint32_t seqs[4];

	data(&d, 1, 1, 0);
	done(&d, 1, NLM_F_DUMP_INTR);
	queue(f, &d);
	put_request(f->nl);
	assert_int_equal(sd_nl_dump(f->nl, NULL, seen_cb, &s), -EINTR);
	assert_int_equal(requests(f, seqs, 4), 1);
	assert_int_equal(s.n, 1);
}

/* The callback stops at the first record of a two-datagram dump: the rest is
 * drained, and the next dump sees its own records only. Stale replies (seq
 * 99) and a message claiming 2 GiB are skipped. */
static void test_abort_drained(void **state)
{
	struct fixture *f = *state;
	struct seen s = { .fail_at = 1 };
	struct dgram d = { 0 };
	struct nlmsghdr *bad;

	data(&d, 99, 990, 0);
	data(&d, 1, 1, 0);
	data(&d, 1, 2, 0);
	queue(f, &d);
	data(&d, 1, 3, 0);
	done(&d, 1, 0);
	queue(f, &d);
	data(&d, 2, 30, 0);
	bad = put(&d, T_DATA, NLM_F_MULTI, 2, "xxxx", 4);
	bad->nlmsg_len = 0x80000000u;
	queue(f, &d);
	data(&d, 2, 31, 0);
	done(&d, 2, 0);
	queue(f, &d);
	put_request(f->nl);
	assert_int_equal(sd_nl_dump(f->nl, NULL, seen_cb, &s), -ECANCELED);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.v[0], 1);
	s = (struct seen){ 0 };
	put_request(f->nl);
	assert_int_equal(sd_nl_dump(f->nl, NULL, seen_cb, &s), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.v[0], 30);
	assert_int_equal(s.v[1], 31);
}

/* One message at a time, across datagrams: stale and NOOP skipped, the
 * look-ahead called once per datagram for its data messages. */
static int ahead_count(const struct nlmsghdr *nlh, void *arg)
{
	(void)nlh;
	(*(unsigned *)arg)++;
	return 0;
}

static uint32_t msg_value(const struct nlmsghdr *nlh)
{
	uint32_t v;

	memcpy(&v, NLMSG_DATA(nlh), sizeof(v));
	return v;
}

static void test_msg_pull(void **state)
{
	struct fixture *f = *state;
	const struct nlmsghdr *nlh;
	struct dgram d = { 0 };
	unsigned ahead = 0;
	int err = -ENOENT;

	data(&d, 7, 70, 0); /* stale */
	data(&d, 1, 1, 0);
	put(&d, NLMSG_NOOP, 0, 1, NULL, 0);
	data(&d, 1, 2, 0);
	queue(f, &d);
	data(&d, 1, 3, 0);
	done(&d, 1, 0);
	queue(f, &d);
	put_request(f->nl);
	assert_int_equal(sd_nl_dump_begin(f->nl), 0);
	for (uint32_t want = 1; want <= 3; want++) {
		assert_int_equal(sd_nl_dump_msg(f->nl, ahead_count, &ahead, &nlh), 1);
		assert_int_equal(msg_value(nlh), want);
	}
	assert_int_equal(ahead, 4); /* 3 data messages of datagram 1 (stale one too), 1 of 2 */
	assert_int_equal(sd_nl_dump_msg(f->nl, NULL, NULL, &nlh), 0);
	assert_int_equal(sd_nl_dump_msg(f->nl, NULL, NULL, &nlh), -EINVAL); /* no dump */

	/* Ended after the first message: the rest is drained for the next dump. */
	data(&d, 2, 20, 0);
	queue(f, &d);
	data(&d, 2, 21, 0);
	done(&d, 2, 0);
	queue(f, &d);
	data(&d, 3, 30, NLM_F_DUMP_INTR);
	done(&d, 3, 0);
	queue(f, &d);
	put(&d, NLMSG_DONE, NLM_F_MULTI, 4, &err, sizeof(err));
	queue(f, &d);
	put_request(f->nl);
	assert_int_equal(sd_nl_dump_begin(f->nl), 0);
	assert_int_equal(sd_nl_dump_msg(f->nl, NULL, NULL, &nlh), 1);
	assert_int_equal(msg_value(nlh), 20);
	sd_nl_dump_end(f->nl);
	put_request(f->nl);
	assert_int_equal(sd_nl_dump_begin(f->nl), 0);
	assert_int_equal(sd_nl_dump_msg(f->nl, NULL, NULL, &nlh), 1);
	assert_int_equal(msg_value(nlh), 30);
	assert_int_equal(sd_nl_dump_msg(f->nl, NULL, NULL, &nlh), -EINTR);
	put_request(f->nl);
	assert_int_equal(sd_nl_dump_begin(f->nl), 0);
	assert_int_equal(sd_nl_dump_msg(f->nl, NULL, NULL, &nlh), -ENOENT);
}

/* An NLMSG_ERROR with the kernel's message: capped (only the request's
 * header echoed) or not (the whole request echoed before the TLVs). */
static void error_with_ext_ack(struct fixture *f, uint32_t seq, bool capped, const char *msg)
{
	uint8_t p[512] __attribute__((aligned(4))) = { 0 };
	struct nlmsgerr *e = (struct nlmsgerr *)p;
	size_t off = sizeof(*e);
	struct nlattr *a;
	struct dgram d = { 0 };

	e->error = -EINVAL;
	e->msg.nlmsg_len = NLMSG_LENGTH(12); /* the request had 12 bytes of payload */
	e->msg.nlmsg_type = T_DATA;
	e->msg.nlmsg_seq = seq;
	if (!capped)
		off += 12;
	off = NLMSG_ALIGN(off);
	a = (struct nlattr *)(p + off);
	a->nla_type = 1; /* NLMSGERR_ATTR_MSG */
	a->nla_len = (uint16_t)(NLA_HDRLEN + strlen(msg) + 1);
	memcpy(p + off + NLA_HDRLEN, msg, strlen(msg) + 1);
	off += NLA_ALIGN(a->nla_len);
	put(&d, NLMSG_ERROR, (capped ? 0x100 : 0) | 0x200, seq, p, off);
	queue(f, &d);
}

static void test_ext_ack(void **state)
{
	struct fixture *f = *state;
	struct seen s = { 0 };
	struct dgram d = { 0 };
	int kerr = 0;

	error_with_ext_ack(f, 1, true, "Invalid values in header for address dump request");
	put_request(f->nl);
	assert_int_equal(sd_nl_dump(f->nl, NULL, seen_cb, &s), -EINVAL);
	assert_string_equal(sd_nl_ext_ack(f->nl),
			    "Invalid values in header for address dump request");
	error_with_ext_ack(f, 2, false, "no such thing");
	put_request(f->nl);
	assert_int_equal(sd_nl_request(f->nl, seen_cb, &s, &kerr), 0);
	assert_int_equal(kerr, -EINVAL);
	assert_string_equal(sd_nl_ext_ack(f->nl), "no such thing");
	/* A clean answer clears it. */
	data(&d, 3, 5, 0);
	done(&d, 3, 0);
	queue(f, &d);
	put_request(f->nl);
	assert_int_equal(sd_nl_dump(f->nl, NULL, seen_cb, &s), 0);
	assert_string_equal(sd_nl_ext_ack(f->nl), "");
}

/* Three requests in one send: stamped 1, 2, 3; the answer to the second
 * fails it, the others succeed (no answer); a stale answer is ignored. */
static void test_batch(void **state)
{
	struct fixture *f = *state;
	struct dgram req = { 0 }, d = { 0 };
	struct nlmsgerr e = { .error = -ENOENT };
	int errs[3] = { 7, 7, 7 };
	uint32_t seqs[4];

	for (int i = 0; i < 3; i++)
		put(&req, T_DATA, NLM_F_REQUEST, 777, "abcd", 4);
	e.msg.nlmsg_seq = 2;
	put(&d, NLMSG_ERROR, 0, 2, &e, sizeof(e));
	queue(f, &d);
	e.error = -EPERM;
	put(&d, NLMSG_ERROR, 0, 4000, &e, sizeof(e));
	queue(f, &d);
	assert_int_equal(sd_nl_batch(f->nl, req.buf, req.len, errs, 3), 0);
	assert_int_equal(errs[0], 0);
	assert_int_equal(errs[1], -ENOENT);
	assert_int_equal(errs[2], 0);
	assert_int_equal(requests(f, seqs, 4), 3);
	assert_int_equal(seqs[0], 1);
	assert_int_equal(seqs[2], 3);
	/* Not n messages: refused before anything is sent. */
	assert_int_equal(sd_nl_batch(f->nl, req.buf, req.len, errs, 2), -EINVAL);
	assert_int_equal(requests(f, seqs, 4), 0);
}

/* A datagram from a process (here: not even a netlink address) is no event. */
static void test_event_sender(void **state)
{
	struct fixture *f = *state;
	struct dgram d = { 0 };
	uint8_t buf[4096];

	data(&d, 0, 1, 0);
	queue(f, &d);
	assert_int_equal(sd_nl_recv_event(f->nl, buf, sizeof(buf), NULL), -EAGAIN);
}

/* Events read SD_NL_EVENTS at a time: a full read says more may be queued, a short one
 * that the queue is empty; an event longer than its slot is counted lost (cut); a
 * datagram from a process is no event. */
static void test_events_batch(void **state)
{
	struct fixture *f = *state;
	uint8_t buf[SD_NL_EVENTS * 64] __attribute__((aligned(8)));
	uint8_t big[100] = { 0 };
	struct sd_nl_events ev;
	struct dgram d = { 0 };

	for (int i = 0; i < SD_NL_EVENTS + 3; i++) {
		data(&d, 0, (uint32_t)i, 0);
		queue(f, &d);
	}
	assert_int_equal(send(f->kernel, big, sizeof(big), 0), (ssize_t)sizeof(big));
	assert_int_equal(sd_nl_recv_events(f->nl, buf, sizeof(buf), &ev), 0);
	assert_int_equal(ev.n, 0); /* none from the kernel */
	assert_int_equal(ev.cut, 0);
	assert_true(ev.more);
	assert_int_equal(sd_nl_recv_events(f->nl, buf, sizeof(buf), &ev), 0);
	assert_int_equal(ev.n, 0);
	assert_int_equal(ev.cut, 1); /* 100 bytes into a 64-byte slot */
	assert_false(ev.more);
	assert_int_equal(sd_nl_recv_events(f->nl, buf, sizeof(buf), &ev), -EAGAIN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_intr_retried_then_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_intr_then_clean, setup, teardown),
		cmocka_unit_test_setup_teardown(test_intr_on_done_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort_drained, setup, teardown),
		cmocka_unit_test_setup_teardown(test_msg_pull, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ext_ack, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_event_sender, setup, teardown),
		cmocka_unit_test_setup_teardown(test_events_batch, setup, teardown),
	};

	return sdiag_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
