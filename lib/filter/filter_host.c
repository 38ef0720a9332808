// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * HOST values of src/dst:
 *
 *   inet    [inet:|inet6:] ADDR[/PLEN][:PORT], [V6ADDR][/PLEN][:PORT], *[:PORT], :PORT,
 *           HOSTNAME[:PORT] (every address it resolves to; ss keeps only the first
 *           in its bytecode). An unbracketed IPv6 address has no port.
 *   unix    unix:GLOB, or any value starting with '/' or '@' (abstract names).
 *   netlink netlink:PROTO[:PORTID]   (PORTID a number or "kernel"; * for any)
 *   packet  link:PROTO[:IFACE]        (ethertype name or number; * for any)
 *   vsock   vsock:CID[:PORT]
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/socket.h>

#include "lib/filter/filter_parse.h"

static int or_append(struct sd_fnode **chain, struct sd_fnode *n)
{
	struct sd_fnode *o;

	if (!*chain) {
		*chain = n;
		return 0;
	}
	o = sd_fnode_new(SD_F_OR);
	if (!o)
		return -ENOMEM;
	o->a = n;
	o->b = *chain;
	*chain = o;
	return 0;
}

static struct sd_fnode *host_node(enum sd_fdir dir, uint8_t family, uint8_t plen, int32_t port,
				  const void *addr)
{
	struct sd_fnode *n = sd_fnode_new(SD_F_HOST);

	if (!n)
		return NULL;
	n->dir = (uint8_t)dir;
	n->u.host.family = family;
	n->u.host.plen = plen;
	n->u.host.port = port;
	if (addr)
		memcpy(n->u.host.addr, addr, family == AF_INET6 ? 16 : 4);
	return n;
}

static int resolve_name(struct sd_fparser *p, size_t off, size_t len, const char *name, int family,
			enum sd_fdir dir, int32_t port, struct sd_fnode **ret)
{
	struct addrinfo hints = { .ai_family = family, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL, *ai;
	struct sd_fnode *chain = NULL;
	int r, gai;

