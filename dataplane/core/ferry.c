// SPDX-License-Identifier: BSD-2-Clause
/*
 * ferry.c - workers, ports and apps: the operations behind the commands.
 * Each operation checks everything first, then changes state; on a failure
 * in the middle it undoes what it did, so a rejected command changes nothing.
 */
#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/membarrier.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "capture_ctl.h"
#include "health.h"
#include "ferry_int.h"
#include "kpath.h"
#include "log.h"
#include "util.h"
#include "router.h"
#include "spread.h"
#include "numaplace.h"
#include "steer.h"
#include "takeover.h"
#include "wire.h"

/* Adds p's counters since it was added to the ledger (f->retired). */
static void ferry_port_retire(struct ferry *f, struct ferry_port *p);

_Static_assert(FERRY_MAX_CPUS == FERRY_CPU_MASK_BITS,
	       "the BPF side's CPU sets and userspace's CPU masks agree");

struct ferry *ferry_create(void)
{
	struct ferry *f = calloc(1, sizeof(*f));
	bool beyond;

	if (!f)
		return NULL;
	f->workers.try_hugepages = true;
	f->rules.ports = &f->ports;
	f->kpath.ports = &f->ports;
	f->kpath.gens = &f->gens;
	f->workers.idle = FERRY_IDLE_BUSY;
	f->last_tick_ns = ferry_now_ns();
	ferry_allowed_cpus_ex(&beyond);
	if (beyond)
		log_warn("CPUs %d and above are allowed but not used: ferry "
			 "keeps CPU sets in %d-bit masks",
			 FERRY_CPU_MASK_BITS, FERRY_CPU_MASK_BITS);
	/* Any socket will do for interface ioctls; without one the watch
	 * sees no link changes, which is no reason to refuse to start. */
	f->ifreq_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (f->ifreq_fd < 0)
		log_warn("no socket for interface ioctls (%s): link state and "
			 "MTU are not watched",
			 strerror(errno));
	return f;
}

struct ferry_rules *ferry_rules(struct ferry *f)
{
	return &f->rules;
}

struct ferry_port *ferry_port_find(const struct ferry *f, const char *name)
{
	return ferry_ports_find(&f->ports, name);
}

/* ------------------------------------------------------------- workers */

static void workers_destroy(struct ferry *f)
{
	int i;

	for (i = 0; i < f->workers.n; i++) {
		struct ferry_worker *w = f->workers.v[i];

		/* Ports are gone by now, and with them every UMEM. */
		f->retired.umem_closed += w->umem_closed;
		f->retired.umem_frames_lost += w->umem_frames_lost;
		ferry_worker_destroy(w);
	}
	f->workers.n = 0;
	f->workers.cpumask = 0;
}

static int workers_make(struct ferry *f, uint64_t mask, enum ferry_idle idle,
			struct ferry_err *msg)
{
	int cpu, err;

	for (cpu = 0; cpu < 64; cpu++) {
		struct ferry_worker *w;

		if (!(mask & (1ull << cpu)))
			continue;
		w = ferry_worker_create(f->workers.n, cpu, idle);
		if (!w) {
			err = -errno;
			goto err_workers;
		}
		f->workers.v[f->workers.n++] = w;
		err = ferry_worker_start(w);
		if (err)
			goto err_workers;
	}
	f->workers.cpumask = mask;
	f->workers.idle = idle;
	return 0;

err_workers:
	workers_destroy(f);
	return ferry_fail(msg, err, "cannot start workers: %s", strerror(-err));
}

void ferry_workers_stop(struct ferry *f)
{
	uint64_t mask = f->workers.cpumask;

	workers_destroy(f);
	f->workers.cpumask = mask;
}

int ferry_workers_restart(struct ferry *f, struct ferry_err *msg)
{
	return workers_make(f, f->workers.cpumask, f->workers.idle, msg);
}

int ferry_cpus_check(uint64_t cpumask, struct ferry_err *msg)
{
	uint64_t bad = cpumask & ~ferry_allowed_cpus();

	if (!cpumask)
		return ferry_fail(msg, -EINVAL, "no CPUs given");
	if (bad)
		return ferry_fail(msg, -EINVAL,
				  "CPU %d is not online or not allowed for "
				  "ferryd",
				  __builtin_ctzll(bad));
	return 0;
}

int ferry_workers_set(struct ferry *f, uint64_t cpumask, enum ferry_idle idle,
		      struct ferry_err *msg)
{
	int err = ferry_cpus_check(cpumask, msg);

	if (err)
		return err;
	if (f->ports.n)
		return ferry_fail(msg, -EBUSY,
				  "workers can change only while no ports "
				  "exist (%d configured)",
				  f->ports.n);
	workers_destroy(f);
	return workers_make(f, cpumask, idle, msg);
}

uint64_t ferry_worker_cpus(const struct ferry *f)
{
	return f->workers.cpumask;
}

/*
 * With no `workers` command, one worker on the last CPU ferryd may use on
 * the first port's NIC node (any node when it has none).
 */
