// SPDX-License-Identifier: BSD-2-Clause
/*
 * takeover.c - hot restart on the dataplane object: the old daemon's
 * release / resume / commit, the new daemon's deferred activation. The
 * conversation between the two daemons is in ferryd_takeover.c.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <linux/if_link.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "capture_ctl.h"
#include "ferry_int.h"
#include "ferry_xdp.skel.h"
#include "kpath.h"
#include "log.h"
#include "takeover.h"

/* ------------------------------------------------------------ old side */

/* The first port a takeover cannot restart (port.h), or NULL. */
static const struct ferry_port *no_takeover(const struct ferry *f, bool pass)
{
	int i;

	for (i = 0; i < f->ports.n; i++) {
		const struct ferry_port *p = f->ports.v[i];

		if (!p->cls->takeover || (!pass && !p->cls->takeover_rebuild))
			return p;
	}
	return NULL;
}

int ferry_handover_begin(struct ferry *f, bool pass, json_t **out,
			 struct ferry_err *msg)
{
	const struct ferry_port *bad = no_takeover(f, pass);
	json_t *progs;
	int i;

	if (f->ho.released)
		return ferry_fail(msg, -EALREADY,
				  "a handover is already under way");
	/* What a backend cannot hand over is refused before anything
	 * changes. */
	if (bad)
		return ferry_fail(msg, -EOPNOTSUPP, "port %s %s; %s", bad->name,
				  bad->cls->what,
				  bad->cls->takeover
					  ? "only a successor that takes its "
					    "sockets as they are can restart "
					    "it ('handover offer')"
					  : "takeover supports native ports "
					    "only");
	/* Each port's program by id: a successor that has no bpffs (a
	 * container, `ip netns exec`) cannot read our pins to recognise
	 * them. The caller (daemon/) adds "config": the lines are its. */
	progs = json_array();
	for (i = 0; progs && i < f->ports.n; i++) {
		const struct ferry_port *p = f->ports.v[i];

		if (p->prog_id &&
		    json_array_append_new(progs,
					  json_pack("{s:i,s:s,s:I}", "ifindex",
						    p->ifindex, "ifname",
						    p->ifname, "prog_id",
						    (json_int_t)p->prog_id))) {
			json_decref(progs);
			progs = NULL;
		}
	}
	/* "pass": it can hand its sockets over (`handover pass`). */
	*out = progs ? json_pack("{s:i,s:o,s:b}", "pid", (int)getpid(), "progs",
				 progs, "pass", 1)
		     : NULL;
	return *out ? 0 : -ENOMEM;
}

void ferry_handover_gens_end(struct ferry *f)
{
	int i;

	for (i = 0; i < f->ports.n; i++) {
		struct ferry_gen_port *g = ferry_gen_of(f, f->ports.v[i]);
		bool running;

		if (!g->gen)
			continue;
		/* Stopped first, so the count is final: a live engine's
		 * test run goes on until its call returns. */
		running = ferry_gen_running(g->gen);
		ferry_gen_stop(g->gen);
		/* A run that ended by itself (count) was said then. */
		if (running)
			log_info("gen %s: ended by the hot restart after %llu "
				 "frames: a generator is not handed over "
				 "('gen start' again on the successor)",
				 f->ports.v[i]->name,
				 (unsigned long long)ferry_gen_frames(g->gen));
		/* Its frames still in the TX ring are sent and completed
		 * by whoever serves the ring next, as any other. */
		ferry_gen_destroy(g->gen);
		g->gen = NULL;
	}
}

/*
 * Frames the kernel or our workers dropped at this daemon's sockets since
 * the last `stats reset`: they vanish with this process, so the successor
 * is told (and logs it) to keep the loss accounted for.
 */
static uint64_t socket_drops(struct ferry *f)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < f->ports.n; i++)
		n += ferry_port_drops(f, f->ports.v[i]);
	return n;
}

/* p's queues forward nowhere (their rings are drained). */
static void queues_unwire(struct ferry_port *p)
{
	uint32_t q;

	for (q = 0; q < p->n_queues; q++) {
		struct ferry_pq *pq = &p->pq[q];

		if (!pq->xsk || !pq->w)
			continue;
		ferry_worker_pause(pq->w);
		pq->app = FERRY_APP_NONE;
		pq->out = NULL;
		ferry_worker_resume(pq->w);
	}
}

void ferry_handover_park_ports(struct ferry *f)
{
	uint32_t q;
	int i;

	/* Until resumed, commands see ports without sockets (deferred), and
	 * no worker of ours takes CPU time the successor's need now. */
	for (i = 0; i < f->ports.n; i++) {
		struct ferry_port *p = f->ports.v[i];

		p->deferred = true;
		for (q = 0; q < p->n_queues; q++)
			p->pq[q].w = NULL;
	}
	ferry_workers_stop(f);
}