	if (p->flags & SD_FPARSE_OFFLINE)
		return sd_ferr(p, off, len, "cannot resolve host '%s' (offline)", name);
	gai = getaddrinfo(name, NULL, &hints, &res);
	if (gai)
		return sd_ferr(p, off, len, "cannot resolve host '%s' (%s)", name,
			       gai_strerror(gai));
	for (ai = res; ai; ai = ai->ai_next) {
		const void *a =
			ai->ai_family == AF_INET6 ?
				(const void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr :
				(const void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr;
		uint8_t plen = ai->ai_family == AF_INET6 ? 128 : 32;
		struct sd_fnode *n;
		bool dup = false;

		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		for (struct addrinfo *b = res; b != ai; b = b->ai_next)
			if (b->ai_family == ai->ai_family &&
			    !memcmp(b->ai_addr, ai->ai_addr, ai->ai_addrlen))
				dup = true;
		if (dup)
			continue;
		n = host_node(dir, (uint8_t)ai->ai_family, plen, port, a);
		if (!n || or_append(&chain, n) < 0) {
			free(n);
			r = -ENOMEM;
			goto fail;
		}
	}
	freeaddrinfo(res);
	if (!chain)
		return sd_ferr(p, off, len, "host '%s' has no IP address", name);
	*ret = chain;
	return 0;
fail:
	freeaddrinfo(res);
	sd_fnode_free(chain);
	return r;
}

/* ADDR (at addr_off) and an optional PLEN (the text after '/', at plen_off). */
static int parse_addr(struct sd_fparser *p, size_t addr_off, const char *text, size_t plen_off,
		      const char *plen_s, int family, enum sd_fdir dir, int32_t port,
		      struct sd_fnode **ret)
{
	uint8_t addr[16];
	int fam = 0, maxlen;
	uint64_t plen;
	char *end;

	if (family != AF_INET6 && inet_pton(AF_INET, text, addr) == 1)
		fam = AF_INET;
	else if (family != AF_INET && inet_pton(AF_INET6, text, addr) == 1)
		fam = AF_INET6;
	if (!fam && *text && strspn(text, "0123456789.") == strlen(text))
		/* Digits and dots are never a host name (300.1.1.1, 1.2.3.4.5). */
		return sd_ferr(p, addr_off, strlen(text), "malformed IPv4 address '%s'", text);
	if (!fam) {
		if (plen_s)
			return sd_ferr(p, addr_off, strlen(text),
				       "'%s' is not a numeric address (a prefix length needs one)",
				       text);
		return resolve_name(p, addr_off, strlen(text), text, family, dir, port, ret);
	}
	maxlen = fam == AF_INET ? 32 : 128;
	plen = (uint64_t)maxlen;
	if (plen_s) {
		errno = 0;
		plen = strtoull(plen_s, &end, 10);
		if (!*plen_s || *end || errno || plen > (uint64_t)maxlen || *plen_s == '-' ||
		    *plen_s == '+' || *plen_s == ' ')
			return sd_ferr(p, plen_off - 1, strlen(plen_s) + 1,
				       "bad prefix length '/%s' (0-%d for %s)", plen_s, maxlen,
				       fam == AF_INET ? "IPv4" : "IPv6");
	}
	*ret = host_node(dir, (uint8_t)fam, (uint8_t)plen, port, addr);
	return *ret ? 0 : -ENOMEM;
}

/* Cut s at the first c; returns what follows, or NULL. */
static char *cut(char *s, char c)
{
	char *x = strchr(s, c);

	if (!x)
		return NULL;
	*x = '\0';
	return x + 1;
}

static int parse_inet(struct sd_fparser *p, const struct sd_ftok *t, size_t skip, int family,
		      enum sd_fdir dir, struct sd_fnode **ret)
{
	char *s = strdup(t->text + skip), *port_s = NULL, *addr_s = s, *plen_s = NULL;
	size_t off = t->off + skip;
	struct sd_ftok pt;
	int32_t port = -1;
	uint8_t tmp[16];
	int r;

	if (!s)
		return -ENOMEM;
	if (s[0] == '[') {
		/* [ADDR[/PLEN]][/PLEN][:PORT] */
		char *rest = cut(s, ']');

		if (!rest) {
			r = sd_ferr(p, off, strlen(s), "missing ']' after an IPv6 address");
			goto out;
		}
		addr_s = s + 1;
		plen_s = cut(addr_s, '/');
		if (*rest == '/' && !plen_s) {
			plen_s = rest + 1;
			port_s = cut(plen_s, ':');
		} else if (*rest == ':') {
			port_s = rest + 1;
		} else if (*rest) {
			r = sd_ferr(p, off + (size_t)(rest - s), strlen(rest),
				    "expected ':PORT' after ']'");
			goto out;
		}
	} else {
		/* ADDR[/PLEN][:PORT]; an unbracketed IPv6 address keeps its colons,
		 * so a port can follow only a prefix length or a colon-free address. */
		plen_s = cut(s, '/');
		if (plen_s) {
			char *c = strrchr(plen_s, ':');

			if (c) {
				*c = '\0';
				port_s = c + 1;
			}
		} else if (inet_pton(AF_INET6, s, tmp) != 1) {
			char *c = strrchr(s, ':');

			if (c) {
				*c = '\0';
				port_s = c + 1;
			}
		}
	}
	if (port_s) {
		pt.text = port_s;
		pt.off = off + (size_t)(port_s - s);
		pt.len = strlen(port_s);
		if (!*port_s) {
			r = sd_ferr(p, pt.off - 1, 1, "expected a port after ':'");
			goto out;
		}
		r = sd_fparse_port(p, &pt, &port);
		if (r < 0)
			goto out;
	}
	if ((!*addr_s || !strcmp(addr_s, "*")) && !plen_s) {
		*ret = host_node(dir, (uint8_t)family, 0, port, NULL);
		r = *ret ? 0 : -ENOMEM;
		goto out;
	}
	r = parse_addr(p, off + (size_t)(addr_s - s), addr_s,
		       plen_s ? off + (size_t)(plen_s - s) : 0, plen_s, family, dir, port, ret);
out:
	free(s);
	return r;
}

static int opt_num(const char *s, int64_t *ret)
{
	char *end;
	long long v;

	if (!*s || !strcmp(s, "*")) {
		*ret = -1;
		return 0;
	}
	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno || *end || v < 0 || v > UINT32_MAX)
		return -EINVAL;
	*ret = v;
	return 0;
}

static int parse_netlink(struct sd_fparser *p, const struct sd_ftok *t, size_t skip,
			 enum sd_fdir dir, struct sd_fnode **ret)
{
	struct sd_ftok pt = { .off = t->off + skip };
	char *s = strdup(t->text + skip), *colon;
	struct sd_fnode *n = NULL;
	uint32_t proto;
	int r = 0;

