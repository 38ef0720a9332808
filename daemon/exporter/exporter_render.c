// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The exposition of one pass: Prometheus text format 0.0.4, or OpenMetrics
 * 1.0.0 (counters' families without _total, the RTT distribution as a
 * gaugehistogram, "# EOF"). Every metric is documented in sockdiag(8),
 * METRICS; the HELP texts here are their short forms.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "daemon/exporter/exporter.h"
#include "daemon/metrics/expo.h"

static const char *const state_labels[SDIAG_SS_MAX] = {
	[SDIAG_SS_UNKNOWN] = "unknown",	     [SDIAG_SS_ESTABLISHED] = "established",
	[SDIAG_SS_SYN_SENT] = "syn_sent",    [SDIAG_SS_SYN_RECV] = "syn_recv",
	[SDIAG_SS_FIN_WAIT1] = "fin_wait1",  [SDIAG_SS_FIN_WAIT2] = "fin_wait2",
	[SDIAG_SS_TIME_WAIT] = "time_wait",  [SDIAG_SS_CLOSE] = "close",
	[SDIAG_SS_CLOSE_WAIT] = "close_wait", [SDIAG_SS_LAST_ACK] = "last_ack",
	[SDIAG_SS_LISTEN] = "listen",	     [SDIAG_SS_CLOSING] = "closing",
	[SDIAG_SS_NEW_SYN_RECV] = "new_syn_recv", [SDIAG_SS_BOUND_INACTIVE] = "bound_inactive",
};

const char *exp_state_label(unsigned state)
{
	return state < SDIAG_SS_MAX ? state_labels[state] : "unknown";
}

const char *exp_family_label(enum sdiag_table t, unsigned fam)
{
	if (t < EXP_INET_TABLES)
		return fam ? "inet6" : "inet";
	if (t <= SDIAG_T_UNIX_SEQPACKET)
		return "unix";
	if (t == SDIAG_T_NETLINK)
		return "netlink";
	if (t <= SDIAG_T_PACKET_DGRAM)
		return "packet";
	if (t <= SDIAG_T_VSOCK_SEQPACKET)
		return "vsock";
	if (t == SDIAG_T_XDP)
		return "xdp";
	if (t == SDIAG_T_TIPC)
		return "tipc";
	return "smc";
}

/* Upper bounds of the RTT buckets in seconds, as exposed (le labels). */
static const char *const rtt_le[EXP_RTT_BUCKETS] = {
	"0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01",
	"0.025", "0.05", "0.1", "0.25", "0.5", "1", "+Inf",
};

static void u64(struct expo *o, uint64_t v)
{
	fprintf(o->f, "} %llu\n", (unsigned long long)v);
}

/* A namespace's labels: netns, and its pod's where known (pod-labels). */
static void ns_labels(struct expo *o, const void *arg)
{
	const struct exp_ns *ns = arg;

	fputs("netns=\"", o->f);
	expo_value(o, ns ? ns->label : "");
	fputc('"', o->f);
	if (ns && ns->pod[0]) {
		fputs(",k8s_namespace=\"", o->f);
		expo_value(o, ns->pod_ns);
		fputs("\",k8s_pod=\"", o->f);
		expo_value(o, ns->pod);
		fputc('"', o->f);
	}
}

static void sockets(struct expo *o, const struct exp_config *c, const struct exp_agg *a)
{
	expo_family(o, "sockdiag_sockets", "gauge",
	       "Sockets by network namespace, address family, protocol and state.");
	for (size_t n = 0; n < a->n_ns; n++) {
		const struct exp_ns *ns = &a->ns[n];

		for (unsigned t = 0; t < SDIAG_T_MAX; t++)
			for (unsigned f = 0; f < EXP_FAMS; f++)
				for (unsigned st = 0; st < SDIAG_SS_MAX; st++) {
					uint64_t v = ns->socks[t][f][st];
					/* TCP's states are always there: alerts see 0,
					 * not an absent series. */
					bool zero = t == SDIAG_T_TCP && st != SDIAG_SS_UNKNOWN &&
						    (c->tables & SDIAG_TABLE_BIT(t)) &&
						    !(ns->unsupported & SDIAG_TABLE_BIT(t)) &&
						    !ns->failed;

					if (!v && !zero)
						continue;
					fputs("sockdiag_sockets{", o->f);
					ns_labels(o, ns);
					fprintf(o->f, ",family=\"%s\",proto=\"%s\",state=\"%s\"",
						exp_family_label(t, f), sdiag_table_proto(t),
						exp_state_label(st));
					u64(o, v);
				}
	}
}

