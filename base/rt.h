/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rt.h - a thread at real-time priority for a short critical section: the
 * hot restart's pause, where both daemons' workers stand still and every
 * millisecond the control thread waits for a CPU is a millisecond the RX
 * rings fill. Needs CAP_SYS_NICE (privs.h); without it nothing changes.
 */
#ifndef FERRY_RT_H
#define FERRY_RT_H

#include <sched.h>
#include <stdbool.h>

struct ferry_rt {
	int policy; /* what ferry_rt_restore() puts back */
	struct sched_param param;
	bool raised;
};

/* The calling thread to SCHED_FIFO priority 1; 0 or -errno (-EPERM
 * without CAP_SYS_NICE). Raising a raised one changes nothing. */
int ferry_rt_raise(struct ferry_rt *rt);
/* Back to what it was, if raised. */
void ferry_rt_restore(struct ferry_rt *rt);

#endif /* FERRY_RT_H */
