// SPDX-License-Identifier: BSD-2-Clause
/*
 * route.c - the route app's decision for one frame (see route.h). Headers
 * are read byte by byte: a frame in the UMEM has no alignment promise.
 */
#include <errno.h>
#include <string.h>

#include "route.h"
#include "route_csum.h"

const char *const route_reason_names[ROUTE_R__COUNT] = {
#define X(n) [ROUTE_R_##n] = #n,
	ROUTE_REASONS(X) ROUTE_EVENTS(X)
#undef X
};

#define ETH_HLEN     14
#define ETH_P_IP     0x0800
#define ETH_P_ARP    0x0806
#define ETH_P_IP6    0x86dd
#define ETH_P_8021Q  0x8100
#define ETH_P_8021AD 0x88a8
#define ETH_P_QINQ1  0x9100 /* pre-802.1ad stacked tags */
#define VLAN_HLEN    4
#define IP4_DF	     0x4000
#define IP4_OFF	     0x1fff
#define PROTO_ICMP   1
#define PROTO_ICMP6  58
#define PROTO_HBH    0
#define ICMP_TTL     64

/* RFC 1812 4.3.2.6: quote as much as fits in 576 bytes */
#define ICMP4_MAX_QUOTE (576 - 20 - 8)
/* RFC 4443 2.4 (c): as much as fits in the minimum MTU, 1280 */
#define ICMP6_MAX_QUOTE (1280 - 40 - 8)

static inline uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline void wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void wr32(uint8_t *p, uint32_t v)
{
	wr16(p, (uint16_t)(v >> 16));
	wr16(p + 2, (uint16_t)v);
}

static enum route_verdict done(struct route_result *res,
			       struct route_counters *c, enum route_verdict v,
			       enum route_reason r)
{
	res->verdict = v;
	res->reason = r;
	c->n[r]++;
	return v;
}

/* ---- ICMP errors ---- */

/* The reply's L2 header: back to whoever sent it, on its VLAN. */
static uint8_t *reply_eth(const uint8_t *frame, const struct route_port *in,
			  uint8_t *out, uint16_t type)
{
	memcpy(out, frame + 6, 6);
	memcpy(out + 6, in->mac, 6);
	if (in->vid) {
		wr16(out + 12, ETH_P_8021Q);
		wr16(out + 14, in->vid);
		wr16(out + 16, type);
		return out + ETH_HLEN + VLAN_HLEN;
	}
	wr16(out + 12, type);
	return out + ETH_HLEN;
}

/* ---- VLANs ---- */

static unsigned vmap_hash(unsigned port, unsigned vid)
{
	return ((port * 0x9e3779b1u) ^ (vid * 0x85ebca6bu)) >> 7 &
	       (ROUTE_VLAN_HASH - 1);
}

/* an entry: valid, port (11 bits), VID (12), slot (7) */
#define VMAP_VALID (1u << 31)
static uint32_t vmap_e(unsigned port, unsigned vid, unsigned slot)
{
	return VMAP_VALID | (port & 0x7ffu) << 19 | (vid & 0xfffu) << 7 |
	       (slot & 0x7fu);
}

_Static_assert(ROUTE_VLAN_MAX <= 128, "a VLAN slot is 7 bits of an entry");

int route_vlan_find(const struct route_vlan_map *map, unsigned port,
		    unsigned vid)
{
	uint32_t want = vmap_e(port, vid, 0) & ~0x7fu;
	unsigned i, h = vmap_hash(port, vid);

	for (i = 0; i < ROUTE_VLAN_HASH; i++) {
		uint32_t e = map->e[(h + i) & (ROUTE_VLAN_HASH - 1)];

		if (!e)
			return -1;
		if ((e & ~0x7fu) == want)
			return (int)(e & 0x7fu);
	}
	return -1;
}

int route_vlan_map_build(struct route_vlan_map *map,
			 const struct route_port *vlans, unsigned n)
{
	unsigned s, i, used = 0;

	memset(map, 0, sizeof(*map));
	if (n > ROUTE_VLAN_MAX)
		return -ENOSPC;
	for (s = 0; s < n; s++) {
		const struct route_port *v = &vlans[s];
		unsigned m, n_m = v->n_members ? v->n_members : 1;

		if (!v->vid)
			continue; /* a free slot, or a bond */
		for (m = 0; m < n_m; m++) {
			unsigned port = v->n_members ? v->members[m] : v->phys;

			if (++used > ROUTE_VLAN_HASH / 2)
				return -ENOSPC;
			if (route_vlan_find(map, port, v->vid) >= 0)
				return -EEXIST;
			for (i = vmap_hash(port, v->vid);
			     map->e[i & (ROUTE_VLAN_HASH - 1)]; i++)
				;
			map->e[i & (ROUTE_VLAN_HASH - 1)] =
				vmap_e(port, v->vid, s);
		}
	}
	return 0;
}

