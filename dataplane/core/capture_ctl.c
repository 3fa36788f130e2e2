// SPDX-License-Identifier: BSD-2-Clause
/*
 * capture_ctl.c - captures started by the operator: one capture object
 * (capture.c) per request, its taps in the port's queues. A tap pointer
 * changes only while the worker that reads it is paused, so once the
 * worker is resumed after the pointer was cleared no worker can still be
 * inside ferry_capture_frame() with the old tap: the pause is the grace
 * period, and the capture can then be stopped and freed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "capture.h"
#include "capture_ctl.h"
#include "capture_xdp.h"
#include "ferry_abi.h"
#include "ferry_capture_abi.h"
#include "ferry_cap_tx.skel.h"
#include "ferry_xdp.skel.h"
#include "ferry_int.h"
#include "kpath.h"
#include "log.h"
#include "route.h"
#include "util.h"

struct ferry_cap_run {
	struct ferry_cap_run *next;
	struct ferry_capture *c;
	char port[FERRY_NAME_MAX];
	unsigned dirs;
	uint64_t cpus; /* of its threads; 0: anywhere */
	/* A stream's connection, watched by the tick for the client leaving
	 * (a filter matching nothing would never see EPIPE); -1: a file. */
	int watch_fd;
	/* Frames the classifier drops or steers (rx only): its perf events
	 * read into the capture's last ring; cfg_fd its switch, -1: none. */
	struct ferry_capture_xdp *xdp;
	int cfg_fd;
	/* tx on the kernel path: the DEVMAP program (ferry_cap_tx.bpf.c)
	 * set in the entries towards the port, and its records' reader into
	 * the ring after the XDP side's; NULL: none. */
	struct ferry_cap_tx_bpf *tx_skel;
	struct ferry_capture_xdp *tx_xdp;
};

/* The classifier's capture switch: reasons 0 is off. */
static int xdp_cfg_set(int fd, uint64_t reasons, uint32_t snaplen)
{
	struct ferry_cap_xdp_cfg cfg = {.reasons = reasons};
	uint32_t key = 0;

	if (!snaplen || snaplen > FERRY_CAP_XDP_SNAP_MAX)
		snaplen = FERRY_CAP_XDP_SNAP_MAX;
	cfg.snaplen = snaplen;
	return bpf_map_update_elem(fd, &key, &cfg, BPF_ANY) ? -errno : 0;
}

/*
 * Starts the XDP side of run on port p: every verdict but the redirect to
 * a worker's socket (the worker captures those itself). Failing is not
 * fatal: the workers' side still captures, and the log says why.
 */
static void xdp_start(struct ferry *f, struct ferry_cap_run *run,
		      struct ferry_port *p, uint32_t snaplen)
{
	struct ferry_capture_xdp_params xp = {0};
	uint32_t ifindex = (uint32_t)p->ifindex;
	int err;

	run->cfg_fd = -1;
	if (!p->skel || !(run->dirs & FERRY_CAP_DIR_BIT(FERRY_CAP_RX)))
		return;
	xp.cap = run->c;
	xp.producer = (unsigned)f->workers.n;
	xp.ifindex = &ifindex;
	xp.n_ports = 1;
	xp.events_fd = bpf_map__fd(p->skel->maps.ferry_cap_events);
	xp.dir = FERRY_CAP_RX;
	xp.cpus = run->cpus;
	run->xdp = ferry_capture_xdp_create(&xp);
	if (!run->xdp) {
		log_warn("capture %s: frames dropped in XDP not captured: %s",
			 ferry_capture_name(run->c), strerror(errno));
		return;
	}
	/* A copy: the port's skeleton may go before the capture. */
	run->cfg_fd = fcntl(bpf_map__fd(p->skel->maps.ferry_cap_cfg),
			    F_DUPFD_CLOEXEC, 3);
	err = run->cfg_fd < 0
		      ? -errno
		      : xdp_cfg_set(run->cfg_fd,
				    ~(1ull << FERRY_R_XSK_REDIRECT) &
					    ((1ull << FERRY_R__COUNT) - 1),
				    snaplen);
	if (err) {
		log_warn("capture %s: frames dropped in XDP not captured: %s",
			 ferry_capture_name(run->c), strerror(-err));
		if (run->cfg_fd >= 0)
			close(run->cfg_fd);
		run->cfg_fd = -1;
	}
}

