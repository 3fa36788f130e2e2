// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_capture_filter - the capture's filter evaluator
 * (dataplane/capture/capture_filter.c) against libpcap's own bpf_filter(), bit for
 * bit: every answer the two give must be the same number.
 *
 *   - tcpdump expressions (protocols, hosts, nets, ports, port ranges,
 *     VLANs, IPv6, TCP flags, ICMP types, lengths, Ethernet addresses,
 *     arithmetic, and/or/not), compiled by pcap_compile with and without
 *     its optimiser, over crafted frames (VLAN and QinQ tags, IPv4 options
 *     and fragments, IPv6 extension headers, ARP, field values drawn from
 *     the ones the expressions name) each cut at several lengths, and over
 *     random bytes. Each expression must accept some frames and reject
 *     others, so no comparison is vacuous; each must be run natively (not
 *     handed back to libpcap);
 *   - random valid programs using every instruction (ALU by zero X, shifts
 *     by X >= 32, indexed loads whose X + k wraps 32 bits, the Linux
 *     ancillary offsets, scratch memory) over random frames;
 *   - programs the evaluator leaves to libpcap (a shift by a constant >= 32,
 *     a backward jump) and the FERRY_CFILTER_LIBPCAP flag.
 * The random sequences are seeded: a failure repeats, and prints the
 * expression or program, the frame's lengths and both answers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture_filter.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define FRAME_MAX    320

static const char *const exprs[] = {
	"ip",
	"ip6",
	"arp",
	"rarp",
	"tcp",
	"udp",
	"icmp",
	"icmp6",
	"sctp",
	"ip proto 47",
	"ip6 proto 17",
	"host 10.0.0.1",
	"src host 10.0.0.1",
	"dst host 10.0.0.2",
	"host 10.0.0.1 and host 10.0.0.2",
	"net 10.0.0.0/8",
	"src net 192.168.0.0/16",
	"dst net 10.0.0.0 mask 255.255.255.0",
	"host 2001:db8::1",
	"net 2001:db8::/32",
	"ip6 src net fe80::/10",
	"ip src 10.0.0.1 or ip6 src 2001:db8::1",
	"port 80",
	"tcp port 80",
	"udp port 53",
	"src port 7777",
	"dst port 7777",
	"udp and dst port 7777",
	"udp src port 1024",
	"tcp dst port 443",
	"portrange 1000-2000",
	"tcp portrange 1-1024",
	"udp src portrange 7000-8000",
	"sctp port 5000",
	"vlan",
	"vlan 100",
	"vlan 100 and ip",
	"vlan and tcp port 80",
	"vlan 100 and vlan 200",
	"not vlan",
	"vlan and ip6 and udp",
	"tcp[tcpflags] & tcp-syn != 0",
	"tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn",
	"tcp[tcpflags] & (tcp-fin|tcp-rst) != 0",
	"tcp[13] = 0x18",
	"icmp[icmptype] == icmp-echo",
	"icmp[icmptype] != icmp-echo and icmp[icmptype] != icmp-echoreply",
	"icmp6 and ip6[40] == 128",
	"ip6 and ip6[6] == 58 and ip6[40] == 135",
	"len < 100",
	"len > 200",
	"less 64",
	"greater 150",
	"len >= 60 and len <= 70",
	"ether host 02:00:00:00:00:01",
	"ether src 02:00:00:00:00:02",
	"ether dst ff:ff:ff:ff:ff:ff",
	"ether broadcast",
	"ether multicast",
	"ether proto 0x88cc",
	"ip multicast",
	"ip6 multicast",
	"ip[6:2] & 0x1fff != 0",
	"ip[6] & 0x20 != 0",
	"ip[2:2] > 100",
	"ip[0] & 0xf > 5",
	"ip6 and tcp",
	"ip6 and udp port 53",
	"ip6[6] == 44",
	"tcp and (port 80 or port 443)",
	"not tcp",
	"not (ip or ip6)",
	"ip and not udp",
	"(tcp or udp) and not port 22",
	"host 10.0.0.1 and (tcp or icmp)",
	"udp[8:4] == 0",
	"tcp[2:2] == 80 or udp[2:2] == 53",
	"ip[2:2] - ((ip[0]&0xf)<<2) - ((tcp[12]&0xf0)>>2) != 0",
	"tcp[((tcp[12:1] & 0xf0) >> 2):4] = 0x47455420",
	"len - 14 > 100",
	"ip[8] * 2 > 100",
	"ip[8] / 2 == 32",
	"ip[8] % 7 == 1",
	"(ip[8] ^ 0xff) == 191",
	"(ip[9] | 1) == 7",
	"-ip[8] != 0",
	"ip[8] << 1 == 128",
	"ip[8] >> 1 == 32",
	"ether[0] & 1 == 1",
	"ether[12:2] == 0x0800",
	"ether[len - 1] == 0",
	"arp and arp[6:2] == 1",
	"udp and udp[4:2] > 20",
	"ip[ip[0] & 0xf] == 0",
	"ip and ip[16:4] == 0x0a000002 and udp dst port 7777",
};

