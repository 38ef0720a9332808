/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Live test: unix, netlink and packet sockets in a private network namespace
 * (a fresh one per test) are found with the right fields: unix names, peers,
 * pending connections, vfs inode; netlink protocol, portid, peer, the whole
 * group bitmap, reported once; packet ethertype, device, fanout, ring,
 * multicast list.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tests/test_skip.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "tests/live/live_util.h"
#include "tests/live/netns_util.h"
#include "tests/blob_util.h"

#define TEST_UID 4321

static int setup(void **state)
{
	(void)state;
	netns_enter_private_or_skip();
	return 0;
}

static const struct sdiag_sock *must_find(const struct sdiag_sock_list *l, int fd)
{
	const struct sdiag_sock *s = find_fd_once(l, fd);

	assert_true(s->has & SDIAG_HAS_INODE);
	assert_int_equal(s->inode, fd_inode(fd));
	return s;
}

/* SK_MEMINFO came (SDIAG_SHOW_MEM) and its buffer sizes are the socket's. */
static void assert_skmem(const struct sdiag_sock *s, int fd)
{
	int rcvbuf, sndbuf;
	socklen_t len = sizeof(int);

	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &len), 0);
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &len), 0);
	assert_true(s->has & SDIAG_HAS_SKMEMINFO);
	assert_int_equal(t_skmem(s, SDIAG_SKMEM_RCVBUF), rcvbuf);
	assert_int_equal(t_skmem(s, SDIAG_SKMEM_SNDBUF), sndbuf);
}

/* ---- unix ------------------------------------------------------------------ */

static socklen_t unix_addr(struct sockaddr_un *sun, const char *name, size_t len)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path, name, len);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
}

static void assert_name(const struct sdiag_sock *s, const char *name, size_t len)
{
	assert_true(s->has & SDIAG_HAS_NAME);
	assert_int_equal(s->un.name_len, len);
	assert_memory_equal(s->un.name, name, len);
}

static bool has_icon(const struct sdiag_sock *s, uint64_t ino)
{
	for (size_t i = 0; i < s->un.n_icons; i++)
		if (s->un.icons[i] == ino)
			return true;
	return false;
}

/* A named stream listener, a client queued on it, then accepted. */
static void test_unix_stream(void **state)
{
	struct sdiag_sock_list l = { 0 };
	const struct sdiag_sock *s;
	struct sockaddr_un sun;
	char dir[] = "/tmp/sdiag-live-XXXXXX", path[64];
	struct stat st;
	socklen_t len;
	int lfd, cfd, afd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/listener", dir);
	len = unix_addr(&sun, path, strlen(path));
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sun, len), 0);
	assert_int_equal(listen(lfd, 7), 0);
	cfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(connect(cfd, (struct sockaddr *)&sun, len), 0);
	assert_int_equal(stat(path, &st), 0);

	collect_tables(&l, SDIAG_TABLES_UNIX, SDIAG_SHOW_EXT);
	s = must_find(&l, lfd);
	assert_int_equal(s->table, SDIAG_T_UNIX_STREAM);
	assert_int_equal(s->family, AF_UNIX);
	assert_int_equal(s->type, SOCK_STREAM);
	assert_int_equal(s->state, SDIAG_SS_LISTEN);
	assert_name(s, path, strlen(path));
	assert_true(s->has & SDIAG_HAS_VFS);
	assert_int_equal(s->un.vfs_ino, st.st_ino);
	assert_true(s->has & SDIAG_HAS_ICONS);
	assert_true(has_icon(s, fd_inode(cfd)));
	assert_true(s->has & SDIAG_HAS_QUEUES);
	assert_int_equal(s->rqueue, 1); /* one pending connection, of 7 */
	assert_int_equal(s->wqueue, 7);
	assert_true(s->has & SDIAG_HAS_UID);
	assert_int_equal(s->uid, getuid());
	s = must_find(&l, cfd);
	assert_int_equal(s->state, SDIAG_SS_ESTABLISHED);
	assert_false((s->has & SDIAG_HAS_NAME) && s->un.name_len > 0);
	assert_false(s->has & SDIAG_HAS_SKMEMINFO);
	sdiag_sock_list_free(&l);

	afd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	assert_true(afd >= 0);
	assert_int_equal(send(cfd, "hello", 5, 0), 5);
	collect_tables(&l, SDIAG_TABLE_BIT(SDIAG_T_UNIX_STREAM), SDIAG_SHOW_MEM);
	s = must_find(&l, cfd);
	assert_skmem(s, cfd);
	assert_true(s->has & SDIAG_HAS_PEER);
	assert_int_equal(s->un.peer, fd_inode(afd));
	s = must_find(&l, afd);
	assert_int_equal(s->state, SDIAG_SS_ESTABLISHED);
	assert_int_equal(s->un.peer, fd_inode(cfd));
	assert_name(s, path, strlen(path)); /* the accepted socket shares the name */
	assert_int_equal(s->rqueue, 5);
	s = must_find(&l, lfd);
	assert_int_equal(s->rqueue, 0);
	sdiag_sock_list_free(&l);
	close(afd);
	close(cfd);
	close(lfd);
	unlink(path);
	rmdir(dir);
}

