// SPDX-License-Identifier: BSD-2-Clause
/*
 * worker.c - the polling loop: gather an RX burst per socket, hand it to the
 * port's app, then per touched TX ring one submit and at most one wakeup
 * (only when the kernel's need_wakeup flag asks), then reap completions and
 * refill fill rings in bulk. No allocation, lock or syscall per packet.
 */
#include <errno.h>
#include <stddef.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "csum.h"
#include "log.h"
#include "worker_dpdk.h"
#include "privs.h"
#include "route_rx.h"
#include "worker.h"
#include "util.h"

_Static_assert((FERRY_UMEM_FRAMES & (FERRY_UMEM_FRAMES - 1)) == 0,
	       "UMEM frame count must be a power of two");
/* Empty loops before a busy worker sleeps in poll(): a few milliseconds. */
#define IDLE_SPIN_LOOPS 20000
#define POLL_TIMEOUT_MS 10

/* ---------------------------------------------------------------- rings */

/*
 * Refill in bulk and only when at least FERRY_FILL_BATCH fit: small refills
 * cost a producer store and a cache miss on the kernel's side each. A fill
 * ring holds at most its share of the UMEM (fill_room slots stay empty).
 */
static inline void pq_refill(struct ferry_worker *w, struct ferry_pq *pq)
{
	struct ferry_xsk *x = pq->xsk;
	struct ferry_umem *u = x->umem;
	const uint64_t *top;
	uint16_t *owner = u->owner, tag = x->fill_tag;
	uint32_t n, idx, i, room = x->fill_room;

	n = xsk_prod_nb_free(&x->fq, room + FERRY_FILL_BATCH);
	if (n < room + FERRY_FILL_BATCH)
		return;
	n -= room;
	if (n > u->n_free)
		n = u->n_free;
	if (unlikely(!n)) {
		ferry_ctr_add(&w->c.fill_empty, 1);
		return;
	}
	n = xsk_ring_prod__reserve(&x->fq, n, &idx);
	/* The top n of the free stack, in one pass; locals keep the compiler
	 * from reloading the pool's fields after every store. */
	top = u->free + u->n_free - n;
	for (i = 0; i < n; i++) {
		uint64_t a = top[i];

		owner[ferry_umem_frame_idx(a)] = tag;
		*xsk_ring_prod__fill_addr(&x->fq, idx + i) = a;
	}
	u->n_free -= n;
	xsk_ring_prod__submit(&x->fq, n);
	/* Zero-copy drivers may sleep until told the fill ring has frames. */
	if (xsk_ring_prod__needs_wakeup(&x->fq))
		recvfrom(x->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
}

static inline void pq_reap(struct ferry_worker *w, struct ferry_pq *pq)
{
	struct ferry_xsk *x = pq->xsk;
	struct ferry_umem *u = x->umem;
	uint64_t *push = u->free + u->n_free;
	uint16_t *owner = u->owner;
	uint32_t n, idx, i;

	n = xsk_ring_cons__peek(&x->cq, x->ring_size, &idx);
	if (!n)
		return;
	for (i = 0; i < n; i++) {
		uint64_t a = *xsk_ring_cons__comp_addr(&x->cq, idx + i) &
			     ~(uint64_t)(FERRY_FRAME_SIZE - 1);

		owner[ferry_umem_frame_idx(a)] = FERRY_OWNER_POOL;
		push[i] = a;
	}
	u->n_free += n;
	xsk_ring_cons__release(&x->cq, n);
}

/*
 * Teardown of a spread port: completions may name frames that closing their
 * socket already gave back; those must not go onto the stack twice.
 */
static void pq_reap_checked(struct ferry_worker *w, struct ferry_pq *pq)
{
	struct ferry_xsk *x = pq->xsk;
	struct ferry_umem *u = x->umem;
	uint32_t n, idx, i;

	n = xsk_ring_cons__peek(&x->cq, x->ring_size, &idx);
	for (i = 0; i < n; i++) {
		uint64_t a = *xsk_ring_cons__comp_addr(&x->cq, idx + i);

		if (u->owner[ferry_umem_frame_idx(a)] != FERRY_OWNER_POOL)
			ferry_umem_put(u, a);
	}
	if (n)
		xsk_ring_cons__release(&x->cq, n);
}

/* ------------------------------------------------- software RSS hand-back */

static void worker_wake(struct ferry_worker *w);

int ferry_ret_init(struct ferry_ret *r, uint32_t n_slots)
{
	memset(r, 0, sizeof(*r));
	r->addr = calloc(n_slots, sizeof(*r->addr));
	if (!r->addr)
		return -ENOMEM;
	r->mask = n_slots - 1;
	return 0;
}

void ferry_ret_fini(struct ferry_ret *r)
{
	free(r->addr);
	r->addr = NULL;
}

/*
 * Producer side: the store of prod publishes the addresses before the
 * index that covers them. seq_cst, paired with worker_sleep(): either the
 * owner sees the new frames before it sleeps, or we see it asleep and wake
 * it. Without this an idle owner refills the shared fill ring only every
 * POLL_TIMEOUT_MS.
 */
static inline void ret_publish(struct ferry_ret *r, uint32_t prod)
{
	__atomic_store_n(&r->prod, prod, __ATOMIC_SEQ_CST);
	if (unlikely(__atomic_load_n(&r->owner->sleeping, __ATOMIC_SEQ_CST)))
		worker_wake(r->owner);
}

static inline void ret_push(struct ferry_ret *r, const struct xsk_ring_cons *rx,
			    uint32_t idx, uint32_t n)
{
	uint32_t prod = r->prod, i;

	for (i = 0; i < n; i++)
		r->addr[(prod + i) & r->mask] =
			xsk_ring_cons__rx_desc(rx, idx + i)->addr;
	ret_publish(r, prod + n);
}

/* One frame (a foreign socket's frame too long for its egress). */
static inline void ret_push_addr(struct ferry_ret *r, uint64_t addr)
{
	r->addr[r->prod & r->mask] = addr;
	ret_publish(r, r->prod + 1);
}

/*
 * Consumer side, on the pool's owner: back onto the free stack. A frame
 * that is already there came from the kernel twice (see spread.h): it is
 * counted, never pushed twice, so the stack cannot overflow.
 */
static inline void ret_drain(struct ferry_worker *w, struct ferry_umem *u,
			     struct ferry_ret *r)
{
	uint32_t prod = __atomic_load_n(&r->prod, __ATOMIC_ACQUIRE);
	uint32_t cons = r->cons;

	if (prod == cons)
		return;
	for (; cons != prod; cons++) {
		uint64_t a = r->addr[cons & r->mask];

		if (unlikely(u->owner[ferry_umem_frame_idx(a)] ==
			     FERRY_OWNER_POOL)) {
			ferry_ctr_add(&w->c.frames_dup, 1);
			continue;
		}
		ferry_umem_put(u, a);
	}
	__atomic_store_n(&r->cons, cons, __ATOMIC_RELEASE);
}

static inline void pq_drain_rets(struct ferry_worker *w, struct ferry_pq *pq)
{
	struct ferry_spread_rets *rs = pq->rets;
	uint32_t i;

	for (i = 0; i < rs->n; i++)
		ret_drain(w, pq->xsk->umem, &rs->ret[i]);
}

/*
 * Copy-mode TX sends only inside sendto(), up to the socket's budget per
 * call; EAGAIN means "more left, kick again", which the next loop does
 * because the ring still holds unsent descriptors.
 */
static inline void pq_kick(struct ferry_pq *pq)
{
	struct ferry_xsk *x = pq->xsk;

	if (!xsk_ring_prod__needs_wakeup(&x->tx))
		return;
	sendto(x->fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
	ferry_ctr_add(&pq->c.tx_kicks, 1);
}

static void cap_tx_batch(const struct ferry_capture_tap *t,
			 const struct ferry_pq *pq);

static inline void worker_flush_tx(struct ferry_worker *w)
{
	struct ferry_pq *foreign = NULL;
	uint32_t i;

	for (i = 0; i < w->n_touched; i++) {
		struct ferry_pq *t = w->touched[i];
		struct ferry_capture_tap *cap =
			ferry_capture_tap_get(&t->cap_tx);

		/* TX as sent, whichever app filled it (after any rewrite),
		 * before the submit hands the frames to the kernel. */
		if (unlikely(cap))
			cap_tx_batch(cap, t);
		xsk_ring_prod__submit(&t->xsk->tx, t->tx_batch);
		t->tx_batch = 0;
		t->touched = 0;
		if (unlikely(t->foreign))
			foreign = t;
	}
	w->n_touched = 0;
	/* One kick per ring that has anything unsent, touched or left over;
	 * none while the link is down: it would fail every loop, and what
	 * waits in the ring goes out when the link is back. */
	for (i = 0; i < w->n_pq; i++)
		if (ferry_xsk_tx_unsent(w->pq[i]->xsk) && !w->pq[i]->down)
			pq_kick(w->pq[i]);
	/* Completions of a foreign socket land in its owner's ring: a
	 * sleeping owner would reap them only at its next timeout. */
	if (unlikely(foreign) &&
	    __atomic_load_n(&foreign->ret->owner->sleeping, __ATOMIC_SEQ_CST))
		worker_wake(foreign->ret->owner);
}

/* ----------------------------------------------------------------- apps */

static inline void swap_macs(uint8_t *eth)
{
	uint8_t tmp[6];

	memcpy(tmp, eth, 6);
	memcpy(eth, eth + 6, 6);
	memcpy(eth + 6, tmp, 6);
}

_Static_assert(offsetof(struct xdp_desc, options) ==
			       offsetof(struct xdp_desc, len) + 4 &&
		       __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "desc_len_opts reads len and options as one u64");

/* A descriptor's len in the low half, its options in the high half. */
static inline uint64_t desc_len_opts(const struct xdp_desc *d)
{
	uint64_t v;

	memcpy(&v, &d->len, sizeof(v));
	return v;
}

/* A frame longer than the egress allows: its verdict in a capture (the
 * code is the reason's index in FERRY_DROP_REASONS, as app_consume's). */
#define CAP_V_MTU                                                              \
	FERRY_CAP_VERDICT(                                                     \
		FERRY_CAP_V_DROP,                                              \
		(offsetof(struct ferry_queue_ctrs, drop.mtu_exceeded) -        \
		 offsetof(struct ferry_queue_ctrs, drop)) /                    \
			sizeof(uint64_t))

/*
 * Capture (capture.h): hands the complete frames among n descriptors of a
 * ring (RX or TX) to a tap, chains as segments. Out of line and called
 * only when the queue's tap is set: with no capture a burst pays one load
 * and one never-taken branch. A chain the burst ends inside is left for
 * the pass that sees all of it. A frame longer than lim (the egress's
 * limit; UINT32_MAX: none) goes in as dropped for mtu_exceeded, which is
 * what the forwarding below does with it.
 */
static __attribute__((noinline)) void
cap_descs(const struct ferry_capture_tap *t, struct ferry_umem *u,
	  const struct xdp_desc *ring, uint32_t mask, uint32_t idx, uint32_t n,
	  uint32_t queue, uint16_t verdict, uint32_t lim)
{
	struct ferry_cap_seg seg[FERRY_MAX_FRAGS];
	uint64_t now = ferry_now_ns();
	uint32_t i, k = 0, len = 0;

	for (i = 0; i < n; i++) {
		const struct xdp_desc *d = &ring[(idx + i) & mask];

		if (k < FERRY_MAX_FRAGS) {
			seg[k].data = ferry_umem_data(u, d->addr);
			seg[k].len = d->len;
			k++;
		}
		len += d->len;
		if (d->options & XDP_PKT_CONTD)
			continue;
		ferry_capture_frame(t, now, (uint16_t)queue,
				    len > lim ? CAP_V_MTU : verdict, seg, k);
		k = 0;
		len = 0;
	}
}

#define CAP_RING(t, u, r, idx, n, q, v)                                        \
	cap_descs(t, u, (const struct xdp_desc *)(r)->ring, (r)->mask, idx, n, \
		  q, v, UINT32_MAX)

/*
 * A tx capture of pq: the descriptors of this pass's batch, the last
 * tx_batch reserved and not yet submitted (TX holds only whole chains),
 * with the verdict of the app that filled it (none: the generator).
 */
static __attribute__((noinline)) void
cap_tx_batch(const struct ferry_capture_tap *t, const struct ferry_pq *pq)
{
	const struct xsk_ring_prod *tx = &pq->xsk->tx;

	CAP_RING(t, pq->xsk->umem, tx, tx->cached_prod - pq->tx_batch,
		 pq->tx_batch, pq->queue,
		 pq->tx_app == FERRY_APP_NONE
			 ? 0
			 : FERRY_CAP_VERDICT(FERRY_CAP_V_APP, pq->tx_app));
}

/*
 * Partial checksums (csum.h) of the complete frames of an RX burst, before
 * they are forwarded. Out of line and called only for ports that need it:
 * the burst loops stay as they were for the others. A chain that goes on
 * past the burst is left for the pass that sees all of it.
 */
static __attribute__((noinline)) void csum_burst(struct ferry_worker *w,
						 struct ferry_umem *u,
						 const struct xsk_ring_cons *rx,
						 uint32_t idx, uint32_t n)
{
	struct ferry_csum_seg seg[FERRY_MAX_FRAGS];
	uint32_t i = 0, k, m, fixed = 0;

	while (i < n) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(rx, idx + i);

		if (likely(!(d->options & XDP_PKT_CONTD))) {
			seg[0].data = ferry_umem_data(u, d->addr);
			seg[0].len = d->len;
			fixed +=
				ferry_csum_complete(seg, 1) == FERRY_CSUM_FIXED;
			i++;
			continue;
		}
		m = ferry_rx_frame_descs(rx, idx, i, n);
		if (!m)
			break;
		if (m > FERRY_MAX_FRAGS) { /* dropped by the forwarder */
			i += m;
			continue;
		}
		for (k = 0; k < m; k++) {
			const struct xdp_desc *d =
				xsk_ring_cons__rx_desc(rx, idx + i + k);

			seg[k].data = ferry_umem_data(u, d->addr);
			seg[k].len = d->len;
		}
		fixed += ferry_csum_complete(seg, m) == FERRY_CSUM_FIXED;
		i += m;
	}
	if (fixed)
		ferry_ctr_add(&w->c.csum_fixed, fixed);
}

/* What a burst did, when the slow path had a hand in it. */
struct fwd_sums {
	uint32_t i;	     /* RX descriptors consumed (the rest wait) */
	uint32_t j;	     /* TX slots filled */
	uint32_t frames;     /* frames received (chains count once) */
	uint32_t fwd_frames; /* frames forwarded */
	uint32_t long_frames;
	uint32_t copied; /* of fwd_frames: copied to the other UMEM */
	uint64_t bytes;
	uint64_t long_bytes;
};

static inline void fwd_put(struct ferry_umem *u, struct ferry_ret *ret,
			   uint64_t addr)
{
	if (unlikely(ret))
		ret_push_addr(ret, addr);
	else
		ferry_umem_put(u, addr);
}

/*
 * The rest of a burst once a multi-buffer frame shows up in it (or a cut
 * chain is being skipped): frame by frame, each frame all its descriptors
 * or none. Out of line, so that the single-buffer loop of app_forward
 * stays as it was but for one test of the options per descriptor.
 *
 * Also every burst whose egress socket is on another UMEM than the
 * ingress's (a zero-copy port and a copy-mode port on one worker): each
 * descriptor is copied into a frame of the egress's pool, the received
 * frame goes back to its own pool at once, and the frame counts as
 * tx_copied; with too few free frames there for the whole frame it is
 * dropped as tx_copy_nofree. The egress's completions return the copies
 * to its pool (pq_reap), so the two pools never trade frames.
 */
static __attribute__((noinline)) void
forward_chains(struct ferry_pq *pq, struct ferry_pq *out, bool reflect,
	       uint32_t idx_rx, uint32_t idx_tx, uint32_t n, uint32_t lim,
	       struct fwd_sums *s)
{
	struct ferry_xsk *x = pq->xsk, *o = out->xsk;
	struct ferry_umem *u = x->umem, *ou = o->umem;
	struct ferry_ret *ret = pq->ret;
	uint16_t tag = o->tx_tag;
	uint32_t i = s->i, k, m;
	bool copy = u != ou;

	/* The tail of a chain cut at FERRY_MAX_FRAGS in an earlier pass. */
	while (unlikely(pq->rx_skip) && i < n) {
		const struct xdp_desc *d =
			xsk_ring_cons__rx_desc(&x->rx, idx_rx + i++);

		s->long_bytes += d->len;
		fwd_put(u, ret, d->addr);
		if (!(d->options & XDP_PKT_CONTD)) {
			pq->rx_skip = 0;
			s->frames++;
		}
	}
	while (i < n) {
		uint64_t len = 0;
		bool bad = false;

		m = ferry_rx_frame_descs(&x->rx, idx_rx, i, n);
		if (!m) {
			/* The chain goes on past this burst. Short of the
			 * limit it waits in the RX ring for the next pass;
			 * at the limit it can never be sent: drop it now,
			 * and its tail as it arrives. */
			if (n - i < FERRY_MAX_FRAGS)
				break;
			for (; i < n; i++)
				fwd_put(u, ret,
					xsk_ring_cons__rx_desc(&x->rx,
							       idx_rx + i)
						->addr);
			pq->rx_skip = 1;
			ferry_ctr_add(&pq->c.drop.chain_too_long, 1);
			break;
		}
		for (k = i; k < i + m; k++) {
			const struct xdp_desc *d =
				xsk_ring_cons__rx_desc(&x->rx, idx_rx + k);

			len += d->len;
			/* Every piece of a chain inside its own UMEM frame. */
			if (m > 1 &&
			    (!d->len ||
			     (d->addr & (FERRY_FRAME_SIZE - 1)) + d->len >
				     FERRY_FRAME_SIZE))
				bad = true;
		}
		s->frames++;
		if (unlikely(bad || m > FERRY_MAX_FRAGS ||
			     (m > 1 && !o->multibuf) || len > lim ||
			     (copy && ou->n_free < m))) {
			uint64_t *why = &pq->c.drop.mtu_exceeded;

			if (bad)
				why = &pq->c.drop.chain_bad;
			else if (m > FERRY_MAX_FRAGS)
				why = &pq->c.drop.chain_too_long;
			else if (len > lim)
				s->long_frames++;
			else if (m > 1 && !o->multibuf)
				why = &pq->c.drop.chain_unsupported;
			else
				why = &pq->c.drop.tx_copy_nofree;
			if (why != &pq->c.drop.mtu_exceeded)
				ferry_ctr_add(why, 1);
			for (k = i; k < i + m; k++)
				fwd_put(u, ret,
					xsk_ring_cons__rx_desc(&x->rx,
							       idx_rx + k)
						->addr);
			s->long_bytes += len;
			i += m;
			continue;
		}
		for (k = i; k < i + m; k++) {
			const struct xdp_desc *d =
				xsk_ring_cons__rx_desc(&x->rx, idx_rx + k);
			struct xdp_desc *t =
				xsk_ring_prod__tx_desc(&o->tx, idx_tx + s->j++);

			if (reflect && k == i)
				swap_macs(ferry_umem_data(u, d->addr));
			t->len = d->len;
			t->options = d->options & XDP_PKT_CONTD;
			if (unlikely(copy)) {
				/* n_free >= m was checked: never UINT64_MAX */
				t->addr = ferry_umem_copy_in(ou, u, d->addr,
							     d->len, tag);
				fwd_put(u, ret, d->addr);
				continue;
			}
			t->addr = d->addr;
			u->owner[ferry_umem_frame_idx(d->addr)] = tag;
		}
		s->bytes += len;
		s->fwd_frames++;
		s->copied += copy;
		i += m;
	}
	s->i = i;
}

/* XCONNECT and REFLECT: descriptors move RX -> TX; packet data stays put. */
static inline __attribute__((always_inline)) uint32_t
app_forward(struct ferry_worker *w, struct ferry_pq *pq, struct ferry_pq *out,
	    bool reflect)
{
	struct ferry_xsk *x = pq->xsk, *o = out->xsk;
	struct ferry_umem *u = x->umem; /* another worker's, if foreign */
	/* Locals: the descriptor stores below could alias these fields, so
	 * the compiler would load them again for every frame. */
	struct ferry_ret *ret = pq->ret;
	uint16_t *owner = u->owner, tag = o->tx_tag;
	uint32_t room, n, fit, idx_rx = 0, idx_tx = 0, i = 0, j = 0;
	uint32_t lim = out->max_frame ? out->max_frame : UINT32_MAX;
	uint64_t bytes = 0, long_bytes = 0;
	struct ferry_capture_tap *cap;

	/*
	 * Take only what the egress ring can hold: the rest waits in the RX
	 * ring, so a full TX ring backs up into the kernel's counters
	 * (rx_ring_full) instead of into silent userspace drops. Each pass
	 * that leaves frames waiting so is counted as tx_backpressure.
	 */
	/* peek re-reads the kernel's producer only once what it knows of is
	 * used up: a chain's head waiting in the ring would be all it ever
	 * saw of that chain. */
	if (unlikely(pq->rx_wait)) {
		pq->rx_wait = 0;
		x->rx.cached_prod =
			__atomic_load_n(x->rx.producer, __ATOMIC_ACQUIRE);
	}
	room = xsk_prod_nb_free(&o->tx, FERRY_BURST);
	if (room > FERRY_BURST)
		room = FERRY_BURST;
	n = xsk_ring_cons__peek(&x->rx, room, &idx_rx);
	if (unlikely(room < FERRY_BURST) && xsk_cons_nb_avail(&x->rx, 1))
		ferry_ctr_add(&pq->c.tx_backpressure, 1);
	if (!n)
		return 0;
	cap = ferry_capture_tap_get(&pq->cap_rx);
	if (unlikely(cap))
		cap_descs(cap, u, (const struct xdp_desc *)x->rx.ring,
			  x->rx.mask, idx_rx, n, pq->queue,
			  FERRY_CAP_VERDICT(FERRY_CAP_V_APP, pq->app), lim);
	if (unlikely(pq->csum_fix))
		csum_burst(w, u, &x->rx, idx_rx, n);
	/* Room for all n; slots left over by frames too long for the egress
	 * (copy-mode TX does not check its MTU) are handed back below. */
	xsk_ring_prod__reserve(&o->tx, n, &idx_tx);
	/* To the worker's other UMEM: copied, frame by frame. */
	if (unlikely(pq->rx_skip) || unlikely(u != o->umem))
		goto chains;
	for (i = 0, j = 0; i < n; i++) {
		const struct xdp_desc *d =
			xsk_ring_cons__rx_desc(&x->rx, idx_rx + i);
		struct xdp_desc *t;
		uint64_t lo = desc_len_opts(d);
		uint32_t len = (uint32_t)lo;

		/* len and options in one load, one compare: options other
		 * than 0 (a chain) make it exceed any u32 limit, so the
		 * single-buffer frame costs what it did before chains. */
		if (unlikely(lo > lim)) {
			if (lo >> 32)
				goto chains;
			long_bytes += len;
			if (unlikely(ret))
				ret_push_addr(ret, d->addr);
			else
				ferry_umem_put(u, d->addr);
			continue;
		}
		t = xsk_ring_prod__tx_desc(&o->tx, idx_tx + j++);
		if (reflect)
			swap_macs(ferry_umem_data(u, d->addr));
		t->addr = d->addr;
		t->len = len;
		t->options = 0;
		bytes += len;
		owner[ferry_umem_frame_idx(d->addr)] = tag;
	}
	xsk_ring_cons__release(&x->rx, n);
	fit = j;
	/* The unused slots are the last ones reserved, none submitted yet:
	 * giving them back is moving the cached producer back (what newer
	 * libxdp calls xsk_ring_prod__cancel). */
	if (unlikely(fit < n)) {
		o->tx.cached_prod -= n - fit;
		ferry_ctr_add(&pq->c.drop.mtu_exceeded, n - fit);
	}
	ferry_ctr_add(&pq->c.rx_packets, n);
	ferry_ctr_add(&pq->c.rx_bytes, bytes + long_bytes);
	if (!fit)
		return n;
	out->tx_batch += fit;
	ferry_worker_touch(w, out, pq->app);
	ferry_ctr_add(&out->c.tx_packets, fit);
	ferry_ctr_add(&out->c.tx_bytes, bytes);
	ferry_ctr_add(&w->c.tx_packets, fit);
	return n;

chains:
	/* Frames so far were single-buffer: i of them, j sent. */
	{
		struct fwd_sums sm = {
			.i = i,
			.j = j,
			.frames = i,
			.fwd_frames = j,
			.long_frames = i - j,
			.bytes = bytes,
			.long_bytes = long_bytes,
		};

		forward_chains(pq, out, reflect, idx_rx, idx_tx, n, lim, &sm);
		/* A chain that goes on past the burst waits for the next. */
		if (sm.i < n) {
			xsk_ring_cons__cancel(&x->rx, n - sm.i);
			pq->rx_wait = 1;
		}
		if (sm.i)
			xsk_ring_cons__release(&x->rx, sm.i);
		if (sm.j < n)
			o->tx.cached_prod -= n - sm.j;
		if (sm.long_frames)
			ferry_ctr_add(&pq->c.drop.mtu_exceeded, sm.long_frames);
		if (sm.copied) {
			ferry_ctr_add(&out->c.tx_copied, sm.copied);
			ferry_ctr_add(&w->c.tx_copied, sm.copied);
		}
		ferry_ctr_add(&pq->c.rx_packets, sm.frames);
		ferry_ctr_add(&pq->c.rx_bytes, sm.bytes + sm.long_bytes);
		if (sm.j) {
			out->tx_batch += sm.j;
			ferry_worker_touch(w, out, pq->app);
			ferry_ctr_add(&out->c.tx_packets, sm.fwd_frames);
			ferry_ctr_add(&out->c.tx_bytes, sm.bytes);
			ferry_ctr_add(&w->c.tx_packets, sm.fwd_frames);
		}
		return sm.frames;
	}
}

/* DROP, NONE, or no egress queue: count the frames and give them back. */
static inline uint32_t app_consume(struct ferry_worker *w, struct ferry_pq *pq,
				   uint64_t *reason)
{
	struct ferry_xsk *x = pq->xsk;
	uint32_t n, idx, i, frames = 0;
	uint64_t bytes = 0;
	struct ferry_capture_tap *cap;

	n = xsk_ring_cons__peek(&x->rx, FERRY_BURST, &idx);
	if (!n)
		return 0;
	/* Frames dropped here go on rx with the reason as their verdict. */
	cap = ferry_capture_tap_get(&pq->cap_rx);
	if (unlikely(cap))
		CAP_RING(cap, x->umem, &x->rx, idx, n, pq->queue,
			 FERRY_CAP_VERDICT(FERRY_CAP_V_DROP,
					   reason - (uint64_t *)&pq->c.drop));
	if (likely(!pq->ret)) {
		ferry_worker_rx_drop(w, pq, idx, n, reason);
		return n;
	}
	/* Software RSS: the frames belong to the pool owner's UMEM. */
	for (i = 0; i < n; i++) {
		const struct xdp_desc *d =
			xsk_ring_cons__rx_desc(&x->rx, idx + i);

		bytes += d->len;
		frames += !(d->options & XDP_PKT_CONTD);
	}
	ret_push(pq->ret, &x->rx, idx, n);
	xsk_ring_cons__release(&x->rx, n);
	ferry_ctr_add(&pq->c.rx_packets, frames);
	ferry_ctr_add(&pq->c.rx_bytes, bytes);
	ferry_ctr_add(reason, frames);
	return frames;
}

/* Debt older than this is forgiven rather than sent as a burst. */
#define TXGEN_MAX_DEBT_NS 1000000000ull
/* Frames a generator writes per pass, and back to back after a pause. */
#define TXGEN_BURST 64

/*
 * The generator's frames longer than one UMEM frame: each a chain of segs
 * descriptors, XDP_PKT_CONTD on all but the last, room reserved for whole
 * frames only (never half a frame in the ring). Returns frames written.
 */
static __attribute__((noinline)) uint32_t txgen_chains(struct ferry_txgen *g,
						       struct ferry_xsk *x,
						       struct ferry_umem *u,
						       uint32_t n)
{
	uint32_t segs = (g->size + FERRY_FRAME_SIZE - 1) / FERRY_FRAME_SIZE;
	uint32_t room = xsk_prod_nb_free(&x->tx, n * segs) / segs, idx = 0;
	uint32_t i, k;

	if (n > room)
		n = room;
	if (n > u->n_free / segs)
		n = u->n_free / segs;
	if (!n)
		return 0;
	xsk_ring_prod__reserve(&x->tx, n * segs, &idx);
	for (i = 0; i < n; i++) {
		uint16_t sport = (uint16_t)(g->sport_base + g->flow);
		uint32_t off = 0;

		for (k = 0; k < segs; k++) {
			uint64_t a = u->free[--u->n_free];
			uint8_t *d = ferry_umem_data(u, a);
			uint32_t len = g->size - off < FERRY_FRAME_SIZE
					       ? g->size - off
					       : FERRY_FRAME_SIZE;
			struct xdp_desc *t =
				xsk_ring_prod__tx_desc(&x->tx, idx++);

			memcpy(d, g->frame + off, len);
			if (!k) {
				d[g->sport_off] = (uint8_t)(sport >> 8);
				d[g->sport_off + 1] = (uint8_t)sport;
			}
			u->owner[ferry_umem_frame_idx(a)] = x->tx_tag;
			t->addr = a;
			t->len = len;
			t->options = k + 1 < segs ? XDP_PKT_CONTD : 0;
			off += len;
		}
		if (++g->flow >= g->flows)
			g->flow = 0;
	}
	return n;
}

/*
 * The AF_XDP TX generator: frames from the pool, the template written into
 * each (generating is the one place data is written), one TX batch a pass.
 */
static uint32_t pq_txgen(struct ferry_worker *w, struct ferry_pq *pq)
{
	struct ferry_txgen *g = pq->txgen;
	struct ferry_xsk *x = pq->xsk;
	struct ferry_umem *u = x->umem;
	uint32_t n = TXGEN_BURST, idx = 0, i, descs;
	uint64_t now = 0;

	if (g->count && g->sent >= g->count)
		return 0;
	if (g->count && g->count - g->sent < n)
		n = (uint32_t)(g->count - g->sent);
	if (g->interval_ns) {
		uint64_t due, allow,
			half = g->interval_ns / 2 ? g->interval_ns / 2 : 1;

		now = ferry_now_ns();
		if (!g->next_ns ||
		    (now > g->next_ns && now - g->next_ns > TXGEN_MAX_DEBT_NS))
			g->next_ns = now;
		/* Behind schedule, catch up at no more than twice the rate:
		 * frames leave at least half an interval apart, and after a
		 * pause at most one burst goes out back to back. Bursts
		 * overflow the rings of whatever is downstream. */
		if (g->pace_ns + TXGEN_BURST * half < now)
			g->pace_ns = now - TXGEN_BURST * half;
		if (now < g->next_ns || now < g->pace_ns) {
			uint64_t at = g->next_ns > g->pace_ns ? g->next_ns
							      : g->pace_ns;

			/* Sleep until then: spinning here would starve the
			 * softirq that carries the frames already sent. */
			if (!w->gen_wait_ns || at - now < w->gen_wait_ns)
				w->gen_wait_ns = at - now;
			return 0;
		}
		due = (now - g->next_ns) / g->interval_ns + 1;
		allow = (now - g->pace_ns) / half + 1;
		if (due > allow)
			due = allow;
		if (due < n)
			n = (uint32_t)due;
	}
	if (unlikely(g->size > FERRY_FRAME_SIZE)) {
		uint32_t segs =
			(g->size + FERRY_FRAME_SIZE - 1) / FERRY_FRAME_SIZE;

		n = txgen_chains(g, x, u, n);
		if (!n)
			return 0;
		descs = n * segs;
		goto sent;
	}
	if (xsk_prod_nb_free(&x->tx, n) < n)
		n = xsk_prod_nb_free(&x->tx, n);
	if (n > u->n_free)
		n = u->n_free;
	if (!n)
		return 0;
	descs = n;
	xsk_ring_prod__reserve(&x->tx, n, &idx);
	for (i = 0; i < n; i++) {
		uint64_t a = u->free[--u->n_free];
		uint8_t *d = ferry_umem_data(u, a);
		uint16_t sport = (uint16_t)(g->sport_base + g->flow);
		struct xdp_desc *t = xsk_ring_prod__tx_desc(&x->tx, idx + i);

		memcpy(d, g->frame, g->size);
		d[g->sport_off] = (uint8_t)(sport >> 8);
		d[g->sport_off + 1] = (uint8_t)sport;
		if (++g->flow >= g->flows)
			g->flow = 0;
		u->owner[ferry_umem_frame_idx(a)] = x->tx_tag;
		t->addr = a;
		t->len = g->size;
		t->options = 0;
	}
sent:
	if (g->interval_ns) {
		g->next_ns += n * g->interval_ns;
		g->pace_ns += n * (g->interval_ns / 2 ? g->interval_ns / 2 : 1);
	}
	__atomic_store_n(&g->sent, g->sent + n, __ATOMIC_RELAXED);
	pq->tx_batch += descs;
	ferry_worker_touch(w, pq, FERRY_APP_NONE);
	ferry_ctr_add(&pq->c.tx_packets, n);
	ferry_ctr_add(&pq->c.tx_bytes, (uint64_t)n * g->size);
	ferry_ctr_add(&w->c.tx_packets, n);
	return n;
}

/* Hot path: a switch rather than a table of function pointers, so it inlines. */
static inline uint32_t pq_rx(struct ferry_worker *w, struct ferry_pq *pq)
{
	uint32_t n;

	switch (pq->app) {
	case FERRY_APP_XCONNECT:
	case FERRY_APP_REFLECT:
		if (unlikely(!pq->out))
			n = app_consume(w, pq, &pq->c.drop.no_tx_queue);
		else if (unlikely(pq->out->down))
			n = app_consume(w, pq, &pq->c.drop.port_down);
		else if (unlikely(pq->out->dpdk))
			n = ferry_dpdk_from_xsk(w, pq, pq->out);
		/* Constant flags: the compiler makes one loop of each. */
		else if (pq->app == FERRY_APP_REFLECT)
			n = app_forward(w, pq, pq->out, true);
		else
			n = app_forward(w, pq, pq->out, false);
		break;
	case FERRY_APP_DROP:
		n = app_consume(w, pq, &pq->c.drop.app_drop);
		break;
	case FERRY_APP_ROUTE:
		n = likely(pq->rw) ? ferry_route_rx(w, pq)
				   : app_consume(w, pq, &pq->c.drop.no_app);
		break;
	default:
		n = app_consume(w, pq, &pq->c.drop.no_app);
		break;
	}
	if (n) {
		ferry_ctr_add(&pq->c.rx_batches, 1);
		ferry_ctr_add(&w->c.rx_batches, 1);
		ferry_ctr_add(&w->c.rx_packets, n);
	}
	return n;
}

/* ----------------------------------------------------------------- loop */

static void worker_park(struct ferry_worker *w)
{
	__atomic_store_n(&w->paused, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&w->pause_req, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE))
		usleep(20);
	__atomic_store_n(&w->paused, 0, __ATOMIC_RELEASE);
}

