/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The INET_DIAG_REQ_BYTECODE compiler:
 *  - exact bytes for known programs;
 *  - every program compiled from the corpus passes our copy of the kernel's
 *    audit, and the real kernel accepts it (a dump sent with the program in a
 *    private network namespace);
 *  - the program never rejects a socket the userspace matcher accepts (run
 *    on many generated records by our copy of the kernel's interpreter), and
 *    agrees with it exactly when every predicate can be pushed down.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/test_skip.h"

#include <errno.h>
#include <stdio.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "lib/family/family.h"
#include "lib/filter/filter.h"
#include "tests/filters/corpus_util.h"

static struct sdiag_filter *parse_ok(const char *expr)
{
	struct sdiag_filter_error err = { 0 };
	struct sdiag_filter *f = NULL;
	int r = sdiag_filter_parse(&f, expr, &err);

	if (r != 0)
		fail_msg("'%s' did not parse: %d at %zu: %s", expr, r, err.offset, err.msg);
	return f;
}

/* Compile and compare with the expected bytes (NULL/0: no program). */
static void expect_bc(const char *expr, uint8_t family, const uint8_t *want, size_t len)
{
	struct sdiag_filter *f = parse_ok(expr);
	void *bc = NULL;
	int r = sd_filter_bytecode(f, family, &bc);

	if (r != (int)len || (len && memcmp(bc, want, len))) {
		char got[512] = "";
		size_t o = 0;

		for (int i = 0; r > 0 && i < r && o + 4 < sizeof(got); i++)
			o += (size_t)snprintf(got + o, sizeof(got) - o, "%02x", ((uint8_t *)bc)[i]);
		fail_msg("'%s' (family %u): got %d bytes %s, want %zu", expr, family, r, got, len);
	}
	if (len)
		assert_int_equal(sd_bc_audit(bc, len, true), 0);
	free(bc);
	sdiag_filter_free(f);
}

/* Little-endian helpers to spell programs: OP(code, yes, no), PORT(p). */
#define OP(c, y, n) (c), (y), (uint8_t)((n)&0xff), (uint8_t)((n) >> 8)
#define PORT(p) 0, 0, (uint8_t)((p)&0xff), (uint8_t)((p) >> 8)
#define U32(v)                                                                                     \
	(uint8_t)((v)&0xff), (uint8_t)(((v) >> 8) & 0xff), (uint8_t)(((v) >> 16) & 0xff),          \
		(uint8_t)((v) >> 24)

enum { NOP, JMP, S_GE, S_LE, D_GE, D_LE, AUTO, S_COND, D_COND, DEV, MARK, S_EQ, D_EQ, CGROUP };

static void test_known_programs(void **state)
{
	const uint8_t sge[] = { OP(S_GE, 8, 12), PORT(5001) };
	const uint8_t not_seq[] = { OP(S_EQ, 8, 12), PORT(5000), OP(JMP, 4, 8) };
	const uint8_t reject[] = { OP(JMP, 4, 8) };
	/* A or B: A, then JMP over B; A's failure lands on B. */
	const uint8_t or
		[] = { OP(S_EQ, 8, 12), PORT(22), OP(JMP, 4, 12), OP(S_EQ, 8, 12), PORT(80) };
	/* A and B: A's failure is relocated past B. */
	const uint8_t and[] = { OP(S_EQ, 8, 20), PORT(22), OP(D_GE, 8, 12), PORT(1024) };
	const uint8_t lt[] = { OP(S_GE, 8, 12), PORT(1024), OP(JMP, 4, 8) };
	const uint8_t gt[] = { OP(D_LE, 8, 12), PORT(1024), OP(JMP, 4, 8) };
	const uint8_t host4[] = { OP(D_COND, 16, 20), 2, 8, 0, 0, U32(80), 10, 0, 0, 0 };
	const uint8_t host6[] = { OP(S_COND, 28, 32),
				  10,
				  128,
				  0,
				  0,
				  U32(0xffffffffu),
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
				  0,
				  0,
				  0,
				  1 };
	const uint8_t anyport[] = { OP(S_COND, 12, 16), 0, 0, 0, 0, U32(22) };
	const uint8_t dev[] = { OP(DEV, 8, 20), U32(1), OP(S_EQ, 8, 12), PORT(5000) };
	const uint8_t mark[] = { OP(MARK, 12, 16), U32(0x10), U32(0xff) };
	const uint8_t ne[] = { OP(S_EQ, 8, 12), PORT(5000), OP(JMP, 4, 8) };
	/* (sport 1 or sport 2) and dport 3: the or's rejects move past the and */
	const uint8_t notnot[] = { OP(S_GE, 8, 12), PORT(5001), OP(JMP, 4, 8), OP(JMP, 4, 8) };
	const uint8_t prec[] = { OP(S_EQ, 8, 12), PORT(1),	   OP(JMP, 4, 12), OP(S_EQ, 8, 20),
				 PORT(2),	  OP(D_EQ, 8, 12), PORT(3) };

	(void)state;
	expect_bc("sport >= :5001", AF_INET, sge, sizeof(sge));
	expect_bc("not sport = :5000", AF_INET6, not_seq, sizeof(not_seq));
	expect_bc("sport = :22 or sport = :80", AF_INET, or, sizeof(or));
	expect_bc("sport = :22 and dport >= :1024", AF_INET, and, sizeof(and));
	expect_bc("sport < :1024", AF_INET, lt, sizeof(lt));
	expect_bc("dport > :1024", AF_INET, gt, sizeof(gt));
	expect_bc("dst 10.0.0.0/8:80", AF_INET, host4, sizeof(host4));
	expect_bc("src [::1]", AF_INET6, host6, sizeof(host6));
	expect_bc("src *:22", AF_INET, anyport, sizeof(anyport));
	/* ss drops the whole program for dev; we keep it, and sport too. */
	expect_bc("dev lo and sport = :5000", AF_INET, dev, sizeof(dev));
	expect_bc("fwmark 0x10/0xff", AF_INET, mark, sizeof(mark));
	expect_bc("sport != :5000", AF_INET, ne, sizeof(ne));
	expect_bc("sport = :1 or sport = :2 and dport = :3", AF_INET, prec, sizeof(prec));
	/* An IPv6 address can never match in an IPv4 dump: reject all. */
	expect_bc("src [::1]", AF_INET, reject, sizeof(reject));
	expect_bc("path /x/*", AF_INET, reject, sizeof(reject));
	/* Nothing to push down: no program. */
	expect_bc("", AF_INET, NULL, 0);
	expect_bc("uid 0", AF_INET, NULL, 0);
	expect_bc("state established", AF_INET, NULL, 0);
	expect_bc("src *", AF_INET, NULL, 0);
	expect_bc("sport = :22 or uid 0", AF_INET, NULL, 0);
	/* One uncompilable conjunct costs only itself. */
	expect_bc("uid 0 and sport >= :5001", AF_INET, sge, sizeof(sge));
	expect_bc("sport >= :5001 state established", AF_INET, sge, sizeof(sge));
	/* fwmark is exact only on full sockets: never pushed under a not. */
	expect_bc("not fwmark 0x10", AF_INET, NULL, 0);
	/* not (uid 0 or sport < 5001) = not uid 0 and sport >= 5001: keeps the port test */
	expect_bc("not ( uid 0 or sport < :5001 )", AF_INET, notnot, sizeof(notnot));
	expect_bc("not ( path /x or sport < :5001 )", AF_INET, notnot, sizeof(notnot));
	expect_bc("not ( uid 0 and sport < :5001 )", AF_INET, NULL, 0);
}

static void test_audit_rejects(void **state)
{
	const uint8_t empty[] = { 0 };
	const uint8_t unknown[] = { OP(99, 4, 8) };
	const uint8_t short_yes[] = { OP(S_GE, 4, 12), PORT(1) };
	const uint8_t odd[] = { OP(JMP, 4, 6) };
	const uint8_t mid_op[] = { OP(JMP, 4, 8), OP(S_GE, 8, 12),
				   PORT(1) }; /* lands on the port */
	const uint8_t v4_33[] = { OP(S_COND, 16, 20), 2, 33, 0, 0, U32(0), 1, 2, 3, 4 };
	const uint8_t mark[] = { OP(MARK, 12, 16), U32(1), U32(1) };

	(void)state;
	assert_int_equal(sd_bc_audit(empty, 0, true), -EINVAL);
	assert_int_equal(sd_bc_audit(unknown, sizeof(unknown), true), -EINVAL);
	assert_int_equal(sd_bc_audit(short_yes, sizeof(short_yes), true), -EINVAL);
	assert_int_equal(sd_bc_audit(odd, sizeof(odd), true), -EINVAL);
	assert_int_equal(sd_bc_audit(mid_op, sizeof(mid_op), true), -EINVAL);
	assert_int_equal(sd_bc_audit(v4_33, sizeof(v4_33), true), -EINVAL);
	assert_int_equal(sd_bc_audit(mark, sizeof(mark), false), -EPERM);
	assert_int_equal(sd_bc_audit(mark, sizeof(mark), true), 0);
}

/* ---- the kernel's own audit --------------------------------------------------- */

struct count {
	size_t n;
};

static int count_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	((struct count *)data)->n++;
	return 0;
}

