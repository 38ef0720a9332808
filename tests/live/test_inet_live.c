/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Live test: real TCP, UDP, UDP-Lite and MPTCP sockets in a private network
 * namespace (a fresh one per test) are found by sdiag_collect with the fields
 * the kernel and the sockets themselves agree on: addresses, ports, states,
 * inode (fstat), cookie (SO_COOKIE), uid, queues, mark, TOS, bound device,
 * tcp_info only when asked for.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tests/test_skip.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/netlink.h>

#include "lib/core/internal.h"
#include "lib/family/family.h"
#include "tests/live/live_util.h"
#include "tests/live/netns_util.h"
#include "tests/blob_util.h"

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif
#ifndef IPPROTO_UDPLITE
#define IPPROTO_UDPLITE 136
#endif

#define T_TCP SDIAG_TABLE_BIT(SDIAG_T_TCP)
#define TEST_UID 4321

static int setup(void **state)
{
	(void)state;
	netns_enter_private_or_skip();
	return 0;
}


/* Fields every full inet socket must carry. */
static void check_common(const struct sdiag_sock *s, int fd, enum sdiag_table t, int family)
{
	assert_int_equal(s->table, t);
	assert_int_equal(s->family, family);
	assert_true(s->has & SDIAG_HAS_INODE);
	assert_int_equal(s->inode, fd_inode(fd));
	assert_true(s->has & SDIAG_HAS_UID);
	assert_int_equal(s->uid, getuid());
}

static void wait_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	assert_int_equal(poll(&p, 1, 2000), 1);
}

static void tcp_pair_family(int family, const char *addr)
{
	struct sdiag_sock_list l = { 0 };
	const struct sdiag_sock *s;
	char data[100] = { 0 };
	int lfd, cfd, afd;
	uint16_t cport;

	lfd = stream_listen(family, 0, addr, 5001, 16);
	cfd = stream_connect(family, 0, addr, 5001);
	afd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	assert_true(afd >= 0);
	cport = fd_port(cfd);
	assert_int_equal(send(cfd, data, sizeof(data), 0), sizeof(data));
	wait_readable(afd);

	collect_tables(&l, T_TCP, 0);
	s = find_fd_once(&l, lfd);
	check_common(s, lfd, SDIAG_T_TCP, family);
	assert_int_equal(s->state, SDIAG_SS_LISTEN);
	assert_int_equal(s->protocol, IPPROTO_TCP);
	assert_int_equal(s->type, SOCK_STREAM);
	assert_int_equal(s->inet.sport, 5001);
	assert_int_equal(s->inet.dport, 0);
	assert_addr(s->inet.src, family, addr);
	assert_addr(s->inet.dst, family, family == AF_INET ? "0.0.0.0" : "::");
	/* A listener's queues are the accept backlog: now 0 of 16. */
	assert_true(s->has & SDIAG_HAS_QUEUES);
	assert_int_equal(s->rqueue, 0);
	assert_int_equal(s->wqueue, 16);

	s = find_fd_once(&l, cfd);
	check_common(s, cfd, SDIAG_T_TCP, family);
	assert_int_equal(s->state, SDIAG_SS_ESTABLISHED);
	assert_int_equal(s->inet.sport, cport);
	assert_int_equal(s->inet.dport, 5001);
	assert_addr(s->inet.src, family, addr);
	assert_addr(s->inet.dst, family, addr);

	s = find_fd_once(&l, afd);
	check_common(s, afd, SDIAG_T_TCP, family);
	assert_int_equal(s->state, SDIAG_SS_ESTABLISHED);
	assert_int_equal(s->inet.sport, 5001);
	assert_int_equal(s->inet.dport, cport);
	assert_int_equal(s->rqueue, sizeof(data)); /* sent, not read */
	sdiag_sock_list_free(&l);

	/* The other address family's dump must not see these sockets. */
	SDIAG_OPTS(sdiag_query, q,
			.tables = T_TCP,
			.afs = family == AF_INET ? SDIAG_AF_INET6 : SDIAG_AF_INET);
	struct sdiag_handle *h;

	assert_int_equal(sdiag_open(&h), 0);
	assert_int_equal(sdiag_collect(h, &q, &l), 0);
	assert_null(find_cookie(&l, fd_cookie(lfd)));
	assert_null(find_cookie(&l, fd_cookie(cfd)));
	sdiag_sock_list_free(&l);
	/* A LISTEN-only query sees the listener, not the connections. */
	q.afs = 0;
	q.states = SDIAG_STATE_BIT(SDIAG_SS_LISTEN);
	assert_int_equal(sdiag_collect(h, &q, &l), 0);
	assert_non_null(find_cookie(&l, fd_cookie(lfd)));
	assert_null(find_cookie(&l, fd_cookie(cfd)));
	assert_null(find_cookie(&l, fd_cookie(afd)));
	for (size_t i = 0; i < l.n; i++)
		assert_int_equal(l.socks[i]->state, SDIAG_SS_LISTEN);
	sdiag_sock_list_free(&l);
	sdiag_close(h);
	close(afd);
	close(cfd);
	close(lfd);
}