static void xdp_stop(struct ferry_cap_run *run)
{
	/* Off first, so no sample comes after the consumer is gone. */
	if (run->cfg_fd >= 0) {
		xdp_cfg_set(run->cfg_fd, 0, 0);
		close(run->cfg_fd);
	}
	run->cfg_fd = -1;
	ferry_capture_xdp_destroy(run->xdp);
	run->xdp = NULL;
}

/*
 * Starts the kernel path's side of a tx capture on port p: loads the
 * DEVMAP program (its snaplen in rodata), starts its reader, then puts it
 * in every DEVMAP entry towards p (kpath.c). Until then, and again after
 * tx_stop, those entries run no program: a tx capture that is not running
 * costs the kernel path nothing. Failing is not fatal: the workers' side
 * still captures, and the log says why.
 */
static void tx_start(struct ferry *f, struct ferry_cap_run *run,
		     struct ferry_port *p, uint32_t snaplen)
{
	struct ferry_capture_xdp_params xp = {0};
	uint32_t ifindex = (uint32_t)p->ifindex;
	struct ferry_cap_tx_bpf *skel;
	int err;

	if (!(run->dirs & FERRY_CAP_DIR_BIT(FERRY_CAP_TX)) ||
	    !p->cls->tx_capture_kernel)
		return;
	skel = ferry_cap_tx_bpf__open();
	if (!skel) {
		err = -errno;
		goto err_log;
	}
	if (!snaplen || snaplen > FERRY_CAP_XDP_SNAP_MAX)
		snaplen = FERRY_CAP_XDP_SNAP_MAX;
	skel->rodata->ferry_cap_tx_snaplen = snaplen;
	err = ferry_cap_tx_bpf__load(skel);
	if (err)
		goto err_skel;
	xp.cap = run->c;
	xp.producer = (unsigned)f->workers.n + 1;
	xp.ifindex = &ifindex;
	xp.n_ports = 1;
	xp.events_fd = bpf_map__fd(skel->maps.ferry_cap_tx_events);
	xp.dir = FERRY_CAP_TX;
	xp.cpus = run->cpus;
	run->tx_xdp = ferry_capture_xdp_create(&xp);
	if (!run->tx_xdp) {
		err = -errno;
		goto err_skel;
	}
	run->tx_skel = skel;
	err = ferry_kpath_tx_prog(&f->kpath, p,
				  bpf_program__fd(skel->progs.ferry_cap_tx));
	if (err)
		log_warn("capture %s: some kernel-path frames to %s not "
			 "captured: %s",
			 ferry_capture_name(run->c), p->name, strerror(-err));
	return;

err_skel:
	ferry_cap_tx_bpf__destroy(skel);
err_log:
	log_warn("capture %s: frames the kernel path sends to %s not "
		 "captured: %s",
		 ferry_capture_name(run->c), p->name, strerror(-err));
}

static void tx_stop(struct ferry *f, struct ferry_cap_run *run)
{
	struct ferry_port *p = ferry_port_find(f, run->port);

	if (!run->tx_skel)
		return;
	/* Out of the entries first, then a grace period: every frame that
	 * met the program was flushed by the end of its NAPI poll, and its
	 * record is in the perf buffer the reader drains as it ends. */
	if (p)
		ferry_kpath_tx_prog(&f->kpath, p, 0);
	ferry_xdp_runs_wait();
	ferry_capture_xdp_destroy(run->tx_xdp);
	run->tx_xdp = NULL;
	ferry_cap_tx_bpf__destroy(run->tx_skel);
	run->tx_skel = NULL;
}

