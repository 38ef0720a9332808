/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The socket record: names of tables, states and protocols; deep copies. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "lib/core/internal.h"

static const struct {
	const char *netid;	/* ss's Netid column */
	const char *proto;	/* JSON "proto" */
	const char *name;	/* ss -A name */
	const char *module;	/* the kernel module that dumps it */
} tables[SDIAG_T_MAX] = {
	[SDIAG_T_TCP] = { "tcp", "tcp", "tcp", "tcp_diag" },
	[SDIAG_T_UDP] = { "udp", "udp", "udp", "udp_diag" },
	[SDIAG_T_UDPLITE] = { "udpl", "udplite", "udplite", "udp_diag" },
	[SDIAG_T_RAW] = { "raw", "raw", "raw", "raw_diag" },
	[SDIAG_T_MPTCP] = { "mptcp", "mptcp", "mptcp", "mptcp_diag" },
	[SDIAG_T_SCTP] = { "sctp", "sctp", "sctp", "sctp_diag" },
	[SDIAG_T_UNIX_STREAM] = { "u_str", "stream", "unix_stream", "unix_diag" },
	[SDIAG_T_UNIX_DGRAM] = { "u_dgr", "dgram", "unix_dgram", "unix_diag" },
	[SDIAG_T_UNIX_SEQPACKET] = { "u_seq", "seqpacket", "unix_seqpacket", "unix_diag" },
	[SDIAG_T_NETLINK] = { "nl", "netlink", "netlink", "netlink_diag" },
	[SDIAG_T_PACKET_RAW] = { "p_raw", "raw", "packet_raw", "af_packet_diag" },
	[SDIAG_T_PACKET_DGRAM] = { "p_dgr", "dgram", "packet_dgram", "af_packet_diag" },
	[SDIAG_T_VSOCK_STREAM] = { "v_str", "stream", "vsock_stream", "vsock_diag" },
	[SDIAG_T_VSOCK_DGRAM] = { "v_dgr", "dgram", "vsock_dgram", "vsock_diag" },
	[SDIAG_T_VSOCK_SEQPACKET] = { "v_seq", "seqpacket", "vsock_seqpacket", "vsock_diag" },
	[SDIAG_T_XDP] = { "xdp", "xdp", "xdp", "xsk_diag" },
	[SDIAG_T_TIPC] = { "tipc", "tipc", "tipc", "tipc_diag" },
	[SDIAG_T_SMC] = { "smc", "smc", "smc", "smc_diag" },
};

SD_EXPORT const char *sdiag_table_netid(enum sdiag_table t)
{
	return (unsigned)t < SDIAG_T_MAX ? tables[t].netid : NULL;
}

SD_EXPORT const char *sdiag_table_module(enum sdiag_table t)
{
	return (unsigned)t < SDIAG_T_MAX ? tables[t].module : NULL;
}

SD_EXPORT const char *sdiag_table_proto(enum sdiag_table t)
{
	return (unsigned)t < SDIAG_T_MAX ? tables[t].proto : NULL;
}

SD_EXPORT uint32_t sdiag_table_mask_by_name(const char *name)
{
	static const struct {
		const char *name;
		uint32_t mask;
	} groups[] = {
		{ "all", SDIAG_TABLES_ALL & ~SDIAG_TABLE_BIT(SDIAG_T_TIPC) },
		{ "inet", SDIAG_TABLES_INET },
		{ "unix", SDIAG_TABLES_UNIX },
		{ "packet", SDIAG_TABLES_PACKET },
		{ "link", SDIAG_TABLES_PACKET },
		{ "vsock", SDIAG_TABLES_VSOCK },
		{ "unix_dgr", SDIAG_TABLE_BIT(SDIAG_T_UNIX_DGRAM) },
		{ "unix_seq", SDIAG_TABLE_BIT(SDIAG_T_UNIX_SEQPACKET) },
		{ "packet_dgr", SDIAG_TABLE_BIT(SDIAG_T_PACKET_DGRAM) },
		{ "vsock_dgr", SDIAG_TABLE_BIT(SDIAG_T_VSOCK_DGRAM) },
		{ "vsock_seq", SDIAG_TABLE_BIT(SDIAG_T_VSOCK_SEQPACKET) },
	};

	if (!name)
		return 0;
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (!strcmp(name, groups[i].name))
			return groups[i].mask;
	for (unsigned t = 0; t < SDIAG_T_MAX; t++)
		if (!strcmp(name, tables[t].name))
			return SDIAG_TABLE_BIT(t);
	return 0;
}

