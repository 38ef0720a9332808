/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libsockdiag — dump, filter and destroy Linux sockets through NETLINK_SOCK_DIAG.
 *
 * The only public header. Netlink stays private: callers see handles, query
 * structs and fully decoded socket records. Every fallible function returns 0
 * (or a count) on success and a negative errno on failure; out-parameters are
 * named ret_* and written only on success. The library never prints.
 */
#ifndef SOCKDIAG_H
#define SOCKDIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>	/* memset, for SDIAG_OPTS */

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Socket tables: one kind of socket the kernel can dump.                    */

enum sdiag_table {
	SDIAG_T_TCP,
	SDIAG_T_UDP,
	SDIAG_T_UDPLITE,
	SDIAG_T_RAW,
	SDIAG_T_MPTCP,
	SDIAG_T_SCTP,
	SDIAG_T_UNIX_STREAM,
	SDIAG_T_UNIX_DGRAM,
	SDIAG_T_UNIX_SEQPACKET,
	SDIAG_T_NETLINK,
	SDIAG_T_PACKET_RAW,
	SDIAG_T_PACKET_DGRAM,
	SDIAG_T_VSOCK_STREAM,
	SDIAG_T_VSOCK_DGRAM,
	SDIAG_T_VSOCK_SEQPACKET,
	SDIAG_T_XDP,
	SDIAG_T_TIPC,
	SDIAG_T_SMC,
	SDIAG_T_MAX
};

#define SDIAG_TABLE_BIT(t) (UINT32_C(1) << (t))
#define SDIAG_TABLES_INET                                                                          \
	(SDIAG_TABLE_BIT(SDIAG_T_TCP) | SDIAG_TABLE_BIT(SDIAG_T_UDP) |                             \
	 SDIAG_TABLE_BIT(SDIAG_T_UDPLITE) | SDIAG_TABLE_BIT(SDIAG_T_RAW) |                         \
	 SDIAG_TABLE_BIT(SDIAG_T_MPTCP) | SDIAG_TABLE_BIT(SDIAG_T_SCTP))
#define SDIAG_TABLES_UNIX                                                                          \
	(SDIAG_TABLE_BIT(SDIAG_T_UNIX_STREAM) | SDIAG_TABLE_BIT(SDIAG_T_UNIX_DGRAM) |              \
	 SDIAG_TABLE_BIT(SDIAG_T_UNIX_SEQPACKET))
#define SDIAG_TABLES_PACKET                                                                        \
	(SDIAG_TABLE_BIT(SDIAG_T_PACKET_RAW) | SDIAG_TABLE_BIT(SDIAG_T_PACKET_DGRAM))
#define SDIAG_TABLES_VSOCK                                                                         \
	(SDIAG_TABLE_BIT(SDIAG_T_VSOCK_STREAM) | SDIAG_TABLE_BIT(SDIAG_T_VSOCK_DGRAM) |            \
	 SDIAG_TABLE_BIT(SDIAG_T_VSOCK_SEQPACKET))
#define SDIAG_TABLES_ALL ((UINT32_C(1) << SDIAG_T_MAX) - 1)

/* ss's short name ("tcp", "u_str", "nl", "p_raw", ...); NULL if out of range. */
const char *sdiag_table_netid(enum sdiag_table t);
/* The kernel module that dumps the table ("tcp_diag", "raw_diag", "unix_diag", "xsk_diag",
 * ...): what a dump's -EPROTONOSUPPORT or -EAFNOSUPPORT means is missing. NULL if out of range. */
const char *sdiag_table_module(enum sdiag_table t);
/* The JSON "proto" value ("tcp", "stream", "raw", ...); for netlink use sdiag_netlink_proto_name(). */
const char *sdiag_table_proto(enum sdiag_table t);
/* Look a table up by ss's -A name (tcp, udp, raw, mptcp, unix_stream, netlink, packet_raw, ...).
 * Returns a table mask (groups such as "inet", "unix", "packet", "vsock", "all" give several
 * bits) or 0 if the name is unknown. */
uint32_t sdiag_table_mask_by_name(const char *name);

/* ------------------------------------------------------------------------ */
/* States: the kernel's TCP numbering, used for every family.                */

enum sdiag_state {
	SDIAG_SS_UNKNOWN = 0,
	SDIAG_SS_ESTABLISHED = 1,
	SDIAG_SS_SYN_SENT,
	SDIAG_SS_SYN_RECV,
	SDIAG_SS_FIN_WAIT1,
	SDIAG_SS_FIN_WAIT2,
	SDIAG_SS_TIME_WAIT,
	SDIAG_SS_CLOSE,
	SDIAG_SS_CLOSE_WAIT,
	SDIAG_SS_LAST_ACK,
	SDIAG_SS_LISTEN,
	SDIAG_SS_CLOSING,
	SDIAG_SS_NEW_SYN_RECV,
	SDIAG_SS_BOUND_INACTIVE,
	SDIAG_SS_MAX
};

#define SDIAG_STATE_BIT(s) (UINT32_C(1) << (s))
#define SDIAG_STATES_ALL ((UINT32_C(1) << SDIAG_SS_MAX) - 1)
/* ss's default: everything but LISTEN, CLOSE, TIME-WAIT and SYN-RECV. */
#define SDIAG_STATES_CONNECTED                                                                     \
	(SDIAG_STATES_ALL & ~(SDIAG_STATE_BIT(SDIAG_SS_LISTEN) | SDIAG_STATE_BIT(SDIAG_SS_CLOSE) | \
			      SDIAG_STATE_BIT(SDIAG_SS_TIME_WAIT) |                                \
			      SDIAG_STATE_BIT(SDIAG_SS_SYN_RECV)))
/* ss -l */
#define SDIAG_STATES_LISTENING (SDIAG_STATE_BIT(SDIAG_SS_LISTEN) | SDIAG_STATE_BIT(SDIAG_SS_CLOSE))

/* ss's display name ("ESTAB", "LISTEN", "UNCONN", "TIME-WAIT", ...). */
const char *sdiag_state_name(enum sdiag_state s);

/* ------------------------------------------------------------------------ */
/* Kernel structs, laid out as in Linux 6.18: what sdiag_sock_blob_copy()     */
/* fills. Older kernels send shorter ones (the tail reads zero), newer ones    */
/* longer (a caller with a longer definition gets the rest).                   */

