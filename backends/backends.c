// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The dead-backends file (backends.h): parsed whole before anything uses it,
 * so a malformed file changes nothing. It is read in chunks and parsed line by
 * line: memory is bounded by the cap on backends and BACKEND_LINE_MAX, not by
 * the comments and blank lines around them. Error messages name the place
 * and what was expected, never the file's bytes (the file may be written by
 * someone who cannot read what the guard can).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "backends/backends.h"
#include "util/textfile.h"
#include "util/hash.h"
#include "util/inaddr.h"

/* A line longer than this is refused (sockdiag-guard.conf(5)); the read
 * buffer holds several. */
#define BACKEND_LINE_MAX 4096
#define READ_CHUNK 65536

/* openat2(2) (Linux 5.6), our copy of its uapi argument. */
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
struct sd_open_how {
	uint64_t flags, mode, resolve;
};
#define SD_RESOLVE_NO_MAGICLINKS 0x02
#define SD_RESOLVE_BENEATH 0x08

struct lp {
	const char *line; /* start of the line */
	unsigned no;	  /* line number */
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 3, 4))) static int fail(const struct lp *p, const char *at,
						       const char *fmt, ...)
{
	char msg[192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(p->err, p->errlen, "line %u, column %zu: %s", p->no, (size_t)(at - p->line) + 1,
		 msg);
	return -EINVAL;
}

static uint32_t hash(const struct backend *b)
{
	/* What identifies a backend: its address, port and family. */
	uint8_t k[16 + 3];
	size_t alen = b->family == AF_INET ? 4 : 16;

	memcpy(k, b->addr, alen);
	k[alen] = (uint8_t)(b->port & 0xff);
	k[alen + 1] = (uint8_t)(b->port >> 8);
	k[alen + 2] = b->family;
	return (uint32_t)hash_bytes(k, alen + 3);
}

static bool same(const struct backend *a, const struct backend *b)
{
	return a->family == b->family && a->port == b->port &&
	       !memcmp(a->addr, b->addr, a->family == AF_INET ? 4 : 16);
}

/* The slot holding key, or the empty slot where it would go. */
static uint32_t *lookup(const struct backend_set *s, const struct backend *key)
{
	size_t mask = s->nslot - 1, i = hash(key) & mask;

	while (s->slot[i] && !same(&s->v[s->slot[i] - 1], key))
		i = (i + 1) & mask;
	return &s->slot[i];
}

const struct backend *backends_find(const struct backend_set *s, uint8_t family,
				    const uint8_t *addr, uint16_t port)
{
	struct backend key = { .family = family, .port = port };
	uint32_t *slot;

	if (!s->n)
		return NULL;
	if (family == AF_INET6 && in_v4mapped(addr)) {
		key.family = AF_INET;
		memcpy(key.addr, addr + 12, 4);
	} else {
		memcpy(key.addr, addr, family == AF_INET ? 4 : 16);
	}
	slot = lookup(s, &key);
	return *slot ? &s->v[*slot - 1] : NULL;
}

/* Add b, or add its protocols to the same ADDR:PORT already there. */
static int add(struct backend_set *s, size_t *cap, const struct backend *b)
{
	uint32_t *slot;

	if ((s->n + 1) * 2 >= s->nslot) {
		size_t nslot = s->nslot ? s->nslot * 2 : 64;
		uint32_t *v = calloc(nslot, sizeof(*v));

		if (!v)
			return -ENOMEM;
		free(s->slot);
		s->slot = v;
		s->nslot = nslot;
		for (size_t i = 0; i < s->n; i++)
			*lookup(s, &s->v[i]) = (uint32_t)i + 1;
	}
	slot = lookup(s, b);
	if (*slot) {
		s->v[*slot - 1].protos |= b->protos;
		return 0;
	}
	if (s->n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		struct backend *v = realloc(s->v, c * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		*cap = c;
	}
	s->v[s->n] = *b;
	*slot = (uint32_t)++s->n;
	return 0;
}

/* ADDR:PORT or [ADDR6]:PORT, then /tcp or /udp, at tok[0..len). */
static int parse_backend(const struct lp *p, const char *tok, size_t len, struct backend *ret)
{
	const char *end = tok + len, *slash = memchr(tok, '/', len);
	const char *hp_end = slash ? slash : end; /* end of ADDR:PORT */
	const char *a = tok, *a_end, *port;
	bool bracket = tok[0] == '[';
	unsigned long n = 0;
	char addr[64];
	uint8_t buf[16];

	*ret = (struct backend){ .protos = BACKEND_TCP | BACKEND_UDP };
	if (bracket) {
		a = tok + 1;
		a_end = memchr(a, ']', (size_t)(hp_end - a));
		if (!a_end)
			return fail(p, tok, "'[' without ']': expected [ADDR6]:PORT");
		if (a_end + 1 == hp_end || a_end[1] != ':')
			return fail(p, a_end + 1, "expected ':PORT' after ']'");
		port = a_end + 2;
	} else {
		a_end = NULL;
		for (const char *c = tok; c < hp_end; c++) {
			if (*c != ':')
				continue;
			if (a_end)
				return fail(p, tok, "an IPv6 address goes in brackets: [ADDR6]:PORT");
			a_end = c;
		}
		if (!a_end)
			return fail(p, hp_end, "expected ':PORT' (ADDR:PORT or [ADDR6]:PORT)");
		port = a_end + 1;
	}
	if (a_end == a || (size_t)(a_end - a) >= sizeof(addr))
		return fail(p, a, "expected an IPv4 or IPv6 address");
	memcpy(addr, a, (size_t)(a_end - a));
	addr[a_end - a] = '\0';
	if (!bracket && inet_pton(AF_INET, addr, buf) == 1) {
		ret->family = AF_INET;
		memcpy(ret->addr, buf, 4);
	} else if (bracket && inet_pton(AF_INET6, addr, buf) == 1) {
		ret->family = AF_INET6;
		memcpy(ret->addr, buf, 16);
		if (in_v4mapped(buf)) { /* one backend, however written */
			ret->family = AF_INET;
			memset(ret->addr, 0, 16);
			memcpy(ret->addr, buf + 12, 4);
		}
	} else {
		return fail(p, a, bracket ? "expected an IPv6 address"
					  : "expected an IPv4 address (IPv6 in brackets)");
	}
	if (port == hp_end)
		return fail(p, port, "expected a port number (1-65535)");
	for (const char *c = port; c < hp_end; c++) {
		if (*c < '0' || *c > '9')
			return fail(p, c, "expected a port number (1-65535)");
		n = n * 10 + (unsigned long)(*c - '0');
		if (n > 65535)
			return fail(p, port, "port out of range (1-65535)");
	}
	if (n == 0)
		return fail(p, port, "port out of range (1-65535)");
	ret->port = (uint16_t)n;
	if (slash) {
		size_t rest = (size_t)(end - slash - 1);

		if (rest == 3 && !memcmp(slash + 1, "tcp", 3))
			ret->protos = BACKEND_TCP;
		else if (rest == 3 && !memcmp(slash + 1, "udp", 3))
			ret->protos = BACKEND_UDP;
		else
			return fail(p, slash + 1, "expected tcp or udp after '/'");
	}
	return 0;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* One line (without its newline): blank, a comment, or one backend. */
static int parse_line(struct lp *p, const char *s, size_t len, struct backend_set *set,
		      size_t *cap, size_t *count, size_t max)
{
	const char *end = s + len, *tok;
	struct backend b;
	int r;

	if (len > BACKEND_LINE_MAX)
		return fail(p, s + BACKEND_LINE_MAX, "line longer than %d bytes",
			    BACKEND_LINE_MAX);
	while (s < end && is_space(*s))
		s++;
	if (s == end || *s == '#')
		return 0;
	tok = s;
	while (s < end && !is_space(*s) && *s != '#')
		s++;
	for (const char *c = tok; c < s; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
			return fail(p, c, "expected printable ASCII");
	r = parse_backend(p, tok, (size_t)(s - tok), &b);
	if (r < 0)
		return r;
	b.line = p->no;
	while (s < end && is_space(*s))
		s++;
	if (s < end && *s != '#')
		return fail(p, s, "one backend per line (a comment starts with '#')");
	if (++*count > max) {
		snprintf(p->err, p->errlen,
			 "line %u: more than dead-backends-max = %zu backends; refused", p->no, max);
		return -E2BIG;
	}
	return add(set, cap, &b);
}

struct parser {
	struct lp p;
	struct backend_set set;
	size_t cap, count, max;
};

/* The lines of text[0..len): every one when final, else those up to the last
 * newline. Returns the bytes consumed, or a negative errno (err written). */
static ssize_t parse_lines(struct parser *ps, const char *text, size_t len, bool final)
{
	const char *s = text, *end = text + len;
	int r = 0;

	while (s < end && r == 0) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t l = nl ? (size_t)(nl - s) : (size_t)(end - s);

		if (!nl && !final && l <= BACKEND_LINE_MAX)
			break; /* the rest of the line is still to be read */
		ps->p.line = s;
		ps->p.no++;
		if (memchr(s, '\0', l))
			r = fail(&ps->p, memchr(s, '\0', l), "a NUL byte");
		else
			r = parse_line(&ps->p, s, l, &ps->set, &ps->cap, &ps->count, ps->max);
		s += nl ? l + 1 : l;
	}
	if (r == -ENOMEM)
		snprintf(ps->p.err, ps->p.errlen, "%s", strerror(ENOMEM));
	return r < 0 ? r : s - text;
}

int backends_parse(struct backend_set *ret, const char *text, size_t len, size_t max, char *err,
		   size_t errlen)
{
	struct parser ps = { .p = { .err = err, .errlen = errlen }, .max = max };
	ssize_t r = parse_lines(&ps, text, len, true);

	if (r < 0) {
		backends_free(&ps.set);
		return (int)r;
	}
	*ret = ps.set;
	return 0;
}

/* Parse what fd reads, chunk by chunk (a message in ps->p.err). */
static int parse_fd(struct parser *ps, int fd)
{
	char *buf = malloc(READ_CHUNK);
	size_t have = 0;
	ssize_t n, used;
	int r = 0;

	if (!buf) {
		snprintf(ps->p.err, ps->p.errlen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	for (;;) {
		n = read(fd, buf + have, READ_CHUNK - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			snprintf(ps->p.err, ps->p.errlen, "cannot read: %s", strerror(-r));
			break;
		}
		have += (size_t)n;
		used = parse_lines(ps, buf, have, n == 0);
		if (used < 0) {
			r = (int)used;
			break;
		}
		have -= (size_t)used;
		memmove(buf, buf + used, have);
		if (n == 0)
			break;
	}
	free(buf);
	return r;
}

/* path's directory and its last component; "" when path ends in '/'. */
static int open_dir(const char *path, const char **ret_base)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];
	int fd;

	if (!slash) {
		*ret_base = path;
		return open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	if ((size_t)(slash - path) >= sizeof(dir))
		return -ENAMETOOLONG;
	snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	*ret_base = slash + 1;
	fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Without openat2 (before Linux 5.6): open following symbolic links, then
 * check where the descriptor ended up. */
static int open_beneath_compat(int dfd, const char *base, int flags)
{
	char d[4096], f[4096], proc[64];
	ssize_t dl, fl;
	int pfd, fd = -EXDEV;

	pfd = openat(dfd, base, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dfd);
	dl = readlink(proc, d, sizeof(d) - 1);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	fl = readlink(proc, f, sizeof(f));
	if (dl > 0 && fl > dl && (d[dl - 1] == '/' || f[dl] == '/') && !memcmp(d, f, (size_t)dl))
		fd = open(proc, flags);
	if (fd == -1)
		fd = -errno;
	close(pfd);
	return fd;
}

/* base, resolved beneath dfd: no symbolic link out of it, none absolute. */
static int open_beneath(int dfd, const char *base, int flags)
{
	struct sd_open_how how = {
		.flags = (uint64_t)flags,
		.resolve = SD_RESOLVE_BENEATH | SD_RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, dfd, base, &how, sizeof(how));

	if (fd < 0 && (errno == ENOSYS || errno == EPERM)) /* EPERM: a seccomp filter */
		return open_beneath_compat(dfd, base, flags);
	return fd < 0 ? -errno : (int)fd;
}

static int load(struct backend_set *ret, const char *path, size_t max, bool beneath, char *err,
		size_t errlen)
{
	const int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
	struct parser ps = { .max = max };
	char msg[256], q[256];
	const char *base;
	struct stat st;
	int dfd = -1, fd, r;

	text_excerpt(q, sizeof(q), path, strlen(path), 64);
	ps.p.err = msg;
	ps.p.errlen = sizeof(msg);
	if (beneath) {
		dfd = open_dir(path, &base);
		fd = dfd < 0 ? dfd : open_beneath(dfd, base, flags);
	} else {
		fd = open(path, flags);
		fd = fd < 0 ? -errno : fd;
	}
	if (fd < 0) {
		r = fd;
		snprintf(err, errlen, "%s: cannot open: %s", q,
			 r == -EXDEV ? "a symbolic link out of its directory" : strerror(-r));
		goto out;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		r = -EINVAL;
		snprintf(err, errlen, "%s: not a regular file", q);
		goto out;
	}
	r = parse_fd(&ps, fd);
	if (r < 0)
		snprintf(err, errlen, "%s: %s", q, msg);
out:
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	if (r < 0)
		backends_free(&ps.set);
	else
		*ret = ps.set;
	return r;
}

int backends_load(struct backend_set *ret, const char *path, size_t max, char *err,
		  size_t errlen)
{
	return load(ret, path, max, false, err, errlen);
}

int backends_load_beneath(struct backend_set *ret, const char *path, size_t max, char *err,
			  size_t errlen)
{
	return load(ret, path, max, true, err, errlen);
}

void backends_free(struct backend_set *s)
{
	free(s->v);
	free(s->slot);
	memset(s, 0, sizeof(*s));
}

bool backends_equal(const struct backend_set *a, const struct backend_set *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++) {
		const struct backend *o = backends_find(b, a->v[i].family, a->v[i].addr,
							a->v[i].port);

		if (!o || o->protos != a->v[i].protos)
			return false;
	}
	return true;
}

void backend_format(const struct backend *b, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(b->family, b->addr, a, sizeof(a));
	snprintf(buf, len, b->family == AF_INET6 ? "[%s]:%u" : "%s:%u", a, b->port);
}
