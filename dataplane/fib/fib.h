/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fib.h - the router's forwarding table: IPv4 and IPv6 longest-prefix match
 * and the next-hop table the matches point into.
 *
 * Structure. Both families use the same multibit trie: a first level of
 * 2^24 entries indexed by the address's first 24 bits ("tbl24", DIR-24-8),
 * then groups of 256 entries ("tbl8") indexed by each following byte. IPv4
 * needs at most one group (bits 24-31); IPv6 up to thirteen (bits 24-127).
 * An entry is one 32-bit word: VALID, EXT (the value is a group index, go
 * one level down), the depth of the prefix that wrote it (so a longer
 * prefix is never overwritten by a shorter one and a delete knows which
 * entries were its own), and a 22-bit value: the next-hop id or the group.
 * A lookup is one load for every IPv4 route up to /24, two beyond; IPv6 is
 * one load plus one per byte past the 24th of the longest matching prefix.
 *
 * Next hops. An entry's value is an index into the next-hop table (id 0 is
 * "no route", so an empty entry needs no test). A next hop is one 64-bit
 * word: the neighbour's MAC, the ferry egress port and flags; or, for a
 * multipath group, the count of paths, whose member ids follow it in the
 * table. A path is picked by the flow hash modulo the count: stable per
 * flow for as long as the group is.
 *
 * Updates never stop a reader (per-entry atomics, with a grace period for
 * memory that is recycled). One writer (the control thread) changes the
 * table in place: every entry a route covers is a single aligned 32-bit
 * store, every next hop a single 64-bit store, so a reader sees each entry
 * either before or after the change, never torn. During an update spanning
 * many entries readers may see some old and some new entries: each lookup
 * still returns a route that was in the table at some instant of the
 * update. A new group is filled before the store that links it (release),
 * and a reader's load of a linking entry is an acquire, so nobody follows a
 * link into an unfilled group. What needs care is reuse: a group unlinked
 * by a delete (or a next-hop run freed) may still be read by a worker that
 * loaded the link just before. So unlinked memory is retired with the
 * current epoch and only reused once every registered reader has announced
 * a quiescent state (fib_quiescent(), once per batch: between batches a
 * worker holds no pointer into the table) at a later epoch; fib_reclaim()
 * on the control thread does the reuse. Readers that stop polling go
 * offline (fib_reader_offline()) so that they do not hold reclamation up.
 * A table pointer swap (build a copy, swap, wait) was the alternative: it
 * costs two full tables (128 MB+) and a rebuild per burst of changes for a
 * routing daemon's million routes; in-place atomics cost nothing at lookup.
 *
 * Threads: the fib_* functions that change anything are for one control
 * thread; the inline lookups and fib_quiescent() are for any number of
 * workers, lock-free, through the struct fib_dp view.
 */
#ifndef FERRY_FIB_H
#define FERRY_FIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fib;

struct fib_params {
	uint32_t v4_groups; /* tbl8 groups for IPv4 prefixes longer than /24 */
	uint32_t v6_groups; /* tbl8 groups for IPv6 */
	uint32_t max_nh;    /* next-hop table slots (id 0 is reserved) */
	uint32_t max_readers;	/* worker threads that may look up */
	uint32_t vrf_v4_groups; /* tbl8 groups of each other table (VRF) */
	uint32_t vrf_v6_groups;
};

/* Zero fields take these. */
#define FIB_DEFAULT_V4_GROUPS	  65536
#define FIB_DEFAULT_V6_GROUPS	  1048576
#define FIB_DEFAULT_MAX_NH	  65536
#define FIB_DEFAULT_MAX_READERS	  64
#define FIB_DEFAULT_VRF_V4_GROUPS 4096
#define FIB_DEFAULT_VRF_V6_GROUPS 16384