struct sdiag_tcp_info {
	uint8_t tcpi_state;
	uint8_t tcpi_ca_state;
	uint8_t tcpi_retransmits;
	uint8_t tcpi_probes;
	uint8_t tcpi_backoff;
	uint8_t tcpi_options;
	uint8_t tcpi_snd_wscale : 4, tcpi_rcv_wscale : 4;
	uint8_t tcpi_delivery_rate_app_limited : 1, tcpi_fastopen_client_fail : 2;
	uint32_t tcpi_rto;
	uint32_t tcpi_ato;
	uint32_t tcpi_snd_mss;
	uint32_t tcpi_rcv_mss;
	uint32_t tcpi_unacked;
	uint32_t tcpi_sacked;
	uint32_t tcpi_lost;
	uint32_t tcpi_retrans;
	uint32_t tcpi_fackets;
	uint32_t tcpi_last_data_sent;
	uint32_t tcpi_last_ack_sent;
	uint32_t tcpi_last_data_recv;
	uint32_t tcpi_last_ack_recv;
	uint32_t tcpi_pmtu;
	uint32_t tcpi_rcv_ssthresh;
	uint32_t tcpi_rtt;
	uint32_t tcpi_rttvar;
	uint32_t tcpi_snd_ssthresh;
	uint32_t tcpi_snd_cwnd;
	uint32_t tcpi_advmss;
	uint32_t tcpi_reordering;
	uint32_t tcpi_rcv_rtt;
	uint32_t tcpi_rcv_space;
	uint32_t tcpi_total_retrans;
	uint64_t tcpi_pacing_rate;
	uint64_t tcpi_max_pacing_rate;
	uint64_t tcpi_bytes_acked;
	uint64_t tcpi_bytes_received;
	uint32_t tcpi_segs_out;
	uint32_t tcpi_segs_in;
	uint32_t tcpi_notsent_bytes;
	uint32_t tcpi_min_rtt;
	uint32_t tcpi_data_segs_in;
	uint32_t tcpi_data_segs_out;
	uint64_t tcpi_delivery_rate;
	uint64_t tcpi_busy_time;
	uint64_t tcpi_rwnd_limited;
	uint64_t tcpi_sndbuf_limited;
	uint32_t tcpi_delivered;
	uint32_t tcpi_delivered_ce;
	uint64_t tcpi_bytes_sent;
	uint64_t tcpi_bytes_retrans;
	uint32_t tcpi_dsack_dups;
	uint32_t tcpi_reord_seen;
	uint32_t tcpi_rcv_ooopack;
	uint32_t tcpi_snd_wnd;
	uint32_t tcpi_rcv_wnd;
	uint32_t tcpi_rehash;
	uint16_t tcpi_total_rto;
	uint16_t tcpi_total_rto_recoveries;
	uint32_t tcpi_total_rto_time;
	uint32_t tcpi_received_ce;
	uint32_t tcpi_delivered_e1_bytes;
	uint32_t tcpi_delivered_e0_bytes;
	uint32_t tcpi_delivered_ce_bytes;
	uint32_t tcpi_received_e1_bytes;
	uint32_t tcpi_received_e0_bytes;
	uint32_t tcpi_received_ce_bytes;
	uint16_t tcpi_accecn_fail_mode;
	uint16_t tcpi_accecn_opt_seen;
};

struct sdiag_mptcp_info {
	uint8_t mptcpi_subflows;
	uint8_t mptcpi_add_addr_signal;
	uint8_t mptcpi_add_addr_accepted;
	uint8_t mptcpi_subflows_max;
	uint8_t mptcpi_add_addr_signal_max;
	uint8_t mptcpi_add_addr_accepted_max;
	uint32_t mptcpi_flags;
	uint32_t mptcpi_token;
	uint64_t mptcpi_write_seq;
	uint64_t mptcpi_snd_una;
	uint64_t mptcpi_rcv_nxt;
	uint8_t mptcpi_local_addr_used;
	uint8_t mptcpi_local_addr_max;
	uint8_t mptcpi_csum_enabled;
	uint32_t mptcpi_retransmits;
	uint64_t mptcpi_bytes_retrans;
	uint64_t mptcpi_bytes_sent;
	uint64_t mptcpi_bytes_received;
	uint64_t mptcpi_bytes_acked;
	uint8_t mptcpi_subflows_total;
	uint8_t mptcpi_endp_laminar_max;
	uint8_t reserved[2];
	uint32_t mptcpi_last_data_sent;
	uint32_t mptcpi_last_data_recv;
	uint32_t mptcpi_last_ack_recv;
};

/* Congestion-control info (INET_DIAG_VEGASINFO / DCTCPINFO / BBRINFO). */
struct sdiag_vegas_info {
	uint32_t enabled, rttcnt, rtt, minrtt;
};
struct sdiag_dctcp_info {
	uint16_t enabled, ce_state;
	uint32_t alpha, ab_ecn, ab_tot;
};
struct sdiag_bbr_info {
	uint32_t bw_lo, bw_hi, min_rtt, pacing_gain, cwnd_gain;
};

/* INET_DIAG_MEMINFO */
struct sdiag_meminfo {
	uint32_t rmem, wmem, fmem, tmem;
};

/* SK_MEMINFO_* (INET_DIAG_SKMEMINFO, UNIX/NETLINK/PACKET_DIAG_MEMINFO) */
enum {
	SDIAG_SKMEM_RMEM_ALLOC,
	SDIAG_SKMEM_RCVBUF,
	SDIAG_SKMEM_WMEM_ALLOC,
	SDIAG_SKMEM_SNDBUF,
	SDIAG_SKMEM_FWD_ALLOC,
	SDIAG_SKMEM_WMEM_QUEUED,
	SDIAG_SKMEM_OPTMEM,
	SDIAG_SKMEM_BACKLOG,
	SDIAG_SKMEM_DROPS,
	SDIAG_SKMEM_VARS
};

/* INET_DIAG_SOCKOPT bits, in the kernel's bitfield order. */
enum {
	SDIAG_SOCKOPT_RECVERR = 1 << 0,
	SDIAG_SOCKOPT_IS_ICSK = 1 << 1,
	SDIAG_SOCKOPT_FREEBIND = 1 << 2,
	SDIAG_SOCKOPT_HDRINCL = 1 << 3,
	SDIAG_SOCKOPT_MC_LOOP = 1 << 4,
	SDIAG_SOCKOPT_TRANSPARENT = 1 << 5,
	SDIAG_SOCKOPT_MC_ALL = 1 << 6,
	SDIAG_SOCKOPT_NODEFRAG = 1 << 7,
	SDIAG_SOCKOPT_BIND_ADDRESS_NO_PORT = 1 << 8,
	SDIAG_SOCKOPT_RECVERR_RFC4884 = 1 << 9,
	SDIAG_SOCKOPT_DEFER_CONNECT = 1 << 10,
};

struct sdiag_packet_info {
	uint32_t index, version, reserve, copy_thresh, tstamp, flags;
};
struct sdiag_packet_mclist {
	uint32_t index, count;
	uint16_t type, alen;
	uint8_t addr[32];
};
struct sdiag_packet_ring {
	uint32_t block_size, block_nr, frame_size, frame_nr, retire_tmo, sizeof_priv, features;
};

/* ------------------------------------------------------------------------ */
/* The socket record.                                                         */

/* Slots for the views of enum sdiag_blob (below); room for kinds to come. */
#define SDIAG_BLOB_SLOTS 8

