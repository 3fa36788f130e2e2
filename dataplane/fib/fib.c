// SPDX-License-Identifier: BSD-2-Clause
/*
 * fib.c - the forwarding table's control side: route and next-hop updates
 * in place with single-word atomic stores, and the grace period that
 * recycles unlinked memory. The layout and the reader's side are in fib.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fib.h"

#define TBL24_ENTRIES (1u << 24)
#define GROUP_ENTRIES 256u

/* ---- control-side rule set: (prefix, len) -> next hop ---- */

/*
 * The trie cannot say which prefixes are in it (entries only carry the
 * depth), and a delete needs the next-longer covering prefix to put back:
 * so the routes are also kept here, an open-addressing hash with linear
 * probing and backward-shift deletion, grown at 50% load.
 */
struct rule {
	uint32_t nh;
	uint32_t tag; /* the caller's (fib_route_tag) */
	uint8_t len;
	uint8_t used;
	uint8_t key[]; /* kb bytes: an IPv4 rule is 16 bytes, IPv6 28 */
};

struct rules {
	uint8_t *slot; /* cap slots of stride bytes */
	size_t cap;    /* power of two */
	size_t n;
	size_t stride;
	unsigned kb; /* key bytes: 4 or 16 */
};

static void rules_init(struct rules *r, unsigned kb)
{
	memset(r, 0, sizeof(*r));
	r->kb = kb;
	r->stride = (offsetof(struct rule, key) + kb + 3) & ~(size_t)3;
}

static inline struct rule *slot_at(const struct rules *r, uint8_t *base,
				   size_t i)
{
	(void)r;
	return (struct rule *)(void *)(base + i * r->stride);
}

static uint64_t rule_hash(const uint8_t *key, unsigned kb, unsigned len)
{
	uint64_t a = 0, b = 0, h;

	memcpy(&a, key, kb < 8 ? kb : 8);
	if (kb > 8)
		memcpy(&b, key + 8, kb - 8);
	h = (a ^ (b * 0x9e3779b97f4a7c15ull) ^ len) * 0xff51afd7ed558ccdull;
	h ^= h >> 32;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 29);
}

static struct rule *rules_find(const struct rules *r, const uint8_t *key,
			       unsigned len)
{
	struct rule *x;
	size_t i;

	if (!r->cap)
		return NULL;
	for (i = rule_hash(key, r->kb, len) & (r->cap - 1);
	     (x = slot_at(r, r->slot, i))->used; i = (i + 1) & (r->cap - 1))
		if (x->len == len && !memcmp(x->key, key, r->kb))
			return x;
	return NULL;
}

static int rules_grow(struct rules *r)
{
	size_t cap = r->cap ? r->cap * 2 : 1024, i, j;
	uint8_t *s = calloc(cap, r->stride);

	if (!s)
		return -ENOMEM;
	for (i = 0; i < r->cap; i++) {
		struct rule *x = slot_at(r, r->slot, i);

		if (!x->used)
			continue;
		for (j = rule_hash(x->key, r->kb, x->len) & (cap - 1);
		     slot_at(r, s, j)->used; j = (j + 1) & (cap - 1))
			;
		memcpy(slot_at(r, s, j), x, r->stride);
	}
	free(r->slot);
	r->slot = s;
	r->cap = cap;
	return 0;
}

static int rules_put(struct rules *r, const uint8_t *key, unsigned len,
		     uint32_t nh)
{
	struct rule *x;
	size_t i;
	int err;

	if ((r->n + 1) * 2 > r->cap) {
		err = rules_grow(r);
		if (err)
			return err;
	}
	for (i = rule_hash(key, r->kb, len) & (r->cap - 1);
	     slot_at(r, r->slot, i)->used; i = (i + 1) & (r->cap - 1))
		;
	x = slot_at(r, r->slot, i);
	memcpy(x->key, key, r->kb);
	x->len = (uint8_t)len;
	x->nh = nh;
	x->tag = 0;
	x->used = 1;
	r->n++;
	return 0;
}

static void rules_del(struct rules *r, struct rule *victim)
{
	size_t i = (size_t)((uint8_t *)victim - r->slot) / r->stride, j = i;
	size_t home;

	/* backward shift: pull later members of the probe run into the hole */
	for (;;) {
		struct rule *x;

		j = (j + 1) & (r->cap - 1);
		x = slot_at(r, r->slot, j);
		if (!x->used)
			break;
		home = rule_hash(x->key, r->kb, x->len) & (r->cap - 1);
		/* j may move to i only if its home is not in (i, j] */
		if ((j > i && (home <= i || home > j)) ||
		    (j < i && (home <= i && home > j))) {
			memcpy(slot_at(r, r->slot, i), x, r->stride);
			i = j;
		}
	}
	slot_at(r, r->slot, i)->used = 0;
	r->n--;
}

