// SPDX-License-Identifier: BSD-2-Clause
/*
 * route_rx.c - the route app on a worker: each frame of an RX burst looked
 * up in the FIB (fib/route.h), its MAC and TTL rewritten, and sent out of
 * the egress port's queue on this worker; frames without a resolved
 * neighbour are dropped and their next hop queued for the control thread
 * (router/router.c) to resolve. Multi-buffer frames (chains, worker.h)
 * are routed by their first piece and sent on whole, out of line.
 * Hot path: no allocation, no syscall.
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
 * flow take the same path), addresses and TCP/UDP ports of an IP frame,
 * untagged or with one 802.1Q tag, 0 for anything else (route_frame()
 * checks the frame itself).
 */
static inline uint32_t flow_hash(const uint8_t *f, uint32_t len)
{
	uint32_t h = 0, a, b, l4 = 0, i;
	uint8_t proto = 0;

	if (len >= 18 && unlikely(f[12] == 0x81 && f[13] == 0x00)) {
		f += 4; /* the hash reads past the MACs only */
		len -= 4;
	}
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
	o->umem->owner[ferry_umem_frame_idx(addr)] = o->tx_tag;
	out->tx_batch++;
	ferry_worker_touch(w, out, FERRY_APP_ROUTE);
	ferry_ctr_add(&out->c.tx_packets, 1);
	ferry_ctr_add(&out->c.tx_bytes, len);
	ferry_ctr_add(&w->c.tx_packets, 1);
	return true;
}

/*
 * To a port on the worker's other UMEM (zero-copy and copy-mode ports on
 * one worker): the m descriptors (one frame) copied into frames of out's
 * pool, the first piece's start moved by shift (a VLAN tag popped or
 * pushed); the received frame stays the caller's to give back. NULL when
 * sent, else the reason it was not (pq's drop counter).
 */
static __attribute__((noinline)) uint64_t *
tx_copy(struct ferry_worker *w, struct ferry_pq *pq, struct ferry_pq *out,
	const struct ferry_umem *u, const struct xdp_desc *d, uint32_t m,
	int shift)
{
	struct ferry_xsk *o = out->xsk;
	uint64_t bytes = 0;
	uint32_t t0, j;

	if (o->umem->n_free < m)
		return &pq->c.drop.tx_copy_nofree;
	if (xsk_ring_prod__reserve(&o->tx, m, &t0) != m)
		return &pq->c.drop.tx_ring_full;
	for (j = 0; j < m; j++) {
		struct xdp_desc *t = xsk_ring_prod__tx_desc(&o->tx, t0 + j);
		uint64_t a = d[j].addr;
		uint32_t len = d[j].len;

		if (!j && shift) {
			a = (uint64_t)((int64_t)a + shift);
			len = (uint32_t)((int32_t)len - shift);
		}
		t->addr = ferry_umem_copy_in(o->umem, u, a, len, o->tx_tag);
		t->len = len;
		t->options = d[j].options & XDP_PKT_CONTD;
		bytes += len;
	}
	out->tx_batch += m;
	ferry_worker_touch(w, out, FERRY_APP_ROUTE);
	ferry_ctr_add(&out->c.tx_packets, 1);
	ferry_ctr_add(&out->c.tx_bytes, bytes);
	ferry_ctr_add(&out->c.tx_copied, 1);
	ferry_ctr_add(&w->c.tx_packets, 1);
	ferry_ctr_add(&w->c.tx_copied, 1);
	return NULL;
}

/* A drop reason of FERRY_DROP_REASONS (counters.h) as a capture verdict. */
#define CAP_V_DROP(f)                                                          \
	FERRY_CAP_VERDICT(FERRY_CAP_V_DROP,                                    \
			  (offsetof(struct ferry_queue_ctrs, drop.f) -         \
			   offsetof(struct ferry_queue_ctrs, drop)) /          \
				  sizeof(uint64_t))
