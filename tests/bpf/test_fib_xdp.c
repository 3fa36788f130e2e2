// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_fib_xdp - the route app's kernel path in the classifier
 * (bpf/ferry_fib.bpf.h), through the daemon's skeleton and BPF_PROG_TEST_RUN:
 * a frame the kernel's FIB resolves comes out rewritten (TTL / hop limit
 * down by one, the IPv4 checksum equal to a full recompute, MACs from the
 * neighbour and the egress) with verdict XDP_REDIRECT; every exception
 * comes out untouched on the way to the worker (here XDP_PASS: no socket
 * in the XSKMAP), counted by why.
 *
 * bpf_fib_lookup reads the FIB of the program's network namespace, so the
 * test makes its own (unshare), with a veth as the egress, a permanent
 * neighbour on it and lo's forwarding on: nothing of the host is touched.
 * Needs root; skips without it, fails under CI=true.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ferry_abi.h"
#include "ferry_xdp.skel.h"
#include "xdp_env.h"

#define XDP_PASS_  2
#define XDP_REDIR_ 4

static const uint8_t nb_mac[6] = {0x02, 0, 0, 0, 0, 0x02};

struct env {
	struct ferry_xdp_bpf *skel;
	int ncpu;
	int ifindex; /* the egress veth */
	uint8_t if_mac[6];
};

static int sh(const char *cmd)
{
	int rc = system(cmd);

	if (rc)
		fprintf(stderr, "'%s' failed (%d)\n", cmd, rc);
	return rc;
}

static int knob(const char *path, const char *v)
{
	FILE *fp = fopen(path, "w");

	if (!fp)
		return -errno;
	fputs(v, fp);
	return fclose(fp) ? -errno : 0;
}

static int lo_forwarding(int on)
{
	const char *v = on ? "1" : "0";

	if (knob("/proc/sys/net/ipv4/conf/lo/forwarding", v))
		return -1;
	return knob("/proc/sys/net/ipv6/conf/lo/forwarding", v);
}

/* Its own network namespace: a veth egress with a neighbour behind it. */
static int net_setup(struct env *e)
{
	FILE *fp;
	unsigned m[6];
	int i;

	if (unshare(CLONE_NEWNET))
		return -1;
	if (sh("ip link set lo up && "
	       "ip link add fxa type veth peer name fxb && "
	       "ip link set fxa up && ip link set fxb up && "
	       "ip addr add 10.9.0.1/24 dev fxa && "
	       "ip addr add fd09::1/64 dev fxa nodad && "
	       "ip neigh replace 10.9.0.2 lladdr 02:00:00:00:00:02 dev fxa "
	       "nud permanent && "
	       "ip neigh replace fd09::2 lladdr 02:00:00:00:00:02 dev fxa "
	       "nud permanent") ||
	    lo_forwarding(1))
		return -1;
	e->ifindex = (int)if_nametoindex("fxa");
	fp = fopen("/sys/class/net/fxa/address", "r");
	if (!fp || fscanf(fp, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3],
			  &m[4], &m[5]) != 6) {
		if (fp)
			fclose(fp);
		/* /sys is the old namespace's: ask ip instead */
		fp = popen("ip -br link show fxa | awk '{print $3}'", "r");
		if (!fp || fscanf(fp, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2],
				  &m[3], &m[4], &m[5]) != 6) {
			if (fp)
				pclose(fp);
			return -1;
		}
		pclose(fp);
	} else {
		fclose(fp);
	}
	for (i = 0; i < 6; i++)
		e->if_mac[i] = (uint8_t)m[i];
	return e->ifindex > 0 ? 0 : -1;
}

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));

	if (!e)
		return -1;
	e->ncpu = libbpf_num_possible_cpus();
	if (net_setup(e)) {
		fprintf(stderr, "cannot make a network namespace%s\n",
			xdp_env_ci() ? "" : ": skipping, needs root");
		*state = e;
		return 0;
	}
	e->skel = xdp_env_load();
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	ferry_xdp_bpf__destroy(e->skel);
	free(e);
	return 0; /* the namespace goes with the process */
}

