/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ferry_parse.h - the frame parser shared by the XDP classifier and the
 * unit tests.
 *
 * One body of code, compiled twice: by clang -target bpf into ferry_xdp,
 * and by gcc into tests/unit/test_parse.c, so the tests exercise exactly
 * what the verifier accepted. Only two primitives differ between the two
 * builds, and only in how they say the same thing (ferry_fits(),
 * ferry_load16/32()); everything else is shared.
 *
 * Return convention: ferry_parse() returns FERRY_PARSE_OK (-1) when the
 * frame is well formed, including frames that are not IP at all (ARP and
 * other ethertypes come back OK with family 0). Otherwise it returns the
 * enum ferry_reason of the malformation, always >= FERRY_R_FIRST_MALFORMED,
 * which the classifier uses directly as its verdict counter index.
 *
 * Two lengths are kept apart on purpose. Memory safety is checked against
 * data_end, with constant sizes, because that is the only form from which
 * the verifier learns a packet range. Protocol lengths (IPv4 total length,
 * IPv6 payload length, UDP length) are checked against the frame's length
 * and then against "rem", the bytes the IP header says follow the current
 * position. In a multi-buffer frame (XDP frags) data_end ends the first
 * buffer only and the frame goes on in fragments: rem may then reach past
 * data_end, which is why every read has its own ferry_fits(). Headers are
 * expected in the first buffer; bytes after the IP length are Ethernet
 * padding and are ignored.
 *
 * The verifier accepts packet pointer plus a variable offset (IHL, IPv6
 * extension lengths) only from a loader with CAP_PERFMON (or CAP_SYS_ADMIN):
 * without it, it refuses such arithmetic as a Spectre v1 risk.
 */
#ifndef FERRY_PARSE_H
#define FERRY_PARSE_H

#ifndef __bpf__
/*
 * Userspace: glibc's <netinet/in.h> must come before <linux/in.h>, which
 * then skips what glibc already defined (linux/libc-compat.h). The other
 * order breaks any test that later includes a socket header.
 */
#include <netinet/in.h>
#endif

#include <stddef.h>
#include <linux/types.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <linux/tcp.h>
#include <linux/icmpv6.h>
#include <bpf/bpf_endian.h>

#ifdef __bpf__
#include <bpf/bpf_helpers.h>
#define FERRY_UNROLL _Pragma("unroll")
#else
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#define FERRY_UNROLL
#endif

#include "ferry_abi.h"

/* ferry_parse() result for a well-formed frame; not an enum ferry_reason. */
#define FERRY_PARSE_OK (-1)

/* Not in the UAPI headers: 802.1Q tag layout and IPv4 fragment bits. */
#define FERRY_VLAN_HLEN	    4
#define FERRY_VLAN_VID_MASK 0x0fff
#define FERRY_IP_MF	    0x2000
#define FERRY_IP_OFFMASK    0x1fff
/* IPv6 fragment header: offset in the top 13 bits, M flag in bit 0. */
#define FERRY_IP6_OFFMASK 0xfff8
#define FERRY_IP6_MF	  0x0001
#define FERRY_IP6_FRAGLEN 8
/* ICMPv6 types 133..137: router/neighbour solicitation/advert, redirect. */
#define FERRY_NDP_FIRST 133
#define FERRY_NDP_LAST	137

/*
 * True when the n bytes at p lie inside the frame. In BPF it has to be the
 * pointer comparison: that is what the verifier turns into a packet range.
 * In C that comparison would form a pointer past the buffer, which is
 * undefined, so userspace compares lengths instead; p <= end holds at every
 * call.
 */
static __always_inline int ferry_fits(const __u8 *p, __u32 n, const __u8 *end)
{
#ifdef __bpf__
	return p + n <= end;
#else
	return n <= (__u32)(end - p);
#endif
}

/*
 * Header fields sit at any alignment (IPv4 addresses after a 14-byte
 * Ethernet header are 2-byte aligned). BPF packet loads may be unaligned on
 * the architectures we run on; C may not, so userspace goes via memcpy.
 */
static __always_inline __u16 ferry_load16(const __u8 *p)
{
#ifdef __bpf__
	return *(const __u16 *)p;
#else
	__u16 v;

	__builtin_memcpy(&v, p, sizeof(v));
	return v;
#endif
}

