/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Socket owners through a BPF iterator: the program of bpf/owners.bpf.c,
 * embedded as a bpftool light skeleton (owners.lskel.h, generated at build
 * time), is loaded, attached as an iterator link and read once. The light
 * skeleton loads through a small BPF "loader" program that performs the CO-RE
 * relocations in the kernel: no libbpf at run time, no BTF parsing here.
 *
 * Everything loaded is owned by file descriptors of this process (program,
 * map, link, iterator; nothing pinned): closing them, or the process dying
 * however it dies, unloads it all.
 *
 * Built only with -Dbpf enabled (SD_HAVE_BPF_OWNERS); otherwise the scan
 * answers -EOPNOTSUPP and the caller walks /proc.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "lib/core/internal.h"
#include "lib/owners/bpf/owners.h"
#include "lib/owners/proc.h"

int sd_owners_parse(struct sdiag_procmap *m, const unsigned char *buf, size_t len, size_t *used,
		    struct sdiag_proc *task)
{
	size_t off = 0;
	int r = 0;

	while (r >= 0 && len - off >= sizeof(struct sd_owners_file)) {
		struct sd_owners_task t;
		struct sd_owners_file f;
		uint32_t tag;

		memcpy(&tag, buf + off, sizeof(tag));
		if (tag == SD_OWNERS_TASK) {
			if (len - off < sizeof(t))
				break;
			memcpy(&t, buf + off, sizeof(t));
			task->pid = t.pid;
			task->uid = t.uid;
			memcpy(task->comm, t.comm, sizeof(task->comm));
			task->comm[sizeof(task->comm) - 1] = '\0';
			off += sizeof(t);
			continue;
		}
		memcpy(&f, buf + off, sizeof(f));
		off += sizeof(f);
		if (task->pid <= 0)
			return -EPROTO; /* a file before any task: not our format */
		task->fd = (int32_t)f.fd;
		r = sd_proc_push(m, f.inode, task);
	}
	*used = off;
	return r;
}

#ifdef SD_HAVE_BPF_OWNERS

#include <linux/bpf.h>

#include "owners.lskel.h"

static int iter_create(int link_fd)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.iter_create.link_fd = (__u32)link_fd;
	return (int)syscall(__NR_bpf, BPF_ITER_CREATE, &attr, sizeof(attr));
}

#define READ_SIZE (64 * 1024)

static int read_all(struct sdiag_procmap *m, int iter_fd)
{
	struct sdiag_proc task = { 0 };
	size_t have = 0, used;
	unsigned char *buf;
	ssize_t n;
	int r = 0;

	buf = malloc(READ_SIZE);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		n = read(iter_fd, buf + have, READ_SIZE - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0) {
			r = have ? -EPROTO : 0; /* a record cut short */
			break;
		}
		have += (size_t)n;
		r = sd_owners_parse(m, buf, have, &used, &task);
		if (r < 0)
			break;
		memmove(buf, buf + used, have - used);
		have -= used;
	}
	free(buf);
	return r;
}

int sd_owners_bpf(struct sdiag_procmap *m)
{
	struct sd_owners *skel;
	int r, iter_fd = -1;

	skel = sd_owners__open();
	if (!skel)
		return -ENOMEM;
	r = sd_owners__load(skel);
	if (r < 0)
		goto out;
	if (sd_owners__attach(skel) < 0) {
		r = -errno;
		goto out;
	}
	iter_fd = iter_create(skel->links.sd_owners_fd);
	if (iter_fd < 0) {
		r = -errno;
		goto out;
	}
	r = read_all(m, iter_fd);
out:
	if (iter_fd >= 0)
		close(iter_fd);
	sd_owners__destroy(skel);
	return r < 0 ? r : 0;
}

#else

int sd_owners_bpf(struct sdiag_procmap *m)
{
	(void)m;
	return -EOPNOTSUPP;
}

#endif
