// SPDX-License-Identifier: GPL-2.0-or-later
/* Output buffer and hand-rolled formatting (see fmt.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "cli/fmt/fmt.h"

int obuf_init(struct obuf *b, size_t cap, int fd)
{
	memset(b, 0, sizeof(*b));
	b->fd = fd;
	b->p = malloc(cap);
	if (!b->p)
		return -ENOMEM;
	b->cap = cap;
	return 0;
}

void obuf_fini(struct obuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
	b->fd = -1;
}

int obuf_reserve(struct obuf *b, size_t n)
{
	size_t ncap;
	char *np;

	if (b->len + n <= b->cap)
		return 0;
	if (b->err)
		return b->err;
	ncap = b->cap ? b->cap : 256;
	while (ncap < b->len + n)
		ncap *= 2;
	np = realloc(b->p, ncap);
	if (!np) {
		b->err = -ENOMEM;
		return -ENOMEM;
	}
	b->p = np;
	b->cap = ncap;
	return 0;
}

int obuf_flush(struct obuf *b)
{
	size_t off = 0;

	if (b->err) {
		b->len = 0;
		return b->err;
	}
	while (off < b->len) {
		ssize_t w = write(b->fd, b->p + off, b->len - off);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			b->err = -errno;
			break;
		}
		off += (size_t)w;
	}
	b->len = 0;
	return b->err;
}

void fmt_copy_long(char *d, const char *s, size_t n)
{
	memcpy(d, s, n);
}

void obuf_spaces(struct obuf *b, size_t n)
{
	if (obuf_reserve(b, n) < 0)
		return;
	memset(b->p + b->len, ' ', n);
	b->len += n;
}

static const char digits2[201] = "0001020304050607080910111213141516171819"
				 "2021222324252627282930313233343536373839"
				 "4041424344454647484950515253545556575859"
				 "6061626364656667686970717273747576777879"
				 "8081828384858687888990919293949596979899";

static const uint64_t pow10_u64[20] = {
	1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000,
	10000000000ULL, 100000000000ULL, 1000000000000ULL, 10000000000000ULL,
	100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
	100000000000000000ULL, 1000000000000000000ULL, 10000000000000000000ULL,
};

size_t fmt_u64(char *buf, uint64_t v)
{
	size_t n, i;
	unsigned t;

	if (v < 10) {
		buf[0] = (char)('0' + v);
		return 1;
	}
	/* Digits from the bit length: t = floor(bits * log10(2)) is the digit
	 * count or one more (1233 / 4096 ~ log10(2)). */
	t = (unsigned)(64 - __builtin_clzll(v)) * 1233 >> 12;
	n = t + 1 - (v < pow10_u64[t]);
	i = n;
	while (v >= 100) {
		unsigned d = (unsigned)(v % 100) * 2;

		v /= 100;
		buf[--i] = digits2[d + 1];
		buf[--i] = digits2[d];
	}
	if (v >= 10) {
		buf[--i] = digits2[v * 2 + 1];
		buf[--i] = digits2[v * 2];
	} else {
		buf[--i] = (char)('0' + v);
	}
	return n;
}

void obuf_i64(struct obuf *b, int64_t v)
{
	if (v < 0) {
		obuf_putc(b, '-');
		obuf_u64(b, (uint64_t)0 - (uint64_t)v);
		return;
	}
	obuf_u64(b, (uint64_t)v);
}

void obuf_hex(struct obuf *b, uint64_t v)
{
	static const char hx[] = "0123456789abcdef";
	char tmp[16];
	size_t i = sizeof(tmp);

	do {
		tmp[--i] = hx[v & 15];
		v >>= 4;
	} while (v);
	obuf_put(b, tmp + i, sizeof(tmp) - i);
}

