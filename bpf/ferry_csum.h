/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ferry_csum.h - Internet checksum arithmetic for partial TCP/UDP
 * checksums, shared by the XDP classifier (clang -target bpf) and
 * userspace (the worker, the unit tests).
 *
 * A sender with TX checksum offload (every veth by default) leaves
 * CHECKSUM_PARTIAL frames: the TCP/UDP checksum field holds the folded,
 * uncomplemented sum of the pseudo-header only, and the NIC (or the
 * receiving skb's mark) is trusted to finish the job. XDP, AF_XDP and a
 * CPUMAP-built skb see only the bytes, so ferry finishes it itself.
 *
 * Recognition: the field equals ferry_csum_pseudo_fold(). Completion:
 * the field becomes the full checksum, ~(pseudo-header + L4 bytes with
 * the field zeroed). Completing a frame whose checksum was already right
 * rewrites the same value (the checksum of a segment is a function of its
 * other bytes), so a correct frame that happens to match the pattern
 * (1 in 65536) is left as it was: the check needs no other evidence.
 *
 * All sums are taken over 16-bit words exactly as they lie in memory (no
 * byte swapping): the one's-complement sum commutes with byte swapping,
 * so a sum of native loads, folded and stored natively, gives the bytes
 * the network-order computation would. Fields read with ferry_load16/32
 * (or plain loads) go in as they are; only the protocol and length of the
 * pseudo-header are built from host values, hence the bpf_htons().
 */
#ifndef FERRY_CSUM_H
#define FERRY_CSUM_H

#ifndef __bpf__
#include <netinet/in.h> /* before <linux/in.h>: see ferry_parse.h */
#endif
#include <linux/types.h>
#include <linux/in.h>
#include <bpf/bpf_endian.h>

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* Folds a 64-bit one's-complement accumulator to 16 bits (not inverted). */
static __always_inline __u16 ferry_csum_fold(__u64 sum)
{
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)sum;
}

/*
 * Pseudo-header sums, unfolded. Addresses as loaded from the packet
 * (network order); l4_len and proto in host order.
 */
static __always_inline __u64 ferry_csum_pseudo4(__u32 saddr, __u32 daddr,
						__u8 proto, __u32 l4_len)
{
	__u64 sum = (__u64)saddr + daddr;

	return sum + bpf_htons((__u16)proto) + bpf_htons((__u16)l4_len);
}

static __always_inline __u64 ferry_csum_pseudo6(const __u32 *saddr,
						const __u32 *daddr, __u8 proto,
						__u32 l4_len)
{
	__u64 sum = 0;
	int i;

	for (i = 0; i < 4; i++)
		sum += (__u64)saddr[i] + daddr[i];
	/* Upper-layer length is 32 bits in the IPv6 pseudo-header. */
	return sum + bpf_htonl(l4_len) + bpf_htonl((__u32)proto);
}

/*
 * True when field (as it lies in memory) is what a sender with checksum
 * offload leaves: the folded pseudo-header sum, not inverted. A UDP/IPv4
 * field of 0 means "no checksum" and never matches (a folded non-zero sum
 * is never 0).
 */
static __always_inline int ferry_csum_is_partial(__u16 field, __u64 pseudo)
{
	return field == ferry_csum_fold(pseudo);
}

/*
 * The value to store in the checksum field, given the pseudo-header sum
 * and the sum of the L4 bytes taken with the field zeroed (to remove a
 * field from a sum taken with it, add its complement: ferry_csum_unsum).
 * This is the computation Linux makes (csum_tcpudp_magic), with its one
 * special case: UDP sends a computed 0 as 0xffff (RFC 768: 0 means none).
 */
static __always_inline __u16 ferry_csum_final(__u64 pseudo, __u64 l4_sum,
					      __u8 proto)
{
	__u16 c = (__u16)~ferry_csum_fold(pseudo + l4_sum);

	return c == 0 && proto == IPPROTO_UDP ? 0xffff : c;
}

/* One's-complement subtraction of a 16-bit word from an accumulator. */
static __always_inline __u64 ferry_csum_unsum(__u64 sum, __u16 w)
{
	return sum + (__u16)~w;
}

#ifndef __bpf__
#include <string.h>

/*
 * Userspace: the sum of len bytes at p, memory order, added to sum (an
 * unfolded sum well under 2^63, as from an earlier call); an odd last byte
 * counts as the first byte of a zero-padded word. Eight bytes a load with
 * the carry added back in (2^64, 2^32 and 2^16 are all 1 modulo 0xffff, so
 * a 64-bit word sums as its four 16-bit halves); what it returns is under
 * sum + 2^33, so callers may go on adding to it.
 */
static inline __u64 ferry_csum_bytes(const void *p, size_t len, __u64 sum)
{
	const unsigned char *b = p;
	__u64 acc = 0, v;
	__u32 w;
	__u16 h;

	for (; len >= 8; len -= 8, b += 8) {
		memcpy(&v, b, 8);
		acc += v;
		acc += acc < v; /* end-around carry */
	}
	/* The tail, under eight bytes: at most 2^32 + 2^16 + 2^16. */
	v = 0;
	if (len >= 4) {
		memcpy(&w, b, 4);
		v += w;
		len -= 4;
		b += 4;
	}
	if (len >= 2) {
		memcpy(&h, b, 2);
		v += h;
		len -= 2;
		b += 2;
	}
	if (len) {
		h = 0;
		memcpy(&h, b, 1);
		v += h;
	}
	acc += v;
	acc += acc < v;
	return sum + (acc & 0xffffffffu) + (acc >> 32);
}

/*
 * Userspace: the folded sum of len bytes taken as big-endian 16-bit words,
 * as a host-order number (what the header fields read with ntohs add to).
 * The one's-complement sum commutes with byte swapping (RFC 1071 2.B), so
 * the memory-order sum is swapped once, not every word.
 */
static inline __u16 ferry_csum_bytes_be(const void *p, size_t len)
{
	return bpf_ntohs(ferry_csum_fold(ferry_csum_bytes(p, len, 0)));
}
#endif

#endif /* FERRY_CSUM_H */
