// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The dead-backends file (backends/backends.c): what it accepts, where
 * each malformed line is reported (line and column), the cap, the hash set,
 * large files, resolving beneath the directory.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <cmocka.h>

#include "backends/backends.h"

static int parse(struct backend_set *s, const char *text, size_t max, char *err)
{
	return backends_parse(s, text, strlen(text), max, err, 256);
}

static const struct backend *find4(const struct backend_set *s, const char *a, uint16_t port)
{
	uint8_t addr[16] = { 0 };

	assert_int_equal(inet_pton(AF_INET, a, addr), 1);
	return backends_find(s, AF_INET, addr, port);
}

static const struct backend *find6(const struct backend_set *s, const char *a, uint16_t port)
{
	uint8_t addr[16];

	assert_int_equal(inet_pton(AF_INET6, a, addr), 1);
	return backends_find(s, AF_INET6, addr, port);
}

static void test_valid(void **state)
{
	struct backend_set s;
	char err[256] = "";
	const char *text = "# dead backends\n"
			   "\n"
			   "10.96.0.10:53\n"
			   "  [fd00::10]:53/udp   # DNS over UDP only\n"
			   "10.0.0.7:8080/tcp\r\n"
			   "10.0.0.7:8080/udp\n"
			   "[::ffff:10.0.0.9]:443\n"
			   "\t10.0.0.8:1#no space before the comment\n"
			   "10.0.0.8:65535";
	const struct backend *b;

	(void)state;
	assert_int_equal(parse(&s, text, 100, err), 0);
	assert_int_equal(s.n, 6); /* 10.0.0.7:8080 twice is one backend */
	b = find4(&s, "10.96.0.10", 53);
	assert_non_null(b);
	assert_int_equal(b->protos, BACKEND_TCP | BACKEND_UDP);
	b = find6(&s, "fd00::10", 53);
	assert_non_null(b);
	assert_int_equal(b->protos, BACKEND_UDP);
	assert_int_equal(b->line, 4); /* the line naming it, for the guard's warnings */
	b = find4(&s, "10.0.0.7", 8080);
	assert_non_null(b);
	assert_int_equal(b->protos, BACKEND_TCP | BACKEND_UDP);
	assert_int_equal(b->line, 5); /* repeated on line 6: the first line */
	assert_int_equal(find4(&s, "10.0.0.8", 65535)->line, 9);
	/* Written v4-mapped, stored and found as IPv4, from either family. */
	b = find4(&s, "10.0.0.9", 443);
	assert_non_null(b);
	assert_int_equal(b->family, AF_INET);
	assert_ptr_equal(find6(&s, "::ffff:10.0.0.9", 443), b);
	assert_ptr_equal(find6(&s, "::ffff:10.96.0.10", 53), find4(&s, "10.96.0.10", 53));
	assert_non_null(find4(&s, "10.0.0.8", 1));
	assert_non_null(find4(&s, "10.0.0.8", 65535));
	/* Not listed: another port, another address, the other family. */
	assert_null(find4(&s, "10.96.0.10", 54));
	assert_null(find4(&s, "10.96.0.11", 53));
	assert_null(find6(&s, "fd00::11", 53));
	assert_null(find6(&s, "::10.96.0.10", 53)); /* v4-compatible is not v4-mapped */
	backends_free(&s);
}

static void test_empty(void **state)
{
	struct backend_set s;
	char err[256];

	(void)state;
	assert_int_equal(parse(&s, "", 10, err), 0);
	assert_int_equal(s.n, 0);
	assert_null(find4(&s, "10.0.0.1", 53));
	backends_free(&s);
	assert_int_equal(parse(&s, "# nothing\n\n   \n", 10, err), 0);
	assert_int_equal(s.n, 0);
	backends_free(&s);
}

struct bad {
	const char *text;
	const char *where; /* "line L, column C" */
	const char *what;  /* part of the message */
};

