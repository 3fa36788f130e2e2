/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * port.h - a port: one interface, ferry's XDP classifier attached to it,
 * and one AF_XDP socket per configured RX queue (held by the queue's
 * worker as a struct ferry_pq).
 *
 * Attaching refuses to replace a program ferry did not load. A ferry
 * program whose ferryd is gone (killed with SIGKILL) is recognised by its
 * name, its config map and the owner PID in that map, and replaced
 * atomically (XDP_FLAGS_REPLACE).
 */
#ifndef FERRY_PORT_H
#define FERRY_PORT_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ferry_abi.h"
#include "port_params.h"
#include "drvcaps.h"
#include "profiles.h"
#include "worker.h"
#include "xsk.h"
#include "ferry_err.h"

#define FERRY_NAME_MAX 32

#define XSK_RING_SIZE 2048
_Static_assert((XSK_RING_SIZE & (XSK_RING_SIZE - 1)) == 0,
	       "AF_XDP rings must be a power of two");
/* Descriptors per copy-mode TX kick (the kernel's default is 32). */
#define XSK_TX_BUDGET 256

/* What `port show` says about a port: an X-macro, like every list. */
#define FERRY_PORT_STATES(X)                                                   \
	X(UP, "up")	    /* forwarding */                                   \
	X(DOWN, "down")	    /* link down or XDP program lost; may come back */ \
	X(FAILED, "failed") /* interface gone: `port del` then `port add` */

enum ferry_port_state {
#define FERRY_PORT_STATE_ENUM(id, name) FERRY_PORT_##id,
	FERRY_PORT_STATES(FERRY_PORT_STATE_ENUM)
#undef FERRY_PORT_STATE_ENUM
};

struct ferry_xdp_bpf; /* skeleton */
struct bpf_link;
struct ferry_dpdk;
struct ferry_spread;
struct ferry_port_class;

/* The ports of one ferryd, in the order they were added: the registry
 * core/ owns and the feature modules read (control thread only). */
struct ferry_ports {
	struct ferry_port *v[FERRY_MAX_PORTS];
	int n;
};

struct ferry_port *ferry_ports_find(const struct ferry_ports *ps,
				    const char *name);
/* The lowest slot no port of ps holds, for a new port; -ENOSPC. */
int ferry_ports_slot_free(const struct ferry_ports *ps);

struct ferry_port {
	/* identity */
	char name[FERRY_NAME_MAX];
	char ifname[IF_NAMESIZE];
	int ifindex;
	uint8_t mac[6];
	char driver[32];
	const struct ferry_driver_profile *profile;
	struct ferry_driver_caps caps; /* the driver's report, else profile */
	int numa_node;
	/*
	 * configuration: what `port add` asked for, as it asked (name and
	 * ifname point at the arrays above; req.xdp_given false: the driver
	 * profile chose), then what the port got from it
	 */
	struct ferry_port_params req;
	const struct ferry_port_class *cls; /* its backend, from port add on */
	/* its index in the feature modules' tables (kpath.h ...): the lowest
	 * free at port add, the same until port del */
	uint16_t slot;
	uint32_t q_first;
	uint32_t n_queues;
	/* p->pq's length: n_queues may grow up to it once, right after the
	 * XDP attach (ferry_port_queues_follow) */
	uint32_t pq_cap;
	/* The RX queues in use before the XDP attach, when the attach made
	 * the driver use more (virtio_net); else 0. */
	uint32_t n_queues_pre_xdp;
	/* AF_PACKET socket holding the interface promiscuous while the port
	 * is a wire (wire.c); -1: none */
	int promisc_fd;
	enum ferry_xsk_mode mode_bind; /* mode_req with the profile applied */
	bool xdp_generic;
	uint8_t default_action; /* enum ferry_action: FERRY_ACT_XSK or _PASS */
	enum ferry_app app;
	struct ferry_port *peer; /* egress of XCONNECT */
	/* state */
	bool zerocopy;
	bool hugepages;
	bool tx_budget_set;
	bool replaced_stale;	/* took over from a killed ferryd */
	uint32_t adopt_pid;	/* hot restart: may replace this live ferryd */
	uint32_t adopt_prog_id; /* hot restart: the program it named ours */
	bool deferred;		/* hot restart: XSKMAP and attach still to do */
	char pin_dir[64]; /* bpffs directory of its pinned maps; "": none */
	struct ferry_xdp_bpf *skel;
	uint32_t prog_id;
	struct bpf_link *cpumap_tp; /* NULL: enqueue drops not measured */
	struct ferry_pq *pq;	    /* n_queues of them */
	uint64_t verdict_base[FERRY_R__COUNT];
	char numa_warning[256]; /* empty: workers on the NIC's node */
	/* empty: every worker serving a queue of the port can send on it */
	char tx_warning[384];
	/* empty: the MTU's frames fit a zero-copy socket (set on a change) */
	char mtu_warning[256];
	/* health, kept by the control thread's watch (health.c) */
	enum ferry_port_state state;
	bool link_down;
	bool xdp_lost;
	uint32_t mtu;
	uint32_t foreign_prog_id; /* what we saw in our program's place */
	char reason[160];	  /* why the port is not up; "" when it is */
	struct ferry_port_events events;
};

