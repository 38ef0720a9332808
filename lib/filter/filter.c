// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The filter language: lexer, grammar, public parse/free.
 *
 * ss's grammar (misc/ssfilter.y): `and`, `or` and juxtaposition have the SAME
 * precedence and associate to the left (`a or b and c` is `(a or b) and c`);
 * `not`/`!` binds to one primary. We keep that so expressions mean what they
 * mean to ss. State clauses may appear anywhere; a run of adjacent
 * `state`/`exclude` clauses is combined the way ss combines its leading ones
 * (states are added, excludes removed, starting from all states if the run
 * begins with an exclude).
 *
 * The lexer also splits `sport>=:22`, `!sport` and `(x)` so that shell-style
 * whitespace is not required, and accepts "quoted words" for globs and paths.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/filter/filter_parse.h"

#define MAX_DEPTH 200
#define MAX_TOKENS 4096

enum tok_type { TK_EOF, TK_WORD, TK_LPAREN, TK_RPAREN, TK_OP };

struct token {
	enum tok_type type;
	struct sd_ftok t;
	bool quoted;
};

struct parser {
	struct sd_fparser p;
	struct token *toks;
	size_t n, cap, pos;
	unsigned depth;
};

/* Append s to out[*o..cap) for a message: at most 32 bytes of it, control
 * characters, quotes and backslashes escaped, "..." when cut. */
static void put_quoted(char *out, size_t cap, size_t *o, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		char e[5];
		size_t n = 0;

		if (i == 32) {
			memcpy(e, "...", 3);
			n = 3;
		} else if (c < 0x20 || c == 0x7f || c == '\\' || c == '\'') {
			e[n++] = '\\';
			if (c == '\\' || c == '\'') {
				e[n++] = (char)c;
			} else {
				e[n++] = 'x';
				e[n++] = hex[c >> 4];
				e[n++] = hex[c & 15];
			}
		} else {
			e[n++] = (char)c;
		}
		if (*o + n >= cap)
			return;
		memcpy(out + *o, e, n);
		*o += n;
		if (i == 32)
			return;
	}
}

/*
 * The parser's error: fmt knows %s, %d and %zu. A %s is text from the
 * expression (a token, a host name): escaped and cut short, so that the
 * message stays one line and always fits err->msg whole.
 */
static void ferr_vset(struct sdiag_filter_error *err, size_t off, size_t len, const char *fmt,
		      va_list ap)
{
	char *out = err->msg;
	size_t o = 0, cap = sizeof(err->msg);

	err->offset = off;
	err->len = len;
	for (const char *f = fmt; *f && o + 1 < cap; f++) {
		char num[32];
		int n = 0;

		if (*f != '%') {
			out[o++] = *f;
			continue;
		}
		f++;
		if (*f == 's') {
			put_quoted(out, cap, &o, va_arg(ap, const char *));
			continue;
		}
		if (*f == 'd')
			n = snprintf(num, sizeof(num), "%d", va_arg(ap, int));
		else if (*f == 'z' && f[1] == 'u')
			n = snprintf(num, sizeof(num), "%zu", va_arg(ap, size_t)), f++;
		else if (*f == '%')
			n = snprintf(num, sizeof(num), "%%");
		else
			break;	/* not a conversion sd_ferr knows: a bug, stop here */
		if (o + (size_t)n < cap) {
			memcpy(out + o, num, (size_t)n);
			o += (size_t)n;
		}
	}
	out[o] = '\0';
}

