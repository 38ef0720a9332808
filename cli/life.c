// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sockdiag life [OPTIONS] [FILTER]: one record per ended TCP or UDP
 * connection (the engine: life/life.h), as a table or JSON, until a signal
 * or --count records. Events the kernel dropped are reported on stderr, in
 * the stream (a {"lost":N} object) and in the summary at exit; so are, with
 * --bpf, the tracepoint's records its ring buffer could not take
 * ({"bpf_lost":N}: they cost exactness, not records).
 *
 * Exit status: 0 stopped by a signal or --count reached, 1 runtime error,
 * 2 usage or filter error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/signalfd.h>

#include "cli/commands.h"
#include "cli/fmt/fmt.h"
#include "cli/run/run.h"
#include "life/life.h"
#include "util/inaddr.h"
#include "util/sigfd.h"
#include "util/textfile.h"

struct life_ctx {
	struct run_sched sched;
	enum out_format fmt;
	struct sdiag_netns *ns;		/* several -N, --all-netns: life's order; else NULL */
	size_t nns;
	bool all;			/* --all-netns: followed as they come and go */
	uint64_t count, limit, lost;
	uint64_t bpf_lost;		/* --bpf: the ring's losses reported so far */
	int rcvbuf;
	bool first;
	bool no_header;		/* -H */
	bool bpf;		/* --bpf */
	uint32_t budget_ppm;	/* --dump-budget (life_opts) */
	uint64_t gap_max, cpu_max; /* the longest gap the dumps' cost set, the dearest dump */
	struct obuf out;	/* standard output */
	char iso[32];		/* the last second written, ISO 8601 */
	size_t iso_len;
	uint64_t iso_sec;
};

enum { OPT_RCVBUF = 0x100, OPT_BPF, OPT_DUMP_BUDGET };
/* Standard output is written when this much is buffered, and after each wake-up. */
enum { LIFE_OUT_FLUSH = 32 * 1024 };

/* --dump-budget PERCENT|off: the dumps' share of one core (0.001 to 100; 0: off). */
static int dump_budget(struct life_ctx *c, const char *arg)
{
	char q[TEXT_QUOTE_LEN], *end;
	double v;

	if (!strcmp(arg, "off") || !strcmp(arg, "0")) {
		c->budget_ppm = LIFE_BUDGET_OFF;
		return 0;
	}
	errno = 0;
	v = strtod(arg, &end);
	if (!strcmp(end, "%"))
		end++;
	if (errno || end == arg || *end || !(v >= 0.001 && v <= 100)) {
		fprintf(stderr, "sockdiag life: --dump-budget: '%s' is not a percentage of a core "
				"(0.001 to 100) or off (0)\n", TQ(q, arg));
		return -EINVAL;
	}
	c->budget_ppm = (uint32_t)(v * 10000 + 0.5);
	return 0;
}

static int life_opt(void *ctx, int val, const char *arg)
{
	struct life_ctx *c = ctx;
	char *end;
	long v;

	if (val == OPT_BPF) {
		c->bpf = true;
		return 0;
	}
	if (val == OPT_DUMP_BUDGET)
		return dump_budget(c, arg);
	if (val != OPT_RCVBUF)
		return run_sched_opt(&c->sched, "life", val, arg);
	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || *end || v < 4096 || v > INT32_MAX) {
		char q[TEXT_QUOTE_LEN];

		fprintf(stderr, "sockdiag life: --rcvbuf: '%s' is not a size in bytes (>= 4096)\n",
			TQ(q, arg));
		return -EINVAL;
	}
	c->rcvbuf = (int)v;
	return 0;
}

static void addr(struct obuf *b, const struct life_rec *r, bool local)
{
	const uint8_t *a = local ? r->src : r->dst;
	uint8_t fam = in_plain(r->family, a, &a);
	char t[INET6_ADDRSTRLEN + 2];

	obuf_put(b, t, fmt_addr(t, fam, a));
}

/* ms since the epoch as ISO 8601 UTC with milliseconds; the part up to the
 * second is made once per second (gmtime and strftime cost more than the
 * rest of a record). */
