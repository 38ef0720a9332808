// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Name lookups for the human output, each cached so a dump of 200k sockets
 * costs at most one lookup per distinct port, interface or address.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "cli/fields/names.h"

#define N_SVC_PROTOS 4
#define IFCACHE 1024
#define HOSTCACHE 4096	/* power of two */

struct host_ent {
	uint8_t family;
	uint8_t addr[16];
	char *name;		/* NULL: looked up, no name */
	bool used;
};

struct cg_ent {
	uint64_t id;
	char *path;
};

struct names {
	bool resolve_hosts;
	/* services: per protocol a lazily allocated array indexed by port;
	 * loaded whole on first use; NULL = the port has no name. */
	const char **svc[N_SVC_PROTOS];
	int eph_lo, eph_hi;	/* ip_local_port_range; lo 0 = not read yet */
	const char *proto_names[256];
	bool proto_done[256];
	char ifname[IFCACHE][IF_NAMESIZE];
	uint8_t ifstate[IFCACHE];	/* 0 unknown, 1 name, 2 none */
	char ifscratch[IF_NAMESIZE];
	struct host_ent *hosts;
	struct cg_ent *cgroups;
	size_t n_cgroups;
	bool cgroups_done;
};

struct names *names_new(bool resolve_hosts)
{
	struct names *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->resolve_hosts = resolve_hosts;
	return n;
}

void names_free(struct names *n)
{
	if (!n)
		return;
	for (int p = 0; p < N_SVC_PROTOS; p++) {
		if (!n->svc[p])
			continue;
		for (size_t i = 0; i < 65536; i++)
			if (n->svc[p][i])
				free((char *)n->svc[p][i]);
		free(n->svc[p]);
	}
	for (int i = 0; i < 256; i++)
		free((char *)n->proto_names[i]);
	if (n->hosts) {
		for (size_t i = 0; i < HOSTCACHE; i++)
			free(n->hosts[i].name);
		free(n->hosts);
	}
	for (size_t i = 0; i < n->n_cgroups; i++)
		free(n->cgroups[i].path);
	free(n->cgroups);
	free(n);
}

static void read_ephemeral(struct names *n)
{
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "re");

	n->eph_lo = 1024;
	n->eph_hi = 4999;
	if (!f)
		return;
	if (fscanf(f, "%d %d", &n->eph_lo, &n->eph_hi) != 2) {
		n->eph_lo = 1024;
		n->eph_hi = 4999;
	}
	fclose(f);
}

const char *names_service(struct names *n, uint16_t port, const char *proto)
{
	static const char *const protos[N_SVC_PROTOS] = { "tcp", "udp", "sctp", "dccp" };
	const char **tab;
	struct servent *se;
	int p;

	for (p = 0; p < N_SVC_PROTOS; p++)
		if (!strcmp(proto, protos[p]))
			break;
	if (p == N_SVC_PROTOS || port == 0)
		return NULL;
	if (!n->eph_lo)
		read_ephemeral(n);
	if (port >= n->eph_lo && port <= n->eph_hi)
		return NULL;
	if (!n->svc[p]) {
		/* Read the services database once per protocol: getservbyport
		 * would scan /etc/services again for every distinct port. The
		 * first entry for a port wins, as with getservbyport. */
		n->svc[p] = calloc(65536, sizeof(*n->svc[p]));
		if (!n->svc[p])
			return NULL;
		setservent(1);
		while ((se = getservent())) {
			uint16_t sp = ntohs((uint16_t)se->s_port);

			if (se->s_name && se->s_proto && !strcmp(se->s_proto, proto) &&
			    !n->svc[p][sp])
				n->svc[p][sp] = strdup(se->s_name);
		}
		endservent();
	}
	tab = n->svc[p];
	return tab[port];
}