int route_l2_retag(uint8_t *frame, size_t len, int in_tagged, uint16_t vid)
{
	(void)len;
	if (in_tagged && vid) {
		/* the priority bits stay, the VID is the egress's */
		wr16(frame + 14,
		     (uint16_t)((rd16(frame + 14) & 0xf000) | (vid & 0x0fff)));
		return 0;
	}
	if (in_tagged) {
		memmove(frame + VLAN_HLEN, frame, 12);
		return VLAN_HLEN;
	}
	if (vid) {
		memmove(frame - VLAN_HLEN, frame, 12);
		wr16(frame - VLAN_HLEN + 12, ETH_P_8021Q);
		wr16(frame - VLAN_HLEN + 14, vid & 0x0fff);
		return -VLAN_HLEN;
	}
	return 0;
}

/* RFC 1812 4.3.2.7: no error about an ICMP error, a non-first fragment,
 * or to a source that is not one host. */
static int icmp4_allowed(const uint8_t *ip)
{
	uint32_t src = rd32(ip + 12);

	if (rd16(ip + 6) & IP4_OFF)
		return 0;
	if (!src || src >> 24 == 127 || src >> 28 == 0xe || src == 0xffffffff)
		return 0;
	if (ip[9] == PROTO_ICMP) {
		unsigned ihl = (ip[0] & 0xf) * 4u, t = ip[ihl];

		/* errors: unreachable, quench, redirect, time exceeded,
		 * parameter problem */
		if (t == 3 || t == 4 || t == 5 || t == 11 || t == 12)
			return 0;
	}
	return 1;
}

static enum route_verdict
icmp4_error(const struct route_ctx *ctx, const uint8_t *frame, size_t head,
	    const uint8_t *ip, unsigned ip_len, unsigned in_port, uint8_t type,
	    uint8_t code, uint32_t rest, uint8_t *out, size_t out_cap,
	    struct route_result *res, struct route_counters *c,
	    enum route_reason reason)
{
	const struct route_port *in = route_if(ctx, in_port);
	unsigned quote = ip_len < ICMP4_MAX_QUOTE ? ip_len : ICMP4_MAX_QUOTE;
	unsigned tot, l2 = (unsigned)(ip - frame), ol2;
	uint8_t *o, *icmp;

	/* A chain's quote comes from its first piece alone. */
	if (quote > head - l2)
		quote = (unsigned)(head - l2);
	tot = 20 + 8 + quote;
	ol2 = in->vid ? ETH_HLEN + VLAN_HLEN : ETH_HLEN;

	if (!in->ip4 || !icmp4_allowed(ip) || out_cap < ol2 + tot) {
		c->n[ROUTE_R_icmp_suppressed]++;
		return done(res, c, ROUTE_DROP, reason);
	}
	o = reply_eth(frame, in, out, ETH_P_IP);
	o[0] = 0x45;
	o[1] = 0xc0; /* internetwork control precedence, as routers send */
	wr16(o + 2, (uint16_t)tot);
	wr32(o + 4, 0); /* id, flags, offset */
	o[8] = ICMP_TTL;
	o[9] = PROTO_ICMP;
	wr16(o + 10, 0);
	wr32(o + 12, in->ip4);
	memcpy(o + 16, ip + 12, 4);
	wr16(o + 10, ip4_csum_full(o, 20));
	icmp = o + 20;
	icmp[0] = type;
	icmp[1] = code;
	wr16(icmp + 2, 0);
	wr32(icmp + 4, rest);
	memcpy(icmp + 8, ip, quote);
	wr16(icmp + 2, (uint16_t)~csum_partial(icmp, 8 + quote, 0));
	res->len = (uint16_t)(ol2 + tot);
	res->port = (uint16_t)(in_port < ROUTE_VLAN_BASE ? in_port : in->phys);
	c->n[ROUTE_R_icmp_sent]++;
	return done(res, c, ROUTE_REPLY, reason);
}

static int ip6_is_mcast(const uint8_t *a)
{
	return a[0] == 0xff;
}

