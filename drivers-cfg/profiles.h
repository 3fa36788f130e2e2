/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * profiles.h - what ferry knows about each NIC driver family, as data.
 * `port add` reads the interface's driver (ETHTOOL_GDRVINFO) and looks it
 * up here; unknown drivers get the generic profile. The profile decides
 * what `mode auto` and an omitted `xdp` keyword mean for the port.
 */
#ifndef FERRY_PROFILES_H
#define FERRY_PROFILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ferry_driver_profile {
	const char *driver; /* ETHTOOL_GDRVINFO driver name */
	bool native_xdp;    /* XDP in the driver (not generic/skb mode) */
	bool zerocopy;	    /* AF_XDP zero-copy */
	/* Multi-buffer frames (XDP_USE_SG) in zero-copy: the driver sets
	 * xdp_zc_max_segs above 1 (Linux 6.6: ice, i40e). Copy mode takes
	 * them on every driver; elsewhere a ZC socket binds without. */
	bool zc_multibuf;
	/*
	 * need_wakeup: a zero-copy driver sets the fill-ring flag only when
	 * it ran dry; in copy mode the kernel never sets it on the fill ring
	 * and always sets it on the TX ring (every TX batch needs a kick).
	 */
	bool wakeup_fill;
	bool wakeup_tx_always;
	/*
	 * The NAPI a zero-copy socket busy-polls (its RX queue's, the one
	 * SO_INCOMING_NAPI_ID names) also sends the socket's TX ring, so
	 * `busy-poll on` may add SO_PREFER_BUSY_POLL, under which sendto()
	 * no longer wakes the driver. False where TX has a NAPI of its own
	 * (virtio_net): there prefer leaves TX to the next TX interrupt.
	 */
	bool busy_poll_tx;
	/*
	 * The RX queues its XDP attach brings into use (a queue pair per
	 * CPU for XDP_TX, when the device has them) receive into AF_XDP
	 * sockets, but never send their TX rings (virtio_net's
	 * is_xdp_raw_buffer_queue): the workers transmit on other queues.
	 */
	bool xdp_queues_rx_only;
	uint16_t headroom;     /* XDP headroom the driver reserves */
	uint16_t ring_default; /* NIC descriptors per RX ring */
	uint16_t ring_max;
	uint16_t xdp_mtu_max;	/* largest MTU with a single-buffer XDP prog */
	bool ntuple;		/* flow steering rules (ethtool -N) */
	const char *queues_cmd; /* how queue counts are set */
	const char *quirk;	/* what trips people up */
	const char *ref;	/* where the quirk is written down */
};

/* Never NULL: falls back to the generic profile. */
const struct ferry_driver_profile *ferry_profile_lookup(const char *driver);
/* The whole table, generic default last. */
const struct ferry_driver_profile *ferry_profiles(size_t *n);
/* Driver of ifname via ETHTOOL_GDRVINFO; 0 or -errno. */
int ferry_driver_name(const char *ifname, char *buf, unsigned int len);

#endif /* FERRY_PROFILES_H */
