/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sockdiag kill [OPTIONS] FILTER: destroy the sockets `list` would show with
 * the same options and filter, and report each one truthfully.
 *
 * Selection is list's (cli/opts/options.c), the destroying is the library's
 * (sdiag_kill: exact ids with cookies, batches, SO_REUSEPORT retries, passes),
 * the rows are the shared renderers' with a "result" column. Exit status as
 * pkill: 0 something destroyed and nothing failed; 1 nothing matched, nothing
 * could be destroyed, or something failed or was denied (no CAP_NET_ADMIN
 * over one of several namespaces); 2 usage; 3 fatal (no CAP_NET_ADMIN in the
 * one namespace, kernel without CONFIG_INET_DIAG_DESTROY).
 *
 * --dead-backends FILE selects instead of a FILTER: one reconcile pass
 * (backends/backends.h) per namespace. --conntrack then deletes the
 * conntrack entries of the destroyed sockets' flows (conntrack/conntrack.h).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "backends/backends.h"
#include "cli/commands.h"
#include "cli/opts/options.h"
#include "cli/render/output.h"
#include "cli/run/run.h"
#include "conntrack/conntrack.h"
#include "sockdiag.h"
#include "util/textfile.h"

enum { EXIT_FATAL = 3 };

enum {
	OPT_ALL = 0x100,
	OPT_DRY_RUN,
	OPT_MPTCP_SUBFLOWS,
	OPT_BATCH,
	OPT_PASSES,
	OPT_DEAD_BACKENDS,
	OPT_CONNTRACK,
};

struct kill_opts {
	bool all; /* no filter needed */
	bool dry_run;
	bool mptcp_subflows;
	unsigned batch;
	unsigned passes;
	const char *backends_path; /* --dead-backends */
	struct backend_set backends;
	bool conntrack;
};

/* Counts for the summary line, per namespace and in total. */
struct tally {
	uint64_t destroyed, gone, unsupported, denied, error, would;
	uint64_t ct_deleted; /* conntrack entries */
};

struct kill_ctx {
	const struct cli_opts *o;
	const struct kill_opts *k;
	struct out *out;
	const char *netns;    /* label for rows and the summary, or NULL */
	uint64_t netns_inode; /* its inode (--all-netns), 0 = none */
	struct tally t;
	struct tally *total; /* --all-netns, several -N: the sum of every t */
	int out_err; /* first write error */
	/* --conntrack with a FILTER: the flows of the sockets destroyed. */
	struct ct_tuple *flows;
	size_t n_flows, cap_flows;
	bool collect_flows;
};

static int handle_opt(void *ctx, int val, const char *arg)
{
	struct kill_opts *k = ctx;
	char *end;
	unsigned long n, max;

	switch (val) {
	case OPT_ALL:
		k->all = true;
		return 0;
	case OPT_DRY_RUN:
		k->dry_run = true;
		return 0;
	case OPT_MPTCP_SUBFLOWS:
		k->mptcp_subflows = true;
		return 0;
	case OPT_DEAD_BACKENDS:
		k->backends_path = arg;
		return 0;
	case OPT_CONNTRACK:
		k->conntrack = true;
		return 0;
	case OPT_BATCH:
	case OPT_PASSES:
		max = val == OPT_BATCH ? 65536 : 100;
		errno = 0;
		n = strtoul(arg, &end, 10);
		if (errno || *end || !*arg || n == 0 || n > max) {
			char q[TEXT_QUOTE_LEN];

			fprintf(stderr, "sockdiag kill: --%s: expected 1..%lu, got '%s'\n",
				val == OPT_BATCH ? "batch" : "passes", max, TQ(q, arg));
			return -EINVAL;
		}
		if (val == OPT_BATCH)
			k->batch = (unsigned)n;
		else
			k->passes = (unsigned)n;
		return 0;
	default:
		return -EINVAL;
	}
}

/* Why a socket the library never sent to the kernel cannot be destroyed. */
static const char *unsupported_reason(const struct sdiag_sock *s)
{
	if (s->table == SDIAG_T_MPTCP)
		return "MPTCP sockets cannot be destroyed (see --mptcp-subflows)";
	if (s->table == SDIAG_T_TCP &&
	    (s->state == SDIAG_SS_CLOSE || s->state == SDIAG_SS_BOUND_INACTIVE))
		return "bound but neither listening nor connected: the kernel cannot find it";
	if (s->table == SDIAG_T_TCP && s->state == SDIAG_SS_LISTEN)
		return "the kernel refuses to destroy this listener (MPTCP subflow listener)";
	if (s->table == SDIAG_T_TCP && s->state == SDIAG_SS_TIME_WAIT)
		return "this kernel cannot destroy TIME-WAIT sockets (Linux 6.0 and later can)";
	if (s->family == AF_INET || s->family == AF_INET6)
		return "the kernel has no destroy for this protocol";
	return "the kernel cannot destroy sockets of this family";
}

