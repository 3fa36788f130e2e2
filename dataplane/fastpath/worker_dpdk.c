// SPDX-License-Identifier: BSD-2-Clause
/*
 * worker_dpdk.c - the worker's DPDK half: RX bursts from the af_xdp PMD's
 * queues, the port's app, TX bursts. Called from ferry's own worker
 * threads, which are not EAL lcores: that is allowed for the ethdev burst
 * calls, and the mbuf pools have no per-lcore cache (a non-EAL thread has
 * none to use), so every alloc and free is one bulk ring operation.
 *
 * Between two DPDK queues mbufs move as they are. Between a DPDK queue and
 * a native one the frame is copied: the two sides own different buffer
 * pools (an mbuf pool and the worker's UMEM). Copies are counted
 * (`copies`, a worker counter).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "capture.h"
#include "worker_dpdk.h"
#include "worker.h"
#include "xsk.h"
#include "util.h"

/* A drop reason of FERRY_DROP_REASONS as a capture's verdict. */
#define CAP_V_DROP(reason)                                                     \
	FERRY_CAP_VERDICT(FERRY_CAP_V_DROP,                                    \
			  (offsetof(struct ferry_queue_ctrs, drop.reason) -    \
			   offsetof(struct ferry_queue_ctrs, drop)) /          \
				  sizeof(uint64_t))

/*
 * Capture (capture.h) of a burst of mbufs, each frame with its segments,
 * as worker.c's cap_descs does with descriptors. Out of line and called
 * only when the queue's tap is set: with no capture a burst pays one load
 * and one never-taken branch.
 */
static __attribute__((noinline)) void
cap_mbufs(const struct ferry_capture_tap *t, struct rte_mbuf *const *m,
	  uint16_t n, uint32_t queue, uint16_t verdict)
{
	struct ferry_cap_seg seg[FERRY_MAX_FRAGS];
	uint64_t now = ferry_now_ns();
	uint16_t i;

	for (i = 0; i < n; i++) {
		const struct rte_mbuf *s;
		unsigned k = 0;

		for (s = m[i]; s && k < FERRY_MAX_FRAGS; s = s->next, k++) {
			seg[k].data = rte_pktmbuf_mtod(s, const void *);
			seg[k].len = rte_pktmbuf_data_len(s);
		}
		if (k)
			ferry_capture_frame(t, now, (uint16_t)queue, verdict,
					    seg, k);
	}
}

/* What ferry_dpdk_poll does with a burst of pq, as a capture's verdict. */
static uint16_t dq_verdict(const struct ferry_pq *pq)
{
	switch (pq->app) {
	case FERRY_APP_XCONNECT:
	case FERRY_APP_REFLECT:
		return pq->out ? FERRY_CAP_VERDICT(FERRY_CAP_V_APP, pq->app)
			       : CAP_V_DROP(no_tx_queue);
	case FERRY_APP_DROP:
		return CAP_V_DROP(app_drop);
	default:
		return CAP_V_DROP(no_app);
	}
}

static inline void swap_macs(uint8_t *eth)
{
	uint8_t tmp[6];

	memcpy(tmp, eth, 6);
	memcpy(eth, eth + 6, 6);
	memcpy(eth + 6, tmp, 6);
}

static inline void count_tx(struct ferry_worker *w, struct ferry_pq *out,
			    uint32_t n, uint64_t bytes)
{
	ferry_ctr_add(&out->c.tx_packets, n);
	ferry_ctr_add(&out->c.tx_bytes, bytes);
	ferry_ctr_add(&w->c.tx_packets, n);
}

/*
 * One TX burst to a DPDK queue. The PMD has no "room left" query, so what
 * its ring does not take is freed and counted as a drop on the RX queue
 * (as a native TX ring that is full).
 */
