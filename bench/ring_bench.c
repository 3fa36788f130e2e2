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
 *   ring_bench [PACKETS] [BURST] [reflect]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_RING 2048
#include "fake_xsk.h"

int main(int argc, char **argv)
{
	struct ferry_umem_params up = {.n_frames = 8192, .numa_node = -1};
	uint64_t packets = argc > 1 ? strtoull(argv[1], NULL, 0) : 1000000;
	uint32_t burst = argc > 2 ? (uint32_t)atoi(argv[2]) : FERRY_BURST;
	bool reflect = argc > 3 && !strcmp(argv[3], "reflect");
	static struct fake_xsk a, b;
	static struct ferry_pq pa, pb;
	struct ferry_worker *w;
	struct ferry_umem *u;
	uint64_t done = 0;

	w = ferry_worker_create(0, 0, FERRY_IDLE_BUSY);
	u = ferry_umem_create(&up);
	if (!w || !u) {
		perror("ring_bench");
		return 1;
	}
	w->umem = u;
	fake_xsk_init(&a, u, 0);
	fake_xsk_init(&b, u, 1);
	pa.xsk = &a.x;
	pb.xsk = &b.x;
	pa.w = pb.w = w;
	pa.app = reflect ? FERRY_APP_REFLECT : FERRY_APP_XCONNECT;
	pa.out = reflect ? &pa : &pb;
	w->pq[w->n_pq++] = &pa;
	w->pq[w->n_pq++] = &pb;

	ferry_worker_poll_once(w); /* fill rings */
	while (done < packets) {
		fake_kernel_rx(&a, burst, 60);
		done += ferry_worker_poll_once(w);
		fake_kernel_tx(&a, FAKE_RING);
		fake_kernel_tx(&b, FAKE_RING);
	}
	printf("packets %llu tx %llu kicks %llu free %u\n",
	       (unsigned long long)pa.c.rx_packets,
	       (unsigned long long)(pb.c.tx_packets + pa.c.tx_packets),
	       (unsigned long long)(pb.c.tx_kicks + pa.c.tx_kicks), u->n_free);
	w->n_pq = 0;
	w->umem = NULL;
	ferry_umem_destroy(u);
	ferry_worker_destroy(w);
	return 0;
}
