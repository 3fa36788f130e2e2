// SPDX-License-Identifier: BSD-2-Clause
/*
 * takeover_rings.c - hot restart without a gap: the old daemon's AF_XDP
 * sockets and UMEMs are handed to the successor, rings and frames where
 * they are (takeover.h).
 *
 * The old side parks every worker at a batch boundary (everything reserved
 * is submitted, everything peeked released, the hand-back rings of spread
 * pools drained), writes each pool's scalar state into its UMEM file and
 * describes what it hands over; the daemon sends the descriptors. The
 * sockets stay bound and in the XSKMAPs all along: frames arriving in
 * between wait in the RX rings. The new side maps the same files and rings,
 * serves the sockets from the same positions, and only then lets its
 * workers run.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ferry_int.h"
#include "log.h"
#include "takeover.h"
#include "worker_view.h"

#define DESC_VERSION 2 /* 2: drop reasons in "drop_reasons" */

/* ------------------------------------------------------------ old side */

static void workers_pause(struct ferry *f)
{
	int i;

	for (i = 0; i < f->workers.n; i++)
		ferry_worker_pause(f->workers.v[i]);
}

static void workers_resume(struct ferry *f)
{
	int i;

	for (i = 0; i < f->workers.n; i++)
		ferry_worker_resume(f->workers.v[i]);
}

/* What only a rebuild can hand over; NULL: every port can pass its rings. */
static const char *pass_refusal(struct ferry *f, char *why, size_t size)
{
	int i;

	for (i = 0; i < f->ports.n; i++) {
		const struct ferry_port *p = f->ports.v[i];

		if (!p->cls->takeover)
			snprintf(why, size, "port %s %s", p->name,
				 p->cls->what);
		else if (p->state == FERRY_PORT_FAILED || p->deferred)
			snprintf(why, size, "port %s has no sockets", p->name);
		else
			continue;
		return why;
	}
	/* The description carries one UMEM per worker: a worker holding a
	 * second one (zero-copy and copy-mode ports, worker.h) is rebuilt. */
	for (i = 0; i < f->workers.n; i++)
		if (f->workers.v[i]->umem2) {
			snprintf(why, size,
				 "worker %d serves zero-copy and copy-mode "
				 "ports (two UMEMs)",
				 f->workers.v[i]->id);
			return why;
		}
	return NULL;
}

static int add_fd(int *fds, int *n_fds, int fd)
{
	if (*n_fds >= FERRY_HANDOVER_MAX_FDS)
		return -E2BIG;
	fds[(*n_fds)++] = fd;
	return *n_fds - 1;
}

static json_t *sock_json(const struct ferry_xsk *x, int worker, int fd_idx)
{
	return json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:b,s:b,s:b,s:b,s:b}",
			 "worker", worker, "fd", fd_idx, "ifindex", x->ifindex,
			 "queue", (int)x->queue, "ring", (int)x->ring_size,
			 "slot", x->slot, "registers", x->registers_umem,
			 "wakeup", x->need_wakeup, "budget", x->tx_budget_set,
			 "busy_poll", x->busy_poll, "busy_poll_prefer",
			 x->busy_poll_prefer);
}

