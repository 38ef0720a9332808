// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sockdiag list -s|--summary: ss -s. The same numbers from the same places as ss
 * (misc/ss.c print_summary): /proc/net/sockstat and sockstat6 (the counters of the
 * network namespace the files were opened in) and Tcp: CurrEstab of /proc/net/snmp;
 * the same layout, or one JSON object. With -N the files are opened inside that
 * namespace (they keep its counters after we come back).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/opts/options.h"
#include "cli/summary.h"

struct sockstat {
	long socks;		/* sockets: used */
	long tcp_total;		/* TCP: alloc */
	long tcp_tws;		/* TCP: tw */
	long tcp_orphans;	/* TCP: orphan */
	long tcp4, tcp6;	/* TCP/TCP6: inuse (hashed) */
	long udp4, udp6, raw4, raw6, frag4, frag6;
	long tcp_estab;		/* Tcp: CurrEstab */
};

enum { F_SOCKSTAT, F_SOCKSTAT6, F_SNMP, F_MAX };
static const char *const paths[F_MAX] = {
	"/proc/net/sockstat", "/proc/net/sockstat6", "/proc/net/snmp",
};

/* Open the three files, inside network namespace nsfd (-1: ours). */
static int open_files(int nsfd, FILE *f[F_MAX])
{
	int self = -1, r = 0;

	if (nsfd >= 0) {
		self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
		if (self < 0 || setns(nsfd, CLONE_NEWNET) < 0) {
			r = -errno;
			if (self >= 0)
				close(self);
			return r;
		}
	}
	for (int i = 0; i < F_MAX; i++) {
		f[i] = fopen(paths[i], "re");
		if (!f[i] && i != F_SOCKSTAT6 && !r)	/* no IPv6: no sockstat6 */
			r = -errno;
	}
	if (self >= 0) {
		if (setns(self, CLONE_NEWNET) < 0 && !r)
			r = -errno;
		close(self);
	}
	return r;
}

/* "TCP: inuse 4 orphan 0 tw 1 alloc 6 mem 1": the value after word, if on the line. */
static void field(const char *line, const char *word, long *v)
{
	const char *p = strstr(line, word);
	size_t n = strlen(word);

	if (p && (p == line || p[-1] == ' ') && p[n] == ' ')
		*v = strtol(p + n + 1, NULL, 10);
}

static void parse_sockstat(FILE *f, struct sockstat *s)
{
	char line[256];

	while (f && fgets(line, sizeof(line), f)) {
		char *rest = strchr(line, ':');
		long *inuse = NULL;

		if (!rest)
			continue;
		*rest++ = '\0';
		if (!strcmp(line, "sockets"))
			field(rest, "used", &s->socks);
		else if (!strcmp(line, "TCP")) {
			field(rest, "inuse", &s->tcp4);
			field(rest, "orphan", &s->tcp_orphans);
			field(rest, "tw", &s->tcp_tws);
			field(rest, "alloc", &s->tcp_total);
		} else if (!strcmp(line, "TCP6"))
			inuse = &s->tcp6;
		else if (!strcmp(line, "UDP"))
			inuse = &s->udp4;
		else if (!strcmp(line, "UDP6"))
			inuse = &s->udp6;
		else if (!strcmp(line, "RAW"))
			inuse = &s->raw4;
		else if (!strcmp(line, "RAW6"))
			inuse = &s->raw6;
		else if (!strcmp(line, "FRAG"))
			inuse = &s->frag4;
		else if (!strcmp(line, "FRAG6"))
			inuse = &s->frag6;
		if (inuse)
			field(rest, "inuse", inuse);
	}
}

/* /proc/net/snmp: a "Tcp:" line of names, then a "Tcp:" line of values. */
static int parse_estab(FILE *f, struct sockstat *s)
{
	char names[1024], values[1024], *n, *v, *sn = NULL, *sv = NULL;

	while (fgets(names, sizeof(names), f)) {
		if (strncmp(names, "Tcp:", 4) || !fgets(values, sizeof(values), f))
			continue;
		n = strtok_r(names, " \n", &sn);
		v = strtok_r(values, " \n", &sv);
		while (n && v) {
			if (!strcmp(n, "CurrEstab")) {
				s->tcp_estab = strtol(v, NULL, 10);
				return 0;
			}
			n = strtok_r(NULL, " \n", &sn);
			v = strtok_r(NULL, " \n", &sv);
		}
	}
	return -ENOENT;
}