static void write_sysctl(const char *path, const char *value)
{
	FILE *fp = fopen(path, "we");

	if (fp) {
		fputs(value, fp);
		fclose(fp);
	}
}

/* Send one inet dump with this program; the kernel audits it first. */
static int kernel_dump(struct sd_nl *nl, uint8_t family, uint16_t proto, const void *bc, size_t len)
{
	struct sd_req req = {
		.family = family,
		.protocol = proto,
		/* Not bound-inactive: its walk covers the machine-wide bind hash. */
		.states = SDIAG_STATES_ALL & ~SDIAG_STATE_BIT(SDIAG_SS_BOUND_INACTIVE),
		.tables = SDIAG_TABLE_BIT(proto == IPPROTO_TCP ? SDIAG_T_TCP : SDIAG_T_UDP),
		.bytecode = bc,
		.bytecode_len = len,
	};
	struct count c = { 0 };

	sd_inet_request(sd_nl_reqbuf(nl, NULL), &req);
	return sd_nl_dump(nl, NULL, count_cb, &c);
}

static void test_kernel_accepts_corpus(void **state)
{
	const uint8_t bad[] = { OP(S_GE, 8, 6), PORT(1) };
	struct sd_nl *nl = NULL;
	struct corpus c;
	size_t programs = 0;

	(void)state;
	if (unshare(CLONE_NEWNET) < 0)
		SDIAG_SKIP("netns", "unshare(CLONE_NEWNET): %s", strerror(errno));
	/* A namespace with its own (small) socket hash tables, so that each dump
	 * does not walk every socket of the machine (kernel 6.1+; else shared). */
	write_sysctl("/proc/sys/net/ipv4/tcp_child_ehash_entries", "128");
	write_sysctl("/proc/sys/net/ipv4/udp_child_hash_entries", "256");
	assert_int_equal(unshare(CLONE_NEWNET), 0);
	assert_int_equal(sd_nl_open(&nl), 0);
	/* The control: the kernel does reject a malformed program. */
	assert_int_equal(kernel_dump(nl, AF_INET, IPPROTO_TCP, bad, sizeof(bad)), -EINVAL);
	assert_int_equal(corpus_load(&c), 0);
	for (size_t i = 0; i < c.n; i++) {
		struct sdiag_filter *f = parse_ok(c.v[i].expr);

		for (int fam = 0; fam < 2; fam++) {
			uint8_t family = fam ? AF_INET6 : AF_INET;
			void *bc = NULL;
			int n = sd_filter_bytecode(f, family, &bc);

			assert_true(n >= 0);
			if (n == 0)
				continue;
			programs++;
			if (sd_bc_audit(bc, (size_t)n, true) != 0)
				fail_msg("'%s': our audit rejects the program", c.v[i].expr);
			for (int p = 0; p < 2; p++) {
				int r = kernel_dump(nl, family, p ? IPPROTO_UDP : IPPROTO_TCP, bc,
						    (size_t)n);

				if (r != 0)
					fail_msg("'%s' family %u: kernel says %d", c.v[i].expr,
						 family, r);
			}
			free(bc);
		}
		sdiag_filter_free(f);
	}
	/* Most of the corpus is inet: most of it must produce programs. */
	assert_true(programs > c.n);
	corpus_free(&c);
	sd_nl_close(nl);
}

