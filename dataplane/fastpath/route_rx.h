/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * route_rx.h - the route app's worker side (route_rx.c): each worker's
 * route tables, written by the control thread (router/router.h) while the
 * worker is paused, and the ring of next hops it asks to have resolved.
 */
#ifndef FERRY_ROUTE_RX_H
#define FERRY_ROUTE_RX_H

#include <stdint.h>

#include "route.h"
#include "worker.h"

/* Next hops a worker found without a neighbour, for the control thread to
 * have resolved: one producer (the worker), one consumer (the tick). */
#define FERRY_ROUTE_RESOLVE_RING 64

/* What a worker asks the control thread to resolve. */
struct ferry_route_ask {
	uint32_t nh;
	uint8_t connected; /* on-link: the neighbour is dst itself */
	uint8_t dst[16];
};

/* One worker's part: hot, written by that worker only. */
struct ferry_route_wk {
	const struct route_ctx *ctx;
	int fib_slot;
	int offline; /* announced offline to the FIB (ring found empty) */
	struct ferry_pq
		*out[FERRY_MAX_PORTS]; /* egress per port, this worker */
	struct route_counters c;
	struct route_counters base; /* `stats reset` snapshot (control) */
	uint32_t res_prod __attribute__((aligned(64)));
	uint32_t res_cons __attribute__((aligned(64)));
	struct ferry_route_ask res[FERRY_ROUTE_RESOLVE_RING];
	uint8_t reply[ROUTE_REPLY_MAX];
} __attribute__((aligned(64)));

/* The worker's route app on one RX queue: frames received. */
uint32_t ferry_route_rx(struct ferry_worker *w, struct ferry_pq *pq);

#endif /* FERRY_ROUTE_RX_H */
