// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ss's options with ss's defaults (misc/ss.c: default_dbs[], default_afs[],
 * filter_db_set(), filter_af_set(), filter_merge_defaults(), main()):
 *
 *  - a table option (-t -u -w -M -S, -A NAME) selects the table and adds its
 *    default states (TCP: connected; UDP and raw: established; unix dgram,
 *    packet, netlink, xdp: unconnected; ...);
 *  - a family option (-4 -6 -x -0 -f F --vsock ...) selects the family and
 *    adds the family's default states;
 *  - -a (all states), -l (LISTEN and UNCONN), -B (bound-inactive) replace
 *    the states; the first -A resets the tables and makes the default
 *    "connected"; a filter's state/exclude clauses replace them all;
 *  - with no table or family option: every table but TIPC, connected states;
 *  - then each table without one of its families gets them all, and each
 *    family without one of its tables gets all of them.
 * Unlike ss, "-4 -6" selects both families (ss keeps only the last one).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/opts/options.h"
#include "util/argerr.h"
#include "util/textfile.h"

#define T(x) SDIAG_TABLE_BIT(SDIAG_T_##x)
#define S(x) SDIAG_STATE_BIT(SDIAG_SS_##x)

enum fam {
	F_INET,
	F_INET6,
	F_UNIX,
	F_PACKET,
	F_NETLINK,
	F_VSOCK,
	F_TIPC,
	F_XDP,
	F_SMC,
	F_MAX
};
#define FB(f) (1u << (f))
#define F_IP (FB(F_INET) | FB(F_INET6))

#define ST_CONN SDIAG_STATES_CONNECTED
#define ST_CLOSE S(CLOSE)
#define ST_TIPC (S(ESTABLISHED) | S(LISTEN) | S(CLOSE))

static const struct {
	uint32_t states;
	uint32_t fams;
} table_defaults[SDIAG_T_MAX] = {
	[SDIAG_T_TCP] = { ST_CONN, F_IP },
	[SDIAG_T_UDP] = { S(ESTABLISHED), F_IP },
	[SDIAG_T_UDPLITE] = { S(ESTABLISHED), F_IP },
	[SDIAG_T_RAW] = { S(ESTABLISHED), F_IP },
	[SDIAG_T_MPTCP] = { ST_CONN, F_IP },
	[SDIAG_T_SCTP] = { ST_CONN, F_IP },
	[SDIAG_T_UNIX_STREAM] = { ST_CONN, FB(F_UNIX) },
	[SDIAG_T_UNIX_DGRAM] = { ST_CLOSE, FB(F_UNIX) },
	[SDIAG_T_UNIX_SEQPACKET] = { ST_CONN, FB(F_UNIX) },
	[SDIAG_T_NETLINK] = { ST_CLOSE, FB(F_NETLINK) },
	[SDIAG_T_PACKET_RAW] = { ST_CLOSE, FB(F_PACKET) },
	[SDIAG_T_PACKET_DGRAM] = { ST_CLOSE, FB(F_PACKET) },
	[SDIAG_T_VSOCK_STREAM] = { ST_CONN, FB(F_VSOCK) },
	[SDIAG_T_VSOCK_DGRAM] = { ST_CONN, FB(F_VSOCK) },
	[SDIAG_T_VSOCK_SEQPACKET] = { ST_CONN, FB(F_VSOCK) },
	[SDIAG_T_XDP] = { ST_CLOSE, FB(F_XDP) },
	[SDIAG_T_TIPC] = { ST_TIPC, FB(F_TIPC) },
	[SDIAG_T_SMC] = { ST_CONN, FB(F_SMC) },
};

static const struct {
	const char *name;	/* -f NAME */
	uint32_t tables;
	uint32_t states;
} fam_defaults[F_MAX] = {
	[F_INET] = { "inet", SDIAG_TABLES_INET, ST_CONN },
	[F_INET6] = { "inet6", SDIAG_TABLES_INET, ST_CONN },
	[F_UNIX] = { "unix", SDIAG_TABLES_UNIX, ST_CONN },
	[F_PACKET] = { "link", SDIAG_TABLES_PACKET, ST_CLOSE },
	[F_NETLINK] = { "netlink", T(NETLINK), ST_CLOSE },
	[F_VSOCK] = { "vsock", SDIAG_TABLES_VSOCK, ST_CONN },
	[F_TIPC] = { "tipc", T(TIPC), ST_TIPC },
	[F_XDP] = { "xdp", T(XDP), ST_CLOSE },
	[F_SMC] = { "smc", T(SMC), ST_CONN },
};

