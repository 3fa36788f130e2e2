/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * port_dpdk.h - the DPDK backend: a port whose queues are an ethdev of
 * DPDK's af_xdp PMD (net_af_xdp vdev) instead of ferry's own AF_XDP
 * sockets. The PMD loads ferry's classifier itself (its xdp_prog= devarg);
 * ferry then adopts the loaded program's maps, so rules, steering and
 * verdict counters work as on a native port. The same workers serve both
 * kinds of queue (worker_dpdk.c is their DPDK half).
 *
 * EAL starts once per ferryd, at the first DPDK port: in memory, with a
 * file prefix of its own (ferry-PID) so that several DPDK processes
 * coexist, on hugepages when enough are free and on ordinary pages
 * (--no-huge) otherwise. No DPDK type appears here: everything that
 * includes rte_*.h is compiled apart, with libdpdk's flags.
 *
 * Built without DPDK (meson -Ddpdk=disabled, or libdpdk missing), every
 * call fails with -ENOTSUP and a message saying so (port_dpdk_stub.c).
 */
#ifndef FERRY_PORT_DPDK_H
#define FERRY_PORT_DPDK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "counters.h"
#include "ferry_err.h"

struct ferry_workers;
struct ferry_port;
struct ferry_pq;
struct ferry_worker;

/* EAL and the mbuf pools of one ferryd; NULL until the first DPDK port. */
struct ferry_dpdk;

/* True when this ferryd was built with the DPDK backend. */
bool ferry_dpdk_built(void);

/*
 * Opens p over DPDK: EAL (once), the vdev, its queues on the workers that
 * f's plan gives them (the same as a native port's), ferry's classifier
 * adopted. p is filled in as port_open fills a native port. 0, or -errno
 * with msg and nothing left behind. Built without DPDK it only refuses,
 * and p may be NULL.
 */
int ferry_dpdk_port_open(struct ferry_dpdk **dpp,
			 const struct ferry_workers *ws, struct ferry_port *p,
			 struct ferry_err *msg);
/* Undoes ferry_dpdk_port_open: queues off the workers, the vdev closed
 * (the PMD detaches the program), the maps let go. */
void ferry_dpdk_port_close(struct ferry_dpdk **dpp,
			   const struct ferry_workers *ws,
			   struct ferry_port *p);
/* Stops EAL; after the last DPDK port is gone (ferry_destroy). */
void ferry_dpdk_destroy(struct ferry_dpdk *d);

/* The kernel's XDP_STATISTICS of a DPDK queue's AF_XDP socket (the PMD's),
 * as ferry_xsk_stats gives them for a native one; 0 or -errno. */
int ferry_dpdk_xsk_stats(const struct ferry_pq *pq, struct ferry_xsk_ctrs *out);

/* Adds the backend's facts to a port's JSON view. */
void ferry_dpdk_port_describe(const struct ferry_dpdk *d,
			      const struct ferry_port *p, json_t *o);

#endif /* FERRY_PORT_DPDK_H */
