// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_worker.c - ring bookkeeping of the worker loop, with the test playing
 * the kernel's side of each ring: it consumes fill entries into RX
 * descriptors, consumes TX descriptors into completions, and checks what
 * the worker did in between (descriptors moved, not data; one submit and
 * one kick per batch; backpressure; frames conserved).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <stdio.h>
#include <unistd.h>

#include "capture.h"
#include "fake_xsk.h"
#include "fib.h"
#include "route.h"
#include "route_rx.h"

#define RING	 FAKE_RING
#define FRAMES	 256
#define HEADROOM FAKE_HEADROOM

struct rig {
	struct ferry_worker *w;
	struct ferry_umem *u;
	struct fake_xsk a, b;
	struct ferry_pq pa, pb;
};

static int rig_setup(void **state)
{
	struct rig *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	r->w = fake_worker_create(FRAMES);
	assert_non_null(r->w);
	r->u = r->w->umem;
	fake_xsk_init(&r->a, r->u, 0);
	fake_xsk_init(&r->b, r->u, 1);
	r->pa.xsk = &r->a.x;
	r->pb.xsk = &r->b.x;
	r->pa.w = r->pb.w = r->w;
	r->w->pq[r->w->n_pq++] = &r->pa;
	r->w->pq[r->w->n_pq++] = &r->pb;
	*state = r;
	return 0;
}

static int rig_teardown(void **state)
{
	struct rig *r = *state;

	fake_worker_destroy(r->w);
	free(r);
	return 0;
}

/* Frames anywhere: pool, fill rings, RX, TX, completion rings. */
static uint32_t frames_accounted(struct rig *r)
{
	uint32_t n = r->u->n_free;
	struct fake_xsk *s[2] = {&r->a, &r->b};
	int i;

	for (i = 0; i < 2; i++)
		n += (s[i]->fq.producer - s[i]->fq.consumer) +
		     (s[i]->rx.producer - s[i]->rx.consumer) +
		     (s[i]->tx.producer - s[i]->tx.consumer) +
		     (s[i]->cq.producer - s[i]->cq.consumer);
	return n;
}

static void test_refill_in_bulk(void **state)
{
	struct rig *r = *state;

	ferry_worker_poll_once(r->w);
	/* Both fill rings full, every frame accounted for. */
	assert_int_equal(r->a.fq.producer, RING);
	assert_int_equal(r->b.fq.producer, RING);
	assert_int_equal(r->u->n_free, FRAMES - 2 * RING);
	assert_int_equal(ferry_umem_count(r->u, r->a.x.fill_tag), RING);
	/* A few consumed: fewer than a burst free, so no refill yet. */
	fake_kernel_rx(&r->a, 3, 60);
	r->pa.app = FERRY_APP_DROP;
	ferry_worker_poll_once(r->w);
	assert_int_equal(r->a.fq.producer, RING);
	assert_int_equal(frames_accounted(r), FRAMES);
}

/* The worker fills a's fill ring, the fake kernel receives 8 frames of
 * 100 bytes on a (their addresses into rx_addr), the worker forwards
 * them. */
static void forward8(struct rig *r, uint64_t rx_addr[8])
{
	uint32_t i;

	ferry_worker_poll_once(r->w);
	assert_int_equal(fake_kernel_rx(&r->a, 8, 100), 8);
	for (i = 0; i < 8; i++)
		rx_addr[i] = r->a.rx.desc[i].addr;
	assert_int_equal(ferry_worker_poll_once(r->w), 8);
}

static void test_xconnect_moves_descriptors(void **state)
{
	struct rig *r = *state;
	uint64_t rx_addr[8];
	uint32_t i;

	r->pa.app = FERRY_APP_XCONNECT;
	r->pa.out = &r->pb;
	forward8(r, rx_addr);

	/* Same addresses, same lengths, payload untouched: no copy. */
	assert_int_equal(r->b.tx.producer, 8);
	for (i = 0; i < 8; i++) {
		uint64_t chunk;

		assert_int_equal(r->b.tx.desc[i].addr, rx_addr[i]);
		assert_int_equal(r->b.tx.desc[i].len, 100);
		memcpy(&chunk, r->u->area + rx_addr[i], sizeof(chunk));
		assert_int_equal(chunk, rx_addr[i] - HEADROOM);
		assert_int_equal(r->u->owner[ferry_umem_frame_idx(rx_addr[i])],
				 r->b.x.tx_tag);
	}
	/* One batch: one submit, one kick. */
	assert_int_equal(r->pb.c.tx_kicks, 1);
	assert_int_equal(r->pa.c.rx_packets, 8);
	assert_int_equal(r->pa.c.rx_bytes, 800);
	assert_int_equal(r->pb.c.tx_packets, 8);
	assert_int_equal(r->pa.c.rx_batches, 1);
	assert_int_equal(r->a.rx.consumer, 8);

	/* Kernel sends them; the next pass reaps them back into the pool. */
	assert_int_equal(fake_kernel_tx(&r->b, RING), 8);
	ferry_worker_poll_once(r->w);
	assert_int_equal(r->b.cq.consumer, 8);
	assert_int_equal(ferry_umem_count(r->u, r->b.x.tx_tag), 0);
	assert_int_equal(frames_accounted(r), FRAMES);
}

