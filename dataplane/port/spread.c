// SPDX-License-Identifier: BSD-2-Clause
/* spread.c - software RSS: one queue, a socket per worker, one shared pool. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "port.h"
#include "ferry_parse.h"
#include "ferry_xdp.skel.h"
#include "log.h"
#include "spread.h"

/* Probe frames per socket; the kernel runs them as one batch per socket. */
#define PROBE_REPEAT	  8
#define PROBE_WAIT_MS	  500
#define PROBE_FRAME_BYTES 60

static const char *const via_names[] = {
#define FERRY_SPREAD_VIA_NAME(id, name) [FERRY_SPREAD_##id] = name,
	FERRY_SPREAD_VIAS(FERRY_SPREAD_VIA_NAME)
#undef FERRY_SPREAD_VIA_NAME
};

const char *ferry_spread_via_name(unsigned int via)
{
	return via < FERRY_SPREAD__COUNT ? via_names[via] : "?";
}

static void spread_workers(const struct ferry_workers *wk,
			   const struct ferry_port *p, struct ferry_worker **ws)
{
	uint32_t i = 0;
	int cpu;

	for (cpu = 0; cpu < FERRY_MAX_CPUS; cpu++)
		if (p->req.spread_cpus & (1ull << cpu))
			ws[i++] = ferry_workers_on_cpu(wk, cpu);
}

/* NULL ones skipped: a daemon that handed its ports over has none. */
static void pause_all(struct ferry_worker **ws, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (ws[i])
			ferry_worker_pause(ws[i]);
}

static void resume_all(struct ferry_worker **ws, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (ws[i])
			ferry_worker_resume(ws[i]);
}

static struct ferry_spread_rets *rets_create(uint32_t n)
{
	size_t size =
		sizeof(struct ferry_spread_rets) + n * sizeof(struct ferry_ret);
	struct ferry_spread_rets *rs;
	uint32_t i;

	rs = aligned_alloc(64, (size + 63) & ~(size_t)63);
	if (!rs)
		return NULL;
	memset(rs, 0, size);
	for (i = 0; i < n; i++) {
		if (ferry_ret_init(&rs->ret[i], FERRY_UMEM_FRAMES)) {
			while (i--)
				ferry_ret_fini(&rs->ret[i]);
			free(rs);
			return NULL;
		}
	}
	rs->n = n;
	return rs;
}

static void rets_destroy(struct ferry_spread_rets *rs)
{
	uint32_t i;

	if (!rs)
		return;
	for (i = 0; i < rs->n; i++)
		ferry_ret_fini(&rs->ret[i]);
	free(rs);
}

/* Sockets out of the XSKMAP and the workers: foreign ones first, so the
 * owner takes back everything they held before its pool goes. */
static void sockets_close(struct ferry_spread_port *sp, struct ferry_port *p,
			  struct ferry_worker **ws)
{
	uint32_t i;

	pause_all(ws, p->n_queues);
	for (i = p->n_queues; i-- > 0;) {
		struct ferry_pq *pq = &p->pq[i];

		if (!pq->xsk)
			continue;
		ferry_port_xsk_remove(p, i);
		ferry_worker_pq_del(pq->w, pq);
	}
	resume_all(ws, p->n_queues);
	rets_destroy(sp->rets);
	sp->rets = NULL;
}

static void spread_close(const struct ferry_port_env *env, struct ferry_port *p)
{
	struct ferry_worker *ws[FERRY_SPREAD_MAX];

	spread_workers(env->workers, p, ws);
	ferry_port_xdp_detach(p);
	sockets_close(&env->spread->port[p->slot], p, ws);
	ferry_port_xdp_unload(p);
}

/* CPUMAP entries for the sockets' CPUs, running the second-stage program. */
static int cpumap_fill(struct ferry_port *p, struct ferry_err *msg)
{
	int fd = bpf_map__fd(p->skel->maps.cpu_map);
	struct bpf_cpumap_val v = {
		.qsize = FERRY_CPUMAP_QSIZE_DEFAULT,
		.bpf_prog.fd = bpf_program__fd(p->skel->progs.ferry_cpumap),
	};
	uint32_t cpu;

	for (cpu = 0; cpu < FERRY_MAX_CPUS; cpu++) {
		if (!(p->req.spread_cpus & (1ull << cpu)))
			continue;
		if (bpf_map_update_elem(fd, &cpu, &v, 0))
			return ferry_fail(msg, -errno,
					  "CPUMAP entry for CPU %u: %s", cpu,
					  strerror(errno));
	}
	return 0;
}

