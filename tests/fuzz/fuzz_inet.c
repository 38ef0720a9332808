/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the inet (and SMC) decoders.
 *
 * Input: one byte choosing the protocol hint the dump layer would pass
 * (none, TCP, UDP, UDP-Lite, raw, MPTCP, SCTP, or an unknown one), then a
 * stream of netlink messages as a recv() would return them. Every message
 * the transport would hand on (mnl_nlmsg_ok) goes through sd_inet_decode()
 * and sd_smc_decode(); decoded records are deep-copied and their borrowed
 * bytes read (SCTP's address lists through sdiag_sctp_addrs(), on the record
 * and on its copy), so ASan sees any pointer that escapes the input.
 *
 * Seeds: tests/fixtures/inet-*.bin with one byte (0x01 TCP, 0x02 UDP, 0x05 MPTCP)
 * put in front.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <libmnl/libmnl.h>

#include "lib/core/internal.h"
#include "lib/family/family.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint16_t hints[8] = {
	0, IPPROTO_TCP, IPPROTO_UDP, IPPROTO_UDPLITE, IPPROTO_RAW, 262, IPPROTO_SCTP, 33,
};

static void consume(const struct sdiag_sock *s)
{
	struct sdiag_sock *copy = sdiag_sock_dup(s);
	volatile uint8_t sink = 0;
	struct sdiag_sctp_addr a[4];

	if (!copy)
		return;
	if (copy->inet.ulp_mptcp && (copy->family == AF_INET || copy->family == AF_INET6))
		for (size_t i = 0; i < copy->inet.ulp_mptcp_len; i++)
			sink ^= ((const uint8_t *)copy->inet.ulp_mptcp)[i];
	/* SCTP's address lists, decoded from the input and from the copy alike. */
	for (int w = SDIAG_SCTP_LOCALS; w <= SDIAG_SCTP_PEERS; w++) {
		size_t n = sdiag_sctp_addrs(s, (enum sdiag_sctp_list)w, a, 4);

		if (sdiag_sctp_addrs(copy, (enum sdiag_sctp_list)w, a, 4) != n)
			abort();
		for (size_t i = 0; i < n && i < 4; i++)
			sink ^= a[i].addr[0];
	}
	(void)sink;
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct nlmsghdr *nlh;
	uint16_t hint;
	void *buf;
	int rem;

	if (size < 1 || size > 1 << 20)
		return 0;
	hint = hints[data[0] & 7];
	/* malloc's alignment is what a recv buffer has; the exact size lets
	 * ASan catch a read one byte past the input. */
	buf = malloc(size > 1 ? size - 1 : 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, size - 1);
	rem = (int)(size - 1);
	for (nlh = buf; mnl_nlmsg_ok(nlh, rem); nlh = mnl_nlmsg_next(nlh, &rem)) {
		struct sdiag_sock s;

		/* libmnl 1.0.4 compares nlmsg_len as an int: >= 2^31 passes. */
		if (nlh->nlmsg_len > (uint32_t)rem)
			break;

		memset(&s, 0, sizeof(s));
		s.protocol = hint;
		if (sd_inet_decode(nlh, &s) == 1)
			consume(&s);
		memset(&s, 0, sizeof(s));
		if (sd_smc_decode(nlh, &s) == 1)
			consume(&s);
	}
	free(buf);
	return 0;
}
