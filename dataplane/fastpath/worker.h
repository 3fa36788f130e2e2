/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * worker.h - a polling thread pinned to one CPU, owning its UMEM and the
 * AF_XDP sockets of every (port, queue) it serves. No ring, counter or
 * frame is shared with another worker.
 *
 * Sockets sharing a UMEM all bind in the mode of the one that registered
 * it, so a worker that serves zero-copy and copy-mode ports holds two
 * UMEMs, one per mode (umem, the first; umem2, the other). A frame
 * forwarded between ports of one UMEM moves by address; one that crosses
 * to the other UMEM is copied into a free frame there (tx_copied).
 *
 * The control thread changes a worker's tables only while the worker is
 * paused at the top of its loop (ferry_worker_pause/resume), so the loop
 * itself takes no lock and reads no shared mutable state per packet.
 */
#ifndef FERRY_WORKER_H
#define FERRY_WORKER_H

#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "apps.h"
#include "counters.h"
#include "ferry_limits.h"
#include "umem.h"
#include "util.h"
#include "xsk.h"

/*
 * RX descriptors taken per socket per pass. 256 matches the copy-mode TX
 * budget per sendto() (XSK_TX_BUDGET), so a full burst costs one kick;
 * measured against 64 in the forwarder-bound placement of bench/run.sh
 * (docs/performance.md).
 */
#define FERRY_BURST 256
/* Fill-ring refills wait until this many slots are free: one bulk write. */
#define FERRY_FILL_BATCH  64
#define FERRY_MAX_WQ	  32	/* sockets one worker serves */
#define FERRY_UMEM_FRAMES 16384 /* 32 MiB of 2 KiB frames per worker */

/*
 * Multi-buffer frames (XDP_USE_SG sockets): a frame longer than one UMEM
 * frame is a chain of descriptors, each but the last with XDP_PKT_CONTD in
 * its options. A chain has at most FERRY_MAX_FRAGS descriptors: the
 * kernel's MAX_SKB_FRAGS (17) plus the head, what copy-mode TX can build
 * into one skb, and more than a 9000-byte frame needs (6).
 */
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD (1 << 0)
#endif
#define FERRY_MAX_FRAGS 18

struct ferry_port;
struct ferry_worker;
struct ferry_dpdk_q;
struct ferry_route_wk;
struct ferry_capture_tap;

/*
 * A generator that sends from the worker through one socket's TX ring: the
 * fallback for kernels without BPF_PROG_RUN live frames (see gen.c). The
 * control side fills it in and installs it while the worker is paused; the
 * worker writes frames from the template and advances `sent`.
 */
struct ferry_txgen {
	uint64_t interval_ns; /* 0: as fast as the ring takes frames */
	uint64_t count;	      /* 0: until removed */
	uint64_t sent;	      /* worker writes, control reads (atomic) */
	uint64_t next_ns;     /* worker: when the next frame is due */
	uint64_t pace_ns; /* worker: earliest next frame at twice the rate */
	uint32_t flows;
	uint32_t flow; /* worker: next flow */
	uint32_t size;
	uint16_t sport_base;
	uint16_t sport_off;  /* byte offset of the UDP source port */
	uint8_t frame[9216]; /* template: up to MTU 9000 and more */
};

/*
 * Software RSS hands frames across workers: a socket that shares another
 * worker's buffer pool receives frames of that worker's UMEM, and gives the
 * ones it does not send back through this ring, which the pool's owner
 * drains before it refills the fill ring. One producer (the receiving
 * worker), one consumer (the owner); as many slots as the UMEM has frames,
 * so a push never finds it full.
 */
struct ferry_ret {
	uint32_t prod __attribute__((aligned(64))); /* producer writes */
	uint32_t cons __attribute__((aligned(64))); /* consumer writes */
	uint32_t mask;
	uint64_t *addr;
	struct ferry_worker *owner; /* woken when it sleeps on a push */
};

/* A spread port's hand-back rings, owned by the port, drained by pq[0]. */
struct ferry_spread_rets {
	uint32_t n;
	struct ferry_ret ret[];
};