const char *names_ipproto(struct names *n, unsigned proto)
{
	struct protoent *pe;

	if (proto > 255)
		return NULL;
	if (!n->proto_done[proto]) {
		pe = getprotobynumber((int)proto);
		n->proto_names[proto] = pe && pe->p_name ? strdup(pe->p_name) : NULL;
		n->proto_done[proto] = true;
	}
	return n->proto_names[proto];
}

const char *names_ifname(struct names *n, unsigned ifindex)
{
	if (!ifindex)
		return NULL;
	if (ifindex >= IFCACHE)
		return if_indextoname(ifindex, n->ifscratch);
	if (!n->ifstate[ifindex])
		n->ifstate[ifindex] = if_indextoname(ifindex, n->ifname[ifindex]) ? 1 : 2;
	return n->ifstate[ifindex] == 1 ? n->ifname[ifindex] : NULL;
}

const char *names_host(struct names *n, int family, const uint8_t *addr)
{
	size_t alen = family == AF_INET ? 4 : 16, h = 5381, i;
	union {
		struct sockaddr_in sin;
		struct sockaddr_in6 sin6;
	} sa;
	char host[NI_MAXHOST];
	struct host_ent *e;

	if (!n->resolve_hosts)
		return NULL;
	if (!n->hosts) {
		n->hosts = calloc(HOSTCACHE, sizeof(*n->hosts));
		if (!n->hosts)
			return NULL;
	}
	for (i = 0; i < alen; i++)
		h = h * 33 + addr[i];
	for (i = 0; i < HOSTCACHE; i++) {
		e = &n->hosts[(h + i) & (HOSTCACHE - 1)];
		if (!e->used)
			break;
		if (e->family == family && !memcmp(e->addr, addr, alen))
			return e->name;
	}
	memset(&sa, 0, sizeof(sa));
	if (family == AF_INET) {
		sa.sin.sin_family = AF_INET;
		memcpy(&sa.sin.sin_addr, addr, 4);
	} else {
		sa.sin6.sin6_family = AF_INET6;
		memcpy(&sa.sin6.sin6_addr, addr, 16);
	}
	if (getnameinfo((struct sockaddr *)&sa,
			family == AF_INET ? sizeof(sa.sin) : sizeof(sa.sin6), host, sizeof(host),
			NULL, 0, NI_NAMEREQD) != 0)
		host[0] = '\0';
	if (i == HOSTCACHE)	/* cache full: answer uncached */
		return NULL;
	e->used = true;
	e->family = (uint8_t)family;
	memcpy(e->addr, addr, alen);
	e->name = host[0] ? strdup(host) : NULL;
	return e->name;
}

const char *names_nl_owner(struct names *n, int32_t portid, char buf[64])
{
	char path[64], comm[32];
	FILE *f;
	int ok;

	(void)n;
	if (portid == 0)
		return "kernel";
	if (portid < 0)
		return NULL;
	snprintf(path, sizeof(path), "/proc/%d/stat", portid);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	ok = fscanf(f, "%*d (%31[^)])", comm) == 1;
	fclose(f);
	if (!ok)
		return NULL;
	snprintf(buf, 64, "%s/%d", comm, portid);
	return buf;
}

const char *names_nl_proto_ss(unsigned proto)
{
	static const char *const tab[] = {
		[0] = "rtnl",	     [1] = "unused",	 [2] = "usersock",   [3] = "fw",
		[4] = "tcpdiag",     [5] = "nflog",	 [6] = "xfrm",	     [7] = "selinux",
		[8] = "iscsi",	     [9] = "audit",	 [10] = "fiblookup", [11] = "connector",
		[12] = "nft",	     [13] = "ip6fw",	 [14] = "dec-rt",    [15] = "uevent",
		[16] = "genl",	     [18] = "scsi-trans", [19] = "ecryptfs", [20] = "rdma",
		[21] = "crypto",     [22] = "smc",
	};

	return proto < sizeof(tab) / sizeof(tab[0]) ? tab[proto] : NULL;
}