static void row(const char *name, long v4, long v6)
{
	printf("%s\t  %-9ld %-9ld %-9ld\n", name, v4 + v6, v4, v6);
}

static void print_table(const struct sockstat *s)
{
	long ip4 = s->raw4 + s->udp4 + s->tcp4, ip6 = s->raw6 + s->udp6 + s->tcp6;

	printf("Total: %ld\n", s->socks);
	printf("TCP:   %ld (estab %ld, closed %ld, orphaned %ld, timewait %ld)\n\n",
	       s->tcp_total + s->tcp_tws, s->tcp_estab,
	       s->tcp_total - (s->tcp4 + s->tcp6 - s->tcp_tws), s->tcp_orphans, s->tcp_tws);
	printf("Transport Total     IP        IPv6\n");
	row("RAW", s->raw4, s->raw6);
	row("UDP", s->udp4, s->udp6);
	row("TCP", s->tcp4, s->tcp6);
	row("INET", ip4, ip6);
	row("FRAG", s->frag4, s->frag6);
	printf("\n");
}

static void jrow(const char *name, long v4, long v6, const char *sep)
{
	printf("\"%s\":{\"total\":%ld,\"ip\":%ld,\"ipv6\":%ld}%s", name, v4 + v6, v4, v6, sep);
}

static void print_json(const struct sockstat *s)
{
	long ip4 = s->raw4 + s->udp4 + s->tcp4, ip6 = s->raw6 + s->udp6 + s->tcp6;

	printf("{\"total\":%ld,\"tcp\":{\"total\":%ld,\"estab\":%ld,\"closed\":%ld,"
	       "\"orphaned\":%ld,\"timewait\":%ld},\"transport\":{",
	       s->socks, s->tcp_total + s->tcp_tws, s->tcp_estab,
	       s->tcp_total - (s->tcp4 + s->tcp6 - s->tcp_tws), s->tcp_orphans, s->tcp_tws);
	jrow("raw", s->raw4, s->raw6, ",");
	jrow("udp", s->udp4, s->udp6, ",");
	jrow("tcp", s->tcp4, s->tcp6, ",");
	jrow("inet", ip4, ip6, ",");
	jrow("frag", s->frag4, s->frag6, "}}\n");
}

int summary_run(const struct cli_opts *o)
{
	struct sockstat s = { 0 };
	FILE *f[F_MAX] = { NULL };
	int nsfd = -1, r = 0;

	if (o->netns && (r = sdiag_netns_open(o->netns, &nsfd)) < 0) {
		argerr_netns("list", o->netns, r);
		return EXIT_RUNTIME;
	}
	r = open_files(nsfd, f);
	if (r < 0)
		fprintf(stderr, "sockdiag list: --summary: %s%s%s\n", o->netns ? "netns " : "",
			o->netns ? o->netns : "", strerror(-r));
	if (r == 0) {
		parse_sockstat(f[F_SOCKSTAT], &s);
		parse_sockstat(f[F_SOCKSTAT6], &s);
		if (parse_estab(f[F_SNMP], &s) < 0) {
			fprintf(stderr, "sockdiag list: --summary: no Tcp: CurrEstab in %s\n",
				paths[F_SNMP]);
			r = -ENOENT;
		}
	}
	for (int i = 0; i < F_MAX; i++)
		if (f[i])
			fclose(f[i]);
	if (nsfd >= 0)
		close(nsfd);
	if (r < 0)
		return EXIT_RUNTIME;
	if (o->out.format == OUT_TABLE)
		print_table(&s);
	else
		print_json(&s);
	return fflush(stdout) == 0 ? EXIT_OK : EXIT_RUNTIME;
}
