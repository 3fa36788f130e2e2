// SPDX-License-Identifier: BSD-2-Clause
/*
 * sockets.c - the native backend of a port (struct ferry_port_class, port.h):
 * one AF_XDP socket per configured RX queue, each on its worker, put into
 * the classifier's XSKMAP, and taken out, drained and closed again. Control
 * thread only; the workers are paused around every change to their queues.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "port.h"
#include "util.h"

/* How long port del waits for a port's rings to empty. */
#define DRAIN_TIMEOUT_MS 500
/* How long a port whose XDP attach added queues waits after closing its
 * zero-copy sockets, before the detach takes those queues away. */
#define POOL_RELEASE_WAIT_MS 200
/* How long a handover waits for the other daemon's queues to come free. */
#define BIND_RETRY_MS 1000

/* Tells each worker how many of p's sockets are coming (n != 0), or that
 * they came (0): the fill shares count them from the first. */
static void fill_expect(const struct ferry_port_env *env,
			const struct ferry_port *p, bool coming)
{
	int k;

	for (k = 0; k < env->workers->n; k++) {
		struct ferry_worker *w = env->workers->v[k];
		uint32_t i, n = 0;

		for (i = 0; coming && i < p->n_queues; i++)
			n += !p->pq[i].xsk &&
			     ferry_port_pq_worker(env->workers, p, i) == w;
		if (!n && !w->fill_expect)
			continue; /* none of p's queues: nothing changes */
		ferry_worker_pause(w);
		ferry_worker_fill_expect(w, n);
		ferry_worker_resume(w);
	}
}

static int sockets_open(const struct ferry_port_env *env, struct ferry_port *p,
			bool insert, struct ferry_err *msg)
{
	uint32_t i;
	int err, tries;

	fill_expect(env, p, true);
	for (i = 0; i < p->n_queues; i++) {
		struct ferry_pq *pq = &p->pq[i];
		struct ferry_worker *w =
			ferry_port_pq_worker(env->workers, p, i);
		struct ferry_xsk_params xp = {
			.ifindex = p->ifindex,
			.queue = p->q_first + i,
			.mode = p->mode_bind,
			.need_wakeup = true,
			.ring_size = XSK_RING_SIZE,
			.tx_budget = XSK_TX_BUDGET,
			.busy_poll = p->req.busy_poll != FERRY_BUSY_POLL_OFF,
			.busy_poll_prefer = ferry_port_busy_prefer(p),
			.zc_no_sg = p->caps.zc_sg_refused,
		};

		if (pq->xsk)
			continue; /* a resume that failed half-way, retried */
		pq->port = p;
		pq->queue = xp.queue;
		pq->app = FERRY_APP_NONE;
		pq->csum_fix = ferry_port_csum_fix(p);
		for (tries = 0;; tries++) {
			ferry_worker_pause(w);
			err = ferry_worker_pq_add(w, pq, &xp, p->numa_node,
						  env->workers->try_hugepages);
			ferry_worker_resume(w);
			/*
			 * A closed socket frees its queue's buffer pool from
			 * a kernel work item, a little after close(): in a
			 * handover the other daemon's queue comes free soon.
			 */
			if (err != -EBUSY || !env->handover ||
			    tries >= BIND_RETRY_MS)
				break;
			usleep(1000);
		}
		if (err)
			return ferry_xsk_error(p, xp.queue, err, msg);
		/* A parked socket taken back brings its old kernel counters:
		 * this pq counts from here. */
		ferry_xsk_stats(pq->xsk, &pq->xstart);
		pq->xbase = pq->xstart;
		err = insert ? ferry_port_xsk_insert(p, pq->queue, pq->xsk->fd)
			     : 0;
		if (err)
			return ferry_fail(msg, err, "XSKMAP insert: %s",
					  strerror(-err));
	}
	return 0;
}

int ferry_port_sockets_open(const struct ferry_port_env *env,
			    struct ferry_port *p, bool insert,
			    struct ferry_err *msg)
{
	int err = sockets_open(env, p, insert, msg);

	fill_expect(env, p, false);
	return err;
}

void ferry_port_sockets_close(struct ferry_port *p)
{
	uint32_t i, closed = 0;

	for (i = 0; i < p->n_queues; i++) {
		struct ferry_pq *pq = &p->pq[i];

		if (!pq->xsk)
			continue;
		ferry_port_xsk_remove(p, pq->queue);
		ferry_worker_pause(pq->w);
		ferry_worker_pq_del(pq->w, pq);
		ferry_worker_resume(pq->w);
		closed++;
	}
	/*
	 * The kernel lets go of a closed socket's zero-copy pool from a work
	 * item (xp_release_deferred, under the RTNL), a little after close().
	 * If the detach that follows takes the queues the attach added out
	 * of use first, that pool cannot be disabled any more and the kernel
	 * WARNs ("Failed to disable zero-copy!"; seen in the guest, with an
	 * xconnect between two 4-queue ports). Nothing short of a netdev
	 * queue-get tells when the pool is gone: give the work item time.
	 */
	if (closed && p->n_queues_pre_xdp && p->zerocopy)
		usleep(POOL_RELEASE_WAIT_MS * 1000);
}

/* Facts the first socket tells about the port, for `port show`. */
void ferry_port_note_binding(struct ferry_port *p)
{
	p->zerocopy = p->pq[0].xsk->zerocopy;
	p->tx_budget_set = p->pq[0].xsk->tx_budget_set;
	p->hugepages = p->pq[0].xsk->umem->hugepages;
}

