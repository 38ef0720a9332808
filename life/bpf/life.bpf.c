/* SPDX-License-Identifier: (GPL-2.0-or-later OR BSD-2-Clause) */
/*
 * Connection births and owners for `sockdiag life --bpf`: a tp_btf program on
 * sock:inet_sock_set_state writing one record (life_ev.h) into a ring buffer
 * when a TCP socket of a followed network namespace
 *  - is born: SYN_SENT (connect(), in the caller's context: also its owner)
 *    or SYN_RECV out of LISTEN (a listener's child, made in softirq: no owner);
 *  - is closed or shut down by its owner: FIN_WAIT1 and LAST_ACK are set only
 *    by tcp_close_state(), called from close() and shutdown() (the owner of
 *    an accepted connection);
 *  - ends with an error: TCP_CLOSE with sk_err set. The kernel sets it before
 *    tcp_done() moves the socket to TCP_CLOSE (tcp_abort: ECONNABORTED, the
 *    destroy of `sockdiag kill`; tcp_reset: ECONNREFUSED, ECONNRESET, EPIPE;
 *    tcp_write_err: ETIMEDOUT or the soft error; tcp_done_with_error since
 *    6.10 and its stable backports, in the same order): the errno its owner
 *    gets. No owner here: the context may be the destroyer's or a softirq.
 * Records the ring cannot take are counted in `lost`. Built with clang -target
 * bpf and loaded through a bpftool light skeleton (life_bpf.c); the kernel's
 * BTF relocates the members of life_types.h (CO-RE).
 */
#include "lib/owners/bpf/owners_types.h"

#include "life/bpf/life_ev.h"
#include "life/bpf/life_types.h"

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define IPPROTO_TCP 6
#define SD_SYN_SENT 2
#define SD_SYN_RECV 3
#define SD_FIN_WAIT1 4
#define SD_CLOSE 7
#define SD_LAST_ACK 9
#define SD_LISTEN 10
#define SD_SOCK_DEAD 1ul /* 1 << SOCK_DEAD (enum sock_flags' first) in sk_flags */

/* The reader's pid namespace (nsfs device and inode): pids as it numbers them. */
const volatile __u64 pidns_dev;
const volatile __u64 pidns_ino;
/* Records the ring buffer had no room for. */
__u64 lost;

struct {
	__uint(type, SD_BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} ring SEC(".maps");

/* The followed network namespaces, by inode (the value is unused). */
struct {
	__uint(type, SD_BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u32);
} nets SEC(".maps");

SEC("tp_btf/inet_sock_set_state")
int sd_life_state(__u64 *ctx)
{
	struct sock *sk = (struct sock *)ctx[0];
	int old = (int)ctx[1], new = (int)ctx[2];
	struct bpf_pidns_info pi = {};
	struct sd_life_ev *e;
	__u32 kind, inum;
	int err = 0;

	if (BPF_CORE_READ(sk, sk_protocol) != IPPROTO_TCP)
		return 0;
	if (new == SD_CLOSE && old != SD_LISTEN) {
		/* Without an error the final tcp_info says it all: no record. */
		err = BPF_CORE_READ(sk, sk_err);
		if (!err)
			return 0;
		kind = SD_LIFE_END;
		if (BPF_CORE_READ(sk, __sk_common.skc_flags) & SD_SOCK_DEAD)
			kind |= SD_LIFE_ORPHAN;
	} else if (new == SD_SYN_SENT)
		kind = SD_LIFE_BIRTH | SD_LIFE_OWNER;
	else if (new == SD_SYN_RECV && old == SD_LISTEN)
		kind = SD_LIFE_BIRTH;
	else if (new == SD_FIN_WAIT1 || new == SD_LAST_ACK)
		kind = SD_LIFE_OWNER;
	else
		return 0;
	inum = BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum);
	if (!bpf_map_lookup_elem(&nets, &inum))
		return 0;
	e = bpf_ringbuf_reserve(&ring, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&lost, 1);
		return 0;
	}
	e->cookie = bpf_get_socket_cookie(sk);
	e->mono_ns = bpf_ktime_get_ns();
	e->cgroup_id = BPF_CORE_READ(sk, sk_cgrp_data.cgroup, kn, id);
	e->netns = inum;
	e->kind = kind;
	e->err = err;
	e->pid = 0;
	__builtin_memset(e->comm, 0, sizeof(e->comm));
	if ((kind & SD_LIFE_OWNER) &&
	    !bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, &pi, sizeof(pi))) {
		e->pid = (__s32)pi.tgid;
		bpf_get_current_comm(e->comm, sizeof(e->comm));
	}
	bpf_ringbuf_submit(e, 0);
	return 0;
}
