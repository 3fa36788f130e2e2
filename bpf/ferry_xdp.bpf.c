// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ferry_xdp - the classifier in front of ferry's AF_XDP sockets.
 *
 * Parses each frame, drops malformed ones, optionally hands ARP and NDP to
 * the kernel, then walks the rule table (first match wins) and sends the
 * frame to the AF_XDP socket of its RX queue, to the kernel, to a CPU, or
 * to the bin. Every frame is counted under exactly one enum ferry_reason,
 * so the per-CPU verdict counters add up to the frames received.
 *
 * Both XDP programs are xdp.frags: they take multi-buffer frames, which is
 * what lets them attach in native mode to a device whose MTU does not fit
 * one page (veth at MTU 9000 refuses a program without it: ERANGE).
 */
#include <linux/bpf.h>
#include <linux/errno.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "ferry_abi.h"
#include "ferry_parse.h"
#include "ferry_csum.h"
#include "ferry_capture_abi.h"

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, FERRY_MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} xsks_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ferry_xdp_cfg);
} ferry_cfg SEC(".maps");

/* Two generations of the rule table: see ferry_cls in ferry_abi.h. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * FERRY_MAX_RULES);
	__type(key, __u32);
	__type(value, struct ferry_rule);
} ferry_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FERRY_R__COUNT);
	__type(key, __u32);
	__type(value, struct ferry_verdict_ctr);
} ferry_verdicts SEC(".maps");

/* CPU steering: one entry per target CPU, shared by the port's rules. */
struct {
	__uint(type, BPF_MAP_TYPE_CPUMAP);
	__uint(max_entries, FERRY_MAX_CPUS);
	__type(key, __u32);
	__type(value, struct bpf_cpumap_val);
} cpu_map SEC(".maps");

/* A FERRY_ACT_CPU rule's CPU set, indexed by its slot (rule.arg). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FERRY_MAX_STEER);
	__type(key, __u32);
	__type(value, struct ferry_cpuset);
} ferry_cpusets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FERRY_STEER_N_CTRS);
	__type(key, __u32);
	__type(value, struct ferry_steer_ctr);
} ferry_steer_ctrs SEC(".maps");

/* Per target CPU, from the xdp_cpumap_enqueue tracepoint. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FERRY_MAX_CPUS);
	__type(key, __u32);
	__type(value, struct ferry_cpumap_ctr);
} ferry_cpumap_ctrs SEC(".maps");

/* Software RSS counters, per spread socket (see ferry_abi.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FERRY_SPREAD_MAX);
	__type(key, __u32);
	__type(value, struct ferry_spread_ctr);
} ferry_spread_ctrs SEC(".maps");

/* Id of this object's cpu_map, written by the daemon after load: the
 * tracepoint fires for every CPUMAP on the host. */
__u32 ferry_cpu_map_id;

/* The in-kernel xconnect path (ferry_abi.h): the egress device, and the
 * DEVMAP program of a tx capture on it while one runs (ferry_cap_tx). */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, FERRY_DEV_SLOTS);
	__type(key, __u32);
	__type(value, struct bpf_devmap_val);
} ferry_tx_dev SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ferry_kfwd_ctr);
} ferry_kfwd_ctrs SEC(".maps");

/* Written by the daemon after load, like ferry_cpu_map_id: which
 * redirects the tracepoints below belong to (they fire host-wide). */
__u32 ferry_tx_dev_map_id;
__u32 ferry_rx_ifindex;
__u32 ferry_rx_netns; /* inode of the port's network namespace */

static __always_inline void count(__u32 reason, __u64 bytes)
{
	struct ferry_verdict_ctr *ctr;

	ctr = bpf_map_lookup_elem(&ferry_verdicts, &reason);
	if (ctr) {
		/* Per-CPU slot: no other writer, no atomics needed. */
		ctr->packets++;
		ctr->bytes += bytes;
	}
}

/* Network-order mask of the top `bits` bits of a word, 1 <= bits <= 32. */
static __always_inline __u32 prefix_mask(__u32 bits)
{
	return bpf_htonl(0xffffffffU << (32 - bits));
}

/* want/plen against the frame's address of its family. */
static __always_inline int prefix_match(const __u32 *want, __u32 plen,
					const __u32 *addr, __u8 family)
{
	__u32 bits;
	int i;

	if (plen == 0)
		return 1;
	if (family == 4) {
		bits = plen > 32 ? 32 : plen;
		return ((addr[0] ^ want[0]) & prefix_mask(bits)) == 0;
	}
	if (family != 6)
		return 0;
	FERRY_UNROLL
	for (i = 0; i < 4; i++) {
		if (plen <= 32 * i)
			break;
		bits = plen - 32 * i;
		if (bits > 32)
			bits = 32;
		if ((addr[i] ^ want[i]) & prefix_mask(bits))
			return 0;
	}
	return 1;
}

/* Only TCP and UDP have ports; fragments after the first carry none.
 * ICMP's type in sport must not match a port rule. */
