/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * counters.h - every counter ferry keeps, named once.
 *
 * Each list is an X-macro: the struct fields, the JSON keys and the
 * Prometheus names are generated from it, so they cannot drift apart.
 * Counters are monotonic u64, written by exactly one thread (the worker
 * that owns the queue) and summed by whoever reads them.
 */
#ifndef FERRY_COUNTERS_H
#define FERRY_COUNTERS_H

#include <stdint.h>

/* Per (port, queue), written by the queue's worker. */
#define FERRY_QUEUE_COUNTERS(X)                                                \
	X(rx_packets)                                                          \
	X(rx_bytes)                                                            \
	X(tx_packets)                                                          \
	X(tx_bytes)                                                            \
	X(tx_kicks)                                                            \
	X(rx_batches)                                                          \
	X(tx_backpressure) /* RX bursts cut short: egress TX ring full */      \
	X(tx_copied) /* of tx_packets: copied in from the worker's other UMEM */

/* The kernel's struct xdp_statistics, read with getsockopt per socket. */
#define FERRY_XSK_COUNTERS(X)                                                  \
	X(rx_dropped)                                                          \
	X(rx_invalid_descs)                                                    \
	X(tx_invalid_descs)                                                    \
	X(rx_ring_full)                                                        \
	X(rx_fill_ring_empty_descs)                                            \
	X(tx_ring_empty_descs)

/* Frames ferry itself dropped in userspace, by reason (counted on RX queue). */
#define FERRY_DROP_REASONS(X)                                                  \
	X(no_app)	/* port has no app: nothing to do with the frame */    \
	X(no_tx_queue)	/* egress port has no queue on this worker */          \
	X(tx_ring_full) /* egress TX ring had no room */                       \
	X(app_drop)	/* the port's app is `drop` */                         \
	X(port_down)	/* egress port's link is down or the port failed */    \
	X(mtu_exceeded) /* frame longer than the egress port's MTU allows */   \
	X(chain_bad)	/* multi-buffer frame with a bad descriptor: whole */  \
	X(chain_too_long)    /* more descriptors than a frame may have */      \
	X(chain_unsupported) /* multi-buffer frame, egress takes no chains */  \
	X(no_headroom)	  /* a VLAN tag to push, no room before the frame */   \
	X(tx_copy_nofree) /* to the other UMEM: no free frame there to copy to */

/* Per worker, written by the worker thread. */
#define FERRY_WORKER_COUNTERS(X)                                               \
	X(rx_packets)                                                          \
	X(tx_packets)                                                          \
	X(tx_kicks)                                                            \
	X(rx_batches)                                                          \
	X(loops)                                                               \
	X(busy_loops)                                                          \
	X(polls)                                                               \
	X(fill_empty)                                                          \
	X(frames_dup)                                                          \
	X(copies)     /* frames copied between a DPDK mbuf and the UMEM */     \
	X(csum_fixed) /* partial TCP/UDP checksums completed (csum.h) */       \
	X(tx_copied)  /* frames copied between its zero-copy and copy UMEMs */

/*
 * Per port, written by the control thread when its once-a-second watch
 * (health.c) sees something change under the port.
 */
#define FERRY_PORT_EVENTS(X)                                                   \
	X(link_down)	/* the link went down (admin down or no carrier) */    \
	X(link_up)	/* and came back */                                    \
	X(mtu_changed)	/* the interface's MTU changed */                      \
	X(xdp_lost)	/* another tool replaced or removed ferry's program */ \
	X(xdp_restored) /* ferry put its program back (xdp-restore on) */      \
	X(failed)	/* the interface disappeared */

#define FERRY_CTR_FIELD(name) uint64_t name;

struct ferry_port_events {
	FERRY_PORT_EVENTS(FERRY_CTR_FIELD)
};

struct ferry_queue_ctrs {
	FERRY_QUEUE_COUNTERS(FERRY_CTR_FIELD)
	struct {
		FERRY_DROP_REASONS(FERRY_CTR_FIELD)
	} drop;
};

struct ferry_xsk_ctrs {
	FERRY_XSK_COUNTERS(FERRY_CTR_FIELD)
};

struct ferry_worker_ctrs {
	FERRY_WORKER_COUNTERS(FERRY_CTR_FIELD)
};

/*
 * Reader side: one relaxed load per field. The writer updates with plain
 * stores (it is the only writer); on x86-64 an aligned u64 load never tears.
 */
/* Writer side: single writer, so a relaxed load and store (no lock). */
static inline void ferry_ctr_add(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
}

static inline uint64_t ferry_ctr_read(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

#endif /* FERRY_COUNTERS_H */
