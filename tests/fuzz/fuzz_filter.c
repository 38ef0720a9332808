/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the filter parser and the bytecode compiler.
 *
 * Input: filter text. It is parsed offline (no DNS, no socket dumps). A
 * failed parse must point inside the text. A successful one is compiled for
 * AF_INET and AF_INET6 and every program must pass our copy of the kernel's
 * audit (inet_diag_bc_audit); it is then run (our copy of inet_diag_bc_run)
 * on generated records, and must accept every record the userspace matcher
 * accepts. Any violation aborts.
 *
 * Seeds: the lines of tests/filters/corpus.txt, one file each.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "lib/filter/filter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_INPUT 4096

static void make_record(struct sdiag_sock *s, unsigned i)
{
	static const char *const v4[] = { "127.0.0.1", "10.1.2.3", "0.0.0.0", "192.168.1.9" };
	static const char *const v6[] = { "::1", "::ffff:127.0.0.1", "2001:db8::1", "::" };
	static const uint16_t ports[] = { 0, 22, 80, 443, 1024, 5000, 32768, 65535 };
	bool six = i & 1;

	memset(s, 0, sizeof(*s));
	s->table = (i >> 1) & 1 ? SDIAG_T_UDP : SDIAG_T_TCP;
	s->family = six ? AF_INET6 : AF_INET;
	s->state = (uint8_t)(1 + (i * 7) % 13);
	inet_pton(s->family, six ? v6[(i >> 2) % 4] : v4[(i >> 2) % 4], s->inet.src);
	inet_pton(s->family, six ? v6[(i >> 4) % 4] : v4[(i >> 4) % 4], s->inet.dst);
	s->inet.sport = ports[(i >> 3) % 8];
	s->inet.dport = ports[(i >> 5) % 8];
	s->inet.ifindex = (i >> 6) % 3;
	s->has = SDIAG_HAS_COOKIE;
	s->cookie = i;
	if (i % 5) {
		s->has |= SDIAG_HAS_UID | SDIAG_HAS_INODE | SDIAG_HAS_MARK | SDIAG_HAS_CGROUP;
		s->uid = i % 3 ? 0 : 1000;
		s->inode = i;
		s->inet.mark = (i >> 2) & 0x11;
		s->inet.cgroup_id = 1 + (i & 1);
	}
}

static void check_family(const struct sdiag_filter *f, uint8_t family)
{
	void *bc = NULL;
	int n = sd_filter_bytecode(f, family, &bc);

	if (n < 0)
		return; /* ENOMEM */
	if (n > 0 && sd_bc_audit(bc, (size_t)n, true) != 0)
		abort();
	for (unsigned i = 0; n > 0 && i < 256; i++) {
		struct sdiag_sock s;

		make_record(&s, i);
		if (s.family != family)
			continue;
		if (sdiag_filter_match(f, &s) && !sd_bc_run(bc, (size_t)n, &s))
			abort();
	}
	free(bc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sdiag_filter_error err = { 0 };
	struct sdiag_filter *f = NULL;
	char *expr;
	size_t len;

	if (size > MAX_INPUT)
		return 0;
	expr = malloc(size + 1);
	if (!expr)
		return 0;
	memcpy(expr, data, size);
	expr[size] = '\0';
	len = strlen(expr);
	if (sd_filter_parse_flags(&f, expr, &err, SD_FPARSE_OFFLINE) < 0) {
		if (err.offset > len || err.len > len - err.offset ||
		    !memchr(err.msg, '\0', sizeof(err.msg)))
			abort();
		free(expr);
		return 0;
	}
	check_family(f, AF_INET);
	check_family(f, AF_INET6);
	(void)sdiag_filter_states(f);
	for (unsigned t = 0; t < SDIAG_T_MAX; t++)
		(void)sd_filter_excludes_table(f, (enum sdiag_table)t);
	sdiag_filter_free(f);
	free(expr);
	return 0;
}
