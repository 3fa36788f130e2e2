/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * csum.h - completing partial TCP/UDP checksums of frames the workers send
 * out, in userspace, on a frame held as one or more segments (a multi-buffer
 * chain).
 *
 * A veth whose peer keeps TX checksum offload on hands over TCP/UDP frames
 * marked CHECKSUM_PARTIAL: the checksum field holds only the folded sum of
 * the pseudo-header (not inverted), and the device is to finish it. XDP and
 * AF_XDP see only the bytes, so ferry would forward the frame as it is and
 * the receiver would drop it. What makes completing safe without the mark:
 *  - a frame is a candidate only when its field equals the folded
 *    pseudo-header sum (what every partial frame holds);
 *  - a candidate whose checksum already verifies is left alone (a correct
 *    frame may hold that value by chance: 1 in 65535);
 *  - otherwise the field becomes the full checksum, which is what a
 *    correct frame holds: completing is idempotent.
 * So a frame with a correct checksum is never altered, and one that was
 * neither partial nor correct stays wrong (it is not ours to repair).
 *
 * Only the first segment is parsed: Ethernet, up to two VLAN tags, IPv4
 * (not a fragment) or IPv6 with TCP/UDP as the next header, the transport
 * header and its checksum field all in it.
 */
#ifndef FERRY_CSUM_H
#define FERRY_CSUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct ferry_csum_seg {
	uint8_t *data;
	uint32_t len;
};

enum ferry_csum_result {
	FERRY_CSUM_NONE,     /* not TCP/UDP over IP, or not partial */
	FERRY_CSUM_CORRECT,  /* looked partial, checksum already verifies */
	FERRY_CSUM_FIXED,    /* partial: completed */
	FERRY_CSUM_TRUNCATED /* IP says more bytes than the frame holds */
};

/* One's-complement fold of a 64-bit sum: 2^32 and 2^16 are 1 mod 0xffff. */
static inline uint16_t ferry_csum_fold(uint64_t sum)
{
	sum = (sum & 0xffffffffu) + (sum >> 32); /* < 2^33 */
	sum = (sum & 0xffff) + (sum >> 16);	 /* < 2^18 */
	sum = (sum & 0xffff) + (sum >> 16);	 /* < 2^16 + 4 */
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static inline uint16_t ferry_csum_bswap16(uint16_t v)
{
	return (uint16_t)(v << 8 | v >> 8);
}

/*
 * Adds the sum of len bytes taken as big-endian 16-bit words (an odd last
 * byte padded with zero) to sum, unfolded. Eight bytes a load, in host
 * order, carries added back in: 2^64, 2^32 and 2^16 are all 1 modulo
 * 0xffff, so a 64-bit word sums as its four 16-bit halves, and a sum of
 * little-endian words is the big-endian one byte-swapped.
 */
static inline uint64_t ferry_csum_add(uint64_t sum, const uint8_t *p,
				      size_t len)
{
	uint64_t le = 0, v;
	size_t i = 0;

	_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
		       "ferry_csum_add sums little-endian words");
	for (; i + 8 <= len; i += 8) {
		memcpy(&v, p + i, sizeof(v));
		le += v;
		le += le < v; /* end-around carry */
	}
	/* The tail, under eight bytes: at most 2^32 + 2^16 + 2^8. */
	v = 0;
	if (i + 4 <= len) {
		uint32_t w;

		memcpy(&w, p + i, sizeof(w));
		v += w;
		i += 4;
	}
	if (i + 2 <= len) {
		v += (uint32_t)(p[i] | p[i + 1] << 8);
		i += 2;
	}
	if (i < len)
		v += p[i];
	le += v;
	le += le < v;
	return sum + ferry_csum_bswap16(ferry_csum_fold(le));
}

/*
 * Sum over len bytes of a segmented frame from (segment s, offset off),
 * as if contiguous: a segment that starts at an odd position of the run
 * has its own sum byte-swapped (RFC 1071's byte-order independence).
 */
