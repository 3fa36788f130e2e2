/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * worker_view.h - what the workers and their queues show: `stats` rows of
 * a worker and of a queue, the object `worker show` lists, and the
 * Prometheus families of the worker counters. Apart from worker.h so the
 * hot loop's file never sees jansson; read on the control thread.
 */
#ifndef FERRY_WORKER_VIEW_H
#define FERRY_WORKER_VIEW_H

#include <jansson.h>

#include "strbuf.h"
#include "worker.h"

/* Everything one queue reports, reset offsets applied. */
struct ferry_q_view {
	struct ferry_queue_ctrs c;
	struct ferry_xsk_ctrs x;
	uint64_t drops;
};

/* now: the socket's kernel counters as just read, NULL if they could not
 * be (the xsk part stays 0). */
void ferry_q_view_get(const struct ferry_pq *pq,
		      const struct ferry_xsk_ctrs *now, struct ferry_q_view *v);
void ferry_q_view_add(struct ferry_q_view *sum, const struct ferry_q_view *v);
json_t *ferry_q_view_json(const struct ferry_q_view *v, double rx_pps,
			  double tx_pps);

/*
 * Counter structs as members of a JSON object and back, one name per
 * X-macro entry: `stats` shows them, a hot restart hands them over. The
 * queue's drop reasons go in a "drop_reasons" object. _get reads what is
 * there (a missing name reads 0). _put returns o (NULL stays NULL).
 */
json_t *ferry_queue_ctrs_put(json_t *o, const struct ferry_queue_ctrs *c);
void ferry_queue_ctrs_get(const json_t *o, struct ferry_queue_ctrs *c);
json_t *ferry_xsk_ctrs_put(json_t *o, const struct ferry_xsk_ctrs *c);
void ferry_xsk_ctrs_get(const json_t *o, struct ferry_xsk_ctrs *c);
json_t *ferry_worker_ctrs_put(json_t *o, const struct ferry_worker_ctrs *c);
void ferry_worker_ctrs_get(const json_t *o, struct ferry_worker_ctrs *c);

/* One worker's row of `stats`. */
json_t *ferry_worker_stats_json(const struct ferry_worker *w);
/* One worker's object of `worker show`; pq_name names a socket's port
 * (the port is above this layer). */
json_t *ferry_worker_show_json(struct ferry_worker *w,
			       const char *(*pq_name)(const struct ferry_pq *));
/* The ferry_worker_*_total families of every worker. */
void ferry_worker_metrics(const struct ferry_workers *ws,
			  struct ferry_strbuf *b);

#endif
