// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The parser of a conntrack sweep's dump (daemon/common/ct.c,
 * ct_dump_datagram) on bytes built here the way ctnetlink lays them out
 * (linux/netfilter/nfnetlink_conntrack.h): the entries selected and their
 * tuples, id and zone; control messages left to the transport; entries skipped
 * (one tuple only); a message claiming nearly 4 GiB, after which libmnl 1.0.4
 * read past the datagram's end.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <cmocka.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

#include "daemon/common/ct.h"

#define SEQ 7
#define PORTID 4242

static bool take_all(const struct ct_entry *e, void *userdata)
{
	(void)e;
	++*(size_t *)userdata;
	return true;
}

static void put_tuple(struct nlmsghdr *nlh, uint16_t type, const char *src, const char *dst,
		      uint16_t sport, uint16_t dport)
{
	struct nlattr *t = mnl_attr_nest_start(nlh, type), *n;
	struct in_addr a;

	n = mnl_attr_nest_start(nlh, CTA_TUPLE_IP);
	inet_pton(AF_INET, src, &a);
	mnl_attr_put(nlh, CTA_IP_V4_SRC, 4, &a);
	inet_pton(AF_INET, dst, &a);
	mnl_attr_put(nlh, CTA_IP_V4_DST, 4, &a);
	mnl_attr_nest_end(nlh, n);
	n = mnl_attr_nest_start(nlh, CTA_TUPLE_PROTO);
	mnl_attr_put_u8(nlh, CTA_PROTO_NUM, IPPROTO_TCP);
	mnl_attr_put_u16(nlh, CTA_PROTO_SRC_PORT, htons(sport));
	mnl_attr_put_u16(nlh, CTA_PROTO_DST_PORT, htons(dport));
	mnl_attr_nest_end(nlh, n);
	mnl_attr_nest_end(nlh, t);
}

/* At buf: one entry of the dump (reply tuple unless !reply), then NLMSG_DONE
 * unless !done. Returns the datagram's length. */
static size_t build(uint8_t *buf, uint32_t seq, bool reply, bool done)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;
	size_t len;

	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_NEW;
	nlh->nlmsg_flags = NLM_F_MULTI;
	nlh->nlmsg_seq = seq;
	nlh->nlmsg_pid = PORTID;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = AF_INET;
	put_tuple(nlh, CTA_TUPLE_ORIG, "10.0.0.1", "10.0.0.2", 1234, 80);
	if (reply)
		put_tuple(nlh, CTA_TUPLE_REPLY, "10.0.0.2", "10.0.0.1", 80, 1234);
	mnl_attr_put_u32(nlh, CTA_ID, htonl(42));
	mnl_attr_put_u16(nlh, CTA_ZONE, htons(3));
	len = NLMSG_ALIGN(nlh->nlmsg_len);
	if (done) {
		nlh = mnl_nlmsg_put_header(buf + len);
		nlh->nlmsg_type = NLMSG_DONE;
		nlh->nlmsg_flags = NLM_F_MULTI;
		nlh->nlmsg_seq = seq;
		nlh->nlmsg_pid = PORTID;
		mnl_nlmsg_put_extra_header(nlh, sizeof(int));
		len += nlh->nlmsg_len;
	}
	return len;
}

static void test_entry(void **state)
{
	uint8_t buf[1024] __attribute__((aligned(8))) = { 0 };
	size_t offered = 0, len = build(buf, SEQ, true, true);
	struct ct_dump d = { .match = take_all, .userdata = &offered };
	const struct ct_tuple *o, *r;

	(void)state;
	assert_int_equal(ct_dump_datagram(&d, buf, len), 0);
	assert_int_equal(d.n, 1);
	assert_int_equal(offered, 1);
	o = &d.v[0].orig;
	r = &d.v[0].reply;
	assert_int_equal(o->family, AF_INET);
	assert_int_equal(o->proto, IPPROTO_TCP);
	assert_int_equal(o->sport, 1234);
	assert_int_equal(o->dport, 80);
	assert_memory_equal(o->src, "\x0a\x00\x00\x01", 4);
	assert_memory_equal(o->dst, "\x0a\x00\x00\x02", 4);
	assert_int_equal(r->sport, 80);
	assert_memory_equal(r->src, "\x0a\x00\x00\x02", 4);
	assert_int_equal(d.v[0].id, 42);
	assert_int_equal(d.v[0].zone, 3);
	/* The next datagram adds to the entries. */
	len = build(buf, SEQ, true, false);
	assert_int_equal(ct_dump_datagram(&d, buf, len), 0);
	assert_int_equal(d.n, 2);
	free(d.v);
}

/* NLMSG_ERROR (and DONE, above) are the transport's: no entry. */
static void test_control(void **state)
{
	uint8_t buf[64] __attribute__((aligned(8))) = { 0 };
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nlmsgerr *e;
	size_t offered = 0;
	struct ct_dump d = { .match = take_all, .userdata = &offered };

	(void)state;
	nlh->nlmsg_type = NLMSG_ERROR;
	nlh->nlmsg_seq = SEQ;
	nlh->nlmsg_pid = PORTID;
	e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));
	e->error = -EPERM;
	assert_int_equal(ct_dump_datagram(&d, buf, nlh->nlmsg_len), 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(offered, 0);
}

/* An entry without its reply tuple is skipped, never selected. */
static void test_one_tuple(void **state)
{
	uint8_t buf[1024] __attribute__((aligned(8))) = { 0 };
	size_t offered = 0, len = build(buf, SEQ, false, true);
	struct ct_dump d = { .match = take_all, .userdata = &offered };

	(void)state;
	assert_int_equal(ct_dump_datagram(&d, buf, len), 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(offered, 0);
}

/* A message claiming nearly 4 GiB: ignored, as any message that does not fit
 * its datagram. libmnl 1.0.4 compares nlmsg_len as an int (negative here),
 * took it, and looked for the next message 3.75 GiB further on (SIGSEGV);
 * fuzz_ct found it. */
static void test_claims_4g(void **state)
{
	uint8_t *buf = calloc(1, 1024);
	size_t offered = 0, len;
	struct ct_dump d = { .match = take_all, .userdata = &offered };

	(void)state;
	assert_non_null(buf);
	len = build(buf, SEQ, true, false);
	((struct nlmsghdr *)buf)->nlmsg_len += 0xf0000000u;
	assert_int_equal(ct_dump_datagram(&d, buf, len), 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(offered, 0);
	free(d.v);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entry),	  cmocka_unit_test(test_control),
		cmocka_unit_test(test_one_tuple),
		cmocka_unit_test(test_claims_4g),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