/* The same of a reason given as pq's counter. */
#define CAP_V_DROP_AT(pq, why)                                                 \
	FERRY_CAP_VERDICT(FERRY_CAP_V_DROP,                                    \
			  (uint16_t)((why) - (uint64_t *)&(pq)->c.drop))

/*
 * An rx capture of a routed frame: filtered as received, and a match kept
 * in copy before the checksum completion and route_frame() rewrite it in
 * place; it goes into the ring once its verdict is known (cap_put). Only
 * the first piece of a chain (wire bytes in all) is rewritten, so only it
 * is copied: the rest stays put until the burst is done.
 */
static inline bool cap_match(const struct ferry_capture_tap *t,
			     const uint8_t *data, uint32_t len, uint32_t wire,
			     uint8_t *copy)
{
	if (!len || len > FERRY_FRAME_SIZE ||
	    (t->filter && !ferry_cfilter_run(t->filter, data, wire, len)))
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
 * One single-buffer frame. cap is a constant at every call (NULL, or the
 * queue's rx tap), so the compiler makes one body of each: with no
 * capture the loop is what it was, and the tap is tested once per burst.
 */
static inline __attribute__((always_inline)) void
route_one(struct ferry_worker *w, struct ferry_pq *pq, uint64_t addr,
	  uint32_t len, const struct ferry_capture_tap *cap, uint64_t now,
	  uint8_t *copy)
{
	struct ferry_route_wk *k = pq->rw;
	struct ferry_umem *u = pq->xsk->umem;
	uint8_t *data = ferry_umem_data(u, addr);
	struct route_result res;
	struct ferry_pq *out;
	enum route_verdict v;
	uint16_t verdict = 0;
	bool keep = false, sent = false;

	if (cap)
		keep = cap_match(cap, data, len, len, copy);
	if (unlikely(pq->csum_fix)) {
		struct ferry_csum_seg seg = {.data = data, .len = len};

		if (ferry_csum_complete(&seg, 1) == FERRY_CSUM_FIXED)
			ferry_ctr_add(&w->c.csum_fixed, 1);
	}
	/* A VLAN tag pushed takes 4 bytes before the frame (route.h): the
	 * kernel leaves XDP_PACKET_HEADROOM there, a frame without it is
	 * not routed. */
	if (unlikely((addr & (FERRY_FRAME_SIZE - 1)) < 4)) {
		ferry_ctr_add(&pq->c.drop.no_headroom, 1);
		verdict = CAP_V_DROP(no_headroom);
		goto put;
	}
	v = route_frame(k->ctx, data, len, pq->rport, flow_hash(data, len),
			k->reply, sizeof(k->reply), &res, &k->c);
	if (cap)
		verdict = FERRY_CAP_VERDICT(FERRY_CAP_V_ROUTE, res.reason);
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
		if (unlikely(out->xsk->umem != u)) {
			struct xdp_desc d1 = {.addr = addr, .len = len};
			uint64_t *why =
				tx_copy(w, pq, out, u, &d1, 1, res.shift);

			/* sent or not, the frame goes back to its pool */
			if (why) {
				ferry_ctr_add(why, 1);
				verdict = CAP_V_DROP_AT(pq, why);
			}
			break;
		}
		/* a VLAN tag popped or pushed moved the frame */
		if (likely(tx_one(w, out, (uint64_t)((int64_t)addr + res.shift),
				  (uint32_t)((int32_t)len - res.shift)))) {
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
put:
	if (cap && keep)
		cap_put(cap, now, pq, verdict, copy, len);
	if (!sent)
		ferry_umem_put(u, addr);
}

/* ------------------------------------------------ multi-buffer frames */

/*
 * A chain of m descriptors from RX index idx onto out's TX ring, whole or
 * not at all; the descriptors as received (the first piece rewritten in
 * place). false if the ring has no room for all m.
 */
static bool tx_chain(struct ferry_worker *w, struct ferry_pq *out,
		     const struct xsk_ring_cons *rx, uint32_t idx, uint32_t m,
		     uint64_t len, int shift)
{
	struct ferry_xsk *o = out->xsk;
	uint16_t *owner = o->umem->owner, tag = o->tx_tag;
	uint32_t t0, j;

	if (xsk_ring_prod__reserve(&o->tx, m, &t0) != m)
		return false;
	for (j = 0; j < m; j++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(rx, idx + j);
		struct xdp_desc *t = xsk_ring_prod__tx_desc(&o->tx, t0 + j);

		t->addr = d->addr;
		t->len = d->len;
		if (!j && shift) { /* a VLAN tag popped or pushed */
			t->addr = (uint64_t)((int64_t)d->addr + shift);
			t->len = (uint32_t)((int32_t)d->len - shift);
		}
		t->options = d->options & XDP_PKT_CONTD;
		owner[ferry_umem_frame_idx(d->addr)] = tag;
	}
	out->tx_batch += m;
	ferry_worker_touch(w, out, FERRY_APP_ROUTE);
	ferry_ctr_add(&out->c.tx_packets, 1);
	ferry_ctr_add(&out->c.tx_bytes, (uint64_t)((int64_t)len - shift));
	ferry_ctr_add(&w->c.tx_packets, 1);
	return true;
}

/*
 * One multi-buffer frame: m descriptors from RX index idx, the last one
 * without XDP_PKT_CONTD. The headers are in the first piece: it alone is
 * looked at and rewritten (route_frame_chain), the other pieces go out
 * unchanged behind it. The MTU is checked against the whole frame, so a
 * chain too long for its egress gets the ICMP error a single frame gets.
 */
static void route_chain(struct ferry_worker *w, struct ferry_pq *pq,
			uint32_t idx, uint32_t m,
			const struct ferry_capture_tap *cap, uint64_t now,
			uint8_t *copy, uint64_t *bytes)
{
	struct ferry_route_wk *k = pq->rw;
	const struct xsk_ring_cons *rx = &pq->xsk->rx;
	struct ferry_umem *u = pq->xsk->umem;
	struct ferry_csum_seg seg[FERRY_MAX_FRAGS];
	struct route_result res;
	struct ferry_pq *out = NULL;
	enum route_verdict v;
	uint64_t len = 0;
	uint32_t j, kept = 0;
	uint16_t verdict = 0;
	bool keep = false, bad = false;

	for (j = 0; j < m; j++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(rx, idx + j);

		len += d->len;
		/* Every piece inside its own UMEM frame. */
		if (!d->len || (d->addr & (FERRY_FRAME_SIZE - 1)) + d->len >
				       FERRY_FRAME_SIZE)
			bad = true;
		if (j < FERRY_MAX_FRAGS) {
			seg[j].data = ferry_umem_data(u, d->addr);
			seg[j].len = d->len;
		}
	}
	*bytes += len;
	if (unlikely(m > FERRY_MAX_FRAGS || bad)) {
		ferry_ctr_add(bad ? &pq->c.drop.chain_bad
				  : &pq->c.drop.chain_too_long,
			      1);
		goto put;
	}
	if (unlikely((xsk_ring_cons__rx_desc(rx, idx)->addr &
		      (FERRY_FRAME_SIZE - 1)) < 4)) {
		ferry_ctr_add(&pq->c.drop.no_headroom, 1);
		goto put;
	}
	if (cap)
		keep = cap_match(cap, seg[0].data, seg[0].len, (uint32_t)len,
				 copy);
	if (unlikely(pq->csum_fix) &&
	    ferry_csum_complete(seg, m) == FERRY_CSUM_FIXED)
		ferry_ctr_add(&w->c.csum_fixed, 1);
	v = route_frame_chain(k->ctx, seg[0].data, seg[0].len, len, pq->rport,
			      flow_hash(seg[0].data, seg[0].len), k->reply,
			      sizeof(k->reply), &res, &k->c);
	if (cap)
		verdict = FERRY_CAP_VERDICT(FERRY_CAP_V_ROUTE, res.reason);
	switch (v) {
	case ROUTE_FWD:
		out = k->out[res.port];
		if (!out) {
			ferry_ctr_add(&pq->c.drop.no_tx_queue, 1);
			verdict = CAP_V_DROP(no_tx_queue);
		} else if (out->down) {
			ferry_ctr_add(&pq->c.drop.port_down, 1);
			verdict = CAP_V_DROP(port_down);
		} else if (!out->xsk->multibuf) {
			/* bound without XDP_USE_SG: it takes no chain */
			ferry_ctr_add(&pq->c.drop.chain_unsupported, 1);
			verdict = CAP_V_DROP(chain_unsupported);
		} else if (unlikely(out->xsk->umem != u)) {
			struct xdp_desc dc[FERRY_MAX_FRAGS];
			uint64_t *why;

			for (j = 0; j < m; j++)
				dc[j] = *xsk_ring_cons__rx_desc(rx, idx + j);
			/* sent or not, the chain goes back to its pool */
			why = tx_copy(w, pq, out, u, dc, m, res.shift);
			if (why) {
				ferry_ctr_add(why, 1);
				verdict = CAP_V_DROP_AT(pq, why);
			}
		} else if (tx_chain(w, out, rx, idx, m, len, res.shift)) {
			k->c.n[ROUTE_R_routed_chain]++;
			kept = m;
		} else {
			ferry_ctr_add(&pq->c.drop.tx_ring_full, 1);
			verdict = CAP_V_DROP(tx_ring_full);
		}
		break;
	case ROUTE_REPLY:
		/* the ICMP error takes the first piece's buffer; the rest of
		 * the chain goes back to the pool */
		memcpy(seg[0].data, k->reply, res.len);
		if (tx_one(w, pq, xsk_ring_cons__rx_desc(rx, idx)->addr,
			   res.len)) {
			kept = 1;
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
	if (cap && keep) {
		/* as received: the copy of the first piece, then the rest */
		struct ferry_cap_seg cs[FERRY_MAX_FRAGS];

		cs[0].data = copy;
		cs[0].len = seg[0].len;
		for (j = 1; j < m; j++) {
			cs[j].data = seg[j].data;
			cs[j].len = seg[j].len;
		}
		ferry_capture_copy(cap, now, (uint16_t)pq->queue, verdict, cs,
				   m, (uint32_t)len);
	}
put:
	for (j = kept; j < m; j++)
		ferry_umem_put(u, xsk_ring_cons__rx_desc(rx, idx + j)->addr);
}

/*
 * The rest of a burst once a multi-buffer frame shows up in it (or the
 * tail of a cut chain is being skipped): frame by frame, each frame all
 * its descriptors or none. Out of line, so that the single-buffer loop
 * stays as it was but for one test of the options per descriptor.
 * Returns the frames (the i before it included); *used: the descriptors
 * consumed, the rest (a chain that goes on past the burst) wait.
 */
static __attribute__((noinline)) uint32_t
route_chains(struct ferry_worker *w, struct ferry_pq *pq, uint32_t idx,
	     uint32_t i, uint32_t n, const struct ferry_capture_tap *cap,
	     uint64_t now, uint64_t *bytes, uint32_t *used)
{
	const struct xsk_ring_cons *rx = &pq->xsk->rx;
	struct ferry_umem *u = pq->xsk->umem;
	uint32_t frames = i, m;
	uint8_t copy[FERRY_FRAME_SIZE];

	/* The tail of a chain cut at FERRY_MAX_FRAGS in an earlier pass. */
	while (pq->rx_skip && i < n) {
		const struct xdp_desc *d =
			xsk_ring_cons__rx_desc(rx, idx + i++);

		*bytes += d->len;
		ferry_umem_put(u, d->addr);
		if (!(d->options & XDP_PKT_CONTD)) {
			pq->rx_skip = 0;
			frames++;
		}
	}
	while (i < n) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(rx, idx + i);

		if (!(d->options & XDP_PKT_CONTD)) {
			*bytes += d->len;
			route_one(w, pq, d->addr, d->len, cap, now, copy);
			frames++;
			i++;
			continue;
		}
		m = ferry_rx_frame_descs(rx, idx, i, n);
		if (!m) {
			/* The chain goes on past this burst. Short of the
			 * limit it waits in the RX ring for the next pass;
			 * at the limit it can never be sent: drop it now,
			 * and its tail as it arrives. */
			if (n - i < FERRY_MAX_FRAGS)
				break;
			for (; i < n; i++) {
				d = xsk_ring_cons__rx_desc(rx, idx + i);
				*bytes += d->len;
				ferry_umem_put(u, d->addr);
			}
			pq->rx_skip = 1;
			ferry_ctr_add(&pq->c.drop.chain_too_long, 1);
			break;
		}
		route_chain(w, pq, idx + i, m, cap, now, copy, bytes);
		frames++;
		i += m;
	}
	*used = i;
	return frames;
}

/*
 * The burst, frame by frame. cap is a constant at both calls (NULL, or the
 * queue's rx tap), so the compiler makes one loop of each. *used: the
 * descriptors consumed (fewer than n when a chain waits for its end).
 */
static inline __attribute__((always_inline)) uint32_t
route_burst(struct ferry_worker *w, struct ferry_pq *pq, uint32_t idx,
	    uint32_t n, const struct ferry_capture_tap *cap,
	    uint64_t *bytes_out, uint32_t *used)
{
	struct ferry_xsk *x = pq->xsk;
	uint64_t bytes = 0, now = cap ? ferry_now_ns() : 0;
	uint32_t i = 0, frames;
	uint8_t copy[FERRY_FRAME_SIZE];

	if (unlikely(pq->rx_skip))
		goto chains;
	for (i = 0; i < n; i++) {
		const struct xdp_desc *d =
			xsk_ring_cons__rx_desc(&x->rx, idx + i);

		/* Chains (longer than a UMEM frame) out of line. */
		if (unlikely(d->options & XDP_PKT_CONTD))
			goto chains;
		bytes += d->len;
		route_one(w, pq, d->addr, d->len, cap, now, copy);
	}
	*bytes_out = bytes;
	*used = n;
	return n;

chains:
	frames = route_chains(w, pq, idx, i, n, cap, now, &bytes, used);
	*bytes_out = bytes;
	return frames;
}

/* The burst while a capture watches the queue: out of line. */
static __attribute__((noinline)) uint32_t
route_burst_cap(struct ferry_worker *w, struct ferry_pq *pq, uint32_t idx,
		uint32_t n, const struct ferry_capture_tap *cap,
		uint64_t *bytes_out, uint32_t *used)
{
	return route_burst(w, pq, idx, n, cap, bytes_out, used);
}

uint32_t ferry_route_rx(struct ferry_worker *w, struct ferry_pq *pq)
{
	struct ferry_route_wk *k = pq->rw;
	struct ferry_xsk *x = pq->xsk;
	const struct ferry_capture_tap *cap;
	uint32_t n, idx, frames, used = 0;
	uint64_t bytes = 0;

	/* peek re-reads the kernel's producer only once what it knows of is
	 * used up: a chain's head waiting in the ring would be all it ever
	 * saw of that chain. */
	if (unlikely(pq->rx_wait)) {
		pq->rx_wait = 0;
		x->rx.cached_prod =
			__atomic_load_n(x->rx.producer, __ATOMIC_ACQUIRE);
	}
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
		frames = route_burst_cap(w, pq, idx, n, cap, &bytes, &used);
	else
		frames = route_burst(w, pq, idx, n, NULL, &bytes, &used);
	/* A chain that goes on past the burst waits for the next. */
	if (unlikely(used < n)) {
		xsk_ring_cons__cancel(&x->rx, n - used);
		pq->rx_wait = 1;
	}
	if (used)
		xsk_ring_cons__release(&x->rx, used);
	ferry_ctr_add(&pq->c.rx_packets, frames);
	ferry_ctr_add(&pq->c.rx_bytes, bytes);
	return frames;
}