/* ------------------------------------------------------------- frames */

struct rng {
	uint64_t s;
};

static uint32_t rnd(struct rng *r)
{
	/* xorshift64*: deterministic and good enough to pick fields */
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return (uint32_t)((r->s * 0x2545f4914f6cdd1dull) >> 32);
}

static uint32_t pick(struct rng *r, const uint32_t *v, unsigned n)
{
	return v[rnd(r) % n];
}

#define PICK(r, a) pick(r, a, ARRAY_LEN(a))

struct frame {
	uint8_t b[FRAME_MAX];
	uint32_t len;
};

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

static const uint32_t ports[] = {80,   443,  22,   53, 1024,  1500,
				 5000, 7777, 7500, 0,  65535, 12345};
static const uint32_t ip4s[] = {0x0a000001, 0x0a000002, 0xc0a80101, 0x0a010203,
				0xe0000001, 0xffffffff, 0x08080808};

static uint32_t l4(struct rng *r, uint8_t *p, unsigned proto, unsigned room)
{
	uint32_t n = 0, i, plen;

	switch (proto) {
	case 6: /* TCP: flags random, header 20-32 bytes */
		n = 20 + 4 * (rnd(r) % 4);
		put16(p, PICK(r, ports));
		put16(p + 2, PICK(r, ports));
		put32(p + 4, rnd(r));
		p[12] = (uint8_t)((n / 4) << 4);
		p[13] = (uint8_t)(rnd(r) % 3 ? (1u << (rnd(r) % 6)) |
						       (rnd(r) % 2 ? 0x10 : 0)
					     : rnd(r));
		break;
	case 17:
	case 132: /* UDP, SCTP: the ports where both keep them */
		n = 8;
		put16(p, PICK(r, ports));
		put16(p + 2, PICK(r, ports));
		put16(p + 4, rnd(r) % 200);
		break;
	case 1:
	case 58: { /* ICMP, ICMPv6 */
		static const uint32_t types[] = {0,   8,   3,	11,
						 128, 129, 135, 136};

		n = 8;
		p[0] = (uint8_t)PICK(r, types);
		break;
	}
	default:
		break;
	}
	/* payload: 0-160 bytes, sometimes starting "GET ", else zeros and
	 * random bytes */
	room -= n;
	plen = rnd(r) % 161;
	plen = plen < room ? plen : room;
	i = 0;
	if (rnd(r) % 3 == 0 && plen >= 4) {
		memcpy(p + n, "GET ", 4);
		i = 4;
	}
	for (; i < plen; i++)
		p[n + i] = rnd(r) % 2 ? 0 : (uint8_t)rnd(r);
	return n + plen;
}

static unsigned l4_proto(struct rng *r)
{
	static const uint32_t protos[] = {6, 6, 17, 17, 1, 132, 47, 0xfd};

	return PICK(r, protos);
}

