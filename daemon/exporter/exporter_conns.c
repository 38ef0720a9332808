// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Per-destination metrics, folded in the exporter's pass (exporter_collect.c)
 * and rendered with the others: what node_exporter does not give.
 *
 *   ephemeral-ports  TCP connections per (local address, peer address, peer
 *                    port) whose local port is in the namespace's ephemeral
 *                    range (TIME-WAIT included: it holds its port), and the
 *                    range's size: a connect() to one destination takes a
 *                    port free for that 4-tuple, so the ratio is the headroom.
 *   udp-drops        receive drops per UDP socket (address, port), from its
 *                    memory info (SK_MEMINFO_DROPS).
 *   destinations     connections per owner (comm or cgroup) and destination
 *                    (peer address, peer port), outbound ones only.
 *
 * An outbound connection is one whose local port no listener of its
 * namespace holds: the kernel walks the listening sockets of a TCP dump
 * before the others, so the listening ports are known when the connections
 * come. Each set keeps EXP_TOPK_WORK * max-series keys while the pass runs and
 * the max-series largest after it; the sockets of the others are counted in
 * sockdiag_dropped_sockets_total{grouping=...}.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "daemon/exporter/exporter.h"
#include "daemon/metrics/expo.h"
#include "lib/core/nl.h"
#include "util/inaddr.h"

#define RANGE_PATH "/proc/sys/net/ipv4/ip_local_port_range"

/* ---- the ephemeral range ------------------------------------------------------------ */

static int open_range(void *arg)
{
	int *fd = arg;

	*fd = open(RANGE_PATH, O_RDONLY | O_CLOEXEC);
	return *fd < 0 ? -errno : 0;
}

/* A /proc/sys/net file is the namespace's of the thread that opened it: the
 * descriptor keeps reading that one, wherever its reader is later. */
int exp_range_open(int nsfd)
{
	int fd = -1, r;

	if (nsfd < 0)
		r = open_range(&fd);
	else
		r = sd_in_netns(nsfd, open_range, &fd);
	if (r < 0 && fd >= 0) {
		close(fd);	/* opened, but could not come back */
		fd = -1;
	}
	return r < 0 ? r : fd;
}

void exp_range_read(struct exp_ns *ns, int fd)
{
	char buf[64];
	unsigned lo, hi;
	ssize_t n = fd >= 0 ? pread(fd, buf, sizeof(buf) - 1, 0) : -1;

	if (n <= 0)
		return;
	buf[n] = '\0';
	if (sscanf(buf, "%u %u", &lo, &hi) == 2 && lo <= hi && hi <= 65535) {
		ns->port_lo = lo;
		ns->port_hi = hi;
	}
}

/* ---- folding ------------------------------------------------------------------------- */

int exp_conns_init(const struct exp_config *c, struct exp_agg *a)
{
	size_t cap = (size_t)c->max_series * EXP_TOPK_WORK;

	if ((c->ephemeral && exp_set_init(&a->ephemeral, cap) < 0) ||
	    (c->udp_drops && exp_set_init(&a->udp, cap) < 0) ||
	    (c->destinations && exp_set_init(&a->dests, cap) < 0))
		return -ENOMEM;
	return 0;
}

static bool lport_has(const struct exp_lports *lp, uint16_t port)
{
	return lp->bits[port / 64] >> (port % 64) & 1;
}

/* A connection that holds a port of its own (not a listener's child). */
static bool outbound(const struct exp_lports *lp, const struct sdiag_sock *s)
{
	return s->state != SDIAG_SS_LISTEN && s->state != SDIAG_SS_CLOSE &&
	       s->state != SDIAG_SS_NEW_SYN_RECV && s->state != SDIAG_SS_SYN_RECV &&
	       s->inet.dport && !lport_has(lp, s->inet.sport);
}