/* ---- the transport's look-ahead (sd_nl_dump's ahead) ---------------------------- */

#define AHEAD_PAIRS 300
#define AHEAD_MAX (2 * AHEAD_PAIRS + 8)

struct ahead_log {
	uint64_t peeked[AHEAD_MAX];	/* sd_inet_peek_inode of each message ahead saw */
	size_t nahead, ncb;
	size_t max_lead;		/* most messages ahead saw that cb had not yet */
};

static int log_ahead(const struct nlmsghdr *nlh, void *data)
{
	struct ahead_log *a = data;

	assert_true(a->nahead < AHEAD_MAX);
	a->peeked[a->nahead++] = sd_inet_peek_inode(nlh);
	return 0;
}

static int log_cb(const struct nlmsghdr *nlh, void *data)
{
	struct ahead_log *a = data;
	struct sdiag_sock s;

	memset(&s, 0, sizeof(s));
	s.protocol = IPPROTO_TCP;
	assert_int_equal(sd_inet_decode(nlh, &s), 1);
	/* ahead saw this very message first, and peeked the inode decode finds. */
	assert_true(a->ncb < a->nahead);
	assert_int_equal(a->peeked[a->ncb], s.inode);
	if (a->nahead - a->ncb > a->max_lead)
		a->max_lead = a->nahead - a->ncb;
	a->ncb++;
	return 0;
}

/* Every data message goes through ahead, then cb, in the same order; ahead
 * sees a whole datagram before cb sees its first message. 600 sockets take
 * more than one 64 KiB datagram. */
static void test_dump_ahead(void **state)
{
	static struct ahead_log a;
	struct sd_req req = { .family = AF_INET,
			      .protocol = IPPROTO_TCP,
			      .states = SDIAG_STATES_ALL,
			      .show = SDIAG_SHOW_ALL,
			      .tables = T_TCP };
	int lfd, fds[2 * AHEAD_PAIRS];
	struct sd_nl *nl = NULL;

	(void)state;
	memset(&a, 0, sizeof(a));
	raise_nofile();
	lfd = stream_listen(AF_INET, 0, "127.0.0.1", 5001, AHEAD_PAIRS);
	for (int i = 0; i < AHEAD_PAIRS; i++) {
		fds[2 * i] = stream_connect(AF_INET, 0, "127.0.0.1", 5001);
		fds[2 * i + 1] = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		assert_true(fds[2 * i + 1] >= 0);
	}
	assert_int_equal(sd_nl_open(&nl), 0);
	assert_non_null(sd_inet_request(sd_nl_reqbuf(nl, NULL), &req));
	assert_int_equal(sd_nl_dump(nl, log_ahead, log_cb, &a), 0);
	assert_int_equal(a.ncb, 2 * AHEAD_PAIRS + 1);
	assert_int_equal(a.nahead, a.ncb);
	assert_true(a.max_lead > 8); /* ~60 sockets a datagram with every attribute */
	/* A message too short to hold an inet_diag_msg has no inode to peek. */
	struct nlmsghdr shortmsg = { .nlmsg_len = sizeof(shortmsg) + 8 };

	assert_int_equal(sd_inet_peek_inode(&shortmsg), 0);
	sd_nl_close(nl);
	for (int i = 0; i < 2 * AHEAD_PAIRS; i++)
		close(fds[i]);
	close(lfd);
}