static void test_no_kick_without_need_wakeup(void **state)
{
	struct rig *r = *state;

	r->b.tx.flags = 0; /* a zero-copy driver that is already running */
	r->pa.app = FERRY_APP_XCONNECT;
	r->pa.out = &r->pb;
	ferry_worker_poll_once(r->w);
	fake_kernel_rx(&r->a, 16, 60);
	ferry_worker_poll_once(r->w);
	assert_int_equal(r->b.tx.producer, 16);
	assert_int_equal(r->pb.c.tx_kicks, 0);
}

static void test_backpressure_keeps_frames_in_rx(void **state)
{
	struct rig *r = *state;
	uint32_t i;

	r->pa.app = FERRY_APP_XCONNECT;
	r->pa.out = &r->pb;
	ferry_worker_poll_once(r->w);
	/* The kernel stops sending: TX fills up, RX keeps the rest. */
	for (i = 0; i < 4; i++) {
		fake_kernel_rx(&r->a, 32, 60);
		ferry_worker_poll_once(r->w);
	}
	fake_kernel_rx(&r->a, 32, 60);
	ferry_worker_poll_once(r->w);
	assert_int_equal(r->b.tx.producer - r->b.tx.consumer, RING);
	assert_int_equal(r->pa.c.rx_packets, RING);
	assert_int_equal(r->a.rx.producer - r->a.rx.consumer, 32 * 5 - RING);
	assert_int_equal(r->pa.c.drop.tx_ring_full, 0);
	/* Passes that left frames waiting for TX room are counted. */
	assert_true(r->pa.c.tx_backpressure >= 1);
	/* Every pass with unsent TX kicks again (copy mode's EAGAIN). */
	assert_true(r->pb.c.tx_kicks >= 3);
	/* Kernel drains; the waiting frames go out, in order, none lost. */
	while (r->pa.c.rx_packets < 32 * 5) {
		fake_kernel_tx(&r->b, RING);
		ferry_worker_poll_once(r->w);
	}
	fake_kernel_tx(&r->b, RING);
	ferry_worker_poll_once(r->w);
	assert_int_equal(r->pb.c.tx_packets, 32 * 5);
	assert_int_equal(frames_accounted(r), FRAMES);
}

static void test_drop_and_no_egress(void **state)
{
	struct rig *r = *state;

	r->pa.app = FERRY_APP_DROP;
	ferry_worker_poll_once(r->w);
	fake_kernel_rx(&r->a, 10, 60);
	ferry_worker_poll_once(r->w);
	assert_int_equal(r->pa.c.drop.app_drop, 10);
	assert_int_equal(r->b.tx.producer, 0);

	r->pa.app = FERRY_APP_XCONNECT;
	r->pa.out = NULL; /* egress port has no queue on this worker */
	fake_kernel_rx(&r->a, 5, 60);
	ferry_worker_poll_once(r->w);
	assert_int_equal(r->pa.c.drop.no_tx_queue, 5);
	assert_int_equal(r->pa.c.rx_packets, 15);
	assert_int_equal(frames_accounted(r), FRAMES);
}

static void test_mtu_and_link_down(void **state)
{
	struct rig *r = *state;
	uint32_t i;

	r->pa.app = FERRY_APP_XCONNECT;
	r->pa.out = &r->pb;
	r->pb.max_frame = 1518; /* MTU 1500 plus Ethernet and VLAN headers */
	ferry_worker_poll_once(r->w);
	/* Long frames among short ones: only the short ones go out. */
	fake_kernel_rx(&r->a, 3, 1000);
	fake_kernel_rx(&r->a, 2, 1600);
	fake_kernel_rx(&r->a, 1, 1518);
	ferry_worker_poll_once(r->w);
	assert_int_equal(r->pa.c.rx_packets, 6);
	assert_int_equal(r->pa.c.drop.mtu_exceeded, 2);
	assert_int_equal(r->pb.c.tx_packets, 4);
	assert_int_equal(r->b.tx.producer, 4);
	for (i = 0; i < 4; i++)
		assert_true(r->b.tx.desc[i].len <= 1518);
	/* Only long frames: nothing reserved, nothing submitted. */
	fake_kernel_rx(&r->a, 2, 1600);
	ferry_worker_poll_once(r->w);
	assert_int_equal(r->pa.c.drop.mtu_exceeded, 4);
	assert_int_equal(r->b.tx.producer, 4);

	/* Egress link down: counted as port_down, TX left alone. */
	fake_kernel_tx(&r->b, RING);
	r->pb.down = 1;
	fake_kernel_rx(&r->a, 5, 100);
	ferry_worker_poll_once(r->w);
	assert_int_equal(r->pa.c.drop.port_down, 5);
	assert_int_equal(r->b.tx.producer, 4);
	r->pb.down = 0;
	fake_kernel_rx(&r->a, 5, 100);
	ferry_worker_poll_once(r->w);
	assert_int_equal(r->pb.c.tx_packets, 9);
	fake_kernel_tx(&r->b, RING);
	ferry_worker_poll_once(r->w);
	assert_int_equal(frames_accounted(r), FRAMES);
}

