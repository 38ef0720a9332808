/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The filter builder (sdiag_filter_new ... sdiag_filter_finish) against the
 * parser, its oracle: expressions of tests/filters/corpus.txt built with the
 * public calls must give the parser's tree node for node, the same kernel
 * bytecode byte for byte (both families), the same state mask and exact
 * ports, and the same verdict on every record captured in tests/fixtures
 * (TCP, UDP, unix, netlink). Then the builder's own contract: errors latch,
 * with the failing call's index as the offset; unbalanced groups; finished
 * filters refuse more terms.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "lib/family/family.h"
#include "lib/filter/filter.h"
#include "tests/filters/corpus_util.h"
#include "tests/unit/fixture_util.h"

/* One builder call: a tiny program per expression, run through the public API. */
enum op { END_OF, BEGIN, END, HOST, PORT, STATES, TABLES, DEV, MARK, UID, CGROUP };

struct call {
	enum op op;
	int a, b;	  /* BEGIN: group; HOST/PORT: dir, then cmp (PORT) or plen (HOST) */
	int c;		  /* HOST/PORT: port; DEV/MARK/UID: cmp; CGROUP: cmp */
	uint32_t m, mask; /* STATES/TABLES mask, DEV ifindex, MARK mark/mask, UID; CGROUP: unit */
	const char *s;	  /* HOST: address ("*": AF_UNSPEC), CGROUP: path */
};

#define S SDIAG_FILTER_SRC
#define D SDIAG_FILTER_DST
#define OR_ { .op = BEGIN, .a = SDIAG_FILTER_OR }
#define AND_ { .op = BEGIN, .a = SDIAG_FILTER_AND }
#define NOT_ { .op = BEGIN, .a = SDIAG_FILTER_NOT }
#define END_ { .op = END }
#define P(dir, cmp, port) { .op = PORT, .a = dir, .b = SDIAG_FILTER_##cmp, .c = port }
#define H(dir, addr, plen, port) { .op = HOST, .a = dir, .b = plen, .c = port, .s = addr }
#define ST(mask) { .op = STATES, .m = (mask) }
#define B(x) SDIAG_STATE_BIT(SDIAG_SS_##x)
#define TB(x) SDIAG_TABLE_BIT(SDIAG_T_##x)