static int emit(struct kill_ctx *c, const struct sdiag_sock *s, const char *result,
		const char *detail)
{
	struct out_extra x = { .result = result,
			       .result_detail = detail,
			       .netns = c->netns,
			       .netns_inode = c->netns_inode };
	int r;

	if (c->out_err)
		return 0; /* keep destroying; the write error is reported at the end */
	r = out_sock(c->out, s, &x);
	if (r < 0)
		c->out_err = r;
	return 0;
}

/* A destroyed socket's flow, for its conntrack entry (memory: 40 bytes each;
 * running short only leaves entries to time out). */
static void add_flow(struct kill_ctx *c, const struct sdiag_sock *s)
{
	if (c->n_flows == c->cap_flows) {
		size_t cap = c->cap_flows ? c->cap_flows * 2 : 256;
		struct ct_tuple *v = realloc(c->flows, cap * sizeof(*v));

		if (!v)
			return;
		c->flows = v;
		c->cap_flows = cap;
	}
	if (ct_tuple_of_sock(s, &c->flows[c->n_flows]))
		c->n_flows++;
}

static int result_cb(const struct sdiag_sock *s, enum sdiag_destroy_result res, int err,
		     void *userdata)
{
	struct kill_ctx *c = userdata;
	const char *detail = NULL;

	switch (res) {
	case SDIAG_DESTROYED:
		c->t.destroyed++;
		if (c->collect_flows)
			add_flow(c, s);
		break;
	case SDIAG_GONE:
		c->t.gone++;
		break;
	case SDIAG_UNSUPPORTED:
		c->t.unsupported++;
		detail = unsupported_reason(s);
		break;
	case SDIAG_DENIED:
		c->t.denied++;
		detail = "no CAP_NET_ADMIN over its network namespace";
		break;
	default:
		c->t.error++;
		detail = strerror(err < 0 ? -err : EIO);
		break;
	}
	return emit(c, s, sdiag_destroy_result_name(res), detail);
}

static int dry_cb(const struct sdiag_sock *s, void *userdata)
{
	struct kill_ctx *c = userdata;

	if (sdiag_destroyable(s)) {
		c->t.would++;
		return emit(c, s, "would-destroy", NULL);
	}
	c->t.unsupported++;
	return emit(c, s, "unsupported", unsupported_reason(s));
}

/* A namespace over which we have no CAP_NET_ADMIN (one of several): what
 * could be destroyed is reported denied, as the kernel would answer it. */
static int denied_cb(const struct sdiag_sock *s, void *userdata)
{
	if (sdiag_destroyable(s))
		return result_cb(s, SDIAG_DENIED, -EPERM, userdata);
	return result_cb(s, SDIAG_UNSUPPORTED, -EOPNOTSUPP, userdata);
}

static int err_cb(enum sdiag_table t, int family, int err, void *userdata)
{
	(void)userdata;
	if (err != -EAFNOSUPPORT && err != -EPROTONOSUPPORT)
		return err;
	/* Tables that came with a default or a group never come here
	 * (SDIAG_Q_SKIP_UNSUPPORTED): they are skipped silently. */
	fprintf(stderr,
		"sockdiag kill: %s%s: the kernel cannot dump these sockets (%s); skipped\n",
		sdiag_table_netid(t),
		family == AF_INET  ? " (IPv4)" :
		family == AF_INET6 ? " (IPv6)" :
				     "",
		strerror(-err));
	return 0;
}

/* Returns 0, or an exit status after printing why. */
static int fatal(int r, const char *netns)
{
	const char *in = netns ? " in network namespace " : "";

	if (r == -EPERM) {
		fprintf(stderr,
			"sockdiag kill: no CAP_NET_ADMIN over the target network namespace%s%s: "
			"no socket can be destroyed (run it as root, or grant it CAP_NET_ADMIN)\n",
			in, netns ? netns : "");
		return EXIT_FATAL;
	}
	if (r == -EOPNOTSUPP) {
		fprintf(stderr, "sockdiag kill: this kernel cannot destroy sockets: it was built "
				"without CONFIG_INET_DIAG_DESTROY\n");
		return EXIT_FATAL;
	}
	fprintf(stderr, "sockdiag kill: %s%s%s\n", strerror(-r), in, netns ? netns : "");
	return EXIT_RUNTIME;
}

