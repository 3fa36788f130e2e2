// SPDX-License-Identifier: BSD-2-Clause
/*
 * drvcaps.c - zero-copy and multi-buffer for one interface: the driver's
 * own report when the kernel has the netdev family, its profile when not.
 * `port add` decides `mode auto` and XDP_USE_SG from the result, `host
 * check` and `port show` print it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "drvcaps.h"

const char *ferry_caps_from_name(enum ferry_caps_from from)
{
	return from == FERRY_CAPS_KERNEL ? "kernel" : "profile";
}

static bool kernel_said(const struct ferry_driver_caps *c)
{
	return !c->kernel_err && (c->feat.have & FERRY_NDF_XDP_FEATURES);
}

void ferry_driver_caps_decide(const struct ferry_driver_profile *prof,
			      const struct ferry_netdev_feat *feat,
			      int kernel_err, struct ferry_driver_caps *c)
{
	char xdp[128];

	memset(c, 0, sizeof(*c));
	c->profile = prof;
	c->kernel_err = kernel_err;
	if (!kernel_err)
		c->feat = *feat;
	if (!kernel_said(c)) {
		/* No report: the profile, and the bind tries XDP_USE_SG. */
		c->zerocopy = prof->zerocopy;
		c->zc_multibuf = prof->zerocopy && prof->zc_multibuf;
		if (!c->zerocopy)
			snprintf(c->why_no_zc, sizeof(c->why_no_zc),
				 "profile %s has no zero-copy", prof->driver);
		return;
	}
	c->zerocopy_from = FERRY_CAPS_KERNEL;
	c->zc_multibuf_from = FERRY_CAPS_KERNEL;
	c->zerocopy = c->feat.xdp_features & NETDEV_XDP_ACT_XSK_ZEROCOPY;
	/*
	 * The kernel refuses XDP_USE_SG on a zero-copy bind unless the
	 * driver's xdp_zc_max_segs is above 1. It reports the value only for
	 * zero-copy drivers, and only since 6.6, the release that brought
	 * XDP_USE_SG: a zero-copy driver without it predates multi-buffer.
	 */
	c->zc_multibuf = c->zerocopy &&
			 (c->feat.have & FERRY_NDF_ZC_MAX_SEGS) &&
			 c->feat.xdp_zc_max_segs > 1;
	c->zc_sg_refused = c->zerocopy && !c->zc_multibuf;
	if (!c->zerocopy)
		snprintf(c->why_no_zc, sizeof(c->why_no_zc),
			 "the kernel reports no xsk-zerocopy (xdp-features %s)",
			 ferry_netdev_feat_fmt(FERRY_NDSET_XDP,
					       c->feat.xdp_features, xdp,
					       sizeof(xdp)));
}

void ferry_driver_caps_get(int ifindex, const struct ferry_driver_profile *prof,
			   struct ferry_driver_caps *c)
{
	struct ferry_netdev_feat feat;
	int err = ferry_netdev_feat_get(ifindex, &feat);

	ferry_driver_caps_decide(prof, &feat, err, c);
}

/* What the kernel's side of the answer was, in words. */
static const char *kernel_state(const struct ferry_driver_caps *c, char *buf,
				size_t len)
{
	if (kernel_said(c))
		snprintf(buf, len, "reported");
	else if (c->kernel_err == -ENOSYS)
		snprintf(buf, len, "not asked");
	else if (c->kernel_err == -ENOENT)
		snprintf(buf, len, "no netdev family (Linux < 6.3)");
	else if (c->kernel_err)
		snprintf(buf, len, "could not ask: %s",
			 strerror(-c->kernel_err));
	else
		snprintf(buf, len, "reported no xdp-features");
	return buf;
}

