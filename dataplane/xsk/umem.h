/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * umem.h - a UMEM: the packet memory shared by every AF_XDP socket of one
 * worker, and the worker's pool of free frames in it.
 *
 * A worker owns its UMEMs (one per bind mode it serves: zero-copy and
 * copy-mode sockets cannot share one), so the pool needs no lock: only the
 * owning worker takes and returns frames, and the control thread touches the pool
 * only while that worker is paused. Every frame has an owner tag that says
 * where it is (the pool, or which socket's rings hold it), so that closing
 * a socket gives back exactly the frames the kernel held for it and the
 * frame count always returns to where it started.
 *
 * The memory is a memfd (on hugetlbfs when the host has 2 MB pages), mapped
 * shared, and the pool (free stack and owner tags) lives in the same file,
 * after the frames: a hot restart hands the file to the successor, which
 * maps it and finds every frame where the old daemon left it (takeover.h).
 */
#ifndef FERRY_UMEM_H
#define FERRY_UMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct ferry_xsk;

#define FERRY_FRAME_SIZE  2048
#define FERRY_FRAME_SHIFT 11
_Static_assert((1u << FERRY_FRAME_SHIFT) == FERRY_FRAME_SIZE,
	       "frame shift must match frame size");

/*
 * Owner tags. A socket slot s owns two tags: frames it holds in its fill or
 * RX ring, and frames it holds in its TX or completion ring. Telling them
 * apart lets a socket that must stay bound (see xsk.c) keep its fill ring.
 */
#define FERRY_OWNER_POOL     0xffff
#define FERRY_OWNER_APP	     0xfffe /* in the worker's hands mid-burst */
#define FERRY_OWNER_MAX_SOCK 256
#define FERRY_OWNER_FILL(s)  ((uint16_t)((s) << 1))
#define FERRY_OWNER_TX(s)    ((uint16_t)(((s) << 1) | 1))
_Static_assert(FERRY_OWNER_TX(FERRY_OWNER_MAX_SOCK - 1) < FERRY_OWNER_APP,
	       "owner tags must not collide with the special tags");

struct ferry_umem_params {
	uint32_t n_frames; /* power of two */
	int numa_node;	   /* -1: no preference */
	bool try_hugepages;
};

/*
 * The pool's scalar state, in the shared file after the frames: written by
 * ferry_umem_export() when the owner hands over, read by ferry_umem_adopt().
 * The free stack and owner tags follow it and are live there all along.
 */
#define FERRY_UMEM_MAGIC 0x66727279756d656dull /* "frryumem" */
struct ferry_umem_shared {
	uint64_t magic;
	uint32_t version;
	uint32_t n_frames;
	uint32_t n_free;
	uint32_t frame_size;
	uint64_t area_size;
	uint64_t sock_slots[FERRY_OWNER_MAX_SOCK / 64];
	uint8_t multibuf;
};

struct ferry_umem {
	/* hot: data plane */
	uint8_t *area;
	uint64_t *free;	 /* stack of free frame addresses */
	uint16_t *owner; /* per frame: FERRY_OWNER_* or socket slot */
	uint32_t n_free;
	uint32_t n_frames;
	/* cold: control plane */
	uint64_t size;	   /* the frames: what the sockets register */
	uint64_t map_size; /* the whole file: frames, then the pool */
	int fd;		   /* the memfd */
	uint64_t ino;	   /* its inode: which file a successor was given */
	struct ferry_umem_shared *sh;
	int reg_fd; /* socket that registered the UMEM (-1: none yet) */
	struct ferry_xsk *parked; /* registering socket whose port is gone */
	bool hugepages;
	bool multibuf; /* registered by a socket bound with XDP_USE_SG */
	/* Registered by a zero-copy socket; meaningful once reg_fd >= 0 (the
	 * kernel binds every socket sharing the UMEM in its mode). */
	bool zerocopy;
	int numa_node;
	uint64_t sock_slots[FERRY_OWNER_MAX_SOCK /
			    64]; /* bitmap of used slots */
};

struct ferry_umem *ferry_umem_create(const struct ferry_umem_params *p);
void ferry_umem_destroy(struct ferry_umem *u);

/*
 * Hot restart. export: the pool's scalar state into the shared file (the
 * owning worker paused). adopt: a UMEM from another process's file (fd,
 * taken over: closed with the UMEM), its pool as exported; NULL with errno
 * (EPROTO: not a ferry UMEM of n_frames). forget: unmaps and frees without
 * touching the file's contents, which belong to the successor now.
 */
void ferry_umem_export(struct ferry_umem *u);
void ferry_umem_import(struct ferry_umem *u);
struct ferry_umem *ferry_umem_adopt(int fd, uint32_t n_frames, bool hugepages,
				    int numa_node);
/* adopt in two steps: map (and fault in) the file ahead, while its owner
 * still serves it; then, once it has exported, take the pool's state
 * (0, or -EPROTO: not a ferry UMEM of that size). */
struct ferry_umem *ferry_umem_map(int fd, uint32_t n_frames, bool hugepages,
				  int numa_node);
int ferry_umem_adopted(struct ferry_umem *u);
void ferry_umem_forget(struct ferry_umem *u);

/* Socket slot for owner tags; -ENOSPC when all are taken. */
int ferry_umem_slot_get(struct ferry_umem *u);
void ferry_umem_slot_put(struct ferry_umem *u, int slot);

/* Returns every frame tagged with tag to the pool; returns how many. */
uint32_t ferry_umem_reclaim(struct ferry_umem *u, uint16_t tag);
/* Frames tagged with tag (for accounting). */
uint32_t ferry_umem_count(const struct ferry_umem *u, uint16_t tag);

/* size_t, not u32: indexing with it needs no zero-extension per frame. */
static inline size_t ferry_umem_frame_idx(uint64_t addr)
{
	return (size_t)(addr >> FERRY_FRAME_SHIFT);
}

/*
 * Takes up to n frames from the pool into addrs, tagging them with owner.
 * Returns how many it took.
 */
static inline uint32_t ferry_umem_take(struct ferry_umem *u, uint64_t *addrs,
				       uint32_t n, uint16_t owner)
{
	uint32_t i;

	if (n > u->n_free)
		n = u->n_free;
	for (i = 0; i < n; i++) {
		uint64_t a = u->free[--u->n_free];

		u->owner[ferry_umem_frame_idx(a)] = owner;
		addrs[i] = a;
	}
	return n;
}

/* Gives one frame back to the pool. addr may point inside the frame. */
static inline void ferry_umem_put(struct ferry_umem *u, uint64_t addr)
{
	addr &= ~(uint64_t)(FERRY_FRAME_SIZE - 1);
	u->owner[ferry_umem_frame_idx(addr)] = FERRY_OWNER_POOL;
	u->free[u->n_free++] = addr;
}

static inline void ferry_umem_tag(struct ferry_umem *u, uint64_t addr,
				  uint16_t owner)
{
	u->owner[ferry_umem_frame_idx(addr)] = owner;
}

static inline void *ferry_umem_data(struct ferry_umem *u, uint64_t addr)
{
	return u->area + addr;
}

/*
 * A frame crossing from one UMEM to another (a worker serving zero-copy
 * and copy-mode ports): len bytes at src_addr of src copied into a frame
 * taken from dst's pool, at the same offset in the frame (the headroom the
 * kernel left stays), tagged owner. Returns the new address, or UINT64_MAX
 * when dst's pool is empty. The source frame is the caller's to give back.
 */
static inline uint64_t ferry_umem_copy_in(struct ferry_umem *dst,
					  const struct ferry_umem *src,
					  uint64_t src_addr, uint32_t len,
					  uint16_t owner)
{
	uint64_t a;

	if (!dst->n_free)
		return UINT64_MAX;
	a = dst->free[--dst->n_free] | (src_addr & (FERRY_FRAME_SIZE - 1));
	dst->owner[ferry_umem_frame_idx(a)] = owner;
	memcpy(dst->area + a, src->area + src_addr, len);
	return a;
}

#endif /* FERRY_UMEM_H */
