// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_fib - the FIB's longest-prefix match against a linear scan over the
 * same routes, on random tables with overlapping prefixes, deletes and
 * re-adds; multipath picks; groups changed in place, alone and under a
 * reader; the grace period; the incremental checksum.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fib.h"
#include "prefix_mask.h"
#include "route_csum.h"

/* A deterministic generator, so a failure reproduces. */
static uint32_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*s >> 33);
}

struct ref_route {
	uint8_t key[16];
	unsigned len;
	uint32_t nh;
	int live;
};

static int covers(const struct ref_route *r, const uint8_t *a)
{
	uint8_t k[16];

	memcpy(k, a, 16);
	prefix_mask(k, r->len);
	return !memcmp(k, r->key, 16);
}

/* Linear scan: the longest live route covering a. */
static uint32_t ref_lookup(const struct ref_route *rt, size_t n,
			   const uint8_t *a)
{
	int best = -1;
	uint32_t nh = FIB_NH_NONE;
	size_t i;

	for (i = 0; i < n; i++)
		if (rt[i].live && (int)rt[i].len > best && covers(&rt[i], a)) {
			best = (int)rt[i].len;
			nh = rt[i].nh;
		}
	return nh;
}

static uint32_t key4(const uint8_t *k)
{
	return (uint32_t)k[0] << 24 | k[1] << 16 | k[2] << 8 | k[3];
}

static int add(struct fib *f, int fam, struct ref_route *r)
{
	return fam == 4 ? fib4_add(f, key4(r->key), r->len, r->nh)
			: fib6_add(f, r->key, r->len, r->nh);
}

static int del(struct fib *f, int fam, struct ref_route *r)
{
	return fam == 4 ? fib4_del(f, key4(r->key), r->len)
			: fib6_del(f, r->key, r->len);
}

static uint32_t lookup(const struct fib_dp *dp, int fam, const uint8_t *a)
{
	return fam == 4 ? fib4_lookup(dp, key4(a)) : fib6_lookup(dp, a);
}

/*
 * Addresses to probe: random ones, and ones inside or just past a route,
 * where a wrong depth or range shows.
 */
static void probe_addr(uint64_t *s, int fam, const struct ref_route *rt,
		       size_t n, uint8_t *a)
{
	unsigned i, bytes = fam == 4 ? 4 : 16;

	memset(a, 0, 16);
	for (i = 0; i < bytes; i++)
		a[i] = (uint8_t)rnd(s);
	if (n && rnd(s) % 4) {
		const struct ref_route *r = &rt[rnd(s) % n];
		uint8_t b[16];

		memcpy(b, a, 16);
		memcpy(a, r->key, 16);
		/* keep the prefix, random host bits */
		for (i = r->len; i < bytes * 8; i++)
			if (b[i / 8] & (0x80 >> (i % 8)))
				a[i / 8] |= (uint8_t)(0x80 >> (i % 8));
	}
}

static void check_all(const struct fib *f, int fam, const struct ref_route *rt,
		      size_t n, uint64_t *s, unsigned probes)
{
	const struct fib_dp *dp = fib_dp(f);
	uint8_t a[16];
	unsigned i;

	for (i = 0; i < probes; i++) {
		uint32_t want, got;

		probe_addr(s, fam, rt, n, a);
		want = ref_lookup(rt, n, a);
		got = lookup(dp, fam, a);
		if (want != got) {
			char buf[64];
			unsigned j, o = 0;

			for (j = 0; j < (fam == 4 ? 4u : 16u); j++)
				o += (unsigned)snprintf(
					buf + o, sizeof(buf) - o, "%02x", a[j]);
			fail_msg("IPv%d lookup %s: want nh %u, got %u", fam,
				 buf, want, got);
		}
	}
}

/*
 * Random prefixes with lengths over the whole range, a third of them
 * derived from an earlier one (longer or shorter) so that they overlap.
 */
