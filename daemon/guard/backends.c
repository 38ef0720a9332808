/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The guard's dead backends (`dead-backends = PATH`) and its conntrack
 * handle (`conntrack = yes`).
 *
 * The file is watched through its directory (inotify), and read only when a
 * write of it has ended: IN_CLOSE_WRITE or IN_MOVED_TO of its own name, a
 * Kubernetes ConfigMap's `..data` symlink swap, a symbolic link made in its
 * place; a writer still writing (IN_CREATE, an O_TRUNC rewrite) and every
 * other name are ignored, so a half-written file is never read. Its removal
 * empties the list if it is still gone once events settle (a new file there
 * is being written: its close reads it): a missing file lists no dead
 * backends. Events settle for BACKENDS_SETTLE_MS, then the file is read
 * whole, beneath its directory: a malformed or over-cap file is logged and
 * the list in force stays; a different list replaces it and a pass follows;
 * the same list costs nothing.
 * A pass also follows SIGHUP and every backend-interval (0: none), so a client
 * that connects to a dead backend later is closed too. Without a watch (the
 * directory missing or removed, inotify refused) it is tried again, and the
 * file read, every BACKENDS_REWATCH_MS.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/inotify.h>
#include <sys/stat.h>

#include "backends/backends.h"
#include "conntrack/conntrack.h"
#include "daemon/common/log.h"
#include "daemon/guard/backends.h"
#include "daemon/guard/metrics.h"
#include "util/clock.h"

#define BACKENDS_SETTLE_MS 50
#define BACKENDS_REWATCH_MS 1000
#define NEVER UINT64_MAX
#define WATCH_MASK                                                                               \
	(IN_ONLYDIR | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE |     \
	 IN_DELETE_SELF | IN_MOVE_SELF)

void guard_backends_init(struct guard_backends *b, const char *log_name)
{
	memset(b, 0, sizeof(*b));
	b->ifd = -1;
	b->wd = -1;
	b->read_due = b->pass_due = b->watch_due = NEVER;
	b->log_name = log_name;
}

static void unwatch(struct guard_backends *b)
{
	if (b->ifd >= 0)
		close(b->ifd);
	b->ifd = -1;
	b->wd = -1;
	free(b->path);
	free(b->dir);
	b->path = b->dir = NULL;
	b->name = NULL;
	b->watch_logged = false;
	b->read_due = b->pass_due = b->watch_due = NEVER;
}

