// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The walk over the field rows (see field.h): which rows apply is worked out
 * once per family class when the renderer is made (the plan), so a socket
 * costs only the rows that can show.
 */
#include <errno.h>
#include <stdlib.h>

#include "cli/fields/field.h"

/* A text row, flattened out of label-less groups. */
struct tent {
	const struct field *f;
	uint64_t has;		/* with the enclosing groups' */
	uint16_t base;		/* offset of the enclosing groups' struct */
	bool wide;		/* base counts from struct fblobs (a kernel struct), not the record */
};

struct fclass {
	const struct field **json;
	size_t njson;
	struct tent *text;
	size_t ntext;
	const struct field *cell[C_MAX];	/* FL_CELL rows by column */
	uint32_t tblobs;	/* 1 << enum sdiag_blob: kernel structs the text rows read */
	uint64_t tneed[SDIAG_BLOB_MAX];	/* has bits every such row needs */
};

struct fplan {
	uint16_t opt;
	const struct out_opts *o;
	struct fclass cl[F_NCLASS];
};

static const struct {
	const struct field *rows;
	const size_t *n;
} tables[] = {
	{ fields_head, &fields_head_n },
	{ fields_ep, &fields_ep_n },
	{ fields_common, &fields_common_n },
	{ fields_inet, &fields_inet_n },
	{ fields_fam, &fields_fam_n },
	{ fields_tail, &fields_tail_n },
};

static unsigned fam_class(const struct sdiag_sock *s)
{
	switch (s->family) {
	case AF_INET: return 0;
	case AF_INET6: return 1;
	case AF_UNIX: return 2;
	case AF_NETLINK: return 3;
	case AF_PACKET: return 4;
	case AF_VSOCK: return 5;
	case AF_XDP: return 6;
	case AF_TIPC: return 7;
	case AF_SMC: return 8;
	default: return 9;
	}
}

static bool in_fam(const struct field *f, uint16_t fam)
{
	return !f->fams || (f->fams & fam);
}

static bool in_opt(uint16_t want, uint16_t opt)
{
	return !want || (want & opt);
}

/* ---- values -------------------------------------------------------------------- */

#define W(k, m) [k] = offsetof(struct fblobs, m)
const uint16_t fld_blob_off[SDIAG_BLOB_MAX] = {
	W(SDIAG_BLOB_TCP_INFO, tcp_info), W(SDIAG_BLOB_MPTCP_INFO, mptcp_info),
	W(SDIAG_BLOB_MEMINFO, meminfo), W(SDIAG_BLOB_SKMEMINFO, skmem),
	W(SDIAG_BLOB_VEGAS, vegas), W(SDIAG_BLOB_DCTCP, dctcp), W(SDIAG_BLOB_BBR, bbr),
};
#undef W

const void *fld_blob_fill(const struct fctx *c, unsigned k)
{
#define W(k, m) [k] = sizeof(((struct fblobs *)0)->m)
	static const uint16_t size[SDIAG_BLOB_MAX] = {
		W(SDIAG_BLOB_TCP_INFO, tcp_info), W(SDIAG_BLOB_MPTCP_INFO, mptcp_info),
		W(SDIAG_BLOB_MEMINFO, meminfo), W(SDIAG_BLOB_SKMEMINFO, skmem),
		W(SDIAG_BLOB_VEGAS, vegas), W(SDIAG_BLOB_DCTCP, dctcp), W(SDIAG_BLOB_BBR, bbr),
	};
#undef W
	uint8_t *p = (uint8_t *)c->w + fld_blob_off[k];

	sdiag_sock_blob_copy(c->s, k, p, size[k]);
	c->w->filled |= 1u << k;
	return p;
}

/* Where the members of group f count from. */
static const uint8_t *group_base(const struct fctx *c, const struct field *f)
{
	return f->blob ? (const uint8_t *)fld_blob(c, f->blob - 1u) + f->off : c->base + f->off;
}