/*
 * Tables. Table 0 is the main table, always there; tables 1 ..
 * FIB_TABLES - 1 (a VRF's each, the route app says which) are opened with
 * fib_table_open() and stay until fib_destroy(). Each has its own tries
 * (its tbl24s are address space untouched until routes are written, and
 * smaller group pools, FIB_DEFAULT_VRF_*); the next hops, the readers and
 * the grace periods are the FIB's, shared by every table. The functions
 * without _in are table 0's.
 */
#define FIB_TABLES 16

#define FIB_NH_NONE   0u     /* lookup result: no route */
#define FIB_MP_MAX    64     /* paths in one multipath group */
#define FIB_PORT_NONE 0x7ffu /* next hop with no ferry port */

/* Next-hop flags. */
#define FIB_NH_F_NEIGH	   0x01u /* the MAC is the neighbour's: forward */
#define FIB_NH_F_LOCAL	   0x02u /* for the host: hand to the kernel */
#define FIB_NH_F_DROP	   0x04u /* blackhole / unreachable / prohibit */
#define FIB_NH_F_CONNECTED 0x08u /* on-link: the neighbour is the dst */
#define FIB_NH_F_GROUP	   0x10u /* internal: a multipath group */

struct fib_nh_info {
	uint16_t port; /* ferry egress port index, FIB_PORT_NONE if none */
	uint8_t mac[6];
	uint8_t flags; /* FIB_NH_F_* but GROUP */
};

/* Zero params (or NULL) take the defaults. NULL and errno on failure. */
struct fib *fib_create(const struct fib_params *p);
void fib_destroy(struct fib *fib);

/* Routes: prefix is masked to len; adding an existing prefix replaces its
 * next hop. IPv4 in host byte order, IPv6 as the 16 bytes of the address.
 * -EINVAL (bad len or nh), -ENOSPC (no group left, even after reclaim),
 * -ENOMEM, -ENOENT (del of a prefix that is not there). */
int fib4_add(struct fib *fib, uint32_t prefix, unsigned len, uint32_t nh);
int fib4_del(struct fib *fib, uint32_t prefix, unsigned len);
int fib6_add(struct fib *fib, const uint8_t prefix[16], unsigned len,
	     uint32_t nh);
int fib6_del(struct fib *fib, const uint8_t prefix[16], unsigned len);
/* The next hop of an exact prefix, FIB_NH_NONE if absent (control side). */
uint32_t fib4_get(const struct fib *fib, uint32_t prefix, unsigned len);
uint32_t fib6_get(const struct fib *fib, const uint8_t prefix[16],
		  unsigned len);
/* A 32-bit word the caller keeps with a route (e.g. the kernel's metric),
 * 0 when the route is added: NULL if the route is not there. family 4
 * takes the prefix as 4 bytes in network order. */
uint32_t *fib_route_tag(struct fib *fib, int family, const uint8_t *prefix,
			unsigned len);
/* Every route of a family (4 or 6), in no order, the prefix as 16 bytes
 * (IPv4: the first 4, network order); fn returning non-zero
 * stops the walk and is returned. */
typedef int (*fib_walk_fn)(void *arg, const uint8_t prefix[16], unsigned len,
			   uint32_t nh);
int fib_walk(const struct fib *fib, int family, fib_walk_fn fn, void *arg);

/* Table t (0 or -errno: -EINVAL past FIB_TABLES, -ENOMEM); idempotent. */
int fib_table_open(struct fib *fib, unsigned t);
bool fib_table_is_open(const struct fib *fib, unsigned t);
/* The same as above, in table t: -ENOENT (adds, deletes) or nothing
 * (gets, walks) when t is not open. */
int fib4_add_in(struct fib *fib, unsigned t, uint32_t prefix, unsigned len,
		uint32_t nh);
int fib4_del_in(struct fib *fib, unsigned t, uint32_t prefix, unsigned len);
uint32_t fib4_get_in(const struct fib *fib, unsigned t, uint32_t prefix,
		     unsigned len);
int fib6_add_in(struct fib *fib, unsigned t, const uint8_t prefix[16],
		unsigned len, uint32_t nh);