static void test_tcp_ipv4(void **state)
{
	(void)state;
	tcp_pair_family(AF_INET, "127.0.0.1");
}

static void test_tcp_ipv6(void **state)
{
	(void)state;
	tcp_pair_family(AF_INET6, "::1");
}

/* tcp_info and congestion control come with SDIAG_SHOW_INFO and only then;
 * tcp_info alone with SDIAG_SHOW_TCP_INFO. */
static void test_tcp_info(void **state)
{
	struct sdiag_sock_list l = { 0 };
	const struct sdiag_sock *s;
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	char cong[16] = { 0 };
	int lfd, cfd, afd;

	(void)state;
	lfd = stream_listen(AF_INET, 0, "127.0.0.1", 5002, 8);
	cfd = stream_connect(AF_INET, 0, "127.0.0.1", 5002);
	afd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	assert_true(afd >= 0);

	collect_tables(&l, T_TCP, 0);
	s = find_fd_once(&l, cfd);
	assert_false(s->has & SDIAG_HAS_TCP_INFO);
	assert_false(s->has & SDIAG_HAS_CONG);
	sdiag_sock_list_free(&l);

	collect_tables(&l, T_TCP, SDIAG_SHOW_INFO);
	s = find_fd_once(&l, cfd);
	assert_true(s->has & SDIAG_HAS_TCP_INFO);
	assert_int_equal(getsockopt(cfd, IPPROTO_TCP, TCP_INFO, &ti, &len), 0);
	assert_int_equal(t_tcp_info(s).tcpi_state, SDIAG_SS_ESTABLISHED);
	assert_int_equal(t_tcp_info(s).tcpi_snd_mss, ti.tcpi_snd_mss);
	assert_int_equal(t_tcp_info(s).tcpi_rcv_mss, ti.tcpi_rcv_mss);
	assert_int_equal(t_tcp_info(s).tcpi_options, ti.tcpi_options);
	assert_int_equal(t_tcp_info(s).tcpi_advmss, ti.tcpi_advmss);
	assert_true(t_tcp_info(s).tcpi_snd_cwnd > 0);
	assert_true(s->has & SDIAG_HAS_CONG);
	len = sizeof(cong) - 1;
	assert_int_equal(getsockopt(cfd, IPPROTO_TCP, TCP_CONGESTION, cong, &len), 0);
	assert_string_equal(s->inet.cong, cong);
	/* A listener has tcp_info too (state LISTEN). */
	s = find_fd_once(&l, lfd);
	assert_true(s->has & SDIAG_HAS_TCP_INFO);
	assert_int_equal(t_tcp_info(s).tcpi_state, SDIAG_SS_LISTEN);
	sdiag_sock_list_free(&l);

	/* SDIAG_SHOW_TCP_INFO: the same tcp_info, no congestion control. */
	collect_tables(&l, T_TCP, SDIAG_SHOW_TCP_INFO);
	s = find_fd_once(&l, cfd);
	assert_true(s->has & SDIAG_HAS_TCP_INFO);
	assert_false(s->has & SDIAG_HAS_CONG);
	assert_int_equal(t_tcp_info(s).tcpi_state, SDIAG_SS_ESTABLISHED);
	assert_int_equal(t_tcp_info(s).tcpi_snd_mss, ti.tcpi_snd_mss);
	assert_int_equal(t_tcp_info(s).tcpi_advmss, ti.tcpi_advmss);
	sdiag_sock_list_free(&l);
	close(afd);
	close(cfd);
	close(lfd);
}

/* The cgroup v2 id of this process (the inode of its cgroup directory), or 0
 * when cgroup2 is not mounted. */
static uint64_t own_cgroup_id(void)
{
	char line[512], mnt[256] = "", rel[512] = "", path[800];
	struct stat st;
	FILE *f;

	f = fopen("/proc/self/mountinfo", "re");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char m[256], fstype[64];

		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS... - FSTYPE ... */
		if (sscanf(line, "%*s %*s %*s %*s %255s", m) == 1 && strstr(line, " - cgroup2 ") &&
		    sscanf(strstr(line, " - ") + 3, "%63s", fstype) == 1) {
			snprintf(mnt, sizeof(mnt), "%s", m);
			break;
		}
	}
	fclose(f);
	f = fopen("/proc/self/cgroup", "re");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			snprintf(rel, sizeof(rel), "%s", line + 3);
			rel[strcspn(rel, "\n")] = '\0';
		}
	fclose(f);
	if (!mnt[0] || !rel[0])
		return 0;
	snprintf(path, sizeof(path), "%s%s", mnt, rel);
	if (stat(path, &st) < 0)
		return 0;
	return st.st_ino;
}

