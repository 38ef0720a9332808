/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Connection lives: one record per ended TCP or UDP connection, from the
 * kernel's socket-destroy events (the final tcp_info) and periodic dumps
 * (first seen, last state, and the end of a socket reset or destroyed while
 * its owner still holds the descriptor, which the kernel announces only when
 * the owner lets go). Below the CLI (`sockdiag life`) and the exporter.
 *
 * Every connection is recorded once: by its destroy event, or by the first
 * dump that no longer shows it (then its destroy event, when it comes, is
 * dropped). Events the kernel could not queue are counted (lost).
 */
#ifndef SOCKDIAG_LIFE_LIFE_H
#define SOCKDIAG_LIFE_LIFE_H

#include <stdbool.h>
#include <stdint.h>

#include "sockdiag.h"

enum life_outcome {
	LIFE_OK,	 /* both FINs exchanged (TCP); UDP: closed */
	LIFE_REFUSED,	 /* connect failed without retransmitting its SYN (RST) */
	LIFE_TIMEOUT,	 /* connect or data retransmitted until the kernel gave up */
	LIFE_RESET,	 /* established, ended without its FIN acknowledged */
	LIFE_ABORTED,	 /* destroyed by this process (life_mark_destroyed), or with
			  * --bpf by any (it closed with ECONNABORTED: tcp_abort) */
	LIFE_UNACCEPTED, /* "dropped": cleared on a listening port: a child closed before
			  * accept(), or an accepted one closed with SO_LINGER 0 */
	LIFE_OUTCOMES
};

const char *life_outcome_name(enum life_outcome o);

struct life_rec {
	uint64_t end_ms;	/* CLOCK_REALTIME */
	uint64_t start_ms;	/* first seen (0: never seen alive), or born (start_exact) */
	bool start_exact;	/* from the tracepoint (life_opts.bpf): TCP only */
	bool by_poll;		/* gone from a dump while still held */
	unsigned ns;		/* index of the namespace (life_open's order) */
	uint64_t cookie;
	uint8_t family;
	uint16_t proto;		/* IPPROTO_TCP or IPPROTO_UDP */
	uint8_t src[16], dst[16];
	uint16_t sport, dport;
	uint8_t state;		/* last state seen alive (enum sdiag_state), 0 none */
	enum life_outcome outcome;
	bool passive;		/* TCP: accepted on a listening port (the local port is the
				 * service's), as judged from the final tcp_info */
	bool has_info;		/* the tcp_info counters below */
	uint64_t bytes_acked, bytes_received; /* payload, SYN and FIN not counted */
	uint32_t segs_out, segs_in, total_retrans;
	uint32_t rtt_us, min_rtt_us;
	uint64_t delivery_rate; /* bytes per second */
	bool has_queues;
	uint32_t rqueue, wqueue;
	bool has_drops;		/* UDP: the last dump's SK_MEMINFO_DROPS (the destroy event
				 * carries no meminfo) */
	uint32_t drops;
	uint64_t cgroup_id;
	int32_t pid;		/* 0: unknown */
	char comm[16];
};

struct life_opts {
	unsigned groups;	/* SDIAG_WATCH_* */
	uint32_t tables;	/* SDIAG_TABLE_BIT(TCP) | (UDP) */
	uint32_t afs;		/* 0: both */
	const struct sdiag_filter *filter;
	const int *nsfds;	/* n namespaces (0: none yet); NULL: ours */
	size_t n;
	int rcvbuf;		/* 0: the library's default */
	bool owners;		/* pid/comm of the sockets a dump finds */
	bool bpf;		/* TCP births and owners from sock:inet_sock_set_state */
	uint64_t interval_ns;	/* between dumps (life_due); 0: 1 s */
	uint32_t budget_ppm;	/* the dumps' share of one core, in millionths: a dump that
				 * costs more delays the next (life_due); 0: LIFE_BUDGET_PPM,
				 * LIFE_BUDGET_OFF: every interval whatever it costs */
};

/* After a read that passed records on, a driver waits this long before it
 * polls again: a stream of ends is then read many at a wake-up (a wake-up, a
 * poll and two context switches, costs more than reading ten events), and a
 * record comes at most this much later. */
#define LIFE_GATHER_NS 10000000L

#define LIFE_BUDGET_PPM 2500u	   /* 0.25% of a core */
#define LIFE_BUDGET_OFF UINT32_MAX
#define LIFE_STRETCH 10u	   /* at most this many intervals between two dumps */

struct life;
typedef int (*life_cb)(const struct life_rec *r, void *userdata);

int life_open(struct life **ret, const struct life_opts *o);
void life_free(struct life *l);
size_t life_n(const struct life *l);
int life_fd(const struct life *l, size_t i);
/* Read namespace i's pending destroy events; *ret_lost the events the kernel
 * dropped since the last read. Returns the records passed on or <0. */
int life_events(struct life *l, size_t i, life_cb cb, void *ud, uint64_t *ret_lost);
/* Dump every namespace: new sockets get their first-seen time (and owners),
 * sockets gone without a destroy event are recorded now. Returns records or
 * <0; *ret_lost as life_events (the events read around the dump). */
int life_poll(struct life *l, life_cb cb, void *ud, uint64_t *ret_lost);
/* When the next life_poll is due (CLOCK_MONOTONIC, ns; 0: now, before the
 * first): the interval after the last one started, or later when its dumps'
 * CPU time (the kernel walking the host's TCP table, TIME-WAIT included) was
 * more than the budget's share of the interval, up to LIFE_STRETCH intervals.
 * The owner scan is not counted: it runs only when a dump finds a new socket. */
uint64_t life_due(const struct life *l);
/* The last poll's dumps' CPU time (thread, ns) and the gap it set before the next. */
void life_poll_cost(const struct life *l, uint64_t *ret_cpu_ns, uint64_t *ret_gap_ns);
/* Follow one more namespace (nsfd; -1: ours): returns its index or <0. */
int life_ns_add(struct life *l, int nsfd);
/* Stop following namespace i (its sockets still open are forgotten, not
 * recorded); the later ones move down one index. */
void life_ns_remove(struct life *l, size_t i);
/* Every namespace of the host (--all-netns): those deleted since the last call
 * are let go (their pending events passed to cb first), new ones followed.
 * *ns is the caller's list of the namespaces followed, n of them in life's
 * order (their labels), kept in step (realloc'd; free() it). Returns 0 or <0;
 * *ret_lost the events lost in those reads. */
int life_follow_all(struct life *l, struct sdiag_netns **ns, size_t *n, life_cb cb, void *ud,
		    uint64_t *ret_lost);
/* This process destroyed the socket: its record says aborted. */
void life_mark_destroyed(struct life *l, uint64_t cookie);
/* Whether --bpf's program is loaded: 0, -ENODATA (not asked), or why it
 * could not be (-EOPNOTSUPP: built without BPF; -ENOENT: no kernel BTF;
 * -EPERM: no CAP_BPF + CAP_PERFMON; ...): the starts are then first seen. */
int life_bpf_error(const struct life *l);
/* --bpf: the tracepoint's records its ring buffer had no room for, since the
 * start (births, owners, ends: those connections' starts are first seen, their
 * owners a dump's, their outcomes judged from the final tcp_info); 0 without. */
uint64_t life_bpf_missed(const struct life *l);
/* That error in words ("not permitted (needs CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN)"). */
const char *life_bpf_why(int err);
/* Sockets alive in the table (for the bound on memory). */
size_t life_live(const struct life *l);

#endif
