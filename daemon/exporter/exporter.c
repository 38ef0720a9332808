// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sockdiag exporter [--listen HOST:PORT] [-c FILE] [-N NETNS | --all-netns]
 *
 * Serves socket metrics over HTTP (http.c). A scrape is one pass over the
 * kernel's dumps (exporter_collect.c); a scrape that arrives while a pass runs
 * waits for that pass and is answered from it, so any number of concurrent
 * scrapes cost one pass. The main thread only waits for signals: SIGHUP
 * reloads the configuration (a bad one is refused, the old one kept),
 * SIGINT/SIGTERM stop. With a push target (remote-write-url, otlp-endpoint)
 * a pusher thread (daemon/push/) takes a pass every push-interval the same
 * way and sends it; the server keeps serving.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/signalfd.h>
#ifdef HAVE_LIBCAP_NG
#include <cap-ng.h>
#endif

#include "daemon/common/log.h"
#include "daemon/exporter/exporter.h"
#include "daemon/metrics/http.h"
#include "util/argerr.h"
#include "util/sigfd.h"
#include "util/textfile.h"

/* A configuration shared by the passes that started with it. */
struct cfg_ref {
	unsigned refs;
	struct exp_config c;
};

/* A finished pass, shared by the requests it answers. */
struct result {
	unsigned refs;
	struct exp_agg *a;
	struct cfg_ref *cfg;
};

struct exporter {
	pthread_mutex_t mu;
	pthread_cond_t done;
	struct cfg_ref *cfg;		/* the configuration new passes take */
	struct result *last;		/* the last pass, NULL if it failed */
	int last_err;
	bool running;			/* a pass is under way */
	uint64_t gen;			/* passes finished */
	struct exp_counters k;
	struct exp_target target;
	const char *config_path;
	char config_q[256];		/* config_path escaped, for messages */
	bool config_explicit;
	const char *listen_arg;		/* --listen: the file's listen is ignored */
	struct exp_life *life;		/* life = yes: the ends, from the start on */
	char serving[160];		/* the address served, "" before the server starts */
	struct pusher *pusher;		/* NULL: no push target */
};

#define logline(...) daemon_log("sockdiag-exporter", __VA_ARGS__)

/* Both called with e->mu held (or before any thread exists). */
static void cfg_unref(struct cfg_ref *c)
{
	if (c && --c->refs == 0) {
		exp_config_fini(&c->c);
		free(c);
	}
}

static void result_unref(struct result *r)
{
	if (r && --r->refs == 0) {
		exp_agg_free(r->a);
		cfg_unref(r->cfg);
		free(r);
	}
}

/* Publish a pass's outcome and wake the requests waiting for it. */
static struct result *publish(struct exporter *e, struct exp_agg *a, struct cfg_ref *cfg, int err)
{
	struct result *res = a ? calloc(1, sizeof(*res)) : NULL;

	pthread_mutex_lock(&e->mu);
	if (res) {
		res->refs = 2;	/* e->last and the caller */
		res->a = a;
		res->cfg = cfg;
		e->k.dump_errors += a->dump_errors;
		e->k.dropped[EXP_G_LISTENER] += a->listeners.dropped;
		e->k.dropped[EXP_G_CGROUP] += a->cgroups.dropped;
		e->k.dropped[EXP_G_COMM] += a->comms.dropped;
		e->k.dropped[EXP_G_EPHEMERAL] += a->ephemeral.dropped;
		e->k.dropped[EXP_G_UDP] += a->udp.dropped;
		e->k.dropped[EXP_G_DESTINATION] += a->dests.dropped;
	} else {
		exp_agg_free(a);
		cfg_unref(cfg);
		if (err == 0)
			err = -ENOMEM;
		e->k.dump_errors++;
	}
	result_unref(e->last);
	e->last = res;
	e->last_err = err;
	e->k.passes++;
	e->gen++;
	e->running = false;
	pthread_cond_broadcast(&e->done);
	pthread_mutex_unlock(&e->mu);
	return res;
}

/* The result for one request: the pass under way if there is one, else a new
 * pass. Returns a reference (result_unref under e->mu) or NULL with *ret_err. */
