// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_netdev_feat - the netdev family's replies, read by the pure parsers
 * of drivers-cfg/netdev_feat.c: replies recorded from veths and lo on this
 * kernel (tests/unit/data/record_netdev.py), hand-made ones for zero-copy
 * drivers and older kernels, the -ENOENT of a kernel without the family,
 * and every truncation of them. Then what drvcaps.c decides from each,
 * against the driver profiles, and how it says so. No root needed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drvcaps.h"
#include "netdev_feat.h"
#include "data/netdev_replies.h"

#define ACT(x) NETDEV_XDP_ACT_##x

/* A reply about ifindex, read as the real query reads it. */
static struct ferry_netdev_feat parse_ok(const uint8_t *buf, size_t len,
					 uint32_t ifindex)
{
	struct ferry_netdev_feat f;
	int rc = ferry_netdev_dev_parse(buf, len, REC_FAMILY, ifindex, &f);

	if (rc)
		print_error("parse of ifindex %u: %d (%s)\n", ifindex, rc,
			    strerror(-rc));
	assert_int_equal(rc, 0);
	assert_int_equal(f.ifindex, ifindex);
	return f;
}

static void expect_str(const char *what, const char *want, const char *saw)
{
	if (strcmp(want, saw)) {
		print_error("%s: expected '%s', saw '%s'\n", what, want, saw);
		fail();
	}
}

static void expect_in(const char *what, const char *part, const char *saw)
{
	if (!strstr(saw, part)) {
		print_error("%s: expected '%s' in '%s'\n", what, part, saw);
		fail();
	}
}

static void expect_set(enum ferry_netdev_set set, uint64_t mask,
		       const char *want)
{
	char buf[160];

	expect_str("names", want,
		   ferry_netdev_feat_fmt(set, mask, buf, sizeof(buf)));
}

/* ------------------------------------------------------ family lookup */

static void test_family_recorded(void **state)
{
	uint16_t id = 0;

	(void)state;
	assert_int_equal(ferry_genl_family_parse(rec_family, sizeof(rec_family),
						 "netdev", &id),
			 0);
	assert_int_equal(id, REC_FAMILY);
	/* An answer about another family is not taken for this one. */
	assert_int_equal(ferry_genl_family_parse(rec_family, sizeof(rec_family),
						 "nl80211", &id),
			 -EBADMSG);
}

static void test_kernel_without_family(void **state)
{
	uint16_t id = 0xffff;

	(void)state;
	assert_int_equal(ferry_genl_family_parse(rec_no_family,
						 sizeof(rec_no_family),
						 "netdev", &id),
			 -ENOENT);
	assert_int_equal(id, 0xffff);
}

/* ---------------------------------------------------------- DEV_GET */

static void test_veth(void **state)
{
	struct ferry_netdev_feat f =
		parse_ok(rec_veth, sizeof(rec_veth), REC_IFINDEX_VA);

	(void)state;
	assert_int_equal(f.xdp_features,
			 ACT(BASIC) | ACT(REDIRECT) | ACT(RX_SG));
	assert_int_equal(f.have, FERRY_NDF_XDP_FEATURES |
					 FERRY_NDF_RX_METADATA |
					 FERRY_NDF_XSK_FEATURES);
	expect_set(FERRY_NDSET_XDP, f.xdp_features, "basic,redirect,rx-sg");
	expect_set(FERRY_NDSET_RX_META, f.xdp_rx_metadata,
		   "timestamp,hash,vlan-tag");
	expect_set(FERRY_NDSET_XSK, f.xsk_features, "none");
}

/* GRO on the peer is what makes a veth take redirected frames. */
static void test_veth_peer_gro(void **state)
{
	struct ferry_netdev_feat f =
		parse_ok(rec_veth_gro, sizeof(rec_veth_gro), REC_IFINDEX_VA);

	(void)state;
	expect_set(FERRY_NDSET_XDP, f.xdp_features,
		   "basic,redirect,ndo-xmit,rx-sg,ndo-xmit-sg");
}

static void test_lo(void **state)
{
	struct ferry_netdev_feat f =
		parse_ok(rec_lo, sizeof(rec_lo), REC_IFINDEX_LO);

	(void)state;
	assert_true(f.have & FERRY_NDF_XDP_FEATURES);
	expect_set(FERRY_NDSET_XDP, f.xdp_features, "none");
}