/* Occurrences of needle in the file at path. */
static unsigned file_count(const char *path, const char *needle)
{
	static char buf[1 << 16];
	size_t n, len = strlen(needle);
	unsigned hits = 0;
	FILE *fp = fopen(path, "rb");
	char *p;

	assert_non_null(fp);
	n = fread(buf, 1, sizeof(buf), fp);
	fclose(fp);
	for (p = buf; (p = memmem(p, n - (size_t)(p - buf), needle, len));
	     p += len)
		hits++;
	return hits;
}

/* A capture on the ingress of an xconnect: frames too long for the egress
 * go in with the verdict the worker gives them, drop=mtu_exceeded. */
static void test_capture_mtu_verdict(void **state)
{
	static const char *const ports[] = {"pa"};
	char path[] = "/tmp/ferry_test_worker_XXXXXX";
	struct ferry_err msg = {""};
	struct ferry_capture_params cp = {
		.name = "t",
		.ports = ports,
		.n_ports = 1,
		.n_producers = 1,
		.path = path,
		.fd = -1,
		.manual = true,
	};
	struct rig *r = *state;
	struct ferry_capture *c;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	c = ferry_capture_create(&cp, &msg);
	assert_non_null(c);
	r->pa.app = FERRY_APP_XCONNECT;
	r->pa.out = &r->pb;
	r->pb.max_frame = 1518;
	ferry_capture_tap_set(&r->pa.cap_rx,
			      ferry_capture_tap(c, 0, 0, FERRY_CAP_RX));
	ferry_worker_poll_once(r->w);
	fake_kernel_rx(&r->a, 3, 1000);
	fake_kernel_rx(&r->a, 2, 1600);
	ferry_worker_poll_once(r->w);
	assert_int_equal(r->pa.c.drop.mtu_exceeded, 2);
	ferry_capture_tap_set(&r->pa.cap_rx, NULL);
	assert_int_equal(ferry_capture_destroy(c), 0);
	assert_int_equal(file_count(path, "queue="), 5);
	assert_int_equal(file_count(path, "drop=mtu_exceeded"), 2);
	unlink(path);
}

static void test_reflect_swaps_macs(void **state)
{
	struct rig *r = *state;
	const uint8_t dst[6] = {1, 2, 3, 4, 5, 6},
		      src[6] = {7, 8, 9, 10, 11, 12};
	struct xdp_desc *d;
	uint8_t *eth;

	r->pa.app = FERRY_APP_REFLECT;
	r->pa.out = &r->pa;
	ferry_worker_poll_once(r->w);
	fake_kernel_rx(&r->a, 1, 60);
	d = &r->a.rx.desc[0];
	eth = r->u->area + d->addr;
	memcpy(eth, dst, 6);
	memcpy(eth + 6, src, 6);
	ferry_worker_poll_once(r->w);
	assert_int_equal(r->a.tx.producer, 1);
	assert_memory_equal(eth, src, 6);
	assert_memory_equal(eth + 6, dst, 6);
}

static void test_reclaim_by_tag(void **state)
{
	struct rig *r = *state;

	ferry_worker_poll_once(r->w);
	/* Closing socket a gives back exactly what its fill ring held. */
	assert_int_equal(ferry_umem_reclaim(r->u, r->a.x.fill_tag), RING);
	assert_int_equal(r->u->n_free, FRAMES - RING);
	assert_int_equal(ferry_umem_count(r->u, r->b.x.fill_tag), RING);
}

/* The TX ring of s from index first: is it the frame fake_kernel_rx_chain
 * made, of len bytes, as n descriptors in order? */
static void assert_tx_chain(struct rig *r, struct fake_xsk *s, uint32_t first,
			    uint32_t n, uint32_t len)
{
	uint32_t i, k, off = 0;

	(void)r;
	for (i = 0; i < n; i++) {
		const struct xdp_desc *t =
			&s->tx.desc[(first + i) & (RING - 1)];

		assert_int_equal(t->options, i + 1 < n ? XDP_PKT_CONTD : 0);
		for (k = 0; k < t->len; k++)
			assert_int_equal(s->x.umem->area[t->addr + k],
					 (uint8_t)((off + k) * 7 + 3));
		off += t->len;
	}
	assert_int_equal(off, len);
}

static void test_chain_forwarded_whole(void **state)
{
	struct rig *r = *state;

	r->pa.app = FERRY_APP_XCONNECT;
	r->pa.out = &r->pb;
	ferry_worker_poll_once(r->w);
	/* Short, 9000 bytes in 6 pieces, short, 3000 in 2. */
	fake_kernel_rx(&r->a, 1, 60);
	assert_int_equal(fake_kernel_rx_chain(&r->a, 9000, 1792), 6);
	fake_kernel_rx(&r->a, 1, 60);
	assert_int_equal(fake_kernel_rx_chain(&r->a, 3000, 1792), 2);
	assert_int_equal(ferry_worker_poll_once(r->w), 4);
	/* Frames, not descriptors; bytes of whole frames. */
	assert_int_equal(r->pa.c.rx_packets, 4);
	assert_int_equal(r->pa.c.rx_bytes, 60 + 9000 + 60 + 3000);
	assert_int_equal(r->pb.c.tx_packets, 4);
	assert_int_equal(r->pb.c.tx_bytes, 60 + 9000 + 60 + 3000);
	assert_int_equal(r->b.tx.producer, 10);
	assert_int_equal(r->b.tx.desc[0].len, 60);
	assert_tx_chain(r, &r->b, 1, 6, 9000);
	assert_int_equal(r->b.tx.desc[7].len, 60);
	assert_tx_chain(r, &r->b, 8, 2, 3000);
	fake_kernel_tx(&r->b, RING);
	ferry_worker_poll_once(r->w);
	assert_int_equal(frames_accounted(r), FRAMES);
	assert_int_equal(ferry_umem_count(r->u, FERRY_OWNER_APP), 0);
}