static const char *app_name(unsigned app)
{
	return ferry_app_name((enum ferry_app)app);
}

static const char *route_name(unsigned reason)
{
	return reason < ROUTE_R__COUNT ? route_reason_names[reason] : NULL;
}

static int worker_index(const struct ferry *f, const struct ferry_worker *w)
{
	int i;

	for (i = 0; i < f->workers.n; i++)
		if (f->workers.v[i] == w)
			return i;
	return -1;
}

/* Sets (c) or clears (NULL) the taps of run in its port's queues. */
static void taps_apply(struct ferry *f, struct ferry_cap_run *run,
		       struct ferry_capture *c)
{
	struct ferry_port *p = ferry_port_find(f, run->port);
	uint32_t q;

	if (!p || !p->pq)
		return;
	for (q = 0; q < p->n_queues; q++) {
		struct ferry_pq *pq = &p->pq[q];
		struct ferry_capture_tap *rx = NULL, *tx = NULL;
		int wi;

		/* No worker (parked by a handover): nothing reads the
		 * pointers, so they are cleared as they are. */
		wi = pq->w ? worker_index(f, pq->w) : -1;
		if (wi < 0 && !c) {
			ferry_capture_tap_set(&pq->cap_rx, NULL);
			ferry_capture_tap_set(&pq->cap_tx, NULL);
		}
		if (wi < 0)
			continue;
		if (c) {
			rx = ferry_capture_tap(c, (unsigned)wi, 0,
					       FERRY_CAP_RX);
			tx = ferry_capture_tap(c, (unsigned)wi, 0,
					       FERRY_CAP_TX);
		} else {
			/* Clear only what this run set: another capture
			 * may have the other direction. */
			struct ferry_capture *own = run->c;

			rx = pq->cap_rx;
			tx = pq->cap_tx;
			if (rx == ferry_capture_tap(own, (unsigned)wi, 0,
						    FERRY_CAP_RX))
				rx = NULL;
			if (tx == ferry_capture_tap(own, (unsigned)wi, 0,
						    FERRY_CAP_TX))
				tx = NULL;
		}
		ferry_worker_pause(pq->w);
		if (!c || rx)
			ferry_capture_tap_set(&pq->cap_rx, rx);
		if (!c || tx)
			ferry_capture_tap_set(&pq->cap_tx, tx);
		ferry_worker_resume(pq->w);
	}
}

/* The running capture that has port in one of dirs; NULL: none. */
static const struct ferry_cap_run *run_on_port(const struct ferry *f,
					       const char *port, unsigned dirs)
{
	const struct ferry_cap_run *run;

	for (run = f->captures; run; run = run->next)
		if (!strcmp(run->port, port) && (run->dirs & dirs))
			return run;
	return NULL;
}

static struct ferry_cap_run **run_find(struct ferry *f, const char *name)
{
	struct ferry_cap_run **pp;

	for (pp = &f->captures; *pp; pp = &(*pp)->next)
		if (!strcmp(ferry_capture_name((*pp)->c), name))
			return pp;
	return NULL;
}

/*
 * The CPUs of a capture's threads: the one asked for, else the daemon's
 * CPUs that run no worker (a writer waking every millisecond on a worker's
 * CPU takes that worker off its rings), else anywhere (0). -EINVAL for a
 * CPU ferryd may not run on.
 */
static int cap_cpus(const struct ferry *f, const struct ferry_cap_req *r,
		    uint64_t *cpus, struct ferry_err *msg)
{
	uint64_t allowed = ferry_allowed_cpus();

	if (r->cpu < 0) {
		*cpus = allowed & ~f->workers.cpumask;
		return 0;
	}
	if (r->cpu >= 64 || !(allowed & (1ull << r->cpu)))
		return ferry_fail(msg, -EINVAL,
				  "capture %s: CPU %d is not online or not "
				  "allowed for ferryd",
				  r->name, r->cpu);
	*cpus = 1ull << r->cpu;
	return 0;
}