uint64_t fld_value(const struct fctx *c, const struct field *f)
{
	const uint8_t *p = c->base + f->off;

	if (f->get)
		return f->get(c);
	switch (f->size) {
	case 1: return *p;
	case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
	case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
	case 8: { uint64_t v; memcpy(&v, p, 8); return v; }
	default: return f->kind == FK_STR ? *p : 0;
	}
}

void fld_key(struct fctx *c, const struct field *f)
{
	obuf_put(c->b, f->klit + c->first, f->klen - c->first);
	c->first = false;
}

void fld_key_str(struct fctx *c, const char *k)
{
	if (!c->first)
		obuf_putc(c->b, ',');
	c->first = false;
	obuf_putc(c->b, '"');
	obuf_puts(c->b, k);
	obuf_puts(c->b, "\":");
}

void fld_raw_str(struct obuf *b, const char *v)
{
	obuf_putc(b, '"');
	obuf_puts(b, v);
	obuf_putc(b, '"');
}

void fld_json_bits(struct fctx *c, const struct field *f, uint64_t v,
		   const char *const *names, unsigned n)
{
	bool first = true;

	fld_key(c, f);
	obuf_putc(c->b, '[');
	for (unsigned i = 0; i < n; i++) {
		if (!(v & (UINT64_C(1) << i)))
			continue;
		if (!first)
			obuf_putc(c->b, ',');
		first = false;
		obuf_json_cstr(c->b, names[i]);
	}
	obuf_putc(c->b, ']');
}

void fld_none(struct fctx *c, const struct field *f, uint64_t v)
{
	(void)c;
	(void)f;
	(void)v;
}

void fld_sep(struct fctx *c)
{
	obuf_puts(c->b, c->o->oneline ? " " : "\n\t");
}

/* ss's print_ms_timer(): "1min23sec", "4.500ms"-like compact durations. */
static void ms_timer(struct obuf *b, uint64_t timeout)
{
	unsigned secs = (unsigned)(timeout / 1000), minutes = secs / 60;
	unsigned msecs = (unsigned)(timeout % 1000);

	secs %= 60;
	if (minutes) {
		msecs = 0;
		obuf_u64(b, minutes);
		obuf_puts(b, "min");
		if (minutes > 9)
			secs = 0;
	}
	if (secs) {
		if (secs > 9)
			msecs = 0;
		obuf_u64(b, secs);
		obuf_puts(b, msecs ? "." : "sec");
	}
	if (msecs) {
		obuf_putc(b, (char)('0' + msecs / 100));
		obuf_putc(b, (char)('0' + msecs / 10 % 10));
		obuf_putc(b, (char)('0' + msecs % 10));
		obuf_puts(b, "ms");
	}
}

/* ---- JSON ------------------------------------------------------------------------ */

static void json_one(struct fctx *c, const struct field *f);

/* A member that is just "key":number, always: written without the checks. */
static inline bool plain(const struct field *f)
{
	return f->kind == FK_UINT && f->size && !f->get && !f->jwhen && !f->json && !f->has &&
	       !(f->flags & FL_JNZ) && !f->fams && !f->jopt && f->key;
}

/* Plain members from f[i] on, straight into the buffer (one reservation, no
 * length update per member: the hot path of -i's 70 tcp_info members). */
static unsigned json_plain_run(struct fctx *c, const struct field *f, unsigned i, unsigned n)
{
	struct obuf *b = c->b;
	char *d;

	if (obuf_reserve(b, (size_t)(n - i) * 64) < 0)
		return n;
	d = b->p + b->len;
	for (; i < n && plain(&f[i]); i++) {
		const struct field *m = &f[i];
		uint64_t v = fld_value(c, m);
		size_t k = m->klen - c->first;

		fmt_copy(d, m->klit + c->first, k);
		d += k;
		c->first = false;
		d += fmt_u64(d, v);
	}
	b->len = (size_t)(d - b->p);
	return i;
}