static struct env *env_or_skip(void **state)
{
	struct env *e = *state;

	xdp_env_require(e->skel);
	return e;
}

/* A route port on the kernel path, with fxa as its one egress (slot 3). */
static void route_port(struct env *e, bool egress)
{
	struct ferry_xdp_cfg cfg = {
		.default_action = FERRY_ACT_XSK,
		.pass_arp_ndp = 1,
		.route_host = 1,
		.kernel_fwd = FERRY_KFWD_FIB,
	};
	uint32_t key = 0, ifx = (uint32_t)e->ifindex, slot = 3;
	struct bpf_devmap_val dv = {.ifindex = ifx};
	int fd = bpf_map__fd(e->skel->maps.ferry_fib_egress);

	assert_int_equal(
		bpf_map_update_elem(bpf_map__fd(e->skel->maps.ferry_cfg), &key,
				    &cfg, 0),
		0);
	assert_int_equal(
		bpf_map_update_elem(bpf_map__fd(e->skel->maps.ferry_fib_dev),
				    &ifx, &dv, 0),
		0);
	if (egress)
		assert_int_equal(bpf_map_update_elem(fd, &ifx, &slot, 0), 0);
	else
		bpf_map_delete_elem(fd, &ifx);
}

static struct ferry_fib_ctr fib_get(struct env *e)
{
	struct ferry_fib_ctr v[e->ncpu], sum = {0};
	uint32_t key = 0;
	int i;

	assert_int_equal(
		bpf_map_lookup_elem(bpf_map__fd(e->skel->maps.ferry_fib_ctrs),
				    &key, v),
		0);
	for (i = 0; i < e->ncpu; i++) {
#define S(id) sum.id += v[i].id;
		FERRY_FIB_CTRS(S)
#undef S
	}
	return sum;
}

static uint64_t slot_packets(struct env *e, uint32_t slot)
{
	struct ferry_fib_tx_ctr v[e->ncpu];
	uint64_t n = 0;
	int i;

	assert_int_equal(
		bpf_map_lookup_elem(bpf_map__fd(e->skel->maps.ferry_fib_tx),
				    &slot, v),
		0);
	for (i = 0; i < e->ncpu; i++)
		n += v[i].packets;
	return n;
}

static uint16_t csum16(const uint8_t *p, size_t n)
{
	uint32_t s = 0;
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* Ethernet + IPv4 (no options) + 8 bytes of UDP header + payload. */
static size_t frame4(uint8_t *f, const char *dst, uint8_t ttl, size_t len)
{
	uint16_t tot = (uint16_t)(len - 14), c;

	memset(f, 0, len);
	memset(f, 0xaa, 6);
	memset(f + 6, 0xbb, 6);
	f[12] = 0x08;
	f[13] = 0x00;
	f[14] = 0x45;
	f[16] = (uint8_t)(tot >> 8);
	f[17] = (uint8_t)tot;
	f[20] = 0x40; /* DF */
	f[22] = ttl;
	f[23] = 17;
	inet_pton(AF_INET, "10.9.1.1", f + 26);
	inet_pton(AF_INET, dst, f + 30);
	c = csum16(f + 14, 20);
	f[24] = (uint8_t)(c >> 8);
	f[25] = (uint8_t)c;
	f[34] = 0x30;
	f[35] = 0x39; /* sport 12345 */
	f[36] = 0x00;
	f[37] = 0x35; /* dport 53 */
	f[38] = (uint8_t)((tot - 20) >> 8);
	f[39] = (uint8_t)(tot - 20);
	return len;
}

static size_t frame6(uint8_t *f, const char *dst, uint8_t hl, size_t len)
{
	uint16_t pl = (uint16_t)(len - 54);

	memset(f, 0, len);
	memset(f, 0xaa, 6);
	memset(f + 6, 0xbb, 6);
	f[12] = 0x86;
	f[13] = 0xdd;
	f[14] = 0x60;
	f[18] = (uint8_t)(pl >> 8);
	f[19] = (uint8_t)pl;
	f[20] = 17;
	f[21] = hl;
	inet_pton(AF_INET6, "fd09:1::1", f + 22);
	inet_pton(AF_INET6, dst, f + 38);
	f[54] = 0x30;
	f[55] = 0x39;
	f[57] = 0x35;
	f[58] = (uint8_t)(pl >> 8);
	f[59] = (uint8_t)pl;
	return len;
}

static int run(struct env *e, uint8_t *in, size_t len, uint8_t *out)
{
	LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = in,
		    .data_size_in = (uint32_t)len, .data_out = out,
		    .data_size_out = (uint32_t)len, .repeat = 1);

	assert_int_equal(bpf_prog_test_run_opts(
				 bpf_program__fd(e->skel->progs.ferry_xdp), &t),
			 0);
	assert_int_equal(t.data_size_out, len);
	return (int)t.retval;
}

