// SPDX-License-Identifier: BSD-2-Clause
/*
 * fib_bench - ferry's FIB beside DPDK's rte_fib / rte_lpm (IPv4) and
 * rte_fib6 / rte_lpm6 (IPv6), on the same routes and the same addresses,
 * in one run: lookups per second (bulk, bursts of 32, the way a worker
 * looks up a batch), load time and memory, printed as ratios (speed: the
 * median over rounds of the ratio within each round).
 *
 * Tables: an Internet-like table (default 1 000 000 IPv4 prefixes, mostly
 * /24, then /22-/23, /16-/21, a few shorter and a few /25-/32; 200 000
 * IPv6, clustered under /32 allocations of 2000::/3, mostly /48, then /32
 * to /44). Addresses: each inside a random route, random host bits, as
 * traffic through a router hits routes; 2^20 of them, so the lookups miss
 * the caches as a busy router's do. Every structure's answer is checked
 * against ferry's on every address: the ratios are of correct lookups.
 *
 * Memory: ferry's from fib_stats() (what it touched), DPDK's from its heap
 * (rte_malloc socket stats, bytes allocated), both with their control-side
 * rule store (ferry's rule hash, DPDK's RIB / rule table). Both get the same
 * tbl8 pool size: what ferry used on this table plus an eighth.
 *
 *   fib_bench [-4 N] [-6 N] [-r ROUNDS] [-s SEED]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_fib.h>
#include <rte_fib6.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>
#include <rte_malloc.h>

#include "fib.h"
#include "prefix_mask.h"

#define N_ADDR	   (1u << 20)
#define BURST	   32
#define N_NH	   1024
#define MAX_ROUNDS 64

static uint64_t seed = 42;

static uint32_t rnd(void)
{
	seed = seed * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(seed >> 32);
}

static double now(void)
{
	struct timespec ts;

	/* CPU time of this thread: the box is shared, wall time is not ours */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct r4 {
	uint32_t pfx;
	uint8_t len;
	uint32_t nh;
};

struct r6 {
	uint8_t pfx[16];
	uint8_t len;
	uint32_t nh;
};

/* Cumulative share (per 1000) of IPv4 prefix lengths, after the DFZ's. */
static const struct {
	uint8_t len;
	uint16_t permille;
} v4_dist[] = {
	{8, 1},	   {12, 3},   {14, 6},	 {15, 9},   {16, 30},	{17, 40},
	{18, 60},  {19, 95},  {20, 145}, {21, 200}, {22, 320},	{23, 420},
	{24, 996}, {25, 997}, {26, 998}, {28, 999}, {32, 1000},
};

static uint8_t v4_len(void)
{
	uint32_t x = rnd() % 1000;
	size_t i;

	for (i = 0; v4_dist[i].permille <= x; i++)
		;
	return v4_dist[i].len;
}

static uint32_t mask4(uint32_t a, unsigned len)
{
	return len ? a & ~0u << (32 - len) : 0;
}

static void gen_v4(struct r4 *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		/* unicast space, 1.0.0.0 - 223.255.255.255 */
		uint32_t a = (1 + rnd() % 223) << 24 | (rnd() & 0xffffff);

		r[i].len = v4_len();
		r[i].pfx = mask4(a, r[i].len);
		r[i].nh = 1 + rnd() % (N_NH - 1);
	}
}

static void gen_v6(struct r6 *r, size_t n)
{
	static const uint16_t rir[] = {0x2001, 0x2400, 0x2600, 0x2800,
				       0x2a00, 0x2c00, 0x2403, 0x2a02};
	size_t n_alloc = n / 10 + 1, i, j;
	uint8_t(*alloc)[16] = calloc(n_alloc, 16);

	/* /32 allocations under the RIRs' blocks */
	for (i = 0; i < n_alloc; i++) {
		uint16_t top = rir[rnd() % 8] | (uint16_t)(rnd() & 0x01ff);

		alloc[i][0] = (uint8_t)(top >> 8);
		alloc[i][1] = (uint8_t)top;
		alloc[i][2] = (uint8_t)rnd();
		alloc[i][3] = (uint8_t)rnd();
	}
	for (i = 0; i < n; i++) {
		uint32_t x = rnd() % 100;

		memcpy(r[i].pfx, alloc[rnd() % n_alloc], 16);
		for (j = 4; j < 8; j++)
			r[i].pfx[j] = (uint8_t)rnd();
		r[i].len = x < 52   ? 48
			   : x < 70 ? 32
			   : x < 80 ? 44
			   : x < 88 ? 40
			   : x < 94 ? 36
			   : x < 97 ? 29
				    : 64;
		prefix_mask(r[i].pfx, r[i].len);
		r[i].nh = 1 + rnd() % (N_NH - 1);
	}
	free(alloc);
}