static void ports(struct expo *o, const struct exp_config *c, const struct exp_agg *a)
{
	if (!c->n_ports)
		return;
	expo_family(o, "sockdiag_port_sockets", "gauge",
	       "Sockets by configured local port, protocol and state.");
	for (size_t n = 0; n < a->n_ns; n++)
		for (size_t i = 0; i < a->n_ports; i++)
			for (unsigned t = 0; t < EXP_INET_TABLES; t++)
				for (unsigned st = 0; st < SDIAG_SS_MAX; st++) {
					uint64_t v = a->ns[n].ports[i][t][st];

					if (!v && (t != SDIAG_T_TCP || st == SDIAG_SS_UNKNOWN))
						continue;
					fputs("sockdiag_port_sockets{", o->f);
					ns_labels(o, &a->ns[n]);
					fprintf(o->f, ",proto=\"%s\",port=\"%u\",state=\"%s\"",
						sdiag_table_proto(t), c->ports[i],
						exp_state_label(st));
					u64(o, v);
				}
}

static void listener_labels(struct expo *o, const struct exp_agg *a, const struct exp_key *k)
{
	char addr[INET6_ADDRSTRLEN] = "?";

	inet_ntop(k->family == AF_INET6 ? AF_INET6 : AF_INET, k->addr, addr, sizeof(addr));
	fputc('{', o->f);
	ns_labels(o, k->ns < a->n_ns ? &a->ns[k->ns] : NULL);
	fprintf(o->f, ",proto=\"%s\",address=\"%s\",port=\"%u\"",
		sdiag_table_proto(k->table), addr, k->port);
}

static void listeners(struct expo *o, const struct exp_config *c, const struct exp_agg *a)
{
	static const char *const names[2] = { "sockdiag_accept_queue_length",
					      "sockdiag_accept_queue_limit" };
	static const char *const helps[2] = {
		"Connections waiting in a listening socket's accept queue.",
		"Accept queue limit (backlog) of a listening socket.",
	};

	if (!c->listeners)
		return;
	for (unsigned m = 0; m < 2; m++) {
		expo_family(o, names[m], "gauge", helps[m]);
		for (size_t i = 0; i < a->listeners.nslots; i++) {
			const struct exp_entry *e = &a->listeners.slots[i];

			if (!e->used)
				continue;
			fputs(names[m], o->f);
			listener_labels(o, a, &e->k);
			u64(o, e->v[m]);
		}
	}
}

static void tcp_sum(struct expo *o, const struct exp_agg *a, const char *name, const char *help,
		    size_t offset)
{
	expo_family(o, name, "gauge", help);
	for (size_t n = 0; n < a->n_ns; n++) {
		const uint64_t *v = (const uint64_t *)((const char *)&a->ns[n].tcp + offset);

		fprintf(o->f, "%s{", name);
		ns_labels(o, &a->ns[n]);
		u64(o, *v);
	}
}

static void tcp(struct expo *o, const struct exp_config *c, const struct exp_agg *a)
{
	if (!c->tcp_info || !(c->tables & SDIAG_TABLE_BIT(SDIAG_T_TCP)))
		return;
	expo_family(o, "sockdiag_tcp_rtt_seconds", "gaugehistogram",
	       "Smoothed RTT of the ESTABLISHED TCP sockets open at the scrape.");
	for (size_t n = 0; n < a->n_ns; n++)
		expo_histogram(o, "sockdiag_tcp_rtt_seconds", true, ns_labels, &a->ns[n], rtt_le,
			       a->ns[n].tcp.rtt_buckets, EXP_RTT_BUCKETS, a->ns[n].tcp.rtt_sum_s);
	tcp_sum(o, a, "sockdiag_tcp_info_sockets",
		"TCP sockets that reported tcp_info (the sums below are over them).",
		offsetof(struct exp_tcp, with_info));
	tcp_sum(o, a, "sockdiag_tcp_retransmitted_segments",
		"Segments retransmitted over the life of the TCP sockets now open.",
		offsetof(struct exp_tcp, retrans_segs));
	tcp_sum(o, a, "sockdiag_tcp_lost_segments",
		"Segments the open TCP sockets currently consider lost.",
		offsetof(struct exp_tcp, lost_segs));
	tcp_sum(o, a, "sockdiag_tcp_unacked_segments",
		"Segments sent and not yet acknowledged, over the open TCP sockets.",
		offsetof(struct exp_tcp, unacked_segs));
	tcp_sum(o, a, "sockdiag_tcp_sent_bytes", "Bytes sent by the TCP sockets now open.",
		offsetof(struct exp_tcp, bytes_sent));
	tcp_sum(o, a, "sockdiag_tcp_received_bytes",
		"Bytes received by the TCP sockets now open.",
		offsetof(struct exp_tcp, bytes_received));
	tcp_sum(o, a, "sockdiag_tcp_retransmitted_bytes",
		"Bytes retransmitted by the TCP sockets now open.",
		offsetof(struct exp_tcp, bytes_retrans));
}