static void test_malformed(void **state)
{
	static const struct bad cases[] = {
		{ "10.0.0.1", "line 1, column 9", "expected ':PORT'" },
		{ "10.0.0.1:", "line 1, column 10", "expected a port" },
		{ "10.0.0.1:0", "line 1, column 10", "out of range" },
		{ "10.0.0.1:65536", "line 1, column 10", "out of range" },
		{ "10.0.0.1:5x3", "line 1, column 11", "expected a port" },
		{ "# ok\n  10.0.0.1:-1", "line 2, column 12", "expected a port" },
		{ "fd00::1:53", "line 1, column 1", "brackets" },
		{ "[fd00::1]53", "line 1, column 10", "expected ':PORT' after ']'" },
		{ "[fd00::1:53", "line 1, column 1", "without ']'" },
		{ "[fd00::1]:", "line 1, column 11", "expected a port" },
		{ "[10.0.0.1]:53", "line 1, column 2", "expected an IPv6 address" },
		{ "999.0.0.1:53", "line 1, column 1", "expected an IPv4 address" },
		{ "example.com:53", "line 1, column 1", "expected an IPv4 address" },
		{ ":53", "line 1, column 1", "expected an IPv4 or IPv6 address" },
		{ "10.0.0.1:53/sctp", "line 1, column 13", "expected tcp or udp" },
		{ "10.0.0.1:53/", "line 1, column 13", "expected tcp or udp" },
		{ "10.0.0.1:53/TCP", "line 1, column 13", "expected tcp or udp" },
		{ "10.0.0.1:53 10.0.0.2:53", "line 1, column 13", "one backend per line" },
		{ "10.0.0.1:53\n\n10.0.0.2:53 udp", "line 3, column 13", "one backend per line" },
		{ "10.0.0.1:5\x01" "3", "line 1, column 11", "expected printable ASCII" },
		{ "secret\xff:1", "line 1, column 7", "expected printable ASCII" },
	};
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct backend_set s = { .n = 12345 };

		err[0] = '\0';
		assert_int_equal(parse(&s, cases[i].text, 100, err), -EINVAL);
		if (!strstr(err, cases[i].where) || !strstr(err, cases[i].what))
			fail_msg("'%s': got '%s', want '%s' and '%s'", cases[i].text, err,
				 cases[i].where, cases[i].what);
		assert_int_equal(s.n, 12345); /* untouched */
		/* The file's bytes are never quoted (its writer may not read what
		 * the guard's log reaches): no token of the line in the message. */
		if (strstr(err, "example") || strstr(err, "secret") || strstr(err, "999") ||
		    strstr(err, "x01") || strstr(err, "0x"))
			fail_msg("'%s': the message quotes the file: '%s'", cases[i].text, err);
	}
}

static void test_nul(void **state)
{
	static const char text[] = "10.0.0.1:53\n10.0.\0.2:53\n";
	struct backend_set s = { 0 };
	char err[256];

	(void)state;
	assert_int_equal(backends_parse(&s, text, sizeof(text) - 1, 100, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "line 2, column 6: a NUL byte"));
}

static void test_cap(void **state)
{
	struct backend_set s = { 0 };
	char err[256];

	(void)state;
	assert_int_equal(parse(&s, "10.0.0.1:1\n10.0.0.1:2\n", 2, err), 0);
	backends_free(&s);
	/* Lines count, not distinct backends: the file's size is what is capped. */
	assert_int_equal(parse(&s, "10.0.0.1:1\n# c\n10.0.0.1:2\n10.0.0.1:2\n", 2, err), -E2BIG);
	assert_non_null(strstr(err, "line 4: more than dead-backends-max = 2"));
	assert_int_equal(s.n, 0);
}

