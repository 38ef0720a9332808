/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Offline decoder tests: load golden bytes recorded by tests/fixtures/capture-*.sh
 * (reply datagrams of one dump, concatenated) and run a decoder over every
 * message. Header-only; FIXTURE_DIR comes from tests/unit/meson.build.
 */
#ifndef SOCKDIAG_TESTS_FIXTURE_UTIL_H
#define SOCKDIAG_TESTS_FIXTURE_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>

#include "lib/core/internal.h"

#define FIXTURE_MAX_SOCKS 256

typedef int (*fixture_decoder)(const struct nlmsghdr *nlh, struct sdiag_sock *s);

struct fixture {
	uint8_t *buf; /* malloc'd: aligned for struct nlmsghdr */
	size_t len;
	struct sdiag_sock socks[FIXTURE_MAX_SOCKS]; /* borrow from buf */
	size_t n;				    /* records decoded */
	size_t n_msgs;				    /* messages seen, DONE included */
	size_t n_done;
};

/* Load FIXTURE_DIR/name and decode it; every message must decode without error. */
static inline void fixture_load(struct fixture *f, const char *name, fixture_decoder dec)
{
	char path[4096];
	const struct nlmsghdr *nlh;
	FILE *fp;
	long sz;
	int rem;

	memset(f, 0, sizeof(*f));
	snprintf(path, sizeof(path), "%s/%s", FIXTURE_DIR, name);
	fp = fopen(path, "rb");
	if (!fp)
		fail_msg("cannot open fixture %s", path);
	assert_int_equal(fseek(fp, 0, SEEK_END), 0);
	sz = ftell(fp);
	assert_true(sz > 0);
	rewind(fp);
	f->buf = malloc((size_t)sz);
	assert_non_null(f->buf);
	assert_int_equal(fread(f->buf, 1, (size_t)sz, fp), (size_t)sz);
	fclose(fp);
	f->len = (size_t)sz;

	rem = (int)f->len;
	for (nlh = (const struct nlmsghdr *)f->buf; mnl_nlmsg_ok(nlh, rem);
	     nlh = mnl_nlmsg_next(nlh, &rem)) {
		struct sdiag_sock s;
		int r;

		f->n_msgs++;
		if (nlh->nlmsg_type == NLMSG_DONE)
			f->n_done++;
		memset(&s, 0, sizeof(s));
		r = dec(nlh, &s);
		assert_true(r >= 0);
		if (r == 0)
			continue;
		assert_true(f->n < FIXTURE_MAX_SOCKS);
		f->socks[f->n++] = s;
	}
	assert_int_equal(rem, 0);	/* the file is whole messages */
	assert_int_equal(f->n_done, 1); /* exactly one dump */
}

static inline void fixture_free(struct fixture *f)
{
	free(f->buf);
	memset(f, 0, sizeof(*f));
}

/* Decode one message built in a test buffer. */
static inline int decode_one(fixture_decoder dec, const void *buf, struct sdiag_sock *s)
{
	memset(s, 0, sizeof(*s));
	return dec((const struct nlmsghdr *)buf, s);
}

#endif