static void test_chain_waits_for_room(void **state)
{
	struct rig *r = *state;
	uint32_t i;

	r->pa.app = FERRY_APP_XCONNECT;
	r->pa.out = &r->pb;
	ferry_worker_poll_once(r->w);
	/* TX ring of b full, then room for 4 descriptors only. */
	for (i = 0; i < RING; i++) {
		fake_kernel_rx(&r->a, 1, 60);
		ferry_worker_poll_once(r->w);
	}
	assert_int_equal(r->b.tx.producer, RING);
	fake_kernel_tx(&r->b, 4);
	ferry_worker_poll_once(r->w);
	/* A 6-piece frame does not fit: none of it goes, nothing is lost. */
	assert_int_equal(fake_kernel_rx_chain(&r->a, 9000, 1792), 6);
	ferry_worker_poll_once(r->w);
	assert_int_equal(r->b.tx.producer, RING);
	assert_int_equal(r->a.rx.producer - r->a.rx.consumer, 6);
	assert_int_equal(r->pb.c.tx_packets, RING);
	/* Room again: the whole frame goes, in order. */
	fake_kernel_tx(&r->b, RING);
	ferry_worker_poll_once(r->w);
	assert_int_equal(r->b.tx.producer, RING + 6);
	assert_tx_chain(r, &r->b, RING, 6, 9000);
	assert_int_equal(r->pa.c.rx_packets, RING + 1);
	assert_int_equal(r->pb.c.tx_packets, RING + 1);
	fake_kernel_tx(&r->b, RING);
	ferry_worker_poll_once(r->w);
	assert_int_equal(frames_accounted(r), FRAMES);
}

static void test_chain_mtu_and_bad(void **state)
{
	struct rig *r = *state;

	r->pa.app = FERRY_APP_XCONNECT;
	r->pa.out = &r->pb;
	r->pb.max_frame = 1518;
	ferry_worker_poll_once(r->w);
	/* 9000 towards MTU 1500: mtu_exceeded, once, nothing sent. */
	fake_kernel_rx_chain(&r->a, 9000, 1792);
	fake_kernel_rx(&r->a, 1, 60);
	ferry_worker_poll_once(r->w);
	assert_int_equal(r->pa.c.drop.mtu_exceeded, 1);
	assert_int_equal(r->pa.c.rx_packets, 2);
	assert_int_equal(r->pb.c.tx_packets, 1);
	assert_int_equal(r->b.tx.producer, 1);
	/* A 1600-byte chain to a 1518 limit is too long; 1400 is not. */
	fake_kernel_rx_chain(&r->a, 1400, 1000);
	ferry_worker_poll_once(r->w);
	assert_int_equal(r->b.tx.producer, 3);
	assert_int_equal(r->pa.c.drop.mtu_exceeded, 1);
	/* A piece of a chain past the end of its UMEM frame: chain_bad. */
	r->pb.max_frame = 0;
	fake_kernel_rx_chain(&r->a, 3000, 1792);
	r->a.rx.desc[(r->a.rx.producer - 1) & (RING - 1)].len = 1900;
	ferry_worker_poll_once(r->w);
	assert_int_equal(r->pa.c.drop.chain_bad, 1);
	assert_int_equal(r->b.tx.producer, 3);
	/* An egress without XDP_USE_SG takes no chains. */
	r->b.x.multibuf = false;
	fake_kernel_rx_chain(&r->a, 3000, 1792);
	ferry_worker_poll_once(r->w);
	assert_int_equal(r->pa.c.drop.chain_unsupported, 1);
	assert_int_equal(r->pa.c.rx_packets, 5);
	assert_int_equal(r->pa.c.rx_bytes,
			 9000 + 60 + 1400 + 1792 + 1900 + 3000);
	fake_kernel_tx(&r->b, RING);
	ferry_worker_poll_once(r->w);
	assert_int_equal(frames_accounted(r), FRAMES);
}

