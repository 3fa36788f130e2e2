// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_xdp - the classifier itself (bpf/ferry_xdp.bpf.c, the object the
 * daemon loads, through its skeleton), run on canned frames with
 * BPF_PROG_TEST_RUN as the kernel's selftests/bpf/prog_tests/xdp*.c do:
 * each case builds a frame, sets the port's classifier config, runs the
 * program once and checks the verdict, the one reason counter that moved
 * (and its bytes), and where it matters the frame that came out.
 *
 * Two kinds of port: one with no app (ARP and NDP go to the kernel) and a
 * wire (xconnect/reflect: everything goes the way of the rules). The wire
 * cases use default action drop, so a frame that went "the way of the
 * rules" is told apart from one handed to the kernel by its verdict alone
 * (an XSKMAP redirect needs a real socket).
 *
 * Needs CAP_BPF and CAP_PERFMON (root). Without them the tests skip, except
 * under CI=true, where they fail: a CI run that cannot load the program
 * must not look green.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <netinet/in.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ferry_abi.h"
#include "ferry_csum.h"
#include "ferry_xdp.skel.h"
#include "xdp_env.h"

#define XDP_ABORTED_ 0
#define XDP_DROP_    1
#define XDP_PASS_    2
#define XDP_REDIR_   4

/* Jumbo frames: larger than one page, so the kernel hands the program a
 * multi-buffer frame (its linear part ends near 3.5 KB). */
#define JUMBO 9000

struct frame {
	uint8_t b[JUMBO + 64];
	size_t len;
};

struct env {
	struct ferry_xdp_bpf *skel;
	int ncpu;
};

/* ---- frame builder: big-endian writers and the usual headers ---- */

static void put(struct frame *f, const void *p, size_t n)
{
	assert_true(f->len + n <= sizeof(f->b));
	memcpy(f->b + f->len, p, n);
	f->len += n;
}

static void put8(struct frame *f, uint8_t v)
{
	put(f, &v, 1);
}

static void put16(struct frame *f, uint16_t v)
{
	v = htons(v);
	put(f, &v, 2);
}

static void put32(struct frame *f, uint32_t v)
{
	v = htonl(v);
	put(f, &v, 4);
}

static void set16(struct frame *f, size_t off, uint16_t v)
{
	f->b[off] = v >> 8;
	f->b[off + 1] = v & 0xff;
}

static uint16_t get16(const struct frame *f, size_t off)
{
	return (uint16_t)(f->b[off] << 8 | f->b[off + 1]);
}

static void eth(struct frame *f, const uint8_t *dst, uint16_t type)
{
	static const uint8_t src[6] = {2, 0, 0, 0, 0, 1};
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

	f->len = 0;
	put(f, dst ? dst : bcast, 6);
	put(f, src, 6);
	put16(f, type);
}

static void vlan(struct frame *f, uint16_t tpid_next_is, uint16_t vid)
{
	/* The previous ethertype field already says 802.1Q/AD. */
	put16(f, vid);
	put16(f, tpid_next_is);
}

static uint16_t ip_csum(const uint8_t *p, size_t n)
{
	return (uint16_t)~ferry_csum_fold(ferry_csum_bytes(p, n, 0));
}

/* IPv4 header with opt_words 32-bit words of options (NOPs). */
static size_t ip4(struct frame *f, uint8_t proto, uint16_t l4_len,
		  uint16_t frag, int opt_words)
{
	size_t at = f->len;
	int i;

	put8(f, (uint8_t)(0x40 | (5 + opt_words)));
	put8(f, 0);
	put16(f, (uint16_t)(20 + 4 * opt_words + l4_len));
	put16(f, 1);
	put16(f, frag);
	put8(f, 64);
	put8(f, proto);
	put16(f, 0);
	put32(f, 0x0a000001);
	put32(f, 0x0a000002);
	for (i = 0; i < 4 * opt_words; i++)
		put8(f, 1);
	set16(f, at + 10, ntohs(ip_csum(f->b + at, f->len - at)));
	return at;
}

