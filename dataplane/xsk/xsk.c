// SPDX-License-Identifier: BSD-2-Clause
/* xsk.c - AF_XDP sockets on a shared UMEM, made with the raw socket API. */
#include <errno.h>
#include <linux/if_xdp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "xsk.h"

#ifndef SOL_XDP
#define SOL_XDP 283
#endif
/*
 * Copy-mode TX sends at most 32 descriptors per sendto() by default. Kernels
 * that have this option let a socket raise it; older headers lack the name.
 */
#ifndef XDP_MAX_TX_SKB_BUDGET
#define XDP_MAX_TX_SKB_BUDGET 9
#endif
/* Multi-buffer (Linux 6.6); Debian 12's headers predate it. */
#ifndef XDP_USE_SG
#define XDP_USE_SG (1 << 4)
#endif

enum { MAP_RX, MAP_TX, MAP_FQ, MAP_CQ };

static int ring_opt(int fd, int opt, uint32_t size)
{
	return setsockopt(fd, SOL_XDP, opt, &size, sizeof(size)) ? -errno : 0;
}

static int map_ring(struct ferry_xsk *x, int which,
		    const struct xdp_ring_offset *o, size_t desc_size,
		    off_t pgoff)
{
	size_t len = o->desc + (size_t)x->ring_size * desc_size;
	void *m;

	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		 x->fd, pgoff);
	if (m == MAP_FAILED)
		return -errno;
	x->map[which] = m;
	x->map_len[which] = len;
	return 0;
}

/*
 * Producer rings start with cached_cons one ring ahead of the consumer,
 * consumer rings at the kernel's indices: what <xdp/xsk.h>'s helpers expect.
 */
static void prod_init(struct xsk_ring_prod *r, uint8_t *m,
		      const struct xdp_ring_offset *o, uint32_t size)
{
	r->mask = size - 1;
	r->size = size;
	r->producer = (void *)(m + o->producer);
	r->consumer = (void *)(m + o->consumer);
	r->flags = (void *)(m + o->flags);
	r->ring = m + o->desc;
	r->cached_prod = *r->producer;
	r->cached_cons = *r->consumer + size;
}

static void cons_init(struct xsk_ring_cons *r, uint8_t *m,
		      const struct xdp_ring_offset *o, uint32_t size)
{
	r->mask = size - 1;
	r->size = size;
	r->producer = (void *)(m + o->producer);
	r->consumer = (void *)(m + o->consumer);
	r->flags = (void *)(m + o->flags);
	r->ring = m + o->desc;
	r->cached_prod = *r->producer;
	r->cached_cons = *r->consumer;
}

static void unmap_rings(struct ferry_xsk *x)
{
	int i;

	for (i = 0; i < 4; i++) {
		if (x->map[i])
			munmap(x->map[i], x->map_len[i]);
		x->map[i] = NULL;
	}
}

static int ring_opts(struct ferry_xsk *x)
{
	/* A socket sharing a pool must not have fill/completion rings: the
	 * kernel refuses the bind (EINVAL) if it does. */
	int err = x->shares_pool
			  ? 0
			  : ring_opt(x->fd, XDP_UMEM_FILL_RING, x->ring_size);

	if (!err && !x->shares_pool)
		err = ring_opt(x->fd, XDP_UMEM_COMPLETION_RING, x->ring_size);
	if (!err)
		err = ring_opt(x->fd, XDP_RX_RING, x->ring_size);
	if (!err)
		err = ring_opt(x->fd, XDP_TX_RING, x->ring_size);
	return err;
}

/*
 * Maps the rings and takes the positions from the shared ring words: on a
 * fresh socket the kernel's zeros, on an adopted one (a hot restart) where
 * the previous owner left them, every reserved entry submitted and every
 * peeked one released.
 */
