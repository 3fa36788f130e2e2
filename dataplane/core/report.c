// SPDX-License-Identifier: BSD-2-Clause
/*
 * report.c - what the control socket shows, composed: the ports and
 * workers walked and each module's rows asked for (port_view.c,
 * worker_view.c, kpath_view.c, steer_view.c, gen_view.c render their own),
 * the rows that are the daemon's alone (the queues with their backend's
 * kernel counters, the XDP verdicts, the ledger, `stats` itself and its
 * reset), and, as typed values, what was configured. Counter names come
 * from the X-macro lists in counters.h and ferry_abi.h, nowhere else.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ferry_int.h"
#include "kpath.h"
#include "log.h"
#include "router.h"
#include "steer.h"
#include "port_view.h"
#include "prom.h"
#include "worker_view.h"

static const char *const reason_names[] = {
#define REASON_NAME(id, name) [FERRY_R_##id] = name,
	FERRY_REASONS(REASON_NAME)
#undef REASON_NAME
};

/* ---------------------------------------------------------- port show */

static json_t *port_json(struct ferry *f, const struct ferry_port *p)
{
	json_t *o = json_object();
	char app[64];

	if (p->app == FERRY_APP_XCONNECT)
		snprintf(app, sizeof(app), "xconnect %s", p->peer->name);
	else
		snprintf(app, sizeof(app), "%s", ferry_app_name(p->app));
	ferry_port_view(
		p, &f->spread, app,
		f->rules.table[p->slot] ? f->rules.table[p->slot]->n : 0, o);
	ferry_kpath_port_view(&f->kpath, p, o);
	if (f->router && p->app == FERRY_APP_ROUTE)
		ferry_router_port_view(f->router, p, o);
	ferry_dpdk_port_describe(f->dpdk, p, o);
	ferry_port_view_tail(p, o);
	return o;
}

json_t *ferry_port_show(struct ferry *f, const char *name,
			struct ferry_err *msg)
{
	json_t *arr;
	int i;

	if (name && !ferry_port_find(f, name)) {
		ferry_errf(msg, "no port %s", name);
		return NULL;
	}
	arr = json_array();
	for (i = 0; i < f->ports.n; i++)
		if (!name || !strcmp(name, f->ports.v[i]->name))
			json_array_append_new(arr, port_json(f, f->ports.v[i]));
	return arr;
}

/* ------------------------------------------------------------- stats */

/* A queue's view: its kernel counters read through its backend. */
static void q_view_get(const struct ferry_pq *pq, struct ferry_q_view *v)
{
	struct ferry_xsk_ctrs now = {0};
	bool ok = pq->xsk ? !ferry_xsk_stats(pq->xsk, &now)
			  : !ferry_dpdk_xsk_stats(pq, &now);

	ferry_q_view_get(pq, ok ? &now : NULL, v);
}

uint64_t ferry_port_drops(struct ferry *f, struct ferry_port *p)
{
	struct ferry_kpath_ctrs kc = {0};
	struct ferry_q_view v;
	uint64_t pk, by, n = 0;
	uint32_t i;

	for (i = 0; i < p->n_queues; i++) {
		q_view_get(&p->pq[i], &v);
		n += v.x.rx_dropped + v.x.rx_ring_full + v.drops;
	}
	ferry_kpath_stats(&f->kpath, p, &kc, &pk, &by);
	return n + kc.err_down + kc.err_too_big + kc.err_other + kc.xmit_drops;
}

/*
 * Frames by path: xsk (the workers' counters, in sum) and kernel (the
 * classifier's DEVMAP redirects, p as ingress for rx and as egress for
 * tx), with the kernel path's failures by reason. The kernel path is
 * added to sum, so the totals count every frame whichever way it went.
 */
static json_t *paths_json(struct ferry *f, struct ferry_port *p,
			  struct ferry_q_view *sum)
{
	json_t *o = json_object(), *x = json_object();
	struct ferry_kpath_ctrs kc;
	uint64_t tx_pk, tx_by;
	json_t *k = ferry_kpath_stats_json(&f->kpath, p, &kc, &tx_pk, &tx_by);