static void json_group(struct fctx *c, const struct field *f)
{
	const uint8_t *base = c->base;

	fld_key(c, f);
	obuf_putc(c->b, '{');
	c->base = group_base(c, f);
	c->first = true;
	for (unsigned i = 0; i < f->nsub;) {
		const struct field *m = &f->sub[i];

		if (plain(m)) {
			i = json_plain_run(c, f->sub, i, f->nsub);
			continue;
		}
		if (m->key && in_fam(m, c->fam) && in_opt(m->jopt, c->opt))
			json_one(c, m);
		i++;
	}
	obuf_putc(c->b, '}');
	c->base = base;
	c->first = false;
}

static void json_one(struct fctx *c, const struct field *f)
{
	struct obuf *b = c->b;
	uint64_t v;

	if ((c->s->has & f->has) != f->has || (f->jwhen && !f->jwhen(c)))
		return;
	if (f->kind == FK_GROUP) {
		json_group(c, f);
		return;
	}
	v = fld_value(c, f);
	if ((f->flags & FL_JNZ) && !v)
		return;
	if (f->json) {
		f->json(c, f, v);
		return;
	}
	fld_key(c, f);
	switch (f->kind) {
	case FK_BOOL:
		obuf_puts(b, v ? "true" : "false");
		break;
	case FK_HEXSTR:
		obuf_putc(b, '"');
		obuf_hex(b, v);
		obuf_putc(b, '"');
		break;
	case FK_STR:
		obuf_json_str(b, c->base + f->off, strnlen((const char *)c->base + f->off, f->size));
		break;
	default:
		obuf_u64(b, v);
		break;
	}
}

void fplan_json(const struct fplan *p, struct names *names, struct obuf *b,
		const struct sdiag_sock *s, const struct out_extra *x)
{
	unsigned k = fam_class(s);
	const struct fclass *cl = &p->cl[k];
	struct fblobs w;
	struct fctx c = {
		.b = b, .o = p->o, .names = names, .s = s, .x = x,
		.base = (const uint8_t *)s, .w = &w, .fam = (uint16_t)(1u << k), .opt = p->opt,
		.first = true,
	};

	w.filled = 0;

	obuf_putc(b, '{');
	for (size_t i = 0; i < cl->njson; i++)
		json_one(&c, cl->json[i]);
	obuf_putc(b, '}');
}

/* ---- text ------------------------------------------------------------------------- */

static void text_value(struct fctx *c, const struct field *f, uint64_t v)
{
	struct obuf *b = c->b;
	const char *str;

	if (f->text) {
		f->text(c, f, v);
		return;
	}
	switch (f->kind) {
	case FK_HEX:
	case FK_HEXSTR:
		obuf_hex(b, v);
		break;
	case FK_ALTHEX:
		if (v)
			obuf_puts(b, "0x");
		obuf_hex(b, v);
		break;
	case FK_USEC:
		fmt_ss_usec(b, v);
		break;
	case FK_US_MS:
		obuf_u64(b, v / 1000);
		obuf_puts(b, "ms");
		break;
	case FK_MSEC:
		ms_timer(b, v);
		break;
	case FK_RATE:
		fmt_ss_rate(b, c->o->numeric, xd_mul(xd_u64(v), xd_u64(8)));
		obuf_puts(b, "bps");
		break;
	case FK_GAIN:
		fmt_ss_ratio(b, v, 256);
		break;
	case FK_STR:
		str = (const char *)c->base + f->off;
		if (f->flags & FL_RAW)
			obuf_put(b, str, strnlen(str, f->size));
		else
			obuf_text_bytes(b, str, strnlen(str, f->size));
		break;
	case FK_FN:
	case FK_WORD:
	case FK_LIT:
		break;
	default:
		obuf_u64(b, v);
		break;
	}
}