static void test_dump(void **state)
{
	const uint32_t idx[] = {REC_IFINDEX_LO, REC_IFINDEX_VA, REC_IFINDEX_VB};
	struct ferry_netdev_feat f;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(idx) / sizeof(idx[0]); i++) {
		f = parse_ok(rec_dump, sizeof(rec_dump), idx[i]);
		assert_true(f.have & FERRY_NDF_XDP_FEATURES);
	}
	f = parse_ok(rec_dump, sizeof(rec_dump), REC_IFINDEX_VA);
	assert_true(f.xdp_features & ACT(RX_SG));
	/* ifindex 0: the first the kernel sent */
	assert_int_equal(ferry_netdev_dev_parse(rec_dump, sizeof(rec_dump),
						REC_FAMILY, 0, &f),
			 0);
	assert_int_equal(f.ifindex, REC_IFINDEX_LO);
	assert_int_equal(ferry_netdev_dev_parse(rec_dump, sizeof(rec_dump),
						REC_FAMILY, 42, &f),
			 -ENODEV);
}

static void test_errors(void **state)
{
	struct ferry_netdev_feat f;

	(void)state;
	/* the kernel's own answer for an ifindex it does not have */
	assert_int_equal(ferry_netdev_dev_parse(rec_nodev, sizeof(rec_nodev),
						REC_FAMILY, 999, &f),
			 -ENODEV);
	/* a reply from another family is no answer */
	assert_int_equal(ferry_netdev_dev_parse(rec_veth, sizeof(rec_veth),
						REC_FAMILY + 1, REC_IFINDEX_VA,
						&f),
			 -EBADMSG);
}

static void test_zero_copy_drivers(void **state)
{
	struct ferry_netdev_feat v =
		parse_ok(mk_virtio_zc, sizeof(mk_virtio_zc), REC_IFINDEX_ZC);
	struct ferry_netdev_feat ice =
		parse_ok(mk_ice_zc, sizeof(mk_ice_zc), REC_IFINDEX_ZC);
	struct ferry_netdev_feat old =
		parse_ok(mk_old_zc, sizeof(mk_old_zc), REC_IFINDEX_ZC);

	(void)state;
	assert_true(v.xdp_features & ACT(XSK_ZEROCOPY));
	assert_true(v.have & FERRY_NDF_ZC_MAX_SEGS);
	assert_int_equal(v.xdp_zc_max_segs, 1);
	expect_set(FERRY_NDSET_RX_META, v.xdp_rx_metadata, "hash");
	assert_int_equal(ice.xdp_zc_max_segs, 8);
	expect_set(FERRY_NDSET_XSK, ice.xsk_features,
		   "tx-timestamp,tx-checksum");
	/* 6.3-6.5: the set of actions and nothing more */
	assert_int_equal(old.have, FERRY_NDF_XDP_FEATURES);
	expect_set(FERRY_NDSET_XDP, old.xdp_features,
		   "basic,redirect,ndo-xmit,xsk-zerocopy");
}

static void test_later_kernel(void **state)
{
	struct ferry_netdev_feat f = parse_ok(
		mk_unknown_bit, sizeof(mk_unknown_bit), REC_IFINDEX_ZC);

	(void)state;
	expect_set(FERRY_NDSET_XDP, f.xdp_features, "basic,redirect,0x80");
	assert_null(ferry_netdev_feat_name(FERRY_NDSET_XDP, 0x80));
	expect_str("name of xsk-zerocopy", "xsk-zerocopy",
		   ferry_netdev_feat_name(FERRY_NDSET_XDP, ACT(XSK_ZEROCOPY)));
}