/* ---- kernel program vs userspace matcher ---------------------------------------------- */

/* Every leaf can be tested exactly by the kernel (on full sockets). */
static bool exact(const struct sd_fnode *n)
{
	switch (n->kind) {
	case SD_F_AND:
	case SD_F_OR:
		return exact(n->a) && exact(n->b);
	case SD_F_NOT:
		return exact(n->a);
	case SD_F_HOST:
	case SD_F_DEV:
	case SD_F_AUTOBOUND:
	case SD_F_UNIX_NAME:
	case SD_F_UNIX_PEER:
	case SD_F_NLPROTO:
	case SD_F_NLGROUP:
	case SD_F_NETLINK:
	case SD_F_PACKET:
	case SD_F_VSOCK:
		return true;
	case SD_F_NUM:
		return n->field == SD_FLD_PORT;
	default:
		return false;
	}
}

static void random_record(struct sdiag_sock *s, unsigned *seed)
{
	static const char *const v4[] = { "127.0.0.1", "127.0.0.2", "0.0.0.0", "10.1.2.3",
					  "192.168.1.9" };
	static const char *const v6[] = {
		"::1", "::", "::ffff:127.0.0.1", "2001:db8::1", "::ffff:10.1.2.3", "fe80::1"
	};
	static const uint16_t ports[] = { 0,	22,   53,   80,	  1024,	 5000,	5001,  5002, 5003,
					  5004, 5005, 5353, 6000, 32768, 40000, 60999, 65535 };
	bool six = rand_r(seed) & 1;

	memset(s, 0, sizeof(*s));
	s->table = rand_r(seed) & 1 ? SDIAG_T_TCP : SDIAG_T_UDP;
	s->family = six ? AF_INET6 : AF_INET;
	s->state = (uint8_t)(1 + rand_r(seed) % 13);
	if (six) {
		inet_pton(AF_INET6, v6[rand_r(seed) % 6], s->inet.src);
		inet_pton(AF_INET6, v6[rand_r(seed) % 6], s->inet.dst);
	} else {
		inet_pton(AF_INET, v4[rand_r(seed) % 5], s->inet.src);
		inet_pton(AF_INET, v4[rand_r(seed) % 5], s->inet.dst);
	}
	s->inet.sport = ports[rand_r(seed) % 17];
	s->inet.dport = ports[rand_r(seed) % 17];
	s->inet.ifindex = (uint32_t)(rand_r(seed) % 3);
	s->has = SDIAG_HAS_COOKIE;
	s->cookie = (uint64_t)rand_r(seed);
	if (rand_r(seed) % 4) { /* a full socket */
		s->has |= SDIAG_HAS_UID | SDIAG_HAS_INODE | SDIAG_HAS_MARK | SDIAG_HAS_CGROUP;
		s->uid = rand_r(seed) & 1 ? 0 : 1000;
		s->inode = (uint64_t)rand_r(seed);
		s->inet.mark = rand_r(seed) & 1 ? 0x10 : 0;
		s->inet.cgroup_id = rand_r(seed) & 1 ? 1 : 2;
	}
}

