/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading tests/filters/corpus.txt (header-only; used by the unit, live and
 * fuzz tests). A line is a filter, optionally followed by a tab and
 * "#noss: REASON" (not compared with ss). Lines starting with '#' and blank
 * lines are skipped.
 */
#ifndef SOCKDIAG_TESTS_CORPUS_UTIL_H
#define SOCKDIAG_TESTS_CORPUS_UTIL_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CORPUS_FILE
#error "CORPUS_FILE must name tests/filters/corpus.txt"
#endif

struct corpus_entry {
	char *expr;
	char *noss; /* the reason, or NULL when ss can be compared */
};

struct corpus {
	struct corpus_entry *v;
	size_t n;
};

static inline void corpus_free(struct corpus *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].expr);
		free(c->v[i].noss);
	}
	free(c->v);
	c->v = NULL;
	c->n = 0;
}

/* Returns 0, or -1 when the file cannot be read. */
static inline int corpus_load(struct corpus *c)
{
	FILE *fp = fopen(CORPUS_FILE, "re");
	char line[1024];

	c->v = NULL;
	c->n = 0;
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		char *tab, *end;
		struct corpus_entry *v;

		line[strcspn(line, "\n")] = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		v = realloc(c->v, (c->n + 1) * sizeof(*v));
		if (!v)
			break;
		c->v = v;
		tab = strstr(line, "\t#noss:");
		c->v[c->n].noss = NULL;
		if (tab) {
			*tab = '\0';
			c->v[c->n].noss = strdup(tab + 7);
		}
		end = line + strlen(line);
		while (end > line && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		c->v[c->n].expr = strdup(line);
		c->n++;
	}
	fclose(fp);
	return 0;
}

#endif