/* "has" bits: set when the kernel sent the field (absent is not zero). */
/* (Macros, not an enum: bits past 31 do not fit an ISO C11 enum constant.) */
#define SDIAG_HAS_UID (UINT64_C(1) << 0)
#define SDIAG_HAS_INODE (UINT64_C(1) << 1)
#define SDIAG_HAS_COOKIE (UINT64_C(1) << 2)
#define SDIAG_HAS_QUEUES (UINT64_C(1) << 3)
#define SDIAG_HAS_SHUTDOWN (UINT64_C(1) << 4)
#define SDIAG_HAS_MARK (UINT64_C(1) << 5)
#define SDIAG_HAS_CGROUP (UINT64_C(1) << 6)
#define SDIAG_HAS_TOS (UINT64_C(1) << 7)
#define SDIAG_HAS_TCLASS (UINT64_C(1) << 8)
#define SDIAG_HAS_CLASS_ID (UINT64_C(1) << 9)
#define SDIAG_HAS_V6ONLY (UINT64_C(1) << 10)
#define SDIAG_HAS_SOCKOPT (UINT64_C(1) << 11)
#define SDIAG_HAS_MEMINFO (UINT64_C(1) << 12)
#define SDIAG_HAS_SKMEMINFO (UINT64_C(1) << 13)
#define SDIAG_HAS_TCP_INFO (UINT64_C(1) << 14)
#define SDIAG_HAS_MPTCP_INFO (UINT64_C(1) << 15)
#define SDIAG_HAS_CONG (UINT64_C(1) << 16)
#define SDIAG_HAS_VEGAS (UINT64_C(1) << 17)
#define SDIAG_HAS_DCTCP (UINT64_C(1) << 18)
#define SDIAG_HAS_BBR (UINT64_C(1) << 19)
#define SDIAG_HAS_ULP (UINT64_C(1) << 20)
#define SDIAG_HAS_TIMER (UINT64_C(1) << 21)
#define SDIAG_HAS_RAW_PROTO (UINT64_C(1) << 22)
#define SDIAG_HAS_NAME (UINT64_C(1) << 23) /* unix name */
#define SDIAG_HAS_PEER (UINT64_C(1) << 24) /* unix peer inode */
#define SDIAG_HAS_VFS (UINT64_C(1) << 25) /* unix vfs ino/dev */
#define SDIAG_HAS_ICONS (UINT64_C(1) << 26) /* unix pending connections */
#define SDIAG_HAS_GROUPS (UINT64_C(1) << 27) /* netlink group bitmap */
#define SDIAG_HAS_NL_FLAGS (UINT64_C(1) << 28)
#define SDIAG_HAS_PKT_INFO (UINT64_C(1) << 29)
#define SDIAG_HAS_MCLIST (UINT64_C(1) << 30)
#define SDIAG_HAS_RX_RING (UINT64_C(1) << 31)
#define SDIAG_HAS_TX_RING (UINT64_C(1) << 32)
#define SDIAG_HAS_FANOUT (UINT64_C(1) << 33)
#define SDIAG_HAS_FILTER (UINT64_C(1) << 34) /* packet classic BPF program */
#define SDIAG_HAS_XDP_INFO (UINT64_C(1) << 35)
#define SDIAG_HAS_XDP_RINGS (UINT64_C(1) << 36)
#define SDIAG_HAS_XDP_UMEM (UINT64_C(1) << 37)
#define SDIAG_HAS_XDP_STATS (UINT64_C(1) << 38)
#define SDIAG_HAS_SMC_INFO (UINT64_C(1) << 39)
#define SDIAG_HAS_TIPC_INFO (UINT64_C(1) << 40)
#define SDIAG_HAS_SCTP_LOCALS (UINT64_C(1) << 41) /* inet.sctp_locals (SCTP) */
#define SDIAG_HAS_SCTP_PEERS (UINT64_C(1) << 42) /* inet.sctp_peers (SCTP association) */

struct sdiag_inet {
	uint8_t src[16];	/* network order; IPv4 uses the first 4 bytes */
	uint8_t dst[16];
	uint16_t sport;		/* host order */
	uint16_t dport;
	uint32_t ifindex;	/* bound device, 0 = none */
	uint8_t timer;		/* 0 off, 1 on, 2 keepalive, 3 timewait, 4 persist, 5 delack */
	uint8_t retrans;
	uint8_t tos;
	uint8_t tclass;
	uint32_t expires_ms;
	uint32_t mark;
	uint32_t class_id;
	uint64_t cgroup_id;
	uint16_t sockopt;	/* SDIAG_SOCKOPT_* */
	uint8_t v6only;
	uint8_t raw_protocol;	/* real protocol of a raw socket */
	char cong[16];
	char ulp[16];
	/* tcp_info, mptcp_info, meminfo and the congestion-control structs are
	 * views: sdiag_sock_blob(), sdiag_sock_blob_copy(). */
	/* MPTCP subflow ULP info, raw attribute payload (borrowed), or NULL. */
	const void *ulp_mptcp;
	size_t ulp_mptcp_len;
	/* SCTP (multi-homing): INET_DIAG_LOCALS, every local address of the
	 * endpoint or association (SDIAG_HAS_SCTP_LOCALS), and INET_DIAG_PEERS,
	 * every peer address of an association (SDIAG_HAS_SCTP_PEERS): raw
	 * attribute payloads (borrowed), or NULL. Read them with
	 * sdiag_sctp_addrs(). */
	const void *sctp_locals;
	size_t sctp_locals_len;
	const void *sctp_peers;
	size_t sctp_peers_len;
};

struct sdiag_unix {
	/* sun_path bytes, not NUL-terminated; abstract names start with '\0'.
	 * Borrowed: valid only during the callback (the collector copies it). */
	const uint8_t *name;
	size_t name_len;
	uint32_t peer;		/* peer inode */
	uint32_t vfs_ino;
	uint32_t vfs_dev;	/* kernel encoding: major << 20 | minor */
	const uint32_t *icons;	/* inodes of queued clients (borrowed) */
	size_t n_icons;
};

struct sdiag_netlink {
	uint32_t portid;
	uint32_t dst_portid;
	uint32_t dst_group;
	uint32_t flags;		/* NDIAG_FLAG_*: 1 cb running, 2 pktinfo, 4 broadcast error,
				 * 8 no enobufs, 0x10 listen all nsid, 0x20 cap ack */
	/* Group bitmap, bit g-1 of word (g-1)/32 set when subscribed to group g.
	 * Borrowed; any length. */
	const uint32_t *groups;
	size_t n_group_words;
};

struct sdiag_packet {
	uint16_t ethertype;	/* bound protocol, host order (0x0003 = ETH_P_ALL) */
	uint32_t fanout;	/* id | type << 16 */
	struct sdiag_packet_info info;
	struct sdiag_packet_ring rx_ring, tx_ring;
	const struct sdiag_packet_mclist *mclist; /* borrowed */
	size_t n_mclist;
	const void *filter;	/* struct sock_filter[] (borrowed) */
	size_t n_filter;
};

struct sdiag_vsock {
	uint32_t src_cid, src_port, dst_cid, dst_port;
};

struct sdiag_xdp {
	uint32_t ifindex, queue_id;
	uint32_t rx_entries, tx_entries, fill_entries, completion_entries;
	uint32_t umem_id, umem_num_pages, umem_chunk_size, umem_headroom, umem_ifindex,
		umem_queue_id, umem_flags, umem_refs;
	uint64_t umem_size;
	uint64_t rx_dropped, rx_invalid, rx_full, fill_empty, tx_invalid, tx_empty;
};

struct sdiag_smc {
	uint8_t mode;		/* 0 SMC-R, 1 fallback to TCP, 2 SMC-D */
	uint32_t fallback_reason, peer_diagnosis;
};

struct sdiag_tipc {
	uint32_t ref, addr, conn_type, conn_instance, conn_node, conn_port;
	bool has_conn;
};

