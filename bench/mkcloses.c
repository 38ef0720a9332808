// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench/mkcloses RATE SECONDS [BYTES [JOBS]]: loopback TCP connections at RATE
 * per second for SECONDS (connect, BYTES each way, both close), paced per
 * millisecond, by JOBS processes (default 1: one reaches about 14k a second
 * here), each with its own listener and RATE/JOBS; prints the connections
 * made. For bench/life.sh, in a private network namespace only.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/wait.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* One job: returns the connections made, or -1. */
static long long job(double rate, double secs, size_t bytes)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	double t0;
	static char buf[65536];
	long long made = 0;
	int l;

	if (bytes > sizeof(buf))
		bytes = sizeof(buf);
	memset(buf, 'x', sizeof(buf));
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 4096) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &len) < 0) {
		perror("listen");
		return -1;
	}
	t0 = now();
	for (;;) {
		double t = now() - t0;
		int c, s;

		if (t >= secs)
			break;
		if ((double)made >= t * rate) {
			usleep(200);
			continue;
		}
		c = socket(AF_INET, SOCK_STREAM, 0);
		if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) < 0) {
			perror("connect");
			return -1;
		}
		s = accept(l, NULL, NULL);
		if (s < 0 || write(c, buf, bytes) != (ssize_t)bytes ||
		    recv(s, buf, bytes, MSG_WAITALL) != (ssize_t)bytes ||
		    write(s, buf, bytes) != (ssize_t)bytes ||
		    recv(c, buf, bytes, MSG_WAITALL) != (ssize_t)bytes) {
			perror("transfer");
			return -1;
		}
		close(c);
		close(s);
		made++;
	}
	close(l);
	return made;
}

int main(int argc, char **argv)
{
	long long made = 0, n;
	int jobs, p[2];

	if (argc < 3)
		return 2;
	jobs = argc > 4 ? atoi(argv[4]) : 1;
	if (jobs < 1 || pipe(p) < 0)
		return 2;
	for (int i = 0; i < jobs; i++) {
		if (fork() == 0) {
			n = job(atof(argv[1]) / jobs, atof(argv[2]),
				argc > 3 ? (size_t)atol(argv[3]) : 100);
			if (write(p[1], &n, sizeof(n)) != sizeof(n))
				_exit(1);
			_exit(n < 0);
		}
	}
	close(p[1]);
	while (read(p[0], &n, sizeof(n)) == sizeof(n)) {
		if (n < 0)
			return 1;
		made += n;
	}
	while (wait(NULL) > 0)
		;
	printf("%lld\n", made);
	return 0;
}
