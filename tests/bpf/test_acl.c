// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_acl - the rule table of the classifier (bpf/ferry_xdp.bpf.c, the
 * object the daemon loads), installed by dataplane/rules/rulecls.c as the daemon
 * installs it, and run on canned frames with BPF_PROG_TEST_RUN. Every case
 * runs under both matchers (the linear walk and the bit-vector lookup):
 * first match wins, port ranges at their edges, IPv4 and IPv6 prefixes
 * (nested and overlapping), ICMP for both families, non-IP frames, the
 * per-rule packet and byte counters; then random tables and frames, each
 * frame's verdict and rule checked against a reference matcher written
 * here from the rule's definition.
 *
 * The port's default is the AF_XDP socket, which a test run has not: a
 * frame no rule takes is passed with reason pass_no_xsk, told apart from
 * a pass rule's pass_rule.
 *
 * Needs root (CAP_BPF); skips without, fails under CI=true.
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
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ferry_abi.h"
#include "ferry_xdp.skel.h"
#include "xdp_env.h"
#include "rulecls.h"

#define XDP_DROP_ 1
#define XDP_PASS_ 2

struct env {
	struct ferry_xdp_bpf *skel;
	int ncpu;
	uint32_t gen;
};

/* A frame's fields, what the builder writes and the reference reads. */
struct pkt {
	uint8_t family; /* 0: ARP-like, not IP */
	uint8_t proto;
	uint32_t src[4], dst[4];
	uint16_t sport, dport;
	bool frag; /* a later fragment (IPv4): no ports */
};

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

static struct env *env_or_skip(void **state)
{
	struct env *e = *state;

	xdp_env_require(e->skel);
	return e;
}

/* ---- frames ---- */

static uint16_t csum(const uint8_t *p, size_t n)
{
	uint32_t s = 0;
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static size_t build(uint8_t *b, const struct pkt *k)
{
	uint8_t *l3 = b + 14, *l4;
	size_t l4len = 8 + 32, n;
	uint16_t c;

	memset(b, 0, 256);
	memcpy(b, (uint8_t[12]){2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1}, 12);
	if (k->family == 0) {
		b[12] = 0x88; /* LLDP */
		b[13] = 0xcc;
		return 64;
	}
	if (k->proto == IPPROTO_TCP)
		l4len = 20 + 32;
	if (k->family == 4) {
		b[12] = 0x08;
		l3[0] = 0x45;
		n = 20 + l4len;
		l3[2] = (uint8_t)(n >> 8);
		l3[3] = (uint8_t)n;
		if (k->frag)
			l3[7] = 100; /* offset 800: a later fragment */
		l3[8] = 64;
		l3[9] = k->proto;
		memcpy(l3 + 12, k->src, 4);
		memcpy(l3 + 16, k->dst, 4);
		c = csum(l3, 20);
		l3[10] = (uint8_t)(c >> 8);
		l3[11] = (uint8_t)c;
		l4 = l3 + 20;
	} else {
		b[12] = 0x86;
		b[13] = 0xdd;
		l3[0] = 0x60;
		l3[4] = (uint8_t)(l4len >> 8);
		l3[5] = (uint8_t)l4len;
		l3[6] = k->proto;
		l3[7] = 64;
		memcpy(l3 + 8, k->src, 16);
		memcpy(l3 + 24, k->dst, 16);
		l4 = l3 + 40;
	}
	if (k->proto == IPPROTO_TCP || k->proto == IPPROTO_UDP) {
		l4[0] = (uint8_t)(k->sport >> 8);
		l4[1] = (uint8_t)k->sport;
		l4[2] = (uint8_t)(k->dport >> 8);
		l4[3] = (uint8_t)k->dport;
		if (k->proto == IPPROTO_UDP) {
			l4[4] = (uint8_t)(l4len >> 8);
			l4[5] = (uint8_t)l4len;
		} else {
			l4[12] = 5 << 4;
		}
	} else {
		l4[0] = 8; /* echo request; ICMPv6 128 */
		if (k->family == 6)
			l4[0] = 128;
	}
	return (size_t)(l4 - b) + l4len;
}

/* ---- the table ---- */

static void publish(struct env *e, struct ferry_rule *r, uint32_t n,
		    enum ferry_cls_matcher m)
{
	struct ferry_xdp_cfg cfg = {.default_action = FERRY_ACT_XSK,
				    .pass_arp_ndp = 0};
	uint32_t key = 0, i;
	int err;

	for (i = 0; i < n; i++)
		r[i].ctr = (uint16_t)i;
	assert_int_equal(
		bpf_map_update_elem(bpf_map__fd(e->skel->maps.ferry_cfg), &key,
				    &cfg, 0),
		0);
	err = ferry_cls_publish(e->skel, &e->gen, r, n, m);
	if (err)
		fail_msg("publish %u rules: %s", n, strerror(-err));
}

static struct ferry_verdict_ctr sum_ctr(struct env *e, struct bpf_map *map,
					uint32_t key)
{
	struct ferry_verdict_ctr v[e->ncpu], s = {0};
	int i;

	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(map), &key, v), 0);
	for (i = 0; i < e->ncpu; i++) {
		s.packets += v[i].packets;
		s.bytes += v[i].bytes;
	}
	return s;
}