static void fold_ephemeral(struct exp_agg *a, uint32_t ns, const struct sdiag_sock *s)
{
	const struct exp_ns *n = &a->ns[ns];
	struct exp_key k = { .ns = ns, .family = s->family, .pport = s->inet.dport };
	struct exp_entry *e;

	if (!n->port_hi || s->inet.sport < n->port_lo || s->inet.sport > n->port_hi)
		return;
	memcpy(k.addr, s->inet.src, 16);
	memcpy(k.peer, s->inet.dst, 16);
	e = exp_set_get(&a->ephemeral, &k);
	if (e)
		e->v[0]++;
}

static void fold_udp(struct exp_agg *a, uint32_t ns, const struct sdiag_sock *s)
{
	uint32_t mem[SDIAG_SKMEM_VARS] = { 0 };
	struct exp_key k = { .ns = ns, .family = s->family, .port = s->inet.sport };
	struct exp_entry *e;

	if (!(s->has & SDIAG_HAS_SKMEMINFO))
		return;
	sdiag_sock_blob_copy(s, SDIAG_BLOB_SKMEMINFO, mem, sizeof(mem));
	/* The servers' (unconnected) sockets always; a connected one once it drops. */
	if (s->state != SDIAG_SS_CLOSE && !mem[SDIAG_SKMEM_DROPS])
		return;
	memcpy(k.addr, s->inet.src, 16);
	e = exp_set_get(&a->udp, &k);
	if (e) {
		e->v[0] += mem[SDIAG_SKMEM_DROPS];
		e->v[1]++;
	}
}

static void fold_dest(const struct exp_config *c, struct exp_agg *a, uint32_t ns,
		      const struct sdiag_sock *s)
{
	struct exp_key k = { .ns = ns, .family = s->family, .pport = s->inet.dport };
	struct exp_entry *e;

	if (s->state != SDIAG_SS_ESTABLISHED && s->state != SDIAG_SS_SYN_SENT)
		return;
	if (c->destinations == EXP_BY_CGROUP)
		k.id = s->has & SDIAG_HAS_CGROUP ? s->inet.cgroup_id : 0;
	else if (s->n_procs)
		memcpy(k.comm, s->procs[0].comm, strnlen(s->procs[0].comm, sizeof(k.comm) - 1));
	memcpy(k.peer, s->inet.dst, 16);
	e = exp_set_get(&a->dests, &k);
	if (e)
		e->v[0]++;
}

void exp_conns_fold(const struct exp_config *c, struct exp_agg *a, uint32_t ns,
		    struct exp_lports *lp, const struct sdiag_sock *s)
{
	if (s->table == SDIAG_T_UDP && c->udp_drops) {
		fold_udp(a, ns, s);
		return;
	}
	if (s->table != SDIAG_T_TCP || (!c->ephemeral && !c->destinations))
		return;
	if (s->state == SDIAG_SS_LISTEN) {
		lp->bits[s->inet.sport / 64] |= 1ULL << (s->inet.sport % 64);
		return;
	}
	if (!outbound(lp, s))
		return;
	if (c->ephemeral)
		fold_ephemeral(a, ns, s);
	if (c->destinations)
		fold_dest(c, a, ns, s);
}

void exp_conns_done(const struct exp_config *c, struct exp_agg *a)
{
	exp_set_top(&a->ephemeral, c->max_series, 0);
	exp_set_top(&a->udp, c->max_series, 1);	/* ranked by drops */
	exp_set_top(&a->dests, c->max_series, 0);
	if (c->destinations == EXP_BY_CGROUP && a->dests.n)
		a->dest_cgroups = exp_set_cgroup_paths(&a->dests, c->cgroup_root);
}

void exp_conns_free(struct exp_agg *a)
{
	exp_paths_free(a->dest_cgroups, a->dests.nslots);
	free(a->ephemeral.slots);
	free(a->udp.slots);
	free(a->dests.slots);
}

/* ---- rendering ------------------------------------------------------------------------ */

static void addr_label(struct expo *o, const char *name, uint8_t family, const uint8_t *a16)
{
	char text[INET6_ADDRSTRLEN] = "?";
	const uint8_t *a;
	uint8_t f = in_plain(family, a16, &a);

	inet_ntop(f, a, text, sizeof(text));
	fprintf(o->f, ",%s=\"%s\"", name, text);
}