/* "1,3-5", or "any" for no mask. */
static void cpus_text(uint64_t mask, char *buf, size_t len)
{
	size_t n = 0;
	int cpu, end;

	snprintf(buf, len, "any");
	for (cpu = 0; cpu < 64 && n < len; cpu++) {
		if (!(mask & (1ull << cpu)))
			continue;
		for (end = cpu; end + 1 < 64 && (mask & (1ull << (end + 1)));)
			end++;
		n += (size_t)snprintf(buf + n, len - n, "%s%d", n ? "," : "",
				      cpu);
		if (end > cpu && n < len)
			n += (size_t)snprintf(buf + n, len - n, "-%d", end);
		cpu = end;
	}
}

int ferry_capture_start(struct ferry *f, const struct ferry_cap_req *r,
			struct ferry_err *msg)
{
	uint64_t cpus = 0;
	struct ferry_capture_params cp = {0};
	const struct ferry_cap_run *busy;
	struct ferry_cap_run *run;
	struct ferry_port *p;
	const char *ports[1];

	if (!r->name || !ferry_name_ok(r->name, FERRY_CAP_NAME_MAX)) {
		ferry_errf(msg, "capture name: 1-%d of A-Z a-z 0-9 _ . -",
			   FERRY_CAP_NAME_MAX - 1);
		goto fail_own_fd;
	}
	if (run_find(f, r->name)) {
		ferry_errf(msg, "capture %s: already running", r->name);
		if (r->own_fd && r->fd >= 0)
			close(r->fd);
		return -EEXIST;
	}
	p = ferry_port_find(f, r->port);
	if (!p) {
		ferry_errf(msg, "capture %s: no port %s", r->name, r->port);
		if (r->own_fd && r->fd >= 0)
			close(r->fd);
		return -ENOENT;
	}
	if (!f->workers.n || !p->pq) {
		ferry_errf(msg, "capture %s: port %s has no queues on workers",
			   r->name, r->port);
		goto fail_own_fd;
	}
	if (cap_cpus(f, r, &cpus, msg))
		goto fail_own_fd;
	/* One capture per port and direction: the classifier's switch and
	 * perf array, and the DEVMAP entries' program slot, are one per
	 * port, so a second capture would get nothing from them. Refused,
	 * naming the one in the way. */
	busy = run_on_port(f, p->name,
			   r->dirs ? r->dirs : FERRY_CAP_DIR_BIT(FERRY_CAP_RX));
	if (busy) {
		struct ferry_capture_info in;

		ferry_capture_info(busy->c, &in);
		ferry_errf(msg,
			   "capture %s: port %s is already captured (%s) by "
			   "capture %s, output %s: one capture per port and "
			   "direction; stop %s first (capture stop %s)",
			   r->name, p->name,
			   busy->dirs == FERRY_CAP_BOTH ? "rx and tx"
			   : busy->dirs & FERRY_CAP_DIR_BIT(FERRY_CAP_TX)
				   ? "tx"
				   : "rx",
			   in.name, in.output, in.name, in.name);
		if (r->own_fd && r->fd >= 0)
			close(r->fd);
		return -EBUSY;
	}
	run = calloc(1, sizeof(*run));
	if (!run) {
		ferry_errf(msg, "capture %s: out of memory", r->name);
		if (r->own_fd && r->fd >= 0)
			close(r->fd);
		return -ENOMEM;
	}
	snprintf(run->port, sizeof(run->port), "%s", p->name);
	run->dirs = r->dirs ? r->dirs : FERRY_CAP_DIR_BIT(FERRY_CAP_RX);
	run->cpus = cpus;
	ports[0] = p->name;
	cp.name = r->name;
	cp.filter = r->filter;
	cp.snaplen = r->snaplen;
	cp.count = r->count;
	cp.rate_pps = r->rate_pps;
	cp.dirs = run->dirs;
	cp.ports = ports;
	cp.n_ports = 1;
	/* Every worker (by index), one for the XDP side, and for tx one for
	 * the kernel path's DEVMAP program. */
	cp.n_producers = (unsigned)f->workers.n + 1 +
			 !!(run->dirs & FERRY_CAP_DIR_BIT(FERRY_CAP_TX));
	cp.path = r->fd >= 0 ? NULL : r->path;
	cp.fd = r->fd;
	cp.own_fd = r->own_fd;
	cp.app_name = app_name;
	cp.route_name = route_name;
	cp.cpus = cpus;
	run->watch_fd = -1;
	if (r->fd >= 0) {
		run->watch_fd = fcntl(r->fd, F_DUPFD_CLOEXEC, 3);
		if (run->watch_fd < 0) {
			int err = errno;

			ferry_errf(msg, "capture %s: %s", r->name,
				   strerror(err));
			free(run);
			if (r->own_fd)
				close(r->fd);
			return -err;
		}
	}
	run->c = ferry_capture_create(&cp, msg);
	if (!run->c) {
		int err = errno ? errno : EINVAL;

		/* create leaves a caller's fd open when it fails. */
		if (r->own_fd)
			close(r->fd);
		if (run->watch_fd >= 0)
			close(run->watch_fd);
		free(run);
		return -err;
	}
	taps_apply(f, run, run->c);
	xdp_start(f, run, p, r->snaplen);
	tx_start(f, run, p, r->snaplen);
	run->next = f->captures;
	f->captures = run;
	log_info("capture %s: started on %s", r->name, p->name);
	return 0;

fail_own_fd:
	if (r->own_fd && r->fd >= 0)
		close(r->fd);
	return -EINVAL;
}