static __always_inline int has_ports(const struct ferry_pkt *pkt)
{
	return !pkt->is_frag &&
	       (pkt->l4_proto == IPPROTO_TCP || pkt->l4_proto == IPPROTO_UDP);
}

/*
 * A zero field matches anything, so a non-IP frame (family, l4_proto and
 * ports all zero) matches only a rule whose match fields are all zero.
 */
static __always_inline int rule_match(const struct ferry_rule *r,
				      const struct ferry_pkt *pkt)
{
	if (r->family && r->family != pkt->family)
		return 0;
	if (r->l4_proto && r->l4_proto != pkt->l4_proto &&
	    !(r->l4_proto == IPPROTO_ICMP && pkt->l4_proto == IPPROTO_ICMPV6))
		return 0;
	if (r->dport_lo || r->dport_hi) {
		if (!has_ports(pkt) || pkt->dport < r->dport_lo ||
		    pkt->dport > r->dport_hi)
			return 0;
	}
	if (r->sport_lo || r->sport_hi) {
		if (!has_ports(pkt) || pkt->sport < r->sport_lo ||
		    pkt->sport > r->sport_hi)
			return 0;
	}
	return prefix_match(r->dst, r->dst_plen, pkt->dst, pkt->family) &&
	       prefix_match(r->src, r->src_plen, pkt->src, pkt->family);
}

/* Per rule (ferry_rule.ctr), per CPU: the frames it matched, first. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FERRY_MAX_RULES);
	__type(key, __u32);
	__type(value, struct ferry_verdict_ctr);
} ferry_rule_ctrs SEC(".maps");

/* The generation in use, and each generation's shape (ferry_abi.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ferry_cls);
} ferry_cls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct ferry_cls_gen);
} ferry_cls_gens SEC(".maps");

/* The bit-vector matcher's bitmaps, FERRY_BV_PER_GEN per generation. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * FERRY_BV_PER_GEN);
	__type(key, __u32);
	__type(value, struct ferry_bv);
} ferry_bv_maps SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * 2 * FERRY_BV_PORT_ROWS);
	__type(key, __u32);
	__type(value, struct ferry_bv_ports);
} ferry_bv_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, FERRY_BV_TRIE_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct ferry_bv_key4);
	__type(value, __u32);
} ferry_bv_trie4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, FERRY_BV_TRIE_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct ferry_bv_key6);
	__type(value, __u32);
} ferry_bv_trie6 SEC(".maps");

struct linear_ctx {
	struct ferry_pkt pkt;
	__u32 base; /* gen * FERRY_MAX_RULES */
	int found;
};

static int linear_step(__u32 i, void *data)
{
	struct linear_ctx *c = data;
	const struct ferry_rule *r;
	__u32 key = c->base + i;

	r = bpf_map_lookup_elem(&ferry_rules, &key);
	if (!r)
		return 1;
	if (!rule_match(r, &c->pkt))
		return 0;
	c->found = (int)key;
	return 1;
}

/*
 * The rules in order, first match wins. A short table in a bounded loop;
 * a long one through bpf_loop: the verifier walks a bounded loop once per
 * iteration and gives up on 1024 of them ("sequence of 8193 jumps is too
 * complex"), while bpf_loop's callback is checked once and costs an
 * indirect call per rule.
 */
__noinline int linear_match(const struct ferry_pkt *pkt, __u32 gen,
			    __u32 n_rules)
{
	struct linear_ctx c = {.found = -1};
	const struct ferry_rule *r;
	__u32 i, key;

	if (!pkt)
		return -1;
	if (n_rules <= FERRY_CLS_WALK_INLINE) {
		for (i = 0; i < FERRY_CLS_WALK_INLINE; i++) {
			if (i >= n_rules)
				break;
			key = (gen & 1) * FERRY_MAX_RULES + i;
			r = bpf_map_lookup_elem(&ferry_rules, &key);
			if (!r)
				break;
			if (rule_match(r, pkt))
				return (int)key;
		}
		return -1;
	}
	c.pkt = *pkt;
	c.base = (gen & 1) * FERRY_MAX_RULES;
	if (n_rules > FERRY_MAX_RULES)
		n_rules = FERRY_MAX_RULES;
	bpf_loop(n_rules, linear_step, &c, 0);
	return c.found;
}

/* Bitmap of the elementary port interval the frame's port falls in. */
static __always_inline const struct ferry_bv *
bv_port(__u32 gen, const struct ferry_cls_gen *g, __u32 field, __u16 port,
	int ports)
{
	const struct ferry_bv_ports *row;
	__u32 key, idx;

	field &= 1;
	if (!ports) {
		idx = g->port_base[field] + FERRY_BV_NOPORT;
		return bpf_map_lookup_elem(&ferry_bv_maps, &idx);
	}
	key = (gen * 2 + field) * FERRY_BV_PORT_ROWS + port / 32;
	row = bpf_map_lookup_elem(&ferry_bv_ports, &key);
	if (!row)
		return NULL;
	idx = g->port_base[field] + row->ivl[port & 31];
	return bpf_map_lookup_elem(&ferry_bv_maps, &idx);
}

