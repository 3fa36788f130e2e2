/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fake_xsk.h - AF_XDP rings in ordinary memory, with the kernel's side
 * played by the caller: it turns fill entries into RX descriptors and TX
 * descriptors into completions. Lets the unit tests and the ring
 * micro-benchmark run the real worker loop without a socket.
 */
#ifndef FERRY_FAKE_XSK_H
#define FERRY_FAKE_XSK_H

#include <linux/if_xdp.h>
#include <stdint.h>
#include <string.h>

#include "worker.h"

#ifndef FAKE_RING
#define FAKE_RING 64
#endif
#define FAKE_HEADROOM 256 /* where copy mode puts the frame in its chunk */

/* A ring's shared part as the kernel lays it out: indices, flags, entries. */
struct fake_ring {
	uint32_t producer;
	uint32_t consumer;
	uint32_t flags;
	union {
		uint64_t addr[FAKE_RING];
		struct xdp_desc desc[FAKE_RING];
	};
};

struct fake_xsk {
	struct ferry_xsk x;
	struct fake_ring rx, tx, fq, cq;
};

static inline void fake_prod_init(struct xsk_ring_prod *r, struct fake_ring *f)
{
	memset(f, 0, sizeof(*f));
	r->mask = FAKE_RING - 1;
	r->size = FAKE_RING;
	r->producer = &f->producer;
	r->consumer = &f->consumer;
	r->flags = &f->flags;
	r->ring = f->addr;
	r->cached_prod = 0;
	r->cached_cons = FAKE_RING;
}

static inline void fake_cons_init(struct xsk_ring_cons *r, struct fake_ring *f)
{
	memset(f, 0, sizeof(*f));
	r->mask = FAKE_RING - 1;
	r->size = FAKE_RING;
	r->producer = &f->producer;
	r->consumer = &f->consumer;
	r->flags = &f->flags;
	r->ring = f->addr;
	r->cached_prod = 0;
	r->cached_cons = 0;
}

static inline void fake_xsk_init(struct fake_xsk *s, struct ferry_umem *u,
				 int slot)
{
	memset(s, 0, sizeof(*s));
	fake_cons_init(&s->x.rx, &s->rx);
	fake_prod_init(&s->x.tx, &s->tx);
	fake_prod_init(&s->x.fq, &s->fq);
	fake_cons_init(&s->x.cq, &s->cq);
	s->x.fd = -1; /* kicks go nowhere; the counter still moves */
	s->x.umem = u;
	s->x.slot = slot;
	s->x.fill_tag = FERRY_OWNER_FILL(slot);
	s->x.tx_tag = FERRY_OWNER_TX(slot);
	s->x.ring_size = FAKE_RING;
	s->x.multibuf = true; /* bound with XDP_USE_SG */
	/* Copy mode: the kernel always wants a TX kick. */
	s->tx.flags = XDP_RING_NEED_WAKEUP;
}

/*
 * The rigs' worker: created, not started, with a UMEM of n_frames as its
 * first (w->umem); NULL if either cannot be made. fake_worker_destroy
 * takes its sockets out (they are the caller's) and frees both.
 */
static inline struct ferry_worker *fake_worker_create(uint32_t n_frames)
{
	struct ferry_umem_params up = {.n_frames = n_frames, .numa_node = -1};
	struct ferry_worker *w = ferry_worker_create(0, 0, FERRY_IDLE_BUSY);

	if (w && !(w->umem = ferry_umem_create(&up))) {
		ferry_worker_destroy(w);
		w = NULL;
	}
	return w;
}

static inline void fake_worker_destroy(struct ferry_worker *w)
{
	struct ferry_umem *u = w->umem;

	w->n_pq = 0;
	w->umem = NULL;
	ferry_umem_destroy(u);
	ferry_worker_destroy(w);
}

/* Kernel side: n frames arrive; returns how many the fill ring had. */
static inline uint32_t fake_kernel_rx(struct fake_xsk *s, uint32_t n,
				      uint32_t len)
{
	uint32_t i;

	for (i = 0; i < n && s->fq.consumer != s->fq.producer; i++) {
		uint64_t a = s->fq.addr[s->fq.consumer++ & (FAKE_RING - 1)];
		struct xdp_desc *d =
			&s->rx.desc[s->rx.producer++ & (FAKE_RING - 1)];

		d->addr = a + FAKE_HEADROOM;
		d->len = len;
		d->options = 0;
		/* A recognisable payload: the chunk's own address. */
		memcpy(s->x.umem->area + d->addr, &a, sizeof(a));
	}
	return i;
}

/*
 * Kernel side: one multi-buffer frame of len bytes arrives as a chain of
 * descriptors of at most seg bytes each, XDP_PKT_CONTD on all but the last.
 * Byte k of the frame is (uint8_t)(k * 7 + 3). Returns the descriptors
 * written (fewer than needed when the fill ring runs out: the chain is
 * then cut, as no kernel would leave it, for the tests of that case).
 */
static inline uint32_t fake_kernel_rx_chain(struct fake_xsk *s, uint32_t len,
					    uint32_t seg)
{
	uint32_t done = 0, i = 0;

	while (done < len && s->fq.consumer != s->fq.producer) {
		uint64_t a = s->fq.addr[s->fq.consumer++ & (FAKE_RING - 1)];
		struct xdp_desc *d =
			&s->rx.desc[s->rx.producer++ & (FAKE_RING - 1)];
		uint32_t k, n = len - done < seg ? len - done : seg;

		d->addr = a + FAKE_HEADROOM;
		d->len = n;
		d->options = done + n < len ? XDP_PKT_CONTD : 0;
		for (k = 0; k < n; k++)
			s->x.umem->area[d->addr + k] =
				(uint8_t)((done + k) * 7 + 3);
		done += n;
		i++;
	}
	return i;
}

/* Kernel side: sends up to n TX descriptors and completes them. */
static inline uint32_t fake_kernel_tx(struct fake_xsk *s, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n && s->tx.consumer != s->tx.producer; i++) {
		struct xdp_desc *d =
			&s->tx.desc[s->tx.consumer++ & (FAKE_RING - 1)];

		s->cq.addr[s->cq.producer++ & (FAKE_RING - 1)] = d->addr;
	}
	return i;
}

#endif /* FERRY_FAKE_XSK_H */
