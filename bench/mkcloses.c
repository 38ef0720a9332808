// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench/mkcloses RATE SECONDS [BYTES]: loopback TCP connections at RATE per
 * second for SECONDS (connect, BYTES each way, both close), paced per
 * millisecond; prints the connections made. For bench/life.sh, in a private
 * network namespace only.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	double rate, secs, t0;
	size_t bytes;
	char buf[65536];
	unsigned long long made = 0;
	int l;

	if (argc < 3)
		return 2;
	rate = atof(argv[1]);
	secs = atof(argv[2]);
	bytes = argc > 3 ? (size_t)atol(argv[3]) : 100;
	if (bytes > sizeof(buf))
		bytes = sizeof(buf);
	memset(buf, 'x', sizeof(buf));
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 4096) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &len) < 0) {
		perror("listen");
		return 1;
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
			return 1;
		}
		s = accept(l, NULL, NULL);
		if (s < 0 || write(c, buf, bytes) != (ssize_t)bytes ||
		    recv(s, buf, bytes, MSG_WAITALL) != (ssize_t)bytes ||
		    write(s, buf, bytes) != (ssize_t)bytes ||
		    recv(c, buf, bytes, MSG_WAITALL) != (ssize_t)bytes) {
			perror("transfer");
			return 1;
		}
		close(c);
		close(s);
		made++;
	}
	close(l);
	printf("%llu\n", made);
	return 0;
}
