/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The guard's dead backends (`dead-backends = PATH`): a policy in one file
 * (guard_backends_setup registers its source: the inotify descriptor and
 * the next step's deadline; its passes go through guard_act).
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
#include "daemon/guard/loop.h"
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

/* After the configuration was (re)loaded: follow its dead-backends, backend-
 * interval and dead-backends-max keys; the file is read again and a pass
 * made at now_ms. */
static void configure(struct guard_backends *b, const struct guard_config *c, uint64_t now_ms)
{
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
	/* A SIGHUP or a new configuration: read the file again, a pass now;
	 * the exemptions may have changed. */
	b->read_due = b->pass_due = now_ms;
	b->read_complete = true;
	b->warn_exempt = true;
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

/* Events in the file's directory: those that end a write of the file (a
 * close after writing, a rename onto it, a ConfigMap's ..data swap), its
 * removal and the directory's own removal read it again shortly; the rest
 * (other names, a file still being written) are ignored. */
static void on_event(struct guard_backends *b, uint64_t now_ms)
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
	b->warn_exempt = true;
	if (missing)
		daemon_log(b->log_name, "dead-backends: 0 backends (%s does not exist)", b->path);
	else
		daemon_log(b->log_name, "dead-backends: %zu backend%s from %s", b->set.n,
			   b->set.n == 1 ? "" : "s", b->path);
	return true;
}

/* Once per load of the file: each listed backend the configuration exempts
 * (every client of it kept), by line and exemption, never by its text. */
static void warn_exempt(struct guard_backends *b, const struct guard_config *c)
{
	b->warn_exempt = false;
	for (size_t i = 0; i < b->set.n; i++) {
		enum guard_verdict v = guard_exempt_peer(c, b->set.v[i].family, b->set.v[i].addr);

		if (v != GUARD_DESTROY)
			daemon_log(b->log_name, "dead-backends: line %u lists a backend that %s "
				   "exempts: its clients are never destroyed", b->set.v[i].line,
				   guard_verdict_key(v));
	}
}

/* When the next step is due (NEVER: none). */
static uint64_t next_due(const struct guard_backends *b)
{
	return earlier(earlier(b->read_due, b->pass_due), b->watch_due);
}

/* After the destroy: the UDP entries to or from a listed UDP backend. */
static int sweep(struct guard *g, struct guard_action *a, size_t *ret_deleted)
{
	const struct guard_backends *b = a->data;

	return backends_ct_sweep(g->ct, &b->set, ret_deleted);
}

/* What is due: the watch tried again, the file read again (a pass follows
 * only when the list changed), the pass: the selection by backends_select,
 * the exemptions, guard_act, then the UDP backends' conntrack entries. */
static int backends_expired(struct guard *g, struct guard_source *src, uint64_t now_ms)
{
	struct guard_backends *b = &g->bk;
	struct guard_action a = { 0 };
	struct sdiag_sock **sel = NULL;
	bool changed = false, kf = false;
	size_t nsel = 0;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &a.t0);
	if (b->path && b->watch_due <= now_ms) {
		arm(b, now_ms);
		b->read_due = now_ms; /* made again, or still unwatched: read it */
		b->read_complete = true;
	}
	if (b->path && b->read_due <= now_ms) {
		b->read_due = NEVER;
		if (b->read_complete || still_gone(b))
			changed = reload(b, g->metrics);
		b->read_complete = false;
		if (changed)
			b->pass_due = now_ms;
	}
	if (b->warn_exempt)
		warn_exempt(b, &g->cfg);
	if (!b->path || b->pass_due > now_ms)
		goto out;
	b->pass_due = b->interval_ms ? now_ms + b->interval_ms : NEVER;
	r = backends_select(g->h, &b->set, 0, &sel, &nsel, &kf);
	if (r < 0) {
		guard_metrics_error(g->metrics);
		daemon_log(b->log_name, "dead-backends: pass failed: %s", strerror(-r));
		goto out;
	}
	for (size_t i = 0; i < nsel && r == 0; i++)
		r = guard_action_judge(&a, sel[i], guard_exempt(&g->cfg, sel[i]));
	snprintf(a.what, sizeof(a.what), "dead-backends");
	snprintf(a.tail, sizeof(a.tail), "; %zu backend%s, %s", b->set.n,
		 b->set.n == 1 ? "" : "s", kf ? "kernel filter" : "hash lookup");
	/* The list the same, nothing destroyed or deleted: no line. */
	a.quiet = !changed;
	a.ct_more = sweep;
	a.data = b;
	if (r == 0)
		r = guard_act(g, &a);
	if (r < 0)
		goto out;
	guard_metrics_backends_pass(g->metrics, a.res[SDIAG_DESTROYED], 0);
out:
	for (size_t i = 0; i < nsel; i++)
		free(sel[i]);
	free(sel);
	guard_action_fini(&a);
	src->due = next_due(b);
	src->fd = b->ifd;
	return 0;
}

static int backends_ready(struct guard *g, struct guard_source *src)
{
	on_event(&g->bk, mono_ms());
	src->due = next_due(&g->bk);
	return 0;
}

void guard_backends_setup(struct guard *g)
{
	struct guard_source *s = guard_source(g, "dead-backends");

	configure(&g->bk, &g->cfg, mono_ms());
	if (!s)
		return;
	s->ready = backends_ready;
	s->expired = backends_expired;
	s->fd = g->bk.ifd;
	s->due = next_due(&g->bk);
}

void guard_backends_fini(struct guard_backends *b)
{
	unwatch(b);
	backends_free(&b->set);
}