static struct result *get_result(struct exporter *e, struct exp_counters *ret_k, int *ret_err)
{
	struct exp_agg *a = NULL;
	struct result *res;
	struct cfg_ref *cfg;
	int r;

	pthread_mutex_lock(&e->mu);
	e->k.requests++;
	if (e->running) {
		uint64_t gen = e->gen;

		while (e->gen == gen)
			pthread_cond_wait(&e->done, &e->mu);
		res = e->last;
		if (res)
			res->refs++;
		*ret_err = e->last_err;
		*ret_k = e->k;
		pthread_mutex_unlock(&e->mu);
		return res;
	}
	e->running = true;
	cfg = e->cfg;
	cfg->refs++;
	pthread_mutex_unlock(&e->mu);

	r = exp_collect(&cfg->c, &e->target, &a);
	res = publish(e, r == 0 ? a : NULL, cfg, r);
	pthread_mutex_lock(&e->mu);
	*ret_err = e->last_err;
	*ret_k = e->k;
	pthread_mutex_unlock(&e->mu);
	return res;
}

static int metrics(void *ctx, bool openmetrics, char **ret_body, size_t *ret_len)
{
	struct exporter *e = ctx;
	struct exp_counters k;
	struct result *res;
	int r;

	res = get_result(e, &k, &r);
	if (!res)
		return r < 0 ? r : -EIO;
	r = exp_render(&res->cfg->c, res->a, &k, e->life, openmetrics, ret_body, ret_len);
	if (r == 0)
		r = pusher_render(e->pusher, openmetrics, ret_body, ret_len);
	pthread_mutex_lock(&e->mu);
	result_unref(res);
	pthread_mutex_unlock(&e->mu);
	return r;
}

/* A pass for the pusher: what a scrape in OpenMetrics gets. */
static int push_collect(void *ctx, char **ret_body, size_t *ret_len)
{
	return metrics(ctx, true, ret_body, ret_len);
}

/* ---- configuration ------------------------------------------------------------------ */

static int load_config(struct exporter *e, bool reload)
{
	struct cfg_ref *n = calloc(1, sizeof(*n));
	char err[512];
	int r = 0;

	if (!n)
		return -ENOMEM;
	n->refs = 1;
	if (access(e->config_path, F_OK) < 0 && !e->config_explicit) {
		exp_config_init(&n->c);	/* no file at the default path: the defaults */
		if (reload)
			logline("reload: no %s; using the defaults", e->config_q);
	} else {
		r = exp_config_load(&n->c, e->config_path, err, sizeof(err));
	}
	if (r < 0) {
		if (reload)
			logline("reload: %s: %s; keeping the previous configuration",
				e->config_q, err);
		else
			fprintf(stderr, "sockdiag exporter: %s: %s\n", e->config_q, err);
		exp_config_fini(&n->c);
		free(n);
		pthread_mutex_lock(&e->mu);
		e->k.reloads_refused += reload;
		pthread_mutex_unlock(&e->mu);
		return r;
	}
	pthread_mutex_lock(&e->mu);
	if (reload) {
		const char *now = n->c.listen ? n->c.listen : EXP_DEFAULT_LISTEN;

		/* The server keeps its socket: say so when the file asks for another. */
		if (e->serving[0] && !e->listen_arg && strcmp(now, e->serving))
			logline("reload: %s: listen = %s needs a restart; still serving %s",
				e->config_q, now, e->serving);
		if (n->c.life != e->cfg->c.life || n->c.life_by != e->cfg->c.life_by)
			logline("reload: %s: life and life-by need a restart; ends still %s",
				e->config_q, e->life ? "counted as before" : "not counted");
		e->k.reloads_ok++;
	}
	cfg_unref(e->cfg);
	e->cfg = n;
	pthread_mutex_unlock(&e->mu);
	if (reload && (e->config_explicit || access(e->config_path, F_OK) == 0))
		logline("reloaded %s", e->config_q);
	return 0;
}

/* ---- privileges, signals ---------------------------------------------------------------- */