static int workers_default(struct ferry *f, int nic_node, struct ferry_err *msg)
{
	int cpu_node[FERRY_NUMA_MAX_CPUS], cpu;

	if (f->workers.n)
		return 0;
	ferry_numa_cpu_nodes(cpu_node);
	cpu = ferry_numa_pick_cpu(nic_node, ferry_allowed_cpus(), cpu_node);
	if (cpu < 0)
		return ferry_fail(msg, -EINVAL,
				  "no CPU available for a worker");
	log_info("no workers configured: starting one on CPU %d", cpu);
	return workers_make(f, 1ull << cpu, f->workers.idle, msg);
}

/* --------------------------------------------------------------- ports */

static void port_free(struct ferry *f, struct ferry_port *p)
{
	ferry_port_wire_release(p);
	ferry_steer_port_free(&f->rules, p);
	free(p->pq);
	free(p);
}

/* Software RSS asks for workers on every CPU, one queue and copy mode. */
static int spread_check(const struct ferry *f,
			const struct ferry_port_params *pp,
			const struct ferry_ifinfo *ifi, struct ferry_err *msg)
{
	int cpu;

	if (__builtin_popcountll(pp->spread_cpus) > FERRY_SPREAD_MAX)
		return ferry_fail(msg, -ERANGE, "spread: at most %d CPUs",
				  FERRY_SPREAD_MAX);
	for (cpu = 0; cpu < FERRY_MAX_CPUS; cpu++)
		if ((pp->spread_cpus & (1ull << cpu)) &&
		    !ferry_workers_on_cpu(&f->workers, cpu))
			return ferry_fail(msg, -EINVAL,
					  "spread: CPU %d has no worker "
					  "(start one with 'workers')",
					  cpu);
	if (pp->queues_given && pp->n_queues != 1)
		return ferry_fail(msg, -EINVAL,
				  "spread serves one queue; say 'queues Q-Q' "
				  "(default: queue 0)");
	if (pp->mode == FERRY_XSK_ZC)
		return ferry_fail(msg, -EOPNOTSUPP,
				  "spread is copy mode only: its sockets "
				  "share one queue's buffer pool across CPUs");
	/*
	 * Sockets that share a pool are filled without a lock of the pool:
	 * the kernel counts on one RX queue being served by one CPU at a
	 * time. CPUMAP breaks that with one kthread per CPU (seen here: the
	 * same frame handed to two sockets), and so does generic XDP, which
	 * runs on every sending CPU.
	 */
	if (pp->spread_via == FERRY_SPREAD_CPUMAP &&
	    __builtin_popcountll(pp->spread_cpus) > 1)
		return ferry_fail(
			msg, -EOPNOTSUPP,
			"spread via cpumap takes one CPU: the kernel fills "
			"sockets that share a buffer pool from each CPU's "
			"CPUMAP thread without a lock, and hands the same "
			"frame to two of them; use 'via direct' to spread "
			"over several workers");
	if (pp->xdp_generic)
		return ferry_fail(msg, -EOPNOTSUPP,
				  "spread needs native XDP: generic XDP fills "
				  "the shared pool from every sending CPU");
	if (pp->busy_poll || pp->default_pass)
		return ferry_fail(msg, -EINVAL,
				  "spread does not combine with %s",
				  pp->busy_poll ? "busy-poll" : "default pass");
	(void)ifi;
	return 0;
}

/*
 * What the driver's profile decides: `mode auto` binds copy mode straight
 * away on a driver without zero-copy (no failed zero-copy bind first),
 * and without an `xdp` keyword the profile picks native or generic XDP.
 * Zero-copy is the driver's own answer where the kernel has the netdev
 * family (p->caps), the profile's where not. An explicit request is
 * always tried as asked. An MTU whose frames a zero-copy socket here
 * cannot take whole (ferry_port_zc_frame_max) makes `mode auto` bind in
 * copy mode, which takes multi-buffer frames on every driver, and refuses
 * `mode zc` (EMSGSIZE).
 */
static int port_apply_profile(struct ferry_port *p,
			      const struct ferry_port_params *pp, uint32_t mtu,
			      struct ferry_err *msg)
{
	p->mode_bind = p->req.mode;
	if (p->req.mode == FERRY_XSK_AUTO && !p->caps.zerocopy)
		p->mode_bind = FERRY_XSK_COPY;
	p->xdp_generic =
		pp->xdp_given ? pp->xdp_generic : !p->profile->native_xdp;
	if (p->mode_bind == FERRY_XSK_COPY || pp->dpdk ||
	    ferry_port_zc_mtu_fits(p, mtu))
		return 0;
	if (p->mode_bind == FERRY_XSK_ZC)
		return ferry_fail(
			msg, -EMSGSIZE,
			"mode zc on %s: MTU %u needs %u-byte frames; a "
			"zero-copy one holds %u, as %s takes no multi-buffer "
			"frames in zero-copy (%s); use 'mode copy' (whole "
			"frames) or an MTU of at most %u",
			p->ifname, mtu, ferry_mtu_frame_max(mtu),
			FERRY_ZC_SINGLE_FRAME, p->driver,
			p->caps.zc_multibuf_from == FERRY_CAPS_KERNEL
				? "kernel: xdp-zc-max-segs 1"
				: "profile",
			FERRY_ZC_SINGLE_FRAME - ferry_mtu_frame_max(0));
	p->mode_bind = FERRY_XSK_COPY;
	snprintf(p->caps.why_no_zc, sizeof(p->caps.why_no_zc),
		 "MTU %u needs multi-buffer frames, which %s takes in copy "
		 "mode only",
		 mtu, p->driver);
	return 0;
}

