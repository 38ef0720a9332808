// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sockdiag list [OPTIONS] [FILTER]: dump the selected sockets and render them.
 *
 * Exit status: 0 listed (possibly nothing), 1 a dump, namespace or write
 * failed (what could be listed was), 2 usage or filter error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "options.h"
#include "output.h"

struct list_ctx {
	const struct cli_opts *opts;
	struct out *out;
	struct out_extra extra;
	uint32_t reported;	/* tables already complained about */
	bool failed;
	int out_err;		/* the renderer's error, which stops the dump */
};

static int sock_cb(const struct sdiag_sock *s, void *userdata)
{
	struct list_ctx *c = userdata;
	int r = out_sock(c->out, s, c->extra.netns ? &c->extra : NULL);

	if (r < 0)
		c->out_err = r;
	return r;
}

static int err_cb(enum sdiag_table t, int family, int err, void *userdata)
{
	struct list_ctx *c = userdata;

	(void)family;
	if (opts_report_table_error(c->opts, &c->reported, t, err))
		c->failed = true;
	return 0;
}

/* Dump one namespace (nsfd -1: ours). Returns 0 or a negative errno that
 * should stop everything (a write error). */
static int list_one(struct list_ctx *c, const struct sdiag_query *q, int nsfd, const char *label)
{
	struct sdiag_handle *h = NULL;
	int r;

	r = nsfd < 0 ? sdiag_open(&h) : sdiag_open_netns(&h, nsfd);
	if (r < 0) {
		if (nsfd >= 0)	/* named by its label, or as given to -N */
			fprintf(stderr, "sockdiag: netns %s: cannot enter: %s\n",
				label ? label : c->opts->netns, strerror(-r));
		else
			fprintf(stderr, "sockdiag: cannot open a sock_diag socket: %s\n",
				strerror(-r));
		c->failed = true;
		return 0;
	}
	c->extra.netns = label;
	c->reported = 0;
	r = sdiag_dump(h, q, sock_cb, err_cb, c);
	sdiag_close(h);
	if (c->out_err)
		return c->out_err;
	if (r < 0) {
		fprintf(stderr, "sockdiag: dump%s%s: %s\n", label ? " in netns " : "",
			label ? label : "", strerror(-r));
		c->failed = true;
	}
	return 0;
}

static int list_all_netns(struct list_ctx *c, const struct sdiag_query *q)
{
	struct sdiag_netns *ns = NULL;
	size_t n = 0;
	int r;

	r = sdiag_netns_list(&ns, &n);
	if (r < 0) {
		fprintf(stderr, "sockdiag: cannot list network namespaces: %s\n", strerror(-r));
		c->failed = true;
		return 0;
	}
	for (size_t i = 0; i < n && r >= 0; i++) {
		int fd = open(ns[i].path, O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			fprintf(stderr, "sockdiag: netns %s: cannot enter: %s\n", ns[i].label,
				strerror(errno));
			c->failed = true;
			continue;
		}
		c->extra.netns_inode = ns[i].inode;
		r = list_one(c, q, fd, ns[i].label);
		close(fd);
	}
	c->extra.netns_inode = 0;
	free(ns);
	return r < 0 ? r : 0;
}

static int run(struct cli_opts *o, struct list_ctx *c)
{
	struct sdiag_procmap *pm = NULL;
	struct sdiag_query q = o->q;
	int r = 0, fd;

	/* Scan only when asked: -p, or a filter on pid/comm/user. */
	if (o->processes || sdiag_filter_needs_procs(o->q.filter)) {
		r = opts_scan_owners(o, "list", &pm);
		if (r < 0) {
			fprintf(stderr, "sockdiag: cannot scan processes: %s%s\n", strerror(-r),
				o->owners == SDIAG_OWNERS_BPF ? " (--owners=bpf)" : "");
			c->failed = true;
			if (o->owners == SDIAG_OWNERS_BPF)
				return 0; /* the iterator was asked for: no list without it */
		}
		q.procmap = pm;
	}
	if (o->all_netns) {
		r = list_all_netns(c, &q);
	} else if (o->netns) {
		r = sdiag_netns_open(o->netns, &fd);
		if (r < 0) {
			opts_netns_error("list", o->netns, r);
			c->failed = true;
			r = 0;
		} else {
			r = list_one(c, &q, fd, NULL);
			close(fd);
		}
	} else {
		r = list_one(c, &q, -1, NULL);
	}
	if (r >= 0)
		r = out_finish(c->out);
	sdiag_procmap_free(pm);
	return r;
}

int cmd_list(int argc, char **argv)
{
	struct sdiag_filter *f = NULL;
	struct list_ctx c = { 0 };
	struct cli_opts o;
	int r, status;

	r = opts_parse(&o, argc, argv, NULL);
	if (r == OPTS_EXIT)
		return EXIT_OK;
	if (r < 0)
		return r == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
	r = opts_filter(&o, &f);
	if (r < 0) {
		status = r == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
		if (r != -EINVAL)
			fprintf(stderr, "sockdiag: filter: %s\n", strerror(-r));
		goto out;
	}
	if (o.all_netns)
		o.out.columns |= OUT_COL_NETNS;
	c.opts = &o;
	r = out_new(&c.out, &o.out);
	if (r < 0) {
		fprintf(stderr, "sockdiag: %s\n", strerror(-r));
		status = EXIT_RUNTIME;
		goto out;
	}
	r = run(&o, &c);
	if (r < 0 && r != -EPIPE)
		fprintf(stderr, "sockdiag: write: %s\n", strerror(-r));
	status = r < 0 || c.failed ? EXIT_RUNTIME : EXIT_OK;
out:
	out_free(c.out);
	sdiag_filter_free(f);
	opts_fini(&o);
	return status;
}
