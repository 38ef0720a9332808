/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libdump: the library alone. sdiag_dump() of TCP (IPv4 and IPv6, every
 * state, no detail flags) with a callback that only counts the decoded
 * records: the floor plus libsockdiag's receive, decode and duplicate check,
 * without any output. With -f FILTER the filter goes into the query (kernel
 * bytecode unless -u).
 *
 * usage: libdump [-q] [-u] [-f FILTER]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sockdiag.h>

static int count_cb(const struct sdiag_sock *s, void *userdata)
{
	unsigned long *n = userdata;

	(void)s;
	(*n)++;
	return 0;
}

int main(int argc, char **argv)
{
	SDIAG_OPTS(sdiag_query, q,
			.tables = SDIAG_TABLE_BIT(SDIAG_T_TCP),
			.states = SDIAG_STATES_ALL,
			.afs = SDIAG_AF_ALL);
	struct sdiag_filter_error ferr = { 0 };
	struct sdiag_filter *f = NULL;
	struct sdiag_handle *h = NULL;
	unsigned long n = 0;
	int opt, r, quiet = 0, ret = 1;

	while ((opt = getopt(argc, argv, "quf:")) != -1) {
		switch (opt) {
		case 'q':
			quiet = 1;
			break;
		case 'u':
			q.no_kernel_filter = true;
			break;
		case 'f':
			r = sdiag_filter_parse(&f, optarg, &ferr);
			if (r < 0) {
				fprintf(stderr, "libdump: filter: %s\n",
					r == -22 ? ferr.msg : strerror(-r));
				return 2;
			}
			q.filter = f;
			break;
		default:
			fprintf(stderr, "usage: libdump [-q] [-u] [-f FILTER]\n");
			return 2;
		}
	}
	r = sdiag_open(&h);
	if (r < 0) {
		fprintf(stderr, "libdump: open: %s\n", strerror(-r));
		goto out;
	}
	r = sdiag_dump(h, &q, count_cb, NULL, &n);
	if (r < 0) {
		fprintf(stderr, "libdump: dump: %s\n", strerror(-r));
		goto out;
	}
	if (!quiet)
		printf("%lu\n", n);
	ret = 0;
out:
	sdiag_close(h);
	sdiag_filter_free(f);
	return ret;
}
