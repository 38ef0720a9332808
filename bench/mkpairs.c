/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mkpairs: build N established loopback TCP pairs in the CURRENT network
 * namespace, report readiness, then sleep until killed.
 *
 * Run it only inside a private namespace (bench/run.sh does `unshare -n`);
 * it refuses to run in a namespace that has any interface but lo.
 *
 * Layout. The hard open-file limit here is 20000 per process, so the pairs are
 * spread over worker processes of at most 9000 pairs (18000 fds) each. Worker
 * w listens on 127.0.<w/250>.<w%250+1> ports 5000 and 6000 and binds each of
 * its clients explicitly to 127.2.<w/250>.<w%250+1>:<10000+i>, so no ephemeral
 * port search happens and ports never run out. The first PERMILLE/1000 of each
 * worker's pairs go to port 5000: the default 20 permille makes ~1% of all
 * sockets (the accepted ends) match `sport = :5000`.
 *
 * Readiness: one line "ready PAIRS" on stdout once every worker has built its
 * pairs (workers report over a pipe). Workers die with the parent
 * (PR_SET_PDEATHSIG), so killing the parent cleans everything up.
 *
 * Cgroups (-c DIR -g G): worker w first moves itself into the cgroup
 * DIR/cg<NN>.service, NN = w % G (which must exist), so its sockets belong to that cgroup: with
 * -w N/G, G workers, one per cgroup, each holding 1/G of the sockets
 * (bench/cgroup.sh).
 *
 * usage: mkpairs [-p PERMILLE] [-w PAIRS_PER_WORKER] [-c DIR -g G] N
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <net/if.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#define MAX_PER_WORKER 9000
#define HOT_PORT 5000
#define COLD_PORT 6000
#define CLIENT_PORT_BASE 10000

struct worker_cfg {
	unsigned int index;
	unsigned int pairs;
	unsigned int permille;
	const char *cgdir;	/* NULL: stay in our cgroup */
	unsigned int groups;
};

static int join_cgroup(const struct worker_cfg *cfg)
{
	char path[4096], pid[32];
	int fd, n, r = 0;

	snprintf(path, sizeof(path), "%s/cg%02u.service/cgroup.procs", cfg->cgdir,
		 cfg->index % cfg->groups);
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, pid, (size_t)n) != n)
		r = -errno;
	close(fd);
	return r;
}

static void addr_of(struct sockaddr_in *sin, unsigned int net, unsigned int w, unsigned int port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	sin->sin_addr.s_addr = htonl((127u << 24) | (net << 16) | ((w / 250) << 8) | (w % 250 + 1));
}

static int make_listener(unsigned int w, unsigned int port)
{
	struct sockaddr_in sin;
	int fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	addr_of(&sin, 0, w, port);
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(fd, 1024) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

/* One pair: client bound to its own address/port, connected, accepted. */
static int make_pair(int lfd, unsigned int w, unsigned int i, unsigned int port)
{
	struct sockaddr_in src, dst;
	int c, a;

	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c < 0)
		return -errno;
	addr_of(&src, 2, w, CLIENT_PORT_BASE + i);
	addr_of(&dst, 0, w, port);
	if (bind(c, (struct sockaddr *)&src, sizeof(src)) < 0 ||
	    connect(c, (struct sockaddr *)&dst, sizeof(dst)) < 0) {
		int r = -errno;

		close(c);
		return r;
	}
	a = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (a < 0)
		return -errno;
	return 0;
}

static int run_worker(const struct worker_cfg *cfg)
{
	unsigned int hot = (unsigned int)((unsigned long)cfg->pairs * cfg->permille / 1000);
	int lhot, lcold, r;

	if (cfg->cgdir && (r = join_cgroup(cfg)) < 0)
		return r;
	lhot = make_listener(cfg->index, HOT_PORT);
	if (lhot < 0)
		return lhot;
	lcold = make_listener(cfg->index, COLD_PORT);
	if (lcold < 0)
		return lcold;
	for (unsigned int i = 0; i < cfg->pairs; i++) {
		r = make_pair(i < hot ? lhot : lcold, cfg->index, i,
			      i < hot ? HOT_PORT : COLD_PORT);
		if (r < 0)
			return r;
	}
	return 0;
}

