/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the guard's rtnetlink handling: the parsers and the
 * view updates of daemon/guard/core/view.c, the resync's difference and the
 * policy over the pending events (daemon/guard/core/policy.c).
 *
 * Input: a stream of rtnetlink messages as recv() returns them, copied into
 * a buffer of exactly its size (so a read past the last message is an ASan
 * error). Each message the guard's loop would hand on (mnl_nlmsg_ok) is
 * applied to the view; an NLMSG_NOOP message stands for an overflow: the
 * view so far becomes "the dump", compared with the view at the previous
 * one. After each step every socket on an address the events named is
 * judged, and the view is checked: no address twice, a verdict in range.
 *
 * Seeds: real link/address dumps and events captured in a private namespace
 * (tests/fuzz/rtnl_seeds.py, run by .ci/fuzz) and tests/fuzz/seeds/rtnl/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>

#include "daemon/guard/guard.h"
#include "daemon/guard/rtnl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct sdiag_sock sock_on(const struct guard_addr *a, enum sdiag_table table)
{
	struct sdiag_sock s = { .table = table, .family = a->family,
				.state = SDIAG_SS_ESTABLISHED };

	memcpy(s.inet.src, a->addr, a->family == AF_INET ? 4 : 16);
	s.inet.dst[0] = 198;
	s.inet.ifindex = (uint32_t)a->ifindex;
	return s;
}

static void judge(const struct guard_config *c, const struct guard_table *t,
		  const struct guard_pending *p)
{
	for (size_t i = 0; i < p->n; i++)
		for (size_t j = 0; j < p->ev[i].n_addrs; j++) {
			struct sdiag_sock s = sock_on(&p->ev[i].addrs[j], SDIAG_T_TCP);
			enum guard_verdict v = guard_decide_all(c, t, p, &s);

			if ((unsigned)v > GUARD_DESTROY || !*guard_verdict_name(v))
				__builtin_trap();
			s.table = SDIAG_T_UDP;
			(void)guard_decide(c, t, &p->ev[i], &s);
		}
	for (size_t i = 0; i < t->n_addrs; i++)
		for (size_t j = i + 1; j < t->n_addrs; j++)
			if (t->addrs[i].ifindex == t->addrs[j].ifindex &&
			    t->addrs[i].family == t->addrs[j].family &&
			    t->addrs[i].prefixlen == t->addrs[j].prefixlen &&
			    !memcmp(t->addrs[i].addr, t->addrs[j].addr, 16))
				__builtin_trap();
}

static int copy_table(struct guard_table *dst, const struct guard_table *src)
{
	memset(dst, 0, sizeof(*dst));
	for (size_t i = 0; i < src->n_links; i++)
		if (guard_table_set_link(dst, &src->links[i]) < 0)
			return -1;
	for (size_t i = 0; i < src->n_addrs; i++)
		if (guard_table_add_addr(dst, &src->addrs[i]) < 0)
			return -1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct guard_table t = { 0 }, dumped = { 0 };
	struct guard_pending p = { 0 };
	struct guard_config c;
	const struct nlmsghdr *nlh;
	uint8_t *buf;
	int len = (int)size;

	if (size > 1 << 16)
		return 0;
	buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	guard_config_init(&c);
	c.exempt_loopback = size & 1;
	/* As the guard's loop walks a datagram (daemon/guard/guard.c). */
	for (nlh = (const struct nlmsghdr *)buf;
	     mnl_nlmsg_ok(nlh, len) && nlh->nlmsg_len <= (unsigned)len;
	     nlh = mnl_nlmsg_next(nlh, &len)) {
		struct guard_addr a;
		struct guard_link l;

		/* The parsers alone, on every type. */
		(void)grtnl_parse_addr(nlh, &a);
		(void)grtnl_parse_link(nlh, &l);
		if (nlh->nlmsg_type == NLMSG_NOOP) {
			if (guard_view_diff(&dumped, &t, &p) < 0)
				break;
			guard_table_fini(&dumped);
			if (copy_table(&dumped, &t) < 0)
				break;
		} else if (guard_view_apply(&t, &p, nlh) < 0) {
			break;
		}
		judge(&c, &t, &p);
		if (p.n > 64)
			guard_pending_clear(&p);
	}
	guard_pending_fini(&p);
	guard_table_fini(&t);
	guard_table_fini(&dumped);
	guard_config_fini(&c);
	free(buf);
	return 0;
}
