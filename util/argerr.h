/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What getopt_long refused, said in one line on stderr with the user's text
 * escaped: shared by every command's option parser (cli/opts/options.c, the
 * guard's and the exporter's).
 */
#ifndef SOCKDIAG_ARGERR_H
#define SOCKDIAG_ARGERR_H

#include <getopt.h>

/*
 * getopt_long returned c ('?' or ':'; run with opterr = 0 and ':' first in
 * the option string) while parsing argv with the long options lo. Prints
 * "sockdiag CMD: " and one of
 *   unknown option '--jsno' (did you mean '--json'? see 'sockdiag CMD --help')
 *   unknown option '-x' (see 'sockdiag CMD --help')
 *   ambiguous option '--co' (--count, --count-by, ...; see 'sockdiag CMD --help')
 *   option '--tcp' takes no value
 *   option '--count-by' requires an argument | option '-N' requires an argument
 * naming the option as the user wrote it (a long option by its full name).
 * Reads optind and optopt. Returns -EINVAL.
 */
int argerr_getopt(const char *cmd, const struct option *lo, int c, char *const *argv);

/* A word left after the options of a command that takes none: one line,
 * "unexpected argument 'WORD'". Returns -EINVAL. */
int argerr_operand(const char *cmd, const char *word);

/*
 * -N SPEC, checked before anything is opened: an empty one, "pid:" without a
 * process id, "." or "..", a name over 255 bytes. Malformed: one line ending
 * "(-N FORMS)", the forms the command takes, and -EINVAL (a usage error);
 * else 0.
 */
int argerr_netns_spec(const char *cmd, const char *spec, const char *forms);
/* Why -N SPEC could not be opened (err from sdiag_netns_open), on one line: a
 * missing NAME names the place it was looked for (/run/netns/NAME). */
void argerr_netns(const char *cmd, const char *spec, int err);
/* Why sdiag_netns_open() failed, for a message ("netns X: ..."). */
const char *netns_reason(int r);

#endif
