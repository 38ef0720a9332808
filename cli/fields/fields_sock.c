// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Field rows every family shares: the renderer's extras (time, namespace,
 * kill's result), the socket's identity, queues and ids at the head of a JSON
 * object; SMC info, memory and processes at its tail. Time, namespace, result
 * and processes are also the table's columns of those names (FL_CELL).
 */
#include <stdio.h>
#include <time.h>

#include "cli/fields/field.h"

const char *out_family_name(const struct sdiag_sock *s)
{
	/* SMC records carry their TCP socket's family. */
	if (s->table == SDIAG_T_SMC)
		return "smc";
	switch (s->family) {
	case AF_INET: return "inet";
	case AF_INET6: return "inet6";
	case AF_UNIX: return "unix";
	case AF_NETLINK: return "netlink";
	case AF_PACKET: return "packet";
	case AF_VSOCK: return "vsock";
	case AF_XDP: return "xdp";
	case AF_TIPC: return "tipc";
	case AF_SMC: return "smc";
	default: return "unknown";
	}
}

const char *out_timer_name(unsigned timer)
{
	static const char *const names[] = { "off", "on", "keepalive", "timewait", "persist",
					     "delack" };

	return timer < sizeof(names) / sizeof(names[0]) ? names[timer] : "unknown";
}

/* ---- extras (struct out_extra) ------------------------------------------------- */

static bool has_time(const struct fctx *c) { return c->x && c->x->time; }
static bool has_netns(const struct fctx *c) { return c->x && c->x->netns; }
static bool has_result(const struct fctx *c) { return c->x && c->x->result; }
static bool has_detail(const struct fctx *c) { return c->x && c->x->result_detail; }

static uint64_t netns_inode(const struct fctx *c)
{
	return c->x ? c->x->netns_inode : 0;
}

/* JSON "time": UTC, ISO 8601; the table's Time: local time of day. Both to
 * the microsecond. */
size_t out_time_fmt(char buf[48], const struct timespec *ts, bool json)
{
	struct tm tm;
	size_t n;
	int r;

	if (!(json ? gmtime_r(&ts->tv_sec, &tm) : localtime_r(&ts->tv_sec, &tm)))
		return 0;
	n = strftime(buf, 40, json ? "%Y-%m-%dT%H:%M:%S" : "%H:%M:%S", &tm);
	if (!n)
		return 0;
	r = snprintf(buf + n, 48 - n, json ? ".%06ldZ" : ".%06ld", ts->tv_nsec / 1000);
	return r > 0 && (size_t)r < 48 - n ? n + (size_t)r : 0;
}

static void time_put(struct fctx *c, const struct field *f, bool json)
{
	char buf[48];
	size_t n = out_time_fmt(buf, c->x->time, json);

	if (!n)
		return;
	if (json) {
		fld_key(c, f);
		obuf_putc(c->b, '"');
	}
	obuf_put(c->b, buf, n);
	if (json)
		obuf_putc(c->b, '"');
}

static void time_json(struct fctx *c, const struct field *f, uint64_t v)
{
	(void)v;
	time_put(c, f, true);
}

static void time_cell(struct fctx *c, const struct field *f, uint64_t v)
{
	(void)v;
	time_put(c, f, false);
}

static void netns_cell(struct fctx *c, const struct field *f, uint64_t v)
{
	(void)f;
	(void)v;
	obuf_puts(c->b, c->x->netns);
}

static void result_cell(struct fctx *c, const struct field *f, uint64_t v)
{
	(void)f;
	(void)v;
	obuf_puts(c->b, c->x->result);
}

static void str_json(struct fctx *c, const struct field *f, const char *str)
{
	fld_key(c, f);
	obuf_json_cstr(c->b, str);
}

static void netns_json(struct fctx *c, const struct field *f, uint64_t v)
{
	(void)v;
	str_json(c, f, c->x->netns);
}

static void result_json(struct fctx *c, const struct field *f, uint64_t v)
{
	(void)v;
	str_json(c, f, c->x->result);
}

static void detail_json(struct fctx *c, const struct field *f, uint64_t v)
{
	(void)v;
	str_json(c, f, c->x->result_detail);
}

/* ---- identity --------------------------------------------------------------------- */

static void raw_json(struct fctx *c, const struct field *f, const char *str)
{
	fld_key(c, f);
	fld_raw_str(c->b, str);
}

static void family_json(struct fctx *c, const struct field *f, uint64_t v)
{
	(void)v;
	raw_json(c, f, out_family_name(c->s));
}

static void netid_json(struct fctx *c, const struct field *f, uint64_t v)
{
	const char *str = sdiag_table_netid(c->s->table);

	(void)v;
	raw_json(c, f, str ? str : "?");
}

