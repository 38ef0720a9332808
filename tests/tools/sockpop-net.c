/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sockpop: netlink, packet and inet sockets (see sockpop.c for the options). */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>

#include "tests/tools/sockpop.h"

/* ---- netlink ------------------------------------------------------------------------ */

struct nl_opts {
	int proto;
	unsigned groups[32];
	unsigned n_groups;
	bool unbound, pktinfo, no_enobufs, do_connect;
	uint32_t connect_portid;
};

static int parse_nl_proto(const char *s)
{
	static const struct {
		const char *name;
		int proto;
	} names[] = { { "route", 0 }, { "sock_diag", 4 }, { "uevent", 15 }, { "generic", 16 } };
	char *end;
	long v;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i].name))
			return names[i].proto;
	v = strtol(s, &end, 0);
	return *s && !*end && v >= 0 && v < 32 ? (int)v : -EINVAL;
}

static int parse_nl_opts(char *arg, struct nl_opts *o)
{
	char *opts = pop_split_opts(arg), *tok, *save = NULL;

	memset(o, 0, sizeof(*o));
	o->proto = parse_nl_proto(arg);
	if (o->proto < 0)
		return o->proto;
	for (tok = opts ? strtok_r(opts, ",", &save) : NULL; tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strncmp(tok, "groups=", 7)) {
			char *g, *gs = NULL;

			for (g = strtok_r(tok + 7, "+", &gs); g; g = strtok_r(NULL, "+", &gs)) {
				unsigned long v = strtoul(g, NULL, 0);

				if (!v || o->n_groups == 32)
					return -EINVAL;
				o->groups[o->n_groups++] = (unsigned)v;
			}
		} else if (!strcmp(tok, "unbound")) {
			o->unbound = true;
		} else if (!strcmp(tok, "pktinfo")) {
			o->pktinfo = true;
		} else if (!strcmp(tok, "no_enobufs")) {
			o->no_enobufs = true;
		} else if (!strncmp(tok, "connect=", 8)) {
			o->do_connect = true;
			o->connect_portid = (uint32_t)strtoul(tok + 8, NULL, 0);
		} else {
			return -EINVAL;
		}
	}
	return 0;
}

static int nl_setup(int fd, const struct nl_opts *o, struct sockaddr_nl *ret_local)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	socklen_t sl = sizeof(sa);
	int one = 1;

	for (unsigned i = 0; i < o->n_groups && !o->unbound; i++)
		if (o->groups[i] <= 32)
			sa.nl_groups |= 1U << (o->groups[i] - 1);
	if (!o->unbound && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	for (unsigned i = 0; i < o->n_groups; i++)
		if ((o->groups[i] > 32 || o->unbound) &&
		    setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &o->groups[i],
			       sizeof(o->groups[i])) < 0)
			return -errno;
	if (o->pktinfo && setsockopt(fd, SOL_NETLINK, NETLINK_PKTINFO, &one, sizeof(one)) < 0)
		return -errno;
	if (o->no_enobufs && setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof(one)) < 0)
		return -errno;
	if (o->do_connect) {
		struct sockaddr_nl peer = { .nl_family = AF_NETLINK, .nl_pid = o->connect_portid };

		if (connect(fd, (struct sockaddr *)&peer, sizeof(peer)) < 0)
			return -errno;
	}
	if (getsockname(fd, (struct sockaddr *)ret_local, &sl) < 0)
		return -errno;
	return 0;
}

int do_netlink(struct pop *p, char *arg)
{
	struct sockaddr_nl local;
	struct nl_opts o;
	int fd, r;

	r = parse_nl_opts(arg, &o);
	if (r < 0)
		return r;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, o.proto);
	if (fd < 0)
		return -errno;
	r = nl_setup(fd, &o, &local);
	if (r < 0) {
		close(fd);
		return r;
	}
	pop_begin_obj(p, "netlink", fd);
	fprintf(p->out, ",\"protocol\":%d,\"portid\":%u,\"groups\":[", o.proto, local.nl_pid);
	for (unsigned i = 0; i < o.n_groups; i++)
		fprintf(p->out, "%s%u", i ? "," : "", o.groups[i]);
	fputc(']', p->out);
	pop_end_obj(p);
	return 0;
}

