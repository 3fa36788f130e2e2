// SPDX-License-Identifier: BSD-2-Clause
/*
 * worker_view.c - see worker_view.h. Counter names come from the X-macro
 * lists in counters.h and worker.h, nowhere else.
 */
#include <stdio.h>
#include <string.h>

#include "prom.h"
#include "worker_view.h"

/* ---------------------------------------------------- counter structs */

static uint64_t u64_of(const json_t *o, const char *name)
{
	return (uint64_t)json_integer_value(json_object_get(o, name));
}

#define CTR_PUT(ctr)                                                           \
	json_object_set_new(o, #ctr, json_integer((json_int_t)c->ctr));
#define CTR_GET(ctr) c->ctr = u64_of(o, #ctr);

json_t *ferry_queue_ctrs_put(json_t *o, const struct ferry_queue_ctrs *c)
{
	json_t *d;

	if (!o)
		return NULL;
	d = json_object();
	FERRY_QUEUE_COUNTERS(CTR_PUT)
#define DROP_PUT(ctr)                                                          \
	json_object_set_new(d, #ctr, json_integer((json_int_t)c->drop.ctr));
	FERRY_DROP_REASONS(DROP_PUT)
#undef DROP_PUT
	json_object_set_new(o, "drop_reasons", d);
	return o;
}

void ferry_queue_ctrs_get(const json_t *o, struct ferry_queue_ctrs *c)
{
	const json_t *d = json_object_get(o, "drop_reasons");

	FERRY_QUEUE_COUNTERS(CTR_GET)
#define DROP_GET(ctr) c->drop.ctr = u64_of(d, #ctr);
	FERRY_DROP_REASONS(DROP_GET)
#undef DROP_GET
}

json_t *ferry_xsk_ctrs_put(json_t *o, const struct ferry_xsk_ctrs *c)
{
	if (!o)
		return NULL;
	FERRY_XSK_COUNTERS(CTR_PUT)
	return o;
}

void ferry_xsk_ctrs_get(const json_t *o,
			struct ferry_xsk_ctrs *c){FERRY_XSK_COUNTERS(CTR_GET)}

json_t *ferry_worker_ctrs_put(json_t *o, const struct ferry_worker_ctrs *c)
{
	if (!o)
		return NULL;
	FERRY_WORKER_COUNTERS(CTR_PUT)
	return o;
}

void ferry_worker_ctrs_get(const json_t *o, struct ferry_worker_ctrs *c)
{
	FERRY_WORKER_COUNTERS(CTR_GET)
}

#undef CTR_PUT
#undef CTR_GET

/* ------------------------------------------------------------ queues */

void ferry_q_view_get(const struct ferry_pq *pq,
		      const struct ferry_xsk_ctrs *now, struct ferry_q_view *v)
{
	memset(v, 0, sizeof(*v));
#define Q_READ(ctr) v->c.ctr = ferry_ctr_read(&pq->c.ctr) - pq->base.ctr;
	FERRY_QUEUE_COUNTERS(Q_READ)
#undef Q_READ
#define D_READ(ctr)                                                            \
	v->c.drop.ctr = ferry_ctr_read(&pq->c.drop.ctr) - pq->base.drop.ctr;   \
	v->drops += v->c.drop.ctr;
	FERRY_DROP_REASONS(D_READ)
#undef D_READ
	if (now) {
#define X_READ(ctr) v->x.ctr = now->ctr - pq->xbase.ctr;
		FERRY_XSK_COUNTERS(X_READ)
#undef X_READ
	}
}

void ferry_q_view_add(struct ferry_q_view *sum, const struct ferry_q_view *v)
{
#define Q_ADD(ctr) sum->c.ctr += v->c.ctr;
	FERRY_QUEUE_COUNTERS(Q_ADD)
#undef Q_ADD
#define D_ADD(ctr) sum->c.drop.ctr += v->c.drop.ctr;
	FERRY_DROP_REASONS(D_ADD)
#undef D_ADD
#define X_ADD(ctr) sum->x.ctr += v->x.ctr;
	FERRY_XSK_COUNTERS(X_ADD)
#undef X_ADD
	sum->drops += v->drops;
}

json_t *ferry_q_view_json(const struct ferry_q_view *v, double rx_pps,
			  double tx_pps)
{
	json_t *o = json_object();

	ferry_queue_ctrs_put(o, &v->c);
	ferry_xsk_ctrs_put(o, &v->x);
	json_object_set_new(o, "drops", json_integer((json_int_t)v->drops));
	json_object_set_new(o, "rx_pps", json_real(rx_pps));
	json_object_set_new(o, "tx_pps", json_real(tx_pps));
	json_object_set_new(o, "kicks_per_packet",
			    json_real(v->c.tx_packets
					      ? (double)v->c.tx_kicks /
							(double)v->c.tx_packets
					      : 0.0));
	return o;
}

/* ----------------------------------------------------------- workers */

json_t *ferry_worker_stats_json(const struct ferry_worker *w)
{
	json_t *o = json_object();
	struct ferry_worker_ctrs d;

	json_object_set_new(o, "id", json_integer(w->id));
	json_object_set_new(o, "cpu", json_integer(w->cpu));
#define W_READ(ctr) d.ctr = ferry_ctr_read(&w->c.ctr) - w->base.ctr;
	FERRY_WORKER_COUNTERS(W_READ)
#undef W_READ
	ferry_worker_ctrs_put(o, &d);
	json_object_set_new(o, "rx_pps", json_real(w->rx_pps));
	json_object_set_new(o, "busy_share", json_real(w->busy_share));
	json_object_set_new(o, "sockets", json_integer(w->n_pq));
	json_object_set_new(
		o, "idle",
		json_string(w->idle == FERRY_IDLE_POLL ? "poll" : "busy"));
	return o;
}

static json_t *queue_names(struct ferry_pq *const *pq, uint32_t n,
			   const char *(*pq_name)(const struct ferry_pq *))
{
	json_t *socks = json_array();
	uint32_t j;

	for (j = 0; j < n; j++) {
		char s[64];

		snprintf(s, sizeof(s), "%s/%u", pq_name(pq[j]), pq[j]->queue);
		json_array_append_new(socks, json_string(s));
	}
	return socks;
}

/* The bind mode of each UMEM the worker holds: two when it serves
 * zero-copy and copy-mode ports (frames crossing are copied). */
static json_t *umem_modes(const struct ferry_worker *w)
{
	const struct ferry_umem *u[2] = {w->umem, w->umem2};
	json_t *a = json_array();
	int k;

	for (k = 0; k < 2; k++)
		if (u[k])
			json_array_append_new(
				a, json_string(u[k]->reg_fd < 0 ? "unbound"
					       : u[k]->zerocopy ? "zc"
								: "copy"));
	return a;
}

json_t *ferry_worker_show_json(struct ferry_worker *w,
			       const char *(*pq_name)(const struct ferry_pq *))
{
	json_t *o = json_object();
	struct ferry_umem_acct ua;

	json_object_set_new(o, "id", json_integer(w->id));
	json_object_set_new(o, "cpu", json_integer(w->cpu));
	json_object_set_new(
		o, "idle",
		json_string(w->idle == FERRY_IDLE_POLL ? "poll" : "busy"));
	json_object_set_new(o, "sockets", queue_names(w->pq, w->n_pq, pq_name));
	json_object_set_new(o, "dpdk_queues",
			    queue_names(w->dq, w->n_dq, pq_name));
	ferry_worker_umem_acct(w, &ua);
	json_object_set_new(o, "umem_frames", json_integer(ua.frames));
	json_object_set_new(o, "umem_free", json_integer(ua.free));
	json_object_set_new(o, "umem_in_rings", json_integer(ua.in_rings));
	/* Held by the kernel between rings, or leaked: 0 when idle. */
	json_object_set_new(o, "umem_elsewhere", json_integer(ua.elsewhere));
	json_object_set_new(o, "umem_consistent", json_boolean(ua.consistent));
	json_object_set_new(o, "umem_closed",
			    json_integer((json_int_t)w->umem_closed));
	json_object_set_new(o, "umem_frames_lost",
			    json_integer((json_int_t)w->umem_frames_lost));
	json_object_set_new(o, "umem",
			    json_string(!w->umem	     ? "none"
					: w->umem->hugepages ? "hugepages"
							     : "pages"));
	json_object_set_new(o, "umem_modes", umem_modes(w));
	return o;
}

void ferry_worker_metrics(const struct ferry_workers *ws,
			  struct ferry_strbuf *b)
{
	struct ferry_worker *const *w = ws->v;
	int i, n = ws->n;

#define W_FAMILY(ctr)                                                          \
	ferry_prom_family(b, "ferry_worker_" #ctr "_total",                    \
			  "per-worker counter " #ctr);                         \
	for (i = 0; i < n; i++)                                                \
		ferry_strbuf_printf(                                           \
			b,                                                     \
			"ferry_worker_" #ctr                                   \
			"_total{worker=\"%d\",cpu=\"%d\"} %llu\n",             \
			w[i]->id, w[i]->cpu,                                   \
			(unsigned long long)(ferry_ctr_read(&w[i]->c.ctr) -    \
					     w[i]->base.ctr));
	FERRY_WORKER_COUNTERS(W_FAMILY)
#undef W_FAMILY
}
