// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the parsed options do once a command runs (options.c parses them):
 * the FILTER compiled against the selection (its state clauses replace the
 * default states, as ss's do) and its errors shown with a caret; the
 * namespaces of -N and --all-netns; a table's dump error reported once; the
 * owners map of -p.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

#include "cli/opts/options.h"
#include "util/argerr.h"
#include "util/textfile.h"

#define T(x) SDIAG_TABLE_BIT(SDIAG_T_##x)

/*
 * The message, the line of the expression the error is on (with -F: "FILE:LINE: "
 * before the message) and a marker under the offending part. Of the line, at most
 * 32 bytes either side of the error are shown, escaped: it may be any file's text.
 */
void opts_filter_error(FILE *f, const char *file, const char *e,
		       const struct sdiag_filter_error *err)
{
	const char *line = e, *nl;
	size_t len = strlen(e), off = err->offset, elen = err->len, col, width, from, to, mark, n;
	char before[32 * 4 + 8], at[40 * 4 + 8], after[32 * 4 + 8], fq[256];
	unsigned lineno = 1;

	if (off > len)
		off = len;
	for (const char *p = e; p < e + off; p++)
		if (*p == '\n') {
			line = p + 1;
			lineno++;
		}
	nl = strchr(line, '\n');
	width = nl ? (size_t)(nl - line) : strlen(line);
	if (width && line[width - 1] == '\r')
		width--;
	col = (size_t)(e + off - line);
	if (col > width)
		col = width;
	if (elen > width - col)
		elen = width - col;
	from = col > 32 ? col - 32 : 0;
	to = width - col - elen > 32 ? col + elen + 32 : width;
	text_excerpt(before, sizeof(before), line + from, col - from, 32);
	text_excerpt(at, sizeof(at), line + col, elen, 40);
	text_excerpt(after, sizeof(after), line + col + elen, to - col - elen, 32);
	mark = strlen(before) + (from ? 3 : 0);
	n = strlen(at);
	fprintf(f, "sockdiag: filter: ");
	if (file)
		fprintf(f, "%s:%u: ", strcmp(file, "-") ?
			text_excerpt(fq, sizeof(fq), file, strlen(file), 48) : "(stdin)", lineno);
	fprintf(f, "%s\n%s%s%s%s%s\n%*s^", err->msg[0] ? err->msg : "syntax error",
		from ? "..." : "", before, at, after, to < width ? "..." : "", (int)mark, "");
	for (size_t i = 1; i < n; i++)
		fputc('~', f);
	fputc('\n', f);
}

/* sock_diag reports a cgroup only for inet sockets (and SMC's TCP part): a
 * cgroup/unit condition on tables the user named that have none is refused
 * rather than left to match nothing. Tables that came by default are simply
 * not dumped (the filter excludes them). */
static int check_cgroup_tables(const struct cli_opts *o, const struct sdiag_filter *f)
{
	const uint32_t with_cgroup = SDIAG_TABLES_INET | T(SMC);
	uint32_t bad = o->explicit_tables & ~with_cgroup;

	if (!bad || !sdiag_filter_uses_cgroups(f))
		return 0;
	for (unsigned t = 0; t < SDIAG_T_MAX; t++)
		if (bad & SDIAG_TABLE_BIT(t)) {
			fprintf(stderr,
				"sockdiag: filter: cgroup/unit: %s sockets carry no cgroup in "
				"sock_diag (only inet sockets do): select inet tables (-t, -u, ...)\n",
				(SDIAG_TABLE_BIT(t) & SDIAG_TABLES_UNIX) ? "unix" :
				sdiag_table_netid((enum sdiag_table)t));
			break;
		}
	return -EINVAL;
}

int opts_filter(struct cli_opts *o, struct sdiag_filter **ret)
{
	struct sdiag_filter_error err = { 0 };
	struct sdiag_filter *f = NULL;
	int r;

	*ret = NULL;
	if (!o->filter_expr)
		return 0;
	r = sdiag_filter_parse(&f, o->filter_expr, &err);
	if (r == -EINVAL) {
		opts_filter_error(stderr, o->filter_file, o->filter_expr, &err);
		return -EINVAL;
	}
	if (r < 0)
		return r;
	r = check_cgroup_tables(o, f);
	if (r < 0) {
		sdiag_filter_free(f);
		return r;
	}
	/* State clauses replace the default states, as ss's "state"/"exclude" do. */
	if (sdiag_filter_names_states(f))
		o->q.states = SDIAG_STATES_ALL;
	o->out.states = o->q.states & sdiag_filter_states(f);
	o->q.filter = f;
	*ret = f;
	return 0;
}

bool opts_note_bound_inactive(const struct cli_opts *o, const char *cmd)
{
	struct utsname u;
	unsigned major, minor;

	if (o->out.states != SDIAG_STATE_BIT(SDIAG_SS_BOUND_INACTIVE) ||
	    !(o->q.tables & SDIAG_TABLE_BIT(SDIAG_T_TCP)))
		return false;
	if (uname(&u) < 0 || sscanf(u.release, "%u.%u", &major, &minor) != 2 ||
	    major > 6 || (major == 6 && minor >= 8))
		return false;
	fprintf(stderr, "sockdiag %s: this kernel (%s) does not dump bound-inactive sockets "
		"(Linux 6.8 and later do)\n", cmd, u.release);
	return true;
}

bool opts_netns_many(const struct cli_opts *o)
{
	return o->n_netns > 1 ||
	       (o->n_netns == 1 && (!strncmp(o->netns, "cgroup:", 7) ||
				    !strncmp(o->netns, "unit:", 5)));
}

int opts_netns_list(const struct cli_opts *o, const char *cmd, struct sdiag_netns **ret,
		    size_t *ret_n)
{
	size_t bad = 0;
	int r;

	r = sdiag_netns_list_specs(o->netns_specs, o->n_netns, ret, ret_n, &bad);
	if (r < 0) {
		const char *spec = o->netns_specs[bad < o->n_netns ? bad : 0];
		bool cg = !strncmp(spec, "cgroup:", 7) || !strncmp(spec, "unit:", 5);

		fprintf(stderr, "sockdiag %s: -N %s: %s\n", cmd, spec,
			cg && r == -ENOENT ? "no such cgroup" :
			cg && r == -EINVAL ? "not a cgroup path or unit name" : strerror(-r));
		return cg && (r == -ENOENT || r == -EINVAL) ? -EINVAL : r;
	}
	return 0;
}

/* Linux 7.1 removed UDP-Lite: a kernel that makes no IPPROTO_UDPLITE socket has none (the
 * udplite table is then refused although udp_diag is there). RELEASE: uname's. */
static bool udplite_removed(char *release, size_t size)
{
	struct utsname u;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDPLITE);

	if (fd >= 0) {
		close(fd);
		return false;
	}
	if (errno != EPROTONOSUPPORT)
		return false;
	snprintf(release, size, "%s", uname(&u) == 0 ? u.release : "?");
	return true;
}