static void worker_main(const struct worker_cfg *cfg, int wfd)
{
	int r;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(1);
	r = run_worker(cfg);
	if (write(wfd, &r, sizeof(r)) != sizeof(r))
		_exit(1);
	close(wfd);
	for (;;)
		pause();
}

/*
 * A fresh `unshare -n` namespace has nothing but lo. Any other interface means
 * this is probably the host's namespace (pid 1's may not be readable to compare).
 */
static bool netns_is_private(void)
{
	struct if_nameindex *ifs = if_nameindex(), *i;
	bool ok = ifs != NULL;

	for (i = ifs; ok && i->if_index; i++)
		ok = strcmp(i->if_name, "lo") == 0;
	if (ifs)
		if_freenameindex(ifs);
	return ok;
}

static int raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	return (int)(rl.rlim_max > 1000000 ? 1000000 : rl.rlim_max);
}

static int spawn_workers(unsigned long n, unsigned int per, unsigned int permille,
			 const char *cgdir, unsigned int groups)
{
	unsigned int nworkers = (unsigned int)((n + per - 1) / per);
	int p[2], r = 0;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	for (unsigned int w = 0; w < nworkers; w++) {
		struct worker_cfg cfg = {
			.index = w,
			.pairs = (unsigned int)(n / nworkers + (w < n % nworkers)),
			.permille = permille,
			.cgdir = cgdir,
			.groups = groups,
		};
		pid_t pid = fork();

		if (pid < 0)
			return -errno;
		if (pid == 0) {
			close(p[0]);
			worker_main(&cfg, p[1]);
		}
	}
	close(p[1]);
	for (unsigned int w = 0; w < nworkers; w++) {
		int wr;

		if (read(p[0], &wr, sizeof(wr)) != sizeof(wr))
			return -EPIPE;
		if (wr < 0 && r == 0)
			r = wr;
	}
	close(p[0]);
	return r;
}

int main(int argc, char **argv)
{
	unsigned long n;
	unsigned int per = MAX_PER_WORKER, permille = 20, groups = 0;
	const char *cgdir = NULL;
	int opt, lim, r;

	while ((opt = getopt(argc, argv, "p:w:c:g:")) != -1) {
		switch (opt) {
		case 'p':
			permille = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 'w':
			per = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 'c':
			cgdir = optarg;
			break;
		case 'g':
			groups = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		default:
			goto usage;
		}
	}
	if (optind != argc - 1 || permille > 1000 || per == 0 || (!cgdir != !groups))
		goto usage;
	n = strtoul(argv[optind], NULL, 10);
	if (n == 0 || n > 250ul * 250 * 9000)
		goto usage;
	if (!netns_is_private()) {
		fprintf(stderr,
			"mkpairs: refusing: this network namespace has interfaces other than lo "
			"(run it under unshare -n)\n");
		return 1;
	}
	lim = raise_nofile();
	if (lim < 0 || (unsigned int)lim < 2 * per + 16) {
		fprintf(stderr, "mkpairs: open-file limit %d too low for %u pairs per worker\n",
			lim, per);
		return 1;
	}
	r = spawn_workers(n, per, permille, cgdir, groups);
	if (r < 0) {
		fprintf(stderr, "mkpairs: building pairs: %s\n", strerror(-r));
		return 1;
	}
	printf("ready %lu\n", n);
	fflush(stdout);
	for (;;)
		pause();
usage:
	fprintf(stderr, "usage: mkpairs [-p PERMILLE_ON_PORT_5000] [-w PAIRS_PER_WORKER] "
			"[-c CGROUP_DIR -g GROUPS] N\n");
	return 2;
}
