/* SPDX-License-Identifier: BSD-2-Clause */
/* ferry_int.h - the daemon object's insides, shared by ferry.c and report.c. */
#ifndef FERRY_FERRY_INT_H
#define FERRY_FERRY_INT_H

#include "ferry.h"
#include "kpath.h"
#include "spread.h"
#include "steer.h"
#include "takeover.h"
#include "port.h"
#include "port_dpdk.h"
#include "worker.h"
#include "ferry_err.h"

/* Hot restart state (takeover.h); all zero when no takeover is going on. */
struct ferry_handover {
	/* new side */
	uint32_t adopt_pid; /* adopting this ferryd's ports; 0: not */
	/* the programs the old ferryd named as its own, by interface: how
	 * they are recognised without bpffs (takeover.h) */
	struct ferry_adopt_prog progs[FERRY_MAX_PORTS];
	int n_progs;
	int (*release)(void *arg, struct ferry_err *msg);
	void *release_arg;
	bool release_done;
	bool adopted; /* serving the old ferryd's own sockets (a pass) */
	/* its UMEM files, mapped ahead by worker id (takeover_premap) */
	struct ferry_umem *pre[FERRY_MAX_WORKERS];
	/* old side */
	bool released;	       /* sockets closed for a successor */
	bool passed;	       /* released by handing them over instead */
	uint64_t paused_ns;    /* passed: when the workers parked */
	uint64_t resume_at_ns; /* released: resume by itself after this */
	bool handed_over;      /* committed: exit leaves XDP attached */
	bool keep_pins;	       /* destroy leaves the pins (either side) */
};

/*
 * Counters since ferryd started: live ports and every port deleted or
 * failed before now, untouched by `stats reset`. What a soak sums to check
 * that every frame is accounted for across configuration changes.
 */
struct ferry_ledger {
	struct ferry_queue_ctrs q;
	struct ferry_xsk_ctrs x;
	uint64_t verdicts[FERRY_R__COUNT];
	uint64_t ports_retired;
	/* frames a failed port's rings held when its sockets were closed */
	uint64_t rx_abandoned, tx_abandoned;
	/* UMEMs of workers no longer there (see struct ferry_worker) */
	uint64_t umem_closed, umem_frames_lost;
	struct ferry_kpath_raw kpath; /* the kernel path (kpath.h) */
};

struct ferry {
	struct ferry_workers workers; /* fastpath/worker.h */
	struct ferry_ports ports;     /* port/port.h */
	struct ferry_kpath kpath;     /* per port, by slot (kpath.h) */
	struct ferry_gens gens;	      /* per port, by slot (gen.h) */
	struct ferry_spread spread;   /* per port, by slot (spread.h) */
	uint64_t last_tick_ns;
	uint64_t verdict_scratch[FERRY_R__COUNT];
	struct ferry_handover ho;    /* hot restart, either side (takeover.c) */
	struct ferry_dpdk *dpdk;     /* EAL, once a DPDK port was asked for */
	struct ferry_ledger retired; /* ports no longer in ports[] */
	int ifreq_fd;		     /* for SIOCGIFFLAGS/SIOCGIFMTU; -1: none */
	struct ferry_router *router; /* with the first route port (router.h) */
	struct ferry_cap_run *captures; /* capture_ctl.c */
	struct ferry_rules rules; /* every port's rule table (rules/steer.h) */
};

struct ferry_port *ferry_port_find(const struct ferry *f, const char *name);

/*
 * Hot restart: the worker threads end (sockets must be gone) and come
 * back on the same CPUs; a parked or idle worker would still take CPU
 * time from the successor's on the same CPU.
 */
void ferry_workers_stop(struct ferry *f);
/* Old side, sockets gone or handed over: ports deferred, queues off their
 * workers, the worker threads ended (takeover.c). */
void ferry_handover_park_ports(struct ferry *f);
/* takeover_rings.c: the old side's resume and commit after a pass. */
int ferry_handover_pass_resume(struct ferry *f);
void ferry_handover_pass_commit(struct ferry *f);
/* The UMEM files mapped ahead and not adopted: unmapped and closed. */
void ferry_takeover_premap_drop(struct ferry *f);
int ferry_workers_restart(struct ferry *f, struct ferry_err *msg);
/*
 * The interface under p is gone: its sockets and program are closed, its
 * counters go to the ledger, and the port stays in the table as `failed`
 * with why until `port del`.
 */
void ferry_port_fail(struct ferry *f, struct ferry_port *p, const char *why);

/* Port p's generator slot (gen.h). */
static inline struct ferry_gen_port *ferry_gen_of(struct ferry *f,
						  const struct ferry_port *p)
{
	return &f->gens.port[p->slot];
}

/* Frames lost at p since `stats reset`, as its `stats` totals count them:
 * its sockets' rx_dropped and rx_ring_full, its drops by reason, and its
 * kernel path's refused redirects and transmits (report.c). */
uint64_t ferry_port_drops(struct ferry *f, struct ferry_port *p);

/* What a port's backend (port.h) works with, from the daemon's state. */
static inline struct ferry_port_env ferry_port_env(struct ferry *f)
{
	return (struct ferry_port_env){
		.workers = &f->workers,
		.dpdk = &f->dpdk,
		.spread = &f->spread,
		.adopt_pid = f->ho.adopt_pid,
		.handover = f->ho.adopt_pid || f->ho.released,
	};
}

#endif /* FERRY_FERRY_INT_H */