static uint64_t earlier(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Watch the directory (the file may be replaced, or not exist yet); without
 * it, try again later. Returns whether it is watched. */
static bool arm(struct guard_backends *b, uint64_t now_ms)
{
	int e;

	b->wd = b->ifd < 0 ? -1 : inotify_add_watch(b->ifd, b->dir, WATCH_MASK);
	if (b->wd >= 0) {
		b->watch_logged = false;
		b->watch_due = NEVER;
		return true;
	}
	e = b->ifd < 0 ? 0 : errno;
	b->watch_due = now_ms + BACKENDS_REWATCH_MS;
	/* A directory not made yet is not worth a line; anything else once. */
	if (e && e != ENOENT && e != ENOTDIR && !b->watch_logged) {
		daemon_log(b->log_name, "dead-backends: cannot watch %s: %s; reading the file every "
			   "second", b->dir, strerror(e));
		b->watch_logged = true;
	}
	return false;
}

static int set_path(struct guard_backends *b, const char *path)
{
	const char *slash = strrchr(path, '/');

	b->path = strdup(path);
	if (!slash)
		b->dir = strdup(".");
	else
		b->dir = strndup(path, slash == path ? 1 : (size_t)(slash - path));
	if (!b->path || !b->dir)
		return -ENOMEM;
	b->name = b->path + (slash ? slash - path + 1 : 0);
	b->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (b->ifd < 0)
		daemon_log(b->log_name, "dead-backends: inotify: %s; reading the file every second",
			   strerror(errno));
	return 0;
}

void guard_backends_configure(struct guard_backends *b, const struct guard_config *c,
			      uint64_t now_ms)
{
	int r;

	if (c->conntrack && !b->ct) {
		r = ct_open(&b->ct, -1);
		if (r < 0)
			daemon_log(b->log_name, "conntrack: %s; sockets are still destroyed",
				   ct_strerror(r));
	} else if (!c->conntrack && b->ct) {
		ct_close(b->ct);
		b->ct = NULL;
	}
	b->interval_ms = c->backend_interval_ms;
	b->max = c->backends_max;
	if (!c->backends_path) {
		if (b->path)
			daemon_log(b->log_name, "dead-backends: no longer configured");
		unwatch(b);
		backends_free(&b->set);
		b->loaded = false;
		return;
	}
	if (!b->path || strcmp(b->path, c->backends_path)) {
		unwatch(b);
		backends_free(&b->set);
		b->loaded = false;
		if (set_path(b, c->backends_path) < 0) {
			daemon_log(b->log_name, "dead-backends: %s", strerror(ENOMEM));
			unwatch(b);
			return;
		}
		arm(b, now_ms);
	}
	/* A SIGHUP or a new configuration: read the file again, a pass now. */
	b->read_due = b->pass_due = now_ms;
	b->read_complete = true;
}

int guard_backends_fd(const struct guard_backends *b)
{
	return b->ifd;
}

enum { EV_NONE, EV_GONE, EV_COMPLETE };

/* What an event says of the file: a write of it ended (EV_COMPLETE), it was
 * removed (EV_GONE), or nothing. */
static int event_kind(const struct guard_backends *b, const struct inotify_event *e)
{
	struct stat st;

	if (!e->len)
		return EV_NONE;
	if (!strcmp(e->name, "..data")) /* a ConfigMap's swap: a rename, complete */
		return e->mask & IN_MOVED_TO ? EV_COMPLETE : EV_NONE;
	if (strcmp(e->name, b->name))
		return EV_NONE;
	if (e->mask & (IN_CLOSE_WRITE | IN_MOVED_TO))
		return EV_COMPLETE;
	if (e->mask & (IN_DELETE | IN_MOVED_FROM))
		return EV_GONE;
	/* Created: complete if a symbolic link or a second hard link, else being
	 * written (its IN_CLOSE_WRITE follows). */
	if ((e->mask & IN_CREATE) && lstat(b->path, &st) == 0 &&
	    (S_ISLNK(st.st_mode) || st.st_nlink > 1))
		return EV_COMPLETE;
	return EV_NONE;
}

void guard_backends_on_event(struct guard_backends *b, uint64_t now_ms)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool lost = false;
	int kind = EV_NONE, k;
	ssize_t n;

	while ((n = read(b->ifd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *e = (const void *)p;

			p += sizeof(*e) + e->len;
			if (e->mask & IN_Q_OVERFLOW)
				kind = EV_GONE; /* events lost: a removal is caught; a
						 * write's end waits for the next one */
			else if (e->wd != b->wd || b->wd < 0)
				continue; /* a watch given up */
			else if (e->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF))
				lost = true;
			else if ((k = event_kind(b, e)) > kind)
				kind = k;
		}
	}
	if (lost) {
		/* The directory removed or moved: watch the one at the path now
		 * (made again already?), or look for it every second. */
		(void)inotify_rm_watch(b->ifd, b->wd);
		b->wd = -1;
		arm(b, now_ms);
		kind = EV_COMPLETE; /* a new directory: what it holds is new */
	}
	if (kind == EV_NONE)
		return;
	b->read_due = earlier(b->read_due, now_ms + BACKENDS_SETTLE_MS);
	b->read_complete |= kind == EV_COMPLETE;
}

/* After a removal: read (an empty list) only if it is still gone. A file
 * there now is being written (its IN_CLOSE_WRITE is to come) or was renamed
 * there (its IN_MOVED_TO read it). */
static bool still_gone(const struct guard_backends *b)
{
	struct stat st;

	return stat(b->path, &st) < 0 && (errno == ENOENT || errno == ENOTDIR);
}

/* Read the file again; on error keep the list in force. Returns whether the
 * list changed. */
static bool reload(struct guard_backends *b, struct guard_metrics *m)
{
	struct backend_set now = { 0 };
	char err[512];
	bool missing;
	int r;

	r = backends_load_beneath(&now, b->path, b->max, err, sizeof(err));
	missing = r == -ENOENT || r == -ENOTDIR;
	if (r < 0 && !missing) {
		guard_metrics_backends_file_error(m);
		daemon_log(b->log_name, "dead-backends: %s; keeping the previous list (%zu backend%s)",
			   err, b->set.n, b->set.n == 1 ? "" : "s");
		return false;
	}
	if (b->loaded && backends_equal(&now, &b->set)) {
		backends_free(&now);
		return false;
	}
	backends_free(&b->set);
	b->set = now;
	b->loaded = true;
	if (missing)
		daemon_log(b->log_name, "dead-backends: 0 backends (%s does not exist)", b->path);
	else
		daemon_log(b->log_name, "dead-backends: %zu backend%s from %s", b->set.n,
			   b->set.n == 1 ? "" : "s", b->path);
	return true;
}