void obuf_hexbytes(struct obuf *b, const void *s, size_t n)
{
	static const char hx[] = "0123456789abcdef";
	const uint8_t *p = s;

	if (obuf_reserve(b, 2 * n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		b->p[b->len++] = hx[p[i] >> 4];
		b->p[b->len++] = hx[p[i] & 15];
	}
}

void obuf_printf(struct obuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (obuf_reserve(b, 128) < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= b->cap - b->len) {
		if (obuf_reserve(b, (size_t)n + 1) < 0)
			return;
		va_start(ap, fmt);
		vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

/* Each octet's digits, padded to 4 bytes so they copy as one word. */
static const char octets[256][4] = {
	"0\0\0", "1\0\0", "2\0\0", "3\0\0", "4\0\0", "5\0\0", "6\0\0", "7\0\0", "8\0\0", "9\0\0",
	"10\0", "11\0", "12\0", "13\0", "14\0", "15\0", "16\0", "17\0", "18\0", "19\0",
	"20\0", "21\0", "22\0", "23\0", "24\0", "25\0", "26\0", "27\0", "28\0", "29\0",
	"30\0", "31\0", "32\0", "33\0", "34\0", "35\0", "36\0", "37\0", "38\0", "39\0",
	"40\0", "41\0", "42\0", "43\0", "44\0", "45\0", "46\0", "47\0", "48\0", "49\0",
	"50\0", "51\0", "52\0", "53\0", "54\0", "55\0", "56\0", "57\0", "58\0", "59\0",
	"60\0", "61\0", "62\0", "63\0", "64\0", "65\0", "66\0", "67\0", "68\0", "69\0",
	"70\0", "71\0", "72\0", "73\0", "74\0", "75\0", "76\0", "77\0", "78\0", "79\0",
	"80\0", "81\0", "82\0", "83\0", "84\0", "85\0", "86\0", "87\0", "88\0", "89\0",
	"90\0", "91\0", "92\0", "93\0", "94\0", "95\0", "96\0", "97\0", "98\0", "99\0",
	"100", "101", "102", "103", "104", "105", "106", "107", "108", "109",
	"110", "111", "112", "113", "114", "115", "116", "117", "118", "119",
	"120", "121", "122", "123", "124", "125", "126", "127", "128", "129",
	"130", "131", "132", "133", "134", "135", "136", "137", "138", "139",
	"140", "141", "142", "143", "144", "145", "146", "147", "148", "149",
	"150", "151", "152", "153", "154", "155", "156", "157", "158", "159",
	"160", "161", "162", "163", "164", "165", "166", "167", "168", "169",
	"170", "171", "172", "173", "174", "175", "176", "177", "178", "179",
	"180", "181", "182", "183", "184", "185", "186", "187", "188", "189",
	"190", "191", "192", "193", "194", "195", "196", "197", "198", "199",
	"200", "201", "202", "203", "204", "205", "206", "207", "208", "209",
	"210", "211", "212", "213", "214", "215", "216", "217", "218", "219",
	"220", "221", "222", "223", "224", "225", "226", "227", "228", "229",
	"230", "231", "232", "233", "234", "235", "236", "237", "238", "239",
	"240", "241", "242", "243", "244", "245", "246", "247", "248", "249",
	"250", "251", "252", "253", "254", "255",
};

size_t fmt_ipv4(char *buf, const uint8_t a[4])
{
	size_t n = 0;

	for (int i = 0; i < 4; i++) {
		unsigned v = a[i];

		memcpy(buf + n, octets[v], 4);
		n += v >= 100 ? 3 : v >= 10 ? 2 : 1;
		buf[n++] = '.';
	}
	return n - 1;
}

size_t fmt_addr(char *buf, int family, const uint8_t *a)
{
	if (family == AF_INET) {
		size_t n = fmt_ipv4(buf, a);

		buf[n] = '\0';
		return n;
	}
	if (!inet_ntop(AF_INET6, a, buf, 46)) {
		buf[0] = '?';
		buf[1] = '\0';
		return 1;
	}
	return strlen(buf);
}

/* Length of the valid UTF-8 sequence at p (at most n bytes), 0 if invalid;
 * *cp gets the code point. Rejects overlong forms, surrogates and > U+10FFFF. */
static size_t utf8_seq(const uint8_t *p, size_t n, uint32_t *cp)
{
	uint32_t c = p[0], min;
	size_t len;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		c &= 0x1f;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		c &= 0x0f;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		c &= 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

static bool is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);
}

bool obuf_json_str(struct obuf *b, const void *s, size_t n)
{
	static const char hx[] = "0123456789abcdef";
	const uint8_t *p = s;
	bool clean = true;
	size_t i = 0;

	/* Worst case: every byte becomes a 6-byte escape. */
	if (obuf_reserve(b, 6 * n + 2) < 0)
		return false;
	b->p[b->len++] = '"';
	while (i < n) {
		uint8_t c = p[i];
		uint32_t cp;
		size_t len;
		char *o;

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			b->p[b->len++] = (char)c;
			i++;
			continue;
		}
		len = utf8_seq(p + i, n - i, &cp);
		o = b->p + b->len;
		if (!len) {
			/* Not UTF-8: U+FFFD, the bytes live on in the hex form. */
			memcpy(o, "\xef\xbf\xbd", 3);
			b->len += 3;
			clean = false;
			i++;
			continue;
		}
		if (cp == '"' || cp == '\\') {
			o[0] = '\\';
			o[1] = (char)cp;
			b->len += 2;
		} else if (is_control(cp)) {
			const char *short_esc = NULL;

			switch (cp) {
			case '\n': short_esc = "\\n"; break;
			case '\t': short_esc = "\\t"; break;
			case '\r': short_esc = "\\r"; break;
			case '\b': short_esc = "\\b"; break;
			case '\f': short_esc = "\\f"; break;
			}
			if (short_esc) {
				memcpy(o, short_esc, 2);
				b->len += 2;
			} else {
				memcpy(o, "\\u00", 4);
				o[4] = hx[(cp >> 4) & 15];
				o[5] = hx[cp & 15];
				b->len += 6;
			}
			clean = false;
		} else {
			memcpy(o, p + i, len);
			b->len += len;
		}
		i += len;
	}
	b->p[b->len++] = '"';
	return clean;
}

bool obuf_text_bytes(struct obuf *b, const void *s, size_t n)
{
	static const char hx[] = "0123456789abcdef";
	const uint8_t *p = s;
	bool clean = true;
	size_t i = 0;

	if (obuf_reserve(b, 4 * n) < 0)
		return false;
	while (i < n) {
		uint32_t cp;
		size_t len = utf8_seq(p + i, n - i, &cp);

		if (len && !is_control(cp)) {
			memcpy(b->p + b->len, p + i, len);
			b->len += len;
			i += len;
			continue;
		}
		b->p[b->len++] = '\\';
		b->p[b->len++] = 'x';
		b->p[b->len++] = hx[p[i] >> 4];
		b->p[b->len++] = hx[p[i] & 15];
		clean = false;
		i++;
	}
	return clean;
}
