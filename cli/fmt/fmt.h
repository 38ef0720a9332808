/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fast formatting for the renderers: an output buffer written with write(2)
 * in large blocks, and hand-rolled number, address and string formatting so
 * the per-socket hot path never goes through printf.
 */
#ifndef SOCKDIAG_CLI_FMT_H
#define SOCKDIAG_CLI_FMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A growable byte buffer; when fd >= 0 it can be flushed to fd. */
struct obuf {
	char *p;
	size_t len;
	size_t cap;
	int fd;
	int err;	/* first write/alloc error (negative errno), sticky */
};

int obuf_init(struct obuf *b, size_t cap, int fd);
void obuf_fini(struct obuf *b);
/* Make room for n more bytes. Returns 0 or -ENOMEM (also recorded in b->err). */
int obuf_reserve(struct obuf *b, size_t n);
/* Write everything buffered to b->fd (restarting on EINTR and short writes). */
int obuf_flush(struct obuf *b);

/* memcpy() for the short strings of the hot paths (keys, labels, fields).
 * GCC expands a memcpy() whose size it can bound (a uint8_t length) inline as
 * "rep movsq", whose start-up cost is most of a short copy: one or two pairs
 * of overlapping moves instead, each reading only s[0..n). */
void fmt_copy_long(char *d, const char *s, size_t n);

static inline void fmt_copy(char *d, const char *s, size_t n)
{
	uint64_t a[2], z[2];
	uint32_t x, y;

	if (__builtin_constant_p(n)) {	/* the compiler knows best */
		memcpy(d, s, n);
		return;
	}
	if (n >= 16 && n <= 32) {
		memcpy(a, s, 16);
		memcpy(z, s + n - 16, 16);
		memcpy(d, a, 16);
		memcpy(d + n - 16, z, 16);
	} else if (n >= 8 && n < 16) {
		memcpy(a, s, 8);
		memcpy(z, s + n - 8, 8);
		memcpy(d, a, 8);
		memcpy(d + n - 8, z, 8);
	} else if (n >= 4 && n < 8) {
		memcpy(&x, s, 4);
		memcpy(&y, s + n - 4, 4);
		memcpy(d, &x, 4);
		memcpy(d + n - 4, &y, 4);
	} else if (n && n < 4) {
		d[0] = s[0];
		d[n / 2] = s[n / 2];
		d[n - 1] = s[n - 1];
	} else if (n > 32) {
		fmt_copy_long(d, s, n);
	}
}

static inline void obuf_put(struct obuf *b, const void *s, size_t n)
{
	if (b->len + n > b->cap && obuf_reserve(b, n) < 0)
		return;
	fmt_copy(b->p + b->len, s, n);
	b->len += n;
}

static inline void obuf_puts(struct obuf *b, const char *s)
{
	obuf_put(b, s, strlen(s));
}

static inline void obuf_putc(struct obuf *b, char c)
{
	if (b->len + 1 > b->cap && obuf_reserve(b, 1) < 0)
		return;
	b->p[b->len++] = c;
}

void obuf_spaces(struct obuf *b, size_t n);

/* Decimal digits of v into buf (no NUL); returns the length (at most 20). */
size_t fmt_u64(char *buf, uint64_t v);

static inline void obuf_u64(struct obuf *b, uint64_t v)
{
	if (b->len + 20 > b->cap && obuf_reserve(b, 20) < 0)
		return;
	if (v < 10)
		b->p[b->len++] = (char)('0' + v);
	else
		b->len += fmt_u64(b->p + b->len, v);
}

void obuf_i64(struct obuf *b, int64_t v);
void obuf_hex(struct obuf *b, uint64_t v);	/* lowercase, no prefix */
/* printf-style, for the rare cold paths (detail text). */
void obuf_printf(struct obuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * A double as an exact m * 2^e (m < 2^53), for printing the numbers ss prints
 * with %g and %f without floating point (fmt_dec.c): each operation rounds
 * like the FPU (to nearest, ties to even), and the output functions print the
 * same digits as glibc's printf.
 */
struct xd {
	uint64_t m;
	int e;
};

struct xd xd_u64(uint64_t v);			/* (double)v */
struct xd xd_mul(struct xd a, struct xd b);	/* a * b */
struct xd xd_div(struct xd a, struct xd b);	/* a / b; b == 0 gives 0 */
bool xd_ge(struct xd a, struct xd b);		/* a >= b */
void obuf_xd_g(struct obuf *b, struct xd x, int prec);	/* printf("%.*g", prec, x) */
void obuf_xd_f(struct obuf *b, struct xd x, int decimals);	/* printf("%.*f", ...) */

/* ss's numbers: "%g" of us / 1000.0 (milliseconds); "%g" of v / (double)den;
 * sprint_bw() of bits per second (-n: "%.0f", else "%.3g" with k/M/G/T or "%g");
 * "%.1f" of 100.0 * part / whole. */
void fmt_ss_usec(struct obuf *b, uint64_t us);
void fmt_ss_ratio(struct obuf *b, uint64_t v, uint64_t den);
void fmt_ss_rate(struct obuf *b, bool numeric, struct xd bits);
void fmt_ss_percent(struct obuf *b, uint64_t part, uint64_t whole);

/* Dotted quad of 4 network-order bytes into buf (no NUL, at most 15 bytes;
 * buf needs 18: whole words are copied). */
size_t fmt_ipv4(char *buf, const uint8_t a[4]);
/* An address of family AF_INET or AF_INET6 (RFC 5952 text); NUL-terminated,
 * buf at least 46 bytes. Returns the length. */
size_t fmt_addr(char *buf, int family, const uint8_t *a);

/*
 * A JSON string literal (with quotes) of n arbitrary bytes: valid UTF-8 is
 * kept, quotes, backslashes and control characters are escaped, and each byte
 * that is not part of valid UTF-8 becomes U+FFFD. Returns true when the bytes
 * were "clean": valid UTF-8 without control characters, so the string alone
 * gives the bytes back.
 */
bool obuf_json_str(struct obuf *b, const void *s, size_t n);
/* The same for a NUL-terminated string. */
static inline void obuf_json_cstr(struct obuf *b, const char *s)
{
	obuf_json_str(b, s, strlen(s));
}
/* Human (table) form of arbitrary bytes: printable UTF-8 as is, everything
 * else as \xNN. Returns true when nothing needed escaping. */
bool obuf_text_bytes(struct obuf *b, const void *s, size_t n);
/* Lowercase hex of n bytes. */
void obuf_hexbytes(struct obuf *b, const void *s, size_t n);

#endif
