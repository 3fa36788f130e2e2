// SPDX-License-Identifier: BSD-2-Clause
/* gen.c - the live-frames generator thread. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ferry_abi.h"
#include "ferry_gen.skel.h"
#include "gen.h"
#include "log.h"
#include "worker.h"

#ifndef BPF_F_TEST_XDP_LIVE_FRAMES
#define BPF_F_TEST_XDP_LIVE_FRAMES (1U << 1)
#endif

/*
 * Program runs per BPF_PROG_RUN call. Each call costs tens of milliseconds
 * of setup (page pool, RCU), so calls are long; pacing and the frame count
 * are enforced inside the program (see bpf/ferry_gen.bpf.c), so a long call
 * never sends more than asked. Stopping waits for the call in flight:
 * about 0.25 s at most (1M runs at ~4M runs/s).
 */
#define GEN_CALL_RUNS  (1u << 20)
#define GEN_BATCH_SIZE 64 /* frames per redirect flush inside a call */

struct ferry_gen {
	struct ferry_gen_params p;
	enum ferry_gen_engine engine; /* LIVE or XSK: what we got */
	struct ferry_gen_bpf *skel;   /* live */
	struct ferry_txgen *txgen;    /* xsk */
	uint8_t frame[FERRY_GEN_MAX_SIZE];
	pthread_t thread;
	int stop;    /* atomic */
	int running; /* atomic */
	int err;     /* first error of the thread, -errno */
	bool joined;
};

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Ethernet header bytes: 14, 18 with an 802.1Q tag. */
static uint32_t gen_l2_len(const struct ferry_gen_params *p)
{
	return p->vid ? 18 : 14;
}

/* Builds the template into f (at least p->size bytes). */
static void ferry_gen_build_frame(const struct ferry_gen_params *p, uint8_t *f)
{
	uint32_t l2 = gen_l2_len(p);
	uint8_t *ip = f + l2, *udp = ip + 20;
	uint32_t sum = 0, i;

	memcpy(f, p->dst_mac, 6);
	memcpy(f + 6, p->src_mac, 6);
	if (p->vid) {
		put16(f + 12, 0x8100);
		put16(f + 14, p->vid);
	}
	put16(ip - 2, 0x0800);
	ip[0] = 0x45;
	ip[1] = 0;
	put16(ip + 2, (uint16_t)(p->size - l2));
	put16(ip + 4, 0);      /* id */
	put16(ip + 6, 0x4000); /* DF */
	ip[8] = 64;
	ip[9] = 17;
	put16(ip + 10, 0);
	/* 198.18.0.1 -> 198.18.0.2: the benchmarking range (RFC 2544). */
	memcpy(ip + 12, (uint8_t[]){198, 18, 0, 1}, 4);
	memcpy(ip + 16, (uint8_t[]){198, 18, 0, 2}, 4);
	for (i = 0; i < 20; i += 2)
		sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	put16(ip + 10, csum_fold(sum));
	put16(udp, FERRY_GEN_SPORT_BASE);
	put16(udp + 2, FERRY_GEN_DPORT);
	put16(udp + 4, (uint16_t)(p->size - l2 - 20));
	put16(udp + 6, 0); /* no checksum: lets the program vary the port */
	for (i = 0; i < p->size - l2 - 28; i++)
		udp[8 + i] = (uint8_t)i;
}

static void *gen_main(void *arg)
{
	struct ferry_gen *g = arg;
	int prog_fd = bpf_program__fd(g->skel->progs.ferry_gen);
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = g->frame,
		    .data_size_in = g->p.size,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES,
		    .batch_size = GEN_BATCH_SIZE, .repeat = GEN_CALL_RUNS);

	while (!__atomic_load_n(&g->stop, __ATOMIC_ACQUIRE)) {
		if (g->p.count && g->skel->bss->sent >= g->p.count)
			break;
		if (bpf_prog_test_run_opts(prog_fd, &opts)) {
			g->err = -errno;
			log_err("gen: BPF_PROG_RUN live frames: %s",
				strerror(errno));
			break;
		}
	}
	__atomic_store_n(&g->running, 0, __ATOMIC_RELEASE);
	return NULL;
}

