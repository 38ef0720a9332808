// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The conntrack dump parser of a sweep (daemon/common/ct.c, ct_dump_datagram):
 * arbitrary ctnetlink dump replies, as the kernel would hand them to recv().
 * The transport's part of a dump (sequence, port, NLMSG_DONE, NLMSG_ERROR,
 * NLM_F_DUMP_INTR) is fuzz_transport's.
 *
 * Input: datagrams, each a 2-byte length (little-endian; longer than what is
 * left: the rest) and its bytes, copied into a buffer of their own size so
 * that ASan sees any read past a datagram. Checked: every entry selected is
 * IPv4 or IPv6 in both tuples and was offered to match() once, and the count
 * adds up. Seeds: tests/fuzz/ct_seeds.py (a real dump, captured in a new
 * namespace) and tests/fuzz/seeds/ct/.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "daemon/common/ct.h"

struct offered {
	size_t n, picked;
};

/* Every other entry is selected: both outcomes of match() are exercised. */
static bool pick(const struct ct_entry *e, void *userdata)
{
	struct offered *o = userdata;
	bool take = o->n++ % 2 == 0;

	if ((e->orig.family != AF_INET && e->orig.family != AF_INET6) ||
	    e->reply.family != e->orig.family)
		abort();
	o->picked += take;
	return take;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct offered o = { 0 };
	struct ct_dump d = { .match = pick, .userdata = &o };
	int r = 0;

	while (size >= 2 && r == 0) {
		size_t len = (size_t)data[0] | (size_t)data[1] << 8;
		uint8_t *buf;

		data += 2;
		size -= 2;
		if (len > size)
			len = size;
		buf = malloc(len ? len : 1);
		if (!buf)
			abort();
		memcpy(buf, data, len);
		r = ct_dump_datagram(&d, buf, len);
		free(buf);
		data += len;
		size -= len;
	}
	if ((r < 0 && r != -ENOMEM) || r > 0 || d.n != o.picked || d.n > d.cap)
		abort();
	for (size_t i = 0; i < d.n; i++)
		if (d.v[i].orig.family != AF_INET && d.v[i].orig.family != AF_INET6)
			abort();
	free(d.v);
	return 0;
}
