/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * life's BPF side (life_bpf.c, internal to life/): the births and owners of
 * TCP connections from the sock:inet_sock_set_state tracepoint, read from a
 * ring buffer. Loaded by life_open() when asked, owned by file descriptors of
 * this process only (never pinned): life_bpf_close(), or the process's end,
 * unloads it.
 */
#ifndef SOCKDIAG_LIFE_BPF_H
#define SOCKDIAG_LIFE_BPF_H

#include <stdint.h>

#include "life/bpf/life_ev.h"

struct life_bpf;

/* Load and attach. Returns 0, -EOPNOTSUPP (built without BPF), -ENOENT (no
 * kernel BTF), -EPERM (no CAP_BPF + CAP_PERFMON) or another negative errno. */
int life_bpf_open(struct life_bpf **ret);
void life_bpf_close(struct life_bpf *b);
/* Follow the network namespace with this inode (its sockets' records), or not. */
int life_bpf_net(struct life_bpf *b, uint32_t inum, int add);
/* Pass every record in the ring to cb (mono_ns already turned into
 * CLOCK_REALTIME milliseconds: real_ms). Returns the records read. */
typedef void (*life_bpf_cb)(const struct sd_life_ev *ev, uint64_t real_ms, void *ud);
int life_bpf_drain(struct life_bpf *b, life_bpf_cb cb, void *ud);
/* Records the program could not queue (the ring was full), since the start. */
uint64_t life_bpf_lost(const struct life_bpf *b);

#endif