static const struct {
	const char *expr; /* a line of corpus.txt */
	struct call calls[12];
} cases[] = {
	{ "sport = :5000", { P(S, EQ, 5000) } },
	{ "dport = :5000", { P(D, EQ, 5000) } },
	{ "sport != :5000", { P(S, NE, 5000) } },
	{ "sport > :5001", { P(S, GT, 5001) } },
	{ "sport >= :5001", { P(S, GE, 5001) } },
	{ "sport < :5002", { P(S, LT, 5002) } },
	{ "sport <= :5002", { P(S, LE, 5002) } },
	{ "dport = :0", { P(D, EQ, 0) } },
	{ "sport = :*", { P(S, EQ, -1) } },
	{ "sport >= :5000 and sport <= :5003", { P(S, GE, 5000), P(S, LE, 5003) } },
	{ "sport < :5001 or sport > :5004", { OR_, P(S, LT, 5001), P(S, GT, 5004), END_ } },
	{ "not sport = :5000", { NOT_, P(S, EQ, 5000), END_ } },
	{ "not ( sport = :5000 or dport = :5000 )",
	  { NOT_, OR_, P(S, EQ, 5000), P(D, EQ, 5000), END_, END_ } },
	{ "not ( not sport = :5000 )", { NOT_, NOT_, P(S, EQ, 5000), END_, END_ } },
	{ "src 127.0.0.1", { H(S, "127.0.0.1", -1, -1) } },
	{ "dst 127.0.0.1", { H(D, "127.0.0.1", -1, -1) } },
	{ "src 127.0.0.0/8", { H(S, "127.0.0.0", 8, -1) } },
	{ "src 0.0.0.0/0", { H(S, "0.0.0.0", 0, -1) } },
	{ "src 127.0.0.1:5000", { H(S, "127.0.0.1", -1, 5000) } },
	{ "dst 127.0.0.1:5000", { H(D, "127.0.0.1", 32, 5000) } },
	{ "src 127.0.0.1/8:5001", { H(S, "127.0.0.1", 8, 5001) } },
	{ "src *:5000", { H(S, "*", -1, 5000) } },
	{ "src *", { H(S, "*", -1, -1) } },
	{ "dst *", { H(D, "*", 0, -1) } },
	{ "src [::1]", { H(S, "::1", -1, -1) } },
	{ "src [::1]:5002", { H(S, "::1", 128, 5002) } },
	{ "dst [::1]:5002", { H(D, "::1", -1, 5002) } },
	{ "src [::/0]", { H(S, "::", 0, -1) } },
	{ "src [::ffff:127.0.0.1]", { H(S, "::ffff:127.0.0.1", -1, -1) } },
	{ "src [::ffff:127.0.0.0/104]", { H(S, "::ffff:127.0.0.0", 104, -1) } },
	{ "src inet:127.0.0.1", { H(S, "127.0.0.1", -1, -1) } },
	{ "src inet6:[::1]", { H(S, "::1", -1, -1) } },
	{ "src 127.0.0.1 or src [::1]", { OR_, H(S, "127.0.0.1", -1, -1), H(S, "::1", -1, -1), END_ } },
	{ "dst 127.0.0.1:5000 or dst [::1]:5002",
	  { OR_, H(D, "127.0.0.1", -1, 5000), H(D, "::1", -1, 5002), END_ } },
	{ "not src 127.0.0.1", { NOT_, H(S, "127.0.0.1", -1, -1), END_ } },
	{ "src 127.0.0.1 and not dport = :5000",
	  { H(S, "127.0.0.1", -1, -1), NOT_, P(D, EQ, 5000), END_ } },
	{ "state established", { ST(B(ESTABLISHED)) } },
	{ "state listening", { ST(B(LISTEN)) } },
	{ "state time-wait", { ST(B(TIME_WAIT)) } },
	{ "state all", { ST(SDIAG_STATES_ALL) } },
	{ "state established state listening", { ST(B(ESTABLISHED) | B(LISTEN)) } },
	{ "exclude listening", { ST(SDIAG_STATES_ALL & ~B(LISTEN)) } },
	{ "state connected exclude time-wait",
	  { ST(SDIAG_STATES_ALL & ~(B(CLOSE) | B(LISTEN) | B(TIME_WAIT))) } },
	{ "state established sport = :5000", { ST(B(ESTABLISHED)), P(S, EQ, 5000) } },
	{ "state established ( dport = :5000 or sport = :5000 )",
	  { ST(B(ESTABLISHED)), OR_, P(D, EQ, 5000), P(S, EQ, 5000), END_ } },
	{ "state established src 127.0.0.1 and dport > :1024",
	  { ST(B(ESTABLISHED)), H(S, "127.0.0.1", -1, -1), P(D, GT, 1024) } },
	{ "state established or state time-wait",
	  { OR_, ST(B(ESTABLISHED)), ST(B(TIME_WAIT)), END_ } },
	{ "not state listening", { NOT_, ST(B(LISTEN)), END_ } },
	/* ss's precedence: and/or equal, left to right. */
	{ "sport = :5000 or sport = :5001 and dport = :0",
	  { OR_, P(S, EQ, 5000), P(S, EQ, 5001), END_, P(D, EQ, 0) } },
	{ "sport = :5000 and dport = :0 or sport = :5002",
	  { OR_, AND_, P(S, EQ, 5000), P(D, EQ, 0), END_, P(S, EQ, 5002), END_ } },
	{ "( sport = :5000 or sport = :5001 ) and ( dport = :0 or dport = :5000 )",
	  { OR_, P(S, EQ, 5000), P(S, EQ, 5001), END_, OR_, P(D, EQ, 0), P(D, EQ, 5000), END_ } },
	{ "dev 1", { { .op = DEV, .c = SDIAG_FILTER_EQ, .m = 1 } } },
	{ "dev lo", { { .op = DEV, .c = SDIAG_FILTER_EQ, .m = 1 } } },
	{ "dev != lo", { { .op = DEV, .c = SDIAG_FILTER_NE, .m = 1 } } },
	{ "dev lo and sport = :5004", { { .op = DEV, .c = SDIAG_FILTER_EQ, .m = 1 }, P(S, EQ, 5004) } },
	{ "fwmark 0x10", { { .op = MARK, .c = SDIAG_FILTER_EQ, .m = 0x10, .mask = UINT32_MAX } } },
	{ "fwmark != 0x10", { { .op = MARK, .c = SDIAG_FILTER_NE, .m = 0x10, .mask = UINT32_MAX } } },
	{ "fwmark 0x0/0xffff0000", { { .op = MARK, .c = SDIAG_FILTER_EQ, .m = 0, .mask = 0xffff0000 } } },
	{ "cgroup /", { { .op = CGROUP, .c = SDIAG_FILTER_EQ, .s = "/" } } },
	{ "cgroup != /", { { .op = CGROUP, .c = SDIAG_FILTER_NE, .s = "/" } } },
	{ "not cgroup /", { NOT_, { .op = CGROUP, .c = SDIAG_FILTER_EQ, .s = "/" }, END_ } },
	{ "proto tcp", { { .op = TABLES, .m = TB(TCP) } } },
	{ "proto udp", { { .op = TABLES, .m = TB(UDP) } } },
	{ "proto unix", { { .op = TABLES, .m = SDIAG_TABLES_UNIX } } },
	{ "proto tcp and sport = :5000", { { .op = TABLES, .m = TB(TCP) }, P(S, EQ, 5000) } },
	{ "not proto tcp", { NOT_, { .op = TABLES, .m = TB(TCP) }, END_ } },
	{ "uid 0", { { .op = UID, .c = SDIAG_FILTER_EQ, .m = 0 } } },
	{ "uid > 0", { { .op = UID, .c = SDIAG_FILTER_GT, .m = 0 } } },
	{ "uid = 0 and sport = :5000", { { .op = UID, .c = SDIAG_FILTER_EQ, .m = 0 }, P(S, EQ, 5000) } },
};