static uint64_t heap_bytes(void)
{
	struct rte_malloc_socket_stats st;

	if (rte_malloc_get_socket_stats(0, &st))
		return 0;
	return st.heap_allocsz_bytes;
}

struct result {
	const char *name;
	double best;		 /* lookups per second, best round */
	double rate[MAX_ROUNDS]; /* each round's, for the paired ratios */
	double load;		 /* seconds to add every route */
	uint64_t bytes;
	unsigned pool; /* tbl8 groups it was given */
};

/*
 * DPDK's structures with the smallest tbl8 pool that holds the table,
 * within a quarter: from ferry's count up, a quarter more on each ENOSPC.
 * Their memory is their heap's growth: the pools are zeroed, so touched.
 */
#define BUILD(NAME, TYPE, CREATE, ADD, FREE)                                   \
	static TYPE *NAME(const void *routes, size_t n, unsigned groups,       \
			  struct result *res)                                  \
	{                                                                      \
		unsigned pool = groups + groups / 8 + 16;                      \
		uint64_t h0;                                                   \
		size_t i;                                                      \
		TYPE *t;                                                       \
		double t0;                                                     \
                                                                               \
		for (;; pool += pool / 4) {                                    \
			h0 = heap_bytes();                                     \
			t = CREATE;                                            \
			if (!t) {                                              \
				fprintf(stderr, #NAME ": %s\n",                \
					rte_strerror(rte_errno));              \
				return NULL;                                   \
			}                                                      \
			t0 = now();                                            \
			for (i = 0; i < n; i++)                                \
				if (ADD)                                       \
					break;                                 \
			if (i == n)                                            \
				break;                                         \
			FREE(t);                                               \
		}                                                              \
		res->load = now() - t0;                                        \
		res->bytes = heap_bytes() - h0;                                \
		res->pool = pool;                                              \
		return t;                                                      \
	}

#define R4(i) (&((const struct r4 *)routes)[i])
#define R6(i) (&((const struct r6 *)routes)[i])

BUILD(build_fib4, struct rte_fib,
      rte_fib_create("fib4", 0,
		     &(struct rte_fib_conf){
			     .type = RTE_FIB_DIR24_8,
			     .max_routes = (int)n + 1,
			     .dir24_8 = {.nh_sz = RTE_FIB_DIR24_8_4B,
					 .num_tbl8 = pool}}),
      rte_fib_add(t, R4(i)->pfx, R4(i)->len, R4(i)->nh), rte_fib_free)
BUILD(build_lpm4, struct rte_lpm,
      rte_lpm_create("lpm4", 0,
		     &(struct rte_lpm_config){.max_rules = (uint32_t)n + 1,
					      .number_tbl8s = pool}),
      rte_lpm_add(t, R4(i)->pfx, R4(i)->len, R4(i)->nh), rte_lpm_free)
BUILD(build_fib6, struct rte_fib6,
      rte_fib6_create("fib6", 0,
		      &(struct rte_fib6_conf){
			      .type = RTE_FIB6_TRIE,
			      .max_routes = (int)n + 1,
			      .trie = {.nh_sz = RTE_FIB6_TRIE_4B,
				       .num_tbl8 = pool}}),
      rte_fib6_add(t, R6(i)->pfx, R6(i)->len, R6(i)->nh), rte_fib6_free)
BUILD(build_lpm6, struct rte_lpm6,
      rte_lpm6_create("lpm6", 0,
		      &(struct rte_lpm6_config){.max_rules = (uint32_t)n + 1,
						.number_tbl8s = pool}),
      rte_lpm6_add(t, R6(i)->pfx, R6(i)->len, R6(i)->nh), rte_lpm6_free)

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * The ratio to ferry is the median over rounds of this round's rate over
 * ferry's in the same round: the passes of a round are milliseconds apart,
 * so load that comes and goes on the shared box touches both alike.
 */
