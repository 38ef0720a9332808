// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * netpeer: the other end of end-to-end tests. Runs only inside the private
 * network namespaces the test scripts create.
 *
 *   netpeer server ADDR PORT           accept connections, hold them open
 *   netpeer client ADDR PORT [SRC] [UID]
 *                                      connect (from SRC, as UID), print "connected",
 *                                      block in recv, then print how it ended:
 *                                      "recv errno=ECONNABORTED at=SECONDS.NANOS"
 *   netpeer udpclient ADDR PORT [SRC]  connected UDP socket, block in recv, as above
 *                                      (clients: NETPEER_MARK=N in the environment
 *                                      sets SO_MARK N, decimal or 0x hex, first)
 *   netpeer burst N                    open N UDP sockets (forking as the fd limit
 *                                      needs), print "ready", wait for stdin to close,
 *                                      then close them all at once; print "closed N"
 *                                      when every child exited cleanly (else exit 1)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

static int parse_addr(const char *a, unsigned port, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, a, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		*len = sizeof(*in);
		return AF_INET;
	}
	if (inet_pton(AF_INET6, a, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*in6);
		return AF_INET6;
	}
	fprintf(stderr, "netpeer: bad address %s\n", a);
	exit(2);
}

static int server(const char *addr, unsigned port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fam = parse_addr(addr, port, &ss, &len), one = 1;
	int fd = socket(fam, SOCK_STREAM, 0);

	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 128) < 0) {
		perror("netpeer server");
		return 1;
	}
	printf("listening\n");
	fflush(stdout);
	for (;;)
		if (accept(fd, NULL, NULL) < 0 && errno != EINTR)
			return 1;
}

static int client(int type, const char *addr, unsigned port, const char *src, const char *uid)
{
	struct sockaddr_storage ss, sss;
	struct timespec at;
	socklen_t len, slen;
	char buf[64];
	const char *mark = getenv("NETPEER_MARK");
	int fam = parse_addr(addr, port, &ss, &len), fd;
	ssize_t n;

	if (uid && setuid((uid_t)atoi(uid)) < 0) {
		perror("netpeer setuid");
		return 1;
	}
	fd = socket(fam, type, 0);
	if (fd < 0) {
		perror("netpeer socket");
		return 1;
	}
	if (mark && *mark) {
		unsigned m = (unsigned)strtoul(mark, NULL, 0);

		if (setsockopt(fd, SOL_SOCKET, SO_MARK, &m, sizeof(m)) < 0) {
			perror("netpeer SO_MARK");
			return 1;
		}
	}
	if (src && *src) {
		parse_addr(src, 0, &sss, &slen);
		if (bind(fd, (struct sockaddr *)&sss, slen) < 0) {
			perror("netpeer bind");
			return 1;
		}
	}
	if (connect(fd, (struct sockaddr *)&ss, len) < 0) {
		perror("netpeer connect");
		return 1;
	}
	printf("connected\n");
	fflush(stdout);
	n = recv(fd, buf, sizeof(buf), 0);
	clock_gettime(CLOCK_REALTIME, &at);
	printf("recv %s%s at=%lld.%09ld\n", n < 0 ? "errno=" : "returned=",
	       n < 0 ? (errno == ECONNABORTED ? "ECONNABORTED" : strerror(errno)) : "data",
	       (long long)at.tv_sec, at.tv_nsec);
	fflush(stdout);
	return 0;
}

static int burst(long n)
{
	struct rlimit rl;
	long per, made = 0, kids = 0, failed = 0;
	int ready[2], status;
	pid_t pid;
	char c;

	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	per = (long)rl.rlim_cur - 64;
	if (pipe(ready) < 0) {
		perror("netpeer pipe");
		return 1;
	}
	while (made < n) {
		long mine = n - made < per ? n - made : per;

		pid = fork();

		if (pid < 0) {
			perror("netpeer fork");
			return 1;
		}
		if (pid == 0) {
			close(ready[0]);
			/* Never-bound sockets are announced too when freed, and
			 * need no port: 100k fit in any port range. */
			for (long i = 0; i < mine; i++)
				if (socket(AF_INET, SOCK_DGRAM, 0) < 0)
					_exit(1);
			/* All made: tell the parent, then wait for its word
			 * (stdin closing) and close them all at once. */
			if (write(ready[1], "k", 1) != 1)
				_exit(1);
			while (read(0, &c, 1) > 0)
				;
			_exit(0);
		}
		made += mine;
		kids++;
	}
	close(ready[1]);
	for (long i = 0; i < kids; i++)
		if (read(ready[0], &c, 1) != 1) {
			fprintf(stderr, "netpeer: a burst child failed to make its sockets\n");
			return 1;
		}
	printf("ready\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	while ((pid = wait(&status)) > 0)
		failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	if (failed) {
		fprintf(stderr, "netpeer: %ld burst children failed\n", failed);
		return 1;
	}
	/* Every child exited cleanly, so every socket was made and closed. */
	printf("closed %ld\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "server"))
		return server(argv[2], (unsigned)atoi(argv[3]));
	if (argc >= 4 && !strcmp(argv[1], "client"))
		return client(SOCK_STREAM, argv[2], (unsigned)atoi(argv[3]),
			      argc > 4 ? argv[4] : NULL, argc > 5 ? argv[5] : NULL);
	if (argc >= 4 && !strcmp(argv[1], "udpclient"))
		return client(SOCK_DGRAM, argv[2], (unsigned)atoi(argv[3]),
			      argc > 4 ? argv[4] : NULL, NULL);
	if (argc == 3 && !strcmp(argv[1], "burst"))
		return burst(atol(argv[2]));
	fprintf(stderr, "usage: see the comment at the top of tests/tools/netpeer.c\n");
	return 2;
}