/* The capability and kernel checks sdiag_kill makes, made before anything
 * is printed. A dry run needs neither. Returns 0 or an exit status. */
static int precheck(const struct kill_opts *k, struct sdiag_handle *h, const char *netns)
{
	int r;

	if (k->dry_run)
		return 0;
	r = sdiag_destroy_check(h);
	return r < 0 ? fatal(r, netns) : 0;
}

/* --conntrack: a ctnetlink socket in the namespace of nsfd (-1: this one), or
 * NULL after one line saying why not (the sockets are still destroyed). */
static struct ct *open_ct(const struct kill_ctx *c, int nsfd)
{
	struct ct *ct = NULL;
	int r;

	if (!c->k->conntrack || c->k->dry_run)
		return NULL;
	r = ct_open(&ct, nsfd);
	if (r < 0)
		fprintf(stderr, "sockdiag kill: conntrack%s%s: %s; sockets are still destroyed\n",
			c->netns ? ": netns " : "", c->netns ? c->netns : "", ct_strerror(r));
	return r < 0 ? NULL : ct;
}

static void ct_failed(const struct kill_ctx *c, int err)
{
	fprintf(stderr, "sockdiag kill: conntrack%s%s: %s\n", c->netns ? ": netns " : "",
		c->netns ? c->netns : "", ct_strerror(err));
}

/* --dead-backends: one reconcile pass. Returns 0 or a negative errno. */
static int kill_backends(struct kill_ctx *c, struct sdiag_handle *h, struct ct *ct)
{
	struct backends_pass_opts bo = {
		.dry_run = c->k->dry_run,
		.ct = ct,
		.report = result_cb,
		.would = dry_cb,
		.userdata = c,
	};
	struct backends_pass_result br;
	int r;

	r = backends_pass(h, &c->k->backends, &bo, &br);
	if (r < 0)
		return r;
	c->t.ct_deleted += br.ct_deleted;
	if (br.ct_err)
		ct_failed(c, br.ct_err);
	return 0;
}

/* Kill (or dry-run) in one namespace (nsfd: its descriptor, -1 for this
 * one). One of several (many) over which we have no CAP_NET_ADMIN is no
 * reason to stop: its sockets are denied. Returns 0 or an exit status. */
static int kill_in(struct kill_ctx *c, struct sdiag_handle *h, int nsfd, bool many)
{
	SDIAG_OPTS(sdiag_kill_opts, ko,
			.batch = c->k->batch,
			.max_passes = c->k->passes,
			.mptcp_subflows = c->k->mptcp_subflows);
	struct ct *ct = open_ct(c, nsfd);
	int r;

	c->collect_flows = ct && !c->k->backends_path;
	c->n_flows = 0;
	if (c->k->backends_path)
		r = kill_backends(c, h, ct);
	else if (c->k->dry_run)
		r = sdiag_dump(h, &c->o->q, dry_cb, err_cb, c);
	else if (many && sdiag_destroy_check(h) == -EPERM)
		r = sdiag_dump(h, &c->o->q, denied_cb, err_cb, c);
	else
		r = sdiag_kill(h, &c->o->q, &ko, result_cb, err_cb, c);
	if (r == 0 && c->n_flows) {
		size_t deleted = 0;
		int e = ct_delete_flows(ct, c->flows, c->n_flows, &deleted);

		c->t.ct_deleted += deleted;
		if (e < 0)
			ct_failed(c, e);
	}
	ct_close(ct);
	return r < 0 ? fatal(r, c->netns) : 0;
}

static void summary(const struct kill_ctx *c, const struct tally *t, const char *netns)
{
	char where[96] = "";

	if (netns)
		snprintf(where, sizeof(where), "netns %s: ", netns);
	if (c->k->dry_run) {
		fprintf(stderr, "%swould destroy %llu, not destroyable %llu\n", where,
			(unsigned long long)t->would, (unsigned long long)t->unsupported);
		return;
	}
	fprintf(stderr, "%sdestroyed %llu, already gone %llu, not destroyable %llu, denied %llu",
		where, (unsigned long long)t->destroyed, (unsigned long long)t->gone,
		(unsigned long long)t->unsupported, (unsigned long long)t->denied);
	if (t->error)
		fprintf(stderr, ", failed %llu", (unsigned long long)t->error);
	if (c->k->conntrack)
		fprintf(stderr, ", conntrack entries deleted %llu",
			(unsigned long long)t->ct_deleted);
	fputc('\n', stderr);
}