/* Selection state while parsing (ss's struct filter + do_default). */
struct sel {
	uint32_t tables;
	uint32_t fams;
	uint32_t states;
	uint32_t state_filter;
	uint32_t explicit_tables;
	uint32_t explicit_fams;
	bool do_default;
	bool saw_query;
};

static void table_set(struct sel *s, uint32_t mask, bool enable, bool named)
{
	for (unsigned t = 0; t < SDIAG_T_MAX; t++) {
		if (!(mask & SDIAG_TABLE_BIT(t)))
			continue;
		if (enable) {
			s->states |= table_defaults[t].states;
			s->tables |= SDIAG_TABLE_BIT(t);
			if (named)
				s->explicit_tables |= SDIAG_TABLE_BIT(t);
		} else {
			s->tables &= ~SDIAG_TABLE_BIT(t);
		}
	}
	s->do_default = false;
}

static void fam_set(struct sel *s, enum fam f)
{
	s->states |= fam_defaults[f].states;
	s->fams |= FB(f);
	if (f != F_INET && f != F_INET6)
		s->explicit_fams |= FB(f);
	s->do_default = false;
}

static void merge_defaults(struct sel *s)
{
	for (unsigned t = 0; t < SDIAG_T_MAX; t++)
		if ((s->tables & SDIAG_TABLE_BIT(t)) && !(table_defaults[t].fams & s->fams))
			s->fams |= table_defaults[t].fams;
	for (unsigned f = 0; f < F_MAX; f++) {
		if (!(s->fams & FB(f)))
			continue;
		if (!(fam_defaults[f].tables & s->tables))
			s->tables |= fam_defaults[f].tables;
		if (s->explicit_fams & FB(f))
			s->explicit_tables |= s->tables & fam_defaults[f].tables;
	}
}

/* An unknown -A NAME: one line with the names there are (and, for "tcp6",
 * how to say IPv6). */
static void query_unknown(const char *cmd, const char *n)
{
	char q[TEXT_QUOTE_LEN], base[16];
	size_t len = strlen(n);

	fprintf(stderr, "sockdiag %s: unknown socket table \"%s\" (-A ", cmd, TQ(q, n));
	if (len > 1 && len < sizeof(base) && (n[len - 1] == '4' || n[len - 1] == '6')) {
		memcpy(base, n, len - 1);
		base[len - 1] = '\0';
		if (sdiag_table_mask_by_name(base)) {
			fprintf(stderr, "takes no family: -A %s -%c)\n", base, n[len - 1]);
			return;
		}
	}
	fputs("takes all, inet, unix, packet, vsock", stderr);
	for (unsigned t = 0; t < SDIAG_T_MAX; t++)
		if (sdiag_table_netid((enum sdiag_table)t))
			fprintf(stderr, ", %s", sdiag_table_netid((enum sdiag_table)t));
	fputs("; !NAME excludes)\n", stderr);
}

/* -A NAME: ss's names and aliases (u_str, p_raw, ...), "!NAME" excludes. */
static int query_set(struct sel *s, const char *cmd, char *list)
{
	char *save = NULL, *name;

	if (!s->saw_query) {
		s->tables = 0;
		s->state_filter = s->state_filter ? s->state_filter : ST_CONN;
		s->saw_query = true;
		s->do_default = false;
	}
	for (name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		bool enable = name[0] != '!';
		const char *n = enable ? name : name + 1;
		uint32_t mask = sdiag_table_mask_by_name(n);

		for (unsigned t = 0; !mask && t < SDIAG_T_MAX; t++) {
			const char *netid = sdiag_table_netid((enum sdiag_table)t);

			if (netid && !strcmp(netid, n))
				mask = SDIAG_TABLE_BIT(t);
		}
		if (!mask) {
			query_unknown(cmd, n);
			return -EINVAL;
		}
		table_set(s, mask, enable, strcmp(n, "all") && strcmp(n, "inet"));
	}
	return 0;
}

