/* SPDX-License-Identifier: (GPL-2.0-or-later OR BSD-2-Clause) */
/*
 * The kernel members life.bpf.c reads (beside the integer types of
 * lib/owners/bpf/owners_types.h), marked preserve_access_index: CO-RE
 * relocations the kernel resolves against its own BTF at load time. Layouts
 * need not match any kernel; names and member types must.
 */
#ifndef SOCKDIAG_LIFE_BPF_TYPES_H
#define SOCKDIAG_LIFE_BPF_TYPES_H

/* From the uapi <linux/bpf.h> (which clang -target bpf cannot include here:
 * its <asm/types.h> lives in a multiarch directory): fixed values. */
enum { SD_BPF_MAP_TYPE_HASH = 1, SD_BPF_MAP_TYPE_RINGBUF = 27 };

struct bpf_pidns_info {
	__u32 pid;
	__u32 tgid;
};

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct ns_common {
	unsigned int inum;
};

struct net {
	struct ns_common ns;
};

typedef struct {
	struct net *net;
} possible_net_t;

struct sock_common {
	possible_net_t skc_net;
	unsigned long skc_flags; /* sk_flags (in an anonymous union): bit 0 SOCK_DEAD */
};

struct kernfs_node {
	__u64 id;
};

struct cgroup {
	struct kernfs_node *kn;
};

struct sock_cgroup_data {
	struct cgroup *cgroup;
};

struct sock {
	struct sock_common __sk_common;
	__u16 sk_protocol;
	int sk_err;
	struct sock_cgroup_data sk_cgrp_data;
};

#pragma clang attribute pop

#endif