/* Frames handed back and not yet taken: the owner must not sleep on them. */
static bool rets_pending(const struct ferry_worker *w)
{
	uint32_t i, j;

	for (i = 0; i < w->n_pq; i++) {
		const struct ferry_spread_rets *rs = w->pq[i]->rets;

		for (j = 0; rs && j < rs->n; j++)
			if (__atomic_load_n(&rs->ret[j].prod,
					    __ATOMIC_SEQ_CST) !=
			    rs->ret[j].cons)
				return true;
	}
	return false;
}

/* Sleeps until a socket has frames, the control thread knocks, or ns pass. */
static void worker_sleep(struct ferry_worker *w, uint64_t ns)
{
	struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000ull),
			      .tv_nsec = (long)(ns % 1000000000ull)};
	int n_pfd = (int)(w->n_pq + 1 + w->n_dq);
	uint64_t v;

	__atomic_store_n(&w->sleeping, 1, __ATOMIC_SEQ_CST);
	if (rets_pending(w)) {
		__atomic_store_n(&w->sleeping, 0, __ATOMIC_RELAXED);
		return;
	}
	ferry_ctr_add(&w->c.polls, 1);
	if (ppoll(w->pfd, (nfds_t)n_pfd, &ts, NULL) > 0 &&
	    (w->pfd[w->n_pq].revents & POLLIN))
		(void)!read(w->wake_fd, &v, sizeof(v));
	__atomic_store_n(&w->sleeping, 0, __ATOMIC_RELAXED);
}