/*
 * Runs one frame; returns the rule that took it (its counter moved by
 * this frame and its bytes) or -1, and checks the verdict agrees: drop
 * for a drop rule, pass_rule for a pass rule, pass_no_xsk for none.
 */
static int run(struct env *e, const struct ferry_rule *r, uint32_t n,
	       const struct pkt *k)
{
	static uint8_t in[256], out[512];
	size_t len = build(in, k);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in,
		    .data_size_in = (uint32_t)len, .data_out = out,
		    .data_size_out = sizeof(out), .repeat = 1);
	struct ferry_verdict_ctr before[FERRY_MAX_RULES], c, pr, nx, pr2, nx2;
	uint32_t i;
	int hit = -1;

	for (i = 0; i < n; i++)
		before[i] = sum_ctr(e, e->skel->maps.ferry_rule_ctrs, i);
	pr = sum_ctr(e, e->skel->maps.ferry_verdicts, FERRY_R_PASS_RULE);
	nx = sum_ctr(e, e->skel->maps.ferry_verdicts, FERRY_R_PASS_NO_XSK);
	if (bpf_prog_test_run_opts(bpf_program__fd(e->skel->progs.ferry_xdp),
				   &o))
		fail_msg("BPF_PROG_TEST_RUN: %s", strerror(errno));
	for (i = 0; i < n; i++) {
		c = sum_ctr(e, e->skel->maps.ferry_rule_ctrs, i);
		if (c.packets == before[i].packets)
			continue;
		if (hit >= 0)
			fail_msg("rules %d and %u both counted", hit, i);
		if (c.packets != before[i].packets + 1 ||
		    c.bytes != before[i].bytes + len)
			fail_msg(
				"rule %u: +%llu frames +%llu bytes, want 1, "
				"%zu",
				i,
				(unsigned long long)(c.packets -
						     before[i].packets),
				(unsigned long long)(c.bytes - before[i].bytes),
				len);
		hit = (int)i;
	}
	pr2 = sum_ctr(e, e->skel->maps.ferry_verdicts, FERRY_R_PASS_RULE);
	nx2 = sum_ctr(e, e->skel->maps.ferry_verdicts, FERRY_R_PASS_NO_XSK);
	if (hit < 0) {
		assert_int_equal(o.retval, XDP_PASS_);
		assert_int_equal(nx2.packets, nx.packets + 1);
	} else if (r[hit].action == FERRY_ACT_DROP) {
		assert_int_equal(o.retval, XDP_DROP_);
	} else if (r[hit].action == FERRY_ACT_APP) {
		/* On to the port's app (here xsk, with no socket bound). */
		assert_int_equal(o.retval, XDP_PASS_);
		assert_int_equal(nx2.packets, nx.packets + 1);
	} else {
		assert_int_equal(o.retval, XDP_PASS_);
		assert_int_equal(pr2.packets, pr.packets + 1);
	}
	return hit;
}

/* The rule's definition, written out here on its own (bpf rule_match). */
static bool pfx_ok(const uint32_t *want, uint8_t plen, const uint32_t *a)
{
	uint32_t i, bits, mask;

	for (i = 0; i < 4 && plen; i++) {
		bits = plen > 32 ? 32 : plen;
		mask = htonl(0xffffffffu << (32 - bits));
		if ((want[i] ^ a[i]) & mask)
			return false;
		plen = (uint8_t)(plen - bits);
	}
	return true;
}

