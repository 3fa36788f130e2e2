// SPDX-License-Identifier: BSD-2-Clause
/*
 * route_rx.c - the route app on a worker: each frame of an RX burst looked
 * up in the FIB (fib/route.h), its MAC and TTL rewritten, and sent out of
 * the egress port's queue on this worker; frames without a resolved
 * neighbour are dropped and their next hop queued for the control thread
 * (router/router.c) to resolve. Hot path: no allocation, no syscall.
 */
#include <errno.h>
#include <stddef.h>
#include <stdbool.h>
#include <string.h>

#include "capture.h"
#include "csum.h"
#include "route_rx.h"
#include "util.h"

static inline void resolve_push(struct ferry_route_wk *k,
				const struct route_result *res)
{
	uint32_t cons = __atomic_load_n(&k->res_cons, __ATOMIC_ACQUIRE);
	struct ferry_route_ask *a;

	if (k->res_prod - cons >= FERRY_ROUTE_RESOLVE_RING)
		return; /* the tick is behind: the next frame asks again */
	a = &k->res[k->res_prod % FERRY_ROUTE_RESOLVE_RING];
	a->nh = res->nh;
	a->connected = res->connected;
	memcpy(a->dst, res->dst, 16);
	__atomic_store_n(&k->res_prod, k->res_prod + 1, __ATOMIC_RELEASE);
}

/*
 * The flow hash multipath picks a path by: symmetric (both directions of a
 * flow take the same path), addresses and TCP/UDP ports of an untagged IP
 * frame, 0 for anything else (route_frame() checks the frame itself).
 */