static size_t ip6(struct frame *f, uint8_t nexthdr, uint16_t payload_len)
{
	static const uint8_t src[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0,
					0,    0, 0, 0, 0, 0, 0, 1};
	static const uint8_t dst[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0,
					0,    0, 0, 0, 0, 0, 0, 2};
	size_t at = f->len;

	put32(f, 0x60000000);
	put16(f, payload_len);
	put8(f, nexthdr);
	put8(f, 64);
	put(f, src, 16);
	put(f, dst, 16);
	return at;
}

/* UDP header plus n payload bytes (a counting pattern), checksum 0. */
static size_t udp(struct frame *f, size_t n)
{
	size_t at = f->len, i;

	put16(f, 40000);
	put16(f, 9000);
	put16(f, (uint16_t)(8 + n));
	put16(f, 0);
	for (i = 0; i < n; i++)
		put8(f, (uint8_t)(i * 7 + 3));
	return at;
}

static size_t tcp(struct frame *f, size_t n)
{
	size_t at = f->len, i;

	put16(f, 40000);
	put16(f, 5201);
	put32(f, 1);
	put32(f, 0);
	put8(f, 5 << 4);
	put8(f, 0x18);
	put16(f, 512);
	put16(f, 0);
	put16(f, 0);
	for (i = 0; i < n; i++)
		put8(f, (uint8_t)(i * 13 + 1));
	return at;
}

/* The pseudo-header sum of the frame's IP header at l3 (memory order). */
static uint64_t pseudo_of(const struct frame *f, size_t l3, size_t l4)
{
	uint32_t a[4], b[4];

	if ((f->b[l3] >> 4) == 4) {
		memcpy(a, f->b + l3 + 12, 4);
		memcpy(b, f->b + l3 + 16, 4);
		return ferry_csum_pseudo4(a[0], b[0], f->b[l3 + 9],
					  (uint32_t)(f->len - l4));
	}
	memcpy(a, f->b + l3 + 8, 16);
	memcpy(b, f->b + l3 + 24, 16);
	return ferry_csum_pseudo6(a, b, f->b[l3 + 6], (uint32_t)(f->len - l4));
}

/* Full (correct) checksum of the L4 segment at l4, field at l4 + field. */
static uint16_t l4_full(struct frame *f, size_t l3, size_t l4, size_t field)
{
	uint8_t proto = (f->b[l3] >> 4) == 4 ? f->b[l3 + 9] : f->b[l3 + 6];
	uint16_t c;

	set16(f, l4 + field, 0);
	c = ferry_csum_final(pseudo_of(f, l3, l4),
			     ferry_csum_bytes(f->b + l4, f->len - l4, 0),
			     proto);
	return ntohs(c);
}

/* What a sender with TX offload leaves: the folded pseudo-header sum. */
static uint16_t l4_partial(const struct frame *f, size_t l3, size_t l4)
{
	return ntohs(ferry_csum_fold(pseudo_of(f, l3, l4)));
}

/* ---- the program ---- */

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));

	if (!e)
		return -1;
	e->ncpu = libbpf_num_possible_cpus();
	e->skel = xdp_env_load();
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	ferry_xdp_bpf__destroy(e->skel);
	free(e);
	return 0;
}

/* Skips (or fails under CI) when the program could not be loaded. */
static struct env *env_or_skip(void **state)
{
	struct env *e = *state;

	xdp_env_require(e->skel);
	return e;
}

static void port_cfg(struct env *e, bool wire, uint8_t default_action,
		     uint32_t n_rules)
{
	struct ferry_xdp_cfg cfg = {
		.n_rules = n_rules,
		.default_action = default_action,
		.pass_arp_ndp = !wire,
	};
	uint32_t key = 0;

	assert_int_equal(
		bpf_map_update_elem(bpf_map__fd(e->skel->maps.ferry_cfg), &key,
				    &cfg, 0),
		0);
}