/* Undoes native_open at any stage: sockets out, detach, program unloaded.
 * Sockets first: the detach may take queues out of use (virtio_net), and
 * a zero-copy pool on a queue that is gone cannot be disabled. */
static void native_close(const struct ferry_port_env *env, struct ferry_port *p)
{
	ferry_port_sockets_close(p);
	ferry_port_xdp_detach(p);
	ferry_port_xdp_unload(p);
}

/* Says (log, port show's warnings) the first worker that serves queues
 * of p but has none to send on. */
static void tx_queues_check(const struct ferry_port_env *env,
			    struct ferry_port *p)
{
	uint32_t i;

	for (i = 0; i < p->n_queues; i++) {
		struct ferry_worker *w = p->pq[i].w;
		uint32_t j;

		for (j = 0; j < i && p->pq[j].w != w; j++)
			;
		if (j < i || !w || ferry_port_tx_pq(p, w))
			continue;
		snprintf(p->tx_warning, sizeof(p->tx_warning),
			 "worker %d serves queue %u, which receives only (%s "
			 "adds it with XDP), and no queue it can send on: what "
			 "it sends out of %s is dropped as no_tx_queue; give "
			 "%s at least %d combined channels before 'port add' "
			 "(ethtool -L)",
			 w->id, p->pq[i].queue, p->driver, p->name, p->ifname,
			 env->workers->n);
		log_warn("port %s: %s", p->name, p->tx_warning);
		return;
	}
}

/*
 * A port given every queue binds every queue in use once XDP is attached.
 * Some drivers use more RX queues with XDP on: virtio_net adds a queue pair
 * per CPU for XDP TX (curr_queue_pairs + nr_cpus, when the device has that
 * many) and the device then spreads RX over those as well; a frame there
 * would find no socket (pass_no_xsk). The sockets cannot be bound before
 * the attach: a queue past real_num_rx_queues refuses the bind (EINVAL).
 */
int ferry_port_queues_follow(const struct ferry_port_env *env,
			     struct ferry_port *p, struct ferry_err *msg)
{
	uint32_t n = ferry_rx_queue_count(p->ifname), was = p->n_queues;
	int err;

	if (p->req.queues_given || n > p->pq_cap)
		n = p->pq_cap;
	if (n <= was)
		return 0;
	p->n_queues_pre_xdp = was;
	p->n_queues = n;
	err = ferry_port_sockets_open(env, p, true, msg);
	if (err)
		return err;
	log_info("port %s: %s uses %u RX queues with XDP attached (%u "
		 "before): queues %u-%u bound as well%s",
		 p->name, p->ifname, n, was, p->q_first + was,
		 p->q_first + n - 1,
		 p->profile->xdp_queues_rx_only
			 ? " (receive only: the driver sends no AF_XDP TX "
			   "there)"
			 : "");
	tx_queues_check(env, p);
	return 0;
}

static int native_open(const struct ferry_port_env *env, struct ferry_port *p,
		       struct ferry_err *msg)
{
	int err;

	p->adopt_pid = env->adopt_pid;
	err = ferry_port_xdp_load(p, msg);
	if (err)
		return err;
	if (p->adopt_pid) {
		/*
		 * Hot restart: the old daemon's sockets hold the queues.
		 * Every port's classifier is loaded first; sockets, apps and
		 * the swap follow in ferry_takeover_activate(), so that what
		 * takes long (the verifier) happens before the old daemon
		 * lets go.
		 */
		p->deferred = true;
		return 0;
	}
	err = ferry_port_sockets_open(env, p, true, msg);
	if (err)
		goto err_close;
	ferry_port_note_binding(p);
	err = ferry_port_xdp_attach(p, msg);
	if (err)
		goto err_close;
	err = ferry_port_queues_follow(env, p, msg);
	if (err)
		goto err_close;
	return 0;

err_close:
	native_close(env, p);
	return err;
}

int ferry_port_bind_deferred(const struct ferry_port_env *env,
			     struct ferry_port *p, struct ferry_err *msg)
{
	int err = ferry_port_sockets_open(env, p, false, msg);

	if (!err)
		ferry_port_note_binding(p);
	return err;
}

/* Waits until the kernel has nothing more for p's sockets and we have
 * nothing more for it: RX rings read, TX rings sent. The caller has taken
 * the sockets out of the XSKMAP or detached the program. */
void ferry_port_drain(struct ferry_port *p)
{
	uint64_t deadline = ferry_now_ns() + DRAIN_TIMEOUT_MS * 1000000ull;
	bool busy;
	uint32_t i;

	ferry_xdp_runs_wait(); /* redirects already chosen land first */
	do {
		busy = false;
		for (i = 0; i < p->n_queues; i++) {
			struct ferry_xsk *x = p->pq[i].xsk;

			if (!x)
				continue;
			if (__atomic_load_n(x->rx.producer, __ATOMIC_ACQUIRE) !=
				    __atomic_load_n(x->rx.consumer,
						    __ATOMIC_ACQUIRE) ||
			    ferry_xsk_tx_unsent(x))
				busy = true;
		}
		if (busy)
			usleep(1000);
	} while (busy && ferry_now_ns() < deadline);
	if (busy)
		log_warn("port %s: not drained after %d ms; closing "
			 "anyway",
			 p->name, DRAIN_TIMEOUT_MS);
}

const struct ferry_port_class ferry_port_native = {
	.name = "native",
	.open = native_open,
	.close = native_close,
	.own_sockets = true,
	.xconnect = true,
	.route = true,
	.kernel_path = true,
	.takeover = true,
	.takeover_rebuild = true,
	.tx_capture_kernel = true,
	.gen_xsk = true,
};