static int reference(const struct ferry_rule *r, uint32_t n,
		     const struct pkt *k)
{
	bool ports = !k->frag &&
		     (k->proto == IPPROTO_TCP || k->proto == IPPROTO_UDP);
	uint8_t proto = k->family ? k->proto : 0;
	uint32_t i;

	for (i = 0; i < n; i++) {
		const struct ferry_rule *x = &r[i];

		if (x->family && x->family != k->family)
			continue;
		if (x->l4_proto && x->l4_proto != proto &&
		    !(x->l4_proto == IPPROTO_ICMP && proto == IPPROTO_ICMPV6))
			continue;
		if ((x->dport_lo || x->dport_hi) &&
		    (!ports || k->dport < x->dport_lo ||
		     k->dport > x->dport_hi))
			continue;
		if ((x->sport_lo || x->sport_hi) &&
		    (!ports || k->sport < x->sport_lo ||
		     k->sport > x->sport_hi))
			continue;
		if ((x->src_plen || x->dst_plen) && !k->family)
			continue;
		if (!pfx_ok(x->src, x->src_plen, k->src) ||
		    !pfx_ok(x->dst, x->dst_plen, k->dst))
			continue;
		return (int)i;
	}
	return -1;
}

static void v4(uint32_t a[4], const char *s)
{
	memset(a, 0, 16);
	assert_int_equal(inet_pton(AF_INET, s, a), 1);
}

static void v6(uint32_t a[4], const char *s)
{
	assert_int_equal(inet_pton(AF_INET6, s, a), 1);
}

/* Each case: the table, then frames and the rule each must hit. */
struct expect {
	struct pkt k;
	int rule;
};

static void check(void **state, struct ferry_rule *r, uint32_t n,
		  const struct expect *x, size_t nx)
{
	struct env *e = env_or_skip(state);
	enum ferry_cls_matcher m;
	size_t i;
	int got;

	for (m = 0; m < FERRY_CLS__COUNT; m++) {
		publish(e, r, n, m);
		for (i = 0; i < nx; i++) {
			assert_int_equal(reference(r, n, &x[i].k), x[i].rule);
			got = run(e, r, n, &x[i].k);
			if (got != x[i].rule)
				fail_msg("matcher %d, frame %zu: rule %d, "
					 "want %d",
					 m, i, got, x[i].rule);
		}
	}
}

static struct pkt tcp4(const char *s, const char *d, uint16_t sp, uint16_t dp)
{
	struct pkt k = {
		.family = 4, .proto = IPPROTO_TCP, .sport = sp, .dport = dp};

	v4(k.src, s);
	v4(k.dst, d);
	return k;
}

static struct pkt udp6(const char *s, const char *d, uint16_t sp, uint16_t dp)
{
	struct pkt k = {
		.family = 6, .proto = IPPROTO_UDP, .sport = sp, .dport = dp};

	v6(k.src, s);
	v6(k.dst, d);
	return k;
}

static void test_first_match_wins(void **state)
{
	struct ferry_rule r[3] = {
		{.l4_proto = IPPROTO_TCP,
		 .dport_lo = 80,
		 .dport_hi = 80,
		 .action = FERRY_ACT_PASS},
		{.l4_proto = IPPROTO_TCP, .action = FERRY_ACT_DROP},
		{.action =
			 FERRY_ACT_PASS}, /* everything, never reached by TCP */
	};
	struct expect x[] = {
		{tcp4("10.0.0.1", "10.0.0.2", 5000, 80), 0},
		{tcp4("10.0.0.1", "10.0.0.2", 5000, 81), 1},
		{udp6("2001:db8::1", "2001:db8::2", 5000, 80), 2},
		{{.family = 0}, 2}, /* non-IP: only the empty rule */
	};

	check(state, r, 3, x, sizeof(x) / sizeof(x[0]));
}

/* An ACL's pass (APP) is a permit: the frame goes on to the port's app as
 * if no rule had matched, and the drop after it is not looked at. */