/* Warns (never moves anything) when p's workers sit off the NIC's node. */
static void port_numa_check(const struct ferry *f, struct ferry_port *p)
{
	int cpu_node[FERRY_NUMA_MAX_CPUS];
	struct ferry_numa_plan plan;
	uint64_t cpus = 0;
	uint32_t i;

	for (i = 0; i < p->n_queues && i < (uint32_t)f->workers.n; i++)
		cpus |= 1ull << f->workers.v[i]->cpu;
	ferry_numa_cpu_nodes(cpu_node);
	ferry_numa_plan(p->numa_node, cpus, cpu_node, &plan);
	ferry_numa_warning(&plan, p->ifname, p->numa_node, cpu_node,
			   p->numa_warning, sizeof(p->numa_warning));
}

int ferry_port_add(struct ferry *f, const struct ferry_port_params *pp,
		   struct ferry_err *msg)
{
	struct ferry_port_env env = ferry_port_env(f);
	struct ferry_ifinfo ifi;
	struct ferry_port *p;
	char auto_note[192] = "";
	int i, err;

	if (!ferry_name_ok(pp->name, FERRY_NAME_MAX))
		return ferry_fail(msg, -EINVAL,
				  "bad port name '%s' (1-%d of A-Z a-z "
				  "0-9 _ . -)",
				  pp->name, FERRY_NAME_MAX - 1);
	if (ferry_port_find(f, pp->name))
		return ferry_fail(msg, -EEXIST, "port %s exists", pp->name);
	if (f->ports.n >= FERRY_MAX_PORTS)
		return ferry_fail(msg, -ENOSPC, "at most %d ports",
				  FERRY_MAX_PORTS);
	if (strlen(pp->ifname) >= IF_NAMESIZE ||
	    ferry_ifinfo_get(pp->ifname, &ifi))
		return ferry_fail(msg, -ENODEV, "no interface '%s' here",
				  pp->ifname);
	{
		char slaves[128];

		/* ferry serves a bond's members; the route app follows the
		 * bond (its addresses, which members carry traffic) */
		if (!ferry_bond_slaves(pp->ifname, slaves, sizeof(slaves)))
			return ferry_fail(
				msg, -EINVAL,
				"%s is a bond: add its members as ports "
				"(%s), route them, and the route app follows "
				"the bond",
				pp->ifname, slaves[0] ? slaves : "none yet");
	}
	for (i = 0; i < f->ports.n; i++)
		if (f->ports.v[i]->ifindex == ifi.ifindex)
			return ferry_fail(msg, -EEXIST,
					  "interface %s is already port %s",
					  pp->ifname, f->ports.v[i]->name);
	if (pp->queues_given &&
	    (!pp->n_queues || pp->q_first + pp->n_queues > ifi.n_rxq))
		return ferry_fail(msg, -ERANGE, "%s has %u RX queue(s) (0-%u)",
				  pp->ifname, ifi.n_rxq, ifi.n_rxq - 1);
	/* Before the default workers start, so that the refusal (the stub
	 * says why) changes nothing. */
	if (pp->dpdk && !ferry_dpdk_built())
		return ferry_dpdk_port_open(&f->dpdk, &f->workers, NULL, msg);
	if (pp->dpdk && pp->spread_cpus)
		return ferry_fail(msg, -EOPNOTSUPP,
				  "spread is for native ports, not backend "
				  "dpdk");
	err = workers_default(f, ifi.numa_node, msg);
	if (err)
		return err;
	if (pp->spread_cpus) {
		err = spread_check(f, pp, &ifi, msg);
		if (err)
			return err;
	}

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	snprintf(p->name, sizeof(p->name), "%s", pp->name);
	snprintf(p->ifname, sizeof(p->ifname), "%s", pp->ifname);
	p->ifindex = ifi.ifindex;
	p->promisc_fd = -1;
	/* Hot restart: the program the old ferryd named for this interface. */
	for (i = 0; f->ho.adopt_pid && i < f->ho.n_progs; i++)
		if (f->ho.progs[i].ifindex == p->ifindex)
			p->adopt_prog_id = f->ho.progs[i].prog_id;
	memcpy(p->mac, ifi.mac, 6);
	snprintf(p->driver, sizeof(p->driver), "%s", ifi.driver);
	p->profile = ferry_profile_lookup(ifi.driver);
	ferry_driver_caps_get(p->ifindex, p->profile, &p->caps);
	p->numa_node = ifi.numa_node;
	/* The request kept whole; its strings are the port's own copies. */
	p->req = *pp;
	p->req.name = p->name;
	p->req.ifname = p->ifname;
	p->q_first = pp->queues_given ? pp->q_first : 0;
	p->n_queues = pp->queues_given ? pp->n_queues : ifi.n_rxq;
	if (p->n_queues > FERRY_MAX_QUEUES)
		p->n_queues = FERRY_MAX_QUEUES;
	{
		unsigned int flags;
		uint32_t mtu = 0;

		if (ferry_link_get(f->ifreq_fd, pp->ifname, &flags, &mtu))
			mtu = 0;
		err = port_apply_profile(p, pp, mtu, msg);
		if (err) {
			free(p);
			return err;
		}
	}
	if (pp->spread_cpus && p->xdp_generic) {
		ferry_fail(msg, -EOPNOTSUPP,
			   "spread needs native XDP, and profile %s picks "
			   "generic XDP for %s",
			   p->profile->driver, pp->ifname);
		free(p);
		return -EOPNOTSUPP;
	}
	p->default_action = pp->default_pass ? FERRY_ACT_PASS : FERRY_ACT_XSK;
	if (pp->spread_cpus) {
		p->n_queues = (uint32_t)__builtin_popcountll(pp->spread_cpus);
	}
	/* A port given every queue follows the driver: the XDP attach may
	 * bring more queues into use (ferry_port_queues_follow), and the
	 * workers hold pointers into p->pq, so it is never reallocated. */
	p->pq_cap = pp->queues_given || pp->spread_cpus || pp->dpdk
			    ? p->n_queues
			    : FERRY_MAX_QUEUES;
	p->pq = aligned_alloc(64, sizeof(*p->pq) * p->pq_cap);
	if (!p->pq) {
		free(p);
		return -ENOMEM;
	}
	memset(p->pq, 0, sizeof(*p->pq) * p->pq_cap);

