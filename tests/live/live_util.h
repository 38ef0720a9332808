/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Small helpers shared by the live tests: real sockets on loopback and
 * lookups in a collected socket list. They fail the running cmocka test on
 * any unexpected error, so callers need not check.
 */
#ifndef SOCKDIAG_TESTS_LIVE_UTIL_H
#define SOCKDIAG_TESTS_LIVE_UTIL_H

#include <stdint.h>
#include <sys/socket.h>

#include "sockdiag.h"

/* SO_COOKIE and fstat().st_ino of a socket. */
uint64_t fd_cookie(int fd);
uint64_t fd_inode(int fd);

/* Collect the given tables in the current namespace (show: SDIAG_SHOW_*). */
void collect_tables(struct sdiag_sock_list *l, uint32_t tables, uint32_t show);

/* The record with this cookie, or NULL; how many records carry it. */
const struct sdiag_sock *find_cookie(const struct sdiag_sock_list *l, uint64_t cookie);
size_t count_cookie(const struct sdiag_sock_list *l, uint64_t cookie);
/* The record of fd's socket (by SO_COOKIE); fails the test unless l holds it
 * exactly once. */
const struct sdiag_sock *find_fd_once(const struct sdiag_sock_list *l, int fd);

/* A socket address for family (AF_INET/AF_INET6) from text and port. */
socklen_t make_addr(struct sockaddr_storage *ss, int family, const char *addr, uint16_t port);

/* TCP-like stream sockets (proto 0 = TCP, or IPPROTO_MPTCP). */
int stream_listen(int family, int proto, const char *addr, uint16_t port, int backlog);
int stream_connect(int family, int proto, const char *addr, uint16_t port);
/* Local port of a bound socket. */
uint16_t fd_port(int fd);

/* Raise the soft open-file limit to the hard one. */
void raise_nofile(void);

/* Read a kernel config option: 'y', 'm', 'n' (not set), or 0 when the
 * running kernel's config cannot be read (/proc/config.gz). */
char kconfig(const char *option);

/* Subscribe the netlink socket fd to the highest rtnetlink group of 35..33 the running kernel
 * has (beyond the first 32-bit word; 5.10's groups end at 33, RTNLGRP_BRVLAN) and return it;
 * 0 when it has none of them (EINVAL for each). */
unsigned rtnl_high_group(int fd);

/* A socket made and held by a child process running as another uid. */
struct child_sock {
	int pid;
	int hold; /* closing it lets the child exit */
	uint64_t cookie;
	uint64_t inode;
};

/* Fork; the child drops to uid, calls make(arg) (returns an fd or -errno),
 * reports the socket's cookie and inode and keeps it open until
 * child_sock_end(). */
void child_sock_start(struct child_sock *c, unsigned uid, int (*make)(void *arg), void *arg);
void child_sock_end(struct child_sock *c);

/* Assert that the address bytes (network order) equal the text form. */
void assert_addr(const uint8_t *got, int family, const char *text);

#endif