static void test_app_pass(void **state)
{
	struct ferry_rule r[2] = {
		{.family = 4,
		 .l4_proto = IPPROTO_TCP,
		 .src_plen = 24,
		 .dport_lo = 22,
		 .dport_hi = 22,
		 .action = FERRY_ACT_APP},
		{.l4_proto = IPPROTO_TCP,
		 .dport_lo = 22,
		 .dport_hi = 22,
		 .action = FERRY_ACT_DROP},
	};
	struct expect x[] = {
		{tcp4("10.88.0.1", "10.88.0.2", 40000, 22), 0},
		{tcp4("10.89.0.1", "10.88.0.2", 40000, 22), 1},
		{tcp4("10.89.0.1", "10.88.0.2", 40000, 23), -1},
	};

	v4(r[0].src, "10.88.0.0");
	check(state, r, 2, x, sizeof(x) / sizeof(x[0]));
}

static void test_port_ranges(void **state)
{
	struct ferry_rule r[3] = {
		{.l4_proto = IPPROTO_TCP,
		 .dport_lo = 1000,
		 .dport_hi = 2000,
		 .action = FERRY_ACT_DROP},
		{.l4_proto = IPPROTO_UDP,
		 .sport_lo = 53,
		 .sport_hi = 53,
		 .dport_lo = 1500,
		 .dport_hi = 65535,
		 .action = FERRY_ACT_PASS},
		{.family = 6,
		 .l4_proto = IPPROTO_UDP,
		 .dport_lo = 1,
		 .dport_hi = 1499,
		 .action = FERRY_ACT_DROP},
	};
	struct pkt frag = tcp4("10.0.0.1", "10.0.0.2", 1, 1500);
	struct expect x[] = {
		{tcp4("10.0.0.1", "10.0.0.2", 1, 999), -1},
		{tcp4("10.0.0.1", "10.0.0.2", 1, 1000), 0},
		{tcp4("10.0.0.1", "10.0.0.2", 1, 2000), 0},
		{tcp4("10.0.0.1", "10.0.0.2", 1, 2001), -1},
		{udp6("::1", "::2", 53, 1500), 1},
		{udp6("::1", "::2", 53, 65535), 1},
		{udp6("::1", "::2", 54, 1500), -1},
		{udp6("::1", "::2", 53, 1499), 2},
		{udp6("::1", "::2", 0, 0), -1},
		{frag, -1}, /* a later fragment has no ports */
	};

	x[9].k.frag = true;
	check(state, r, 3, x, sizeof(x) / sizeof(x[0]));
}

static void test_prefixes_v4(void **state)
{
	struct ferry_rule r[4] = {
		{.family = 4, .src_plen = 24, .action = FERRY_ACT_DROP},
		{.family = 4, .src_plen = 8, .action = FERRY_ACT_PASS},
		{.family = 4, .dst_plen = 25, .action = FERRY_ACT_DROP},
		{.family = 4,
		 .src_plen = 32,
		 .dst_plen = 32,
		 .action = FERRY_ACT_PASS},
	};
	struct expect x[] = {
		{tcp4("10.1.2.3", "198.51.100.1", 1, 1), 0},
		{tcp4("10.1.3.3", "198.51.100.1", 1, 1), 1},
		{tcp4("11.1.2.3", "192.0.2.200", 1, 1), 2},
		{tcp4("11.1.2.3", "192.0.2.100", 1, 1), -1},
		{tcp4("203.0.113.9", "203.0.113.10", 1, 1), 3},
		{tcp4("203.0.113.9", "203.0.113.11", 1, 1), -1},
		{udp6("::a01:203", "::1", 1, 1), -1}, /* IPv6 never */
	};

	v4(r[0].src, "10.1.2.0");
	v4(r[1].src, "10.0.0.0");
	v4(r[2].dst, "192.0.2.128");
	v4(r[3].src, "203.0.113.9");
	v4(r[3].dst, "203.0.113.10");
	check(state, r, 4, x, sizeof(x) / sizeof(x[0]));
}