static void test_program_vs_matcher(void **state)
{
	struct corpus c;
	unsigned seed = 12345;

	(void)state;
	assert_int_equal(corpus_load(&c), 0);
	for (size_t i = 0; i < c.n; i++) {
		struct sdiag_filter *f = parse_ok(c.v[i].expr);
		void *bc[2] = { NULL, NULL };
		int n[2];

		n[0] = sd_filter_bytecode(f, AF_INET, &bc[0]);
		n[1] = sd_filter_bytecode(f, AF_INET6, &bc[1]);
		for (int k = 0; k < 1000; k++) {
			struct sdiag_sock s;
			int fi;
			bool user, kern;

			random_record(&s, &seed);
			fi = s.family == AF_INET6;
			user = sdiag_filter_match(f, &s);
			kern = n[fi] == 0 || sd_bc_run(bc[fi], (size_t)n[fi], &s);
			if (user && !kern)
				fail_msg("'%s': the program rejects a socket the matcher accepts",
					 c.v[i].expr);
			/* On full sockets an exact filter is decided by the kernel alone. */
			if (f->root && exact(f->root) && n[fi] > 0 && kern != user &&
			    (s.has & SDIAG_HAS_MARK))
				fail_msg("'%s': program and matcher disagree", c.v[i].expr);
		}
		free(bc[0]);
		free(bc[1]);
		sdiag_filter_free(f);
	}
	corpus_free(&c);
}