static void test_chain_too_long(void **state)
{
	struct rig *r = *state;

	r->pa.app = FERRY_APP_XCONNECT;
	r->pa.out = &r->pb;
	ferry_worker_poll_once(r->w);
	/* 20 pieces of 100 bytes: more than a frame may have. Its pieces
	 * in two bursts: cut at the limit, the tail dropped as it comes. */
	assert_int_equal(fake_kernel_rx_chain(&r->a, 2000, 100), 20);
	ferry_worker_poll_once(r->w);
	assert_int_equal(r->pa.c.drop.chain_too_long, 1);
	assert_int_equal(r->pa.c.rx_packets, 1);
	assert_int_equal(r->b.tx.producer, 0);
	/* A chain still arriving waits: its first 3 pieces, then the rest. */
	fake_kernel_rx(&r->a, 1, 60);
	assert_int_equal(fake_kernel_rx_chain(&r->a, 300, 100), 3);
	r->a.rx.desc[(r->a.rx.producer - 1) & (RING - 1)].options =
		XDP_PKT_CONTD;
	ferry_worker_poll_once(r->w);
	assert_int_equal(r->b.tx.producer, 1);
	assert_int_equal(r->a.rx.producer - r->a.rx.consumer, 3);
	fake_kernel_rx(&r->a, 1, 60); /* the chain's end, as it were */
	ferry_worker_poll_once(r->w);
	assert_int_equal(r->b.tx.producer, 5);
	assert_int_equal(r->b.tx.desc[4].options, 0);
	assert_int_equal(r->pb.c.tx_packets, 2);
	fake_kernel_tx(&r->b, RING);
	ferry_worker_poll_once(r->w);
	assert_int_equal(frames_accounted(r), FRAMES);
}

static void test_chain_drop_counts_frames(void **state)
{
	struct rig *r = *state;

	r->pa.app = FERRY_APP_DROP;
	ferry_worker_poll_once(r->w);
	fake_kernel_rx_chain(&r->a, 9000, 1792);
	fake_kernel_rx(&r->a, 2, 60);
	ferry_worker_poll_once(r->w);
	assert_int_equal(r->pa.c.rx_packets, 3);
	assert_int_equal(r->pa.c.drop.app_drop, 3);
	assert_int_equal(r->pa.c.rx_bytes, 9120);
	assert_int_equal(frames_accounted(r), FRAMES);
}

static void test_chain_reflect(void **state)
{
	struct rig *r = *state;

	r->pa.app = FERRY_APP_REFLECT;
	r->pa.out = &r->pa;
	ferry_worker_poll_once(r->w);
	fake_kernel_rx_chain(&r->a, 4000, 1792);
	ferry_worker_poll_once(r->w);
	assert_int_equal(r->a.tx.producer, 3);
	assert_int_equal(r->pa.c.tx_packets, 1);
	/* MACs swapped in the head only; the rest as it came. */
	assert_int_equal(r->u->area[r->a.tx.desc[0].addr],
			 (uint8_t)(6 * 7 + 3));
	assert_int_equal(r->a.tx.desc[0].options, XDP_PKT_CONTD);
	assert_int_equal(r->a.tx.desc[2].options, 0);
}

static void test_txgen_chains(void **state)
{
	struct rig *r = *state;
	static struct ferry_txgen g;
	uint32_t i, k;

	memset(&g, 0, sizeof(g));
	g.count = 3;
	g.flows = 2;
	g.size = 5000; /* three UMEM frames: 2048 + 2048 + 904 */
	g.sport_base = 1024;
	g.sport_off = 34;
	for (i = 0; i < g.size; i++)
		g.frame[i] = (uint8_t)(i * 7 + 3);
	r->pa.txgen = &g;
	ferry_worker_poll_once(r->w);
	assert_int_equal(r->a.tx.producer, 9);
	assert_int_equal(r->pa.c.tx_packets, 3);
	assert_int_equal(r->pa.c.tx_bytes, 15000);
	for (i = 0; i < 3; i++) {
		const struct xdp_desc *t = &r->a.tx.desc[i * 3];

		for (k = 0; k < 3; k++)
			assert_int_equal(t[k].options,
					 k < 2 ? XDP_PKT_CONTD : 0);
		assert_int_equal(t[0].len + t[1].len + t[2].len, 5000);
		/* The flow's source port in the head, the rest as made. */
		assert_int_equal(r->u->area[t[0].addr + 35],
				 (uint8_t)(1024 + i % 2));
		assert_int_equal(r->u->area[t[2].addr + 903],
				 (uint8_t)(4999 * 7 + 3));
	}
	fake_kernel_tx(&r->a, RING);
	r->pa.txgen = NULL;
	ferry_worker_poll_once(r->w);
	assert_int_equal(frames_accounted(r), FRAMES);
}

/*
 * The route app on the worker, 802.1Q: a tagged frame retagged in place
 * (VLAN 100 of pa to VLAN 200 of pb, same VRF), one popped (to pb
 * untagged: the descriptor 4 bytes further on, 4 shorter) and one pushed
 * (untagged in, to VLAN 200: 4 bytes into the headroom, 4 longer), each
 * out of pb's TX ring; an 802.1ad frame dropped and counted.
 */
static uint8_t *route_rx_frame(struct rig *r, const uint8_t *f, size_t len,
			       uint64_t *addr)
{
	struct xdp_desc *d;

	assert_int_equal(fake_kernel_rx(&r->a, 1, (uint32_t)len), 1);
	d = &r->a.rx.desc[(r->a.rx.producer - 1) & (RING - 1)];
	memcpy(r->u->area + d->addr, f, len);
	*addr = d->addr;
	return r->u->area + d->addr;
}

