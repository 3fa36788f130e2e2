/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * netdev_compat.h - kernel ABI that ferry reads or probes but that the
 * userspace headers it is built with may not have yet. Debian 12 ships the
 * Linux 6.1 uapi headers while ferry runs on newer kernels, so the values
 * are copied here from the kernel's include/uapi (6.18), where they are
 * fixed ABI. One place, so a newer header makes these blocks dead code and
 * nothing else changes.
 */
#ifndef FERRY_NETDEV_COMPAT_H
#define FERRY_NETDEV_COMPAT_H

#include <linux/if_xdp.h>

/*
 * The "netdev" generic netlink family arrived in Linux 6.3, its header
 * with it. Later kernels added attributes at the end (ZC_MAX_SEGS with
 * AF_XDP multi-buffer in 6.6, then the RX metadata and XSK feature sets)
 * and bits to the sets; a kernel without them leaves them out of its
 * reply, and a bit ferry has no name for is shown by its value.
 */
#if __has_include(<linux/netdev.h>)
#include <linux/netdev.h>
#else
#define NETDEV_FAMILY_NAME    "netdev"
#define NETDEV_FAMILY_VERSION 1

enum netdev_xdp_act {
	NETDEV_XDP_ACT_BASIC = 1,
	NETDEV_XDP_ACT_REDIRECT = 2,
	NETDEV_XDP_ACT_NDO_XMIT = 4,
	NETDEV_XDP_ACT_XSK_ZEROCOPY = 8,
	NETDEV_XDP_ACT_HW_OFFLOAD = 16,
	NETDEV_XDP_ACT_RX_SG = 32,
	NETDEV_XDP_ACT_NDO_XMIT_SG = 64,
};

enum netdev_xdp_rx_metadata {
	NETDEV_XDP_RX_METADATA_TIMESTAMP = 1,
	NETDEV_XDP_RX_METADATA_HASH = 2,
	NETDEV_XDP_RX_METADATA_VLAN_TAG = 4,
};

enum netdev_xsk_flags {
	NETDEV_XSK_FLAGS_TX_TIMESTAMP = 1,
	NETDEV_XSK_FLAGS_TX_CHECKSUM = 2,
	NETDEV_XSK_FLAGS_TX_LAUNCH_TIME_FIFO = 4,
};

enum {
	NETDEV_A_DEV_IFINDEX = 1,
	NETDEV_A_DEV_PAD,
	NETDEV_A_DEV_XDP_FEATURES,
	NETDEV_A_DEV_XDP_ZC_MAX_SEGS,
	NETDEV_A_DEV_XDP_RX_METADATA_FEATURES,
	NETDEV_A_DEV_XSK_FEATURES,
};

enum {
	NETDEV_CMD_DEV_GET = 1,
};
#endif

/*
 * setsockopt(SOL_XDP) on an AF_XDP socket: descriptors a copy-mode TX
 * kick may send (the default is 32). Linux 6.17; older kernels answer
 * ENOPROTOOPT.
 */
#ifndef XDP_MAX_TX_SKB_BUDGET
#define XDP_MAX_TX_SKB_BUDGET 9
#endif

#endif /* FERRY_NETDEV_COMPAT_H */