	port_numa_check(f, p);
	/* The slot is free while f->ports.n < FERRY_MAX_PORTS. */
	p->slot = (uint16_t)ferry_ports_slot_free(&f->ports);
	ferry_kpath_port_init(&f->kpath, p);
	*ferry_gen_of(f, p) = (struct ferry_gen_port){0};
	f->spread.port[p->slot] = (struct ferry_spread_port){0};
	p->cls = pp->dpdk	   ? &ferry_port_dpdk
		 : pp->spread_cpus ? &ferry_port_spread
				   : &ferry_port_native;
	if (p->cls == &ferry_port_spread) {
		/* Its own message: the fallback reads it even when the
		 * caller's msg is NULL (nowhere). */
		struct ferry_err why = {{0}};

		err = p->cls->open(&env, p, &why);
		if (err && err != -EAGAIN)
			ferry_errf(msg, "%s", why.msg);
		if (err == -EAGAIN) {
			/* The probe saw frames go astray: plain per-queue
			 * mode on the same queue, and say so. */
			log_warn("port %s: %s; falling back to per-queue mode",
				 p->name, why.msg);
			snprintf(f->spread.port[p->slot].note,
				 sizeof(f->spread.port[p->slot].note),
				 "fell back to per-queue mode: %.150s",
				 why.msg);
			p->n_queues = 1;
			memset(p->pq, 0, sizeof(*p->pq));
			p->cls = &ferry_port_native;
			err = p->cls->open(&env, p, msg);
		}
	} else {
		err = p->cls->open(&env, p, msg);
	}
	if (err) {
		port_free(f, p);
		return err;
	}
	f->ports.v[f->ports.n++] = p;
	if (f->router)
		ferry_router_ports_changed(f->router);
	if (!p->cls->own_sockets)
		return 0; /* the backend's open logged it */
	/* The MTU now; the link state from the watch's next look, since a
	 * link just brought up may not show its carrier yet. */
	{
		unsigned int flags;
		uint32_t mtu = 0;

		if (!ferry_link_get(f->ifreq_fd, p->ifname, &flags, &mtu) &&
		    mtu)
			ferry_port_set_mtu(p, mtu);
	}
	if (ferry_port_spread_n(p))
		log_info("port %s: queue %u spread over %u workers "
			 "(%s), %s",
			 p->name, p->q_first, ferry_port_spread_n(p),
			 ferry_spread_via_name(p->req.spread_via),
			 f->spread.port[p->slot].note);
	if (p->numa_warning[0])
		log_warn("port %s: %s", p->name, p->numa_warning);
	if (p->req.mode == FERRY_XSK_AUTO && p->mode_bind == FERRY_XSK_COPY)
		snprintf(auto_note, sizeof(auto_note), " (auto: %s)",
			 p->caps.why_no_zc);
	else if (p->req.mode == FERRY_XSK_AUTO && !p->zerocopy)
		snprintf(auto_note, sizeof(auto_note),
			 " (auto: zero-copy unavailable)");
	log_info("port %s: %s (driver %s, profile %s) queues %u-%u, %s "
		 "mode%s, %s XDP, UMEM on %s%s",
		 p->name, p->ifname, p->driver, p->profile->driver, p->q_first,
		 ferry_port_spread_n(p) ? p->q_first
					: p->q_first + p->n_queues - 1,
		 p->zerocopy ? "zero-copy" : "copy", auto_note,
		 p->xdp_generic ? "generic" : "native",
		 p->hugepages ? "2 MB hugepages" : "ordinary pages",
		 p->hugepages ? "" : " (no free hugepages)");
	return 0;
}