static int family_set(struct sel *s, const char *cmd, const char *name)
{
	for (unsigned f = 0; f < F_MAX; f++)
		if (!strcmp(name, fam_defaults[f].name)) {
			fam_set(s, (enum fam)f);
			return 0;
		}
	char q[TEXT_QUOTE_LEN];

	fprintf(stderr, "sockdiag %s: unknown family \"%s\" (-f: inet, inet6, link, unix, "
		"netlink, vsock, tipc, xdp, smc)\n", cmd, TQ(q, name));
	return -EINVAL;
}

/* -Z/-z: the SELinux contexts of owners (and sockets). Said plainly when there are none. */
static int selinux_refuse(const char *cmd, int c)
{
	if (access("/sys/fs/selinux/enforce", F_OK) < 0)
		fprintf(stderr, "sockdiag %s: -%c: SELinux is not enabled on this system (no "
			"/sys/fs/selinux): there are no security contexts to show\n", cmd, c);
	else
		fprintf(stderr, "sockdiag %s: -%c: SELinux security contexts are not supported "
			"(yet)\n", cmd, c);
	return -EINVAL;
}

/* Long-only options of ours start at OPTS_COMMON_BASE, leaving 0x100.. to subcommands. */
enum {
	O_TIPC = OPTS_COMMON_BASE,
	O_VSOCK,
	O_XDP,
	O_NETLINK,
	O_UDPLITE,
	O_SMC,
	O_TOS,
	O_JSON,
	O_NDJSON,
	O_NO_KFILTER,
	O_ALL_NETNS,
	O_SOCKOPT,
	O_OWNERS,
	O_CGROUP,
};

static const struct option common_long[] = {
	{ "numeric", no_argument, NULL, 'n' },
	{ "resolve", no_argument, NULL, 'r' },
	{ "options", no_argument, NULL, 'o' },
	{ "extended", no_argument, NULL, 'e' },
	{ "memory", no_argument, NULL, 'm' },
	{ "info", no_argument, NULL, 'i' },
	{ "processes", no_argument, NULL, 'p' },
	{ "tcp", no_argument, NULL, 't' },
	{ "udp", no_argument, NULL, 'u' },
	{ "raw", no_argument, NULL, 'w' },
	{ "unix", no_argument, NULL, 'x' },
	{ "mptcp", no_argument, NULL, 'M' },
	{ "sctp", no_argument, NULL, 'S' },
	{ "packet", no_argument, NULL, '0' },
	{ "ipv4", no_argument, NULL, '4' },
	{ "ipv6", no_argument, NULL, '6' },
	{ "tipc", no_argument, NULL, O_TIPC },
	{ "vsock", no_argument, NULL, O_VSOCK },
	{ "xdp", no_argument, NULL, O_XDP },
	{ "netlink", no_argument, NULL, O_NETLINK },
	{ "udplite", no_argument, NULL, O_UDPLITE },
	{ "smc", no_argument, NULL, O_SMC },
	{ "all", no_argument, NULL, 'a' },
	{ "listening", no_argument, NULL, 'l' },
	{ "bound-inactive", no_argument, NULL, 'B' },
	{ "family", required_argument, NULL, 'f' },
	{ "query", required_argument, NULL, 'A' },
	{ "socket", required_argument, NULL, 'A' },
	{ "no-header", no_argument, NULL, 'H' },
	{ "oneline", no_argument, NULL, 'O' },
	{ "no-queues", no_argument, NULL, 'Q' },
	{ "tos", no_argument, NULL, O_TOS },
	{ "json", no_argument, NULL, O_JSON },
	{ "ndjson", no_argument, NULL, O_NDJSON },
	{ "no-kernel-filter", no_argument, NULL, O_NO_KFILTER },
	{ "netns", required_argument, NULL, 'N' },
	{ "all-netns", no_argument, NULL, O_ALL_NETNS },
	{ "inet-sockopt", no_argument, NULL, O_SOCKOPT },
	{ "cgroup", no_argument, NULL, O_CGROUP },
	{ "owners", required_argument, NULL, O_OWNERS },
	{ "verbose", no_argument, NULL, 'v' },
	{ "filter", required_argument, NULL, 'F' },
	{ "summary", no_argument, NULL, 's' },
	{ "bpf", no_argument, NULL, 'b' },
	{ "threads", no_argument, NULL, 'T' },
	{ "context", no_argument, NULL, 'Z' },
	{ "contexts", no_argument, NULL, 'z' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};
static const char common_short[] = "nroemiptuwxMS046alBf:A:F:HOQN:hVvsbTZz";

static int owners_set(struct cli_opts *o, const char *cmd, const char *arg)
{
	static const char *const names[] = {
		[SDIAG_OWNERS_AUTO] = "auto",
		[SDIAG_OWNERS_PROC] = "proc",
		[SDIAG_OWNERS_BPF] = "bpf",
	};
	char q[TEXT_QUOTE_LEN];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(arg, names[i])) {
			o->owners = (enum sdiag_owners)i;
			return 0;
		}
	fprintf(stderr, "sockdiag %s: --owners: '%s': expected auto, bpf or proc\n", cmd,
		TQ(q, arg));
	return -EINVAL;
}