	if (!s)
		return -ENOMEM;
	colon = strchr(s, ':');
	if (colon)
		*colon = '\0';
	n = sd_fnode_new(SD_F_NETLINK);
	if (!n) {
		r = -ENOMEM;
		goto out;
	}
	n->dir = (uint8_t)dir;
	n->u.nl.proto = -1;
	if (*s && strcmp(s, "*")) {
		pt.text = s;
		pt.len = strlen(s);
		r = sd_fparse_nlproto(p, &pt, &proto);
		if (r < 0)
			goto out;
		n->u.nl.proto = (int32_t)proto;
	}
	n->u.nl.portid = -1;
	if (colon) {
		if (!strcmp(colon + 1, "kernel"))
			n->u.nl.portid = 0;
		else if (opt_num(colon + 1, &n->u.nl.portid) < 0)
			r = sd_ferr(p, pt.off + (size_t)(colon - s) + 1, strlen(colon + 1),
				    "bad netlink port id '%s'", colon + 1);
	}
out:
	free(s);
	if (r < 0)
		sd_fnode_free(n);
	else
		*ret = n;
	return r;
}

static int ethertype(const char *s, int32_t *ret)
{
	static const struct {
		const char *name;
		int32_t type;
	} names[] = {
		{ "all", 0x0003 },  { "ip", 0x0800 },	  { "ipv4", 0x0800 }, { "arp", 0x0806 },
		{ "ipv6", 0x86dd }, { "802.1q", 0x8100 }, { "vlan", 0x8100 }, { "lldp", 0x88cc },
	};
	int64_t v;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcasecmp(s, names[i].name)) {
			*ret = names[i].type;
			return 0;
		}
	if (opt_num(s, &v) < 0 || v > 0xffff)
		return -EINVAL;
	*ret = (int32_t)v;
	return 0;
}

static int parse_packet(struct sd_fparser *p, const struct sd_ftok *t, size_t skip,
			enum sd_fdir dir, struct sd_fnode **ret)
{
	size_t off = t->off + skip;
	char *s = strdup(t->text + skip), *colon;
	struct sd_fnode *n = NULL;
	int r = 0;

