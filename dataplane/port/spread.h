/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * spread.h - software RSS: one port queue served by several workers.
 *
 * `port add ... spread cpus LIST [via direct|cpumap]` gives each worker on
 * LIST its own AF_XDP socket, all bound to the port's one queue. The kernel
 * lets sockets on one (interface, queue) share a buffer pool only, so they
 * share the first worker's UMEM, its fill ring and its completion ring: that
 * worker (the owner) is the only one that writes the fill ring and reads the
 * completion ring; the others hand the frames they are done with back
 * through single-producer rings (struct ferry_ret) that the owner drains.
 *
 * The classifier picks the socket by the symmetric flow hash:
 *   direct  from the RX queue's NAPI straight into socket i; one CPU, the
 *           NAPI's, fills every socket, so the shared pool is only ever
 *           taken from by one CPU at a time.
 *   cpumap  through the CPUMAP entry of socket i's CPU first, so the copy
 *           into the UMEM runs there; the kernel rebuilds CPUMAP frames as
 *           frames of queue 0, so only sockets bound to queue 0 get them.
 * Copy mode only (veth and every driver in copy mode; zero-copy pools
 * belong to one queue's driver ring). At `port add` ferry sends probe
 * frames through the classifier (BPF_PROG_RUN, live frames) and checks
 * that each socket got exactly its share; if not, the port falls back to
 * plain per-queue mode and says why.
 */
#ifndef FERRY_SPREAD_H
#define FERRY_SPREAD_H

#include <jansson.h>
#include <stddef.h>

#include "ferry_err.h"
#include "ferry_limits.h"

struct ferry_port;
struct ferry_workers;

/*
 * The backend (ferry_port_spread, port.h) opens p with one socket per CPU
 * of p->req.spread_cpus on queue p->q_first: 0; -EAGAIN with msg when the
 * probe found that frames do not arrive (the port is closed again, the
 * caller may fall back to ferry_port_native); other -errno with msg.
 */
/* The port's "spread" object for `port show`. */
/* The spread backend's state of each port, kept here by port slot (port.h),
 * not in struct ferry_port; core/ holds one and hands it to the backend. */
struct ferry_spread_port {
	struct ferry_spread_rets *rets; /* the owner's hand-back rings */
	char note[192]; /* the probe's result, or why it fell back */
};

struct ferry_spread {
	struct ferry_spread_port port[FERRY_MAX_PORTS]; /* by port slot */
};

json_t *ferry_spread_show(const struct ferry_spread *spr,
			  const struct ferry_port *p);
const char *ferry_spread_via_name(unsigned int via);

#endif /* FERRY_SPREAD_H */
