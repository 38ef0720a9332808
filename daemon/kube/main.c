// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sockdiag-kube-backends [OPTIONS] FILE: keep FILE listing the dead service
 * backends of the cluster (kube.h says which), for the guard's
 * `dead-backends = FILE`. List the EndpointSlices, watch from the list's
 * resourceVersion (bookmarks keep it fresh), watch again where a watch
 * ended, list again after 410 Gone (or another ERROR event, after a
 * backoff); a failed request is tried again after a backoff (250 ms,
 * doubling to 30 s). FILE is written whole, to a temporary
 * file in its directory renamed over it (the guard reads at the rename's
 * IN_MOVED_TO), and only when its backends change or one expires. A file
 * there at start is read back: a restart forgets no dead backend.
 * Exit: 0 after SIGTERM or SIGINT, 1 when it cannot start, 2 bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/signalfd.h>

#include "daemon/common/log.h"
#include "daemon/kube/kube.h"
#include "util/clock.h"
#include "util/sigfd.h"

#define NAME "sockdiag-kube-backends"
#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define BACKOFF_MIN_MS 250
#define BACKOFF_MAX_MS 30000
#define WRITE_RETRY_MS 1000
#define NEVER UINT64_MAX

struct ctx {
	const char *path;
	char tmp[4096];
	struct kube_state *st;
	int sfd;
	bool stop;
	bool ready;	  /* a list is done: the state is the cluster's */
	char *written;	  /* the text FILE has */
	uint64_t due_ms;  /* the next write: a backend expires, or a failed write */
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " NAME " [OPTIONS] FILE\n"
		"Keep FILE listing the dead backends of the cluster's EndpointSlices, for\n"
		"sockdiag guard's dead-backends (sockdiag-guard.conf(5)).\n"
		"  --ttl SECONDS          how long a dead backend stays listed (default 600)\n"
		"  --namespace NS         EndpointSlices of NS only (default: every namespace)\n"
		"  --api-server URL       default https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT\n"
		"  --service-account DIR  its token and ca.crt (default " SA_DIR ")\n"
		"  --watch-timeout SECONDS  the server ends each watch after (default 300)\n"
		"  -h, --help, -V, --version\n");
}

/* Write the state's text if it differs from FILE's. */
static void publish(struct ctx *c)
{
	uint64_t now = mono_ms(), expiry;
	char *text = NULL;
	size_t n, len;
	ssize_t w = 0;
	int fd, e;

	if (!c->ready)
		return;
	if (kube_render(c->st, now, &text, &n, &expiry) < 0) {
		c->due_ms = now + WRITE_RETRY_MS;
		return;
	}
	c->due_ms = expiry;
	if (c->written && !strcmp(c->written, text)) {
		free(text);
		return;
	}
	len = strlen(text);
	fd = open(c->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0)
		w = write(fd, text, len);
	e = fd < 0 || w < 0 ? errno : (size_t)w != len ? ENOSPC : 0;
	if (fd >= 0 && close(fd) < 0 && !e)
		e = errno;
	if (!e && rename(c->tmp, c->path) < 0)
		e = errno;
	if (e) {
		daemon_log(NAME, "%s: %s; trying again in a second", c->tmp, strerror(e));
		unlink(c->tmp);
		c->due_ms = now + WRITE_RETRY_MS;
		free(text);
		return;
	}
	daemon_log(NAME, "%zu dead backend%s written to %s", n, n == 1 ? "" : "s", c->path);
	free(c->written);
	c->written = text;
}

/* SIGTERM or SIGINT read: stop. */
static bool signalled(struct ctx *c)
{
	struct signalfd_siginfo si;

	while (read(c->sfd, &si, sizeof(si)) == sizeof(si))
		c->stop = true;
	return c->stop;
}

static int tick(void *userdata, bool changed)
{
	struct ctx *c = userdata;

	if (signalled(c))
		return 1;
	if (changed || mono_ms() >= c->due_ms)
		publish(c);
	return 0;
}

/* ms milliseconds, writing FILE when a backend expires; false: stop. */
static bool pause_ms(struct ctx *c, uint64_t ms)
{
	uint64_t end = mono_ms() + ms, now;
	struct pollfd p = { .fd = c->sfd, .events = POLLIN };

	while (!signalled(c) && (now = mono_ms()) < end) {
		uint64_t until = c->due_ms < end ? c->due_ms : end;

		if (now >= c->due_ms) {
			publish(c);
			continue;
		}
		poll(&p, 1, (int)(until - now));
	}
	return !c->stop;
}

/* A file there from before: its backends are dead still. */
static void seed(struct ctx *c)
{
	FILE *f = fopen(c->path, "re");
	char line[256];
	size_t n = 0, bad = 0;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = 0;
		if (!line[0] || line[0] == '#')
			continue;
		if (kube_state_seed(c->st, line, mono_ms()) == 0)
			n++;
		else
			bad++;
	}
	fclose(f);
	daemon_log(NAME, "%zu dead backends read back from %s%s", n, c->path,
		   bad ? " (lines that are not backends skipped)" : "");
}

