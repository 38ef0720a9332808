/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SMC decoder and request builder (lib/family/smc.c), offline.
 *
 * This kernel has no SMC, so no capture exists: every reply here is built in
 * the test from the documented layout (include/uapi/linux/smc_diag.h,
 * __smc_diag_dump() in net/smc/smc_diag.c). A decoder test on constructed
 * input, not a replay; the bytes are built through transcriptions checked
 * field by field against the installed <linux/smc_diag.h> below.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "tests/test_skip.h"
#include <libmnl/libmnl.h>
#include <linux/netlink.h>

#include "lib/core/internal.h"

#ifndef AF_SMC
#define AF_SMC 43
#endif

/* ---- the hand-built bytes against the kernel's uapi layout ---------------------------- */

#include <linux/smc_diag.h>
#include "lib/family/family.h"
#include "tests/unit/uapi_layout.h"

/* struct smc_diag_msg: the CLC socket's inet_diag_sockid, then uid and inode. */
struct smc_msg_bytes {
	uint8_t family, state, mode, shutdown;
	struct sockid_bytes id;
	uint32_t uid;
	uint64_t inode __attribute__((aligned(8)));
};
SAME_FIELD(struct smc_msg_bytes, family, struct smc_diag_msg, diag_family);
SAME_FIELD(struct smc_msg_bytes, state, struct smc_diag_msg, diag_state);
SAME_FIELD(struct smc_msg_bytes, mode, struct smc_diag_msg, diag_mode);
SAME_FIELD(struct smc_msg_bytes, shutdown, struct smc_diag_msg, diag_shutdown);
SAME_FIELD(struct smc_msg_bytes, id, struct smc_diag_msg, id);
SAME_FIELD(struct smc_msg_bytes, uid, struct smc_diag_msg, diag_uid);
SAME_FIELD(struct smc_msg_bytes, inode, struct smc_diag_msg, diag_inode);
SAME_SIZE(struct smc_msg_bytes, struct smc_diag_msg);

/* struct smc_diag_req: what sd_smc_request() must send. */
struct smc_req_bytes {
	uint8_t family, pad[2], ext;
	struct sockid_bytes id;
};
SAME_FIELD(struct smc_req_bytes, family, struct smc_diag_req, diag_family);
SAME_FIELD(struct smc_req_bytes, pad, struct smc_diag_req, pad);
SAME_FIELD(struct smc_req_bytes, ext, struct smc_diag_req, diag_ext);
SAME_FIELD(struct smc_req_bytes, id, struct smc_diag_req, id);
SAME_SIZE(struct smc_req_bytes, struct smc_diag_req);

/* SMC_DIAG_FALLBACK's payload: reason, then the peer's diagnosis. */
struct smc_fallback_bytes {
	uint32_t reason, peer_diagnosis;
};
SAME_FIELD(struct smc_fallback_bytes, reason, struct smc_diag_fallback, reason);
SAME_FIELD(struct smc_fallback_bytes, peer_diagnosis, struct smc_diag_fallback, peer_diagnosis);
SAME_SIZE(struct smc_fallback_bytes, struct smc_diag_fallback);

/* The attributes the decoder skips, as large as the kernel sends them: a
 * conninfo (76 bytes), an SMC-R link group (147) and an SMC-D DMB (40). */
#define CONNINFO_LEN 76
#define LGRINFO_LEN 147
#define DMBINFO_LEN 40
_Static_assert(sizeof(struct smc_diag_conninfo) == CONNINFO_LEN &&
		       offsetof(struct smc_diag_conninfo, tx_fin) == 68,
	       "smc_diag_conninfo");
_Static_assert(sizeof(struct smc_diag_lgrinfo) == LGRINFO_LEN &&
		       offsetof(struct smc_diag_lgrinfo, role) == 146,
	       "smc_diag_lgrinfo");
_Static_assert(sizeof(struct smcd_diag_dmbinfo) == DMBINFO_LEN &&
		       offsetof(struct smcd_diag_dmbinfo, peer_token) == 32,
	       "smcd_diag_dmbinfo");
_Static_assert(SMC_DIAG_CONNINFO == 1 && SMC_DIAG_LGRINFO == 2 && SMC_DIAG_SHUTDOWN == 3 &&
		       SMC_DIAG_DMBINFO == 4 && SMC_DIAG_FALLBACK == 5,
	       "SMC_DIAG_* attribute numbers used below");
_Static_assert(SMC_DIAG_MODE_SMCD == 2, "diag_mode SMC-D");

static struct nlmsghdr *build_smc(void *buf, uint8_t st)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct smc_msg_bytes *m;

	nlh->nlmsg_type = 20;
	nlh->nlmsg_flags = NLM_F_MULTI;
	m = mnl_nlmsg_put_extra_header(nlh, sizeof(*m));
	m->family = AF_SMC;
	m->state = st;
	m->mode = SMC_DIAG_MODE_SMCD;
	m->shutdown = 0;
	m->id.sport[0] = 0x1f; /* sport 8080 */
	m->id.sport[1] = 0x90;
	m->id.dport[0] = 0xc3; /* dport 50000 */
	m->id.dport[1] = 0x50;
	m->id.src[0] = 10; /* src 10.0.0.1 */
	m->id.src[3] = 1;
	m->id.dst[0] = 10; /* dst 10.0.0.2 */
	m->id.dst[3] = 2;
	m->id.ifindex = 3;
	m->id.cookie[0] = 0x11223344;
	m->id.cookie[1] = 0x55;
	m->uid = 1000;
	m->inode = 987654321012ULL;
	return nlh;
}

static void test_smc(void **state)
{
	uint8_t buf[512] __attribute__((aligned(8)));
	struct smc_fallback_bytes fb = { 0x03010000, 0x03030007 };
	uint8_t skipped[LGRINFO_LEN];
	struct nlmsghdr *nlh;
	struct sdiag_sock s;
	struct smc_req_bytes req;
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
	assert_int_equal(nlh->nlmsg_len, 16 + sizeof(req));
	assert_int_equal(nlh->nlmsg_type, 20);
	assert_int_equal(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_DUMP);
	memcpy(&req, mnl_nlmsg_get_payload(nlh), sizeof(req));
	assert_int_equal(req.family, AF_SMC);
	assert_int_equal(req.ext, 0);

	/* In the kernel's order: SHUTDOWN, FALLBACK, then what ext asked for. */
	memset(skipped, 0xa5, sizeof(skipped));
	nlh = build_smc(buf, 1);
	mnl_attr_put_u8(nlh, SMC_DIAG_SHUTDOWN, 2);
	mnl_attr_put(nlh, SMC_DIAG_FALLBACK, sizeof(fb), &fb);
	mnl_attr_put(nlh, SMC_DIAG_CONNINFO, CONNINFO_LEN, skipped);
	mnl_attr_put(nlh, SMC_DIAG_LGRINFO, LGRINFO_LEN, skipped);
	mnl_attr_put(nlh, SMC_DIAG_DMBINFO, DMBINFO_LEN, skipped);
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
	nlh->nlmsg_len = 16 + sizeof(struct smc_msg_bytes) - 1;
	assert_int_equal(sd_smc_decode(nlh, &s), -EBADMSG);
	nlh = build_smc(buf, 1);
	mnl_attr_put(nlh, SMC_DIAG_FALLBACK, 2, &fb);
	assert_int_equal(sd_smc_decode(nlh, &s), -EBADMSG);
	nlh = build_smc(buf, 1);
	mnl_attr_put_u8(nlh, SMC_DIAG_SHUTDOWN, 2);
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