/* Facts about an interface, for validation before anything changes. */
struct ferry_ifinfo {
	int ifindex;
	uint32_t n_rxq;
	int numa_node;
	uint8_t mac[6];
	char driver[32];
};
int ferry_ifinfo_get(const char *ifname, struct ferry_ifinfo *out);
/* Is ifname a bond? 0 with its members' names (space-separated, as the
 * kernel lists them; "" for none) in out, -ENOENT if it is not one. */
int ferry_bond_slaves(const char *ifname, char *out, size_t n);
/* The RX queues ifname has in use now (its rx-N entries in sysfs). */
uint32_t ferry_rx_queue_count(const char *ifname);

/*
 * Loads the classifier for p (not yet attached) and checks that the
 * interface is free: 0, or -EBUSY with msg when a foreign program or a live
 * ferryd holds it.
 */
int ferry_port_xdp_load(struct ferry_port *p, struct ferry_err *msg);
/* Points the maps of p's opened, not yet loaded skeleton where they
 * belong; 0 or -errno. */
typedef int (*ferry_skel_prep_fn)(struct ferry_port *p, void *arg);
/*
 * Opens, prepares (prep) and loads p->skel with the enqueue tracepoint
 * program attached; when that fails, once more without it, with a warning:
 * the tracepoint is an extra (a kernel without it or without BTF still
 * steers). 0 with p->skel loaded, or -errno with p->skel NULL.
 */
int ferry_port_skel_load(struct ferry_port *p, ferry_skel_prep_fn prep,
			 void *arg);
/*
 * The map of the loaded program prog_fd that matches m: its name as the
 * kernel keeps it (15 characters), type, key, value and size, among the
 * maps this process holds. An fd, or -errno (-ENOENT: none).
 */
int ferry_prog_map_fd(int prog_fd, const struct bpf_map *m);
/* An fd of this process on BPF program (prog) or map id, dup'ed: -ENOENT
 * when it holds none. Needs no privilege, unlike opening by id. */
int ferry_bpf_own_fd(bool prog, uint32_t id);
/* Puts a socket into the XSKMAP slot of its queue. */
int ferry_port_xsk_insert(struct ferry_port *p, uint32_t queue, int fd);
int ferry_port_xsk_remove(struct ferry_port *p, uint32_t queue);
/*
 * Takes all of p's sockets out of its XSKMAP: from then on the classifier
 * passes p's frames to the kernel (pass_no_xsk). Redirects already under
 * way finish within an RCU grace period (ferry_port_drain waits for one).
 */
void ferry_port_xsks_unmap(struct ferry_port *p);
/* Puts every socket p has into its XSKMAP slot; 0 or the first -errno. */
int ferry_port_xsks_map(struct ferry_port *p);
/* Attaches (replacing a stale ferry program); 0 or -errno with msg. */
int ferry_port_xdp_attach(struct ferry_port *p, struct ferry_err *msg);
/* Detaches only if the attached program is still ours. */
void ferry_port_xdp_detach(struct ferry_port *p);
void ferry_port_xdp_unload(struct ferry_port *p);

/*
 * For a loader other than ferry (the DPDK PMD): 0 when ifindex has no XDP
 * program, or only a stale ferry one (a dead ferryd's, recognised by its
 * pin), whose fd is then in *stale_fd (else -1; the caller closes it);
 * -EBUSY with msg when a foreign program or a live ferryd holds the
 * interface, or a program is there and bpffs is not mounted.
 */
