// SPDX-License-Identifier: GPL-2.0-or-later
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "daemon/common/log.h"

void daemon_log(const char *name, const char *fmt, ...)
{
	char ts[32], msg[512];
	struct timespec now;
	struct tm tm;
	va_list ap;

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* One write per line: lines of concurrent threads do not interleave. */
	fprintf(stderr, "%s.%03ldZ %s: %s\n", ts, now.tv_nsec / 1000000, name, msg);
}