/* Every reply cut short, at every length: an error, never a reading. */
static void test_truncated(void **state)
{
	static const struct {
		const uint8_t *buf;
		size_t len;
	} replies[] = {
		{rec_veth, sizeof(rec_veth)},
		{rec_dump, sizeof(rec_dump)},
		{mk_ice_zc, sizeof(mk_ice_zc)},
		{rec_family, sizeof(rec_family)},
	};
	struct ferry_netdev_feat f;
	uint16_t id;
	size_t r, n;

	(void)state;
	for (r = 0; r < sizeof(replies) / sizeof(replies[0]); r++) {
		for (n = 0; n < replies[r].len; n++) {
			/* A copy of exactly n bytes, so a read past them
			 * is a bug ASan sees. */
			uint8_t *cut = malloc(n ? n : 1);

			assert_non_null(cut);
			memcpy(cut, replies[r].buf, n);
			if (replies[r].buf == rec_family)
				assert_true(ferry_genl_family_parse(
						    cut, n, "netdev", &id) < 0);
			else if (replies[r].buf != rec_dump ||
				 n < 16) /* a dump's first whole message */
				assert_true(ferry_netdev_dev_parse(cut, n,
								   REC_FAMILY,
								   0, &f) < 0);
			else
				(void)ferry_netdev_dev_parse(
					cut, n, REC_FAMILY, REC_IFINDEX_VB, &f);
			free(cut);
		}
	}
}

/* An attribute shorter than its type says is refused. */
static void test_bad_attribute(void **state)
{
	uint8_t bad[sizeof(rec_veth)];
	struct ferry_netdev_feat f;

	(void)state;
	memcpy(bad, rec_veth, sizeof(bad));
	/* nlmsghdr 16 + genlmsghdr 4: the first attribute, ifindex (u32);
	 * say its payload is 2 bytes */
	assert_int_equal(bad[22], NETDEV_A_DEV_IFINDEX);
	bad[20] = 6;
	assert_int_equal(ferry_netdev_dev_parse(bad, sizeof(bad), REC_FAMILY,
						REC_IFINDEX_VA, &f),
			 -EBADMSG);
}

/* ---------------------------------------------------------- deciding */

static struct ferry_driver_caps decide(const char *driver, const uint8_t *buf,
				       size_t len, uint32_t ifindex)
{
	struct ferry_driver_caps c;
	struct ferry_netdev_feat f = {0};
	int err = buf ? 0 : -ENOENT;

	if (buf)
		f = parse_ok(buf, len, ifindex);
	ferry_driver_caps_decide(ferry_profile_lookup(driver), &f, err, &c);
	return c;
}

static void test_decide_veth(void **state)
{
	struct ferry_driver_caps c =
		decide("veth", rec_veth, sizeof(rec_veth), REC_IFINDEX_VA);
	char line[512];

	(void)state;
	assert_false(c.zerocopy);
	assert_int_equal(c.zerocopy_from, FERRY_CAPS_KERNEL);
	assert_false(c.zc_multibuf);
	assert_false(c.zc_sg_refused);
	/* the driver's reason, as port add says it */
	expect_str("why no zero-copy",
		   "the kernel reports no xsk-zerocopy (xdp-features "
		   "basic,redirect,rx-sg)",
		   c.why_no_zc);
	ferry_driver_caps_fmt(&c, line, sizeof(line));
	expect_in("host check line", "xdp-features basic,redirect,rx-sg", line);
	expect_in("host check line", "zero-copy: no (kernel)", line);
	expect_in("host check line", "native XDP rx-sg yes (kernel)", line);
}

static void test_decide_zero_copy(void **state)
{
	struct ferry_driver_caps v =
		decide("virtio_net", mk_virtio_zc, sizeof(mk_virtio_zc),
		       REC_IFINDEX_ZC);
	struct ferry_driver_caps ice =
		decide("ice", mk_ice_zc, sizeof(mk_ice_zc), REC_IFINDEX_ZC);
	struct ferry_driver_caps old =
		decide("ice", mk_old_zc, sizeof(mk_old_zc), REC_IFINDEX_ZC);
	char line[512];

	(void)state;
	assert_true(v.zerocopy);
	assert_string_equal(v.why_no_zc, "");
	/* xdp-zc-max-segs 1: XDP_USE_SG would be refused, so not asked */
	assert_false(v.zc_multibuf);
	assert_true(v.zc_sg_refused);
	assert_true(ice.zerocopy);
	assert_true(ice.zc_multibuf);
	assert_false(ice.zc_sg_refused);
	ferry_driver_caps_fmt(&ice, line, sizeof(line));
	expect_in("ice line", "xdp-zc-max-segs 8", line);
	expect_in("ice line", "multi-buffer: zero-copy yes (kernel)", line);
	/* before 6.6 there is no XDP_USE_SG, whatever the profile hopes */
	assert_true(old.zerocopy);
	assert_false(old.zc_multibuf);
	assert_true(old.zc_sg_refused);
	ferry_driver_caps_fmt(&old, line, sizeof(line));
	expect_in("old kernel line",
		  "zero-copy no (kernel; profile ice says yes)", line);
	expect_in("old kernel line", "rx-metadata -", line);
}

