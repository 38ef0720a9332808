/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sockdiag-kube-backends: the dead service backends of a Kubernetes cluster,
 * from its EndpointSlices, written to the file the guard's `dead-backends`
 * reads (sockdiag-guard.conf(5)).
 *
 *   slices.c   the model, pure: EndpointSlice objects (json-c) -> the
 *              backends each serves and the dead ones; the file's text
 *   api.c      the API server: list (paged) and watch (a stream of events,
 *              bookmarks, 410 Gone) over libcurl, the service account's token
 *   main.c     options, the loop (list, watch, backoff, signals, the TTL), the
 *              file written by rename
 *
 * A backend is "ADDR:PORT/tcp" or "[ADDR6]:PORT/udp" (an address of an IPv4
 * or IPv6 slice, one of its TCP or UDP ports). It is dead when an endpoint
 * listing it stops serving (conditions.serving false, or conditions.ready
 * false where the API server sends no serving) or leaves its slice (the pod
 * removed, the slice deleted), and no slice has it serving; it stays dead
 * for the TTL, or until some slice serves it again.
 */
#ifndef SOCKDIAG_KUBE_H
#define SOCKDIAG_KUBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;
struct kube_state;

/* ttl_ms: how long a dead backend stays listed (0: never listed). */
int kube_state_new(struct kube_state **ret, uint64_t ttl_ms);
void kube_state_free(struct kube_state *st);
/* A backend the file listed when the sidecar started: dead since now_ms
 * unless a slice serves it. -EINVAL for a line that is not a backend. */
int kube_state_seed(struct kube_state *st, const char *line, uint64_t now_ms);
/* An ADDED or MODIFIED EndpointSlice (the object), or a DELETED one. Slices
 * are told apart by metadata.uid (else namespace/name); -EINVAL for an
 * object with neither. */
int kube_slice_put(struct kube_state *st, struct json_object *slice, uint64_t now_ms);
int kube_slice_del(struct kube_state *st, struct json_object *slice, uint64_t now_ms);
/* A full list replaces the slices: begin, kube_slice_put for each listed
 * slice, end (the slices not listed are deleted). */
void kube_relist_begin(struct kube_state *st);
void kube_relist_end(struct kube_state *st, uint64_t now_ms);
size_t kube_state_slices(const struct kube_state *st);
/* The file's text (a comment line, then the dead backends sorted, one a
 * line) into *ret (malloc'ed), their number, and when the first of them
 * expires (UINT64_MAX: none). Returns 0 or -ENOMEM. */
int kube_render(struct kube_state *st, uint64_t now_ms, char **ret, size_t *ret_n,
		uint64_t *ret_expiry_ms);

/* ---- the API server (api.c) -------------------------------------------------------------- */

struct kube_api_conf {
	const char *server;	/* "https://HOST:PORT" */
	const char *sa_dir;	/* token, ca.crt */
	const char *ns;		/* NULL: every namespace */
	unsigned watch_timeout_s;
	const char *log_name;
};

struct kube_api;

/* Called while a request runs (at least once a second) and after each
 * event: a nonzero return aborts the request (-ECANCELED). */
typedef int (*kube_tick_cb)(void *userdata, bool changed);

int kube_api_new(struct kube_api **ret, const struct kube_api_conf *conf, kube_tick_cb tick,
		 void *userdata);
void kube_api_free(struct kube_api *api);
/* List every EndpointSlice into st (kube_relist_*), page by page; its
 * resourceVersion into *rv (malloc'ed). Returns 0, -ECANCELED, or another
 * negative errno (logged). */
int kube_list(struct kube_api *api, struct kube_state *st, char **rv);
/* Watch from *rv until the server ends the watch (0), the resourceVersion
 * is too old (-ESTALE: list again), the server sends another ERROR event
 * (-EREMOTEIO: list again, after a backoff), the connection drops or the
 * server refuses (-EIO and others, logged), or tick aborts it (-ECANCELED); *rv
 * follows the events and bookmarks. *ret_events: the events it read. */
int kube_watch(struct kube_api *api, struct kube_state *st, char **rv, size_t *ret_events);

#endif
