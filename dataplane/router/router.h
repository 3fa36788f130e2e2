/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * router.h - the route app wired into ferry: the FIB and the netlink mirror
 * that fills it (created with the first route port), the ports' view that
 * route_frame() reads, and each worker's share of it.
 *
 * Threads. The control thread owns the router: it applies the kernel's
 * changes to the FIB (lock-free for readers, fib.h), asks the kernel to
 * resolve next hops, and rewrites the port tables while the workers are
 * paused. A worker reads the FIB and the port tables, writes only its own
 * struct ferry_route_wk (counters, the resolve ring's producer).
 */
#ifndef FERRY_ROUTER_H
#define FERRY_ROUTER_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "kpath.h"
#include "port.h"
#include "route.h"
#include "route_rx.h"
#include "ferry_err.h"

struct ferry_router;
struct ferry_port;

/* NULL and msg on failure (netlink, memory). */
struct ferry_router *ferry_router_create(struct ferry_ports *ports,
					 struct ferry_workers *workers,
					 struct ferry_kpath *kpath,
					 struct ferry_err *msg);
void ferry_router_destroy(struct ferry_router *r);

/* The netlink socket to poll; process() reads and applies without blocking. */
int ferry_router_fd(const struct ferry_router *r);
void ferry_router_process(struct ferry_router *r);
/* About once a second: reclaim, next hops to resolve, port view refresh. */
void ferry_router_tick(struct ferry_router *r);
/*
 * Ports were added, removed or changed app: renumber the FIB's egress
 * ports and rebuild each worker's tables (pauses the workers).
 */
void ferry_router_ports_changed(struct ferry_router *r);

/* `port show`: "vlans", the VLAN sub-interfaces of p the router follows
 * (name, ifindex, vid, mtu, up, vrf, table). */
void ferry_router_port_view(struct ferry_router *r, const struct ferry_port *p,
			    json_t *o);

/* p is about to go: no worker table points at its queues any more. */
void ferry_router_port_del(struct ferry_router *r, struct ferry_port *p);

/* Route counters summed over workers, as JSON (new reference). */
json_t *ferry_router_stats(struct ferry_router *r);
void ferry_router_stats_reset(struct ferry_router *r);
/* `fib show [PREFIX]` (NULL: all) and `neigh show`: arrays of objects. */
json_t *ferry_router_fib_show(struct ferry_router *r, const char *prefix,
			      struct ferry_err *msg);
json_t *ferry_router_neigh_show(struct ferry_router *r);
/* "ADDR[/LEN]" (no LEN: a host) into family 4/6, 16 bytes, length; 0 or
 * -EINVAL with msg. */
int ferry_route_prefix_parse(const char *s, int *family, uint8_t prefix[16],
			     unsigned *len, struct ferry_err *msg);

#endif