static void iso(struct life_ctx *c, uint64_t ms)
{
	uint64_t sec = ms / 1000;
	unsigned frac = (unsigned)(ms % 1000);

	if (sec != c->iso_sec || !c->iso_len) {
		time_t t = (time_t)sec;
		struct tm tm;

		gmtime_r(&t, &tm);
		c->iso_len = strftime(c->iso, sizeof(c->iso), "%Y-%m-%dT%H:%M:%S", &tm);
		c->iso_sec = sec;
	}
	obuf_put(&c->out, c->iso, c->iso_len);
	obuf_put(&c->out, (const char[]){ '.', (char)('0' + frac / 100),
					 (char)('0' + frac / 10 % 10), (char)('0' + frac % 10),
					 'Z' }, 5);
}

#define PUTS(b, lit) obuf_put((b), (lit), sizeof(lit) - 1)

static void json_u64(struct obuf *b, const char *key_lit, size_t n, uint64_t v)
{
	obuf_put(b, key_lit, n);
	obuf_u64(b, v);
}
#define JU(b, lit, v) json_u64((b), (lit), sizeof(lit) - 1, (v))

static void print_json(struct life_ctx *c, const struct life_rec *r)
{
	struct obuf *b = &c->out;

	if (c->fmt == OUT_JSON)
		obuf_puts(b, c->first ? "[\n" : ",\n");
	c->first = false;
	PUTS(b, "{\"time\":\"");
	iso(c, r->end_ms);
	if (r->start_ms) {
		PUTS(b, "\",\"start\":\"");
		iso(c, r->start_ms);
		JU(b, "\",\"duration_ms\":", r->end_ms - r->start_ms);
		PUTS(b, ",");
	} else {
		PUTS(b, "\",\"start\":null,\"duration_ms\":null,");
	}
	obuf_puts(b, r->start_exact ? "\"start_exact\":true," : "\"start_exact\":false,");
	if (c->ns) {
		PUTS(b, "\"netns\":");
		obuf_json_cstr(b, c->ns[r->ns].label);
		PUTS(b, ",");
	}
	obuf_puts(b, r->proto == IPPROTO_UDP ? "\"proto\":\"udp\"" : "\"proto\":\"tcp\"");
	PUTS(b, ",\"local\":{\"addr\":\"");
	addr(b, r, true);
	JU(b, "\",\"port\":", r->sport);
	PUTS(b, "},\"peer\":{\"addr\":\"");
	addr(b, r, false);
	JU(b, "\",\"port\":", r->dport);
	PUTS(b, "},\"cookie\":\"");
	obuf_hex(b, r->cookie);
	PUTS(b, "\",\"state\":\"");
	if (r->state)
		obuf_puts(b, sdiag_state_name(r->state));
	PUTS(b, "\",\"outcome\":\"");
	obuf_puts(b, life_outcome_name(r->outcome));
	obuf_puts(b, r->by_poll ? "\",\"seen_closed\":true" : "\",\"seen_closed\":false");
	if (r->has_info) {
		JU(b, ",\"bytes_acked\":", r->bytes_acked);
		JU(b, ",\"bytes_received\":", r->bytes_received);
		JU(b, ",\"segs_out\":", r->segs_out);
		JU(b, ",\"segs_in\":", r->segs_in);
		JU(b, ",\"retrans\":", r->total_retrans);
		JU(b, ",\"rtt_us\":", r->rtt_us);
		JU(b, ",\"min_rtt_us\":", r->min_rtt_us);
		JU(b, ",\"delivery_rate\":", r->delivery_rate);
	}
	if (r->has_queues) {
		JU(b, ",\"recv_q\":", r->rqueue);
		JU(b, ",\"send_q\":", r->wqueue);
	}
	if (r->has_drops)
		JU(b, ",\"drops\":", r->drops);
	if (r->pid) {
		JU(b, ",\"owner\":{\"pid\":", (uint64_t)r->pid);
		PUTS(b, ",\"comm\":");
		obuf_json_str(b, r->comm, strnlen(r->comm, sizeof(r->comm)));
		PUTS(b, "}");
	} else {
		PUTS(b, ",\"owner\":null");
	}
	if (r->cgroup_id)
		JU(b, ",\"cgroup_id\":", r->cgroup_id);
	obuf_puts(b, c->fmt == OUT_NDJSON ? "}\n" : "}");
}