int ferry_port_del(struct ferry *f, const char *name, struct ferry_err *msg)
{
	struct ferry_port_env env = ferry_port_env(f);
	struct ferry_port *p = ferry_port_find(f, name);
	int i, j;

	if (!p)
		return ferry_fail(msg, -ENOENT, "no port %s", name);
	for (i = 0; i < f->ports.n; i++)
		if (f->ports.v[i] != p && f->ports.v[i]->peer == p)
			return ferry_fail(msg, -EBUSY,
					  "port %s is the egress of "
					  "'xconnect %s %s'; "
					  "delete that first",
					  name, f->ports.v[i]->name, name);
	if (f->router)
		ferry_router_port_del(f->router, p);
	ferry_captures_port_gone(f, p->name);
	ferry_gen_destroy(ferry_gen_of(f, p)->gen);
	ferry_gen_of(f, p)->gen = NULL;
	/* Its kernel-path frames are credited to its egress for good, and
	 * the classifier stops redirecting before the sockets go. */
	ferry_kpath_fold(&f->kpath, p);
	if (kp(&f->kpath, p)->path == FERRY_PATH_KERNEL) {
		enum ferry_app app = p->app;

		p->app = FERRY_APP_NONE;
		ferry_kpath_apply(&f->kpath, p);
		p->app = app;
	}
	if (p->cls->own_sockets) {
		/*
		 * No new frames into our sockets, the rings emptied, and only
		 * then the program detached. Detaching first is not enough:
		 * veth (with GRO on, so its NAPI stays) unregisters its XDP
		 * RX queue info right after swapping the program out, without
		 * waiting for a poll still running the old one; a redirect
		 * that poll makes then fails in the kernel (EINVAL: the
		 * queue's device is gone) and no socket counts the frame.
		 */
		ferry_port_xsks_unmap(p);
		ferry_port_drain(p);
		if (p->state != FERRY_PORT_FAILED)
			ferry_port_retire(f, p);
		/*
		 * Sockets closed before the detach: a driver may use fewer
		 * queues without XDP (virtio_net drops the queue pairs it
		 * added for XDP TX), and a zero-copy pool left on a queue
		 * that is gone cannot be disabled (the kernel WARNs "Failed
		 * to disable zero-copy!"). Unmapped and drained, nothing is
		 * redirected here any more; the classifier passes what comes
		 * meanwhile (pass_no_xsk), as the kernel would without it.
		 */
		if (p->cls == &ferry_port_native)
			ferry_port_sockets_close(p);
		ferry_port_xdp_detach(p);
	}
	ferry_kpath_port_gone(&f->kpath, p); /* before the classifier goes */
	p->cls->close(&env, p);
	if (!f->ho.keep_pins)
		ferry_pin_remove(p->pin_dir);
	for (i = 0, j = 0; i < f->ports.n; i++)
		if (f->ports.v[i] != p)
			f->ports.v[j++] = f->ports.v[i];
	f->ports.n = j;
	if (f->router)
		ferry_router_ports_changed(f->router);
	log_info("port %s: deleted", p->name);
	port_free(f, p);
	return 0;
}

static void ferry_port_retire(struct ferry *f, struct ferry_port *p)
{
	struct ferry_ledger *l = &f->retired;
	uint64_t rx_left = 0, tx_left = 0;
	uint32_t i, r;

	for (i = 0; i < p->n_queues; i++) {
		struct ferry_pq *pq = &p->pq[i];
		struct ferry_xsk_ctrs now;

		/* What the rings still hold goes back to the pool when the
		 * socket closes: received but never read, or counted as sent
		 * but never sent. A drained port has none. */
		if (pq->xsk) {
			ferry_worker_pause(pq->w);
			rx_left +=
				*pq->xsk->rx.producer - *pq->xsk->rx.consumer;
			tx_left += ferry_xsk_tx_unsent(pq->xsk);
			ferry_worker_resume(pq->w);
		}

#define L_Q(ctr) l->q.ctr += ferry_ctr_read(&pq->c.ctr);
		FERRY_QUEUE_COUNTERS(L_Q)
#undef L_Q
#define L_D(ctr) l->q.drop.ctr += ferry_ctr_read(&pq->c.drop.ctr);
		FERRY_DROP_REASONS(L_D)
#undef L_D
		if (pq->xsk && !ferry_xsk_stats(pq->xsk, &now)) {
#define L_X(ctr) l->x.ctr += now.ctr - pq->xstart.ctr;
			FERRY_XSK_COUNTERS(L_X)
#undef L_X
		}
	}
	if (!ferry_port_verdicts(p, f->verdict_scratch))
		for (r = 0; r < FERRY_R__COUNT; r++)
			l->verdicts[r] += f->verdict_scratch[r];
	ferry_kpath_ledger(&f->kpath, p, &l->kpath);
	if (rx_left || tx_left)
		log_warn("port %s: %llu received frame(s) unread and %llu "
			 "unsent were left in its rings (rx_abandoned, "
			 "tx_abandoned)",
			 p->name, (unsigned long long)rx_left,
			 (unsigned long long)tx_left);
	l->rx_abandoned += rx_left;
	l->tx_abandoned += tx_left;
	l->ports_retired++;
}