/* The table's protocol is not in an inet reply: the capture asked for TCP or UDP. */
static int dec_tcp(const struct nlmsghdr *nlh, struct sdiag_sock *s)
{
	s->protocol = IPPROTO_TCP;
	return sd_inet_decode(nlh, s);
}

static int dec_udp(const struct nlmsghdr *nlh, struct sdiag_sock *s)
{
	s->protocol = IPPROTO_UDP;
	return sd_inet_decode(nlh, s);
}

static int run_call(struct sdiag_filter *f, const struct call *c)
{
	uint8_t addr[16];
	int fam = AF_UNSPEC;

	switch (c->op) {
	case BEGIN:
		return sdiag_filter_begin(f, (enum sdiag_filter_group)c->a);
	case END:
		return sdiag_filter_end(f);
	case HOST:
		if (strcmp(c->s, "*"))
			fam = strchr(c->s, ':') ? AF_INET6 : AF_INET;
		assert_true(fam == AF_UNSPEC || inet_pton(fam, c->s, addr) == 1);
		return sdiag_filter_add_host(f, (enum sdiag_filter_dir)c->a, fam,
					     fam == AF_UNSPEC ? NULL : addr, c->b, c->c);
	case PORT:
		return sdiag_filter_add_port(f, (enum sdiag_filter_dir)c->a,
					     (enum sdiag_filter_cmp)c->b, c->c);
	case STATES:
		return sdiag_filter_add_states(f, c->m);
	case TABLES:
		return sdiag_filter_add_tables(f, c->m);
	case DEV:
		return sdiag_filter_add_dev(f, (enum sdiag_filter_cmp)c->c, c->m);
	case MARK:
		return sdiag_filter_add_fwmark(f, (enum sdiag_filter_cmp)c->c, c->m, c->mask);
	case UID:
		return sdiag_filter_add_uid(f, (enum sdiag_filter_cmp)c->c, c->m);
	case CGROUP:
		return sdiag_filter_add_cgroup(f, (enum sdiag_filter_cmp)c->c, c->mask, c->s);
	default:
		return -EINVAL;
	}
}

