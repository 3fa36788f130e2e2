/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * worker_dpdk.h - the worker's side of the DPDK backend (worker_dpdk.c, or
 * worker_dpdk_stub.c when ferryd is built without DPDK): the queues a
 * worker polls through the af_xdp PMD. The control side, which opens them,
 * is dpdk/port_dpdk.h, one layer up.
 */
#ifndef FERRY_WORKER_DPDK_H
#define FERRY_WORKER_DPDK_H

#include <stdint.h>

struct ferry_pq;
struct ferry_worker;
struct rte_mempool;

/*
 * RX burst per queue and pass: the af_xdp PMD hands out at most 32 per
 * call (ETH_AF_XDP_RX_BATCH_SIZE) and loops for more, so 32 costs the
 * least per call; one TX burst follows each RX burst.
 */
#define FERRY_DPDK_BURST 32

/* One DPDK queue as its worker sees it (pq->dq). */
struct ferry_dpdk_q {
	uint16_t port_id;
	uint16_t queue_id;
	struct rte_mempool *pool; /* the worker's: mbufs for native frames */
	int xsk_fd; /* the PMD's AF_XDP socket: kernel counters; -1 */
};

/*
 * Data path (worker_dpdk.c), called by the worker thread only.
 *
 * ferry_dpdk_poll: one pass over the worker's DPDK queues: RX bursts, the
 * port's app, TX bursts. Frames for a native egress are copied into the
 * worker's UMEM and left in that socket's TX ring for the worker's flush,
 * so it must run before worker_flush_tx. Returns the frames received.
 *
 * ferry_dpdk_from_xsk: a native queue's RX burst to a DPDK egress queue,
 * copied into mbufs (different buffer pools: a copy is unavoidable).
 */
uint32_t ferry_dpdk_poll(struct ferry_worker *w);
uint32_t ferry_dpdk_from_xsk(struct ferry_worker *w, struct ferry_pq *pq,
			     struct ferry_pq *out);
/* The fd an idle worker polls for a DPDK queue (the PMD's socket); -1. */
int ferry_dpdk_poll_fd(const struct ferry_pq *pq);

#endif /* FERRY_WORKER_DPDK_H */