bool opts_report_table_error(const struct cli_opts *o, uint32_t *reported, enum sdiag_table t,
			     int err)
{
	char release[sizeof(((struct utsname *)0)->release)];
	static const struct {
		uint32_t tables;
		const char *name;
	} groups[] = {
		{ T(TCP), "tcp" },
		{ T(UDP), "udp" },
		{ T(UDPLITE), "udplite" },
		{ T(RAW), "raw" },
		{ T(MPTCP), "mptcp" },
		{ T(SCTP), "sctp" },
		{ SDIAG_TABLES_UNIX, "unix" },
		{ T(NETLINK), "netlink" },
		{ SDIAG_TABLES_PACKET, "packet" },
		{ SDIAG_TABLES_VSOCK, "vsock" },
		{ T(XDP), "xdp" },
		{ T(TIPC), "tipc" },
		{ T(SMC), "smc" },
	};
	uint32_t bit = SDIAG_TABLE_BIT(t), mask = bit;
	const char *name = "?", *module = sdiag_table_module(t) ? sdiag_table_module(t) : "?";
	bool unsupported = err == -EAFNOSUPPORT || err == -EPROTONOSUPPORT;

	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (groups[i].tables & bit) {
			mask = groups[i].tables;
			name = groups[i].name;
			break;
		}
	(void)o;
	if (*reported & mask)
		return !unsupported;
	*reported |= mask;
	if (unsupported && t == SDIAG_T_UDPLITE && udplite_removed(release, sizeof(release)))
		fprintf(stderr, "sockdiag: udplite: not supported by this kernel (%s: UDP-Lite was "
			"removed in Linux 7.1)\n", release);
	else if (unsupported)
		fprintf(stderr, "sockdiag: %s: not supported by this kernel (no %s)\n", name,
			module);
	else
		fprintf(stderr, "sockdiag: %s: %s\n", name, strerror(-err));
	return !unsupported;
}