/* Sum over CPUs of reason r's counter. */
static struct ferry_verdict_ctr ctr_get(struct env *e, uint32_t r)
{
	struct ferry_verdict_ctr v[e->ncpu], sum = {0};
	int i;

	assert_int_equal(
		bpf_map_lookup_elem(bpf_map__fd(e->skel->maps.ferry_verdicts),
				    &r, v),
		0);
	for (i = 0; i < e->ncpu; i++) {
		sum.packets += v[i].packets;
		sum.bytes += v[i].bytes;
	}
	return sum;
}

static void ctrs_clear(struct env *e)
{
	struct ferry_verdict_ctr zero[e->ncpu];
	uint32_t r;

	memset(zero, 0, sizeof(zero));
	for (r = 0; r < FERRY_R__COUNT; r++)
		assert_int_equal(
			bpf_map_update_elem(
				bpf_map__fd(e->skel->maps.ferry_verdicts), &r,
				zero, 0),
			0);
}

static const char *reason_name(uint32_t r)
{
	static const char *const names[] = {
#define NAME(id, name) [FERRY_R_##id] = name,
		FERRY_REASONS(NAME)
#undef NAME
	};

	return r < FERRY_R__COUNT ? names[r] : "?";
}

/*
 * Runs the classifier on f (out, if not NULL, gets the frame it leaves)
 * and checks the verdict and that reason r, and only r, counted the
 * frame with all its bytes.
 */
static void run_expect(struct env *e, const struct frame *f, int verdict,
		       uint32_t r, struct frame *out)
{
	static struct frame scratch;
	struct frame *o = out ? out : &scratch;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = f->b,
		    .data_size_in = (uint32_t)f->len, .data_out = o->b,
		    .data_size_out = sizeof(o->b), .repeat = 1);
	struct ferry_verdict_ctr c;
	uint32_t i;
	int err;

	ctrs_clear(e);
	err = bpf_prog_test_run_opts(bpf_program__fd(e->skel->progs.ferry_xdp),
				     &opts);
	if (err)
		fail_msg("BPF_PROG_TEST_RUN: %s", strerror(errno));
	/* What comes out starts at data_meta: a CPU redirect leaves its tag
	 * in front of the frame. Keep the frame only. */
	assert_true(opts.data_size_out >= f->len);
	memmove(o->b, o->b + (opts.data_size_out - f->len), f->len);
	o->len = f->len;
	if ((int)opts.retval != verdict)
		fail_msg("verdict %u, expected %d (reason %s)", opts.retval,
			 verdict, reason_name(r));
	for (i = 0; i < FERRY_R__COUNT; i++) {
		c = ctr_get(e, i);
		if (i == r && (c.packets != 1 || c.bytes != f->len))
			fail_msg("%s: %llu frames %llu bytes, expected 1 and "
				 "%zu",
				 reason_name(i), (unsigned long long)c.packets,
				 (unsigned long long)c.bytes, f->len);
		if (i != r && c.packets)
			fail_msg("%s counted %llu frame(s), expected %s",
				 reason_name(i), (unsigned long long)c.packets,
				 reason_name(r));
	}
}

/* ---- frames ---- */

static void arp(struct frame *f)
{
	eth(f, NULL, 0x0806);
	put16(f, 1);
	put16(f, 0x0800);
	put8(f, 6);
	put8(f, 4);
	put16(f, 1);
	put(f, f->b + 6, 6);
	put32(f, 0x0a000001);
	put(f, (uint8_t[6]){0}, 6);
	put32(f, 0x0a000002);
	while (f->len < 60)
		put8(f, 0);
}

