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

static void ferry_dpdk_port_close(struct ferry_dpdk **dpp,
				  const struct ferry_workers *ws,
				  struct ferry_port *p)
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

static int dpdk_open(const struct ferry_port_env *env, struct ferry_port *p,
		     struct ferry_err *msg)
{
	return ferry_dpdk_port_open(env->dpdk, env->workers, p, msg);
}

static void dpdk_close(const struct ferry_port_env *env, struct ferry_port *p)
{
	ferry_dpdk_port_close(env->dpdk, env->workers, p);
}

const struct ferry_port_class ferry_port_dpdk = {
	.name = "dpdk",
	.what = "uses the DPDK backend",
	.open = dpdk_open,
	.close = dpdk_close,
	/* The PMD owns its sockets and program: its queues are its own, and
	 * so is what it logs at open. */
	.own_sockets = false,
	.xconnect = true,
	.route = false,
	.kernel_path = false, /* its frames need a worker */
	.takeover = false,    /* not ours to hand over */
	.tx_capture_kernel = false,
	/* The kernel sends live frames out of the interface, the PMD aside;
	 * the xsk engine needs a native socket. */
	.gen_xsk = false,
};
