/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * AF_UNIX decoder and request builder, offline.
 *
 * unix-dump.bin was recorded by tests/fixtures/capture-unix.sh in a private
 * netns holding exactly the sockets listed in unix-sockets.json: a stream
 * listener on a path with one accepted client (100 unread bytes, client's send
 * side shut) and one pending client, an abstract stream listener, an abstract
 * seqpacket listener with one accepted client, a bound datagram socket whose
 * path holds a quote, a control byte and invalid UTF-8, and a socketpair.
 * Inode numbers differ per capture, so they are checked by relation (peer,
 * icons), never by value.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/test_skip.h"

#include <errno.h>
#include <sys/socket.h>
#include <linux/sock_diag.h>

#include "lib/family/family.h"
#include "tests/unit/fixture_util.h"
#include "tests/blob_util.h"

#define DIR "/tmp/sockdiag-fixture"
static const char listen_path[] = DIR "/listen.sock";
static const char odd_path[] = DIR "/q\"c\x01i\xff\xfe.sock";
static const char abstract_name[] = "\0sockdiag-abstract";
static const char seq_name[] = "\0sockdiag-seq";

static struct fixture fx;

static int setup(void **state)
{
	(void)state;
	fixture_load(&fx, "unix-dump.bin", sd_unix_decode);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fixture_free(&fx);
	return 0;
}

static bool name_is(const struct sdiag_sock *s, const char *name, size_t len)
{
	return (s->has & SDIAG_HAS_NAME) && s->un.name_len == len && !memcmp(s->un.name, name, len);
}

/* The one record with this name and state (fails the test otherwise). */
static const struct sdiag_sock *find_named(const char *name, size_t len, uint8_t state)
{
	const struct sdiag_sock *found = NULL;

	for (size_t i = 0; i < fx.n; i++)
		if (name_is(&fx.socks[i], name, len) && fx.socks[i].state == state) {
			assert_null(found);
			found = &fx.socks[i];
		}
	assert_non_null(found);
	return found;
}

static const struct sdiag_sock *find_inode(uint64_t ino)
{
	for (size_t i = 0; i < fx.n; i++)
		if (fx.socks[i].inode == ino)
			return &fx.socks[i];
	fail_msg("no socket with inode %llu", (unsigned long long)ino);
	return NULL;
}

static void test_every_record(void **state)
{
	(void)state;
	/* listener, accepted, client, pending client, abstract listener,
	 * seqpacket listener + accepted + client, dgram, pair x2 */
	assert_int_equal(fx.n, 11);
	for (size_t i = 0; i < fx.n; i++) {
		const struct sdiag_sock *s = &fx.socks[i];
		const uint64_t need = SDIAG_HAS_INODE | SDIAG_HAS_COOKIE | SDIAG_HAS_UID |
				      SDIAG_HAS_QUEUES | SDIAG_HAS_SHUTDOWN | SDIAG_HAS_SKMEMINFO;

		assert_int_equal(s->family, AF_UNIX);
		assert_int_equal(s->has & need, need);
		assert_int_equal(s->uid, 0); /* captured as root */
		assert_true(s->inode != 0);
		assert_true(s->cookie != 0);
		assert_true(t_skmem(s, SDIAG_SKMEM_RCVBUF) > 0);
		assert_true(t_skmem(s, SDIAG_SKMEM_SNDBUF) > 0);
		for (size_t j = 0; j < i; j++)
			assert_true(fx.socks[j].cookie != s->cookie);
	}
}

static void test_stream_listener(void **state)
{
	const struct sdiag_sock *l, *pending;

	(void)state;
	l = find_named(listen_path, strlen(listen_path), SDIAG_SS_LISTEN);
	assert_int_equal(l->table, SDIAG_T_UNIX_STREAM);
	assert_int_equal(l->type, SOCK_STREAM);
	assert_true(l->has & SDIAG_HAS_VFS);
	assert_true(l->un.vfs_ino != 0);
	/* A listener's queues are the accept queue length and the backlog. */
	assert_int_equal(l->rqueue, 1);
	assert_int_equal(l->wqueue, 16);
	/* The pending client's inode, and that client's peer is not known yet. */
	assert_true(l->has & SDIAG_HAS_ICONS);
	assert_int_equal(l->un.n_icons, 1);
	pending = find_inode(l->un.icons[0]);
	assert_int_equal(pending->state, SDIAG_SS_ESTABLISHED);
	assert_false(pending->has & SDIAG_HAS_NAME);
	assert_true(pending->has & SDIAG_HAS_PEER);
	assert_int_equal(pending->un.peer, 0);
}

