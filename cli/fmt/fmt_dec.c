// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * printf's %g and %f of doubles, digit for digit, with integers only (see
 * fmt.h: struct xd). A double is m * 2^e; the arithmetic ss does on its way
 * to a printed number (a u64 made double, times, divided) is redone here with
 * 128-bit integers and the FPU's rounding (to nearest, ties to even), and the
 * exact result is rounded to decimal digits the way glibc does (exactly, ties
 * to even). Values whose exact arithmetic would not fit 128 bits go through
 * snprintf instead; the renderers' values never do.
 */
#include <stdio.h>

#include "cli/fmt/fmt.h"

typedef unsigned __int128 u128;

static int bitlen64(uint64_t v)
{
	return v ? 64 - __builtin_clzll(v) : 0;
}

static int bitlen128(u128 v)
{
	uint64_t hi = (uint64_t)(v >> 64);

	return hi ? 64 + bitlen64(hi) : bitlen64((uint64_t)v);
}

/* v * 2^e rounded to a 53-bit mantissa, ties to even. */
static struct xd xd_round(u128 v, int e)
{
	int n = bitlen128(v), s;
	u128 q, rem, half;

	if (n <= 53)
		return (struct xd){ (uint64_t)v, e };
	s = n - 53;
	q = v >> s;
	rem = v & (((u128)1 << s) - 1);
	half = (u128)1 << (s - 1);
	if (rem > half || (rem == half && (q & 1)))
		q++;
	if (q >> 53) {
		q >>= 1;
		s++;
	}
	return (struct xd){ (uint64_t)q, e + s };
}

struct xd xd_u64(uint64_t v)
{
	return xd_round(v, 0);
}

struct xd xd_mul(struct xd a, struct xd b)
{
	return xd_round((u128)a.m * b.m, a.e + b.e);
}

/* The mantissa shifted up to exactly 53 bits (not 0). */
static struct xd xd_norm(struct xd a)
{
	int s = 53 - bitlen64(a.m);

	return (struct xd){ a.m << s, a.e - s };
}

struct xd xd_div(struct xd a, struct xd b)
{
	u128 n, q;

	if (!a.m || !b.m)
		return (struct xd){ 0, 0 };
	a = xd_norm(a);
	b = xd_norm(b);
	/* 117 bits over 53: a quotient of at least 64 bits, and a sticky bit
	 * below it for a remainder, so the rounding sees ties exactly. */
	n = (u128)a.m << 64;
	q = n / b.m;
	q = q << 1 | (n % b.m != 0);
	return xd_round(q, a.e - 64 - b.e - 1);
}

bool xd_ge(struct xd a, struct xd b)
{
	if (!b.m)
		return true;
	if (!a.m)
		return false;
	a = xd_norm(a);
	b = xd_norm(b);
	return a.e != b.e ? a.e > b.e : a.m >= b.m;
}

/* ---- exact decimal rounding --------------------------------------------------- */

static u128 pow10_128(int k)
{
	u128 p = 1;

	while (k-- > 0)
		p *= 10;
	return p;
}

/* 4 bits per decimal digit: a safe bound on the size of v * 10^k. */
static bool fits(u128 v, int extra_bits)
{
	return bitlen128(v) + extra_bits <= 124;
}

/* x as num/den, integers. */
static bool xd_frac(struct xd x, u128 *num, u128 *den)
{
	if (x.e >= 0) {
		if (bitlen64(x.m) + x.e > 120)
			return false;
		*num = (u128)x.m << x.e;
		*den = 1;
	} else {
		if (-x.e > 120)
			return false;
		*num = x.m;
		*den = (u128)1 << -x.e;
	}
	return true;
}