/* Attributes every full TCP socket carries, checked against the socket:
 * shutdown, cgroup, socket options, keepalive timer, and with
 * SDIAG_SHOW_MEM the buffer sizes. */
static void test_tcp_details(void **state)
{
	struct sdiag_sock_list l = { 0 };
	const struct sdiag_sock *s;
	int lfd, cfd, afd, one = 1, idle = 600, rcvbuf, sndbuf;
	socklen_t len = sizeof(int);
	uint64_t cg = own_cgroup_id();

	(void)state;
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(setsockopt(lfd, IPPROTO_IP, IP_FREEBIND, &one, sizeof(one)), 0);
	struct sockaddr_storage ss;
	socklen_t alen = make_addr(&ss, AF_INET, "127.0.0.1", 5040);

	assert_int_equal(bind(lfd, (struct sockaddr *)&ss, alen), 0);
	assert_int_equal(listen(lfd, 4), 0);
	cfd = stream_connect(AF_INET, 0, "127.0.0.1", 5040);
	afd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	assert_true(afd >= 0);
	assert_int_equal(setsockopt(afd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)), 0);
	assert_int_equal(setsockopt(afd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one)), 0);
	assert_int_equal(shutdown(cfd, SHUT_WR), 0);
	wait_readable(afd);
	/* The peer's ACK of our FIN may still be in flight: wait for FIN-WAIT-2. */
	for (int i = 0; i < 200; i++) {
		struct tcp_info ti;
		socklen_t tl = sizeof(ti);

		if (getsockopt(cfd, IPPROTO_TCP, TCP_INFO, &ti, &tl) == 0 &&
		    ti.tcpi_state == TCP_FIN_WAIT2)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 5 * 1000 * 1000 }, NULL);
	}
	assert_int_equal(getsockopt(afd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &len), 0);
	assert_int_equal(getsockopt(afd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &len), 0);

	collect_tables(&l, T_TCP, SDIAG_SHOW_MEM);
	s = find_fd_once(&l, cfd);
	assert_true(s->has & SDIAG_HAS_SHUTDOWN);
	assert_int_equal(s->shutdown, 2); /* send side shut */
	assert_int_equal(s->state, SDIAG_SS_FIN_WAIT2);
	if (cg) {
		assert_true(s->has & SDIAG_HAS_CGROUP);
		assert_int_equal(s->inet.cgroup_id, cg);
	} else {
		fprintf(stderr, "cgroup2 not mounted: cgroup id not checked\n");
	}
	s = find_fd_once(&l, afd);
	assert_int_equal(s->state, SDIAG_SS_CLOSE_WAIT);
	assert_int_equal(s->shutdown, 1);   /* the peer's FIN shut the receive side */
	assert_int_equal(s->inet.timer, 2); /* keepalive */
	assert_true(s->inet.expires_ms > 500 * 1000 && s->inet.expires_ms <= 600 * 1000);
	assert_true(s->has & SDIAG_HAS_SKMEMINFO);
	assert_int_equal(t_skmem(s, SDIAG_SKMEM_RCVBUF), rcvbuf);
	assert_int_equal(t_skmem(s, SDIAG_SKMEM_SNDBUF), sndbuf);
	assert_true(s->has & SDIAG_HAS_MEMINFO);
	s = find_fd_once(&l, lfd);
	assert_true(s->has & SDIAG_HAS_SOCKOPT);
	assert_true(s->inet.sockopt & SDIAG_SOCKOPT_FREEBIND);
	assert_true(s->inet.sockopt & SDIAG_SOCKOPT_IS_ICSK);
	s = find_fd_once(&l, cfd);
	assert_false(s->inet.sockopt & SDIAG_SOCKOPT_FREEBIND);
	sdiag_sock_list_free(&l);

	collect_tables(&l, T_TCP, 0);
	s = find_fd_once(&l, afd);
	assert_false(s->has & SDIAG_HAS_SKMEMINFO);
	sdiag_sock_list_free(&l);
	close(afd);
	close(cfd);
	close(lfd);
}