uint32_t ferry_worker_poll_once(struct ferry_worker *w)
{
	uint32_t i, work = 0;

	ferry_ctr_add(&w->c.loops, 1);
	for (i = 0; i < w->n_pq; i++) {
		struct ferry_pq *pq = w->pq[i];
		uint32_t n = pq_rx(w, pq);

		/* Busy polling: an empty ring asks the kernel to run the
		 * queue's NAPI here and now, instead of waiting for an IRQ. */
		if (!n && pq->busy_poll)
			recvfrom(pq->xsk->fd, NULL, 0, MSG_DONTWAIT, NULL,
				 NULL);
		if (unlikely(pq->txgen))
			work += pq_txgen(w, pq);
		work += n;
	}
	/* Before the flush: DPDK frames for native egress sit in TX rings. */
	if (unlikely(w->n_dq))
		work += ferry_dpdk_poll(w);
	worker_flush_tx(w);
	for (i = 0; i < w->n_pq; i++) {
		struct ferry_pq *pq = w->pq[i];

		/* A foreign socket's fill and completion rings are its pool
		 * owner's; the owner takes back what foreign sockets hand
		 * back before it refills. */
		if (unlikely(pq->foreign))
			continue;
		pq_reap(w, pq);
		if (unlikely(pq->rets))
			pq_drain_rets(w, pq);
		pq_refill(w, pq);
	}
	return work;
}