static __always_inline __u32 ferry_load32(const __u8 *p)
{
#ifdef __bpf__
	return *(const __u32 *)p;
#else
	__u32 v;

	__builtin_memcpy(&v, p, sizeof(v));
	return v;
#endif
}

static __always_inline int ferry_is_vlan(__u16 ethertype)
{
	return ethertype == ETH_P_8021Q || ethertype == ETH_P_8021AD;
}

static __always_inline int ferry_is_ip6_ext(__u8 nexthdr)
{
	return nexthdr == IPPROTO_HOPOPTS || nexthdr == IPPROTO_ROUTING ||
	       nexthdr == IPPROTO_DSTOPTS || nexthdr == IPPROTO_FRAGMENT;
}

/*
 * L4 at l4 with rem bytes of IP payload left. more_frags: this is the first
 * fragment of a larger datagram, so the UDP length covers bytes that are
 * not here and cannot be checked against rem.
 */
static __always_inline int ferry_parse_l4(const __u8 *l4, const __u8 *end,
					  __u32 rem, int more_frags,
					  struct ferry_pkt *pkt)
{
	__u32 len;

	switch (pkt->l4_proto) {
	case IPPROTO_TCP:
		if (rem < sizeof(struct tcphdr) ||
		    !ferry_fits(l4, sizeof(struct tcphdr), end))
			return FERRY_R_DROP_TRUNC_L4;
		/* doff is the high nibble of byte 12, in 32-bit words. */
		len = (__u32)(l4[12] >> 4) * 4;
		if (len < sizeof(struct tcphdr) || len > rem)
			return FERRY_R_DROP_TRUNC_L4;
		break;
	case IPPROTO_UDP:
		if (rem < sizeof(struct udphdr) ||
		    !ferry_fits(l4, sizeof(struct udphdr), end))
			return FERRY_R_DROP_TRUNC_L4;
		len = bpf_ntohs(
			ferry_load16(l4 + offsetof(struct udphdr, len)));
		if (len < sizeof(struct udphdr) || (!more_frags && len > rem))
			return FERRY_R_DROP_BAD_L4_LEN;
		break;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		/* type, code, checksum; the type goes in sport so the
		 * classifier can spot NDP without parsing again. */
		if (rem < 4 || !ferry_fits(l4, 4, end))
			return FERRY_R_DROP_TRUNC_L4;
		pkt->sport = l4[0];
		return FERRY_PARSE_OK;
	default:
		return FERRY_PARSE_OK;
	}
	/* TCP and UDP keep their ports at the same offsets. */
	pkt->sport =
		bpf_ntohs(ferry_load16(l4 + offsetof(struct udphdr, source)));
	pkt->dport =
		bpf_ntohs(ferry_load16(l4 + offsetof(struct udphdr, dest)));
	return FERRY_PARSE_OK;
}

/* room: bytes of the whole frame from l3 on, fragments included. */
static __always_inline int ferry_parse_ip4(const __u8 *l3, const __u8 *end,
					   __u32 room, struct ferry_pkt *pkt)
{
	__u32 hlen, tot_len;
	__u16 frag;

	if (!ferry_fits(l3, sizeof(struct iphdr), end))
		return FERRY_R_DROP_TRUNC_IP4;
	if ((l3[0] >> 4) != 4)
		return FERRY_R_DROP_BAD_IP_VER;
	hlen = (__u32)(l3[0] & 0x0f) * 4;
	if (hlen < sizeof(struct iphdr) || !ferry_fits(l3, hlen, end))
		return FERRY_R_DROP_BAD_IHL;
	tot_len = bpf_ntohs(ferry_load16(l3 + offsetof(struct iphdr, tot_len)));
	if (tot_len < hlen || tot_len > room)
		return FERRY_R_DROP_BAD_IP4_LEN;

	pkt->family = 4;
	pkt->l4_proto = l3[offsetof(struct iphdr, protocol)];
	pkt->src[0] = ferry_load32(l3 + offsetof(struct iphdr, saddr));
	pkt->dst[0] = ferry_load32(l3 + offsetof(struct iphdr, daddr));
	pkt->l4_off = pkt->l3_off + hlen;
	pkt->l4_len = (__u16)(tot_len - hlen);

	frag = bpf_ntohs(ferry_load16(l3 + offsetof(struct iphdr, frag_off)));
	pkt->more_frags = (frag & FERRY_IP_MF) != 0;
	if (frag & FERRY_IP_OFFMASK) {
		/* Only the first fragment carries the L4 header. */
		pkt->is_frag = 1;
		return FERRY_PARSE_OK;
	}
	return ferry_parse_l4(l3 + hlen, end, tot_len - hlen,
			      (frag & FERRY_IP_MF) != 0, pkt);
}

