// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_fill_share.c - each fill ring of a UMEM holds at most its share
 * (worker.c, fill shares): with more sockets than the UMEM fills whole,
 * idle queues keep frames a busy queue would find missing from the pool.
 * The test plays the kernel's side of each ring (fake_xsk.h) with rings
 * of 1024 slots on a UMEM of 2048 frames: two rings filled whole would
 * hold every frame.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define FAKE_RING 1024
#include "fake_xsk.h"

#define FRAMES 2048
#define N_SOCK 4

struct rig {
	struct ferry_worker *w;
	struct ferry_umem *u;
	struct fake_xsk s[N_SOCK];
	struct ferry_pq pq[N_SOCK];
};

static int rig_setup(void **state)
{
	struct rig *r = calloc(1, sizeof(*r));
	int i;

	assert_non_null(r);
	r->w = fake_worker_create(FRAMES);
	assert_non_null(r->w);
	r->u = r->w->umem;
	for (i = 0; i < N_SOCK; i++) {
		fake_xsk_init(&r->s[i], r->u, i);
		r->pq[i].xsk = &r->s[i].x;
		r->pq[i].w = r->w;
		r->pq[i].app = FERRY_APP_DROP;
	}
	*state = r;
	return 0;
}

static int rig_teardown(void **state)
{
	struct rig *r = *state;

	fake_worker_destroy(r->w);
	free(r);
	return 0;
}

static uint32_t in_fill(const struct fake_xsk *s)
{
	return s->fq.producer - s->fq.consumer;
}

static void add_all(struct rig *r)
{
	int i;

	for (i = 0; i < N_SOCK; i++)
		r->w->pq[r->w->n_pq++] = &r->pq[i];
	ferry_worker_fill_expect(r->w, 0); /* the shares, for all four */
}

/* Half the UMEM over four rings: 256 each, the other half in the pool. */
static void test_equal_parts_of_half(void **state)
{
	struct rig *r = *state;
	int i;

	add_all(r);
	ferry_worker_poll_once(r->w);
	for (i = 0; i < N_SOCK; i++) {
		assert_int_equal(ferry_worker_fill_share(&r->pq[i]), 256);
		assert_int_equal(in_fill(&r->s[i]), 256);
	}
	assert_int_equal(r->u->n_free, FRAMES - N_SOCK * 256);
}

/* The last queue is the busy one: it gets its frames back every loop,
 * while the idle ones hold no more than their part. */
static void test_busy_queue_refilled(void **state)
{
	struct rig *r = *state;
	int k, i;

	add_all(r);
	ferry_worker_poll_once(r->w);
	for (k = 0; k < 20; k++) {
		assert_int_equal(fake_kernel_rx(&r->s[3], 200, 60), 200);
		ferry_worker_poll_once(r->w);
		assert_int_equal(in_fill(&r->s[3]), 256);
	}
	for (i = 0; i < 3; i++)
		assert_int_equal(in_fill(&r->s[i]), 256);
	assert_int_equal(r->u->n_free, FRAMES - N_SOCK * 256);
}

/* Sockets announced count from the first: the first ring added does not
 * take the part of the three still to come. */
static void test_expected_sockets_count(void **state)
{
	struct rig *r = *state;

	ferry_worker_fill_expect(r->w, 4); /* a port's four queues */
	r->w->pq[r->w->n_pq++] = &r->pq[0];
	ferry_worker_fill_expect(r->w, 3); /* the first added (pq_add) */
	ferry_worker_poll_once(r->w);
	assert_int_equal(in_fill(&r->s[0]), 256);
	/* Alone for good: the whole ring (half the UMEM is more). */
	ferry_worker_fill_expect(r->w, 0);
	assert_int_equal(ferry_worker_fill_share(&r->pq[0]), FAKE_RING);
	ferry_worker_poll_once(r->w);
	assert_int_equal(in_fill(&r->s[0]), FAKE_RING);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_equal_parts_of_half,
						rig_setup, rig_teardown),
		cmocka_unit_test_setup_teardown(test_busy_queue_refilled,
						rig_setup, rig_teardown),
		cmocka_unit_test_setup_teardown(test_expected_sockets_count,
						rig_setup, rig_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
