/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The subcommands: one file each, each returns the process exit status. */
#ifndef SOCKDIAG_CLI_COMMANDS_H
#define SOCKDIAG_CLI_COMMANDS_H

/* argv[0] is the subcommand's name. Return the exit status; never exit(). */
int cmd_list(int argc, char **argv);
int cmd_kill(int argc, char **argv);
int cmd_watch(int argc, char **argv);
int cmd_drain(int argc, char **argv);
int cmd_life(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_guard(int argc, char **argv);
int cmd_exporter(int argc, char **argv);

#endif
