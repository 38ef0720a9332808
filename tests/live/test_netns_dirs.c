// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The named namespaces of several directories (sd_netns_list_dirs: /run/netns
 * and /var/run/netns for sdiag_netns_list, --netns-dir for the guard), in a
 * private mount namespace with a tmpfs on /run/netns: names in /run/netns are
 * labelled by name, in other directories by path; a namespace named in two
 * directories is listed once (by inode), under its first name; a directory
 * that is an earlier one under another path (a link, as /var/run -> /run) adds
 * nothing; a missing one is skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "lib/ns/ns.h"

static char base[64], dir_b[96], link_a[96], proc_root[96];
static bool made_run_netns;	/* removed again at the end */

/* A new network namespace, bound at each path given (NULL-terminated). */
static void bind_new_netns(const char *path, ...)
{
	va_list ap;

	assert_int_equal(unshare(CLONE_NEWNET), 0);
	va_start(ap, path);
	for (const char *p = path; p; p = va_arg(ap, const char *)) {
		int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

		assert_true(fd >= 0);
		close(fd);
		assert_int_equal(mount("/proc/thread-self/ns/net", p, NULL, MS_BIND, NULL), 0);
	}
	va_end(ap);
}

static int setup(void **state)
{
	(void)state;
	if (unshare(CLONE_NEWNS) < 0) {
		fprintf(stderr, "SKIP(netns): cannot make a mount namespace: %s\n", strerror(errno));
		exit(77);
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -1;
	made_run_netns = mkdir("/run/netns", 0755) == 0;
	if (!made_run_netns && errno != EEXIST)
		return -1;
	if (mount("none", "/run/netns", "tmpfs", 0, NULL) < 0)
		return -1;
	snprintf(base, sizeof(base), "/tmp/sd-netnsdirs-XXXXXX");
	if (!mkdtemp(base))
		return -1;
	/* base itself a tmpfs: everything made below goes with the namespace. */
	if (mount("none", base, "tmpfs", 0, NULL) < 0)
		return -1;
	snprintf(dir_b, sizeof(dir_b), "%s/b", base);
	snprintf(link_a, sizeof(link_a), "%s/a", base);
	snprintf(proc_root, sizeof(proc_root), "%s/proc", base);
	if (mkdir(dir_b, 0755) < 0 || mkdir(proc_root, 0755) < 0 ||
	    symlink("/run/netns", link_a) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	umount2(base, MNT_DETACH);
	rmdir(base);
	umount2("/run/netns", MNT_DETACH);
	if (made_run_netns)
		rmdir("/run/netns");
	return 0;
}

static const struct sdiag_netns *find(const struct sdiag_netns *v, size_t n, const char *label)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].label, label))
			return &v[i];
	return NULL;
}

static void dirs_labels_and_dedup(void **state)
{
	char b2[128], b3[128], missing[128];
	struct sdiag_netns *v = NULL;
	struct stat st;
	size_t n = 0;

	(void)state;
	snprintf(b2, sizeof(b2), "%s/cni-2", dir_b);
	snprintf(b3, sizeof(b3), "%s/cni-3", dir_b);
	snprintf(missing, sizeof(missing), "%s/none", base);
	bind_new_netns("/run/netns/one", NULL);
	bind_new_netns(b2, "/run/netns/two", NULL);	/* named in both */
	bind_new_netns(b3, NULL);
	assert_int_equal(sd_netns_list_dirs((const char *const[]){ "/run/netns", link_a, missing,
								   dir_b, NULL },
					    proc_root, &v, &n),
			 0);
	assert_int_equal(n, 3);
	assert_non_null(find(v, n, "one"));
	assert_non_null(find(v, n, "two"));	/* its first name */
	assert_non_null(find(v, n, b3));	/* by path */
	assert_int_equal(stat(b3, &st), 0);
	assert_int_equal(find(v, n, b3)->inode, (uint64_t)st.st_ino);
	assert_string_equal(find(v, n, b3)->path, b3);
	for (size_t i = 0; i < n; i++)
		assert_null(strstr(v[i].label, "/a/"));	/* the link added nothing */
	free(v);
	/* The link alone: another directory than /run/netns, labels by path. */
	assert_int_equal(sd_netns_list_dirs((const char *const[]){ link_a, NULL }, proc_root, &v,
					    &n),
			 0);
	assert_int_equal(n, 2);
	snprintf(b2, sizeof(b2), "%s/one", link_a);
	assert_non_null(find(v, n, b2));
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dirs_labels_and_dedup),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