static void test_prefixes_v6_and_icmp(void **state)
{
	struct ferry_rule r[4] = {
		{.family = 6,
		 .dst_plen = 32,
		 .src_plen = 48,
		 .action = FERRY_ACT_PASS},
		{.family = 6, .dst_plen = 32, .action = FERRY_ACT_DROP},
		{.family = 6, .src_plen = 128, .action = FERRY_ACT_DROP},
		{.l4_proto = IPPROTO_ICMP, .action = FERRY_ACT_DROP},
	};
	struct pkt icmp6 = udp6("2001:db8:ffff::1", "3fff::1", 0, 0);
	struct pkt icmp4 = tcp4("10.0.0.1", "10.0.0.2", 0, 0);
	struct expect x[] = {
		{udp6("2001:db8:1::5", "2001:db8::1", 1, 1), 0},
		{udp6("2001:db8:2::5", "2001:db8::1", 1, 1), 1},
		{udp6("2001:db9::5", "2001:db8:ffff::1", 1, 1), 1},
		{udp6("fe80::1:2:3:4", "3fff::1", 1, 1), 2},
		{udp6("fe80::1:2:3:5", "3fff::1", 1, 1), -1},
		{icmp6, 3},
		{icmp4, 3},
	};

	v6(r[0].dst, "2001:db8::");
	v6(r[0].src, "2001:db8:1::");
	v6(r[1].dst, "2001:db8::");
	v6(r[2].src, "fe80::1:2:3:4");
	x[5].k.proto = IPPROTO_ICMPV6;
	x[6].k.proto = IPPROTO_ICMP;
	check(state, r, 4, x, sizeof(x) / sizeof(x[0]));
}

/* Counters: run() checks each frame moved its rule's by one frame and its
 * bytes; here they also add up over several frames and survive a new
 * generation (a row belongs to the rule, not to a position). */
static void test_counters(void **state)
{
	struct env *e = env_or_skip(state);
	struct ferry_rule r[2] = {
		{.l4_proto = IPPROTO_TCP, .action = FERRY_ACT_DROP},
		{.l4_proto = IPPROTO_UDP, .action = FERRY_ACT_PASS},
	};
	struct pkt t = tcp4("10.0.0.1", "10.0.0.2", 1, 2);
	struct ferry_verdict_ctr c0, c1;
	int i;

	publish(e, r, 2, FERRY_CLS_BITVEC);
	c0 = sum_ctr(e, e->skel->maps.ferry_rule_ctrs, 0);
	for (i = 0; i < 5; i++)
		assert_int_equal(run(e, r, 2, &t), 0);
	publish(e, r, 2, FERRY_CLS_LINEAR);
	for (i = 0; i < 5; i++)
		assert_int_equal(run(e, r, 2, &t), 0);
	c1 = sum_ctr(e, e->skel->maps.ferry_rule_ctrs, 0);
	assert_int_equal(c1.packets - c0.packets, 10);
	assert_int_equal(c1.bytes - c0.bytes, 10 * (14 + 20 + 52));
}

/* ---- random tables against the reference ---- */

static uint32_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*s >> 33);
}

static void rand_addr(uint64_t *s, uint8_t fam, uint32_t a[4])
{
	/* Few distinct values, so prefixes nest and frames hit them. */
	static const uint32_t pool[4] = {0x0a000000, 0x0a010000, 0xc0000200,
					 0x20010db8};
	int i;

	memset(a, 0, 16);
	for (i = 0; i < (fam == 4 ? 1 : 4); i++)
		a[i] = htonl(pool[rnd(s) % 4] | (rnd(s) % 4) << (rnd(s) % 24));
}

static void rand_range(uint64_t *s, uint16_t *lo, uint16_t *hi)
{
	uint16_t a = (uint16_t)(1 + rnd(s) % 100),
		 b = (uint16_t)(a + rnd(s) % 20);

	if (rnd(s) % 2)
		return;
	*lo = a;
	*hi = b;
}