static int map_rings(struct ferry_xsk *x)
{
	struct xdp_mmap_offsets off;
	socklen_t optlen = sizeof(off);
	int err;

	if (getsockopt(x->fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &optlen))
		return -errno;

	err = map_ring(x, MAP_RX, &off.rx, sizeof(struct xdp_desc),
		       XDP_PGOFF_RX_RING);
	if (!err)
		err = map_ring(x, MAP_TX, &off.tx, sizeof(struct xdp_desc),
			       XDP_PGOFF_TX_RING);
	if (!err && !x->shares_pool)
		err = map_ring(x, MAP_FQ, &off.fr, sizeof(uint64_t),
			       XDP_UMEM_PGOFF_FILL_RING);
	if (!err && !x->shares_pool)
		err = map_ring(x, MAP_CQ, &off.cr, sizeof(uint64_t),
			       XDP_UMEM_PGOFF_COMPLETION_RING);
	if (err)
		goto err_unmap;
	x->off = off;
	ferry_xsk_resync(x);
	return 0;

err_unmap:
	unmap_rings(x);
	return err;
}

void ferry_xsk_resync(struct ferry_xsk *x)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	cons_init(&x->rx, x->map[MAP_RX], &x->off.rx, x->ring_size);
	prod_init(&x->tx, x->map[MAP_TX], &x->off.tx, x->ring_size);
	if (x->shares_pool)
		return;
	prod_init(&x->fq, x->map[MAP_FQ], &x->off.fr, x->ring_size);
	cons_init(&x->cq, x->map[MAP_CQ], &x->off.cr, x->ring_size);
}

static int setup_rings(struct ferry_xsk *x)
{
	int err = ring_opts(x);

	return err ? err : map_rings(x);
}

static int register_umem(struct ferry_xsk *x)
{
	struct ferry_umem *u = x->umem;
	struct xdp_umem_reg reg = {
		.addr = (uintptr_t)u->area,
		.len = u->size,
		.chunk_size = FERRY_FRAME_SIZE,
		.headroom = 0,
	};

	if (setsockopt(x->fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)))
		return -errno;
	return 0;
}

/* One try at a socket in one mode: socket, rings, bind. */
static int try_bind(struct ferry_xsk *x, const struct ferry_xsk_params *p,
		    bool registers, uint16_t bind_flags)
{
	struct sockaddr_xdp sxdp = {
		.sxdp_family = AF_XDP,
		.sxdp_ifindex = (uint32_t)p->ifindex,
		.sxdp_queue_id = p->queue,
	};
	int err;

	x->fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (x->fd < 0)
		return -errno;
	if (registers) {
		err = register_umem(x);
		if (err)
			goto err_sock;
		sxdp.sxdp_flags = bind_flags;
	} else {
		/* Sharing sockets inherit mode and wakeup from the UMEM's. */
		sxdp.sxdp_flags = XDP_SHARED_UMEM;
		sxdp.sxdp_shared_umem_fd =
			(uint32_t)(p->pool ? p->pool->fd : x->umem->reg_fd);
	}
	err = setup_rings(x);
	if (err)
		goto err_sock;
	if (bind(x->fd, (struct sockaddr *)&sxdp, sizeof(sxdp))) {
		err = -errno;
		goto err_rings;
	}
	return 0;

err_rings:
	unmap_rings(x);
err_sock:
	close(x->fd);
	x->fd = -1;
	return err;
}

/*
 * Multi-buffer first: frames longer than one UMEM frame arrive as chains
 * of descriptors (XDP_PKT_CONTD) instead of being dropped by the kernel.
 * Copy mode supports it on every driver; in zero-copy only drivers with
 * multi-buffer ZC do, the others refuse the bind (EOPNOTSUPP), and the
 * socket is bound without: single frames only (zc_no_sg: the driver
 * said so through the netdev family, drivers-cfg/drvcaps.c).
 * Sockets sharing the UMEM inherit the choice (the kernel refuses the
 * flag on them).
 */
static int try_bind_sg(struct ferry_xsk *x, const struct ferry_xsk_params *p,
		       uint16_t flags)
{
	int err = try_bind(x, p, true, flags | XDP_USE_SG);

	if (err == -EOPNOTSUPP || err == -EINVAL) {
		int e2 = try_bind(x, p, true, flags);

		if (e2)
			return err;
		x->umem->multibuf = false;
		return 0;
	}
	if (!err)
		x->umem->multibuf = true;
	return err;
}