static void tally_add(struct tally *a, const struct tally *b)
{
	a->destroyed += b->destroyed;
	a->gone += b->gone;
	a->unsupported += b->unsupported;
	a->denied += b->denied;
	a->error += b->error;
	a->would += b->would;
	a->ct_deleted += b->ct_deleted;
}

/* One namespace of --all-netns or several -N: its own tally, summed. */
static int kill_ns(void *ctx, const struct sdiag_netns *ns, int fd)
{
	struct kill_ctx *c = ctx;
	struct sdiag_handle *h = NULL;
	int r;

	c->netns = ns->label;
	c->netns_inode = ns->inode;
	memset(&c->t, 0, sizeof(c->t));
	r = sdiag_open_netns(&h, fd);
	if (r < 0) {
		fprintf(stderr, "sockdiag kill: netns %s: cannot enter: %s\n", ns->label,
			strerror(-r));
		r = EXIT_RUNTIME;
	} else {
		r = kill_in(c, h, fd, true);
		sdiag_close(h);
		summary(c, &c->t, ns->label);
		tally_add(c->total, &c->t);
	}
	c->netns = NULL;
	c->netns_inode = 0;
	return r;
}

/* The handle, and the namespace's descriptor in *ret_fd (-1: this one; the
 * caller closes it). */
static int open_target(const struct cli_opts *o, struct sdiag_handle **ret, int *ret_fd)
{
	int fd = -1, r;

	if (!o->netns)
		r = sdiag_open(ret);
	else if ((r = sdiag_netns_open(o->netns, &fd)) >= 0)
		r = sdiag_open_netns(ret, fd);
	if (r >= 0) {
		*ret_fd = fd;
		return r;
	}
	if (fd >= 0)
		close(fd);
	if (r < 0 && o->netns && fd < 0)
		argerr_netns("kill", o->netns, r);
	else if (r < 0)
		fprintf(stderr, "sockdiag kill: %s%s: %s\n",
			o->netns ? "netns " : "cannot open a diag socket", o->netns ? o->netns : "",
			strerror(-r));
	return r;
}

static int exit_status(const struct kill_opts *k, const struct tally *t)
{
	if (k->dry_run)
		return t->would ? EXIT_OK : EXIT_RUNTIME;
	return t->destroyed && !t->denied && !t->error ? EXIT_OK : EXIT_RUNTIME;
}

/* In the layout of opts_usage(): a group label in 10 columns, <= 80 wide. */
static const char kill_usage[] =
	"Kill:     --all (no FILTER: destroy every socket the options select)\n"
	"          --dry-run (destroy nothing; show what would be destroyed)\n"
	"          --mptcp-subflows (for matched MPTCP sockets, their TCP subflows)\n"
	"          --batch N (destroy requests per batch, default 1024)\n"
	"          --passes N (dumps at most, default 4; 1 = no re-dump)\n"
	"          --dead-backends FILE (instead of a FILTER: destroy TCP and connected\n"
	"          UDP sockets whose peer is a backend FILE lists: ADDR:PORT[/tcp|/udp])\n"
	"          --conntrack (also delete the conntrack entries of the destroyed\n"
	"          sockets' flows; with --dead-backends, the backends' UDP entries)\n";