static double paired_ratio(const struct result *r, const struct result *base,
			   unsigned rounds)
{
	double q[MAX_ROUNDS];
	unsigned i;

	for (i = 0; i < rounds; i++)
		q[i] = r->rate[i] / base->rate[i];
	qsort(q, rounds, sizeof(q[0]), cmp_double);
	return rounds % 2 ? q[rounds / 2]
			  : (q[rounds / 2 - 1] + q[rounds / 2]) / 2;
}

static void report(const char *fam, struct result *res, size_t n,
		   unsigned rounds)
{
	size_t i;

	printf("\n%s: lookups per second (best round; ratio: median of the "
	       "rounds' ratios), load time, memory\n",
	       fam);
	printf("  %-8s %14s %9s %7s %8s %9s %8s\n", "", "lookups/s", "vs ferry",
	       "load s", "MiB", "vs ferry", "tbl8s");
	for (i = 0; i < n; i++)
		printf("  %-8s %14.0f %8.2fx %7.2f %8.1f %8.2fx %8u\n",
		       res[i].name, res[i].best,
		       paired_ratio(&res[i], &res[0], rounds), res[i].load,
		       (double)res[i].bytes / (1 << 20),
		       (double)res[i].bytes / (double)res[0].bytes,
		       res[i].pool);
}

/*
 * One pass over the addresses per structure, each its own function with
 * its loop aligned alike: with the three loops inlined into one function,
 * where the compiler happened to place them moved each by up to 25%
 * between builds that changed nothing in them.
 */
#define PASS __attribute__((noinline, aligned(64), optimize("align-loops=64")))

static PASS uint64_t pass_ferry4(const struct fib_dp *dp, const uint32_t *addr)
{
	uint32_t nh[BURST];
	uint64_t sink = 0;
	size_t i;

	for (i = 0; i < N_ADDR; i += BURST) {
		fib4_lookup_bulk(dp, addr + i, nh, BURST);
		sink += nh[BURST - 1];
	}
	return sink;
}

static PASS uint64_t pass_rte_fib(struct rte_fib *f, uint32_t *addr)
{
	uint64_t nh[BURST], sink = 0;
	size_t i;

	for (i = 0; i < N_ADDR; i += BURST) {
		rte_fib_lookup_bulk(f, addr + i, nh, BURST);
		sink += nh[BURST - 1];
	}
	return sink;
}

static PASS uint64_t pass_rte_lpm(const struct rte_lpm *l, const uint32_t *addr)
{
	uint32_t nh[BURST];
	uint64_t sink = 0;
	size_t i;

	for (i = 0; i < N_ADDR; i += BURST) {
		rte_lpm_lookup_bulk(l, addr + i, nh, BURST);
		sink += nh[BURST - 1];
	}
	return sink;
}

static PASS uint64_t pass_ferry6(const struct fib_dp *dp, uint8_t (*addr)[16])
{
	uint32_t nh[BURST];
	uint64_t sink = 0;
	size_t i;

	for (i = 0; i < N_ADDR; i += BURST) {
		fib6_lookup_bulk(dp, (const uint8_t(*)[16])(addr + i), nh,
				 BURST);
		sink += nh[BURST - 1];
	}
	return sink;
}

static PASS uint64_t pass_rte_fib6(struct rte_fib6 *f, uint8_t (*addr)[16])
{
	uint64_t nh[BURST], sink = 0;
	size_t i;

	for (i = 0; i < N_ADDR; i += BURST) {
		rte_fib6_lookup_bulk(f, addr + i, nh, BURST);
		sink += nh[BURST - 1];
	}
	return sink;
}

static PASS uint64_t pass_rte_lpm6(struct rte_lpm6 *l, uint8_t (*addr)[16])
{
	int32_t nh[BURST];
	uint64_t sink = 0;
	size_t i;

	for (i = 0; i < N_ADDR; i += BURST) {
		rte_lpm6_lookup_bulk_func(l, addr + i, nh, BURST);
		sink += (uint64_t)nh[BURST - 1];
	}
	return sink;
}

/* Next hops 1..N_NH-1, in order: the routes name them by number. */
static int alloc_nhs(struct fib *f)
{
	size_t i;

	for (i = 1; i < N_NH; i++) {
		struct fib_nh_info in = {.port = (uint16_t)(i & 0x3ff)};

		if (fib_nh_alloc(f, &in) != (int)i)
			return -EINVAL;
	}
	return 0;
}

