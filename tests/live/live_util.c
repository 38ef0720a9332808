/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <linux/netlink.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "tests/live/live_util.h"

#ifndef SO_COOKIE
#define SO_COOKIE 57
#endif

uint64_t fd_cookie(int fd)
{
	uint64_t cookie = 0;
	socklen_t len = sizeof(cookie);

	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_COOKIE, &cookie, &len), 0);
	assert_int_equal(len, sizeof(cookie));
	assert_true(cookie != 0);
	return cookie;
}

uint64_t fd_inode(int fd)
{
	struct stat st;

	assert_int_equal(fstat(fd, &st), 0);
	return st.st_ino;
}

void collect_tables(struct sdiag_sock_list *l, uint32_t tables, uint32_t show)
{
	SDIAG_OPTS(sdiag_query, q, .tables = tables, .show = show);
	struct sdiag_handle *h = NULL;

	assert_int_equal(sdiag_open(&h), 0);
	assert_int_equal(sdiag_collect(h, &q, l), 0);
	sdiag_close(h);
}

const struct sdiag_sock *find_cookie(const struct sdiag_sock_list *l, uint64_t cookie)
{
	for (size_t i = 0; i < l->n; i++)
		if ((l->socks[i]->has & SDIAG_HAS_COOKIE) && l->socks[i]->cookie == cookie)
			return l->socks[i];
	return NULL;
}

size_t count_cookie(const struct sdiag_sock_list *l, uint64_t cookie)
{
	size_t n = 0;

	for (size_t i = 0; i < l->n; i++)
		if ((l->socks[i]->has & SDIAG_HAS_COOKIE) && l->socks[i]->cookie == cookie)
			n++;
	return n;
}

socklen_t make_addr(struct sockaddr_storage *ss, int family, const char *addr, uint16_t port)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		assert_int_equal(inet_pton(AF_INET, addr, &sin->sin_addr), 1);
		return sizeof(*sin);
	}
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(port);
	assert_int_equal(inet_pton(AF_INET6, addr, &sin6->sin6_addr), 1);
	return sizeof(*sin6);
}

int stream_listen(int family, int proto, const char *addr, uint16_t port, int backlog)
{
	struct sockaddr_storage ss;
	socklen_t len = make_addr(&ss, family, addr, port);
	int fd, one = 1;

	fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, proto);
	assert_true(fd >= 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&ss, len), 0);
	assert_int_equal(listen(fd, backlog), 0);
	return fd;
}

int stream_connect(int family, int proto, const char *addr, uint16_t port)
{
	struct sockaddr_storage ss;
	socklen_t len = make_addr(&ss, family, addr, port);
	int fd;

	fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, proto);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&ss, len), 0);
	return fd;
}

uint16_t fd_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	assert_int_equal(getsockname(fd, (struct sockaddr *)&ss, &len), 0);
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
}

void raise_nofile(void)
{
	struct rlimit rl;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	rl.rlim_cur = rl.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
}

char kconfig(const char *option)
{
	char line[256], want[128];
	size_t n = (size_t)snprintf(want, sizeof(want), "%s=", option);
	char r = 0;
	FILE *f;

	f = popen("zcat /proc/config.gz 2>/dev/null", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!r)
			r = 'n'; /* the config is readable: absent means not set */
		if (!strncmp(line, want, n)) {
			r = line[n];
			break;
		}
	}
	pclose(f);
	return r;
}

unsigned rtnl_high_group(int fd)
{
	for (unsigned g = 35; g >= 33; g--) {
		if (setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &g, sizeof(g)) == 0)
			return g;
		assert_int_equal(errno, EINVAL);
	}
	return 0;
}

struct child_report {
	int err;
	uint64_t cookie;
	uint64_t inode;
};

static void child_run(int rep, int hold, unsigned uid, int (*make)(void *arg), void *arg)
{
	struct child_report cr = { 0 };
	socklen_t len = sizeof(cr.cookie);
	struct stat st;
	char c;
	int fd;

	if (setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0) {
		cr.err = -errno;
		goto report;
	}
	fd = make(arg);
	if (fd < 0) {
		cr.err = fd;
		goto report;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_COOKIE, &cr.cookie, &len) < 0 || fstat(fd, &st) < 0)
		cr.err = -errno;
	cr.inode = st.st_ino;
report:
	if (write(rep, &cr, sizeof(cr)) != sizeof(cr))
		_exit(1);
	while (read(hold, &c, 1) > 0)
		;
	_exit(0);
}

void child_sock_start(struct child_sock *c, unsigned uid, int (*make)(void *arg), void *arg)
{
	struct child_report cr;
	int rep[2], hold[2];

	assert_int_equal(pipe2(rep, O_CLOEXEC), 0);
	assert_int_equal(pipe2(hold, O_CLOEXEC), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		close(rep[0]);
		close(hold[1]);
		child_run(rep[1], hold[0], uid, make, arg);
	}
	close(rep[1]);
	close(hold[0]);
	assert_int_equal(read(rep[0], &cr, sizeof(cr)), sizeof(cr));
	close(rep[0]);
	c->hold = hold[1];
	if (cr.err)
		fprintf(stderr, "child socket as uid %u: %s\n", uid, strerror(-cr.err));
	assert_int_equal(cr.err, 0);
	c->cookie = cr.cookie;
	c->inode = cr.inode;
}

void child_sock_end(struct child_sock *c)
{
	int status;

	close(c->hold);
	assert_int_equal(waitpid(c->pid, &status, 0), c->pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

void assert_addr(const uint8_t *got, int family, const char *text)
{
	uint8_t want[16] = { 0 };
	char buf[INET6_ADDRSTRLEN];

	assert_int_equal(inet_pton(family, text, want), 1);
	if (memcmp(got, want, family == AF_INET ? 4 : 16)) {
		inet_ntop(family, got, buf, sizeof(buf));
		fail_msg("address %s, expected %s", buf, text);
	}
}

const struct sdiag_sock *find_fd_once(const struct sdiag_sock_list *l, int fd)
{
	uint64_t cookie = fd_cookie(fd);
	const struct sdiag_sock *s = find_cookie(l, cookie);

	if (!s)
		fail_msg("socket fd %d (cookie %llu) not in the dump of %zu records", fd,
			 (unsigned long long)cookie, l->n);
	assert_int_equal(count_cookie(l, cookie), 1);
	return s;
}