static void *worker_main(void *arg)
{
	struct ferry_worker *w = arg;
	uint32_t idle = 0;

	/* Rings and wakeups on bound sockets need no capability: hold none. */
	if (ferry_privs_narrow(FERRY_PRIVS_NONE))
		log_warn("worker %d: could not drop its capabilities", w->id);
	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
		if (unlikely(
			    __atomic_load_n(&w->pause_req, __ATOMIC_ACQUIRE))) {
			worker_park(w);
			continue;
		}
		w->gen_wait_ns = 0;
		if (ferry_worker_poll_once(w)) {
			ferry_ctr_add(&w->c.busy_loops, 1);
			idle = 0;
		} else if (w->gen_wait_ns) {
			worker_sleep(w, w->gen_wait_ns);
		} else if (!w->n_pq && !w->n_dq) {
			/* Nothing to serve: no spinning (a hot restart's new
			 * workers share CPUs with the old ones). */
			worker_sleep(w, POLL_TIMEOUT_MS * 1000000ull);
		} else if (w->idle == FERRY_IDLE_POLL ||
			   ++idle > IDLE_SPIN_LOOPS) {
			worker_sleep(w, POLL_TIMEOUT_MS * 1000000ull);
		}
	}
	return NULL;
}

/* --------------------------------------------------------- control side */

