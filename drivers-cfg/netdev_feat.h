/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * netdev_feat.h - what a driver itself says about XDP, through the kernel's
 * "netdev" generic netlink family (NETDEV_CMD_DEV_GET, Linux 6.3+): its
 * XDP actions, how many segments a zero-copy frame may have, the RX
 * metadata its XDP programs can read and the AF_XDP TX offloads.
 *
 * The parsers are pure functions over the bytes the kernel sent, so the
 * unit test feeds them recorded replies (tests/unit/data/); the query
 * functions do the talking, with libmnl, and call them.
 */
#ifndef FERRY_NETDEV_FEAT_H
#define FERRY_NETDEV_FEAT_H

#include <stddef.h>
#include <stdint.h>

#include "netdev_compat.h"

/* The three bit sets of a reply, each named in the list below. */
enum ferry_netdev_set {
	FERRY_NDSET_XDP,     /* NETDEV_A_DEV_XDP_FEATURES: NETDEV_XDP_ACT_* */
	FERRY_NDSET_RX_META, /* ..._XDP_RX_METADATA_FEATURES */
	FERRY_NDSET_XSK,     /* NETDEV_A_DEV_XSK_FEATURES: NETDEV_XSK_FLAGS_* */
};

/* set, bit, name: the names are the kernel's (netdev.yaml), as ynl prints
 * them, so what `host check` says can be looked up there. */
#define FERRY_NETDEV_FEATURES(X)                                               \
	X(XDP, NETDEV_XDP_ACT_BASIC, "basic")                                  \
	X(XDP, NETDEV_XDP_ACT_REDIRECT, "redirect")                            \
	X(XDP, NETDEV_XDP_ACT_NDO_XMIT, "ndo-xmit")                            \
	X(XDP, NETDEV_XDP_ACT_XSK_ZEROCOPY, "xsk-zerocopy")                    \
	X(XDP, NETDEV_XDP_ACT_HW_OFFLOAD, "hw-offload")                        \
	X(XDP, NETDEV_XDP_ACT_RX_SG, "rx-sg")                                  \
	X(XDP, NETDEV_XDP_ACT_NDO_XMIT_SG, "ndo-xmit-sg")                      \
	X(RX_META, NETDEV_XDP_RX_METADATA_TIMESTAMP, "timestamp")              \
	X(RX_META, NETDEV_XDP_RX_METADATA_HASH, "hash")                        \
	X(RX_META, NETDEV_XDP_RX_METADATA_VLAN_TAG, "vlan-tag")                \
	X(XSK, NETDEV_XSK_FLAGS_TX_TIMESTAMP, "tx-timestamp")                  \
	X(XSK, NETDEV_XSK_FLAGS_TX_CHECKSUM, "tx-checksum")                    \
	X(XSK, NETDEV_XSK_FLAGS_TX_LAUNCH_TIME_FIFO, "tx-launch-time-fifo")

/* Which attributes the reply carried: a kernel leaves out what it
 * predates, and xdp-zc-max-segs comes only with xsk-zerocopy. */
enum {
	FERRY_NDF_XDP_FEATURES = 1u << 0,
	FERRY_NDF_ZC_MAX_SEGS = 1u << 1,
	FERRY_NDF_RX_METADATA = 1u << 2,
	FERRY_NDF_XSK_FEATURES = 1u << 3,
};

struct ferry_netdev_feat {
	uint32_t ifindex;
	uint32_t have;		  /* FERRY_NDF_* */
	uint64_t xdp_features;	  /* NETDEV_XDP_ACT_* */
	uint64_t xdp_rx_metadata; /* NETDEV_XDP_RX_METADATA_* */
	uint64_t xsk_features;	  /* NETDEV_XSK_FLAGS_* */
	uint32_t xdp_zc_max_segs; /* 1: zero-copy frames are single buffers */
};

/*
 * A reply to CTRL_CMD_GETFAMILY for family `name`: its id in *id. 0, the
 * kernel's -errno (-ENOENT: no such family on this kernel), -EBADMSG for
 * bytes that are not a well-formed answer about `name`.
 */
int ferry_genl_family_parse(const void *buf, size_t len, const char *name,
			    uint16_t *id);

/*
 * A reply to NETDEV_CMD_DEV_GET from family id `family` (one message, or
 * a dump's several): the message about ifindex (0: the first) into *out.
 * 0, the kernel's -errno, -ENODEV when no message is about ifindex,
 * -EBADMSG for malformed bytes.
 */
int ferry_netdev_dev_parse(const void *buf, size_t len, uint16_t family,
			   uint32_t ifindex, struct ferry_netdev_feat *out);

/* The name of bit in set; NULL for a bit ferry has no name for. */
const char *ferry_netdev_feat_name(enum ferry_netdev_set set, uint64_t bit);

/*
 * mask as names joined by ',' ("basic,redirect,rx-sg"; "none" for 0; an
 * unnamed bit as its value, "0x80"), into buf; returns buf.
 */
const char *ferry_netdev_feat_fmt(enum ferry_netdev_set set, uint64_t mask,
				  char *buf, size_t len);

/* Asks this network namespace's kernel. 1 the netdev family is there, 0
 * it is not (Linux < 6.3), -errno when netlink failed. */
int ferry_netdev_family_probe(void);

/* Asks about ifindex: 0, -ENOENT (no netdev family), -ENODEV, -errno. */
int ferry_netdev_feat_get(int ifindex, struct ferry_netdev_feat *out);

#endif /* FERRY_NETDEV_FEAT_H */