static bool socket_is_zc(int fd)
{
	struct xdp_options opts = {0};
	socklen_t len = sizeof(opts);

	if (getsockopt(fd, SOL_XDP, XDP_OPTIONS, &opts, &len))
		return false;
	return opts.flags & XDP_OPTIONS_ZEROCOPY;
}

static int bind_socket(struct ferry_xsk *x, const struct ferry_xsk_params *p)
{
	uint16_t wake = p->need_wakeup ? XDP_USE_NEED_WAKEUP : 0;
	bool registers = x->umem->reg_fd < 0;
	int err;

	if (!registers) {
		bool umem_zc = socket_is_zc(x->umem->reg_fd);

		if ((p->mode == FERRY_XSK_ZC && !umem_zc) ||
		    (p->mode == FERRY_XSK_COPY && umem_zc))
			return -EINVAL;
		return try_bind(x, p, false, 0);
	}
	if (p->mode == FERRY_XSK_COPY)
		return try_bind_sg(x, p, XDP_COPY | wake);
	if (p->zc_no_sg) {
		x->umem->multibuf = false;
		err = try_bind(x, p, true, XDP_ZEROCOPY | wake);
	} else {
		err = try_bind_sg(x, p, XDP_ZEROCOPY | wake);
	}
	if (err && p->mode == FERRY_XSK_AUTO)
		err = try_bind_sg(x, p, XDP_COPY | wake);
	/* The kernel says EINVAL or EOPNOTSUPP for "no zero-copy here". */
	if (err == -EINVAL && p->mode == FERRY_XSK_ZC)
		err = -EOPNOTSUPP;
	return err;
}

/*
 * Busy polling runs the queue's NAPI in the worker (recvfrom/sendto) instead
 * of in a softirq on whatever CPU took the interrupt. The socket needs a NAPI
 * id for that, and since Linux 6.13 only a zero-copy bind gives it one.
 */
#define BUSY_POLL_USECS	 20
#define BUSY_POLL_BUDGET 64

static int set_busy_poll(int fd, bool prefer)
{
	int one = 1, usecs = BUSY_POLL_USECS, budget = BUSY_POLL_BUDGET;
	unsigned int napi_id = 0;
	socklen_t len = sizeof(napi_id);

	if (getsockopt(fd, SOL_SOCKET, SO_INCOMING_NAPI_ID, &napi_id, &len) ||
	    !napi_id)
		return -EPROTONOSUPPORT;
	if ((prefer && setsockopt(fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &one,
				  sizeof(one))) ||
	    setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &usecs, sizeof(usecs)) ||
	    setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL_BUDGET, &budget,
		       sizeof(budget)))
		return -errno;
	return 0;
}

struct ferry_xsk *ferry_xsk_create(struct ferry_umem *u,
				   const struct ferry_xsk_params *p)
{
	struct ferry_xsk *x;
	int err;

	if (!p->pool && u->parked && u->parked->ifindex == p->ifindex &&
	    u->parked->queue == p->queue) {
		x = u->parked;
		u->parked = NULL;
		return x;
	}
	x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->umem = u;
	x->ifindex = p->ifindex;
	x->queue = p->queue;
	x->ring_size = p->ring_size;
	x->need_wakeup = p->need_wakeup;
	x->shares_pool = p->pool != NULL;
	x->slot = ferry_umem_slot_get(u);
	if (x->slot < 0) {
		err = x->slot;
		goto err_xsk;
	}
	x->fill_tag = FERRY_OWNER_FILL(x->slot);
	x->tx_tag = FERRY_OWNER_TX(x->slot);

	err = bind_socket(x, p);
	if (err)
		goto err_slot;
	if (u->reg_fd < 0) {
		u->reg_fd = x->fd;
		x->registers_umem = true;
	}
	x->zerocopy = socket_is_zc(x->fd);
	if (x->registers_umem)
		u->zerocopy = x->zerocopy;
	x->multibuf = u->multibuf;
	if (p->busy_poll) {
		err = set_busy_poll(x->fd, p->busy_poll_prefer);
		if (err)
			goto err_bound;
		x->busy_poll = true;
		x->busy_poll_prefer = p->busy_poll_prefer;
	}
	if (p->tx_budget && !x->zerocopy)
		x->tx_budget_set =
			!setsockopt(x->fd, SOL_XDP, XDP_MAX_TX_SKB_BUDGET,
				    &p->tx_budget, sizeof(p->tx_budget));
	return x;

err_bound:
	unmap_rings(x);
	close(x->fd);
	if (x->registers_umem)
		u->reg_fd = -1;
err_slot:
	ferry_umem_slot_put(u, x->slot);
err_xsk:
	free(x);
	errno = -err;
	return NULL;
}