SD_EXPORT const char *sdiag_state_name(enum sdiag_state s)
{
	static const char *const names[SDIAG_SS_MAX] = {
		[SDIAG_SS_UNKNOWN] = "UNKNOWN",
		[SDIAG_SS_ESTABLISHED] = "ESTAB",
		[SDIAG_SS_SYN_SENT] = "SYN-SENT",
		[SDIAG_SS_SYN_RECV] = "SYN-RECV",
		[SDIAG_SS_FIN_WAIT1] = "FIN-WAIT-1",
		[SDIAG_SS_FIN_WAIT2] = "FIN-WAIT-2",
		[SDIAG_SS_TIME_WAIT] = "TIME-WAIT",
		[SDIAG_SS_CLOSE] = "UNCONN",
		[SDIAG_SS_CLOSE_WAIT] = "CLOSE-WAIT",
		[SDIAG_SS_LAST_ACK] = "LAST-ACK",
		[SDIAG_SS_LISTEN] = "LISTEN",
		[SDIAG_SS_CLOSING] = "CLOSING",
		[SDIAG_SS_NEW_SYN_RECV] = "NEW-SYN-RECV",
		[SDIAG_SS_BOUND_INACTIVE] = "BOUND-INACTIVE",
	};

	return (unsigned)s < SDIAG_SS_MAX ? names[s] : "UNKNOWN";
}

SD_EXPORT const char *sdiag_netlink_proto_name(unsigned proto)
{
	static const char *const names[32] = {
		[0] = "route",	   [1] = "unused",	 [2] = "usersock",   [3] = "firewall",
		[4] = "sock_diag", [5] = "nflog",	 [6] = "xfrm",	     [7] = "selinux",
		[8] = "iscsi",	   [9] = "audit",	 [10] = "fib_lookup", [11] = "connector",
		[12] = "netfilter", [13] = "ip6_fw",	 [14] = "dnrtmsg",   [15] = "uevent",
		[16] = "generic",  [18] = "scsitransport", [19] = "ecryptfs", [20] = "rdma",
		[21] = "crypto",   [22] = "smc",
	};

	return proto < 32 ? names[proto] : NULL;
}

SD_EXPORT const char *sdiag_rtnl_group_name(unsigned group)
{
	/* enum rtnetlink_groups (RTNLGRP_*), lower case without the prefix. */
	static const char *const names[] = {
		[1] = "link",		  [2] = "notify",	     [3] = "neigh",
		[4] = "tc",		  [5] = "ipv4_ifaddr",	     [6] = "ipv4_mroute",
		[7] = "ipv4_route",	  [8] = "ipv4_rule",	     [9] = "ipv6_ifaddr",
		[10] = "ipv6_mroute",	  [11] = "ipv6_route",	     [12] = "ipv6_ifinfo",
		[13] = "decnet_ifaddr",	  [15] = "decnet_route",     [16] = "decnet_rule",
		[18] = "ipv6_prefix",	  [19] = "ipv6_rule",	     [20] = "nd_useropt",
		[21] = "phonet_ifaddr",	  [22] = "phonet_route",     [23] = "dcb",
		[24] = "ipv4_netconf",	  [25] = "ipv6_netconf",     [26] = "mdb",
		[27] = "mpls_route",	  [28] = "nsid",	     [29] = "mpls_netconf",
		[30] = "ipv4_mroute_r",	  [31] = "ipv6_mroute_r",    [32] = "nexthop",
		[33] = "brvlan",	  [34] = "mctp_ifaddr",	     [35] = "tunnel",
		[36] = "stats",		  [37] = "ipv4_mcaddr",	     [38] = "ipv6_mcaddr",
		[39] = "ipv6_acaddr",
	};

	return group < sizeof(names) / sizeof(names[0]) ? names[group] : NULL;
}

/* Where a record's borrowed arrays live, so one function can measure and copy them. */
struct borrowed {
	const void **ptr;
	size_t len;
};

#define MAX_BORROWED (3 + SDIAG_BLOB_SLOTS)

