// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pod-labels = yes: which Kubernetes pod a network namespace is.
 *
 * A pod's network namespace is made for its sandbox (the pause container),
 * the first process in it: the namespace's lowest pid. That process's cgroup
 * path names the pod's UID, under either cgroup driver of the kubelet:
 *   systemd:  .../kubepods-burstable-pod<UID with _ for ->.slice/...
 *   cgroupfs: .../kubepods/burstable/pod<UID>/...
 * (Guaranteed pods sit right under kubepods; a static pod's UID is 32 hex
 * digits; a container with a cgroup namespace of its own sees the path with
 * leading /.. segments.) The UID names the pod's log directory that the
 * kubelet makes for every pod, whatever the runtime:
 *   /var/log/pods/<namespace>_<name>_<UID>
 * (namespace and name are DNS labels and subdomains: no '_'). The node's own
 * namespace, whose lowest pid is init, and host-network pods, which share it,
 * get no pod.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "daemon/exporter/exporter.h"

/* A UID at s: 8-4-4-4-12 hex digits with '-' or '_' (systemd's escape), or 32
 * hex digits (a static pod's). Returns its length (36 or 32), or 0. */
static size_t uid_at(const char *s)
{
	static const size_t dash[4] = { 8, 13, 18, 23 };
	size_t i, d = 0;

	for (i = 0; i < 36 && s[i]; i++) {
		if (d < 4 && i == dash[d]) {
			if (s[i] != '-' && s[i] != '_')
				break;
			d++;
		} else if (!isxdigit((unsigned char)s[i])) {
			break;
		}
	}
	if (i == 36 && d == 4)
		return 36;
	for (i = 0; i < 32 && isxdigit((unsigned char)s[i]); i++)
		;
	return i == 32 ? 32 : 0;
}

bool exp_pod_uid(const char *cgroup, char uid[EXP_POD_UID_LEN])
{
	const char *p = cgroup;

	/* Any line (cgroup v1 lists one per hierarchy; v2 has one). */
	while ((p = strstr(p, "kubepods"))) {
		const char *seg = p, *end;

		/* The segments from here to the end of the line. */
		end = strchr(p, '\n');
		if (!end)
			end = p + strlen(p);
		while (seg < end) {
			const char *slash = memchr(seg, '/', (size_t)(end - seg));
			const char *segend = slash ? slash : end;
			const char *pod = NULL;
			size_t n;

			if (!strncmp(seg, "pod", 3))
				pod = seg + 3;			/* cgroupfs: pod<UID> */
			else
				for (const char *q = seg; q + 4 < segend; q++)
					if (!strncmp(q, "-pod", 4)) /* systemd: ...-pod<UID>.slice */
						pod = q + 4;
			if (pod && (n = uid_at(pod)) &&
			    (pod + n == segend || !strncmp(pod + n, ".slice", 6))) {
				for (size_t i = 0; i < n; i++)
					uid[i] = pod[i] == '_' ? '-' : pod[i];
				uid[n] = '\0';
				return true;
			}
			seg = segend + 1;
		}
		p = end;
	}
	return false;
}

bool exp_pod_dirname(const char *dirname, const char *uid, char *ns, size_t ns_size, char *name,
		     size_t name_size)
{
	size_t len = strlen(dirname), ulen = strlen(uid);
	const char *u1, *u2;

	if (len < ulen + 4 || strcmp(dirname + len - ulen, uid) || dirname[len - ulen - 1] != '_')
		return false;
	u1 = strchr(dirname, '_');
	u2 = dirname + len - ulen - 1;
	if (!u1 || u1 == dirname || u1 >= u2 - 1 || (size_t)(u1 - dirname) >= ns_size ||
	    (size_t)(u2 - u1 - 1) >= name_size)
		return false;
	memcpy(ns, dirname, (size_t)(u1 - dirname));
	ns[u1 - dirname] = '\0';
	memcpy(name, u1 + 1, (size_t)(u2 - u1 - 1));
	name[u2 - u1 - 1] = '\0';
	return true;
}

/* The lowest pid of every namespace inode among n (inodes[i] -> pids[i]), from
 * one walk of proc_root. */
static void lowest_pids(const char *proc_root, const uint64_t *inodes, long *pids, size_t n)
{
	struct dirent *de;
	DIR *d = opendir(proc_root);

	if (!d)
		return;
	while ((de = readdir(d))) {
		char path[4096 + 64];
		struct stat st;
		long pid = strtol(de->d_name, NULL, 10);

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "%.4000s/%ld/ns/net", proc_root, pid);
		if (stat(path, &st) < 0)
			continue;
		for (size_t i = 0; i < n; i++)
			if (inodes[i] == (uint64_t)st.st_ino && (!pids[i] || pid < pids[i]))
				pids[i] = pid;
	}
	closedir(d);
}

static bool read_cgroup(const char *proc_root, long pid, char *buf, size_t size)
{
	char path[4096 + 64];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%.4000s/%ld/cgroup", proc_root, pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
	return n > 0;
}

size_t exp_pods_label(struct exp_agg *a, const uint64_t *inodes, const char *proc_root,
		      const char *pods_dir, uint32_t max_pods)
{
	long *pids = calloc(a->n_ns ? a->n_ns : 1, sizeof(*pids));
	struct dirent *de;
	size_t found = 0, want = 0;
	DIR *d;

	if (!pids)
		return 0;
	lowest_pids(proc_root, inodes, pids, a->n_ns);
	for (size_t i = 0; i < a->n_ns; i++) {
		char cg[8192];

		if (want == max_pods)
			break;	/* the cap: the rest stay unlabelled */
		if (pids[i] && read_cgroup(proc_root, pids[i], cg, sizeof(cg)) &&
		    exp_pod_uid(cg, a->ns[i].pod_uid))
			want++;
	}
	free(pids);
	d = want ? opendir(pods_dir) : NULL;
	while (d && found < want && (de = readdir(d))) {
		for (size_t i = 0; i < a->n_ns; i++) {
			struct exp_ns *ns = &a->ns[i];

			if (ns->pod_uid[0] && !ns->pod[0] &&
			    exp_pod_dirname(de->d_name, ns->pod_uid, ns->pod_ns, sizeof(ns->pod_ns),
					    ns->pod, sizeof(ns->pod))) {
				found++;
				break;
			}
		}
	}
	if (d)
		closedir(d);
	return found;
}