static void proto_json(struct fctx *c, const struct field *f, uint64_t v)
{
	const struct sdiag_sock *s = c->s;
	const char *str = s->family == AF_NETLINK ? sdiag_netlink_proto_name(s->protocol)
						  : sdiag_table_proto(s->table);
	char num[24];

	(void)v;
	if (!str) {
		num[fmt_u64(num, s->protocol)] = '\0';
		str = num;
	}
	raw_json(c, f, str);
}

static void state_json(struct fctx *c, const struct field *f, uint64_t v)
{
	(void)v;
	raw_json(c, f, sdiag_state_name(c->s->state));
}

const struct field fields_head[] = {
	{ K("time"), .jwhen = has_time, .json = time_json, .flags = FL_CELL, .col = C_TIME,
	  .twhen = has_time, .text = time_cell },
	{ K("netns"), .jwhen = has_netns, .json = netns_json, .flags = FL_CELL, .col = C_NETNS,
	  .twhen = has_netns, .text = netns_cell },
	{ K("netns_inode"), .get = netns_inode, .flags = FL_JNZ },
	{ K("result"), .jwhen = has_result, .json = result_json, .flags = FL_CELL,
	  .col = C_RESULT, .twhen = has_result, .text = result_cell },
	{ K("result_detail"), .jwhen = has_detail, .json = detail_json },
	{ K("family"), .json = family_json },
	{ K("netid"), .json = netid_json },
	{ K("proto"), .json = proto_json },
	{ K("state"), .json = state_json },
};
const size_t fields_head_n = sizeof(fields_head) / sizeof(fields_head[0]);

/* ---- queues, ids (after the endpoints) -------------------------------------------------- */

static bool shows_shutdown(const struct fctx *c)
{
	return c->s->family == AF_INET || c->s->family == AF_INET6 || c->s->family == AF_UNIX;
}

/* ss's arrows: "<->", "-->" (receive side shut), "<--" (send side shut), "---". */
static void shutdown_text(struct fctx *c, const struct field *f, uint64_t v)
{
	char a[3] = { v & 1 ? '-' : '<', '-', v & 2 ? '-' : '>' };

	(void)f;
	obuf_put(c->b, a, 3);
}

/* A full inet socket without a file (a child not yet accepted, an orphan):
 * ss prints its inode 0 (not those of TIME-WAIT and request sockets). */
static bool no_file(const struct fctx *c)
{
	return !(c->s->has & SDIAG_HAS_INODE);
}

const struct field fields_common[] = {
	{ K("recv_q"), SK(rqueue), .has = SDIAG_HAS_QUEUES },
	{ K("send_q"), SK(wqueue), .has = SDIAG_HAS_QUEUES },
	{ K("inode"), L(" ino:"), SK(inode), .has = SDIAG_HAS_INODE, .topt = O_EXT, .t = T_INO },
	{ L(" ino:"), SK(inode), .fams = F_INET, .has = SDIAG_HAS_UID, .topt = O_EXT, .t = T_INO,
	  .twhen = no_file },
	{ K("cookie"), L(" sk:"), SK(cookie), .kind = FK_HEXSTR, .has = SDIAG_HAS_COOKIE,
	  .topt = O_EXT, .t = T_SK },
	{ K("uid"), L(" uid:"), SK(uid), .has = SDIAG_HAS_UID, .topt = O_EXT, .flags = FL_TNZ,
	  .t = T_UID },
	{ K("shutdown"), L(" "), SK(shutdown), .has = SDIAG_HAS_SHUTDOWN, .jopt = O_EXT,
	  .topt = O_EXT, .t = T_SHUTDOWN, .twhen = shows_shutdown, .text = shutdown_text },
};
const size_t fields_common_n = sizeof(fields_common) / sizeof(fields_common[0]);

/* ---- tail: SMC, memory, processes ----------------------------------------------------- */

static bool is_smc(const struct fctx *c)
{
	return c->s->table == SDIAG_T_SMC;
}

static void smc_mode_json(struct fctx *c, const struct field *f, uint64_t v)
{
	raw_json(c, f, v == 0 ? "smcr" : v == 1 ? "fallback" : v == 2 ? "smcd" : "unknown");
}

static const struct field smc_rows[] = {
	{ K("mode"), SK(smc.mode), .json = smc_mode_json },
	{ K("fallback_reason"), SK(smc.fallback_reason) },
	{ K("peer_diagnosis"), SK(smc.peer_diagnosis) },
};

#define SKM(k, l, i) { K(k), L(l), .off = SDIAG_SKMEM_##i * 4, .size = 4 }