/* One (port, queue) as its worker sees it. */
struct ferry_pq {
	/* hot: data plane, written by the owning worker only */
	struct ferry_xsk *xsk;
	struct ferry_pq *out;	   /* egress for XCONNECT/REFLECT; NULL: none */
	struct ferry_txgen *txgen; /* generator sending here; usually NULL */
	struct ferry_dpdk_q *dq;   /* DPDK backend queue; NULL: native */
	uint8_t app;		   /* enum ferry_app */
	uint8_t touched;   /* TX reserved into this batch, not submitted */
	uint8_t tx_app;	   /* the app that began this batch: a tx capture's */
	uint8_t busy_poll; /* kick RX when the ring is empty: runs the NAPI */
	uint8_t foreign;   /* shares another worker's pool (software RSS) */
	uint8_t dpdk;	   /* a DPDK queue (xsk is NULL): port_dpdk.h */
	/* Set by the control thread (worker paused) when this queue's link is
	 * down or its port failed: frames bound here are dropped as
	 * port_down instead of filling a TX ring the kernel won't drain. */
	uint8_t down;
	/* A chain cut at FERRY_MAX_FRAGS: its remaining descriptors, up to
	 * the one without XDP_PKT_CONTD, are dropped as they arrive. */
	uint8_t rx_skip;
	/* A chain's head waits in the RX ring for the rest of it. */
	uint8_t rx_wait;
	/* Complete partial TCP/UDP checksums of frames forwarded from here
	 * (the port's driver hands them over: veth), see csum.h. */
	uint8_t csum_fix;
	uint16_t rport; /* ROUTE: the port's index (the FIB's port numbers) */
	uint32_t tx_batch;     /* descriptors reserved this batch */
	uint32_t max_frame;    /* longest frame the link takes; 0: no limit */
	struct ferry_ret *ret; /* foreign: frames go back here */
	struct ferry_spread_rets *rets; /* pool owner: drains these */
	struct ferry_route_wk *rw;	/* ROUTE: the worker's route tables */
	struct ferry_queue_ctrs c;
	/* Capture taps (capture.h): NULL unless a capture watches this queue;
	 * loaded once per burst. Set and cleared with the worker paused. */
	struct ferry_capture_tap *cap_rx, *cap_tx;
	/* cold: control plane, on its own cache lines */
	_Alignas(64) struct ferry_port *port;
	struct ferry_worker *w;
	/* software RSS (port/spread.c): every socket of the port's one queue,
	 * this one included; NULL and 0 on any other queue */
	struct ferry_pq *spread;
	uint32_t n_spread;
	uint32_t queue;
	struct ferry_queue_ctrs base; /* snapshot taken by `stats reset` */
	struct ferry_xsk_ctrs xbase;
	struct ferry_xsk_ctrs xstart; /* kernel counters when the pq began */
	uint64_t prev_rx, prev_tx;    /* sampler: totals at the last tick */
	double rx_pps, tx_pps;
} __attribute__((aligned(64)));
_Static_assert(offsetof(struct ferry_pq, port) % 64 == 0,
	       "ferry_pq: the control thread's fields share no cache line "
	       "with the worker's");

