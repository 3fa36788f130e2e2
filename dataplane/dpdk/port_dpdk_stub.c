// SPDX-License-Identifier: BSD-2-Clause
/* port_dpdk_stub.c - the DPDK backend when ferryd is built without DPDK. */
#include <errno.h>

#include "log.h"
#include "port.h"
#include "port_dpdk.h"

bool ferry_dpdk_built(void)
{
	return false;
}

int ferry_dpdk_port_open(struct ferry_dpdk **dpp,
			 const struct ferry_workers *ws, struct ferry_port *p,
			 struct ferry_err *msg)
{
	return ferry_fail(msg, -ENOTSUP,
			  "ferryd was built without DPDK "
			  "(meson -Ddpdk=enabled)");
}

void ferry_dpdk_port_close(struct ferry_dpdk **dpp,
			   const struct ferry_workers *ws, struct ferry_port *p)
{
}

void ferry_dpdk_destroy(struct ferry_dpdk *d)
{
}

int ferry_dpdk_xsk_stats(const struct ferry_pq *pq, struct ferry_xsk_ctrs *out)
{
	return -ENOTSUP;
}

void ferry_dpdk_port_describe(const struct ferry_dpdk *d,
			      const struct ferry_port *p, json_t *o)
{
}
