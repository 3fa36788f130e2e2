/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * route_csum.h - the IPv4 header checksum, full and incremental.
 *
 * A router takes the TTL down by one on every frame: recomputing the whole
 * header sum for that is twenty bytes of work per frame, where RFC 1624's
 * HC' = ~(~HC + ~m + m') touches one 16-bit word. Equation 3 of RFC 1624,
 * not RFC 1141's ~HC + m - m' shortcut, which can give 0x0000 where 0xffff
 * is right (a sum of all zeros cannot come out of a one's complement sum of
 * a header holding a nonzero word, so the receiver must see 0xffff).
 */
#ifndef FERRY_ROUTE_CSUM_H
#define FERRY_ROUTE_CSUM_H

#include <stddef.h>
#include <stdint.h>

/* The summing and folding are the classifier's (bpf/ferry_csum.h); these
 * are the names and host-order 32-bit sums the router works in. */
#include "ferry_csum.h"

/* Fold a 32-bit one's complement accumulator to 16 bits. */
static inline uint16_t csum_fold(uint32_t sum)
{
	return ferry_csum_fold(sum);
}

/*
 * One's complement sum of len bytes as 16-bit big-endian words, added to
 * sum (the same kind of value, as from an earlier call), folded, in host
 * order.
 */
static inline uint32_t csum_partial(const void *buf, size_t len, uint32_t sum)
{
	return csum_fold(sum + ferry_csum_bytes_be(buf, len));
}

/* The checksum field's value (host order) for an IPv4 header whose own
 * checksum field is taken as zero. */
static inline uint16_t ip4_csum_full(const uint8_t *ip, size_t ihl_bytes)
{
	uint32_t sum = csum_partial(ip, 10, 0);

	sum = csum_partial(ip + 12, ihl_bytes - 12, sum);
	return (uint16_t)~csum_fold(sum);
}

/* RFC 1624 eqn. 3: the checksum (host order) after the 16-bit word m
 * becomes m_new. */
static inline uint16_t csum_replace16(uint16_t hc, uint16_t m, uint16_t m_new)
{
	uint32_t sum = (uint16_t)~hc;

	sum += (uint16_t)~m;
	sum += m_new;
	return (uint16_t)~csum_fold(sum);
}

/* TTL minus one, checksum updated; the header is at ip (bytes 8: TTL,
 * 9: protocol, 10-11: checksum, network order). Caller checks TTL > 1. */
static inline __attribute__((always_inline)) void ip4_ttl_dec(uint8_t *ip)
{
	uint16_t old = (uint16_t)(ip[8] << 8 | ip[9]);
	uint16_t hc = (uint16_t)(ip[10] << 8 | ip[11]);
	uint16_t nw;

	ip[8]--;
	nw = (uint16_t)(ip[8] << 8 | ip[9]);
	hc = csum_replace16(hc, old, nw);
	ip[10] = (uint8_t)(hc >> 8);
	ip[11] = (uint8_t)hc;
}

#endif