static void worker_wake(struct ferry_worker *w)
{
	uint64_t one = 1;

	(void)!write(w->wake_fd, &one, sizeof(one));
}

void ferry_worker_pause(struct ferry_worker *w)
{
	if (!w->started || w->pause_depth++)
		return;
	__atomic_store_n(&w->pause_req, 1, __ATOMIC_RELEASE);
	worker_wake(w);
	while (!__atomic_load_n(&w->paused, __ATOMIC_ACQUIRE))
		usleep(20);
}

void ferry_worker_resume(struct ferry_worker *w)
{
	if (!w->started || --w->pause_depth)
		return;
	__atomic_store_n(&w->pause_req, 0, __ATOMIC_RELEASE);
	/* Wait for the worker to leave the park, so a quick second pause
	 * can't mistake the old "paused" for a new one. */
	while (__atomic_load_n(&w->paused, __ATOMIC_ACQUIRE))
		usleep(20);
}

/*
 * Fill shares. A fill ring topped up to its size holds frames that only
 * traffic on its queue brings back: with 4 queues on each of 4 ports,
 * the 8 sockets of a worker's fill rings held its whole UMEM, and the one
 * busy queue found the pool empty. So each fill ring of a UMEM holds at
 * most an equal part of half of it (in FERRY_FILL_BATCH steps, at least
 * two); the other half is for frames in RX, TX and completion rings and in
 * the worker's hands. Sockets announced but not yet added (fill_expect)
 * count already: a ring filled before the last of its port's queues came
 * would keep more than its share while its queue is idle.
 */
