/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The v4-mapped IPv6 prefix (::ffff:0:0/96), in one place: whether 16 bytes
 * are an IPv4 address in IPv6 clothing (a dual-stack socket's IPv4 peer).
 */
#ifndef SOCKDIAG_UTIL_INADDR_H
#define SOCKDIAG_UTIL_INADDR_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static const uint8_t in_v4mapped_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

static inline bool in_v4mapped(const uint8_t a[16])
{
	return !memcmp(a, in_v4mapped_prefix, sizeof(in_v4mapped_prefix));
}

#endif