/* Give every cgroup predicate of f (parsed offline: unresolved) the id set v. */
static void set_cgroups(struct sd_fnode *n, const uint64_t *v, size_t k)
{
	for (; n; n = n->b) {
		if (n->kind == SD_F_CGROUP) {
			n->u.cg.ids = malloc(k * sizeof(*v) + 1);
			assert_non_null(n->u.cg.ids);
			memcpy(n->u.cg.ids, v, k * sizeof(*v));
			n->u.cg.n = k;
			return;
		}
		set_cgroups(n->a, v, k);
		if (n->kind != SD_F_AND && n->kind != SD_F_OR)
			return;
	}
}

/* cgroup sets (subtrees, units) compile to CGROUP_COND alternatives that
 * decide exactly what the matcher does on full sockets and never reject a
 * socket it accepts; a set too large for a program is left to user space. */
static void test_cgroup_sets(void **state)
{
	static const char *const exprs[] = {
		"cgroup /x/**", "unit a.service", "cgroup != /x/**", "not unit a.service",
		"unit a.service or sport = :22", "unit a.service and not cgroup /y",
		"!(unit a.service) and dport > :1024",
	};
	static const uint64_t sets[][4] = { { 2, 3, 7, 0 }, { 5, 0, 0, 0 }, { 0 } };
	static const size_t sizes[] = { 3, 1, 0 };
	uint64_t many[300];
	unsigned seed = 777;

	(void)state;
	for (size_t i = 0; i < 300; i++)
		many[i] = 1000 + i;
	for (size_t e = 0; e < sizeof(exprs) / sizeof(exprs[0]); e++) {
		for (size_t k = 0; k < 4; k++) {
			struct sdiag_filter_error err = { 0 };
			struct sdiag_filter *f = NULL;
			void *bc = NULL;
			int n;

			assert_int_equal(sd_filter_parse_flags(&f, exprs[e], &err, SD_FPARSE_OFFLINE), 0);
			if (k < 3)
				set_cgroups(f->root, sets[k], sizes[k]);
			else
				set_cgroups(f->root, many, 300);
			n = sd_filter_bytecode(f, AF_INET, &bc);
			assert_true(n >= 0);
			if (n > 0)
				assert_int_equal(sd_bc_audit(bc, (size_t)n, false), 0);
			if (k == 0 && e == 0) /* three alternatives of 12 bytes, two OR jumps */
				assert_int_equal(n, 3 * 12 + 2 * 4);
			for (int t = 0; t < 2000; t++) {
				struct sdiag_sock s;
				bool user, kern;

				random_record(&s, &seed);
				if (s.family != AF_INET)
					continue;
				if (s.has & SDIAG_HAS_CGROUP)
					s.inet.cgroup_id = k == 3 ? 990 + (uint64_t)(rand_r(&seed) % 20) :
								    1 + (uint64_t)(rand_r(&seed) % 8);
				user = sdiag_filter_match(f, &s);
				kern = n == 0 || sd_bc_run(bc, (size_t)n, &s);
				if (user && !kern)
					fail_msg("'%s' set %zu: the program rejects a socket the matcher "
						 "accepts", exprs[e], k);
				if (e == 0 && k < 3 && n > 0 && (s.has & SDIAG_HAS_CGROUP) && kern != user)
					fail_msg("'%s' set %zu: program and matcher disagree", exprs[e], k);
			}
			free(bc);
			sdiag_filter_free(f);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_programs),
		cmocka_unit_test(test_audit_rejects),
		cmocka_unit_test(test_program_vs_matcher),
		cmocka_unit_test(test_kernel_accepts_corpus),
		cmocka_unit_test(test_cgroup_sets),
	};

	return sdiag_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