static __always_inline const struct ferry_bv *
bv_prefix(__u32 gen, __u8 field, const struct ferry_pkt *pkt)
{
	const __u32 *idx;

	if (pkt->family == 4) {
		struct ferry_bv_key4 k = {
			.prefixlen = 16 + 32, .gen = (__u8)gen, .field = field};

		__builtin_memcpy(k.addr, field ? &pkt->dst[0] : &pkt->src[0],
				 4);
		idx = bpf_map_lookup_elem(&ferry_bv_trie4, &k);
	} else {
		struct ferry_bv_key6 k = {.prefixlen = 16 + 128,
					  .gen = (__u8)gen,
					  .field = field};

		__builtin_memcpy(k.addr, field ? pkt->dst : pkt->src, 16);
		idx = bpf_map_lookup_elem(&ferry_bv_trie6, &k);
	}
	if (!idx)
		return NULL;
	return bpf_map_lookup_elem(&ferry_bv_maps, idx);
}

/* Index of the lowest bit set in w != 0: clang 14 cannot lower
 * __builtin_ctzll for BPF (it crashes), so by halving. */
static __always_inline __u32 ctz64(__u64 w)
{
	__u32 n = 0;

	if (!(w & 0xffffffffull)) {
		n += 32;
		w >>= 32;
	}
	if (!(w & 0xffff)) {
		n += 16;
		w >>= 16;
	}
	if (!(w & 0xff)) {
		n += 8;
		w >>= 8;
	}
	if (!(w & 0xf)) {
		n += 4;
		w >>= 4;
	}
	if (!(w & 0x3)) {
		n += 2;
		w >>= 2;
	}
	if (!(w & 0x1))
		n += 1;
	return n;
}

/* Position of the lowest rule whose every field matched, or -1. */
__noinline int bv_match(const struct ferry_pkt *pkt, __u32 gen,
			const struct ferry_cls_gen *g)
{
	const struct ferry_bv *fp, *sp = NULL, *dp = NULL, *s4 = NULL,
				   *d4 = NULL;
	__u32 fam, idx, i, n_words = g->n_words;
	int ports, ip;
	__u64 w;

	if (!pkt || !g)
		return -1;
	gen &= 1;
	fam = pkt->family == 4 ? 1 : pkt->family == 6 ? 2 : 0;
	idx = g->proto_base + fam * 256 + pkt->l4_proto;
	fp = bpf_map_lookup_elem(&ferry_bv_maps, &idx);
	if (!fp)
		return -1;
	ip = fam != 0;
	if (ip) {
		ports = has_ports(pkt);
		sp = bv_port(gen, g, 0, pkt->sport, ports);
		dp = bv_port(gen, g, 1, pkt->dport, ports);
		s4 = bv_prefix(gen, 0, pkt);
		d4 = bv_prefix(gen, 1, pkt);
		if (!sp || !dp || !s4 || !d4)
			return -1;
	}
	if (n_words > FERRY_BV_WORDS)
		n_words = FERRY_BV_WORDS;
	for (i = 0; i < FERRY_BV_WORDS; i++) {
		if (i >= n_words)
			break;
		w = fp->w[i];
		if (ip && sp && dp && s4 && d4)
			w &= sp->w[i] & dp->w[i] & s4->w[i] & d4->w[i];
		if (w)
			return (int)(i * 64 + ctz64(w));
	}
	return -1;
}

/*
 * The ferry_rules key of the first rule of the live generation that
 * matches, or -1; the rule's counter counts the frame (bytes: its whole
 * length). n_rules is the port config's copy of the live count, 0 when
 * the table is empty: the frame then skips the table's lookups; the count
 * that goes with the rules is the generation's.
 *
 * A global (non-static, noinline) function, because the verifier checks a
 * global function once, on its own, instead of once per path that reaches
 * the call: inlined, the loop was walked again for every way the parser
 * can finish, half a million instructions and 20 s to load.
 * pkt arrives as a maybe-NULL pointer to memory of its size.
 */
__noinline int match_rules(const struct ferry_pkt *pkt, __u32 n_rules,
			   __u64 bytes)
{
	const struct ferry_cls_gen *g;
	struct ferry_verdict_ctr *ctr;
	const struct ferry_cls *cls;
	const struct ferry_rule *r;
	__u32 zero = 0, gen, key;
	int at;

	if (!pkt || n_rules == 0)
		return -1;
	cls = bpf_map_lookup_elem(&ferry_cls, &zero);
	if (!cls)
		return -1;
	gen = cls->gen & 1;
	g = bpf_map_lookup_elem(&ferry_cls_gens, &gen);
	if (!g || g->n_rules == 0)
		return -1;
	if (g->matcher == FERRY_CLS_BITVEC) {
		at = bv_match(pkt, gen, g);
		if (at < 0 || (__u32)at >= g->n_rules)
			return -1;
		at += (int)(gen * FERRY_MAX_RULES);
	} else {
		at = linear_match(pkt, gen, g->n_rules);
		if (at < 0)
			return -1;
	}
	key = (__u32)at;
	r = bpf_map_lookup_elem(&ferry_rules, &key);
	if (!r)
		return -1;
	key = r->ctr;
	ctr = bpf_map_lookup_elem(&ferry_rule_ctrs, &key);
	if (ctr) {
		ctr->packets++;
		ctr->bytes += bytes;
	}
	return at;
}

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FERRY_LOCAL_MAX);
	__type(key, struct ferry_local_key);
	__type(value, __u8);
} ferry_local SEC(".maps");

