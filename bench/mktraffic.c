/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mktraffic: N established loopback TCP connections in the CURRENT network
 * namespace and a steady flow of RATE bytes per second spread over all of
 * them, until killed (bench/top_nethogs.sh, issue 26).
 *
 * Run it only inside a private namespace: it refuses to run in a namespace
 * that has any interface but lo.
 *
 * One process: a listener on 127.0.0.1:5000, N clients connected to it, the
 * accepted ends read by an epoll loop. Every 10 ms the next N/100 clients
 * (round robin) each write RATE/N bytes, so that every connection carries
 * RATE/N bytes a second in one write (a few thousand writes a second in all,
 * not a few hundred thousand: the generator should not take the machine).
 * A write the socket buffer cannot take whole is cut short; the rate really
 * carried is reported on stderr when it ends (SIGTERM, SIGINT):
 * "mktraffic: BYTES bytes in SECONDS s: MBIT Mbit/s".
 *
 * Readiness: one line "ready N" on stdout once every connection is up.
 *
 * usage: mktraffic [-r BYTES_PER_SECOND] N    (default rate 125000000: 1 Gbit/s)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
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

#define TICK_NS 10000000L	/* 10 ms */
#define TICKS 100		/* a second */
#define PORT 5000

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void die(const char *what)
{
	fprintf(stderr, "mktraffic: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Only lo here: the namespace is private. */
static void check_private(void)
{
	struct if_nameindex *ifs = if_nameindex(), *i;

	if (!ifs)
		die("if_nameindex");
	for (i = ifs; i->if_index; i++)
		if (strcmp(i->if_name, "lo")) {
			fprintf(stderr, "mktraffic: interface %s here: run me in a private "
					"network namespace (unshare -n)\n", i->if_name);
			exit(1);
		}
	if_freenameindex(ifs);
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(PORT),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	unsigned long long rate = 125000000ULL, sent = 0;
	struct rlimit rl;
	struct timespec next;
	size_t n, chunk, per_tick, cursor = 0;
	int lfd, ep, one = 1, opt, *cli;
	char *buf;
	double t0;

	while ((opt = getopt(argc, argv, "r:")) != -1) {
		if (opt != 'r')
			goto usage;
		rate = strtoull(optarg, NULL, 10);
	}
	if (optind + 1 != argc || !(n = strtoul(argv[optind], NULL, 10)) || !rate)
		goto usage;
	check_private();
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	chunk = rate / n;
	per_tick = (n + TICKS - 1) / TICKS;
	cli = calloc(n, sizeof(*cli));
	buf = calloc(1, chunk > 65536 ? chunk : 65536);
	ep = epoll_create1(0);
	if (!cli || !buf || ep < 0)
		die("setup");
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 4096) < 0)
		die("listen");
	for (size_t i = 0; i < n; i++) {
		struct epoll_event ev = { .events = EPOLLIN };
		int s;

		cli[i] = socket(AF_INET, SOCK_STREAM, 0);
		if (cli[i] < 0 || connect(cli[i], (struct sockaddr *)&sa, sizeof(sa)) < 0)
			die("connect");
		s = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);
		if (s < 0)
			die("accept");
		ev.data.fd = s;
		if (fcntl(cli[i], F_SETFL, O_NONBLOCK) < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev) < 0)
			die("epoll_ctl");
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	printf("ready %zu\n", n);
	fflush(stdout);
	t0 = now();
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!stop) {
		struct epoll_event evs[256];
		struct timespec ts;
		long wait_ms;
		int k;

		/* this tick's writers */
		for (size_t j = 0; j < per_tick; j++, cursor = (cursor + 1) % n) {
			ssize_t w = write(cli[cursor], buf, chunk);

			if (w > 0)
				sent += (unsigned long long)w;
		}
		next.tv_nsec += TICK_NS;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		/* read until the next tick */
		for (;;) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			wait_ms = (next.tv_sec - ts.tv_sec) * 1000 + (next.tv_nsec - ts.tv_nsec) / 1000000;
			if (wait_ms < 0 || stop)
				break;
			k = epoll_wait(ep, evs, 256, (int)wait_ms);
			if (k < 0 && errno != EINTR)
				die("epoll_wait");
			for (int e = 0; e < k; e++)
				while (read(evs[e].data.fd, buf, 65536) > 0)
					;
			if (k <= 0)
				break;
		}
	}
	fprintf(stderr, "mktraffic: %llu bytes in %.1f s: %.0f Mbit/s\n", sent, now() - t0,
		(double)sent * 8 / 1e6 / (now() - t0));
	return 0;
usage:
	fprintf(stderr, "usage: mktraffic [-r BYTES_PER_SECOND] N\n");
	return 2;
}
