// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sockdiag: a table of subcommands, one file each. Only main() exits.
 *
 *   sockdiag [list] [OPTIONS] [FILTER]   `sockdiag -tan` is `sockdiag list -tan`,
 *                                        `sockdiag state listening` is `sockdiag list ...`
 *   sockdiag -K ... / -E ...             ss's kill and events options: kill, watch
 *   sockdiag help [COMMAND] | --help | --version
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/opts/options.h"
#include "util/textfile.h"

static int cmd_help(int argc, char **argv);

static const struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} cmds[] = {
	{ "list", cmd_list, "list sockets, like ss (the default)" },
	{ "kill", cmd_kill, "destroy the sockets a filter selects (SOCK_DESTROY)" },
	{ "watch", cmd_watch, "print socket-destroy events as they happen" },
	{ "life", cmd_life, "one record per ended TCP or UDP connection" },
	{ "top", cmd_top, "live traffic per connection, process, cgroup, unit (tcp_info)" },
	{ "guard", cmd_guard, "daemon: destroy sockets stranded by removed addresses or links" },
	{ "exporter", cmd_exporter, "daemon: socket metrics for Prometheus over HTTP" },
	{ "drain", cmd_drain, "wait until the connections a filter selects end (--timeout, --kill)" },
	{ "help", cmd_help, "show this help" },
};

