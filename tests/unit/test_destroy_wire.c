/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Golden bytes of the SOCK_DESTROY requests the destroyer sends
 * (sd_dnl_build): the header (type 21, NLM_F_REQUEST only, no ACK), and a
 * struct inet_diag_req_v2 that echoes the dumped record exactly: family,
 * protocol (raw: the real protocol in the pad byte), ports in network order,
 * both addresses verbatim (IPv4 in the first word, v4-mapped IPv6 as is), the
 * interface index and the cookie (low word, high word). Records that cannot
 * be named exactly are refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tests/test_skip.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "lib/ops/destroy.h"

static struct sdiag_sock tcp4(void)
{
	struct sdiag_sock s = {
		.table = SDIAG_T_TCP,
		.family = AF_INET,
		.state = SDIAG_SS_ESTABLISHED,
		.protocol = IPPROTO_TCP,
		.has = SDIAG_HAS_COOKIE,
		.cookie = 0x1122334455667788ULL,
	};

	s.inet.sport = 5000;
	s.inet.dport = 40001;
	assert_int_equal(inet_pton(AF_INET, "127.0.0.1", s.inet.src), 1);
	assert_int_equal(inet_pton(AF_INET, "10.1.2.3", s.inet.dst), 1);
	s.inet.ifindex = 7;
	return s;
}

static uint32_t u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint16_t u16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void test_tcp4(void **state)
{
	struct sdiag_sock s = tcp4();
	uint8_t buf[SD_DNL_MSG_MAX + 16];
	static const uint8_t golden[72] = {
		/* nlmsghdr: len 72, type 21 (SOCK_DESTROY), flags 1 (REQUEST), seq 42, pid 0 */
		72,
		0,
		0,
		0,
		21,
		0,
		1,
		0,
		42,
		0,
		0,
		0,
		0,
		0,
		0,
		0,
		/* family 2, protocol 6, ext 0, pad 0, states 0 */
		2,
		6,
		0,
		0,
		0,
		0,
		0,
		0,
		/* sport 5000, dport 40001 (network order) */
		0x13,
		0x88,
		0x9c,
		0x41,
		/* src 127.0.0.1 */
		127,
		0,
		0,
		1,
		0,
		0,
		0,
		0,
		0,
		0,
		0,
		0,
		0,
		0,
		0,
		0,
		/* dst 10.1.2.3 */
		10,
		1,
		2,
		3,
		0,
		0,
		0,
		0,
		0,
		0,
		0,
		0,
		0,
		0,
		0,
		0,
		/* ifindex 7 */
		7,
		0,
		0,
		0,
		/* cookie low word, high word */
		0x88,
		0x77,
		0x66,
		0x55,
		0x44,
		0x33,
		0x22,
		0x11,
	};

	(void)state;
	memset(buf, 0xaa, sizeof(buf));
	assert_int_equal(sd_dnl_build(buf, &s, 0, 42), 72);
	assert_memory_equal(buf, golden, sizeof(golden));
}

static void test_variant_replaces_remote_port(void **state)
{
	struct sdiag_sock s = tcp4();
	uint8_t buf[SD_DNL_MSG_MAX];

	(void)state;
	s.state = SDIAG_SS_LISTEN;
	s.inet.dport = 0;
	memset(s.inet.dst, 0, sizeof(s.inet.dst));
	assert_int_equal(sd_dnl_build(buf, &s, 9, 1), 72);
	assert_int_equal(u16(buf + 24), htons(5000));
	assert_int_equal(u16(buf + 26), htons(9));
	/* everything else as dumped, cookie included */
	assert_int_equal(u32(buf + 28), htonl(0x7f000001));
	assert_int_equal(u32(buf + 60), 7);
	assert_int_equal(u32(buf + 64), 0x55667788);
	assert_int_equal(u32(buf + 68), 0x11223344);
}

static void test_udp6_mapped(void **state)
{
	struct sdiag_sock s = tcp4();
	uint8_t buf[SD_DNL_MSG_MAX];

	(void)state;
	s.table = SDIAG_T_UDP;
	s.family = AF_INET6;
	s.protocol = IPPROTO_UDP;
	assert_int_equal(inet_pton(AF_INET6, "::ffff:127.0.0.1", s.inet.src), 1);
	assert_int_equal(inet_pton(AF_INET6, "::ffff:10.1.2.3", s.inet.dst), 1);
	assert_int_equal(sd_dnl_build(buf, &s, 0, 1), 72);
	assert_int_equal(buf[16], AF_INET6);
	assert_int_equal(buf[17], IPPROTO_UDP);
	/* No swap for UDP destroy: source = local, as dumped. */
	assert_memory_equal(buf + 28, s.inet.src, 16);
	assert_memory_equal(buf + 44, s.inet.dst, 16);
}

static void test_raw_protocol_in_pad(void **state)
{
	struct sdiag_sock s = tcp4();
	uint8_t buf[SD_DNL_MSG_MAX];

	(void)state;
	s.table = SDIAG_T_RAW;
	s.protocol = IPPROTO_RAW;
	s.inet.raw_protocol = IPPROTO_ICMPV6;
	s.has |= SDIAG_HAS_RAW_PROTO;
	assert_int_equal(sd_dnl_build(buf, &s, 0, 1), 72);
	assert_int_equal(buf[17], IPPROTO_RAW);
	assert_int_equal(buf[19], IPPROTO_ICMPV6);
}

static void test_refused(void **state)
{
	struct sdiag_sock s = tcp4();
	uint8_t buf[SD_DNL_MSG_MAX];

	(void)state;
	s.has = 0; /* no cookie: the kernel could fall back to another socket */
	assert_int_equal(sd_dnl_build(buf, &s, 0, 1), -EINVAL);
	s = tcp4();
	s.table = SDIAG_T_MPTCP;
	assert_int_equal(sd_dnl_build(buf, &s, 0, 1), -EINVAL);
	s = tcp4();
	s.table = SDIAG_T_UNIX_STREAM;
	s.family = AF_UNIX;
	assert_int_equal(sd_dnl_build(buf, &s, 0, 1), -EINVAL);
}

static void test_destroyable(void **state)
{
	struct sdiag_sock s = tcp4();

	(void)state;
	assert_true(sdiag_destroyable(&s));
	s.state = SDIAG_SS_TIME_WAIT;
	assert_true(sdiag_destroyable(&s));
	s.state = SDIAG_SS_BOUND_INACTIVE;
	assert_false(sdiag_destroyable(&s));
	s.state = SDIAG_SS_CLOSE;
	assert_false(sdiag_destroyable(&s));
	s = tcp4();
	s.table = SDIAG_T_UDPLITE;
	assert_false(sdiag_destroyable(&s));
	s.table = SDIAG_T_UDP;
	assert_true(sdiag_destroyable(&s));
	s.table = SDIAG_T_MPTCP;
	assert_false(sdiag_destroyable(&s));
	s.family = AF_UNIX;
	s.table = SDIAG_T_UNIX_STREAM;
	assert_false(sdiag_destroyable(&s));
	assert_false(sdiag_destroyable(NULL));
	assert_string_equal(sdiag_destroy_result_name(SDIAG_GONE), "gone");
	assert_null(sdiag_destroy_result_name((enum sdiag_destroy_result)99));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tcp4),
		cmocka_unit_test(test_variant_replaces_remote_port),
		cmocka_unit_test(test_udp6_mapped),
		cmocka_unit_test(test_raw_protocol_in_pad),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_destroyable),
	};

	return sdiag_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