static int describe(struct ferry *f, json_t *workers, json_t *socks, int *fds,
		    int *n_fds)
{
	int i, k;
	uint32_t q;

	for (i = 0; i < f->workers.n; i++) {
		struct ferry_worker *w = f->workers.v[i];
		json_t *o;

		if (!w->umem)
			continue;
		ferry_worker_handover_export(w);
		k = add_fd(fds, n_fds, w->umem->fd);
		if (k < 0)
			return k;
		o = json_pack("{s:i,s:i,s:i,s:b,s:o,s:o}", "id", w->id, "fd", k,
			      "frames", (int)w->umem->n_frames, "hugepages",
			      w->umem->hugepages, "c",
			      ferry_worker_ctrs_put(json_object(), &w->c),
			      "base",
			      ferry_worker_ctrs_put(json_object(), &w->base));
		if (!o || json_array_append_new(workers, o))
			return -ENOMEM;
		if (w->umem->parked) {
			k = add_fd(fds, n_fds, w->umem->parked->fd);
			o = k < 0 ? NULL : sock_json(w->umem->parked, w->id, k);
			if (k < 0)
				return k;
			if (!o ||
			    json_object_set_new(o, "parked", json_true()) ||
			    json_array_append_new(socks, o))
				return -ENOMEM;
		}
	}
	for (i = 0; i < f->ports.n; i++) {
		struct ferry_port *p = f->ports.v[i];

		for (q = 0; q < p->n_queues; q++) {
			struct ferry_pq *pq = &p->pq[q];
			json_t *o;

			if (!pq->xsk)
				continue;
			k = add_fd(fds, n_fds, pq->xsk->fd);
			if (k < 0)
				return k;
			o = sock_json(pq->xsk, pq->w->id, k);
			if (!o ||
			    json_object_set_new(o, "port",
						json_string(p->name)) ||
			    json_object_set_new(o, "index", json_integer(q)) ||
			    json_object_set_new(
				    o, "shares_pool",
				    json_boolean(pq->xsk->shares_pool)) ||
			    json_object_set_new(o, "rx_skip",
						json_boolean(pq->rx_skip)) ||
			    json_object_set_new(
				    o, "c",
				    ferry_queue_ctrs_put(json_object(),
							 &pq->c)) ||
			    json_object_set_new(
				    o, "base",
				    ferry_queue_ctrs_put(json_object(),
							 &pq->base)) ||
			    json_object_set_new(
				    o, "xstart",
				    ferry_xsk_ctrs_put(json_object(),
						       &pq->xstart)) ||
			    json_object_set_new(
				    o, "xbase",
				    ferry_xsk_ctrs_put(json_object(),
						       &pq->xbase)) ||
			    json_array_append_new(socks, o))
				return -ENOMEM;
		}
	}
	return 0;
}

int ferry_handover_umems(struct ferry *f, json_t **out, int *fds, int *n_fds)
{
	json_t *a = json_array();
	int i, k;

	*n_fds = 0;
	for (i = 0; a && i < f->workers.n; i++) {
		const struct ferry_worker *w = f->workers.v[i];

		if (!w->umem)
			continue;
		k = add_fd(fds, n_fds, w->umem->fd);
		if (k < 0 ||
		    json_array_append_new(
			    a, json_pack("{s:i,s:i,s:i,s:b}", "id", w->id, "fd",
					 k, "frames", (int)w->umem->n_frames,
					 "hugepages", w->umem->hugepages))) {
			json_decref(a);
			a = NULL;
		}
	}
	*out = a;
	if (!a)
		*n_fds = 0;
	return a ? 0 : -ENOMEM;
}

int ferry_handover_pass(struct ferry *f, json_t **out, int *fds, int *n_fds,
			struct ferry_err *msg)
{
	json_t *workers = json_array(), *socks = json_array();
	char why[128];
	int err;

	*out = NULL;
	*n_fds = 0;
	if (f->ho.released)
		err = ferry_fail(msg, -EALREADY,
				 "a handover is already under way");
	else if (pass_refusal(f, why, sizeof(why)))
		err = ferry_fail(msg, -EOPNOTSUPP,
				 "%s: its sockets cannot be handed over", why);
	else if (!workers || !socks)
		err = -ENOMEM;
	else
		err = 0;
	if (err)
		goto err_json;
	/* A generator's frames belong to this process's run of it (the
	 * daemon ends them first, saying so; a caller that did not, here). */
	ferry_handover_gens_end(f);
	/* From here the rings stand still until the successor serves them:
	 * what arrives waits in the RX rings. */
	workers_pause(f);
	f->ho.paused_ns = ferry_now_ns();
	err = describe(f, workers, socks, fds, n_fds);
	if (err) {
		ferry_fail(msg, err, "describing the sockets: %s",
			   strerror(-err));
		goto err_paused;
	}
	*out = json_pack("{s:i,s:i,s:I,s:o,s:o}", "version", DESC_VERSION,
			 "pid", (int)getpid(), "paused_ns",
			 (json_int_t)f->ho.paused_ns, "workers", workers,
			 "sockets", socks);
	if (!*out)
		return ferry_fail(msg, -ENOMEM, "out of memory");
	f->ho.released = true;
	f->ho.passed = true;
	f->ho.resume_at_ns =
		ferry_now_ns() + FERRY_HANDOVER_TIMEOUT_MS * 1000000ull;
	log_info("handover: %d socket(s) and %d UMEM(s) passed to the "
		 "successor, workers parked",
		 (int)json_array_size(socks), (int)json_array_size(workers));
	return 0;

err_paused:
	workers_resume(f);
	*n_fds = 0;
err_json:
	json_decref(workers);
	json_decref(socks);
	return err;
}