/* A UDP/IPv4 frame to the port's MAC whose flow hashes to socket i. */
static int probe_frame(const struct ferry_port *p, uint32_t i, uint8_t *f)
{
	static const uint8_t head[] = {
		/* Ethernet: dst filled in, src 02:fe:..., IPv4 */
		0, 0, 0, 0, 0, 0, 0x02, 0xfe, 0, 0, 0, 1, 0x08, 0x00,
		/* IPv4: 46 bytes, DF, TTL 64, UDP, 198.18.0.1 -> 198.18.0.2 */
		0x45, 0, 0, 46, 0, 0, 0x40, 0, 64, 17, 0, 0, 198, 18, 0, 1, 198,
		18, 0, 2,
		/* UDP: sport filled in, dport 9 (discard), 26 bytes */
		0, 0, 0, 9, 0, 26, 0, 0};
	struct ferry_pkt pkt;
	uint32_t sport;

	memset(f, 0, PROBE_FRAME_BYTES);
	memcpy(f, head, sizeof(head));
	memcpy(f, p->mac, 6);
	for (sport = 1024; sport < 65536; sport++) {
		f[34] = (uint8_t)(sport >> 8);
		f[35] = (uint8_t)sport;
		if (ferry_parse(f, f + PROBE_FRAME_BYTES, &pkt) !=
		    FERRY_PARSE_OK)
			return -EINVAL;
		if (ferry_flow_hash(&pkt) % p->n_queues == i)
			return 0;
	}
	return -ENOENT;
}

static uint32_t rx_waiting(const struct ferry_xsk *x)
{
	return __atomic_load_n(x->rx.producer, __ATOMIC_ACQUIRE) -
	       *x->rx.consumer;
}

/* Takes the probe frames out of the RX rings, back into the owner's pool
 * (every worker of the port is paused). */
static void probe_consume(struct ferry_port *p)
{
	struct ferry_umem *u = p->pq[0].xsk->umem;
	uint32_t i, n, idx, k;

	for (i = 0; i < p->n_queues; i++) {
		struct ferry_xsk *x = p->pq[i].xsk;

		n = xsk_ring_cons__peek(&x->rx, x->ring_size, &idx);
		for (k = 0; k < n; k++)
			ferry_umem_put(
				u,
				xsk_ring_cons__rx_desc(&x->rx, idx + k)->addr);
		if (n)
			xsk_ring_cons__release(&x->rx, n);
	}
}

/*
 * Sends PROBE_REPEAT frames per socket through the classifier as if they
 * had arrived on the port's queue (BPF_PROG_RUN with live frames, so the
 * redirects really happen) and counts what reached each socket. 0 when every
 * socket got exactly its frames; -EAGAIN with msg otherwise.
 */
static int probe(struct ferry_spread_port *sp, struct ferry_port *p,
		 struct ferry_err *msg)
{
	/* The kernel wants data_end to be the frame's length (no metadata). */
	struct xdp_md md = {.data_end = PROBE_FRAME_BYTES,
			    .ingress_ifindex = (uint32_t)p->ifindex,
			    .rx_queue_index = p->q_first};
	uint8_t frame[PROBE_FRAME_BYTES];
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame,
		    .data_size_in = sizeof(frame), .ctx_in = &md,
		    .ctx_size_in = sizeof(md), .repeat = PROBE_REPEAT,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES);
	int prog = bpf_program__fd(p->skel->progs.ferry_xdp);
	uint32_t i, want = p->n_queues * PROBE_REPEAT, got = 0, bad = 0;
	uint64_t deadline;
	int err;

	for (i = 0; i < p->n_queues; i++) {
		err = probe_frame(p, i, frame);
		if (!err && bpf_prog_test_run_opts(prog, &opts))
			err = -errno;
		if (err) {
			probe_consume(p);
			return ferry_fail(msg, err,
					  "software RSS probe could not send: "
					  "%s",
					  strerror(-err));
		}
	}
	/* Through CPUMAP the frames arrive when the CPUs' kthreads run. */
	deadline = ferry_now_ns() + PROBE_WAIT_MS * 1000000ull;
	do {
		got = 0;
		for (i = 0; i < p->n_queues; i++)
			got += rx_waiting(p->pq[i].xsk);
		if (got < want)
			usleep(2000);
	} while (got < want && ferry_now_ns() < deadline);
	for (i = 0; i < p->n_queues; i++)
		if (rx_waiting(p->pq[i].xsk) != PROBE_REPEAT)
			bad++;
	probe_consume(p);
	snprintf(sp->note, sizeof(sp->note),
		 "probe: %u of %u frames reached their socket", got, want);
	if (got == want && !bad)
		return 0;
	return ferry_fail(msg, -EAGAIN,
			  "software RSS probe: %u of %u frames reached their "
			  "socket via %s on %s queue %u%s",
			  got, want, ferry_spread_via_name(p->req.spread_via),
			  p->ifname, p->q_first,
			  p->req.spread_via == FERRY_SPREAD_CPUMAP && p->q_first
				  ? " (CPUMAP delivers frames as queue 0's)"
				  : "");
}

/*
 * Hot restart: the old daemon's sockets arrive later, as they are
 * (takeover_rings.c); the pool's hand-back rings are new and empty, the
 * old ones drained when its workers parked. The probe already ran there.
 */
static int adopt_prepare(struct ferry_spread_port *sp, struct ferry_port *p,
			 struct ferry_err *msg)
{
	uint32_t i;
	int err = 0;

