/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * measure: run a command once with stdout sent to a file (default /dev/null)
 * and print "WALL_S MAXRSS_KIB EXIT_STATUS CPU_S" on stdout (CPU = user + sys).
 *
 * Wall time is CLOCK_MONOTONIC from just before fork() to wait4()'s return, so
 * it includes exec and the dynamic loader, as a user would see it; peak RSS is
 * the child's ru_maxrss from wait4() (KiB), exact rather than /usr/bin/time's
 * 10 ms wall clock. CPU time (ru_utime + ru_stime) is the check on a loaded
 * machine: a single-threaded dump to /dev/null never waits, so its wall time
 * equals its CPU time unless other processes take the CPU away. The child's
 * stderr is kept.
 *
 * With -p NICE the command runs in a session (hence a scheduler autogroup) of
 * its own at that nice level, autogroup included: with autogroups a plain
 * nice value only ranks processes within their own group, so on a shared
 * machine it would not keep other sessions' builds off the measured command.
 *
 * usage: measure [-o FILE] [-p NICE] -- COMMAND [ARG...]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* In the child: own session and autogroup, both at nice (best effort). */
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
			fprintf(stderr, "measure: autogroup nice: %s\n", strerror(errno));
		close(fd);
	}
	if (setpriority(PRIO_PROCESS, 0, nice) < 0)
		fprintf(stderr, "measure: setpriority: %s\n", strerror(errno));
}

int main(int argc, char **argv)
{
	const char *out = "/dev/null";
	struct rusage ru;
	double t0, t1;
	int opt, status, fd, nice = 0, set_nice = 0;
	pid_t pid;

	while ((opt = getopt(argc, argv, "+o:p:")) != -1) {
		switch (opt) {
		case 'o':
			out = optarg;
			break;
		case 'p':
			nice = atoi(optarg);
			set_nice = 1;
			break;
		default:
			goto usage;
		}
	}
	if (optind >= argc)
		goto usage;
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "measure: %s: %s\n", out, strerror(errno));
		return 1;
	}
	t0 = now();
	pid = fork();
	if (pid < 0) {
		perror("measure: fork");
		return 1;
	}
	if (pid == 0) {
		if (set_nice)
			set_priority(nice);
		if (dup2(fd, STDOUT_FILENO) < 0)
			_exit(127);
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "measure: %s: %s\n", argv[optind], strerror(errno));
		_exit(127);
	}
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			perror("measure: wait4");
			return 1;
		}
	}
	t1 = now();
	printf("%.6f %ld %d %.6f\n", t1 - t0, ru.ru_maxrss,
	       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
	       (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
	return 0;
usage:
	fprintf(stderr, "usage: measure [-o FILE] [-p NICE] -- COMMAND [ARG...]\n");
	return 2;
}