static void test_ip4_rewritten(void **state)
{
	struct env *e = env_or_skip(state);
	uint8_t in[128], out[128];
	struct ferry_fib_ctr before, after;
	uint64_t slot_before = 0;
	size_t n = frame4(in, "10.9.0.2", 64, 100);

	route_port(e, true);
	before = fib_get(e);
	slot_before = slot_packets(e, 3);
	assert_int_equal(run(e, in, n, out), XDP_REDIR_);
	after = fib_get(e);
	assert_int_equal(after.fwd, before.fwd + 1);
	assert_int_equal(slot_packets(e, 3), slot_before + 1);
	assert_memory_equal(out, nb_mac, 6);
	assert_memory_equal(out + 6, e->if_mac, 6);
	assert_int_equal(out[22], 63);
	/* the incremental update equals a full recompute */
	assert_int_equal(csum16(out + 14, 20), 0);
	/* nothing else moved */
	assert_memory_equal(out + 12, in + 12, 10);
	assert_memory_equal(out + 23, in + 23, 1);
	assert_memory_equal(out + 26, in + 26, n - 26);
}

static void test_ip4_csum_edges(void **state)
{
	struct env *e = env_or_skip(state);
	uint8_t in[128], out[128];
	unsigned ttl;

	route_port(e, true);
	/* every TTL, so the checksum's carries and its 0xffff/0x0000 forms
	 * are walked */
	for (ttl = 2; ttl <= 255; ttl++) {
		size_t n = frame4(in, "10.9.0.2", (uint8_t)ttl, 60 + ttl % 7);

		assert_int_equal(run(e, in, n, out), XDP_REDIR_);
		assert_int_equal(out[22], ttl - 1);
		assert_int_equal(csum16(out + 14, 20), 0);
	}
}

static void test_ip6_rewritten(void **state)
{
	struct env *e = env_or_skip(state);
	uint8_t in[128], out[128];
	struct ferry_fib_ctr before = fib_get(e);
	size_t n = frame6(in, "fd09::2", 64, 100);

	route_port(e, true);
	assert_int_equal(run(e, in, n, out), XDP_REDIR_);
	assert_int_equal(fib_get(e).fwd, before.fwd + 1);
	assert_memory_equal(out, nb_mac, 6);
	assert_memory_equal(out + 6, e->if_mac, 6);
	assert_int_equal(out[21], 63);
	assert_memory_equal(out + 12, in + 12, 9);
	assert_memory_equal(out + 22, in + 22, n - 22);
}

/* To the worker, untouched (no socket here: XDP_PASS), counted as why. */
static void expect_worker(struct env *e, uint8_t *in, size_t n,
			  size_t field_off)
{
	uint8_t out[1600];
	struct ferry_fib_ctr before = fib_get(e), after;
	uint64_t b, a;

	assert_int_equal(run(e, in, n, out), XDP_PASS_);
	assert_memory_equal(out, in, n);
	after = fib_get(e);
	memcpy(&b, (const uint8_t *)&before + field_off, sizeof(b));
	memcpy(&a, (const uint8_t *)&after + field_off, sizeof(a));
	assert_int_equal(a, b + 1);
	assert_int_equal(after.fwd, before.fwd);
}

