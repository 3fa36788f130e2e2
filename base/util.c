/* SPDX-License-Identifier: BSD-2-Clause */
/* util.c - see util.h. */
#include <ctype.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "util.h"

uint64_t ferry_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

bool ferry_name_ok(const char *s, size_t max)
{
	size_t n = strlen(s), i;

	if (!n || n >= max)
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("_.-", s[i]))
			return false;
	return true;
}

uint64_t ferry_allowed_cpus_ex(bool *beyond)
{
	uint64_t mask = 0;
	cpu_set_t set;
	int i;

	if (beyond)
		*beyond = false;
	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (i = 0; i < CPU_SETSIZE; i++) {
		if (!CPU_ISSET(i, &set))
			continue;
		if (i < FERRY_CPU_MASK_BITS)
			mask |= 1ull << i;
		else if (beyond)
			*beyond = true;
	}
	return mask;
}
