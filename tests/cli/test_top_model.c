// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sockdiag top's model (cli/top/model.c) over hand-made records: deltas
 * between dumps, sockets born after the baseline, destroy events of known
 * and unknown sockets (the final counters folded once), sockets missing from
 * a dump whose event comes late, group sums against per-socket sums,
 * owners looked up once per socket, regrouping, and memory that follows the
 * live sockets.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <cmocka.h>

#include "cli/top/model.h"
#include "tests/blob_util.h"

static struct sdiag_sock mk(uint64_t cookie, uint16_t dport, uint64_t rx, uint64_t tx)
{
	/* Each record's tcp_info view: a ring longer than any test holds at once. */
	static struct sdiag_tcp_info tb[64];
	static unsigned next;
	struct sdiag_tcp_info *ti = &tb[next++ % 64];
	struct sdiag_sock s = { .table = SDIAG_T_TCP, .family = AF_INET, .state = 1,
				.cookie = cookie, .inode = 1000 + cookie };

	s.has = SDIAG_HAS_COOKIE | SDIAG_HAS_TCP_INFO | SDIAG_HAS_QUEUES;
	s.inet.src[0] = 127;
	s.inet.src[3] = 1;
	s.inet.dst[0] = 127;
	s.inet.dst[3] = 1;
	s.inet.sport = (uint16_t)(40000 + cookie);
	s.inet.dport = dport;
	memset(ti, 0, sizeof(*ti));
	t_blob_attach(&s, SDIAG_BLOB_TCP_INFO, ti, sizeof(*ti));
	ti->tcpi_bytes_received = rx;
	ti->tcpi_bytes_acked = tx;
	ti->tcpi_rtt = 100;
	return s;
}

struct fixture {
	struct ckeys *ck;
	struct top_model *m;
};

static struct top_model *model(void **state, const char *keys)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct top_keys k;
	struct top_keys_error e;

	assert_non_null(f);
	assert_int_equal(top_keys_parse(&k, keys, &e), 0);
	f->ck = ckeys_new(true);
	assert_non_null(f->ck);
	assert_int_equal(tm_new(&f->m, &k, f->ck, NULL), 0);
	*state = f;
	return f->m;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	if (f) {
		tm_free(f->m);
		ckeys_free(f->ck);
		free(f);
	}
	return 0;
}

/* The row whose key values, written here joined by 0x1f, are `key`, or NULL. */
static const struct top_group *row(const struct top_model *m, const char *key)
{
	for (size_t i = 0; i < tm_nrows(m); i++) {
		const struct top_group *g = tm_row(m, i);
		char text[512];
		size_t n = 0, len;

		for (size_t k = 0; k < g->nkeys && n + 1 < sizeof(text); k++) {
			const char *v = top_key_field(g, k, &len);

			if (k)
				text[n++] = '\x1f';
			len = len < sizeof(text) - 1 - n ? len : sizeof(text) - 1 - n;
			memcpy(text + n, v, len);
			n += len;
		}
		text[n] = '\0';
		if (!strcmp(text, key))
			return g;
	}
	return NULL;
}

static void refresh(struct top_model *m, const struct sdiag_sock *s, size_t n, double sec)
{
	tm_begin(m);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(tm_sock(m, &s[i], 0), 0);
	assert_int_equal(tm_end(m, sec), 0);
}

static void test_deltas(void **state)
{
	struct top_model *m = model(state, "rport");
	struct sdiag_sock s[2] = { mk(1, 80, 100, 200), mk(2, 80, 5, 5) };

	refresh(m, s, 2, 0);	/* the baseline: nothing counted */
	assert_int_equal(row(m, "80")->rx, 0);
	assert_int_equal(row(m, "80")->conns, 2);
	s[0] = mk(1, 80, 1100, 2200);
	s[1] = mk(2, 80, 5, 505);
	refresh(m, s, 2, 2.0);
	assert_int_equal(row(m, "80")->rx, 1000);
	assert_int_equal(row(m, "80")->tx, 2500);
	assert_true(row(m, "80")->rx_bps == 500.0);
	assert_int_equal(row(m, "80")->rtt_us, 100);
	/* Unchanged counters: zero, not the totals again. */
	refresh(m, s, 2, 1.0);
	assert_int_equal(row(m, "80")->rx, 0);
	assert_int_equal(row(m, "80")->tx, 0);
}