	json_object_set_new(x, "rx_packets",
			    json_integer((json_int_t)sum->c.rx_packets));
	json_object_set_new(x, "rx_bytes",
			    json_integer((json_int_t)sum->c.rx_bytes));
	json_object_set_new(x, "tx_packets",
			    json_integer((json_int_t)sum->c.tx_packets));
	json_object_set_new(x, "tx_bytes",
			    json_integer((json_int_t)sum->c.tx_bytes));
	json_object_set_new(o, "xsk", x);
	json_object_set_new(o, "kernel", k);
	sum->c.rx_packets += kc.rx_packets;
	sum->c.rx_bytes += kc.rx_bytes;
	sum->c.tx_packets += tx_pk;
	sum->c.tx_bytes += tx_by;
	/* Received here, not sent: drops of this port, like the workers'. */
	sum->drops +=
		kc.err_down + kc.err_too_big + kc.err_other + kc.xmit_drops;
	return o;
}

static json_t *port_stats_json(struct ferry *f, struct ferry_port *p)
{
	json_t *o = json_object(), *qs = json_array(), *xdp = json_object();
	struct ferry_q_view sum, v;
	double rx_pps = 0, tx_pps = 0;
	uint64_t malformed = 0;
	uint32_t i, r;

	memset(&sum, 0, sizeof(sum));
	for (i = 0; i < p->n_queues; i++) {
		struct ferry_pq *pq = &p->pq[i];
		json_t *q;

		q_view_get(pq, &v);
		ferry_q_view_add(&sum, &v);
		rx_pps += pq->rx_pps;
		tx_pps += pq->tx_pps;
		q = ferry_q_view_json(&v, pq->rx_pps, pq->tx_pps);
		json_object_set_new(q, "queue", json_integer(pq->queue));
		json_object_set_new(q, "worker",
				    json_integer(pq->w ? pq->w->id : -1));
		/* The most frames its fill ring holds (its UMEM's share). */
		if (pq->xsk && !pq->foreign)
			json_object_set_new(
				q, "fill_share",
				json_integer(ferry_worker_fill_share(pq)));
		json_array_append_new(qs, q);
	}
	if (!ferry_port_verdicts(p, f->verdict_scratch)) {
		for (r = 0; r < FERRY_R__COUNT; r++) {
			uint64_t n = f->verdict_scratch[r] - p->verdict_base[r];

			json_object_set_new(xdp, reason_names[r],
					    json_integer((json_int_t)n));
			if (FERRY_R_IS_MALFORMED(r))
				malformed += n;
		}
	}
	json_object_set_new(o, "paths", paths_json(f, p, &sum));
	if (kp(&f->kpath, p)->acct) {
		rx_pps += kp(&f->kpath, p)->acct->rx_pps;
		tx_pps += kp(&f->kpath, p)->acct->tx_pps;
	}
	json_object_set_new(o, "name", json_string(p->name));
	json_object_set_new(o, "ifname", json_string(p->ifname));
	json_object_set_new(o, "totals",
			    ferry_q_view_json(&sum, rx_pps, tx_pps));
	json_object_set_new(o, "queues", qs);
	json_object_set_new(o, "xdp", xdp);
	json_object_set_new(o, "xdp_malformed",
			    json_integer((json_int_t)malformed));
	return o;
}