static bool keep(const struct sdiag_sock *s, void *data)
{
	return guard_exempt(data, s) != GUARD_DESTROY;
}

uint64_t guard_backends_due(const struct guard_backends *b)
{
	return earlier(earlier(b->read_due, b->pass_due), b->watch_due);
}

void guard_backends_run(struct guard_backends *b, struct sdiag_handle *h,
			const struct guard_config *c, bool dry_run, struct guard_metrics *m,
			uint64_t now_ms)
{
	struct backends_pass_opts o = { .dry_run = dry_run, .ct = b->ct, .keep = keep,
					.userdata = (void *)c };
	struct backends_pass_result res;
	bool changed = false;
	struct timespec t0;
	int r;

	if (!b->path)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (b->watch_due <= now_ms) {
		arm(b, now_ms);
		b->read_due = now_ms; /* made again, or still unwatched: read it */
		b->read_complete = true;
	}
	if (b->read_due <= now_ms) {
		b->read_due = NEVER;
		if (b->read_complete || still_gone(b))
			changed = reload(b, m);
		b->read_complete = false;
		if (changed)
			b->pass_due = now_ms;
	}
	if (b->pass_due > now_ms)
		return;
	b->pass_due = b->interval_ms ? now_ms + b->interval_ms : NEVER;
	r = backends_pass(h, &b->set, &o, &res);
	if (r < 0) {
		guard_metrics_error(m);
		daemon_log(b->log_name, "dead-backends: pass failed: %s", strerror(-r));
		return;
	}
	guard_metrics_backends_pass(m, res.destroyed, res.ct_deleted);
	if (res.ct_err)
		daemon_log(b->log_name, "dead-backends: conntrack: %s", ct_strerror(res.ct_err));
	if (res.selected == res.kept && !res.ct_deleted && !changed)
		return; /* nothing done, the list the same: no log line */
	if (dry_run)
		daemon_log(b->log_name, "dead-backends: would destroy %zu socket%s (kept %zu exempt; "
			   "%zu backend%s)", res.selected - res.kept,
			   res.selected - res.kept == 1 ? "" : "s", res.kept, b->set.n,
			   b->set.n == 1 ? "" : "s");
	else
		daemon_log(b->log_name, "dead-backends: destroyed %zu socket%s (already gone %zu, "
			   "failed %zu; kept %zu exempt), %zu conntrack entr%s deleted; %zu "
			   "backend%s, %s, %.2f ms", res.destroyed, res.destroyed == 1 ? "" : "s",
			   res.gone, res.failed, res.kept, res.ct_deleted,
			   res.ct_deleted == 1 ? "y" : "ies", b->set.n, b->set.n == 1 ? "" : "s",
			   res.kernel_filter ? "kernel filter" : "hash lookup", ms_since(&t0));
}

void guard_backends_fini(struct guard_backends *b)
{
	unwatch(b);
	backends_free(&b->set);
	ct_close(b->ct);
	b->ct = NULL;
}

size_t guard_backends_ct_flows(struct guard_backends *b, struct sdiag_sock *const *v,
			       const enum sdiag_destroy_result *res, size_t n)
{
	struct ct_tuple *t;
	size_t k = 0, deleted = 0;
	int r;

	if (!b || !b->ct || !n)
		return 0;
	t = calloc(n, sizeof(*t));
	if (!t)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (res[i] == SDIAG_DESTROYED && ct_tuple_of_sock(v[i], &t[k]))
			k++;
	r = ct_delete_flows(b->ct, t, k, &deleted);
	if (r < 0)
		daemon_log(b->log_name, "conntrack: %s", ct_strerror(r));
	if (deleted)
		daemon_log(b->log_name, "conntrack: %zu entr%s of the destroyed sockets' flows deleted",
			   deleted, deleted == 1 ? "y" : "ies");
	free(t);
	return deleted;
}
