// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Connection ends (`life = yes`): life/'s engine (the one behind `sockdiag
 * life`) runs in a thread of its own, reading the destroy events as they
 * come and dumping once a second (first-seen times, ends while held), and
 * every ended connection is counted by (netns, proto, outcome, port, and
 * the owner's comm or cgroup with life-by): how many, their payload bytes,
 * their durations (a histogram). A scrape renders the counters so far.
 *
 * port is the service's: the local port of a connection accepted on a
 * listening port, else the peer's. At most max-series label sets; the ends
 * of any other set are counted under port="other" (and owner "other",
 * netns ""), per proto and outcome, so the totals stay whole. With
 * --all-netns the thread follows every namespace as they come and go
 * (life_follow_all, as `sockdiag life --all-netns`).
 */
#include <errno.h>
#include <stddef.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/eventfd.h>

#include "daemon/exporter/exporter.h"
#include "daemon/metrics/expo.h"
#include "life/life.h"
#include "util/clock.h"
#include "util/group.h"

#define DUR_BUCKETS 10	/* the last is +Inf */

static const double dur_bounds_s[DUR_BUCKETS - 1] = {
	0.001, 0.01, 0.1, 1, 10, 60, 300, 1800, 7200,
};
static const char *const dur_le[DUR_BUCKETS] = {
	"0.001", "0.01", "0.1", "1", "10", "60", "300", "1800", "7200", "+Inf",
};

struct end_key {	/* zero-filled, compared whole */
	char netns[64];	/* its label */
	uint8_t proto, outcome, other, pad;
	uint16_t port, pad2;
	uint64_t cgroup;
	char comm[16];
};

struct end_ent {
	struct end_key k;
	uint64_t ends, sent, received;
	uint64_t dur[DUR_BUCKETS];
	double dur_sum_s;
	char *cgroup_path;	/* found at a scrape, NULL: not yet */
};

struct exp_life {
	pthread_t th;
	bool started;
	int stopfd;
	pthread_mutex_t mu;	/* the table and counters below */
	struct life *l;
	char label[64];		/* the one namespace's */
	bool all;		/* --all-netns: every namespace, followed as they come and go */
	struct sdiag_netns *ns;	/* then: those followed, in life's order */
	size_t nns;
	enum exp_owner_key by;
	char *cgroup_root;
	size_t cap;		/* max-series, the other buckets aside */
	size_t others;		/* other buckets among the n */
	struct gtab idx;	/* label set (the key's bytes) -> its entry in v (aux) */
	struct end_ent *v;	/* the n label sets, in the order they were first counted */
	size_t n, vcap;
	uint64_t lost, errors;
	size_t followed;	/* namespaces whose ends are followed */
};

/* ---- counting ------------------------------------------------------------------------- */

/* k's entry; one is added if add (NULL: out of memory). */
static struct end_ent *slot(struct exp_life *x, const struct end_key *k, bool add)
{
	long i = gtab_find(&x->idx, (const uint8_t *)k, sizeof(*k));
	bool fresh;

	if (i >= 0 || !add)
		return i >= 0 ? &x->v[x->idx.e[i].aux] : NULL;
	if (x->n == x->vcap) {
		size_t ncap = x->vcap ? 2 * x->vcap : 64;
		struct end_ent *nv = realloc(x->v, ncap * sizeof(*nv));

		if (!nv)
			return NULL;
		x->v = nv;
		x->vcap = ncap;
	}
	i = gtab_add(&x->idx, (const uint8_t *)k, sizeof(*k), &fresh);
	if (i < 0)
		return NULL;
	x->idx.e[i].aux = (uint32_t)x->n;
	x->v[x->n] = (struct end_ent){ .k = *k };
	x->others += k->other;
	return &x->v[x->n++];
}

static int on_end(const struct life_rec *r, void *ud)
{
	struct exp_life *x = ud;
	struct end_key k = { .proto = r->proto == IPPROTO_UDP ? 1 : 0,
			     .outcome = (uint8_t)r->outcome,
			     .port = r->passive ? r->sport : r->dport };
	struct end_ent *e;

	snprintf(k.netns, sizeof(k.netns), "%s",
		 !x->all ? x->label : r->ns < x->nns ? x->ns[r->ns].label : "");
	if (x->by == EXP_BY_CGROUP)
		k.cgroup = r->cgroup_id;
	else if (x->by == EXP_BY_COMM)
		memcpy(k.comm, r->comm, strnlen(r->comm, sizeof(k.comm) - 1));
	pthread_mutex_lock(&x->mu);
	e = slot(x, &k, false);
	if (!e && x->n - x->others >= x->cap) {	/* full: the other sets' bucket */
		k = (struct end_key){ .proto = k.proto, .outcome = k.outcome, .other = 1 };
		/* (netns "": the other sets of every namespace) */
		e = slot(x, &k, true);
	} else if (!e) {
		e = slot(x, &k, true);
	}
	if (!e) {	/* out of memory: the end is not counted */
		x->errors++;
		pthread_mutex_unlock(&x->mu);
		return 0;
	}
	e->ends++;
	if (r->has_info) {
		e->sent += r->bytes_acked;
		e->received += r->bytes_received;
	}
	if (r->start_ms && r->end_ms >= r->start_ms) {
		double d = (double)(r->end_ms - r->start_ms) / 1e3;
		unsigned b = 0;

		while (b < DUR_BUCKETS - 1 && d > dur_bounds_s[b])
			b++;
		e->dur[b]++;
		e->dur_sum_s += d;
	}
	pthread_mutex_unlock(&x->mu);
	return 0;
}

static void count_lost(struct exp_life *x, int r, uint64_t lost)
{
	pthread_mutex_lock(&x->mu);
	x->lost += lost;
	x->errors += r < 0;
	x->followed = life_n(x->l);
	pthread_mutex_unlock(&x->mu);
}

/* The thread: the events as they come, a dump when life_due() says (after
 * following the namespaces made and deleted since the last, --all-netns). */
static void *run(void *arg)
{
	struct exp_life *x = arg;
	struct pollfd *p = NULL;
	uint64_t next = mono_ns();

	for (;;) {
		size_t n = life_n(x->l);
		struct pollfd *q = realloc(p, (n + 1) * sizeof(*p));
		uint64_t now = mono_ns(), lost = 0;
		bool gather = false;
		int r = 0;

		if (!q)
			break;
		p = q;
		if (now >= next) {
			if (x->all) {
				r = life_follow_all(x->l, &x->ns, &x->nns, on_end, x, &lost);
				count_lost(x, r, lost);
			}
			r = life_poll(x->l, on_end, x, &lost);
			count_lost(x, r, lost);
			next = life_due(x->l);
			continue;
		}
		p[0] = (struct pollfd){ .fd = x->stopfd, .events = POLLIN };
		for (size_t i = 0; i < n; i++)
			p[i + 1] = (struct pollfd){ .fd = life_fd(x->l, i), .events = POLLIN };
		if (poll(p, n + 1, (int)((next - now) / 1000000) + 1) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			break;
		for (size_t i = 0; i < n; i++)
			if (p[i + 1].revents & (POLLIN | POLLERR)) {
				r = life_events(x->l, i, on_end, x, &lost);
				count_lost(x, r, lost);
				gather |= r > 0;
			}
		/* As the CLI: the next ends gather, read at one wake-up. */
		if (gather)
			nanosleep(&(struct timespec){ .tv_nsec = LIFE_GATHER_NS }, NULL);
	}
	free(p);
	return NULL;
}

/* ---- start, stop ------------------------------------------------------------------------ */

int exp_life_start(struct exp_life **ret, const struct exp_config *c,
		   const struct exp_target *t)
{
	struct exp_life *x = calloc(1, sizeof(*x));
	struct life_opts o = { .groups = SDIAG_WATCH_TCP4 | SDIAG_WATCH_TCP6 | SDIAG_WATCH_UDP4 |
					 SDIAG_WATCH_UDP6,
			       .tables = SDIAG_TABLE_BIT(SDIAG_T_TCP) | SDIAG_TABLE_BIT(SDIAG_T_UDP),
			       .owners = c->life_by == EXP_BY_COMM };
	int r = -ENOMEM;

	if (!x)
		return -ENOMEM;
	x->stopfd = -1;
	pthread_mutex_init(&x->mu, NULL);
	x->by = c->life_by;
	x->cap = c->max_series;
	snprintf(x->label, sizeof(x->label), "%s", t->label ? t->label : "");
	if (c->cgroup_root)
		x->cgroup_root = strdup(c->cgroup_root);
	if (c->cgroup_root && !x->cgroup_root)
		goto fail;
	if (t->all_netns) {	/* none yet: the first pass follows them */
		x->all = true;
		o.nsfds = &t->nsfd;
		o.n = 0;
	} else if (t->nsfd >= 0) {
		o.nsfds = &t->nsfd;
		o.n = 1;
	}
	r = life_open(&x->l, &o);
	if (r < 0)
		goto fail;
	x->stopfd = eventfd(0, EFD_CLOEXEC);
	if (x->stopfd < 0) {
		r = -errno;
		goto fail;
	}
	r = -pthread_create(&x->th, NULL, run, x);
	if (r < 0)
		goto fail;
	x->started = true;
	*ret = x;
	return 0;
fail:
	exp_life_stop(x);
	return r;
}

void exp_life_stop(struct exp_life *x)
{
	if (!x)
		return;
	if (x->started) {
		(void)!write(x->stopfd, &(uint64_t){ 1 }, sizeof(uint64_t));
		pthread_join(x->th, NULL);
	}
	if (x->stopfd >= 0)
		close(x->stopfd);
	life_free(x->l);
	for (size_t i = 0; i < x->n; i++)
		free(x->v[i].cgroup_path);
	free(x->v);
	gtab_free(&x->idx);
	free(x->ns);
	free(x->cgroup_root);
	pthread_mutex_destroy(&x->mu);
	free(x);
}

/* ---- rendering -------------------------------------------------------------------------- */

struct labels {
	const struct exp_life *x;
	const struct end_ent *e;
};

static void end_labels(struct expo *o, const void *ctx)
{
	const struct labels *l = ctx;
	const struct end_ent *e = l->e;
	char id[32];

	fputs("netns=\"", o->f);
	expo_value(o, e->k.netns);
	fprintf(o->f, "\",proto=\"%s\",outcome=\"%s\",port=\"", e->k.proto ? "udp" : "tcp",
		life_outcome_name((enum life_outcome)e->k.outcome));
	if (e->k.other)
		fputs("other", o->f);
	else
		fprintf(o->f, "%u", e->k.port);
	fputc('"', o->f);
	if (l->x->by == EXP_BY_COMM) {
		fputs(",comm=\"", o->f);
		expo_value(o, e->k.other ? "other" : e->k.comm);
		fputc('"', o->f);
	} else if (l->x->by == EXP_BY_CGROUP) {
		snprintf(id, sizeof(id), "id:%llu", (unsigned long long)e->k.cgroup);
		fputs(",cgroup=\"", o->f);
		expo_value(o, e->k.other ? "other" : e->cgroup_path ? e->cgroup_path : id);
		fputc('"', o->f);
	}
}

static void name_cgroups(struct exp_life *x)
{
	uint64_t *ids;
	char **paths;

	if (x->by != EXP_BY_CGROUP)
		return;
	ids = calloc(x->n + 1, sizeof(*ids));
	paths = calloc(x->n + 1, sizeof(*paths));
	if (ids && paths) {
		for (size_t i = 0; i < x->n; i++)
			ids[i] = !x->v[i].cgroup_path && !x->v[i].k.other ? x->v[i].k.cgroup
									  : UINT64_MAX;
		exp_cgroup_paths(x->cgroup_root, ids, x->n, paths);
		for (size_t i = 0; i < x->n; i++)
			if (paths[i])
				x->v[i].cgroup_path = paths[i];
	}
	free(ids);
	free(paths);
}

/* The counters of each label set. */
static const struct {
	const char *name, *help;
	size_t offset;
} counters[] = {
	{ "sockdiag_connection_ends", "TCP and UDP connections ended, by outcome and service port.",
	  offsetof(struct end_ent, ends) },
	{ "sockdiag_connection_end_sent_bytes",
	  "Payload bytes the ended TCP connections sent (acknowledged).",
	  offsetof(struct end_ent, sent) },
	{ "sockdiag_connection_end_received_bytes",
	  "Payload bytes the ended TCP connections received.", offsetof(struct end_ent, received) },
};

void exp_life_render(struct expo *o, struct exp_life *x)
{
	pthread_mutex_lock(&x->mu);
	name_cgroups(x);
	for (size_t c = 0; c < sizeof(counters) / sizeof(counters[0]); c++) {
		expo_family(o, counters[c].name, "counter", counters[c].help);
		for (size_t i = 0; i < x->n; i++) {
			const struct end_ent *e = &x->v[i];

			fprintf(o->f, "%s_total{", counters[c].name);
			end_labels(o, &(struct labels){ x, e });
			fprintf(o->f, "} %llu\n", (unsigned long long)*(const uint64_t *)
							  ((const char *)e + counters[c].offset));
		}
	}
	expo_family(o, "sockdiag_connection_duration_seconds", "histogram",
		    "Lifetimes of the ended connections whose start was seen.");
	for (size_t i = 0; i < x->n; i++)
		expo_histogram(o, "sockdiag_connection_duration_seconds", false, end_labels,
			       &(struct labels){ x, &x->v[i] }, dur_le, x->v[i].dur, DUR_BUCKETS,
			       x->v[i].dur_sum_s);
	expo_family(o, "sockdiag_connection_end_events_lost", "counter",
		    "Socket-destroy events the kernel could not queue (ends then found by "
		    "the next dump, without their final counters).");
	fprintf(o->f, "sockdiag_connection_end_events_lost_total %llu\n",
		(unsigned long long)x->lost);
	expo_family(o, "sockdiag_connection_end_errors", "counter",
		    "Reads, dumps and namespace changes of the connection-end engine that "
		    "failed, and ends not counted for want of memory.");
	fprintf(o->f, "sockdiag_connection_end_errors_total %llu\n",
		(unsigned long long)x->errors);
	expo_family(o, "sockdiag_connection_end_namespaces", "gauge",
		    "Network namespaces whose connection ends are followed.");
	fprintf(o->f, "sockdiag_connection_end_namespaces %zu\n", x->followed);
	pthread_mutex_unlock(&x->mu);
}
