/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the daemons' command lines: `sockdiag guard`
 * (daemon/guard/cmd.c: guard_parse_args) and `sockdiag exporter`
 * (daemon/exporter/exporter_cmd.c: exp_parse_args). Nothing is started: only
 * the parse, its messages and its result are exercised.
 *
 * Input: one selector byte (even: guard, odd: exporter), then the arguments
 * after the subcommand, separated by NUL bytes (at most 64). Standard output
 * and stdio's stderr are /dev/null. The result must be consistent: 0, 1 (--help) or a
 * negative errno; on success what it set points into the arguments and obeys
 * the documented exclusions (--all-netns without -N; --netns-dir only with
 * --all-netns, absolute, at most GUARD_NETNS_DIRS_MAX; -N and --all-netns for
 * the exporter), and a --listen/--metrics value parses.
 *
 * Seeds: tests/fuzz/seeds/daemon_opts/ (the command lines of the tests,
 * man pages and units).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/exporter/exporter.h"
#include "daemon/guard/guard.h"
#include "daemon/metrics/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* daemon/guard/cmd.c's cmd_guard() calls the loop: never here. */
int guard_main(const struct guard_cmdline *opt)
{
	(void)opt;
	__builtin_trap();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int fd = open("/dev/null", O_RDWR);

	(void)argc;
	(void)argv;
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);	/* --help */
		close(fd);
	}
	/* The one-line errors: not descriptor 2, where libFuzzer and the
	 * sanitizers report (they do not write through stdio's stderr). */
	stderr = fopen("/dev/null", "w");
	return stderr ? 0 : -1;
}

static bool within(const char *p, const char *buf, size_t size)
{
	return !p || (p >= buf && p < buf + size + 1);
}

static bool listen_ok(const char *spec)
{
	struct sockaddr_storage ss;
	char why[HTTP_LISTEN_ERRLEN];
	socklen_t sl;

	return !spec || http_parse_listen(spec, &ss, &sl, why, sizeof(why)) >= 0;
}

static void guard(char **argv, int argc, const char *copy, size_t size)
{
	struct guard_cmdline g = { .config_path = "/nonexistent" };
	int r = guard_parse_args(&g, argc, argv);

	if (r != 0 && r != 1 && (r >= 0 || r < -4095))
		__builtin_trap();
	if (r != 0)
		return;
	for (size_t i = 0; i < GUARD_NETNS_DIRS_MAX && g.netns_dirs[i]; i++)
		if (!g.all_netns || !within(g.netns_dirs[i], copy, size) ||
		    g.netns_dirs[i][0] != '/')
			__builtin_trap();
	if (g.netns_dirs[GUARD_NETNS_DIRS_MAX])
		__builtin_trap();
	if (!within(g.netns, copy, size) || !within(g.metrics_listen, copy, size) ||
	    !listen_ok(g.metrics_listen) ||
	    (g.all_netns && g.netns) ||
	    (g.rtnl_rcvbuf && (g.rtnl_rcvbuf < 4096 || g.rtnl_rcvbuf > (1 << 30))) ||
	    (g.config_explicit && !within(g.config_path, copy, size)))
		__builtin_trap();
}

static void exporter(char **argv, int argc, const char *copy, size_t size)
{
	struct exp_cmdline a = { 0 };
	int r = exp_parse_args(&a, argc, argv);

	if (r != 0 && r != 1 && (r >= 0 || r < -4095))
		__builtin_trap();
	if (r != 0)
		return;
	if (!within(a.netns, copy, size) || !within(a.listen, copy, size) ||
	    !within(a.config_path, copy, size) || !listen_ok(a.listen) ||
	    (a.netns && a.all_netns) || (a.config_explicit && !a.config_path))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[66], *copy;
	int argc = 1;

	if (size < 1 || size > 4096)
		return 0;
	copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data + 1, size - 1);
	copy[size - 1] = '\0';
	argv[0] = (char *)(data[0] & 1 ? "exporter" : "guard");
	for (size_t i = 0; i < size && argc < 65;) {
		argv[argc++] = copy + i;
		i += strlen(copy + i) + 1;
	}
	argv[argc] = NULL;
	if (data[0] & 1)
		exporter(argv, argc, copy, size - 1);
	else
		guard(argv, argc, copy, size - 1);
	free(copy);
	return 0;
}