/* Keep only what later passes need: CAP_SYS_ADMIN to enter namespaces for
 * --all-netns (a single -N namespace was entered at start); CAP_SYS_PTRACE
 * for --all-netns too, to see /proc/PID/ns/net of other users' processes
 * (a pod's sandbox runs as 65535: without it its namespace is never listed),
 * and with CAP_DAC_READ_SEARCH to read other users' /proc/PID/fd for
 * group-by-comm; CAP_NET_ADMIN to subscribe to the destroy events of
 * namespaces made later (life with --all-netns). Dumping sockets needs no
 * capability at all. */
static int drop_capabilities(const struct exporter *e)
{
#ifdef HAVE_LIBCAP_NG
	static const int keep[] = { CAP_SYS_ADMIN, CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH,
				    CAP_NET_ADMIN };
	bool comm = e->cfg->c.by_comm || e->cfg->c.destinations == EXP_BY_COMM ||
		    (e->life && e->cfg->c.life_by == EXP_BY_COMM);
	/* life with --all-netns subscribes to the destroy events of each new namespace. */
	bool want[4] = { e->target.all_netns, e->target.all_netns || comm, comm,
			 e->life && e->target.all_netns };
	bool have[4];

	capng_get_caps_process();
	/* Started without any (systemd's DynamicUser=): nothing to drop, and
	 * capset may be filtered out. */
	if (capng_have_capabilities(CAPNG_SELECT_BOTH) == CAPNG_NONE)
		return 0;
	for (unsigned i = 0; i < 4; i++)
		have[i] = capng_have_capability(CAPNG_EFFECTIVE, keep[i]);
	capng_clear(CAPNG_SELECT_BOTH);
	for (unsigned i = 0; i < 4; i++)
		if (want[i] && have[i] &&
		    capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED, keep[i]) < 0)
			return -EPERM;
	if (capng_apply(CAPNG_SELECT_BOTH) < 0)
		return -EPERM;
#else
	(void)e;
#endif
	return 0;
}

/* Block the signals in every thread (the library's threads inherit the
 * mask); the main thread reads them from a signalfd. */
static int open_signals(void)
{
	signal(SIGPIPE, SIG_IGN);
	return sigfd_open((const int[]){ SIGHUP, SIGINT, SIGTERM, 0 }, 0);
}

static void wait_signals(struct exporter *e, int sigfd)
{
	struct signalfd_siginfo si;

	for (;;) {
		ssize_t n = read(sigfd, &si, sizeof(si));

		if (n < 0 && errno == EINTR)
			continue;
		if (n != sizeof(si))
			return;
		if (si.ssi_signo == SIGHUP) {
			(void)load_config(e, true);
			continue;
		}
		logline("signal %u: exiting", si.ssi_signo);
		return;
	}
}

