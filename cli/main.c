// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sockdiag: a table of subcommands, one file each. Only main() exits.
 *
 *   sockdiag [list] [OPTIONS] [FILTER]   `sockdiag -tan` is `sockdiag list -tan`
 *   sockdiag help | --help | --version
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "options.h"

static int cmd_help(int argc, char **argv);

static const struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} cmds[] = {
	{ "list", cmd_list, "list sockets, like ss (the default)" },
	{ "kill", cmd_kill, "destroy the sockets a filter selects (SOCK_DESTROY)" },
	{ "watch", cmd_watch, "print socket-destroy events as they happen" },
	{ "guard", cmd_guard, "daemon: destroy sockets stranded by removed addresses or links" },
	{ "exporter", cmd_exporter, "daemon: socket metrics for Prometheus over HTTP" },
	{ "help", cmd_help, "show this help" },
};

static int cmd_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("Usage: sockdiag [COMMAND] [OPTIONS] [FILTER]\n"
	       "       sockdiag -tan ...    (options without a command: list)\n\n"
	       "Commands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		printf("  %-8s %s\n", cmds[i].name, cmds[i].help);
	printf("\n'sockdiag COMMAND --help' shows a command's options; see sockdiag(8).\n"
	       "Exit status: 0 ok, 1 runtime error, 2 usage or filter error.\n");
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	char list_name[] = "list";

	if (argc < 2) {
		char *args[] = { list_name, NULL };

		return cmd_list(1, args);
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_help(argc - 1, argv + 1);
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("sockdiag " SOCKDIAG_VERSION "\n");
		return EXIT_OK;
	}
	if (argv[1][0] == '-') {
		/* ss habits: options straight away mean list. */
		argv[0] = list_name;
		return cmd_list(argc, argv);
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "sockdiag: unknown command '%s' (try 'sockdiag help')\n", argv[1]);
	return EXIT_USAGE;
}