static void test_born_after_baseline(void **state)
{
	struct top_model *m = model(state, "conn");
	struct sdiag_sock a = mk(1, 80, 10, 10), b = mk(2, 443, 7000, 300);

	refresh(m, &a, 1, 0);
	refresh(m, (struct sdiag_sock[]){ a, b }, 2, 1.0);
	assert_int_equal(tm_total(m)->rx, 7000);
	assert_int_equal(tm_total(m)->tx, 300);
	assert_int_equal(tm_total(m)->conns, 2);
}

static void test_events(void **state)
{
	struct top_model *m = model(state, "rport");
	struct sdiag_sock a = mk(1, 80, 100, 100), fin = mk(1, 80, 600, 100), u = mk(9, 80, 4000, 9);

	/* Before the first interval an unknown socket's end tells nothing. */
	assert_int_equal(tm_event(m, &u, 0, NULL), 0);
	refresh(m, &a, 1, 0);
	a = mk(1, 80, 300, 100);
	refresh(m, &a, 1, 1.0);
	assert_int_equal(row(m, "80")->rx, 200);
	/* a closes with 600 received: 300 more; an unknown socket: all of its 4000. */
	assert_int_equal(tm_event(m, &fin, 0, NULL), 0);
	assert_int_equal(tm_event(m, &u, 0, NULL), 0);
	assert_int_equal(tm_nsocks(m), 0);
	refresh(m, NULL, 0, 1.0);
	assert_int_equal(row(m, "80")->rx, 300 + 4000);
	assert_int_equal(row(m, "80")->tx, 9);
	assert_int_equal(row(m, "80")->closed, 2);
	assert_int_equal(row(m, "80")->conns, 0);
	/* Counted once: the next interval has nothing, and the group goes. */
	refresh(m, NULL, 0, 1.0);
	assert_int_equal(tm_nrows(m), 0);
	/* Seen by a dump, then its event in the same refresh: both parts count. */
	a = mk(2, 80, 100, 0);
	refresh(m, &a, 1, 1.0);
	a = mk(2, 80, 700, 0);
	fin = mk(2, 80, 750, 0);
	tm_begin(m);
	assert_int_equal(tm_sock(m, &a, 0), 0);
	assert_int_equal(tm_event(m, &fin, 0, NULL), 0);
	assert_int_equal(tm_end(m, 1.0), 0);
	assert_int_equal(row(m, "80")->rx, 650);
	assert_int_equal(row(m, "80")->closed, 1);
	/* A socket reported twice by one dump: its bytes once. */
	a = mk(3, 80, 10, 0);
	refresh(m, &a, 1, 1.0);
	tm_begin(m);
	a = mk(3, 80, 60, 0);
	assert_int_equal(tm_sock(m, &a, 0), 0);
	a = mk(3, 80, 70, 0);
	assert_int_equal(tm_sock(m, &a, 0), 0);
	assert_int_equal(tm_end(m, 1.0), 0);
	assert_int_equal(row(m, "80")->rx, 60);
	assert_int_equal(row(m, "80")->conns, 1);
	refresh(m, NULL, 0, 1.0);
	refresh(m, NULL, 0, 1.0);
	refresh(m, NULL, 0, 1.0);
	refresh(m, NULL, 0, 1.0);
	assert_int_equal(tm_nrows(m), 0);
	refresh(m, NULL, 0, 1.0);
	assert_int_equal(tm_ngroups(m), 0);
}

static void test_late_event(void **state)
{
	struct top_model *m = model(state, "conn");
	struct sdiag_sock a = mk(1, 80, 100, 0), fin = mk(1, 80, 900, 0);

	refresh(m, &a, 1, 0);
	a = mk(1, 80, 400, 0);
	refresh(m, &a, 1, 1.0);
	assert_int_equal(tm_total(m)->rx, 300);
	/* Gone from the dump, its event not read yet: nothing, but remembered. */
	refresh(m, NULL, 0, 1.0);
	assert_int_equal(tm_total(m)->rx, 0);
	assert_int_equal(tm_total(m)->conns, 0);
	assert_int_equal(tm_nsocks(m), 1);
	assert_int_equal(tm_event(m, &fin, 0, NULL), 0);
	refresh(m, NULL, 0, 1.0);
	assert_int_equal(tm_total(m)->rx, 500);
	assert_int_equal(tm_total(m)->closed, 1);
	/* Without an event it is forgotten after two refreshes. */
	a = mk(2, 80, 1, 1);
	refresh(m, &a, 1, 1.0);
	refresh(m, NULL, 0, 1.0);
	refresh(m, NULL, 0, 1.0);
	assert_int_equal(tm_nsocks(m), 1);
	refresh(m, NULL, 0, 1.0);
	assert_int_equal(tm_nsocks(m), 0);
}

