// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * TCP-info and queue predicates: `idle > 10m`, `rtt > 150ms`, `retrans > 10`,
 * `bytes-received >= 1M`, `rqueue > 0`. Values carry units: durations take
 * ms, s, m or h (a bare number other than 0 is refused: `idle > 10` would be
 * a guess), sizes take K, M or G (powers of 1024; bare = bytes), counts none.
 *
 * The kernel cannot test any of these in its bytecode: they are user-space
 * predicates (the bytecode compiler treats them as "true", its default for
 * what it cannot test). TCP info comes only with SDIAG_SHOW_INFO, which a
 * dump adds when the filter uses one (sd_filter_show). Sockets without TCP
 * info (other protocols, TIME-WAIT, SYN-RECV request sockets) do not match
 * a TCP-info comparison; `not` makes it true. rqueue/wqueue are every
 * family's receive and send queues as the kernel reports them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "lib/filter/filter_parse.h"

enum unit { U_DURATION, U_SIZE, U_COUNT };

static const struct {
	const char *kw;
	enum sd_ftcp field;
	enum unit unit;
} fields[] = {
	{ "idle", SD_FTCP_IDLE, U_DURATION },
	{ "last-recv", SD_FTCP_LAST_RECV, U_DURATION },
	{ "last-send", SD_FTCP_LAST_SEND, U_DURATION },
	{ "last-ack", SD_FTCP_LAST_ACK, U_DURATION },
	{ "rtt", SD_FTCP_RTT, U_DURATION },
	{ "rttvar", SD_FTCP_RTTVAR, U_DURATION },
	{ "rto", SD_FTCP_RTO, U_DURATION },
	{ "retrans", SD_FTCP_RETRANS, U_COUNT },
	{ "lost", SD_FTCP_LOST, U_COUNT },
	{ "unacked", SD_FTCP_UNACKED, U_COUNT },
	{ "cwnd", SD_FTCP_CWND, U_COUNT },
	{ "bytes-sent", SD_FTCP_BYTES_SENT, U_SIZE },
	{ "bytes-received", SD_FTCP_BYTES_RECEIVED, U_SIZE },
	{ "bytes-acked", SD_FTCP_BYTES_ACKED, U_SIZE },
	{ "rqueue", SD_FTCP_RQUEUE, U_SIZE },
	{ "wqueue", SD_FTCP_WQUEUE, U_SIZE },
};

#define N_FIELDS (sizeof(fields) / sizeof(fields[0]))

bool sd_ftcp_keyword(const char *kw)
{
	for (size_t i = 0; i < N_FIELDS; i++)
		if (!strcmp(kw, fields[i].kw))
			return true;
	return false;
}

/* Durations in microseconds (rtt, rttvar and rto are kept so by the kernel). */
static int parse_value(struct sd_fparser *p, const struct sd_ftok *v, const char *kw,
		       enum unit unit, uint64_t *ret)
{
	static const struct {
		const char *suffix;
		enum unit unit;
		uint64_t mult;
	} units[] = {
		{ "ms", U_DURATION, 1000ULL },		 { "s", U_DURATION, 1000000ULL },
		{ "m", U_DURATION, 60000000ULL },	 { "h", U_DURATION, 3600000000ULL },
		{ "K", U_SIZE, 1ULL << 10 },		 { "M", U_SIZE, 1ULL << 20 },
		{ "G", U_SIZE, 1ULL << 30 },		 { "k", U_SIZE, 1ULL << 10 },
	};
	const char *s = v->text, *what = unit == U_DURATION ? "a duration (150ms, 30s, 10m, 2h)" :
					 unit == U_SIZE	    ? "a size (1500, 64K, 10M, 1G)" :
							      "a count";
	unsigned long long n;
	uint64_t mult = 1;
	char *end;

	if (*s < '0' || *s > '9')
		return sd_ferr(p, v->off, v->len, "'%s' needs %s, not '%s'", kw, what, s);
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno)
		return sd_ferr(p, v->off, v->len, "'%s': '%s' is too large", kw, s);
	if (*end) {
		size_t i;

		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (units[i].unit == unit && !strcmp(end, units[i].suffix))
				break;
		if (i == sizeof(units) / sizeof(units[0]) && *end == '.')
			return sd_ferr(p, v->off, v->len,
				       "'%s' needs %s in whole numbers (1500ms, not 1.5s)", kw, what);
		if (i == sizeof(units) / sizeof(units[0]))
			return sd_ferr(p, v->off, v->len, "'%s' needs %s: unknown unit '%s'", kw,
				       what, end);
		mult = units[i].mult;
	} else if (unit == U_DURATION && n != 0) {
		return sd_ferr(p, v->off, v->len,
			       "'%s' needs %s: '%s' has no unit (ms, s, m or h)", kw, what, s);
	}
	if (n > UINT64_MAX / mult)
		return sd_ferr(p, v->off, v->len, "'%s': '%s' is too large", kw, s);
	*ret = n * mult;
	return 0;
}