static int ip6_is_ll(const uint8_t *a)
{
	return a[0] == 0xfe && (a[1] & 0xc0) == 0x80;
}

static int ip6_is_unspec_or_lo(const uint8_t *a)
{
	static const uint8_t zero[15];

	return !memcmp(a, zero, 15) && a[15] <= 1;
}

/* RFC 4443 2.4 (e): no error about an error, to a multicast source... */
static int icmp6_allowed(const uint8_t *ip)
{
	if (ip6_is_mcast(ip + 8) || ip6_is_unspec_or_lo(ip + 8))
		return 0;
	if (ip[6] == PROTO_ICMP6 && ip[40] < 128)
		return 0;
	return 1;
}

static uint16_t icmp6_csum(const uint8_t *ip6, const uint8_t *icmp,
			   unsigned len)
{
	uint32_t sum = csum_partial(ip6 + 8, 32, 0); /* src, dst */

	sum += len >> 16;
	sum += len & 0xffff;
	sum += PROTO_ICMP6;
	sum = csum_partial(icmp, len, sum);
	return (uint16_t)~csum_fold(sum);
}

static enum route_verdict
icmp6_error(const struct route_ctx *ctx, const uint8_t *frame, size_t head,
	    const uint8_t *ip, unsigned ip_len, unsigned in_port, uint8_t type,
	    uint8_t code, uint32_t rest, uint8_t *out, size_t out_cap,
	    struct route_result *res, struct route_counters *c,
	    enum route_reason reason)
{
	const struct route_port *in = route_if(ctx, in_port);
	unsigned quote = ip_len < ICMP6_MAX_QUOTE ? ip_len : ICMP6_MAX_QUOTE;
	unsigned plen, l2 = (unsigned)(ip - frame), ol2;
	uint8_t *o, *icmp;

	if (quote > head - l2)
		quote = (unsigned)(head - l2);
	plen = 8 + quote;
	ol2 = in->vid ? ETH_HLEN + VLAN_HLEN : ETH_HLEN;

	if (!in->has_ip6 || !icmp6_allowed(ip) || out_cap < ol2 + 40 + plen) {
		c->n[ROUTE_R_icmp_suppressed]++;
		return done(res, c, ROUTE_DROP, reason);
	}
	o = reply_eth(frame, in, out, ETH_P_IP6);
	wr32(o, 0x60000000);
	wr16(o + 4, (uint16_t)plen);
	o[6] = PROTO_ICMP6;
	o[7] = ICMP_TTL;
	memcpy(o + 8, in->ip6, 16);
	memcpy(o + 24, ip + 8, 16);
	icmp = o + 40;
	icmp[0] = type;
	icmp[1] = code;
	wr16(icmp + 2, 0);
	wr32(icmp + 4, rest);
	memcpy(icmp + 8, ip, quote);
	wr16(icmp + 2, icmp6_csum(o, icmp, plen));
	res->len = (uint16_t)(ol2 + 40 + plen);
	res->port = (uint16_t)(in_port < ROUTE_VLAN_BASE ? in_port : in->phys);
	c->n[ROUTE_R_icmp_sent]++;
	return done(res, c, ROUTE_REPLY, reason);
}

#define likely_untagged(t, vid) __builtin_expect(!(t) && !(vid), 1)
#define unlikely_tagged(type)                                                  \
	__builtin_expect((type) == ETH_P_8021Q || (type) == ETH_P_8021AD ||    \
				 (type) == ETH_P_QINQ1,                        \
			 0)

/* ---- the next hop ---- */

enum nh_outcome { NH_OK, NH_LOCAL, NH_DROP, NH_NONE };

/* The path for this flow and what it says, before TTL and MTU checks. */
static enum nh_outcome next_hop(const struct route_ctx *ctx, uint32_t id,
				uint32_t flow_hash, uint64_t *w,
				struct route_result *res)
{
	unsigned f;

	if (id == FIB_NH_NONE)
		return NH_NONE;
	id = fib_nh_pick(ctx->fib, id, flow_hash);
	*w = fib_nhw_load(ctx->fib, id);
	res->nh = id;
	f = fib_nhw_flags(*w);
	if (f & FIB_NH_F_LOCAL)
		return NH_LOCAL;
	if (f & FIB_NH_F_DROP)
		return NH_DROP;
	return NH_OK;
}

/* A bond's member for a flow: by the flow hash, mixed so that a group's
 * pick (the same hash, multiply-shift too) does not decide it as well. */