static size_t route_frame4(uint8_t *f, int vid, uint8_t dst3)
{
	uint8_t *ip;
	unsigned l2 = vid ? 18 : 14;
	uint32_t sum = 0;
	unsigned i;

	memset(f, 0, 128);
	memcpy(f, (uint8_t[6]){2, 0, 0, 0xaa, 0, 0}, 6);
	memcpy(f + 6, (uint8_t[6]){2, 0, 0, 0, 0, 0x99}, 6);
	if (vid) {
		f[12] = 0x81;
		f[14] = (uint8_t)(vid >> 8);
		f[15] = (uint8_t)vid;
	}
	f[l2 - 2] = 0x08;
	ip = f + l2;
	ip[0] = 0x45;
	ip[3] = 84;
	ip[8] = 64;
	ip[9] = 1;
	memcpy(ip + 12, (uint8_t[4]){10, 1, 0, 2}, 4);
	memcpy(ip + 16, (uint8_t[4]){10, dst3, 0, 2}, 4);
	for (i = 0; i < 20; i += 2)
		sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	ip[10] = (uint8_t)(~sum >> 8);
	ip[11] = (uint8_t)~sum;
	return l2 + 84;
}

static void test_route_vlan(void **state)
{
	static const uint8_t nbr[6] = {2, 0, 0, 0, 0x20, 2};
	struct rig *r = *state;
	struct fib *fib = fib_create(NULL);
	struct route_port ports[2] = {0}, vlans[2] = {0};
	struct route_vlan_map vmap;
	struct route_ctx ctx;
	struct ferry_route_wk *k = aligned_alloc(64, sizeof(*k));
	struct fib_nh_info in = {.port = ROUTE_VLAN_BASE + 1,
				 .flags = FIB_NH_F_NEIGH};
	uint8_t f[256], *data;
	const struct xdp_desc *t;
	uint64_t addr;
	size_t len;
	unsigned i;
	int nh_v200, nh_pb;

	assert_non_null(fib);
	assert_non_null(k);
	memcpy(in.mac, nbr, 6);
	nh_v200 = fib_nh_alloc(fib, &in);
	in.port = 1;
	nh_pb = fib_nh_alloc(fib, &in);
	assert_int_equal(fib_table_open(fib, 1), 0);
	assert_int_equal(fib4_add_in(fib, 1, 0x0a020000, 16, (uint32_t)nh_v200),
			 0);
	assert_int_equal(fib4_add_in(fib, 1, 0x0a030000, 16, (uint32_t)nh_pb),
			 0);
	assert_int_equal(fib4_add(fib, 0x0a040000, 16, (uint32_t)nh_v200), 0);
	for (i = 0; i < 2; i++) {
		ports[i].routed = 1;
		ports[i].mtu = 1500;
		ports[i].phys = (uint16_t)i;
		ports[i].mac[5] = (uint8_t)(0x10 + i);
		vlans[i] = ports[i];
		vlans[i].vid = i ? 200 : 100;
		vlans[i].table = 1;
	}
	assert_int_equal(route_vlan_map_build(&vmap, vlans, 2), 0);
	ctx = (struct route_ctx){.fib = fib_dp(fib),
				 .ports = ports,
				 .n_ports = 2,
				 .vlans = vlans,
				 .n_vlans = 2,
				 .vmap = &vmap};
	memset(k, 0, sizeof(*k));
	k->ctx = &ctx;
	k->fib_slot = fib_reader_register(fib);
	k->out[0] = &r->pa;
	k->out[1] = &r->pb;
	r->pa.app = r->pb.app = FERRY_APP_ROUTE;
	r->pa.rw = r->pb.rw = k;
	r->pa.rport = 0;
	r->pb.rport = 1;
	ferry_worker_poll_once(r->w); /* the fill rings */

	/* VLAN 100 -> VLAN 200: retagged where it is */
	len = route_frame4(f, 100, 2);
	data = route_rx_frame(r, f, len, &addr);
	ferry_worker_poll_once(r->w);
	assert_int_equal(r->b.tx.producer, 1);
	t = &r->b.tx.desc[0];
	assert_int_equal(t->addr, addr);
	assert_int_equal(t->len, len);
	assert_memory_equal(data, nbr, 6);
	assert_int_equal(data[12] << 8 | data[13], 0x8100);
	assert_int_equal(data[14] << 8 | data[15], 200);
	assert_int_equal(data[18 + 8], 63);

	/* VLAN 100 -> pb untagged: popped */
	len = route_frame4(f, 100, 3);
	data = route_rx_frame(r, f, len, &addr);
	ferry_worker_poll_once(r->w);
	assert_int_equal(r->b.tx.producer, 2);
	t = &r->b.tx.desc[1];
	assert_int_equal(t->addr, addr + 4);
	assert_int_equal(t->len, len - 4);
	assert_memory_equal(data + 4, nbr, 6);
	assert_int_equal(data[4 + 12] << 8 | data[4 + 13], 0x0800);
	assert_int_equal(data[4 + 14], 0x45);

	/* untagged (main table) -> VLAN 200: pushed into the headroom */
	len = route_frame4(f, 0, 4);
	data = route_rx_frame(r, f, len, &addr);
	ferry_worker_poll_once(r->w);
	assert_int_equal(r->b.tx.producer, 3);
	t = &r->b.tx.desc[2];
	assert_int_equal(t->addr, addr - 4);
	assert_int_equal(t->len, len + 4);
	assert_memory_equal(data - 4, nbr, 6);
	assert_int_equal(data[-4 + 12] << 8 | data[-4 + 13], 0x8100);
	assert_int_equal(data[-4 + 14] << 8 | data[-4 + 15], 200);
	assert_int_equal(data[-4 + 16] << 8 | data[-4 + 17], 0x0800);

	/* 802.1ad outer tag: dropped, counted */
	len = route_frame4(f, 100, 2);
	f[12] = 0x88;
	f[13] = 0xa8;
	route_rx_frame(r, f, len, &addr);
	ferry_worker_poll_once(r->w);
	assert_int_equal(r->b.tx.producer, 3);
	assert_int_equal(k->c.n[ROUTE_R_vlan_qinq], 1);
	assert_int_equal(k->c.n[ROUTE_R_routed], 3);

	r->pa.app = r->pb.app = FERRY_APP_NONE;
	r->pa.rw = r->pb.rw = NULL;
	fib_reader_unregister(fib, k->fib_slot);
	free(k);
	fib_destroy(fib);
}

