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
#ifndef FERRY_DP_CSUM_H
#define FERRY_DP_CSUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The arithmetic (fold, pseudo-header sums, the partial test, the final
 * value) is the classifier's: one definition for both sides. */
#include "ferry_csum.h"

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

/*
 * Adds the folded sum of len bytes taken as big-endian 16-bit words (an
 * odd last byte padded with zero) to sum, in host order (for sums built
 * from host-order fields, as the benchmarks do).
 */
static inline uint64_t ferry_csum_add(uint64_t sum, const uint8_t *p,
				      size_t len)
{
	return sum + ferry_csum_bytes_be(p, len);
}

/*
 * Sum over len bytes of a segmented frame from (segment s, offset off),
 * as if contiguous, memory order (as ferry_csum_bytes): a segment that
 * starts at an odd position of the run has its own sum byte-swapped
 * (RFC 1071's byte-order independence).
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
		part = ferry_csum_fold(
			ferry_csum_bytes(seg[s].data + off, n, 0));
		sum += pos & 1 ? (uint16_t)(part << 8 | part >> 8) : part;
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
	uint32_t proto, type, sa[4], da[4];
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
		memcpy(sa, p + l3 + 12, 4);
		memcpy(da, p + l3 + 16, 4);
		pseudo =
			ferry_csum_pseudo4(sa[0], da[0], (uint8_t)proto, l4len);
	} else if (type == 0x86dd) {
		if (len0 < l3 + 40 || (p[l3] >> 4) != 6)
			return FERRY_CSUM_NONE;
		proto = p[l3 + 6];
		l4off = l3 + 40;
		l4len = ferry_csum_be16(p + l3 + 4);
		memcpy(sa, p + l3 + 8, 16);
		memcpy(da, p + l3 + 24, 16);
		pseudo = ferry_csum_pseudo6(sa, da, (uint8_t)proto, l4len);
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
	/* Sums in memory order (see ferry_csum.h): the field as it lies. */
	memcpy(&now, field, sizeof(now));
	/* The cheap test first: most frames end here. */
	if (!ferry_csum_is_partial(now, pseudo))
		return FERRY_CSUM_NONE;
	for (i = 0; i < nseg; i++)
		total += seg[i].len;
	if (l4off + l4len > total)
		return FERRY_CSUM_TRUNCATED;
	sum = ferry_csum_segs(seg, nseg, 0, l4off, l4len);
	if (ferry_csum_fold(pseudo + sum) == 0xffff)
		return FERRY_CSUM_CORRECT;
	/* Take the field out of the sum; UDP sends a computed 0 as 0xffff. */
	want = ferry_csum_final(pseudo, ferry_csum_unsum(sum, now),
				(uint8_t)proto);
	memcpy(field, &want, sizeof(want));
	return FERRY_CSUM_FIXED;
}

#endif /* FERRY_DP_CSUM_H */