static void kpath_egress_changed(struct ferry *f, struct ferry_port *out);

void ferry_port_fail(struct ferry *f, struct ferry_port *p, const char *why)
{
	struct ferry_port_env env = ferry_port_env(f);

	log_warn("port %s: failed: %s; its queues are closed, the other ports "
		 "carry on ('port del %s' and 'port add' restore it)",
		 p->name, why, p->name);
	/* Frames for it from other ports are dropped as port_down from now. */
	ferry_port_set_down(p, true);
	if (ferry_gen_of(f, p)->gen)
		ferry_gen_stop(ferry_gen_of(f, p)->gen);
	/* What it sent by the kernel path stays its egress's once its
	 * classifier (and the counters there) is gone. */
	ferry_kpath_fold(&f->kpath, p);
	ferry_port_retire(f, p);
	/* Its counters are in the ledger now; the ledger skips failed ports,
	 * and `stats` still shows what the port did before it failed. */
	ferry_kpath_tp_detach(&f->kpath, p); /* before the classifier goes */
	p->cls->close(&env, p);
	ferry_steer_port_free(&f->rules, p);
	p->state = FERRY_PORT_FAILED;
	snprintf(p->reason, sizeof(p->reason), "%s", why);
	p->events.failed++;
	/* Ports sending here by the kernel path go back to their workers,
	 * which count what they cannot send as port_down. */
	kpath_egress_changed(f, p);
}

/* ---------------------------------------------------------------- apps */

static const char *const app_names[] = {
#define FERRY_APP_NAME(id, name) [FERRY_APP_##id] = name,
	FERRY_APPS(FERRY_APP_NAME)
#undef FERRY_APP_NAME
};

const char *ferry_app_name(enum ferry_app app)
{
	return app < FERRY_APP__COUNT ? app_names[app] : "?";
}

/*
 * The classifier follows the app: a wire (xconnect, reflect) takes ARP and
 * NDP to the worker too. Set after the workers have the app, so the first
 * ARP a wire forwards finds it there. A failure is logged, not returned:
 * the app is set, and only ARP/NDP would still go to the host.
 */
static void app_wire_apply(struct ferry_port *p)
{
	int err = ferry_port_wire_apply(p);

	if (err)
		log_warn("port %s: cannot set the classifier's wire mode: %s",
			 p->name, strerror(-err));
}