struct ferry_worker {
	/* hot: data plane */
	struct ferry_pq *pq[FERRY_MAX_WQ];
	uint32_t n_pq;
	uint32_t n_touched;
	struct ferry_pq *touched[FERRY_MAX_WQ];
	struct ferry_umem *umem;
	enum ferry_idle idle;
	uint64_t gen_wait_ns; /* a txgen's next frame is due in this long */
	int pause_req;	      /* control -> worker, atomic */
	int paused;	      /* worker -> control, atomic */
	int stop;	      /* atomic */
	int sleeping;	      /* in ppoll; foreign sockets wake it (atomic) */
	struct ferry_worker_ctrs c;
	/* DPDK backend queues (port_dpdk.h), served after the native ones */
	uint32_t n_dq;
	struct ferry_pq *dq[FERRY_MAX_WQ];
	/* cold: control plane, on its own cache lines */
	_Alignas(64) int id;
	int cpu;
	int wake_fd;
	int pause_depth; /* pauses nest: the outermost resume resumes */
	bool started;
	pthread_t thread;
	/* native sockets, the wake fd, then the DPDK queues' sockets */
	struct pollfd pfd[2 * FERRY_MAX_WQ + 1];
	struct ferry_worker_ctrs base;
	struct ferry_worker_ctrs prev; /* sampler: counters at the last tick */
	double rx_pps, busy_share;
	/* The UMEM of the other bind mode, when the worker serves ports of
	 * both (NULL: one mode, all on umem). Hot paths take a socket's
	 * UMEM from its ferry_xsk, never from here. */
	struct ferry_umem *umem2;
	/* UMEMs this worker closed, and frames missing from their pools once
	 * every socket had given its frames back: the exact leak check. */
	uint64_t umem_closed;
	uint64_t umem_frames_lost;
	/* Sockets a port is about to add here: counted in the fill shares
	 * from the first (ferry_worker_fill_expect). */
	uint32_t fill_expect;
} __attribute__((aligned(64)));
_Static_assert(offsetof(struct ferry_worker, id) % 64 == 0,
	       "ferry_worker: the control thread's fields share no cache line "
	       "with the worker's");

struct ferry_worker *ferry_worker_create(int id, int cpu, enum ferry_idle idle);
/* Stops the thread (if started), closes its sockets and its UMEM. */
void ferry_worker_destroy(struct ferry_worker *w);
int ferry_worker_start(struct ferry_worker *w);

/* Parks the worker at the top of its loop; returns when it is parked.
 * Pauses nest (control thread only): a hot restart holds every worker
 * paused across steps that pause and resume one. */
void ferry_worker_pause(struct ferry_worker *w);
void ferry_worker_resume(struct ferry_worker *w);

/*
 * Fill shares (worker.c): each fill ring of a UMEM holds at most an equal
 * part of half of it. expect: n sockets are about to be added here (one
 * port's queues), counted from now so the first ones do not take the
 * others' part; each add counts one off, 0 ends it (the worker paused).
 * share: the frames pq's fill ring holds at most.
 */
void ferry_worker_fill_expect(struct ferry_worker *w, uint32_t n);
uint32_t ferry_worker_fill_share(const struct ferry_pq *pq);

/*
 * Sockets. Both need the worker paused (or not started). Creating the
 * first socket of a bind mode creates that mode's UMEM on numa_node;
 * removing the last socket of a UMEM frees it. Mode auto takes the UMEM
 * the worker has, and the other mode's when the device refuses that one.
 */
int ferry_worker_pq_add(struct ferry_worker *w, struct ferry_pq *pq,
			const struct ferry_xsk_params *xp, int numa_node,
			bool try_hugepages);
void ferry_worker_pq_del(struct ferry_worker *w, struct ferry_pq *pq);
/* Hot restart: w's UMEM made and faulted in ahead of its first socket. */
int ferry_worker_umem_prepare(struct ferry_worker *w, int numa_node,
			      bool try_hugepages);
/*
 * Hot restart (takeover.h), w paused or not started. pq_adopt: serve an
 * adopted socket (ferry_xsk_adopt) on w's adopted UMEM (a spread socket:
 * on its pool owner's, pq->spread[0], adopted first; pq->ret set by the
 * port). handover_export:
 * the pool's state into the UMEM's shared file, for a successor;
 * handover_import: read back (rings included) after a successor gave them
 * back. forget: every socket and the UMEM dropped without a frame moved:
 * they are the successor's.
 */
int ferry_worker_pq_adopt(struct ferry_worker *w, struct ferry_pq *pq,
			  struct ferry_xsk *x);
void ferry_worker_handover_export(struct ferry_worker *w);
void ferry_worker_handover_import(struct ferry_worker *w);
void ferry_worker_forget(struct ferry_worker *w);
/*
 * Software RSS: a socket for w next to pool's (another worker's), sharing
 * its buffer pool; frames go back through ret. Needs both workers paused,
 * and so does deleting it (ferry_worker_pq_del).
 */
int ferry_worker_pq_add_shared(struct ferry_worker *w, struct ferry_pq *pq,
			       const struct ferry_xsk_params *xp,
			       struct ferry_pq *pool, struct ferry_ret *ret);
