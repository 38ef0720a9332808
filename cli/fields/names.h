/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Names the fields print: services, protocols, interfaces, hosts, netlink
 * owners, cgroups (names.c, each cached), and the record's family and timer
 * names (fields_sock.c). */
#ifndef SOCKDIAG_CLI_NAMES_H
#define SOCKDIAG_CLI_NAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "sockdiag.h"

struct names;

struct names *names_new(bool resolve_hosts);
void names_free(struct names *n);
/* Service name of a port for "tcp", "udp", "sctp"...; NULL when none, or when
 * the port is in ip_local_port_range (as ss: such names are noise). */
const char *names_service(struct names *n, uint16_t port, const char *proto);
/* Protocol name ("icmp", ...) for a raw socket's protocol number, or NULL. */
const char *names_ipproto(struct names *n, unsigned proto);
/* Interface name of an index, or NULL. */
const char *names_ifname(struct names *n, unsigned ifindex);
/* Reverse DNS of an address (only when resolve_hosts), or NULL. */
const char *names_host(struct names *n, int family, const uint8_t *addr);
/* "comm/pid" of the process a netlink portid belongs to, like ss; "kernel"
 * for 0; NULL when not a process. Written into buf (64 bytes). */
const char *names_nl_owner(struct names *n, int32_t portid, char buf[64]);
/* ss's short names of netlink protocols ("rtnl", "tcpdiag", "genl", ...). */
const char *names_nl_proto_ss(unsigned proto);
/* The cgroup v2 path of a cgroup id, or NULL. */
const char *names_cgroup(struct names *n, uint64_t id);
/* ss's name of an ethertype ("ip", "arp", "ipv6", ...), or NULL. */
const char *names_ethertype(unsigned type);

/* JSON "family" value of a record ("inet", "unix", ...). */
const char *out_family_name(const struct sdiag_sock *s);
/* Timer names as ss prints them (0 off, 1 on, 2 keepalive, ...). */
const char *out_timer_name(unsigned timer);
/* A record's time, to the microsecond: for JSON UTC in ISO 8601
 * ("2026-01-02T03:04:05.000006Z", no quotes), for a table the local time of
 * day ("04:04:05.000006"). Returns its length (0: no such time). */
size_t out_time_fmt(char buf[48], const struct timespec *ts, bool json);

#endif
