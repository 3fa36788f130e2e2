// SPDX-License-Identifier: BSD-2-Clause
/*
 * report.c - what the control socket shows: ports, workers, counters with
 * rates, Prometheus text and, as typed values, what was configured. Counter names come
 * from the X-macro lists in counters.h and ferry_abi.h, nowhere else.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ferry_int.h"
#include "kpath.h"
#include "log.h"
#include "router.h"
#include "spread.h"
#include "steer.h"
#include "wire.h"

static const char *const reason_names[] = {
#define REASON_NAME(id, name) [FERRY_R_##id] = name,
	FERRY_REASONS(REASON_NAME)
#undef REASON_NAME
};

static const char *const port_state_names[] = {
#define PORT_STATE_NAME(id, name) [FERRY_PORT_##id] = name,
	FERRY_PORT_STATES(PORT_STATE_NAME)
#undef PORT_STATE_NAME
};

static const char *mode_name(bool zc)
{
	return zc ? "zc" : "copy";
}

static const char *const mode_req_names[] = {
	[FERRY_XSK_AUTO] = "auto",
	[FERRY_XSK_ZC] = "zc",
	[FERRY_XSK_COPY] = "copy",
};

/* ---------------------------------------------------------- port show */

static json_t *port_json(const struct ferry_port *p)
{
	json_t *o = json_object(), *workers = json_array();
	json_t *warnings = json_array();
	char app[64], mac[18], hf[48];
	uint64_t seen = 0;
	uint32_t i;

	for (i = 0; i < p->n_queues; i++) {
		const struct ferry_worker *w = p->pq[i].w;

		if (w && !(seen & (1ull << w->id))) {
			seen |= 1ull << w->id;
			json_array_append_new(workers, json_integer(w->id));
		}
	}
	if (p->numa_warning[0])
		json_array_append_new(warnings, json_string(p->numa_warning));
	if (p->app == FERRY_APP_XCONNECT)
		snprintf(app, sizeof(app), "xconnect %s", p->peer->name);
	else
		snprintf(app, sizeof(app), "%s", ferry_app_name(p->app));
	snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", p->mac[0],
		 p->mac[1], p->mac[2], p->mac[3], p->mac[4], p->mac[5]);
	json_object_set_new(o, "name", json_string(p->name));
	json_object_set_new(o, "state",
			    json_string(port_state_names[p->state]));
	json_object_set_new(o, "reason", json_string(p->reason));
	json_object_set_new(o, "ifname", json_string(p->ifname));
	json_object_set_new(o, "ifindex", json_integer(p->ifindex));
	json_object_set_new(o, "mtu", json_integer(p->mtu));
	json_object_set_new(o, "mac", json_string(mac));
	json_object_set_new(o, "driver", json_string(p->driver));
	json_object_set_new(o, "profile", json_string(p->profile->driver));
	json_object_set_new(o, "driver_caps", ferry_driver_caps_json(&p->caps));
	json_object_set_new(
		o, "xdp_chosen_by",
		json_string(!p->req.xdp_given ? "profile" : "request"));
	json_object_set_new(o, "queue_first", json_integer(p->q_first));
	json_object_set_new(o, "queues", json_integer(p->n_queues));
	json_object_set_new(o, "mode", json_string(mode_name(p->zerocopy)));
	json_object_set_new(o, "mode_requested",
			    json_string(mode_req_names[p->req.mode]));
	json_object_set_new(o, "xdp",
			    json_string(p->xdp_generic ? "generic" : "native"));
	json_object_set_new(o, "prog_id", json_integer(p->prog_id));
	json_object_set_new(o, "umem",
			    json_string(p->hugepages ? "hugepages" : "pages"));
	json_object_set_new(o, "numa_node", json_integer(p->numa_node));
	if (p->req.spread_cpus)
		json_object_set_new(o, "spread", ferry_spread_show(p));
	json_object_set_new(o, "tx_budget",
			    json_string(p->zerocopy ? "driver"
					: p->tx_budget_set
						? "256"
						: "32 (kernel default)"));
	json_object_set_new(o, "need_wakeup", json_true());
	json_object_set_new(o, "busy_poll", json_boolean(p->req.busy_poll));
	json_object_set_new(o, "app", json_string(app));
	if (p->app == FERRY_APP_XCONNECT || p->app == FERRY_APP_ROUTE) {
		json_object_set_new(
			o, "path",
			json_string(ferry_path_name(p->path == FERRY_PATH_KERNEL
							    ? FERRY_PATH_KERNEL
							    : FERRY_PATH_XSK)));
		json_object_set_new(o, "path_requested",
				    json_string(ferry_path_name(p->path_req)));
		json_object_set_new(o, "path_why", json_string(p->path_why));
	}
	json_object_set_new(o, "default",
			    json_string(p->default_action == FERRY_ACT_PASS
						? "pass"
						: "xsk"));
	json_object_set_new(o, "steer_rules",
			    json_integer(p->steer ? p->steer->n : 0));
	json_object_set_new(
		o, "host_frames",
		json_string(ferry_port_host_frames(p, p->steer && p->steer->n,
						   hf, sizeof(hf))));
	json_object_set_new(o, "cpumap_enqueue_drops_measured",
			    json_boolean(p->cpumap_tp != NULL));
	json_object_set_new(o, "workers", workers);
	json_object_set_new(o, "warnings", warnings);
	json_object_set_new(o, "took_over_stale_program",
			    json_boolean(p->replaced_stale));
	json_object_set_new(o, "backend",
			    json_string(p->dpdk ? "dpdk" : "native"));
	ferry_dpdk_port_describe(p, o);
	json_object_set_new(o, "xdp_restore", json_boolean(p->req.xdp_restore));
	{
		json_t *ev = json_object();

#define EV_SET(ctr)                                                            \
	json_object_set_new(ev, #ctr, json_integer((json_int_t)p->events.ctr));
		FERRY_PORT_EVENTS(EV_SET)
#undef EV_SET
		json_object_set_new(o, "events", ev);
	}
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
			json_array_append_new(arr, port_json(f->ports.v[i]));
	return arr;
}