/* ---- the trie of one family ---- */

struct lpm {
	uint32_t *tbl24;
	uint32_t *tbl8;
	uint32_t n_groups;
	uint32_t *free_groups; /* stack */
	uint32_t n_free;
	uint32_t next_group; /* never used above this: untouched memory */
	uint32_t used_groups;
	unsigned key_bytes; /* 4 or 16 */
	unsigned max_len;   /* 32 or 128 */
	uint8_t rtag; /* what a retired group names: table << 4 | 4 or 6 */
	struct rules rules;
	uint32_t len_count[129]; /* routes per prefix length */
};

/* memory waiting for every reader to pass a quiescent state */
struct retired {
	uint64_t epoch;
	uint32_t idx;
	uint16_t n;  /* next-hop run length; 0 for a group */
	uint8_t fam; /* group: its lpm's rtag (table << 4 | 4 or 6) */
};

struct fib {
	struct fib_dp dp;  /* the workers' view */
	struct lpm v4, v6; /* table 0, the main table */
	/* the other tables (VRFs), opened on demand; [0] unused */
	struct lpm *xv4[FIB_TABLES], *xv6[FIB_TABLES];
	uint32_t x_v4_groups, x_v6_groups;
	uint64_t *nh;
	uint32_t max_nh;
	uint32_t nh_next; /* bump allocator above the free lists */
	uint32_t nh_used;
	uint32_t *nh_free[FIB_MP_MAX + 2]; /* free runs, by length */
	uint32_t nh_nfree[FIB_MP_MAX + 2];
	struct retired *ret;
	size_t n_ret, cap_ret;
	struct fib_reader_slot *readers;
	uint8_t *reader_used;
	uint32_t max_readers;
};