static bool lookup(void *ud, uint64_t inode, int32_t *pid, char comm[16])
{
	unsigned *calls = ud;

	(*calls)++;
	*pid = inode % 2 ? 11 : 22;
	strcpy(comm, inode % 2 ? "odd" : "even");
	return true;
}

static void test_groups_and_owners(void **state)
{
	struct top_model *m = model(state, "pid");
	struct sdiag_sock s[6];
	struct top_keys conn;
	uint64_t sum_rx = 0, sum_tx = 0, conn_rx = 0, conn_tx = 0;
	unsigned calls = 0;
	struct top_keys_error e;

	for (unsigned i = 0; i < 6; i++)
		s[i] = mk(i + 1, (uint16_t)(80 + i % 3), i * 10, i);
	tm_begin(m);
	for (unsigned i = 0; i < 6; i++)
		tm_sock(m, &s[i], 0);
	assert_int_equal(tm_owners_pending(m), 6);
	tm_owners(m, lookup, &calls);
	assert_int_equal(calls, 6);
	tm_end(m, 0);
	for (unsigned i = 0; i < 6; i++)
		s[i] = mk(i + 1, (uint16_t)(80 + i % 3), i * 1000 + 7, i * 500);
	refresh(m, s, 6, 1.0);
	assert_int_equal(tm_owners_pending(m), 0); /* looked up once */
	assert_int_equal(tm_nrows(m), 2);
	assert_int_equal(row(m, "11")->conns, 3);
	assert_int_equal(row(m, "11")->pid, 11);
	assert_string_equal(row(m, "11")->comm, "odd");
	for (size_t i = 0; i < tm_nrows(m); i++) {
		sum_rx += tm_row(m, i)->rx;
		sum_tx += tm_row(m, i)->tx;
	}
	assert_int_equal(top_keys_parse(&conn, "conn", &e), 0);
	assert_int_equal(tm_set_keys(m, &conn), 0);
	assert_int_equal(tm_nrows(m), 6);
	for (size_t i = 0; i < tm_nrows(m); i++) {
		conn_rx += tm_row(m, i)->rx;
		conn_tx += tm_row(m, i)->tx;
	}
	assert_int_equal(sum_rx, conn_rx);
	assert_int_equal(sum_tx, conn_tx);
	assert_int_equal(sum_rx, 15 * 1000 + 6 * 7 - 15 * 10);
	tm_sort(m, TC_RX, false);
	assert_true(tm_row(m, 0)->rx >= tm_row(m, 1)->rx);
	tm_sort(m, TC_RX, true);
	assert_true(tm_row(m, 0)->rx <= tm_row(m, 1)->rx);
}

/* Sockets grouped while their owner is unknown ("-") move to their owner's group
 * once it is found, for every key that needs it: pid, and comm. */
static void test_owner_found_later(void **state)
{
	static const char *const keys[] = { "pid", "comm", "comm,rport" };
	static const char *const want[] = { "11", "odd", "odd\x1f" "80" };

	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		struct top_model *m = model(state, keys[k]);
		struct sdiag_sock a = mk(1, 80, 10, 10);
		unsigned calls = 0;

		refresh(m, &a, 1, 0);	/* grouped before any owner lookup */
		assert_non_null(row(m, k == 2 ? "-\x1f" "80" : "-"));
		tm_begin(m);
		assert_int_equal(tm_sock(m, &a, 0), 0);
		tm_owners(m, lookup, &calls);
		assert_int_equal(tm_end(m, 1.0), 0);
		assert_int_equal(calls, 1);
		assert_int_equal(tm_nrows(m), 1);
		assert_non_null(row(m, want[k]));
		assert_int_equal(row(m, want[k])->conns, 1);
		teardown(state);
		*state = NULL;
	}
}