static void build(struct rng *r, struct frame *f)
{
	static const uint32_t vids[] = {100, 200, 4095, 1};
	static const uint8_t macs[][6] = {
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		{0x01, 0x00, 0x5e, 0x00, 0x00, 0x01},
		{0x02, 0, 0, 0, 0, 1},
		{0x02, 0, 0, 0, 0, 2},
		{0x33, 0x33, 0, 0, 0, 1},
	};
	uint8_t *p = f->b;
	uint32_t k, tags = rnd(r) % 5, et;

	memset(f->b, 0, sizeof(f->b));
	memcpy(p, macs[rnd(r) % ARRAY_LEN(macs)], 6);
	memcpy(p + 6, macs[2 + rnd(r) % 2], 6);
	p += 12;
	tags = tags < 3 ? 0 : tags - 2; /* 0 (60%), 1 or 2 tags */
	for (k = 0; k < tags; k++) {
		put16(p, k == 0 && tags == 2 ? 0x88a8 : 0x8100);
		put16(p + 2, PICK(r, vids));
		p += 4;
	}
	switch (rnd(r) % 10) {
	case 0:
	case 1:
	case 2:
	case 3:
	case 4: { /* IPv4, options sometimes, fragments sometimes */
		uint32_t ihl = rnd(r) % 4 == 0 ? 6 + rnd(r) % 3 : 5;
		unsigned proto = l4_proto(r), frag = rnd(r) % 6;
		uint32_t n;

		put16(p, 0x0800);
		p += 2;
		p[0] = (uint8_t)(0x40 | ihl);
		put16(p + 6, frag == 0 ? 0x2000 : frag == 1 ? 0x00b9 : 0);
		p[8] = (uint8_t)(rnd(r) % 2 ? 64 : rnd(r));
		p[9] = (uint8_t)proto;
		put32(p + 12, PICK(r, ip4s));
		put32(p + 16, PICK(r, ip4s));
		n = ihl * 4;
		n += l4(r, p + n, proto,
			(uint32_t)(FRAME_MAX - (p - f->b)) - n);
		put16(p + 2, n);
		p += n;
		break;
	}
	case 5:
	case 6:
	case 7: { /* IPv6 with 0-2 extension headers */
		static const uint32_t exts[] = {0, 43, 44, 60};
		static const uint8_t a6[][16] = {
			{0x20, 0x01, 0x0d, 0xb8, [15] = 1},
			{0x20, 0x01, 0x0d, 0xb8, [15] = 2},
			{0xfe, 0x80, [15] = 1},
			{0xff, 0x02, [15] = 1},
		};
		uint32_t next = l4_proto(r), n_ext = rnd(r) % 3, i, n = 40;
		uint8_t *nh;

		if (next == 1)
			next = 58;
		put16(p, 0x86dd);
		p += 2;
		p[0] = 0x60;
		p[7] = 64;
		memcpy(p + 8, a6[rnd(r) % ARRAY_LEN(a6)], 16);
		memcpy(p + 24, a6[rnd(r) % ARRAY_LEN(a6)], 16);
		nh = &p[6];
		for (i = 0; i < n_ext; i++) {
			uint32_t e = PICK(r, exts);

			*nh = (uint8_t)e;
			nh = &p[n];
			p[n + 1] = 0; /* 8 bytes */
			n += 8;
		}
		*nh = (uint8_t)next;
		n += l4(r, p + n, next, (uint32_t)(FRAME_MAX - (p - f->b)) - n);
		put16(p + 4, n - 40);
		p += n;
		break;
	}
	case 8: /* ARP */
		put16(p, 0x0806);
		put16(p + 2, 1);
		put16(p + 4, 0x0800);
		p[6] = 6;
		p[7] = 4;
		put16(p + 8, 1 + rnd(r) % 2);
		put32(p + 16, PICK(r, ip4s));
		put32(p + 26, PICK(r, ip4s));
		p += 30;
		break;
	default: { /* something else */
		static const uint32_t ets[] = {0x88cc, 0x8035, 0x8847, 0x1234};

		et = PICK(r, ets);
		put16(p, et);
		p += 2 + rnd(r) % 60;
		break;
	}
	}
	f->len = (uint32_t)(p - f->b);
	if (f->len < 60 && rnd(r) % 2) /* padded to Ethernet's minimum */
		f->len = 60;
}

static void random_bytes(struct rng *r, struct frame *f)
{
	static const uint32_t ets[] = {0x0800, 0x86dd, 0x8100, 0x0806};
	uint32_t i;

	f->len = rnd(r) % 130;
	for (i = 0; i < f->len; i++)
		f->b[i] = (uint8_t)rnd(r);
	if (f->len >= 14 && rnd(r) % 2)
		put16(f->b + 12, PICK(r, ets));
	if (f->len >= 15 && rnd(r) % 2)
		f->b[14] = (uint8_t)(0x40 | (rnd(r) & 0xf));
}