static inline void dq_send(struct ferry_worker *w, struct ferry_pq *pq,
			   struct ferry_pq *out, struct rte_mbuf **m,
			   uint16_t n, uint64_t bytes)
{
	struct ferry_capture_tap *cap = ferry_capture_tap_get(&out->cap_tx);
	uint16_t sent, i;

	/* As handed to the egress: after this call the PMD owns them. */
	if (unlikely(cap))
		cap_mbufs(cap, m, n, out->queue,
			  FERRY_CAP_VERDICT(FERRY_CAP_V_APP, pq->app));
	sent = rte_eth_tx_burst(out->dq->port_id, out->dq->queue_id, m, n);
	if (unlikely(sent < n)) {
		for (i = sent; i < n; i++)
			bytes -= rte_pktmbuf_pkt_len(m[i]);
		rte_pktmbuf_free_bulk(m + sent, n - sent);
		ferry_ctr_add(&pq->c.drop.tx_ring_full, n - sent);
	}
	if (sent) {
		/* The PMD kicks (sendto) once per burst that needs it. */
		ferry_ctr_add(&out->c.tx_kicks, 1);
		count_tx(w, out, sent, bytes);
	}
}

/*
 * DPDK frames to a native egress: copied into frames of the worker's UMEM
 * and left reserved in the socket's TX ring; the worker's flush submits
 * and kicks them with the native traffic of the pass.
 */
static inline void dq_to_xsk(struct ferry_worker *w, struct ferry_pq *pq,
			     struct ferry_pq *out, struct rte_mbuf **m,
			     uint16_t n)
{
	struct ferry_xsk *o = out->xsk;
	struct ferry_umem *u = o->umem;
	uint32_t room, idx = 0, i, fit = 0;
	uint64_t bytes = 0;

	/* Frames that fit one UMEM frame to the front: a longer one (a
	 * jumbo MTU on the DPDK side) or a chained one can't be sent. */
	for (i = 0; i < n; i++) {
		struct rte_mbuf *t = m[i];

		if (likely(t->nb_segs == 1 &&
			   rte_pktmbuf_data_len(t) <= FERRY_FRAME_SIZE)) {
			m[i] = m[fit];
			m[fit++] = t;
		}
	}
	room = xsk_prod_nb_free(&o->tx, fit);
	if (room > fit)
		room = fit;
	if (room > u->n_free)
		room = u->n_free;
	if (room) {
		xsk_ring_prod__reserve(&o->tx, room, &idx);
		for (i = 0; i < room; i++) {
			uint32_t len = rte_pktmbuf_data_len(m[i]);
			struct xdp_desc *t =
				xsk_ring_prod__tx_desc(&o->tx, idx + i);
			uint64_t a = u->free[--u->n_free];

			memcpy(ferry_umem_data(u, a),
			       rte_pktmbuf_mtod(m[i], void *), len);
			u->owner[ferry_umem_frame_idx(a)] = o->tx_tag;
			t->addr = a;
			t->len = len;
			t->options = 0;
			bytes += len;
		}
		/* The copies go into out's tx capture at the flush. */
		out->tx_batch += room;
		ferry_worker_touch(w, out, pq->app);
		count_tx(w, out, room, bytes);
		ferry_ctr_add(&w->c.copies, room);
	}
	if (n > room)
		ferry_ctr_add(&pq->c.drop.tx_ring_full, n - room);
	rte_pktmbuf_free_bulk(m, n);
}

/* The egress of XCONNECT/REFLECT, DPDK or native alike. */
static inline void dq_forward(struct ferry_worker *w, struct ferry_pq *pq,
			      struct rte_mbuf **m, uint16_t n, uint64_t bytes)
{
	struct ferry_pq *out = pq->out;
	uint16_t i;

	if (pq->app == FERRY_APP_REFLECT)
		for (i = 0; i < n; i++)
			swap_macs(rte_pktmbuf_mtod(m[i], uint8_t *));
	if (out->dpdk)
		dq_send(w, pq, out, m, n, bytes);
	else
		dq_to_xsk(w, pq, out, m, n);
}