/* Poll the dump until the socket with this cookie reaches state (2 s). */
static void wait_tcp_state(struct sdiag_sock_list *l, uint64_t cookie, int state)
{
	for (int i = 0; i < 200; i++) {
		const struct sdiag_sock *s;

		collect_tables(l, T_TCP, 0);
		s = find_cookie(l, cookie);
		if (s && s->state == state)
			return;
		sdiag_sock_list_free(l);
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
	fail_msg("cookie %llu never reached state %d", (unsigned long long)cookie, state);
}

/* The active closer ends in TIME-WAIT: no inode, the full socket's cookie,
 * and hidden from the default (connected) state selection. */
static void test_tcp_time_wait(void **state)
{
	struct sdiag_sock_list l = { 0 };
	const struct sdiag_sock *s;
	int lfd, cfd, afd;
	uint64_t cookie;
	uint16_t cport;
	char c;

	(void)state;
	lfd = stream_listen(AF_INET6, 0, "::1", 5003, 8);
	cfd = stream_connect(AF_INET6, 0, "::1", 5003);
	afd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	assert_true(afd >= 0);
	cookie = fd_cookie(cfd);
	cport = fd_port(cfd);
	close(cfd);
	wait_readable(afd);
	assert_int_equal(read(afd, &c, 1), 0);
	close(afd);

	wait_tcp_state(&l, cookie, SDIAG_SS_TIME_WAIT);
	s = find_cookie(&l, cookie);
	assert_int_equal(count_cookie(&l, cookie), 1);
	assert_int_equal(s->family, AF_INET6);
	assert_int_equal(s->inet.sport, cport);
	assert_int_equal(s->inet.dport, 5003);
	assert_addr(s->inet.src, AF_INET6, "::1");
	assert_addr(s->inet.dst, AF_INET6, "::1");
	assert_int_equal(s->inode, 0);
	assert_int_equal(s->inet.timer, 3); /* the TIME-WAIT timer */
	sdiag_sock_list_free(&l);

	SDIAG_OPTS(sdiag_query, q, .tables = T_TCP, .states = SDIAG_STATES_CONNECTED);
	struct sdiag_handle *h;

	assert_int_equal(sdiag_open(&h), 0);
	assert_int_equal(sdiag_collect(h, &q, &l), 0);
	assert_null(find_cookie(&l, cookie));
	sdiag_sock_list_free(&l);
	sdiag_close(h);
	close(lfd);
}

/* A SYN to a listener whose accept queue is full is dropped, so the client
 * stays in SYN-SENT with its retransmit timer running. */
static void test_tcp_syn_sent(void **state)
{
	struct sdiag_sock_list l = { 0 };
	struct sockaddr_storage ss;
	socklen_t len = make_addr(&ss, AF_INET, "127.0.0.1", 5004);
	const struct sdiag_sock *s;
	int lfd, c1, c2;

	(void)state;
	lfd = stream_listen(AF_INET, 0, "127.0.0.1", 5004, 0);
	c1 = stream_connect(AF_INET, 0, "127.0.0.1", 5004); /* fills the queue */
	c2 = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	assert_true(c2 >= 0);
	assert_int_equal(connect(c2, (struct sockaddr *)&ss, len), -1);
	assert_int_equal(errno, EINPROGRESS);
	nanosleep(&(struct timespec){ .tv_nsec = 50 * 1000 * 1000 }, NULL);

	collect_tables(&l, T_TCP, 0);
	s = find_fd_once(&l, c2);
	check_common(s, c2, SDIAG_T_TCP, AF_INET);
	assert_int_equal(s->state, SDIAG_SS_SYN_SENT);
	assert_int_equal(s->inet.dport, 5004);
	assert_int_equal(s->inet.sport, fd_port(c2));
	assert_int_equal(s->inet.timer, 1); /* retransmit */
	/* At most TCP_RTO_MAX away; 0 when the timer is due but has not run
	 * yet, which a loaded machine (or ASan) makes happen. */
	assert_true(s->inet.expires_ms <= 120000);
	s = find_fd_once(&l, lfd);
	assert_int_equal(s->rqueue, 1); /* c1, waiting to be accepted */
	assert_int_equal(s->wqueue, 0);
	sdiag_sock_list_free(&l);
	close(c2);
	close(c1);
	close(lfd);
}

static int udp_socket(int family, int proto, const char *addr, uint16_t port)
{
	struct sockaddr_storage ss;
	socklen_t len = make_addr(&ss, family, addr, port);
	int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, proto);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&ss, len), 0);
	return fd;
}