static inline uint64_t ferry_csum_segs(const struct ferry_csum_seg *seg,
				       uint32_t nseg, uint32_t s, uint32_t off,
				       uint32_t len)
{
	uint64_t sum = 0;
	uint32_t pos = 0;

	for (; s < nseg && len; s++, off = 0) {
		uint32_t n = seg[s].len - off;
		uint16_t part;

		if (n > len)
			n = len;
		part = ferry_csum_fold(ferry_csum_add(0, seg[s].data + off, n));
		sum += pos & 1 ? ferry_csum_bswap16(part) : part;
		pos += n;
		len -= n;
	}
	return sum;
}

static inline uint32_t ferry_csum_be16(const uint8_t *p)
{
	return (uint32_t)(p[0] << 8 | p[1]);
}

/*
 * Completes the TCP/UDP checksum of the frame in seg[0..nseg) if it is
 * partial; see the head of this file.
 */
static inline enum ferry_csum_result
ferry_csum_complete(struct ferry_csum_seg *seg, uint32_t nseg)
{
	uint8_t *p = seg[0].data, *field;
	uint32_t len0 = seg[0].len, off = 12, l3, l4off, l4len, total = 0, i;
	uint32_t proto, type;
	uint64_t pseudo, sum;
	uint16_t want, now;

	if (len0 < 14)
		return FERRY_CSUM_NONE;
	type = ferry_csum_be16(p + off);
	/* Up to two VLAN tags (802.1Q, 802.1ad). */
	for (i = 0; i < 2 && (type == 0x8100 || type == 0x88a8); i++) {
		off += 4;
		if (len0 < off + 2)
			return FERRY_CSUM_NONE;
		type = ferry_csum_be16(p + off);
	}
	l3 = off + 2;
	if (type == 0x0800) {
		uint32_t ihl, tot;

		if (len0 < l3 + 20 || (p[l3] >> 4) != 4)
			return FERRY_CSUM_NONE;
		ihl = (uint32_t)(p[l3] & 0xf) * 4;
		tot = ferry_csum_be16(p + l3 + 2);
		/* Fragments: the transport checksum covers all of them. */
		if (ihl < 20 || tot < ihl ||
		    (ferry_csum_be16(p + l3 + 6) & 0x3fff))
			return FERRY_CSUM_NONE;
		proto = p[l3 + 9];
		l4off = l3 + ihl;
		l4len = tot - ihl;
		pseudo = ferry_csum_add(0, p + l3 + 12, 8);
	} else if (type == 0x86dd) {
		if (len0 < l3 + 40 || (p[l3] >> 4) != 6)
			return FERRY_CSUM_NONE;
		proto = p[l3 + 6];
		l4off = l3 + 40;
		l4len = ferry_csum_be16(p + l3 + 4);
		pseudo = ferry_csum_add(0, p + l3 + 8, 32);
	} else {
		return FERRY_CSUM_NONE;
	}
	if (proto == 6) {
		if (len0 < l4off + 20)
			return FERRY_CSUM_NONE;
		field = p + l4off + 16;
	} else if (proto == 17) {
		if (len0 < l4off + 8)
			return FERRY_CSUM_NONE;
		field = p + l4off + 6;
	} else {
		return FERRY_CSUM_NONE;
	}
	pseudo += proto + (l4len >> 16) + (l4len & 0xffff);
	now = (uint16_t)ferry_csum_be16(field);
	/* The cheap test first: most frames end here. */
	if (now != ferry_csum_fold(pseudo))
		return FERRY_CSUM_NONE;
	for (i = 0; i < nseg; i++)
		total += seg[i].len;
	if (l4off + l4len > total)
		return FERRY_CSUM_TRUNCATED;
	sum = pseudo + ferry_csum_segs(seg, nseg, 0, l4off, l4len);
	if (ferry_csum_fold(sum) == 0xffff)
		return FERRY_CSUM_CORRECT;
	/* Take the field out of the sum (one's complement: add ~field). */
	want = (uint16_t)~ferry_csum_fold(sum + (uint16_t)~now);
	if (proto == 17 && !want)
		want = 0xffff; /* UDP: 0 would mean "no checksum" */
	field[0] = (uint8_t)(want >> 8);
	field[1] = (uint8_t)want;
	return FERRY_CSUM_FIXED;
}

#endif /* FERRY_CSUM_H */
