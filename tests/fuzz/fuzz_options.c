/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the command-line parser (cli/opts/options.c: opts_parse,
 * with and without a subcommand's own options, as watch and kill have).
 *
 * Input: the arguments after the subcommand, separated by NUL bytes (at
 * most 64). Standard input is /dev/null, so "-F -" reads nothing; any other
 * -F path is opened only if it is a regular file. The result must be
 * consistent: on success the query selects some table and some state; on
 * failure nothing is left allocated (LeakSanitizer).
 *
 * Seeds: the option lines of tests/fuzz/seeds/options/ (ss's habits).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/opts/options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static int extra_cb(void *ctx, int val, const char *arg)
{
	(void)ctx;
	return val == 0x100 && arg && !*arg ? -22 : 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int fd = open("/dev/null", O_RDWR);

	(void)argc;
	(void)argv;
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);	/* --help's usage */
		close(fd);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct option longopts[] = {
		{ "count", required_argument, NULL, 0x100 },
		{ "all", no_argument, NULL, 0x101 },
		{ 0 },
	};
	const struct opt_extra extra = { .longopts = longopts, .shortopts = "",
					 .handle = extra_cb, .usage = "  --count N\n",
					 .takes = OPTS_G_ALL };
	char *argv[66], *copy;
	struct cli_opts o;
	int argc = 1, r;

	if (size > 4096)
		return 0;
	copy = malloc(size + 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	argv[0] = (char *)"list";
	for (size_t i = 0; i <= size && argc < 65;) {
		argv[argc++] = copy + i;
		i += strlen(copy + i) + 1;
	}
	argv[argc] = NULL;
	for (int pass = 0; pass < 2; pass++) {
		char *args[66];

		memcpy(args, argv, sizeof(args));	/* getopt permutes argv */
		r = opts_parse(&o, argc, args, pass ? &extra : NULL);
		if (r == OPTS_OK) {
			if (!o.q.tables || !o.q.states)
				__builtin_trap();
			opts_fini(&o);
		}
	}
	free(copy);
	return 0;
}
