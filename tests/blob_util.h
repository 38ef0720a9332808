/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests' access to a record's kernel structs (views, enum sdiag_blob): copies
 * through the public accessor, and storage for records a test makes by hand. */
#ifndef SOCKDIAG_TESTS_BLOB_UTIL_H
#define SOCKDIAG_TESTS_BLOB_UTIL_H

#include "sockdiag.h"

/* One of every kernel struct, for a hand-made record (t_blobs_attach). */
struct t_blobs {
	struct sdiag_tcp_info tcp_info;
	struct sdiag_mptcp_info mptcp_info;
	struct sdiag_meminfo meminfo;
	uint32_t skmem[SDIAG_SKMEM_VARS];
	struct sdiag_vegas_info vegas;
	struct sdiag_dctcp_info dctcp;
	struct sdiag_bbr_info bbr;
};

/* Point every view of s at b's structs, whole (b must outlive s). */
static inline void t_blobs_attach(struct sdiag_sock *s, struct t_blobs *b)
{
#define T_AT(k, m) (s->blob[k] = &b->m, s->blob_len[k] = (uint16_t)sizeof(b->m))
	T_AT(SDIAG_BLOB_TCP_INFO, tcp_info);
	T_AT(SDIAG_BLOB_MPTCP_INFO, mptcp_info);
	T_AT(SDIAG_BLOB_MEMINFO, meminfo);
	T_AT(SDIAG_BLOB_SKMEMINFO, skmem);
	T_AT(SDIAG_BLOB_VEGAS, vegas);
	T_AT(SDIAG_BLOB_DCTCP, dctcp);
	T_AT(SDIAG_BLOB_BBR, bbr);
#undef T_AT
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