static void test_many(void **state)
{
	size_t n = 70000, len = 0;
	char *text = malloc(n * 40), err[256];
	struct backend_set s;

	(void)state;
	assert_non_null(text);
	for (size_t i = 0; i < n; i++) {
		if (i % 2)
			len += (size_t)sprintf(text + len, "10.%zu.%zu.%zu:%zu/udp\n", i >> 16,
					       (i >> 8) & 0xff, i & 0xff, 1000 + i % 7);
		else
			len += (size_t)sprintf(text + len, "[fd00::%zx:%zx]:%zu\n", i >> 16, i & 0xffff,
					       1000 + i % 7);
	}
	if (backends_parse(&s, text, len, n, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(s.n, n);
	for (size_t i = 0; i < n; i++) {
		char a[64];

		if (i % 2) {
			snprintf(a, sizeof(a), "10.%zu.%zu.%zu", i >> 16, (i >> 8) & 0xff, i & 0xff);
			assert_non_null(find4(&s, a, (uint16_t)(1000 + i % 7)));
			assert_null(find4(&s, a, (uint16_t)(1001 + i % 7)));
		} else {
			snprintf(a, sizeof(a), "fd00::%zx:%zx", i >> 16, i & 0xffff);
			assert_non_null(find6(&s, a, (uint16_t)(1000 + i % 7)));
			assert_null(find6(&s, a, (uint16_t)(999 + i % 7)));
		}
	}
	assert_int_equal(backends_parse(&s, text, len, n - 1, err, sizeof(err)), -E2BIG);
	backends_free(&s);
	free(text);
}

static void test_load(void **state)
{
	char path[] = "/tmp/sockdiag-backends-XXXXXX", err[512];
	struct backend_set a, b;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "10.0.0.1:53\n[fd00::1]:80/tcp\n", 29), 29);
	close(fd);
	assert_int_equal(backends_load(&a, path, 10, err, sizeof(err)), 0);
	assert_int_equal(a.n, 2);
	assert_int_equal(parse(&b, "[fd00::1]:80/tcp\n10.0.0.1:53/udp\n10.0.0.1:53/tcp", 10, err),
			 0);
	assert_true(backends_equal(&a, &b));
	backends_free(&b);
	assert_int_equal(parse(&b, "[fd00::1]:80\n10.0.0.1:53", 10, err), 0);
	assert_false(backends_equal(&a, &b)); /* the protocols differ */
	backends_free(&b);
	backends_free(&a);
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "10.0.0.1:53\n10.0.0.2:\n", 22), 22);
	close(fd);
	assert_int_equal(backends_load(&a, path, 10, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, ": line 2, column 10: expected a port"));
	unlink(path);
	assert_true(backends_load(&a, path, 10, err, sizeof(err)) == -ENOENT);
	assert_non_null(strstr(err, "cannot open"));
	assert_true(backends_load(&a, "/tmp", 10, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "not a regular file"));
}

/* A file of dead-backends-max entries with comments: no byte cap refuses it
 * (read in chunks); a line above 4096 bytes is refused, naming its line. */