static void test_random_tables(void **state)
{
	static const uint8_t protos[] = {0, IPPROTO_TCP, IPPROTO_UDP,
					 IPPROTO_ICMP};
	static struct ferry_rule r[300];
	struct env *e = env_or_skip(state);
	uint64_t s = 0x5eed;
	uint32_t n = 300, i, f;
	enum ferry_cls_matcher m;
	struct pkt k;
	int want, got, hits = 0, misses = 0;

	for (i = 0; i < n; i++) {
		struct ferry_rule *x = &r[i];

		memset(x, 0, sizeof(*x));
		x->family =
			(uint8_t)(rnd(&s) % 10 == 0 ? 0
						    : 4 + 2 * (rnd(&s) % 2));
		x->l4_proto = protos[rnd(&s) % 4];
		if (x->l4_proto == IPPROTO_TCP || x->l4_proto == IPPROTO_UDP) {
			rand_range(&s, &x->sport_lo, &x->sport_hi);
			rand_range(&s, &x->dport_lo, &x->dport_hi);
		}
		/* Prefixes of 8 bits or more, nested by the small pool. */
		if (x->family) {
			rand_addr(&s, x->family, x->src);
			x->src_plen =
				(uint8_t)(8 + rnd(&s) % (x->family == 4 ? 25
									: 121));
		}
		if (x->family && rnd(&s) % 2) {
			rand_addr(&s, x->family, x->dst);
			x->dst_plen =
				(uint8_t)(8 + rnd(&s) % (x->family == 4 ? 25
									: 121));
		}
		/* A rule of no family takes ports, or it would end every
		 * walk. */
		if (!x->family) {
			x->l4_proto = IPPROTO_UDP;
			x->dport_lo = (uint16_t)(1 + rnd(&s) % 100);
			x->dport_hi = x->dport_lo;
		}
		x->action = rnd(&s) % 2 ? FERRY_ACT_DROP : FERRY_ACT_PASS;
	}
	for (m = 0; m < FERRY_CLS__COUNT; m++) {
		publish(e, r, n, m);
		for (f = 0; f < 400; f++) {
			memset(&k, 0, sizeof(k));
			k.family = (uint8_t)(4 + 2 * (rnd(&s) % 2));
			k.proto = protos[1 + rnd(&s) % 3];
			if (k.proto == IPPROTO_ICMP && k.family == 6)
				k.proto = IPPROTO_ICMPV6;
			rand_addr(&s, k.family, k.src);
			rand_addr(&s, k.family, k.dst);
			k.sport = (uint16_t)(rnd(&s) % 130);
			k.dport = (uint16_t)(rnd(&s) % 130);
			want = reference(r, n, &k);
			got = run(e, r, n, &k);
			if (got != want)
				fail_msg(
					"matcher %d frame %u: rule %d, want %d",
					m, f, got, want);
			if (got < 0)
				misses++;
			else
				hits++;
		}
	}
	/* The builder's own lookup (what the BPF matcher reads, walked in
	 * userspace) on many more frames, fragments too, no kernel needed. */
	{
		struct ferry_bvset *bv = ferry_bv_build(r, n, 0);

		assert_non_null(bv);
		for (f = 0; f < 20000; f++) {
			memset(&k, 0, sizeof(k));
			k.family = (uint8_t)(4 + 2 * (rnd(&s) % 2));
			k.proto = protos[1 + rnd(&s) % 3];
			if (k.proto == IPPROTO_ICMP && k.family == 6)
				k.proto = IPPROTO_ICMPV6;
			rand_addr(&s, k.family, k.src);
			rand_addr(&s, k.family, k.dst);
			k.sport = (uint16_t)(rnd(&s) % 130);
			k.dport = (uint16_t)(rnd(&s) % 130);
			k.frag = rnd(&s) % 8 == 0;
			want = reference(r, n, &k);
			got = ferry_bv_lookup(
				bv, k.family, k.proto, k.src, k.dst,
				!k.frag && (k.proto == IPPROTO_TCP ||
					    k.proto == IPPROTO_UDP),
				k.sport, k.dport);
			if (got != want)
				fail_msg("builder lookup, frame %u: rule %d, "
					 "want %d",
					 f, got, want);
		}
		ferry_bv_free(bv);
	}
	/* The tables are worth testing only if frames both hit and miss. */
	printf("random: %d frames hit a rule, %d none\n", hits, misses);
	assert_true(hits > 100 && misses > 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_match_wins),
		cmocka_unit_test(test_app_pass),
		cmocka_unit_test(test_port_ranges),
		cmocka_unit_test(test_prefixes_v4),
		cmocka_unit_test(test_prefixes_v6_and_icmp),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_random_tables),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