int ferry_handover_pass_resume(struct ferry *f)
{
	int i;

	/* A successor that served the rings and gave them back left the
	 * positions and the pool's state in the shared memory. */
	for (i = 0; i < f->workers.n; i++)
		ferry_worker_handover_import(f->workers.v[i]);
	for (i = 0; i < f->ports.n; i++)
		ferry_port_xsks_map(f->ports.v[i]);
	workers_resume(f);
	f->ho.passed = false;
	f->ho.released = false;
	return 0;
}

void ferry_handover_pass_commit(struct ferry *f)
{
	int i;

	/* The successor's now: nothing is unbound, unmapped from the
	 * XSKMAPs or given back to a pool on our way out. */
	for (i = 0; i < f->workers.n; i++)
		ferry_worker_forget(f->workers.v[i]);
	workers_resume(f);
	ferry_handover_park_ports(f);
}

/* ------------------------------------------------------------ new side */

/* Takes fds[k] (once): -1 when k is not one handed over. */
static int take_fd(int *fds, int n_fds, json_int_t k)
{
	int fd;

	if (k < 0 || k >= n_fds || fds[k] < 0)
		return -1;
	fd = fds[k];
	fds[k] = -1;
	return fd;
}

/* Everything adopted so far dropped, the pools' state written back for
 * the old daemon (which resumes on `handover abort`). */
static void unadopt(struct ferry *f)
{
	int i;

	for (i = 0; i < f->workers.n; i++) {
		struct ferry_worker *w = f->workers.v[i];

		ferry_worker_handover_export(w);
		ferry_worker_forget(w);
	}
	for (i = 0; i < f->ports.n; i++)
		if (f->ports.v[i]->adopt_pid)
			f->ports.v[i]->deferred = true;
}