_Static_assert(FERRY_GEN_MAX_SIZE <= sizeof(((struct ferry_txgen *)0)->frame),
	       "the xsk engine's template must hold the largest frame");

static void gen_free(struct ferry_gen *g)
{
	if (!g)
		return;
	ferry_gen_bpf__destroy(g->skel);
	free(g->txgen);
	free(g);
}

__attribute__((format(printf, 3, 4))) static struct ferry_gen *
fail(struct ferry_gen *g, struct ferry_err *msg, const char *fmt, ...)
{
	va_list ap;
	int err = errno;

	va_start(ap, fmt);
	ferry_verrf(msg, fmt, ap);
	va_end(ap);
	gen_free(g);
	errno = err ? err : EINVAL;
	return NULL;
}

/* Does this kernel run XDP programs on live frames? Sends nothing. */
static int probe_live_frames(struct ferry_gen *g)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = g->frame,
		    .data_size_in = g->p.size,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .repeat = 1);

	if (bpf_prog_test_run_opts(
		    bpf_program__fd(g->skel->progs.ferry_gen_probe), &opts))
		return -errno;
	return 0;
}

static int live_load(struct ferry_gen *g)
{
	int err;

	g->skel = ferry_gen_bpf__open();
	if (!g->skel)
		return -errno;
	g->skel->rodata->ifindex_out = (uint32_t)g->p.ifindex;
	g->skel->rodata->sport_base = FERRY_GEN_SPORT_BASE;
	g->skel->rodata->n_flows = (uint16_t)g->p.flows;
	g->skel->rodata->udp_off = (uint16_t)(gen_l2_len(&g->p) + 20);
	g->skel->rodata->hdr_words = (uint16_t)((gen_l2_len(&g->p) + 28) / 2);
	memcpy((void *)g->skel->rodata->hdr, g->frame, gen_l2_len(&g->p) + 28);
	g->skel->rodata->interval_ns =
		g->p.rate ? 1000000000ull / g->p.rate : 0;
	g->skel->rodata->max_frames = g->p.count;
	err = ferry_gen_bpf__load(g->skel);
	if (!err)
		err = probe_live_frames(g);
	if (err) {
		ferry_gen_bpf__destroy(g->skel);
		g->skel = NULL;
	}
	return err;
}