/* One timed pass of round rd, started at t0: its rate and the best. */
static void note_rate(struct result *r, unsigned rd, double t0)
{
	double t = N_ADDR / (now() - t0);

	r->rate[rd] = t;
	if (t > r->best)
		r->best = t;
}

static int bench_v4(size_t n, unsigned rounds)
{
	struct r4 *r = calloc(n, sizeof(*r));
	uint32_t *addr = malloc(N_ADDR * sizeof(uint32_t));
	uint32_t *want = malloc(N_ADDR * sizeof(uint32_t));
	uint32_t nh32[BURST];
	uint64_t nh64[BURST], sink = 0;
	struct result res[3] = {
		{.name = "ferry"}, {.name = "rte_fib"}, {.name = "rte_lpm"}};
	struct fib *f = fib_create(NULL);
	struct fib_stats st;
	struct rte_fib *rf;
	struct rte_lpm *rl;
	const struct fib_dp *dp;
	size_t i, k;
	unsigned rd, s;
	double t;

	if (!r || !addr || !want || !f)
		return -ENOMEM;
	dp = fib_dp(f);
	if (alloc_nhs(f))
		return -EINVAL;
	gen_v4(r, n);
	t = now();
	for (i = 0; i < n; i++)
		if (fib4_add(f, r[i].pfx, r[i].len, r[i].nh))
			return -ENOSPC;
	res[0].load = now() - t;
	fib_stats(f, &st);
	res[0].bytes = st.v4_bytes;
	res[0].pool = st.v4_groups_used;
	printf("IPv4: %zu prefixes generated, %" PRIu64
	       " distinct, %u tbl8 groups\n",
	       n, st.v4_routes, st.v4_groups_used);

	rf = build_fib4(r, n, st.v4_groups_used, &res[1]);
	rl = build_lpm4(r, n, st.v4_groups_used, &res[2]);
	if (!rf || !rl)
		return -ENOMEM;

	for (i = 0; i < N_ADDR; i++) {
		const struct r4 *x = &r[rnd() % n];
		uint32_t host = x->len == 32 ? 0 : rnd() & (~0u >> x->len);

		addr[i] = x->pfx | host;
		want[i] = fib4_lookup(dp, addr[i]);
	}
	/* every structure agrees with ferry on every address */
	for (i = 0; i < N_ADDR; i += BURST) {
		rte_fib_lookup_bulk(rf, addr + i, nh64, BURST);
		rte_lpm_lookup_bulk(rl, addr + i, nh32, BURST);
		for (k = 0; k < BURST; k++)
			if (nh64[k] != want[i + k] ||
			    (nh32[k] & 0xffffff) != want[i + k]) {
				fprintf(stderr,
					"IPv4 mismatch at %08x: ferry %u "
					"rte_fib %" PRIu64 " rte_lpm %u\n",
					addr[i + k], want[i + k], nh64[k],
					nh32[k] & 0xffffff);
				return -EPROTO;
			}
	}
	/* rounds interleave the structures, so the box's load hits all */
	for (rd = 0; rd < rounds; rd++)
		for (s = 0; s < 3; s++) {
			t = now();
			sink += s == 0	 ? pass_ferry4(dp, addr)
				: s == 1 ? pass_rte_fib(rf, addr)
					 : pass_rte_lpm(rl, addr);
			note_rate(&res[s], rd, t);
		}
	report("IPv4", res, 3, rounds);
	rte_fib_free(rf);
	rte_lpm_free(rl);
	fib_destroy(f);
	free(r);
	free(addr);
	free(want);
	return sink == 1 ? 1 : 0;
}