/*
 * Route ports: what the kernel answers for itself goes to it, decided here
 * before a worker sees it. IPv6 link-local and multicast destinations, IPv4
 * multicast and broadcast, the host's own addresses and frames that are not
 * IP (a bond's LACPDUs, LLDP): the PASS reason, or 0 for the XSK (the route
 * app). Not inlined: its key would add to
 * ferry_xdp's frame, which with the checksum helper's is at the limit.
 */
static __noinline __u32 route_host(const struct ferry_pkt *pkt)
{
	struct ferry_local_key k = {.family = pkt->family};
	__u32 d0 = bpf_ntohl(pkt->dst[0]);

	if (pkt->family == 6) {
		/* fe80::/10, ff00::/8 */
		if ((d0 & 0xffc00000) == 0xfe800000 || (d0 >> 24) == 0xff)
			return FERRY_R_PASS_LINK_LOCAL;
		k.addr[0] = pkt->dst[0];
		k.addr[1] = pkt->dst[1];
		k.addr[2] = pkt->dst[2];
		k.addr[3] = pkt->dst[3];
	} else if (pkt->family == 4) {
		if ((d0 >> 28) == 0xe || d0 == 0xffffffff)
			return FERRY_R_PASS_LINK_LOCAL;
		k.addr[0] = pkt->dst[0];
	} else {
		/* not IP (LACP, LLDP, ...): only the kernel has a use for it */
		return FERRY_R_PASS_NOT_IP;
	}
	return bpf_map_lookup_elem(&ferry_local, &k) ? FERRY_R_PASS_LOCAL : 0;
}

static __always_inline int is_ndp(const struct ferry_pkt *pkt)
{
	return pkt->family == 6 && pkt->l4_proto == IPPROTO_ICMPV6 &&
	       !pkt->is_frag && pkt->sport >= FERRY_NDP_FIRST &&
	       pkt->sport <= FERRY_NDP_LAST;
}

/*
 * Frames steered to the host through CPUMAP: the kernel builds a fresh skb
 * on the target CPU, without the CHECKSUM_PARTIAL mark the sender's skb
 * had, so a partial TCP/UDP checksum (see bpf/ferry_csum.h) would be
 * dropped by the stack as a bad one. This completes it here, on the RX
 * CPU, before the redirect. Frames whose field is not the pseudo-header
 * sum pay for the compare only; correct checksums are never rewritten
 * (they do not match, or match and recompute to themselves).
 *
 * The L4 bytes are copied out in chunks (bpf_xdp_load_bytes reads across
 * the fragments of a multi-buffer frame) and summed by bpf_csum_diff: the
 * verifier cannot bound a variable-length walk over packet memory.
 * Returns 1 when the field was rewritten, 0 when the frame needed nothing,
 * -errno when it could not be read or written (the frame goes on as it is).
 *
 * Global and noinline, so the verifier checks its loop once.
 */
#define FERRY_CSUM_CHUNK 256
/* Headers end within this many bytes of a frame ferry reads directly. */
#define FERRY_CSUM_SCREEN_MAX 512
#define FERRY_CSUM_MAX_CHUNKS ((9216 + FERRY_CSUM_CHUNK - 1) / FERRY_CSUM_CHUNK)