/* ------------------------------------------------------------- compare */

struct tally {
	unsigned long runs, accepted;
};

/* Both evaluators on pkt's first buflen bytes, a frame of wirelen. */
static void cmp(const struct bpf_insn *insns, const struct ferry_cfilter *f,
		const uint8_t *pkt, uint32_t wirelen, uint32_t buflen,
		const char *what, struct tally *t)
{
	uint32_t want = bpf_filter(insns, pkt, wirelen, buflen);
	uint32_t got = ferry_cfilter_run(f, pkt, wirelen, buflen);

	if (got != want)
		fail_msg("%s: wirelen %u buflen %u: libpcap %u, ferry %u", what,
			 wirelen, buflen, want, got);
	t->runs++;
	t->accepted += want != 0;
}

/* The frame whole, and cut at a few lengths (some inside the headers). */
static void cmp_frame(const struct bpf_insn *insns,
		      const struct ferry_cfilter *f, struct rng *r,
		      const struct frame *fr, const char *what, struct tally *t)
{
	unsigned i;

	cmp(insns, f, fr->b, fr->len, fr->len, what, t);
	cmp(insns, f, fr->b, fr->len + rnd(r) % 1500, fr->len, what, t);
	for (i = 0; i < 3 && fr->len; i++)
		cmp(insns, f, fr->b, fr->len, rnd(r) % fr->len, what, t);
}

static struct frame *corpus(unsigned n_crafted, unsigned n_random)
{
	struct frame *fr = calloc(n_crafted + n_random, sizeof(*fr));
	struct rng r = {.s = 0x5eed1234abcdull};
	unsigned i;

	assert_non_null(fr);
	for (i = 0; i < n_crafted; i++)
		build(&r, &fr[i]);
	for (; i < n_crafted + n_random; i++)
		random_bytes(&r, &fr[i]);
	return fr;
}

/* ------------------------------------------------------------- tests */

static void test_tcpdump_exprs(void **state)
{
	const unsigned n_crafted = 3000, n_random = 500;
	struct frame *fr = corpus(n_crafted, n_random);
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, 65535);
	unsigned e, opt, i;

	(void)state;
	assert_non_null(dead);
	for (e = 0; e < ARRAY_LEN(exprs); e++)
		for (opt = 0; opt < 2; opt++) {
			struct rng r = {.s = 0x1234 + e * 2 + opt};
			struct tally crafted = {0}, all = {0};
			struct bpf_program prog;
			struct ferry_cfilter *f;
			char what[160];

			if (pcap_compile(dead, &prog, exprs[e], (int)opt,
					 PCAP_NETMASK_UNKNOWN) < 0)
				fail_msg("\"%s\": %s", exprs[e],
					 pcap_geterr(dead));
			f = ferry_cfilter_create(prog.bf_insns, prog.bf_len, 0);
			assert_non_null(f);
			snprintf(what, sizeof(what), "\"%s\" (optimise %u)",
				 exprs[e], opt);
			if (!ferry_cfilter_native(f))
				fail_msg("%s: handed back to libpcap", what);
			for (i = 0; i < n_crafted; i++) {
				/* full length alone: what the tally needs */
				cmp(prog.bf_insns, f, fr[i].b, fr[i].len,
				    fr[i].len, what, &crafted);
				cmp_frame(prog.bf_insns, f, &r, &fr[i], what,
					  &all);
			}
			for (; i < n_crafted + n_random; i++)
				cmp_frame(prog.bf_insns, f, &r, &fr[i], what,
					  &all);
			if (!crafted.accepted ||
			    crafted.accepted == crafted.runs)
				fail_msg(
					"%s: accepts %lu of %lu crafted frames:"
					" the comparison proves nothing",
					what, crafted.accepted, crafted.runs);
			ferry_cfilter_destroy(f);
			pcap_freecode(&prog);
		}
	pcap_close(dead);
	free(fr);
}

/*
 * A random valid program of n instructions: a prologue that fills the
 * scratch memory (reading it unwritten is undefined in libpcap), then
 * random instructions with forward jumps, then a return.
 */