static int bench_v6(size_t n, unsigned rounds)
{
	struct r6 *r = calloc(n, sizeof(*r));
	uint8_t(*addr)[16] = malloc(N_ADDR * 16ul);
	uint32_t *want = malloc(N_ADDR * sizeof(uint32_t));
	int32_t nhi[BURST];
	uint64_t nh64[BURST], sink = 0;
	struct result res[3] = {
		{.name = "ferry"}, {.name = "rte_fib6"}, {.name = "rte_lpm6"}};
	struct fib *f = fib_create(NULL);
	struct fib_stats st;
	struct rte_fib6 *rf;
	struct rte_lpm6 *rl;
	const struct fib_dp *dp;
	size_t i, k, j;
	unsigned rd, s;
	double t;

	if (!r || !addr || !want || !f)
		return -ENOMEM;
	dp = fib_dp(f);
	if (alloc_nhs(f))
		return -EINVAL;
	gen_v6(r, n);
	t = now();
	for (i = 0; i < n; i++)
		if (fib6_add(f, r[i].pfx, r[i].len, r[i].nh))
			return -ENOSPC;
	res[0].load = now() - t;
	fib_stats(f, &st);
	res[0].bytes = st.v6_bytes;
	res[0].pool = st.v6_groups_used;
	printf("\nIPv6: %zu prefixes generated, %" PRIu64
	       " distinct, %u tbl8 groups\n",
	       n, st.v6_routes, st.v6_groups_used);

	rf = build_fib6(r, n, st.v6_groups_used, &res[1]);
	rl = build_lpm6(r, n, st.v6_groups_used, &res[2]);
	if (!rf || !rl)
		return -ENOMEM;

	for (i = 0; i < N_ADDR; i++) {
		const struct r6 *x = &r[rnd() % n];

		memcpy(addr[i], x->pfx, 16);
		for (j = x->len / 8; j < 16; j++) {
			uint8_t hm = j == x->len / 8
					     ? (uint8_t)(0xff >> (x->len % 8))
					     : 0xff;

			addr[i][j] |= (uint8_t)rnd() & hm;
		}
		want[i] = fib6_lookup(dp, addr[i]);
	}
	for (i = 0; i < N_ADDR; i += BURST) {
		rte_fib6_lookup_bulk(rf, addr + i, nh64, BURST);
		rte_lpm6_lookup_bulk_func(rl, addr + i, nhi, BURST);
		for (k = 0; k < BURST; k++)
			if (nh64[k] != want[i + k] ||
			    (uint32_t)(nhi[k] < 0 ? 0 : nhi[k]) !=
				    want[i + k]) {
				fprintf(stderr,
					"IPv6 mismatch: ferry %u rte_fib6 "
					"%" PRIu64 " rte_lpm6 %d\n",
					want[i + k], nh64[k], nhi[k]);
				return -EPROTO;
			}
	}
	for (rd = 0; rd < rounds; rd++)
		for (s = 0; s < 3; s++) {
			t = now();
			sink += s == 0	 ? pass_ferry6(dp, addr)
				: s == 1 ? pass_rte_fib6(rf, addr)
					 : pass_rte_lpm6(rl, addr);
			note_rate(&res[s], rd, t);
		}
	report("IPv6", res, 3, rounds);
	rte_fib6_free(rf);
	rte_lpm6_free(rl);
	fib_destroy(f);
	free(r);
	free(addr);
	free(want);
	return sink == 1 ? 1 : 0;
}

int main(int argc, char **argv)
{
	char *eal[] = {argv[0],
		       "--no-huge",
		       "-m",
		       "4096",
		       "--no-pci",
		       "--no-shconf",
		       "--no-telemetry",
		       "-l",
		       "0",
		       "--log-level=error"};
	size_t n4 = 1000000, n6 = 200000;
	unsigned rounds = 15;
	int opt, err;

	while ((opt = getopt(argc, argv, "4:6:r:s:")) != -1) {
		switch (opt) {
		case '4':
			n4 = strtoul(optarg, NULL, 0);
			break;
		case '6':
			n6 = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			rounds = (unsigned)strtoul(optarg, NULL, 0);
			if (rounds < 1 || rounds > MAX_ROUNDS) {
				fprintf(stderr, "-r: 1 to %d\n", MAX_ROUNDS);
				return 2;
			}
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr,
				"usage: %s [-4 N] [-6 N] [-r ROUNDS] [-s "
				"SEED]\n",
				argv[0]);
			return 2;
		}
	}
	optind = 1; /* EAL parses with getopt too */
	if (rte_eal_init((int)(sizeof(eal) / sizeof(eal[0])), eal) < 0) {
		fprintf(stderr, "rte_eal_init: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	err = n4 ? bench_v4(n4, rounds) : 0;
	if (!err && n6)
		err = bench_v6(n6, rounds);
	rte_eal_cleanup();
	if (err < 0)
		fprintf(stderr, "fib_bench: %s\n", strerror(-err));
	return err < 0;
}