static inline uint16_t bond_member(const struct route_port *out,
				   uint32_t flow_hash)
{
	uint32_t h = flow_hash * 0x9e3779b1u;

	return out->members[((uint64_t)(h ^ (h >> 16)) * out->n_up) >> 32];
}

/* Egress port, MTU, neighbour; on success the MACs are rewritten and
 * *vid is the egress interface's VLAN (0: untagged). */
static inline __attribute__((always_inline)) enum route_verdict
egress(const struct route_ctx *ctx, uint8_t *frame, uint64_t w, unsigned ip_len,
       uint32_t flow_hash, struct route_result *res, struct route_counters *c,
       int *too_big, uint16_t *vid)
{
	unsigned port = fib_nhw_port(w);
	const struct route_port *out = route_if(ctx, port);

	*too_big = 0;
	if (!out || !out->routed)
		return done(res, c, ROUTE_DROP, ROUTE_R_egress_not_routed);
	if (ip_len > out->mtu) {
		*too_big = (int)out->mtu;
		return ROUTE_DROP; /* the caller counts by family */
	}
	if (!(fib_nhw_flags(w) & FIB_NH_F_NEIGH)) {
		res->connected =
			(uint8_t) !!(fib_nhw_flags(w) & FIB_NH_F_CONNECTED);
		return done(res, c, ROUTE_DROP, ROUTE_R_no_neigh);
	}
	fib_nhw_mac(w, frame);
	memcpy(frame + 6, out->mac, 6);
	/* a ferry port sends itself (its view has no members); a VLAN its
	 * parent, a bond (or a VLAN on one) a member: phys is the first
	 * active one, a pick is needed only among two or more */
	if (port < ROUTE_VLAN_BASE)
		res->port = (uint16_t)port;
	else if (__builtin_expect(out->n_up > 1, 0))
		res->port = bond_member(out, flow_hash);
	else
		res->port = out->phys;
	res->out_if = (uint16_t)port;
	*vid = out->vid;
	return ROUTE_FWD;
}

/* After the rewrite: the egress interface's tag (route_l2_retag()); an
 * untagged frame out of an untagged interface pays one test. */
static inline __attribute__((always_inline)) void
fwd_l2(uint8_t *frame, size_t len, unsigned l2, uint16_t vid,
       struct route_result *res)
{
	if (likely_untagged(l2 != ETH_HLEN, vid))
		return;
	res->shift = (int8_t)route_l2_retag(frame, len, l2 != ETH_HLEN, vid);
}

/* ---- the families ---- */

static inline __attribute__((always_inline)) enum route_verdict
route4(const struct route_ctx *ctx, uint8_t *frame, size_t head, size_t len,
       unsigned l2, unsigned in_port, unsigned table, uint32_t flow_hash,
       uint8_t *out, size_t out_cap, struct route_result *res,
       struct route_counters *c)
{
	uint8_t *ip = frame + l2;
	unsigned ihl, tot, too_big;
	uint16_t vid = 0;
	uint32_t dst;
	uint64_t w = 0;
	enum route_verdict v;
	int tb;

	if (len < l2 + 20)
		return done(res, c, ROUTE_DROP, ROUTE_R_malformed);
	ihl = (ip[0] & 0xf) * 4u;
	tot = rd16(ip + 2);
	if (ip[0] >> 4 != 4 || ihl < 20 || tot < ihl || tot > len - l2 ||
	    csum_partial(ip, ihl, 0) != 0xffff)
		return done(res, c, ROUTE_DROP, ROUTE_R_malformed);
	res->family = 4;
	dst = rd32(ip + 16);
	memcpy(res->dst, ip + 16, 4);
	if (dst >> 28 == 0xe || dst == 0xffffffff)
		return done(res, c, ROUTE_HOST, ROUTE_R_multicast);