int fib6_del_in(struct fib *fib, unsigned t, const uint8_t prefix[16],
		unsigned len);
uint32_t fib6_get_in(const struct fib *fib, unsigned t,
		     const uint8_t prefix[16], unsigned len);
uint32_t *fib_route_tag_in(struct fib *fib, unsigned t, int family,
			   const uint8_t *prefix, unsigned len);
int fib_walk_in(const struct fib *fib, unsigned t, int family, fib_walk_fn fn,
		void *arg);

/* Next hops: an id > 0 or -errno. Free only what no route points to. */
int fib_nh_alloc(struct fib *fib, const struct fib_nh_info *info);
int fib_nh_set(struct fib *fib, uint32_t id, const struct fib_nh_info *info);
int fib_nh_get(const struct fib *fib, uint32_t id, struct fib_nh_info *info);
int fib_nh_group_alloc(struct fib *fib, const uint32_t *members, unsigned n);
/* A group with room for up to `room` paths (n <= room <= FIB_MP_MAX), so
 * that fib_nh_group_set() can later change its paths in place. */
int fib_nh_group_alloc_room(struct fib *fib, const uint32_t *members,
			    unsigned n, unsigned room);
/* The paths of a group, changed in place without moving its id: every
 * route through it follows at once. -ENOSPC when n is more than its room
 * (allocate another group then). Readers see the old paths or the new
 * ones (each path slot is stored before the count that makes it read). */
int fib_nh_group_set(struct fib *fib, uint32_t id, const uint32_t *members,
		     unsigned n);
/* The member ids of a group (n on input: room; on output: count). */
int fib_nh_group_get(const struct fib *fib, uint32_t id, uint32_t *members,
		     unsigned *n);
int fib_nh_free(struct fib *fib, uint32_t id);

/* Readers: a slot per worker thread, -ENOSPC when all are taken. */
int fib_reader_register(struct fib *fib);
void fib_reader_unregister(struct fib *fib, int slot);
/* Reuse what every reader has stopped seeing: from the control tick. */
void fib_reclaim(struct fib *fib);

struct fib_stats {
	uint64_t v4_routes, v6_routes;
	uint32_t v4_groups_used, v4_groups;
	uint32_t v6_groups_used, v6_groups;
	uint32_t nh_used, nh_max;
	uint64_t retired; /* groups and next-hop runs awaiting a grace period */
	/* memory touched (tbl24, groups up to the high-water mark, rules)
	 * and reserved but untouched (the rest of the group pools) */
	uint64_t v4_bytes, v6_bytes, nh_bytes;
	uint64_t bytes_reserved;
};
void fib_stats(const struct fib *fib, struct fib_stats *st);

/* ---- data plane: inline lookups, lock-free. Do not touch the fields. ---- */

#define FIB_E_VALID	  0x80000000u
#define FIB_E_EXT	  0x40000000u
#define FIB_E_DEPTH_SHIFT 22
#define FIB_E_VAL_MASK	  0x003fffffu

struct fib_reader_slot {
	uint64_t epoch; /* announced; UINT64_MAX: offline */
} __attribute__((aligned(64)));

/* One table's tries; all NULL while the table is not open. */
struct fib_dp_tbl {
	const uint32_t *v4_tbl24, *v4_tbl8;
	const uint32_t *v6_tbl24, *v6_tbl8;
};

struct fib_dp {
	const uint32_t *v4_tbl24, *v4_tbl8; /* table 0's, as tbl[0] */
	const uint32_t *v6_tbl24, *v6_tbl8;
	const uint64_t *nh;
	uint64_t epoch; /* written by the control thread */
	struct fib_reader_slot *readers;
	struct fib_dp_tbl tbl[FIB_TABLES];
};

/* Pointers in the view stay valid for the fib's lifetime. */
const struct fib_dp *fib_dp(const struct fib *fib);

