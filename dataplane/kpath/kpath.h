/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kpath.h - the in-kernel path of xconnect: which path a port's frames
 * take, switching it without losing frames, and its counters.
 *
 * On path kernel the classifier redirects the frames it would give the
 * port's AF_XDP socket into the egress device through its DEVMAP
 * (ferry_abi.h). A port needs a worker, and so keeps path xsk under auto,
 * when it uses the DPDK backend or its egress does, when a generator on
 * the egress shares the egress's TX, or when the egress is a veth whose
 * peer has neither XDP nor GRO on: the kernel would drop every redirected
 * frame there (-ENXIO). Software RSS takes no xconnect at all, and ACL
 * drop and steer rules run in XDP before either path.
 *
 * Control thread only.
 */
#ifndef FERRY_KPATH_H
#define FERRY_KPATH_H

#include <jansson.h>
#include <linux/bpf.h>
#include <stdint.h>

#include "gen.h"
#include "port.h"
#include "strbuf.h"

/* The kernel path's counters of a port, raw (since its classifier was
 * loaded): redirected, sent by the egress, refused at redirect time, refused
 * by the egress driver. What the ledger of ports gone sums. */
struct ferry_kpath_raw {
	uint64_t rx, tx, err, xmit_drops;
};

/* Kernel-path counters of one port, from its classifier's maps. */
struct ferry_kpath_ctrs {
	uint64_t rx_packets, rx_bytes; /* redirected (dev_redirect) */
	uint64_t tx_packets, tx_bytes; /* of those, sent by the egress */
#define FERRY_KPATH_CTR_FIELD(id) uint64_t id;
	FERRY_KFWD_CTRS(FERRY_KPATH_CTR_FIELD)
#undef FERRY_KPATH_CTR_FIELD
};

/* One egress in a route port's classifier (ferry_fib_egress): the slot of
 * its counters, and what they were when last credited to the egress. */
struct ferry_kpath_fib_slot {
	int ifindex; /* 0: free */
	/* the egress; a port leaves every slot before it is freed */
	struct ferry_port *port;
	struct ferry_fib_tx_ctr base;
};

/* What the counters of a port were when it last changed egress, and
 * what it sent out of other ports before: see kpath.c. */
struct ferry_kpath_acct {
	/* route: the classifier is on FERRY_KFWD_FIB, and its egresses */
	int fib_on;
	struct ferry_kpath_fib_slot fib[FERRY_FIB_EGRESS_MAX];
	struct ferry_fib_ctr fib_base;	     /* `stats reset` */
	struct ferry_kpath_ctrs snap;	     /* own counters at the last fold */
	uint64_t tx_folded, tx_bytes_folded; /* as egress, from folded ports */
	struct ferry_kpath_ctrs base;	     /* `stats reset` */
	uint64_t tx_base, tx_bytes_base;
	uint64_t tx_pre_tp; /* see ferry_kpath_adopted */
	/* rates, from the last tick (raw counters, so a reset is no jump) */
	uint64_t prev_rx, prev_tx;
	double rx_pps, tx_pps;
	/* as egress: the DEVMAP program of a running tx capture (0: none),
	 * in every kernel-path entry towards this port */
	int tx_prog_fd;
};

/*
 * The kernel path's state of every port, kept here by port slot (as VPP
 * features keep vectors by sw_if_index), not in struct ferry_port: the
 * path as asked and as decided, why, the counters' accounting, and the
 * tracepoint programs while the port forwards on this path.
 */
struct ferry_kpath_port {
	enum ferry_path req;  /* as asked (auto unless given) */
	enum ferry_path path; /* FERRY_PATH_XSK or _KERNEL */
	char why[200];
	struct ferry_kpath_acct *acct; /* NULL until first needed */
	struct bpf_link *tp[2];	       /* redirect_err, devmap_xmit */
	bool tp_seen; /* they were attached once: xmit_sent is counted */
	char vrf[16]; /* the route port's interface is in this VRF ("": no) */
};

struct ferry_kpath {
	struct ferry_ports *ports;
	const struct ferry_gens *gens; /* a generator shares its port's TX */
	struct ferry_kpath_port port[FERRY_MAX_PORTS]; /* by port slot */
};

static inline struct ferry_kpath_port *kp(struct ferry_kpath *kt,
					  const struct ferry_port *p)
{
	return &kt->port[p->slot];
}

/* The path asked for p (auto unless given). */
static inline enum ferry_path ferry_kpath_path_req(const struct ferry_kpath *kt,
						   const struct ferry_port *p)
{
	return kt->port[p->slot].req;
}

/* A port took slot p->slot: its state starts empty, path auto. */
void ferry_kpath_port_init(struct ferry_kpath *kt, struct ferry_port *p);
/* p goes (before its classifier is unloaded): the tracepoints detached,
 * the accounting freed. */
void ferry_kpath_port_gone(struct ferry_kpath *kt, struct ferry_port *p);

/*
 * Decides p's path from the path asked and what p needs (sets the path
 * decided and why) and applies it: the DEVMAP entry before the classifier
 * flips, and removed only after a grace period when it flips back.
 */