/* The parser's tree and the builder's, node for node (positions in the text aside). */
static void same_tree(const char *expr, const struct sd_fnode *x, const struct sd_fnode *y)
{
	if (!x || !y) {
		if (x != y)
			fail_msg("'%s': one tree has a node the other lacks", expr);
		return;
	}
	if (x->kind != y->kind || x->dir != y->dir || x->cmp != y->cmp || x->field != y->field)
		fail_msg("'%s': node kind/dir/cmp/field %u/%u/%u/%u vs %u/%u/%u/%u", expr, x->kind,
			 x->dir, x->cmp, x->field, y->kind, y->dir, y->cmp, y->field);
	if (x->kind == SD_F_CGROUP) {
		assert_string_equal(x->u.cg.spec, y->u.cg.spec);
		assert_int_equal(x->u.cg.n, y->u.cg.n);
		assert_memory_equal(x->u.cg.ids, y->u.cg.ids, x->u.cg.n * sizeof(*x->u.cg.ids));
	} else if (x->kind == SD_F_HOST) {
		assert_int_equal(x->u.host.family, y->u.host.family);
		assert_int_equal(x->u.host.plen, y->u.host.plen);
		assert_int_equal(x->u.host.port, y->u.host.port);
		assert_memory_equal(x->u.host.addr, y->u.host.addr, 16);
	} else if (x->kind != SD_F_AND && x->kind != SD_F_OR && x->kind != SD_F_NOT) {
		if (memcmp(&x->u, &y->u, sizeof(x->u)))
			fail_msg("'%s': node values differ (kind %u)", expr, x->kind);
	}
	same_tree(expr, x->a, y->a);
	same_tree(expr, x->b, y->b);
}

static void same_bytecode(const char *expr, const struct sdiag_filter *p,
			  const struct sdiag_filter *b, uint8_t family)
{
	void *bp = NULL, *bb = NULL;
	int np = sd_filter_bytecode(p, family, &bp), nb = sd_filter_bytecode(b, family, &bb);

	if (np != nb || (np > 0 && memcmp(bp, bb, (size_t)np)))
		fail_msg("'%s' (family %u): bytecode %d bytes parsed, %d built, or different bytes",
			 expr, family, np, nb);
	free(bp);
	free(bb);
}

static bool in_corpus(const struct corpus *c, const char *expr)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].expr, expr))
			return true;
	return false;
}

static void test_corpus_equivalence(void **state)
{
	static const struct {
		const char *name;
		fixture_decoder dec;
	} fx_files[] = {
		{ "inet-tcp4.bin", dec_tcp }, { "inet-tcp6.bin", dec_tcp },
		{ "inet-udp4.bin", dec_udp }, { "inet-udp6.bin", dec_udp },
		{ "unix-dump.bin", sd_unix_decode }, { "netlink-dump.bin", sd_netlink_decode },
	};
	static struct fixture fx[6];
	size_t n_match = 0, n_miss = 0, n_bc = 0;
	struct corpus corpus;

	(void)state;
	assert_int_equal(corpus_load(&corpus), 0);
	for (size_t i = 0; i < 6; i++)
		fixture_load(&fx[i], fx_files[i].name, fx_files[i].dec);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *expr = cases[i].expr;
		struct sdiag_filter_error perr = { 0 }, berr = { 0 };
		struct sdiag_filter *p = NULL, *b = NULL;
		int rp, rb;

		if (!in_corpus(&corpus, expr))
			fail_msg("'%s' is not a line of corpus.txt", expr);
		rp = sdiag_filter_parse(&p, expr, &perr);
		assert_int_equal(sdiag_filter_new(&b), 0);
		for (const struct call *c = cases[i].calls; c->op != END_OF; c++)
			run_call(b, c); /* errors latch: only finish is checked */
		rb = sdiag_filter_finish(b, &berr);
		if (rp != rb)
			fail_msg("'%s': parse %d (%s), build %d (%s)", expr, rp, perr.msg, rb, berr.msg);
		if (rp == 0) {
			void *bc = NULL;
			uint16_t ps, pd, bs, bd;

			same_tree(expr, p->root, b->root);
			assert_int_equal(sdiag_filter_states(p), sdiag_filter_states(b));
			sd_filter_exact_ports(p, &ps, &pd);
			sd_filter_exact_ports(b, &bs, &bd);
			assert_true(ps == bs && pd == bd);
			same_bytecode(expr, p, b, AF_INET);
			same_bytecode(expr, p, b, AF_INET6);
			if (sd_filter_bytecode(b, AF_INET, &bc) > 0)
				n_bc++;
			free(bc);
			for (size_t k = 0; k < 6; k++)
				for (size_t j = 0; j < fx[k].n; j++) {
					bool mp = sdiag_filter_match(p, &fx[k].socks[j]);

					if (mp != sdiag_filter_match(b, &fx[k].socks[j]))
						fail_msg("'%s': %s record %zu: parsed %d, built %d",
							 expr, fx_files[k].name, j, mp, !mp);
					mp ? n_match++ : n_miss++;
				}
		}
		sdiag_filter_free(p);
		sdiag_filter_free(b);
	}
	/* Not vacuous: records both matched and not, programs compiled. */
	print_message("%zu expressions, %zu verdicts true, %zu false, %zu with bytecode\n",
		      sizeof(cases) / sizeof(cases[0]), n_match, n_miss, n_bc);
	assert_true(n_match > 100 && n_miss > 100 && n_bc > 30);
	for (size_t i = 0; i < 6; i++)
		fixture_free(&fx[i]);
	corpus_free(&corpus);
}