static void ns_label(struct expo *o, const char *name, const struct exp_agg *a, uint32_t ns)
{
	fprintf(o->f, "%s{netns=\"", name);
	expo_value(o, ns < a->n_ns ? a->ns[ns].label : "");
	fputc('"', o->f);
}

static void ephemeral(struct expo *o, const struct exp_agg *a)
{
	expo_family(o, "sockdiag_ephemeral_port_range_size", "gauge",
		    "Ports in the namespace's ip_local_port_range.");
	for (size_t n = 0; n < a->n_ns; n++) {
		if (!a->ns[n].port_hi)
			continue;
		ns_label(o, "sockdiag_ephemeral_port_range_size", a, (uint32_t)n);
		fprintf(o->f, "} %u\n", a->ns[n].port_hi - a->ns[n].port_lo + 1);
	}
	expo_family(o, "sockdiag_ephemeral_port_connections", "gauge",
		    "TCP connections from an ephemeral port, per local address and destination; "
		    "top max-series.");
	for (size_t i = 0; i < a->ephemeral.nslots; i++) {
		const struct exp_entry *e = &a->ephemeral.slots[i];

		if (!e->used)
			continue;
		ns_label(o, "sockdiag_ephemeral_port_connections", a, e->k.ns);
		addr_label(o, "local_address", e->k.family, e->k.addr);
		addr_label(o, "peer_address", e->k.family, e->k.peer);
		fprintf(o->f, ",peer_port=\"%u\"} %llu\n", e->k.pport,
			(unsigned long long)e->v[0]);
	}
}

static void udp(struct expo *o, const struct exp_agg *a)
{
	static const char *const names[2] = { "sockdiag_udp_receive_drops",
					      "sockdiag_udp_drop_sockets" };
	static const char *const helps[2] = {
		"Datagrams dropped on receive by the UDP sockets open on an address and port "
		"(their drop counters, summed); top max-series.",
		"UDP sockets the receive drops are summed over.",
	};

	for (unsigned m = 0; m < 2; m++) {
		expo_family(o, names[m], "gauge", helps[m]);
		for (size_t i = 0; i < a->udp.nslots; i++) {
			const struct exp_entry *e = &a->udp.slots[i];

			if (!e->used)
				continue;
			ns_label(o, names[m], a, e->k.ns);
			addr_label(o, "address", e->k.family, e->k.addr);
			fprintf(o->f, ",port=\"%u\"} %llu\n", e->k.port, (unsigned long long)e->v[m]);
		}
	}
}

static void dests(struct expo *o, const struct exp_config *c, const struct exp_agg *a)
{
	expo_family(o, "sockdiag_destination_connections", "gauge",
		    "Outbound TCP connections (established or connecting) per owner and "
		    "destination; top max-series.");
	for (size_t i = 0; i < a->dests.nslots; i++) {
		const struct exp_entry *e = &a->dests.slots[i];
		char id[32];

		if (!e->used)
			continue;
		ns_label(o, "sockdiag_destination_connections", a, e->k.ns);
		if (c->destinations == EXP_BY_CGROUP) {
			snprintf(id, sizeof(id), "id:%llu", (unsigned long long)e->k.id);
			fputs(",cgroup=\"", o->f);
			expo_value(o, a->dest_cgroups && a->dest_cgroups[i] ? a->dest_cgroups[i] : id);
		} else {
			fputs(",comm=\"", o->f);
			expo_value(o, e->k.comm);
		}
		fputc('"', o->f);
		addr_label(o, "peer_address", e->k.family, e->k.peer);
		fprintf(o->f, ",peer_port=\"%u\"} %llu\n", e->k.pport,
			(unsigned long long)e->v[0]);
	}
}

void exp_conns_render(struct expo *o, const struct exp_config *c, const struct exp_agg *a)
{
	if (c->ephemeral)
		ephemeral(o, a);
	if (c->udp_drops)
		udp(o, a);
	if (c->destinations)
		dests(o, c, a);
}
