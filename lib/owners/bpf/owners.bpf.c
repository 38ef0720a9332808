/* SPDX-License-Identifier: (LGPL-2.1-or-later OR BSD-2-Clause) */
/*
 * Socket owners in one pass over the kernel's task and file tables: an
 * iter/task_file program that keeps socket descriptors only and writes, per
 * process, one task record (pid, euid, comm) and one file record (fd, inode)
 * per socket, in the format of owners.h. Built with clang -target bpf and
 * loaded through a bpftool light skeleton (proc_bpf.c).
 *
 * It answers as /proc does for the reader: the kernel walks only the tasks of
 * the reader's pid namespace, pids are numbered as that namespace numbers
 * them, and only thread-group leaders are reported (/proc/PID/fd is the
 * leader's table; the kernel already skips threads that share it).
 */
/* The kernel types first: owners.h uses their __u32. */
#include "lib/owners/bpf/owners_types.h"

#include "lib/owners/bpf/owners.h"

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* The task whose record was written last: its files follow it. */
__u64 last_task;

/* The pid of p in the namespace at level lvl, or 0 when p is not seen there. */
static __always_inline __s32 pid_at(struct pid *p, unsigned int lvl, struct pid_namespace *ns)
{
	struct upid up = {};

	if (!p || BPF_CORE_READ(p, level) < lvl)
		return 0;
	if (bpf_core_read(&up, sizeof(up), &p->numbers[lvl]) || up.ns != ns)
		return 0;
	return up.nr;
}

SEC("iter/task_file")
int sd_owners(struct bpf_iter__task_file *ctx)
{
	struct task_struct *task = ctx->task, *me;
	struct file *file = ctx->file;
	struct {
		struct sd_owners_task t;
		struct sd_owners_file f;
	} out = {};
	struct upid up = {};
	struct pid *mine;
	unsigned int lvl;

	if (!task || !file || !bpf_sock_from_file(file))
		return 0;
	if (task->pid != task->tgid)
		return 0; /* another thread's own table: /proc/PID/fd does not show it */
	out.f.fd = ctx->fd;
	/* Direct loads (the verifier makes them fault-safe), cheaper than
	 * bpf_probe_read_kernel() per socket. */
	out.f.inode = file->f_inode->i_ino;
	if (last_task == (__u64)task) {
		bpf_seq_write(ctx->meta->seq, &out.f, sizeof(out.f));
		return 0;
	}

	me = (struct task_struct *)bpf_get_current_task();
	mine = BPF_CORE_READ(me, thread_pid);
	lvl = BPF_CORE_READ(mine, level);
	out.t.tag = SD_OWNERS_TASK;
	if (bpf_core_read(&up, sizeof(up), &mine->numbers[lvl]))
		return 0;
	out.t.pid = pid_at(BPF_CORE_READ(task, thread_pid), lvl, up.ns);
	if (out.t.pid <= 0)
		return 0;
	out.t.uid = BPF_CORE_READ(task, real_cred, euid.val);
	bpf_core_read(out.t.comm, sizeof(out.t.comm), &task->comm);
	/* One write: when the seq buffer is full the kernel drops what this
	 * call wrote and calls again for the same file in the next read(), so
	 * the task record is remembered only once it is out. */
	if (!bpf_seq_write(ctx->meta->seq, &out, sizeof(out)))
		last_task = (__u64)task;
	return 0;
}
