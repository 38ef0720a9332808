/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Python module's argument parsing, in plain C (args.h): kinds, count_by's
 * keys, a netns argument's text, and the words of their errors.
 */
#include "python/sockdiag/args.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define T(x) SDIAG_TABLE_BIT(SDIAG_T_##x)

/* psutil's kinds: tables and address families. */
static const struct {
	const char *name;
	uint32_t tables;
	uint8_t afs;
} psutil_kinds[] = {
	{ "inet", T(TCP) | T(UDP), SDIAG_AF_ALL },
	{ "inet4", T(TCP) | T(UDP), SDIAG_AF_INET },
	{ "inet6", T(TCP) | T(UDP), SDIAG_AF_INET6 },
	{ "tcp", T(TCP), SDIAG_AF_ALL },
	{ "tcp4", T(TCP), SDIAG_AF_INET },
	{ "tcp6", T(TCP), SDIAG_AF_INET6 },
	{ "udp", T(UDP), SDIAG_AF_ALL },
	{ "udp4", T(UDP), SDIAG_AF_INET },
	{ "udp6", T(UDP), SDIAG_AF_INET6 },
	{ "unix", SDIAG_TABLES_UNIX, SDIAG_AF_ALL },
	{ "all", T(TCP) | T(UDP) | SDIAG_TABLES_UNIX, SDIAG_AF_ALL },
};

/* At most 32 bytes of user text, control characters escaped, into out. */
static const char *quote(char *out, size_t size, const char *s, size_t len)
{
	size_t o = 0, i;

	for (i = 0; i < len && i < 32 && o + 5 < size; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f || c == '\\')
			o += (size_t)snprintf(out + o, size - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	if (i < len && o + 4 < size) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o < size ? o : size - 1] = '\0';
	return out;
}

int sdpy_kind_lookup(const char *s, size_t len, struct sdpy_kind *ret)
{
	struct sdpy_kind k = { .afs = SDIAG_AF_ALL };
	char name[32];	/* longer than any kind */

	if (len == 0 || len >= sizeof(name) || memchr(s, '\0', len))
		return -EINVAL;
	memcpy(name, s, len);
	name[len] = '\0';
	for (size_t i = 0; i < sizeof(psutil_kinds) / sizeof(psutil_kinds[0]); i++)
		if (!strcmp(name, psutil_kinds[i].name)) {
			k.tables = psutil_kinds[i].tables;
			k.afs = psutil_kinds[i].afs;
			*ret = k;
			return 0;
		}
	if (!strcmp(name, "every"))
		k.tables = sdiag_table_mask_by_name("all");
	else if (strcmp(name, "all") && strcmp(name, "inet") && strcmp(name, "unix")) {
		k.tables = sdiag_table_mask_by_name(name);
		k.explicit_table = k.tables && !(k.tables & (k.tables - 1));
	}
	if (!k.tables)
		return -EINVAL;
	*ret = k;
	return 0;
}

void sdpy_kind_error(const char *name, size_t len, char *buf, size_t size)
{
	char q[160];

	snprintf(buf, size,
		 "unknown kind '%s' (psutil's: inet, inet4, inet6, tcp, tcp4, tcp6, udp, udp4, "
		 "udp6, unix, all; tables: raw, udplite, sctp, mptcp, netlink, packet, vsock, xdp, "
		 "tipc, smc, unix_stream, ...; every)",
		 quote(q, sizeof(q), name, len));
}

int sdpy_keys_add(struct gkeys *keys, const char *name, size_t len, char *err, size_t size)
{
	return gkeys_add(keys, name, len, GF_PY, SDPY_MAX_KEYS, err, size);
}

int sdpy_keys_parse(struct gkeys *keys, const char *list, size_t len, char *err,
		    size_t size)
{
	return gkeys_parse(keys, list, len, GF_PY, SDPY_MAX_KEYS, err, size);
}

bool sdpy_keys_need_procs(const struct gkeys *keys)
{
	return gkeys_has(keys, GK_PID) || gkeys_has(keys, GK_PROCESS);
}

int sdpy_netns_check(const char *spec, size_t len, char *err, size_t size)
{
	if (len == 0) {
		snprintf(err, size, "netns: an empty name");
		return -EINVAL;
	}
	if (memchr(spec, '\0', len)) {
		snprintf(err, size, "netns: embedded NUL");
		return -EINVAL;
	}
	return 0;
}

const char *sdpy_netns_reason(int err)
{
	if (err == -ENOTNAM)
		return "not a network namespace (give a name in /run/netns, an nsfs path such as "
		       "/proc/PID/ns/net, pid:N, or a descriptor of one)";
	if (err == -EINVAL)
		return "not a namespace name, path or pid:N";
	return strerror(err < 0 ? -err : err);
}

void sdpy_table_error(enum sdiag_table t, int err, char *buf, size_t size)
{
	const char *netid = sdiag_table_netid(t), *module = sdiag_table_module(t);

	if (err == -EPROTONOSUPPORT || err == -EAFNOSUPPORT)
		snprintf(buf, size, "%s: not supported by this kernel (no %s)", netid ? netid : "?",
			 module ? module : "its diag module");
	else
		snprintf(buf, size, "%s: %s", netid ? netid : "?", strerror(err < 0 ? -err : err));
}
