// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sockdiag top's keys (--by) and columns (--sort): count.c's keys (list
 * --count-by), plus `conn`, one row per socket: its protocol, addresses,
 * ports and cookie.
 */
#include <errno.h>
#include <string.h>

#include "cli/top/model.h"

#define SEP '\x1f'

const char top_keys_help[] = "conn, pid, comm, cgroup, unit, user, raddr, rport, laddr, lport, "
			     "netns, state, proto, family";

const char *top_key_name(unsigned k)
{
	if (k == CK_PROCESS)
		return "comm"; /* list --count-by's "process" */
	return k == TK_COOKIE ? "cookie" : count_key_name((enum count_key)k);
}

bool top_key_number(unsigned k)
{
	return k == TK_COOKIE || count_key_number((enum count_key)k);
}

bool top_keys_need_owner(const struct top_keys *k)
{
	for (size_t i = 0; i < k->n; i++)
		if (k->k[i] == CK_PID || k->k[i] == CK_PROCESS)
			return true;
	return false;
}

int top_keys_parse(struct top_keys *ret, const char *arg, const char **ret_bad, size_t *ret_len)
{
	static const unsigned conn[] = { CK_PROTO, CK_LADDR, CK_LPORT, CK_RADDR, CK_RPORT,
					 TK_COOKIE };
	struct top_keys k = { .n = 0 };
	const char *p = arg;

	while (*p) {
		size_t len = strcspn(p, ",");
		int i = count_key_lookup(p, len);
		bool is_conn = len == 4 && !strncmp(p, "conn", 4);
		size_t add = is_conn ? sizeof(conn) / sizeof(conn[0]) : 1;

		if ((!is_conn && i < 0) || k.n + add > COUNT_MAX_KEYS || (is_conn && k.conn)) {
			*ret_bad = p;
			*ret_len = len;
			return -EINVAL;
		}
		if (is_conn) {
			memcpy(k.k + k.n, conn, sizeof(conn));
			k.conn = true;
		} else {
			k.k[k.n] = (unsigned)i;
		}
		k.n += add;
		p += len;
		if (*p == ',' && *++p == '\0')
			break;
	}
	if (!k.n) {
		*ret_bad = arg;
		*ret_len = 0;
		return -EINVAL;
	}
	*ret = k;
	return 0;
}

const char *top_key_field(const char *key, size_t k, size_t *len)
{
	while (k--)
		key = strchr(key, SEP) + 1;
	*len = strcspn(key, "\x1f");
	return key;
}

static const char *const col_names[TC_MAX] = {
	[TC_KEY] = "key",	 [TC_RX] = "rx",	   [TC_TX] = "tx",
	[TC_CONNS] = "conns",	 [TC_CLOSED] = "closed",   [TC_RTT] = "rtt",
	[TC_RETRANS] = "retrans", [TC_RQUEUE] = "rqueue", [TC_WQUEUE] = "wqueue",
};

int top_col_lookup(const char *name)
{
	for (int i = 0; i < TC_MAX; i++)
		if (!strcmp(name, col_names[i]))
			return i;
	return -1;
}

const char *top_col_name(enum top_col c)
{
	return c < TC_MAX ? col_names[c] : NULL;
}