static void umem_fill_shares(struct ferry_worker *w, struct ferry_umem *u)
{
	uint32_t i, n = w->fill_expect, share;

	for (i = 0; i < w->n_pq; i++)
		n += !w->pq[i]->foreign && w->pq[i]->xsk->umem == u;
	if (!n)
		return;
	share = (u->n_frames / 2 / n) & ~(uint32_t)(FERRY_FILL_BATCH - 1);
	if (share < 2 * FERRY_FILL_BATCH)
		share = 2 * FERRY_FILL_BATCH;
	for (i = 0; i < w->n_pq; i++) {
		struct ferry_xsk *x = w->pq[i]->xsk;

		if (w->pq[i]->foreign || x->umem != u)
			continue;
		x->fill_room = x->ring_size > share ? x->ring_size - share : 0;
	}
}

/* The shares of each UMEM the worker holds (one per bind mode). */
static void worker_fill_shares(struct ferry_worker *w)
{
	if (w->umem)
		umem_fill_shares(w, w->umem);
	if (w->umem2)
		umem_fill_shares(w, w->umem2);
}

void ferry_worker_fill_expect(struct ferry_worker *w, uint32_t n)
{
	w->fill_expect = n;
	worker_fill_shares(w);
}

uint32_t ferry_worker_fill_share(const struct ferry_pq *pq)
{
	return pq->xsk->ring_size - pq->xsk->fill_room;
}

/* What the loop polls, and each fill ring's share: after every change to
 * the worker's sockets (the worker paused). */
static void worker_sockets_changed(struct ferry_worker *w)
{
	uint32_t i;

	for (i = 0; i < w->n_pq; i++) {
		w->pfd[i].fd = w->pq[i]->xsk->fd;
		w->pfd[i].events = POLLIN;
	}
	w->pfd[w->n_pq].fd = w->wake_fd;
	w->pfd[w->n_pq].events = POLLIN;
	/* The PMD's sockets wake an idle worker as native ones do (-1, when
	 * unknown, is ignored by ppoll). */
	for (i = 0; i < w->n_dq; i++) {
		w->pfd[w->n_pq + 1 + i].fd = ferry_dpdk_poll_fd(w->dq[i]);
		w->pfd[w->n_pq + 1 + i].events = POLLIN;
	}
	worker_fill_shares(w);
}

struct ferry_worker *ferry_worker_create(int id, int cpu, enum ferry_idle idle)
{
	struct ferry_worker *w;

	if (posix_memalign((void **)&w, 64, sizeof(*w)))
		return NULL;
	memset(w, 0, sizeof(*w));
	w->id = id;
	w->cpu = cpu;
	w->idle = idle;
	w->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->wake_fd < 0) {
		free(w);
		return NULL;
	}
	worker_sockets_changed(w);
	return w;
}