/* ---- packet ------------------------------------------------------------------------- */

struct pkt_opts {
	int type;
	uint16_t proto; /* host order */
	char dev[IF_NAMESIZE];
	int fanout; /* -1 none */
	bool bpf, ring, promisc;
};

static int parse_pkt_opts(char *arg, struct pkt_opts *o)
{
	char *opts = pop_split_opts(arg), *tok, *save = NULL;

	memset(o, 0, sizeof(*o));
	o->fanout = -1;
	o->proto = ETH_P_ALL;
	if (!strcmp(arg, "raw"))
		o->type = SOCK_RAW;
	else if (!strcmp(arg, "dgram"))
		o->type = SOCK_DGRAM;
	else
		return -EINVAL;
	for (tok = opts ? strtok_r(opts, ",", &save) : NULL; tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "proto=all"))
			o->proto = ETH_P_ALL;
		else if (!strncmp(tok, "proto=", 6))
			o->proto = (uint16_t)strtoul(tok + 6, NULL, 0);
		else if (!strncmp(tok, "dev=", 4))
			snprintf(o->dev, sizeof(o->dev), "%s", tok + 4);
		else if (!strncmp(tok, "fanout=", 7))
			o->fanout = (int)(strtoul(tok + 7, NULL, 0) & 0xffff);
		else if (!strcmp(tok, "bpf"))
			o->bpf = true;
		else if (!strcmp(tok, "ring"))
			o->ring = true;
		else if (!strcmp(tok, "promisc"))
			o->promisc = true;
		else
			return -EINVAL;
	}
	if ((o->fanout >= 0 || o->promisc) && !o->dev[0])
		return -EINVAL; /* fanout needs a bound, running socket */
	return 0;
}

static int attach_bpf(int fd)
{
	/* Accept IPv4 (ethertype at offset 12 of an Ethernet frame), drop the rest. */
	static struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 12),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IP, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 0xffff),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct sock_fprog prog = { .len = sizeof(insns) / sizeof(insns[0]), .filter = insns };

	return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) < 0 ? -errno : 0;
}

static int setup_ring(int fd)
{
	int ver = TPACKET_V3;
	struct tpacket_req3 req = {
		.tp_block_size = 1 << 16,
		.tp_block_nr = 2,
		.tp_frame_size = 1 << 11,
		.tp_frame_nr = 2 * (1 << 16) / (1 << 11),
		.tp_retire_blk_tov = 60,
	};

	if (setsockopt(fd, SOL_PACKET, PACKET_VERSION, &ver, sizeof(ver)) < 0)
		return -errno;
	return setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) < 0 ? -errno : 0;
}

static int pkt_setup(int fd, const struct pkt_opts *o, int *ret_ifindex)
{
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(o->proto) };
	int r;

	if (o->dev[0]) {
		ll.sll_ifindex = (int)if_nametoindex(o->dev);
		if (!ll.sll_ifindex)
			return -ENODEV;
	}
	if (o->bpf && (r = attach_bpf(fd)) < 0)
		return r;
	if (o->ring && (r = setup_ring(fd)) < 0)
		return r;
	if (bind(fd, (struct sockaddr *)&ll, sizeof(ll)) < 0)
		return -errno;
	if (o->promisc) {
		struct packet_mreq mr = { .mr_ifindex = ll.sll_ifindex,
					  .mr_type = PACKET_MR_PROMISC };

		if (setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)) < 0)
			return -errno;
	}
	if (o->fanout >= 0) {
		int v = o->fanout | (PACKET_FANOUT_HASH << 16);

		if (setsockopt(fd, SOL_PACKET, PACKET_FANOUT, &v, sizeof(v)) < 0)
			return -errno;
	}
	*ret_ifindex = ll.sll_ifindex;
	return 0;
}

