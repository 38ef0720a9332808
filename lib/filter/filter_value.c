// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Filter values: states, ports, hosts, devices, marks, names. Everything is
 * resolved here, once, so that matching stays pure (cgroups: filter_cgroup.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/capability.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "lib/filter/filter_parse.h"

bool sd_filter_have_net_admin(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { { 0 } };

	if (syscall(SYS_capget, &hdr, data) < 0)
		return false;
	return data[CAP_NET_ADMIN / 32].effective & (1U << (CAP_NET_ADMIN % 32));
}

/* ---- states ------------------------------------------------------------------ */

#define B(s) SDIAG_STATE_BIT(SDIAG_SS_##s)

int sd_fparse_state(struct sd_fparser *p, const struct sd_ftok *t, uint32_t *ret)
{
	static const struct {
		const char *name;
		uint32_t mask;
	} names[] = {
		{ "established", B(ESTABLISHED) },
		{ "estab", B(ESTABLISHED) },
		{ "syn-sent", B(SYN_SENT) },
		{ "syn-recv", B(SYN_RECV) },
		{ "syn-rcv", B(SYN_RECV) },
		{ "fin-wait-1", B(FIN_WAIT1) },
		{ "fin-wait-2", B(FIN_WAIT2) },
		{ "time-wait", B(TIME_WAIT) },
		{ "closed", B(CLOSE) },
		{ "close", B(CLOSE) },
		{ "unconnected", B(CLOSE) },
		{ "unconn", B(CLOSE) },
		{ "close-wait", B(CLOSE_WAIT) },
		{ "last-ack", B(LAST_ACK) },
		{ "listening", B(LISTEN) },
		{ "listen", B(LISTEN) },
		{ "closing", B(CLOSING) },
		{ "bound-inactive", B(BOUND_INACTIVE) },
		{ "all", SDIAG_STATES_ALL },
		{ "connected", SDIAG_STATES_ALL & ~(B(CLOSE) | B(LISTEN)) },
		{ "synchronized", SDIAG_STATES_ALL & ~(B(CLOSE) | B(LISTEN) | B(SYN_SENT)) },
		{ "bucket", B(SYN_RECV) | B(TIME_WAIT) },
		{ "big", SDIAG_STATES_ALL & ~(B(SYN_RECV) | B(TIME_WAIT)) },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcasecmp(t->text, names[i].name)) {
			*ret = names[i].mask;
			return 0;
		}
	if (!strcasecmp(t->text, "new-syn-recv"))
		return sd_ferr(p, t->off, t->len,
			       "'new-syn-recv' is reported as syn-recv: use 'syn-recv'");
	return sd_ferr(p, t->off, t->len,
		       "unknown state '%s' (established, syn-sent, syn-recv, fin-wait-1, "
		       "fin-wait-2, time-wait, closed, close-wait, last-ack, listening, closing, "
		       "bound-inactive, all, connected, synchronized, bucket, big)",
		       t->text);
}

/* ---- numbers ------------------------------------------------------------------- */

/* A whole-word unsigned number (base 0: 0x.. hex). */
static bool parse_u64(const char *s, uint64_t *ret)
{
	unsigned long long v;
	char *end;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return false;
	*ret = v;
	return true;
}

int sd_fparse_port(struct sd_fparser *p, const struct sd_ftok *t, int32_t *ret)
{
	const char *s = t->text;
	struct servent *tcp, *udp;
	int tport = -1;
	uint64_t v;

	if (*s == ':')
		s++;
	if (!strcmp(s, "*")) {
		*ret = -1;
		return 0;
	}
	if (!*s)
		return sd_ferr(p, t->off, t->len, "expected a port after ':'");
	if (*s >= '0' && *s <= '9') {
		if (!parse_u64(s, &v))
			return sd_ferr(p, t->off, t->len, "bad port '%s'", s);
		if (v > 65535)
			return sd_ferr(p, t->off, t->len, "port %s out of range (0-65535)", s);
		*ret = (int32_t)v;
		return 0;
	}
	tcp = getservbyname(s, "tcp");
	if (tcp)
		tport = ntohs((uint16_t)tcp->s_port);
	udp = getservbyname(s, "udp");
	if (udp && tport >= 0 && ntohs((uint16_t)udp->s_port) != tport)
		return sd_ferr(p, t->off, t->len, "ambiguous service '%s' (tcp and udp differ)", s);
	if (udp && tport < 0)
		tport = ntohs((uint16_t)udp->s_port);
	if (tport < 0)
		return sd_ferr(p, t->off, t->len, "unknown port or service name '%s'", s);
	*ret = tport;
	return 0;
}

int sd_fparse_number(struct sd_fparser *p, const struct sd_ftok *t, enum sd_ffield field,
		     uint64_t *ret)
{
	uint64_t v;

	if (parse_u64(t->text, &v)) {
		if ((field == SD_FLD_UID || field == SD_FLD_INODE) && v > UINT32_MAX)
			return sd_ferr(p, t->off, t->len, "'%s' out of range (0-4294967295)",
				       t->text);
		*ret = v;
		return 0;
	}
	if (field == SD_FLD_UID) {
		struct passwd *pw = getpwnam(t->text);

		if (pw) {
			*ret = pw->pw_uid;
			return 0;
		}
		return sd_ferr(p, t->off, t->len, "unknown user '%s'", t->text);
	}
	return sd_ferr(p, t->off, t->len, "expected a number, found '%s'", t->text);
}

int sd_fparse_dev(struct sd_fparser *p, const struct sd_ftok *t, uint32_t *ret)
{
	unsigned idx = if_nametoindex(t->text);
	uint64_t v;

	if (idx) {
		*ret = idx;
		return 0;
	}
	if (parse_u64(t->text, &v) && v <= UINT32_MAX) {
		*ret = (uint32_t)v;
		return 0;
	}
	return sd_ferr(p, t->off, t->len, "unknown device '%s'", t->text);
}

int sd_fparse_mark(struct sd_fparser *p, const struct sd_ftok *t, uint32_t *ret_mark,
		   uint32_t *ret_mask)
{
	char buf[64];
	char *slash;
	uint64_t mark, mask = UINT32_MAX;

	if (strlen(t->text) >= sizeof(buf))
		return sd_ferr(p, t->off, t->len, "bad mark '%s'", t->text);
	strcpy(buf, t->text);
	slash = strchr(buf, '/');
	if (slash) {
		*slash = '\0';
		if (!parse_u64(slash + 1, &mask) || mask > UINT32_MAX)
			return sd_ferr(p, t->off + (size_t)(slash - buf) + 1, strlen(slash + 1),
				       "bad mask '%s' (a 32-bit number)", slash + 1);
	}
	if (!parse_u64(buf, &mark) || mark > UINT32_MAX)
		return sd_ferr(p, t->off, strlen(buf), "bad mark '%s' (a 32-bit number)", buf);
	/* The kernel reports marks only to CAP_NET_ADMIN and rejects MARK_COND
	 * without it: say so instead of matching nothing (ss's bug). */
	if (!sd_filter_have_net_admin()) {
		if (p->err && !p->err_set) {
			p->err_set = true;
			p->err->offset = t->off;
			p->err->len = t->len;
			snprintf(p->err->msg, sizeof(p->err->msg),
				 "fwmark needs CAP_NET_ADMIN (the kernel shows marks only to it)");
		}
		return -EPERM;
	}
	*ret_mark = (uint32_t)mark;
	*ret_mask = (uint32_t)mask;
	return 0;
}

/* ---- socket kinds, netlink ----------------------------------------------------------- */

int sd_fparse_tables(struct sd_fparser *p, const struct sd_ftok *t, uint32_t *ret)
{
	uint32_t m = sdiag_table_mask_by_name(t->text);

	if (!strcmp(t->text, "nl"))
		m = SDIAG_TABLE_BIT(SDIAG_T_NETLINK);
	for (unsigned i = 0; !m && i < SDIAG_T_MAX; i++) {
		const char *n = sdiag_table_netid((enum sdiag_table)i);

		if (n && !strcmp(n, t->text))
			m = SDIAG_TABLE_BIT(i);
	}
	if (!m)
		return sd_ferr(p, t->off, t->len,
			       "unknown socket kind '%s' (tcp, udp, udplite, raw, mptcp, sctp, "
			       "inet, unix, u_str, u_dgr, u_seq, netlink, packet, vsock, xdp, "
			       "tipc, smc)",
			       t->text);
	*ret = m;
	return 0;
}

int sd_fparse_nlproto(struct sd_fparser *p, const struct sd_ftok *t, uint32_t *ret)
{
	static const struct {
		const char *name;
		uint32_t proto;
	} aliases[] = {
		{ "rtnl", 0 }, { "tcpdiag", 4 }, { "inet_diag", 4 }, { "nflog", 5 },
		{ "nft", 12 }, { "kobj", 15 },	 { "genl", 16 },
	};
	uint64_t v;

	if (parse_u64(t->text, &v)) {
		if (v > 31)
			return sd_ferr(p, t->off, t->len, "netlink protocol %s out of range (0-31)",
				       t->text);
		*ret = (uint32_t)v;
		return 0;
	}
	for (unsigned i = 0; i < 32; i++) {
		const char *n = sdiag_netlink_proto_name(i);

		if (n && !strcasecmp(n, t->text)) {
			*ret = i;
			return 0;
		}
	}
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (!strcasecmp(aliases[i].name, t->text)) {
			*ret = aliases[i].proto;
			return 0;
		}
	return sd_ferr(p, t->off, t->len,
		       "unknown netlink protocol '%s' (route, sock_diag, generic, 0-31, ...)",
		       t->text);
}

int sd_fparse_group(struct sd_fparser *p, const struct sd_ftok *t, uint32_t *ret_group,
		    bool *ret_rtnl)
{
	const char *s = t->text;
	uint64_t v;

	if (parse_u64(s, &v)) {
		if (v < 1 || v > UINT32_MAX)
			return sd_ferr(p, t->off, t->len, "group %s out of range (1-4294967295)",
				       s);
		*ret_group = (uint32_t)v;
		*ret_rtnl = false;
		return 0;
	}
	if (!strncasecmp(s, "rtnlgrp_", 8))
		s += 8;
	for (unsigned g = 1; g < 64; g++) {
		const char *n = sdiag_rtnl_group_name(g);

		if (n && !strcasecmp(n, s)) {
			*ret_group = g;
			*ret_rtnl = true;
			return 0;
		}
	}
	return sd_ferr(p, t->off, t->len,
		       "unknown group '%s' (a number, or an rtnetlink group such as link)",
		       t->text);
}

/* ---- autobound --------------------------------------------------------------------- */

int sd_fparse_autobound(struct sd_fparser *p, const struct sd_ftok *t, struct sd_fnode **ret)
{
	FILE *fp = fopen("/proc/sys/net/ipv4/ip_local_port_range", "re");
	unsigned lo = 32768, hi = 60999;
	struct sd_fnode *n;

	(void)p;
	(void)t;
	if (fp) {
		unsigned a, b;

		if (fscanf(fp, "%u %u", &a, &b) == 2 && a <= b && b <= 65535) {
			lo = a;
			hi = b;
		}
		fclose(fp);
	}
	n = sd_fnode_new(SD_F_AUTOBOUND);
	if (!n)
		return -ENOMEM;
	n->u.range.lo = (uint16_t)lo;
	n->u.range.hi = (uint16_t)hi;
	*ret = n;
	return 0;
}