static inline void e_store(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static inline uint32_t e_make(unsigned depth, uint32_t val)
{
	return FIB_E_VALID | (uint32_t)depth << FIB_E_DEPTH_SHIFT | val;
}

static inline unsigned e_depth(uint32_t e)
{
	return (e >> FIB_E_DEPTH_SHIFT) & 0xff;
}

static int lpm_init(struct lpm *l, unsigned key_bytes, uint32_t groups)
{
	memset(l, 0, sizeof(*l));
	l->key_bytes = key_bytes;
	l->max_len = key_bytes * 8;
	rules_init(&l->rules, key_bytes);
	l->n_groups = groups;
	/* calloc of this size is an mmap: untouched pages cost nothing */
	l->tbl24 = calloc(TBL24_ENTRIES, sizeof(uint32_t));
	l->tbl8 = calloc((size_t)groups * GROUP_ENTRIES, sizeof(uint32_t));
	l->free_groups = malloc((size_t)groups * sizeof(uint32_t));
	if (!l->tbl24 || !l->tbl8 || !l->free_groups) {
		free(l->tbl24);
		free(l->tbl8);
		free(l->free_groups);
		return -ENOMEM;
	}
	return 0;
}

static void lpm_fini(struct lpm *l)
{
	free(l->tbl24);
	free(l->tbl8);
	free(l->free_groups);
	free(l->rules.slot);
}

static void retire(struct fib *fib, uint8_t fam, uint32_t idx, uint16_t n);

static int group_alloc(struct fib *fib, struct lpm *l, uint32_t *g)
{
	if (!l->n_free && l->next_group >= l->n_groups)
		fib_reclaim(fib);
	if (l->n_free)
		*g = l->free_groups[--l->n_free];
	else if (l->next_group < l->n_groups)
		*g = l->next_group++;
	else
		return -ENOSPC;
	l->used_groups++;
	return 0;
}

static inline uint32_t *group_of(struct lpm *l, uint32_t e)
{
	return &l->tbl8[(size_t)(e & FIB_E_VAL_MASK) * GROUP_ENTRIES];
}

/* Level 0 covers bits 0-23, level k >= 1 bits 16+8k .. 23+8k. */
static inline unsigned level_end(unsigned level)
{
	return 24 + 8 * level;
}

static inline uint32_t level_index(const uint8_t *key, unsigned level)
{
	if (!level)
		return (uint32_t)key[0] << 16 | key[1] << 8 | key[2];
	return key[2 + level];
}

/* Write e over every entry under p that a prefix of depth len may take. */
static void fill(struct lpm *l, uint32_t *p, unsigned len, uint32_t e)
{
	uint32_t cur = *p, i, *g;

	if (cur & FIB_E_EXT) {
		g = group_of(l, cur);
		for (i = 0; i < GROUP_ENTRIES; i++)
			fill(l, &g[i], len, e);
	} else if (!(cur & FIB_E_VALID) || e_depth(cur) <= len) {
		e_store(p, e);
	}
}

static int lpm_set(struct fib *fib, struct lpm *l, uint32_t *tbl,
		   unsigned level, const uint8_t *key, unsigned len, uint32_t e)
{
	unsigned end = level_end(level);
	uint32_t idx = level_index(key, level), cur, g, i, *grp;
	int err;

	if (len <= end) {
		uint32_t n = 1u << (end - len), first = idx & ~(n - 1);

		for (i = first; i < first + n; i++)
			fill(l, &tbl[i], len, e);
		return 0;
	}
	cur = tbl[idx];
	if (!(cur & FIB_E_EXT)) {
		err = group_alloc(fib, l, &g);
		if (err)
			return err;
		grp = &l->tbl8[(size_t)g * GROUP_ENTRIES];
		for (i = 0; i < GROUP_ENTRIES; i++)
			grp[i] = cur;
		/* the release store publishes the filled group */
		e_store(&tbl[idx], FIB_E_VALID | FIB_E_EXT | g);
		cur = tbl[idx];
	}
	return lpm_set(fib, l, group_of(l, cur), level + 1, key, len, e);
}

/* A group whose entries are all one plain entry is replaced by it. */
static void try_collapse(struct fib *fib, struct lpm *l, uint32_t *p)
{
	uint32_t cur = *p, *g = group_of(l, cur), v = g[0], i;

	if (v & FIB_E_EXT)
		return;
	for (i = 1; i < GROUP_ENTRIES; i++)
		if (g[i] != v)
			return;
	e_store(p, v);
	l->used_groups--;
	retire(fib, l->rtag, cur & FIB_E_VAL_MASK, 0);
}

/* Put r back over the entries that the prefix of depth len wrote. */
static void unfill(struct fib *fib, struct lpm *l, uint32_t *p, unsigned len,
		   uint32_t r)
{
	uint32_t cur = *p, i, *g;

	if (cur & FIB_E_EXT) {
		g = group_of(l, cur);
		for (i = 0; i < GROUP_ENTRIES; i++)
			unfill(fib, l, &g[i], len, r);
		try_collapse(fib, l, p);
	} else if ((cur & FIB_E_VALID) && e_depth(cur) == len) {
		e_store(p, r);
	}
}

static void lpm_unset(struct fib *fib, struct lpm *l, uint32_t *tbl,
		      unsigned level, const uint8_t *key, unsigned len,
		      uint32_t r)
{
	unsigned end = level_end(level);
	uint32_t idx = level_index(key, level), i;

	if (len <= end) {
		uint32_t n = 1u << (end - len), first = idx & ~(n - 1);

		for (i = first; i < first + n; i++)
			unfill(fib, l, &tbl[i], len, r);
		return;
	}
	if (!(tbl[idx] & FIB_E_EXT))
		return;
	lpm_unset(fib, l, group_of(l, tbl[idx]), level + 1, key, len, r);
	try_collapse(fib, l, &tbl[idx]);
}

static void mask_key(uint8_t *key, unsigned bytes, unsigned len)
{
	unsigned i;

	for (i = 0; i < bytes; i++) {
		if (len >= 8 * (i + 1))
			continue;
		if (len <= 8 * i)
			key[i] = 0;
		else
			key[i] &= (uint8_t)(0xff << (8 * (i + 1) - len));
	}
}

/* The entry of the longest route shorter than len covering key, or 0. */
static uint32_t parent_entry(const struct lpm *l, const uint8_t *key,
			     unsigned len)
{
	uint8_t k[16];
	const struct rule *r;
	unsigned d;

	for (d = len; d-- > 0;) {
		if (!l->len_count[d])
			continue;
		memcpy(k, key, 16);
		mask_key(k, l->key_bytes, d);
		r = rules_find(&l->rules, k, d);
		if (r)
			return e_make(d, r->nh);
	}
	return 0;
}

static int lpm_add(struct fib *fib, struct lpm *l, const uint8_t *prefix,
		   unsigned len, uint32_t nh)
{
	uint8_t key[16] = {0};
	struct rule *r;
	uint32_t old = 0;
	int err;

	if (len > l->max_len || nh == FIB_NH_NONE || nh >= fib->max_nh)
		return -EINVAL;
	memcpy(key, prefix, l->key_bytes);
	mask_key(key, l->key_bytes, len);
	r = rules_find(&l->rules, key, len);
	if (r) {
		if (r->nh == nh)
			return 0;
		old = r->nh;
		r->nh = nh;
	} else {
		err = rules_put(&l->rules, key, len, nh);
		if (err)
			return err;
		l->len_count[len]++;
	}
	err = lpm_set(fib, l, l->tbl24, 0, key, len, e_make(len, nh));
	if (err) {
		/* undo what was written: the entries that took nh go back */
		if (old) {
			lpm_set(fib, l, l->tbl24, 0, key, len,
				e_make(len, old));
			rules_find(&l->rules, key, len)->nh = old;
		} else {
			lpm_unset(fib, l, l->tbl24, 0, key, len,
				  parent_entry(l, key, len));
			rules_del(&l->rules, rules_find(&l->rules, key, len));
			l->len_count[len]--;
		}
	}
	return err;
}

static int lpm_del(struct fib *fib, struct lpm *l, const uint8_t *prefix,
		   unsigned len)
{
	uint8_t key[16] = {0};
	struct rule *r;

	if (len > l->max_len)
		return -EINVAL;
	memcpy(key, prefix, l->key_bytes);
	mask_key(key, l->key_bytes, len);
	r = rules_find(&l->rules, key, len);
	if (!r)
		return -ENOENT;
	rules_del(&l->rules, r);
	l->len_count[len]--;
	lpm_unset(fib, l, l->tbl24, 0, key, len, parent_entry(l, key, len));
	return 0;
}

static uint32_t lpm_get(const struct lpm *l, const uint8_t *prefix,
			unsigned len)
{
	uint8_t key[16] = {0};
	const struct rule *r;

	if (len > l->max_len)
		return FIB_NH_NONE;
	memcpy(key, prefix, l->key_bytes);
	mask_key(key, l->key_bytes, len);
	r = rules_find(&l->rules, key, len);
	return r ? r->nh : FIB_NH_NONE;
}

static void v4_key(uint32_t a, uint8_t key[4])
{
	key[0] = (uint8_t)(a >> 24);
	key[1] = (uint8_t)(a >> 16);
	key[2] = (uint8_t)(a >> 8);
	key[3] = (uint8_t)a;
}

/* The trie of table t, family 4 or 6; NULL if t is not open. */
static struct lpm *lpm_of(const struct fib *fib, unsigned t, int family)
{
	if (t >= FIB_TABLES)
		return NULL;
	if (!t)
		return family == 4 ? (struct lpm *)&fib->v4
				   : (struct lpm *)&fib->v6;
	return family == 4 ? fib->xv4[t] : fib->xv6[t];
}

int fib4_add_in(struct fib *fib, unsigned t, uint32_t prefix, unsigned len,
		uint32_t nh)
{
	struct lpm *l = lpm_of(fib, t, 4);
	uint8_t key[4];

	if (!l)
		return -ENOENT;
	v4_key(prefix, key);
	return lpm_add(fib, l, key, len, nh);
}

int fib4_del_in(struct fib *fib, unsigned t, uint32_t prefix, unsigned len)
{
	struct lpm *l = lpm_of(fib, t, 4);
	uint8_t key[4];

	if (!l)
		return -ENOENT;
	v4_key(prefix, key);
	return lpm_del(fib, l, key, len);
}

uint32_t fib4_get_in(const struct fib *fib, unsigned t, uint32_t prefix,
		     unsigned len)
{
	const struct lpm *l = lpm_of(fib, t, 4);
	uint8_t key[4];

	if (!l)
		return FIB_NH_NONE;
	v4_key(prefix, key);
	return lpm_get(l, key, len);
}

int fib6_add_in(struct fib *fib, unsigned t, const uint8_t prefix[16],
		unsigned len, uint32_t nh)
{
	struct lpm *l = lpm_of(fib, t, 6);

	return l ? lpm_add(fib, l, prefix, len, nh) : -ENOENT;
}

int fib6_del_in(struct fib *fib, unsigned t, const uint8_t prefix[16],
		unsigned len)
{
	struct lpm *l = lpm_of(fib, t, 6);

	return l ? lpm_del(fib, l, prefix, len) : -ENOENT;
}

uint32_t fib6_get_in(const struct fib *fib, unsigned t,
		     const uint8_t prefix[16], unsigned len)
{
	const struct lpm *l = lpm_of(fib, t, 6);

	return l ? lpm_get(l, prefix, len) : FIB_NH_NONE;
}

int fib4_add(struct fib *fib, uint32_t prefix, unsigned len, uint32_t nh)
{
	return fib4_add_in(fib, 0, prefix, len, nh);
}

int fib4_del(struct fib *fib, uint32_t prefix, unsigned len)
{
	return fib4_del_in(fib, 0, prefix, len);
}

uint32_t fib4_get(const struct fib *fib, uint32_t prefix, unsigned len)
{
	return fib4_get_in(fib, 0, prefix, len);
}

int fib6_add(struct fib *fib, const uint8_t prefix[16], unsigned len,
	     uint32_t nh)
{
	return fib6_add_in(fib, 0, prefix, len, nh);
}

int fib6_del(struct fib *fib, const uint8_t prefix[16], unsigned len)
{
	return fib6_del_in(fib, 0, prefix, len);
}

uint32_t fib6_get(const struct fib *fib, const uint8_t prefix[16], unsigned len)
{
	return fib6_get_in(fib, 0, prefix, len);
}

uint32_t *fib_route_tag_in(struct fib *fib, unsigned t, int family,
			   const uint8_t *prefix, unsigned len)
{
	struct lpm *l =
		(family == 4 || family == 6) ? lpm_of(fib, t, family) : NULL;
	uint8_t key[16] = {0};
	struct rule *r;

	if (!l || len > l->max_len)
		return NULL;
	memcpy(key, prefix, l->key_bytes);
	mask_key(key, l->key_bytes, len);
	r = rules_find(&l->rules, key, len);
	return r ? &r->tag : NULL;
}

uint32_t *fib_route_tag(struct fib *fib, int family, const uint8_t *prefix,
			unsigned len)
{
	return fib_route_tag_in(fib, 0, family, prefix, len);
}

int fib_walk_in(const struct fib *fib, unsigned t, int family, fib_walk_fn fn,
		void *arg)
{
	const struct lpm *l;
	size_t i;
	int ret;

	if (family != 4 && family != 6)
		return -EINVAL;
	l = lpm_of(fib, t, family);
	if (!l)
		return 0; /* a table not open has no routes */
	for (i = 0; i < l->rules.cap; i++) {
		const struct rule *r = slot_at(&l->rules, l->rules.slot, i);
		uint8_t key[16] = {0};

		if (!r->used)
			continue;
		memcpy(key, r->key, l->rules.kb);
		ret = fn(arg, key, r->len, r->nh);
		if (ret)
			return ret;
	}
	return 0;
}

int fib_walk(const struct fib *fib, int family, fib_walk_fn fn, void *arg)
{
	return fib_walk_in(fib, 0, family, fn, arg);
}

/* ---- tables ---- */

int fib_table_open(struct fib *fib, unsigned t)
{
	struct lpm *l4, *l6;

	if (!t)
		return 0;
	if (t >= FIB_TABLES)
		return -EINVAL;
	if (fib->xv4[t])
		return 0;
	l4 = calloc(1, sizeof(*l4));
	l6 = calloc(1, sizeof(*l6));
	if (!l4 || !l6 || lpm_init(l4, 4, fib->x_v4_groups))
		goto err;
	if (lpm_init(l6, 16, fib->x_v6_groups)) {
		lpm_fini(l4);
		goto err;
	}
	l4->rtag = (uint8_t)(t << 4 | 4);
	l6->rtag = (uint8_t)(t << 4 | 6);
	fib->xv4[t] = l4;
	fib->xv6[t] = l6;
	/* the view's pointers before any reader is told of table t (the
	 * route app's port view names it only with the workers paused) */
	fib->dp.tbl[t] = (struct fib_dp_tbl){
		.v4_tbl24 = l4->tbl24,
		.v4_tbl8 = l4->tbl8,
		.v6_tbl24 = l6->tbl24,
		.v6_tbl8 = l6->tbl8,
	};
	return 0;
err:
	free(l4);
	free(l6);
	return -ENOMEM;
}

bool fib_table_is_open(const struct fib *fib, unsigned t)
{
	return t < FIB_TABLES && (!t || fib->xv4[t]);
}

/* ---- next hops ---- */

static uint64_t nh_word(const struct fib_nh_info *in)
{
	uint64_t w = 0;
	unsigned i;

	for (i = 0; i < 6; i++)
		w |= (uint64_t)in->mac[i] << (8 * i);
	w |= (uint64_t)(in->port & FIB_PORT_NONE) << FIB_NHW_PORT_SHIFT;
	w |= (uint64_t)(in->flags & ~FIB_NH_F_GROUP) << FIB_NHW_FLAGS_SHIFT;
	return w;
}

static inline void nh_store(struct fib *fib, uint32_t id, uint64_t w)
{
	__atomic_store_n(&fib->nh[id], w, __ATOMIC_RELEASE);
}

/* A run of n consecutive slots (a group is its header and its paths). */
static int nh_run_alloc(struct fib *fib, unsigned n, uint32_t *id)
{
	if (!fib->nh_nfree[n] && fib->nh_next + n > fib->max_nh)
		fib_reclaim(fib);
	if (fib->nh_nfree[n]) {
		*id = fib->nh_free[n][--fib->nh_nfree[n]];
	} else if (fib->nh_next + n <= fib->max_nh) {
		*id = fib->nh_next;
		fib->nh_next += n;
	} else {
		return -ENOSPC;
	}
	fib->nh_used += n;
	return 0;
}

int fib_nh_alloc(struct fib *fib, const struct fib_nh_info *info)
{
	uint32_t id;
	int err;

	if (!info || (info->flags & FIB_NH_F_GROUP))
		return -EINVAL;
	err = nh_run_alloc(fib, 1, &id);
	if (err)
		return err;
	nh_store(fib, id, nh_word(info));
	return (int)id;
}

static bool nh_is_live_single(const struct fib *fib, uint32_t id)
{
	return id != FIB_NH_NONE && id < fib->nh_next &&
	       !(fib_nhw_flags(fib->nh[id]) & FIB_NH_F_GROUP);
}

int fib_nh_set(struct fib *fib, uint32_t id, const struct fib_nh_info *info)
{
	if (!info || (info->flags & FIB_NH_F_GROUP) ||
	    !nh_is_live_single(fib, id))
		return -EINVAL;
	nh_store(fib, id, nh_word(info));
	return 0;
}

int fib_nh_get(const struct fib *fib, uint32_t id, struct fib_nh_info *info)
{
	uint64_t w;

	if (id == FIB_NH_NONE || id >= fib->nh_next)
		return -EINVAL;
	w = fib->nh[id];
	fib_nhw_mac(w, info->mac);
	info->port = (uint16_t)fib_nhw_port(w);
	info->flags = (uint8_t)fib_nhw_flags(w);
	return 0;
}

static uint64_t group_word(unsigned n, unsigned room)
{
	return (uint64_t)FIB_NH_F_GROUP << FIB_NHW_FLAGS_SHIFT |
	       (uint64_t)room << FIB_NHW_ROOM_SHIFT | n;
}

static unsigned group_room(uint64_t w)
{
	return (unsigned)(w >> FIB_NHW_ROOM_SHIFT) & 0xffff;
}

static bool members_ok(const struct fib *fib, const uint32_t *members,
		       unsigned n)
{
	unsigned i;

	if (!n || n > FIB_MP_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (!nh_is_live_single(fib, members[i]))
			return false;
	return true;
}

int fib_nh_group_alloc_room(struct fib *fib, const uint32_t *members,
			    unsigned n, unsigned room)
{
	uint32_t id, i;
	int err;

	if (!members_ok(fib, members, n) || room < n || room > FIB_MP_MAX)
		return -EINVAL;
	err = nh_run_alloc(fib, room + 1, &id);
	if (err)
		return err;
	for (i = 0; i < n; i++)
		nh_store(fib, id + 1 + i, members[i]);
	/* the header last: a reader that sees it sees its members */
	nh_store(fib, id, group_word(n, room));
	return (int)id;
}

int fib_nh_group_alloc(struct fib *fib, const uint32_t *members, unsigned n)
{
	return fib_nh_group_alloc_room(fib, members, n, n);
}

int fib_nh_group_set(struct fib *fib, uint32_t id, const uint32_t *members,
		     unsigned n)
{
	uint64_t w;
	uint32_t i;

	if (id == FIB_NH_NONE || id >= fib->nh_next)
		return -EINVAL;
	w = fib->nh[id];
	if (!(fib_nhw_flags(w) & FIB_NH_F_GROUP) ||
	    !members_ok(fib, members, n))
		return -EINVAL;
	if (n > group_room(w))
		return -ENOSPC;
	/*
	 * A reader holding the old count picks a slot below it: each slot
	 * is one store, so it finds the old path or the new one, both live
	 * (the caller frees a path only through the grace period). Slots
	 * past the old count are read only once the new count is seen,
	 * which is stored last; slots past the new count keep their old
	 * paths for the readers still on the old count.
	 */
	for (i = 0; i < n; i++)
		nh_store(fib, id + 1 + i, members[i]);
	nh_store(fib, id, group_word(n, group_room(w)));
	return 0;
}

int fib_nh_group_get(const struct fib *fib, uint32_t id, uint32_t *members,
		     unsigned *n)
{
	uint64_t w;
	unsigned i, cnt;

	if (id == FIB_NH_NONE || id >= fib->nh_next)
		return -EINVAL;
	w = fib->nh[id];
	if (!(fib_nhw_flags(w) & FIB_NH_F_GROUP))
		return -EINVAL;
	cnt = (unsigned)(w & 0xffff);
	for (i = 0; i < cnt && i < *n; i++)
		members[i] = (uint32_t)fib->nh[id + 1 + i];
	*n = cnt;
	return 0;
}

int fib_nh_free(struct fib *fib, uint32_t id)
{
	uint64_t w;
	unsigned n = 1;

	if (id == FIB_NH_NONE || id >= fib->nh_next)
		return -EINVAL;
	w = fib->nh[id];
	if (fib_nhw_flags(w) & FIB_NH_F_GROUP)
		n += group_room(w);
	fib->nh_used -= n;
	retire(fib, 0, id, (uint16_t)n);
	return 0;
}

/* ---- grace periods ---- */

static void retire(struct fib *fib, uint8_t fam, uint32_t idx, uint16_t n)
{
	struct retired *r;

	if (fib->n_ret == fib->cap_ret) {
		size_t cap = fib->cap_ret ? fib->cap_ret * 2 : 256;

		r = realloc(fib->ret, cap * sizeof(*r));
		if (!r)
			return; /* leaked until destroy: safe, not reused */
		fib->ret = r;
		fib->cap_ret = cap;
	}
	/* the unlink is stored; readers that load this epoch or later
	 * (acquire) see it, so they cannot reach idx any more */
	__atomic_store_n(&fib->dp.epoch, fib->dp.epoch + 1, __ATOMIC_RELEASE);
	fib->ret[fib->n_ret++] = (struct retired){
		.epoch = fib->dp.epoch, .idx = idx, .n = n, .fam = fam};
}

static uint64_t min_reader_epoch(const struct fib *fib)
{
	uint64_t m = UINT64_MAX, e;
	uint32_t i;

	for (i = 0; i < fib->max_readers; i++) {
		if (!fib->reader_used[i])
			continue;
		e = __atomic_load_n(&fib->readers[i].epoch, __ATOMIC_ACQUIRE);
		if (e < m)
			m = e;
	}
	return m;
}

void fib_reclaim(struct fib *fib)
{
	uint64_t safe = min_reader_epoch(fib);
	size_t i, k = 0;

	for (i = 0; i < fib->n_ret; i++) {
		struct retired *r = &fib->ret[i];

		if (r->epoch > safe) {
			fib->ret[k++] = *r;
			continue;
		}
		if (r->n) {
			fib->nh_free[r->n][fib->nh_nfree[r->n]++] = r->idx;
		} else {
			struct lpm *l = lpm_of(fib, r->fam >> 4, r->fam & 0xf);

			l->free_groups[l->n_free++] = r->idx;
		}
	}
	fib->n_ret = k;
}

int fib_reader_register(struct fib *fib)
{
	uint32_t i;

	for (i = 0; i < fib->max_readers; i++) {
		if (fib->reader_used[i])
			continue;
		/* online from now: it may hold nothing older than this */
		__atomic_store_n(&fib->readers[i].epoch, fib->dp.epoch,
				 __ATOMIC_RELEASE);
		fib->reader_used[i] = 1;
		return (int)i;
	}
	return -ENOSPC;
}

void fib_reader_unregister(struct fib *fib, int slot)
{
	if (slot >= 0 && (uint32_t)slot < fib->max_readers)
		fib->reader_used[slot] = 0;
}

/* ---- object ---- */

const struct fib_dp *fib_dp(const struct fib *fib)
{
	return &fib->dp;
}

struct fib *fib_create(const struct fib_params *p)
{
	struct fib_params d = {0};
	struct fib *fib;
	unsigned n;
	int err;

	if (p)
		d = *p;
	if (!d.v4_groups)
		d.v4_groups = FIB_DEFAULT_V4_GROUPS;
	if (!d.v6_groups)
		d.v6_groups = FIB_DEFAULT_V6_GROUPS;
	if (!d.max_nh)
		d.max_nh = FIB_DEFAULT_MAX_NH;
	if (!d.max_readers)
		d.max_readers = FIB_DEFAULT_MAX_READERS;
	if (d.v4_groups > FIB_E_VAL_MASK + 1u ||
	    d.v6_groups > FIB_E_VAL_MASK + 1u ||
	    d.max_nh > FIB_E_VAL_MASK + 1u || d.max_nh < 2) {
		errno = EINVAL;
		return NULL;
	}
	fib = calloc(1, sizeof(*fib));
	if (!fib)
		return NULL;
	fib->x_v4_groups =
		d.vrf_v4_groups ? d.vrf_v4_groups : FIB_DEFAULT_VRF_V4_GROUPS;
	fib->x_v6_groups =
		d.vrf_v6_groups ? d.vrf_v6_groups : FIB_DEFAULT_VRF_V6_GROUPS;
	err = lpm_init(&fib->v4, 4, d.v4_groups);
	if (err)
		goto err_fib;
	fib->v4.rtag = 4;
	err = lpm_init(&fib->v6, 16, d.v6_groups);
	if (err)
		goto err_v4;
	fib->v6.rtag = 6;
	fib->max_nh = d.max_nh;
	fib->nh_next = 1; /* id 0 is FIB_NH_NONE */
	fib->nh = calloc(d.max_nh, sizeof(uint64_t));
	if (!fib->nh)
		goto err_v6;
	/* a free list of runs of n can hold at most max_nh / n of them */
	for (n = 1; n <= FIB_MP_MAX + 1; n++) {
		fib->nh_free[n] = malloc((d.max_nh / n + 1) * sizeof(uint32_t));
		if (!fib->nh_free[n])
			goto err_nh;
	}
	fib->max_readers = d.max_readers;
	fib->readers = aligned_alloc(64, d.max_readers * sizeof(*fib->readers));
	fib->reader_used = calloc(d.max_readers, 1);
	if (!fib->readers || !fib->reader_used)
		goto err_readers;
	fib->dp = (struct fib_dp){
		.v4_tbl24 = fib->v4.tbl24,
		.v4_tbl8 = fib->v4.tbl8,
		.v6_tbl24 = fib->v6.tbl24,
		.v6_tbl8 = fib->v6.tbl8,
		.nh = fib->nh,
		.epoch = 1,
		.readers = fib->readers,
	};
	fib->dp.tbl[0] = (struct fib_dp_tbl){
		.v4_tbl24 = fib->v4.tbl24,
		.v4_tbl8 = fib->v4.tbl8,
		.v6_tbl24 = fib->v6.tbl24,
		.v6_tbl8 = fib->v6.tbl8,
	};
	return fib;

err_readers:
	free(fib->readers);
	free(fib->reader_used);
err_nh:
	for (n = 1; n <= FIB_MP_MAX + 1; n++)
		free(fib->nh_free[n]);
	free(fib->nh);
err_v6:
	lpm_fini(&fib->v6);
err_v4:
	lpm_fini(&fib->v4);
err_fib:
	free(fib);
	errno = ENOMEM;
	return NULL;
}

void fib_destroy(struct fib *fib)
{
	unsigned n;

	if (!fib)
		return;
	lpm_fini(&fib->v4);
	lpm_fini(&fib->v6);
	for (n = 1; n < FIB_TABLES; n++)
		if (fib->xv4[n]) {
			lpm_fini(fib->xv4[n]);
			lpm_fini(fib->xv6[n]);
			free(fib->xv4[n]);
			free(fib->xv6[n]);
		}
	for (n = 1; n <= FIB_MP_MAX + 1; n++)
		free(fib->nh_free[n]);
	free(fib->nh);
	free(fib->ret);
	free(fib->readers);
	free(fib->reader_used);
	free(fib);
}

static uint64_t lpm_bytes(const struct lpm *l)
{
	return TBL24_ENTRIES * sizeof(uint32_t) +
	       (uint64_t)l->next_group * GROUP_ENTRIES * sizeof(uint32_t) +
	       l->rules.cap * l->rules.stride;
}

void fib_stats(const struct fib *fib, struct fib_stats *st)
{
	const uint64_t grp = GROUP_ENTRIES * sizeof(uint32_t);

	memset(st, 0, sizeof(*st));
	st->v4_routes = fib->v4.rules.n;
	st->v6_routes = fib->v6.rules.n;
	st->v4_groups_used = fib->v4.used_groups;
	st->v4_groups = fib->v4.n_groups;
	st->v6_groups_used = fib->v6.used_groups;
	st->v6_groups = fib->v6.n_groups;
	st->nh_used = fib->nh_used;
	st->nh_max = fib->max_nh;
	st->retired = fib->n_ret;
	st->v4_bytes = lpm_bytes(&fib->v4);
	st->v6_bytes = lpm_bytes(&fib->v6);
	st->nh_bytes = fib->nh_next * 8ull;
	st->bytes_reserved = (uint64_t)(fib->v4.n_groups - fib->v4.next_group +
					fib->v6.n_groups - fib->v6.next_group) *
				     grp +
			     (fib->max_nh - fib->nh_next) * 8ull;
}