/* ---- command line -------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: sockdiag exporter [OPTIONS]\n"
		"A daemon: serves socket metrics to Prometheus over HTTP.\n"
		"Options:  --listen HOST:PORT (serve /metrics there; :PORT: every address;\n"
		"          default " EXP_DEFAULT_LISTEN ")\n"
		"          -c|--config FILE (default " EXP_DEFAULT_CONFIG ",\n"
		"          if present)\n"
		"          -N|--netns NAME|PATH|pid:PID (the sockets of that namespace)\n"
		"          --all-netns (the sockets of every namespace, a netns label each)\n"
		"          --check-config (check the configuration, then exit)\n"
		"          --once (print one exposition on standard output, then exit;\n"
		"          with a push target: push once, exit 0 if accepted)\n"
		"          --openmetrics (with --once: in the OpenMetrics format)\n"
		"          --remote-write URL (push there: Prometheus remote write)\n"
		"          --otlp URL (push there: OTLP/HTTP metrics)\n"
		"          -h|--help\n"
		"See sockdiag(8), EXPORTER and METRICS.\n");
}

int exp_parse_args(struct exp_cmdline *a, int argc, char **argv)
{
	enum { O_LISTEN = 0x100, O_ALL_NETNS, O_CHECK, O_ONCE, O_OM, O_RW, O_OTLP };
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, O_LISTEN },
		{ "config", required_argument, NULL, 'c' },
		{ "netns", required_argument, NULL, 'N' },
		{ "all-netns", no_argument, NULL, O_ALL_NETNS },
		{ "check-config", no_argument, NULL, O_CHECK },
		{ "once", no_argument, NULL, O_ONCE },
		{ "openmetrics", no_argument, NULL, O_OM },
		{ "remote-write", required_argument, NULL, O_RW },
		{ "otlp", required_argument, NULL, O_OTLP },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c;

	optind = 0;	/* full re-initialisation (glibc): a second parse starts clean */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:N:h", opts, NULL)) != -1) {
		switch (c) {
		case O_LISTEN:
			if (http_listen_arg("exporter", "listen", optarg) < 0)
				return -EINVAL;
			a->listen = optarg;
			break;
		case 'c':
			a->config_path = optarg;
			a->config_explicit = true;
			break;
		case 'N':
			if (argerr_netns_spec("exporter", optarg, "NAME|PATH|pid:PID") < 0)
				return -EINVAL;
			a->netns = optarg;
			break;
		case O_ALL_NETNS:
			a->all_netns = true;
			break;
		case O_CHECK:
			a->check = true;
			break;
		case O_ONCE:
			a->once = true;
			break;
		case O_OM:
			a->openmetrics = true;
			break;
		case O_RW:
		case O_OTLP: {
			const char *why = push_url_check(optarg);

			if (why) {
				char q[256];

				fprintf(stderr, "sockdiag exporter: --%s '%s': %s\n",
					c == O_RW ? "remote-write" : "otlp",
					text_excerpt(q, sizeof(q), optarg, strlen(optarg), 64), why);
				return -EINVAL;
			}
			*(c == O_RW ? &a->remote_write : &a->otlp) = optarg;
			break;
		}
		case 'h':
			usage(stdout);
			return 1;
		default:
			return argerr_getopt("exporter", opts, c, argv);
		}
	}
	if (optind < argc)
		return argerr_operand("exporter", argv[optind]);
	if (a->netns && a->all_netns) {
		fprintf(stderr, "sockdiag exporter: -N and --all-netns exclude each other\n");
		return -EINVAL;
	}
	if (a->openmetrics && !a->once) {
		/* A server answers each scrape in the format its Accept asks for. */
		fprintf(stderr, "sockdiag exporter: --openmetrics needs --once (the server "
				"follows each scrape's Accept header)\n");
		return -EINVAL;
	}
	return 0;
}

static int open_target(struct exporter *e, const char *netns)
{
	int fd, r;

	if (e->target.all_netns)
		return 0;
	if (!netns) {
		r = sdiag_open(&e->target.h);
		if (r < 0)
			fprintf(stderr, "sockdiag exporter: cannot open a sock_diag socket: %s\n",
				strerror(-r));
		e->target.range_fd = exp_range_open(-1);
		return r;
	}
	r = sdiag_netns_open(netns, &fd);
	if (r < 0) {
		argerr_netns("exporter", netns, r);
		return r;
	}
	r = sdiag_open_netns(&e->target.h, fd);
	e->target.nsfd = fd;	/* for life; closed at exit */
	e->target.range_fd = r < 0 ? -1 : exp_range_open(fd);
	if (r < 0) {
		char q[256];

		fprintf(stderr, "sockdiag exporter: netns %s: cannot enter: %s\n",
			text_excerpt(q, sizeof(q), netns, strlen(netns), 48), strerror(-r));
	}
	e->target.label = netns;
	return r;
}

static int print_once(struct exporter *e, bool openmetrics)
{
	char *body = NULL;
	size_t len = 0;
	int r = metrics(e, openmetrics, &body, &len);

	if (r < 0) {
		fprintf(stderr, "sockdiag exporter: %s\n", strerror(-r));
		return 1;
	}
	r = fwrite(body, 1, len, stdout) == len && fflush(stdout) == 0 ? 0 : 1;
	free(body);
	return r;
}