	switch (next_hop(ctx, fib4_lookup_in(ctx->fib, table, dst), flow_hash,
			 &w, res)) {
	case NH_LOCAL:
		return done(res, c, ROUTE_HOST, ROUTE_R_local);
	case NH_DROP:
		return done(res, c, ROUTE_DROP, ROUTE_R_blackhole);
	case NH_NONE:
		/* net unreachable */
		return icmp4_error(ctx, frame, head, ip, tot, in_port, 3, 0, 0,
				   out, out_cap, res, c, ROUTE_R_no_route);
	case NH_OK:
		break;
	}
	if (ip[8] <= 1)
		return icmp4_error(ctx, frame, head, ip, tot, in_port, 11, 0, 0,
				   out, out_cap, res, c, ROUTE_R_ttl_exceeded);
	v = egress(ctx, frame, w, tot, flow_hash, res, c, &tb, &vid);
	if (v != ROUTE_FWD) {
		if (!tb)
			return v;
		too_big = (unsigned)tb;
		if (!(rd16(ip + 6) & IP4_DF))
			return done(res, c, ROUTE_DROP, ROUTE_R_no_fragment);
		/* fragmentation needed, the next-hop MTU in the low half */
		return icmp4_error(ctx, frame, head, ip, tot, in_port, 3, 4,
				   too_big & 0xffff, out, out_cap, res, c,
				   ROUTE_R_frag_needed);
	}
	ip4_ttl_dec(ip);
	fwd_l2(frame, len, l2, vid, res);
	return done(res, c, ROUTE_FWD, ROUTE_R_routed);
}

static inline __attribute__((always_inline)) enum route_verdict
route6(const struct route_ctx *ctx, uint8_t *frame, size_t head, size_t len,
       unsigned l2, unsigned in_port, unsigned table, uint32_t flow_hash,
       uint8_t *out, size_t out_cap, struct route_result *res,
       struct route_counters *c)
{
	uint8_t *ip = frame + l2;
	unsigned tot;
	uint16_t vid = 0;
	uint64_t w = 0;
	enum route_verdict v;
	int tb;

	if (len < l2 + 40 || ip[0] >> 4 != 6)
		return done(res, c, ROUTE_DROP, ROUTE_R_malformed);
	tot = 40u + rd16(ip + 4);
	if (tot > len - l2)
		return done(res, c, ROUTE_DROP, ROUTE_R_malformed);
	res->family = 6;
	memcpy(res->dst, ip + 24, 16);
	if (ip[6] == PROTO_ICMP6 && tot >= 41 && ip[40] >= 133 && ip[40] <= 137)
		return done(res, c, ROUTE_HOST, ROUTE_R_ndp);
	if (ip6_is_mcast(ip + 24))
		return done(res, c, ROUTE_HOST, ROUTE_R_multicast);
	/* RFC 4291 2.5.6: link-local is never forwarded, either way */
	if (ip6_is_ll(ip + 24) || ip6_is_ll(ip + 8))
		return done(res, c, ROUTE_HOST, ROUTE_R_link_local);
	if (ip[6] == PROTO_HBH)
		return done(res, c, ROUTE_HOST, ROUTE_R_hop_by_hop);

	switch (next_hop(ctx, fib6_lookup_in(ctx->fib, table, ip + 24),
			 flow_hash, &w, res)) {
	case NH_LOCAL:
		return done(res, c, ROUTE_HOST, ROUTE_R_local);
	case NH_DROP:
		return done(res, c, ROUTE_DROP, ROUTE_R_blackhole);
	case NH_NONE:
		/* no route to destination */
		return icmp6_error(ctx, frame, head, ip, tot, in_port, 1, 0, 0,
				   out, out_cap, res, c, ROUTE_R_no_route);
	case NH_OK:
		break;
	}
	if (ip[7] <= 1)
		return icmp6_error(ctx, frame, head, ip, tot, in_port, 3, 0, 0,
				   out, out_cap, res, c, ROUTE_R_ttl_exceeded);
	v = egress(ctx, frame, w, tot, flow_hash, res, c, &tb, &vid);
	if (v != ROUTE_FWD) {
		if (!tb)
			return v;
		return icmp6_error(ctx, frame, head, ip, tot, in_port, 2, 0,
				   (uint32_t)tb, out, out_cap, res, c,
				   ROUTE_R_pkt_too_big);
	}
	ip[7]--;
	fwd_l2(frame, len, l2, vid, res);
	return done(res, c, ROUTE_FWD, ROUTE_R_routed);
}

/*
 * An 802.1Q-tagged frame: its VLAN sub-interface is the ingress, its
 * table the lookup's. Out of line, so that the untagged path (route_any)
 * is what it was but for the table and one test of the type.
 */
static __attribute__((noinline)) enum route_verdict
route_tagged(const struct route_ctx *ctx, uint8_t *frame, size_t head,
	     size_t len, unsigned in_port, uint16_t type, uint32_t flow_hash,
	     uint8_t *out, size_t out_cap, struct route_result *res,
	     struct route_counters *c)
{
	unsigned in_if;
	int slot;