static void random_routes(uint64_t *s, int fam, struct ref_route *rt, size_t n,
			  const uint32_t *nhs, unsigned n_nh)
{
	unsigned maxlen = fam == 4 ? 32 : 128, bytes = fam == 4 ? 4 : 16;
	size_t i, j;

	for (i = 0; i < n; i++) {
		struct ref_route *r = &rt[i];

	again:
		memset(r, 0, sizeof(*r));
		for (j = 0; j < bytes; j++)
			r->key[j] = (uint8_t)rnd(s);
		if (i && rnd(s) % 3 == 0)
			memcpy(r->key, rt[rnd(s) % i].key, 16);
		switch (rnd(s) % 6) {
		case 0:
			r->len = rnd(s) % (maxlen + 1);
			break;
		case 1:
			r->len = 24 + rnd(s) % 9; /* around the tbl24 edge */
			break;
		default:
			r->len = 8 + rnd(s) % (maxlen - 7);
		}
		/* a v6 table mostly of short-ish prefixes, else it is huge */
		if (fam == 6 && r->len > 64 && rnd(s) % 4)
			r->len = 16 + rnd(s) % 49;
		prefix_mask(r->key, r->len);
		for (j = 0; j < i; j++)
			if (rt[j].len == r->len &&
			    !memcmp(rt[j].key, r->key, 16))
				goto again;
		r->nh = nhs[rnd(s) % n_nh];
		r->live = 1;
	}
}

static void lpm_random(int fam, size_t n, unsigned rounds)
{
	uint64_t s = 0x5eed0000u + (unsigned)fam;
	struct fib_params p = {.v4_groups = 4096, .v6_groups = 65536};
	struct fib *f = fib_create(&p);
	struct ref_route *rt = calloc(n, sizeof(*rt));
	uint32_t nhs[16];
	unsigned i, r;
	size_t k;

	assert_non_null(f);
	assert_non_null(rt);
	for (i = 0; i < 16; i++) {
		struct fib_nh_info in = {.port = (uint16_t)i, .flags = 1};
		int id = fib_nh_alloc(f, &in);

		assert_true(id > 0);
		nhs[i] = (uint32_t)id;
	}
	random_routes(&s, fam, rt, n, nhs, 16);
	for (k = 0; k < n; k++)
		assert_int_equal(add(f, fam, &rt[k]), 0);
	check_all(f, fam, rt, n, &s, 3000);

	for (r = 0; r < rounds; r++) {
		/* delete a random half, check, re-add some with new next hops,
		 * replace some in place, check */
		for (k = 0; k < n; k++)
			if (rt[k].live && rnd(&s) % 2) {
				assert_int_equal(del(f, fam, &rt[k]), 0);
				assert_int_equal(del(f, fam, &rt[k]), -ENOENT);
				rt[k].live = 0;
			}
		check_all(f, fam, rt, n, &s, 3000);
		for (k = 0; k < n; k++)
			if (!rt[k].live ? rnd(&s) % 2 : rnd(&s) % 8 == 0) {
				rt[k].nh = nhs[rnd(&s) % 16];
				rt[k].live = 1;
				assert_int_equal(add(f, fam, &rt[k]), 0);
			}
		check_all(f, fam, rt, n, &s, 3000);
	}
	/* everything out: the table is empty again and every group is back */
	for (k = 0; k < n; k++)
		if (rt[k].live)
			assert_int_equal(del(f, fam, &rt[k]), 0);
	{
		struct fib_stats st;
		uint8_t a[16];

		fib_stats(f, &st);
		assert_int_equal(fam == 4 ? st.v4_routes : st.v6_routes, 0);
		assert_int_equal(
			fam == 4 ? st.v4_groups_used : st.v6_groups_used, 0);
		for (i = 0; i < 1000; i++) {
			probe_addr(&s, fam, rt, n, a);
			assert_int_equal(lookup(fib_dp(f), fam, a),
					 FIB_NH_NONE);
		}
	}
	free(rt);
	fib_destroy(f);
}

static void test_lpm4_random(void **state)
{
	(void)state;
	lpm_random(4, 2000, 2);
}

static void test_lpm6_random(void **state)
{
	(void)state;
	lpm_random(6, 1000, 2);
}