int ferry_handover_release(struct ferry *f, uint64_t *dropped,
			   struct ferry_err *msg)
{
	int i;

	const struct ferry_port *bad = no_takeover(f, false);

	if (f->ho.released)
		return ferry_fail(msg, -EALREADY,
				  "sockets are already released");
	if (bad)
		return ferry_fail(msg, -EOPNOTSUPP,
				  "port %s %s: its sockets can only be "
				  "handed over ('handover pass')",
				  bad->name, bad->cls->what);
	/*
	 * Every XSKMAP entry first, so no port feeds another that is being
	 * closed; then let what is in the rings through; then close. From
	 * the first removal on, the classifier passes frames to the kernel
	 * (pass_no_xsk) until the successor fills the XSKMAP.
	 */
	ferry_handover_gens_end(f);
	for (i = 0; i < f->ports.n; i++)
		ferry_port_xsks_unmap(f->ports.v[i]);
	for (i = 0; i < f->ports.n; i++)
		ferry_port_drain(f->ports.v[i]);
	*dropped = socket_drops(f);
	/* No queue may point at a socket about to close: with xconnects
	 * both ways, p1's queue would still send into p0's freed one. The
	 * ports keep their app, for a resume (or the successor) to set. */
	for (i = 0; i < f->ports.n; i++)
		queues_unwire(f->ports.v[i]);
	for (i = 0; i < f->ports.n; i++)
		ferry_port_sockets_close(f->ports.v[i]);
	ferry_handover_park_ports(f);
	f->ho.released = true;
	f->ho.resume_at_ns =
		ferry_now_ns() + FERRY_HANDOVER_TIMEOUT_MS * 1000000ull;
	log_info("handover: sockets of %d port(s) closed for the successor; "
		 "XDP stays attached",
		 f->ports.n);
	return 0;
}

/* Our program back on the interface, unless it still is. */
static int xdp_reattach(struct ferry_port *p, struct ferry_err *msg)
{
	uint32_t mode =
		p->xdp_generic ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
	uint32_t id = 0;

	if (!bpf_xdp_query_id(p->ifindex, (int)mode, &id) && id &&
	    id == p->prog_id)
		return 0;
	p->prog_id = 0;
	return ferry_port_xdp_attach(p, msg);
}

int ferry_handover_resume(struct ferry *f, struct ferry_err *msg)
{
	struct ferry_port_env env;
	int i, err;

	if (!f->ho.released)
		return ferry_fail(msg, -EINVAL, "nothing was released");
	if (f->ho.passed) {
		ferry_handover_pass_resume(f);
		for (i = 0; i < f->ports.n; i++) {
			err = xdp_reattach(f->ports.v[i], msg);
			if (err)
				return err;
		}
		log_info("handover: aborted; serving %d port(s) again on the "
			 "same sockets",
			 f->ports.n);
		return 0;
	}
	if (!f->workers.n) {
		err = ferry_workers_restart(f, msg);
		if (err)
			return err;
	}
	env = ferry_port_env(f);
	for (i = 0; i < f->ports.n; i++) {
		err = ferry_port_sockets_open(&env, f->ports.v[i], true, msg);
		if (err)
			return err;
	}
	for (i = 0; i < f->ports.n; i++) {
		struct ferry_port *p = f->ports.v[i];

		p->deferred = false;
		if (p->app != FERRY_APP_NONE) {
			err = ferry_app_set(f, p->name, p->app,
					    p->peer ? p->peer->name : NULL,
					    msg);
			if (err)
				return err;
		}
		err = xdp_reattach(p, msg);
		if (err)
			return err;
	}
	f->ho.released = false;
	log_info("handover: aborted; serving %d port(s) again", f->ports.n);
	return 0;
}

int ferry_handover_commit(struct ferry *f, struct ferry_err *msg)
{
	int i;

	if (!f->ho.released)
		return ferry_fail(msg, -EINVAL,
				  "'handover release' comes first");
	/* The programs are the successor's now (or ours, replaced by its):
	 * exit without detaching anything or removing the pins. */
	if (f->ho.passed)
		ferry_handover_pass_commit(f);
	/* A capture is this process's (its file or client, its threads):
	 * not in the configuration, not carried on. Ended here, the point
	 * of no return, as `capture stop` ends it, with the workers parked:
	 * what they copied up to the park is in the file. */
	ferry_captures_end(f, "the hot restart");
	for (i = 0; i < f->ports.n; i++)
		f->ports.v[i]->prog_id = 0;
	f->ho.handed_over = true;
	f->ho.keep_pins = true;
	log_info("handover: committed; exiting, XDP left to the successor");
	return 0;
}