/*
 * A worker serving a zero-copy and a copy-mode port: a on the first UMEM,
 * b on the worker's second (umem2). Frames between them are copied.
 */
static int mixed_setup(void **state)
{
	struct ferry_umem_params up = {.n_frames = FRAMES, .numa_node = -1};
	struct rig *r;

	rig_setup(state);
	r = *state;
	r->w->umem2 = ferry_umem_create(&up);
	assert_non_null(r->w->umem2);
	fake_xsk_init(&r->b, r->w->umem2, 0);
	return 0;
}

static int mixed_teardown(void **state)
{
	struct rig *r = *state;
	struct ferry_umem *u2 = r->w->umem2;

	r->w->umem2 = NULL;
	ferry_umem_destroy(u2);
	return rig_teardown(state);
}

/* Frames of s's UMEM: its pool and s's rings (each UMEM has one socket). */
static uint32_t umem_accounted(const struct fake_xsk *s)
{
	return s->x.umem->n_free + (s->fq.producer - s->fq.consumer) +
	       (s->rx.producer - s->rx.consumer) +
	       (s->tx.producer - s->tx.consumer) +
	       (s->cq.producer - s->cq.consumer);
}

static void test_mixed_copies_across_umems(void **state)
{
	struct rig *r = *state;
	struct ferry_umem *u2 = r->w->umem2;
	uint64_t rx_addr[8];
	uint32_t i;

	r->pa.app = r->pb.app = FERRY_APP_XCONNECT;
	r->pa.out = &r->pb;
	r->pb.out = &r->pa;
	forward8(r, rx_addr);
	/* Copies in frames of b's UMEM, at the same offset, same bytes; the
	 * received frames back in a's pool (and its fill ring) at once. */
	assert_int_equal(r->b.tx.producer, 8);
	for (i = 0; i < 8; i++) {
		uint64_t chunk, t = r->b.tx.desc[i].addr;

		assert_int_equal(r->b.tx.desc[i].len, 100);
		assert_int_equal(t & (FERRY_FRAME_SIZE - 1), HEADROOM);
		memcpy(&chunk, u2->area + t, sizeof(chunk));
		assert_int_equal(chunk, rx_addr[i] - HEADROOM);
		assert_int_equal(u2->owner[ferry_umem_frame_idx(t)],
				 r->b.x.tx_tag);
		assert_int_not_equal(
			r->u->owner[ferry_umem_frame_idx(rx_addr[i])],
			r->b.x.tx_tag);
	}
	assert_int_equal(ferry_umem_count(r->u, r->a.x.tx_tag), 0);
	assert_int_equal(r->pb.c.tx_packets, 8);
	assert_int_equal(r->pb.c.tx_bytes, 800);
	assert_int_equal(r->pb.c.tx_copied, 8);
	assert_int_equal(r->w->c.tx_copied, 8);
	assert_int_equal(r->pb.c.tx_kicks, 1);
	assert_int_equal(umem_accounted(&r->a), FRAMES);
	assert_int_equal(umem_accounted(&r->b), FRAMES);
	/* Sent: completions go back to b's pool, not a's. */
	fake_kernel_tx(&r->b, RING);
	ferry_worker_poll_once(r->w);
	assert_int_equal(ferry_umem_count(u2, r->b.x.tx_tag), 0);
	assert_int_equal(umem_accounted(&r->b), FRAMES);

	/* The other way, a chain among single frames: each piece copied. */
	fake_kernel_rx(&r->b, 1, 60);
	assert_int_equal(fake_kernel_rx_chain(&r->b, 3000, 1792), 2);
	assert_int_equal(ferry_worker_poll_once(r->w), 2);
	assert_int_equal(r->a.tx.producer, 3);
	assert_int_equal(r->a.tx.desc[0].len, 60);
	assert_tx_chain(r, &r->a, 1, 2, 3000);
	assert_int_equal(r->pa.c.tx_copied, 2);
	assert_int_equal(r->w->c.tx_copied, 10);
	assert_int_equal(r->pb.c.rx_packets, 2);
	fake_kernel_tx(&r->a, RING);
	ferry_worker_poll_once(r->w);
	assert_int_equal(umem_accounted(&r->a), FRAMES);
	assert_int_equal(umem_accounted(&r->b), FRAMES);
	assert_int_equal(ferry_umem_count(r->u, FERRY_OWNER_APP), 0);
	assert_int_equal(ferry_umem_count(u2, FERRY_OWNER_APP), 0);
}