static void print_row(struct life_ctx *c, const struct life_rec *r)
{
	struct obuf *b = &c->out;
	char dur[24] = "-";
	size_t la;

	if (c->first && !c->no_header)
		obuf_printf(b, "%-24s %-5s %-10s %9s %10s %10s %-28s %s%s\n", "Time", "Proto",
			    "Outcome", "Dur(ms)", "Acked", "Received", "Local", "Peer",
			    c->ns || c->all ? "  Netns" : "");
	c->first = false;
	if (r->start_ms)
		snprintf(dur, sizeof(dur), "%llu", (unsigned long long)(r->end_ms - r->start_ms));
	iso(c, r->end_ms);
	obuf_printf(b, " %-5s %-10s %9s %10llu %10llu ", r->proto == IPPROTO_UDP ? "udp" : "tcp",
		    life_outcome_name(r->outcome), dur, (unsigned long long)r->bytes_acked,
		    (unsigned long long)r->bytes_received);
	la = b->len;
	addr(b, r, true);
	obuf_printf(b, ":%-*u ", (int)(27 - (b->len - la)), r->sport);
	addr(b, r, false);
	obuf_printf(b, ":%u%s%s\n", r->dport, c->ns ? "  " : "", c->ns ? c->ns[r->ns].label : "");
}

static int rec_cb(const struct life_rec *r, void *ud)
{
	struct life_ctx *c = ud;

	if (c->limit && c->count >= c->limit)
		return 0;
	if (c->fmt == OUT_TABLE)
		print_row(c, r);
	else
		print_json(c, r);
	c->count++;
	if (c->out.len >= LIFE_OUT_FLUSH && obuf_flush(&c->out) < 0)
		return -EPIPE;
	return c->out.err ? -EPIPE : 0;
}

static void said_lost(struct life_ctx *c, uint64_t lost)
{
	if (!lost)
		return;
	c->lost += lost;
	fprintf(stderr, "sockdiag life: %llu event%s lost (receive queue overflow)\n",
		(unsigned long long)lost, lost == 1 ? "" : "s");
	if (c->fmt == OUT_NDJSON) {
		JU(&c->out, "{\"lost\":", lost);
		PUTS(&c->out, "}\n");
	}
}

/* --bpf: the tracepoint's records the ring buffer had no room for since the
 * last look (a reader far behind): those starts are first seen, those owners
 * a dump's, those outcomes judged from the final tcp_info. */
static void said_bpf_lost(struct life_ctx *c, const struct life *l)
{
	uint64_t now = life_bpf_missed(l), n = now - c->bpf_lost;

	if (now <= c->bpf_lost)
		return;
	c->bpf_lost = now;
	fprintf(stderr, "sockdiag life: --bpf: %llu births/ends not traced (BPF ring full)\n",
		(unsigned long long)n);
	if (c->fmt == OUT_NDJSON) {
		JU(&c->out, "{\"bpf_lost\":", n);
		PUTS(&c->out, "}\n");
	}
}

/* --all-netns: the namespaces deleted since the last dump are let go (their
 * pending events read first), the new ones followed. */
static int resync(struct life_ctx *c, struct life *l)
{
	uint64_t lost;
	int r = life_follow_all(l, &c->ns, &c->nns, rec_cb, c, &lost);

	said_lost(c, lost);
	return r;
}