static void ndp_ns(struct frame *f)
{
	static const uint8_t mc[6] = {0x33, 0x33, 0xff, 0, 0, 2};

	eth(f, mc, 0x86dd);
	ip6(f, IPPROTO_ICMPV6, 24);
	put8(f, 135); /* neighbour solicitation */
	put8(f, 0);
	put16(f, 0);
	put32(f, 0);
	put32(f, 0xfd000000);
	put32(f, 0);
	put32(f, 0);
	put32(f, 2);
}

static void lldp(struct frame *f)
{
	static const uint8_t mc[6] = {0x01, 0x80, 0xc2, 0, 0, 0x0e};

	eth(f, mc, 0x88cc);
	put16(f, 0x0207); /* chassis id, 7 bytes: MAC */
	put8(f, 4);
	put(f, f->b + 6, 6);
	put16(f, 0x0403); /* port id, 3 bytes */
	put8(f, 7);
	put16(f, 0x7030);
	put16(f, 0x0602); /* ttl */
	put16(f, 120);
	put16(f, 0); /* end */
	while (f->len < 60)
		put8(f, 0);
}

static void udp4(struct frame *f, size_t payload)
{
	eth(f, NULL, 0x0800);
	ip4(f, IPPROTO_UDP, (uint16_t)(8 + payload), 0, 0);
	udp(f, payload);
}

/* ---- cases: no app (pass_arp_ndp) ---- */

static void test_plain_arp_to_kernel(void **state)
{
	struct env *e = env_or_skip(state);
	struct frame f;

	port_cfg(e, false, FERRY_ACT_XSK, 0);
	arp(&f);
	run_expect(e, &f, XDP_PASS_, FERRY_R_PASS_ARP, NULL);
}

static void test_plain_ndp_to_kernel(void **state)
{
	struct env *e = env_or_skip(state);
	struct frame f;

	port_cfg(e, false, FERRY_ACT_XSK, 0);
	ndp_ns(&f);
	run_expect(e, &f, XDP_PASS_, FERRY_R_PASS_NDP, NULL);
}

/* No socket in the XSKMAP: the XSK step hands the frame on as pass_no_xsk,
 * which shows the frame took the way to the socket, not ARP's. */
static void test_plain_lldp_to_xsk(void **state)
{
	struct env *e = env_or_skip(state);
	struct frame f;

	port_cfg(e, false, FERRY_ACT_XSK, 0);
	lldp(&f);
	run_expect(e, &f, XDP_PASS_, FERRY_R_PASS_NO_XSK, NULL);
}

/* ---- cases: route port (route_host) ---- */

/* Not IP: the kernel's (a bond's LACPDUs, LLDP), before a worker, which
 * could only drop it. */
static void test_route_not_ip_to_kernel(void **state)
{
	struct env *e = env_or_skip(state);
	struct ferry_xdp_cfg cfg = {.default_action = FERRY_ACT_XSK,
				    .pass_arp_ndp = 1,
				    .route_host = 1};
	uint32_t key = 0;
	struct frame f;

	assert_int_equal(
		bpf_map_update_elem(bpf_map__fd(e->skel->maps.ferry_cfg), &key,
				    &cfg, 0),
		0);
	/* an LACPDU: slow protocols, subtype 1, version 1 */
	eth(&f, (const uint8_t[6]){0x01, 0x80, 0xc2, 0, 0, 0x02}, 0x8809);
	put8(&f, 1);
	put8(&f, 1);
	while (f.len < 124)
		put8(&f, 0);
	run_expect(e, &f, XDP_PASS_, FERRY_R_PASS_NOT_IP, NULL);
	lldp(&f);
	run_expect(e, &f, XDP_PASS_, FERRY_R_PASS_NOT_IP, NULL);
	arp(&f);
	run_expect(e, &f, XDP_PASS_, FERRY_R_PASS_ARP, NULL);
}

/* ---- cases: wire (xconnect, reflect) ---- */

