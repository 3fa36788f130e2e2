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

/*
 * Every builder below costs O(n + cells x words) plus what the rules
 * themselves span, not O(cells x n): at 1000 rules a rebuild is a few ms.
 */

/* Family x protocol: the rules of any protocol, then each rule's own. */
static void build_protos(struct ferry_bvset *b, const struct ferry_rule *rules)
{
	static const uint8_t fams[3] = {0, 4, 6};
	struct ferry_bv any;
	uint32_t f, p, i;

	for (f = 0; f < 3; f++) {
		memset(&any, 0, sizeof(any));
		for (i = 0; i < b->n; i++)
			if (!rules[i].l4_proto &&
			    proto_ok(&rules[i], fams[f], 0))
				bit_set(&any, i);
		for (p = 0; p < 256; p++)
			b->maps[PROTO_REL + f * 256 + p] = any;
		for (i = 0; i < b->n; i++) {
			p = rules[i].l4_proto;
			if (!p || !proto_ok(&rules[i], fams[f], p))
				continue;
			bit_set(&b->maps[PROTO_REL + f * 256 + p], i);
			/* icmp: ICMPv6 too (proto_ok says which family) */
			if (p == IPPROTO_ICMP &&
			    proto_ok(&rules[i], fams[f], IPPROTO_ICMPV6))
				bit_set(&b->maps[PROTO_REL + f * 256 +
						 IPPROTO_ICMPV6],
					i);
		}
	}
}

/* Called with the bitmaps zeroed. */
static int build_ports(struct ferry_bvset *b, const struct ferry_rule *rules,
		       int field)
{
	uint8_t *cut = calloc(65537, 1);
	struct ferry_bv wild = {{0}};
	uint32_t i, k = 0, p, last;
	uint16_t lo, hi;

	if (!cut)
		return -ENOMEM;
	/* Interval starts: 0 and every range's lo and hi + 1. */
	cut[0] = 1;
	for (i = 0; i < b->n; i++) {
		range_of(&rules[i], field, &lo, &hi);
		if (!lo && !hi) {
			bit_set(&wild, i);
			continue;
		}
		cut[lo] = 1;
		cut[hi + 1u] = 1;
	}
	for (p = 0; p < 65536; p++) {
		if (cut[p] && p)
			k++;
		b->ivl[field][p] = (uint16_t)k;
	}
	free(cut);
	/* k + 1 intervals: the rules with no range in each, then each rule
	 * in the intervals its range spans; then "no ports". */
	last = k;
	for (k = 0; k <= last; k++)
		b->maps[PORT_REL(field) + k] = wild;
	for (i = 0; i < b->n; i++) {
		range_of(&rules[i], field, &lo, &hi);
		if (!lo && !hi)
			continue;
		for (k = b->ivl[field][lo]; k <= b->ivl[field][hi]; k++)
			bit_set(&b->maps[PORT_REL(field) + k], i);
	}
	b->maps[PORT_REL(field) + FERRY_BV_NOPORT] = wild;
	return 0;
}

static void pfx_of(const struct ferry_rule *r, int field, const uint32_t **a,
		   uint8_t *plen)
{
	*a = field ? r->dst : r->src;
	*plen = field ? r->dst_plen : r->src_plen;
}

static void mask_to(uint32_t out[4], const uint32_t *a, uint32_t bits)
{
	uint32_t i, nb;

	for (i = 0; i < 4; i++) {
		nb = bits > 32 ? 32 : bits;
		out[i] = nb ? a[i] & htonl(0xffffffffu << (32 - nb)) : 0;
		bits -= nb;
	}
}

/* Order of prefixes: family, then length, then address. */
static int pfx_cmp(const struct bv_pfx *x, const struct bv_pfx *y)
{
	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	if (x->plen != y->plen)
		return x->plen < y->plen ? -1 : 1;
	return memcmp(x->addr, y->addr, sizeof(x->addr));
}

struct pfx_rule {
	struct bv_pfx p;
	uint32_t rule;
};

static int pfx_rule_cmp(const void *a, const void *b)
{
	const struct pfx_rule *x = a, *y = b;
	int c = pfx_cmp(&x->p, &y->p);

	return c ? c : (x->rule > y->rule) - (x->rule < y->rule);
}

/* The entry equal to want among sorted e[0..n), or NULL. */
static const struct bv_pfx *pfx_find(const struct bv_pfx *e, uint32_t n,
				     const struct bv_pfx *want)
{
	uint32_t lo = 0, hi = n, mid;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = pfx_cmp(&e[mid], want);
		if (!c)
			return &e[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * One bitmap per distinct prefix: the rules without a prefix, the rules
 * with exactly this one, and (so every rule whose prefix covers it) the
 * bitmap of its nearest shorter stored prefix, built first since the
 * prefixes are taken in order of length.
 */
static int build_prefixes(struct ferry_bvset *b, const struct ferry_rule *rules,
			  int field)
{
	uint32_t wild = PFX_REL + (uint32_t)field, i, n = 0, first, l, w;
	struct pfx_rule *pr = calloc(b->n ? b->n : 1, sizeof(*pr));
	const struct bv_pfx *anc;
	struct bv_pfx want;
	const uint32_t *a;
	uint8_t plen;

	if (!pr)
		return -ENOMEM;
	for (i = 0; i < b->n; i++) {
		pfx_of(&rules[i], field, &a, &plen);
		if (!plen) {
			bit_set(&b->maps[wild], i);
			continue;
		}
		pr[n].p.family = rules[i].family;
		pr[n].p.field = (uint8_t)field;
		pr[n].p.plen = plen;
		mask_to(pr[n].p.addr, a, plen);
		pr[n].rule = i;
		n++;
	}
	qsort(pr, n, sizeof(*pr), pfx_rule_cmp);
	first = b->n_pfx;
	for (i = 0; i < n; i++) {
		struct bv_pfx *e = NULL;

		if (b->n_pfx > first &&
		    !pfx_cmp(&b->pfx[b->n_pfx - 1], &pr[i].p))
			e = &b->pfx[b->n_pfx -
				    1]; /* a rule more, same prefix */
		if (!e) {
			e = &b->pfx[b->n_pfx++];
			*e = pr[i].p;
			e->rel = b->n_maps++;
			b->maps[e->rel] = b->maps[wild];
			anc = NULL;
			want = *e;
			for (l = e->plen; !anc && l-- > 1;) {
				want.plen = (uint8_t)l;
				mask_to(want.addr, e->addr, l);
				anc = pfx_find(&b->pfx[first],
					       b->n_pfx - 1 - first, &want);
			}
			for (w = 0; anc && w < FERRY_BV_WORDS; w++)
				b->maps[e->rel].w[w] |= b->maps[anc->rel].w[w];
		}
		bit_set(&b->maps[e->rel], pr[i].rule);
	}
	free(pr);
	return 0;
}

struct ferry_bvset *ferry_bv_build(const struct ferry_rule *rules, uint32_t n,
				   uint32_t gen)
{
	struct ferry_bvset *b;

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
	build_protos(b, rules);
	if (build_ports(b, rules, 0) || build_ports(b, rules, 1) ||
	    build_prefixes(b, rules, 0) || build_prefixes(b, rules, 1)) {
		free(b);
		errno = ENOMEM;
		return NULL;
	}
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
