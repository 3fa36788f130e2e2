// SPDX-License-Identifier: BSD-2-Clause
/*
 * rulecls.c - builds a port's rule table for the classifier (rulecls.h):
 * the rules of a generation, and for the bit-vector matcher the bitmaps of
 * each field's lookups (layout and meaning in ferry_abi.h, at ferry_cls).
 *
 * Bitmaps of one generation, relative to gen * FERRY_BV_PER_GEN:
 *   [0, 768)                      family (3) x l4_proto (256)
 *   [768, +FERRY_BV_NOPORT+1)     sport intervals, then "no ports"
 *   [.., +FERRY_BV_NOPORT+1)      dport intervals, then "no ports"
 *   then the prefixes: the /0 of src and of dst, one per distinct prefix
 * Every bitmap is computed from the same predicate the linear matcher
 * applies (rule_match in bpf/ferry_xdp.bpf.c), field by field.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/membarrier.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ferry_xdp.skel.h"
#include "rulecls.h"

#define PROTO_REL	0u
#define PORT_REL(field) (3u * 256 + (uint32_t)(field) * (FERRY_BV_NOPORT + 1))
#define PFX_REL		(PORT_REL(2))

_Static_assert(PFX_REL + 2 + 2 * FERRY_MAX_RULES <= FERRY_BV_PER_GEN,
	       "a generation's bitmaps fit its share of ferry_bv_maps");

struct bv_pfx {
	uint8_t family, field, plen;
	uint32_t addr[4];
	uint32_t rel; /* its bitmap */
};

struct ferry_bvset {
	uint32_t gen, n, base;
	struct ferry_cls_gen meta;
	struct ferry_bv maps[FERRY_BV_PER_GEN];
	uint32_t n_maps;
	uint16_t ivl[2][65536]; /* port -> interval */
	struct bv_pfx pfx[2 * FERRY_MAX_RULES];
	uint32_t n_pfx;
};

static void bit_set(struct ferry_bv *b, uint32_t i)
{
	b->w[i / 64] |= 1ull << (i % 64);
}

/* The top `bits` bits of a and b (network order) agree. */
static bool bits_eq(const uint32_t *a, const uint32_t *b, uint32_t bits)
{
	uint32_t i, n, mask;

	for (i = 0; i < 4 && bits; i++) {
		n = bits > 32 ? 32 : bits;
		mask = htonl(0xffffffffu << (32 - n));
		if ((a[i] ^ b[i]) & mask)
			return false;
		bits -= n;
	}
	return true;
}

static bool proto_ok(const struct ferry_rule *r, uint8_t fam, uint32_t proto)
{
	if (r->family && r->family != fam)
		return false;
	if (r->l4_proto && r->l4_proto != proto &&
	    !(r->l4_proto == IPPROTO_ICMP && proto == IPPROTO_ICMPV6))
		return false;
	/* A non-IP frame meets no IP field: only rules without them. */
	if (!fam && (r->sport_lo || r->sport_hi || r->dport_lo || r->dport_hi ||
		     r->src_plen || r->dst_plen))
		return false;
	return true;
}

static void range_of(const struct ferry_rule *r, int field, uint16_t *lo,
		     uint16_t *hi)
{
	*lo = field ? r->dport_lo : r->sport_lo;
	*hi = field ? r->dport_hi : r->sport_hi;
}

/* Called with the bitmaps zeroed; an allocation failure leaves them so,
 * which matches no frame: reported by ferry_bv_build. */
static int build_ports(struct ferry_bvset *b, const struct ferry_rule *rules,
		       int field)
{
	uint8_t *cut = calloc(65537, 1);
	uint32_t i, k = 0, p;
	uint16_t lo, hi;

	if (!cut)
		return -ENOMEM;
	/* Interval starts: 0 and every range's lo and hi + 1. */
	cut[0] = 1;
	for (i = 0; i < b->n; i++) {
		range_of(&rules[i], field, &lo, &hi);
		if (!lo && !hi)
			continue;
		cut[lo] = 1;
		cut[hi + 1u] = 1;
	}
	for (p = 0; p < 65536; p++) {
		if (cut[p] && p)
			k++;
		b->ivl[field][p] = (uint16_t)k;
	}
	free(cut);
	/* k + 1 intervals, each with the rules whose range holds its ports
	 * (one port of it tells) or that have no range; then "no ports". */
	for (p = 0; p < 65536; p++) {
		struct ferry_bv *bv;

		if (p && b->ivl[field][p] == b->ivl[field][p - 1])
			continue;
		bv = &b->maps[PORT_REL(field) + b->ivl[field][p]];
		for (i = 0; i < b->n; i++) {
			range_of(&rules[i], field, &lo, &hi);
			if ((!lo && !hi) || (p >= lo && p <= hi))
				bit_set(bv, i);
		}
	}
	for (i = 0; i < b->n; i++) {
		range_of(&rules[i], field, &lo, &hi);
		if (!lo && !hi)
			bit_set(&b->maps[PORT_REL(field) + FERRY_BV_NOPORT], i);
	}
	return 0;
}