/* /0, /32, /128, a /24 and /25 at the tbl24 edge; the bulk lookups. */
static void test_lpm_edges(void **state)
{
	struct fib *f = fib_create(NULL);
	struct fib_nh_info in = {.port = 1};
	const struct fib_dp *dp;
	uint8_t p6[16] = {0x20, 0x01, 0x0d, 0xb8}, a6[16];
	uint32_t a4[4], nh4[4], nh6[2];
	uint8_t b6[2][16];
	int n1, n2, n3, n4;

	(void)state;
	assert_non_null(f);
	dp = fib_dp(f);
	n1 = fib_nh_alloc(f, &in);
	n2 = fib_nh_alloc(f, &in);
	n3 = fib_nh_alloc(f, &in);
	n4 = fib_nh_alloc(f, &in);
	assert_int_equal(fib4_lookup(dp, 0x01020304), FIB_NH_NONE);
	assert_int_equal(fib4_add(f, 0, 0, (uint32_t)n1), 0);
	assert_int_equal(fib4_add(f, 0xc0a80100, 24, (uint32_t)n2), 0);
	assert_int_equal(fib4_add(f, 0xc0a80180, 25, (uint32_t)n3), 0);
	assert_int_equal(fib4_add(f, 0xc0a801ff, 32, (uint32_t)n4), 0);
	assert_int_equal(fib4_add(f, 0, 33, (uint32_t)n4), -EINVAL);
	assert_int_equal(fib4_add(f, 0, 8, 0), -EINVAL);
	assert_int_equal(fib4_lookup(dp, 0x01020304), n1);
	assert_int_equal(fib4_lookup(dp, 0xc0a80101), n2);
	assert_int_equal(fib4_lookup(dp, 0xc0a80181), n3);
	assert_int_equal(fib4_lookup(dp, 0xc0a801ff), n4);
	a4[0] = 0x01020304, a4[1] = 0xc0a80101, a4[2] = 0xc0a80181;
	a4[3] = 0xc0a801ff;
	fib4_lookup_bulk(dp, a4, nh4, 4);
	assert_int_equal(nh4[0], n1);
	assert_int_equal(nh4[1], n2);
	assert_int_equal(nh4[2], n3);
	assert_int_equal(nh4[3], n4);
	assert_int_equal(fib4_get(f, 0xc0a80180, 25), n3);
	{
		/* more than FIB_BULK_MAX at once: the same as one by one */
		uint32_t many[150], got[150];
		unsigned i;

		for (i = 0; i < 150; i++)
			many[i] =
				a4[i % 4] + (i / 4) % 2 * 0x80u * (i % 4 == 1);
		fib4_lookup_bulk(dp, many, got, 150);
		for (i = 0; i < 150; i++)
			assert_int_equal(got[i], fib4_lookup(dp, many[i]));
	}
	/* the /25 goes: its half falls back to the /24, the /32 stays */
	assert_int_equal(fib4_del(f, 0xc0a80180, 25), 0);
	assert_int_equal(fib4_lookup(dp, 0xc0a80181), n2);
	assert_int_equal(fib4_lookup(dp, 0xc0a801ff), n4);
	assert_int_equal(fib4_del(f, 0, 0), 0);
	assert_int_equal(fib4_lookup(dp, 0x01020304), FIB_NH_NONE);

	assert_int_equal(fib6_add(f, p6, 0, (uint32_t)n1), 0);
	assert_int_equal(fib6_add(f, p6, 32, (uint32_t)n2), 0);
	memcpy(a6, p6, 16);
	a6[15] = 1;
	assert_int_equal(fib6_add(f, a6, 128, (uint32_t)n3), 0);
	assert_int_equal(fib6_lookup(dp, a6), n3);
	a6[15] = 2;
	assert_int_equal(fib6_lookup(dp, a6), n2);
	a6[0] = 0x30;
	assert_int_equal(fib6_lookup(dp, a6), n1);
	memcpy(b6[0], p6, 16);
	b6[0][15] = 1;
	memcpy(b6[1], a6, 16);
	fib6_lookup_bulk(dp, (const uint8_t(*)[16])b6, nh6, 2);
	assert_int_equal(nh6[0], n3);
	assert_int_equal(nh6[1], n1);
	assert_int_equal(fib6_add(f, a6, 129, (uint32_t)n3), -EINVAL);
	fib_destroy(f);
}