struct sdiag_sock {
	enum sdiag_table table;
	uint8_t family;		/* AF_INET, AF_INET6, AF_UNIX, AF_NETLINK, ... */
	uint8_t type;		/* SOCK_STREAM, SOCK_DGRAM, SOCK_RAW, SOCK_SEQPACKET */
	uint8_t state;		/* enum sdiag_state */
	uint8_t shutdown;	/* bit 0: receive side shut, bit 1: send side shut */
	uint16_t protocol;	/* IPPROTO_* (MPTCP = 262), NETLINK_* for netlink */
	uint64_t has;		/* SDIAG_HAS_* bits */
	uint64_t cookie;
	uint64_t inode;
	uint32_t uid;
	uint32_t rqueue;
	uint32_t wqueue;
	union {
		struct sdiag_inet inet;
		struct sdiag_unix un;
		struct sdiag_netlink nl;
		struct sdiag_packet pkt;
		struct sdiag_vsock vsock;
		struct sdiag_xdp xdp;
		struct sdiag_tipc tipc;
	};
	struct sdiag_smc smc;	/* SMC also fills inet for its internal TCP socket */
	/* Owning processes, when the query carried a process map (borrowed from
	 * the map: valid until sdiag_procmap_free, also in sdiag_sock_dup copies). */
	const struct sdiag_proc *procs;
	size_t n_procs;
	/* The kernel structs the kernel sent (enum sdiag_blob): borrowed views
	 * into the received datagram, as long as the kernel made them. Private:
	 * read them through sdiag_sock_blob() and sdiag_sock_blob_copy(). */
	const void *blob[SDIAG_BLOB_SLOTS];
	uint16_t blob_len[SDIAG_BLOB_SLOTS];
};

/* Name of a netlink protocol ("route", "sock_diag", "generic", ...), or NULL if unknown. */
const char *sdiag_netlink_proto_name(unsigned proto);
/* Name of an rtnetlink multicast group (RTNLGRP_*, lower case, "link", "ipv4_ifaddr", ...). */
const char *sdiag_rtnl_group_name(unsigned group);

/* One address of an SCTP endpoint or association (INET_DIAG_LOCALS, _PEERS). */
struct sdiag_sctp_addr {
	uint8_t family;		/* AF_INET or AF_INET6 (an IPv6 socket may list IPv4 ones) */
	uint16_t port;		/* host order */
	uint8_t addr[16];	/* network order; IPv4 uses the first 4 bytes */
};

enum sdiag_sctp_list {
	SDIAG_SCTP_LOCALS,	/* inet.sctp_locals */
	SDIAG_SCTP_PEERS,	/* inet.sctp_peers */
};

/* An SCTP record's local or peer addresses, in the kernel's order: decodes
 * at most max of them into out (out may be NULL when max is 0) and returns
 * how many the kernel sent (entries of another family and a partial entry at
 * the end are not addresses). 0 for a record without that list. Pure. */
size_t sdiag_sctp_addrs(const struct sdiag_sock *s, enum sdiag_sctp_list which,
			struct sdiag_sctp_addr *out, size_t max);

/* A kernel struct a record carries as the kernel sent it. The library does
 * not cut or pad it: a newer kernel's longer struct reaches a caller built
 * with a longer definition, an older kernel's shorter one reads as zero past
 * its end. */
enum sdiag_blob {
	SDIAG_BLOB_TCP_INFO,	/* struct tcp_info (SDIAG_HAS_TCP_INFO) */
	SDIAG_BLOB_MPTCP_INFO,	/* struct mptcp_info (SDIAG_HAS_MPTCP_INFO) */
	SDIAG_BLOB_MEMINFO,	/* struct inet_diag_meminfo (SDIAG_HAS_MEMINFO) */
	SDIAG_BLOB_SKMEMINFO,	/* u32 SK_MEMINFO_*[] (SDIAG_HAS_SKMEMINFO), any family */
	SDIAG_BLOB_VEGAS,	/* struct tcpvegas_info (SDIAG_HAS_VEGAS) */
	SDIAG_BLOB_DCTCP,	/* struct tcp_dctcp_info (SDIAG_HAS_DCTCP) */
	SDIAG_BLOB_BBR,		/* struct tcp_bbr_info (SDIAG_HAS_BBR) */
	SDIAG_BLOB_MAX
};

/* The bytes the kernel sent for blob k: borrowed, valid as long as the record
 * (during the callback; a sdiag_sock_dup copy carries its own), and only
 * 4-byte aligned, so read it with memcpy or sdiag_sock_blob_copy(). NULL when
 * the record has none (not asked for, not sent, k out of range); *ret_len
 * (may be NULL) gets its length, 0 then. Pure. */
const void *sdiag_sock_blob(const struct sdiag_sock *s, enum sdiag_blob k, size_t *ret_len);
/* Copy blob k into out, the caller's struct of size bytes: min(its length,
 * size) bytes, the rest of out zero-filled (the whole of it when the record
 * has none). Returns the length the kernel sent (0: none); larger than size
 * when the kernel knows fields the caller does not. Pure. */
size_t sdiag_sock_blob_copy(const struct sdiag_sock *s, enum sdiag_blob k, void *out, size_t size);

/* Deep copy of a record: borrowed arrays are copied into the same allocation.
 * Returns NULL on allocation failure. Free with free(). */
struct sdiag_sock *sdiag_sock_dup(const struct sdiag_sock *s);

/* ------------------------------------------------------------------------ */
/* Filters: ss's expression language (see sockdiag(8), FILTER).               */

struct sdiag_filter;

/* Where and why parsing failed: the byte range of the offending token in the
 * expression and what was expected there. */
struct sdiag_filter_error {
	size_t offset;
	size_t len;
	/* One line, never cut short: text quoted from the expression is
	 * escaped and at most 32 bytes of it shown. */
	char msg[512];
};

/* Parse an expression (grammar: sockdiag(8), FILTER; also docs/filter.md, installed
 * in share/doc/sockdiag). Host names, service names, users and devices are
 * resolved now, cgroup paths and unit names too (by sdiag_filter_resolve(): a
 * missing one is -EINVAL); no socket is dumped: the unix sockets a `dst GLOB`
 * names are looked up by each sdiag_dump in its handle's namespace
 * (sdiag_filter_match alone matches no unix `dst`).
 * Returns 0, -EINVAL for a malformed expression (err says where and why),
 * -EPERM for fwmark without CAP_NET_ADMIN (err set too), -ENOMEM. */
int sdiag_filter_parse(struct sdiag_filter **ret, const char *expr,
		       struct sdiag_filter_error *err);
/* The userspace matcher: the authority on what matches, for every family. */
bool sdiag_filter_match(const struct sdiag_filter *f, const struct sdiag_sock *s);
/* Whether f has process predicates (pid, comm, user): they match only records
 * with owners, so the query needs a process map (struct sdiag_query.procmap).
 * False for NULL. */
bool sdiag_filter_needs_procs(const struct sdiag_filter *f);
/* sdiag_filter_resolve flags: a cgroup path or unit that does not exist
 * matches nothing instead of being an error. */
#define SDIAG_RESOLVE_MISSING_OK 1u
/* Resolve the filter's `cgroup` and `unit` predicates again against the
 * cgroup tree as it is now (a restarted service has a new cgroup, with a new
 * id). sdiag_filter_parse() does this once. Returns 0, -ENOENT when a path or
 * unit does not exist (err says which; the old ids are kept), -ENOMEM. */
int sdiag_filter_resolve(struct sdiag_filter *f, unsigned flags, struct sdiag_filter_error *err);
/* Whether f has `cgroup` or `unit` predicates (they only ever match inet
 * sockets: sock_diag reports no cgroup for other families). False for NULL. */
bool sdiag_filter_uses_cgroups(const struct sdiag_filter *f);
/* The state mask the filter's state/exclude clauses allow (SDIAG_STATES_ALL if none). */
uint32_t sdiag_filter_states(const struct sdiag_filter *f);
/* Whether the filter has state/exclude clauses at all (even "state all"): then they replace a
 * default selection of states, as ss's do (sockdiag list and kill, the Python kill()). False
 * for NULL. */
