// SPDX-License-Identifier: BSD-2-Clause
/* rt.c - see rt.h. */
#include <pthread.h>

#include "rt.h"

int ferry_rt_raise(struct ferry_rt *rt)
{
	const struct sched_param fifo = {.sched_priority = 1};
	int err;

	if (rt->raised)
		return 0;
	err = pthread_getschedparam(pthread_self(), &rt->policy, &rt->param);
	if (!err)
		err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &fifo);
	if (err)
		return -err;
	rt->raised = true;
	return 0;
}

void ferry_rt_restore(struct ferry_rt *rt)
{
	if (!rt->raised)
		return;
	pthread_setschedparam(pthread_self(), rt->policy, &rt->param);
	rt->raised = false;
}
