/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * util.h - the small helpers every layer of ferry uses: array length, branch
 * hints, the monotonic clock, the names ports and rules may take, and the
 * CPUs this process may run on. Below dataplane/, ctl/, daemon/ and
 * drivers-cfg/ alike; depends on nothing of ferry.
 */
#ifndef FERRY_UTIL_H
#define FERRY_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Only on the truly rare branch (STYLE.md, habit 6). */
#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/*
 * ferry keeps CPU sets as 64-bit masks (worker CPUs, steering and spread
 * sets, the BPF side's CPU sets, FERRY_MAX_CPUS in ferry_abi.h): CPUs
 * 0..63. A CPU list naming one above is refused where it is parsed
 * (ctl_parse_list); allowed CPUs above it are left out of
 * ferry_allowed_cpus(), which ferryd says once at start.
 */
#define FERRY_CPU_MASK_BITS 64

/* CLOCK_MONOTONIC in ns. */
uint64_t ferry_now_ns(void);

/* A name ports, rules and captures may have: 1..max-1 of A-Z a-z 0-9 _ . - */
bool ferry_name_ok(const char *s, size_t max);

/*
 * CPUs this process may run on (sched_getaffinity), as a mask of the CPUs
 * below FERRY_CPU_MASK_BITS. *beyond (may be NULL) says whether an allowed CPU at
 * or above the limit was left out of the mask.
 */
uint64_t ferry_allowed_cpus_ex(bool *beyond);
static inline uint64_t ferry_allowed_cpus(void)
{
	return ferry_allowed_cpus_ex(NULL);
}

#endif /* FERRY_UTIL_H */
