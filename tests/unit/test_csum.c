// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_csum.c - partial TCP/UDP checksums completed in userspace
 * (dataplane/fastpath/csum.h), against a plain byte-by-byte recompute: IPv4 and
 * IPv6, TCP and UDP, odd lengths, VLAN tags, frames split into segments at
 * odd offsets (multi-buffer chains); correct frames never altered.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "csum.h"

#define MAXF 9100

/* The reference: RFC 1071, one 16-bit word at a time. */
static uint16_t ref_sum(const uint8_t *p, size_t len, uint32_t init)
{
	uint32_t s = init;
	size_t i;

	for (i = 0; i < len; i++)
		s += i & 1 ? p[i] : (uint32_t)p[i] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

struct frame {
	uint8_t b[MAXF];
	uint32_t len;
	uint32_t l4off;
	uint32_t field;	 /* offset of the checksum field */
	uint16_t pseudo; /* folded pseudo-header sum */
	int v6, udp;
};

/* A frame with a correct checksum: Ethernet, vlans tags, IP, L4, payload. */
static void build(struct frame *f, int v6, int udp, int vlans, uint32_t payload,
		  unsigned int seed)
{
	uint32_t off = 12, l3, l4len, i, ps;
	uint8_t ph[40];

	memset(f, 0, sizeof(*f));
	srand(seed);
	f->v6 = v6;
	f->udp = udp;
	for (i = 0; i < 12; i++)
		f->b[i] = (uint8_t)rand();
	for (i = 0; i < (uint32_t)vlans; i++, off += 4) {
		f->b[off] = i ? 0x81 : 0x88;
		f->b[off + 1] = i ? 0x00 : 0xa8;
		f->b[off + 3] = 7;
	}
	f->b[off] = v6 ? 0x86 : 0x08;
	f->b[off + 1] = v6 ? 0xdd : 0x00;
	l3 = off + 2;
	l4len = (udp ? 8 : 20) + payload;
	if (v6) {
		f->b[l3] = 0x60;
		f->b[l3 + 4] = (uint8_t)(l4len >> 8);
		f->b[l3 + 5] = (uint8_t)l4len;
		f->b[l3 + 6] = udp ? 17 : 6;
		f->b[l3 + 7] = 64;
		for (i = 8; i < 40; i++)
			f->b[l3 + i] = (uint8_t)rand();
		f->l4off = l3 + 40;
		memcpy(ph, f->b + l3 + 8, 32);
		ps = ref_sum(ph, 32, 0);
	} else {
		f->b[l3] = 0x45;
		f->b[l3 + 2] = (uint8_t)((20 + l4len) >> 8);
		f->b[l3 + 3] = (uint8_t)(20 + l4len);
		f->b[l3 + 6] = 0x40; /* DF */
		f->b[l3 + 8] = 64;
		f->b[l3 + 9] = udp ? 17 : 6;
		for (i = 12; i < 20; i++)
			f->b[l3 + i] = (uint8_t)rand();
		f->l4off = l3 + 20;
		ps = ref_sum(f->b + l3 + 12, 8, 0);
	}
	ps += (udp ? 17u : 6u) + l4len;
	while (ps >> 16)
		ps = (ps & 0xffff) + (ps >> 16);
	f->pseudo = (uint16_t)ps;
	for (i = f->l4off; i < f->l4off + l4len; i++)
		f->b[i] = (uint8_t)rand();
	if (udp) {
		f->b[f->l4off + 4] = (uint8_t)(l4len >> 8);
		f->b[f->l4off + 5] = (uint8_t)l4len;
	}
	f->field = f->l4off + (udp ? 6 : 16);
	f->b[f->field] = f->b[f->field + 1] = 0;
	ps = (uint16_t)~ref_sum(f->b + f->l4off, l4len, f->pseudo);
	if (udp && !ps)
		ps = 0xffff;
	f->b[f->field] = (uint8_t)(ps >> 8);
	f->b[f->field + 1] = (uint8_t)ps;
	f->len = f->l4off + l4len;
}

static void make_partial(struct frame *f)
{
	f->b[f->field] = (uint8_t)(f->pseudo >> 8);
	f->b[f->field + 1] = (uint8_t)f->pseudo;
}

/* Splits f into chunks of seg bytes (the last shorter), into copies. */
static uint32_t split(struct frame *f, uint32_t seg, uint8_t **bufs,
		      struct ferry_csum_seg *s)
{
	uint32_t n = 0, off;

	for (off = 0; off < f->len; off += seg, n++) {
		uint32_t len = f->len - off < seg ? f->len - off : seg;

		bufs[n] = malloc(len);
		memcpy(bufs[n], f->b + off, len);
		s[n].data = bufs[n];
		s[n].len = len;
	}
	return n;
}

static void join(struct frame *f, uint8_t **bufs, struct ferry_csum_seg *s,
		 uint32_t n)
{
	uint32_t i, off = 0;

	for (i = 0; i < n; i++) {
		memcpy(f->b + off, s[i].data, s[i].len);
		off += s[i].len;
		free(bufs[i]);
	}
}

static void check_one(int v6, int udp, int vlans, uint32_t payload,
		      uint32_t seg, unsigned int seed)
{
	static struct frame f, good;
	struct ferry_csum_seg s[64];
	uint8_t *bufs[64];
	uint32_t n;

	build(&good, v6, udp, vlans, payload, seed);
	/* Partial: completed to exactly the recomputed frame. */
	f = good;
	make_partial(&f);
	n = split(&f, seg, bufs, s);
	if (good.b[good.field] == f.b[f.field] &&
	    good.b[good.field + 1] == f.b[f.field + 1])
		assert_int_equal(ferry_csum_complete(s, n), FERRY_CSUM_CORRECT);
	else
		assert_int_equal(ferry_csum_complete(s, n), FERRY_CSUM_FIXED);
	join(&f, bufs, s, n);
	assert_memory_equal(f.b, good.b, good.len);
	/* Correct: never altered. */
	f = good;
	n = split(&f, seg, bufs, s);
	ferry_csum_complete(s, n);
	join(&f, bufs, s, n);
	assert_memory_equal(f.b, good.b, good.len);
	/* Neither partial nor correct: not ours to repair, left wrong. */
	f = good;
	f.b[f.len - 1] ^= 0x5a;
	if (f.b[f.field] == (uint8_t)(f.pseudo >> 8) &&
	    f.b[f.field + 1] == (uint8_t)f.pseudo)
		return;
	good = f;
	n = split(&f, seg, bufs, s);
	assert_int_equal(ferry_csum_complete(s, n), FERRY_CSUM_NONE);
	join(&f, bufs, s, n);
	assert_memory_equal(f.b, good.b, good.len);
}

static void test_single_buffer(void **state)
{
	static const uint32_t payloads[] = {0,	1,    2,    3,	  17,
					    18, 1399, 1400, 1452, 1472};
	unsigned int seed = 1;
	size_t i;
	int v6, udp, vlans;

	(void)state;
	for (v6 = 0; v6 < 2; v6++)
		for (udp = 0; udp < 2; udp++)
			for (vlans = 0; vlans < 3; vlans++)
				for (i = 0;
				     i < sizeof(payloads) / sizeof(payloads[0]);
				     i++)
					check_one(v6, udp, vlans, payloads[i],
						  MAXF, seed++);
}

static void test_chains(void **state)
{
	/* Segment sizes: copy mode's 1792, odd ones, tiny ones. */
	static const uint32_t segs[] = {1792, 1791, 1793, 333, 145};
	static const uint32_t payloads[] = {1500, 2999, 8952, 8931};
	unsigned int seed = 100;
	size_t i, k;
	int v6, udp;

	(void)state;
	for (v6 = 0; v6 < 2; v6++)
		for (udp = 0; udp < 2; udp++)
			for (i = 0; i < sizeof(segs) / sizeof(segs[0]); i++)
				for (k = 0;
				     k < sizeof(payloads) / sizeof(payloads[0]);
				     k++)
					check_one(v6, udp, 0, payloads[k],
						  segs[i], seed++);
}

static void test_udp_zero_and_others(void **state)
{
	static struct frame f, good;
	struct ferry_csum_seg s = {0};
	uint8_t arp[60] = {0};

	(void)state;
	/* IPv4 UDP without a checksum (0): left as it is. */
	build(&good, 0, 1, 0, 100, 7);
	f = good;
	f.b[f.field] = f.b[f.field + 1] = 0;
	s.data = f.b;
	s.len = f.len;
	assert_int_equal(ferry_csum_complete(&s, 1), FERRY_CSUM_NONE);
	assert_int_equal(f.b[f.field] | f.b[f.field + 1], 0);
	/* Not IP. */
	arp[12] = 0x08;
	arp[13] = 0x06;
	s.data = arp;
	s.len = sizeof(arp);
	assert_int_equal(ferry_csum_complete(&s, 1), FERRY_CSUM_NONE);
	/* An IPv4 fragment: its checksum covers the other fragments. */
	build(&good, 0, 0, 0, 100, 8);
	f = good;
	make_partial(&f);
	f.b[14 + 6] = 0x20; /* MF */
	s.data = f.b;
	s.len = f.len;
	assert_int_equal(ferry_csum_complete(&s, 1), FERRY_CSUM_NONE);
	/* IP says more than the frame holds. */
	build(&good, 1, 0, 0, 100, 9);
	f = good;
	make_partial(&f);
	s.data = f.b;
	s.len = f.len - 10;
	assert_int_equal(ferry_csum_complete(&s, 1), FERRY_CSUM_TRUNCATED);
	/* Short frames. */
	s.len = 13;
	assert_int_equal(ferry_csum_complete(&s, 1), FERRY_CSUM_NONE);
	s.len = 14 + 39;
	assert_int_equal(ferry_csum_complete(&s, 1), FERRY_CSUM_NONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_buffer),
		cmocka_unit_test(test_chains),
		cmocka_unit_test(test_udp_zero_and_others),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
