// SPDX-License-Identifier: BSD-2-Clause
/*
 * tick.c - what the control thread does about once a second (ferry_tick):
 * the watch over every port's interface (port/health.c), the router's
 * timers, and the rates `stats` shows, from timestamped counter deltas.
 */
#include "ferry_int.h"
#include "gen.h"
#include "health.h"
#include "kpath.h"
#include "log.h"
#include "router.h"
#include "util.h"

/* The watch over every port (port/health.h); fails the ports whose
 * interface is gone. */
static void ferry_health_check(struct ferry *f)
{
	char why[128];
	int i;

	/* Handing over (takeover.h): the sockets are closed on purpose and
	 * the successor's program replaces ours; nothing to restore. */
	if (f->ho.released)
		return;
	for (i = 0; i < f->ports.n; i++) {
		struct ferry_port *p = f->ports.v[i];

		if (ferry_port_health(p, f->ifreq_fd, why, sizeof(why)) ==
		    FERRY_HEALTH_GONE)
			ferry_port_fail(f, p, why);
	}
}

static double rate(uint64_t now, uint64_t *prev, double dt)
{
	double r = dt > 0 ? (double)(now - *prev) / dt : 0;

	*prev = now;
	return r;
}

void ferry_tick(struct ferry *f)
{
	uint64_t t = ferry_now_ns();
	double dt = (double)(t - f->last_tick_ns) / 1e9;
	int i;
	uint32_t q;

	ferry_health_check(f);
	if (f->router)
		ferry_router_tick(f->router);
	f->last_tick_ns = t;
	for (i = 0; i < f->ports.n; i++) {
		struct ferry_port *p = f->ports.v[i];

		for (q = 0; q < p->n_queues; q++) {
			struct ferry_pq *pq = &p->pq[q];

			pq->rx_pps = rate(ferry_ctr_read(&pq->c.rx_packets),
					  &pq->prev_rx, dt);
			pq->tx_pps = rate(ferry_ctr_read(&pq->c.tx_packets),
					  &pq->prev_tx, dt);
		}
		if (ferry_gen_of(f, p)->gen)
			ferry_gen_of(f, p)->pps =
				rate(ferry_gen_frames(ferry_gen_of(f, p)->gen),
				     &ferry_gen_of(f, p)->prev, dt);
		ferry_kpath_tick(&f->kpath, p, dt);
	}
	for (i = 0; i < f->workers.n; i++) {
		struct ferry_worker *w = f->workers.v[i];
		uint64_t loops = ferry_ctr_read(&w->c.loops);
		uint64_t busy = ferry_ctr_read(&w->c.busy_loops);
		uint64_t dl = loops - w->prev.loops;

		w->busy_share =
			dl ? (double)(busy - w->prev.busy_loops) / (double)dl
			   : 0;
		w->prev.loops = loops;
		w->prev.busy_loops = busy;
		w->rx_pps = rate(ferry_ctr_read(&w->c.rx_packets),
				 &w->prev.rx_packets, dt);
	}
}