bool sdiag_filter_names_states(const struct sdiag_filter *f);
/* Accepts NULL. */
void sdiag_filter_free(struct sdiag_filter *f);

/*
 * Building a filter without text. The builder makes the same tree the parser
 * makes, so matching, sdiag_filter_states() and the kernel bytecode are the
 * parser's: `dst 10.0.0.1:53 or dst [fd00::1]:53` built with
 *
 *	struct sdiag_filter *f = NULL;
 *	uint8_t a4[4] = { 10, 0, 0, 1 }, a6[16] = { 0xfd, [15] = 1 };
 *
 *	sdiag_filter_new(&f);
 *	sdiag_filter_begin(f, SDIAG_FILTER_OR);
 *	sdiag_filter_add_host(f, SDIAG_FILTER_DST, AF_INET, a4, -1, 53);
 *	sdiag_filter_add_host(f, SDIAG_FILTER_DST, AF_INET6, a6, -1, 53);
 *	sdiag_filter_end(f);
 *	r = sdiag_filter_finish(f, &err);	// 0, or the first error
 *
 * is the filter sdiag_filter_parse() makes of that text, down to the byte.
 *
 * Errors latch (as in sd-bus and libbpf): the first failing call records its
 * error in f and returns it; every later call on f does nothing and returns
 * that same error, and so does sdiag_filter_finish(), with a message in its
 * err (offset: the index of the failing call, counting from 0 after
 * sdiag_filter_new; len 0). Calls can therefore be chained unchecked and the
 * result of sdiag_filter_finish() checked once. Errors: -EINVAL (an argument
 * out of range, an unbalanced begin/end, NULL f), -EPERM (fwmark without
 * CAP_NET_ADMIN, as for the parser), -ENOENT (finish: a cgroup or unit that
 * does not exist), -ENOMEM. The builder never prints.
 *
 * Terms at one level are joined by the level's operator: the top level and
 * SDIAG_FILTER_AND groups by `and`, SDIAG_FILTER_OR groups by `or`, and an
 * SDIAG_FILTER_NOT group is `not (t1 and t2 ...)`. Joins associate to the
 * left, as in the parser: a, b, c in an OR group is `(a or b) or c`. A group
 * with no term is an error; a filter with no term matches every socket.
 * f is usable (sdiag_filter_match, struct sdiag_query.filter) only after
 * sdiag_filter_finish() returned 0: until then it matches no socket. Adding
 * to a finished filter is -EINVAL.
 * Predicates without a builder call yet (unix, netlink, packet and vsock
 * hosts, pid/comm/user, TCP info, autobound) are written as text.
 */
enum sdiag_filter_group {
	SDIAG_FILTER_AND,
	SDIAG_FILTER_OR,
	SDIAG_FILTER_NOT,
};

/* Which end of the socket a host or port term looks at: src is the local
 * end, dst the peer (src/sport and dst/dport in the grammar). */
enum sdiag_filter_dir {
	SDIAG_FILTER_SRC,
	SDIAG_FILTER_DST,
};

/* Comparisons: = != < <= > >=. Like the grammar's `!=`, NE is false for a
 * socket without the field, unlike a NOT group. */
enum sdiag_filter_cmp {
	SDIAG_FILTER_EQ,
	SDIAG_FILTER_NE,
	SDIAG_FILTER_LT,
	SDIAG_FILTER_LE,
	SDIAG_FILTER_GT,
	SDIAG_FILTER_GE,
};

/* A new, empty filter for the builder: *ret is caller-owned (sdiag_filter_free).
 * Returns 0 or -ENOMEM (*ret untouched), -EINVAL for NULL ret. */
int sdiag_filter_new(struct sdiag_filter **ret);
/* Open a group (and, or, not) at the current level; sdiag_filter_end closes
 * the innermost one. At most 200 levels deep. Returns 0 or the latched error. */
int sdiag_filter_begin(struct sdiag_filter *f, enum sdiag_filter_group g);
int sdiag_filter_end(struct sdiag_filter *f);
/* `src HOST` / `dst HOST` for inet sockets. family AF_INET or AF_INET6 with
 * addr (network order, 4 or 16 bytes; borrowed for the call) and a prefix
 * length plen (-1: the whole address, 32 or 128); addr NULL (plen -1 or 0):
 * any address of that family; family AF_UNSPEC (addr NULL): any address (`*`).
 * port 0..65535, or -1 for any port. An IPv4 term also matches v4-mapped
 * IPv6 sockets, as in the grammar. */
int sdiag_filter_add_host(struct sdiag_filter *f, enum sdiag_filter_dir dir, int family,
			  const void *addr, int plen, int port);
/* `sport OP PORT` / `dport OP PORT`: port 0..65535, or -1 (any) with EQ only. */
int sdiag_filter_add_port(struct sdiag_filter *f, enum sdiag_filter_dir dir,
			  enum sdiag_filter_cmp cmp, int port);
/* `state ...` / `exclude ...`: the socket's state is in mask (SDIAG_STATE_BIT
 * of enum sdiag_state values; bits outside SDIAG_STATES_ALL are -EINVAL). */
int sdiag_filter_add_states(struct sdiag_filter *f, uint32_t mask);
/* `proto ...`: the socket is in one of the tables of mask (SDIAG_TABLE_BIT;
 * 0 or bits outside SDIAG_TABLES_ALL are -EINVAL). */
int sdiag_filter_add_tables(struct sdiag_filter *f, uint32_t mask);
/* `dev OP IFINDEX`, cmp EQ or NE. */
int sdiag_filter_add_dev(struct sdiag_filter *f, enum sdiag_filter_cmp cmp, unsigned ifindex);
/* `fwmark OP MARK/MASK`, cmp EQ or NE; -EPERM without CAP_NET_ADMIN (the
 * kernel shows marks only to it). */
int sdiag_filter_add_fwmark(struct sdiag_filter *f, enum sdiag_filter_cmp cmp, uint32_t mark,
			    uint32_t mask);
/* `uid OP UID`: the socket's owner uid. */
int sdiag_filter_add_uid(struct sdiag_filter *f, enum sdiag_filter_cmp cmp, uint32_t uid);
/* `cgroup OP PATH` (a cgroup2 path from the mount's root: "/a/b" that cgroup;
 * followed by a slash and two stars, it and every cgroup below) or, unit true, `unit OP NAME` (every
 * cgroup named NAME, a systemd service, scope or slice, and those below). cmp EQ or NE; the
 * text is copied. Looked up by sdiag_filter_finish() (a missing one:
 * -ENOENT) and again by sdiag_filter_resolve(). */
int sdiag_filter_add_cgroup(struct sdiag_filter *f, enum sdiag_filter_cmp cmp, bool unit,
			    const char *path);
/* Close the filter: checks every group is closed, looks up cgroups and
 * units, and returns 0 or the first error of any builder call on f, with
 * its message in err (may be NULL). f stays caller-owned either way. */
int sdiag_filter_finish(struct sdiag_filter *f, struct sdiag_filter_error *err);

/* ------------------------------------------------------------------------ */
/* Handles and dumps.                                                        */

struct sdiag_handle;

/* Open a handle on the caller's current network namespace. */
int sdiag_open(struct sdiag_handle **ret);
/* Open a handle on the network namespace behind nsfd (an nsfs file descriptor:
 * /run/netns/NAME, /proc/PID/ns/net). Needs CAP_SYS_ADMIN over that namespace. */
int sdiag_open_netns(struct sdiag_handle **ret, int nsfd);
/* Accepts NULL. */
void sdiag_close(struct sdiag_handle *h);