void ferry_xsk_destroy(struct ferry_xsk *x, bool umem_going)
{
	struct ferry_umem *u;

	if (!x)
		return;
	u = x->umem;
	/* Whatever sat in TX or completion is ours again once TX has drained. */
	ferry_umem_reclaim(u, x->tx_tag);
	if (x->registers_umem && !umem_going) {
		/* Its fill ring stays with it: the kernel may still read it. */
		u->parked = x;
		return;
	}
	unmap_rings(x);
	close(x->fd);
	if (x->registers_umem)
		u->reg_fd = -1;
	ferry_umem_reclaim(u, x->fill_tag);
	ferry_umem_slot_put(u, x->slot);
	free(x);
}

struct ferry_xsk *ferry_xsk_adopt(struct ferry_umem *u,
				  const struct ferry_xsk_adopt *a)
{
	struct xdp_options opts = {0};
	socklen_t len = sizeof(opts);
	struct ferry_xsk *x;
	int err;

	if (a->slot < 0 || a->slot >= FERRY_OWNER_MAX_SOCK ||
	    !(u->sock_slots[a->slot / 64] & (1ull << (a->slot % 64))) ||
	    !a->ring_size || (a->ring_size & (a->ring_size - 1))) {
		close(a->fd);
		errno = EPROTO;
		return NULL;
	}
	/* An AF_XDP socket, bound (XDP_OPTIONS answers only on those). */
	if (getsockopt(a->fd, SOL_XDP, XDP_OPTIONS, &opts, &len)) {
		err = errno;
		close(a->fd);
		errno = err;
		return NULL;
	}
	x = calloc(1, sizeof(*x));
	if (!x) {
		close(a->fd);
		errno = ENOMEM;
		return NULL;
	}
	x->fd = a->fd;
	x->umem = u;
	x->slot = a->slot;
	x->fill_tag = FERRY_OWNER_FILL(x->slot);
	x->tx_tag = FERRY_OWNER_TX(x->slot);
	x->ifindex = a->ifindex;
	x->queue = a->queue;
	x->ring_size = a->ring_size;
	x->zerocopy = opts.flags & XDP_OPTIONS_ZEROCOPY;
	x->multibuf = u->multibuf;
	x->need_wakeup = a->need_wakeup;
	x->tx_budget_set = a->tx_budget_set;
	x->busy_poll = a->busy_poll;
	x->busy_poll_prefer = a->busy_poll_prefer;
	x->registers_umem = a->registers_umem;
	x->shares_pool = a->shares_pool;
	/* Since Linux 6.4 the fill and completion rings of a bound socket
	 * can be mapped again (the pool's); before, this fails. */
	err = map_rings(x);
	if (err) {
		close(x->fd);
		free(x);
		errno = -err;
		return NULL;
	}
	if (x->registers_umem) {
		u->reg_fd = x->fd;
		u->zerocopy = x->zerocopy;
	}
	return x;
}

void ferry_xsk_forget(struct ferry_xsk *x)
{
	if (!x)
		return;
	unmap_rings(x);
	close(x->fd);
	free(x);
}

int ferry_xsk_stats(const struct ferry_xsk *x, struct ferry_xsk_ctrs *out)
{
	struct xdp_statistics st = {0};
	socklen_t len = sizeof(st);

	if (getsockopt(x->fd, SOL_XDP, XDP_STATISTICS, &st, &len))
		return -errno;
#define COPY_XSK_CTR(name) out->name = st.name;
	FERRY_XSK_COUNTERS(COPY_XSK_CTR)
#undef COPY_XSK_CTR
	return 0;
}