void ferry_takeover_premap(struct ferry *f, const json_t *umems, int *fds,
			   int n_fds)
{
	const json_t *o;
	size_t i;

	json_array_foreach(umems, i, o)
	{
		json_int_t id = json_integer_value(json_object_get(o, "id"));
		int fd = take_fd(fds, n_fds,
				 json_integer_value(json_object_get(o, "fd")));

		if (fd < 0)
			continue;
		if (id < 0 || id >= FERRY_MAX_WORKERS || f->ho.pre[id]) {
			close(fd);
			continue;
		}
		/* Faulted in now, while the old ferryd still forwards: not
		 * in the pause. */
		f->ho.pre[id] = ferry_umem_map(
			fd,
			(uint32_t)json_integer_value(
				json_object_get(o, "frames")),
			json_is_true(json_object_get(o, "hugepages")), -1);
	}
	for (i = 0; i < (size_t)n_fds; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

void ferry_takeover_premap_drop(struct ferry *f)
{
	int i;

	for (i = 0; i < FERRY_MAX_WORKERS; i++) {
		ferry_umem_forget(f->ho.pre[i]);
		f->ho.pre[i] = NULL;
	}
}

/* The UMEM file fd names, mapped ahead if it is the one sent with begin. */
static struct ferry_umem *umem_take(struct ferry *f, int id, int fd,
				    const json_t *o)
{
	struct ferry_umem *u = f->ho.pre[id];
	struct stat st;

	if (u && !fstat(fd, &st) && (uint64_t)st.st_ino == u->ino) {
		f->ho.pre[id] = NULL;
		close(fd);
		if (!ferry_umem_adopted(u))
			return u;
		ferry_umem_forget(u);
		errno = EPROTO;
		return NULL;
	}
	return ferry_umem_adopt(
		fd, (uint32_t)json_integer_value(json_object_get(o, "frames")),
		json_is_true(json_object_get(o, "hugepages")), -1);
}

static int adopt_workers(struct ferry *f, const json_t *desc, int *fds,
			 int n_fds, struct ferry_err *msg)
{
	const json_t *o;
	size_t i;

	json_array_foreach(json_object_get(desc, "workers"), i, o)
	{
		json_int_t id = json_integer_value(json_object_get(o, "id"));
		struct ferry_worker *w;
		struct ferry_umem *u;
		int fd;

		if (id < 0 || id >= f->workers.n)
			return ferry_fail(
				msg, -EPROTO,
				"worker %lld of the old ferryd is not "
				"here (%d workers)",
				(long long)id, f->workers.n);
		w = f->workers.v[id];
		fd = take_fd(fds, n_fds,
			     json_integer_value(json_object_get(o, "fd")));
		if (fd < 0 || w->umem || w->n_pq)
			return ferry_fail(
				msg, -EPROTO,
				"worker %lld: no UMEM handed over, or "
				"one here already",
				(long long)id);
		u = umem_take(f, (int)id, fd, o);
		if (!u)
			return ferry_fail(msg, -errno,
					  "worker %lld: the UMEM handed over: "
					  "%s",
					  (long long)id, strerror(errno));
		w->umem = u;
		ferry_worker_ctrs_get(json_object_get(o, "c"), &w->c);
		ferry_worker_ctrs_get(json_object_get(o, "base"), &w->base);
	}
	return 0;
}

static int adopt_socket(struct ferry *f, const json_t *o, int *fds, int n_fds,
			struct ferry_err *msg)
{
	json_int_t wid = json_integer_value(json_object_get(o, "worker"));
	const char *name = json_string_value(json_object_get(o, "port"));
	struct ferry_xsk_adopt a = {
		.fd = take_fd(fds, n_fds,
			      json_integer_value(json_object_get(o, "fd"))),
		.ifindex =
			(int)json_integer_value(json_object_get(o, "ifindex")),
		.queue = (uint32_t)json_integer_value(
			json_object_get(o, "queue")),
		.ring_size = (uint32_t)json_integer_value(
			json_object_get(o, "ring")),
		.slot = (int)json_integer_value(json_object_get(o, "slot")),
		.registers_umem = json_is_true(json_object_get(o, "registers")),
		.shares_pool = json_is_true(json_object_get(o, "shares_pool")),
		.need_wakeup = json_is_true(json_object_get(o, "wakeup")),
		.tx_budget_set = json_is_true(json_object_get(o, "budget")),
		.busy_poll = json_is_true(json_object_get(o, "busy_poll")),
		.busy_poll_prefer =
			json_is_true(json_object_get(o, "busy_poll_prefer")),
	};
	json_t *index = json_object_get(o, "index");
	struct ferry_port *p = NULL;
	struct ferry_umem *u = NULL;
	struct ferry_worker *w = NULL;
	struct ferry_pq *pq = NULL;
	struct ferry_xsk *x;
	uint32_t i = 0;
	int err;

	if (wid >= 0 && wid < f->workers.n)
		w = f->workers.v[wid];
	if (name) {
		p = ferry_port_find(f, name);
		/* An older ferryd names no index: a socket per queue. */
		if (p)
			i = index ? (uint32_t)json_integer_value(index)
				  : a.queue - p->q_first;
		if (!p || !p->deferred || !p->cls->takeover ||
		    p->ifindex != a.ifindex || a.queue < p->q_first ||
		    i >= p->n_queues || !w ||
		    ferry_port_pq_worker(&f->workers, p, i) != w ||
		    a.shares_pool != (ferry_port_spread_n(p) && i > 0)) {
			close(a.fd);
			return ferry_fail(msg, -EPROTO,
					  "socket %u of %s (queue %u): this "
					  "ferryd's port %s is configured "
					  "differently",
					  i, name, a.queue, name);
		}
		pq = &p->pq[i];
	}
	/* A spread socket's pool is the one of the port's first socket. */
	if (pq && a.shares_pool)
		u = pq->spread[0].w ? pq->spread[0].w->umem : NULL;
	else if (w)
		u = w->umem;
	if (!u || a.fd < 0) {
		if (a.fd >= 0)
			close(a.fd);
		return ferry_fail(msg, -EPROTO,
				  "a socket handed over names worker %lld, "
				  "which has no UMEM here",
				  (long long)wid);
	}
	x = ferry_xsk_adopt(u, &a);
	if (!x)
		return ferry_fail(msg, -errno,
				  "socket on ifindex %d queue %u: %s",
				  a.ifindex, a.queue, strerror(errno));
	if (!pq) { /* parked: its port is gone, it keeps the UMEM */
		w->umem->parked = x;
		return 0;
	}
	pq->port = p;
	pq->queue = a.queue;
	pq->app = FERRY_APP_NONE;
	pq->csum_fix = ferry_port_csum_fix(p);
	pq->rx_skip = json_is_true(json_object_get(o, "rx_skip"));
	ferry_queue_ctrs_get(json_object_get(o, "c"), &pq->c);
	ferry_queue_ctrs_get(json_object_get(o, "base"), &pq->base);
	ferry_xsk_ctrs_get(json_object_get(o, "xstart"), &pq->xstart);
	ferry_xsk_ctrs_get(json_object_get(o, "xbase"), &pq->xbase);
	err = ferry_worker_pq_adopt(w, pq, x);
	if (err) {
		ferry_xsk_forget(x);
		return ferry_fail(msg, err, "socket of %s queue %u: %s", name,
				  a.queue, strerror(-err));
	}
	return 0;
}

static int adopt_all(struct ferry *f, const json_t *desc, int *fds, int n_fds,
		     struct ferry_err *msg)
{
	const json_t *o;
	size_t k;
	uint32_t q;
	int i, err;

	if (json_integer_value(json_object_get(desc, "version")) !=
	    DESC_VERSION)
		return ferry_fail(msg, -EPROTO,
				  "the old ferryd describes its sockets in "
				  "another version");
	err = adopt_workers(f, desc, fds, n_fds, msg);
	json_array_foreach(json_object_get(desc, "sockets"), k, o)
	{
		if (err)
			break;
		err = adopt_socket(f, o, fds, n_fds, msg);
	}
	if (err)
		return err;
	for (i = 0; i < f->ports.n; i++) {
		struct ferry_port *p = f->ports.v[i];

		for (q = 0; p->deferred && q < p->n_queues; q++)
			if (!p->pq[q].xsk)
				return ferry_fail(msg, -EPROTO,
						  "port %s queue %u: the old "
						  "ferryd has no socket there",
						  p->name, p->q_first + q);
	}
	return 0;
}

int ferry_takeover_adopt(struct ferry *f, json_t *desc, int *fds, int n_fds,
			 struct ferry_err *msg)
{
	uint64_t paused_ns = (uint64_t)json_integer_value(
		json_object_get(desc, "paused_ns"));
	int i, err;

	/* Our workers see nothing of it until every port has its sockets
	 * and its app: a frame served before would meet no app. */
	workers_pause(f);
	err = adopt_all(f, desc, fds, n_fds, msg);
	for (i = 0; !err && i < f->ports.n; i++) {
		struct ferry_port *p = f->ports.v[i];

		if (!p->deferred)
			continue;
		p->deferred = false;
		ferry_port_note_binding(p);
		if (p->app != FERRY_APP_NONE)
			err = ferry_app_set(f, p->name, p->app,
					    p->peer ? p->peer->name : NULL,
					    msg);
	}
	if (err)
		unadopt(f);
	workers_resume(f);
	ferry_takeover_premap_drop(f);
	for (i = 0; i < n_fds; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (err)
		return err;
	/* The old ferryd has let go: nothing to release any more. */
	f->ho.release_done = true;
	f->ho.adopted = true;
	log_info("takeover: rings adopted; workers serve them %.2f ms after "
		 "the old ferryd parked its own",
		 paused_ns ? (double)(ferry_now_ns() - paused_ns) / 1e6 : 0.0);
	return 0;
}

void ferry_takeover_giveback(struct ferry *f)
{
	if (!f || !f->ho.adopted)
		return;
	workers_pause(f);
	unadopt(f);
	workers_resume(f);
	f->ho.adopted = false;
}