static void test_large(void **state)
{
	char path[] = "/tmp/sockdiag-backends-XXXXXX", err[512], pad[5000];
	struct backend_set a;
	size_t n = 60001;
	FILE *f;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fprintf(f, "# dead backends of the cluster, written by the sidecar\n\n");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "10.%zu.%zu.%zu:%zu/tcp   # endpoint slice web-%zu, not ready since "
			   "2026-12-04T06:37:19Z\n", i >> 16, (i >> 8) & 0xff, i & 0xff, 1000 + i % 7,
			i);
	fprintf(f, "[fd00::1]:1 # the last line, without a newline");
	assert_int_equal(fclose(f), 0);
	if (backends_load(&a, path, 65536, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(a.n, n + 1);
	assert_non_null(find6(&a, "fd00::1", 1));
	assert_non_null(find4(&a, "10.0.234.96", 1000 + 60000 % 7));
	backends_free(&a);
	memset(pad, 'x', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "10.0.0.1:53 # %.4080s\n10.0.0.2:53 # %s\n10.0.0.3:53\n", pad, pad);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(backends_load(&a, path, 10, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ": line 2, column 4097: line longer than 4096 bytes"));
	unlink(path);
}

static void put(const char *dir, const char *name, const char *text)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static int load_at(const char *dir, const char *name, bool beneath, char *err)
{
	struct backend_set a;
	char p[256];
	int r;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	r = beneath ? backends_load_beneath(&a, p, 10, err, 512) : backends_load(&a, p, 10, err, 512);
	if (r == 0) {
		r = (int)a.n;
		backends_free(&a);
	}
	return r;
}

/*
 * backends_load_beneath in TOP/d: links inside d (the ConfigMap layout:
 * dead -> ..data/dead, ..data -> ..2026_12_04) are followed; a link to
 * TOP/outside, relative or absolute, is refused (backends_load follows it).
 * Without openat2, links out of d are refused all the same; an absolute one
 * into d, which openat2 refuses, is then followed (checked: more).
 */
static void beneath_checks(bool more)
{
	char top[] = "/tmp/sockdiag-beneath-XXXXXX", d[128], p[256], err[512];

	assert_non_null(mkdtemp(top));
	snprintf(d, sizeof(d), "%s/d", top);
	assert_int_equal(mkdir(d, 0755), 0);
	put(top, "outside", "10.0.0.9:53\n10.0.0.8:53\n");
	snprintf(p, sizeof(p), "%s/..2026_12_04", d);
	assert_int_equal(mkdir(p, 0755), 0);
	put(d, "..2026_12_04/dead", "10.0.0.1:53\n");
	snprintf(p, sizeof(p), "%s/..data", d);
	assert_int_equal(symlink("..2026_12_04", p), 0);
	snprintf(p, sizeof(p), "%s/dead", d);
	assert_int_equal(symlink("..data/dead", p), 0);
	if (load_at(d, "dead", true, err) != 1)
		fail_msg("the ConfigMap layout: %s", err);
	snprintf(p, sizeof(p), "%s/out", d);
	assert_int_equal(symlink("../outside", p), 0);
	assert_int_equal(load_at(d, "out", false, err), 2);
	assert_int_equal(load_at(d, "out", true, err), -EXDEV);
	assert_non_null(strstr(err, "cannot open: a symbolic link out of its directory"));
	assert_null(strstr(err, "10.0.0")); /* nothing of the file */
	snprintf(p, sizeof(p), "%s/abs", d);
	snprintf(err, sizeof(err), "%s/outside", top);
	assert_int_equal(symlink(err, p), 0);
	assert_int_equal(load_at(d, "abs", true, err), -EXDEV);
	unlink(p);
	if (more) {
		snprintf(err, sizeof(err), "%s/..2026_12_04/dead", d);
		assert_int_equal(symlink(err, p), 0);
		assert_int_equal(load_at(d, "abs", false, err), 1);
		assert_int_equal(load_at(d, "abs", true, err), -EXDEV);
		unlink(p);
	}
	assert_int_equal(load_at(d, "missing", true, err), -ENOENT);
	assert_int_equal(load_at(top, "gone/dead", true, err), -ENOENT);
	snprintf(p, sizeof(p), "rm -r -- '%s'", top);
	assert_int_equal(system(p), 0);
}

static void test_beneath(void **state)
{
	(void)state;
	beneath_checks(true);
}

/* The same without openat2 (before Linux 5.6): a seccomp filter makes it
 * ENOSYS for this process (the last test). */
static void test_beneath_compat(void **state)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	(void)state;
	assert_int_equal(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		skip();
	assert_int_equal(syscall(SYS_openat2, AT_FDCWD, "/", NULL, 0), -1);
	assert_int_equal(errno, ENOSYS);
	beneath_checks(false);
}

static void test_format(void **state)
{
	struct backend_set s;
	char err[256], buf[BACKEND_STRLEN];

	(void)state;
	assert_int_equal(parse(&s, "[fd00:0:0::1]:53\n10.1.2.3:8080/tcp", 10, err), 0);
	backend_format(&s.v[0], buf, sizeof(buf));
	assert_string_equal(buf, "[fd00::1]:53");
	backend_format(&s.v[1], buf, sizeof(buf));
	assert_string_equal(buf, "10.1.2.3:8080");
	backends_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),	cmocka_unit_test(test_empty),
		cmocka_unit_test(test_malformed), cmocka_unit_test(test_nul),
		cmocka_unit_test(test_cap),	cmocka_unit_test(test_many),
		cmocka_unit_test(test_load),	cmocka_unit_test(test_large),
		cmocka_unit_test(test_beneath), cmocka_unit_test(test_format),
		cmocka_unit_test(test_beneath_compat), /* last: it filters openat2 */
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