static void test_exceptions(void **state)
{
	struct env *e = env_or_skip(state);
	uint8_t in[1600];
	size_t n;

	route_port(e, true);
	n = frame4(in, "10.9.0.2", 1, 100);
	expect_worker(e, in, n, offsetof(struct ferry_fib_ctr, ttl));
	n = frame6(in, "fd09::2", 1, 100);
	expect_worker(e, in, n, offsetof(struct ferry_fib_ctr, ttl));
	/* no neighbour: the worker asks the kernel to resolve it */
	n = frame4(in, "10.9.0.3", 64, 100);
	expect_worker(e, in, n, offsetof(struct ferry_fib_ctr, no_neigh));
	/* no route */
	n = frame4(in, "192.0.2.1", 64, 100);
	expect_worker(e, in, n, offsetof(struct ferry_fib_ctr, no_route));
	/* a bad header checksum is the worker's to count */
	n = frame4(in, "10.9.0.2", 64, 100);
	in[24] ^= 0x5a;
	expect_worker(e, in, n, offsetof(struct ferry_fib_ctr, not_plain));
	/* IPv4 options: four NOPs after the header */
	n = frame4(in, "10.9.0.2", 64, 100);
	memmove(in + 38, in + 34, n - 34);
	memset(in + 34, 1, 4);
	n += 4;
	in[14] = 0x46;
	in[17] += 4;
	in[24] = in[25] = 0;
	in[24] = (uint8_t)(csum16(in + 14, 24) >> 8);
	in[25] = (uint8_t)csum16(in + 14, 24);
	expect_worker(e, in, n, offsetof(struct ferry_fib_ctr, not_plain));
	/* 802.1Q tagged (VLAN 100), and an 802.1ad outer tag: the worker's,
	 * counted as vlan */
	n = frame4(in, "10.9.0.2", 64, 100);
	memmove(in + 16, in + 12, n - 12);
	in[12] = 0x81;
	in[13] = 0x00;
	in[14] = 0x00;
	in[15] = 100;
	n += 4;
	expect_worker(e, in, n, offsetof(struct ferry_fib_ctr, vlan));
	in[12] = 0x88;
	in[13] = 0xa8;
	expect_worker(e, in, n, offsetof(struct ferry_fib_ctr, vlan));
	/* over the egress MTU: the helper's check, the ICMP error a worker's */
	assert_int_equal(sh("ip link set fxa mtu 1280"), 0);
	n = frame4(in, "10.9.0.2", 64, 1400);
	expect_worker(e, in, n, offsetof(struct ferry_fib_ctr, frag_needed));
	n = frame6(in, "fd09::2", 64, 1300); /* 1286 bytes of IPv6 > 1280 */
	expect_worker(e, in, n, offsetof(struct ferry_fib_ctr, frag_needed));
	assert_int_equal(sh("ip link set fxa mtu 1500"), 0);
	/* an egress that is not on the kernel path */
	route_port(e, false);
	n = frame4(in, "10.9.0.2", 64, 100);
	expect_worker(e, in, n,
		      offsetof(struct ferry_fib_ctr, egress_not_kernel));
	route_port(e, true);
	/* lo's forwarding off: the helper refuses (FWD_DISABLED) */
	assert_int_equal(lo_forwarding(0), 0);
	n = frame6(in, "fd09::2", 64, 100);
	expect_worker(e, in, n, offsetof(struct ferry_fib_ctr, fwd_disabled));
	assert_int_equal(lo_forwarding(1), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ip4_rewritten),
		cmocka_unit_test(test_ip4_csum_edges),
		cmocka_unit_test(test_ip6_rewritten),
		cmocka_unit_test(test_exceptions),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
