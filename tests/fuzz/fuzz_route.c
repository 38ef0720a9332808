/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the guard's route handling (daemon/guard/core/route.c):
 * route events (guard_route_event), the answers to RTM_GETROUTE
 * (guard_route_parse) and the stranded-source verdict over them
 * (guard_decide_route), with the view the address and link messages of the
 * same input build (daemon/guard/core/view.c).
 *
 * Input: a stream of rtnetlink messages as recv() returns them, copied into a
 * buffer of exactly its size (a read past the end is an ASan error). It is
 * read twice: as events, walked as the guard's loop walks a datagram (each
 * message applied to the view and asked whether it is a route change); and
 * as the answer to a request (every message, walked as the transport walks a
 * datagram; sequence numbers and NLMSG_ERROR are the transport's, fuzzed by
 * fuzz_transport), whose parsed answer then judges a socket on every address of the
 * view, by IPv4 and IPv4-mapped IPv6, from the view's and the answer's
 * addresses. The answer must be consistent: an error is a negative errno; a
 * verdict is one the policy knows.
 *
 * Seeds: RTM_GETROUTE answers and route events captured in a private
 * namespace (tests/fuzz/route_seeds.py, committed in tests/fuzz/seeds/route/),
 * and the rtnetlink captures of fuzz_rtnl.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>

#include "daemon/guard/guard.h"
#include "lib/core/nl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(enum guard_verdict v)
{
	if ((unsigned)v > GUARD_DESTROY || !*guard_verdict_name(v))
		__builtin_trap();
}

/* A socket from src to the answer's source (or a fixed peer), as sock_diag gives it. */
static void judge(const struct guard_config *c, const struct guard_table *t,
		  const struct guard_route_answer *a, const uint8_t *src, uint8_t family,
		  uint32_t ifindex)
{
	struct sdiag_sock s = { .table = SDIAG_T_TCP, .family = family,
				.state = SDIAG_SS_ESTABLISHED, .has = SDIAG_HAS_MARK };
	struct guard_route_key k;

	memcpy(s.inet.src, src, family == AF_INET ? 4 : 16);
	if (a->has_src)
		memcpy(s.inet.dst, a->src, family == AF_INET ? 4 : 16);
	else
		s.inet.dst[0] = 198;
	s.inet.ifindex = ifindex;
	s.inet.mark = (uint32_t)a->oif;
	guard_route_key_of(&s, &k);
	if (k.family != AF_INET && k.family != AF_INET6)
		__builtin_trap();
	check(guard_decide_route(c, t, &s, a));
	check(guard_decide_route(c, t, &s, NULL));
	if (family == AF_INET) {	/* the same, IPv4-mapped */
		struct sdiag_sock m = s;
		static const uint8_t pre[12] = { [10] = 0xff, [11] = 0xff };

		m.family = AF_INET6;
		memcpy(m.inet.src, pre, 12);
		memcpy(m.inet.src + 12, src, 4);
		memcpy(m.inet.dst, pre, 12);
		memcpy(m.inet.dst + 12, s.inet.dst, 4);
		guard_route_key_of(&m, &k);
		if (k.family != AF_INET || memcmp(k.peer, s.inet.dst, 4))
			__builtin_trap();
		if (guard_decide_route(c, t, &m, a) != guard_decide_route(c, t, &s, a))
			__builtin_trap();
	}
}

static void answer(const struct guard_config *c, const struct guard_table *t,
		   const uint8_t *buf, size_t size)
{
	struct guard_route_answer a;
	const struct nlmsghdr *nlh;
	size_t left;

	memset(&a, 0, sizeof(a));
	for (nlh = sd_nl_first(buf, size, &left); nlh; nlh = sd_nl_next(nlh, &left))
		if (guard_route_parse(nlh, &a) != 0)
			__builtin_trap();
	if (a.err > 0 || a.err < -4095)
		__builtin_trap();
	for (size_t i = 0; i < t->n_addrs; i++)
		judge(c, t, &a, t->addrs[i].addr, t->addrs[i].family, (uint32_t)t->addrs[i].ifindex);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct guard_table t = { 0 };
	struct guard_pending p = { 0 };
	struct guard_config c;
	const struct nlmsghdr *nlh;
	uint8_t *buf;
	size_t left;

	if (size > 1 << 16)
		return 0;
	buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	guard_config_init(&c);
	c.exempt_loopback = size & 1;
	for (nlh = sd_nl_first(buf, size, &left); nlh; nlh = sd_nl_next(nlh, &left)) {
		bool ev = guard_route_event(nlh);

		if (ev && nlh->nlmsg_type != RTM_NEWROUTE && nlh->nlmsg_type != RTM_DELROUTE)
			__builtin_trap();
		if (guard_view_apply(&t, &p, nlh) < 0)
			break;
		if (p.n > 64)
			guard_pending_clear(&p);
	}
	answer(&c, &t, buf, size);
	guard_pending_fini(&p);
	guard_table_fini(&t);
	guard_config_fini(&c);
	free(buf);
	return 0;
}
