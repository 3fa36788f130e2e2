/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * xsk.h - one AF_XDP socket bound to one (interface, queue), sharing its
 * worker's UMEM.
 *
 * ferry makes its sockets with the raw socket API rather than libxdp's
 * xsk_socket__create_shared(), because it must control which socket
 * registers the UMEM: the kernel lets other sockets share a UMEM only
 * through a *bound* registering socket, and a socket cannot be unbound. So
 * when the port of the registering socket is deleted while other ports
 * still use the UMEM, the socket is parked (kept bound, out of the XSKMAP,
 * its fill ring untouched) and taken back if that queue is added again.
 * The ring structs and their inline helpers come from <xdp/xsk.h>.
 */
#ifndef FERRY_XSK_H
#define FERRY_XSK_H

#include <stdbool.h>
#include <stdint.h>
#include <xdp/xsk.h>

#include "counters.h"
#include "xsk_mode.h"
#include "umem.h"

struct ferry_xsk_params {
	int ifindex;
	uint32_t queue;
	enum ferry_xsk_mode mode;
	bool need_wakeup;
	uint32_t ring_size; /* fill, completion, RX and TX; power of two */
	uint32_t tx_budget; /* descriptors per TX kick; 0: kernel default */
	bool busy_poll;	    /* drive the queue's NAPI from the worker */
	/* SO_PREFER_BUSY_POLL too: the kernel then leaves the queue's NAPI
	 * to the worker and skips the driver's wakeup on sendto()/poll(),
	 * which only works where that NAPI also sends the TX ring. */
	bool busy_poll_prefer;
	bool zc_no_sg; /* the driver says zero-copy takes no XDP_USE_SG */
	/*
	 * Software RSS: bind next to this socket, on the same (interface,
	 * queue), sharing its buffer pool: the new socket gets RX and TX
	 * rings only, the fill and completion rings stay with `pool`.
	 */
	const struct ferry_xsk *pool;
};

struct ferry_xsk {
	/* hot: data plane (rings are worked by the owning worker only) */
	struct xsk_ring_cons rx;
	struct xsk_ring_prod tx;
	struct xsk_ring_prod fq;
	struct xsk_ring_cons cq;
	int fd;
	uint16_t fill_tag; /* umem owner tag of frames in fq/rx */
	uint16_t tx_tag;   /* umem owner tag of frames in tx/cq */
	/* Fill-ring slots left empty: the socket's share of its UMEM is
	 * ring_size - fill_room frames (worker.c, fill shares). */
	uint32_t fill_room;
	/* cold: control plane */
	struct ferry_umem *umem;
	int slot;
	int ifindex;
	uint32_t queue;
	uint32_t ring_size;
	bool zerocopy;
	bool multibuf; /* bound with XDP_USE_SG: takes descriptor chains */
	bool need_wakeup;
	bool tx_budget_set;    /* the kernel took our TX budget per kick */
	bool busy_poll;	       /* worker polls the NAPI itself (recvfrom) */
	bool busy_poll_prefer; /* with SO_PREFER_BUSY_POLL */
	bool registers_umem;
	bool shares_pool; /* no fill/completion rings of its own */
	void *map[4];
	size_t map_len[4];
	struct xdp_mmap_offsets off;
};

/* What a hot restart hands over of one socket (the rest the fd tells). */
struct ferry_xsk_adopt {
	int fd; /* taken: closed on failure and with the socket */
	int ifindex;
	uint32_t queue;
	uint32_t ring_size;
	int slot; /* its owner tags in the UMEM's pool */
	bool registers_umem;
	bool shares_pool; /* a spread socket: the pool's rings are another's */
	bool need_wakeup;
	bool tx_budget_set;
	bool busy_poll;
	bool busy_poll_prefer;
};

/*
 * Creates and binds a socket. Mode AUTO tries zero-copy, then copy.
 * Returns NULL with errno set: EOPNOTSUPP when zero-copy was demanded and
 * the driver can't, EINVAL when the mode clashes with the UMEM's,
 * EPROTONOSUPPORT when busy polling was asked for and the socket has no
 * NAPI id to poll (copy mode).
 */
struct ferry_xsk *ferry_xsk_create(struct ferry_umem *u,
				   const struct ferry_xsk_params *p);
/*
 * Closes the socket and returns its frames to the pool; the registering
 * socket is parked instead unless the UMEM is going away too.
 */
void ferry_xsk_destroy(struct ferry_xsk *x, bool umem_going);
/*
 * Hot restart. adopt: a bound socket of another process on u (adopted
 * too), its rings mapped again here and their positions read from the
 * shared ring words; NULL with errno (EPROTO: a slot u does not know).
 * forget: unmaps and closes, leaving the frames' tags and the rings as
 * they are: the successor owns them now. resync: the ring positions read
 * again (after a successor that gave the socket back).
 */
struct ferry_xsk *ferry_xsk_adopt(struct ferry_umem *u,
				  const struct ferry_xsk_adopt *a);
void ferry_xsk_forget(struct ferry_xsk *x);
void ferry_xsk_resync(struct ferry_xsk *x);
/* Reads the kernel's XDP_STATISTICS; 0 or -errno. */
int ferry_xsk_stats(const struct ferry_xsk *x, struct ferry_xsk_ctrs *out);
/* Descriptors in the TX ring the kernel has not consumed yet. */
static inline uint32_t ferry_xsk_tx_unsent(const struct ferry_xsk *x)
{
	return *x->tx.producer -
	       __atomic_load_n(x->tx.consumer, __ATOMIC_ACQUIRE);
}

#endif /* FERRY_XSK_H */