uint32_t ferry_dpdk_poll(struct ferry_worker *w)
{
	struct rte_mbuf *m[FERRY_DPDK_BURST];
	uint32_t q, work = 0;

	for (q = 0; q < w->n_dq; q++) {
		struct ferry_pq *pq = w->dq[q];
		struct ferry_capture_tap *cap;
		uint64_t bytes = 0;
		uint16_t n, i;

		n = rte_eth_rx_burst(pq->dq->port_id, pq->dq->queue_id, m,
				     FERRY_DPDK_BURST);
		if (!n)
			continue;
		for (i = 0; i < n; i++)
			bytes += rte_pktmbuf_pkt_len(m[i]);
		ferry_ctr_add(&pq->c.rx_packets, n);
		ferry_ctr_add(&pq->c.rx_bytes, bytes);
		ferry_ctr_add(&pq->c.rx_batches, 1);
		ferry_ctr_add(&w->c.rx_batches, 1);
		ferry_ctr_add(&w->c.rx_packets, n);
		work += n;
		cap = ferry_capture_tap_get(&pq->cap_rx);
		if (unlikely(cap))
			cap_mbufs(cap, m, n, pq->queue, dq_verdict(pq));

		switch (pq->app) {
		case FERRY_APP_XCONNECT:
		case FERRY_APP_REFLECT:
			if (likely(pq->out)) {
				dq_forward(w, pq, m, n, bytes);
				break;
			}
			rte_pktmbuf_free_bulk(m, n);
			ferry_ctr_add(&pq->c.drop.no_tx_queue, n);
			break;
		case FERRY_APP_DROP:
			rte_pktmbuf_free_bulk(m, n);
			ferry_ctr_add(&pq->c.drop.app_drop, n);
			break;
		default:
			rte_pktmbuf_free_bulk(m, n);
			ferry_ctr_add(&pq->c.drop.no_app, n);
			break;
		}
	}
	return work;
}

uint32_t ferry_dpdk_from_xsk(struct ferry_worker *w, struct ferry_pq *pq,
			     struct ferry_pq *out)
{
	struct rte_mbuf *m[FERRY_DPDK_BURST];
	struct ferry_xsk *x = pq->xsk;
	struct ferry_capture_tap *cap;
	uint32_t n, idx, i, k, frames = 0;
	uint64_t bytes = 0, rx_bytes = 0;
	bool chain = pq->rx_skip; /* inside a chain the last burst began */

	n = xsk_ring_cons__peek(&x->rx, FERRY_DPDK_BURST, &idx);
	if (!n)
		return 0;
	/* An empty pool drops the burst rather than stalling the ring. */
	if (unlikely(rte_pktmbuf_alloc_bulk(out->dq->pool, m, n))) {
		ferry_worker_rx_drop(w, pq, idx, n, &pq->c.drop.tx_ring_full);
		return n;
	}
	for (i = 0, k = 0; i < n; i++) {
		const struct xdp_desc *d =
			xsk_ring_cons__rx_desc(&x->rx, idx + i);

		/* A multi-buffer frame is not copied into a chain of mbufs:
		 * refused whole, counted at its last descriptor. */
		if (unlikely(d->options & XDP_PKT_CONTD) || unlikely(chain)) {
			chain = !!(d->options & XDP_PKT_CONTD);
			if (!chain) {
				frames++;
				ferry_ctr_add(&pq->c.drop.chain_unsupported, 1);
			}
			rx_bytes += d->len;
			ferry_umem_put(x->umem, d->addr);
			continue;
		}
		memcpy(rte_pktmbuf_mtod(m[k], void *),
		       ferry_umem_data(x->umem, d->addr), d->len);
		rte_pktmbuf_data_len(m[k]) = (uint16_t)d->len;
		rte_pktmbuf_pkt_len(m[k]) = d->len;
		bytes += d->len;
		k++;
		ferry_umem_put(x->umem, d->addr);
	}
	pq->rx_skip = chain;
	xsk_ring_cons__release(&x->rx, n);
	ferry_ctr_add(&pq->c.rx_packets, k + frames);
	ferry_ctr_add(&pq->c.rx_bytes, bytes + rx_bytes);
	ferry_ctr_add(&w->c.copies, k);
	if (k < n)
		rte_pktmbuf_free_bulk(m + k, n - k);
	/* The native rx side as received: the copies hold its bytes (a
	 * refused chain is not in them). */
	cap = ferry_capture_tap_get(&pq->cap_rx);
	if (unlikely(cap) && k)
		cap_mbufs(cap, m, (uint16_t)k, pq->queue,
			  FERRY_CAP_VERDICT(FERRY_CAP_V_APP, pq->app));
	if (k)
		dq_send(w, pq, out, m, (uint16_t)k, bytes);
	return k + frames;
}

/* ------------------------------------------------------- control side */

int ferry_dpdk_poll_fd(const struct ferry_pq *pq)
{
	return pq->dq ? pq->dq->xsk_fd : -1;
}
