/* SPDX-License-Identifier: (LGPL-2.1-or-later OR BSD-2-Clause) */
/*
 * The few kernel types owners.bpf.c reads, instead of a vmlinux.h generated
 * from the build machine's BTF: only the members it uses, marked
 * preserve_access_index, so every access is a CO-RE relocation that the
 * kernel resolves against its own BTF when the program is loaded. Layouts
 * here need not match any kernel; names and member types must.
 */
#ifndef SOCKDIAG_BPF_OWNERS_TYPES_H
#define SOCKDIAG_BPF_OWNERS_TYPES_H

/* The uapi integer types, without <linux/types.h> (its <asm/types.h> lives
 * in a multiarch directory clang -target bpf does not search). */
typedef unsigned char __u8;
typedef short __s16;
typedef unsigned short __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long __s64;
typedef unsigned long long __u64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

typedef struct {
	__u32 val;
} kuid_t;

struct seq_file;
struct pid_namespace;

struct cred {
	kuid_t euid;
};

struct upid {
	int nr;
	struct pid_namespace *ns;
};

struct pid {
	unsigned int level;
	struct upid numbers[1];
};

struct task_struct {
	int pid;
	int tgid;
	struct pid *thread_pid;
	const struct cred *real_cred;
	char comm[16];
};

struct inode {
	unsigned long i_ino;
};

struct file {
	struct inode *f_inode;
};

struct bpf_iter_meta {
	struct seq_file *seq;
	__u64 session_id;
	__u64 seq_num;
};

/* The context of iter/task_file programs (kernel/bpf/task_iter.c). */
struct bpf_iter__task_file {
	union {
		struct bpf_iter_meta *meta;
	};
	union {
		struct task_struct *task;
	};
	__u32 fd;
	union {
		struct file *file;
	};
};

#pragma clang attribute pop

#endif
