/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * measure: run a command once with stdout sent to a file (default /dev/null)
 * and print "WALL_SECONDS MAXRSS_KB EXIT_STATUS" on stdout.
 *
 * Wall time is CLOCK_MONOTONIC from just before fork() to wait4()'s return, so
 * it includes exec and the dynamic loader, as a user would see it; peak RSS is
 * the child's ru_maxrss from wait4() (KiB), exact rather than /usr/bin/time's
 * 10 ms wall clock. The child's stderr is kept.
 *
 * usage: measure [-o FILE] -- COMMAND [ARG...]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	const char *out = "/dev/null";
	struct rusage ru;
	double t0, t1;
	int opt, status, fd;
	pid_t pid;

	while ((opt = getopt(argc, argv, "+o:")) != -1) {
		if (opt != 'o')
			goto usage;
		out = optarg;
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
	printf("%.6f %ld %d\n", t1 - t0, ru.ru_maxrss,
	       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return 0;
usage:
	fprintf(stderr, "usage: measure [-o FILE] -- COMMAND [ARG...]\n");
	return 2;
}