static void test_udp(void **state)
{
	struct sdiag_sock_list l = { 0 };
	struct sockaddr_storage ss;
	socklen_t len;
	const struct sdiag_sock *s;
	int b4, c6, s6;

	(void)state;
	b4 = udp_socket(AF_INET, 0, "127.0.0.1", 6001);
	s6 = udp_socket(AF_INET6, 0, "::1", 6002);
	c6 = udp_socket(AF_INET6, 0, "::1", 0);
	len = make_addr(&ss, AF_INET6, "::1", 6002);
	assert_int_equal(connect(c6, (struct sockaddr *)&ss, len), 0);
	assert_int_equal(send(c6, "x", 1, 0), 1);
	wait_readable(s6);

	collect_tables(&l, SDIAG_TABLE_BIT(SDIAG_T_UDP), 0);
	s = find_fd_once(&l, b4);
	check_common(s, b4, SDIAG_T_UDP, AF_INET);
	assert_int_equal(s->protocol, IPPROTO_UDP);
	assert_int_equal(s->type, SOCK_DGRAM);
	assert_int_equal(s->state, SDIAG_SS_CLOSE); /* ss: UNCONN */
	assert_int_equal(s->inet.sport, 6001);
	assert_int_equal(s->inet.dport, 0);
	assert_addr(s->inet.src, AF_INET, "127.0.0.1");

	s = find_fd_once(&l, c6);
	check_common(s, c6, SDIAG_T_UDP, AF_INET6);
	assert_int_equal(s->state, SDIAG_SS_ESTABLISHED);
	assert_int_equal(s->inet.sport, fd_port(c6));
	assert_int_equal(s->inet.dport, 6002);
	assert_addr(s->inet.dst, AF_INET6, "::1");

	s = find_fd_once(&l, s6);
	assert_int_equal(s->state, SDIAG_SS_CLOSE);
	assert_true(s->rqueue > 0); /* one unread datagram */
	sdiag_sock_list_free(&l);
	close(b4);
	close(c6);
	close(s6);
}

/* UDP-Lite has a table of its own: found there, not among UDP sockets. */
static void test_udplite(void **state)
{
	struct sdiag_sock_list l = { 0 };
	const struct sdiag_sock *s;
	int fd;

	(void)state;
	fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDPLITE);
	if (fd < 0 && errno == EPROTONOSUPPORT)
		SDIAG_SKIP("udplite", "socket(IPPROTO_UDPLITE): %s", strerror(errno));
	close(fd);
	fd = udp_socket(AF_INET6, IPPROTO_UDPLITE, "::1", 6003);
	collect_tables(&l, SDIAG_TABLE_BIT(SDIAG_T_UDPLITE), 0);
	s = find_fd_once(&l, fd);
	check_common(s, fd, SDIAG_T_UDPLITE, AF_INET6);
	assert_int_equal(s->protocol, IPPROTO_UDPLITE);
	assert_int_equal(s->inet.sport, 6003);
	sdiag_sock_list_free(&l);

	collect_tables(&l, SDIAG_TABLE_BIT(SDIAG_T_UDP), 0);
	assert_null(find_cookie(&l, fd_cookie(fd)));
	sdiag_sock_list_free(&l);
	close(fd);
}

/* An IPv4 client of a dual-stack IPv6 listener: the accepted socket is
 * AF_INET6 with v4-mapped addresses. */
