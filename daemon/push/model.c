// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The exposition read back into samples (push.h). The text is the
 * exporter's own OpenMetrics output (expo.c), parsed strictly: a line this
 * parser does not understand is an error, never a silently missing series.
 * Strings stay in the text (cut with NULs, label values unescaped in place:
 * an unescaped value is never longer), so a parse is three arrays.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/push/push.h"

static const struct {
	const char *name;
	enum pm_type type;
} types[] = {
	{ "gauge", PM_GAUGE }, { "counter", PM_COUNTER }, { "histogram", PM_HISTOGRAM },
	{ "gaugehistogram", PM_GAUGEHISTOGRAM }, { "unknown", PM_UNKNOWN },
};

void pm_free(struct pm *m)
{
	free(m->text);
	free(m->fams);
	free(m->samples);
	free(m->labels);
	memset(m, 0, sizeof(*m));
}

static int grow(void **arr, size_t n, size_t *cap, size_t size)
{
	void *a;

	if (n < *cap)
		return 0;
	a = realloc(*arr, (*cap ? *cap * 2 : 64) * size);
	if (!a)
		return -ENOMEM;
	*arr = a;
	*cap = *cap ? *cap * 2 : 64;
	return 0;
}

static bool name_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
	       (!first && c >= '0' && c <= '9');
}

/* A metric or label name at *s: NUL-terminates it later (returns its start,
 * leaves *s on the character after it), NULL when there is none. */
static char *name_at(char **s)
{
	char *b = *s;

	if (!name_char(*b, true))
		return NULL;
	while (name_char(**s, false))
		(*s)++;
	return b;
}

/* "value" at *s (after the quote): unescaped in place, NUL-terminated. */
static char *quoted(char **s)
{
	char *r = *s, *w = *s, *p = *s;

	for (; *p && *p != '"'; p++) {
		if (*p != '\\') {
			*w++ = *p;
			continue;
		}
		p++;
		if (*p == 'n')
			*w++ = '\n';
		else if (*p == '\\' || *p == '"')
			*w++ = *p;
		else
			return NULL;
	}
	if (*p != '"')
		return NULL;
	*w = 0;
	*s = p + 1;
	return r;
}

struct parse {
	struct pm *m;
	size_t cap_f, cap_s, cap_l;
};

static int sample(struct parse *ps, char *line)
{
	struct pm *m = ps->m;
	struct pm_sample *s;
	char *p = line, *end, *name = name_at(&p);
	int r;

	if (!name || !m->n_fams)
		return -EINVAL;
	r = grow((void **)&m->samples, m->n_samples, &ps->cap_s, sizeof(*m->samples));
	if (r < 0)
		return r;
	s = &m->samples[m->n_samples];
	s->name = name;
	s->label0 = m->n_labels;
	s->n_labels = 0;
	if (*p == '{') {
		*p++ = 0;
		while (*p != '}') {
			struct pm_label *l;
			char *ln = name_at(&p);

			if (!ln || p[0] != '=' || p[1] != '"')
				return -EINVAL;
			*p = 0;
			p += 2;
			r = grow((void **)&m->labels, m->n_labels, &ps->cap_l, sizeof(*m->labels));
			if (r < 0)
				return r;
			l = &m->labels[m->n_labels++];
			l->name = ln;
			l->value = quoted(&p);
			if (!l->value)
				return -EINVAL;
			s->n_labels++;
			if (*p == ',')
				p++;
			else if (*p != '}')
				return -EINVAL;
		}
		p++;
	}
	if (*p != ' ')
		return -EINVAL;
	*p++ = 0;
	s->value = strtod(p, &end);
	if (end == p || *end)
		return -EINVAL;
	m->fams[m->n_fams - 1].n_samples++;
	m->n_samples++;
	return 0;
}

static int comment(struct parse *ps, char *line)
{
	struct pm *m = ps->m;
	char *p = line + 2, *name;
	bool help;

	if (line[1] != ' ')	/* "#" alone: nothing past its NUL is read */
		return -EINVAL;
	if (!strcmp(line, "# EOF"))
		return 0;
	if (strncmp(p, "HELP ", 5) && strncmp(p, "TYPE ", 5))
		return strncmp(p, "UNIT ", 5) ? -EINVAL : 0;
	help = p[0] == 'H';
	p += 5;
	name = name_at(&p);
	if (!name || *p != ' ')
		return -EINVAL;
	*p++ = 0;
	if (!m->n_fams || strcmp(m->fams[m->n_fams - 1].name, name)) {
		struct pm_family *f;
		int r = grow((void **)&m->fams, m->n_fams, &ps->cap_f, sizeof(*m->fams));

		if (r < 0)
			return r;
		f = &m->fams[m->n_fams++];
		memset(f, 0, sizeof(*f));
		f->name = name;
		f->help = "";
		f->sample0 = m->n_samples;
	}
	if (help) {
		m->fams[m->n_fams - 1].help = p;
		return 0;
	}
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(p, types[i].name)) {
			m->fams[m->n_fams - 1].type = types[i].type;
			return 0;
		}
	return -EINVAL;
}

int pm_parse(char *text, int64_t time_ms, struct pm *ret, unsigned *line)
{
	struct pm m = { .text = text, .time_ms = time_ms };
	struct parse ps = { .m = &m };
	char *p = text;
	int r = 0;

	*line = 0;
	while (*p) {
		char *nl = strchr(p, '\n');

		if (!nl)
			nl = p + strlen(p);	/* the last line without its newline */
		else
			*nl++ = 0;
		++*line;
		r = *p == '#' ? comment(&ps, p) : sample(&ps, p);
		if (r < 0)
			break;
		p = nl;
	}
	if (r < 0) {
		pm_free(&m);
		return r;
	}
	*line = 0;
	*ret = m;
	return 0;
}

const char *pm_label(const struct pm *m, const struct pm_sample *s, const char *name)
{
	for (size_t i = 0; i < s->n_labels; i++)
		if (!strcmp(m->labels[s->label0 + i].name, name))
			return m->labels[s->label0 + i].value;
	return NULL;
}