static void groups(struct expo *o, const struct exp_agg *a, const struct exp_set *set,
		   const char *name, const char *label, const char *help)
{
	expo_family(o, name, "gauge", help);
	for (size_t i = 0; i < set->nslots; i++) {
		const struct exp_entry *e = &set->slots[i];
		char idbuf[32];

		if (!e->used)
			continue;
		fprintf(o->f, "%s{", name);
		ns_labels(o, e->k.ns < a->n_ns ? &a->ns[e->k.ns] : NULL);
		fprintf(o->f, ",%s=\"", label);
		if (set == &a->cgroups) {
			snprintf(idbuf, sizeof(idbuf), "id:%llu", (unsigned long long)e->k.id);
			expo_value(o, a->cgroup_paths && a->cgroup_paths[i] ? a->cgroup_paths[i] : idbuf);
		} else {
			expo_value(o, e->k.comm);
		}
		fprintf(o->f, "\",state=\"%s\"", exp_state_label(e->k.state));
		u64(o, e->v[0]);
	}
}

static void counter(struct expo *o, const char *name, const char *help, uint64_t v)
{
	expo_family(o, name, "counter", help);
	fprintf(o->f, "%s_total %llu\n", name, (unsigned long long)v);
}

static void self(struct expo *o, const struct exp_config *c, const struct exp_agg *a,
		 const struct exp_counters *k)
{
	static const char *const groupings[EXP_G_N] = {
		[EXP_G_LISTENER] = "listener", [EXP_G_CGROUP] = "cgroup", [EXP_G_COMM] = "comm",
		[EXP_G_EPHEMERAL] = "ephemeral", [EXP_G_UDP] = "udp_drops",
		[EXP_G_DESTINATION] = "destination",
	};

	expo_family(o, "sockdiag_dropped_sockets", "counter",
	       "Sockets left out of a bounded grouping because its cap was reached.");
	for (unsigned g = 0; g < EXP_G_N; g++)
		fprintf(o->f, "sockdiag_dropped_sockets_total{grouping=\"%s\"} %llu\n",
			groupings[g], (unsigned long long)k->dropped[g]);
	expo_family(o, "sockdiag_table_unsupported", "gauge",
	       "1 for each socket table the kernel cannot dump (no diag module).");
	for (size_t n = 0; n < a->n_ns; n++)
		for (unsigned t = 0; t < SDIAG_T_MAX; t++) {
			if (!(c->tables & SDIAG_TABLE_BIT(t)) ||
			    !(a->ns[n].unsupported & SDIAG_TABLE_BIT(t)))
				continue;
			fputs("sockdiag_table_unsupported{", o->f);
			ns_labels(o, &a->ns[n]);
			fprintf(o->f, ",table=\"%s\"} 1\n", sdiag_table_netid(t));
		}
	expo_family(o, "sockdiag_scrape_duration_seconds", "gauge",
	       "Time the last pass over the kernel's socket dumps took.");
	fprintf(o->f, "sockdiag_scrape_duration_seconds %.9g\n", a->duration_s);
	expo_family(o, "sockdiag_scrape_timestamp_seconds", "gauge",
	       "When the last pass ended, in seconds since the epoch.");
	fprintf(o->f, "sockdiag_scrape_timestamp_seconds %.3f\n", a->timestamp);
	expo_family(o, "sockdiag_scrape_sockets", "gauge", "Sockets seen by the last pass.");
	fprintf(o->f, "sockdiag_scrape_sockets %llu\n", (unsigned long long)a->sockets);
	counter(o, "sockdiag_scrape_passes", "Passes over the kernel's socket dumps.", k->passes);
	counter(o, "sockdiag_scrape_requests",
		"Requests for /metrics (concurrent ones share a pass).", k->requests);
	counter(o, "sockdiag_dump_errors",
		"Dumps that failed (not counting unsupported tables), and namespaces that "
		"could not be entered.",
		k->dump_errors);
	expo_family(o, "sockdiag_config_reloads", "counter",
	       "Configuration reloads (SIGHUP) taken or refused.");
	fprintf(o->f, "sockdiag_config_reloads_total{result=\"ok\"} %llu\n",
		(unsigned long long)k->reloads_ok);
	fprintf(o->f, "sockdiag_config_reloads_total{result=\"refused\"} %llu\n",
		(unsigned long long)k->reloads_refused);
}

int exp_render(const struct exp_config *c, const struct exp_agg *a,
	       const struct exp_counters *k, struct exp_life *l, bool openmetrics,
	       char **ret_body, size_t *ret_len)
{
	struct expo o;

	if (expo_open(&o, openmetrics) < 0)
		return -ENOMEM;
	sockets(&o, c, a);
	ports(&o, c, a);
	listeners(&o, c, a);
	tcp(&o, c, a);
	if (c->by_cgroup)
		groups(&o, a, &a->cgroups, "sockdiag_cgroup_sockets", "cgroup",
		       "Inet sockets by cgroup (v2 path) and state; bounded by max-series.");
	if (c->by_comm)
		groups(&o, a, &a->comms, "sockdiag_comm_sockets", "comm",
		       "Sockets by owning process name and state; bounded by max-series.");
	exp_conns_render(&o, c, a);
	if (l)
		exp_life_render(&o, l);
	self(&o, c, a, k);
	return expo_close(&o, ret_body, ret_len);
}