static void test_v4_mapped(void **state)
{
	struct sdiag_sock_list l = { 0 };
	const struct sdiag_sock *s;
	int lfd, only, cfd, afd, zero = 0, one = 1;

	(void)state;
	lfd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(lfd >= 0);
	assert_int_equal(setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)), 0);
	struct sockaddr_storage ss;
	socklen_t len = make_addr(&ss, AF_INET6, "::", 5005);

	assert_int_equal(bind(lfd, (struct sockaddr *)&ss, len), 0);
	assert_int_equal(listen(lfd, 8), 0);
	only = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(only >= 0);
	assert_int_equal(setsockopt(only, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)), 0);
	len = make_addr(&ss, AF_INET6, "::", 5006);
	assert_int_equal(bind(only, (struct sockaddr *)&ss, len), 0);
	assert_int_equal(listen(only, 8), 0);
	cfd = stream_connect(AF_INET, 0, "127.0.0.1", 5005);
	afd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	assert_true(afd >= 0);

	collect_tables(&l, T_TCP, 0);
	s = find_fd_once(&l, afd);
	check_common(s, afd, SDIAG_T_TCP, AF_INET6);
	assert_addr(s->inet.src, AF_INET6, "::ffff:127.0.0.1");
	assert_addr(s->inet.dst, AF_INET6, "::ffff:127.0.0.1");
	assert_int_equal(s->inet.sport, 5005);
	assert_int_equal(s->inet.dport, fd_port(cfd));
	s = find_fd_once(&l, cfd);
	assert_int_equal(s->family, AF_INET);
	s = find_fd_once(&l, lfd);
	assert_true(s->has & SDIAG_HAS_V6ONLY);
	assert_int_equal(s->inet.v6only, 0);
	s = find_fd_once(&l, only);
	assert_true(s->has & SDIAG_HAS_V6ONLY);
	assert_int_equal(s->inet.v6only, 1);
	sdiag_sock_list_free(&l);
	close(afd);
	close(cfd);
	close(only);
	close(lfd);
}

/* SO_MARK (reported to CAP_NET_ADMIN), TOS/TCLASS (with SDIAG_SHOW_TOS),
 * SO_BINDTODEVICE. */
static void test_mark_tos_dev(void **state)
{
	struct sdiag_sock_list l = { 0 };
	const struct sdiag_sock *s;
	int v4, v6, mark = 0x1234, tos = 0x20, tclass = 0x40;

	(void)state;
	v4 = udp_socket(AF_INET, 0, "127.0.0.1", 6010);
	assert_int_equal(setsockopt(v4, SOL_SOCKET, SO_MARK, &mark, sizeof(mark)), 0);
	assert_int_equal(setsockopt(v4, IPPROTO_IP, IP_TOS, &tos, sizeof(tos)), 0);
	assert_int_equal(setsockopt(v4, SOL_SOCKET, SO_BINDTODEVICE, "lo", 3), 0);
	v6 = stream_listen(AF_INET6, 0, "::1", 5010, 4);
	assert_int_equal(setsockopt(v6, IPPROTO_IPV6, IPV6_TCLASS, &tclass, sizeof(tclass)), 0);

	collect_tables(&l, T_TCP | SDIAG_TABLE_BIT(SDIAG_T_UDP), 0);
	s = find_fd_once(&l, v4);
	assert_true(s->has & SDIAG_HAS_MARK);
	assert_int_equal(s->inet.mark, mark);
	assert_false(s->has & SDIAG_HAS_TOS);
	assert_int_equal(s->inet.ifindex, if_nametoindex("lo"));
	s = find_fd_once(&l, v6);
	assert_true(s->has & SDIAG_HAS_MARK);
	assert_int_equal(s->inet.mark, 0);
	assert_int_equal(s->inet.ifindex, 0);
	sdiag_sock_list_free(&l);

	collect_tables(&l, T_TCP | SDIAG_TABLE_BIT(SDIAG_T_UDP), SDIAG_SHOW_TOS);
	s = find_fd_once(&l, v4);
	assert_true(s->has & SDIAG_HAS_TOS);
	assert_int_equal(s->inet.tos, tos);
	s = find_fd_once(&l, v6);
	assert_true(s->has & SDIAG_HAS_TCLASS);
	assert_int_equal(s->inet.tclass, tclass);
	sdiag_sock_list_free(&l);
	close(v4);
	close(v6);
}

static int make_tcp_listener(void *arg)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(*(uint16_t *)arg),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(fd, 1) < 0)
		return -errno;
	return fd;
}