/* ------------------------------------------------------------- stats */

/* Everything one queue reports, reset offsets applied. */
struct q_view {
	struct ferry_queue_ctrs c;
	struct ferry_xsk_ctrs x;
	uint64_t drops;
};

static void q_view_get(const struct ferry_pq *pq, struct q_view *v)
{
	struct ferry_xsk_ctrs now = {0};

	memset(v, 0, sizeof(*v));
#define Q_READ(ctr) v->c.ctr = ferry_ctr_read(&pq->c.ctr) - pq->base.ctr;
	FERRY_QUEUE_COUNTERS(Q_READ)
#undef Q_READ
#define D_READ(ctr)                                                            \
	v->c.drop.ctr = ferry_ctr_read(&pq->c.drop.ctr) - pq->base.drop.ctr;   \
	v->drops += v->c.drop.ctr;
	FERRY_DROP_REASONS(D_READ)
#undef D_READ
	if (pq->xsk ? !ferry_xsk_stats(pq->xsk, &now)
		    : !ferry_dpdk_xsk_stats(pq, &now)) {
#define X_READ(ctr) v->x.ctr = now.ctr - pq->xbase.ctr;
		FERRY_XSK_COUNTERS(X_READ)
#undef X_READ
	}
}

static void q_view_add(struct q_view *sum, const struct q_view *v)
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