__noinline int ferry_csum_complete(struct xdp_md *ctx,
				   const struct ferry_pkt *pkt)
{
	__u32 buf[FERRY_CSUM_CHUNK / 4];
	__u32 l4_len, l4_off, field_off, done = 0, n, i;
	__u64 pseudo, sum = 0;
	__u16 field, c;
	__s64 part;

	if (!pkt || pkt->is_frag || pkt->more_frags)
		return 0;
	if (pkt->l4_proto == IPPROTO_TCP)
		field_off = offsetof(struct tcphdr, check);
	else if (pkt->l4_proto == IPPROTO_UDP)
		field_off = offsetof(struct udphdr, check);
	else
		return 0;
	l4_len = pkt->l4_len;
	l4_off = pkt->l4_off;
	if (pkt->family == 4)
		pseudo = ferry_csum_pseudo4(pkt->src[0], pkt->dst[0],
					    pkt->l4_proto, l4_len);
	else if (pkt->family == 6)
		pseudo = ferry_csum_pseudo6(pkt->src, pkt->dst, pkt->l4_proto,
					    l4_len);
	else
		return 0;
	if (bpf_xdp_load_bytes(ctx, l4_off + field_off, &field, sizeof(field)))
		return -EFAULT;
	if (!ferry_csum_is_partial(field, pseudo))
		return 0;

	/* Whole chunks, then the tail once: a loop whose body may end the
	 * frame would let the verifier's paths multiply per iteration. */
	for (i = 0; i < FERRY_CSUM_MAX_CHUNKS; i++) {
		if (l4_len - done < FERRY_CSUM_CHUNK)
			break;
		if (bpf_xdp_load_bytes(ctx, l4_off + done, buf,
				       FERRY_CSUM_CHUNK))
			return -EFAULT;
		part = bpf_csum_diff(NULL, 0, buf, FERRY_CSUM_CHUNK, 0);
		if (part < 0)
			return -EINVAL;
		sum += (__u32)part;
		done += FERRY_CSUM_CHUNK;
	}
	n = l4_len - done;
	if (n >= FERRY_CSUM_CHUNK)
		return -E2BIG;
	if (n) {
		/* Zero padded, so the whole buffer can be summed. The mask
		 * is for the verifier, which must see n bounded; clang
		 * knows n < CHUNK and would drop it, so n is hidden from
		 * clang first. */
		__builtin_memset(buf, 0, sizeof(buf));
		asm volatile("" : "+r"(n));
		n &= FERRY_CSUM_CHUNK - 1;
		if (n == 0 || bpf_xdp_load_bytes(ctx, l4_off + done, buf, n))
			return -EFAULT;
		part = bpf_csum_diff(NULL, 0, buf, FERRY_CSUM_CHUNK, 0);
		if (part < 0)
			return -EINVAL;
		sum += (__u32)part;
	}
	c = ferry_csum_final(pseudo, ferry_csum_unsum(sum, field),
			     pkt->l4_proto);
	if (c == field)
		return 0;
	if (bpf_xdp_store_bytes(ctx, l4_off + field_off, &c, sizeof(c)))
		return -EFAULT;
	return 1;
}

/* ---- capture: frames no worker sees (ferry_capture.bpf.h) ---- */

#include "ferry_capture.bpf.h"

/*
 * Whether a frame may carry a partial checksum, read straight from the
 * packet when its L4 checksum field is in the first buffer: the common
 * frame (a complete checksum) then costs a compare, with no call and no
 * helper; ferry_csum_complete (which decides again, on any buffer) runs
 * for the rest.
 */
static __always_inline int csum_maybe_partial(struct xdp_md *ctx,
					      const struct ferry_pkt *pkt)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 off = pkt->l4_off;
	__u64 pseudo;
	__u16 *field;

	if (pkt->is_frag || pkt->more_frags)
		return 0;
	if (pkt->l4_proto == IPPROTO_TCP)
		off += offsetof(struct tcphdr, check);
	else if (pkt->l4_proto == IPPROTO_UDP)
		off += offsetof(struct udphdr, check);
	else
		return 0;
	if (off > FERRY_CSUM_SCREEN_MAX)
		return 1;
	field = data + off;
	if ((void *)(field + 1) > data_end)
		return 1;
	if (pkt->family == 4)
		pseudo = ferry_csum_pseudo4(pkt->src[0], pkt->dst[0],
					    pkt->l4_proto, pkt->l4_len);
	else
		pseudo = ferry_csum_pseudo6(pkt->src, pkt->dst, pkt->l4_proto,
					    pkt->l4_len);
	return ferry_csum_is_partial(*field, pseudo);
}

/* Completes a partial checksum before a redirect that builds a fresh skb
 * (CPUMAP, DEVMAP into a veth): see ferry_csum_complete. */
static __always_inline void csum_fix(struct xdp_md *ctx,
				     const struct ferry_pkt *pkt)
{
	if (csum_maybe_partial(ctx, pkt))
		ferry_csum_complete(ctx, pkt);
}

/*
 * Into cpu's CPUMAP entry, with tag in the metadata area for the CPUMAP
 * program: without headroom for it the frame still goes, and the remote CPU
 * cannot attribute it. *ok or *failed (either may be NULL) counts the
 * outcome. Flags 0: a missing entry makes the helper return XDP_ABORTED; we
 * count and drop rather than abort. A full queue is only found at flush
 * time: see ferry_cpumap_enqueue below.
 */
static __always_inline int to_cpu(struct xdp_md *ctx, __u32 cpu, __u32 tag,
				  __u64 *ok, __u64 *failed, __u64 bytes)
{
	__u32 *meta;
	void *data;

	if (!bpf_xdp_adjust_meta(ctx, -(int)sizeof(__u32))) {
		meta = (void *)(long)ctx->data_meta;
		data = (void *)(long)ctx->data;
		if ((void *)(meta + 1) <= data)
			*meta = tag;
	}
	if (bpf_redirect_map(&cpu_map, cpu, 0) != XDP_REDIRECT) {
		if (failed)
			(*failed)++;
		count(FERRY_R_DROP_NO_CPU, bytes);
		cap_xdp(ctx, FERRY_R_DROP_NO_CPU, XDP_DROP);
		return XDP_DROP;
	}
	if (ok)
		(*ok)++;
	count(FERRY_R_CPU_REDIRECT, bytes);
	cap_xdp(ctx, FERRY_R_CPU_REDIRECT, XDP_REDIRECT);
	return XDP_REDIRECT;
}

