/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SMC decoder and request builder (lib/smc.c), offline.
 *
 * This kernel has no SMC, so no capture exists: every reply here is built in
 * the test from the documented layout (include/uapi/linux/smc_diag.h,
 * __smc_diag_dump() in net/smc/smc_diag.c). A decoder test on constructed
 * input, not a replay.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "test_skip.h"
#include <libmnl/libmnl.h>
#include <linux/netlink.h>

#include "internal.h"

#ifndef AF_SMC
#define AF_SMC 43
#endif

/* smc_diag_msg, 64 bytes: family, state, mode, shutdown, inet_diag_sockid at
 * 4, uid at 52, u64 inode at 56; attributes follow (SMC_DIAG_SHUTDOWN = 3,
 * SMC_DIAG_FALLBACK = 5). */
static struct nlmsghdr *build_smc(void *buf, uint8_t st)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	uint8_t *m;
	uint32_t uid = 1000, cookie[2] = { 0x11223344, 0x55 };
	uint64_t inode = 987654321012ULL;

	nlh->nlmsg_type = 20;
	nlh->nlmsg_flags = NLM_F_MULTI;
	m = mnl_nlmsg_put_extra_header(nlh, 64);
	m[0] = AF_SMC;
	m[1] = st;
	m[2] = 2; /* SMC-D */
	m[3] = 0;
	m[4] = 0x1f; /* sport 8080 */
	m[5] = 0x90;
	m[6] = 0xc3; /* dport 50000 */
	m[7] = 0x50;
	m[8] = 10; /* src 10.0.0.1 */
	m[11] = 1;
	m[24] = 10; /* dst 10.0.0.2 */
	m[27] = 2;
	m[40] = 3; /* ifindex 3 */
	memcpy(m + 44, cookie, sizeof(cookie));
	memcpy(m + 52, &uid, sizeof(uid));
	memcpy(m + 56, &inode, sizeof(inode));
	return nlh;
}

static void test_smc(void **state)
{
	uint8_t buf[512] __attribute__((aligned(8)));
	uint32_t fb[2] = { 0x03010000, 0x03030007 };
	struct nlmsghdr *nlh;
	struct sdiag_sock s;
	struct {
		uint8_t family, pad[2], ext;
		uint8_t id[48];
	} req;
	struct sd_req r = { .family = AF_SMC, .states = SDIAG_STATES_ALL, .show = SDIAG_SHOW_ALL };
	static const struct {
		uint8_t smc, want;
	} states[] = {
		{ 1, SDIAG_SS_ESTABLISHED }, { 2, SDIAG_SS_SYN_SENT },
		{ 7, SDIAG_SS_CLOSE },	     { 10, SDIAG_SS_LISTEN },
		{ 20, SDIAG_SS_FIN_WAIT1 },  { 21, SDIAG_SS_FIN_WAIT2 },
		{ 22, SDIAG_SS_CLOSE_WAIT }, { 23, SDIAG_SS_CLOSE_WAIT },
		{ 24, SDIAG_SS_CLOSE_WAIT }, { 25, SDIAG_SS_FIN_WAIT2 },
		{ 26, SDIAG_SS_CLOSING },    { 27, SDIAG_SS_CLOSING },
		{ 99, SDIAG_SS_UNKNOWN },
	};

	(void)state;
	nlh = sd_smc_request(buf, &r);
	assert_int_equal(nlh->nlmsg_len, 16 + 52);
	assert_int_equal(nlh->nlmsg_type, 20);
	assert_int_equal(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_DUMP);
	memcpy(&req, mnl_nlmsg_get_payload(nlh), sizeof(req));
	assert_int_equal(req.family, AF_SMC);

	nlh = build_smc(buf, 1);
	mnl_attr_put_u8(nlh, 3, 2);
	mnl_attr_put(nlh, 5, sizeof(fb), fb);
	memset(&s, 0, sizeof(s));
	assert_int_equal(sd_smc_decode(nlh, &s), 1);
	assert_int_equal(s.table, SDIAG_T_SMC);
	assert_int_equal(s.family, AF_SMC);
	assert_int_equal(s.type, SOCK_STREAM);
	assert_int_equal(s.state, SDIAG_SS_ESTABLISHED);
	assert_int_equal(s.inet.sport, 8080);
	assert_int_equal(s.inet.dport, 50000);
	assert_memory_equal(s.inet.src, ((uint8_t[4]){ 10, 0, 0, 1 }), 4);
	assert_memory_equal(s.inet.dst, ((uint8_t[4]){ 10, 0, 0, 2 }), 4);
	assert_int_equal(s.inet.ifindex, 3);
	assert_int_equal(s.cookie, 0x5511223344ULL);
	assert_int_equal(s.uid, 1000);
	assert_int_equal(s.inode, 987654321012ULL);
	assert_int_equal(s.smc.mode, 2);
	assert_int_equal(s.smc.fallback_reason, 0x03010000);
	assert_int_equal(s.smc.peer_diagnosis, 0x03030007);
	assert_int_equal(s.shutdown, 2);
	assert_int_equal(s.has, SDIAG_HAS_UID | SDIAG_HAS_INODE | SDIAG_HAS_COOKIE |
					SDIAG_HAS_SHUTDOWN | SDIAG_HAS_SMC_INFO);

	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		nlh = build_smc(buf, states[i].smc);
		memset(&s, 0, sizeof(s));
		assert_int_equal(sd_smc_decode(nlh, &s), 1);
		assert_int_equal(s.state, states[i].want);
	}

	/* Cut short, bad attribute, wrong family, not a reply. */
	nlh = build_smc(buf, 1);
	nlh->nlmsg_len = 16 + 63;
	assert_int_equal(sd_smc_decode(nlh, &s), -EBADMSG);
	nlh = build_smc(buf, 1);
	mnl_attr_put(nlh, 5, 2, fb);
	assert_int_equal(sd_smc_decode(nlh, &s), -EBADMSG);
	nlh = build_smc(buf, 1);
	mnl_attr_put_u8(nlh, 3, 2);
	nlh->nlmsg_len -= 4;
	assert_int_equal(sd_smc_decode(nlh, &s), -EBADMSG);
	nlh = build_smc(buf, 1);
	((uint8_t *)mnl_nlmsg_get_payload(nlh))[0] = AF_UNIX;
	assert_int_equal(sd_smc_decode(nlh, &s), -EBADMSG);
	nlh->nlmsg_type = NLMSG_ERROR;
	assert_int_equal(sd_smc_decode(nlh, &s), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_smc),
	};

	return sdiag_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