void ferry_kpath_apply(struct ferry_kpath *kt, struct ferry_port *p);
/*
 * Why path kernel cannot work for port -> peer (0: it can): -EOPNOTSUPP
 * with the reason and its fix in why; -EAGAIN when it may not (a veth
 * peer whose GRO ferryd cannot read): auto keeps xsk, path kernel is
 * allowed.
 */
int ferry_kpath_refusal(struct ferry_kpath *kt, const struct ferry_port *p,
			const struct ferry_port *peer, char *why, size_t len);
/* Before p's egress changes or p goes: what p sent so far is credited to
 * its old egress for good. */
void ferry_kpath_fold(struct ferry_kpath *kt, struct ferry_port *p);
/* For stats: rx (p as ingress) and tx (p as egress), since the reset. */
void ferry_kpath_stats(struct ferry_kpath *kt, struct ferry_port *p,
		       struct ferry_kpath_ctrs *rx, uint64_t *tx_packets,
		       uint64_t *tx_bytes);
void ferry_kpath_reset(struct ferry_kpath *kt, struct ferry_port *p);
/*
 * After a hot restart's swap, once the old programs' runs have ended: rx
 * (dev_redirect) is shared with the old daemon, xmit_sent is this
 * program's, so the frames redirected that its tracepoints never saw (the
 * old program's until the swap) count as sent, and each egress's tx is
 * taken since load, as rx is.
 */
void ferry_kpath_adopted(struct ferry_kpath *kt);
/* Once a second: p's kernel-path rates (rx as ingress, tx as egress),
 * dt seconds after the last call. */
void ferry_kpath_tick(struct ferry_kpath *kt, struct ferry_port *p, double dt);
/* Adds p's raw kernel-path counters to a ledger. */
void ferry_kpath_ledger(struct ferry_kpath *kt, const struct ferry_port *p,
			struct ferry_kpath_raw *l);
/*
 * The route app (FERRY_KFWD_FIB): decides the path of every route port
 * (ferry_kpath_apply() calls it for a route port) and gives each one on
 * the kernel path the others on it as egresses. Removals first (out of
 * ferry_fib_egress, a grace period, then out of the DEVMAP), then
 * additions (DEVMAP first), then the classifier's byte.
 */
void ferry_kpath_route_apply(struct ferry_kpath *kt);
/* Why route port p cannot take the kernel path (0: it can): as
 * ferry_kpath_refusal, plus lo's forwarding knobs (kpath.c). */
int ferry_kpath_route_refusal(struct ferry_kpath *kt,
			      const struct ferry_port *p, char *why,
			      size_t len);
/*
 * The router says route port p's interface is enslaved to VRF vrf (NULL or
 * "": none): bpf_fib_lookup here looks up the main table, so such a port
 * keeps path xsk, where the worker looks up the VRF's. Returns true when
 * that changed (the caller then calls ferry_kpath_route_apply()).
 */
bool ferry_kpath_route_vrf(struct ferry_kpath *kt, struct ferry_port *p,
			   const char *vrf);
/* 1 when both lo forwarding knobs are on (IPv6 absent counts as on). */
int ferry_kpath_lo_forwarding(void);
/* kpath_view.c: p's paths.kernel object of `stats`, with the counters it
 * shows (rx as ingress, tx as egress) for the caller's totals. */
json_t *ferry_kpath_stats_json(struct ferry_kpath *kt, struct ferry_port *p,
			       struct ferry_kpath_ctrs *kc, uint64_t *tx_pk,
			       uint64_t *tx_by);
/* kpath_view.c: `port show`'s path, path_requested and path_why of an
 * xconnect or route port, into o. */
void ferry_kpath_port_view(struct ferry_kpath *kt, const struct ferry_port *p,
			   json_t *o);
/* kpath_view.c: the ferry_kpath_*_total families of every port. */
void ferry_kpath_metrics(struct ferry_kpath *kt, struct ferry_strbuf *b);
/* The same counters summed over CPUs into out; -ENOENT for a port that is
 * not a route port with a classifier. */
int ferry_kpath_fib_read(struct ferry_kpath *kt, const struct ferry_port *p,
			 struct ferry_fib_ctr *out);
/*
 * A tx capture on port e (bpf/ferry_cap_tx.bpf.c): puts prog_fd (0: none)
 * in every DEVMAP entry that sends to e (xconnect's ferry_tx_dev, the
 * route ports' ferry_fib_dev) and keeps it there across path and route
 * changes while it is set. Clearing it, the caller waits a grace period
 * (ferry_xdp_runs_wait) before closing the program's reader. 0 or the
 * first -errno (the other entries are still tried).
 */
int ferry_kpath_tx_prog(struct ferry_kpath *kt, struct ferry_port *e,
			int prog_fd);
/* Takes p's kernel-path tracepoint programs off (kpath.c attaches them
 * while p forwards on the kernel path). */
void ferry_kpath_tp_detach(struct ferry_kpath *kt, struct ferry_port *p);

#endif /* FERRY_KPATH_H */