/* Abstract datagram sockets: the name keeps its leading NUL; a connected
 * client names its peer. Only the dgram table is asked for and returned. */
static void test_unix_dgram_abstract(void **state)
{
	static const char name[] = "\0sdiag-live-dgram";
	struct sdiag_sock_list l = { 0 };
	const struct sdiag_sock *s;
	struct sockaddr_un sun;
	socklen_t len = unix_addr(&sun, name, sizeof(name) - 1);
	int sfd, cfd;

	(void)state;
	sfd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(sfd, (struct sockaddr *)&sun, len), 0);
	collect_tables(&l, SDIAG_TABLE_BIT(SDIAG_T_UNIX_DGRAM), 0);
	s = must_find(&l, sfd);
	assert_int_equal(s->table, SDIAG_T_UNIX_DGRAM);
	assert_int_equal(s->type, SOCK_DGRAM);
	assert_int_equal(s->state, SDIAG_SS_CLOSE); /* ss: UNCONN */
	assert_name(s, name, sizeof(name) - 1);
	assert_int_equal(s->un.name[0], 0);
	sdiag_sock_list_free(&l);

	/* (6.18 also marks the server ESTABLISHED once a client connects.) */
	cfd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_int_equal(connect(cfd, (struct sockaddr *)&sun, len), 0);
	collect_tables(&l, SDIAG_TABLE_BIT(SDIAG_T_UNIX_DGRAM), 0);
	s = must_find(&l, sfd);
	assert_name(s, name, sizeof(name) - 1);
	s = must_find(&l, cfd);
	assert_true(s->has & SDIAG_HAS_PEER);
	assert_int_equal(s->un.peer, fd_inode(sfd));
	for (size_t i = 0; i < l.n; i++)
		assert_int_equal(l.socks[i]->table, SDIAG_T_UNIX_DGRAM);
	sdiag_sock_list_free(&l);

	collect_tables(&l, SDIAG_TABLE_BIT(SDIAG_T_UNIX_STREAM), 0);
	assert_null(find_cookie(&l, fd_cookie(sfd)));
	sdiag_sock_list_free(&l);
	close(cfd);
	close(sfd);
}

static void test_unix_seqpacket(void **state)
{
	struct sdiag_sock_list l = { 0 };
	const struct sdiag_sock *s;
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	collect_tables(&l, SDIAG_TABLES_UNIX, 0);
	s = must_find(&l, sv[0]);
	assert_int_equal(s->table, SDIAG_T_UNIX_SEQPACKET);
	assert_int_equal(s->type, SOCK_SEQPACKET);
	assert_int_equal(s->state, SDIAG_SS_ESTABLISHED);
	assert_int_equal(s->un.peer, fd_inode(sv[1]));
	s = must_find(&l, sv[1]);
	assert_int_equal(s->un.peer, fd_inode(sv[0]));
	sdiag_sock_list_free(&l);
	close(sv[0]);
	close(sv[1]);
}

static int make_unix_abstract(void *arg)
{
	struct sockaddr_un sun;
	const char *name = arg;
	socklen_t len = unix_addr(&sun, name, 1 + strlen(name + 1));
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, len) < 0)
		return -errno;
	return fd;
}

static void test_unix_uid(void **state)
{
	struct sdiag_sock_list l = { 0 };
	const struct sdiag_sock *s;
	struct child_sock c;

	(void)state;
	child_sock_start(&c, TEST_UID, make_unix_abstract, "\0sdiag-live-uid");
	collect_tables(&l, SDIAG_TABLES_UNIX, SDIAG_SHOW_EXT);
	s = find_cookie(&l, c.cookie);
	assert_non_null(s);
	assert_int_equal(s->inode, c.inode);
	assert_true(s->has & SDIAG_HAS_UID);
	assert_int_equal(s->uid, TEST_UID);
	sdiag_sock_list_free(&l);
	child_sock_end(&c);
}

/* ---- netlink ----------------------------------------------------------------- */