/* x / 10^cut rounded to an integer, ties to even. */
static bool xd_scaled(struct xd x, int cut, u128 *ret)
{
	u128 num, den, q, r;

	if (!xd_frac(x, &num, &den) || cut > 38 || cut < -38)
		return false;
	if (cut < 0) {
		if (!fits(num, -4 * cut))
			return false;
		num *= pow10_128(-cut);
	} else {
		if (!fits(den, 4 * cut))
			return false;
		den *= pow10_128(cut);
	}
	q = num / den;
	r = num % den;
	if (2 * r > den || (2 * r == den && (q & 1)))
		q++;
	*ret = q;
	return true;
}

/* Sign of x - 10^k, or 2 when it cannot be told here. */
static int cmp_pow10(struct xd x, int k)
{
	u128 num, den;

	if (!xd_frac(x, &num, &den) || k > 38 || k < -38)
		return 2;
	if (k >= 0) {
		if (!fits(den, 4 * k))
			return 2;
		den *= pow10_128(k);
	} else {
		if (!fits(num, -4 * k))
			return 2;
		num *= pow10_128(-k);
	}
	return num > den ? 1 : num < den ? -1 : 0;
}

/* floor(log10(x)) for x > 0. */
static bool ilog10(struct xd x, int *ret)
{
	/* floor(log2(x)) * log10(2), rounded down: off by at most one */
	int l2 = bitlen64(x.m) + x.e - 1;
	int k = l2 >= 0 ? l2 * 30103 / 100000 : -((-l2 * 30103 + 99999) / 100000);
	int c;

	for (int i = 0; i < 4; i++) {
		c = cmp_pow10(x, k);
		if (c == 2)
			return false;
		if (c < 0) {
			k--;
			continue;
		}
		c = cmp_pow10(x, k + 1);
		if (c == 2)
			return false;
		if (c < 0) {
			*ret = k;
			return true;
		}
		k++;
	}
	return false;
}

/* Decimal digits of v (at most 39) into buf; returns the count. */
static int digits128(char *buf, u128 v)
{
	char tmp[40];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + (int)(v % 10));
		v /= 10;
	} while (v);
	for (int i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	return n;
}

static void fallback(struct obuf *b, bool g, int prec, struct xd x)
{
#ifdef FMT_DEC_TEST
	(void)g;
	(void)prec;
	(void)x;
	obuf_puts(b, "FALLBACK");	/* tests/cli/test_fmt_dec.c: must not happen */
#else
	double d = (double)x.m;	/* exact: m < 2^53; so is each step below */

	for (int e = x.e; e > 0; e--)
		d *= 2.0;
	for (int e = x.e; e < 0; e++)
		d *= 0.5;
	if (g)
		obuf_printf(b, "%.*g", prec, d);
	else
		obuf_printf(b, "%.*f", prec, d);
#endif
}

void obuf_xd_g(struct obuf *b, struct xd x, int prec)
{
	char d[48];
	int E, n, last;
	u128 r;

	if (prec == 0)
		prec = 1;
	if (!x.m) {
		obuf_putc(b, '0');
		return;
	}
	if (prec > 36 || !ilog10(x, &E) || !xd_scaled(x, E - prec + 1, &r)) {
		fallback(b, true, prec, x);
		return;
	}
	n = digits128(d, r);
	if (n > prec) {		/* rounded up to 10^prec */
		E++;
		n = prec;
	}
	for (last = n - 1; last > 0 && d[last] == '0'; last--)
		;
	if (E < -4 || E >= prec) {
		obuf_putc(b, d[0]);
		if (last > 0) {
			obuf_putc(b, '.');
			obuf_put(b, d + 1, (size_t)last);
		}
		obuf_putc(b, 'e');
		obuf_putc(b, E < 0 ? '-' : '+');
		if (E < 0)
			E = -E;
		if (E < 10)
			obuf_putc(b, '0');
		obuf_u64(b, (uint64_t)E);
	} else if (E >= 0) {
		obuf_put(b, d, (size_t)E + 1);
		if (last > E) {
			obuf_putc(b, '.');
			obuf_put(b, d + E + 1, (size_t)(last - E));
		}
	} else {
		obuf_puts(b, "0.");
		for (int i = E + 1; i < 0; i++)
			obuf_putc(b, '0');
		obuf_put(b, d, (size_t)last + 1);
	}
}

