/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Writing an exposition: Prometheus text 0.0.4 or OpenMetrics 1.0.0. The
 * differences are kept here: counters' HELP/TYPE name (with or without
 * _total), gaugehistogram (OpenMetrics only; histogram in text, with _gsum
 * and _gcount for _sum and _count), "# EOF".
 */
#ifndef SOCKDIAG_EXPO_H
#define SOCKDIAG_EXPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct expo {
	FILE *f;
	bool om;
	char *body;
	size_t len;
};

int expo_open(struct expo *o, bool openmetrics);
/* Ends the exposition; returns 0 with a malloc'd body, or -ENOMEM. */
int expo_close(struct expo *o, char **ret_body, size_t *ret_len);

/* HELP and TYPE. type: gauge, counter (name without _total), histogram,
 * gaugehistogram. */
void expo_family(struct expo *o, const char *name, const char *type, const char *help);
/* A label value, escaped. What a scraper reads back: valid UTF-8 as it is, a
 * backslash doubled, other bytes (invalid UTF-8, C0 and C1 controls but the
 * newline) as \xHH; distinct strings always give distinct values. */
void expo_value(struct expo *o, const char *s);
/* Writes a sample's labels (name="value",... without braces or a trailing
 * comma) from arg. */
typedef void (*expo_labels_fn)(struct expo *o, const void *arg);
/* A histogram's samples, with the labels labels(o, arg) writes (labels NULL:
 * none): buckets not cumulative (n of them, the last +Inf), their le texts,
 * the sum. */
void expo_histogram(struct expo *o, const char *name, bool gauge, expo_labels_fn labels,
		    const void *arg, const char *const *le, const uint64_t *buckets, size_t n,
		    double sum);

#endif