	if (!s)
		return -ENOMEM;
	colon = strchr(s, ':');
	if (colon)
		*colon = '\0';
	n = sd_fnode_new(SD_F_PACKET);
	if (!n) {
		r = -ENOMEM;
		goto out;
	}
	n->dir = (uint8_t)dir;
	if (ethertype(s, &n->u.pkt.proto) < 0) {
		r = sd_ferr(p, off, strlen(s),
			    "unknown link protocol '%s' (all, ip, ipv6, arp, "
			    "or a number)",
			    s);
		goto out;
	}
	n->u.pkt.ifindex = -1;
	if (colon && colon[1] && strcmp(colon + 1, "*")) {
		unsigned idx = if_nametoindex(colon + 1);

		if (idx)
			n->u.pkt.ifindex = idx;
		else if (opt_num(colon + 1, &n->u.pkt.ifindex) < 0)
			r = sd_ferr(p, off + (size_t)(colon - s) + 1, strlen(colon + 1),
				    "unknown device '%s'", colon + 1);
	}
out:
	free(s);
	if (r < 0)
		sd_fnode_free(n);
	else
		*ret = n;
	return r;
}

static int parse_vsock(struct sd_fparser *p, const struct sd_ftok *t, size_t skip, enum sd_fdir dir,
		       struct sd_fnode **ret)
{
	size_t off = t->off + skip;
	char *s = strdup(t->text + skip), *colon;
	struct sd_fnode *n = NULL;
	int r = 0;

	if (!s)
		return -ENOMEM;
	colon = strchr(s, ':');
	if (colon)
		*colon = '\0';
	n = sd_fnode_new(SD_F_VSOCK);
	if (!n) {
		r = -ENOMEM;
		goto out;
	}
	n->dir = (uint8_t)dir;
	n->u.vs.port = -1;
	if (opt_num(s, &n->u.vs.cid) < 0)
		r = sd_ferr(p, off, strlen(s), "bad vsock CID '%s'", s);
	else if (colon && opt_num(colon + 1, &n->u.vs.port) < 0)
		r = sd_ferr(p, off + (size_t)(colon - s) + 1, strlen(colon + 1),
			    "bad vsock port '%s'", colon + 1);
out:
	free(s);
	if (r < 0)
		sd_fnode_free(n);
	else
		*ret = n;
	return r;
}

int sd_fparse_host(struct sd_fparser *p, const struct sd_ftok *t, enum sd_fdir dir,
		   struct sd_fnode **ret)
{
	const char *s = t->text;
	struct sd_fnode *n;

	if (!strncmp(s, "unix:", 5) || s[0] == '/' || s[0] == '@') {
		const char *glob = strncmp(s, "unix:", 5) ? s : s + 5;

		if (dir == SD_DIR_DST)
			return sd_fparse_unix_peer(p, t, glob, ret);
		n = sd_fnode_new(SD_F_UNIX_NAME);
		if (!n)
			return -ENOMEM;
		n->u.str = strdup(glob);
		if (!n->u.str) {
			free(n);
			return -ENOMEM;
		}
		*ret = n;
		return 0;
	}
	if (!strncmp(s, "netlink:", 8))
		return parse_netlink(p, t, 8, dir, ret);
	if (!strncmp(s, "link:", 5))
		return parse_packet(p, t, 5, dir, ret);
	if (!strncmp(s, "vsock:", 6))
		return parse_vsock(p, t, 6, dir, ret);
	if (!strncmp(s, "inet:", 5))
		return parse_inet(p, t, 5, AF_INET, dir, ret);
	if (!strncmp(s, "inet6:", 6))
		return parse_inet(p, t, 6, AF_INET6, dir, ret);
	return parse_inet(p, t, 0, AF_UNSPEC, dir, ret);
}

/*
 * `dst GLOB` on unix sockets matches a socket whose peer's name matches GLOB.
 * A record carries only the peer's inode, so the sockets whose own name
 * matches are looked up by each dump (filter_resolve.c); here the glob only
 * gets its slot.
 */
int sd_fparse_unix_peer(struct sd_fparser *p, const struct sd_ftok *t, const char *glob,
			struct sd_fnode **ret)
{
	struct sd_fnode *n = sd_fnode_new(SD_F_UNIX_PEER);

	(void)t;
	if (!n)
		return -ENOMEM;
	n->u.peer.glob = strdup(glob);
	if (!n->u.peer.glob) {
		free(n);
		return -ENOMEM;
	}
	n->dir = SD_DIR_DST;
	n->u.peer.slot = p->n_peers++;
	*ret = n;
	return 0;
}
