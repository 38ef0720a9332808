/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The captured dumps against what sockpop recorded while they were made.
 *
 * tests/fixtures/capture-*.sh ran sockpop in a private namespace; sockpop
 * wrote, for each socket it made, its inode and SO_COOKIE as the kernel gave
 * them to the owner (*-sockets.json), and the dump was captured (*-dump.bin).
 * Every recorded socket must decode from the dump exactly once, with that
 * cookie, and with the identities sockpop knew (unix peer, netlink protocol
 * and portid, packet ethertype and ifindex): the decoders' idea of where the
 * inode and cookie sit is checked against the owner's view, not against
 * numbers copied into a test.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/test_skip.h"

#include <stdbool.h>
#include <sys/socket.h>

#include "lib/family/family.h"
#include "tests/unit/fixture_util.h"

struct recorded {
	long long inode, cookie, peer_inode, protocol, portid, ethertype, ifindex;
	char kind[32];
};

/* The value of "KEY": in one JSON line (sockpop writes one object a line,
 * numbers and strings only at the top level), or -1. */
static long long json_num(const char *line, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(line, pat);
	return p ? strtoll(p + strlen(pat), NULL, 10) : -1;
}

static size_t load_recorded(const char *name, struct recorded *v, size_t max)
{
	char path[4096], line[4096];
	size_t n = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", FIXTURE_DIR, name);
	fp = fopen(path, "r");
	if (!fp)
		fail_msg("cannot open %s", path);
	while (fgets(line, sizeof(line), fp)) {
		const char *k = strstr(line, "\"kind\":\"");

		if (!k)
			continue;
		assert_true(n < max);
		memset(&v[n], 0, sizeof(v[n]));
		sscanf(k + 8, "%31[^\"]", v[n].kind);
		v[n].inode = json_num(line, "inode");
		v[n].cookie = json_num(line, "cookie");
		v[n].peer_inode = json_num(line, "peer_inode");
		v[n].protocol = json_num(line, "protocol");
		v[n].portid = json_num(line, "portid");
		v[n].ethertype = json_num(line, "ethertype");
		v[n].ifindex = json_num(line, "ifindex");
		assert_true(v[n].inode > 0 && v[n].cookie > 0);
		n++;
	}
	fclose(fp);
	assert_true(n > 0);
	return n;
}

/* The one decoded record with INODE. The kernel reports a netlink socket that
 * is both bound and subscribed twice (the dump layer drops the copy by cookie;
 * the raw bytes have both): with DUP, an identical second record is allowed. */
static const struct sdiag_sock *by_inode(const struct fixture *f, long long inode, bool dup)
{
	const struct sdiag_sock *found = NULL;

	for (size_t i = 0; i < f->n; i++) {
		if (f->socks[i].inode != (uint64_t)inode)
			continue;
		if (found && !(dup && found->cookie == f->socks[i].cookie))
			fail_msg("inode %lld decoded twice", inode);
		found = &f->socks[i];
	}
	if (!found)
		fail_msg("inode %lld (recorded by sockpop) not in the dump", inode);
	return found;
}

static void check_common(const struct recorded *r, const struct sdiag_sock *s)
{
	if (!(s->has & SDIAG_HAS_COOKIE) || s->cookie != (uint64_t)r->cookie)
		fail_msg("%s inode %lld: cookie %llx decoded, %llx recorded", r->kind, r->inode,
			 (unsigned long long)s->cookie, (unsigned long long)r->cookie);
	assert_true(s->has & SDIAG_HAS_INODE);
}

static void test_unix_ids(void **state)
{
	struct recorded rec[32];
	struct fixture fx;
	size_t n, peers = 0;

	(void)state;
	fixture_load(&fx, "unix-dump.bin", sd_unix_decode);
	n = load_recorded("unix-sockets.json", rec, 32);
	for (size_t i = 0; i < n; i++) {
		const struct sdiag_sock *s = by_inode(&fx, rec[i].inode, false);

		check_common(&rec[i], s);
		assert_int_equal(s->family, AF_UNIX);
		if (rec[i].peer_inode > 0) {
			/* The peer sockpop accepted or paired is this one's peer. */
			assert_true(s->has & SDIAG_HAS_PEER);
			assert_int_equal(s->un.peer, rec[i].peer_inode);
			assert_int_equal(by_inode(&fx, rec[i].peer_inode, false)->un.peer, rec[i].inode);
			peers++;
		}
	}
	assert_true(peers >= 2);
	print_message("%zu recorded unix sockets, %zu with peers, all decoded with their cookies\n",
		      n, peers);
	fixture_free(&fx);
}

static void test_netlink_ids(void **state)
{
	struct recorded rec[32];
	struct fixture fx;
	size_t n;

	(void)state;
	fixture_load(&fx, "netlink-dump.bin", sd_netlink_decode);
	n = load_recorded("netlink-sockets.json", rec, 32);
	for (size_t i = 0; i < n; i++) {
		const struct sdiag_sock *s = by_inode(&fx, rec[i].inode, true);

		check_common(&rec[i], s);
		assert_int_equal(s->protocol, rec[i].protocol);
		assert_int_equal(s->nl.portid, rec[i].portid);
	}
	assert_int_equal(n, 4);
	fixture_free(&fx);
}

static void test_packet_ids(void **state)
{
	struct recorded rec[32];
	struct fixture fx;
	size_t n;

	(void)state;
	fixture_load(&fx, "packet-dump.bin", sd_packet_decode);
	n = load_recorded("packet-sockets.json", rec, 32);
	for (size_t i = 0; i < n; i++) {
		const struct sdiag_sock *s = by_inode(&fx, rec[i].inode, false);

		check_common(&rec[i], s);
		assert_int_equal(s->pkt.ethertype, rec[i].ethertype);
		assert_int_equal(s->pkt.info.index, rec[i].ifindex);
	}
	assert_int_equal(n, 2);
	fixture_free(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unix_ids),
		cmocka_unit_test(test_netlink_ids),
		cmocka_unit_test(test_packet_ids),
	};

	return sdiag_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