static __always_inline int ferry_parse_ip6(const __u8 *l3, const __u8 *end,
					   __u32 room, struct ferry_pkt *pkt)
{
	const __u8 *p = l3 + sizeof(struct ipv6hdr);
	__u32 rem, ext_len, off = pkt->l3_off + sizeof(struct ipv6hdr);
	int more_frags = 0;
	__u16 frag;
	__u8 nexthdr;
	int i;

	if (!ferry_fits(l3, sizeof(struct ipv6hdr), end))
		return FERRY_R_DROP_TRUNC_IP6;
	if ((l3[0] >> 4) != 6)
		return FERRY_R_DROP_BAD_IP_VER;
	rem = bpf_ntohs(
		ferry_load16(l3 + offsetof(struct ipv6hdr, payload_len)));
	if (sizeof(struct ipv6hdr) + rem > room)
		return FERRY_R_DROP_BAD_IP6_LEN;

	pkt->family = 6;
	FERRY_UNROLL
	for (i = 0; i < 4; i++) {
		pkt->src[i] = ferry_load32(
			l3 + offsetof(struct ipv6hdr, saddr) + 4 * i);
		pkt->dst[i] = ferry_load32(
			l3 + offsetof(struct ipv6hdr, daddr) + 4 * i);
	}
	nexthdr = l3[offsetof(struct ipv6hdr, nexthdr)];

	FERRY_UNROLL
	for (i = 0; i < FERRY_MAX_IP6_EXT; i++) {
		if (!ferry_is_ip6_ext(nexthdr))
			break;
		/* Every extension header is at least 8 bytes and starts
		 * with next-header; all but the fragment header then carry
		 * their length in 8-byte units, not counting the first 8.
		 * The fits check is for the verifier; ext_len > rem is what
		 * decides, as rem ends where the payload length says. */
		if (!ferry_fits(p, 8, end))
			return FERRY_R_DROP_IP6_EXT;
		if (nexthdr == IPPROTO_FRAGMENT) {
			ext_len = FERRY_IP6_FRAGLEN;
			frag = bpf_ntohs(ferry_load16(p + 2));
			if (frag & FERRY_IP6_OFFMASK)
				pkt->is_frag = 1;
			more_frags = (frag & FERRY_IP6_MF) != 0;
		} else {
			ext_len = ((__u32)p[1] + 1) * 8;
		}
		if (ext_len > rem)
			return FERRY_R_DROP_IP6_EXT;
		nexthdr = p[0];
		p += ext_len;
		off += ext_len;
		rem -= ext_len;
		if (pkt->is_frag) {
			pkt->l4_proto = nexthdr;
			pkt->l4_off = off;
			pkt->l4_len = (__u16)rem;
			pkt->more_frags = (__u8)more_frags;
			return FERRY_PARSE_OK;
		}
	}
	if (ferry_is_ip6_ext(nexthdr))
		return FERRY_R_DROP_IP6_EXT;

	pkt->l4_proto = nexthdr;
	pkt->l4_off = off;
	pkt->l4_len = (__u16)rem;
	pkt->more_frags = (__u8)more_frags;
	return ferry_parse_l4(p, end, rem, more_frags, pkt);
}

/*
 * Parse the frame that starts at data and is frame_len bytes long, of
 * which [data, data_end) is the first buffer, into *pkt (always fully
 * written). frame_len >= data_end - data. Returns FERRY_PARSE_OK or the
 * malformed-frame reason; see the top of the file.
 */
static __always_inline int ferry_parse_len(const void *data,
					   const void *data_end,
					   __u32 frame_len,
					   struct ferry_pkt *pkt)
{
	const __u8 *p = data;
	const __u8 *end = data_end;
	__u16 proto;
	__u32 l3_off;
	int i;