/* Counters since ferryd started: retired ports plus live ones, raw. */
static json_t *ledger_json(struct ferry *f)
{
	struct ferry_ledger l = f->retired;
	json_t *o = json_object(), *d = json_object(), *xdp = json_object();
	uint64_t drops = 0;
	uint32_t q, r;
	int i;

	for (i = 0; i < f->ports.n; i++) {
		struct ferry_port *p = f->ports.v[i];

		if (p->state == FERRY_PORT_FAILED)
			continue; /* already retired */
		for (q = 0; q < p->n_queues; q++) {
			struct ferry_pq *pq = &p->pq[q];
			struct ferry_xsk_ctrs now;

#define LQ(ctr) l.q.ctr += ferry_ctr_read(&pq->c.ctr);
			FERRY_QUEUE_COUNTERS(LQ)
#undef LQ
#define LD(ctr) l.q.drop.ctr += ferry_ctr_read(&pq->c.drop.ctr);
			FERRY_DROP_REASONS(LD)
#undef LD
			if (pq->xsk && !ferry_xsk_stats(pq->xsk, &now)) {
#define LX(ctr) l.x.ctr += now.ctr - pq->xstart.ctr;
				FERRY_XSK_COUNTERS(LX)
#undef LX
			}
		}
		if (!ferry_port_verdicts(p, f->verdict_scratch))
			for (r = 0; r < FERRY_R__COUNT; r++)
				l.verdicts[r] += f->verdict_scratch[r];
		ferry_kpath_ledger(&f->kpath, p, &l.kpath);
	}
#define LSET(ctr)                                                              \
	json_object_set_new(o, #ctr, json_integer((json_int_t)l.q.ctr));
	FERRY_QUEUE_COUNTERS(LSET)
#undef LSET
#define LXSET(ctr)                                                             \
	json_object_set_new(o, #ctr, json_integer((json_int_t)l.x.ctr));
	FERRY_XSK_COUNTERS(LXSET)
#undef LXSET
#define LDSET(ctr)                                                             \
	json_object_set_new(d, #ctr, json_integer((json_int_t)l.q.drop.ctr));  \
	drops += l.q.drop.ctr;
	FERRY_DROP_REASONS(LDSET)
#undef LDSET
	for (r = 0; r < FERRY_R__COUNT; r++)
		json_object_set_new(xdp, reason_names[r],
				    json_integer((json_int_t)l.verdicts[r]));
	json_object_set_new(o, "drops", json_integer((json_int_t)drops));
	json_object_set_new(o, "drop_reasons", d);
	json_object_set_new(o, "xdp", xdp);
	/* The kernel path's frames: rx_packets and tx_packets above are the
	 * workers' alone. */
	json_object_set_new(o, "kpath_rx_packets",
			    json_integer((json_int_t)l.kpath.rx));
	json_object_set_new(o, "kpath_tx_packets",
			    json_integer((json_int_t)l.kpath.tx));
	json_object_set_new(o, "kpath_redirect_err",
			    json_integer((json_int_t)l.kpath.err));
	json_object_set_new(o, "kpath_xmit_drops",
			    json_integer((json_int_t)l.kpath.xmit_drops));
	json_object_set_new(o, "ports_retired",
			    json_integer((json_int_t)l.ports_retired));
	json_object_set_new(o, "rx_abandoned",
			    json_integer((json_int_t)l.rx_abandoned));
	json_object_set_new(o, "tx_abandoned",
			    json_integer((json_int_t)l.tx_abandoned));
	for (i = 0; i < f->workers.n; i++) {
		l.umem_closed += f->workers.v[i]->umem_closed;
		l.umem_frames_lost += f->workers.v[i]->umem_frames_lost;
	}
	json_object_set_new(o, "umem_closed",
			    json_integer((json_int_t)l.umem_closed));
	json_object_set_new(o, "umem_frames_lost",
			    json_integer((json_int_t)l.umem_frames_lost));
	return o;
}

json_t *ferry_stats(struct ferry *f, const char *port, int worker,
		    struct ferry_err *msg)
{
	json_t *o, *ports, *workers, *gens;
	int i;

	if (port && !ferry_port_find(f, port)) {
		ferry_errf(msg, "no port %s", port);
		return NULL;
	}
	if (worker >= f->workers.n) {
		ferry_errf(msg, "no worker %d (%d configured)", worker,
			   f->workers.n);
		return NULL;
	}
	o = json_object();
	ports = json_array();
	workers = json_array();
	gens = json_array();
	for (i = 0; i < f->ports.n && worker < 0; i++) {
		struct ferry_port *p = f->ports.v[i];

		if (port && strcmp(port, p->name))
			continue;
		json_array_append_new(ports, port_stats_json(f, p));
		if (ferry_gen_of(f, p)->gen)
			json_array_append_new(
				gens,
				ferry_gen_json(ferry_gen_of(f, p)->gen, p->name,
					       ferry_gen_of(f, p)->pps));
	}
	for (i = 0; i < f->workers.n && !port; i++)
		if (worker < 0 || worker == i)
			json_array_append_new(
				workers,
				ferry_worker_stats_json(f->workers.v[i]));
	json_object_set_new(o, "ports", ports);
	json_object_set_new(o, "workers", workers);
	json_object_set_new(o, "gen", gens);
	if (worker < 0 && !port)
		json_object_set_new(o, "ledger", ledger_json(f));
	if (worker < 0) {
		json_object_set_new(o, "steer",
				    ferry_steer_stats(&f->rules, port));
		json_object_set_new(o, "cpumap",
				    ferry_steer_cpumap_stats(&f->rules, port));
		if (f->router)
			json_object_set_new(o, "route",
					    ferry_router_stats(f->router));
	}
	return o;
}

void ferry_stats_reset(struct ferry *f)
{
	int i;
	uint32_t q;

	for (i = 0; i < f->ports.n; i++) {
		struct ferry_port *p = f->ports.v[i];

		for (q = 0; q < p->n_queues; q++) {
			struct ferry_pq *pq = &p->pq[q];

#define Q_SNAP(ctr) pq->base.ctr = ferry_ctr_read(&pq->c.ctr);
			FERRY_QUEUE_COUNTERS(Q_SNAP)
#undef Q_SNAP
#define D_SNAP(ctr) pq->base.drop.ctr = ferry_ctr_read(&pq->c.drop.ctr);
			FERRY_DROP_REASONS(D_SNAP)
#undef D_SNAP
			if (pq->xsk)
				ferry_xsk_stats(pq->xsk, &pq->xbase);
			else
				ferry_dpdk_xsk_stats(pq, &pq->xbase);
		}
		ferry_port_verdicts(p, p->verdict_base);
		ferry_steer_reset(&f->rules, p);
		ferry_kpath_reset(&f->kpath, p);
	}
	for (i = 0; i < f->workers.n; i++) {
		struct ferry_worker *w = f->workers.v[i];

#define W_SNAP(ctr) w->base.ctr = ferry_ctr_read(&w->c.ctr);
		FERRY_WORKER_COUNTERS(W_SNAP)
#undef W_SNAP
	}
	if (f->router)
		ferry_router_stats_reset(f->router);
}

static const char *pq_port_name(const struct ferry_pq *pq)
{
	return pq->port->name;
}

json_t *ferry_worker_show(struct ferry *f)
{
	json_t *arr = json_array();
	int i;

	for (i = 0; i < f->workers.n; i++)
		json_array_append_new(
			arr,
			ferry_worker_show_json(f->workers.v[i], pq_port_name));
	return arr;
}

/* ----------------------------------------------------- metrics, config */

/* A queue's labels; a spread port's sockets share a queue, so they are
 * told apart by worker. */
static const char *q_labels(char *buf, size_t len, const struct ferry_port *p,
			    uint32_t q)
{
	const struct ferry_pq *pq = &p->pq[q];

	if (ferry_port_spread_n(p) && pq->w)
		snprintf(buf, len, "port=\"%s\",queue=\"%u\",worker=\"%d\"",
			 p->name, pq->queue, pq->w->id);
	else
		snprintf(buf, len, "port=\"%s\",queue=\"%u\"", p->name,
			 pq->queue);
	return buf;
}

char *ferry_metrics(struct ferry *f)
{
	struct ferry_strbuf *b;
	struct ferry_q_view *v;
	char lb[128];
	size_t n = 0, k;
	int i;
	uint32_t q, r;

	/* Read every queue once; the families below walk the snapshot. */
	for (i = 0; i < f->ports.n; i++)
		n += f->ports.v[i]->n_queues;
	v = calloc(n ? n : 1, sizeof(*v));
	b = ferry_strbuf_create();
	if (!v || !b) {
		free(v);
		ferry_strbuf_free(b);
		return NULL;
	}
	for (i = 0, k = 0; i < f->ports.n; i++)
		for (q = 0; q < f->ports.v[i]->n_queues; q++)
			q_view_get(&f->ports.v[i]->pq[q], &v[k++]);

#define Q_FAMILY(ctr, field, help)                                             \
	ferry_prom_family(b, "ferry_queue_" #ctr "_total", help);              \
	for (i = 0, k = 0; i < f->ports.n; i++)                                \
		for (q = 0; q < f->ports.v[i]->n_queues; q++, k++)             \
			ferry_strbuf_printf(                                   \
				b, "ferry_queue_" #ctr "_total{%s} %llu\n",    \
				q_labels(lb, sizeof(lb), f->ports.v[i], q),    \
				(unsigned long long)v[k].field.ctr);
#define Q_FERRY(ctr) Q_FAMILY(ctr, c, "ferry's per-queue counter " #ctr)
#define Q_KERNEL(ctr)                                                          \
	Q_FAMILY(ctr, x, "the kernel's XDP_STATISTICS " #ctr " for the socket")
	FERRY_QUEUE_COUNTERS(Q_FERRY)
	FERRY_XSK_COUNTERS(Q_KERNEL)
#undef Q_KERNEL
#undef Q_FERRY
#undef Q_FAMILY

	ferry_prom_family(b, "ferry_queue_drops_total",
			  "frames ferry dropped in userspace, by reason");
#define D_LINE(ctr)                                                            \
	ferry_strbuf_printf(                                                   \
		b, "ferry_queue_drops_total{%s,reason=\"" #ctr "\"} %llu\n",   \
		q_labels(lb, sizeof(lb), f->ports.v[i], q),                    \
		(unsigned long long)v[k].c.drop.ctr);
	for (i = 0, k = 0; i < f->ports.n; i++)
		for (q = 0; q < f->ports.v[i]->n_queues; q++, k++) {
			FERRY_DROP_REASONS(D_LINE)
		}
#undef D_LINE
	free(v);

	ferry_prom_family(b, "ferry_xdp_verdicts_total",
			  "frames the XDP classifier saw, by verdict reason");
	for (i = 0; i < f->ports.n; i++) {
		struct ferry_port *p = f->ports.v[i];

		if (ferry_port_verdicts(p, f->verdict_scratch))
			continue;
		for (r = 0; r < FERRY_R__COUNT; r++)
			ferry_strbuf_printf(
				b,
				"ferry_xdp_verdicts_total{port=\"%s\",reason="
				"\"%s\"} %llu\n",
				p->name, reason_names[r],
				(unsigned long long)(f->verdict_scratch[r] -
						     p->verdict_base[r]));
	}

	ferry_steer_metrics(&f->rules, b);
	ferry_kpath_metrics(&f->kpath, b);

	ferry_worker_metrics(&f->workers, b);
	return ferry_strbuf_take(b);
}

/* ------------------------------------------- what was configured */

int ferry_workers_get(const struct ferry *f, uint64_t *cpus,
		      enum ferry_idle *idle)
{
	*cpus = f->workers.n ? f->workers.cpumask : 0;
	*idle = f->workers.idle;
	return f->workers.n;
}

int ferry_port_get(const struct ferry *f, int i, struct ferry_port_params *pp)
{
	const struct ferry_port *p;

	if (i < 0 || i >= f->ports.n)
		return -ENOENT;
	p = f->ports.v[i];
	/* What the port got, not only what was asked: the XDP mode the
	 * profile chose, so a replay builds the same. The queues only as
	 * asked: a port given none opens every queue in use again, which is
	 * what it opened. Saving the queues it opened would not replay: the
	 * queues an XDP attach brings into use (virtio_net) do not exist
	 * before it, and a daemon that took a port over under a predecessor's
	 * XDP program sees them from the start. */
	*pp = p->req;
	if (p->req.queues_given || p->req.spread_cpus) {
		pp->queues_given = true;
		pp->q_first = p->q_first;
		pp->n_queues = p->req.spread_cpus ? 1 : p->n_queues;
	}
	pp->xdp_generic = p->xdp_generic;
	pp->xdp_given = true;
	return 0;
}

int ferry_port_path_get(const struct ferry *f, int i, enum ferry_path *path)
{
	if (i < 0 || i >= f->ports.n)
		return -ENOENT;
	*path = ferry_kpath_path_req(&f->kpath, f->ports.v[i]);
	return 0;
}

int ferry_port_app_get(const struct ferry *f, int i, enum ferry_app *app,
		       const char **peer)
{
	const struct ferry_port *p;

	if (i < 0 || i >= f->ports.n)
		return -ENOENT;
	p = f->ports.v[i];
	*app = p->app;
	*peer = p->app == FERRY_APP_XCONNECT && p->peer ? p->peer->name : NULL;
	return 0;
}