static size_t list_borrowed(struct sdiag_sock *s, struct borrowed out[MAX_BORROWED])
{
	size_t n = 0;

	for (unsigned k = 0; k < SDIAG_BLOB_MAX; k++)
		if (sdiag_sock_blob(s, k, NULL))
			out[n++] = (struct borrowed){ &s->blob[k], s->blob_len[k] };

	switch (s->family) {
	case AF_INET:
	case AF_INET6:
		if (s->inet.ulp_mptcp)
			out[n++] = (struct borrowed){ &s->inet.ulp_mptcp, s->inet.ulp_mptcp_len };
		if (s->inet.sctp_locals)
			out[n++] = (struct borrowed){ &s->inet.sctp_locals, s->inet.sctp_locals_len };
		if (s->inet.sctp_peers)
			out[n++] = (struct borrowed){ &s->inet.sctp_peers, s->inet.sctp_peers_len };
		break;
	case AF_UNIX:
		if (s->un.name)
			out[n++] = (struct borrowed){ (const void **)&s->un.name, s->un.name_len };
		if (s->un.icons)
			out[n++] = (struct borrowed){ (const void **)&s->un.icons,
						      s->un.n_icons * sizeof(uint32_t) };
		break;
	case AF_NETLINK:
		if (s->nl.groups)
			out[n++] = (struct borrowed){ (const void **)&s->nl.groups,
						      s->nl.n_group_words * sizeof(uint32_t) };
		break;
	case AF_PACKET:
		if (s->pkt.mclist)
			out[n++] = (struct borrowed){ (const void **)&s->pkt.mclist,
						      s->pkt.n_mclist * sizeof(*s->pkt.mclist) };
		if (s->pkt.filter)
			out[n++] = (struct borrowed){ &s->pkt.filter, s->pkt.n_filter * 8 };
		break;
	default:
		break;
	}
	return n;
}

bool sd_sock_borrows(const struct sdiag_sock *s)
{
	struct borrowed b[MAX_BORROWED];

	/* list_borrowed() only takes the members' addresses. */
	return list_borrowed((struct sdiag_sock *)s, b) > 0;
}

SD_EXPORT struct sdiag_sock *sdiag_sock_dup(const struct sdiag_sock *s)
{
	struct sdiag_sock tmp = *s, *copy;
	struct borrowed b[MAX_BORROWED];
	size_t n, total = sizeof(*copy);
	uint8_t *p;

	n = list_borrowed(&tmp, b);
	for (size_t i = 0; i < n; i++)
		total += (b[i].len + 7) & ~(size_t)7;
	copy = malloc(total);
	if (!copy)
		return NULL;
	*copy = *s;
	n = list_borrowed(copy, b);
	p = (uint8_t *)(copy + 1);
	for (size_t i = 0; i < n; i++) {
		memcpy(p, *b[i].ptr, b[i].len);
		*b[i].ptr = p;
		p += (b[i].len + 7) & ~(size_t)7;
	}
	return copy;
}

/* sdiag_sock_blob() without its call: the copy below runs for every socket of -i. */
static inline const void *blob_of(const struct sdiag_sock *s, enum sdiag_blob k, size_t *ret_len)
{
	/* The has bit, not the pointer, says: a decoder sets both, and sets
	 * nothing of a view the kernel did not send. */
	static const uint64_t bit[SDIAG_BLOB_MAX] = {
		[SDIAG_BLOB_TCP_INFO] = SDIAG_HAS_TCP_INFO,
		[SDIAG_BLOB_MPTCP_INFO] = SDIAG_HAS_MPTCP_INFO,
		[SDIAG_BLOB_MEMINFO] = SDIAG_HAS_MEMINFO,
		[SDIAG_BLOB_SKMEMINFO] = SDIAG_HAS_SKMEMINFO,
		[SDIAG_BLOB_VEGAS] = SDIAG_HAS_VEGAS,
		[SDIAG_BLOB_DCTCP] = SDIAG_HAS_DCTCP,
		[SDIAG_BLOB_BBR] = SDIAG_HAS_BBR,
	};
	bool have = (unsigned)k < SDIAG_BLOB_MAX && (s->has & bit[k]) && s->blob[k];

	*ret_len = have ? s->blob_len[k] : 0;
	return have ? s->blob[k] : NULL;
}

SD_EXPORT const void *sdiag_sock_blob(const struct sdiag_sock *s, enum sdiag_blob k,
				      size_t *ret_len)
{
	size_t len;
	const void *p = blob_of(s, k, &len);

	if (ret_len)
		*ret_len = len;
	return p;
}

SD_EXPORT size_t sdiag_sock_blob_copy(const struct sdiag_sock *s, enum sdiag_blob k, void *out,
				      size_t size)
{
	size_t len;
	const void *p = blob_of(s, k, &len);
	size_t n = len < size ? len : size;

	if (n)
		memcpy(out, p, n);
	if (n < size)
		memset((uint8_t *)out + n, 0, size - n);
	return len;
}