static void test_wire_arp(void **state)
{
	struct env *e = env_or_skip(state);
	struct frame f;

	port_cfg(e, true, FERRY_ACT_XSK, 0);
	arp(&f);
	run_expect(e, &f, XDP_PASS_, FERRY_R_PASS_NO_XSK, NULL);
	port_cfg(e, true, FERRY_ACT_DROP, 0);
	run_expect(e, &f, XDP_DROP_, FERRY_R_DROP_RULE, NULL);
}

static void test_wire_ndp(void **state)
{
	struct env *e = env_or_skip(state);
	struct frame f;

	port_cfg(e, true, FERRY_ACT_DROP, 0);
	ndp_ns(&f);
	run_expect(e, &f, XDP_DROP_, FERRY_R_DROP_RULE, NULL);
}

static void test_wire_lldp(void **state)
{
	struct env *e = env_or_skip(state);
	struct frame f;

	port_cfg(e, true, FERRY_ACT_DROP, 0);
	lldp(&f);
	run_expect(e, &f, XDP_DROP_, FERRY_R_DROP_RULE, NULL);
}

static void test_wire_other_ethertype(void **state)
{
	struct env *e = env_or_skip(state);
	struct frame f;

	port_cfg(e, true, FERRY_ACT_DROP, 0);
	eth(&f, NULL, 0x88b5); /* local experimental */
	while (f.len < 60)
		put8(&f, 0xab);
	run_expect(e, &f, XDP_DROP_, FERRY_R_DROP_RULE, NULL);
}

static void test_wire_vlan_qinq(void **state)
{
	struct env *e = env_or_skip(state);
	struct frame f;

	port_cfg(e, true, FERRY_ACT_DROP, 0);
	eth(&f, NULL, 0x8100);
	vlan(&f, 0x0800, 100);
	ip4(&f, IPPROTO_UDP, 8 + 18, 0, 0);
	udp(&f, 18);
	run_expect(e, &f, XDP_DROP_, FERRY_R_DROP_RULE, NULL);

	eth(&f, NULL, 0x88a8);
	vlan(&f, 0x8100, 10);
	vlan(&f, 0x0806, 20); /* ARP inside QinQ */
	put(&f, (uint8_t[28]){0, 1, 8, 0, 6, 4, 0, 1}, 28);
	while (f.len < 64)
		put8(&f, 0);
	run_expect(e, &f, XDP_DROP_, FERRY_R_DROP_RULE, NULL);
}

static void test_wire_ip4_options_and_fragments(void **state)
{
	struct env *e = env_or_skip(state);
	struct frame f;

	port_cfg(e, true, FERRY_ACT_DROP, 0);
	eth(&f, NULL, 0x0800);
	ip4(&f, IPPROTO_UDP, 8 + 30, 0, 3); /* 12 bytes of options */
	udp(&f, 30);
	run_expect(e, &f, XDP_DROP_, FERRY_R_DROP_RULE, NULL);

	/* First fragment (MF): the UDP length covers more than is here. */
	eth(&f, NULL, 0x0800);
	ip4(&f, IPPROTO_UDP, 8 + 40, 0x2000, 0);
	udp(&f, 40);
	set16(&f, 14 + 20 + 4, 8 + 1000);
	run_expect(e, &f, XDP_DROP_, FERRY_R_DROP_RULE, NULL);

	/* A later fragment: no L4 header at all. */
	eth(&f, NULL, 0x0800);
	ip4(&f, IPPROTO_UDP, 40, 0x0000 | 6, 0);
	while (f.len < 14 + 20 + 40)
		put8(&f, 0x5a);
	run_expect(e, &f, XDP_DROP_, FERRY_R_DROP_RULE, NULL);
}