/*
 * Sends the frame to the CPU its flow hashes to among the rule's CPU set,
 * with the rule's slot in the metadata area for the CPUMAP program.
 */
static __always_inline int
steer(struct xdp_md *ctx, const struct ferry_pkt *pkt, __u32 slot, __u64 bytes)
{
	const struct ferry_cpuset *set;
	struct ferry_steer_ctr *ctr;
	__u32 i, cpu, idx;

	set = bpf_map_lookup_elem(&ferry_cpusets, &slot);
	if (!set || set->n == 0 || set->n > FERRY_MAX_CPUS ||
	    slot >= FERRY_MAX_STEER) {
		count(FERRY_R_DROP_NO_CPU, bytes);
		return XDP_DROP;
	}
	i = ferry_flow_hash(pkt) % set->n;
	/* clang knows i < n <= FERRY_MAX_CPUS and drops a plain bound
	 * check; the verifier does not know it, so hide i from clang. */
	asm volatile("" : "+r"(i));
	if (i >= FERRY_MAX_CPUS) {
		count(FERRY_R_DROP_NO_CPU, bytes);
		return XDP_DROP;
	}
	cpu = set->cpu[i] & (FERRY_MAX_CPUS - 1);
	idx = FERRY_STEER_CTR_IDX(slot, cpu);
	/* Not counted: a frame that cannot be completed still goes, and
	 * the stack's own counter (TcpInCsumErrors) says so. */
	csum_fix(ctx, pkt);
	ctr = bpf_map_lookup_elem(&ferry_steer_ctrs, &idx);
	return to_cpu(ctx, cpu, FERRY_STEER_META_TAG | slot,
		      ctr ? &ctr->steered : NULL,
		      ctr ? &ctr->enqueue_failed : NULL, bytes);
}

/*
 * Software RSS: the socket of the worker the flow hashes to, straight from
 * here (DIRECT) or through that worker's CPU (CPUMAP), with the socket's
 * index in the metadata area for the CPUMAP program.
 */
static __always_inline int spread(struct xdp_md *ctx,
				  const struct ferry_xdp_cfg *cfg,
				  const struct ferry_pkt *pkt, __u64 bytes)
{
	struct ferry_spread_ctr *ctr;
	__u32 i, cpu;

	i = ferry_flow_hash(pkt) % cfg->spread_n;
	asm volatile("" : "+r"(i)); /* see steer(): keep the bound check */
	if (i >= FERRY_SPREAD_MAX) {
		count(FERRY_R_PASS_NO_XSK, bytes);
		return XDP_PASS;
	}
	ctr = bpf_map_lookup_elem(&ferry_spread_ctrs, &i);
	if (cfg->spread_via == FERRY_SPREAD_DIRECT) {
		/* The kernel delivers only to a socket bound to the queue
		 * the frame arrived on. */
		if (ctx->rx_queue_index != cfg->spread_queue ||
		    bpf_redirect_map(&xsks_map, i, 0) != XDP_REDIRECT) {
			if (ctr)
				ctr->failed++;
			count(FERRY_R_PASS_NO_XSK, bytes);
			return XDP_PASS;
		}
		if (ctr)
			ctr->steered++;
		count(FERRY_R_XSK_REDIRECT, bytes);
		return XDP_REDIRECT;
	}
	/* i was spilled and reloaded: the verifier lost its bound, so mask
	 * it again, behind a barrier clang cannot see through. */
	cpu = i;
	asm volatile("" : "+r"(cpu));
	cpu = cfg->spread_cpu[cpu & (FERRY_SPREAD_MAX - 1)] &
	      (FERRY_MAX_CPUS - 1);
	return to_cpu(ctx, cpu, FERRY_SPREAD_META_TAG | i,
		      ctr ? &ctr->steered : NULL, ctr ? &ctr->failed : NULL,
		      bytes);
}

/*
 * The in-kernel xconnect path: into the egress device of DEVMAP slot 0;
 * the kernel bulks the frames and flushes once per NAPI poll. A DEVMAP
 * redirect builds a fresh skb on the egress side (a veth), without the
 * CHECKSUM_PARTIAL mark, so partial checksums are completed first, as
 * for CPUMAP. What fails later, at redirect or transmit time, is counted
 * by the tracepoints below.
 */
static __always_inline int to_dev(struct xdp_md *ctx,
				  const struct ferry_pkt *pkt, __u64 bytes)
{
	csum_fix(ctx, pkt);
	if (bpf_redirect_map(&ferry_tx_dev, 0, 0) != XDP_REDIRECT) {
		count(FERRY_R_DROP_NO_DEV, bytes);
		cap_xdp(ctx, FERRY_R_DROP_NO_DEV, XDP_DROP);
		return XDP_DROP;
	}
	count(FERRY_R_DEV_REDIRECT, bytes);
	/* No worker sees these frames: a capture takes them here. */
	cap_xdp(ctx, FERRY_R_DEV_REDIRECT, XDP_REDIRECT);
	return XDP_REDIRECT;
}

#include "ferry_fib.bpf.h"

/* The route app's kernel path (ferry_fib.bpf.h): the frame is redirected, or
 * lost to a failed redirect after its rewrite, or goes on to the worker. */
