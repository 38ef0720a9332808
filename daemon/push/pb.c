// SPDX-License-Identifier: GPL-2.0-or-later
/* The protobuf wire format, writing (pb.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/push/pb.h"

void pb_init(struct pb *p)
{
	memset(p, 0, sizeof(*p));
}

void pb_free(struct pb *p)
{
	free(p->buf);
	pb_init(p);
}

int pb_finish(struct pb *p, uint8_t **ret, size_t *ret_len)
{
	if (p->failed) {
		pb_free(p);
		return -ENOMEM;
	}
	*ret = p->buf;
	*ret_len = p->len;
	pb_init(p);
	return 0;
}

static bool room(struct pb *p, size_t n)
{
	size_t cap;
	uint8_t *b;

	if (p->failed)
		return false;
	if (p->len + n <= p->cap)
		return true;
	cap = p->cap ? p->cap : 256;
	while (cap < p->len + n)
		cap *= 2;
	b = realloc(p->buf, cap);
	if (!b) {
		p->failed = true;
		return false;
	}
	p->buf = b;
	p->cap = cap;
	return true;
}

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static void raw_varint(struct pb *p, uint64_t v)
{
	if (!room(p, 10))
		return;
	while (v >= 0x80) {
		p->buf[p->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p->buf[p->len++] = (uint8_t)v;
}

static void tag(struct pb *p, unsigned field, unsigned wire)
{
	raw_varint(p, (uint64_t)field << 3 | wire);
}

static void raw_fixed64(struct pb *p, uint64_t v)
{
	if (!room(p, 8))
		return;
	for (unsigned i = 0; i < 8; i++)
		p->buf[p->len++] = (uint8_t)(v >> (8 * i));	/* little-endian */
}

static uint64_t double_bits(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

void pb_varint(struct pb *p, unsigned field, uint64_t v)
{
	tag(p, field, PB_VARINT);
	raw_varint(p, v);
}

void pb_sint64(struct pb *p, unsigned field, int64_t v)
{
	pb_varint(p, field, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

void pb_fixed64(struct pb *p, unsigned field, uint64_t v)
{
	tag(p, field, PB_I64);
	raw_fixed64(p, v);
}

void pb_double(struct pb *p, unsigned field, double v)
{
	pb_fixed64(p, field, double_bits(v));
}

void pb_bytes(struct pb *p, unsigned field, const void *data, size_t len)
{
	tag(p, field, PB_LEN);
	raw_varint(p, len);
	if (room(p, len) && len) {
		memcpy(p->buf + p->len, data, len);
		p->len += len;
	}
}

void pb_string(struct pb *p, unsigned field, const char *s)
{
	pb_bytes(p, field, s, strlen(s));
}

/* One byte is reserved for the length: most nested messages are shorter
 * than 128 bytes; a longer one moves once in pb_end. */
size_t pb_begin(struct pb *p, unsigned field)
{
	tag(p, field, PB_LEN);
	if (room(p, 1))
		p->buf[p->len++] = 0;
	return p->len;
}

void pb_end(struct pb *p, size_t mark)
{
	size_t body, n, extra;

	if (p->failed)
		return;
	body = p->len - mark;
	n = varint_len(body);
	extra = n - 1;
	if (extra) {
		if (!room(p, extra))
			return;
		memmove(p->buf + mark + extra, p->buf + mark, body);
		p->len += extra;
	}
	for (size_t i = 0, v = body; i < n; i++, v >>= 7)
		p->buf[mark - 1 + i] = (uint8_t)((v & 0x7f) | (i + 1 < n ? 0x80 : 0));
}

/* A packed field's tag and length: n values of 8 bytes. None: no field. */
static bool packed(struct pb *p, unsigned field, size_t n)
{
	if (!n)
		return false;
	tag(p, field, PB_LEN);
	raw_varint(p, 8 * n);
	return true;
}

void pb_packed_fixed64(struct pb *p, unsigned field, const uint64_t *v, size_t n)
{
	if (packed(p, field, n))
		for (size_t i = 0; i < n; i++)
			raw_fixed64(p, v[i]);
}

void pb_packed_double(struct pb *p, unsigned field, const double *v, size_t n)
{
	if (packed(p, field, n))
		for (size_t i = 0; i < n; i++)
			raw_fixed64(p, double_bits(v[i]));
}
