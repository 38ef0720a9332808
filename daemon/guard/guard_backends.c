/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The guard's dead backends (`dead-backends = PATH`) and its conntrack
 * handle (`conntrack = yes`).
 *
 * The file is watched through its directory (inotify): an editor's write, an
 * atomic rename over it and a Kubernetes ConfigMap's `..data` symlink swap
 * all show up there, even when the file itself is replaced. Events settle for
 * BACKENDS_SETTLE_MS, then the file is read whole: a malformed or over-cap
 * file is logged and the list in force stays; a good one replaces it. A pass
 * follows every reload and every backend-interval (0: only after changes),
 * so a client that connects to a dead backend later is closed too.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/inotify.h>

#include "daemon/common/backends.h"
#include "daemon/common/ct.h"
#include "daemon/common/log.h"
#include "daemon/guard/guard_backends.h"
#include "daemon/guard/guard_metrics.h"

#define BACKENDS_SETTLE_MS 50
#define NEVER UINT64_MAX

void guard_backends_init(struct guard_backends *b, const char *log_name)
{
	memset(b, 0, sizeof(*b));
	b->ifd = -1;
	b->due = NEVER;
	b->log_name = log_name;
}

static void unwatch(struct guard_backends *b)
{
	if (b->ifd >= 0)
		close(b->ifd);
	b->ifd = -1;
	free(b->path);
	b->path = NULL;
}

/* Watch the directory: the file may be replaced, or not exist yet. */
static int watch(struct guard_backends *b, const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int r;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	b->path = strdup(path);
	if (!b->path)
		return -ENOMEM;
	b->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (b->ifd < 0)
		return -errno;
	r = inotify_add_watch(b->ifd, dir,
			      IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MOVED_FROM |
				      IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF);
	return r < 0 ? -errno : 0;
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
		b->due = NEVER;
		return;
	}
	if (!b->path || strcmp(b->path, c->backends_path)) {
		unwatch(b);
		backends_free(&b->set);
		r = watch(b, c->backends_path);
		if (r < 0)
			daemon_log(b->log_name, "dead-backends: cannot watch the directory of %s: %s; "
				   "read on SIGHUP and every backend-interval only",
				   c->backends_path, strerror(-r));
	}
	/* A SIGHUP or a new configuration: read the file again now. */
	b->dirty = true;
	b->due = now_ms;
}

int guard_backends_fd(const struct guard_backends *b)
{
	return b->ifd;
}

void guard_backends_on_event(struct guard_backends *b, uint64_t now_ms)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	while (read(b->ifd, buf, sizeof(buf)) > 0)
		;
	b->dirty = true;
	if (b->due == NEVER || b->due > now_ms + BACKENDS_SETTLE_MS)
		b->due = now_ms + BACKENDS_SETTLE_MS;
}

/* Read the file again; on error keep the list in force. */
static void reload(struct guard_backends *b, struct guard_metrics *m)
{
	struct backend_set now;
	char err[512];
	int r;

	b->dirty = false;
	r = backends_load(&now, b->path, b->max, err, sizeof(err));
	if (r < 0) {
		guard_metrics_backends_file_error(m);
		daemon_log(b->log_name, "dead-backends: %s; keeping the previous list (%zu backend%s)",
			   err, b->set.n, b->set.n == 1 ? "" : "s");
		return;
	}
	if (b->loaded && backends_equal(&now, &b->set)) {
		backends_free(&now);
		return;
	}
	backends_free(&b->set);
	b->set = now;
	b->loaded = true;
	daemon_log(b->log_name, "dead-backends: %zu backend%s from %s", b->set.n,
		   b->set.n == 1 ? "" : "s", b->path);
}

static bool keep(const struct sdiag_sock *s, void *data)
{
	return guard_exempt(data, s) != GUARD_DESTROY;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

uint64_t guard_backends_due(const struct guard_backends *b)
{
	return b->due;
}

void guard_backends_run(struct guard_backends *b, struct sdiag_handle *h,
			const struct guard_config *c, bool dry_run, struct guard_metrics *m,
			uint64_t now_ms)
{
	struct backends_pass_opts o = { .dry_run = dry_run, .ct = b->ct, .keep = keep,
					.userdata = (void *)c };
	struct backends_pass_result res;
	bool changed = b->dirty;
	struct timespec t0;
	int r;

	if (!b->path)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	b->due = b->interval_ms ? now_ms + b->interval_ms : NEVER;
	if (b->dirty)
		reload(b, m);
	r = backends_pass(h, &b->set, &o, &res);
	if (r < 0) {
		guard_metrics_error(m);
		daemon_log(b->log_name, "dead-backends: pass failed: %s", strerror(-r));
		return;
	}
	guard_metrics_backends_pass(m, res.destroyed, res.ct_deleted);
	if (res.ct_err)
		daemon_log(b->log_name, "dead-backends: conntrack: %s", ct_strerror(res.ct_err));
	if (!res.selected && !res.ct_deleted && !changed)
		return; /* a quiet periodic pass: no log line */
	if (dry_run)
		daemon_log(b->log_name, "dead-backends: would destroy %zu socket%s (kept %zu exempt; "
			   "%zu backends)", res.selected - res.kept,
			   res.selected - res.kept == 1 ? "" : "s", res.kept, b->set.n);
	else
		daemon_log(b->log_name, "dead-backends: destroyed %zu socket%s (already gone %zu, "
			   "failed %zu; kept %zu exempt), %zu conntrack entr%s deleted; %zu "
			   "backends, %s, %.2f ms", res.destroyed, res.destroyed == 1 ? "" : "s",
			   res.gone, res.failed, res.kept, res.ct_deleted,
			   res.ct_deleted == 1 ? "y" : "ies", b->set.n,
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
