/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * manyconn: many TCP connections from one address, for the guard benchmark.
 * Runs only inside the private namespaces bench/guard/run.sh creates.
 *
 *   manyconn server ADDR PORT0 NPORTS
 *       listen on ADDR:PORT0 .. PORT0+NPORTS-1, accept everything, hold the
 *       accepted sockets and close each one its peer resets; prints
 *       "listening" once ready.
 *   manyconn client SRC DST PORT0 NPORTS N
 *       open N connections from SRC (explicit source ports 20000.., so no
 *       ephemeral-port search) to DST:PORT0+(i % NPORTS), print "ready N",
 *       then wait until every one of them reports an error or hang-up (the
 *       guard destroyed it) and print
 *       "closed N first=REALTIME last=REALTIME"  (seconds.nanoseconds)
 *       — the moment the last owner learnt its socket was gone.
 *   manyconn run [-p NICE] COMMAND [ARG...]
 *       print "start=REALTIME", run COMMAND (with -p: in a session and
 *       scheduler autogroup of its own at nice NICE, as bench/measure does),
 *       wait for it and print "wall=SECONDS cpu=SECONDS exit=STATUS" (cpu:
 *       its user + system time, from wait4). SIGTERM and
 *       SIGINT are passed on to COMMAND (it is in a session of its own).
 *
 * The open-file limit is raised to the hard limit; N + 16 must fit under it.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

static int sockaddr_of(const char *a, unsigned port, struct sockaddr_in *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->sin_family = AF_INET;
	ret->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, a, &ret->sin_addr) == 1 ? 0 : -EINVAL;
}

static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static double realtime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int server(const char *addr, unsigned port0, unsigned nports)
{
	struct epoll_event ev, evs[256];
	int ep = epoll_create1(EPOLL_CLOEXEC), one = 1;

	if (ep < 0)
		return 1;
	for (unsigned i = 0; i < nports; i++) {
		struct sockaddr_in sa;
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

		if (fd < 0 || sockaddr_of(addr, port0 + i, &sa) < 0 ||
		    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
		    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 4096) < 0) {
			perror("manyconn server: listen");
			return 1;
		}
		/* Listeners are told apart by a tag in the high bits. */
		ev = (struct epoll_event){ .events = EPOLLIN,
					   .data.u64 = (1ull << 32) | (unsigned)fd };
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
			return 1;
	}
	printf("listening\n");
	fflush(stdout);
	for (;;) {
		int n = epoll_wait(ep, evs, 256, -1);

		for (int i = 0; i < n; i++) {
			int fd = (int)(uint32_t)evs[i].data.u64;

			if (!(evs[i].data.u64 >> 32)) {
				/* A peer reset (or closed): let the socket go. */
				close(fd);
				continue;
			}
			for (;;) {
				int c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

				if (c < 0)
					break;
				ev = (struct epoll_event){ .events = EPOLLRDHUP,
							   .data.u64 = (unsigned)c };
				if (epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev) < 0)
					close(c);
			}
		}
		if (n < 0 && errno != EINTR)
			return 1;
	}
}

static int client(const char *src, const char *dst, unsigned port0, unsigned nports, unsigned n)
{
	struct epoll_event ev, evs[512];
	unsigned left = n;
	double first = 0, last = 0;
	int ep = epoll_create1(EPOLL_CLOEXEC), one = 1;

	if (ep < 0)
		return 1;
	for (unsigned i = 0; i < n; i++) {
		struct sockaddr_in from, to;
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0 || sockaddr_of(src, 20000 + i, &from) < 0 ||
		    sockaddr_of(dst, port0 + i % nports, &to) < 0 ||
		    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
		    bind(fd, (struct sockaddr *)&from, sizeof(from)) < 0 ||
		    connect(fd, (struct sockaddr *)&to, sizeof(to)) < 0) {
			fprintf(stderr, "manyconn client: connection %u: %s\n", i, strerror(errno));
			return 1;
		}
		/* One report per socket and nothing done with it until the end:
		 * the last wake-up is not delayed by closing the earlier ones. */
		ev = (struct epoll_event){ .events = EPOLLRDHUP | EPOLLONESHOT, .data.fd = fd };
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
			return 1;
	}
	printf("ready %u\n", n);
	fflush(stdout);
	while (left) {
		int k = epoll_wait(ep, evs, 512, -1);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		last = realtime();
		if (!first)
			first = last;
		/* EPOLLERR and EPOLLHUP are always reported: a destroyed socket
		 * has sk_err = ECONNABORTED and is shut down. */
		left -= (unsigned)k < left ? (unsigned)k : left;
	}
	printf("closed %u first=%.9f last=%.9f\n", n, first, last);
	fflush(stdout);
	/* The fds close when the process exits. */
	return 0;
}

static double monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* In the child: a session and autogroup of its own, both at nice. */
static void set_priority(int nice)
{
	char buf[16];
	int fd, n;

	if (setsid() < 0)
		return;
	fd = open("/proc/self/autogroup", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = snprintf(buf, sizeof(buf), "%d", nice);
		if (write(fd, buf, (size_t)n) < 0)
			perror("manyconn run: autogroup");
		close(fd);
	}
	if (setpriority(PRIO_PROCESS, 0, nice) < 0)
		perror("manyconn run: setpriority");
}

static int run(int argc, char **argv)
{
	int status, nice = 0, set_nice = 0;
	sigset_t mask, old;
	struct rusage ru;
	double t0;
	pid_t pid;

	if (argc > 2 && !strcmp(argv[0], "-p")) {
		nice = atoi(argv[1]);
		set_nice = 1;
		argv += 2;
		argc -= 2;
	}
	if (argc < 1)
		return 2;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &old);
	printf("start=%.9f\n", realtime());
	fflush(stdout);
	t0 = monotonic();
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (set_nice)
			set_priority(nice);
		execvp(argv[0], argv);
		perror("manyconn run: exec");
		_exit(127);
	}
	for (;;) {
		int sig = sigwaitinfo(&mask, NULL);

		if (sig == SIGTERM || sig == SIGINT)
			kill(pid, sig);
		if (wait4(pid, &status, WNOHANG, &ru) == pid)
			break;
	}
	printf("wall=%.6f cpu=%.6f exit=%d\n", monotonic() - t0,
	       (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6,
	       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return 0;
}

int main(int argc, char **argv)
{
	raise_nofile();
	if (argc >= 3 && !strcmp(argv[1], "run"))
		return run(argc - 2, argv + 2);
	if (argc == 5 && !strcmp(argv[1], "server"))
		return server(argv[2], (unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]));
	if (argc == 7 && !strcmp(argv[1], "client"))
		return client(argv[2], argv[3], (unsigned)atoi(argv[4]), (unsigned)atoi(argv[5]),
			      (unsigned)atoi(argv[6]));
	fprintf(stderr, "usage: manyconn server ADDR PORT0 NPORTS\n"
			"       manyconn client SRC DST PORT0 NPORTS N\n"
			"       manyconn run [-p NICE] COMMAND [ARG...]\n");
	return 2;
}