static const struct field skmem_rows[] = {
	SKM("rmem_alloc", "r", RMEM_ALLOC), SKM("rcvbuf", ",rb", RCVBUF),
	SKM("wmem_alloc", ",t", WMEM_ALLOC), SKM("sndbuf", ",tb", SNDBUF),
	SKM("fwd_alloc", ",f", FWD_ALLOC), SKM("wmem_queued", ",w", WMEM_QUEUED),
	SKM("optmem", ",o", OPTMEM), SKM("backlog", ",bl", BACKLOG), SKM("drops", ",d", DROPS),
};

static const struct field meminfo_rows[] = {
	{ K("rmem"), L("r"), AT(struct sdiag_meminfo, rmem) }, { K("wmem"), L(",w"), AT(struct sdiag_meminfo, wmem) },
	{ K("fmem"), L(",f"), AT(struct sdiag_meminfo, fmem) }, { K("tmem"), L(",t"), AT(struct sdiag_meminfo, tmem) },
};

static bool not_unix(const struct fctx *c)
{
	return c->s->family != AF_UNIX;
}

static bool no_skmem(const struct fctx *c)
{
	return !(c->s->has & SDIAG_HAS_SKMEMINFO);
}

/* The processes as a JSON array of {"comm","pid","fd"} or as the table's
 * Process column, ss's users:(("comm",pid=N,fd=N),...) (-T: a tid too): one
 * walk, two spellings. JSON keeps the map's order (pid, tid, fd); the table
 * takes ss's, the reverse (ss chains each owner it finds in front of the
 * ones found before, and finds them in /proc's order). */
static void procs_put(struct fctx *c, bool json)
{
	struct obuf *b = c->b;

	obuf_puts(b, json ? "[" : " users:(");
	for (size_t i = 0; i < c->s->n_procs; i++) {
		const struct sdiag_proc *p = &c->s->procs[json ? i : c->s->n_procs - 1 - i];
		size_t n = strnlen(p->comm, sizeof(p->comm));

		if (i)
			obuf_putc(b, ',');
		obuf_puts(b, json ? "{\"comm\":" : "(\"");
		if (json)
			obuf_json_str(b, p->comm, n);
		else
			obuf_text_bytes(b, p->comm, n);
		obuf_puts(b, json ? ",\"pid\":" : "\",pid=");
		obuf_i64(b, json ? (int64_t)(uint32_t)p->pid : (int64_t)p->pid);
		if (p->tid) { /* -T */
			obuf_puts(b, json ? ",\"tid\":" : ",tid=");
			obuf_i64(b, json ? (int64_t)(uint32_t)p->tid : (int64_t)p->tid);
		}
		obuf_puts(b, json ? ",\"fd\":" : ",fd=");
		obuf_i64(b, json ? (int64_t)(uint32_t)p->fd : (int64_t)p->fd);
		obuf_putc(b, json ? '}' : ')');
	}
	obuf_putc(b, json ? ']' : ')');
}

static void procs_json(struct fctx *c, const struct field *f, uint64_t v)
{
	(void)v;
	fld_key(c, f);
	procs_put(c, true);
}

static void procs_cell(struct fctx *c, const struct field *f, uint64_t v)
{
	(void)f;
	(void)v;
	procs_put(c, false);
}

static bool has_procs(const struct fctx *c)
{
	return c->s->n_procs;
}

const struct field fields_tail[] = {
	{ K("smc"), .kind = FK_GROUP, SUB(smc_rows), .has = SDIAG_HAS_SMC_INFO, .jwhen = is_smc },
	/* unix puts -m before -e, every other family after */
	{ L(" skmem:("), .tail = ")", .kind = FK_GROUP, SUB(skmem_rows), BLOB(SDIAG_BLOB_SKMEMINFO),
	  .fams = F_UNIX,
	  .has = SDIAG_HAS_SKMEMINFO, .topt = O_MEM, .t = T_UNIX_SKMEM },
	{ K("skmem"), L(" skmem:("), .tail = ")", .kind = FK_GROUP, SUB(skmem_rows),
	  BLOB(SDIAG_BLOB_SKMEMINFO), .has = SDIAG_HAS_SKMEMINFO, .jopt = O_MEM, .topt = O_MEM, .t = T_SKMEM,
	  .twhen = not_unix },
	{ K("meminfo"), L(" mem:("), .tail = ")", .kind = FK_GROUP, SUB(meminfo_rows),
	  BLOB(SDIAG_BLOB_MEMINFO), .fams = F_INET, .has = SDIAG_HAS_MEMINFO, .jopt = O_MEM, .topt = O_MEM, .t = T_SKMEM,
	  .twhen = no_skmem },
	{ K("processes"), .jopt = O_PROC, .json = procs_json, .flags = FL_CELL,
	  .col = C_PROCESS, .twhen = has_procs, .text = procs_cell },
};
const size_t fields_tail_n = sizeof(fields_tail) / sizeof(fields_tail[0]);