static __always_inline int fib_path(struct xdp_md *ctx,
				    const struct ferry_pkt *pkt, __u64 bytes)
{
	int ret = ferry_fib_fwd(ctx, pkt);

	if (ret == XDP_REDIRECT) {
		/* (captured by ferry_fib_fwd, before its rewrite) */
		csum_fix(ctx, pkt);
		count(FERRY_R_DEV_REDIRECT, bytes);
	} else if (ret >= 0) {
		count(FERRY_R_DROP_NO_DEV, bytes);
		cap_xdp(ctx, FERRY_R_DROP_NO_DEV, XDP_DROP);
	}
	return ret;
}

SEC("xdp.frags")
int ferry_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	/* The whole frame, fragments included; counters count it all. */
	__u64 bytes = bpf_xdp_get_buff_len(ctx);
	const struct ferry_xdp_cfg *cfg;
	const struct ferry_rule *r;
	struct ferry_pkt pkt;
	__u32 key = 0, n_rules, qid, arg = 0;
	int matched = 0, ret, idx;
	__u8 action;

	ret = ferry_parse_len(data, data_end, (__u32)bytes, &pkt);
	if (ret != FERRY_PARSE_OK) {
		count(ret, bytes);
		cap_xdp(ctx, ret, XDP_DROP);
		return XDP_DROP;
	}

	cfg = bpf_map_lookup_elem(&ferry_cfg, &key);
	if (!cfg) {
		count(FERRY_R_PASS_NO_RULE, bytes);
		return XDP_PASS;
	}

	if (cfg->pass_arp_ndp) {
		if (pkt.ethertype == ETH_P_ARP) {
			count(FERRY_R_PASS_ARP, bytes);
			return XDP_PASS;
		}
		if (is_ndp(&pkt)) {
			count(FERRY_R_PASS_NDP, bytes);
			return XDP_PASS;
		}
	}

	if (cfg->route_host) {
		__u32 why = route_host(&pkt);

		if (why) {
			count(why, bytes);
			return XDP_PASS;
		}
	}

	action = cfg->default_action;
	n_rules = cfg->n_rules;
	/* No rules, no call: the kernel path's common case. */
	idx = n_rules ? match_rules(&pkt, n_rules, bytes) : -1;
	if (idx >= 0) {
		key = idx;
		r = bpf_map_lookup_elem(&ferry_rules, &key);
		if (r) {
			action = r->action;
			arg = r->arg;
			matched = 1;
		}
	}
	/* An ACL's pass: on to the app, the later rules skipped. */
	if (action == FERRY_ACT_APP)
		action = cfg->default_action;

	switch (action) {
	case FERRY_ACT_XSK:
		if (cfg->kernel_fwd == FERRY_KFWD_FIB) {
			ret = fib_path(ctx, &pkt, bytes);
			if (ret >= 0)
				return ret;
		} else if (cfg->kernel_fwd) {
			return to_dev(ctx, &pkt, bytes);
		}
		if (cfg->spread_n)
			return spread(ctx, cfg, &pkt, bytes);
		/* One lookup decides both the verdict and its counter: a
		 * socket leaving the map between a lookup and the redirect
		 * would be counted as redirected and passed to the kernel. */
		qid = ctx->rx_queue_index;
		if (bpf_redirect_map(&xsks_map, qid, 0) != XDP_REDIRECT) {
			count(FERRY_R_PASS_NO_XSK, bytes);
			return XDP_PASS;
		}
		count(FERRY_R_XSK_REDIRECT, bytes);
		return XDP_REDIRECT;
	case FERRY_ACT_DROP:
		count(FERRY_R_DROP_RULE, bytes);
		cap_xdp(ctx, FERRY_R_DROP_RULE, XDP_DROP);
		return XDP_DROP;
	case FERRY_ACT_CPU:
		return steer(ctx, &pkt, arg, bytes);
	default:
		/* FERRY_ACT_PASS, and any action this program predates. */
		count(matched ? FERRY_R_PASS_RULE : FERRY_R_PASS_NO_RULE,
		      bytes);
		return XDP_PASS;
	}
}

/*
 * Software RSS, second stage: on the socket's CPU, into the socket. A frame
 * that finds no socket is dropped and counted, never left to the stack.
 */
static __always_inline int spread_hand(__u32 i)
{
	struct ferry_spread_ctr *ctr;

	if (i >= FERRY_SPREAD_MAX)
		return XDP_DROP;
	ctr = bpf_map_lookup_elem(&ferry_spread_ctrs, &i);
	if (bpf_redirect_map(&xsks_map, i, 0) != XDP_REDIRECT) {
		if (ctr)
			ctr->failed++;
		return XDP_DROP;
	}
	if (ctr)
		ctr->handed++;
	return XDP_REDIRECT;
}

/*
 * Second stage, on the target CPU, before the kernel builds the skb: counts
 * what arrived per (rule slot, CPU) and hands the frame to the stack.
 */
/* xdp.frags like the classifier: the kernel lets a CPUMAP entry run only
 * a program that agrees with the redirecting one on frags support. */