/* Whether this process may read every process's descriptors (/proc/PID/fd). */
static bool can_ptrace(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = { { 0 } };

	if (syscall(SYS_capget, &h, d) < 0)
		return geteuid() == 0;
	return d[CAP_SYS_PTRACE / 32].effective & (1u << (CAP_SYS_PTRACE % 32));
}

const char *opts_owners_hint(const struct cli_opts *o, int err)
{
	if (o->owners != SDIAG_OWNERS_BPF)
		return "";
	if (err == -EPERM)
		return " (--owners=bpf): the BPF iterator needs root (CAP_BPF and CAP_PERFMON); "
		       "--owners=proc walks /proc instead";
	return " (--owners=bpf)";
}

int opts_scan_owners(struct cli_opts *o, const char *cmd, struct sdiag_procmap **ret)
{
	enum sdiag_owners src;
	int r, err, bpf_err = 0;

	r = sdiag_procmap_scan_using(ret, NULL, o->threads ? o->owners | SDIAG_OWNERS_THREADS
								: o->owners);
	if (r < 0 && o->owners == SDIAG_OWNERS_BPF && !o->threads && r != -EPERM &&
	    r != -EACCES && r != -EOPNOTSUPP) {
		/* The kernel, not the build or the caller's rights: its loader needs
		 * BPF_PROG_TYPE_SYSCALL (Linux 5.14) and the kernel's BTF. */
		struct utsname u;

		fprintf(stderr, "sockdiag %s: --owners=bpf: this kernel (%s) cannot load the BPF "
			"iterator (%s; Linux 5.14 and later with BTF can): walking /proc instead\n",
			cmd, uname(&u) == 0 ? u.release : "?", strerror(-r));
		bpf_err = r;
		r = sdiag_procmap_scan_using(ret, NULL, SDIAG_OWNERS_PROC);
	}
	if (r < 0)
		return r;
	src = sdiag_procmap_source(*ret, &err);
	err = bpf_err ? bpf_err : err;
	if (src != SDIAG_OWNERS_BPF && !o->owners_noted && !can_ptrace()) {
		fprintf(stderr, "sockdiag %s: note: not root (no CAP_SYS_PTRACE): the owners of "
				"other users' sockets are not shown\n", cmd);
		o->owners_noted = true;
	}
	if (!o->verbose)
		return 0;
	if (o->threads)
		fprintf(stderr, "sockdiag %s: owners: /proc walk, per thread (-T%s)\n", cmd,
			o->owners == SDIAG_OWNERS_BPF ? ": not the BPF iterator, which reads a "
			"process's descriptors once" : "");
	else if (src == SDIAG_OWNERS_BPF)
		fprintf(stderr, "sockdiag %s: owners: BPF iterator\n", cmd);
	else if (o->owners == SDIAG_OWNERS_PROC)
		fprintf(stderr, "sockdiag %s: owners: /proc walk (--owners=proc)\n", cmd);
	else if (err == -EOPNOTSUPP)
		fprintf(stderr, "sockdiag %s: owners: /proc walk (BPF iterator not built in)\n",
			cmd);
	else
		fprintf(stderr, "sockdiag %s: owners: /proc walk (BPF iterator: %s)\n", cmd,
			strerror(-err));
	return 0;
}

int opts_rcvbuf(const char *cmd, const char *arg, int *ret)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || *end || v < 4096 || v > INT32_MAX) {
		char q[TEXT_QUOTE_LEN];

		fprintf(stderr, "sockdiag %s: --rcvbuf: '%s' is not a size in bytes (>= 4096)\n",
			cmd, TQ(q, arg));
		return -EINVAL;
	}
	*ret = (int)v;
	return 0;
}