int cmd_exporter(int argc, char **argv)
{
	struct exporter e = { .mu = PTHREAD_MUTEX_INITIALIZER, .done = PTHREAD_COND_INITIALIZER,
			      .config_path = EXP_DEFAULT_CONFIG, .target.label = "",
			      .target.range_fd = -1, .target.nsfd = -1 };
	struct http_server *srv = NULL;
	struct exp_cmdline a = { .config_path = EXP_DEFAULT_CONFIG };
	int r, status = 1, sigfd = -1;
	char err[256];

	r = exp_parse_args(&a, argc, argv);
	if (r)
		return r > 0 ? 0 : 2;
	e.config_path = a.config_path;
	e.config_explicit = a.config_explicit;
	e.target.all_netns = a.all_netns;
	text_excerpt(e.config_q, sizeof(e.config_q), e.config_path, strlen(e.config_path), 48);
	if (load_config(&e, false) < 0)
		return 2;
	if (a.check) {
		if (!e.config_explicit && access(e.config_path, F_OK) < 0)
			printf("%s: no file; using the defaults\n", e.config_q);
		else
			printf("%s: ok\n", e.config_q);
		status = 0;
		goto out;
	}
	if ((a.remote_write && push_config_url(&e.cfg->c.push, false, a.remote_write) < 0) ||
	    (a.otlp && push_config_url(&e.cfg->c.push, true, a.otlp) < 0))
		goto out;
	if (open_target(&e, a.netns) < 0)
		goto out;
	if (push_configured(&e.cfg->c.push)) {
		r = pusher_new(&e.pusher, &e.cfg->c.push, push_collect, &e, err, sizeof(err));
		if (r < 0) {
			fprintf(stderr, "sockdiag exporter: push: %s\n", err);
			goto out;
		}
	}
	if (a.once) {	/* no time for ends: life is left out */
		status = e.pusher ? pusher_once(e.pusher) : print_once(&e, a.openmetrics);
		goto out;
	}
	sigfd = open_signals();	/* before any thread: they inherit the blocked signals */
	if (sigfd >= 0 && e.cfg->c.life) {
		r = exp_life_start(&e.life, &e.cfg->c, &e.target);
		if (r < 0) {
			fprintf(stderr, "sockdiag exporter: life: cannot follow connection ends: "
					"%s\n", strerror(-r));
			goto out;
		}
	}
	if (sigfd < 0 || drop_capabilities(&e) < 0) {
		fprintf(stderr, "sockdiag exporter: cannot set up signals and capabilities\n");
		goto out;
	}
	e.listen_arg = a.listen;
	if (!a.listen)
		a.listen = e.cfg->c.listen ? e.cfg->c.listen : EXP_DEFAULT_LISTEN;
	snprintf(e.serving, sizeof(e.serving), "%s", a.listen); /* a.listen may be e.cfg's */
	r = http_start(&srv, &(struct http_opts){ .listen = a.listen, .fd = -1, .title = "sockdiag exporter",
						  .metrics = metrics, .ctx = &e },
		       err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "sockdiag exporter: %s\n", err);
		if (r == -EINVAL)	/* the address, not the system: a name that does not resolve */
			status = 2;
		goto out;
	}
	logline("listening on %s%s%s", a.listen,
		e.target.all_netns ? " (every network namespace)" : a.netns ? " for netns " : "",
		a.netns ? text_excerpt(err, sizeof(err), a.netns, strlen(a.netns), 48) : "");
	if (e.pusher) {
		const struct push_config *pc = &e.cfg->c.push;

		if ((r = pusher_start(e.pusher)) < 0) {
			fprintf(stderr, "sockdiag exporter: push: %s\n", strerror(-r));
			goto out;
		}
		/* The URLs may hold credentials: not logged. */
		logline("pushing every %u ms to %s%s%s (a queue of %u payloads each)",
			pc->interval_ms, pc->rw_url ? "remote write" : "",
			pc->rw_url && pc->otlp_url ? " and " : "", pc->otlp_url ? "OTLP" : "",
			pc->queue);
	}
	wait_signals(&e, sigfd);
	status = 0;
out:
	pusher_free(e.pusher);	/* waits for a push under way: at most push-timeout */
	http_stop(srv);	/* waits for the scrapes under way */
	exp_life_stop(e.life);
	if (sigfd >= 0)
		close(sigfd);
	if (e.target.nsfd >= 0)
		close(e.target.nsfd);
	if (e.target.range_fd >= 0)
		close(e.target.range_fd);
	sdiag_close(e.target.h);
	result_unref(e.last);
	cfg_unref(e.cfg);
	return status;
}