static void test_stream_pair(void **state)
{
	const struct sdiag_sock *srv, *cli;

	(void)state;
	/* The accepted socket carries the listener's name; the client has none. */
	srv = find_named(listen_path, strlen(listen_path), SDIAG_SS_ESTABLISHED);
	assert_int_equal(srv->table, SDIAG_T_UNIX_STREAM);
	assert_true(srv->has & SDIAG_HAS_PEER);
	cli = find_inode(srv->un.peer);
	assert_int_equal(cli->un.peer, srv->inode);
	assert_false(cli->has & SDIAG_HAS_NAME);
	/* 100 unread bytes; the client shut its sending side (bit 1), which
	 * the kernel mirrors as the server's receive side (bit 0). */
	assert_int_equal(srv->rqueue, 100);
	assert_int_equal(srv->shutdown, 1);
	assert_int_equal(cli->shutdown, 2);
	assert_true(cli->wqueue >= 100);
	/* vfs belongs to the bound (accepted) side's path */
	assert_true(srv->has & SDIAG_HAS_VFS);
	assert_false(cli->has & SDIAG_HAS_VFS);
}

static void test_abstract(void **state)
{
	const struct sdiag_sock *a, *seq, *srv, *cli;

	(void)state;
	a = find_named(abstract_name, sizeof(abstract_name) - 1, SDIAG_SS_LISTEN);
	assert_int_equal(a->table, SDIAG_T_UNIX_STREAM);
	assert_int_equal(a->un.name[0], '\0');
	assert_int_equal(a->un.name_len, 18);
	assert_false(a->has & SDIAG_HAS_VFS); /* no file behind it */
	assert_int_equal(a->un.n_icons, 0);

	seq = find_named(seq_name, sizeof(seq_name) - 1, SDIAG_SS_LISTEN);
	assert_int_equal(seq->table, SDIAG_T_UNIX_SEQPACKET);
	assert_int_equal(seq->type, SOCK_SEQPACKET);
	srv = find_named(seq_name, sizeof(seq_name) - 1, SDIAG_SS_ESTABLISHED);
	assert_int_equal(srv->table, SDIAG_T_UNIX_SEQPACKET);
	cli = find_inode(srv->un.peer);
	assert_int_equal(cli->table, SDIAG_T_UNIX_SEQPACKET);
	assert_int_equal(cli->un.peer, srv->inode);
}

/* The raw bytes come through untouched: quote, control byte, invalid UTF-8;
 * the NUL the kernel appends to path names is not part of the name. */
static void test_odd_name(void **state)
{
	const struct sdiag_sock *d;

	(void)state;
	d = find_named(odd_path, sizeof(odd_path) - 1, SDIAG_SS_CLOSE);
	assert_int_equal(d->table, SDIAG_T_UNIX_DGRAM);
	assert_int_equal(d->type, SOCK_DGRAM);
	assert_int_equal(d->un.name_len, strlen(odd_path));
	assert_non_null(memchr(d->un.name, '"', d->un.name_len));
	assert_non_null(memchr(d->un.name, 0x01, d->un.name_len));
	assert_non_null(memchr(d->un.name, 0xff, d->un.name_len));
	assert_true(d->has & SDIAG_HAS_VFS);
}

static void test_socketpair(void **state)
{
	size_t n = 0;

	(void)state;
	for (size_t i = 0; i < fx.n; i++) {
		const struct sdiag_sock *s = &fx.socks[i], *p;

		if (s->has & SDIAG_HAS_NAME || s->table != SDIAG_T_UNIX_STREAM || !s->un.peer)
			continue;
		p = find_inode(s->un.peer);
		if (p->has & SDIAG_HAS_NAME)
			continue; /* the listener's client */
		assert_int_equal(p->un.peer, s->inode);
		assert_int_equal(s->state, SDIAG_SS_ESTABLISHED);
		n++;
	}
	assert_int_equal(n, 2);
}

/* A deep copy owns its name and icons. */
static void test_dup(void **state)
{
	const struct sdiag_sock *l;
	struct sdiag_sock *c;

	(void)state;
	l = find_named(listen_path, strlen(listen_path), SDIAG_SS_LISTEN);
	c = sdiag_sock_dup(l);
	assert_non_null(c);
	assert_ptr_not_equal(c->un.name, l->un.name);
	assert_memory_equal(c->un.name, listen_path, strlen(listen_path));
	assert_ptr_not_equal(c->un.icons, l->un.icons);
	assert_int_equal(c->un.icons[0], l->un.icons[0]);
	free(c);
}

/* ---- constructed messages ------------------------------------------------------ */

struct ud_msg_bytes {
	uint8_t family, type, state, pad;
	uint32_t ino, cookie[2];
};

static struct nlmsghdr *build(void *buf, uint8_t family, uint8_t type, uint8_t state)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ud_msg_bytes *m;

	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	m = mnl_nlmsg_put_extra_header(nlh, sizeof(*m));
	m->family = family;
	m->type = type;
	m->state = state;
	m->ino = 4242;
	m->cookie[0] = 0x89abcdef;
	m->cookie[1] = 0x01234567;
	return nlh;
}