/* The owner's uid: a listener made by a child running as TEST_UID. */
static void test_uid(void **state)
{
	struct sdiag_sock_list l = { 0 };
	const struct sdiag_sock *s;
	struct child_sock c;
	uint16_t port = 5020;

	(void)state;
	child_sock_start(&c, TEST_UID, make_tcp_listener, &port);
	collect_tables(&l, T_TCP, 0);
	s = find_cookie(&l, c.cookie);
	assert_non_null(s);
	assert_true(s->has & SDIAG_HAS_UID);
	assert_int_equal(s->uid, TEST_UID);
	assert_int_equal(s->inode, c.inode);
	assert_int_equal(s->inet.sport, port);
	sdiag_sock_list_free(&l);
	child_sock_end(&c);
}

static bool mptcp_enabled(void)
{
	char c = '0';
	int fd = open("/proc/sys/net/mptcp/enabled", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (read(fd, &c, 1) != 1)
		c = '0';
	close(fd);
	return c == '1';
}

/* MPTCP sockets in their own table (protocol 262), mptcp_info with
 * SDIAG_SHOW_INFO; their TCP subflows in the TCP table. */
static void test_mptcp(void **state)
{
	struct sdiag_sock_list l = { 0 };
	const struct sdiag_sock *s;
	int lfd, cfd, afd;
	size_t subflows = 0;

	(void)state;
	if (!mptcp_enabled())
		SDIAG_SKIP("mptcp", "net.mptcp.enabled is 0 or absent");
	lfd = stream_listen(AF_INET, IPPROTO_MPTCP, "127.0.0.1", 5030, 8);
	cfd = stream_connect(AF_INET, IPPROTO_MPTCP, "127.0.0.1", 5030);
	afd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	assert_true(afd >= 0);

	collect_tables(&l, SDIAG_TABLE_BIT(SDIAG_T_MPTCP), SDIAG_SHOW_INFO);
	s = find_fd_once(&l, lfd);
	check_common(s, lfd, SDIAG_T_MPTCP, AF_INET);
	assert_int_equal(s->protocol, IPPROTO_MPTCP);
	assert_int_equal(s->state, SDIAG_SS_LISTEN);
	assert_int_equal(s->inet.sport, 5030);
	s = find_fd_once(&l, cfd);
	check_common(s, cfd, SDIAG_T_MPTCP, AF_INET);
	assert_int_equal(s->state, SDIAG_SS_ESTABLISHED);
	assert_int_equal(s->inet.dport, 5030);
	assert_true(s->has & SDIAG_HAS_MPTCP_INFO);
	assert_true(t_mptcp_info(s).mptcpi_token != 0);
	for (size_t i = 0; i < l.n; i++)
		assert_int_equal(l.socks[i]->table, SDIAG_T_MPTCP);
	sdiag_sock_list_free(&l);

	/* The subflows are TCP sockets on the same ports, not the MPTCP ones. */
	collect_tables(&l, T_TCP, SDIAG_SHOW_INFO);
	assert_null(find_cookie(&l, fd_cookie(cfd)));
	for (size_t i = 0; i < l.n; i++) {
		s = l.socks[i];
		if (s->state == SDIAG_SS_ESTABLISHED &&
		    (s->inet.sport == 5030 || s->inet.dport == 5030)) {
			assert_int_equal(s->protocol, IPPROTO_TCP);
			assert_true(s->has & SDIAG_HAS_ULP);
			assert_string_equal(s->inet.ulp, "mptcp");
			subflows++;
		}
	}
	assert_int_equal(subflows, 2);
	sdiag_sock_list_free(&l);
	close(afd);
	close(cfd);
	close(lfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_tcp_ipv4, setup),
		cmocka_unit_test_setup(test_tcp_ipv6, setup),
		cmocka_unit_test_setup(test_tcp_info, setup),
		cmocka_unit_test_setup(test_tcp_details, setup),
		cmocka_unit_test_setup(test_tcp_time_wait, setup),
		cmocka_unit_test_setup(test_tcp_syn_sent, setup),
		cmocka_unit_test_setup(test_udp, setup),
		cmocka_unit_test_setup(test_udplite, setup),
		cmocka_unit_test_setup(test_v4_mapped, setup),
		cmocka_unit_test_setup(test_mark_tos_dev, setup),
		cmocka_unit_test_setup(test_uid, setup),
		cmocka_unit_test_setup(test_mptcp, setup),
		cmocka_unit_test_setup(test_dump_ahead, setup),
	};

	return sdiag_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