/* The XDP sides off and the taps cleared (the pause is the grace period),
 * then what was copied written and the output closed. */
static int run_halt(struct ferry *f, struct ferry_cap_run *run)
{
	xdp_stop(run);
	tx_stop(f, run);
	taps_apply(f, run, NULL);
	return ferry_capture_stop(run->c);
}

static int run_end(struct ferry *f, struct ferry_cap_run **pp)
{
	struct ferry_cap_run *run = *pp;
	int rc = run_halt(f, run);

	*pp = run->next;
	ferry_capture_destroy(run->c);
	if (run->watch_fd >= 0)
		close(run->watch_fd);
	free(run);
	return rc;
}

int ferry_capture_stop_name(struct ferry *f, const char *name,
			    struct ferry_err *msg)
{
	struct ferry_cap_run **pp = run_find(f, name);
	int rc;

	if (!pp) {
		ferry_errf(msg, "no capture %s", name);
		return -ENOENT;
	}
	rc = run_end(f, pp);
	if (rc && rc != -EPIPE)
		log_warn("capture %s: output ended with %s", name,
			 strerror(-rc));
	return 0;
}

/* An XDP reader's counters: the classifier's (rx), the DEVMAP's (tx). */
static void xdp_json(json_t *o, const char *key,
		     const struct ferry_capture_xdp *x)
{
	struct ferry_capture_xdp_ctrs xc;

	if (!x)
		return;
	ferry_capture_xdp_ctrs(x, &xc);
	json_object_set_new(o, key,
			    json_pack("{s:I, s:I, s:I}", "records",
				      (json_int_t)xc.records, "queued",
				      (json_int_t)xc.queued, "lost",
				      (json_int_t)xc.lost));
}