static int life_loop(struct life_ctx *c, struct life *l, int sigfd)
{
	struct pollfd *p = NULL;
	uint64_t lost;
	int r = 0;

	while (!(c->limit && c->count >= c->limit)) {
		struct deadline due = deadline_at(life_due(l));
		size_t n = life_n(l);
		struct pollfd *q = realloc(p, (n + 1) * sizeof(*p));
		bool batch = false;
		int ms = deadline_poll_ms(due);

		if (!q) {
			r = -ENOMEM;
			break;
		}
		p = q;
		for (size_t i = 0; i < n; i++)
			p[i] = (struct pollfd){ .fd = life_fd(l, i), .events = POLLIN };
		p[n] = (struct pollfd){ .fd = sigfd, .events = POLLIN };
		lost = 0;
		/* The signals are looked at before every dump too: a dump slower than
		 * the interval must not make life deaf to them. */
		if (poll(p, n + 1, ms > 0 ? ms : 0) < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
		} else if (p[n].revents & POLLIN) {
			break;
		} else if (ms <= 0) {
			uint64_t cpu, gap;

			r = c->all ? resync(c, l) : 0;
			if (r >= 0)
				r = life_poll(l, rec_cb, c, &lost);
			said_lost(c, lost);
			life_poll_cost(l, &cpu, &gap);
			c->gap_max = gap > c->gap_max ? gap : c->gap_max;
			c->cpu_max = cpu > c->cpu_max ? cpu : c->cpu_max;
		} else {
			for (size_t i = 0; i < n && r >= 0; i++) {
				if (!(p[i].revents & (POLLIN | POLLERR)))
					continue;
				r = life_events(l, i, rec_cb, c, &lost);
				said_lost(c, lost);
				batch |= r > 0;
			}
		}
		said_bpf_lost(c, l);
		if (obuf_flush(&c->out) < 0 && r >= 0)
			r = -EPIPE;
		/* After records, let the next ends gather (the receive buffer holds
		 * 32 MiB): one wake-up for many events instead of one each (at 10k
		 * ends a second, reads of 16 or more only: 2.3-2.9% of a core; now
		 * 1.0-1.1%). */
		if (batch && r >= 0)
			nanosleep(&(struct timespec){ .tv_nsec = LIFE_GATHER_NS }, NULL);
		if (r < 0)
			break;
	}
	free(p);
	return r < 0 ? r : 0;
}

/* At exit, when a dump's cost spaced the dumps out: by how much, and why. */
static void said_gaps(const struct life_ctx *c)
{
	uint64_t iv = run_interval_ns(&c->sched);

	if (c->gap_max > iv)
		fprintf(stderr, "sockdiag life: dumps up to %.3g s apart instead of %.3g s (the "
				"dearest cost %.1f ms of CPU: --dump-budget)\n",
			(double)c->gap_max / 1e9, (double)iv / 1e9, (double)c->cpu_max / 1e6);
}

/* --bpf that could not load: one line, and life goes on without it. */
static void said_bpf(int err)
{
	if (err)
		fprintf(stderr, "sockdiag life: --bpf: cannot load the tracepoint program: %s; "
				"starts are first seen\n", life_bpf_why(err));
}

/* The namespaces' descriptors: -N (one or several) or ours. */
static int open_life(struct life **l, struct life_ctx *c, const struct cli_opts *o)
{
	struct life_opts lo = { .groups = opts_watch_groups(o), .filter = o->q.filter,
				.afs = o->q.afs, .rcvbuf = c->rcvbuf, .owners = true,
				.bpf = c->bpf, .interval_ns = run_interval_ns(&c->sched),
				.budget_ppm = c->budget_ppm };
	size_t n = 0;
	int *fds = NULL, r = 0;

	lo.tables = (lo.groups & (SDIAG_WATCH_TCP4 | SDIAG_WATCH_TCP6) ?
			     SDIAG_TABLE_BIT(SDIAG_T_TCP) : 0) |
		    (lo.groups & (SDIAG_WATCH_UDP4 | SDIAG_WATCH_UDP6) ?
			     SDIAG_TABLE_BIT(SDIAG_T_UDP) : 0);
	if (o->all_netns) {
		c->all = true; /* none yet: the first dump's resync() finds them */
	} else if (run_netns_many(o)) {
		r = run_netns_set(o, "life", &c->ns, &n);
		if (r)
			return r;
		c->nns = n;
	} else if (o->netns) {
		n = 1;
	}
	fds = calloc(n ? n : 1, sizeof(*fds));
	if (!fds)
		return EXIT_RUNTIME;
	for (size_t i = 0; i < n && r == 0; i++) {
		const char *spec = c->ns ? c->ns[i].path : o->netns;

		fds[i] = -1;
		r = sdiag_netns_open(spec, &fds[i]);
		if (r < 0)
			argerr_netns("life", spec, r);
	}
	if (r == 0) {
		lo.nsfds = n || c->all ? fds : NULL;
		lo.n = n;
		r = life_open(l, &lo);
		if (r < 0)
			fprintf(stderr, "sockdiag life: cannot subscribe to socket-destroy events: "
					"%s\n", strerror(-r));
		else if (c->bpf)
			said_bpf(life_bpf_error(*l));
	}
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	return r ? EXIT_RUNTIME : 0;
}

