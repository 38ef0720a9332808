// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * life's BPF side: bpf/life.bpf.c, embedded as a bpftool light skeleton
 * (life.lskel.h, generated at build time with the owners iterator's rules,
 * lib/meson.build), loaded through the kernel-side loader program (CO-RE
 * relocations done by the kernel against its BTF; no libbpf at run time),
 * attached as a raw tracepoint link. Its ring buffer is read here through
 * two mappings, as the kernel lays it out: the consumer position (a page we
 * write), then the producer position page followed by the data, mapped
 * twice in a row so a record that wraps reads as one.
 *
 * Built only with -Dbpf enabled (SD_HAVE_BPF_LIFE); otherwise life_bpf_open()
 * answers -EOPNOTSUPP.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "life/life_bpf.h"
#include "util/clock.h"

#ifdef SD_HAVE_BPF_LIFE

#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/bpf.h>

#include "life.lskel.h"

#define RING_SIZE (4u << 20) /* the map's max_entries in bpf/life.bpf.c */
#define RB_HDR 8u	     /* struct bpf_ringbuf_hdr: len (with two flag bits), pg_off */
#define RB_BUSY (1u << 31)
#define RB_DISCARD (1u << 30)

struct life_bpf {
	struct sd_life *skel;
	unsigned long *cons;	/* consumer position (ours to advance) */
	void *prod_map;		/* producer page + data twice */
	const unsigned long *prod;
	const uint8_t *data;
	size_t page;
};

static int map_update(int fd, const void *key, const void *val, int add)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)key;
	a.value = (uint64_t)(uintptr_t)val;
	if (syscall(__NR_bpf, add ? BPF_MAP_UPDATE_ELEM : BPF_MAP_DELETE_ELEM, &a, sizeof(a)) < 0)
		return -errno;
	return 0;
}

int life_bpf_net(struct life_bpf *b, uint32_t inum, int add)
{
	uint32_t one = 1;
	int r = map_update(b->skel->maps.nets.map_fd, &inum, &one, add);

	return r == -ENOENT && !add ? 0 : r;
}

/* The reader's pid namespace, so the program numbers pids as we see them. */
static int pidns(struct sd_life *skel)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st) < 0)
		return -errno;
	skel->rodata->pidns_dev = st.st_dev;
	skel->rodata->pidns_ino = st.st_ino;
	return 0;
}

static int map_ring(struct life_bpf *b)
{
	int fd = b->skel->maps.ring.map_fd;
	void *c;

	b->page = (size_t)sysconf(_SC_PAGESIZE);
	c = mmap(NULL, b->page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (c == MAP_FAILED)
		return -errno;
	b->cons = c;
	b->prod_map = mmap(NULL, b->page + 2 * (size_t)RING_SIZE, PROT_READ, MAP_SHARED, fd,
			   (off_t)b->page);
	if (b->prod_map == MAP_FAILED) {
		b->prod_map = NULL;
		return -errno;
	}
	b->prod = b->prod_map;
	b->data = (const uint8_t *)b->prod_map + b->page;
	return 0;
}

int life_bpf_open(struct life_bpf **ret)
{
	struct life_bpf *b;
	int r;

	/* CO-RE needs the kernel's BTF: without it the loader fails obscurely. */
	if (access("/sys/kernel/btf/vmlinux", R_OK) < 0)
		return -ENOENT;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->skel = sd_life__open();
	if (!b->skel) {
		free(b);
		return -ENOMEM;
	}
	r = pidns(b->skel);
	if (r == 0 && sd_life__load(b->skel) < 0)
		r = errno ? -errno : -EINVAL;
	if (r == 0 && sd_life__attach(b->skel) < 0)
		r = -errno;
	if (r == 0)
		r = map_ring(b);
	if (r < 0) {
		life_bpf_close(b);
		return r;
	}
	*ret = b;
	return 0;
}

void life_bpf_close(struct life_bpf *b)
{
	if (!b)
		return;
	if (b->prod_map)
		munmap(b->prod_map, b->page + 2 * (size_t)RING_SIZE);
	if (b->cons)
		munmap(b->cons, b->page);
	sd_life__destroy(b->skel);
	free(b);
}

int life_bpf_drain(struct life_bpf *b, life_bpf_cb cb, void *ud)
{
	unsigned long cons = __atomic_load_n(b->cons, __ATOMIC_ACQUIRE);
	unsigned long prod = __atomic_load_n(b->prod, __ATOMIC_ACQUIRE);
	int64_t off = 0;
	int n = 0;

	if (cons == prod)
		return 0;
	/* CLOCK_MONOTONIC -> CLOCK_REALTIME, once per drain. */
	off = (int64_t)real_ns() - (int64_t)mono_ns();
	while (cons < prod) {
		const uint32_t *hdr = (const uint32_t *)(b->data + (cons & (RING_SIZE - 1)));
		uint32_t len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);

		if (len & RB_BUSY)
			break; /* reserved, not yet submitted: the next drain */
		if (!(len & RB_DISCARD) && (len & ~RB_DISCARD) >= sizeof(struct sd_life_ev)) {
			struct sd_life_ev ev;

			memcpy(&ev, (const uint8_t *)hdr + RB_HDR, sizeof(ev));
			cb(&ev, (uint64_t)((int64_t)ev.mono_ns + off) / 1000000, ud);
			n++;
		}
		cons += ((len & ~(RB_BUSY | RB_DISCARD)) + RB_HDR + 7) & ~7ul;
		__atomic_store_n(b->cons, cons, __ATOMIC_RELEASE);
	}
	return n;
}

uint64_t life_bpf_lost(const struct life_bpf *b)
{
	return b->skel->bss->lost;
}

#else

int life_bpf_open(struct life_bpf **ret)
{
	(void)ret;
	return -EOPNOTSUPP;
}

void life_bpf_close(struct life_bpf *b)
{
	(void)b;
}

int life_bpf_net(struct life_bpf *b, uint32_t inum, int add)
{
	(void)b, (void)inum, (void)add;
	return -EOPNOTSUPP;
}

int life_bpf_drain(struct life_bpf *b, life_bpf_cb cb, void *ud)
{
	(void)b, (void)cb, (void)ud;
	return 0;
}

uint64_t life_bpf_lost(const struct life_bpf *b)
{
	(void)b;
	return 0;
}

#endif