int ferry_worker_start(struct ferry_worker *w)
{
	cpu_set_t set;
	pthread_attr_t attr;
	char name[16];
	int err;

	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	pthread_attr_init(&attr);
	err = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	if (!err)
		err = pthread_create(&w->thread, &attr, worker_main, w);
	pthread_attr_destroy(&attr);
	if (err)
		return -err;
	snprintf(name, sizeof(name), "ferry-w%d", w->id);
	pthread_setname_np(w->thread, name);
	w->started = true;
	return 0;
}

/* A UMEM no socket has registered yet (made ahead) takes either mode. */
static bool umem_takes(const struct ferry_umem *u, enum ferry_xsk_mode mode)
{
	return u->reg_fd < 0 || mode == FERRY_XSK_AUTO ||
	       u->zerocopy == (mode == FERRY_XSK_ZC);
}

/* A socket on *slot's UMEM, made first if the slot is empty. */
static struct ferry_xsk *xsk_on(struct ferry_umem **slot,
				const struct ferry_umem_params *up,
				const struct ferry_xsk_params *xp)
{
	struct ferry_xsk *x;
	int err;

	if (*slot)
		return ferry_xsk_create(*slot, xp);
	*slot = ferry_umem_create(up);
	if (!*slot)
		return NULL;
	x = ferry_xsk_create(*slot, xp);
	if (!x) {
		err = errno;
		ferry_umem_destroy(*slot);
		*slot = NULL;
		errno = err;
	}
	return x;
}

/*
 * The socket's UMEM by its mode: the worker's first UMEM if it takes the
 * mode, else the other one (made for it). Mode auto shares the first UMEM
 * when the device binds in its mode, and moves to the other mode's when
 * the device refuses (a veth next to a zero-copy NIC).
 */
static struct ferry_xsk *xsk_for_mode(struct ferry_worker *w,
				      const struct ferry_umem_params *up,
				      const struct ferry_xsk_params *xp)
{
	struct ferry_xsk_params other = *xp;
	struct ferry_xsk *x;
	bool fresh;

	if (!w->umem || umem_takes(w->umem, xp->mode)) {
		x = xsk_on(&w->umem, up, xp);
		/* Only a bind in the first UMEM's mode refused moves on
		 * (EBUSY: the queue is taken, in any mode). */
		if (x || xp->mode != FERRY_XSK_AUTO || !w->umem ||
		    w->umem->reg_fd < 0 || errno == EBUSY)
			return x;
	}
	/* The other mode than the first UMEM's, whatever auto would try. */
	other.mode = w->umem->zerocopy ? FERRY_XSK_COPY : FERRY_XSK_ZC;
	if (xp->mode != FERRY_XSK_AUTO && other.mode != xp->mode) {
		errno = EINVAL; /* not reached: umem_takes said so */
		return NULL;
	}
	fresh = !w->umem2;
	x = xsk_on(&w->umem2, up, &other);
	if (x && fresh)
		log_info("worker %d: a second UMEM, for its %s sockets: frames "
			 "between zero-copy and copy-mode ports are copied",
			 w->id, x->zerocopy ? "zero-copy" : "copy-mode");
	return x;
}

int ferry_worker_pq_add(struct ferry_worker *w, struct ferry_pq *pq,
			const struct ferry_xsk_params *xp, int numa_node,
			bool try_hugepages)
{
	struct ferry_umem_params up = {
		.n_frames = FERRY_UMEM_FRAMES,
		.numa_node = numa_node,
		.try_hugepages = try_hugepages,
	};

	if (w->n_pq >= FERRY_MAX_WQ)
		return -ENOSPC;
	pq->xsk = xsk_for_mode(w, &up, xp);
	if (!pq->xsk)
		return -errno;
	pq->w = w;
	pq->busy_poll = pq->xsk->busy_poll;
	w->pq[w->n_pq++] = pq;
	if (w->fill_expect)
		w->fill_expect--; /* counted from here as one of the pq */
	worker_sockets_changed(w);
	/* Frames in the fill ring before the XSKMAP entry points here. */
	pq_refill(w, pq);
	return 0;
}

int ferry_worker_umem_prepare(struct ferry_worker *w, int numa_node,
			      bool try_hugepages)
{
	struct ferry_umem_params up = {
		.n_frames = FERRY_UMEM_FRAMES,
		.numa_node = numa_node,
		.try_hugepages = try_hugepages,
	};
	uint64_t off;

	if (w->umem)
		return 0;
	w->umem = ferry_umem_create(&up);
	if (!w->umem)
		return -errno;
	/* Every page faulted in now: the kernel pins them at the first bind,
	 * which a hot restart wants quick. */
	for (off = 0; off < w->umem->size; off += 4096)
		((volatile uint8_t *)w->umem->area)[off] = 0;
	return 0;
}

int ferry_worker_pq_adopt(struct ferry_worker *w, struct ferry_pq *pq,
			  struct ferry_xsk *x)
{
	/* A spread socket's pool is its owner's (pq->spread[0]), adopted
	 * first; it hands frames back through pq->ret (ferry_pq_spread). */
	const struct ferry_worker *pool_w =
		x->shares_pool ? (pq->spread ? pq->spread[0].w : NULL) : w;

	if (w->n_pq >= FERRY_MAX_WQ || !pool_w || x->umem != pool_w->umem ||
	    (x->shares_pool && !pq->ret))
		return -EINVAL;
	if (x->shares_pool) {
		pq->foreign = 1;
		pq->ret->owner = pq->spread[0].w;
	}
	pq->xsk = x;
	pq->w = w;
	pq->busy_poll = x->busy_poll;
	w->pq[w->n_pq++] = pq;
	worker_sockets_changed(w);
	/* What the old owner submitted and did not kick out yet. */
	if (ferry_xsk_tx_unsent(x))
		sendto(x->fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
	return 0;
}

void ferry_worker_handover_export(struct ferry_worker *w)
{
	uint32_t i;

	/* Frames other workers handed back are the pool's again. */
	for (i = 0; i < w->n_pq; i++)
		if (w->pq[i]->rets)
			pq_drain_rets(w, w->pq[i]);
	if (w->umem)
		ferry_umem_export(w->umem);
	if (w->umem2)
		ferry_umem_export(w->umem2);
}

void ferry_worker_handover_import(struct ferry_worker *w)
{
	uint32_t i;

	if (!w->umem)
		return;
	ferry_umem_import(w->umem);
	if (w->umem2)
		ferry_umem_import(w->umem2);
	for (i = 0; i < w->n_pq; i++)
		ferry_xsk_resync(w->pq[i]->xsk);
	if (w->umem->parked)
		ferry_xsk_resync(w->umem->parked);
	if (w->umem2 && w->umem2->parked)
		ferry_xsk_resync(w->umem2->parked);
}

void ferry_worker_forget(struct ferry_worker *w)
{
	uint32_t i;

	for (i = 0; i < w->n_pq; i++) {
		ferry_xsk_forget(w->pq[i]->xsk);
		w->pq[i]->xsk = NULL;
		w->pq[i]->w = NULL;
	}
	w->n_pq = 0;
	worker_sockets_changed(w);
	if (w->umem2) {
		ferry_xsk_forget(w->umem2->parked);
		ferry_umem_forget(w->umem2);
		w->umem2 = NULL;
	}
	if (!w->umem)
		return;
	ferry_xsk_forget(w->umem->parked);
	ferry_umem_forget(w->umem);
	w->umem = NULL;
}

int ferry_worker_pq_add_shared(struct ferry_worker *w, struct ferry_pq *pq,
			       const struct ferry_xsk_params *xp,
			       struct ferry_pq *pool, struct ferry_ret *ret)
{
	struct ferry_xsk_params sp = *xp;

