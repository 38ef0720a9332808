/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Options structs that grow (struct sdiag_query, struct sdiag_kill_opts): an
 * "old" caller's shorter struct, a "new" caller's longer one with a zero and
 * a non-zero tail, and a size too small, through sd_opts_load() on bytes and
 * through sdiag_dump() and sdiag_kill(), which check before any dump or
 * destroy. The old caller's struct is followed by bytes a library reading
 * past its sz would take for a filter pointer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "lib/core/internal.h"

/* What a caller built before the filter and the process map existed knew. */
#define OLD_QUERY_SZ SD_OFFSETOFEND(struct sdiag_query, show)

union padded_query {
	struct sdiag_query q;
	unsigned char b[sizeof(struct sdiag_query) + 64];
};

/* A caller newer than the library: one option more. */
struct new_query {
	struct sdiag_query q;
	uint64_t future;
};

struct new_kill_opts {
	struct sdiag_kill_opts o;
	uint64_t future;
};

/* An old caller's query, followed by 0xff bytes. */
static void old_query(union padded_query *u, uint32_t tables)
{
	memset(u, 0xff, sizeof(*u));
	u->q.sz = OLD_QUERY_SZ;
	u->q.tables = tables;
	u->q.states = 0;
	u->q.afs = 0;
	u->q.show = 0;
}

static int count_cb(const struct sdiag_sock *s, void *userdata)
{
	(void)s;
	++*(unsigned *)userdata;
	return 0;
}

static int destroy_cb(const struct sdiag_sock *s, enum sdiag_destroy_result res, int err,
		      void *userdata)
{
	(void)s;
	(void)res;
	(void)err;
	(void)userdata;
	return 0;
}

static void test_load_bytes(void **state)
{
	union padded_query u;
	struct new_query n;
	struct sdiag_query q;

	(void)state;
	/* Old: fields past its sz read as zero, whatever follows it. */
	old_query(&u, 7);
	u.q.states = 8;
	u.q.afs = 1;
	u.q.show = 2;
	memset(&q, 0xee, sizeof(q));
	assert_int_equal(sd_opts_load(&q, sizeof(q), SD_QUERY_KNOWN, &u.q), 0);
	assert_int_equal(q.sz, sizeof(q));
	assert_int_equal(q.tables, 7);
	assert_int_equal(q.show, 2);
	assert_null(q.filter);
	assert_false(q.no_kernel_filter);
	assert_null(q.procmap);

	/* New with a zero tail: what we know is taken. */
	memset(&n, 0, sizeof(n));
	n.q.sz = sizeof(n);
	n.q.tables = 5;
	n.q.no_kernel_filter = true;
	assert_int_equal(sd_opts_load(&q, sizeof(q), SD_QUERY_KNOWN, &n), 0);
	assert_int_equal(q.sz, sizeof(q));
	assert_int_equal(q.tables, 5);
	assert_true(q.no_kernel_filter);

	/* New with an option we do not know: refused. */
	n.future = 1;
	assert_int_equal(sd_opts_load(&q, sizeof(q), SD_QUERY_KNOWN, &n), -E2BIG);
	n.future = (uint64_t)1 << 63;
	assert_int_equal(sd_opts_load(&q, sizeof(q), SD_QUERY_KNOWN, &n), -E2BIG);

	/* A size no options struct has (an uninitialised sz): refused unread.
	 * The struct ends its page, zeros to the end, and the next page is not
	 * mapped: reading its "tail" would fault. */
	{
		long pg = sysconf(_SC_PAGESIZE);
		uint8_t *m = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct new_query *e = (struct new_query *)(m + pg - sizeof(*e));

		assert_true(m != MAP_FAILED);
		assert_int_equal(mprotect(m + pg, (size_t)pg, PROT_NONE), 0);
		e->q.sz = (size_t)1 << 40;
		assert_int_equal(sd_opts_load(&q, sizeof(q), SD_QUERY_KNOWN, e), -E2BIG);
		munmap(m, 2 * (size_t)pg);
	}

	/* No room for the size itself. */
	memset(&q, 0, sizeof(q));
	assert_int_equal(sd_opts_load(&n, sizeof(n), SD_QUERY_KNOWN, &q), -EINVAL);
	q.sz = sizeof(size_t) - 1;
	assert_int_equal(sd_opts_load(&n, sizeof(n), SD_QUERY_KNOWN, &q), -EINVAL);
}

static void test_macro(void **state)
{
	SDIAG_OPTS(sdiag_query, q, .tables = SDIAG_TABLES_INET, .afs = SDIAG_AF_INET6);
	SDIAG_OPTS(sdiag_kill_opts, o, .batch = 3);

	(void)state;
	assert_int_equal(q.sz, sizeof(struct sdiag_query));
	assert_int_equal(q.tables, SDIAG_TABLES_INET);
	assert_int_equal(q.afs, SDIAG_AF_INET6);
	assert_null(q.filter);
	assert_int_equal(o.sz, sizeof(struct sdiag_kill_opts));
	assert_int_equal(o.batch, 3);
	assert_false(o.mptcp_subflows);
}

static void test_dump_and_kill(void **state)
{
	struct sdiag_handle *h;
	union padded_query u;
	struct new_query n;
	struct new_kill_opts ko;
	unsigned calls = 0;

	(void)state;
	assert_int_equal(sdiag_open(&h), 0);
	/* An old caller: no table; the 0xff bytes past its sz are no filter. */
	old_query(&u, 0);
	assert_int_equal(sdiag_dump(h, &u.q, count_cb, NULL, &calls), 0);
	assert_int_equal(calls, 0);

	memset(&n, 0, sizeof(n));
	n.q.sz = sizeof(n);
	assert_int_equal(sdiag_dump(h, &n.q, count_cb, NULL, &calls), 0);
	n.future = 1;
	assert_int_equal(sdiag_dump(h, &n.q, count_cb, NULL, &calls), -E2BIG);
	n.q.sz = 0;
	assert_int_equal(sdiag_dump(h, &n.q, count_cb, NULL, &calls), -EINVAL);
	assert_int_equal(calls, 0);

	/* sdiag_kill checks both structs before it asks for a destroyer. */
	n.future = 0;
	n.q.sz = sizeof(n);
	memset(&ko, 0, sizeof(ko));
	ko.o.sz = sizeof(ko);
	ko.future = 2;
	assert_int_equal(sdiag_kill(h, &n.q, &ko.o, destroy_cb, NULL, NULL), -E2BIG);
	ko.o.sz = 1;
	assert_int_equal(sdiag_kill(h, &n.q, &ko.o, destroy_cb, NULL, NULL), -EINVAL);
	n.future = 9;
	assert_int_equal(sdiag_kill(h, &n.q, NULL, destroy_cb, NULL, NULL), -E2BIG);
	sdiag_close(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_bytes),
		cmocka_unit_test(test_macro),
		cmocka_unit_test(test_dump_and_kill),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