SEC("xdp.frags/cpumap")
int ferry_cpumap(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	__u32 *meta = (void *)(long)ctx->data_meta;
	struct ferry_steer_ctr *ctr;
	__u32 slot, idx;

	if ((void *)(meta + 1) > data)
		return XDP_PASS;
	if ((*meta & FERRY_STEER_META_MASK) == FERRY_SPREAD_META_TAG)
		return spread_hand(*meta & ~FERRY_STEER_META_MASK);
	if ((*meta & FERRY_STEER_META_MASK) != FERRY_STEER_META_TAG)
		return XDP_PASS;
	slot = *meta & ~FERRY_STEER_META_MASK;
	if (slot >= FERRY_MAX_STEER)
		return XDP_PASS;
	idx = FERRY_STEER_CTR_IDX(slot, bpf_get_smp_processor_id() &
						(FERRY_MAX_CPUS - 1));
	ctr = bpf_map_lookup_elem(&ferry_steer_ctrs, &idx);
	if (ctr)
		ctr->processed++;
	return XDP_PASS;
}

/*
 * trace_xdp_cpumap_enqueue(map_id, processed, drops, to_cpu) fires once per
 * bulk flush into a CPU's queue; `drops` are the frames the full ptr_ring
 * refused, which the kernel frees without any other counter. A tp_btf
 * program gets the tracepoint's arguments as an array of u64.
 */
SEC("tp_btf/xdp_cpumap_enqueue")
int ferry_cpumap_enqueue(__u64 *ctx)
{
	__u32 map_id = (__u32)ctx[0], to_cpu = (__u32)ctx[3];
	struct ferry_cpumap_ctr *c;

	if (map_id != ferry_cpu_map_id || to_cpu >= FERRY_MAX_CPUS)
		return 0;
	c = bpf_map_lookup_elem(&ferry_cpumap_ctrs, &to_cpu);
	if (c) {
		c->offered += (__u32)ctx[1];
		c->drops += (__u32)ctx[2];
	}
	return 0;
}

/* Just the fields the tracepoints read, relocated by CO-RE. */
struct ns_common {
	unsigned int inum;
} __attribute__((preserve_access_index));
struct net {
	struct ns_common ns;
} __attribute__((preserve_access_index));
typedef struct {
	struct net *net;
} possible_net_t;
struct net_device {
	int ifindex;
	possible_net_t nd_net;
} __attribute__((preserve_access_index));

static __always_inline struct ferry_kfwd_ctr *kfwd_ctr(void)
{
	__u32 key = 0;

	return bpf_map_lookup_elem(&ferry_kfwd_ctrs, &key);
}

/*
 * trace_xdp_redirect_err(dev, prog, tgt, err, map_type, map_id, index):
 * the redirect our program chose failed in xdp_do_redirect (the egress is
 * down, the frame is over its MTU); the kernel drops the frame.
 */
SEC("tp_btf/xdp_redirect_err")
int ferry_redirect_err(__u64 *ctx)
{
	int err = (int)ctx[3];
	struct ferry_kfwd_ctr *c;

	if (!(((__u32)ctx[5] == ferry_tx_dev_map_id && ferry_tx_dev_map_id) ||
	      ((__u32)ctx[5] == ferry_fib_dev_map_id && ferry_fib_dev_map_id)))
		return 0;
	c = kfwd_ctr();
	if (!c)
		return 0;
	if (err == -ENETDOWN)
		c->err_down++;
	else if (err == -EMSGSIZE)
		c->err_too_big++;
	else
		c->err_other++;
	return 0;
}

/*
 * trace_xdp_devmap_xmit(from_dev, to_dev, sent, drops, err), once per
 * bulk flush: drops are frames the egress driver refused (a veth whose
 * peer has neither XDP nor GRO answers -ENXIO for all of them). It does
 * not name the map, so our port is recognised by the receiving device:
 * its index and its network namespace (indexes repeat across them).
 */
SEC("tp_btf/xdp_devmap_xmit")
int BPF_PROG(ferry_devmap_xmit, const struct net_device *from,
	     const struct net_device *to, int sent, int drops, int err)
{
	struct ferry_kfwd_ctr *c;

	/* Typed arguments: the fields are plain loads (the verifier makes
	 * them fault-safe), not a bpf_probe_read_kernel() call each. This
	 * runs at every DEVMAP flush on the host, ours or not. */
	if (!ferry_rx_ifindex || from->ifindex != (int)ferry_rx_ifindex ||
	    from->nd_net.net->ns.inum != ferry_rx_netns)
		return 0;
	c = kfwd_ctr();
	if (!c)
		return 0;
	if (sent > 0)
		c->xmit_sent += sent;
	/* Only a route port has egress slots: a hash lookup per flush that
	 * always misses was most of this program's cost on an xconnect. */
	if (ferry_fib_on)
		ferry_fib_sent((__u32)to->ifindex, sent);
	if (drops > 0) {
		c->xmit_drops += drops;
		if (err == -ENXIO)
			c->xmit_no_napi += drops;
	}
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