	if (type != ETH_P_8021Q)
		return done(res, c, ROUTE_DROP, ROUTE_R_vlan_qinq);
	if (len < ETH_HLEN + VLAN_HLEN)
		return done(res, c, ROUTE_DROP, ROUTE_R_malformed);
	type = rd16(frame + 16);
	if (type == ETH_P_8021Q || type == ETH_P_8021AD || type == ETH_P_QINQ1)
		return done(res, c, ROUTE_DROP, ROUTE_R_vlan_qinq);
	slot = ctx->vmap ? route_vlan_find(ctx->vmap, in_port,
					   rd16(frame + 14) & 0x0fff)
			 : -1;
	if (slot < 0 || (unsigned)slot >= ctx->n_vlans)
		return done(res, c, ROUTE_DROP, ROUTE_R_vlan_unknown);
	in_if = ROUTE_VLAN_BASE + (unsigned)slot;
	res->in_if = (uint16_t)in_if;
	if (type == ETH_P_IP)
		return route4(ctx, frame, head, len, ETH_HLEN + VLAN_HLEN,
			      in_if, ctx->vlans[slot].table, flow_hash, out,
			      out_cap, res, c);
	if (type == ETH_P_IP6)
		return route6(ctx, frame, head, len, ETH_HLEN + VLAN_HLEN,
			      in_if, ctx->vlans[slot].table, flow_hash, out,
			      out_cap, res, c);
	if (type == ETH_P_ARP)
		return done(res, c, ROUTE_HOST, ROUTE_R_arp);
	return done(res, c, ROUTE_HOST, ROUTE_R_not_ip);
}

/*
 * Both entry points: head bytes of the frame are in memory at frame (all of
 * it, or a chain's first piece), len is the whole frame. Inlined into each,
 * so that route_frame is what it was before chains.
 */
static inline __attribute__((always_inline)) enum route_verdict
route_any(const struct route_ctx *ctx, uint8_t *frame, size_t head, size_t len,
	  unsigned in_port, uint32_t flow_hash, uint8_t *out, size_t out_cap,
	  struct route_result *res, struct route_counters *c)
{
	uint16_t type;

	memset(res, 0, sizeof(*res));
	res->nh = FIB_NH_NONE;
	if (len < ETH_HLEN || in_port >= ctx->n_ports)
		return done(res, c, ROUTE_DROP, ROUTE_R_malformed);
	type = rd16(frame + 12);
	res->in_if = (uint16_t)in_port;
	if (type == ETH_P_IP)
		return route4(ctx, frame, head, len, ETH_HLEN, in_port,
			      ctx->ports[in_port].table, flow_hash, out,
			      out_cap, res, c);
	if (type == ETH_P_IP6)
		return route6(ctx, frame, head, len, ETH_HLEN, in_port,
			      ctx->ports[in_port].table, flow_hash, out,
			      out_cap, res, c);
	if (type == ETH_P_ARP)
		return done(res, c, ROUTE_HOST, ROUTE_R_arp);
	if (unlikely_tagged(type))
		return route_tagged(ctx, frame, head, len, in_port, type,
				    flow_hash, out, out_cap, res, c);
	return done(res, c, ROUTE_HOST, ROUTE_R_not_ip);
}

enum route_verdict route_frame(const struct route_ctx *ctx, uint8_t *frame,
			       size_t len, unsigned in_port, uint32_t flow_hash,
			       uint8_t *out, size_t out_cap,
			       struct route_result *res,
			       struct route_counters *c)
{
	return route_any(ctx, frame, len, len, in_port, flow_hash, out, out_cap,
			 res, c);
}

enum route_verdict route_frame_chain(const struct route_ctx *ctx,
				     uint8_t *frame, size_t head, size_t len,
				     unsigned in_port, uint32_t flow_hash,
				     uint8_t *out, size_t out_cap,
				     struct route_result *res,
				     struct route_counters *c)
{
	/* Everything route4/route6 read is in the first ROUTE_HEAD_MIN
	 * bytes; the quote of an ICMP error is cut to head. */
	if (head > len || (head < len && head < ROUTE_HEAD_MIN)) {
		memset(res, 0, sizeof(*res));
		res->nh = FIB_NH_NONE;
		return done(res, c, ROUTE_DROP, ROUTE_R_malformed);
	}
	return route_any(ctx, frame, head, len, in_port, flow_hash, out,
			 out_cap, res, c);
}
