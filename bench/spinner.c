// SPDX-License-Identifier: BSD-2-Clause
/*
 * spinner - measures spare CPU: pinned to one CPU at the lowest priority
 * (SCHED_IDLE), it counts loop iterations for a while and prints them per
 * second. Whatever the forwarder leaves unused on that CPU, it takes.
 *
 *   spinner CPU SECONDS
 */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct sched_param sp = {0};
	volatile uint64_t n = 0;
	double t0, t, secs;
	cpu_set_t set;

	if (argc != 3) {
		fprintf(stderr, "usage: spinner CPU SECONDS\n");
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(atoi(argv[1]), &set);
	if (sched_setaffinity(0, sizeof(set), &set) ||
	    sched_setscheduler(0, SCHED_IDLE, &sp)) {
		perror("spinner");
		return 1;
	}
	secs = atof(argv[2]);
	t0 = now();
	do {
		for (int i = 0; i < 100000; i++)
			n++;
		t = now();
	} while (t - t0 < secs);
	printf("%.0f\n", (double)n / (t - t0));
	return 0;
}