	if (w->n_pq >= FERRY_MAX_WQ)
		return -ENOSPC;
	sp.pool = pool->xsk;
	pq->xsk = ferry_xsk_create(pool->xsk->umem, &sp);
	if (!pq->xsk)
		return -errno;
	pq->w = w;
	pq->foreign = 1;
	pq->ret = ret;
	ret->owner = pool->w;
	w->pq[w->n_pq++] = pq;
	worker_sockets_changed(w);
	return 0;
}

/*
 * The last socket of u is closed: every one has given its frames back by
 * tag, so the pool must be whole again, to the frame. The other mode's
 * UMEM, if any, becomes the first.
 */
static void umem_close(struct ferry_worker *w, struct ferry_umem *u)
{
	ferry_xsk_destroy(u->parked, true);
	w->umem_closed++;
	if (u->n_free != u->n_frames) {
		w->umem_frames_lost += u->n_frames - u->n_free;
		log_err("worker %d: UMEM closed with %u of %u frames back in "
			"its pool",
			w->id, u->n_free, u->n_frames);
	}
	ferry_umem_destroy(u);
	if (u == w->umem) {
		w->umem = w->umem2;
		w->umem2 = NULL;
	} else {
		w->umem2 = NULL;
	}
}

void ferry_worker_pq_del(struct ferry_worker *w, struct ferry_pq *pq)
{
	struct ferry_umem *u;
	uint32_t i, j;
	bool last = true;

	for (i = 0, j = 0; i < w->n_pq; i++)
		if (w->pq[i] != pq)
			w->pq[j++] = w->pq[i];
	w->n_pq = j;
	worker_sockets_changed(w);
	if (pq->foreign) {
		/* Its pool, fill and completion rings are the owner's. */
		ferry_xsk_destroy(pq->xsk, false);
		pq->xsk = NULL;
		pq->foreign = 0;
		pq->ret = NULL;
		return;
	}
	/* Completions the kernel already posted go back to the pool first. */
	if (pq->rets) {
		pq_drain_rets(w, pq);
		pq_reap_checked(w, pq);
	} else {
		pq_reap(w, pq);
	}
	u = pq->xsk->umem;
	for (i = 0; i < w->n_pq; i++)
		if (!w->pq[i]->foreign && w->pq[i]->xsk->umem == u)
			last = false;
	ferry_xsk_destroy(pq->xsk, last);
	pq->xsk = NULL;
	pq->rets = NULL;
	if (last)
		umem_close(w, u);
}

int ferry_worker_dq_add(struct ferry_worker *w, struct ferry_pq *pq)
{
	if (w->n_dq >= FERRY_MAX_WQ)
		return -ENOSPC;
	pq->w = w;
	w->dq[w->n_dq++] = pq;
	worker_sockets_changed(w);
	return 0;
}

void ferry_worker_dq_del(struct ferry_worker *w, struct ferry_pq *pq)
{
	uint32_t i, j;

	for (i = 0, j = 0; i < w->n_dq; i++)
		if (w->dq[i] != pq)
			w->dq[j++] = w->dq[i];
	w->n_dq = j;
	worker_sockets_changed(w);
}

/* Every frame on the free stack is tagged as in the pool, and no other. */
static bool umem_consistent(const struct ferry_umem *u)
{
	uint32_t i, pool = 0;

	for (i = 0; i < u->n_free; i++)
		if (u->owner[ferry_umem_frame_idx(u->free[i])] !=
		    FERRY_OWNER_POOL)
			return false;
	for (i = 0; i < u->n_frames; i++)
		pool += u->owner[i] == FERRY_OWNER_POOL;
	return pool == u->n_free;
}

/* Entries the producer has posted and the consumer not yet taken. */
static uint32_t ring_used(const uint32_t *producer, const uint32_t *consumer)
{
	return __atomic_load_n(producer, __ATOMIC_ACQUIRE) -
	       __atomic_load_n(consumer, __ATOMIC_ACQUIRE);
}

static uint32_t xsk_frames_in_rings(const struct ferry_xsk *x)
{
	uint32_t n = ring_used(x->rx.producer, x->rx.consumer) +
		     ring_used(x->tx.producer, x->tx.consumer);

	/* A socket that shares a pool has no fill or completion ring. */
	if (!x->shares_pool)
		n += ring_used(x->fq.producer, x->fq.consumer) +
		     ring_used(x->cq.producer, x->cq.consumer);
	return n;
}

/* Software RSS: the owner's frames in the other workers' sockets and in
 * their hand-back rings (they keep running: a hint, like the rest). */
static uint32_t spread_frames_out(const struct ferry_pq *owner)
{
	uint32_t k, n = 0;

	for (k = 0; k < owner->n_spread; k++) {
		const struct ferry_pq *pq = &owner->spread[k];

		if (pq == owner || !pq->xsk || !pq->ret)
			continue;
		n += xsk_frames_in_rings(pq->xsk);
		n += __atomic_load_n(&pq->ret->prod, __ATOMIC_ACQUIRE) -
		     __atomic_load_n(&pq->ret->cons, __ATOMIC_ACQUIRE);
	}
	return n;
}

void ferry_worker_umem_acct(struct ferry_worker *w, struct ferry_umem_acct *a)
{
	uint32_t i, k;

	memset(a, 0, sizeof(*a));
	a->consistent = true;
	ferry_worker_pause(w);
	if (w->umem) {
		/* Both UMEMs of a worker serving two modes, summed. */
		for (k = 0; k < 2; k++) {
			const struct ferry_umem *u = k ? w->umem2 : w->umem;

			if (!u)
				continue;
			a->frames += u->n_frames;
			a->free += u->n_free;
			if (u->parked)
				a->in_rings += xsk_frames_in_rings(u->parked);
			a->consistent = a->consistent && umem_consistent(u);
		}
		for (i = 0; i < w->n_pq; i++) {
			const struct ferry_pq *pq = w->pq[i];

			if (pq->foreign) /* another worker's UMEM */
				continue;
			a->in_rings += xsk_frames_in_rings(pq->xsk);
			if (pq->rets)
				a->in_rings += spread_frames_out(pq);
		}
		a->elsewhere = (int64_t)a->frames - a->free - a->in_rings;
	}
	ferry_worker_resume(w);
}

void ferry_worker_destroy(struct ferry_worker *w)
{
	if (!w)
		return;
	if (w->started) {
		__atomic_store_n(&w->stop, 1, __ATOMIC_RELEASE);
		worker_wake(w);
		pthread_join(w->thread, NULL);
	}
	while (w->n_pq)
		ferry_worker_pq_del(w, w->pq[w->n_pq - 1]);
	if (w->umem) /* prepared, never bound (ferry_worker_umem_prepare) */
		ferry_umem_destroy(w->umem);
	if (w->umem2) /* cannot outlive its sockets: for the record */
		ferry_umem_destroy(w->umem2);
	close(w->wake_fd);
	free(w);
}

/* The worker pinned to cpu, or NULL. */
struct ferry_worker *ferry_workers_on_cpu(const struct ferry_workers *ws,
					  int cpu)
{
	int i;

	for (i = 0; i < ws->n; i++)
		if (ws->v[i]->cpu == cpu)
			return ws->v[i];
	return NULL;
}