int ferry_port_xdp_check_free(const char *ifname, int ifindex, int *stale_fd,
			      struct ferry_err *msg);
/*
 * Pins the program and config map of p's classifier as the interface's
 * (takeover.h); for loaders other than ferry. Logs what it cannot pin.
 */
void ferry_port_xdp_pin(struct ferry_port *p, int prog_fd);

/*
 * The id of the program attached to p's interface in p's XDP mode (0: none),
 * with its name when name is not NULL; 0 or -errno.
 */
int ferry_port_xdp_current(const struct ferry_port *p, uint32_t *id, char *name,
			   size_t name_len);
/*
 * Puts p's loaded program back on its interface: attached anew when the
 * interface has none, or swapped atomically for the program that took its
 * place (only while that one is still there). 0 or -errno.
 */
int ferry_port_xdp_restore(struct ferry_port *p, uint32_t foreign_id);

/*
 * Whether the workers complete partial TCP/UDP checksums on this port's RX
 * frames (dataplane/fastpath/csum.h): a veth hands over its peer's CHECKSUM_PARTIAL
 * frames as bytes; a NIC's RX never does. One place for every socket of the
 * port, the spread ones included.
 */
static inline bool ferry_port_csum_fix(const struct ferry_port *p)
{
	return !strcmp(p->driver, "veth");
}

/*
 * Whether the port's sockets busy-poll with SO_PREFER_BUSY_POLL: asked
 * for (`busy-poll prefer`), or `busy-poll on` on a driver whose busy-polled
 * NAPI also sends the TX ring (its profile's busy_poll_tx).
 */
static inline bool ferry_port_busy_prefer(const struct ferry_port *p)
{
	return p->req.busy_poll == FERRY_BUSY_POLL_PREFER ||
	       (p->req.busy_poll == FERRY_BUSY_POLL_ON &&
		p->profile->busy_poll_tx);
}

/* The longest frame an MTU lets through, as the kernel's own forwarding
 * has it (is_skb_forwardable): the MTU, an Ethernet header, a VLAN tag. */
static inline uint32_t ferry_mtu_frame_max(uint32_t mtu)
{
	return mtu + 14 + 4;
}

/*
 * The longest frame a zero-copy socket of p receives: one UMEM frame less
 * the XDP headroom (256) where the driver takes no multi-buffer frames in
 * zero-copy (xdp-zc-max-segs 1: virtio_net), else unbounded. Longer ones
 * the driver drops before XDP runs (its rx_dropped, not ferry's counters).
 */
#define FERRY_ZC_SINGLE_FRAME (FERRY_FRAME_SIZE - 256)
static inline uint32_t ferry_port_zc_frame_max(const struct ferry_port *p)
{
	return p->caps.zc_multibuf ? UINT32_MAX : FERRY_ZC_SINGLE_FRAME;
}

/* Whether every frame mtu lets through fits a zero-copy socket of p. */
static inline bool ferry_port_zc_mtu_fits(const struct ferry_port *p,
					  uint32_t mtu)
{
	return ferry_mtu_frame_max(mtu) <= ferry_port_zc_frame_max(p);
}

/* Whether queue i (from q_first) of p sends what its socket's TX ring
 * holds: not one the XDP attach added on a driver whose added queues
 * only receive (profile xdp_queues_rx_only). */
static inline bool ferry_port_pq_can_tx(const struct ferry_port *p, uint32_t i)
{
	return !(p->profile->xdp_queues_rx_only && p->n_queues_pre_xdp &&
		 i >= p->n_queues_pre_xdp);
}

/*
 * The queue of p that worker w transmits on: its first bound queue that
 * sends (ferry_port_pq_can_tx). NULL when w has none: frames w would
 * send out of p are dropped as no_tx_queue.
 */
struct ferry_pq *ferry_port_tx_pq(struct ferry_port *p,
				  const struct ferry_worker *w);

/* Sums the per-CPU verdict counters (packets) into out[FERRY_R__COUNT]. */
int ferry_port_verdicts(const struct ferry_port *p, uint64_t *out);

/*
 * A port's backend, after OVS's struct netdev_class: where its queues come
 * from (native AF_XDP sockets, several sockets on one queue spread over
 * workers, the DPDK af_xdp PMD) and what the port can then serve. One const
 * table per backend; core/ calls through p->cls instead of asking which
 * backend a port has.
 */