static void test_fixed_header(void **state)
{
	uint8_t buf[512] __attribute__((aligned(8))) = { 0 };
	struct nlmsghdr *nlh;
	struct sdiag_sock s;

	(void)state;
	nlh = build(buf, AF_UNIX, SOCK_DGRAM, 7);
	assert_int_equal(decode_one(sd_unix_decode, buf, &s), 1);
	assert_int_equal(s.table, SDIAG_T_UNIX_DGRAM);
	assert_int_equal(s.state, SDIAG_SS_CLOSE);
	assert_int_equal(s.inode, 4242);
	assert_int_equal(s.cookie, 0x0123456789abcdefULL);
	assert_int_equal(s.has, SDIAG_HAS_INODE | SDIAG_HAS_COOKIE);

	/* Not ours: other family, other socket type, other message type. */
	build(buf, AF_INET, SOCK_STREAM, 1);
	assert_int_equal(decode_one(sd_unix_decode, buf, &s), 0);
	build(buf, AF_UNIX, SOCK_RAW, 1);
	assert_int_equal(decode_one(sd_unix_decode, buf, &s), 0);
	nlh = build(buf, AF_UNIX, SOCK_STREAM, 1);
	nlh->nlmsg_type = NLMSG_DONE;
	assert_int_equal(decode_one(sd_unix_decode, buf, &s), 0);

	/* Truncated fixed header. */
	nlh = build(buf, AF_UNIX, SOCK_STREAM, 1);
	nlh->nlmsg_len = NLMSG_HDRLEN + 12;
	assert_int_equal(decode_one(sd_unix_decode, buf, &s), -EBADMSG);
}

