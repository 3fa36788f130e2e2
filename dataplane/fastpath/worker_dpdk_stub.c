// SPDX-License-Identifier: BSD-2-Clause
/* worker_dpdk_stub.c - the worker's DPDK side when ferryd is built without
 * DPDK (dpdk/port_dpdk_stub.c refuses every DPDK port). */
#include "worker_dpdk.h"

/* No DPDK queue can exist, so the worker never calls these. */
uint32_t ferry_dpdk_poll(struct ferry_worker *w)
{
	return 0;
}

uint32_t ferry_dpdk_from_xsk(struct ferry_worker *w, struct ferry_pq *pq,
			     struct ferry_pq *out)
{
	return 0;
}

int ferry_dpdk_poll_fd(const struct ferry_pq *pq)
{
	return -1;
}