/* One row whose own conditions (has, options, family) hold. */
static void text_one(struct fctx *c, const struct field *f)
{
	uint64_t v = 0;

	if (f->twhen && !f->twhen(c))
		return;
	if (f->kind != FK_GROUP && f->kind != FK_LIT) {
		v = fld_value(c, f);
		if ((f->flags & FL_TNZ || f->kind == FK_WORD) && !v)
			return;
		if ((f->flags & FL_TSKIP) && v == f->skip)
			return;
	}
	if (f->flags & FL_TSEP)
		fld_sep(c);
	if (f->label)
		obuf_put(c->b, f->label, f->llen);
	if (f->kind == FK_GROUP) {
		const uint8_t *base = c->base;

		c->base = group_base(c, f);
		for (unsigned i = 0; i < f->nsub; i++) {
			const struct field *m = &f->sub[i];

			if (m->label && in_fam(m, c->fam) && in_opt(m->topt, c->opt) &&
			    (c->s->has & m->has) == m->has)
				text_one(c, m);
		}
		c->base = base;
	} else {
		text_value(c, f, v);
	}
	if (f->tail)
		obuf_puts(c->b, f->tail);
}

void fplan_text(const struct fplan *p, struct names *names, struct obuf *b,
		const struct sdiag_sock *s)
{
	unsigned k = fam_class(s);
	const struct fclass *cl = &p->cl[k];
	struct fblobs w;
	struct fctx c = {
		.b = b, .o = p->o, .names = names, .s = s, .w = &w,
		.fam = (uint16_t)(1u << k), .opt = p->opt,
	};
	size_t sep_at = 0, sep_end = SIZE_MAX;
	/* Where a text row's offset counts from: the record, or the copies of its
	 * kernel structs (made first: a row of one needs its has bit). */
	const uint8_t *base[2] = { (const uint8_t *)s, (const uint8_t *)&w };

	w.filled = 0;
	for (uint32_t m = cl->tblobs; m; m &= m - 1) {
		unsigned bk = (unsigned)__builtin_ctz(m);

		if ((s->has & cl->tneed[bk]) == cl->tneed[bk])
			fld_blob(&c, bk);
	}
	for (size_t i = 0; i < cl->ntext; i++) {
		const struct tent *e = &cl->text[i];

		if ((s->has & e->has) != e->has)
			continue;
		if (e->f->kind == FK_SEP) {
			if (b->len == sep_end)
				b->len = sep_at;
			if (e->f->twhen && !e->f->twhen(&c))
				continue;
			sep_at = b->len;
			c.o = p->o;
			fld_sep(&c);
			sep_end = b->len;
			if ((e->f->flags & FL_TKEEP) && e->f->get(&c))
				sep_end = SIZE_MAX;
			continue;
		}
		c.base = base[e->wide] + e->base;
		text_one(&c, e->f);
	}
	/* Nothing after the last separator: no empty line either. */
	if (b->len == sep_end)
		b->len = sep_at;
}

bool fplan_cell(const struct fplan *p, struct names *names, struct obuf *b,
		const struct sdiag_sock *s, const struct out_extra *x, enum col col,
		uint32_t *cols)
{
	unsigned k = fam_class(s);
	const struct field *f = p->cl[k].cell[col];
	struct fblobs w;
	struct fctx c = {
		.b = b, .o = p->o, .names = names, .s = s, .x = x, .base = (const uint8_t *)s,
		.w = &w, .cols = cols, .fam = (uint16_t)(1u << k), .opt = p->opt,
	};

	w.filled = 0;
	if (!f)
		return false;
	if (!f->twhen || f->twhen(&c))
		f->text(&c, f, 0);
	return true;
}

/* ---- the plan ---------------------------------------------------------------------- */

