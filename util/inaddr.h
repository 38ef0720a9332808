/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The v4-mapped IPv6 prefix (::ffff:0:0/96), in one place: whether 16 bytes
 * are an IPv4 address in IPv6 clothing (a dual-stack socket's IPv4 peer), and
 * an address in its plain form.
 */
#ifndef SOCKDIAG_UTIL_INADDR_H
#define SOCKDIAG_UTIL_INADDR_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

static inline bool in_v4mapped(const uint8_t a[16])
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(a, prefix, sizeof(prefix));
}

/* An address of family as the family it is: a v4-mapped IPv6 address is IPv4
 * (*out then points at its last 4 bytes). Returns that family. */
static inline uint8_t in_plain(uint8_t family, const uint8_t *in, const uint8_t **out)
{
	if (family == AF_INET6 && in_v4mapped(in)) {
		*out = in + 12;
		return AF_INET;
	}
	*out = in;
	return family;
}

#endif