static inline uint32_t fib_e_load(const uint32_t *p)
{
	/* acquire: a group is filled before the entry linking it is stored
	 * (release), and the reader must not see the link without the fill.
	 * On x86 an acquire load is a plain mov: no cost on the hot path. */
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* Next-hop id of the longest match of addr (host byte order). */
static inline uint32_t fib4_lookup(const struct fib_dp *dp, uint32_t addr)
{
	uint32_t e = fib_e_load(&dp->v4_tbl24[addr >> 8]);

	if (e & FIB_E_EXT)
		e = fib_e_load(&dp->v4_tbl8[(e & FIB_E_VAL_MASK) << 8 |
					    (addr & 0xff)]);
	return e & FIB_E_VAL_MASK;
}

/* The same in table t: no route if t is not open. */
static inline uint32_t fib4_lookup_in(const struct fib_dp *dp, unsigned t,
				      uint32_t addr)
{
	const struct fib_dp_tbl *tb = &dp->tbl[t & (FIB_TABLES - 1)];
	uint32_t e;

	if (__builtin_expect(!tb->v4_tbl24, 0))
		return FIB_NH_NONE;
	e = fib_e_load(&tb->v4_tbl24[addr >> 8]);
	if (e & FIB_E_EXT)
		e = fib_e_load(&tb->v4_tbl8[(e & FIB_E_VAL_MASK) << 8 |
					    (addr & 0xff)]);
	return e & FIB_E_VAL_MASK;
}

/*
 * n lookups, FIB_BULK_MAX at a time. The first-level misses are what costs,
 * and how many overlap is bounded by how many loop iterations fit in the
 * CPU's reorder window: so the loop that loads is kept short (the indexes
 * are computed beforehand, a vectorised shift) and the rare second level
 * sits behind a predicted-not-taken branch.
 */
#define FIB_BULK_MAX 64
static inline void fib4_lookup_bulk(const struct fib_dp *dp,
				    const uint32_t *addr, uint32_t *nh,
				    unsigned n)
{
	const uint32_t *tbl24 = dp->v4_tbl24, *tbl8 = dp->v4_tbl8;
	uint32_t idx[FIB_BULK_MAX];
	unsigned i;

	for (; n > FIB_BULK_MAX;
	     n -= FIB_BULK_MAX, addr += FIB_BULK_MAX, nh += FIB_BULK_MAX)
		fib4_lookup_bulk(dp, addr, nh, FIB_BULK_MAX);
	for (i = 0; i < n; i++)
		idx[i] = addr[i] >> 8;
	for (i = 0; i < n; i++) {
		uint32_t e = fib_e_load(&tbl24[idx[i]]);

		if (__builtin_expect(!!(e & FIB_E_EXT), 0))
			e = fib_e_load(&tbl8[(e & FIB_E_VAL_MASK) << 8 |
					     (addr[i] & 0xff)]);
		nh[i] = e & FIB_E_VAL_MASK;
	}
}

static inline uint32_t fib6_lookup(const struct fib_dp *dp,
				   const uint8_t addr[16])
{
	uint32_t e = fib_e_load(&dp->v6_tbl24[(uint32_t)addr[0] << 16 |
					      addr[1] << 8 | addr[2]]);
	unsigned i;

	for (i = 3; (e & FIB_E_EXT) && i < 16; i++)
		e = fib_e_load(
			&dp->v6_tbl8[(e & FIB_E_VAL_MASK) << 8 | addr[i]]);
	return e & FIB_E_VAL_MASK;
}

static inline uint32_t fib6_lookup_in(const struct fib_dp *dp, unsigned t,
				      const uint8_t addr[16])
{
	const struct fib_dp_tbl *tb = &dp->tbl[t & (FIB_TABLES - 1)];
	uint32_t e;
	unsigned i;

	if (__builtin_expect(!tb->v6_tbl24, 0))
		return FIB_NH_NONE;
	e = fib_e_load(&tb->v6_tbl24[(uint32_t)addr[0] << 16 | addr[1] << 8 |
				     addr[2]]);
	for (i = 3; (e & FIB_E_EXT) && i < 16; i++)
		e = fib_e_load(
			&tb->v6_tbl8[(e & FIB_E_VAL_MASK) << 8 | addr[i]]);
	return e & FIB_E_VAL_MASK;
}

static inline void fib6_lookup_bulk(const struct fib_dp *dp,
				    const uint8_t (*addr)[16], uint32_t *nh,
				    unsigned n)
{
	unsigned i, b;
	int more = 0;

	for (i = 0; i < n; i++) {
		nh[i] = fib_e_load(&dp->v6_tbl24[(uint32_t)addr[i][0] << 16 |
						 addr[i][1] << 8 | addr[i][2]]);
		more |= (int)(nh[i] & FIB_E_EXT);
	}
	/* one level at a time across the burst, again to overlap misses */
	for (b = 3; more && b < 16; b++) {
		more = 0;
		for (i = 0; i < n; i++)
			if (nh[i] & FIB_E_EXT) {
				nh[i] = fib_e_load(
					&dp->v6_tbl8[(nh[i] & FIB_E_VAL_MASK)
							     << 8 |
						     addr[i][b]]);
				more |= (int)(nh[i] & FIB_E_EXT);
			}
	}
	for (i = 0; i < n; i++)
		nh[i] &= FIB_E_VAL_MASK;
}

/* Next-hop word layout: MAC in bits 0-47 (byte i at bits 8i), port in
 * 48-58, flags in 59-63; a group's word has its path count in bits 0-15
 * and its room (the path slots that follow it) in bits 16-31. */
#define FIB_NHW_PORT_SHIFT  48
#define FIB_NHW_FLAGS_SHIFT 59
#define FIB_NHW_ROOM_SHIFT  16

static inline uint64_t fib_nhw_load(const struct fib_dp *dp, uint32_t id)
{
	return __atomic_load_n(&dp->nh[id], __ATOMIC_RELAXED);
}

static inline unsigned fib_nhw_flags(uint64_t w)
{
	return (unsigned)(w >> FIB_NHW_FLAGS_SHIFT);
}

static inline unsigned fib_nhw_port(uint64_t w)
{
	return (unsigned)(w >> FIB_NHW_PORT_SHIFT) & FIB_PORT_NONE;
}

static inline void fib_nhw_mac(uint64_t w, uint8_t mac[6])
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* byte i at bits 8i is byte i in memory */
	__builtin_memcpy(mac, &w, 6);
#else
	unsigned i;

	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)(w >> (8 * i));