static unsigned random_prog(struct rng *r, struct bpf_insn *p, unsigned n)
{
	static const uint16_t codes[] = {
		BPF_LD | BPF_W | BPF_ABS,
		BPF_LD | BPF_H | BPF_ABS,
		BPF_LD | BPF_B | BPF_ABS,
		BPF_LDX | BPF_MSH | BPF_B,
		BPF_LD | BPF_W | BPF_IND,
		BPF_LD | BPF_H | BPF_IND,
		BPF_LD | BPF_B | BPF_IND,
		BPF_LD | BPF_W | BPF_LEN,
		BPF_LDX | BPF_W | BPF_LEN,
		BPF_LD | BPF_IMM,
		BPF_LDX | BPF_IMM,
		BPF_LD | BPF_MEM,
		BPF_LDX | BPF_MEM,
		BPF_ST,
		BPF_STX,
		BPF_JMP | BPF_JA,
		BPF_JMP | BPF_JGT | BPF_K,
		BPF_JMP | BPF_JGE | BPF_K,
		BPF_JMP | BPF_JEQ | BPF_K,
		BPF_JMP | BPF_JSET | BPF_K,
		BPF_JMP | BPF_JGT | BPF_X,
		BPF_JMP | BPF_JGE | BPF_X,
		BPF_JMP | BPF_JEQ | BPF_X,
		BPF_JMP | BPF_JSET | BPF_X,
		BPF_ALU | BPF_ADD | BPF_K,
		BPF_ALU | BPF_SUB | BPF_K,
		BPF_ALU | BPF_MUL | BPF_K,
		BPF_ALU | BPF_DIV | BPF_K,
		BPF_ALU | BPF_MOD | BPF_K,
		BPF_ALU | BPF_AND | BPF_K,
		BPF_ALU | BPF_OR | BPF_K,
		BPF_ALU | BPF_XOR | BPF_K,
		BPF_ALU | BPF_LSH | BPF_K,
		BPF_ALU | BPF_RSH | BPF_K,
		BPF_ALU | BPF_ADD | BPF_X,
		BPF_ALU | BPF_SUB | BPF_X,
		BPF_ALU | BPF_MUL | BPF_X,
		BPF_ALU | BPF_DIV | BPF_X,
		BPF_ALU | BPF_MOD | BPF_X,
		BPF_ALU | BPF_AND | BPF_X,
		BPF_ALU | BPF_OR | BPF_X,
		BPF_ALU | BPF_XOR | BPF_X,
		BPF_ALU | BPF_LSH | BPF_X,
		BPF_ALU | BPF_RSH | BPF_X,
		BPF_ALU | BPF_NEG,
		BPF_MISC | BPF_TAX,
		BPF_MISC | BPF_TXA,
	};
	static const uint32_t wide[] = {
		0,	    1,		2,	    31,		32,
		33,	    0x800,	0xffff,	    0x7fffffff, 0x80000000,
		0xfffffffe, 0xffffffff, 0xfffff000, 0xfffff02c};
	unsigned i = 0, m;

	p[i++] = (struct bpf_insn)BPF_STMT(BPF_LD | BPF_IMM, rnd(r));
	for (m = 0; m < BPF_MEMWORDS; m++)
		p[i++] = (struct bpf_insn)BPF_STMT(BPF_ST, m);
	for (; i < n - 1; i++) {
		uint16_t code = codes[rnd(r) % ARRAY_LEN(codes)];
		uint32_t k = rnd(r) % 4 ? rnd(r) % 80 : PICK(r, wide);
		unsigned room = n - 2 - i; /* instructions a jump may skip */

		switch (code) {
		case BPF_LD | BPF_MEM:
		case BPF_LDX | BPF_MEM:
		case BPF_ST:
		case BPF_STX:
			k %= BPF_MEMWORDS;
			break;
		case BPF_ALU | BPF_LSH | BPF_K:
		case BPF_ALU | BPF_RSH | BPF_K:
			k %= 32;
			break;
		case BPF_ALU | BPF_DIV | BPF_K:
		case BPF_ALU | BPF_MOD | BPF_K:
			k = k ? k : 3;
			break;
		case BPF_JMP | BPF_JA:
			k = room ? rnd(r) % (room + 1) : 0;
			break;
		default:
			break;
		}
		p[i] = (struct bpf_insn){.code = code, .k = k};
		if (BPF_CLASS(code) == BPF_JMP && code != (BPF_JMP | BPF_JA)) {
			p[i].jt = (uint8_t)(rnd(r) % (room + 1));
			p[i].jf = (uint8_t)(rnd(r) % (room + 1));
		}
		/* A return now and then, so some runs end early. */
		if (rnd(r) % 16 == 0)
			p[i] = (struct bpf_insn)BPF_STMT(BPF_RET | BPF_A, 0);
	}
	p[i++] = rnd(r) % 2
			 ? (struct bpf_insn)BPF_STMT(BPF_RET | BPF_A, 0)
			 : (struct bpf_insn)BPF_STMT(BPF_RET | BPF_K, rnd(r));
	return i;
}