/* Apply one common option. Returns 0, OPTS_EXIT, or -EINVAL. */
static int common_opt(struct cli_opts *o, struct sel *s, const char *cmd, int c, char *arg,
		      const struct opt_extra *extra)
{
	switch (c) {
	case 'n': o->out.numeric = true; break;
	case 'r': o->out.resolve = true; break;
	case 'o': o->out.timers = true; break;
	case 'e': o->out.ext = o->out.timers = true; o->q.show |= SDIAG_SHOW_EXT; break;
	case 'm': o->out.mem = true; o->q.show |= SDIAG_SHOW_MEM; break;
	case 'i': o->out.info = true; o->q.show |= SDIAG_SHOW_INFO; break;
	case O_TOS: o->out.tos = true; o->q.show |= SDIAG_SHOW_TOS; break;
	case 'p': o->processes = true; o->out.columns |= OUT_COL_PROCESS; break;
	case 't': table_set(s, T(TCP), true, true); break;
	case 'u': table_set(s, T(UDP), true, true); break;
	case 'w': table_set(s, T(RAW), true, true); break;
	case 'M': table_set(s, T(MPTCP), true, true); break;
	case 'S': table_set(s, T(SCTP), true, true); break;
	case O_UDPLITE: table_set(s, T(UDPLITE), true, true); break;
	case 'x': fam_set(s, F_UNIX); break;
	case '0': fam_set(s, F_PACKET); break;
	case '4': fam_set(s, F_INET); break;
	case '6': fam_set(s, F_INET6); break;
	case O_TIPC: fam_set(s, F_TIPC); break;
	case O_VSOCK: fam_set(s, F_VSOCK); break;
	case O_XDP: fam_set(s, F_XDP); break;
	case O_NETLINK: fam_set(s, F_NETLINK); break;
	case O_SMC: fam_set(s, F_SMC); break;
	case 'a': s->state_filter = SDIAG_STATES_ALL; break;
	case 'l': s->state_filter = SDIAG_STATES_LISTENING; break;
	case 'B': s->state_filter = S(BOUND_INACTIVE); break;
	case 'f':
		if (!strcmp(arg, "help")) {
			printf("FAMILY := {inet|inet6|link|unix|netlink|vsock|tipc|xdp|smc}\n");
			return OPTS_EXIT;
		}
		return family_set(s, cmd, arg);
	case 'A': return query_set(s, cmd, arg);
	case 'H': o->out.no_header = true; break;
	case 'O': o->out.oneline = true; break;
	case 'Q': o->out.no_queues = true; break;
	case O_JSON: o->out.format = OUT_JSON; break;
	case O_NDJSON: o->out.format = OUT_NDJSON; break;
	case O_NO_KFILTER: o->q.no_kernel_filter = true; break;
	case 'N':
		if (argerr_netns_spec(cmd, arg, "NAME|PATH|pid:PID|cgroup:PATH|unit:NAME") < 0)
			return -EINVAL;
		if (o->n_netns == OPTS_MAX_NETNS) {
			fprintf(stderr, "sockdiag %s: more than %d -N options\n", cmd,
				OPTS_MAX_NETNS);
			return -EINVAL;
		}
		o->netns = o->netns_specs[o->n_netns++] = arg;
		break;
	case O_ALL_NETNS: o->all_netns = true; break;
	case O_SOCKOPT: o->out.sockopt = true; break;
	case O_CGROUP: o->out.cgroup = true; break;
	case O_OWNERS: return owners_set(o, cmd, arg);
	case 'v': o->verbose = true; break;
	case 'F': o->filter_file = arg; break;
	case 's': o->summary = true; break;
	case 'b': o->out.bpf = true; break;
	case 'T': o->threads = o->processes = true; o->out.columns |= OUT_COL_PROCESS; break;
	case 'Z':
	case 'z': return selinux_refuse(cmd, c);
	case 'h':
		opts_usage(stdout, cmd, extra);
		return OPTS_EXIT;
	case 'V':
		printf("sockdiag " SOCKDIAG_VERSION "\n");
		return OPTS_EXIT;
	default:
		return -EINVAL;
	}
	return 0;
}