#endif
}

/* The path of id for a flow: id itself unless id is a multipath group. */
static inline uint32_t fib_nh_pick(const struct fib_dp *dp, uint32_t id,
				   uint32_t flow_hash)
{
	uint64_t w = fib_nhw_load(dp, id);

	if (fib_nhw_flags(w) & FIB_NH_F_GROUP) {
		uint32_t n = (uint32_t)(w & 0xffff);
		/* multiply-shift: hash into [0, n) without a divide */
		uint32_t k = (uint32_t)(((uint64_t)flow_hash * n) >> 32);

		/* the path's address depends on the count just loaded, which
		 * orders the two loads (fib_nh_group_set() stores a path
		 * before the count that makes it read) */
		id = (uint32_t)fib_nhw_load(dp, id + 1 + k) & FIB_E_VAL_MASK;
	}
	return id;
}

/* A worker's quiescent state: it holds nothing it looked up before. */
static inline void fib_quiescent(const struct fib_dp *dp, int slot)
{
	__atomic_store_n(&dp->readers[slot].epoch,
			 __atomic_load_n(&dp->epoch, __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);
}

/* A worker about to sleep; its next fib_quiescent() brings it back. */
static inline void fib_reader_offline(const struct fib_dp *dp, int slot)
{
	__atomic_store_n(&dp->readers[slot].epoch, UINT64_MAX,
			 __ATOMIC_RELEASE);
}

#endif