/* Fails for the first `fail` lookups, then finds pid 11. */
static bool lookup_late(void *ud, uint64_t inode, int32_t *pid, char comm[16])
{
	unsigned *fail = ud;

	(void)inode;
	if (*fail) {
		(*fail)--;
		return false;
	}
	*pid = 11;
	strcpy(comm, "odd");
	return true;
}

/* accept() shows the socket's inode before it installs the descriptor: a scan in
 * between finds no owner. The lookup is tried again at the next refreshes (three
 * in all), then given up. */
static void test_owner_retried(void **state)
{
	struct top_model *m = model(state, "pid");
	struct sdiag_sock a = mk(1, 80, 10, 10), b = mk(2, 80, 10, 10);
	unsigned fail = 1;

	tm_begin(m);
	assert_int_equal(tm_sock(m, &a, 0), 0);
	tm_owners(m, lookup_late, &fail);
	assert_int_equal(tm_end(m, 0), 0);
	assert_non_null(row(m, "-"));
	assert_int_equal(tm_owners_pending(m), 1);
	tm_begin(m);
	assert_int_equal(tm_sock(m, &a, 0), 0);
	tm_owners(m, lookup_late, &fail);
	assert_int_equal(tm_end(m, 1.0), 0);
	assert_int_equal(tm_nrows(m), 1);
	assert_non_null(row(m, "11"));
	/* One that never has an owner: three lookups, then no more scans for it. */
	fail = 100;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(tm_owners_pending(m), i == 0 ? 0 : 1);
		tm_begin(m);
		assert_int_equal(tm_sock(m, &a, 0), 0);
		assert_int_equal(tm_sock(m, &b, 0), 0);
		tm_owners(m, lookup_late, &fail);
		assert_int_equal(tm_end(m, 1.0), 0);
	}
	assert_int_equal(fail, 100 - 3);
	assert_int_equal(tm_owners_pending(m), 0);
	assert_non_null(row(m, "-"));
}

/* A v4-mapped peer is its IPv4 address: one group (list --count-by's helper). */
static void test_v4_mapped(void **state)
{
	struct top_model *m = model(state, "raddr,laddr");
	struct sdiag_sock s[2] = { mk(1, 80, 0, 0), mk(2, 80, 0, 0) };
	static const uint8_t mapped[16] = { [10] = 0xff, [11] = 0xff, [12] = 127, [15] = 1 };

	s[1].family = AF_INET6;
	memcpy(s[1].inet.dst, mapped, 16);
	memcpy(s[1].inet.src, mapped, 16);
	refresh(m, s, 2, 0);
	assert_int_equal(tm_nrows(m), 1);
	assert_non_null(row(m, "127.0.0.1\x1f" "127.0.0.1"));
	assert_int_equal(row(m, "127.0.0.1\x1f" "127.0.0.1")->conns, 2);
	/* ::1 stays itself (another socket: a socket's addresses are its own) */
	s[1] = mk(3, 80, 0, 0);
	s[1].family = AF_INET6;
	memset(s[1].inet.dst, 0, 16);
	s[1].inet.dst[15] = 1;
	memcpy(s[1].inet.src, mapped, 16);
	refresh(m, s, 2, 1.0);
	assert_int_equal(tm_nrows(m), 2);
	assert_non_null(row(m, "::1\x1f" "127.0.0.1"));
}

/* The order tm_sort promises, written out: by RX (then TX), largest first, then the key. */
static void check_rx_order(const struct top_model *m, bool ascending)
{
	for (size_t i = 0; i + 1 < tm_nrows(m); i++) {
		const struct top_group *a = tm_row(m, ascending ? i + 1 : i),
				       *b = tm_row(m, ascending ? i : i + 1);

		assert_true(a->rx > b->rx || (a->rx == b->rx && a->tx > b->tx) ||
			    (a->rx == b->rx && a->tx == b->tx && top_key_cmp(a, b) < 0));
	}
}