/* The option tables getopt sees: the subcommand's first, then ours. */
static int build_tables(const struct opt_extra *extra, struct option **ret_long,
			char **ret_short)
{
	size_t ne = 0, nc = sizeof(common_long) / sizeof(common_long[0]);
	const char *es = extra && extra->shortopts ? extra->shortopts : "";
	struct option *lo;
	char *so;

	while (extra && extra->longopts && extra->longopts[ne].name)
		ne++;
	lo = calloc(ne + nc, sizeof(*lo));
	so = malloc(1 + strlen(es) + sizeof(common_short));
	if (!lo || !so) {
		free(lo);
		free(so);
		return -ENOMEM;
	}
	if (ne)
		memcpy(lo, extra->longopts, ne * sizeof(*lo));
	memcpy(lo + ne, common_long, nc * sizeof(*lo));
	so[0] = ':';	/* report a missing argument as ':' */
	strcpy(so + 1, es);
	strcat(so, common_short);
	*ret_long = lo;
	*ret_short = so;
	return 0;
}

static bool is_extra(const struct opt_extra *extra, int c)
{
	if (!extra)
		return false;
	for (size_t i = 0; extra->longopts && extra->longopts[i].name; i++)
		if (extra->longopts[i].val == c && !extra->longopts[i].flag)
			return true;
	return c > 0 && c < 256 && extra->shortopts && strchr(extra->shortopts, c) && c != ':';
}

