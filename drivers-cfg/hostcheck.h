/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hostcheck.h - is this host ready for ferry? One row per fact, each with
 * a status and the fix: kernel features, bpffs, hugepages, memlock, BPF
 * sysctls, and for one interface its driver, NUMA node, queues, IRQ
 * affinity and busy-poll settings against the worker CPUs.
 *
 * Every file is read under params.root, so a test can point the check at a
 * made-up tree; the few facts that are not files (can this process make an
 * AF_XDP socket, a CPUMAP?) come through params.probes.
 */
#ifndef FERRY_HOSTCHECK_H
#define FERRY_HOSTCHECK_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "ferry_err.h"
#include "netdev_feat.h"

/* UMEM file of one worker: FERRY_UMEM_FRAMES (16384) * 2 KiB, then its
 * frame pool, rounded to 2 MB (dataplane/xsk/umem.c) */
#define FERRY_HOSTCHECK_UMEM_MB 34

/* Each returns 1 supported, 0 not, -errno when it could not tell. */
struct ferry_host_probes {
	int (*af_xdp)(void);
	int (*map_type)(int bpf_map_type);
	/*
	 * A veth's peer: 1 its TX checksum offload is on, 0 off, -errno
	 * unknown (-ENOENT: not found). Its name, with " (netns NS)" when
	 * it lives elsewhere, in peer. NULL: the row is left out.
	 */
	int (*veth_peer_tx_csum)(const char *ifname, char *peer, size_t len);
	/* Does this kernel have the netdev generic netlink family (6.3)?
	 * NULL: the row is left out. */
	int (*netdev_family)(void);
	/* Does an AF_XDP socket take XDP_MAX_TX_SKB_BUDGET (6.17)? NULL:
	 * the row is left out. */
	int (*xsk_tx_budget)(void);
	/*
	 * The netdev family's report on ifname: 0, -ENOENT without the
	 * family, -errno. NULL: the kernel is not asked and the driver
	 * profile decides alone.
	 */
	int (*netdev_feat)(const char *ifname, struct ferry_netdev_feat *out);
};

struct ferry_hostcheck_params {
	const char *root;      /* NULL or "": the real host */
	const char *ifname;    /* NULL: host rows only */
	uint64_t cpus;	       /* worker CPUs; 0: every online CPU */
	const char *cpus_from; /* said in the "workers" row */
	const struct ferry_host_probes *probes; /* NULL: the real ones */
};

/*
 * A JSON array of {check, status: ok|warn|fail, value, fix}; NULL with msg
 * (and *err: -ENODEV, -EINVAL) for an interface that does not exist or a
 * CPU that is not online.
 */
/*
 * Does the veth ifname's peer take frames redirected into ifname with XDP
 * (DEVMAP, ndo_xdp_xmit)? The kernel delivers them only when the peer has
 * an XDP program or GRO on (else drops them, -ENXIO). 1 yes, 0 no, -errno
 * unknown (-ENOENT: not a veth, or its peer not found); the peer's name,
 * with " (netns NS)" when it lives elsewhere, in peer.
 */
int ferry_veth_peer_rx_ready(const char *ifname, char *peer, size_t len);

json_t *ferry_host_check(const struct ferry_hostcheck_params *p, int *err,
			 struct ferry_err *msg);

#endif /* FERRY_HOSTCHECK_H */