/* Multipath: a flow's hash picks one path, always the same one; flows
 * spread over every path. */
static void test_multipath(void **state)
{
	struct fib *f = fib_create(NULL);
	const struct fib_dp *dp;
	uint32_t m[4], got[4] = {0}, out[8];
	unsigned i, n = 8, seen[4] = {0};
	uint64_t s = 7;
	int g;

	(void)state;
	assert_non_null(f);
	dp = fib_dp(f);
	for (i = 0; i < 4; i++) {
		struct fib_nh_info in = {.port = (uint16_t)(10 + i),
					 .flags = FIB_NH_F_NEIGH,
					 .mac = {2, 0, 0, 0, 0, (uint8_t)i}};

		m[i] = (uint32_t)fib_nh_alloc(f, &in);
	}
	g = fib_nh_group_alloc(f, m, 4);
	assert_true(g > 0);
	assert_int_equal(fib_nh_group_get(f, (uint32_t)g, out, &n), 0);
	assert_int_equal(n, 4);
	assert_memory_equal(out, m, sizeof(m));
	assert_int_equal(fib4_add(f, 0x0a000000, 8, (uint32_t)g), 0);
	assert_int_equal(fib4_lookup(dp, 0x0a010203), g);
	for (i = 0; i < 4000; i++) {
		uint32_t h = rnd(&s) << 1 ^ rnd(&s),
			 id = fib_nh_pick(dp, (uint32_t)g, h);
		uint64_t w = fib_nhw_load(dp, id);
		unsigned k;

		for (k = 0; k < 4 && m[k] != id; k++)
			;
		assert_true(k < 4);
		assert_int_equal(fib_nhw_port(w), 10 + k);
		assert_int_equal(fib_nh_pick(dp, (uint32_t)g, h), id);
		seen[k]++;
		if (i < 4)
			got[i] = id;
	}
	for (i = 0; i < 4; i++)
		assert_true(seen[i] > 700); /* ~1000 each */
	/* a plain next hop picks itself */
	assert_int_equal(fib_nh_pick(dp, m[2], 12345), m[2]);
	/* a neighbour's MAC changes under the group: same path, new MAC */
	{
		struct fib_nh_info in = {.port = 10,
					 .flags = FIB_NH_F_NEIGH,
					 .mac = {2, 0, 0, 0, 9, 9}};
		uint8_t mac[6];

		assert_int_equal(fib_nh_set(f, m[0], &in), 0);
		fib_nhw_mac(fib_nhw_load(dp, m[0]), mac);
		assert_memory_equal(mac, in.mac, 6);
		assert_int_equal(fib_nh_set(f, (uint32_t)g, &in), -EINVAL);
	}
	(void)got;
	assert_int_equal(fib_nh_group_alloc(f, m, 0), -EINVAL);
	fib_destroy(f);
}

/* A group with room changes its paths without moving: a route through it
 * follows at once; past its room it refuses; freeing it frees the room. */
