/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the unix, netlink, packet, vsock, xdp and tipc
 * decoders.
 *
 * Input: one byte choosing the decoder (low bits, modulo 6: unix, netlink,
 * packet, vsock, xdp, tipc), then a stream of netlink messages as a recv()
 * would return them. Every message the transport would hand on
 * (mnl_nlmsg_ok) is decoded; each record is deep-copied (sdiag_sock_dup) and
 * all its borrowed bytes are read, so ASan sees any pointer or length that
 * escapes the input.
 *
 * Seeds: tests/fixtures/{unix,netlink,packet}-dump.bin with 0x00, 0x01 or
 * 0x02 put in front.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>

#include "lib/core/internal.h"
#include "lib/family/family.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int (*const decoders[])(const struct nlmsghdr *, struct sdiag_sock *) = {
	sd_unix_decode,	 sd_netlink_decode, sd_packet_decode,
	sd_vsock_decode, sd_xdp_decode,	    sd_tipc_decode,
};

static uint8_t read_bytes(const void *p, size_t n)
{
	const volatile uint8_t *b = p;
	uint8_t x = 0;

	for (size_t i = 0; i < n; i++)
		x ^= b[i];
	return x;
}

/* Touch everything a record borrows, in the original and in a deep copy. */
static void consume(const struct sdiag_sock *s)
{
	struct sdiag_sock *c;
	volatile uint8_t sink = 0;

	if (s->table >= SDIAG_T_MAX || s->state >= SDIAG_SS_MAX)
		abort(); /* decoders must only produce valid enums */
	c = sdiag_sock_dup(s);
	if (!c)
		return;
	switch (c->family) {
	case AF_UNIX:
		if (c->un.name)
			sink ^= read_bytes(c->un.name, c->un.name_len);
		if (c->un.icons)
			sink ^= read_bytes(c->un.icons, c->un.n_icons * sizeof(uint32_t));
		break;
	case AF_NETLINK:
		if (c->nl.groups)
			sink ^= read_bytes(c->nl.groups, c->nl.n_group_words * sizeof(uint32_t));
		break;
	case AF_PACKET:
		if (c->pkt.mclist)
			sink ^= read_bytes(c->pkt.mclist, c->pkt.n_mclist * sizeof(*c->pkt.mclist));
		if (c->pkt.filter)
			sink ^= read_bytes(c->pkt.filter, c->pkt.n_filter * 8);
		break;
	default:
		break;
	}
	(void)sink;
	free(c);
}

/* mnl_nlmsg_ok() compares (int)nlmsg_len: a length of 2 GiB or more passes
 * as negative, and one near 4 GiB aligns to 0 and loops forever. */
static bool msg_ok(const struct nlmsghdr *nlh, int rem)
{
	return mnl_nlmsg_ok(nlh, rem) && nlh->nlmsg_len <= (uint32_t)rem;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int (*decode)(const struct nlmsghdr *, struct sdiag_sock *);
	const struct nlmsghdr *nlh;
	struct sdiag_sock s;
	void *buf;
	int rem;

	if (size < 1 || size > 1 << 20)
		return 0;
	decode = decoders[data[0] % (sizeof(decoders) / sizeof(decoders[0]))];
	/* malloc's alignment is a recv buffer's; the exact size lets ASan
	 * catch a read one byte past the input. */
	buf = malloc(size > 1 ? size - 1 : 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, size - 1);
	rem = (int)(size - 1);
	for (nlh = buf; msg_ok(nlh, rem); nlh = mnl_nlmsg_next(nlh, &rem)) {
		memset(&s, 0, sizeof(s));
		if (decode(nlh, &s) > 0)
			consume(&s);
	}
	free(buf);
	return 0;
}