struct ferry_port_env {
	const struct ferry_workers *workers;
	/* the DPDK backend's EAL, made on first use */
	struct ferry_dpdk **dpdk;
	/* the spread backend's state, by port slot */
	struct ferry_spread *spread;
	/* hot restart: load only, bind later (the old ferryd's pid) */
	uint32_t adopt_pid;
	/* a hot restart is under way, either side */
	bool handover;
};

struct ferry_port_class {
	const char *name; /* `port show`'s backend */
	/* What the port is, for the refusals below ("port p0 <what>: ..."). */
	const char *what;
	/* 0, or -errno with msg and nothing left behind; the spread backend
	 * answers -EAGAIN when its probe failed (the caller may go native). */
	int (*open)(const struct ferry_port_env *env, struct ferry_port *p,
		    struct ferry_err *msg);
	void (*close)(const struct ferry_port_env *env, struct ferry_port *p);
	bool own_sockets; /* ferry's sockets: MTU on the queues, drained */
	/* What it can serve; a false one is refused with `what`. */
	bool xconnect;	  /* between two workers' UMEMs */
	bool route;	  /* the route app (per-queue native sockets) */
	bool kernel_path; /* xconnect/route path kernel (DEVMAP) */
	/* Hot restart: its sockets handed to the successor as they are;
	 * or, where that cannot be, closed and bound again (a gap). */
	bool takeover;
	bool takeover_rebuild;
	bool tx_capture_kernel; /* a tx capture's DEVMAP program */
	bool gen_xsk;		/* the generator's xsk engine */
};

extern const struct ferry_port_class ferry_port_native; /* sockets.c */
extern const struct ferry_port_class ferry_port_spread; /* spread.c */
extern const struct ferry_port_class ferry_port_dpdk;	/* dpdk/ */

/* Sockets p's one queue is spread over (software RSS); 0: not spread. */
static inline uint32_t ferry_port_spread_n(const struct ferry_port *p)
{
	return p->cls == &ferry_port_spread ? p->n_queues : 0;
}

/* The worker that serves p's socket i (queue q_first + i, or the i-th CPU
 * of a spread port's set); NULL if there is none. */
struct ferry_worker *ferry_port_pq_worker(const struct ferry_workers *wk,
					  const struct ferry_port *p,
					  uint32_t i);

/*
 * Binds p's sockets on their workers (insert: and puts them into the
 * XSKMAP); 0 or -errno with msg, sockets bound so far left for the caller
 * to close (ferry_port_sockets_close).
 */
int ferry_port_sockets_open(const struct ferry_port_env *env,
			    struct ferry_port *p, bool insert,
			    struct ferry_err *msg);
/* After the XDP attach: binds the queues the driver brought into use
 * (a port given every queue); 0 or -errno with msg. */
int ferry_port_queues_follow(const struct ferry_port_env *env,
			     struct ferry_port *p, struct ferry_err *msg);
/* Takes p's sockets out of the XSKMAP and closes them; XDP stays. */
void ferry_port_sockets_close(struct ferry_port *p);
/* Facts p's first socket tells (zero-copy, TX budget, hugepages). */
void ferry_port_note_binding(struct ferry_port *p);
/* Hot restart: binds a deferred port's sockets (not in the XSKMAP yet). */
int ferry_port_bind_deferred(const struct ferry_port_env *env,
			     struct ferry_port *p, struct ferry_err *msg);
/* Waits (bounded) until p's RX rings are read and TX rings sent. */
void ferry_port_drain(struct ferry_port *p);

/* The operator's message for a socket that would not bind; returns err. */
int ferry_xsk_error(const struct ferry_port *p, uint32_t queue, int err,
		    struct ferry_err *msg);
/* Returns once every XDP program run begun before the call has ended (an
 * RCU grace period), with the redirects it chose. */
void ferry_xdp_runs_wait(void);
/* Sets p's egress queues down (frames to them dropped as port_down) or up. */
void ferry_port_set_down(struct ferry_port *p, bool down);
/* Longest frame p's link takes, from its MTU; applied to every queue. */
void ferry_port_set_mtu(struct ferry_port *p, uint32_t mtu);

#endif /* FERRY_PORT_H */
