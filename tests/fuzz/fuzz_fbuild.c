/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the filter builder (lib/filter/filter_build.c): the
 * input is a list of builder calls with their arguments, any order, any
 * nesting, valid or not, then the bytes of a few records.
 *
 * Checks: no crash or leak whatever the calls; errors latch (a call after a
 * failed one returns the same error); an unfinished filter matches nothing;
 * a finished filter's bytecode, per family, passes our copy of the kernel's
 * audit and never rejects a record the userspace matcher accepts (the
 * bytecode only pre-selects: rejecting a match would lose a socket).
 *
 * Input: a byte per call (its low nibble: 0 begin, 1 end, 2 host, 3 port,
 * 4 states, 5 tables, 6 dev, 7 fwmark, 8 uid, 9 cgroup; 0xff: no more calls)
 * followed by that call's argument bytes; then 38 bytes per record.
 * Seeds: tests/fuzz/seeds/fbuild/.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "lib/filter/filter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct in {
	const uint8_t *p;
	size_t n;
};

static uint8_t u8(struct in *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

static uint32_t u32(struct in *in)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++)
		v = v << 8 | u8(in);
	return v;
}

static int call(struct sdiag_filter *f, uint8_t op, struct in *in)
{
	static const int fams[] = { AF_INET, AF_INET6, AF_UNSPEC, 99 };
	static const char *const paths[] = { "/", "/sockdiag-fuzz-none", "no-slash", "a.service",
					     "/x/**", "" };
	uint8_t addr[16], a = u8(in), b;
	int port;

	switch (op & 15) {
	case 0:
		return sdiag_filter_begin(f, (enum sdiag_filter_group)(a % 4));
	case 1:
		return sdiag_filter_end(f);
	case 2:
		b = u8(in);
		for (int i = 0; i < 16; i++)
			addr[i] = u8(in);
		port = (a & 8) ? -1 : (int)(u32(in) % 65538) - 1;
		return sdiag_filter_add_host(f, (enum sdiag_filter_dir)(a & 1), fams[(a >> 1) & 3],
					     (a & 4) ? NULL : addr, (int8_t)b, port);
	case 3:
		port = (int)(u32(in) % 65538) - 1;
		return sdiag_filter_add_port(f, (enum sdiag_filter_dir)(a & 1),
					     (enum sdiag_filter_cmp)((a >> 1) % 7), port);
	case 4:
		return sdiag_filter_add_states(f, u32(in) >> (a % 32));
	case 5:
		return sdiag_filter_add_tables(f, u32(in) >> (a % 32));
	case 6:
		return sdiag_filter_add_dev(f, (enum sdiag_filter_cmp)(a % 7), u8(in) % 4);
	case 7:
		return sdiag_filter_add_fwmark(f, (enum sdiag_filter_cmp)(a % 7), u32(in), u32(in));
	case 8:
		return sdiag_filter_add_uid(f, (enum sdiag_filter_cmp)(a % 7), u32(in));
	case 9:
		return sdiag_filter_add_cgroup(f, (enum sdiag_filter_cmp)(a % 7), a & 8,
					       paths[(a >> 4) % 6]);
	default:
		return 1; /* no call */
	}
}

/* A record from 38 bytes: family, state, ports, addresses, device, mark, uid. */
static void record(struct in *in, struct sdiag_sock *s)
{
	uint8_t a = u8(in);

	memset(s, 0, sizeof(*s));
	s->table = (a & 1) ? SDIAG_T_UDP : SDIAG_T_TCP;
	s->family = (a & 2) ? AF_INET6 : AF_INET;
	s->state = (uint8_t)(u8(in) % SDIAG_SS_MAX);
	s->inet.sport = (uint16_t)(u8(in) << 8 | u8(in));
	s->inet.dport = (uint16_t)(u8(in) << 8 | u8(in));
	for (int i = 0; i < 16; i++)
		s->inet.src[i] = u8(in);
	for (int i = 0; i < 8; i++)
		s->inet.dst[i] = u8(in);
	if (a & 4) /* a v4-mapped peer */
		memcpy(s->inet.dst + 8, "\0\0\0\0\0\0\xff\xff", 8);
	s->inet.ifindex = u8(in) % 4;
	s->inet.mark = u8(in);
	s->uid = u8(in);
	s->has = (a & 8) ? SDIAG_HAS_MARK | SDIAG_HAS_UID : SDIAG_HAS_UID;
}

static void check(struct sdiag_filter *f, struct in *in)
{
	struct sdiag_sock recs[4];
	size_t n = 0;

	while (n < 4 && in->n >= 38)
		record(in, &recs[n++]);
	for (uint8_t fam = 0; fam < 2; fam++) {
		uint8_t family = fam ? AF_INET6 : AF_INET;
		void *bc = NULL;
		int len = sd_filter_bytecode(f, family, &bc);

		if (len > 0 && sd_bc_audit(bc, (size_t)len, f->net_admin) != 0)
			abort(); /* the kernel would refuse the program */
		for (size_t i = 0; len > 0 && i < n; i++)
			if (recs[i].family == family && sdiag_filter_match(f, &recs[i]) &&
			    !sd_bc_run(bc, (size_t)len, &recs[i]))
				abort(); /* the kernel would drop a matching socket */
		free(bc);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	struct sdiag_filter *f = NULL;
	struct sdiag_sock s = { .family = AF_INET, .table = SDIAG_T_TCP };
	int latched = 0;

	if (size > 4096 || sdiag_filter_new(&f) < 0)
		return 0;
	for (unsigned i = 0; i < 256 && in.n; i++) {
		uint8_t op = u8(&in);
		int r;

		if (op == 0xff)
			break;
		r = call(f, op, &in);
		if (r == 1)
			continue;
		if (latched && r != latched)
			abort(); /* the first error must stick */
		if (r < 0 && !latched)
			latched = r;
	}
	if (sdiag_filter_match(f, &s))
		abort(); /* unfinished: matches nothing */
	if (sdiag_filter_finish(f, NULL) == 0)
		check(f, &in);
	else if (latched && sdiag_filter_finish(f, NULL) != latched)
		abort();
	sdiag_filter_free(f);
	return 0;
}