int cmd_life(int argc, char **argv)
{
	static const struct option longopts[] = {
		RUN_SCHED_LONGOPTS,
		{ "rcvbuf", required_argument, NULL, OPT_RCVBUF },
		{ "bpf", no_argument, NULL, OPT_BPF },
		{ "dump-budget", required_argument, NULL, OPT_DUMP_BUDGET },
		{ 0 },
	};
	struct life_ctx c = { .first = true };
	const struct opt_extra extra = {
		.longopts = longopts,
		.shortopts = "",
		.handle = life_opt,
		.ctx = &c,
		.takes = OPTS_G_INET | OPTS_G_FAMILY | OPTS_G_OUTPUT | OPTS_G_NETNS | OPTS_G_DUMP |
			 OPTS_G_FILTER,
		.usage = "Life:     --interval SECONDS (dumps for first seen, owners and ends "
			 "while held; default 1)\n"
			 "          --dump-budget PERCENT|off (of a core: dearer dumps come later, "
			 "default 0.25)\n"
			 "          --count N (stop after N records)\n"
			 "          --rcvbuf BYTES (receive buffer, default 32 MiB)\n"
			 "          --bpf (exact TCP starts and owners from the "
			 "sock:inet_sock_set_state tracepoint)\n",
	};
	struct sdiag_filter *f = NULL;
	struct life *l = NULL;
	struct cli_opts o;
	int r, sigfd = -1, status = EXIT_RUNTIME;
	char more[48] = "";

	r = opts_parse(&o, argc, argv, &extra);
	if (r == OPTS_EXIT)
		return EXIT_OK;
	if (r < 0)
		return EXIT_USAGE;
	c.limit = c.sched.count;
	if (!run_interval_ns(&c.sched))
		c.sched.interval.tv_sec = 1;
	c.fmt = o.out.format;
	c.no_header = o.out.no_header;
	if (opts_filter(&o, &f) < 0 || sdiag_filter_needs_procs(f)) {
		if (f)
			fprintf(stderr, "sockdiag life: pid, comm and user are not supported "
					"(an ended socket has no owner)\n");
		status = EXIT_USAGE;
		goto out;
	}
	o.q.filter = f;
	if (!opts_watch_groups(&o) || (o.explicit_tables & ~(SDIAG_TABLE_BIT(SDIAG_T_TCP) |
							       SDIAG_TABLE_BIT(SDIAG_T_UDP)))) {
		fprintf(stderr, "sockdiag life: connections are TCP and UDP; select -t and/or -u\n");
		status = EXIT_USAGE;
		goto out;
	}
	if (obuf_init(&c.out, 2 * LIFE_OUT_FLUSH, STDOUT_FILENO) < 0)
		goto out;
	status = open_life(&l, &c, &o);
	if (status)
		goto out;
	sigfd = sigfd_open((const int[]){ SIGINT, SIGTERM, SIGHUP, 0 }, SFD_NONBLOCK);
	if (sigfd < 0) {
		status = EXIT_RUNTIME;
		goto out;
	}
	r = life_loop(&c, l, sigfd);
	if (c.fmt == OUT_JSON)
		obuf_puts(&c.out, c.first ? "[]\n" : "\n]\n");
	if (obuf_flush(&c.out) < 0 && r == 0)
		r = -EIO;
	said_gaps(&c);
	if (c.bpf && !life_bpf_error(l))
		snprintf(more, sizeof(more), ", %llu not traced", (unsigned long long)c.bpf_lost);
	status = run_stream_done("life", "record", c.count, c.lost, more, r);
out:
	life_free(l);
	obuf_fini(&c.out);
	free(c.ns);
	sdiag_filter_free(f);
	if (sigfd >= 0)
		close(sigfd);
	opts_fini(&o);
	return status;
}
