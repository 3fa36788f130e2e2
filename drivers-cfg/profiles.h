/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * profiles.h - what ferry knows about each NIC driver family, as data.
 * `port add` reads the interface's driver (ETHTOOL_GDRVINFO) and looks it
 * up here; unknown drivers get the generic profile.
 */
#ifndef FERRY_PROFILES_H
#define FERRY_PROFILES_H

#include <stdbool.h>
#include <stdint.h>

struct ferry_driver_profile {
	const char *driver;    /* ETHTOOL_GDRVINFO driver name */
	bool native_xdp;       /* XDP in the driver (not generic/skb mode) */
	bool zerocopy;	       /* AF_XDP zero-copy */
	bool wakeup_fill;      /* sets need_wakeup on the fill ring */
	uint16_t headroom;     /* XDP headroom the driver reserves */
	uint16_t ring_default; /* descriptors */
	uint16_t ring_max;
	uint16_t xdp_mtu_max;	/* largest MTU with an XDP program attached */
	bool ntuple;		/* flow steering rules (ethtool -N) */
	const char *queues_cmd; /* how queue counts are set */
	const char *quirk;	/* what trips people up, with a reference */
};

/* Never NULL: falls back to the generic profile. */
const struct ferry_driver_profile *ferry_profile_lookup(const char *driver);
/* Driver of ifname via ETHTOOL_GDRVINFO; 0 or -errno. */
int ferry_driver_name(const char *ifname, char *buf, unsigned int len);

#endif /* FERRY_PROFILES_H */
