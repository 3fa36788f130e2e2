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
#include <string.h>

/* Fold a 32-bit one's complement accumulator to 16 bits. */
static inline uint16_t csum_fold(uint32_t sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/*
 * One's complement sum of len bytes as 16-bit big-endian words, added to
 * sum (the same kind of value, as from an earlier call). Summed 32 bits at
 * a time in native order and swapped once at the end: the one's complement
 * sum commutes with byte swapping (RFC 1071 2.B), and a header is five
 * loads instead of twenty byte reads.
 */
static inline uint32_t csum_partial(const void *buf, size_t len, uint32_t sum)
{
	const uint8_t *p = (const uint8_t *)buf;
	uint64_t acc = 0;
	uint32_t w32;
	uint16_t w16, folded;

	for (; len >= 4; len -= 4, p += 4) {
		memcpy(&w32, p, 4);
		acc += w32;
	}
	if (len >= 2) {
		memcpy(&w16, p, 2);
		acc += w16;
		p += 2;
		len -= 2;
	}
	if (len) {
		/* the odd byte is the high half of a big-endian word */
		w16 = 0;
		memcpy(&w16, p, 1);
		acc += w16;
	}
	acc = (acc & 0xffffffff) + (acc >> 32);
	acc = (acc & 0xffffffff) + (acc >> 32);
	folded = csum_fold((uint32_t)acc);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	folded = __builtin_bswap16(folded);
#endif
	return csum_fold(sum + folded);
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
static inline void ip4_ttl_dec(uint8_t *ip)
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