static void test_attributes(void **state)
{
	uint8_t buf[512] __attribute__((aligned(8))) = { 0 };
	static const char name[] = "\0a\0b"; /* abstract, embedded NUL kept */
	uint32_t icons[3] = { 11, 12, 13 }, mem8[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	uint32_t rq[2] = { 5, 6 }, vfs[2] = { 77, (8u << 20) | 1 };
	struct nlmsghdr *nlh;
	struct sdiag_sock s;

	(void)state;
	nlh = build(buf, AF_UNIX, SOCK_SEQPACKET, 10);
	mnl_attr_put(nlh, 42, 6, "future"); /* unknown: skipped */
	mnl_attr_put(nlh, 0, sizeof(name) - 1, name);
	mnl_attr_put(nlh, 1, sizeof(vfs), vfs);
	mnl_attr_put_u32(nlh, 2, 99);
	mnl_attr_put(nlh, 3, sizeof(icons), icons);
	mnl_attr_put(nlh, 4, sizeof(rq), rq);
	mnl_attr_put(nlh, 5, sizeof(mem8), mem8); /* an older kernel: 8 values */
	mnl_attr_put_u8(nlh, 6, 3);
	mnl_attr_put_u32(nlh, 7, 1000);
	assert_int_equal(decode_one(sd_unix_decode, buf, &s), 1);
	assert_int_equal(s.table, SDIAG_T_UNIX_SEQPACKET);
	assert_int_equal(s.state, SDIAG_SS_LISTEN);
	assert_int_equal(s.un.name_len, 4);
	assert_memory_equal(s.un.name, name, 4);
	assert_int_equal(s.un.vfs_ino, 77);
	assert_int_equal(s.un.vfs_dev, (8u << 20) | 1);
	assert_int_equal(s.un.peer, 99);
	assert_int_equal(s.un.n_icons, 3);
	assert_int_equal(s.un.icons[2], 13);
	assert_int_equal(s.rqueue, 5);
	assert_int_equal(s.wqueue, 6);
	assert_int_equal(t_skmem(&s, SDIAG_SKMEM_BACKLOG), 8);
	assert_int_equal(t_skmem(&s, SDIAG_SKMEM_DROPS), 0);
	assert_int_equal(s.shutdown, 3);
	assert_int_equal(s.uid, 1000);
	assert_int_equal(s.has & (SDIAG_HAS_NAME | SDIAG_HAS_VFS | SDIAG_HAS_PEER |
				  SDIAG_HAS_ICONS | SDIAG_HAS_QUEUES | SDIAG_HAS_SKMEMINFO |
				  SDIAG_HAS_SHUTDOWN | SDIAG_HAS_UID),
			 SDIAG_HAS_NAME | SDIAG_HAS_VFS | SDIAG_HAS_PEER | SDIAG_HAS_ICONS |
				 SDIAG_HAS_QUEUES | SDIAG_HAS_SKMEMINFO | SDIAG_HAS_SHUTDOWN |
				 SDIAG_HAS_UID);
}

static void test_malformed(void **state)
{
	uint8_t buf[512] __attribute__((aligned(8))) = { 0 };
	struct nlmsghdr *nlh;
	struct nlattr *a;
	struct sdiag_sock s;

	(void)state;
	/* A u32 attribute with two bytes. */
	nlh = build(buf, AF_UNIX, SOCK_STREAM, 1);
	mnl_attr_put(nlh, 2, 2, "xx");
	assert_int_equal(decode_one(sd_unix_decode, buf, &s), -EBADMSG);

	/* RQLEN too short. */
	nlh = build(buf, AF_UNIX, SOCK_STREAM, 1);
	mnl_attr_put_u32(nlh, 4, 1);
	assert_int_equal(decode_one(sd_unix_decode, buf, &s), -EBADMSG);

	/* An attribute claiming more bytes than the message has. */
	nlh = build(buf, AF_UNIX, SOCK_STREAM, 1);
	a = mnl_nlmsg_get_payload_tail(nlh);
	mnl_attr_put_u32(nlh, 2, 1);
	a->nla_len = 64;
	assert_int_equal(decode_one(sd_unix_decode, buf, &s), -EBADMSG);

	/* An attribute header shorter than itself. */
	nlh = build(buf, AF_UNIX, SOCK_STREAM, 1);
	a = mnl_nlmsg_get_payload_tail(nlh);
	mnl_attr_put_u32(nlh, 2, 1);
	a->nla_len = 2;
	assert_int_equal(decode_one(sd_unix_decode, buf, &s), -EBADMSG);

	/* Stray bytes after the last attribute. */
	nlh = build(buf, AF_UNIX, SOCK_STREAM, 1);
	mnl_attr_put_u32(nlh, 2, 1);
	nlh->nlmsg_len += 2;
	assert_int_equal(decode_one(sd_unix_decode, buf, &s), -EBADMSG);

	/* The last attribute's padding may be missing (an odd-length name). */
	nlh = build(buf, AF_UNIX, SOCK_STREAM, 1);
	mnl_attr_put(nlh, 0, 3, "abc");
	nlh->nlmsg_len -= 1;
	assert_int_equal(decode_one(sd_unix_decode, buf, &s), 1);
	assert_int_equal(s.un.name_len, 3);
}

static void test_request(void **state)
{
	uint8_t buf[256] __attribute__((aligned(8)));
	struct sd_req r = { .family = AF_UNIX, .states = 0x482, .show = 0 };
	const struct nlmsghdr *nlh;
	const uint8_t *p;
	uint32_t v;

	(void)state;
	memset(buf, 0xaa, sizeof(buf));
	nlh = sd_unix_request(buf, &r);
	assert_ptr_equal(nlh, buf);
	assert_int_equal(nlh->nlmsg_type, SOCK_DIAG_BY_FAMILY);
	assert_int_equal(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_DUMP);
	assert_int_equal(nlh->nlmsg_len, NLMSG_HDRLEN + 24);
	p = mnl_nlmsg_get_payload(nlh);
	assert_int_equal(p[0], AF_UNIX);
	assert_int_equal(p[1], 0);
	memcpy(&v, p + 4, 4);
	assert_int_equal(v, 0x482);
	memcpy(&v, p + 8, 4);
	assert_int_equal(v, 0); /* ino */
	memcpy(&v, p + 12, 4);
	assert_int_equal(v, 0x1 | 0x4 | 0x10 | 0x40); /* NAME PEER RQLEN UID */
	for (int i = 16; i < 24; i++)
		assert_int_equal(p[i], 0); /* cookie */

	r.show = SDIAG_SHOW_EXT | SDIAG_SHOW_MEM;
	nlh = sd_unix_request(buf, &r);
	memcpy(&v, (const uint8_t *)mnl_nlmsg_get_payload(nlh) + 12, 4);
	assert_int_equal(v, 0x7f);
}

int main(void)
{
	const struct CMUnitTest fixture_tests[] = {
		cmocka_unit_test(test_every_record), cmocka_unit_test(test_stream_listener),
		cmocka_unit_test(test_stream_pair),  cmocka_unit_test(test_abstract),
		cmocka_unit_test(test_odd_name),     cmocka_unit_test(test_socketpair),
		cmocka_unit_test(test_dup),
	};
	const struct CMUnitTest built_tests[] = {
		cmocka_unit_test(test_fixed_header),
		cmocka_unit_test(test_attributes),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_request),
	};
	int r;

	r = cmocka_run_group_tests_name("unix fixture", fixture_tests, setup, teardown);
	r += cmocka_run_group_tests_name("unix constructed", built_tests, NULL, NULL);
	return sdiag_test_status(r);
}