const char *names_ethertype(unsigned type)
{
	static const struct {
		unsigned type;
		const char *name;
	} tab[] = {
		{ 0x0001, "802_3" }, { 0x0002, "ax25" },  { 0x0004, "802_2" },
		{ 0x0005, "snap" },  { 0x0800, "ip" },	  { 0x0805, "x25" },
		{ 0x0806, "arp" },   { 0x08ff, "bpq" },	  { 0x8035, "rarp" },
		{ 0x8100, "802.1Q" }, { 0x8137, "ipx" },  { 0x86dd, "ipv6" },
		{ 0x8863, "ppp_disc" }, { 0x8864, "ppp_ses" }, { 0x8847, "mpls_uc" },
		{ 0x8848, "mpls_mc" }, { 0x888e, "802.1X" }, { 0x88a8, "802.1ad" },
		{ 0x88cc, "lldp" },  { 0x88f7, "ptp" },	  { 0x6558, "teb" },
	};

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (tab[i].type == type)
			return tab[i].name;
	return NULL;
}

/* ---- cgroup ids: the id of a cgroup v2 directory is its inode number ---- */

static int cg_add(struct names *n, size_t *cap, uint64_t id, const char *path)
{
	if (n->n_cgroups == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct cg_ent *ne = realloc(n->cgroups, ncap * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		n->cgroups = ne;
		*cap = ncap;
	}
	n->cgroups[n->n_cgroups].path = strdup(path);
	if (!n->cgroups[n->n_cgroups].path)
		return -ENOMEM;
	n->cgroups[n->n_cgroups++].id = id;
	return 0;
}

static void cg_walk(struct names *n, size_t *cap, int dfd, char *path, size_t plen, int depth)
{
	struct dirent *de;
	DIR *d;

	if (depth > 32)
		return;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	while ((de = readdir(d))) {
		struct stat st;
		size_t l = strlen(de->d_name);
		int sub;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (plen + 1 + l + 1 > 4096)
			continue;
		sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sub < 0)
			continue;
		if (fstat(sub, &st) < 0) {
			close(sub);
			continue;
		}
		path[plen] = '/';
		memcpy(path + plen + 1, de->d_name, l + 1);
		if (cg_add(n, cap, st.st_ino, path) < 0) {
			close(sub);
			break;
		}
		cg_walk(n, cap, sub, path, plen + 1 + l, depth + 1);
		path[plen] = '\0';
	}
	closedir(d);
}

/* Where cgroup v2 is mounted (/sys/fs/cgroup, or .../unified in hybrid setups). */
static bool cgroup2_mount(char *buf, size_t size)
{
	char line[512], dev[128], dir[256], type[64];
	bool found = false;
	FILE *f = fopen("/proc/self/mounts", "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s %255s %63s", dev, dir, type) == 3 &&
		    !strcmp(type, "cgroup2") && strlen(dir) < size) {
			strcpy(buf, dir);
			found = true;
		}
	fclose(f);
	return found;
}

static int cg_cmp(const void *a, const void *b)
{
	const struct cg_ent *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

const char *names_cgroup(struct names *n, uint64_t id)
{
	size_t lo = 0, hi, cap = 0;

	if (!n->cgroups_done) {
		char *path = malloc(4096);
		struct stat st;
		int fd;

		n->cgroups_done = true;
		fd = path && cgroup2_mount(path, 4096) ?
			     open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
		if (path && fd >= 0 && fstat(fd, &st) == 0 && cg_add(n, &cap, st.st_ino, "/") == 0) {
			path[0] = '\0';
			cg_walk(n, &cap, fd, path, 0, 0);
			fd = -1;	/* closed by the walk */
		}
		if (fd >= 0)
			close(fd);
		free(path);
		qsort(n->cgroups, n->n_cgroups, sizeof(*n->cgroups), cg_cmp);
	}
	hi = n->n_cgroups;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (n->cgroups[mid].id == id)
			return n->cgroups[mid].path;
		if (n->cgroups[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}