static void test_sort(void **state)
{
	struct top_model *m = model(state, "rport");
	/* rports whose text order is neither their number's nor the dump's */
	struct sdiag_sock s[5] = { mk(1, 9, 0, 0), mk(2, 100, 0, 0), mk(3, 20, 0, 0),
				   mk(4, 3, 0, 0), mk(5, 1000, 0, 0) };
	const char *idle[] = { "100", "20", "9" }, *added[] = { "100", "1000", "20", "3", "9" };

	refresh(m, s, 3, 0);
	refresh(m, s, 3, 1.0);
	tm_sort(m, TC_RX, false);
	assert_int_equal(tm_nrows(m), 3);
	for (size_t i = 0; i < 3; i++) /* idle: all tie, the keys decide */
		assert_string_equal(tm_row(m, i)->key, idle[i]);
	tm_sort(m, TC_RX, true);
	for (size_t i = 0; i < 3; i++)
		assert_string_equal(tm_row(m, i)->key, idle[2 - i]);
	/* groups added after a sort take their place among the others */
	refresh(m, s, 5, 1.0);
	tm_sort(m, TC_KEY, false);
	assert_int_equal(tm_nrows(m), 5);
	for (size_t i = 0; i < 5; i++)
		assert_string_equal(tm_row(m, i)->key, added[i]);
	/* traffic on some: those first, by RX then TX, ties by key */
	s[1] = mk(2, 100, 0, 50);
	s[3] = mk(4, 3, 10, 0);
	s[4] = mk(5, 1000, 0, 50);
	refresh(m, s, 5, 1.0);
	tm_sort(m, TC_RX, false);
	assert_string_equal(tm_row(m, 0)->key, "3");
	assert_string_equal(tm_row(m, 1)->key, "100");
	assert_string_equal(tm_row(m, 2)->key, "1000");
	check_rx_order(m, false);
	tm_sort(m, TC_RX, true);
	check_rx_order(m, true);
}

static void test_keys_parse(void **state)
{
	struct top_keys k;
	struct top_keys_error e;

	(void)state;
	assert_int_equal(top_keys_parse(&k, "pid,comm,unit", &e), 0);
	assert_int_equal(k.n, 3);
	assert_int_equal(k.k[1], GK_PROCESS);
	assert_int_equal(top_keys_parse(&k, "conn,pid", &e), 0);
	assert_int_equal(k.n, 7);
	assert_true(k.conn);
	assert_int_equal(top_keys_parse(&k, "pid,nosuch", &e), -EINVAL);
	assert_int_equal(e.kind, TKE_UNKNOWN);
	assert_int_equal(e.len, 6);
	assert_memory_equal(e.at, "nosuch", 6);
	/* list --count-by's rule: none empty, none twice (conn's keys count). */
	assert_int_equal(top_keys_parse(&k, "conn,conn", &e), -EINVAL);
	assert_int_equal(e.kind, TKE_TWICE);
	assert_int_equal(top_keys_parse(&k, "pid,comm,pid", &e), -EINVAL);
	assert_int_equal(e.kind, TKE_TWICE);
	assert_int_equal(e.key, GK_PID);
	assert_false(e.in_conn);
	assert_int_equal(top_keys_parse(&k, "rport,conn", &e), -EINVAL);
	assert_int_equal(e.kind, TKE_TWICE);
	assert_int_equal(e.key, GK_RPORT);
	assert_true(e.in_conn);
	for (const char *const *a = (const char *const[]){ "pid,", ",pid", "pid,,comm", ",",
							     NULL }; *a; a++) {
		assert_int_equal(top_keys_parse(&k, *a, &e), -EINVAL);
		assert_int_equal(e.kind, TKE_EMPTY);
	}
	assert_int_equal(top_keys_parse(&k, "", &e), -EINVAL);
	assert_int_equal(e.kind, TKE_NONE);
	assert_int_equal(top_keys_parse(&k, "conn,pid,comm,unit,user,state,family,netns", &e),
			 -EINVAL);
	assert_int_equal(e.kind, TKE_MANY);
	assert_memory_equal(e.at, "netns", 5);
	assert_int_equal(top_col_lookup("retrans"), TC_RETRANS);
	assert_int_equal(top_col_lookup("x"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_deltas, teardown),
		cmocka_unit_test_teardown(test_born_after_baseline, teardown),
		cmocka_unit_test_teardown(test_events, teardown),
		cmocka_unit_test_teardown(test_late_event, teardown),
		cmocka_unit_test_teardown(test_groups_and_owners, teardown),
		cmocka_unit_test_teardown(test_sort, teardown),
		cmocka_unit_test_teardown(test_owner_found_later, teardown),
		cmocka_unit_test_teardown(test_owner_retried, teardown),
		cmocka_unit_test_teardown(test_v4_mapped, teardown),
		cmocka_unit_test(test_keys_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
