// SPDX-License-Identifier: BSD-2-Clause
/*
 * port_dpdk_class.c - the DPDK backend as a port class (port.h): what a DPDK
 * port can serve, the same with the backend built (port_dpdk.c) or not
 * (port_dpdk_stub.c, whose open refuses).
 */
#include "port.h"
#include "port_dpdk.h"

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
	.takeover_rebuild = false,
	.tx_capture_kernel = false,
	/* The kernel sends live frames out of the interface, the PMD aside;
	 * the xsk engine needs a native socket. */
	.gen_xsk = false,
};