static void test_group_set(void **state)
{
	struct fib_params p = {.max_nh = 64};
	struct fib *f = fib_create(&p);
	const struct fib_dp *dp;
	struct fib_stats st0, st;
	uint32_t m[5], out[8];
	unsigned i, n, seen[5] = {0};
	uint64_t s = 11;
	int g;

	(void)state;
	assert_non_null(f);
	dp = fib_dp(f);
	for (i = 0; i < 5; i++) {
		struct fib_nh_info in = {.port = (uint16_t)i,
					 .flags = FIB_NH_F_NEIGH};

		m[i] = (uint32_t)fib_nh_alloc(f, &in);
	}
	fib_stats(f, &st0);
	assert_int_equal(fib_nh_group_alloc_room(f, m, 2, 1), -EINVAL);
	g = fib_nh_group_alloc_room(f, m, 2, 4);
	assert_true(g > 0);
	fib_stats(f, &st);
	assert_int_equal(st.nh_used, st0.nh_used + 5); /* header + room */
	assert_int_equal(fib4_add(f, 0x0a000000, 8, (uint32_t)g), 0);
	/* three paths: m[2..4], same id */
	assert_int_equal(fib_nh_group_set(f, (uint32_t)g, m + 2, 3), 0);
	n = 8;
	assert_int_equal(fib_nh_group_get(f, (uint32_t)g, out, &n), 0);
	assert_int_equal(n, 3);
	assert_memory_equal(out, m + 2, 3 * sizeof(*m));
	assert_int_equal(fib4_lookup(dp, 0x0a010101), g);
	for (i = 0; i < 3000; i++) {
		uint32_t id = fib_nh_pick(dp, (uint32_t)g, rnd(&s) << 1);

		assert_true(id == m[2] || id == m[3] || id == m[4]);
		seen[fib_nhw_port(fib_nhw_load(dp, id))]++;
	}
	for (i = 2; i < 5; i++)
		assert_true(seen[i] > 700); /* ~1000 each */
	/* past its room, or a path that is a group: refused, unchanged */
	assert_int_equal(fib_nh_group_set(f, (uint32_t)g, m, 5), -ENOSPC);
	out[0] = (uint32_t)g;
	assert_int_equal(fib_nh_group_set(f, (uint32_t)g, out, 1), -EINVAL);
	assert_int_equal(fib_nh_group_set(f, m[0], m, 1), -EINVAL);
	n = 8;
	assert_int_equal(fib_nh_group_get(f, (uint32_t)g, out, &n), 0);
	assert_int_equal(n, 3);
	/* down to one path: every flow takes it */
	assert_int_equal(fib_nh_group_set(f, (uint32_t)g, m + 1, 1), 0);
	for (i = 0; i < 100; i++)
		assert_int_equal(fib_nh_pick(dp, (uint32_t)g, rnd(&s)), m[1]);
	/* the room is freed with the group, not only the paths in use */
	assert_int_equal(fib4_del(f, 0x0a000000, 8), 0);
	assert_int_equal(fib_nh_free(f, (uint32_t)g), 0);
	fib_stats(f, &st);
	assert_int_equal(st.nh_used, st0.nh_used);
	fib_reclaim(f);
	g = fib_nh_group_alloc_room(f, m, 3, 4);
	assert_true(g > 0);
	fib_destroy(f);
}

/*
 * A reader picks paths of a group while the writer changes its paths in
 * place, between sets of different sizes (2, 4, 3, 1 paths): every pick is
 * a path of one of the sets, never a stale slot or a torn word.
 */
struct gchurn {
	const struct fib_dp *dp;
	uint32_t g, lo, hi; /* every valid path is in [lo, hi] */
	volatile int stop;
	unsigned long picks, bad;
};