int ferry_app_set(struct ferry *f, const char *port, enum ferry_app app,
		  const char *peer_name, struct ferry_err *msg)
{
	struct ferry_port *p = ferry_port_find(f, port), *peer = NULL;
	uint32_t i, missing = 0;

	if (!p)
		return ferry_fail(msg, -ENOENT, "no port %s", port);
	if (app == FERRY_APP_XCONNECT) {
		peer = ferry_port_find(f, peer_name);
		if (!peer)
			return ferry_fail(msg, -ENOENT, "no port %s",
					  peer_name);
		const struct ferry_port *no = !p->cls->xconnect	     ? p
					      : !peer->cls->xconnect ? peer
								     : NULL;

		if (no)
			return ferry_fail(msg, -EOPNOTSUPP,
					  "port %s %s: it takes drop and "
					  "reflect, not xconnect",
					  no->name, no->cls->what);
	}
	if (app == FERRY_APP_ROUTE) {
		if (!p->cls->route)
			return ferry_fail(msg, -EOPNOTSUPP,
					  "port %s %s: route takes ports "
					  "served per queue by native AF_XDP "
					  "sockets",
					  p->name, p->cls->what);
		if (!f->router) {
			f->router = ferry_router_create(&f->ports, &f->workers,
							&f->kpath, msg);
			if (!f->router)
				return -EIO;
		}
	}
	if (app != FERRY_APP_NONE &&
	    (p->state == FERRY_PORT_FAILED ||
	     (peer && peer->state == FERRY_PORT_FAILED)))
		return ferry_fail(msg, -ENETDOWN,
				  "port %s has failed (%s); 'port del' and "
				  "'port add' it first",
				  p->state == FERRY_PORT_FAILED ? p->name
								: peer->name,
				  p->state == FERRY_PORT_FAILED ? p->reason
								: peer->reason);
	ferry_kpath_fold(&f->kpath, p);
	if (p->deferred) {
		/* No sockets yet (hot restart): set when they are bound. */
		p->app = app;
		p->peer = peer;
		app_wire_apply(p);
		ferry_kpath_apply(&f->kpath, p);
		return 0;
	}
	for (i = 0; i < p->n_queues; i++) {
		struct ferry_pq *pq = &p->pq[i], *out = NULL;

		if (app == FERRY_APP_XCONNECT)
			out = ferry_port_tx_pq(peer, pq->w);
		else if (app == FERRY_APP_REFLECT)
			out = ferry_port_pq_can_tx(p, i)
				      ? pq
				      : ferry_port_tx_pq(p, pq->w);
		if (app == FERRY_APP_XCONNECT && !out)
			missing++;
		ferry_worker_pause(pq->w);
		pq->app = (uint8_t)app;
		pq->out = out;
		ferry_worker_resume(pq->w);
	}
	p->app = app;
	p->peer = peer;
	if (f->router)
		ferry_router_ports_changed(f->router);
	app_wire_apply(p);
	/* After the workers have the xconnect: frames still in the rings
	 * when the classifier flips to the kernel path are forwarded. */
	ferry_kpath_apply(&f->kpath, p);
	if (missing)
		log_warn("xconnect %s %s: %u queue(s) of %s sit on "
			 "workers that "
			 "serve no queue of %s; their frames are "
			 "dropped "
			 "(no_tx_queue)",
			 p->name, peer->name, missing, p->name, peer->name);
	return 0;
}

int ferry_xconnect_add(struct ferry *f, const char *port, const char *peer,
		       enum ferry_path path, struct ferry_err *msg)
{
	struct ferry_port *p = ferry_port_find(f, port), *out;
	enum ferry_path old;
	char why[200];
	int err;

	if (!p)
		return ferry_fail(msg, -ENOENT, "no port %s", port);
	out = ferry_port_find(f, peer);
	if (!out)
		return ferry_fail(msg, -ENOENT, "no port %s", peer);
	if (path == FERRY_PATH_KERNEL &&
	    ferry_kpath_refusal(&f->kpath, p, out, why, sizeof(why)) ==
		    -EOPNOTSUPP)
		return ferry_fail(msg, -EOPNOTSUPP,
				  "xconnect %s %s: path kernel refused: %s",
				  port, peer, why);
	old = kp(&f->kpath, p)->req;
	kp(&f->kpath, p)->req = path;
	err = ferry_app_set(f, port, FERRY_APP_XCONNECT, peer, msg);
	if (err)
		kp(&f->kpath, p)->req = old;
	return err;
}

int ferry_route_add(struct ferry *f, const char *port, enum ferry_path path,
		    struct ferry_err *msg)
{
	struct ferry_port *p = ferry_port_find(f, port);
	enum ferry_path old;
	char why[200];
	int err;

	if (!p)
		return ferry_fail(msg, -ENOENT, "no port %s", port);
	if (path == FERRY_PATH_KERNEL &&
	    ferry_kpath_route_refusal(&f->kpath, p, why, sizeof(why)) ==
		    -EOPNOTSUPP)
		return ferry_fail(msg, -EOPNOTSUPP,
				  "route %s: path kernel refused: %s", port,
				  why);
	old = kp(&f->kpath, p)->req;
	kp(&f->kpath, p)->req = path;
	err = ferry_app_set(f, port, FERRY_APP_ROUTE, NULL, msg);
	if (err)
		kp(&f->kpath, p)->req = old;
	return err;
}

int ferry_xconnect_del(struct ferry *f, const char *port, struct ferry_err *msg)
{
	struct ferry_port *p = ferry_port_find(f, port);

	if (!p)
		return ferry_fail(msg, -ENOENT, "no port %s", port);
	if (p->app != FERRY_APP_XCONNECT)
		return ferry_fail(msg, -ENOENT, "port %s has no xconnect",
				  port);
	kp(&f->kpath, p)->req = FERRY_PATH_AUTO;
	return ferry_app_set(f, port, FERRY_APP_NONE, NULL, msg);
}

/* A generator on an egress needs the workers' TX, and a failed egress
 * its workers' port_down: re-decide the paths of the ports sending there. */
static void kpath_egress_changed(struct ferry *f, struct ferry_port *out)
{
	int i;

	for (i = 0; i < f->ports.n; i++)
		if (f->ports.v[i]->app == FERRY_APP_XCONNECT &&
		    f->ports.v[i]->peer == out)
			ferry_kpath_apply(&f->kpath, f->ports.v[i]);
	if (out->app == FERRY_APP_ROUTE)
		ferry_kpath_route_apply(&f->kpath);
}