static int nl_socket(int proto, uint32_t groups)
{
	struct sockaddr_nl snl = { .nl_family = AF_NETLINK, .nl_groups = groups };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, proto);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&snl, sizeof(snl)), 0);
	return fd;
}

static uint32_t nl_portid(int fd)
{
	struct sockaddr_nl snl;
	socklen_t len = sizeof(snl);

	assert_int_equal(getsockname(fd, (struct sockaddr *)&snl, &len), 0);
	return snl.nl_pid;
}

static bool in_group(const struct sdiag_sock *s, unsigned g)
{
	size_t w = (g - 1) / 32;

	return w < s->nl.n_group_words && (s->nl.groups[w] >> ((g - 1) % 32) & 1);
}

static size_t group_count(const struct sdiag_sock *s)
{
	size_t n = 0;

	for (size_t w = 0; w < s->nl.n_group_words; w++)
		n += (size_t)__builtin_popcount(s->nl.groups[w]);
	return n;
}

/* A bound route socket subscribed to groups 1 and 5 at bind and 35 (beyond
 * the first word; 33 on 5.10, asked of the kernel) by setsockopt: reported
 * once, with all three groups. */
static void test_netlink_route_groups(void **state)
{
	struct sdiag_sock_list l = { 0 };
	const struct sdiag_sock *s;
	unsigned g;
	int fd, one = 1;

	(void)state;
	fd = nl_socket(NETLINK_ROUTE, RTMGRP_LINK | RTMGRP_IPV4_IFADDR);
	g = rtnl_high_group(fd);
	if (!g) {
		close(fd);
		SDIAG_SKIP("rtnl-groups", "this kernel has no rtnetlink group above 32 "
			   "(EINVAL for 33 to 35; Linux 5.8 and later have RTNLGRP_BRVLAN, 33)");
	}
	assert_int_equal(setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof(one)), 0);

	collect_tables(&l, SDIAG_TABLE_BIT(SDIAG_T_NETLINK), SDIAG_SHOW_ALL);
	s = must_find(&l, fd); /* exactly once, despite the kernel's double report */
	assert_int_equal(s->table, SDIAG_T_NETLINK);
	assert_int_equal(s->family, AF_NETLINK);
	assert_int_equal(s->type, SOCK_RAW);
	assert_int_equal(s->protocol, NETLINK_ROUTE);
	assert_int_equal(s->nl.portid, nl_portid(fd));
	assert_true(s->has & SDIAG_HAS_GROUPS);
	assert_true(s->nl.n_group_words >= 2);
	assert_true(in_group(s, RTNLGRP_LINK));
	assert_true(in_group(s, RTNLGRP_IPV4_IFADDR));
	assert_true(in_group(s, g));
	assert_int_equal(group_count(s), 3);
	assert_true(s->has & SDIAG_HAS_NL_FLAGS);
	assert_true(s->nl.flags & 0x8); /* NDIAG_FLAG_NO_ENOBUFS */
	assert_string_equal(sdiag_netlink_proto_name(s->protocol), "route");
	assert_skmem(s, fd);
	sdiag_sock_list_free(&l);
	close(fd);
}

/* Generic netlink, a connected user socket, and an unbound socket that only
 * joined a group (portid 0, seen only in the kernel's multicast walk). */
static void test_netlink_misc(void **state)
{
	struct sockaddr_nl peer = { .nl_family = AF_NETLINK };
	struct sdiag_sock_list l = { 0 };
	const struct sdiag_sock *s;
	int gen, srv, cli, lst, g = 3;

	(void)state;
	gen = nl_socket(NETLINK_GENERIC, 0);
	srv = nl_socket(NETLINK_USERSOCK, 0);
	cli = nl_socket(NETLINK_USERSOCK, 0);
	peer.nl_pid = nl_portid(srv);
	assert_int_equal(connect(cli, (struct sockaddr *)&peer, sizeof(peer)), 0);
	lst = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_ROUTE);
	assert_true(lst >= 0);
	assert_int_equal(setsockopt(lst, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &g, sizeof(g)), 0);

	collect_tables(&l, SDIAG_TABLE_BIT(SDIAG_T_NETLINK), SDIAG_SHOW_ALL);
	s = must_find(&l, gen);
	assert_int_equal(s->protocol, NETLINK_GENERIC);
	assert_int_equal(s->nl.portid, nl_portid(gen));
	assert_string_equal(sdiag_netlink_proto_name(s->protocol), "generic");
	assert_false((s->has & SDIAG_HAS_GROUPS) && group_count(s) > 0);
	s = must_find(&l, cli);
	assert_int_equal(s->protocol, NETLINK_USERSOCK);
	assert_int_equal(s->state, SDIAG_SS_ESTABLISHED); /* connect()ed */
	assert_int_equal(s->nl.dst_portid, nl_portid(srv));
	assert_int_equal(s->nl.dst_group, 0);
	s = must_find(&l, srv);
	assert_int_equal(s->state, SDIAG_SS_CLOSE); /* never connected */
	s = must_find(&l, lst);
	assert_int_equal(s->type, SOCK_DGRAM);
	assert_int_equal(s->nl.portid, nl_portid(lst));
	assert_true(in_group(s, 3));
	assert_int_equal(group_count(s), 1);
	/* The kernel's own socket of each protocol: portid 0, type DGRAM. */
	bool kernel_route = false;

	for (size_t i = 0; i < l.n; i++)
		if (l.socks[i]->protocol == NETLINK_ROUTE && l.socks[i]->nl.portid == 0 &&
		    l.socks[i]->type == SOCK_DGRAM && l.socks[i]->cookie != fd_cookie(lst))
			kernel_route = true;
	assert_true(kernel_route);
	sdiag_sock_list_free(&l);
	close(lst);
	close(cli);
	close(srv);
	close(gen);
}

