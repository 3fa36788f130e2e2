// SPDX-License-Identifier: BSD-2-Clause
/*
 * ring_bench - the worker loop's own cost per packet, without a kernel.
 *
 * Two sockets on fake rings (tests/lib/fake_xsk.h); the program plays the
 * kernel: each round it delivers a full burst into socket a's RX ring and
 * completes everything socket b sent. The worker cross-connects a -> b.
 * Run it under `valgrind --tool=callgrind` to count userspace instructions
 * per packet: the count depends only on the code, not on the machine's load
 * or on how packets happened to batch, so two builds compare exactly.
 *
 *   ring_bench [PACKETS] [BURST] [xconnect|reflect|mixed] [CSUM] [SIZE]
 *
 * mixed: xconnect a -> b with b on the worker's second UMEM (a zero-copy
 * port and a copy-mode port on one worker), so every frame is copied.
 * CSUM: off (default: the port does not complete checksums), plain (it
 * does; TCP/IPv4 frames whose checksum is already correct) or partial
 * (it does; every frame carries a partial checksum to complete). SIZE:
 * frame length, 60 by default.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_RING 2048
#include "csum.h"
#include "fake_xsk.h"

/* A TCP/IPv4 frame of len bytes, checksum partial or complete. */
static void make_frame(uint8_t *f, uint32_t len, bool partial)
{
	struct ferry_csum_seg seg = {.data = f, .len = len};
	uint32_t i, l4len = len - 34;
	uint64_t ps;

	memset(f, 0, len);
	for (i = 0; i < 12; i++)
		f[i] = (uint8_t)(i + 1);
	f[12] = 0x08;
	f[14] = 0x45;
	f[16] = (uint8_t)((len - 14) >> 8);
	f[17] = (uint8_t)(len - 14);
	f[22] = 64;
	f[23] = 6;
	memcpy(f + 26, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
	f[46] = 0x50;
	for (i = 54; i < len; i++)
		f[i] = (uint8_t)(i * 13);
	ps = ferry_csum_add(6 + l4len, f + 26, 8);
	f[50] = (uint8_t)(ferry_csum_fold(ps) >> 8);
	f[51] = (uint8_t)ferry_csum_fold(ps);
	if (!partial)
		ferry_csum_complete(&seg, 1);
}

int main(int argc, char **argv)
{
	struct ferry_umem_params up = {.n_frames = 8192, .numa_node = -1};
	uint64_t packets = argc > 1 ? strtoull(argv[1], NULL, 0) : 1000000;
	uint32_t burst = argc > 2 ? (uint32_t)atoi(argv[2]) : FERRY_BURST;
	bool reflect = argc > 3 && !strcmp(argv[3], "reflect");
	bool mixed = argc > 3 && !strcmp(argv[3], "mixed");
	const char *csum = argc > 4 ? argv[4] : "off";
	uint32_t size = argc > 5 ? (uint32_t)atoi(argv[5]) : 60;
	static uint8_t tmpl[FERRY_FRAME_SIZE];
	static struct fake_xsk a, b;
	static struct ferry_pq pa, pb;
	struct ferry_worker *w;
	struct ferry_umem *u, *u2 = NULL;
	uint64_t done = 0;

	w = ferry_worker_create(0, 0, FERRY_IDLE_BUSY);
	u = ferry_umem_create(&up);
	if (!w || !u) {
		perror("ring_bench");
		return 1;
	}
	w->umem = u;
	if (mixed) {
		u2 = ferry_umem_create(&up);
		if (!u2) {
			perror("ring_bench");
			return 1;
		}
		w->umem2 = u2;
	}
	fake_xsk_init(&a, u, 0);
	fake_xsk_init(&b, mixed ? u2 : u, mixed ? 0 : 1);
	pa.xsk = &a.x;
	pb.xsk = &b.x;
	pa.w = pb.w = w;
	pa.app = reflect ? FERRY_APP_REFLECT : FERRY_APP_XCONNECT;
	pa.out = reflect ? &pa : &pb;
	w->pq[w->n_pq++] = &pa;
	w->pq[w->n_pq++] = &pb;
	pa.csum_fix = strcmp(csum, "off") != 0;
	if (size < 60 || size > FERRY_FRAME_SIZE - FAKE_HEADROOM) {
		fprintf(stderr, "ring_bench: size 60..%d\n",
			FERRY_FRAME_SIZE - FAKE_HEADROOM);
		return 1;
	}
	make_frame(tmpl, size, !strcmp(csum, "partial"));

	ferry_worker_poll_once(w); /* fill rings */
	while (done < packets) {
		uint32_t first = a.rx.producer, k, got;

		got = fake_kernel_rx(&a, burst, size);
		/* The kernel's copy into the UMEM: not the worker's cost. */
		for (k = 0; pa.csum_fix && k < got; k++)
			memcpy(u->area +
				       a.rx.desc[(first + k) & (FAKE_RING - 1)]
					       .addr,
			       tmpl, size);
		done += ferry_worker_poll_once(w);
		fake_kernel_tx(&a, FAKE_RING);
		fake_kernel_tx(&b, FAKE_RING);
	}
	printf("packets %llu tx %llu kicks %llu free %u csum_fixed %llu "
	       "tx_copied %llu\n",
	       (unsigned long long)pa.c.rx_packets,
	       (unsigned long long)(pb.c.tx_packets + pa.c.tx_packets),
	       (unsigned long long)(pb.c.tx_kicks + pa.c.tx_kicks), u->n_free,
	       (unsigned long long)w->c.csum_fixed,
	       (unsigned long long)w->c.tx_copied);
	w->n_pq = 0;
	w->umem = NULL;
	w->umem2 = NULL;
	ferry_umem_destroy(u);
	ferry_umem_destroy(u2);
	ferry_worker_destroy(w);
	return 0;
}
