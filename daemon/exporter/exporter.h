/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sockdiag exporter: socket metrics for Prometheus.
 *
 *   exporter_config.c    the configuration file (line-numbered errors, conf.c)
 *   exporter_collect.c   one pass over the kernel's dumps -> struct exp_agg,
 *                        aggregated while streaming (memory flat in sockets)
 *   exporter_render.c    struct exp_agg -> Prometheus text / OpenMetrics
 *   exporter_conns.c     per-destination metrics folded in the same pass:
 *                        ephemeral-port use, UDP receive drops, connections
 *                        per owner and destination (top-K sets)
 *   exporter_life.c      connection ends (life/'s engine in a thread of its own)
 *   exporter.c           options, the shared pass, HTTP (http.c), signals
 */
#ifndef SOCKDIAG_EXPORTER_H
#define SOCKDIAG_EXPORTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/push/push.h"
#include "sockdiag.h"

#define EXP_DEFAULT_LISTEN "127.0.0.1:10113"
/* SYSCONFDIR/sockdiag/exporter.conf, as the guard's (meson's sysconfdir:
 * /etc for a /usr install). */
#ifndef SOCKDIAG_SYSCONFDIR
#define SOCKDIAG_SYSCONFDIR "/etc"
#endif
#define EXP_DEFAULT_CONFIG SOCKDIAG_SYSCONFDIR "/sockdiag/exporter.conf"
#define EXP_MAX_PORTS 64
#define EXP_RTT_BUCKETS 14	/* the last is +Inf */

/* ---- configuration ------------------------------------------------------------ */

struct exp_config {
	char *listen;			/* HOST:PORT from the file, or NULL */
	uint32_t tables;		/* SDIAG_TABLE_BIT mask dumped */
	bool tcp_info;			/* request tcp_info: RTT histogram, TCP sums */
	bool listeners;			/* per-listener accept queue metrics */
	uint32_t max_listeners;
	uint16_t ports[EXP_MAX_PORTS];	/* per-port breakdown, in file order */
	size_t n_ports;
	bool by_cgroup, by_comm;	/* optional groupings */
	uint32_t max_series;		/* per grouping */
	char *cgroup_root;		/* cgroup2 mount for id -> path, NULL = found */
	bool ephemeral;			/* ephemeral-ports: use per destination, range size */
	bool udp_drops;			/* udp-drops: receive drops per UDP socket */
	enum exp_owner_key { EXP_BY_NONE, EXP_BY_COMM, EXP_BY_CGROUP } destinations;
	bool life;			/* life: connection ends (exporter_life.c) */
	enum exp_owner_key life_by;	/* life-by: the ends' owner label */
	bool pod_labels;		/* --all-netns: k8s_namespace, k8s_pod labels */
	char *pods_dir;			/* the kubelet's pod log directories, NULL = default */
	uint32_t max_pods;		/* namespaces labelled with a pod, per pass */
	struct push_config push;	/* remote-write-url, otlp-endpoint, push-* */
};
#define EXP_PODS_DIR "/var/log/pods"

void exp_config_init(struct exp_config *c);
void exp_config_fini(struct exp_config *c);
/* On error returns -EINVAL with "line N: message" in err; *c is then the defaults. */
int exp_config_parse(struct exp_config *c, const char *text, char *err, size_t errlen);
int exp_config_load(struct exp_config *c, const char *path, char *err, size_t errlen);

/* ---- one pass ------------------------------------------------------------------ */

/* Index of a socket's family within its table: 0, or 1 for AF_INET6. */
#define EXP_FAMS 2
/* Tables with a port: SDIAG_T_TCP .. SDIAG_T_SCTP. */
#define EXP_INET_TABLES (SDIAG_T_SCTP + 1)

struct exp_tcp {
	uint64_t rtt_buckets[EXP_RTT_BUCKETS];	/* not cumulative; ESTABLISHED only */
	uint64_t rtt_count;
	double rtt_sum_s;
	uint64_t with_info;			/* sockets the sums are over */
	uint64_t retrans_segs, lost_segs, unacked_segs;
	uint64_t bytes_sent, bytes_received, bytes_retrans;
};

/* A key of the bounded label sets: zero-filled, compared whole. */
struct exp_key {
	uint32_t ns;
	uint8_t table, family, state, pad;
	uint16_t port, pport;	/* local port; peer port (per destination) */
	uint8_t addr[16];
	uint8_t peer[16];	/* peer address (per destination) */
	uint64_t id;		/* cgroup id */
	char comm[16];
};

struct exp_entry {
	struct exp_key k;
	bool used;
	uint64_t v[2];		/* listener: queue length, limit; groups: sockets */
};

/* At most cap distinct keys (open addressing over 2 * cap slots); what does
 * not fit is counted in dropped. Memory is bounded by cap, not by sockets. */
struct exp_set {
	struct exp_entry *slots;
	size_t n, cap, nslots;
	uint64_t dropped;	/* sockets not counted: the cap was reached */
};

#define EXP_POD_UID_LEN 37	/* 36 characters and the NUL */

struct exp_ns {
	char label[64];
	uint32_t port_lo, port_hi;	/* ip_local_port_range; 0 0: not read */
	char pod_uid[EXP_POD_UID_LEN];	/* pod-labels: its pod's UID, "" if none */
	char pod_ns[64], pod[254];	/* and its namespace and name, "" if unknown */
	uint64_t socks[SDIAG_T_MAX][EXP_FAMS][SDIAG_SS_MAX];
	uint64_t (*ports)[EXP_INET_TABLES][SDIAG_SS_MAX];	/* [n_ports] */
	struct exp_tcp tcp;
	uint32_t unsupported;	/* SDIAG_TABLE_BIT of tables the kernel cannot dump */
	bool failed;		/* could not be entered or dumped */
};

struct exp_agg {
	struct exp_ns *ns;
	size_t n_ns;
	size_t n_ports;
	struct exp_set listeners;	/* key: ns, table, family, addr, port */
	struct exp_set cgroups;		/* key: ns, id, state */
	struct exp_set comms;		/* key: ns, comm, state */
	struct exp_set ephemeral;	/* key: ns, family, addr, peer, pport */
	struct exp_set udp;		/* key: ns, family, addr, port; v[0] drops */
	struct exp_set dests;		/* key: ns, family, id or comm, peer, pport */
	char **dest_cgroups;	/* per dests slot (NULL: unknown) */
	char **cgroup_paths;	/* per cgroups slot, after the pass (NULL: unknown) */
	uint64_t sockets;	/* seen in the pass */
	uint64_t dump_errors;
	double duration_s;
	double timestamp;	/* CLOCK_REALTIME at the end of the pass */
};

/* Where to look: one namespace (nsfd -1: ours; h may be given, kept open by the
 * caller) or every namespace. */
struct exp_target {
	bool all_netns;
	struct sdiag_handle *h;	/* the single namespace's handle, or NULL */
	const char *label;	/* its netns label ("" for ours) */
	int range_fd;		/* its ip_local_port_range, opened there; -1: none */
	int nsfd;		/* -N's namespace (for life), -1: ours */
};

/* Run one pass. Returns 0 with *ret (free with exp_agg_free), or a negative
 * errno when nothing could be collected. */
int exp_collect(const struct exp_config *c, const struct exp_target *t, struct exp_agg **ret);
void exp_agg_free(struct exp_agg *a);

/* ---- pods (exporter_pods.c) ------------------------------------------------------ */

/* The pod UID in a /proc/PID/cgroup text (either kubelet cgroup driver, '_'
 * read as '-'): true with uid filled, false if no kubepods pod segment. */
bool exp_pod_uid(const char *cgroup, char uid[EXP_POD_UID_LEN]);
/* A kubelet pod log directory's name NAMESPACE_NAME_UID for uid: true with
 * its namespace and name, false if it is another pod's or malformed. */
bool exp_pod_dirname(const char *dirname, const char *uid, char *ns, size_t ns_size, char *name,
		     size_t name_size);
/* Label a->ns[i] (namespace inode inodes[i]) with the pod of its lowest pid
 * under proc_root, looked up in pods_dir; at most max_pods namespaces.
 * Returns how many were labelled. */
size_t exp_pods_label(struct exp_agg *a, const uint64_t *inodes, const char *proc_root,
		      const char *pods_dir, uint32_t max_pods);

/* ---- rendering ------------------------------------------------------------------ */

/* Counters kept across passes by exporter.c. */
enum exp_grouping { EXP_G_LISTENER, EXP_G_CGROUP, EXP_G_COMM, EXP_G_EPHEMERAL, EXP_G_UDP,
		    EXP_G_DESTINATION, EXP_G_N };

struct exp_counters {
	uint64_t passes, requests, dump_errors;
	uint64_t dropped[EXP_G_N];	/* by grouping: sockets left out of a bounded set */
	uint64_t reloads_ok, reloads_refused;
};

struct exp_life;
struct expo;

/* Render the pass and the counters (and the connection ends of l, if not
 * NULL); returns 0 with a malloc'd body. */
int exp_render(const struct exp_config *c, const struct exp_agg *a,
	       const struct exp_counters *k, struct exp_life *l, bool openmetrics,
	       char **ret_body, size_t *ret_len);

/* ---- bounded sets (exporter_collect.c) -------------------------------------------------- */

int exp_set_init(struct exp_set *s, size_t cap);
/* The entry for k, added if there is room; NULL (counted as dropped) if not. */
struct exp_entry *exp_set_get(struct exp_set *s, const struct exp_key *k);
/* Keep the k entries of the largest v[0] (ties: any), the sockets of the
 * others (v[socks]; 2: one each) added to dropped. */
void exp_set_top(struct exp_set *s, size_t k, unsigned socks);
/* The cgroup v2 path of each cgroup id (n of them) into paths[i] (malloc'd,
 * NULL: not found), under root (NULL: the first cgroup2 mount). */
void exp_cgroup_paths(const char *root, const uint64_t *ids, size_t n, char **paths);
/* The paths of a set's cgroup ids (k.id), per slot (NULL: not found); free
 * with exp_paths_free(paths, s->nslots). NULL without memory. */
char **exp_set_cgroup_paths(const struct exp_set *s, const char *root);
void exp_paths_free(char **paths, size_t n);

/* ---- per-destination metrics (exporter_conns.c) ---------------------------------------- */

/* A pass's working capacity of a top-K set of max-series entries. */
#define EXP_TOPK_WORK 4
/* The ports a namespace's listeners hold: a bitmap filled as the dump goes
 * (the kernel walks the listening sockets first). */
struct exp_lports {
	uint64_t bits[65536 / 64];
};
/* Open namespace nsfd's /proc/sys/net/ipv4/ip_local_port_range (-1: ours):
 * a descriptor that keeps reading that namespace's, or a negative errno. */
int exp_range_open(int nsfd);
/* Read it into ns->port_lo/hi (left 0 0 when it cannot be read). */
void exp_range_read(struct exp_ns *ns, int fd);
int exp_conns_init(const struct exp_config *c, struct exp_agg *a);
/* One record of namespace index ns (after fold_sock's counts). */
void exp_conns_fold(const struct exp_config *c, struct exp_agg *a, uint32_t ns,
		    struct exp_lports *lp, const struct sdiag_sock *s);
/* After the pass: the top-K cut, the cgroup names. */
void exp_conns_done(const struct exp_config *c, struct exp_agg *a);
void exp_conns_free(struct exp_agg *a);
void exp_conns_render(struct expo *o, const struct exp_config *c, const struct exp_agg *a);

/* ---- connection ends (exporter_life.c) --------------------------------------------------- */

/* Start following the ends in the target's namespaces (a thread); -errno. */
int exp_life_start(struct exp_life **ret, const struct exp_config *c,
		   const struct exp_target *t);
void exp_life_stop(struct exp_life *l);
/* The ends' series so far; the dropped count goes to the self metrics. */
void exp_life_render(struct expo *o, struct exp_life *l);

/* The metric label of a state: "established", "syn_sent", ..., "close". */
const char *exp_state_label(unsigned state);
/* The family label of a table and family index: "inet", "inet6", "unix", ... */
const char *exp_family_label(enum sdiag_table t, unsigned fam);

/* ---- command line (exporter.c) ------------------------------------------------- */

struct exp_cmdline {
	const char *listen;		/* --listen, or NULL: the file's, else the default */
	const char *netns;		/* -N */
	const char *config_path;	/* -c, else the caller's default */
	bool config_explicit;		/* -c given: a missing file is an error */
	bool all_netns, check, once, openmetrics;
	const char *remote_write, *otlp;	/* --remote-write, --otlp: the file's ignored */
};

/* Parse the options after `exporter` into *a (its config_path preset to the
 * default). Returns 0, 1 after --help (printed), or -EINVAL after one line on
 * stderr. */
int exp_parse_args(struct exp_cmdline *a, int argc, char **argv);
int cmd_exporter(int argc, char **argv);

#endif