/* `sockdiag help COMMAND` is `sockdiag COMMAND --help`. */
static int cmd_help(int argc, char **argv)
{
	char help_opt[] = "--help";

	if (argc > 1) {
		for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
			if (strcmp(argv[1], "help") && !strcmp(argv[1], cmds[i].name)) {
				char *args[] = { argv[1], help_opt, NULL };

				return cmds[i].fn(2, args);
			}
		char q[TEXT_QUOTE_LEN];

		fprintf(stderr, "sockdiag help: unknown command '%s' (", TQ(q, argv[1]));
		for (size_t i = 0; i + 1 < sizeof(cmds) / sizeof(cmds[0]); i++)
			fprintf(stderr, "%s%s", i ? ", " : "", cmds[i].name);
		fprintf(stderr, ")\n");
		return EXIT_USAGE;
	}
	printf("Usage: sockdiag [COMMAND] [OPTIONS] [FILTER]\n"
	       "       sockdiag -tan ...    (options without a command: list)\n"
	       "       sockdiag state established ...   (a FILTER without a command: list)\n"
	       "       sockdiag -K ... / -E ...         (ss's kill and events: kill, watch)\n\n"
	       "Commands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		printf("  %-8s %s\n", cmds[i].name, cmds[i].help);
	printf("\n'sockdiag COMMAND --help' or 'sockdiag help COMMAND' shows a command's options;\n"
	       "see sockdiag(8).\n"
	       "Exit status: 0 ok, 1 runtime error (kill: nothing destroyed; drain: connections\n"
	       "left at --timeout), 2 usage or filter error, 3 kill/guard: no CAP_NET_ADMIN or a\n"
	       "kernel that cannot destroy sockets (drain --kill too).\n");
	return EXIT_OK;
}

/* Does word start a filter expression (`sockdiag state established`, `sockdiag dport = :22`,
 * `sockdiag '!(sport = :22)'`)? Its first keyword decides. */
static bool starts_filter(const char *word)
{
	static const char *const keywords[] = {
		"state", "exclude", "excl", "src", "dst", "sport", "dport", "dev", "fwmark",
		"cgroup", "unit", "autobound", "uid", "inode", "ino", "cookie", "proto", "path",
		"netlink-proto", "nlproto", "group", "pid", "comm", "user", "not",
	};
	size_t n;

	word += strspn(word, "(! \t");
	if (!*word)
		return false;
	n = strspn(word, "abcdefghijklmnopqrstuvwxyz-");
	for (size_t i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
		if (strlen(keywords[i]) == n && !strncmp(word, keywords[i], n))
			return true;
	return false;
}

/*
 * ss's -K (--kill) and -E (--events) anywhere among the options: remove them from argv
 * and return the command they mean ("kill", "watch"), or NULL. Letters after an option
 * that takes an argument are that argument (-fK is "-f K").
 */
static const char *ss_command_option(int argc, char **argv)
{
	static const char with_arg[] = "fANF";
	const char *cmd = NULL;

	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		char *a = argv[i];

		if (!strcmp(a, "--kill") || !strcmp(a, "--events")) {
			cmd = a[2] == 'k' ? "kill" : "watch";
			a[0] = '\0';
			continue;
		}
		if (a[0] != '-' || a[1] == '-' || !a[1])
			continue;
		for (char *p = a + 1; *p; p++) {
			if (strchr(with_arg, *p)) {
				if (!p[1])
					i++;	/* the next word is the argument */
				break;
			}
			if (*p == 'K' || *p == 'E') {
				cmd = *p == 'K' ? "kill" : "watch";
				memmove(p, p + 1, strlen(p));
				p--;
			}
		}
		if (!strcmp(a, "-"))
			a[0] = '\0';	/* "-K" alone: nothing left */
	}
	return cmd;
}

/* Drop the words ss_command_option() emptied. Returns the new argc. */
static int drop_empty(int argc, char **argv)
{
	int n = 1;

	for (int i = 1; i < argc; i++)
		if (argv[i][0] || (i > 0 && !strcmp(argv[i - 1], "--")))
			argv[n++] = argv[i];
	argv[n] = NULL;
	return n;
}

/*
 * Descriptors 0, 1 and 2 that are closed get /dev/null, so that nothing opened later
 * lands there (watch's netlink socket became its standard output and got the table).
 * Returns 0, or the exit status after saying why not: a closed standard output or
 * error is refused (output written nowhere is no way to run; stderr's own message
 * goes to /dev/null, the status says it).
 */
static int std_fds(void)
{
	static const char *const names[] = { "input", "output", "error" };
	int closed = -1;

	for (int fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		/* The lower ones are open: the lowest free descriptor is fd. */
		if (open("/dev/null", fd ? O_WRONLY : O_RDONLY) != fd) {
			fprintf(stderr, "sockdiag: descriptor %d is closed and /dev/null cannot be "
					"opened: %s\n", fd, strerror(errno));
			return EXIT_RUNTIME;
		}
		if (fd && closed < 0)
			closed = fd;
	}
	if (closed < 0)
		return 0;
	fprintf(stderr, "sockdiag: standard %s (descriptor %d) is closed: refusing to run "
			"(redirect it to /dev/null to discard the output)\n", names[closed], closed);
	return EXIT_RUNTIME;
}

int main(int argc, char **argv)
{
	char list_name[] = "list", kill_name[] = "kill", watch_name[] = "watch";
	char q[TEXT_QUOTE_LEN];
	int r = std_fds();

	if (r)
		return r;

	/* A reader that goes away (`sockdiag watch | head`) is a write error
	 * (EPIPE) each command handles: it ends the output, not the process. */
	signal(SIGPIPE, SIG_IGN);

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
		/* ss habits: options straight away mean list; -K kill, -E watch. */
		const char *ss_cmd = ss_command_option(argc, argv);

		argc = drop_empty(argc, argv);
		if (ss_cmd && !strcmp(ss_cmd, "kill")) {
			argv[0] = kill_name;
			return cmd_kill(argc, argv);
		}
		if (ss_cmd) {
			argv[0] = watch_name;
			return cmd_watch(argc, argv);
		}
		argv[0] = list_name;
		return cmd_list(argc, argv);
	}
	if (starts_filter(argv[1])) {
		/* A FILTER straight away means list too. */
		argv[0] = list_name;
		return cmd_list(argc, argv);
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "sockdiag: unknown command '%s' (try 'sockdiag help')\n",
		text_quote(q, sizeof(q), argv[1]));
	return EXIT_USAGE;
}
