/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The clocks, in one place: now on CLOCK_MONOTONIC (intervals, deadlines,
 * timers) or CLOCK_REALTIME (stamps people read) as integer ns, us or ms; the
 * time since a monotonic start; a deadline on the monotonic clock and what is
 * left of it as a poll(2) timeout; timespecs to and from integers. Integer
 * arithmetic throughout (uint64_t ns lasts 584 years): no double rounding in
 * a schedule.
 */
#ifndef SOCKDIAG_UTIL_CLOCK_H
#define SOCKDIAG_UTIL_CLOCK_H

#include <limits.h>
#include <stdint.h>
#include <time.h>

#define CLOCK_NS_PER_SEC 1000000000ULL

static inline uint64_t ts_ns(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * CLOCK_NS_PER_SEC + (uint64_t)t->tv_nsec;
}

static inline struct timespec ts_from_ns(uint64_t ns)
{
	return (struct timespec){ .tv_sec = (time_t)(ns / CLOCK_NS_PER_SEC),
				  .tv_nsec = (long)(ns % CLOCK_NS_PER_SEC) };
}

static inline struct timespec ts_from_ms(uint64_t ms)
{
	return ts_from_ns(ms * 1000000ULL);
}

static inline uint64_t clock_ns(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return ts_ns(&t);
}

static inline uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static inline uint64_t mono_us(void)
{
	return mono_ns() / 1000;
}

static inline uint64_t mono_ms(void)
{
	return mono_ns() / 1000000;
}

static inline uint64_t real_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

static inline uint64_t real_ms(void)
{
	return real_ns() / 1000000;
}

/* Milliseconds since t0 (CLOCK_MONOTONIC), for logs and metrics. */
static inline double ms_since(const struct timespec *t0)
{
	uint64_t now = mono_ns(), then = ts_ns(t0);

	return now > then ? (double)(now - then) / 1e6 : 0;
}

/* A moment on CLOCK_MONOTONIC, in ns. */
struct deadline {
	uint64_t ns;
};

static inline struct deadline deadline_at(uint64_t ns)
{
	return (struct deadline){ .ns = ns };
}

/* ns left until d; 0 once it has passed. */
static inline uint64_t deadline_left_ns(struct deadline d)
{
	uint64_t now = mono_ns();

	return d.ns > now ? d.ns - now : 0;
}

/* What is left of d as poll(2)'s timeout: rounded up to a whole ms, so a
 * wake-up is never early; 0 once passed; at most INT_MAX. */
static inline int deadline_poll_ms(struct deadline d)
{
	uint64_t ms = (deadline_left_ns(d) + 999999) / 1000000;

	return ms > INT_MAX ? INT_MAX : (int)ms;
}

#endif