/* What to request: detail flags. */
enum sdiag_show {
	SDIAG_SHOW_INFO = 1 << 0,	/* tcp_info, mptcp_info, congestion control (ss -i) */
	SDIAG_SHOW_MEM = 1 << 1,	/* meminfo and skmeminfo (ss -m) */
	SDIAG_SHOW_EXT = 1 << 2,	/* uid, unix vfs/icons, packet details (ss -e) */
	SDIAG_SHOW_TOS = 1 << 3,	/* tos, tclass, class id (ss --tos) */
	SDIAG_SHOW_TCP_INFO = 1 << 4,	/* tcp_info and mptcp_info alone: no congestion
					 * control, less work for the kernel */
	SDIAG_SHOW_ALL = 0xff,
};

/* Which address families to dump for the inet tables. */
enum sdiag_af {
	SDIAG_AF_INET = 1 << 0,
	SDIAG_AF_INET6 = 1 << 1,
	SDIAG_AF_ALL = SDIAG_AF_INET | SDIAG_AF_INET6,
};

/*
 * Options structs (struct sdiag_query, struct sdiag_kill_opts) grow at their
 * end and start with their size, as libbpf's: declare one with SDIAG_OPTS(),
 * which zeroes it and sets sz to the size the caller was built with. A
 * library older than the caller accepts it when every byte it does not know
 * is zero (else -E2BIG: the caller asked for an option it lacks); a newer
 * library reads the fields it knows beyond sz as zero. sz smaller than the
 * size_t itself: -EINVAL.
 *
 *	SDIAG_OPTS(sdiag_query, q, .tables = SDIAG_TABLES_INET, .show = SDIAG_SHOW_INFO);
 *	r = sdiag_dump(h, &q, cb, NULL, NULL);
 */
#define SDIAG_OPTS(TYPE, NAME, ...)                                                                \
	struct TYPE NAME = ({                                                                      \
		memset(&NAME, 0, sizeof(struct TYPE));                                             \
		(struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ };                           \
	})

struct sdiag_query {
	size_t sz;		/* sizeof(struct sdiag_query); SDIAG_OPTS() sets it */
	uint32_t tables;	/* SDIAG_TABLE_BIT() mask; 0 = none */
	uint32_t states;	/* SDIAG_STATE_BIT() mask; 0 = all */
	uint32_t afs;		/* enum sdiag_af mask for inet tables; 0 = both */
	uint32_t show;		/* enum sdiag_show */
	/* Optional: only records matching it are passed on; the inet part is
	 * compiled to kernel bytecode unless no_kernel_filter is set. */
	const struct sdiag_filter *filter;
	bool no_kernel_filter;
	/* Optional: attach each socket's owners (rec->procs) before filtering. */
	const struct sdiag_procmap *procmap;
	/* ---- policies (zero: none; see "Pull-mode dumps" below) ---- */
	uint32_t flags;		/* enum sdiag_query_flags */
	/* With SDIAG_Q_SKIP_UNSUPPORTED: the tables (SDIAG_TABLE_BIT() mask) the
	 * caller named itself, whose lack of kernel support is still an error. */
	uint32_t named_tables;
	/* Per inet table, indexed by enum sdiag_table: its enum sdiag_af mask;
	 * 0 for a table: afs. 32 entries whatever SDIAG_T_MAX is (table masks
	 * are 32 bits), so that a new table moves no member. */
	uint8_t table_afs[32];
};

/* Called for each socket. The record is borrowed: valid only during the call.
 * Return 0 to go on, a negative errno to stop the dump (sdiag_dump returns it). */
typedef int (*sdiag_sock_cb)(const struct sdiag_sock *s, void *userdata);

/* Called when one table (and for inet, one address family) cannot be dumped
 * and the query's policy (SDIAG_Q_SKIP_UNSUPPORTED) does not skip it:
 * err is -EAFNOSUPPORT when the kernel has no diag support for the family,
 * -EPROTONOSUPPORT when it has none for the inet protocol, -EINTR when the
 * kernel marked the dump interrupted (NLM_F_DUMP_INTR: no sock_diag family
 * sets it today), or another negative errno. Return 0 to go on with the other
 * tables, negative to stop. */
typedef int (*sdiag_error_cb)(enum sdiag_table t, int family, int err, void *userdata);

/*
 * Dump the sockets q selects, decoding each and calling cb: a loop over
 * sdiag_dump_begin/next/end (below), in their order. Duplicates that dumps
 * produce (socket churn between chunks, netlink_diag's double report) are
 * removed by cookie. When a table cannot be dumped (and the query's policy
 * does not skip it), err_cb decides; with err_cb NULL the dump stops and
 * returns that error. q is read during the call only; the records are the
 * callback's (borrowed).
 * Returns 0, or a negative errno (including one returned by a callback):
 * -EINVAL for a NULL h, q or cb or q->sz below sizeof(size_t), -E2BIG for a
 * query with a non-zero option this library does not know (SDIAG_OPTS),
 * -EBUSY: a pull-mode dump is under way on h.
 */
int sdiag_dump(struct sdiag_handle *h, const struct sdiag_query *q, sdiag_sock_cb cb,
	       sdiag_error_cb err_cb, void *userdata);

/* ---- Pull-mode dumps -------------------------------------------------------
 * The caller owns the loop (libmnl's style): begin, next until it returns 0,
 * end. No thread and no callback; a dump's memory is one datagram buffer,
 * one record and a small window of recent cookies, whatever the number of
 * sockets. Duplicates that dumps produce (socket churn between chunks,
 * netlink_diag's double report) are removed by cookie.
 *
 * Order: table by table, netlink, packet, unix, raw, udp, udplite, tcp,
 * sctp, vsock, tipc, xdp, mptcp, smc; within a table the kernel's order. An
 * inet table is dumped per family, IPv4 first, except TCP of both families,
 * which is one kernel walk (half the work) whose IPv4 and IPv6 records come
 * mixed; a caller that wants ss's order (IPv4 first) asks for the families
 * one by one (table_afs) or holds the IPv6 records back (sockdiag list does,
 * cli/list.c).
 */
enum sdiag_query_flags {
	/* A table the kernel cannot dump (-EAFNOSUPPORT: no diag module for
	 * the family; -EPROTONOSUPPORT: none for the inet protocol) is skipped
	 * silently, unless named_tables holds it (or a table dumped with it:
	 * the unix, packet and vsock groups are one dump each): then it is
	 * reported as any other error. */
	SDIAG_Q_SKIP_UNSUPPORTED = 1 << 0,
};

struct sdiag_dump;

/*
 * Begin a dump of the sockets q selects on h. Nothing is read yet; a filter
 * naming unix peers (`dst GLOB`) is resolved here with one unix dump. q and
 * what it points to (filter, procmap) are borrowed until sdiag_dump_end; h
 * takes one dump at a time. *ret is the caller's, freed by sdiag_dump_end.
 * Returns 0, -EINVAL (h, q or ret NULL), -EBUSY (a dump is under way on h),
 * -ENOMEM, or the resolving dump's errno.
 */
int sdiag_dump_begin(struct sdiag_handle *h, const struct sdiag_query *q,
		     struct sdiag_dump **ret);