int cmd_kill(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "all", no_argument, NULL, OPT_ALL },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "mptcp-subflows", no_argument, NULL, OPT_MPTCP_SUBFLOWS },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "passes", required_argument, NULL, OPT_PASSES },
		{ "dead-backends", required_argument, NULL, OPT_DEAD_BACKENDS },
		{ "conntrack", no_argument, NULL, OPT_CONNTRACK },
		{ 0 },
	};
	struct kill_opts k = { 0 };
	struct opt_extra extra = {
		.longopts = longopts,
		.shortopts = "",
		.handle = handle_opt,
		.ctx = &k,
		.usage = kill_usage,
		.synopsis = "[OPTIONS] {FILTER|--all|--dead-backends FILE}",
		.takes = OPTS_G_ALL & ~OPTS_G_SUMMARY,
	};
	struct cli_opts o;
	struct sdiag_filter *f = NULL;
	struct sdiag_procmap *pm = NULL;
	struct sdiag_handle *h = NULL;
	struct kill_ctx c = { .o = &o, .k = &k };
	struct sdiag_netns *ns = NULL;
	size_t n_ns = 0;
	bool many;
	struct tally total = { 0 };
	int r, status = EXIT_OK, nsfd = -1;
	char err[512];

	memset(&o, 0, sizeof(o));
	r = opts_parse(&o, argc, argv, &extra);
	if (r == OPTS_EXIT)
		return EXIT_OK;
	if (r < 0)
		return EXIT_USAGE;
	if (o.filter_expr && k.all) {
		fprintf(stderr, "sockdiag kill: --all and a FILTER: give one or the other\n");
		status = EXIT_USAGE;
		goto out;
	}
	if (k.backends_path && (o.filter_expr || k.all)) {
		fprintf(stderr, "sockdiag kill: --dead-backends and %s: give one or the other\n",
			k.all ? "--all" : "a FILTER");
		status = EXIT_USAGE;
		goto out;
	}
	if (k.backends_path && o.explicit_tables) {
		fprintf(stderr, "sockdiag kill: --dead-backends acts on TCP and connected UDP "
				"sockets: no table options (-t, -u, -x, -A ...)\n");
		status = EXIT_USAGE;
		goto out;
	}
	if (k.backends_path) {
		/* Read whole before anything is destroyed: a malformed file, nothing. */
		if (backends_load(&k.backends, k.backends_path, BACKENDS_MAX_DEFAULT, err,
				  sizeof(err)) < 0) {
			fprintf(stderr, "sockdiag kill: --dead-backends: %s\n", err);
			status = EXIT_USAGE;
			goto out;
		}
		o.out.tables |= SDIAG_TABLE_BIT(SDIAG_T_TCP) | SDIAG_TABLE_BIT(SDIAG_T_UDP);
	} else if (!o.filter_expr && !k.all) {
		fprintf(stderr,
			"sockdiag kill: no FILTER: refusing to destroy every selected socket "
			"(give a FILTER, or --all)\n");
		status = EXIT_USAGE;
		goto out;
	}
	if (opts_filter(&o, &f) < 0) {
		status = EXIT_USAGE;
		goto out;
	}
	/* Scan only when asked: -p, or a filter on pid/comm/user. */
	if (o.processes || sdiag_filter_needs_procs(f)) {
		r = opts_scan_owners(&o, "kill", &pm);
		if (r < 0) {
			fprintf(stderr, "sockdiag kill: cannot scan processes: %s%s\n", strerror(-r),
				opts_owners_hint(&o, r));
			status = EXIT_RUNTIME;
			goto out;
		}
		o.q.procmap = pm;
		if (o.processes)
			o.out.columns |= OUT_COL_PROCESS;
	}
	o.out.columns |= OUT_COL_RESULT;
	many = run_netns_many(&o);
	if (many) {
		status = run_netns_set(&o, "kill", &ns, &n_ns);
		if (status)
			goto out;
		o.out.columns |= OUT_COL_NETNS;
	}
	if (k.mptcp_subflows)
		o.out.tables |= SDIAG_TABLE_BIT(SDIAG_T_TCP); /* subflow rows: show Netid */
	if (!many) {
		if (open_target(&o, &h, &nsfd) < 0) {
			status = EXIT_RUNTIME;
			goto out;
		}
		/* Fatal conditions before any output; JSON still gets its
		 * (empty) array, as when nothing matched. */
		status = precheck(&k, h, NULL);
		if (status) {
			if (o.out.format == OUT_JSON && out_new(&c.out, &o.out) == 0)
				(void)out_finish(c.out);
			goto out;
		}
	}
	r = out_new(&c.out, &o.out);
	if (r < 0) {
		status = EXIT_RUNTIME;
		goto out;
	}
	if (many) {
		c.total = &total;
		status = run_each_netns("kill", ns, n_ns, kill_ns, &c);
	} else {
		status = kill_in(&c, h, nsfd, false);
		total = c.t;
	}
	r = out_finish(c.out);
	if (!c.out_err && r < 0)
		c.out_err = r;
	if (c.out_err && c.out_err != -EPIPE)
		fprintf(stderr, "sockdiag kill: output: %s\n", strerror(-c.out_err));
	if (status != EXIT_FATAL)
		summary(&c, &total, NULL);
	if (!status)
		status = exit_status(&k, &total);
out:
	if (nsfd >= 0)
		close(nsfd);
	free(c.flows);
	backends_free(&k.backends);
	out_free(c.out);
	free(ns);
	sdiag_close(h);
	sdiag_procmap_free(pm);
	sdiag_filter_free(f);
	opts_fini(&o);
	return status;
}
