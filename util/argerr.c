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
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/argerr.h"
#include "util/textfile.h"

#define ARGERR_NAME_MAX 32	/* longer names are never suggested */

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

/* Optimal string alignment distance of a[0..la) and b, both short (option
 * names): insertions, deletions, substitutions, adjacent transpositions. */
static size_t edit_distance(const char *a, size_t la, const char *b)
{
	size_t lb = strlen(b), d[3][ARGERR_NAME_MAX + 1];

	if (la > ARGERR_NAME_MAX || lb > ARGERR_NAME_MAX)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t *cur = d[i % 3], *prev = d[(i + 2) % 3], *pp = d[(i + 1) % 3];

		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t v = prev[j - 1] + (a[i - 1] != b[j - 1]);

			if (prev[j] + 1 < v)
				v = prev[j] + 1;
			if (cur[j - 1] + 1 < v)
				v = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    pp[j - 2] + 1 < v)
				v = pp[j - 2] + 1;
			cur[j] = v;
		}
	}
	return d[la % 3][lb];
}

/* The long option closest to the n bytes at w, if close enough to be a typo:
 * at most 1 edit for a name of up to 3 bytes, 2 up to 7, 3 beyond. */
static const char *closest(const struct option *lo, const char *w, size_t n)
{
	size_t best = n <= 3 ? 1 : n <= 7 ? 2 : 3;
	const char *name = NULL;

	for (size_t i = 0; lo[i].name; i++) {
		size_t d = edit_distance(w, n, lo[i].name);

		if (d <= best && (!name || d < best)) {
			best = d;
			name = lo[i].name;
		}
	}
	return name;
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
		if (count > 1) {	/* the first candidates, then the pointer */
			size_t shown = 0;

			fprintf(stderr, "sockdiag %s: ambiguous option '--%s' (", cmd,
				text_excerpt(q, sizeof(q), word + 2, n, 32));
			for (size_t i = 0; lo[i].name && shown < 4; i++)
				if (!strncmp(lo[i].name, word + 2, n) &&
				    (i == 0 || strcmp(lo[i - 1].name, lo[i].name)))
					fprintf(stderr, "%s--%s", shown++ ? ", " : "", lo[i].name);
			fprintf(stderr, "%s; see 'sockdiag %s --help')\n", count > shown ? ", ..." : "",
				cmd);
			return -EINVAL;
		}
		if (c == ':' || count != 1) {
			const char *near = closest(lo, word + 2, n);

			fprintf(stderr, "sockdiag %s: unknown option '--%s' (%s%s%ssee 'sockdiag %s "
					"--help')\n", cmd, text_excerpt(q, sizeof(q), word + 2, n, 32),
				near ? "did you mean '--" : "", near ? near : "", near ? "'? " : "",
				cmd);
			return -EINVAL;
		}
	}
	if (c == ':')
		fprintf(stderr, "sockdiag %s: option '-%s' requires an argument\n", cmd,
			TQ(q, opt));
	else
		fprintf(stderr, "sockdiag %s: unknown option '-%s' (see 'sockdiag %s --help')\n",
			cmd, TQ(q, opt), cmd);
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
