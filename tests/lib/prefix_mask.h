/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * prefix_mask.h - the reference prefix mask of the FIB unit test and
 * benchmark: clears every bit of a 16-byte key past len. Written apart
 * from dataplane/fib/fib.c's own on purpose, so the tests check it rather
 * than repeat it.
 */
#ifndef FERRY_TEST_PREFIX_MASK_H
#define FERRY_TEST_PREFIX_MASK_H

#include <stdint.h>

static inline void prefix_mask(uint8_t *k, unsigned len)
{
	unsigned i;

	for (i = 0; i < 16; i++) {
		if (len >= 8 * (i + 1))
			continue;
		k[i] = len <= 8 * i
			       ? 0
			       : k[i] & (uint8_t)(0xff << (8 * (i + 1) - len));
	}
}

#endif