/* Many bound and subscribed sockets, each reported twice by the kernel: the
 * library's cookie set must grow (and rehash) and still report each once. */
static void test_netlink_many(void **state)
{
	enum { N = 700 };
	struct sdiag_sock_list l = { 0 };
	int *fds = calloc(N, sizeof(int));

	(void)state;
	assert_non_null(fds);
	raise_nofile();
	for (int i = 0; i < N; i++)
		fds[i] = nl_socket(NETLINK_ROUTE, RTMGRP_LINK);
	collect_tables(&l, SDIAG_TABLE_BIT(SDIAG_T_NETLINK), 0);
	for (int i = 0; i < N; i++) {
		const struct sdiag_sock *s = must_find(&l, fds[i]);

		assert_int_equal(s->nl.portid, nl_portid(fds[i]));
	}
	sdiag_sock_list_free(&l);
	for (int i = 0; i < N; i++)
		close(fds[i]);
	free(fds);
}

static int make_netlink(void *arg)
{
	struct sockaddr_nl snl = { .nl_family = AF_NETLINK };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, *(int *)arg);

	if (fd < 0 || bind(fd, (struct sockaddr *)&snl, sizeof(snl)) < 0)
		return -errno;
	return fd;
}

/* netlink_diag has no uid: the record must not claim one; the inode still
 * identifies a socket owned by another user. */
static void test_netlink_other_user(void **state)
{
	struct sdiag_sock_list l = { 0 };
	const struct sdiag_sock *s;
	struct child_sock c;
	int proto = NETLINK_GENERIC;

	(void)state;
	child_sock_start(&c, TEST_UID, make_netlink, &proto);
	collect_tables(&l, SDIAG_TABLE_BIT(SDIAG_T_NETLINK), SDIAG_SHOW_ALL);
	s = find_cookie(&l, c.cookie);
	assert_non_null(s);
	assert_int_equal(s->inode, c.inode);
	assert_int_equal(s->protocol, NETLINK_GENERIC);
	assert_true(s->nl.portid != 0);
	assert_false(s->has & SDIAG_HAS_UID);
	sdiag_sock_list_free(&l);
	child_sock_end(&c);
}

/* ---- packet ------------------------------------------------------------------- */

static int packet_socket(int type, uint16_t proto, const char *dev)
{
	int fd = socket(AF_PACKET, type | SOCK_CLOEXEC, htons(proto));

	assert_true(fd >= 0);
	if (dev) {
		struct sockaddr_ll sll = { .sll_family = AF_PACKET,
					   .sll_protocol = htons(proto),
					   .sll_ifindex = (int)if_nametoindex(dev) };

		assert_int_equal(bind(fd, (struct sockaddr *)&sll, sizeof(sll)), 0);
	}
	return fd;
}

