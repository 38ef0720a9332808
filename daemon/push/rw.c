// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Prometheus remote write 1.0 (prometheus/prompb): one TimeSeries per
 * sample as a scrape of the exporter by Prometheus would store it (the
 * sample's name as __name__, its labels but the empty ones, plus job="sockdiag" and
 * instance=host.name, which a scrape adds), labels sorted by name as the
 * protocol requires, one Sample at the pass's time; one MetricMetadata per
 * family.
 *
 *   WriteRequest   { repeated TimeSeries timeseries = 1; repeated MetricMetadata metadata = 3; }
 *   TimeSeries     { repeated Label labels = 1; repeated Sample samples = 2; }
 *   Label          { string name = 1; string value = 2; }
 *   Sample         { double value = 1; int64 timestamp = 2; }
 *   MetricMetadata { MetricType type = 1; string metric_family_name = 2; string help = 4; }
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/push/pb.h"
#include "daemon/push/push.h"

/* prompb's MetricMetadata.MetricType. */
static const unsigned rw_type[] = {
	[PM_UNKNOWN] = 0, [PM_COUNTER] = 1, [PM_GAUGE] = 2, [PM_HISTOGRAM] = 3,
	[PM_GAUGEHISTOGRAM] = 4,
};

#define MAX_LABELS 32

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct pm_label *)a)->name, ((const struct pm_label *)b)->name);
}

int rw_encode(const struct pm *m, const struct push_ident *id, uint8_t **ret, size_t *ret_len,
	      size_t *ret_samples)
{
	struct pm_label l[MAX_LABELS];
	struct pb p;

	pb_init(&p);
	for (size_t i = 0; i < m->n_samples; i++) {
		const struct pm_sample *s = &m->samples[i];
		size_t n = 0, ts, mk;

		if (s->n_labels + 3 > MAX_LABELS) {
			pb_free(&p);
			return -E2BIG;
		}
		l[n++] = (struct pm_label){ "__name__", s->name };
		l[n++] = (struct pm_label){ "job", "sockdiag" };
		l[n++] = (struct pm_label){ "instance", id->host };
		for (size_t k = 0; k < s->n_labels; k++)
			if (m->labels[s->label0 + k].value[0])	/* empty: no label (a scrape's rule) */
				l[n++] = m->labels[s->label0 + k];
		qsort(l, n, sizeof(l[0]), by_name);
		ts = pb_begin(&p, 1);
		for (size_t k = 0; k < n; k++) {
			mk = pb_begin(&p, 1);
			pb_string(&p, 1, l[k].name);
			pb_string(&p, 2, l[k].value);
			pb_end(&p, mk);
		}
		mk = pb_begin(&p, 2);
		pb_double(&p, 1, s->value);
		pb_varint(&p, 2, (uint64_t)m->time_ms);
		pb_end(&p, mk);
		pb_end(&p, ts);
	}
	for (size_t i = 0; i < m->n_fams; i++) {
		const struct pm_family *f = &m->fams[i];
		size_t mk = pb_begin(&p, 3);

		pb_varint(&p, 1, rw_type[f->type]);
		pb_string(&p, 2, f->name);
		if (f->help[0])
			pb_string(&p, 4, f->help);
		pb_end(&p, mk);
	}
	*ret_samples = m->n_samples;
	return pb_finish(&p, ret, ret_len);
}
