/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Dead service backends: the file that lists them (the desired state), and
 * one reconcile pass that closes the sockets still connected to them.
 *
 *   backends.c        the file: parse (pure), load, a hash set of ADDR:PORT
 *   backends_pass.c   one pass in one network namespace: one kernel-filtered
 *                     dump for all backends, destroy, conntrack (the guard
 *                     takes the selection alone: backends_select)
 *
 * The file, one backend per line (sockdiag-guard.conf(5)):
 *   10.96.0.10:53          both TCP and UDP
 *   [fd00::10]:53/udp      UDP only
 *   10.0.0.7:8080/tcp      # a comment
 * Shared by `sockdiag kill --dead-backends` and the guard's `dead-backends`.
 */
#ifndef SOCKDIAG_BACKENDS_H
#define SOCKDIAG_BACKENDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sockdiag.h"

struct ct;

enum { BACKEND_TCP = 1, BACKEND_UDP = 2 };

#define BACKENDS_MAX_DEFAULT 65536

struct backend {
	uint8_t family;	 /* AF_INET (v4-mapped IPv6 written as IPv4) or AF_INET6 */
	uint8_t protos;	 /* BACKEND_TCP | BACKEND_UDP */
	uint16_t port;	 /* host order, 1..65535 */
	uint8_t addr[16];
	unsigned line;	 /* the first line naming it (not compared) */
};

/* Distinct ADDR:PORT pairs (the protocols of repeated lines add up), with an
 * open-addressing hash index over them. */
struct backend_set {
	struct backend *v;
	size_t n;
	uint32_t *slot; /* index + 1, 0 = empty; nslot a power of two > 2n */
	size_t nslot;
};

/*
 * Parse the text of a backends file (len bytes) into *ret. At most max
 * backends (lines naming one); above it the file is refused. On error returns
 * -EINVAL (-E2BIG above max) with "line L, column C: message" in err and
 * *ret untouched; -ENOMEM.
 */
int backends_parse(struct backend_set *ret, const char *text, size_t len, size_t max, char *err,
		   size_t errlen);
/* Read and parse a file, in chunks (no cap on its size; a line is at most
 * 4096 bytes): err is "PATH: line L, column C: what was expected" (never the
 * file's bytes) or "PATH: cannot open: ..." (-ENOENT: it does not exist). */
int backends_load(struct backend_set *ret, const char *path, size_t max, char *err,
		  size_t errlen);
/* The same, the last component of path resolved beneath its directory: a
 * symbolic link that leads out of it, or an absolute one, is refused (-EXDEV);
 * relative links inside it (a ConfigMap's NAME -> ..data/NAME) are followed. */
int backends_load_beneath(struct backend_set *ret, const char *path, size_t max, char *err,
			  size_t errlen);
/* Accepts a zeroed set. */
void backends_free(struct backend_set *s);
/* Same backends and protocols. */
bool backends_equal(const struct backend_set *a, const struct backend_set *b);

/* The backend at addr:port (family AF_INET or AF_INET6; a v4-mapped IPv6
 * address is looked up as IPv4), or NULL. */
const struct backend *backends_find(const struct backend_set *s, uint8_t family,
				    const uint8_t *addr, uint16_t port);
/* "10.0.0.1:53", "[fd00::1]:53" (at least BACKEND_STRLEN bytes). */
#define BACKEND_STRLEN 56
void backend_format(const struct backend *b, char *buf, size_t len);

/* ---- one pass (backends_pass.c) ---------------------------------------------------------- */

struct backends_pass_opts {
	bool dry_run;		/* select and report, destroy nothing */
	struct ct *ct;		/* delete conntrack entries too, or NULL */
	size_t bytecode_max;	/* above this many backends: no kernel filter, a hash
				 * lookup per socket; 0 = BACKENDS_BYTECODE_MAX */
	/* Optional: each selected socket's result (dry run: would). */
	sdiag_destroy_cb report;
	sdiag_sock_cb would;
	void *userdata;
};

#define BACKENDS_BYTECODE_MAX 128

struct backends_pass_result {
	size_t selected;	/* connected to a listed backend, of a listed protocol */
	size_t destroyed, gone, failed;
	size_t ct_deleted;	/* conntrack entries deleted */
	int ct_err;		/* 0, or why conntrack entries could not all be deleted */
	bool kernel_filter;	/* the dump carried bytecode */
};

/*
 * One reconcile pass in h's namespace: TCP sockets in any state but LISTEN and
 * connected UDP sockets whose peer is a listed backend (of the protocol its
 * line allows) are destroyed. Unconnected UDP sockets, listeners, other ports
 * of the same address are never selected. With opts->ct: after the sockets,
 * the conntrack entry of each destroyed socket's flow, then the UDP entries
 * whose original destination or reply source is a UDP backend. An empty set
 * dumps nothing. Returns 0 or a negative errno (the dump or destroy failed).
 */
int backends_pass(struct sdiag_handle *h, const struct backend_set *b,
		  const struct backends_pass_opts *opts, struct backends_pass_result *ret);
/* The selection alone (the guard acts on it itself): the sockets a pass
 * would destroy, before any exemption, into *ret_v (each and the array
 * malloc'ed) and *ret_n; bytecode_max as in the options; whether the dump
 * carried bytecode. Returns 0 or a negative errno. */
int backends_select(struct sdiag_handle *h, const struct backend_set *b, size_t bytecode_max,
		    struct sdiag_sock ***ret_v, size_t *ret_n, bool *ret_kernel_filter);
/* The UDP conntrack entries to or from a listed UDP backend, deleted. */
int backends_ct_sweep(struct ct *ct, const struct backend_set *b, size_t *ret_deleted);

#endif