static void *group_reader(void *arg)
{
	struct gchurn *k = arg;
	uint64_t s = 3;

	while (!k->stop) {
		uint32_t id = fib_nh_pick(k->dp, k->g, rnd(&s) << 1 ^ rnd(&s));
		uint64_t w = fib_nhw_load(k->dp, id);

		if (id < k->lo || id > k->hi || fib_nhw_port(w) != 7)
			k->bad++;
		__atomic_fetch_add(&k->picks, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void test_group_set_concurrent(void **state)
{
	struct fib *f = fib_create(NULL);
	struct fib_nh_info in = {.port = 7, .flags = FIB_NH_F_NEIGH};
	static const unsigned sizes[] = {2, 4, 3, 1};
	struct gchurn k = {0};
	uint32_t m[8];
	pthread_t t;
	unsigned i, j;
	int g;

	(void)state;
	assert_non_null(f);
	for (i = 0; i < 8; i++)
		m[i] = (uint32_t)fib_nh_alloc(f, &in);
	k.dp = fib_dp(f);
	k.lo = m[0];
	k.hi = m[7];
	g = fib_nh_group_alloc_room(f, m, 2, 8);
	assert_true(g > 0);
	k.g = (uint32_t)g;
	assert_int_equal(pthread_create(&t, NULL, group_reader, &k), 0);
	/* The reader runs before the changes start, loaded host or not. */
	while (!__atomic_load_n(&k.picks, __ATOMIC_RELAXED))
		sched_yield();
	for (i = 0; i < 200000; i++) {
		unsigned n = sizes[i % 4];
		uint32_t set[8];

		for (j = 0; j < n; j++)
			set[j] = m[(i + j) % 8];
		assert_int_equal(fib_nh_group_set(f, k.g, set, n), 0);
	}
	k.stop = 1;
	pthread_join(t, NULL);
	print_message("%lu picks during 200000 in-place changes\n", k.picks);
	assert_int_equal(k.bad, 0);
	assert_true(k.picks > 0);
	fib_destroy(f);
}

/* A group unlinked by a delete is not reused while a reader may hold it. */
static void test_grace_period(void **state)
{
	struct fib_params p = {.v4_groups = 1};
	struct fib *f = fib_create(&p);
	struct fib_nh_info in = {.port = 1};
	const struct fib_dp *dp;
	struct fib_stats st;
	int nh, rd;

	(void)state;
	assert_non_null(f);
	dp = fib_dp(f);
	nh = fib_nh_alloc(f, &in);
	rd = fib_reader_register(f);
	assert_true(rd >= 0);
	assert_int_equal(fib4_add(f, 0x0a000080, 25, (uint32_t)nh), 0);
	/* the only group is taken */
	assert_int_equal(fib4_add(f, 0x0b000080, 25, (uint32_t)nh), -ENOSPC);
	assert_int_equal(fib4_lookup(dp, 0x0b000080), FIB_NH_NONE);
	assert_int_equal(fib4_get(f, 0x0b000080, 25), FIB_NH_NONE);
	assert_int_equal(fib4_del(f, 0x0a000080, 25), 0);
	fib_stats(f, &st);
	assert_int_equal(st.retired, 1);
	/* the reader has not been quiescent since: still no group */
	assert_int_equal(fib4_add(f, 0x0b000080, 25, (uint32_t)nh), -ENOSPC);
	fib_quiescent(dp, rd);
	assert_int_equal(fib4_add(f, 0x0b000080, 25, (uint32_t)nh), 0);
	assert_int_equal(fib4_lookup(dp, 0x0b000081), nh);
	fib_stats(f, &st);
	assert_int_equal(st.retired, 0);
	/* an offline reader holds nothing up */
	fib_reader_offline(dp, rd);
	assert_int_equal(fib4_del(f, 0x0b000080, 25), 0);
	fib_reclaim(f);
	fib_stats(f, &st);
	assert_int_equal(st.retired, 0);
	fib_reader_unregister(f, rd);
	fib_destroy(f);
}

/*
 * Lock-free reads under updates: a reader thread looks up addresses under
 * two /25s that come and go (each needing a tbl8 group, the pool only big
 * enough for a few, so groups are recycled through the grace period) and
 * under a /8 that is replaced. Every answer must be one the address could
 * have had at some instant: a recycled group read too early would give a
 * next hop of the other /25.
 */
struct churn {
	const struct fib_dp *dp;
	int slot;
	uint32_t a, b, c8, c8b; /* next hops */
	volatile int stop;
	unsigned long lookups, bad;
};

static void *reader(void *arg)
{
	struct churn *k = arg;
	unsigned long i;

	for (i = 0; !k->stop; i++) {
		uint32_t x = fib4_lookup(k->dp, 0x0a0102c8); /* 10.1.2.200 */
		uint32_t y = fib4_lookup(k->dp, 0x0a0505c8); /* 10.5.5.200 */

		if ((x != k->a && x != k->c8 && x != k->c8b) ||
		    (y != k->b && y != k->c8 && y != k->c8b))
			k->bad++;
		if (!(i & 63))
			fib_quiescent(k->dp, k->slot);
		__atomic_fetch_add(&k->lookups, 1, __ATOMIC_RELAXED);
	}
	fib_reader_offline(k->dp, k->slot);
	return NULL;
}

static void test_concurrent_updates(void **state)
{
	struct fib_params p = {.v4_groups = 4};
	struct fib *f = fib_create(&p);
	struct fib_nh_info in = {.port = 1};
	struct churn k = {0};
	pthread_t t;
	unsigned i, enospc = 0;

	(void)state;
	assert_non_null(f);
	k.dp = fib_dp(f);
	k.a = (uint32_t)fib_nh_alloc(f, &in);
	k.b = (uint32_t)fib_nh_alloc(f, &in);
	k.c8 = (uint32_t)fib_nh_alloc(f, &in);
	k.c8b = (uint32_t)fib_nh_alloc(f, &in);
	k.slot = fib_reader_register(f);
	assert_true(k.slot >= 0);
	assert_int_equal(fib4_add(f, 0x0a000000, 8, k.c8), 0);
	assert_int_equal(pthread_create(&t, NULL, reader, &k), 0);
	/* The reader runs before the updates start, loaded host or not. */
	while (!__atomic_load_n(&k.lookups, __ATOMIC_RELAXED))
		sched_yield();
	for (i = 0; i < 20000; i++) {
		int e1 = fib4_add(f, 0x0a010280, 25, k.a);
		int e2 = fib4_add(f, 0x0a050580, 25, k.b);

		enospc += (e1 == -ENOSPC) + (e2 == -ENOSPC);
		if (e1 == -ENOSPC || e2 == -ENOSPC)
			sched_yield(); /* the reader holds the groups: let it on */
		/* a /8 is 65536 stores: replaced now and then */
		if (!(i & 255))
			fib4_add(f, 0x0a000000, 8, i & 256 ? k.c8b : k.c8);
		if (!e1)
			assert_int_equal(fib4_del(f, 0x0a010280, 25), 0);
		if (!e2)
			assert_int_equal(fib4_del(f, 0x0a050580, 25), 0);
		if (!(i & 7))
			fib_reclaim(f);
	}
	k.stop = 1;
	pthread_join(t, NULL);
	print_message("%lu lookups during 20000 update rounds, %u ENOSPC\n",
		      k.lookups, enospc);
	assert_int_equal(k.bad, 0);
	assert_true(k.lookups > 0);
	fib_reader_unregister(f, k.slot);
	fib_destroy(f);
}

/* RFC 1624: the incremental TTL update equals a full recompute. */
static void test_csum_ttl(void **state)
{
	uint64_t s = 99;
	unsigned i, j;

	(void)state;
	for (i = 0; i < 100000; i++) {
		uint8_t ip[60], ihl = (uint8_t)(20 + 4 * (rnd(&s) % 11));
		uint16_t c;

		for (j = 0; j < ihl; j++)
			ip[j] = (uint8_t)rnd(&s);
		/* the words that make the sums hit 0x0000 / 0xffff */
		if (i % 7 == 0)
			memset(ip + 12, i % 2 ? 0xff : 0, ihl - 12u);
		ip[0] = (uint8_t)(0x40 | ihl / 4);
		if (ip[8] < 2)
			ip[8] = 2;
		c = ip4_csum_full(ip, ihl);
		ip[10] = (uint8_t)(c >> 8);
		ip[11] = (uint8_t)c;
		/* a valid header sums to 0xffff */
		assert_int_equal(csum_partial(ip, ihl, 0), 0xffff);
		ip4_ttl_dec(ip);
		c = ip4_csum_full(ip, ihl);
		if (((ip[10] << 8) | ip[11]) != c)
			fail_msg("header %u: incremental %04x, full %04x", i,
				 (ip[10] << 8) | ip[11], c);
	}
}

/*
 * Tables (VRFs): the same prefixes in the main table and in table 3 lead
 * to their own next hops; a table not open has no routes and refuses
 * adds; a group retired from table 3 goes back to table 3's pool (one
 * group there) after the readers' grace period, not to the main table's.
 */
static int count_cb(void *arg, const uint8_t prefix[16], unsigned len,
		    uint32_t nh)
{
	(void)prefix;
	(void)len;
	(void)nh;
	(*(unsigned *)arg)++;
	return 0;
}

static void test_tables(void **state)
{
	struct fib_params p = {.vrf_v4_groups = 1, .vrf_v6_groups = 8};
	struct fib *f = fib_create(&p);
	struct fib_nh_info in = {.port = 1};
	const struct fib_dp *dp;
	uint8_t a6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 1};
	unsigned n = 0;
	int nh1, nh3, rd;

	(void)state;
	assert_non_null(f);
	dp = fib_dp(f);
	nh1 = fib_nh_alloc(f, &in);
	in.port = 3;
	nh3 = fib_nh_alloc(f, &in);
	rd = fib_reader_register(f);
	assert_true(fib_table_is_open(f, 0));
	assert_false(fib_table_is_open(f, 3));
	assert_int_equal(fib4_add_in(f, 3, 0x0a000000, 8, (uint32_t)nh3),
			 -ENOENT);
	assert_int_equal(fib4_lookup_in(dp, 3, 0x0a010203), FIB_NH_NONE);
	assert_int_equal(fib_table_open(f, FIB_TABLES), -EINVAL);
	assert_int_equal(fib_table_open(f, 3), 0);
	assert_int_equal(fib_table_open(f, 3), 0);
	assert_true(fib_table_is_open(f, 3));

	assert_int_equal(fib4_add(f, 0x0a000000, 8, (uint32_t)nh1), 0);
	assert_int_equal(fib4_add_in(f, 3, 0x0a000000, 8, (uint32_t)nh3), 0);
	assert_int_equal(fib6_add(f, a6, 48, (uint32_t)nh1), 0);
	assert_int_equal(fib6_add_in(f, 3, a6, 48, (uint32_t)nh3), 0);
	assert_int_equal(fib4_lookup(dp, 0x0a010203), nh1);
	assert_int_equal(fib4_lookup_in(dp, 0, 0x0a010203), nh1);
	assert_int_equal(fib4_lookup_in(dp, 3, 0x0a010203), nh3);
	assert_int_equal(fib6_lookup_in(dp, 0, a6), nh1);
	assert_int_equal(fib6_lookup_in(dp, 3, a6), nh3);
	assert_int_equal(fib4_lookup_in(dp, 2, 0x0a010203), FIB_NH_NONE);
	assert_int_equal(fib4_get_in(f, 3, 0x0a000000, 8), nh3);
	assert_non_null(fib_route_tag_in(f, 3, 6, a6, 48));
	fib_walk_in(f, 3, 4, count_cb, &n);
	fib_walk_in(f, 3, 6, count_cb, &n);
	assert_int_equal(n, 2);

	/* table 3's only v4 group: a /25 takes it, a second is refused */
	assert_int_equal(fib4_add_in(f, 3, 0x0b000080, 25, (uint32_t)nh3), 0);
	assert_int_equal(fib4_add_in(f, 3, 0x0c000080, 25, (uint32_t)nh3),
			 -ENOSPC);
	assert_int_equal(fib4_add(f, 0x0c000080, 25, (uint32_t)nh1), 0);
	assert_int_equal(fib4_lookup_in(dp, 3, 0x0b000081), nh3);
	assert_int_equal(fib4_lookup_in(dp, 3, 0x0c000081), FIB_NH_NONE);
	assert_int_equal(fib4_del_in(f, 3, 0x0b000080, 25), 0);
	assert_int_equal(fib4_lookup_in(dp, 3, 0x0b000081), FIB_NH_NONE);
	/* not before the reader passed a quiescent state */
	assert_int_equal(fib4_add_in(f, 3, 0x0c000080, 25, (uint32_t)nh3),
			 -ENOSPC);
	fib_quiescent(dp, rd);
	assert_int_equal(fib4_add_in(f, 3, 0x0c000080, 25, (uint32_t)nh3), 0);
	assert_int_equal(fib4_lookup_in(dp, 3, 0x0c000081), nh3);
	assert_int_equal(fib4_lookup(dp, 0x0c000081), nh1);
	assert_int_equal(fib4_del_in(f, 3, 0x0a000000, 8), 0);
	assert_int_equal(fib4_lookup_in(dp, 3, 0x0a010203), FIB_NH_NONE);
	assert_int_equal(fib4_lookup(dp, 0x0a010203), nh1);
	fib_reader_unregister(f, rd);
	fib_destroy(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lpm_edges),
		cmocka_unit_test(test_lpm4_random),
		cmocka_unit_test(test_lpm6_random),
		cmocka_unit_test(test_multipath),
		cmocka_unit_test(test_group_set),
		cmocka_unit_test(test_group_set_concurrent),
		cmocka_unit_test(test_grace_period),
		cmocka_unit_test(test_concurrent_updates),
		cmocka_unit_test(test_csum_ttl),
		cmocka_unit_test(test_tables),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