int do_packet(struct pop *p, char *arg)
{
	struct pkt_opts o;
	int fd, ifindex = 0, r;

	r = parse_pkt_opts(arg, &o);
	if (r < 0)
		return r;
	/* Protocol 0 at socket(): nothing is received before bind() sets it. */
	fd = socket(AF_PACKET, o.type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	r = pkt_setup(fd, &o, &ifindex);
	if (r < 0) {
		close(fd);
		return r;
	}
	pop_begin_obj(p, o.type == SOCK_RAW ? "packet_raw" : "packet_dgram", fd);
	fprintf(p->out, ",\"ethertype\":%u,\"ifindex\":%d,\"fanout\":%d,\"bpf\":%s,\"ring\":%s",
		o.proto, ifindex, o.fanout >= 0 ? o.fanout | (PACKET_FANOUT_HASH << 16) : -1,
		o.bpf ? "true" : "false", o.ring ? "true" : "false");
	pop_end_obj(p);
	return 0;
}

/* ---- inet ---------------------------------------------------------------------------- */

/* "1.2.3.4:80" or "[::1]:80". */
static int parse_inet(const char *s, struct sockaddr_storage *ss, socklen_t *ret_len)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon = strrchr(s, ':');
	size_t hl;
	unsigned long port;

	if (!colon)
		return -EINVAL;
	hl = (size_t)(colon - s);
	if (hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, hl);
	host[hl] = '\0';
	port = strtoul(colon + 1, NULL, 10);
	memset(ss, 0, sizeof(*ss));
	if (host[0] == '[' && hl > 2 && host[hl - 1] == ']') {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		host[hl - 1] = '\0';
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		*ret_len = sizeof(*s6);
		return inet_pton(AF_INET6, host + 1, &s6->sin6_addr) == 1 ? 0 : -EINVAL;
	}
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

	s4->sin_family = AF_INET;
	s4->sin_port = htons((uint16_t)port);
	*ret_len = sizeof(*s4);
	return inet_pton(AF_INET, host, &s4->sin_addr) == 1 ? 0 : -EINVAL;
}

static unsigned local_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t l = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &l) < 0)
		return 0;
	return ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port :
						((struct sockaddr_in *)&ss)->sin_port);
}

static void put_inet(struct pop *p, const char *kind, int fd)
{
	pop_begin_obj(p, kind, fd);
	fprintf(p->out, ",\"port\":%u", local_port(fd));
	pop_end_obj(p);
}

static int inet_socket(const char *addr, int type, struct sockaddr_storage *ss, socklen_t *sl)
{
	int fd, one = 1, r = parse_inet(addr, ss, sl);

	if (r < 0)
		return r;
	fd = socket(ss->ss_family, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)ss, *sl) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

int do_tcp(struct pop *p, const char *arg, bool pair)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int lfd, cfd, afd;

	lfd = inet_socket(arg, SOCK_STREAM, &ss, &sl);
	if (lfd < 0)
		return lfd;
	if (listen(lfd, 16) < 0 || getsockname(lfd, (struct sockaddr *)&ss, &sl) < 0)
		return -errno;
	put_inet(p, "tcp_listen", lfd);
	if (!pair)
		return 0;
	cfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (cfd < 0 || connect(cfd, (struct sockaddr *)&ss, sl) < 0)
		return -errno;
	afd = accept(lfd, NULL, NULL);
	if (afd < 0)
		return -errno;
	put_inet(p, "tcp_client", cfd);
	put_inet(p, "tcp_accepted", afd);
	return 0;
}

int do_udp(struct pop *p, char *arg)
{
	char *opts = pop_split_opts(arg);
	struct sockaddr_storage ss, peer;
	socklen_t sl, pl;
	int fd, r;

	fd = inet_socket(arg, SOCK_DGRAM, &ss, &sl);
	if (fd < 0)
		return fd;
	if (opts) {
		if (strncmp(opts, "connect=", 8))
			return -EINVAL;
		r = parse_inet(opts + 8, &peer, &pl);
		if (r < 0)
			return r;
		if (connect(fd, (struct sockaddr *)&peer, pl) < 0)
			return -errno;
	}
	put_inet(p, "udp", fd);
	return 0;
}