static int live_start(struct ferry_gen *g)
{
	pthread_attr_t attr;
	cpu_set_t set;
	int err;

	g->running = 1;
	pthread_attr_init(&attr);
	if (g->p.cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(g->p.cpu, &set);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
	err = pthread_create(&g->thread, &attr, gen_main, g);
	pthread_attr_destroy(&attr);
	if (err)
		return -err;
	pthread_setname_np(g->thread, "ferry-gen");
	return 0;
}

/* The xsk engine: the port's worker sends from its TX ring. */
static int xsk_start(struct ferry_gen *g)
{
	struct ferry_pq *pq = g->p.pq;
	struct ferry_txgen *t;

	if (!pq || !pq->xsk || !pq->w)
		return -ENODEV;
	/* A chain needs a socket bound with XDP_USE_SG. */
	if (g->p.size > FERRY_FRAME_SIZE && !pq->xsk->multibuf)
		return -EMSGSIZE;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->interval_ns = g->p.rate ? 1000000000ull / g->p.rate : 0;
	t->count = g->p.count;
	t->flows = g->p.flows;
	t->size = g->p.size;
	t->sport_base = FERRY_GEN_SPORT_BASE;
	t->sport_off = gen_l2_len(&g->p) + 20;
	memcpy(t->frame, g->frame, g->p.size);
	g->txgen = t;
	ferry_worker_pause(pq->w);
	pq->txgen = t;
	ferry_worker_resume(pq->w);
	return 0;
}

struct ferry_gen *ferry_gen_start(const struct ferry_gen_params *p,
				  struct ferry_err *msg)
{
	struct ferry_gen *g;
	int err = -EOPNOTSUPP;

	if (p->size < FERRY_GEN_MIN_SIZE || p->size > FERRY_GEN_MAX_SIZE) {
		errno = EINVAL;
		return fail(NULL, msg, "size must be %d..%d bytes",
			    FERRY_GEN_MIN_SIZE, FERRY_GEN_MAX_SIZE);
	}
	if (p->vid > 4094 || (p->vid && p->size < FERRY_GEN_MIN_SIZE + 4)) {
		errno = EINVAL;
		return fail(NULL, msg,
			    "vlan must be 1..4094, with a size of %d bytes or "
			    "more",
			    FERRY_GEN_MIN_SIZE + 4);
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return fail(NULL, msg, "out of memory");
	g->p = *p;
	if (!g->p.flows)
		g->p.flows = 1;
	ferry_gen_build_frame(&g->p, g->frame);

	if (p->size > FERRY_GEN_LIVE_MAX_SIZE) {
		if (p->engine == FERRY_GEN_LIVE) {
			errno = EINVAL;
			return fail(g, msg,
				    "engine live sends frames up to %d bytes "
				    "(its test-run page); use 'engine xsk' "
				    "or 'engine auto'",
				    FERRY_GEN_LIVE_MAX_SIZE);
		}
		log_info("gen: %u-byte frames: sending from the worker's "
			 "AF_XDP TX ring (live frames hold at most %d bytes)",
			 p->size, FERRY_GEN_LIVE_MAX_SIZE);
	} else if (p->engine != FERRY_GEN_XSK) {
		err = live_load(g);
		if (err && p->engine == FERRY_GEN_LIVE) {
			errno = -err;
			return fail(g, msg,
				    "BPF_PROG_RUN live frames unavailable "
				    "(%s); use 'engine xsk'",
				    strerror(-err));
		}
		if (err)
			log_warn("gen: live frames unavailable (%s); sending "
				 "from the worker's AF_XDP TX ring instead",
				 strerror(-err));
	}
	if (!err) {
		g->engine = FERRY_GEN_LIVE;
		err = live_start(g);
	} else {
		g->engine = FERRY_GEN_XSK;
		err = xsk_start(g);
	}
	if (err) {
		errno = -err;
		return fail(g, msg, "cannot start the generator: %s",
			    strerror(-err));
	}
	return g;
}

void ferry_gen_stop(struct ferry_gen *g)
{
	struct ferry_pq *pq;

	if (!g || g->joined)
		return;
	g->joined = true;
	if (g->engine == FERRY_GEN_LIVE) {
		__atomic_store_n(&g->stop, 1, __ATOMIC_RELEASE);
		pthread_join(g->thread, NULL);
		return;
	}
	pq = g->p.pq;
	ferry_worker_pause(pq->w);
	pq->txgen = NULL;
	ferry_worker_resume(pq->w);
}

void ferry_gen_destroy(struct ferry_gen *g)
{
	ferry_gen_stop(g);
	gen_free(g);
}

bool ferry_gen_running(const struct ferry_gen *g)
{
	if (g->engine == FERRY_GEN_XSK)
		return !g->joined &&
		       (!g->txgen->count ||
			__atomic_load_n(&g->txgen->sent, __ATOMIC_RELAXED) <
				g->txgen->count);
	return __atomic_load_n(&g->running, __ATOMIC_ACQUIRE);
}

uint64_t ferry_gen_frames(const struct ferry_gen *g)
{
	int ncpu = libbpf_num_possible_cpus(), c;
	struct ferry_gen_ctr *vals;
	uint32_t key = 0;
	uint64_t n = 0;

	if (g->engine == FERRY_GEN_XSK)
		return __atomic_load_n(&g->txgen->sent, __ATOMIC_RELAXED);
	if (ncpu <= 0)
		return 0;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	if (!vals)
		return 0;
	if (!bpf_map_lookup_elem(bpf_map__fd(g->skel->maps.gen_ctrs), &key,
				 vals))
		for (c = 0; c < ncpu; c++)
			n += vals[c].frames;
	free(vals);
	return n;
}

const struct ferry_gen_params *ferry_gen_params(const struct ferry_gen *g)
{
	return &g->p;
}

const char *ferry_gen_engine_name(const struct ferry_gen *g)
{
	return g->engine == FERRY_GEN_XSK ? "xsk" : "live";
}