/* --help, one item per common option (name: its long name, as groups[] lists it). */
static const struct {
	const char *group;	/* a new group starts here */
	const char *name;
	const char *text;
} help_items[] = {
	{ "Sockets:", "tcp", "-t|--tcp" }, { NULL, "udp", "-u|--udp" }, { NULL, "raw", "-w|--raw" },
	{ NULL, "mptcp", "-M|--mptcp" }, { NULL, "sctp", "-S|--sctp" },
	{ NULL, "udplite", "--udplite" }, { NULL, "smc", "--smc" }, { NULL, "unix", "-x|--unix" },
	{ NULL, "packet", "-0|--packet" }, { NULL, "netlink", "--netlink" },
	{ NULL, "vsock", "--vsock" }, { NULL, "xdp", "--xdp" }, { NULL, "tipc", "--tipc" },
	{ NULL, "ipv4", "-4|--ipv4" }, { NULL, "ipv6", "-6|--ipv6" },
	{ NULL, "family", "-f|--family FAMILY" },
	{ NULL, "query", "-A|--query LIST (ss's names, !NAME excludes)" },
	{ "States:", "all", "-a|--all" }, { NULL, "listening", "-l|--listening" },
	{ NULL, "bound-inactive", "-B|--bound-inactive" },
	{ "Details:", "options", "-o|--options" }, { NULL, "bpf", "-b|--bpf" }, { NULL, "extended", "-e|--extended" },
	{ NULL, "memory", "-m|--memory" }, { NULL, "info", "-i|--info" }, { NULL, "tos", "--tos" },
	{ NULL, "processes", "-p|--processes" }, { NULL, "threads", "-T|--threads" },
	{ NULL, "context", "-Z|--context" }, { NULL, "contexts", "-z|--contexts" },
	{ "Output:", "numeric", "-n|--numeric" }, { NULL, "resolve", "-r|--resolve" },
	{ NULL, "no-header", "-H|--no-header" }, { NULL, "oneline", "-O|--oneline" },
	{ NULL, "no-queues", "-Q|--no-queues" }, { NULL, "json", "--json" },
	{ NULL, "ndjson", "--ndjson" }, { NULL, "summary", "-s|--summary" },
	{ NULL, "inet-sockopt", "--inet-sockopt" }, { NULL, "cgroup", "--cgroup" },
	{ "Other:", "netns", "-N|--netns NAME|PATH|pid:PID|cgroup:PATH|unit:NAME (repeatable)" },
	{ NULL, "all-netns", "--all-netns" },
	{ NULL, "no-kernel-filter", "--no-kernel-filter" },
	{ NULL, "filter", "-F|--filter FILE (the FILTER, from a file; - is stdin)" },
	{ NULL, "owners", "--owners auto|bpf|proc (how the owners of sockets are found)" },
	{ NULL, "verbose", "-v|--verbose" },
	{ NULL, "help", "-h|--help" }, { NULL, "version", "-V|--version" },
};

/* Does the command have a long option of this name of its own? */
static bool is_extra_name(const struct opt_extra *extra, const char *name)
{
	for (size_t i = 0; extra && extra->longopts && extra->longopts[i].name; i++)
		if (!strcmp(extra->longopts[i].name, name))
			return true;
	return false;
}

/* Each common option's group (options.h), by long name. */
static const struct {
	unsigned group;
	const char *names;	/* " NAME NAME ... " */
} groups[] = {
	{ OPTS_G_INET, " tcp udp ipv4 ipv6 " },
	{ OPTS_G_FAMILY, " family " },
	{ OPTS_G_TABLES, " raw mptcp sctp unix packet tipc vsock xdp netlink udplite smc query "
			 "socket " },
	{ OPTS_G_STATES, " all listening " },
	{ OPTS_G_BOUND, " bound-inactive " },
	{ OPTS_G_DETAILS, " options extended memory info tos cgroup " },
	{ OPTS_G_SOCKOPT, " inet-sockopt bpf context contexts " },
	{ OPTS_G_PROCS, " processes threads " },
	{ OPTS_G_LAYOUT, " resolve oneline no-queues " },
	{ OPTS_G_OUTPUT, " numeric no-header json ndjson " },
	{ OPTS_G_SUMMARY, " summary " },
	{ OPTS_G_NETNS, " netns " },
	{ OPTS_G_DUMP, " all-netns no-kernel-filter owners verbose " },
	{ OPTS_G_FILTER, " filter " },
};

/* Is common option `name` outside the groups the command takes? (-h, -V: never.) */
static bool refused(const struct opt_extra *extra, const char *name)
{
	size_t len = strlen(name);

	if (!extra)
		return false;
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		const char *p = groups[i].names;

		while ((p = strstr(p, name)) && !(p[-1] == ' ' && p[len] == ' '))
			p += len;
		if (p)
			return !(extra->takes & groups[i].group);
	}
	return false;
}

/* Is common option c one the command refuses? Then say so (exit 2). */
static bool refuse_common(const struct opt_extra *extra, const char *cmd, int c)
{
	for (size_t i = 0; common_long[i].name; i++) {
		if (common_long[i].val != c || !refused(extra, common_long[i].name))
			continue;
		if (c < 0x100)
			fprintf(stderr, "sockdiag %s: option '-%c' (--%s) is not accepted by %s "
				"(see sockdiag %s --help)\n", cmd, c, common_long[i].name, cmd, cmd);
		else
			fprintf(stderr, "sockdiag %s: option '--%s' is not accepted by %s "
				"(see sockdiag %s --help)\n", cmd, common_long[i].name, cmd, cmd);
		return true;
	}
	return false;
}