/*
 * The next socket: 1 and *ret set to a record lent by the dump, valid until
 * the next call on d (copy it with sdiag_sock_dup to keep it); 0 at the end;
 * or a negative errno when one table (and for inet one family) could not be
 * dumped: -EAFNOSUPPORT, -EPROTONOSUPPORT (no kernel support, unless the
 * query's policy skips it), -EINTR (the kernel marked the dump interrupted;
 * no sock_diag family does today), -ENOMEM, -EMSGSIZE, the socket's errno.
 * sdiag_dump_where then names that table; calling sdiag_dump_next again goes
 * on with the next table.
 */
int sdiag_dump_next(struct sdiag_dump *d, const struct sdiag_sock **ret);
/*
 * The table being dumped (the first of the query's in a group such as unix)
 * and its address family (AF_INET, AF_INET6, AF_UNSPEC for TCP's walk of
 * both; the family's for other tables); either pointer may be NULL. Returns
 * 0, or -ENOENT before the first sdiag_dump_next.
 */
int sdiag_dump_where(const struct sdiag_dump *d, enum sdiag_table *ret_table, int *ret_family);
/* End the dump (read and drop what the kernel still sends, so h can take
 * the next one) and free d. Accepts NULL. */
void sdiag_dump_end(struct sdiag_dump *d);

/* A caller-owned array of records (each a sdiag_sock_dup copy). */
struct sdiag_sock_list {
	struct sdiag_sock **socks;
	size_t n;
};

/* Collect every socket sdiag_dump would report into *ret, the caller's to
 * free with sdiag_sock_list_free (untouched on error). Tables the kernel
 * cannot dump are skipped (SDIAG_Q_SKIP_UNSUPPORTED, whatever named_tables
 * says). Returns 0 or the errors of sdiag_dump, -ENOMEM. */
int sdiag_collect(struct sdiag_handle *h, const struct sdiag_query *q,
		  struct sdiag_sock_list *ret);
/* Accepts NULL and an empty list. */
void sdiag_sock_list_free(struct sdiag_sock_list *l);

/* ------------------------------------------------------------------------ */
/* Watch: socket-destroy events (TCP and UDP, IPv4 and IPv6; the only kinds    */
/* the kernel announces).                                                      */

enum sdiag_watch_group {
	SDIAG_WATCH_TCP4 = 1 << 0,	/* SKNLGRP_INET_TCP_DESTROY */
	SDIAG_WATCH_UDP4 = 1 << 1,	/* SKNLGRP_INET_UDP_DESTROY */
	SDIAG_WATCH_TCP6 = 1 << 2,	/* SKNLGRP_INET6_TCP_DESTROY */
	SDIAG_WATCH_UDP6 = 1 << 3,	/* SKNLGRP_INET6_UDP_DESTROY */
	SDIAG_WATCH_ALL = 0xf,
};

struct sdiag_watch;

/* Subscribe to the groups in the namespace nsfd (-1: the caller's). The
 * returned watch's descriptor (sdiag_watch_fd) is non-blocking: poll it. */
int sdiag_watch_open(struct sdiag_watch **ret, unsigned groups, int nsfd);
int sdiag_watch_fd(const struct sdiag_watch *w);
/* Set the receive buffer (default 32 MiB where allowed): a smaller one loses
 * events in bursts, which sdiag_watch_read counts. */
int sdiag_watch_set_rcvbuf(struct sdiag_watch *w, int bytes);
/* Read every pending event, decode it (state is the final one, normally
 * CLOSE; uid and inode are 0) and pass those f matches (f may be NULL) to cb.
 * *ret_lost (may be NULL) gets the number of events the kernel dropped since
 * the previous call because the receive queue overflowed. Returns the number
 * of events passed to cb, or a negative errno (or cb's negative return). */
int sdiag_watch_read(struct sdiag_watch *w, const struct sdiag_filter *f, sdiag_sock_cb cb,
		     void *userdata, uint64_t *ret_lost);
/* Accepts NULL. */
void sdiag_watch_close(struct sdiag_watch *w);

/* ------------------------------------------------------------------------ */
/* Processes: which processes hold each socket.                                */

struct sdiag_proc {
	int32_t pid;
	int32_t fd;
	uint32_t uid;		/* the process's effective uid (owner of /proc/PID) */
	char comm[16];		/* with SDIAG_OWNERS_THREADS: the thread's */
	int32_t tid;		/* with SDIAG_OWNERS_THREADS: the thread; else 0 */
};

struct sdiag_procmap;

/* How to find the owners. */
enum sdiag_owners {
	SDIAG_OWNERS_AUTO = 0,	/* the BPF iterator when it loads, else the /proc walk */
	SDIAG_OWNERS_PROC = 1,	/* walk /proc/PID/fd */
	SDIAG_OWNERS_BPF = 2,	/* the BPF iterator (CAP_BPF + CAP_PERFMON), or fail */
	/* Or'ed in: one entry per thread (ss -T): each thread's descriptor table
	 * (/proc/PID/task/TID/fd) and name, with sdiag_proc.tid. Always the /proc
	 * walk; sdiag_procmap_source() then says why not the iterator
	 * (-EOPNOTSUPP when it was asked for). */
	SDIAG_OWNERS_THREADS = 1 << 8,
};

/* Scan every process's socket descriptors once, indexed by socket inode,
 * as sdiag_procmap_scan_using(ret, proc_root, proc_root ? SDIAG_OWNERS_PROC :
 * SDIAG_OWNERS_AUTO). Returns 0 or a negative errno. */
int sdiag_procmap_scan(struct sdiag_procmap **ret, const char *proc_root);
/* Scan the owners the way how says. The /proc walk reads proc_root
 * (NULL = "/proc"): linear in the number of open files, processes that exit
 * during the scan are skipped. The BPF iterator (not with a proc_root: -EINVAL)
 * walks the kernel's task and file tables in one pass and gives the same
 * answers for the caller's pid namespace; with SDIAG_OWNERS_BPF its failure
 * is returned (-EOPNOTSUPP: library built without it; -EPERM: no right to
 * load it), with SDIAG_OWNERS_AUTO it falls back to the walk. Returns 0 or a
 * negative errno. */
int sdiag_procmap_scan_using(struct sdiag_procmap **ret, const char *proc_root,
			     enum sdiag_owners how);
/* How m was built: SDIAG_OWNERS_PROC or SDIAG_OWNERS_BPF (SDIAG_OWNERS_AUTO
 * for NULL). *ret_bpf_err (may be NULL) gets why the BPF iterator was not
 * used (a negative errno), or 0 when it was or was not tried. */
enum sdiag_owners sdiag_procmap_source(const struct sdiag_procmap *m, int *ret_bpf_err);
/* The owners of a socket inode, sorted by pid then fd (by pid, tid, fd); *ret points into the
 * map (valid until it is freed). Returns their number (0: none known). */
size_t sdiag_procmap_lookup(const struct sdiag_procmap *m, uint64_t inode,
			    const struct sdiag_proc **ret);
/* Accepts NULL. */
void sdiag_procmap_free(struct sdiag_procmap *m);

/* ------------------------------------------------------------------------ */
/* Network namespaces.                                                         */

struct sdiag_netns {
	char label[64];		/* the /run/netns name, the path of a name in
				 * /var/run/netns, "pid:N", "cgroup:PATH pid:N" (PATH
				 * shortened to its end: "cgroup:.../x.scope pid:N") */
	char path[320];		/* an nsfs path to open it by */
	uint64_t inode;		/* namespace inode: its identity */
};

/* ------------------------------------------------------------------------ */
/* cgroup v2                                                                   */

/* The cgroup2 mount point (from /proc/self/mountinfo: /sys/fs/cgroup, or
 * /sys/fs/cgroup/unified on hybrid hosts). Returns 0, -ENOENT if none. */
