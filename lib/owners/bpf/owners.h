/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The records the owners iterator (owners.bpf.c) writes and proc_bpf.c reads:
 * a task record when the iterator reaches a process's first socket, then one
 * file record per socket descriptor of that process. A task record is told
 * from a file record by its first word, which no descriptor number can be.
 * Native byte order: both ends run on the same machine.
 */
#ifndef SOCKDIAG_BPF_OWNERS_H
#define SOCKDIAG_BPF_OWNERS_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define SD_OWNERS_TASK 0xffffffffu

struct sd_owners_task {
	__u32 tag;		/* SD_OWNERS_TASK */
	__s32 pid;		/* as the reader's pid namespace numbers it */
	__u32 uid;		/* effective uid (the owner of /proc/PID) */
	__u32 pad;
	char comm[16];
};

struct sd_owners_file {
	__u32 fd;
	__u32 pad;
	__u64 inode;		/* the socket's inode: socket:[INODE] */
};

#endif