static void test_mixed_no_free_frame(void **state)
{
	struct rig *r = *state;
	struct ferry_umem *u2 = r->w->umem2;
	uint64_t held[FRAMES];
	uint32_t n_held;

	r->pa.app = FERRY_APP_XCONNECT;
	r->pa.out = &r->pb;
	ferry_worker_poll_once(r->w);
	/* b's pool empty (its frames held elsewhere) but for 3. */
	n_held = ferry_umem_take(u2, held, u2->n_free - 3, FERRY_OWNER_APP);
	assert_int_equal(fake_kernel_rx(&r->a, 5, 100), 5);
	assert_int_equal(ferry_worker_poll_once(r->w), 5);
	assert_int_equal(r->b.tx.producer, 3);
	assert_int_equal(r->pb.c.tx_copied, 3);
	assert_int_equal(r->pa.c.drop.tx_copy_nofree, 2);
	/* Conservation: received = sent + dropped by reason. */
	assert_int_equal(r->pa.c.rx_packets,
			 r->pb.c.tx_packets + r->pa.c.drop.tx_copy_nofree);
	/* Every one of a's frames is back: none went to b. */
	assert_int_equal(umem_accounted(&r->a), FRAMES);
	while (n_held)
		ferry_umem_put(u2, held[--n_held]);
	fake_kernel_tx(&r->b, RING);
	ferry_worker_poll_once(r->w);
	assert_int_equal(umem_accounted(&r->b), FRAMES);
}

static void test_counter_names(void **state)
{
	static const char *const q[] = {
#define NAME(n) #n,
		FERRY_QUEUE_COUNTERS(NAME) FERRY_XSK_COUNTERS(NAME)
#undef NAME
	};
	static const char *const want[] = {
		"rx_packets",
		"rx_bytes",
		"tx_packets",
		"tx_bytes",
		"tx_kicks",
		"rx_batches",
		"tx_backpressure",
		"tx_copied",
		"rx_dropped",
		"rx_invalid_descs",
		"tx_invalid_descs",
		"rx_ring_full",
		"rx_fill_ring_empty_descs",
		"tx_ring_empty_descs",
	};
	uint64_t c = 0;
	size_t i;

	(void)state;
	/* PRODUCT.md fixes these names: scripts read them. */
	assert_int_equal(sizeof(q) / sizeof(q[0]),
			 sizeof(want) / sizeof(want[0]));
	for (i = 0; i < sizeof(q) / sizeof(q[0]); i++)
		assert_string_equal(q[i], want[i]);
	ferry_ctr_add(&c, 5);
	ferry_ctr_add(&c, 7);
	assert_int_equal(ferry_ctr_read(&c), 12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_refill_in_bulk, rig_setup,
						rig_teardown),
		cmocka_unit_test_setup_teardown(test_xconnect_moves_descriptors,
						rig_setup, rig_teardown),
		cmocka_unit_test_setup_teardown(
			test_no_kick_without_need_wakeup, rig_setup,
			rig_teardown),
		cmocka_unit_test_setup_teardown(
			test_backpressure_keeps_frames_in_rx, rig_setup,
			rig_teardown),
		cmocka_unit_test_setup_teardown(test_drop_and_no_egress,
						rig_setup, rig_teardown),
		cmocka_unit_test_setup_teardown(test_mtu_and_link_down,
						rig_setup, rig_teardown),
		cmocka_unit_test_setup_teardown(test_capture_mtu_verdict,
						rig_setup, rig_teardown),
		cmocka_unit_test_setup_teardown(test_reflect_swaps_macs,
						rig_setup, rig_teardown),
		cmocka_unit_test_setup_teardown(test_reclaim_by_tag, rig_setup,
						rig_teardown),
		cmocka_unit_test_setup_teardown(test_chain_forwarded_whole,
						rig_setup, rig_teardown),
		cmocka_unit_test_setup_teardown(test_chain_waits_for_room,
						rig_setup, rig_teardown),
		cmocka_unit_test_setup_teardown(test_chain_mtu_and_bad,
						rig_setup, rig_teardown),
		cmocka_unit_test_setup_teardown(test_chain_too_long, rig_setup,
						rig_teardown),
		cmocka_unit_test_setup_teardown(test_chain_drop_counts_frames,
						rig_setup, rig_teardown),
		cmocka_unit_test_setup_teardown(test_chain_reflect, rig_setup,
						rig_teardown),
		cmocka_unit_test_setup_teardown(test_txgen_chains, rig_setup,
						rig_teardown),
		cmocka_unit_test_setup_teardown(test_route_vlan, rig_setup,
						rig_teardown),
		cmocka_unit_test_setup_teardown(test_mixed_copies_across_umems,
						mixed_setup, mixed_teardown),
		cmocka_unit_test_setup_teardown(test_mixed_no_free_frame,
						mixed_setup, mixed_teardown),
		cmocka_unit_test(test_counter_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