static int add_text(struct fclass *cl, size_t *cap, const struct field *f, uint64_t has,
		    uint16_t base, uint8_t blob)
{
	if (cl->ntext == *cap) {
		size_t ncap = *cap ? 2 * *cap : 64;
		struct tent *n = realloc(cl->text, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		cl->text = n;
		*cap = ncap;
	}
	cl->text[cl->ntext++] = (struct tent){ f, has | f->has,
					       (uint16_t)(blob ? fld_blob_off[blob - 1] + base : base),
					       blob != 0 };
	if (blob) {
		unsigned k = blob - 1u;

		cl->tneed[k] = cl->tblobs & 1u << k ? cl->tneed[k] & (has | f->has) : has | f->has;
		cl->tblobs |= 1u << k;
	}
	return 0;
}

/* Text rows of f for family bit fam: f itself, or the members of a group
 * without a label (which inherit its conditions and its offset). */
static int plan_text(struct fclass *cl, size_t *cap, const struct field *f, uint16_t fam,
		     uint16_t opt, uint16_t topt, uint64_t has, uint16_t base, uint8_t blob)
{
	int r = 0;

	if (!in_fam(f, fam))
		return 0;
	if (f->topt)
		topt = f->topt;
	if (f->kind == FK_GROUP && !f->label) {
		for (unsigned i = 0; i < f->nsub && r == 0; i++)
			r = plan_text(cl, cap, &f->sub[i], fam, opt, topt, has | f->has,
				      (uint16_t)((f->blob ? 0 : base) + f->off),
				      f->blob ? f->blob : blob);
		return r;
	}
	if (!f->t || !in_opt(topt, opt))
		return 0;
	return add_text(cl, cap, f, has, base, blob);
}

static int plan_class(struct fplan *p, unsigned k)
{
	struct fclass *cl = &p->cl[k];
	uint16_t fam = (uint16_t)(1u << k);
	size_t total = 0, cap = 0;
	int r = 0;

	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		total += *tables[t].n;
	cl->json = calloc(total, sizeof(*cl->json));
	if (!cl->json)
		return -ENOMEM;
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]) && r == 0; t++) {
		for (size_t i = 0; i < *tables[t].n && r == 0; i++) {
			const struct field *f = &tables[t].rows[i];

			if (!in_fam(f, fam))
				continue;
			if ((f->flags & FL_CELL) && !cl->cell[f->col])
				cl->cell[f->col] = f;
			if (f->key && in_opt(f->jopt, p->opt))
				cl->json[cl->njson++] = f;
			r = plan_text(cl, &cap, f, fam, p->opt, 0, 0, 0, 0);
		}
	}
	/* ss's order: by .t, ties in row order (insertion sort, stable). */
	for (size_t i = 1; i < cl->ntext; i++) {
		struct tent e = cl->text[i];
		size_t j = i;

		while (j > 0 && cl->text[j - 1].f->t > e.f->t) {
			cl->text[j] = cl->text[j - 1];
			j--;
		}
		cl->text[j] = e;
	}
	return r;
}

int fplan_new(struct fplan **ret, const struct out_opts *o)
{
	struct fplan *p = calloc(1, sizeof(*p));
	int r = 0;

	if (!p)
		return -ENOMEM;
	p->o = o;
	p->opt = (uint16_t)((o->timers ? O_TIMERS : 0) | (o->ext ? O_EXT : 0) |
			   (o->mem ? O_MEM : 0) | (o->info ? O_INFO : 0) | (o->tos ? O_TOS : 0) |
			   (o->sockopt ? O_SOCKOPT : 0) | (o->bpf ? O_BPF : 0) |
			   (o->cgroup ? O_CGROUP : 0) |
			   (o->columns & OUT_COL_PROCESS ? O_PROC : 0));
	for (unsigned k = 0; k < F_NCLASS && r == 0; k++)
		r = plan_class(p, k);
	if (r < 0) {
		fplan_free(p);
		return r;
	}
	*ret = p;
	return 0;
}

void fplan_free(struct fplan *p)
{
	if (!p)
		return;
	for (unsigned k = 0; k < F_NCLASS; k++) {
		free(p->cl[k].json);
		free(p->cl[k].text);
	}
	free(p);
}