int sd_ferr(struct sd_fparser *p, size_t off, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (p->err_set || !p->err)
		return -EINVAL;
	p->err_set = true;
	va_start(ap, fmt);
	ferr_vset(p->err, off, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

void sd_ferr_set(struct sdiag_filter_error *err, size_t off, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ferr_vset(err, off, len, fmt, ap);
	va_end(ap);
}

struct sd_fnode *sd_fnode_new(enum sd_fkind kind)
{
	struct sd_fnode *n = calloc(1, sizeof(*n));

	if (n)
		n->kind = (uint8_t)kind;
	return n;
}

void sd_fnode_free(struct sd_fnode *n)
{
	while (n) {
		struct sd_fnode *next = n->b;

		sd_fnode_free(n->a);
		if (n->kind == SD_F_UNIX_NAME ||
		    (n->kind == SD_F_PROC && n->field == SD_FPROC_COMM))
			free(n->u.str);
		else if (n->kind == SD_F_UNIX_PEER)
			free(n->u.peer.glob);
		if (n->kind == SD_F_CGROUP) {
			free(n->u.cg.spec);
			free(n->u.cg.ids);
		}
		free(n);
		n = next; /* iterate on the right: or-chains of addresses can be long */
	}
}

/* ---- lexer ---------------------------------------------------------------- */

static bool is_opchar(char c)
{
	return c == '=' || c == '!' || c == '<' || c == '>' || c == '&' || c == '|';
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int push(struct parser *ps, enum tok_type type, size_t off, size_t len, const char *text,
		size_t text_len, bool quoted)
{
	struct token *tk;
	char *copy;

	if (ps->n >= MAX_TOKENS)
		return sd_ferr(&ps->p, off, len, "filter too long (more than %d words)",
			       MAX_TOKENS);
	if (ps->n == ps->cap) {
		size_t cap = ps->cap ? ps->cap * 2 : 16;
		struct token *v = realloc(ps->toks, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		ps->toks = v;
		ps->cap = cap;
	}
	copy = strndup(text, text_len);
	if (!copy)
		return -ENOMEM;
	tk = &ps->toks[ps->n++];
	tk->type = type;
	tk->t.text = copy;
	tk->t.off = off;
	tk->t.len = len;
	tk->quoted = quoted;
	return 0;
}

static size_t op_len(const char *s)
{
	static const char *const two[] = { "!=", "==", ">=", "<=", "&&", "||" };

	for (size_t i = 0; i < sizeof(two) / sizeof(two[0]); i++)
		if (!strncmp(s, two[i], 2))
			return 2;
	return 1;
}

/* A bare word ends at whitespace or a parenthesis; a keyword-like word
 * (letters and '-') also ends where an operator starts: `sport>=:22`. */
static size_t word_len(const char *s)
{
	size_t i = 0;
	bool keyword = true;

	while (s[i] && !is_space(s[i]) && s[i] != '(' && s[i] != ')') {
		if (keyword && i > 0 && is_opchar(s[i]))
			break;
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || s[i] == '-'))
			keyword = false;
		i++;
	}
	return i;
}

static int lex(struct parser *ps)
{
	const char *e = ps->p.expr;
	size_t i = 0;
	int r;

	for (;;) {
		while (is_space(e[i]))
			i++;
		if (!e[i])
			return push(ps, TK_EOF, i, 0, "", 0, false);
		if (e[i] == '(' || e[i] == ')') {
			r = push(ps, e[i] == '(' ? TK_LPAREN : TK_RPAREN, i, 1, e + i, 1, false);
			i++;
		} else if (e[i] == '"' || e[i] == '\'') {
			const char *end = strchr(e + i + 1, e[i]);

			if (!end)
				return sd_ferr(&ps->p, i, strlen(e + i), "unterminated quote");
			r = push(ps, TK_WORD, i, (size_t)(end - e) - i + 1, e + i + 1,
				 (size_t)(end - e) - i - 1, true);
			i = (size_t)(end - e) + 1;
		} else if (is_opchar(e[i])) {
			size_t n = op_len(e + i);

			r = push(ps, TK_OP, i, n, e + i, n, false);
			i += n;
		} else {
			size_t n = word_len(e + i);

			r = push(ps, TK_WORD, i, n, e + i, n, false);
			i += n;
		}
		if (r < 0)
			return r;
	}
}

/* ---- grammar ---------------------------------------------------------------- */

static const struct token *peek(const struct parser *ps)
{
	return &ps->toks[ps->pos];
}

static bool tok_is(const struct token *tk, const char *s)
{
	return (tk->type == TK_WORD || tk->type == TK_OP) && !tk->quoted && !strcmp(tk->t.text, s);
}

static bool tok_in(const struct token *tk, const char *const *list)
{
	for (; *list; list++)
		if (tok_is(tk, *list))
			return true;
	return false;
}

static const char *const not_words[] = { "!", "not", NULL };
static const char *const and_words[] = { "&", "&&", "and", NULL };
static const char *const or_words[] = { "|", "||", "or", NULL };

/* A comparison operator at the current position, or -1. */
static int cmp_op(const struct token *tk)
{
	static const struct {
		const char *const words[4];
		enum sd_fcmp cmp;
	} ops[] = {
		{ { "=", "==", "eq", NULL }, SD_EQ }, { { "!=", "ne", "neq", NULL }, SD_NE },
		{ { "<", "lt", NULL }, SD_LT },	      { { "<=", "le", "leq", NULL }, SD_LE },
		{ { ">", "gt", NULL }, SD_GT },	      { { ">=", "ge", "geq", NULL }, SD_GE },
	};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (tok_in(tk, ops[i].words))
			return ops[i].cmp;
	return -1;
}

static int expect_value(struct parser *ps, const char *what, const struct sd_ftok **ret)
{
	const struct token *tk = peek(ps);

	if (tk->type != TK_WORD)
		return sd_ferr(&ps->p, tk->t.off, tk->t.len, "expected %s", what);
	*ret = &tk->t;
	ps->pos++;
	return 0;
}

/* An optional operator after a keyword. allow_order: < <= > >= are valid. */
static int optional_cmp(struct parser *ps, const char *kw, bool allow_order, enum sd_fcmp *ret)
{
	const struct token *tk = peek(ps);
	int c = cmp_op(tk);

	if (c < 0) {
		*ret = SD_EQ;
		return 0;
	}
	if (!allow_order && c != SD_EQ && c != SD_NE)
		return sd_ferr(&ps->p, tk->t.off, tk->t.len, "'%s' takes only = or != (not '%s')",
			       kw, tk->t.text);
	ps->pos++;
	*ret = (enum sd_fcmp)c;
	return 0;
}

static int wrap_not(struct sd_fnode **n)
{
	struct sd_fnode *x = sd_fnode_new(SD_F_NOT);

	if (!x)
		return -ENOMEM;
	x->a = *n;
	*n = x;
	return 0;
}

static int parse_states(struct parser *ps, struct sd_fnode **ret)
{
	uint32_t mask = 0;
	bool first = true;
	int r;

	while (tok_is(peek(ps), "state") || tok_is(peek(ps), "exclude") ||
	       tok_is(peek(ps), "excl")) {
		bool excl = !tok_is(peek(ps), "state");
		const struct sd_ftok *v = NULL;
		uint32_t m;

		ps->pos++;
		r = expect_value(ps, "a state name (established, listening, connected, ...)", &v);
		if (r < 0)
			return r;
		r = sd_fparse_state(&ps->p, v, &m);
		if (r < 0)
			return r;
		if (first && excl)
			mask = SDIAG_STATES_ALL;
		mask = excl ? mask & ~m : mask | m;
		first = false;
	}
	*ret = sd_fnode_new(SD_F_STATE);
	if (!*ret)
		return -ENOMEM;
	(*ret)->u.states = mask;
	return 0;
}

static int parse_num_pred(struct parser *ps, const char *kw, enum sd_ffield field, enum sd_fdir dir,
			  struct sd_fnode **ret)
{
	const struct sd_ftok *v = NULL;
	struct sd_fnode *n;
	enum sd_fcmp cmp;
	int32_t port;
	uint64_t val;
	int r;

	r = optional_cmp(ps, kw, true, &cmp);
	if (r < 0)
		return r;
	r = expect_value(ps, field == SD_FLD_PORT ? "a port (:22, 22, :ssh)" : "a number", &v);
	if (r < 0)
		return r;
	if (field == SD_FLD_PORT) {
		r = sd_fparse_port(&ps->p, v, &port);
		if (r < 0)
			return r;
		if (port < 0 && cmp != SD_EQ)
			return sd_ferr(&ps->p, v->off, v->len, "'*' (any port) only works with =");
		val = port < 0 ? UINT64_MAX : (uint64_t)port;
	} else {
		r = sd_fparse_number(&ps->p, v, field, &val);
		if (r < 0)
			return r;
	}
	n = sd_fnode_new(SD_F_NUM);
	if (!n)
		return -ENOMEM;
	n->field = (uint8_t)field;
	n->dir = (uint8_t)dir;
	n->cmp = (uint8_t)cmp;
	n->u.num.value = val;
	*ret = n;
	return 0;
}

/* src/dst HOST; `!=` is an extension (ss has only [=]). */
static int parse_host_pred(struct parser *ps, const char *kw, enum sd_fdir dir,
			   struct sd_fnode **ret)
{
	const struct sd_ftok *v = NULL;
	enum sd_fcmp cmp;
	int r;

	r = optional_cmp(ps, kw, false, &cmp);
	if (r < 0)
		return r;
	r = expect_value(ps, "an address (1.2.3.4/24:80, [::1]:22, *:80, /unix/path, ...)", &v);
	if (r < 0)
		return r;
	r = sd_fparse_host(&ps->p, v, dir, ret);
	if (r < 0)
		return r;
	return cmp == SD_NE ? wrap_not(ret) : 0;
}

/* Predicates whose value is one word and whose `!=` is a comparison. */
static int parse_simple(struct parser *ps, const char *kw, enum sd_fkind kind,
			struct sd_fnode **ret)
{
	const struct sd_ftok *v = NULL;
	struct sd_fnode *n = NULL;
	enum sd_fcmp cmp;
	uint32_t u32 = 0;
	bool rtnl = false;
	int r;

	r = optional_cmp(ps, kw, false, &cmp);
	if (r < 0)
		return r;
	r = expect_value(ps,
			 kind == SD_F_DEV     ? "a device name or index" :
			 kind == SD_F_MARK    ? "MARK[/MASK]" :
			 kind == SD_F_CGROUP  ? (strcmp(kw, "unit") ? "a cgroup path" :
								      "a unit name") :
			 kind == SD_F_TABLES  ? "a socket kind (tcp, udp, unix, netlink, ...)" :
			 kind == SD_F_NLPROTO ? "a netlink protocol (route, generic, 16, ...)" :
			 kind == SD_F_NLGROUP ? "a group number or rtnetlink group name" :
						"a glob",
			 &v);
	if (r < 0)
		return r;
	n = sd_fnode_new(kind);
	if (!n)
		return -ENOMEM;
	n->cmp = (uint8_t)cmp;
	switch (kind) {
	case SD_F_DEV:
		r = sd_fparse_dev(&ps->p, v, &u32);
		n->u.num.value = u32;
		break;
	case SD_F_MARK:
		r = sd_fparse_mark(&ps->p, v, &n->u.mark.mark, &n->u.mark.mask);
		break;
	case SD_F_CGROUP:
		r = sd_fparse_cgroup(&ps->p, v, !strcmp(kw, "unit"), n);
		break;
	case SD_F_TABLES:
		r = sd_fparse_tables(&ps->p, v, &n->u.tables);
		break;
	case SD_F_NLPROTO:
		r = sd_fparse_nlproto(&ps->p, v, &u32);
		n->u.num.value = u32;
		break;
	case SD_F_NLGROUP:
		r = sd_fparse_group(&ps->p, v, &u32, &rtnl);
		n->u.num.value = u32;
		break;
	default: /* SD_F_UNIX_NAME (path) */
		n->u.str = strdup(v->text);
		r = n->u.str ? 0 : -ENOMEM;
		break;
	}
	if (r < 0)
		goto fail;
	/* Set-like predicates negate as a whole; dev/fwmark/cgroup keep NE. */
	if (kind != SD_F_DEV && kind != SD_F_MARK && kind != SD_F_CGROUP && cmp == SD_NE) {
		n->cmp = SD_EQ;
		r = wrap_not(&n);
		if (r < 0)
			goto fail;
	}
	if (rtnl) {
		/* A named group is an rtnetlink group: also require NETLINK_ROUTE. */
		struct sd_fnode *and = sd_fnode_new(SD_F_AND), *proto = sd_fnode_new(SD_F_NLPROTO);

		if (!and || !proto) {
			free(and);
			free(proto);
			r = -ENOMEM;
			goto fail;
		}
		proto->u.num.value = 0;
		and->a = proto;
		and->b = n;
		n = and;
	}
	*ret = n;
	return 0;
fail:
	sd_fnode_free(n);
	return r;
}

/* pid/comm/user: the owning processes (filter_proc.c); `<` etc. only for pid. */
static int parse_proc_pred(struct parser *ps, const char *kw, struct sd_fnode **ret)
{
	const struct sd_ftok *v = NULL;
	enum sd_fcmp cmp;
	int r;

	r = optional_cmp(ps, kw, !strcmp(kw, "pid"), &cmp);
	if (r < 0)
		return r;
	r = expect_value(ps, !strcmp(kw, "comm") ? "a command name glob" :
			     !strcmp(kw, "pid") ? "a process id" : "a user name or uid", &v);
	if (r < 0)
		return r;
	return sd_fparse_proc(&ps->p, kw, cmp, v, ret);
}

/* idle/rtt/rqueue/...: an operator is required (`idle 10m` would be a guess). */
static int parse_tcp_pred(struct parser *ps, const struct token *kwt, struct sd_fnode **ret)
{
	const struct token *tk = peek(ps);
	int c = cmp_op(tk);

	if (c >= 0) {
		ps->pos++;
		tk = peek(ps);
		if (tk->type != TK_WORD)
			return sd_ferr(&ps->p, tk->t.off, tk->t.len,
				       "'%s' needs a value after the comparison", kwt->t.text);
		ps->pos++;
	}
	return sd_fparse_tcpinfo(&ps->p, kwt->t.text, &kwt->t, c,
				 c >= 0 && tk->type == TK_WORD ? &tk->t : NULL, ret);
}

static int parse_exprlist(struct parser *ps, struct sd_fnode **ret);

static int parse_predicate(struct parser *ps, struct sd_fnode **ret)
{
	static const struct {
		const char *kw;
		enum sd_fkind kind;
	} simple[] = {
		{ "dev", SD_F_DEV },
		{ "fwmark", SD_F_MARK },
		{ "cgroup", SD_F_CGROUP },
		{ "unit", SD_F_CGROUP },
		{ "proto", SD_F_TABLES },
		{ "netlink-proto", SD_F_NLPROTO },
		{ "nlproto", SD_F_NLPROTO },
		{ "group", SD_F_NLGROUP },
		{ "path", SD_F_UNIX_NAME },
	};
	static const struct {
		const char *kw;
		enum sd_ffield field;
		enum sd_fdir dir;
	} nums[] = {
		{ "sport", SD_FLD_PORT, SD_DIR_SRC }, { "dport", SD_FLD_PORT, SD_DIR_DST },
		{ "uid", SD_FLD_UID, SD_DIR_SRC },    { "inode", SD_FLD_INODE, SD_DIR_SRC },
		{ "ino", SD_FLD_INODE, SD_DIR_SRC },  { "cookie", SD_FLD_COOKIE, SD_DIR_SRC },
	};
	const struct token *tk = peek(ps);
	const char *kw = tk->t.text;

	if (tk->type != TK_WORD || tk->quoted)
		goto bad;
	if (!strcmp(kw, "state") || !strcmp(kw, "exclude") || !strcmp(kw, "excl"))
		return parse_states(ps, ret);
	ps->pos++;
	if (!strcmp(kw, "src") || !strcmp(kw, "dst"))
		return parse_host_pred(ps, kw, kw[0] == 's' ? SD_DIR_SRC : SD_DIR_DST, ret);
	if (!strcmp(kw, "autobound"))
		return sd_fparse_autobound(&ps->p, &tk->t, ret);
	if (!strcmp(kw, "pid") || !strcmp(kw, "comm") || !strcmp(kw, "user"))
		return parse_proc_pred(ps, kw, ret);
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		if (!strcmp(kw, nums[i].kw))
			return parse_num_pred(ps, kw, nums[i].field, nums[i].dir, ret);
	for (size_t i = 0; i < sizeof(simple) / sizeof(simple[0]); i++)
		if (!strcmp(kw, simple[i].kw))
			return parse_simple(ps, kw, simple[i].kind, ret);
	if (sd_ftcp_keyword(kw))
		return parse_tcp_pred(ps, tk, ret);
	ps->pos--;
bad:
	if (tk->type == TK_EOF)
		return sd_ferr(&ps->p, tk->t.off, 0, "expected a condition, found end of filter");
	return sd_ferr(&ps->p, tk->t.off, tk->t.len,
		       "expected a condition (src, dst, sport, dport, state, dev, idle, ...), "
		       "found '%s'",
		       kw);
}

static int parse_primary(struct parser *ps, struct sd_fnode **ret)
{
	const struct token *tk = peek(ps);
	int r;

	if (++ps->depth > MAX_DEPTH) {
		r = sd_ferr(&ps->p, tk->t.off, tk->t.len, "filter nested too deeply");
		goto out;
	}
	if (tk->type == TK_LPAREN) {
		size_t open = tk->t.off;

		ps->pos++;
		r = parse_exprlist(ps, ret);
		if (r < 0)
			goto out;
		tk = peek(ps);
		if (tk->type != TK_RPAREN) {
			sd_fnode_free(*ret);
			r = sd_ferr(&ps->p, tk->t.off, tk->t.len,
				    "expected ')' to close the '(' at offset %zu", open);
			goto out;
		}
		ps->pos++;
	} else if (tok_in(tk, not_words)) {
		ps->pos++;
		r = parse_primary(ps, ret);
		if (r == 0) {
			r = wrap_not(ret);
			if (r < 0)
				sd_fnode_free(*ret);
		}
	} else {
		r = parse_predicate(ps, ret);
	}
out:
	ps->depth--;
	return r;
}

static int parse_exprlist(struct parser *ps, struct sd_fnode **ret)
{
	struct sd_fnode *left = NULL, *right = NULL, *n;
	int r;

	r = parse_primary(ps, &left);
	if (r < 0)
		return r;
	for (;;) {
		const struct token *tk = peek(ps);
		enum sd_fkind kind = SD_F_AND;

		if (tk->type == TK_EOF || tk->type == TK_RPAREN)
			break;
		if (tok_in(tk, or_words)) {
			kind = SD_F_OR;
			ps->pos++;
		} else if (tok_in(tk, and_words)) {
			ps->pos++;
		}
		r = parse_primary(ps, &right);
		if (r < 0)
			goto fail;
		n = sd_fnode_new(kind);
		if (!n) {
			sd_fnode_free(right);
			r = -ENOMEM;
			goto fail;
		}
		n->a = left;
		n->b = right;
		left = n;
	}
	*ret = left;
	return 0;
fail:
	sd_fnode_free(left);
	return r;
}

/* Parse (pure), then resolve cgroup paths and unit names against the cgroup
 * tree: a name that does not exist is an error of the expression. */
SD_EXPORT int sdiag_filter_parse(struct sdiag_filter **ret, const char *expr,
				 struct sdiag_filter_error *err)
{
	struct sdiag_filter *f = NULL;
	int r;

	r = sd_filter_parse_flags(&f, expr, err, 0);
	if (r < 0)
		return r;
	r = sd_filter_resolve_cgroups(f, false, err);
	if (r < 0) {
		sdiag_filter_free(f);
		return r == -ENOMEM ? r : -EINVAL;
	}
	*ret = f;
	return 0;
}

int sd_filter_parse_flags(struct sdiag_filter **ret, const char *expr,
			  struct sdiag_filter_error *err, unsigned flags)
{
	struct parser ps = { .p = { .expr = expr, .err = err, .flags = flags } };
	struct sd_fnode *root = NULL;
	struct sdiag_filter *f = NULL;
	int r;

	if (!ret || !expr)
		return -EINVAL;
	r = lex(&ps);
	if (r < 0)
		goto out;
	if (peek(&ps)->type != TK_EOF) {
		r = parse_exprlist(&ps, &root);
		if (r < 0)
			goto out;
		if (peek(&ps)->type != TK_EOF) {
			const struct token *tk = peek(&ps);

			r = sd_ferr(&ps.p, tk->t.off, tk->t.len, "unexpected ')'");
			goto out;
		}
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		r = -ENOMEM;
		goto out;
	}
	f->root = root;
	f->net_admin = sd_filter_have_net_admin();
	f->n_peers = ps.p.n_peers;
	root = NULL;
	*ret = f;
	r = 0;
out:
	sd_fnode_free(root);
	for (size_t i = 0; i < ps.n; i++)
		free((char *)ps.toks[i].t.text);
	free(ps.toks);
	return r;
}

SD_EXPORT void sdiag_filter_free(struct sdiag_filter *f)
{
	if (!f)
		return;
	sd_fnode_free(f->root);
	sd_fbuild_free(f->build);
	free(f);
}
