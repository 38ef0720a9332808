/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Between the filter grammar (filter.c) and the value parsers (filter_value.c). */
#ifndef SDIAG_FILTER_PARSE_H
#define SDIAG_FILTER_PARSE_H

#include "lib/filter/filter.h"

/* One word of the expression, unquoted, with its place in the source text. */
struct sd_ftok {
	const char *text; /* NUL-terminated copy */
	size_t off, len;  /* byte range in the expression (quotes included) */
};

struct sd_fparser {
	const char *expr;
	struct sdiag_filter_error *err;
	bool err_set;
	unsigned flags; /* SD_FPARSE_* */
	uint32_t n_peers; /* unix `dst` slots handed out */
};

/* Record an error at [off, off+len) unless one was already recorded; returns -EINVAL. */
int sd_ferr(struct sd_fparser *p, size_t off, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The same message into err, outside a parse (cgroups resolved later). */
void sd_ferr_set(struct sdiag_filter_error *err, size_t off, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Each parser reads one value word and returns 0 or a negative errno (the
 * error recorded in p). */
int sd_fparse_state(struct sd_fparser *p, const struct sd_ftok *t, uint32_t *ret);
int sd_fparse_port(struct sd_fparser *p, const struct sd_ftok *t, int32_t *ret);
int sd_fparse_host(struct sd_fparser *p, const struct sd_ftok *t, enum sd_fdir dir,
		   struct sd_fnode **ret);
int sd_fparse_dev(struct sd_fparser *p, const struct sd_ftok *t, uint32_t *ret);
int sd_fparse_mark(struct sd_fparser *p, const struct sd_ftok *t, uint32_t *ret_mark,
		   uint32_t *ret_mask);
/* cgroup PATH, a subtree, or unit NAME (unit): checks the form and keeps the
 * text in n->u.cg; nothing is looked up (sd_filter_resolve_cgroups does). */
int sd_fparse_cgroup(struct sd_fparser *p, const struct sd_ftok *t, bool unit,
		     struct sd_fnode *n);
int sd_fparse_number(struct sd_fparser *p, const struct sd_ftok *t, enum sd_ffield field,
		     uint64_t *ret);
int sd_fparse_tables(struct sd_fparser *p, const struct sd_ftok *t, uint32_t *ret);
int sd_fparse_nlproto(struct sd_fparser *p, const struct sd_ftok *t, uint32_t *ret);
int sd_fparse_group(struct sd_fparser *p, const struct sd_ftok *t, uint32_t *ret_group,
		    bool *ret_rtnl);
int sd_fparse_unix_peer(struct sd_fparser *p, const struct sd_ftok *t, const char *glob,
			struct sd_fnode **ret);
/* pid/comm/user (kw) with its operator: an SD_F_PROC node (filter_proc.c). */
int sd_fparse_proc(struct sd_fparser *p, const char *kw, enum sd_fcmp cmp,
		   const struct sd_ftok *v, struct sd_fnode **ret);
/* The TCP-info keywords (idle, rtt, rqueue, ...). */
bool sd_ftcp_keyword(const char *kw);
/* kw at kwt, with its operator (cmp < 0: none) and value (NULL: none). */
int sd_fparse_tcpinfo(struct sd_fparser *p, const char *kw, const struct sd_ftok *kwt, int cmp,
		      const struct sd_ftok *v, struct sd_fnode **ret);
int sd_fparse_autobound(struct sd_fparser *p, const struct sd_ftok *t, struct sd_fnode **ret);

#endif