/* ----------------------------------------------------------- generator */

int ferry_gen_begin(struct ferry *f, const char *port,
		    struct ferry_gen_params *gp, struct ferry_err *msg)
{
	struct ferry_port *p = ferry_port_find(f, port);

	if (!p)
		return ferry_fail(msg, -ENOENT, "no port %s", port);
	if (p->state == FERRY_PORT_FAILED)
		return ferry_fail(msg, -ENETDOWN, "port %s has failed (%s)",
				  port, p->reason);
	if (ferry_gen_of(f, p)->gen &&
	    ferry_gen_running(ferry_gen_of(f, p)->gen))
		return ferry_fail(msg, -EBUSY,
				  "a generator is running on %s; 'gen "
				  "stop %s' first",
				  port, port);
	ferry_gen_destroy(ferry_gen_of(f, p)->gen);
	ferry_gen_of(f, p)->gen = NULL;
	ferry_gen_of(f, p)->prev = 0;
	ferry_gen_of(f, p)->pps = 0;
	gp->ifindex = p->ifindex;
	memcpy(gp->src_mac, p->mac, 6);
	gp->cpu = p->pq[0].w ? p->pq[0].w->cpu : -1;
	gp->pq = &p->pq[0];
	if (!p->cls->gen_xsk) {
		if (gp->engine == FERRY_GEN_XSK)
			return ferry_fail(msg, -EOPNOTSUPP,
					  "port %s %s: the generator's xsk "
					  "engine needs a native port",
					  port, p->cls->what);
		gp->engine = FERRY_GEN_LIVE;
	}
	ferry_gen_of(f, p)->gen = ferry_gen_start(gp, msg);
	if (!ferry_gen_of(f, p)->gen)
		return -errno;
	kpath_egress_changed(f, p);
	log_info("gen %s: %s engine, %u-byte frames, %u flow(s), rate "
		 "%s%llu, "
		 "count %llu",
		 port, ferry_gen_engine_name(ferry_gen_of(f, p)->gen), gp->size,
		 gp->flows, gp->rate ? "" : "max ",
		 (unsigned long long)gp->rate, (unsigned long long)gp->count);
	return 0;
}

int ferry_gen_end(struct ferry *f, const char *port, struct ferry_err *msg)
{
	struct ferry_port *p = ferry_port_find(f, port);

	if (!p)
		return ferry_fail(msg, -ENOENT, "no port %s", port);
	if (!ferry_gen_of(f, p)->gen)
		return ferry_fail(msg, -ENOENT, "no generator on %s", port);
	/* The object stays: its counters are readable until the next start. */
	ferry_gen_stop(ferry_gen_of(f, p)->gen);
	kpath_egress_changed(f, p);
	log_info("gen %s: stopped after %llu frames", port,
		 (unsigned long long)ferry_gen_frames(ferry_gen_of(f, p)->gen));
	return 0;
}

/* ------------------------------------------------------------ teardown */

int ferry_port_count(const struct ferry *f)
{
	return f->ports.n;
}

int ferry_ports_del_all(struct ferry *f)
{
	struct ferry_err msg;
	int i, failed = 0;

	while (f->ports.n) {
		/* Undo xconnects first: no port is then anybody's egress. */
		for (i = f->ports.n - 1; i >= 0; i--) {
			struct ferry_port *p = f->ports.v[i];

			if (p->peer && p->peer != p)
				ferry_app_set(f, p->name, FERRY_APP_NONE, NULL,
					      &msg);
		}
		if (ferry_port_del(f, f->ports.v[f->ports.n - 1]->name, &msg)) {
			log_err("deleting ports: %s", msg.msg);
			failed++;
			break;
		}
	}
	return failed ? -EIO : 0;
}

void ferry_destroy(struct ferry *f)
{
	if (!f)
		return;
	ferry_captures_fini(f);
	ferry_ports_del_all(f);
	workers_destroy(f);
	ferry_router_destroy(f->router);
	ferry_dpdk_destroy(f->dpdk);
	if (f->ifreq_fd >= 0)
		close(f->ifreq_fd);
	free(f);
}

/* --------------------------------------------------------------- route */

int ferry_route_fd(const struct ferry *f)
{
	return f->router ? ferry_router_fd(f->router) : -1;
}

void ferry_route_process(struct ferry *f)
{
	if (f->router)
		ferry_router_process(f->router);
}

json_t *ferry_fib_show(struct ferry *f, const char *prefix,
		       struct ferry_err *msg)
{
	if (!f->router) {
		uint8_t a[16];
		unsigned l;
		int fam;

		if (prefix &&
		    ferry_route_prefix_parse(prefix, &fam, a, &l, msg))
			return NULL;
		return json_array(); /* no route port: nothing followed */
	}
	return ferry_router_fib_show(f->router, prefix, msg);
}

json_t *ferry_neigh_show(struct ferry *f)
{
	return f->router ? ferry_router_neigh_show(f->router) : json_array();
}