static int join_args(struct cli_opts *o, int argc, char **argv)
{
	size_t len = 0;
	char *p;

	if (argc <= 0)
		return 0;
	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	p = o->filter_expr = malloc(len);
	if (!p)
		return -ENOMEM;
	for (int i = 0; i < argc; i++) {
		size_t l = strlen(argv[i]);

		memcpy(p, argv[i], l);
		p += l;
		*p++ = i + 1 < argc ? ' ' : '\0';
	}
	return 0;
}

/* -F FILE: the whole file is the expression (newlines are blanks to the parser, and are
 * kept so that an error can name its line). A regular file or stdin ("-"), at most
 * 1 MiB, no NUL byte (util/textfile.c). */
static int read_filter_file(struct cli_opts *o, const char *cmd)
{
	char err[256], q[256];
	size_t len = 0;
	char *buf = NULL;
	int r;

	r = text_read(o->filter_file, true, &buf, &len, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "sockdiag %s: -F %s: %s\n", cmd,
			text_excerpt(q, sizeof(q), o->filter_file, strlen(o->filter_file), 48), err);
		return r == -ENOMEM ? r : -EINVAL;
	}
	if (strspn(buf, OPTS_BLANKS) == len) {	/* an empty file: no filter */
		free(buf);
		buf = NULL;
	}
	o->filter_expr = buf;
	return 0;
}

/* Turn the selection into the query, ss's end-of-main() part. */
static int finish_selection(struct cli_opts *o, struct sel *s, const char *cmd)
{
	uint32_t fam_tables = 0;

	if (s->do_default) {
		s->state_filter = s->state_filter ? s->state_filter : ST_CONN;
		table_set(s, sdiag_table_mask_by_name("all"), true, false);
	}
	if (s->state_filter)
		s->states = s->state_filter;
	merge_defaults(s);
	for (unsigned f = 0; f < F_MAX; f++)
		if (s->fams & FB(f))
			fam_tables |= fam_defaults[f].tables;
	o->q.tables = s->tables & fam_tables;
	o->q.states = s->states;
	o->q.afs = ((s->fams & FB(F_INET)) ? SDIAG_AF_INET : 0) |
		   ((s->fams & FB(F_INET6)) ? SDIAG_AF_INET6 : 0);
	o->explicit_tables = s->explicit_tables & o->q.tables;
	/* Tables that came with a default or a group are skipped silently
	 * where the kernel cannot dump them; named ones are reported. */
	o->q.flags |= SDIAG_Q_SKIP_UNSUPPORTED;
	o->q.named_tables = o->explicit_tables;
	o->out.tables = o->q.tables;
	o->out.states = o->q.states;
	if (!o->q.tables) {
		fprintf(stderr, "sockdiag %s: no socket tables to show with such filter\n", cmd);
		return OPTS_EXIT;
	}
	if (!o->q.states) {
		fprintf(stderr, "sockdiag %s: no socket states to show with such filter\n", cmd);
		return OPTS_EXIT;
	}
	return 0;
}

int opts_parse(struct cli_opts *o, int argc, char **argv, const struct opt_extra *extra)
{
	const char *cmd = argc > 0 ? argv[0] : "list";
	struct sel s = { .do_default = true };
	struct option *lo = NULL;
	char *so = NULL;
	int c, r, li;

	memset(o, 0, sizeof(*o));
	o->q.sz = sizeof(o->q);
	o->out.fd = 1;
	o->out.format = OUT_TABLE;
	r = build_tables(extra, &lo, &so);
	if (r < 0)
		return r;
	optind = 0;	/* full re-initialisation (glibc) */
	opterr = 0;
	while ((li = -1, c = getopt_long(argc, argv, so, lo, &li)) != -1) {
		if (c == '?' || c == ':') {
			r = argerr_getopt(cmd, lo, c, argv);
			goto out;
		}
		/* A refused long option whose letter the command uses for one of its own. */
		if (li >= 0 && is_extra(extra, c) && refused(extra, lo[li].name) &&
		    !is_extra_name(extra, lo[li].name)) {
			fprintf(stderr, "sockdiag %s: option '--%s' is not accepted by %s (see "
				"sockdiag %s --help)\n", cmd, lo[li].name, cmd, cmd);
			r = -EINVAL;
			goto out;
		}
		if (is_extra(extra, c))
			r = extra->handle(extra->ctx, c, optarg);
		else if (refuse_common(extra, cmd, c))
			r = -EINVAL;
		else
			r = common_opt(o, &s, cmd, c, optarg, extra);
		if (r != 0)
			goto out;
	}
	if (o->filter_file && optind < argc) {
		fprintf(stderr, "sockdiag %s: a FILTER both with -F and as arguments\n", cmd);
		r = -EINVAL;
		goto out;
	}
	r = o->filter_file ? read_filter_file(o, cmd) : join_args(o, argc - optind, argv + optind);
	if (r < 0)
		goto out;
	r = finish_selection(o, &s, cmd);
out:
	free(lo);
	free(so);
	if (r != 0)
		opts_fini(o);
	return r;
}