/* The dead-backends pass's filter, as it built it before (text) and builds it now. */
static void test_backends_shape(void **state)
{
	static const uint8_t a4[4] = { 10, 0, 0, 1 }, a6[16] = { 0xfd, [15] = 1 };
	struct sdiag_filter *p = NULL, *b = NULL;

	(void)state;
	assert_int_equal(sdiag_filter_parse(&p, "dst 10.0.0.1:53 or dst [fd00::1]:53", NULL), 0);
	assert_int_equal(sdiag_filter_new(&b), 0);
	sdiag_filter_begin(b, SDIAG_FILTER_OR);
	sdiag_filter_add_host(b, SDIAG_FILTER_DST, AF_INET, a4, -1, 53);
	sdiag_filter_add_host(b, SDIAG_FILTER_DST, AF_INET6, a6, -1, 53);
	sdiag_filter_end(b);
	assert_int_equal(sdiag_filter_finish(b, NULL), 0);
	same_tree("backends", p->root, b->root);
	same_bytecode("backends", p, b, AF_INET);
	same_bytecode("backends", p, b, AF_INET6);
	sdiag_filter_free(p);
	sdiag_filter_free(b);
}

/* The first error is kept: later calls return it and change nothing. */
static void test_error_latches(void **state)
{
	struct sdiag_filter_error err = { 0 };
	struct sdiag_filter *f = NULL;

	(void)state;
	assert_int_equal(sdiag_filter_new(&f), 0);
	assert_int_equal(sdiag_filter_add_port(f, SDIAG_FILTER_SRC, SDIAG_FILTER_EQ, 22), 0);
	assert_int_equal(sdiag_filter_add_port(f, SDIAG_FILTER_SRC, SDIAG_FILTER_EQ, 70000),
			 -EINVAL);
	/* A valid call after the error: the error again, nothing added. */
	assert_int_equal(sdiag_filter_add_states(f, SDIAG_STATE_BIT(SDIAG_SS_LISTEN)), -EINVAL);
	assert_int_equal(sdiag_filter_add_dev(f, SDIAG_FILTER_LT, 1), -EINVAL);
	assert_int_equal(sdiag_filter_finish(f, &err), -EINVAL);
	assert_int_equal(err.offset, 1); /* the second call after new */
	assert_non_null(strstr(err.msg, "port out of range"));
	assert_int_equal(sdiag_filter_finish(f, NULL), -EINVAL); /* still */
	sdiag_filter_free(f);
}

static void expect_finish(int (*build)(struct sdiag_filter *f), int want, const char *msg)
{
	struct sdiag_filter_error err = { 0 };
	struct sdiag_filter *f = NULL;

	assert_int_equal(sdiag_filter_new(&f), 0);
	build(f);
	assert_int_equal(sdiag_filter_finish(f, &err), want);
	if (!strstr(err.msg, msg))
		fail_msg("message '%s', want '%s' in it", err.msg, msg);
	sdiag_filter_free(f);
}

static int open_group(struct sdiag_filter *f)
{
	sdiag_filter_begin(f, SDIAG_FILTER_OR);
	return sdiag_filter_add_port(f, SDIAG_FILTER_DST, SDIAG_FILTER_EQ, 1);
}

