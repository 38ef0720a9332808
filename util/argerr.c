// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * getopt_long's refusals, named as the user typed them. With opterr = 0,
 * glibc leaves three things to go by: c ('?' unknown or misused, ':' a value
 * missing), optopt (the short option's character, or a long option's val, or
 * 0 for an unknown long option) and optind. A long option is always a whole
 * word and optind has passed it, so argv[optind - 1] is that word; a short
 * option in the middle of a bundle ("-Xt") has not moved optind, so there
 * argv[optind - 1] is some earlier word and only optopt tells.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/argerr.h"
#include "util/textfile.h"

/* The long options whose names start with the n bytes at name; an exact name wins. */
static const struct option *long_match(const struct option *lo, const char *name, size_t n,
				       size_t *ret_count)
{
	const struct option *match = NULL;
	size_t count = 0;

	for (size_t i = 0; lo[i].name; i++) {
		if (strncmp(lo[i].name, name, n))
			continue;
		if (strlen(lo[i].name) == n) {
			*ret_count = 1;
			return &lo[i];
		}
		/* one option listed twice (an alias table) is one match */
		if (!match || strcmp(match->name, lo[i].name))
			count++;
		match = &lo[i];
	}
	*ret_count = count;
	return match;
}

int argerr_getopt(const char *cmd, const struct option *lo, int c, char *const *argv)
{
	const char *word = optind > 0 ? argv[optind - 1] : NULL;
	char q[TEXT_QUOTE_LEN], opt[2] = { (char)optopt, 0 };

	if (word && !strncmp(word, "--", 2) && word[2]) {
		size_t n = strcspn(word + 2, "="), count;
		const struct option *m = long_match(lo, word + 2, n, &count);

		/* word is the refused long option ("--x", "--x=v") unless it is a
		 * valid one met earlier, as in "--tcp -Xt"; a short option missing
		 * its value always ends its word, so ':' with "--" is always ours. */
		if (c == ':' && m) {
			fprintf(stderr, "sockdiag %s: option '--%s' requires an argument\n", cmd,
				m->name);
			return -EINVAL;
		}
		if (count == 1 && word[2 + n] == '=' && m->has_arg == no_argument) {
			fprintf(stderr, "sockdiag %s: option '--%s' takes no value\n", cmd,
				m->name);
			return -EINVAL;
		}
		if (c == ':' || count != 1) {
			fprintf(stderr, "sockdiag %s: %s option '--%s'\n", cmd,
				count > 1 ? "ambiguous" : "unknown",
				text_excerpt(q, sizeof(q), word + 2, n, 32));
			return -EINVAL;
		}
	}
	if (c == ':')
		fprintf(stderr, "sockdiag %s: option '-%s' requires an argument\n", cmd,
			TQ(q, opt));
	else
		fprintf(stderr, "sockdiag %s: unknown option '-%s'\n", cmd, TQ(q, opt));
	return -EINVAL;
}

int argerr_operand(const char *cmd, const char *word)
{
	char q[TEXT_QUOTE_LEN];

	fprintf(stderr, "sockdiag %s: unexpected argument '%s'\n", cmd, TQ(q, word));
	return -EINVAL;
}

const char *netns_reason(int r)
{
	if (r == -ENOTNAM)
		return "not a network namespace (give a name in /run/netns, an nsfs path such as "
		       "/proc/PID/ns/net, or pid:PID)";
	if (r == -EINVAL)
		return "not a namespace name, path or pid:PID";
	return strerror(-r);
}

int argerr_netns_spec(const char *cmd, const char *spec, const char *forms)
{
	const char *why = NULL;
	char q[256];

	if (!strncmp(spec, "pid:", 4)) {
		const char *d = spec + 4;

		if (!*d || strspn(d, "0123456789") != strlen(d) || strspn(d, "0") == strlen(d) ||
		    strlen(d) > 9)
			why = "PID must be a process id (a positive number)";
	} else if (!*spec) {
		why = "empty name";
	} else if (!strchr(spec, '/') &&
		   (strlen(spec) > 255 || !strcmp(spec, ".") || !strcmp(spec, ".."))) {
		why = "not a namespace name";
	}
	if (!why)
		return 0;
	fprintf(stderr, "sockdiag %s: -N '%s': %s (-N %s)\n", cmd,
		text_excerpt(q, sizeof(q), spec, strlen(spec), 48), why, forms);
	return -EINVAL;
}

void argerr_netns(const char *cmd, const char *spec, int err)
{
	char q[256];

	text_excerpt(q, sizeof(q), spec, strlen(spec), 48);
	if (err == -ENOENT && !strncmp(spec, "pid:", 4))
		fprintf(stderr, "sockdiag %s: netns %s: no such process (/proc/%s/ns/net)\n", cmd,
			q, q + 4);
	else if (err == -ENOENT && !strchr(spec, '/'))
		fprintf(stderr, "sockdiag %s: netns %s: no such network namespace (looked for "
			"/run/netns/%s)\n", cmd, q, q);
	else
		fprintf(stderr, "sockdiag %s: netns %s: %s\n", cmd, q, netns_reason(err));
}