json_t *ferry_driver_caps_json(const struct ferry_driver_caps *c)
{
	char buf[160];
	json_t *o = json_object();

	if (!o)
		return NULL;
	json_object_set_new(o, "from",
			    json_string(kernel_said(c) ? "kernel" : "profile"));
	json_object_set_new(o, "kernel",
			    json_string(kernel_state(c, buf, sizeof(buf))));
	if (kernel_said(c)) {
		json_object_set_new(
			o, "xdp",
			json_string(ferry_netdev_feat_fmt(FERRY_NDSET_XDP,
							  c->feat.xdp_features,
							  buf, sizeof(buf))));
		if (c->feat.have & FERRY_NDF_ZC_MAX_SEGS)
			json_object_set_new(
				o, "xdp_zc_max_segs",
				json_integer(c->feat.xdp_zc_max_segs));
		if (c->feat.have & FERRY_NDF_RX_METADATA)
			json_object_set_new(o, "rx_metadata",
					    json_string(ferry_netdev_feat_fmt(
						    FERRY_NDSET_RX_META,
						    c->feat.xdp_rx_metadata,
						    buf, sizeof(buf))));
		if (c->feat.have & FERRY_NDF_XSK_FEATURES)
			json_object_set_new(
				o, "xsk",
				json_string(ferry_netdev_feat_fmt(
					FERRY_NDSET_XSK, c->feat.xsk_features,
					buf, sizeof(buf))));
	}
	json_object_set_new(o, "zerocopy", json_boolean(c->zerocopy));
	json_object_set_new(
		o, "zerocopy_from",
		json_string(ferry_caps_from_name(c->zerocopy_from)));
	json_object_set_new(o, "zc_multibuf", json_boolean(c->zc_multibuf));
	json_object_set_new(
		o, "zc_multibuf_from",
		json_string(ferry_caps_from_name(c->zc_multibuf_from)));
	return o;
}

/* "(kernel)", "(profile veth)", or with the profile's other opinion. */
static void source(const struct ferry_driver_caps *c, enum ferry_caps_from from,
		   bool kernel_v, bool profile_v, char *buf, size_t len)
{
	if (from == FERRY_CAPS_PROFILE)
		snprintf(buf, len, "(profile %s)", c->profile->driver);
	else if (kernel_v == profile_v)
		snprintf(buf, len, "(kernel)");
	else
		snprintf(buf, len, "(kernel; profile %s says %s)",
			 c->profile->driver, profile_v ? "yes" : "no");
}

const char *ferry_driver_caps_fmt(const struct ferry_driver_caps *c, char *buf,
				  size_t len)
{
	const struct ferry_driver_profile *p = c->profile;
	char xdp[128], meta[64], xsk[80], segs[48] = "", zc_src[80], sg_src[80],
					  state[96];
	FILE *out;

	/* fmemopen writes its NUL only where there is room: keep one. */
	buf[len - 1] = '\0';
	out = fmemopen(buf, len - 1, "w");
	if (!out) {
		snprintf(buf, len, "out of memory");
		return buf;
	}
	if (kernel_said(c)) {
		if (c->feat.have & FERRY_NDF_ZC_MAX_SEGS)
			snprintf(segs, sizeof(segs), ", xdp-zc-max-segs %u",
				 c->feat.xdp_zc_max_segs);
		fprintf(out,
			"kernel: xdp-features %s%s; rx-metadata %s; "
			"xsk-features %s. ",
			ferry_netdev_feat_fmt(FERRY_NDSET_XDP,
					      c->feat.xdp_features, xdp,
					      sizeof(xdp)),
			segs,
			c->feat.have & FERRY_NDF_RX_METADATA
				? ferry_netdev_feat_fmt(FERRY_NDSET_RX_META,
							c->feat.xdp_rx_metadata,
							meta, sizeof(meta))
				: "-",
			c->feat.have & FERRY_NDF_XSK_FEATURES
				? ferry_netdev_feat_fmt(FERRY_NDSET_XSK,
							c->feat.xsk_features,
							xsk, sizeof(xsk))
				: "-");
	} else {
		fprintf(out, "kernel: %s. ",
			kernel_state(c, state, sizeof(state)));
	}
	source(c, c->zerocopy_from, c->zerocopy, p->zerocopy, zc_src,
	       sizeof(zc_src));
	source(c, c->zc_multibuf_from, c->zc_multibuf,
	       p->zerocopy && p->zc_multibuf, sg_src, sizeof(sg_src));
	fprintf(out, "zero-copy: %s %s; multi-buffer: zero-copy %s %s",
		c->zerocopy ? "yes" : "no", zc_src,
		c->zc_multibuf ? "yes" : "no", sg_src);
	if (kernel_said(c))
		fprintf(out, ", native XDP rx-sg %s (kernel)",
			c->feat.xdp_features & NETDEV_XDP_ACT_RX_SG ? "yes"
								    : "no");
	fprintf(out, ", copy mode yes on Linux 6.6+");
	fclose(out);
	return buf;
}