/* Malformed frames are dropped and counted by reason on every port. */
static void test_malformed(void **state)
{
	struct env *e = env_or_skip(state);
	struct frame f;
	int wire;

	for (wire = 0; wire < 2; wire++) {
		port_cfg(e, wire, FERRY_ACT_XSK, 0);

		/* The kernel refuses a test frame shorter than an Ethernet
		 * header, so truncation starts at the tag. */
		eth(&f, NULL, 0x8100);
		put16(&f, 5);
		run_expect(e, &f, XDP_DROP_, FERRY_R_DROP_TRUNC_VLAN, NULL);

		eth(&f, NULL, 0x0800);
		put(&f, (uint8_t[10]){0x45}, 10);
		run_expect(e, &f, XDP_DROP_, FERRY_R_DROP_TRUNC_IP4, NULL);

		udp4(&f, 18);
		f.b[14] = 0x44; /* IHL 4: shorter than the fixed header */
		run_expect(e, &f, XDP_DROP_, FERRY_R_DROP_BAD_IHL, NULL);

		udp4(&f, 18);
		set16(&f, 14 + 2, 1400); /* total length past the frame */
		run_expect(e, &f, XDP_DROP_, FERRY_R_DROP_BAD_IP4_LEN, NULL);

		udp4(&f, 18);
		set16(&f, 14 + 20 + 4, 200); /* UDP length past IP's */
		run_expect(e, &f, XDP_DROP_, FERRY_R_DROP_BAD_L4_LEN, NULL);

		eth(&f, NULL, 0x8100);
		vlan(&f, 0x8100, 1);
		vlan(&f, 0x8100, 2);
		vlan(&f, 0x0800, 3); /* three tags: deeper than we parse */
		while (f.len < 64)
			put8(&f, 0);
		run_expect(e, &f, XDP_DROP_, FERRY_R_DROP_VLAN_DEPTH, NULL);
	}
}

/*
 * 9000 bytes: the kernel builds a multi-buffer frame (linear part about
 * 3.5 KB, the rest in fragments), which only an xdp.frags program gets.
 * Counted whole; the IP length is checked against the whole frame.
 */
static void test_multibuffer(void **state)
{
	struct env *e = env_or_skip(state);
	static struct frame f, out;

	port_cfg(e, true, FERRY_ACT_DROP, 0);
	udp4(&f, JUMBO - 14 - 20 - 8);
	assert_int_equal(f.len, JUMBO);
	run_expect(e, &f, XDP_DROP_, FERRY_R_DROP_RULE, &out);
	assert_int_equal(out.len, JUMBO);
	assert_memory_equal(out.b, f.b, JUMBO);

	/* Cut by one byte: now the IP length is past the frame's end. */
	f.len--;
	run_expect(e, &f, XDP_DROP_, FERRY_R_DROP_BAD_IP4_LEN, NULL);
}

/* ---- partial checksums, completed on the way to a CPU ---- */

/* One steering rule (slot 0, CPU 0) that matches everything. */
static void steer_all(struct env *e)
{
	struct ferry_rule r = {.action = FERRY_ACT_CPU, .arg = 0};
	struct ferry_cpuset set = {.n = 1, .cpu = {0}};
	struct bpf_cpumap_val cv = {.qsize = 64};
	/* Generation 0 (live in a fresh object), walked. */
	struct ferry_cls_gen gen = {.n_rules = 1, .matcher = FERRY_CLS_LINEAR};
	uint32_t key = 0;

	assert_int_equal(
		bpf_map_update_elem(bpf_map__fd(e->skel->maps.ferry_rules),
				    &key, &r, 0),
		0);
	assert_int_equal(
		bpf_map_update_elem(bpf_map__fd(e->skel->maps.ferry_cls_gens),
				    &key, &gen, 0),
		0);
	assert_int_equal(
		bpf_map_update_elem(bpf_map__fd(e->skel->maps.ferry_cpusets),
				    &key, &set, 0),
		0);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(e->skel->maps.cpu_map),
					     &key, &cv, 0),
			 0);
	port_cfg(e, false, FERRY_ACT_XSK, 1);
}