static inline uint32_t flow_hash(const uint8_t *f, uint32_t len)
{
	uint32_t h = 0, a, b, l4 = 0, i;
	uint8_t proto = 0;

	if (len < 34)
		return 0;
	if (f[12] == 0x08 && f[13] == 0x00) {
		memcpy(&a, f + 26, 4);
		memcpy(&b, f + 30, 4);
		h = a ^ b;
		proto = f[23];
		l4 = 14 + (uint32_t)(f[14] & 0x0f) * 4;
		if (f[20] & 0x3f || f[21]) /* a fragment: no ports */
			proto = 0;
	} else if (f[12] == 0x86 && f[13] == 0xdd && len >= 54) {
		for (i = 0; i < 16; i += 4) {
			memcpy(&a, f + 22 + i, 4);
			memcpy(&b, f + 38 + i, 4);
			h ^= (a ^ b) * (i + 1);
		}
		proto = f[20];
		l4 = 54;
	}
	if ((proto == 6 || proto == 17) && l4 + 4 <= len)
		h ^= (uint32_t)((f[l4] << 8 | f[l4 + 1]) ^
				(f[l4 + 2] << 8 | f[l4 + 3]));
	h ^= proto;
	/* murmur3's finaliser: every input bit moves the top bits, which
	 * are the ones fib_nh_pick() uses */
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

/* One frame onto out's TX ring; false if the ring is full. */
static inline bool tx_one(struct ferry_worker *w, struct ferry_pq *out,
			  uint64_t addr, uint32_t len)
{
	struct ferry_xsk *o = out->xsk;
	struct xdp_desc *t;
	uint32_t idx;

	if (!xsk_ring_prod__reserve(&o->tx, 1, &idx))
		return false;
	t = xsk_ring_prod__tx_desc(&o->tx, idx);
	t->addr = addr;
	t->len = len;
	t->options = 0;
	w->umem->owner[ferry_umem_frame_idx(addr)] = o->tx_tag;
	out->tx_batch++;
	ferry_worker_touch(w, out, FERRY_APP_ROUTE);
	ferry_ctr_add(&out->c.tx_packets, 1);
	ferry_ctr_add(&out->c.tx_bytes, len);
	ferry_ctr_add(&w->c.tx_packets, 1);
	return true;
}

/* A drop reason of FERRY_DROP_REASONS (counters.h) as a capture verdict. */
#define CAP_V_DROP(f)                                                          \
	FERRY_CAP_VERDICT(FERRY_CAP_V_DROP,                                    \
			  (offsetof(struct ferry_queue_ctrs, drop.f) -         \
			   offsetof(struct ferry_queue_ctrs, drop)) /          \
				  sizeof(uint64_t))

/*
 * An rx capture of a routed frame: filtered as received, and a match kept
 * in copy before the checksum completion and route_frame() rewrite it in
 * place; it goes into the ring once its verdict is known (cap_put). Route
 * ports' frames fit one UMEM frame (chains are dropped before).
 */
static inline bool cap_match(const struct ferry_capture_tap *t,
			     const uint8_t *data, uint32_t len, uint8_t *copy)
{
	if (!len || len > FERRY_FRAME_SIZE ||
	    (t->filter && !ferry_cfilter_run(t->filter, data, len, len)))
		return false;
	memcpy(copy, data, len);
	return true;
}

static inline void cap_put(const struct ferry_capture_tap *t, uint64_t now,
			   const struct ferry_pq *pq, uint16_t verdict,
			   const uint8_t *copy, uint32_t len)
{
	struct ferry_cap_seg seg = {.data = copy, .len = len};

	ferry_capture_copy(t, now, (uint16_t)pq->queue, verdict, &seg, 1, len);
}

/*
 * The burst, frame by frame. cap is a constant at both calls (NULL, or the
 * queue's rx tap), so the compiler makes one loop of each: with no capture
 * the loop is what it was, and the tap is tested once per burst.
 */
static inline __attribute__((always_inline)) uint32_t
route_burst(struct ferry_worker *w, struct ferry_pq *pq, uint32_t idx,
	    uint32_t n, const struct ferry_capture_tap *cap,
	    uint64_t *bytes_out)
{
	struct ferry_route_wk *k = pq->rw;
	struct ferry_xsk *x = pq->xsk;
	struct ferry_umem *u = w->umem;
	uint64_t bytes = 0, now = cap ? ferry_now_ns() : 0;
	uint32_t i, frames = 0;
	uint8_t copy[FERRY_FRAME_SIZE];

	for (i = 0; i < n; i++) {
		const struct xdp_desc *d =
			xsk_ring_cons__rx_desc(&x->rx, idx + i);
		uint64_t addr = d->addr;
		uint32_t len = d->len;
		uint8_t *data = ferry_umem_data(u, addr);
		struct route_result res;
		struct ferry_pq *out;
		enum route_verdict v;
		uint16_t verdict = 0;
		bool keep = false, sent = false;

		bytes += len;
		/* Chains (longer than a UMEM frame) are not routed: the
		 * route ports' MTU fits a frame. Dropped whole. */
		if (unlikely(pq->rx_skip || (d->options & XDP_PKT_CONTD))) {
			if (!pq->rx_skip)
				ferry_ctr_add(&pq->c.drop.chain_unsupported, 1);
			pq->rx_skip = !!(d->options & XDP_PKT_CONTD);
			if (!pq->rx_skip)
				frames++;
			ferry_umem_put(u, addr);
			continue;
		}
		frames++;
		if (cap)
			keep = cap_match(cap, data, len, copy);
		if (unlikely(pq->csum_fix)) {
			struct ferry_csum_seg seg = {.data = data, .len = len};

			if (ferry_csum_complete(&seg, 1) == FERRY_CSUM_FIXED)
				ferry_ctr_add(&w->c.csum_fixed, 1);
		}
		v = route_frame(k->ctx, data, len, pq->rport,
				flow_hash(data, len), k->reply,
				sizeof(k->reply), &res, &k->c);
		if (cap)
			verdict = FERRY_CAP_VERDICT(FERRY_CAP_V_ROUTE,
						    res.reason);
		switch (v) {
		case ROUTE_FWD:
			out = k->out[res.port];
			if (unlikely(!out)) {
				ferry_ctr_add(&pq->c.drop.no_tx_queue, 1);
				verdict = CAP_V_DROP(no_tx_queue);
				break;
			}
			if (unlikely(out->down)) {
				ferry_ctr_add(&pq->c.drop.port_down, 1);
				verdict = CAP_V_DROP(port_down);
				break;
			}
			if (likely(tx_one(w, out, addr, len))) {
				sent = true;
				break;
			}
			ferry_ctr_add(&pq->c.drop.tx_ring_full, 1);
			verdict = CAP_V_DROP(tx_ring_full);
			break;
		case ROUTE_REPLY:
			/* the ICMP error takes the frame's own buffer */
			memcpy(data, k->reply, res.len);
			if (tx_one(w, pq, addr, res.len)) {
				sent = true;
				break;
			}
			ferry_ctr_add(&pq->c.drop.tx_ring_full, 1);
			verdict = CAP_V_DROP(tx_ring_full);
			break;
		case ROUTE_DROP:
			if (res.reason == ROUTE_R_no_neigh)
				resolve_push(k, &res);
			break;
		default:
			break;
		}
		if (cap && keep)
			cap_put(cap, now, pq, verdict, copy, len);
		if (!sent)
			ferry_umem_put(u, addr);
	}
	*bytes_out = bytes;
	return frames;
}

/* The burst while a capture watches the queue: out of line. */
static __attribute__((noinline)) uint32_t
route_burst_cap(struct ferry_worker *w, struct ferry_pq *pq, uint32_t idx,
		uint32_t n, const struct ferry_capture_tap *cap,
		uint64_t *bytes_out)
{
	return route_burst(w, pq, idx, n, cap, bytes_out);
}

uint32_t ferry_route_rx(struct ferry_worker *w, struct ferry_pq *pq)
{
	struct ferry_route_wk *k = pq->rw;
	struct ferry_xsk *x = pq->xsk;
	const struct ferry_capture_tap *cap;
	uint32_t n, idx, frames;
	uint64_t bytes = 0;

	n = xsk_ring_cons__peek(&x->rx, FERRY_BURST, &idx);
	/* Between batches the worker holds nothing it looked up: offline
	 * while its ring is empty (an idle or sleeping worker never holds
	 * reclamation up), and at a new epoch for each batch (fib.h). */
	if (!n) {
		if (!k->offline) {
			fib_reader_offline(k->ctx->fib, k->fib_slot);
			k->offline = 1;
		}
		return 0;
	}
	fib_quiescent(k->ctx->fib, k->fib_slot);
	if (unlikely(k->offline)) {
		/* online before the first lookup: the writer must not miss
		 * the announcement and reuse what this batch will read */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		k->offline = 0;
	}
	/* rx as received, with each frame's verdict (capture.h). */
	cap = ferry_capture_tap_get(&pq->cap_rx);
	if (unlikely(cap))
		frames = route_burst_cap(w, pq, idx, n, cap, &bytes);
	else
		frames = route_burst(w, pq, idx, n, NULL, &bytes);
	xsk_ring_cons__release(&x->rx, n);
	ferry_ctr_add(&pq->c.rx_packets, frames);
	ferry_ctr_add(&pq->c.rx_bytes, bytes);
	return frames;
}