static json_t *q_view_json(const struct q_view *v, double rx_pps, double tx_pps)
{
	json_t *o = json_object(), *d = json_object();

#define Q_SET(ctr)                                                             \
	json_object_set_new(o, #ctr, json_integer((json_int_t)v->c.ctr));
	FERRY_QUEUE_COUNTERS(Q_SET)
#undef Q_SET
#define X_SET(ctr)                                                             \
	json_object_set_new(o, #ctr, json_integer((json_int_t)v->x.ctr));
	FERRY_XSK_COUNTERS(X_SET)
#undef X_SET
#define D_SET(ctr)                                                             \
	json_object_set_new(d, #ctr, json_integer((json_int_t)v->c.drop.ctr));
	FERRY_DROP_REASONS(D_SET)
#undef D_SET
	json_object_set_new(o, "drops", json_integer((json_int_t)v->drops));
	json_object_set_new(o, "drop_reasons", d);
	json_object_set_new(o, "rx_pps", json_real(rx_pps));
	json_object_set_new(o, "tx_pps", json_real(tx_pps));
	json_object_set_new(o, "kicks_per_packet",
			    json_real(v->c.tx_packets
					      ? (double)v->c.tx_kicks /
							(double)v->c.tx_packets
					      : 0.0));
	return o;
}

/*
 * Frames by path: xsk (the workers' counters, in sum) and kernel (the
 * classifier's DEVMAP redirects, p as ingress for rx and as egress for
 * tx), with the kernel path's failures by reason. The kernel path is
 * added to sum, so the totals count every frame whichever way it went.
 */
static json_t *paths_json(struct ferry *f, struct ferry_port *p,
			  struct q_view *sum)
{
	json_t *o = json_object(), *x = json_object(), *k = json_object();
	struct ferry_kpath_ctrs kc;
	uint64_t tx_pk, tx_by;

	ferry_kpath_stats(&f->ports, p, &kc, &tx_pk, &tx_by);
	json_object_set_new(x, "rx_packets",
			    json_integer((json_int_t)sum->c.rx_packets));
	json_object_set_new(x, "rx_bytes",
			    json_integer((json_int_t)sum->c.rx_bytes));
	json_object_set_new(x, "tx_packets",
			    json_integer((json_int_t)sum->c.tx_packets));
	json_object_set_new(x, "tx_bytes",
			    json_integer((json_int_t)sum->c.tx_bytes));
	json_object_set_new(k, "rx_packets",
			    json_integer((json_int_t)kc.rx_packets));
	json_object_set_new(k, "rx_bytes",
			    json_integer((json_int_t)kc.rx_bytes));
	json_object_set_new(k, "tx_packets", json_integer((json_int_t)tx_pk));
	json_object_set_new(k, "tx_bytes", json_integer((json_int_t)tx_by));
	/* Of p's own redirects (p as ingress): what did not go out. */
#define K_SET(id) json_object_set_new(k, #id, json_integer((json_int_t)kc.id));
	FERRY_KFWD_CTRS(K_SET)
#undef K_SET
	json_object_set_new(
		k, "xdp_redirect_err",
		json_integer((json_int_t)(kc.err_down + kc.err_too_big +
					  kc.err_other)));
	ferry_kpath_fib_json(p, k);
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
	struct q_view sum, v;
	double rx_pps = 0, tx_pps = 0;
	uint64_t malformed = 0;
	uint32_t i, r;

	memset(&sum, 0, sizeof(sum));
	for (i = 0; i < p->n_queues; i++) {
		struct ferry_pq *pq = &p->pq[i];
		json_t *q;

		q_view_get(pq, &v);
		q_view_add(&sum, &v);
		rx_pps += pq->rx_pps;
		tx_pps += pq->tx_pps;
		q = q_view_json(&v, pq->rx_pps, pq->tx_pps);
		json_object_set_new(q, "queue", json_integer(pq->queue));
		json_object_set_new(q, "worker",
				    json_integer(pq->w ? pq->w->id : -1));
		json_array_append_new(qs, q);
	}
	if (!ferry_port_verdicts(p, f->verdict_scratch)) {
		for (r = 0; r < FERRY_R__COUNT; r++) {
			uint64_t n = f->verdict_scratch[r] - p->verdict_base[r];

			json_object_set_new(xdp, reason_names[r],
					    json_integer((json_int_t)n));
			if (r >= FERRY_R_FIRST_MALFORMED)
				malformed += n;
		}
	}
	json_object_set_new(o, "paths", paths_json(f, p, &sum));
	if (p->kacct) {
		rx_pps += p->kacct->rx_pps;
		tx_pps += p->kacct->tx_pps;
	}
	json_object_set_new(o, "name", json_string(p->name));
	json_object_set_new(o, "ifname", json_string(p->ifname));
	json_object_set_new(o, "totals", q_view_json(&sum, rx_pps, tx_pps));
	json_object_set_new(o, "queues", qs);
	json_object_set_new(o, "xdp", xdp);
	json_object_set_new(o, "xdp_malformed",
			    json_integer((json_int_t)malformed));
	return o;
}

static json_t *worker_stats_json(const struct ferry_worker *w)
{
	json_t *o = json_object();

	json_object_set_new(o, "id", json_integer(w->id));
	json_object_set_new(o, "cpu", json_integer(w->cpu));
#define W_SET(ctr)                                                             \
	json_object_set_new(                                                   \
		o, #ctr,                                                       \
		json_integer((json_int_t)(ferry_ctr_read(&w->c.ctr) -          \
					  w->base.ctr)));
	FERRY_WORKER_COUNTERS(W_SET)
#undef W_SET
	json_object_set_new(o, "rx_pps", json_real(w->rx_pps));
	json_object_set_new(o, "busy_share", json_real(w->busy_share));
	json_object_set_new(o, "sockets", json_integer(w->n_pq));
	json_object_set_new(
		o, "idle",
		json_string(w->idle == FERRY_IDLE_POLL ? "poll" : "busy"));
	return o;
}

static json_t *gen_json(const struct ferry_port *p)
{
	const struct ferry_gen_params *gp = ferry_gen_params(p->gen);
	json_t *o = json_object();

	json_object_set_new(o, "port", json_string(p->name));
	json_object_set_new(o, "running",
			    json_boolean(ferry_gen_running(p->gen)));
	json_object_set_new(o, "frames",
			    json_integer((json_int_t)ferry_gen_frames(p->gen)));
	json_object_set_new(o, "pps", json_real(p->gen_pps));
	json_object_set_new(o, "engine",
			    json_string(ferry_gen_engine_name(p->gen)));
	json_object_set_new(o, "rate", json_integer((json_int_t)gp->rate));
	json_object_set_new(o, "size", json_integer(gp->size));
	json_object_set_new(o, "flows", json_integer(gp->flows));
	json_object_set_new(o, "count", json_integer((json_int_t)gp->count));
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
		ferry_kpath_ledger(p, &l.kpath);
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
		if (p->gen)
			json_array_append_new(gens, gen_json(p));
	}
	for (i = 0; i < f->workers.n && !port; i++)
		if (worker < 0 || worker == i)
			json_array_append_new(
				workers, worker_stats_json(f->workers.v[i]));
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
		ferry_steer_reset(p);
		ferry_kpath_reset(&f->ports, p);
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

json_t *ferry_worker_show(struct ferry *f)
{
	json_t *arr = json_array();
	int i;

	for (i = 0; i < f->workers.n; i++) {
		struct ferry_worker *w = f->workers.v[i];
		json_t *o = json_object(), *socks = json_array();
		uint32_t j;

		for (j = 0; j < w->n_pq; j++) {
			char s[64];

			snprintf(s, sizeof(s), "%s/%u", w->pq[j]->port->name,
				 w->pq[j]->queue);
			json_array_append_new(socks, json_string(s));
		}
		json_object_set_new(o, "id", json_integer(w->id));
		json_object_set_new(o, "cpu", json_integer(w->cpu));
		json_object_set_new(o, "idle",
				    json_string(w->idle == FERRY_IDLE_POLL
							? "poll"
							: "busy"));
		json_object_set_new(o, "sockets", socks);
		socks = json_array();
		for (j = 0; j < w->n_dq; j++) {
			char s[64];

			snprintf(s, sizeof(s), "%s/%u", w->dq[j]->port->name,
				 w->dq[j]->queue);
			json_array_append_new(socks, json_string(s));
		}
		json_object_set_new(o, "dpdk_queues", socks);
		struct ferry_umem_acct ua;

		ferry_worker_umem_acct(w, &ua);
		json_object_set_new(o, "umem_frames", json_integer(ua.frames));
		json_object_set_new(o, "umem_free", json_integer(ua.free));
		json_object_set_new(o, "umem_in_rings",
				    json_integer(ua.in_rings));
		/* Held by the kernel between rings, or leaked: 0 when idle. */
		json_object_set_new(o, "umem_elsewhere",
				    json_integer(ua.elsewhere));
		json_object_set_new(o, "umem_consistent",
				    json_boolean(ua.consistent));
		json_object_set_new(o, "umem_closed",
				    json_integer((json_int_t)w->umem_closed));
		json_object_set_new(
			o, "umem_frames_lost",
			json_integer((json_int_t)w->umem_frames_lost));
		json_object_set_new(o, "umem",
				    json_string(!w->umem ? "none"
						: w->umem->hugepages
							? "hugepages"
							: "pages"));
		json_array_append_new(arr, o);
	}
	return arr;
}

/* ----------------------------------------------------- metrics, config */

struct sbuf {
	char *s;
	size_t len, cap;
};

__attribute__((format(printf, 2, 3))) static void
sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	size_t cap;
	char *s;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL,
			      b->s ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if (b->s && b->len + (size_t)n < b->cap) {
			b->len += (size_t)n;
			return;
		}
		/* On failure the text so far stays; the caller sees a short
		 * exposition rather than losing (and leaking) the buffer. */
		cap = (b->cap + (size_t)n + 1) * 2;
		s = realloc(b->s, cap);
		if (!s)
			return;
		b->s = s;
		b->cap = cap;
	}
}

/* One metric family: HELP and TYPE once, then its samples together. */
/* A queue's labels; a spread port's sockets share a queue, so they are
 * told apart by worker. */
static const char *q_labels(char *buf, size_t len, const struct ferry_port *p,
			    uint32_t q)
{
	const struct ferry_pq *pq = &p->pq[q];

	if (p->spread_n && pq->w)
		snprintf(buf, len, "port=\"%s\",queue=\"%u\",worker=\"%d\"",
			 p->name, pq->queue, pq->w->id);
	else
		snprintf(buf, len, "port=\"%s\",queue=\"%u\"", p->name,
			 pq->queue);
	return buf;
}

static void family(struct sbuf *b, const char *name, const char *help)
{
	sb_printf(b, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
}

/* One rule counter per (port, rule, CPU); `field` names the member. */
#define STEER_FAMILIES(X)                                                      \
	X(steered, "frames a steering rule sent into a CPU's CPUMAP queue")    \
	X(processed, "steered frames that reached their target CPU")           \
	X(redirect_failed, "steered frames dropped: no CPUMAP entry")

static void steer_metrics(struct ferry *f, struct sbuf *b)
{
	struct ferry_steer_cpu_view v[FERRY_MAX_CPUS];
	struct ferry_cpumap_ctr cm[FERRY_MAX_CPUS];
	int i;
	uint32_t j, cpu;

#define STEER_FAMILY(field, help)                                              \
	family(b, "ferry_steer_" #field "_total", help);                       \
	for (i = 0; i < f->ports.n; i++) {                                     \
		const struct ferry_port *p = f->ports.v[i];                    \
		for (j = 0; p->steer && j < p->steer->n; j++) {                \
			const struct ferry_steer_rule *r =                     \
				&p->steer->rules[j];                           \
			ferry_steer_read(p, r, v);                             \
			for (cpu = 0; cpu < FERRY_MAX_CPUS; cpu++)             \
				if (r->cpus & (1ull << cpu))                   \
					sb_printf(b,                           \
						  "ferry_steer_" #field        \
						  "_total{port=\"%s\","        \
						  "rule=\"%s\",cpu=\"%u\"} "   \
						  "%llu\n",                    \
						  p->name, r->name, cpu,       \
						  (unsigned long long)v[cpu]   \
							  .field);             \
		}                                                              \
	}
	STEER_FAMILIES(STEER_FAMILY)
#undef STEER_FAMILY

	family(b, "ferry_cpumap_enqueue_drops_total",
	       "frames a full CPUMAP queue refused, per port and target CPU "
	       "(the kernel reports no rule)");
	for (i = 0; i < f->ports.n; i++) {
		const struct ferry_port *p = f->ports.v[i];

		if (!p->steer || ferry_steer_cpumap_read(p, cm))
			continue;
		for (cpu = 0; cpu < FERRY_MAX_CPUS; cpu++)
			if (p->steer->cpumap_qsize[cpu] || cm[cpu].drops)
				sb_printf(b,
					  "ferry_cpumap_enqueue_drops_total{"
					  "port=\"%s\",cpu=\"%u\"} %llu\n",
					  p->name, cpu,
					  (unsigned long long)cm[cpu].drops);
	}
}

/* The kernel path's counters per port (stats' paths.kernel). */
static void kpath_metrics(struct ferry *f, struct sbuf *b)
{
	struct ferry_kpath_ctrs *kc;
	uint64_t *tx;
	int i;

	kc = calloc(f->ports.n ? f->ports.n : 1, sizeof(*kc));
	tx = calloc(f->ports.n ? 2 * f->ports.n : 2, sizeof(*tx));
	if (!kc || !tx)
		goto out;
	for (i = 0; i < f->ports.n; i++)
		ferry_kpath_stats(&f->ports, f->ports.v[i], &kc[i], &tx[2 * i],
				  &tx[2 * i + 1]);
#define KP_FAMILY(nm, help, expr)                                              \
	family(b, "ferry_kpath_" nm "_total", help);                           \
	for (i = 0; i < f->ports.n; i++)                                       \
		sb_printf(b, "ferry_kpath_" nm "_total{port=\"%s\"} %llu\n",   \
			  f->ports.v[i]->name, (unsigned long long)(expr));
	KP_FAMILY("rx_packets",
		  "frames the classifier redirected in the kernel",
		  kc[i].rx_packets)
	KP_FAMILY("rx_bytes", "bytes the classifier redirected in the kernel",
		  kc[i].rx_bytes)
	KP_FAMILY("tx_packets",
		  "frames sent out of the port by the kernel path", tx[2 * i])
	KP_FAMILY("tx_bytes", "bytes sent out of the port by the kernel path",
		  tx[2 * i + 1])
#define KP_CTR(id)                                                             \
	KP_FAMILY(#id, "kernel-path counter " #id " of the port as ingress",   \
		  kc[i].id)
	FERRY_KFWD_CTRS(KP_CTR)
#undef KP_CTR
#undef KP_FAMILY
	/* The route kernel path: what stayed in XDP, and why the rest went
	 * to a worker (stats: paths.kernel.fib). */
	family(b, "ferry_kpath_fib_total",
	       "route ports' kernel path: frames forwarded in XDP (fwd) or "
	       "left to a worker, by reason");
	for (i = 0; i < f->ports.n; i++) {
		struct ferry_fib_ctr fc;

		if (ferry_kpath_fib_read(f->ports.v[i], &fc))
			continue;
#define KP_FIB(id)                                                             \
	sb_printf(b,                                                           \
		  "ferry_kpath_fib_total{port=\"%s\",reason=\"" #id            \
		  "\"} %llu\n",                                                \
		  f->ports.v[i]->name, (unsigned long long)fc.id);
		FERRY_FIB_CTRS(KP_FIB)
#undef KP_FIB
	}
out:
	free(kc);
	free(tx);
}

char *ferry_metrics(struct ferry *f)
{
	struct sbuf b = {0};
	struct q_view *v;
	char lb[128];
	size_t n = 0, k;
	int i;
	uint32_t q, r;

	/* Read every queue once; the families below walk the snapshot. */
	for (i = 0; i < f->ports.n; i++)
		n += f->ports.v[i]->n_queues;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return NULL;
	for (i = 0, k = 0; i < f->ports.n; i++)
		for (q = 0; q < f->ports.v[i]->n_queues; q++)
			q_view_get(&f->ports.v[i]->pq[q], &v[k++]);

#define Q_FAMILY(ctr, field, help)                                             \
	family(&b, "ferry_queue_" #ctr "_total", help);                        \
	for (i = 0, k = 0; i < f->ports.n; i++)                                \
		for (q = 0; q < f->ports.v[i]->n_queues; q++, k++)             \
			sb_printf(&b, "ferry_queue_" #ctr "_total{%s} %llu\n", \
				  q_labels(lb, sizeof(lb), f->ports.v[i], q),  \
				  (unsigned long long)v[k].field.ctr);
#define Q_FERRY(ctr) Q_FAMILY(ctr, c, "ferry's per-queue counter " #ctr)
#define Q_KERNEL(ctr)                                                          \
	Q_FAMILY(ctr, x, "the kernel's XDP_STATISTICS " #ctr " for the socket")
	FERRY_QUEUE_COUNTERS(Q_FERRY)
	FERRY_XSK_COUNTERS(Q_KERNEL)
#undef Q_KERNEL
#undef Q_FERRY
#undef Q_FAMILY

	family(&b, "ferry_queue_drops_total",
	       "frames ferry dropped in userspace, by reason");
#define D_LINE(ctr)                                                            \
	sb_printf(&b,                                                          \
		  "ferry_queue_drops_total{%s,reason=\"" #ctr "\"} %llu\n",    \
		  q_labels(lb, sizeof(lb), f->ports.v[i], q),                  \
		  (unsigned long long)v[k].c.drop.ctr);
	for (i = 0, k = 0; i < f->ports.n; i++)
		for (q = 0; q < f->ports.v[i]->n_queues; q++, k++) {
			FERRY_DROP_REASONS(D_LINE)
		}
#undef D_LINE
	free(v);

	family(&b, "ferry_xdp_verdicts_total",
	       "frames the XDP classifier saw, by verdict reason");
	for (i = 0; i < f->ports.n; i++) {
		struct ferry_port *p = f->ports.v[i];

		if (ferry_port_verdicts(p, f->verdict_scratch))
			continue;
		for (r = 0; r < FERRY_R__COUNT; r++)
			sb_printf(&b,
				  "ferry_xdp_verdicts_total{port=\"%s\",reason="
				  "\"%s\"} %llu\n",
				  p->name, reason_names[r],
				  (unsigned long long)(f->verdict_scratch[r] -
						       p->verdict_base[r]));
	}

	steer_metrics(f, &b);
	kpath_metrics(f, &b);

#define W_FAMILY(ctr)                                                          \
	family(&b, "ferry_worker_" #ctr "_total", "per-worker counter " #ctr); \
	for (i = 0; i < f->workers.n; i++)                                     \
		sb_printf(&b,                                                  \
			  "ferry_worker_" #ctr                                 \
			  "_total{worker=\"%d\",cpu=\"%d\"} %llu\n",           \
			  f->workers.v[i]->id, f->workers.v[i]->cpu,           \
			  (unsigned long long)(ferry_ctr_read(                 \
						       &f->workers.v[i]        \
								->c.ctr) -     \
					       f->workers.v[i]->base.ctr));
	FERRY_WORKER_COUNTERS(W_FAMILY)
#undef W_FAMILY
	return b.s;
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
	/* What the port got, not only what was asked: the queues it opened
	 * and the XDP mode the profile chose, so a replay builds the same. */
	*pp = p->req;
	pp->queues_given = true;
	pp->q_first = p->q_first;
	pp->n_queues = p->req.spread_cpus ? 1 : p->n_queues;
	pp->xdp_generic = p->xdp_generic;
	pp->xdp_given = true;
	return 0;
}

int ferry_port_path_get(const struct ferry *f, int i, enum ferry_path *path)
{
	if (i < 0 || i >= f->ports.n)
		return -ENOENT;
	*path = f->ports.v[i]->path_req;
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
