/* SPDX-License-Identifier: (GPL-2.0-or-later OR BSD-2-Clause) */
/*
 * The record life.bpf.c writes into its ring buffer and life_bpf.c reads:
 * one per TCP state change that says when a connection was born, who owns
 * it, or how it ended. Native byte order: both ends run on the same machine.
 */
#ifndef SOCKDIAG_LIFE_BPF_EV_H
#define SOCKDIAG_LIFE_BPF_EV_H

#ifndef __bpf__
#include <linux/types.h>
#endif

/* kind: a bit set */
#define SD_LIFE_BIRTH 1u /* the socket's first state change (SYN_SENT, or SYN_RECV of a child) */
#define SD_LIFE_OWNER 2u /* made by a process's call (connect, close, shutdown): pid, comm */
#define SD_LIFE_END 4u	 /* closed (TCP_CLOSE) with an error: err */
#define SD_LIFE_ORPHAN 8u /* with SD_LIFE_END: its owner had closed it already (SOCK_DEAD) */

struct sd_life_ev {
	__u64 cookie;	 /* the socket's cookie (the one sock_diag reports) */
	__u64 mono_ns;	 /* CLOCK_MONOTONIC */
	__u64 cgroup_id; /* the socket's cgroup (as INET_DIAG_CGROUP_ID) */
	__u32 netns;	 /* the inode of its network namespace */
	__s32 pid;	 /* as the reader's pid namespace numbers it; 0 unknown */
	__u32 kind;
	__s32 err;	 /* SD_LIFE_END: the socket's sk_err as it closed (ECONNRESET...); else 0 */
	char comm[16];
};

#endif