/* %.0f of x when it rounds to a u64, with 64-bit integers: the rates' form. */
static bool xd_f0_fast(struct obuf *b, struct xd x)
{
	uint64_t q, rem, half;

	if (x.e >= 0) {
		if (bitlen64(x.m) + x.e > 64)
			return false;
		obuf_u64(b, x.m << x.e);
		return true;
	}
	if (x.e <= -54) {	/* m < 2^53: below one half */
		obuf_putc(b, '0');
		return true;
	}
	q = x.m >> -x.e;
	rem = x.m & ((UINT64_C(1) << -x.e) - 1);
	half = UINT64_C(1) << (-x.e - 1);
	if (rem > half || (rem == half && (q & 1)))	/* ties to even, as printf */
		q++;
	obuf_u64(b, q);
	return true;
}

void obuf_xd_f(struct obuf *b, struct xd x, int decimals)
{
	char d[48];
	int n;
	u128 r;

	if (decimals == 0 && xd_f0_fast(b, x))
		return;
	if (decimals > 30 || !xd_scaled(x, -decimals, &r)) {
		fallback(b, false, decimals, x);
		return;
	}
	n = digits128(d, r);
	if (n <= decimals) {	/* 0.0ddd: pad with leading zeros */
		obuf_putc(b, '0');
		obuf_putc(b, '.');
		for (int i = n; i < decimals; i++)
			obuf_putc(b, '0');
		obuf_put(b, d, (size_t)n);
		return;
	}
	obuf_put(b, d, (size_t)(n - decimals));
	if (decimals) {
		obuf_putc(b, '.');
		obuf_put(b, d + n - decimals, (size_t)decimals);
	}
}

/* ---- ss's numbers ---------------------------------------------------------------- */

void fmt_ss_usec(struct obuf *b, uint64_t us)
{
	/* Below 1000 s, us / 1000 has at most 6 significant digits and the
	 * double nearest to it is within 2^-53 of it: %g prints those digits
	 * (and the exponent form needs >= 10^6 or < 10^-4). */
	if (us < 1000000) {
		unsigned frac = (unsigned)(us % 1000);

		obuf_u64(b, us / 1000);
		if (frac) {
			char f[4] = { '.', (char)('0' + frac / 100), (char)('0' + frac / 10 % 10),
				      (char)('0' + frac % 10) };
			size_t n = frac % 100 ? (frac % 10 ? 4 : 3) : 2;

			obuf_put(b, f, n);
		}
		return;
	}
	obuf_xd_g(b, xd_div(xd_u64(us), xd_u64(1000)), 6);
}

void fmt_ss_ratio(struct obuf *b, uint64_t v, uint64_t den)
{
	obuf_xd_g(b, xd_div(xd_u64(v), xd_u64(den)), 6);
}

void fmt_ss_rate(struct obuf *b, bool numeric, struct xd v)
{
	static const struct { uint64_t div; char unit; } units[] = {
		{ 1000000000000ULL, 'T' }, { 1000000000, 'G' }, { 1000000, 'M' }, { 1000, 'k' },
	};

	if (numeric) {
		obuf_xd_f(b, v, 0);
		return;
	}
	for (unsigned i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		struct xd u = xd_u64(units[i].div);

		if (xd_ge(v, u)) {
			obuf_xd_g(b, xd_div(v, u), 3);
			obuf_putc(b, units[i].unit);
			return;
		}
	}
	obuf_xd_g(b, v, 6);
}

void fmt_ss_percent(struct obuf *b, uint64_t part, uint64_t whole)
{
	obuf_xd_f(b, xd_div(xd_mul(xd_u64(100), xd_u64(part)), xd_u64(whole)), 1);
}