	p->pq[0].rets = sp->rets;
	for (i = 1; i < p->n_queues; i++)
		p->pq[i].ret = &sp->rets->ret[i - 1];
	if (p->req.spread_via == FERRY_SPREAD_CPUMAP)
		err = cpumap_fill(p, msg);
	if (err) {
		rets_destroy(sp->rets);
		sp->rets = NULL;
		ferry_port_xdp_unload(p);
		return err;
	}
	snprintf(sp->note, sizeof(sp->note),
		 "%s: sockets handed over by ferryd %u",
		 ferry_spread_via_name(p->req.spread_via), p->adopt_pid);
	p->deferred = true;
	return 0;
}

static int spread_open(const struct ferry_port_env *env, struct ferry_port *p,
		       struct ferry_err *msg)
{
	struct ferry_spread_port *sp = &env->spread->port[p->slot];
	struct ferry_worker *ws[FERRY_SPREAD_MAX];
	struct ferry_xsk_params xp = {
		.ifindex = p->ifindex,
		.queue = p->q_first,
		.mode = FERRY_XSK_COPY,
		.need_wakeup = true,
		.ring_size = XSK_RING_SIZE,
		.tx_budget = XSK_TX_BUDGET,
	};
	uint32_t i, n = p->n_queues;
	int err;

	spread_workers(env->workers, p, ws);
	p->adopt_pid = env->adopt_pid;
	err = ferry_port_xdp_load(p, msg);
	if (err)
		return err;
	sp->rets = rets_create(n - 1);
	if (!sp->rets) {
		err = -ENOMEM;
		goto err_unload;
	}
	for (i = 0; i < n; i++) {
		p->pq[i].port = p;
		p->pq[i].spread = p->pq;
		p->pq[i].n_spread = n;
		p->pq[i].queue = p->q_first;
		p->pq[i].app = FERRY_APP_NONE;
		p->pq[i].csum_fix = ferry_port_csum_fix(p);
	}
	if (p->adopt_pid)
		return adopt_prepare(sp, p, msg);

	pause_all(ws, n);
	err = ferry_worker_pq_add(ws[0], &p->pq[0], &xp, p->numa_node,
				  env->workers->try_hugepages);
	if (!err)
		p->pq[0].rets = sp->rets;
	for (i = 1; !err && i < n; i++)
		err = ferry_worker_pq_add_shared(ws[i], &p->pq[i], &xp,
						 &p->pq[0],
						 &sp->rets->ret[i - 1]);
	if (err) {
		resume_all(ws, n);
		ferry_xsk_error(p, p->q_first, err, msg);
		goto err_sockets;
	}
	for (i = 0; i < n; i++) {
		err = ferry_port_xsk_insert(p, i, p->pq[i].xsk->fd);
		if (err) {
			resume_all(ws, n);
			ferry_fail(msg, err, "XSKMAP insert: %s",
				   strerror(-err));
			goto err_sockets;
		}
	}
	if (p->req.spread_via == FERRY_SPREAD_CPUMAP) {
		err = cpumap_fill(p, msg);
		if (!err)
			err = probe(sp, p, msg);
	} else {
		snprintf(sp->note, sizeof(sp->note),
			 "direct: frames of queue %u only", p->q_first);
	}
	resume_all(ws, n);
	if (err)
		goto err_sockets;

	p->zerocopy = false;
	p->tx_budget_set = p->pq[0].xsk->tx_budget_set;
	p->hugepages = p->pq[0].xsk->umem->hugepages;
	err = ferry_port_xdp_attach(p, msg);
	if (err)
		goto err_sockets;
	return 0;

err_sockets:
	sockets_close(sp, p, ws);
err_unload:
	ferry_port_xdp_unload(p);
	return err;
}

json_t *ferry_spread_show(const struct ferry_spread *spr,
			  const struct ferry_port *p)
{
	json_t *o = json_object(), *ws = json_array();
	uint32_t i;

	for (i = 0; i < p->n_queues && i < p->n_queues; i++)
		if (p->pq[i].w)
			json_array_append_new(ws, json_integer(p->pq[i].w->id));
	json_object_set_new(o, "active",
			    json_boolean(ferry_port_spread_n(p) > 0));
	json_object_set_new(
		o, "via",
		json_string(ferry_spread_via_name(p->req.spread_via)));
	json_object_set_new(o, "workers", ws);
	json_object_set_new(o, "queue", json_integer(p->q_first));
	json_object_set_new(o, "note", json_string(spr->port[p->slot].note));
	return o;
}

const struct ferry_port_class ferry_port_spread = {
	.name = "native",
	.what = "is spread over workers (software RSS)",
	.open = spread_open,
	.close = spread_close,
	.own_sockets = true,
	/* Its frames live in the owner's UMEM: another worker's egress
	 * socket cannot send them without a copy. */
	.xconnect = false,
	.route = false,
	.kernel_path = false,
	/* Handed over, shared pool and all; binding them again would
	 * need every worker of the port parked on both sides at once. */
	.takeover = true,
	.takeover_rebuild = false,
	.tx_capture_kernel = true,
	.gen_xsk = true,
};