int sdiag_cgroup_root(char *buf, size_t size);
/* Called with a cgroup's path relative to the cgroup2 mount ("/" for the
 * root, "/system.slice/nginx.service") and its id (the number sock_diag
 * reports). Return 0 to go on, a negative errno to stop. */
typedef int (*sdiag_cgroup_cb)(const char *path, uint64_t id, void *userdata);
/* Visit the cgroups spec names: unit false: "PATH" (that cgroup) or
 * "PATH/" followed by "**" (it and every cgroup below); unit true: every
 * cgroup directory named spec, and every cgroup below those. Returns the
 * number visited (> 0), -ENOENT when there is none, -EINVAL for a malformed
 * spec, or cb's error. */
int sdiag_cgroup_walk(const char *spec, bool unit, sdiag_cgroup_cb cb, void *userdata);

/* Open a namespace given as NAME (/run/netns/NAME), a PATH (containing '/'),
 * or pid:PID. *ret_fd is an O_CLOEXEC nsfs descriptor for sdiag_open_netns.
 * Only a network namespace file is ever opened for reading (a FIFO or a
 * device never is): -ENOTNAM when the file is something else, -EINVAL for a
 * malformed spec, else open(2)'s error. */
int sdiag_netns_open(const char *spec, int *ret_fd);
/* Every distinct network namespace of the host: named ones first (/run/netns,
 * labelled NAME, then /var/run/netns unless it is the same directory, labelled
 * by path), then those of running processes, deduplicated by inode. Free *ret
 * with free(). */
int sdiag_netns_list(struct sdiag_netns **ret, size_t *ret_n);
/* The namespaces specs name, deduplicated by inode, in order: each spec is a
 * NAME, PATH or pid:PID (as sdiag_netns_open), or cgroup:PATH (the namespaces
 * of every process in that cgroup and below it) or unit:NAME (likewise for
 * every cgroup named NAME; see sdiag_cgroup_walk). A cgroup with no process
 * adds nothing. Free *ret with free(). On error (-ENOENT: no such namespace
 * or cgroup, ...) *ret_bad, if not NULL, is the index of the failing spec. */
int sdiag_netns_list_specs(const char *const *specs, size_t n, struct sdiag_netns **ret,
			   size_t *ret_n, size_t *ret_bad);

/* ------------------------------------------------------------------------ */
/* Destroy: close sockets through SOCK_DESTROY (see sockdiag(8), KILL).       */

enum sdiag_destroy_result {
	SDIAG_DESTROYED,	/* the kernel destroyed it */
	SDIAG_GONE,		/* it no longer exists: closed, or its addresses now
				 * belong to a new socket (another cookie) */
	SDIAG_UNSUPPORTED,	/* the kernel cannot destroy this kind of socket */
	SDIAG_DENIED,		/* EPERM: no CAP_NET_ADMIN over its network namespace */
	SDIAG_ERROR,		/* anything else; the errno says what */
};

/* "destroyed", "gone", "unsupported", "denied", "error"; NULL if out of range. */
const char *sdiag_destroy_result_name(enum sdiag_destroy_result r);
/* Whether the kernel can destroy a socket of this kind at all: inet TCP (but
 * bound-inactive sockets), UDP and raw. Unix, netlink, packet, vsock, XDP,
 * TIPC, SMC, SCTP, MPTCP and UDP-Lite sockets: false. */
bool sdiag_destroyable(const struct sdiag_sock *s);

/* Called once per record handed to a destroyer, in the order they were added.
 * err is 0 or the negative errno behind res (-ENOENT for gone, -EOPNOTSUPP
 * for a kind never sent to the kernel, ...). The record is borrowed. Return 0
 * to go on, negative to stop (later records of the batch are still acted upon
 * but not reported). */
typedef int (*sdiag_destroy_cb)(const struct sdiag_sock *s, enum sdiag_destroy_result res,
				int err, void *userdata);

/*
 * A destroyer names each socket exactly as dumped (family, protocol, the whole
 * id with ifindex and cookie), packs the requests into batches sent on a
 * netlink socket of its own (never the handle's, so it can destroy while the
 * handle dumps), in the handle's network namespace, and reports each result.
 * It holds at most one batch of records: memory stays flat.
 */
struct sdiag_destroyer;

/* Returns 0; -EPERM when the caller lacks CAP_NET_ADMIN over the handle's
 * network namespace (nothing could be destroyed); -EOPNOTSUPP when the
 * kernel was built without CONFIG_INET_DIAG_DESTROY; another negative errno. */
int sdiag_destroyer_new(struct sdiag_destroyer **ret, struct sdiag_handle *h,
			sdiag_destroy_cb cb, void *userdata);
/* Whether sockets of the handle's network namespace can be destroyed, found
 * by one request that names no socket (nothing is destroyed): 0, or the
 * errors of sdiag_destroyer_new (-EPERM, -EOPNOTSUPP, ...). For callers that
 * must refuse before they print or change anything. */
int sdiag_destroy_check(struct sdiag_handle *h);
/* Records per batch (default 1024, capped by the socket buffers); flushes
 * first. Returns the size in effect, or a negative errno. */
int sdiag_destroyer_set_batch(struct sdiag_destroyer *d, unsigned n);
/* Queue a record (copied); sends the batch when it is full. Returns 0 or a
 * negative errno (a callback's included). */
int sdiag_destroyer_add(struct sdiag_destroyer *d, const struct sdiag_sock *s);
/* Send what is queued and report every result. Returns 0 or a negative errno. */
int sdiag_destroyer_flush(struct sdiag_destroyer *d);
/* Records queued but not flushed are dropped unsent. Accepts NULL. */
void sdiag_destroyer_free(struct sdiag_destroyer *d);

/* Destroy n records; results[i] (and errs[i], if not NULL) for socks[i].
 * Returns 0 or a negative errno as sdiag_destroyer_new. */
int sdiag_destroy(struct sdiag_handle *h, const struct sdiag_sock *const *socks, size_t n,
		  enum sdiag_destroy_result *ret_results, int *ret_errs);

struct sdiag_kill_opts {
	size_t sz;		/* sizeof(struct sdiag_kill_opts); SDIAG_OPTS() sets it */
	unsigned batch;		/* records per batch; 0 = default */
	unsigned max_passes;	/* passes at most; 0 = default (4) */
	/* MPTCP sockets cannot be destroyed; also destroy the TCP subflows
	 * of every matched MPTCP connection (found by its token). */
	bool mptcp_subflows;
};

/*
 * Dump what q selects and destroy it while dumping, reporting each socket once
 * through cb. A dump resumes each chunk by position, so destroying during it
 * can hide live sockets from the rest of it: each inet table and address
 * family is dumped on its own, and those in which a pass destroyed anything
 * are dumped again, acting on the destroyable sockets not yet reported (by
 * cookie); sockets created meanwhile that match are destroyed too. err_cb is
 * as for sdiag_dump. o may be NULL (the defaults); q and o are read during
 * the call only. Returns 0 or a negative errno as sdiag_destroyer_new, or
 * the option errors of sdiag_dump (-EINVAL, -E2BIG) for q or o.
 */
int sdiag_kill(struct sdiag_handle *h, const struct sdiag_query *q,
	       const struct sdiag_kill_opts *o, sdiag_destroy_cb cb, sdiag_error_cb err_cb,
	       void *userdata);

#ifdef __cplusplus
}
#endif

#endif /* SOCKDIAG_H */