static void test_packet(void **state)
{
	struct sdiag_sock_list l = { 0 };
	const struct sdiag_sock *s;
	unsigned lo = if_nametoindex("lo");
	struct tpacket_req req = {
		.tp_block_size = 4096, .tp_block_nr = 2, .tp_frame_size = 2048, .tp_frame_nr = 4
	};
	struct packet_mreq mr = { .mr_ifindex = (int)lo, .mr_type = PACKET_MR_PROMISC };
	int all, ip, fan, fanout = 77 | PACKET_FANOUT_HASH << 16;
	/* ldh [12]; jeq #0x800, accept, drop; ret #0xffff; ret #0 */
	struct sock_filter prog[] = {
		{ 0x28, 0, 0, 12 },
		{ 0x15, 0, 1, ETH_P_IP },
		{ 0x06, 0, 0, 0xffff },
		{ 0x06, 0, 0, 0 },
	};
	struct sock_fprog fprog = { .len = sizeof(prog) / sizeof(prog[0]), .filter = prog };

	(void)state;
	all = packet_socket(SOCK_RAW, ETH_P_ALL, NULL);
	assert_int_equal(setsockopt(all, SOL_SOCKET, SO_ATTACH_FILTER, &fprog, sizeof(fprog)), 0);
	ip = packet_socket(SOCK_DGRAM, ETH_P_IP, "lo");
	assert_int_equal(setsockopt(ip, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)), 0);
	assert_int_equal(setsockopt(ip, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)), 0);
	fan = packet_socket(SOCK_RAW, ETH_P_IPV6, "lo");
	assert_int_equal(setsockopt(fan, SOL_PACKET, PACKET_FANOUT, &fanout, sizeof(fanout)), 0);

	collect_tables(&l, SDIAG_TABLES_PACKET, SDIAG_SHOW_ALL);
	s = must_find(&l, all);
	assert_int_equal(s->table, SDIAG_T_PACKET_RAW);
	assert_int_equal(s->family, AF_PACKET);
	assert_int_equal(s->type, SOCK_RAW);
	assert_int_equal(s->pkt.ethertype, ETH_P_ALL);
	assert_true(s->has & SDIAG_HAS_PKT_INFO);
	assert_int_equal(s->pkt.info.index, 0);
	assert_true(s->has & SDIAG_HAS_UID);
	assert_int_equal(s->uid, getuid());
	assert_false(s->has & SDIAG_HAS_FANOUT);
	assert_false(s->has & SDIAG_HAS_RX_RING);
	assert_skmem(s, all);

	s = must_find(&l, ip);
	assert_int_equal(s->table, SDIAG_T_PACKET_DGRAM);
	assert_int_equal(s->type, SOCK_DGRAM);
	assert_int_equal(s->pkt.ethertype, ETH_P_IP);
	assert_int_equal(s->pkt.info.index, lo);
	assert_true(s->has & SDIAG_HAS_RX_RING);
	assert_int_equal(s->pkt.rx_ring.block_size, req.tp_block_size);
	assert_int_equal(s->pkt.rx_ring.block_nr, req.tp_block_nr);
	assert_int_equal(s->pkt.rx_ring.frame_size, req.tp_frame_size);
	assert_int_equal(s->pkt.rx_ring.frame_nr, req.tp_frame_nr);
	assert_false(s->has & SDIAG_HAS_TX_RING);
	assert_true(s->has & SDIAG_HAS_MCLIST);
	assert_int_equal(s->pkt.n_mclist, 1);
	assert_int_equal(s->pkt.mclist[0].index, lo);
	assert_int_equal(s->pkt.mclist[0].type, PACKET_MR_PROMISC);
	assert_int_equal(s->pkt.mclist[0].count, 1);

	s = must_find(&l, fan);
	assert_int_equal(s->pkt.ethertype, ETH_P_IPV6);
	assert_true(s->has & SDIAG_HAS_FANOUT);
	assert_int_equal(s->pkt.fanout, (uint32_t)fanout);
	assert_false(s->has & SDIAG_HAS_FILTER);
	/* The classic BPF program, instruction for instruction (root sees it). */
	s = must_find(&l, all);
	assert_true(s->has & SDIAG_HAS_FILTER);
	assert_int_equal(s->pkt.n_filter, sizeof(prog) / sizeof(prog[0]));
	assert_memory_equal(s->pkt.filter, prog, sizeof(prog));
	sdiag_sock_list_free(&l);

	collect_tables(&l, SDIAG_TABLE_BIT(SDIAG_T_PACKET_RAW), 0);
	assert_non_null(find_cookie(&l, fd_cookie(all)));
	assert_null(find_cookie(&l, fd_cookie(ip)));
	sdiag_sock_list_free(&l);
	close(fan);
	close(ip);
	close(all);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_unix_stream, setup),
		cmocka_unit_test_setup(test_unix_dgram_abstract, setup),
		cmocka_unit_test_setup(test_unix_seqpacket, setup),
		cmocka_unit_test_setup(test_unix_uid, setup),
		cmocka_unit_test_setup(test_netlink_route_groups, setup),
		cmocka_unit_test_setup(test_netlink_misc, setup),
		cmocka_unit_test_setup(test_netlink_many, setup),
		cmocka_unit_test_setup(test_netlink_other_user, setup),
		cmocka_unit_test_setup(test_packet, setup),
	};

	return sdiag_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