/*
 * f as a sender with offload leaves it (field = pseudo-header sum) must
 * come out with the full checksum; f with the full checksum must come out
 * unchanged. l3, l4: header offsets; field: the checksum's offset in L4.
 */
static void check_completion(struct env *e, struct frame *f, size_t l3,
			     size_t l4, size_t field)
{
	static struct frame out;
	uint16_t full = l4_full(f, l3, l4, field);

	set16(f, l4 + field, l4_partial(f, l3, l4));
	run_expect(e, f, XDP_REDIR_, FERRY_R_CPU_REDIRECT, &out);
	assert_int_equal(out.len, f->len);
	assert_int_equal(get16(&out, l4 + field), full);
	/* Nothing else moved. */
	set16(f, l4 + field, full);
	assert_memory_equal(out.b, f->b, f->len);

	run_expect(e, f, XDP_REDIR_, FERRY_R_CPU_REDIRECT, &out);
	assert_memory_equal(out.b, f->b, f->len);
}

static void test_partial_tcp4(void **state)
{
	struct env *e = env_or_skip(state);
	static struct frame f;
	size_t l3, l4;

	steer_all(e);
	eth(&f, NULL, 0x0800);
	l3 = ip4(&f, IPPROTO_TCP, 20 + 101, 0, 0); /* odd length */
	l4 = tcp(&f, 101);
	check_completion(e, &f, l3, l4, 16);
}

static void test_partial_udp6(void **state)
{
	struct env *e = env_or_skip(state);
	static struct frame f;
	size_t l3, l4;

	steer_all(e);
	eth(&f, NULL, 0x86dd);
	l3 = ip6(&f, IPPROTO_UDP, 8 + 1200);
	l4 = udp(&f, 1200);
	check_completion(e, &f, l3, l4, 6);
}

/* Chunks across the fragments of a 9000-byte frame. */
static void test_partial_tcp4_multibuffer(void **state)
{
	struct env *e = env_or_skip(state);
	static struct frame f;
	size_t l3, l4;

	steer_all(e);
	eth(&f, NULL, 0x0800);
	l3 = ip4(&f, IPPROTO_TCP, JUMBO - 14 - 20, 0, 0);
	l4 = tcp(&f, JUMBO - 14 - 20 - 20);
	check_completion(e, &f, l3, l4, 16);
}

/* A wrong checksum that is not the partial pattern is left alone. */
static void test_bad_checksum_untouched(void **state)
{
	struct env *e = env_or_skip(state);
	static struct frame f, out;
	size_t l3, l4;
	uint16_t full;

	steer_all(e);
	eth(&f, NULL, 0x0800);
	l3 = ip4(&f, IPPROTO_UDP, 8 + 64, 0, 0);
	l4 = udp(&f, 64);
	full = l4_full(&f, l3, l4, 6);
	set16(&f, l4 + 6, (uint16_t)(full ^ 0x0101));
	run_expect(e, &f, XDP_REDIR_, FERRY_R_CPU_REDIRECT, &out);
	assert_memory_equal(out.b, f.b, f.len);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_arp_to_kernel),
		cmocka_unit_test(test_plain_ndp_to_kernel),
		cmocka_unit_test(test_plain_lldp_to_xsk),
		cmocka_unit_test(test_wire_arp),
		cmocka_unit_test(test_wire_ndp),
		cmocka_unit_test(test_wire_lldp),
		cmocka_unit_test(test_wire_other_ethertype),
		cmocka_unit_test(test_wire_vlan_qinq),
		cmocka_unit_test(test_wire_ip4_options_and_fragments),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_multibuffer),
		cmocka_unit_test(test_partial_tcp4),
		cmocka_unit_test(test_partial_udp6),
		cmocka_unit_test(test_partial_tcp4_multibuffer),
		cmocka_unit_test(test_bad_checksum_untouched),
		cmocka_unit_test(test_route_not_ip_to_kernel),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