static void test_random_programs(void **state)
{
	const unsigned n_progs = 4000, n_frames = 60;
	struct frame *fr = corpus(n_frames / 2, n_frames / 2);
	struct rng r = {.s = 0xfeedfacecafeull};
	struct bpf_insn prog[96];
	unsigned long accepted = 0, runs = 0;
	unsigned i, j;

	(void)state;
	for (i = 0; i < n_progs; i++) {
		unsigned n = random_prog(&r, prog, 18 + 2 + rnd(&r) % 60);
		struct ferry_cfilter *f = ferry_cfilter_create(prog, n, 0);
		struct tally t = {0};
		char what[64];

		assert_non_null(f);
		snprintf(what, sizeof(what), "random program %u (%u insns)", i,
			 n);
		if (!ferry_cfilter_native(f))
			fail_msg("%s: handed back to libpcap", what);
		if (!bpf_validate(prog, (int)n))
			fail_msg("%s: libpcap calls it invalid", what);
		for (j = 0; j < n_frames; j++)
			cmp_frame(prog, f, &r, &fr[j], what, &t);
		accepted += t.accepted;
		runs += t.runs;
		ferry_cfilter_destroy(f);
	}
	/* Not vacuous: both answers were seen many times. */
	assert_true(accepted > runs / 10 && accepted < runs - runs / 10);
	free(fr);
}

static void test_left_to_libpcap(void **state)
{
	/* A constant shift of 33 (libpcap shifts by 33 & 31 on x86, C says
	 * nothing) and a backward jump (protochain's loop). */
	const struct bpf_insn shift[] = {
		BPF_STMT(BPF_LD | BPF_IMM, 1),
		BPF_STMT(BPF_ALU | BPF_LSH | BPF_K, 33),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	const struct bpf_insn udp[] = {
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 12),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x0800, 0, 3),
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 23),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 17, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 0xffff),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	const struct bpf_insn back[] = {
		BPF_STMT(BPF_LD | BPF_IMM, 1),
		BPF_STMT(BPF_JMP | BPF_JA, (uint32_t)-2),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	uint8_t pkt[64] = {[12] = 0x08, [23] = 17};
	struct ferry_cfilter *f;

	(void)state;
	f = ferry_cfilter_create(shift, ARRAY_LEN(shift), 0);
	assert_non_null(f);
	assert_false(ferry_cfilter_native(f));
	assert_int_equal(ferry_cfilter_run(f, pkt, 64, 64),
			 bpf_filter(shift, pkt, 64, 64));
	ferry_cfilter_destroy(f);

	f = ferry_cfilter_create(udp, ARRAY_LEN(udp), 0);
	assert_true(ferry_cfilter_native(f));
	assert_int_equal(ferry_cfilter_run(f, pkt, 64, 64), 0xffff);
	assert_int_equal(ferry_cfilter_run(f, pkt, 64, 23), 0);
	ferry_cfilter_destroy(f);

	f = ferry_cfilter_create(udp, ARRAY_LEN(udp), FERRY_CFILTER_LIBPCAP);
	assert_false(ferry_cfilter_native(f));
	assert_int_equal(ferry_cfilter_run(f, pkt, 64, 64), 0xffff);
	ferry_cfilter_destroy(f);

	/* Not run: libpcap 1.10 has no loop guard for it. */
	f = ferry_cfilter_create(back, ARRAY_LEN(back), 0);
	assert_false(ferry_cfilter_native(f));
	ferry_cfilter_destroy(f);

	assert_null(ferry_cfilter_create(udp, 0, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tcpdump_exprs),
		cmocka_unit_test(test_random_programs),
		cmocka_unit_test(test_left_to_libpcap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