static void run(struct ctx *c, struct kube_api *api)
{
	uint64_t backoff = BACKOFF_MIN_MS;
	char *rv = NULL;
	int r;

	while (!c->stop) {
		r = kube_list(api, c->st, &rv);
		if (r == -ECANCELED)
			break;
		if (r < 0) {
			daemon_log(NAME, "list failed; again in %llu ms", (unsigned long long)backoff);
			if (!pause_ms(c, backoff))
				break;
			backoff = backoff * 2 < BACKOFF_MAX_MS ? backoff * 2 : BACKOFF_MAX_MS;
			continue;
		}
		daemon_log(NAME, "listed %zu EndpointSlices, resourceVersion %s",
			   kube_state_slices(c->st), rv);
		c->ready = true;
		publish(c);
		/* The backoff is reset by a watch that delivers, not by a list: a
		 * server failing every watch is not listed twice a second. */
		for (;;) {
			uint64_t t0 = mono_ms();
			size_t events = 0;

			r = kube_watch(api, c->st, &rv, &events);
			if (r == -ECANCELED || r == -ESTALE)
				break;
			/* An ERROR event other than 410: list again, as client-go does. */
			if (r == -EREMOTEIO) {
				daemon_log(NAME, "listing again in %llu ms", (unsigned long long)backoff);
				if (!pause_ms(c, backoff))
					break;
				backoff = backoff * 2 < BACKOFF_MAX_MS ? backoff * 2 : BACKOFF_MAX_MS;
				break;
			}
			/* Ended by the server at its timeout: again at once (unless
			 * it ends them as they start). */
			if (r == 0 && (events || mono_ms() - t0 >= 1000)) {
				backoff = BACKOFF_MIN_MS;
				continue;
			}
			if (events)
				backoff = BACKOFF_MIN_MS;
			daemon_log(NAME, "watch ended after %zu events; again in %llu ms from "
				   "resourceVersion %s", events, (unsigned long long)backoff, rv);
			if (!pause_ms(c, backoff))
				break;
			backoff = backoff * 2 < BACKOFF_MAX_MS ? backoff * 2 : BACKOFF_MAX_MS;
		}
		if (r == -ESTALE)
			daemon_log(NAME, "watch: resourceVersion %s is too old (410 Gone): listing "
				   "again", rv);
	}
	free(rv);
}

static int number(const char *opt, const char *arg, unsigned max, unsigned *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || v > max) {
		fprintf(stderr, NAME ": --%s '%s': expected a number of seconds (0 to %u)\n", opt,
			arg, max);
		return -EINVAL;
	}
	*ret = (unsigned)v;
	return 0;
}

/* https://HOST:PORT from the environment the kubelet sets. */
static int default_server(char *buf, size_t len)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	bool v6 = host && strchr(host, ':');

	if (!host || !*host || !port || !*port) {
		fprintf(stderr, NAME ": no API server: KUBERNETES_SERVICE_HOST and "
			"KUBERNETES_SERVICE_PORT are not set (outside a pod: --api-server URL)\n");
		return -EINVAL;
	}
	snprintf(buf, len, v6 ? "https://[%s]:%s" : "https://%s:%s", host, port);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "ttl", required_argument, NULL, 't' },
		{ "namespace", required_argument, NULL, 'n' },
		{ "api-server", required_argument, NULL, 'a' },
		{ "service-account", required_argument, NULL, 's' },
		{ "watch-timeout", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	static const int sigs[] = { SIGTERM, SIGINT, 0 };
	struct kube_api_conf conf = { .sa_dir = SA_DIR, .watch_timeout_s = 300, .log_name = NAME };
	struct ctx c = { .sfd = -1, .due_ms = NEVER };
	struct kube_api *api = NULL;
	char server[1024];
	const char *slash;
	unsigned ttl = 600;
	int o, rc = 1;

	while ((o = getopt_long(argc, argv, "hV", lo, NULL)) != -1) {
		switch (o) {
		case 't':
			if (number("ttl", optarg, 31536000, &ttl) < 0)
				return 2;
			break;
		case 'w':
			if (number("watch-timeout", optarg, 86400, &conf.watch_timeout_s) < 0 ||
			    !conf.watch_timeout_s)
				return 2;
			break;
		case 'n':
			conf.ns = optarg;
			break;
		case 'a':
			conf.server = optarg;
			break;
		case 's':
			conf.sa_dir = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf(NAME " " SOCKDIAG_VERSION "\n");
			return 0;
		default:
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, NAME ": %s (see --help)\n",
			optind == argc ? "FILE missing" : "one FILE only");
		return 2;
	}
	c.path = argv[optind];
	if (!conf.server) {
		if (default_server(server, sizeof(server)) < 0)
			return 2;
		conf.server = server;
	}
	/* The temporary file beside FILE: a rename within one directory. */
	slash = strrchr(c.path, '/');
	snprintf(c.tmp, sizeof(c.tmp), "%.*s.%s.tmp", slash ? (int)(slash - c.path + 1) : 0,
		 c.path, slash ? slash + 1 : c.path);
	c.sfd = sigfd_open(sigs, SFD_NONBLOCK);
	if (c.sfd < 0 || kube_state_new(&c.st, (uint64_t)ttl * 1000) < 0 ||
	    kube_api_new(&api, &conf, tick, &c) < 0) {
		fprintf(stderr, NAME ": cannot start: %s\n", strerror(c.sfd < 0 ? -c.sfd : ENOMEM));
		goto out;
	}
	seed(&c);
	daemon_log(NAME, "watching EndpointSlices at %s%s%s, writing %s", conf.server,
		   conf.ns ? " in namespace " : "", conf.ns ? conf.ns : "", c.path);
	run(&c, api);
	unlink(c.tmp);
	rc = 0;
out:
	kube_api_free(api);
	kube_state_free(c.st);
	free(c.written);
	if (c.sfd >= 0)
		close(c.sfd);
	return rc;
}
