/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests' access to a record's kernel structs (views, enum sdiag_blob): copies
 * through the public accessor, and views of a record a test makes by hand. */
#ifndef SOCKDIAG_TESTS_BLOB_UTIL_H
#define SOCKDIAG_TESTS_BLOB_UTIL_H

#include "sockdiag.h"

/* Make view k of a hand-made record the size bytes at p (p must outlive s);
 * the record's has bits stay the test's to set. */
static inline void t_blob_attach(struct sdiag_sock *s, enum sdiag_blob k, void *p, size_t size)
{
	s->blob[k] = p;
	s->blob_len[k] = (uint16_t)size;
}

static inline struct sdiag_tcp_info t_tcp_info(const struct sdiag_sock *s)
{
	struct sdiag_tcp_info v;

	sdiag_sock_blob_copy(s, SDIAG_BLOB_TCP_INFO, &v, sizeof(v));
	return v;
}

static inline struct sdiag_mptcp_info t_mptcp_info(const struct sdiag_sock *s)
{
	struct sdiag_mptcp_info v;

	sdiag_sock_blob_copy(s, SDIAG_BLOB_MPTCP_INFO, &v, sizeof(v));
	return v;
}

static inline struct sdiag_meminfo t_meminfo(const struct sdiag_sock *s)
{
	struct sdiag_meminfo v;

	sdiag_sock_blob_copy(s, SDIAG_BLOB_MEMINFO, &v, sizeof(v));
	return v;
}

static inline uint32_t t_skmem(const struct sdiag_sock *s, unsigned i)
{
	uint32_t v[SDIAG_SKMEM_VARS];

	sdiag_sock_blob_copy(s, SDIAG_BLOB_SKMEMINFO, v, sizeof(v));
	return i < SDIAG_SKMEM_VARS ? v[i] : 0;
}

#endif