static void pfx_of(const struct ferry_rule *r, int field, const uint32_t **a,
		   uint8_t *plen)
{
	*a = field ? r->dst : r->src;
	*plen = field ? r->dst_plen : r->src_plen;
}

static void build_prefixes(struct ferry_bvset *b,
			   const struct ferry_rule *rules, int field)
{
	uint32_t wild = PFX_REL + (uint32_t)field, i, j, k;
	const uint32_t *a, *c;
	uint8_t plen, cl;

	for (i = 0; i < b->n; i++) {
		pfx_of(&rules[i], field, &a, &plen);
		if (!plen)
			bit_set(&b->maps[wild], i);
	}
	for (i = 0; i < b->n; i++) {
		struct bv_pfx *e = NULL;

		pfx_of(&rules[i], field, &a, &plen);
		if (!plen)
			continue;
		for (k = 0; k < b->n_pfx; k++)
			if (b->pfx[k].field == field &&
			    b->pfx[k].family == rules[i].family &&
			    b->pfx[k].plen == plen &&
			    bits_eq(b->pfx[k].addr, a, plen))
				e = &b->pfx[k];
		if (e)
			continue;
		e = &b->pfx[b->n_pfx++];
		e->family = rules[i].family;
		e->field = (uint8_t)field;
		e->plen = plen;
		memcpy(e->addr, a, sizeof(e->addr));
		e->rel = b->n_maps++;
		/* The wildcards, and each rule whose prefix covers this one. */
		b->maps[e->rel] = b->maps[wild];
		for (j = 0; j < b->n; j++) {
			pfx_of(&rules[j], field, &c, &cl);
			if (cl && cl <= plen && rules[j].family == e->family &&
			    bits_eq(c, a, cl))
				bit_set(&b->maps[e->rel], j);
		}
	}
}

