/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dpdk_int.h - the DPDK backend's insides, shared by port_dpdk.c and
 * dpdk_pmd.c (control); the worker's side is fastpath/worker_dpdk.h. Only
 * files built with libdpdk's flags include it.
 */
#ifndef FERRY_DPDK_INT_H
#define FERRY_DPDK_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "ferry_abi.h"
#include "port.h"
#include "port_dpdk.h"
#include "worker_dpdk.h"
#include "ferry_err.h"

/*
 * One mbuf pool per worker, shared by every DPDK queue the worker serves:
 * the PMD builds each queue's UMEM over its RX pool, and transmits an mbuf
 * without copying only when it comes from that same pool. With one pool
 * per worker, an xconnect between two DPDK ports forwards mbufs as they
 * are (DPDK's shared_umem would do it too, but this build lacks it).
 * Each queue holds up to a fill ring (2048) and a TX ring (2048) of them,
 * so a pool of 16K serves FERRY_DPDK_QUEUES_PER_WORKER queues with room
 * for bursts in flight. 2^n - 1 is the size rte_mempool packs best.
 */
#define FERRY_DPDK_POOL_MBUFS	     16383
#define FERRY_DPDK_QUEUES_PER_WORKER 4
#define FERRY_DPDK_RING_SIZE	     2048

struct ferry_dpdk {
	bool eal_up;
	int eal_err;	 /* rte_eal_init failed: -errno; EAL can't retry */
	bool hugepages;	 /* EAL memory on hugepages, not --no-huge */
	char prefix[32]; /* --file-prefix */
	struct rte_mempool *pools[FERRY_MAX_WORKERS]; /* by worker id */
	uint32_t pool_queues[FERRY_MAX_WORKERS];      /* DPDK queues using it */
	uint32_t pool_gen;			      /* names stay unique */
	/* each DPDK port's vdev and queues, by port slot (port.h) */
	struct ferry_dpdk_port *port[FERRY_MAX_PORTS];
};

/* AF_XDP sockets the PMD opened for a port (see port_dpdk.c). */
#define FERRY_DPDK_MAX_XSK_FDS (2 * FERRY_MAX_QUEUES)

struct ferry_dpdk_port {
	char vdev[64]; /* net_af_xdp_<port name> */
	uint16_t port_id;
	bool started;
	struct ferry_dpdk_q *dq; /* n_queues of them */
	uint32_t n_xsk;
	int xsk_fd[FERRY_DPDK_MAX_XSK_FDS];
	uint64_t xsk_ino[FERRY_DPDK_MAX_XSK_FDS];
};

/* dpdk_pmd.c: around the PMD. */
struct ferry_port;
/* ferry's classifier as a file the PMD's xdp_prog= can open: an fd. */
int ferry_dpdk_prog_memfd(void);
/* Adopts and configures the program the PMD attached to p's interface. */
int ferry_dpdk_prog_adopt(struct ferry_port *p, struct ferry_err *msg);
/* Takes a dead ferryd's program (fd, from its pin) off p's interface. */
int ferry_dpdk_stale_detach(const struct ferry_port *p, int fd,
			    struct ferry_err *msg);
/* Empties p's XSKMAP slots (the PMD's map outlives its device). */
void ferry_dpdk_xskmap_clear(const struct ferry_port *p);
/* The PMD's sockets: noted around setup, closed after the device. */
void ferry_dpdk_xsk_fds_mark(struct ferry_dpdk_port *dp, bool fresh);
void ferry_dpdk_xsk_fds_close(struct ferry_dpdk_port *dp);
/* LeakSanitizer ignores allocations while on (no-op without ASan). */
void ferry_dpdk_leaks_ignored(bool on);

#endif /* FERRY_DPDK_INT_H */
