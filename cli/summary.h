/* SPDX-License-Identifier: GPL-2.0-or-later */
/* list -s|--summary: ss -s's counts and layout (or one JSON object). */
#ifndef SOCKDIAG_CLI_SUMMARY_H
#define SOCKDIAG_CLI_SUMMARY_H

#include "cli/opts/options.h"

/* Print the summary of o's namespace (-N) and return the exit status. */
int summary_run(const struct cli_opts *o);

#endif