/* The kernel's answer wins over a profile that says otherwise. */
static void test_kernel_over_profile(void **state)
{
	struct ferry_driver_caps b =
		decide("bnxt_en", mk_ice_zc, sizeof(mk_ice_zc), REC_IFINDEX_ZC);
	char line[512];

	(void)state;
	assert_true(b.zerocopy);
	assert_int_equal(b.zerocopy_from, FERRY_CAPS_KERNEL);
	ferry_driver_caps_fmt(&b, line, sizeof(line));
	expect_in("bnxt line",
		  "zero-copy: yes (kernel; profile bnxt_en says no)", line);
}

/* No family: the profiles, as before the kernel could be asked. */
static void test_profile_fallback(void **state)
{
	struct ferry_driver_caps veth = decide("veth", NULL, 0, 0);
	struct ferry_driver_caps mlx = decide("mlx5_core", NULL, 0, 0);
	struct ferry_driver_caps ice = decide("ice", NULL, 0, 0);
	char line[512];

	(void)state;
	assert_false(veth.zerocopy);
	assert_int_equal(veth.zerocopy_from, FERRY_CAPS_PROFILE);
	expect_str("why", "profile veth has no zero-copy", veth.why_no_zc);
	ferry_driver_caps_fmt(&veth, line, sizeof(line));
	expect_in("veth line", "kernel: no netdev family (Linux < 6.3)", line);
	expect_in("veth line", "zero-copy: no (profile veth)", line);
	assert_true(mlx.zerocopy);
	assert_false(mlx.zc_multibuf);
	/* the bind finds out by trying, as it always did */
	assert_false(mlx.zc_sg_refused);
	assert_true(ice.zc_multibuf);
	assert_int_equal(ice.zc_multibuf_from, FERRY_CAPS_PROFILE);
}

static void test_caps_json(void **state)
{
	struct ferry_driver_caps c =
		decide("veth", rec_veth, sizeof(rec_veth), REC_IFINDEX_VA);
	struct ferry_driver_caps p = decide("veth", NULL, 0, 0);
	json_t *o = ferry_driver_caps_json(&c), *q = ferry_driver_caps_json(&p);

	(void)state;
	assert_non_null(o);
	expect_str("from", "kernel",
		   json_string_value(json_object_get(o, "from")));
	expect_str("xdp", "basic,redirect,rx-sg",
		   json_string_value(json_object_get(o, "xdp")));
	expect_str("rx_metadata", "timestamp,hash,vlan-tag",
		   json_string_value(json_object_get(o, "rx_metadata")));
	assert_true(json_is_false(json_object_get(o, "zerocopy")));
	expect_str("zerocopy_from", "kernel",
		   json_string_value(json_object_get(o, "zerocopy_from")));
	/* sent only with xsk-zerocopy */
	assert_null(json_object_get(o, "xdp_zc_max_segs"));
	expect_str("from", "profile",
		   json_string_value(json_object_get(q, "from")));
	expect_str("kernel", "no netdev family (Linux < 6.3)",
		   json_string_value(json_object_get(q, "kernel")));
	assert_null(json_object_get(q, "xdp"));
	json_decref(o);
	json_decref(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_family_recorded),
		cmocka_unit_test(test_kernel_without_family),
		cmocka_unit_test(test_veth),
		cmocka_unit_test(test_veth_peer_gro),
		cmocka_unit_test(test_lo),
		cmocka_unit_test(test_dump),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_zero_copy_drivers),
		cmocka_unit_test(test_later_kernel),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_bad_attribute),
		cmocka_unit_test(test_decide_veth),
		cmocka_unit_test(test_decide_zero_copy),
		cmocka_unit_test(test_kernel_over_profile),
		cmocka_unit_test(test_profile_fallback),
		cmocka_unit_test(test_caps_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
