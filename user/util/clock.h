/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * clock.h - the one monotonic clock every interval, timeout and age in leaktop is measured
 * with (CLOCK_MONOTONIC, the clock BPF's bpf_ktime_get_ns() reads too), in nanoseconds.
 */
#ifndef LEAKTOP_CLOCK_H
#define LEAKTOP_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The same clock in seconds, for timeouts kept as doubles. */
static inline double monotonic_s(void)
{
	return monotonic_ns() / 1e9;
}

#endif
