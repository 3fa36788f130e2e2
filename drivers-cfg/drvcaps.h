/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * drvcaps.h - what an interface can do for ferry, asked of the driver
 * first (the netdev family, netdev_feat.h) and taken from its profile
 * (profiles.h) where the kernel cannot say: on kernels without the
 * family (before 6.3), or for what the family does not report. Each
 * answer says where it came from, for `host check` and `port show`.
 */
#ifndef FERRY_DRVCAPS_H
#define FERRY_DRVCAPS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "netdev_feat.h"
#include "profiles.h"

enum ferry_caps_from {
	FERRY_CAPS_PROFILE,
	FERRY_CAPS_KERNEL,
};

struct ferry_driver_caps {
	const struct ferry_driver_profile *profile;
	/* 0: feat holds the kernel's report; -ENOENT: no netdev family
	 * (Linux < 6.3); another -errno: the kernel could not be asked */
	int kernel_err;
	struct ferry_netdev_feat feat;
	bool zerocopy; /* an AF_XDP zero-copy bind can work */
	enum ferry_caps_from zerocopy_from;
	bool zc_multibuf; /* zero-copy sockets take XDP_USE_SG */
	enum ferry_caps_from zc_multibuf_from;
	/* The kernel says a zero-copy bind with XDP_USE_SG would be
	 * refused: bind without it. From a profile this stays false and the
	 * bind finds out by trying. */
	bool zc_sg_refused;
	char why_no_zc[160]; /* "" when zerocopy */
};

/* Pure: the profile and what the kernel said (feat read only when
 * kernel_err is 0) into *c. */
void ferry_driver_caps_decide(const struct ferry_driver_profile *prof,
			      const struct ferry_netdev_feat *feat,
			      int kernel_err, struct ferry_driver_caps *c);

/* Asks the kernel about ifindex, then decides. */
void ferry_driver_caps_get(int ifindex, const struct ferry_driver_profile *prof,
			   struct ferry_driver_caps *c);

const char *ferry_caps_from_name(enum ferry_caps_from from);

/* For `port show`: {from, kernel, xdp, xdp_zc_max_segs, rx_metadata, xsk,
 * zerocopy, zerocopy_from, zc_multibuf, zc_multibuf_from}. */
json_t *ferry_driver_caps_json(const struct ferry_driver_caps *c);

/* For `host check`: one line, each answer with its source; returns buf. */
const char *ferry_driver_caps_fmt(const struct ferry_driver_caps *c, char *buf,
				  size_t len);

#endif /* FERRY_DRVCAPS_H */