int sd_fparse_tcpinfo(struct sd_fparser *p, const char *kw, const struct sd_ftok *kwt, int cmp,
		      const struct sd_ftok *v, struct sd_fnode **ret)
{
	struct sd_fnode *n;
	uint64_t val = 0;
	size_t i;
	int r;

	for (i = 0; i < N_FIELDS; i++)
		if (!strcmp(kw, fields[i].kw))
			break;
	if (i == N_FIELDS)
		return -EINVAL;
	/* Nothing after it: most likely "idle > 10" unquoted, the shell having
	 * taken "> 10" as a redirection. */
	if (cmp < 0 && !p->expr[kwt->off + kwt->len + strspn(p->expr + kwt->off + kwt->len,
							       " \t\r\n")])
		return sd_ferr(p, kwt->off, kwt->len,
			       "'%s' needs a comparison (<, <=, >, >=, = or !=) and a value; in a "
			       "shell, quote the filter (a bare > or < is a redirection) or write "
			       "gt, ge, lt, le: '%s gt N'", kw, kw);
	if (cmp < 0)
		return sd_ferr(p, kwt->off, kwt->len,
			       "'%s' needs a comparison (<, <=, >, >=, = or !=) and a value", kw);
	if (!v)
		return sd_ferr(p, kwt->off, kwt->len, "'%s' needs a value after the comparison",
			       kw);
	r = parse_value(p, v, kw, fields[i].unit, &val);
	if (r < 0)
		return r;
	n = sd_fnode_new(SD_F_TCPINFO);
	if (!n)
		return -ENOMEM;
	n->field = (uint8_t)fields[i].field;
	n->cmp = (uint8_t)cmp;
	n->u.num.value = val;
	*ret = n;
	return 0;
}

bool sd_ftcp_match(const struct sd_fnode *n, const struct sdiag_sock *s)
{
	struct sdiag_tcp_info tcpi;
	const struct sdiag_tcp_info *ti = &tcpi;
	uint64_t v;

	if (n->field == SD_FTCP_RQUEUE || n->field == SD_FTCP_WQUEUE) {
		if (!(s->has & SDIAG_HAS_QUEUES))
			return false;
		v = n->field == SD_FTCP_RQUEUE ? s->rqueue : s->wqueue;
		return sd_fcmp_u64(v, (enum sd_fcmp)n->cmp, n->u.num.value);
	}
	if ((s->family != AF_INET && s->family != AF_INET6) || !(s->has & SDIAG_HAS_TCP_INFO))
		return false;
	sdiag_sock_blob_copy(s, SDIAG_BLOB_TCP_INFO, &tcpi, sizeof(tcpi));
	switch (n->field) {
	case SD_FTCP_IDLE: /* since the last data either way */
		v = (uint64_t)(ti->tcpi_last_data_sent < ti->tcpi_last_data_recv ?
				       ti->tcpi_last_data_sent :
				       ti->tcpi_last_data_recv) * 1000;
		break;
	case SD_FTCP_LAST_RECV:
		v = (uint64_t)ti->tcpi_last_data_recv * 1000;
		break;
	case SD_FTCP_LAST_SEND:
		v = (uint64_t)ti->tcpi_last_data_sent * 1000;
		break;
	case SD_FTCP_LAST_ACK:
		v = (uint64_t)ti->tcpi_last_ack_recv * 1000;
		break;
	case SD_FTCP_RTT:
		v = ti->tcpi_rtt;
		break;
	case SD_FTCP_RTTVAR:
		v = ti->tcpi_rttvar;
		break;
	case SD_FTCP_RTO:
		v = ti->tcpi_rto;
		break;
	case SD_FTCP_RETRANS:
		v = ti->tcpi_total_retrans;
		break;
	case SD_FTCP_LOST:
		v = ti->tcpi_lost;
		break;
	case SD_FTCP_UNACKED:
		v = ti->tcpi_unacked;
		break;
	case SD_FTCP_CWND:
		v = ti->tcpi_snd_cwnd;
		break;
	case SD_FTCP_BYTES_SENT:
		v = ti->tcpi_bytes_sent;
		break;
	case SD_FTCP_BYTES_RECEIVED:
		v = ti->tcpi_bytes_received;
		break;
	default:
		v = ti->tcpi_bytes_acked;
		break;
	}
	return sd_fcmp_u64(v, (enum sd_fcmp)n->cmp, n->u.num.value);
}

uint32_t sd_ftcp_tables(const struct sd_fnode *n)
{
	if (n->field == SD_FTCP_RQUEUE || n->field == SD_FTCP_WQUEUE)
		return SDIAG_TABLES_ALL;
	return SDIAG_TABLE_BIT(SDIAG_T_TCP);
}

static bool needs_info(const struct sd_fnode *n)
{
	for (; n; n = n->b) {
		if (n->kind == SD_F_TCPINFO)
			return n->field != SD_FTCP_RQUEUE && n->field != SD_FTCP_WQUEUE;
		if (needs_info(n->a))
			return true;
	}
	return false;
}

uint32_t sd_filter_show(const struct sdiag_filter *f)
{
	return f && needs_info(f->root) ? SDIAG_SHOW_INFO : 0;
}