	__builtin_memset(pkt, 0, sizeof(*pkt));
	if (!ferry_fits(p, ETH_HLEN, end))
		return FERRY_R_DROP_TRUNC_ETH;
	proto = bpf_ntohs(ferry_load16(p + offsetof(struct ethhdr, h_proto)));
	p += ETH_HLEN;

	FERRY_UNROLL
	for (i = 0; i < FERRY_MAX_VLAN; i++) {
		if (!ferry_is_vlan(proto))
			break;
		if (!ferry_fits(p, FERRY_VLAN_HLEN, end))
			return FERRY_R_DROP_TRUNC_VLAN;
		pkt->vlan[i] = bpf_ntohs(ferry_load16(p)) & FERRY_VLAN_VID_MASK;
		proto = bpf_ntohs(ferry_load16(p + 2));
		pkt->n_vlan++;
		p += FERRY_VLAN_HLEN;
	}
	if (ferry_is_vlan(proto))
		return FERRY_R_DROP_VLAN_DEPTH;

	pkt->ethertype = proto;
	l3_off = ETH_HLEN + pkt->n_vlan * FERRY_VLAN_HLEN;
	pkt->l3_off = l3_off;
	/* The header fitted in the first buffer, so l3_off <= frame_len. */
	if (proto == ETH_P_IP)
		return ferry_parse_ip4(p, end, frame_len - l3_off, pkt);
	if (proto == ETH_P_IPV6)
		return ferry_parse_ip6(p, end, frame_len - l3_off, pkt);
	return FERRY_PARSE_OK;
}

/* A frame that is all in one buffer. */
static __always_inline int ferry_parse(const void *data, const void *data_end,
				       struct ferry_pkt *pkt)
{
	return ferry_parse_len(
		data, data_end,
		(__u32)((const __u8 *)data_end - (const __u8 *)data), pkt);
}

/*
 * Flow hash for CPU steering: the same value for both directions of a flow,
 * so a connection's two halves meet on one CPU. The two addresses enter
 * lower first (compared as whole addresses, so distinct host pairs never
 * merge) and the ports as (min, max), which is what makes it symmetric;
 * the mixing is MurmurHash3's, whose finaliser spreads nearby inputs
 * (ports counting up) over the low bits that the CPU choice (hash % n)
 * uses. Ports count only for TCP and UDP heads: ICMP keeps its type in
 * sport, which differs between a request and its reply, and fragments
 * after the first carry no ports. IPv4 leaves src/dst[1..3] zero, so one
 * loop serves both families.
 */
static __always_inline __u32 ferry_hash_mix(__u32 h, __u32 v)
{
	v *= 0xcc9e2d51u;
	v = (v << 15) | (v >> 17);
	v *= 0x1b873593u;
	h ^= v;
	h = (h << 13) | (h >> 19);
	return h * 5 + 0xe6546b64u;
}

static __always_inline __u32 ferry_hash_final(__u32 h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

static __always_inline __u32 ferry_flow_hash(const struct ferry_pkt *pkt)
{
	__u32 h = pkt->l4_proto, a, b, lo, hi;
	int i, order = 0; /* <0: src first, >0: dst first, 0: equal */

	FERRY_UNROLL
	for (i = 0; i < 4; i++) {
		if (order == 0 && pkt->src[i] != pkt->dst[i])
			order = pkt->src[i] < pkt->dst[i] ? -1 : 1;
	}
	FERRY_UNROLL
	for (i = 0; i < 4; i++) {
		lo = order > 0 ? pkt->dst[i] : pkt->src[i];
		hi = order > 0 ? pkt->src[i] : pkt->dst[i];
		h = ferry_hash_mix(h, lo);
		h = ferry_hash_mix(h, hi);
	}
	if (!pkt->is_frag &&
	    (pkt->l4_proto == IPPROTO_TCP || pkt->l4_proto == IPPROTO_UDP)) {
		a = pkt->sport;
		b = pkt->dport;
		h = ferry_hash_mix(h, a < b ? (a << 16 | b) : (b << 16 | a));
	}
	return ferry_hash_final(h);
}

#endif /* FERRY_PARSE_H */