static json_t *run_json(const struct ferry_cap_run *run)
{
	struct ferry_capture_info in;
	struct ferry_capture_ctrs ct;
	const uint64_t *v = (const uint64_t *)&ct;
	json_t *o, *dr;
	char cpus[64];
	unsigned i;
	int st;

	ferry_capture_info(run->c, &in);
	ferry_capture_ctrs(run->c, &ct);
	st = ferry_capture_state(run->c);
	dr = json_object();
	o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:s}",
		      "name", in.name, "port", run->port, "dir",
		      run->dirs == FERRY_CAP_BOTH		    ? "both"
		      : run->dirs & FERRY_CAP_DIR_BIT(FERRY_CAP_TX) ? "tx"
								    : "rx",
		      "filter", in.filter, "output", in.output, "snaplen",
		      (json_int_t)in.snaplen, "matched", (json_int_t)ct.matched,
		      "written", (json_int_t)ct.written, "bytes",
		      (json_int_t)in.bytes, "state",
		      st == 0  ? "running"
		      : st > 0 ? "done"
			       : strerror(-st));
	if (!o || !dr) {
		json_decref(o);
		json_decref(dr);
		return NULL;
	}
	/* The drops by reason: every counter after matched and written. */
	for (i = 2; i < sizeof(ct) / sizeof(uint64_t); i++)
		json_object_set_new(
			dr, ferry_capture_counter_name(i) + strlen("dropped_"),
			json_integer((json_int_t)v[i]));
	json_object_set_new(o, "dropped", dr);
	cpus_text(in.cpus, cpus, sizeof(cpus));
	json_object_set_new(o, "cpus", json_string(cpus));
	xdp_json(o, "xdp", run->xdp);
	xdp_json(o, "xdp_tx", run->tx_xdp);
	return o;
}

json_t *ferry_capture_show(struct ferry *f)
{
	const struct ferry_cap_run *run;
	json_t *a = json_array();

	for (run = f->captures; a && run; run = run->next) {
		json_t *o = run_json(run);

		if (!o || json_array_append_new(a, o)) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

void ferry_capture_tick(struct ferry *f)
{
	struct ferry_cap_run **pp = &f->captures;

	while (*pp) {
		int st = ferry_capture_state((*pp)->c);
		char name[FERRY_CAP_NAME_MAX];
		struct pollfd pfd = {.fd = (*pp)->watch_fd,
				     .events = POLLRDHUP};

		if (!st && pfd.fd >= 0 && poll(&pfd, 1, 0) > 0 &&
		    (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR)))
			st = -EPIPE;

		if (!st) {
			pp = &(*pp)->next;
			continue;
		}
		snprintf(name, sizeof(name), "%s",
			 ferry_capture_name((*pp)->c));
		if (st > 0)
			log_info("capture %s: done", name);
		else
			log_info("capture %s: output ended (%s), stopped", name,
				 strerror(-st));
		run_end(f, pp);
	}
}

void ferry_captures_port_gone(struct ferry *f, const char *port)
{
	struct ferry_cap_run **pp = &f->captures;

	while (*pp) {
		if (strcmp((*pp)->port, port)) {
			pp = &(*pp)->next;
			continue;
		}
		log_info("capture %s: port %s deleted, capture stopped",
			 ferry_capture_name((*pp)->c), port);
		run_end(f, pp);
	}
}

void ferry_captures_end(struct ferry *f, const char *why)
{
	struct ferry_capture_info in;
	struct ferry_capture_ctrs ct;
	int rc;

	while (f->captures) {
		struct ferry_cap_run *run = f->captures;

		rc = run_halt(f, run);
		ferry_capture_info(run->c, &in);
		ferry_capture_ctrs(run->c, &ct);
		log_info("capture %s on %s: ended by %s: %llu frame(s) "
			 "written to %s%s%s",
			 in.name, run->port, why,
			 (unsigned long long)ct.written, in.output,
			 rc && rc != -EPIPE ? ", output: " : "",
			 rc && rc != -EPIPE ? strerror(-rc) : "");
		run_end(f, &f->captures);
	}
}

void ferry_captures_fini(struct ferry *f)
{
	while (f->captures)
		run_end(f, &f->captures);
}