struct ferry_bvset *ferry_bv_build(const struct ferry_rule *rules, uint32_t n,
				   uint32_t gen)
{
	static const uint8_t fams[3] = {0, 4, 6};
	struct ferry_bvset *b;
	uint32_t f, p, i;

	if (n > FERRY_MAX_RULES) {
		errno = E2BIG;
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->gen = gen & 1;
	b->n = n;
	b->base = b->gen * FERRY_BV_PER_GEN;
	b->n_maps = PFX_REL + 2;
	for (f = 0; f < 3; f++)
		for (p = 0; p < 256; p++)
			for (i = 0; i < n; i++)
				if (proto_ok(&rules[i], fams[f], p))
					bit_set(&b->maps[PROTO_REL + f * 256 +
							 p],
						i);
	if (build_ports(b, rules, 0) || build_ports(b, rules, 1)) {
		free(b);
		errno = ENOMEM;
		return NULL;
	}
	build_prefixes(b, rules, 0);
	build_prefixes(b, rules, 1);
	b->meta = (struct ferry_cls_gen){
		.n_rules = n,
		.matcher = FERRY_CLS_BITVEC,
		.n_words = (n + 63) / 64,
		.proto_base = b->base + PROTO_REL,
		.port_base = {b->base + PORT_REL(0), b->base + PORT_REL(1)},
	};
	return b;
}

void ferry_bv_free(struct ferry_bvset *b)
{
	free(b);
}

static const struct ferry_bv *lookup_pfx(const struct ferry_bvset *b,
					 uint8_t family, int field,
					 const uint32_t *addr)
{
	const struct bv_pfx *best = NULL;
	uint32_t k;

	for (k = 0; k < b->n_pfx; k++) {
		const struct bv_pfx *e = &b->pfx[k];

		if (e->field == field && e->family == family &&
		    bits_eq(e->addr, addr, e->plen) &&
		    (!best || e->plen > best->plen))
			best = e;
	}
	return &b->maps[best ? best->rel : PFX_REL + (uint32_t)field];
}

int ferry_bv_lookup(const struct ferry_bvset *b, uint8_t family,
		    uint8_t l4_proto, const uint32_t src[4],
		    const uint32_t dst[4], int has_ports, uint16_t sport,
		    uint16_t dport)
{
	uint32_t fam = family == 4 ? 1 : family == 6 ? 2 : 0, i, at;
	const struct ferry_bv *m[5];
	int k, nm = 1;
	uint64_t w;

	m[0] = &b->maps[PROTO_REL + fam * 256 + l4_proto];
	if (fam) {
		m[1] = &b->maps[PORT_REL(0) + (has_ports ? b->ivl[0][sport]
							 : FERRY_BV_NOPORT)];
		m[2] = &b->maps[PORT_REL(1) + (has_ports ? b->ivl[1][dport]
							 : FERRY_BV_NOPORT)];
		m[3] = lookup_pfx(b, family, 0, src);
		m[4] = lookup_pfx(b, family, 1, dst);
		nm = 5;
	}
	for (i = 0; i < b->meta.n_words; i++) {
		w = ~0ull;
		for (k = 0; k < nm; k++)
			w &= m[k]->w[i];
		if (w) {
			at = i * 64 + (uint32_t)__builtin_ctzll(w);
			return at < b->n ? (int)at : -1;
		}
	}
	return -1;
}

/* ------------------------------------------------------------ install */

/* keys[i] = first + i; a batch when the kernel takes it, else one by one. */
static int array_write(int fd, uint32_t first, const void *vals, size_t vsize,
		       uint32_t count)
{
	uint32_t *keys, i, done = count;
	int err = 0;

	if (!count)
		return 0;
	keys = malloc(sizeof(*keys) * count);
	if (!keys)
		return -ENOMEM;
	for (i = 0; i < count; i++)
		keys[i] = first + i;
	if (bpf_map_update_batch(fd, keys, vals, &done, NULL)) {
		for (i = 0; i < count && !err; i++)
			if (bpf_map_update_elem(fd, &keys[i],
						(const char *)vals + i * vsize,
						0))
				err = -errno;
	}
	free(keys);
	return err;
}

/* Removes every key of generation gen from an LPM trie. */
static int trie_clear(int fd, size_t ksize, uint32_t gen)
{
	uint8_t cur[sizeof(struct ferry_bv_key6)], next[sizeof(cur)];
	uint8_t(*del)[sizeof(cur)];
	uint32_t n = 0, i;
	void *prev = NULL;
	int err = 0;

	del = calloc(FERRY_BV_TRIE_MAX + 1, sizeof(*del));
	if (!del)
		return -ENOMEM;
	while (n <= FERRY_BV_TRIE_MAX &&
	       !bpf_map_get_next_key(fd, prev, next)) {
		/* gen is the byte after the 4-byte prefixlen */
		if (next[4] == gen)
			memcpy(del[n++], next, ksize);
		memcpy(cur, next, ksize);
		prev = cur;
	}
	for (i = 0; i < n && !err; i++)
		if (bpf_map_delete_elem(fd, del[i]) && errno != ENOENT)
			err = -errno;
	free(del);
	return err;
}

static int trie_fill(struct ferry_xdp_bpf *skel, const struct ferry_bvset *b)
{
	int fd4 = bpf_map__fd(skel->maps.ferry_bv_trie4);
	int fd6 = bpf_map__fd(skel->maps.ferry_bv_trie6);
	uint32_t k, field, idx;
	int err;

	err = trie_clear(fd4, sizeof(struct ferry_bv_key4), b->gen);
	if (!err)
		err = trie_clear(fd6, sizeof(struct ferry_bv_key6), b->gen);
	for (field = 0; field < 2 && !err; field++) {
		struct ferry_bv_key4 k4 = {.prefixlen = 16,
					   .gen = (uint8_t)b->gen,
					   .field = (uint8_t)field};
		struct ferry_bv_key6 k6 = {.prefixlen = 16,
					   .gen = (uint8_t)b->gen,
					   .field = (uint8_t)field};

		idx = b->base + PFX_REL + field;
		if (bpf_map_update_elem(fd4, &k4, &idx, 0) ||
		    bpf_map_update_elem(fd6, &k6, &idx, 0))
			err = -errno;
	}
	for (k = 0; k < b->n_pfx && !err; k++) {
		const struct bv_pfx *e = &b->pfx[k];

		idx = b->base + e->rel;
		if (e->family == 4) {
			struct ferry_bv_key4 k4 = {.prefixlen = 16u + e->plen,
						   .gen = (uint8_t)b->gen,
						   .field = e->field};

			memcpy(k4.addr, e->addr, 4);
			if (bpf_map_update_elem(fd4, &k4, &idx, 0))
				err = -errno;
		} else {
			struct ferry_bv_key6 k6 = {.prefixlen = 16u + e->plen,
						   .gen = (uint8_t)b->gen,
						   .field = e->field};

			memcpy(k6.addr, e->addr, 16);
			if (bpf_map_update_elem(fd6, &k6, &idx, 0))
				err = -errno;
		}
	}
	return err;
}

static int bv_install(struct ferry_xdp_bpf *skel, const struct ferry_bvset *b)
{
	struct ferry_bv_ports *rows;
	uint32_t field, r;
	int err;

	err = array_write(bpf_map__fd(skel->maps.ferry_bv_maps), b->base,
			  b->maps, sizeof(b->maps[0]), b->n_maps);
	if (err)
		return err;
	rows = calloc(FERRY_BV_PORT_ROWS, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	for (field = 0; field < 2 && !err; field++) {
		for (r = 0; r < FERRY_BV_PORT_ROWS; r++)
			memcpy(rows[r].ivl, &b->ivl[field][r * 32],
			       sizeof(rows[r].ivl));
		err = array_write(bpf_map__fd(skel->maps.ferry_bv_ports),
				  (b->gen * 2 + field) * FERRY_BV_PORT_ROWS,
				  rows, sizeof(*rows), FERRY_BV_PORT_ROWS);
	}
	free(rows);
	return err ? err : trie_fill(skel, b);
}

static int cfg_n_rules(struct ferry_xdp_bpf *skel, uint32_t n)
{
	int fd = bpf_map__fd(skel->maps.ferry_cfg);
	struct ferry_xdp_cfg cfg;
	uint32_t key = 0;

	if (bpf_map_lookup_elem(fd, &key, &cfg))
		return -errno;
	cfg.n_rules = n;
	if (bpf_map_update_elem(fd, &key, &cfg, 0))
		return -errno;
	return 0;
}

int ferry_cls_publish(struct ferry_xdp_bpf *skel, uint32_t *gen,
		      const struct ferry_rule *rules, uint32_t n,
		      enum ferry_cls_matcher matcher)
{
	uint32_t next, zero = 0;
	struct ferry_cls cls;
	struct ferry_cls_gen meta = {.n_rules = n, .matcher = FERRY_CLS_LINEAR};
	struct ferry_bvset *b = NULL;
	int err;

	if (n > FERRY_MAX_RULES)
		return -E2BIG;
	/* The map says which generation is live, not *gen: an adopted
	 * program (handover) may be on either. */
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.ferry_cls), &zero, &cls))
		return -errno;
	next = (cls.gen + 1) & 1;
	cls.gen = next;
	if (matcher >= FERRY_CLS__COUNT)
		matcher = n > FERRY_CLS_LINEAR_MAX ? FERRY_CLS_BITVEC
						   : FERRY_CLS_LINEAR;
	err = array_write(bpf_map__fd(skel->maps.ferry_rules),
			  next * FERRY_MAX_RULES, rules, sizeof(*rules), n);
	if (err)
		return err;
	if (matcher == FERRY_CLS_BITVEC) {
		b = ferry_bv_build(rules, n, next);
		if (!b)
			return -errno;
		err = bv_install(skel, b);
		meta = b->meta;
		ferry_bv_free(b);
		if (err)
			return err;
	}
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.ferry_cls_gens), &next,
				&meta, 0))
		return -errno;
	/* The flip: one word; a frame reads it once, before anything else
	 * of the table. */
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.ferry_cls), &zero, &cls,
				0))
		return -errno;
	*gen = next;
	err = cfg_n_rules(skel, n);
	/* The next publish rewrites the generation live until now: first
	 * every classifier run that may still be in it (it read the word
	 * before the flip) must end. MEMBARRIER_CMD_GLOBAL is
	 * synchronize_rcu() from userspace, as in ferry_xdp_runs_wait();
	 * where it is refused, a sleep far longer than a NAPI poll. */
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) < 0)
		usleep(10000);
	return err;
}