static int extra_end(struct sdiag_filter *f)
{
	sdiag_filter_add_port(f, SDIAG_FILTER_DST, SDIAG_FILTER_EQ, 1);
	return sdiag_filter_end(f);
}

static int empty_group(struct sdiag_filter *f)
{
	sdiag_filter_begin(f, SDIAG_FILTER_NOT);
	return sdiag_filter_end(f);
}

static int bad_cgroup(struct sdiag_filter *f)
{
	return sdiag_filter_add_cgroup(f, SDIAG_FILTER_EQ, false, "a/b*");
}

static int missing_cgroup(struct sdiag_filter *f)
{
	return sdiag_filter_add_cgroup(f, SDIAG_FILTER_EQ, false, "/sockdiag-no-such-cgroup-t32");
}

static int bad_host(struct sdiag_filter *f)
{
	return sdiag_filter_add_host(f, SDIAG_FILTER_SRC, AF_INET, "\x7f\0\0\1", 33, -1);
}

static int port_any_ne(struct sdiag_filter *f)
{
	return sdiag_filter_add_port(f, SDIAG_FILTER_SRC, SDIAG_FILTER_NE, -1);
}

static void test_errors(void **state)
{
	(void)state;
	expect_finish(open_group, -EINVAL, "left open");
	expect_finish(extra_end, -EINVAL, "without a group");
	expect_finish(empty_group, -EINVAL, "empty group");
	expect_finish(bad_cgroup, -EINVAL, "is not a cgroup path"); /* the parser's message */
	expect_finish(missing_cgroup, -ENOENT, "no cgroup");
	expect_finish(bad_host, -EINVAL, "prefix length");
	expect_finish(port_any_ne, -EINVAL, "only with EQ");
}

static void test_finished_and_null(void **state)
{
	struct sdiag_filter *f = NULL;
	struct sdiag_sock s = { .family = AF_INET, .table = SDIAG_T_TCP };

	(void)state;
	assert_int_equal(sdiag_filter_new(NULL), -EINVAL);
	assert_int_equal(sdiag_filter_add_states(NULL, 1), -EINVAL);
	assert_int_equal(sdiag_filter_finish(NULL, NULL), -EINVAL);
	/* No term: matches everything, like the empty expression. */
	assert_int_equal(sdiag_filter_new(&f), 0);
	assert_int_equal(sdiag_filter_finish(f, NULL), 0);
	assert_true(sdiag_filter_match(f, &s));
	assert_int_equal(sdiag_filter_add_port(f, SDIAG_FILTER_SRC, SDIAG_FILTER_EQ, 1), -EINVAL);
	assert_int_equal(sdiag_filter_finish(f, NULL), -EINVAL);
	assert_true(sdiag_filter_match(f, &s)); /* unchanged */
	sdiag_filter_free(f);
	/* Unfinished (finish never called, or failed): matches nothing, so a
	 * forgotten finish cannot turn sdiag_kill's selection into every socket. */
	assert_int_equal(sdiag_filter_new(&f), 0);
	assert_int_equal(sdiag_filter_add_port(f, SDIAG_FILTER_SRC, SDIAG_FILTER_NE, 1), 0);
	assert_false(sdiag_filter_match(f, &s));
	assert_int_equal(sdiag_filter_finish(f, NULL), 0);
	assert_true(sdiag_filter_match(f, &s)); /* sport 0 != 1 */
	sdiag_filter_free(f);
	assert_int_equal(sdiag_filter_new(&f), 0);
	sdiag_filter_add_cgroup(f, SDIAG_FILTER_EQ, false, "/sockdiag-no-such-cgroup-t32");
	assert_int_equal(sdiag_filter_finish(f, NULL), -ENOENT);
	assert_false(sdiag_filter_match(f, &s));
	sdiag_filter_free(f);
	/* A parsed filter is finished too. */
	assert_int_equal(sdiag_filter_parse(&f, "sport = :1", NULL), 0);
	assert_int_equal(sdiag_filter_add_port(f, SDIAG_FILTER_SRC, SDIAG_FILTER_EQ, 1), -EINVAL);
	sdiag_filter_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus_equivalence), cmocka_unit_test(test_backends_shape),
		cmocka_unit_test(test_error_latches),	   cmocka_unit_test(test_errors),
		cmocka_unit_test(test_finished_and_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
