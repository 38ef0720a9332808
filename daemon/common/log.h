/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The daemons' log lines on standard error: "2026-12-03T06:37:19.753Z NAME: message". */
#ifndef SOCKDIAG_LOG_H
#define SOCKDIAG_LOG_H

__attribute__((format(printf, 2, 3))) void daemon_log(const char *name, const char *fmt, ...);

#endif
