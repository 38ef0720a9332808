/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The protobuf wire format, writing only (what the push encoders need):
 * varints, fixed64/double, length-delimited fields and nested messages,
 * into a growable buffer. A nested message is written in place and its
 * length prefix filled in when it ends (pb_end), moving its bytes once when
 * the prefix needs more than the one byte reserved. Errors latch: after a
 * failed allocation every call is a no-op and pb_finish returns -ENOMEM.
 */
#ifndef SOCKDIAG_PUSH_PB_H
#define SOCKDIAG_PUSH_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pb {
	uint8_t *buf;
	size_t len, cap;
	bool failed;
};

/* Wire types. */
enum { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

void pb_init(struct pb *p);
void pb_free(struct pb *p);
/* 0 with the bytes (the caller frees them), or -ENOMEM. */
int pb_finish(struct pb *p, uint8_t **ret, size_t *ret_len);

void pb_varint(struct pb *p, unsigned field, uint64_t v);
void pb_sint64(struct pb *p, unsigned field, int64_t v);	/* zigzag */
void pb_fixed64(struct pb *p, unsigned field, uint64_t v);
void pb_double(struct pb *p, unsigned field, double v);
void pb_bytes(struct pb *p, unsigned field, const void *data, size_t len);
void pb_string(struct pb *p, unsigned field, const char *s);
/* A nested message: pb_begin returns its mark, pb_end(mark) closes it. */
size_t pb_begin(struct pb *p, unsigned field);
void pb_end(struct pb *p, size_t mark);
/* A packed repeated field of fixed64 / double values. */
void pb_packed_fixed64(struct pb *p, unsigned field, const uint64_t *v, size_t n);
void pb_packed_double(struct pb *p, unsigned field, const double *v, size_t n);

#endif