void opts_fini(struct cli_opts *o)
{
	free(o->filter_expr);
	o->filter_expr = NULL;
}

void opts_usage(FILE *f, const char *cmd, const struct opt_extra *extra)
{
	const char *group = NULL;
	size_t col = 0;

	fprintf(f, "Usage: sockdiag %s %s\n", cmd,
		extra && extra->synopsis ? extra->synopsis : "[OPTIONS] [FILTER]");
	for (size_t i = 0; i < sizeof(help_items) / sizeof(help_items[0]); i++) {
		const char *text = help_items[i].text;
		int len = (int)strlen(text);

		if (help_items[i].group)
			group = help_items[i].group;
		if (refused(extra, help_items[i].name))
			continue;
		if (is_extra_name(extra, help_items[i].name))
			len = (int)strcspn(text, "|");	/* kill's --all: -a stays ours */
		if (group) {	/* the first item of a group shown */
			fprintf(f, "%s%-9s %.*s", col ? "\n" : "", group, len, text);
			col = 10 + (size_t)len;
			group = NULL;
		} else if (col + 1 + (size_t)len > 80) {
			fprintf(f, "\n          %.*s", len, text);
			col = 10 + (size_t)len;
		} else {
			fprintf(f, " %.*s", len, text);
			col += 1 + (size_t)len;
		}
	}
	fputc('\n', f);
	if (extra && extra->usage)	/* the command's own groups, in the same layout */
		fputs(extra->usage, f);
	fprintf(f, "FILTER:   ss's expression language, see sockdiag(8)\n");
}

/* DURATION: a positive number with an optional unit ms, s (default), m, h. */
int opts_duration(const char *arg, struct timespec *ret)
{
	static const struct {
		const char *unit;
		double s;
	} units[] = { { "", 1 }, { "s", 1 }, { "ms", 1e-3 }, { "m", 60 }, { "h", 3600 } };
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || !isfinite(v) || v <= 0)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		double sec = v * units[i].s;

		if (strcmp(end, units[i].unit))
			continue;
		if (sec < 1e-3 || sec > 86400 * 365)
			return -EINVAL;
		ret->tv_sec = (time_t)sec;
		ret->tv_nsec = (long)((sec - (double)ret->tv_sec) * 1e9);
		return 0;
	}
	return -EINVAL;
}

unsigned opts_watch_groups(const struct cli_opts *o)
{
	uint32_t afs = o->q.afs ? o->q.afs : SDIAG_AF_ALL;
	unsigned g = 0;

	if (o->q.tables & SDIAG_TABLE_BIT(SDIAG_T_TCP))
		g |= (afs & SDIAG_AF_INET ? SDIAG_WATCH_TCP4 : 0) |
		     (afs & SDIAG_AF_INET6 ? SDIAG_WATCH_TCP6 : 0);
	if (o->q.tables & SDIAG_TABLE_BIT(SDIAG_T_UDP))
		g |= (afs & SDIAG_AF_INET ? SDIAG_WATCH_UDP4 : 0) |
		     (afs & SDIAG_AF_INET6 ? SDIAG_WATCH_UDP6 : 0);
	return g;
}