int ferry_ret_init(struct ferry_ret *r, uint32_t n_slots);
void ferry_ret_fini(struct ferry_ret *r);
/* DPDK queues (port_dpdk.h): the worker paused; -ENOSPC when full. */
int ferry_worker_dq_add(struct ferry_worker *w, struct ferry_pq *pq);
void ferry_worker_dq_del(struct ferry_worker *w, struct ferry_pq *pq);

/*
 * One pass of the loop: RX bursts, TX submit and kicks, completions, fill
 * rings. Returns the frames received. The worker thread calls it; so do the
 * unit tests, on rings they play the kernel's side of.
 */
uint32_t ferry_worker_poll_once(struct ferry_worker *w);

/*
 * Puts pq's TX ring on the list the end of the pass submits and kicks (and
 * hands to a tx capture, with app as the batch's verdict).
 */
static inline void ferry_worker_touch(struct ferry_worker *w,
				      struct ferry_pq *pq, uint8_t app)
{
	if (!pq->touched) {
		pq->touched = 1;
		pq->tx_app = app;
		w->touched[w->n_touched++] = pq;
	}
}

/*
 * Gives the n frames just peeked at idx of pq's RX ring back to the
 * worker's pool unforwarded: received, and dropped for reason.
 */
static inline void ferry_worker_rx_drop(struct ferry_worker *w,
					struct ferry_pq *pq, uint32_t idx,
					uint32_t n, uint64_t *reason)
{
	struct xsk_ring_cons *rx = &pq->xsk->rx;
	uint64_t bytes = 0;
	uint32_t i, frames = 0;

	/* A frame is counted at its last descriptor: a chain cut by the end
	 * of the burst is counted once, in the pass that sees its end. */
	for (i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(rx, idx + i);

		bytes += d->len;
		frames += !(d->options & XDP_PKT_CONTD);
		ferry_umem_put(pq->xsk->umem, d->addr);
	}
	xsk_ring_cons__release(rx, n);
	ferry_ctr_add(&pq->c.rx_packets, frames);
	ferry_ctr_add(&pq->c.rx_bytes, bytes);
	ferry_ctr_add(reason, frames);
}

/*
 * Descriptors in the frame that starts at idx + i of an RX burst of n:
 * 1 for a single-buffer frame, 0 when the chain goes on past the burst.
 */
static inline uint32_t ferry_rx_frame_descs(const struct xsk_ring_cons *rx,
					    uint32_t idx, uint32_t i,
					    uint32_t n)
{
	uint32_t k;

	for (k = i; k < n; k++)
		if (!(xsk_ring_cons__rx_desc(rx, idx + k)->options &
		      XDP_PKT_CONTD))
			return k - i + 1;
	return 0;
}

/*
 * Where a worker's UMEM frames are, read with the worker paused: in the
 * pool, visible in a ring of one of its sockets (fill, RX, TX, completion;
 * parked socket included), or neither: held by the kernel (a TX skb on its
 * way; in copy mode a buffer it took from the fill ring and kept after an
 * RX drop) or counted twice (the kernel publishes its fill-ring consumer
 * index late), so `elsewhere` is a hint, not a leak check. The leak check
 * is exact at two points: `consistent` (the pool's stack and the owner
 * tags agree), and umem_frames_lost when a UMEM closes.
 */
struct ferry_umem_acct {
	uint32_t frames;
	uint32_t free;
	uint32_t in_rings;
	int64_t elsewhere;
	bool consistent;
};
void ferry_worker_umem_acct(struct ferry_worker *w, struct ferry_umem_acct *a);

/* The workers of one ferryd, one per configured CPU (core/ owns them). */
struct ferry_workers {
	struct ferry_worker *v[FERRY_MAX_WORKERS];
	int n;
	uint64_t cpumask; /* their CPUs */
	enum ferry_idle idle;
	bool try_hugepages; /* UMEMs of new sockets on 2 MB pages */
};

/* The worker pinned to cpu, or NULL. */
struct ferry_worker *ferry_workers_on_cpu(const struct ferry_workers *ws,
					  int cpu);

#endif /* FERRY_WORKER_H */