void ferry_handover_tick(struct ferry *f)
{
	struct ferry_err msg;

	if (!f->ho.released || f->ho.handed_over ||
	    ferry_now_ns() < f->ho.resume_at_ns)
		return;
	log_warn("handover: no commit within %d ms of the release; resuming",
		 FERRY_HANDOVER_TIMEOUT_MS);
	if (ferry_handover_resume(f, &msg)) {
		/* Try again next tick; say why every time. */
		log_err("handover: cannot resume: %s", msg.msg);
		f->ho.resume_at_ns = ferry_now_ns();
	}
}

/* ------------------------------------------------------------ new side */

void ferry_takeover_start(struct ferry *f, uint32_t old_pid,
			  const struct ferry_adopt_prog *progs, int n,
			  ferry_release_fn release, void *arg)
{
	f->ho.n_progs = n < FERRY_MAX_PORTS ? n : FERRY_MAX_PORTS;
	memcpy(f->ho.progs, progs, sizeof(*progs) * (size_t)f->ho.n_progs);
	f->ho.adopt_pid = old_pid;
	f->ho.release = release;
	f->ho.release_arg = arg;
	f->ho.release_done = false;
}

/* The old daemon lets go of its queues: once, failed or not. */
static int release_once(struct ferry *f, struct ferry_err *msg)
{
	if (!f->ho.adopt_pid || f->ho.release_done)
		return 0;
	f->ho.release_done = true;
	return f->ho.release(f->ho.release_arg, msg);
}

int ferry_takeover_activate(struct ferry *f, struct ferry_err *msg)
{
	struct ferry_port_env env;
	bool kpath = false;
	uint32_t q;
	int i, err;

	/* Mapped ahead for a hand-over that did not happen (a rebuild). */
	ferry_takeover_premap_drop(f);
	/* Before the old daemon lets go, so that it carries on. */
	for (i = 0; i < f->ports.n; i++) {
		struct ferry_port *p = f->ports.v[i];

		if (p->deferred && !p->cls->takeover_rebuild)
			return ferry_fail(msg, -EOPNOTSUPP,
					  "port %s %s: only handing its "
					  "sockets over restarts it, and that "
					  "did not happen; the old ferryd "
					  "carries on",
					  p->name, p->cls->what);
	}
	/* Buffer memory first: faulting 16 MB in is slow on a busy host. */
	for (i = 0; i < f->ports.n; i++) {
		struct ferry_port *p = f->ports.v[i];

		for (q = 0; p->deferred && q < p->n_queues; q++) {
			err = ferry_worker_umem_prepare(
				f->workers.v[q % (uint32_t)f->workers.n],
				p->numa_node, f->workers.try_hugepages);
			if (err)
				return ferry_fail(msg, err, "UMEM: %s",
						  strerror(-err));
		}
	}
	/* From here to the swap, frames meet no socket: keep it short. */
	err = release_once(f, msg);
	if (err)
		return err;
	env = ferry_port_env(f);
	for (i = 0; i < f->ports.n; i++) {
		if (!f->ports.v[i]->deferred)
			continue;
		err = ferry_port_bind_deferred(&env, f->ports.v[i], msg);
		if (err)
			return err;
	}
	for (i = 0; i < f->ports.n; i++) {
		struct ferry_port *p = f->ports.v[i];

		p->deferred = false;
		if (p->app == FERRY_APP_NONE)
			continue;
		err = ferry_app_set(f, p->name, p->app,
				    p->peer ? p->peer->name : NULL, msg);
		if (err)
			return err;
	}
	/* With shared (pinned) XSKMAPs the old programs deliver to our
	 * sockets from here on; the swap below then changes nothing for
	 * the frames, only whose rules they meet. */
	for (i = 0; i < f->ports.n; i++) {
		struct ferry_port *p = f->ports.v[i];

		err = p->adopt_pid ? ferry_port_xsks_map(p) : 0;
		if (err)
			return ferry_fail(msg, err,
					  "port %s: XSKMAP insert: %s", p->name,
					  strerror(-err));
	}
	for (i = 0; i < f->ports.n; i++) {
		struct ferry_port *p = f->ports.v[i];

		if (!p->adopt_pid)
			continue;
		err = ferry_port_xdp_attach(p, msg);
		if (err)
			return err;
		p->adopt_pid = 0;
		kpath = kpath || kp(&f->kpath, p)->path == FERRY_PATH_KERNEL ||
			kp(&f->kpath, p)->tp_seen;
	}
	f->ho.adopt_pid = 0;
	/* What the old programs redirected until the swap, on the shared
	 * verdict counter, is sent as far as the kernel path counts. */
	if (kpath) {
		ferry_xdp_runs_wait();
		ferry_kpath_adopted(&f->kpath);
	}
	return 0;
}

void ferry_takeover_keep_pins(struct ferry *f)
{
	f->ho.keep_pins = true;
}
