// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_parse - unit tests for bpf/ferry_parse.h, the parser the XDP
 * classifier runs, compiled here as plain C.
 *
 * Each frame is copied into a heap buffer of exactly its length before it
 * is parsed, so under -fsanitize=address a read one byte past data_end
 * fails the test instead of reading the builder's spare bytes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "ferry_parse.h"

/* ---- frame builder ---- */

struct frame {
	uint8_t b[512];
	size_t len;
};

static void put8(struct frame *f, uint8_t v)
{
	assert_true(f->len < sizeof(f->b));
	f->b[f->len++] = v;
}

static void put16(struct frame *f, uint16_t v)
{
	put8(f, v >> 8);
	put8(f, v & 0xff);
}

static void put32(struct frame *f, uint32_t v)
{
	put16(f, v >> 16);
	put16(f, v & 0xffff);
}

static void put_zero(struct frame *f, size_t n)
{
	while (n--)
		put8(f, 0);
}

static void set16(struct frame *f, size_t off, uint16_t v)
{
	f->b[off] = v >> 8;
	f->b[off + 1] = v & 0xff;
}

static void eth(struct frame *f, uint16_t type)
{
	static const uint8_t macs[12] = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1};

	memcpy(f->b + f->len, macs, sizeof(macs));
	f->len += sizeof(macs);
	put16(f, type);
}

/* One tag: TCI (PCP 0, DEI 0, VID) and the ethertype that follows. */
static void vlan(struct frame *f, uint16_t vid, uint16_t type)
{
	put16(f, vid);
	put16(f, type);
}

#define IP4_SRC 0x0a000001 /* 10.0.0.1 */
#define IP4_DST 0x0a000002 /* 10.0.0.2 */

/* 20-byte IPv4 header carrying l4_len bytes; returns its offset. */
static size_t ip4(struct frame *f, uint8_t proto, uint16_t l4_len)
{
	size_t off = f->len;

	put8(f, 0x45);
	put8(f, 0);
	put16(f, 20 + l4_len);
	put16(f, 0x1234); /* id */
	put16(f, 0);	  /* flags, fragment offset */
	put8(f, 64);
	put8(f, proto);
	put16(f, 0); /* checksum: the parser does not check it */
	put32(f, IP4_SRC);
	put32(f, IP4_DST);
	return off;
}

/* 2001:db8::1 -> 2001:db8::2 */
static void ip6_addr(struct frame *f, uint8_t last)
{
	put32(f, 0x20010db8);
	put32(f, 0);
	put32(f, 0);
	put32(f, last);
}

static size_t ip6(struct frame *f, uint8_t nexthdr, uint16_t payload_len)
{
	size_t off = f->len;

	put32(f, 0x60000000);
	put16(f, payload_len);
	put8(f, nexthdr);
	put8(f, 64);
	ip6_addr(f, 1);
	ip6_addr(f, 2);
	return off;
}

/* Hop-by-hop, routing or destination options: (hdrlen + 1) * 8 bytes. */
static void ip6_opts(struct frame *f, uint8_t nexthdr, uint8_t hdrlen)
{
	put8(f, nexthdr);
	put8(f, hdrlen);
	put_zero(f, 6 + hdrlen * 8);
}

/* frag_off in 8-byte units. */
static void ip6_frag(struct frame *f, uint8_t nexthdr, uint16_t frag_off,
		     int more)
{
	put8(f, nexthdr);
	put8(f, 0);
	put16(f, (uint16_t)(frag_off << 3) | (more ? 1 : 0));
	put32(f, 0xdeadbeef); /* identification */
}

static void udp(struct frame *f, uint16_t sport, uint16_t dport,
		uint16_t payload)
{
	put16(f, sport);
	put16(f, dport);
	put16(f, 8 + payload);
	put16(f, 0);
	put_zero(f, payload);
}

/* TCP header of doff 32-bit words (options zeroed). */
static void tcp(struct frame *f, uint16_t sport, uint16_t dport, uint8_t doff)
{
	put16(f, sport);
	put16(f, dport);
	put32(f, 1); /* seq */
	put32(f, 0); /* ack */
	put8(f, doff << 4);
	put8(f, 0x02); /* SYN */
	put16(f, 65535);
	put32(f, 0); /* checksum, urgent pointer */
	put_zero(f, doff > 5 ? (doff - 5) * 4 : 0);
}

/* ICMP/ICMPv6 header (type, code, checksum, 4 more bytes) + body. */
static void icmp(struct frame *f, uint8_t type, size_t body)
{
	put8(f, type);
	put8(f, 0);
	put16(f, 0);
	put32(f, 0);
	put_zero(f, body);
}

/* ---- the frames the cases use ---- */

#define UDP_PAYLOAD 10
#define IP4_UDP_LEN (14 + 20 + 8 + UDP_PAYLOAD)

static void f_ip4_udp(struct frame *f)
{
	eth(f, ETH_P_IP);
	ip4(f, IPPROTO_UDP, 8 + UDP_PAYLOAD);
	udp(f, 1234, 80, UDP_PAYLOAD);
}

static void f_ip4_tcp(struct frame *f)
{
	eth(f, ETH_P_IP);
	ip4(f, IPPROTO_TCP, 20);
	tcp(f, 40000, 443, 5);
}

static void f_ip4_tcp_opts(struct frame *f)
{
	eth(f, ETH_P_IP);
	ip4(f, IPPROTO_TCP, 32);
	tcp(f, 40000, 443, 8);
}

static void f_ip4_icmp(struct frame *f)
{
	eth(f, ETH_P_IP);
	ip4(f, IPPROTO_ICMP, 8 + 4);
	icmp(f, 8, 4);
}

static void f_ip4_gre(struct frame *f)
{
	eth(f, ETH_P_IP);
	ip4(f, IPPROTO_GRE, 4);
	put32(f, 0x00000800);
}

static void f_ip6_udp(struct frame *f)
{
	eth(f, ETH_P_IPV6);
	ip6(f, IPPROTO_UDP, 8 + UDP_PAYLOAD);
	udp(f, 5353, 53, UDP_PAYLOAD);
}

static void f_ip6_hbh_frag_udp(struct frame *f)
{
	eth(f, ETH_P_IPV6);
	ip6(f, IPPROTO_HOPOPTS, 8 + 8 + 8 + UDP_PAYLOAD);
	ip6_opts(f, IPPROTO_FRAGMENT, 0);
	ip6_frag(f, IPPROTO_UDP, 0, 0);
	udp(f, 5353, 53, UDP_PAYLOAD);
}

static void f_ip6_rt_dst_tcp(struct frame *f)
{
	eth(f, ETH_P_IPV6);
	ip6(f, IPPROTO_ROUTING, 8 + 16 + 20);
	ip6_opts(f, IPPROTO_DSTOPTS, 0);
	ip6_opts(f, IPPROTO_TCP, 1);
	tcp(f, 40000, 22, 5);
}

/* First fragment: the UDP length covers bytes in later fragments. */
static void f_ip6_frag_first(struct frame *f)
{
	eth(f, ETH_P_IPV6);
	ip6(f, IPPROTO_FRAGMENT, 8 + 8 + UDP_PAYLOAD);
	ip6_frag(f, IPPROTO_UDP, 0, 1);
	udp(f, 5353, 53, UDP_PAYLOAD);
	set16(f, 14 + 40 + 8 + 4, 1000);
}

static void f_ip6_frag_later(struct frame *f)
{
	eth(f, ETH_P_IPV6);
	ip6(f, IPPROTO_FRAGMENT, 8 + 16);
	ip6_frag(f, IPPROTO_UDP, 185, 0);
	put_zero(f, 16);
}

static void f_ip6_ext_max(struct frame *f)
{
	int i;

	eth(f, ETH_P_IPV6);
	ip6(f, IPPROTO_DSTOPTS, FERRY_MAX_IP6_EXT * 8 + 8);
	for (i = 0; i < FERRY_MAX_IP6_EXT; i++)
		ip6_opts(f,
			 i == FERRY_MAX_IP6_EXT - 1 ? IPPROTO_UDP
						    : IPPROTO_DSTOPTS,
			 0);
	udp(f, 1, 2, 0);
}

static void f_ip6_ext_too_many(struct frame *f)
{
	int i;

	eth(f, ETH_P_IPV6);
	ip6(f, IPPROTO_DSTOPTS, (FERRY_MAX_IP6_EXT + 1) * 8 + 8);
	for (i = 0; i < FERRY_MAX_IP6_EXT + 1; i++)
		ip6_opts(f,
			 i == FERRY_MAX_IP6_EXT ? IPPROTO_UDP : IPPROTO_DSTOPTS,
			 0);
	udp(f, 1, 2, 0);
}

/* Hop-by-hop claims 88 bytes; the payload has 16. */
static void f_ip6_ext_trunc(struct frame *f)
{
	eth(f, ETH_P_IPV6);
	ip6(f, IPPROTO_HOPOPTS, 16);
	put8(f, IPPROTO_UDP);
	put8(f, 10);
	put_zero(f, 14);
}

/* The header is in the frame, but past the payload length (padding). */
static void f_ip6_ext_past_payload(struct frame *f)
{
	eth(f, ETH_P_IPV6);
	ip6(f, IPPROTO_HOPOPTS, 4);
	ip6_opts(f, IPPROTO_UDP, 0);
}

static void f_ip6_trunc(struct frame *f)
{
	eth(f, ETH_P_IPV6);
	put_zero(f, 30);
}

static void f_ip6_bad_len(struct frame *f)
{
	f_ip6_udp(f);
	set16(f, 14 + 4, 8 + UDP_PAYLOAD + 1);
}

static void f_ip6_bad_ver(struct frame *f)
{
	f_ip6_udp(f);
	f->b[14] = 0x40;
}

static void f_ndp_ns(struct frame *f)
{
	eth(f, ETH_P_IPV6);
	ip6(f, IPPROTO_ICMPV6, 24);
	icmp(f, 135, 16); /* reserved, then the 16-byte target address */
}

static void f_vlan_ip4_udp(struct frame *f)
{
	eth(f, ETH_P_8021Q);
	vlan(f, 100, ETH_P_IP);
	ip4(f, IPPROTO_UDP, 8 + UDP_PAYLOAD);
	udp(f, 1234, 80, UDP_PAYLOAD);
}

static void f_qinq_ip4_udp(struct frame *f)
{
	eth(f, ETH_P_8021AD);
	vlan(f, 10, ETH_P_8021Q);
	vlan(f, 0x2000 | 20, ETH_P_IP); /* PCP 1: not part of the VID */
	ip4(f, IPPROTO_UDP, 8 + UDP_PAYLOAD);
	udp(f, 1234, 80, UDP_PAYLOAD);
}

static void f_vlan_triple(struct frame *f)
{
	eth(f, ETH_P_8021AD);
	vlan(f, 10, ETH_P_8021Q);
	vlan(f, 20, ETH_P_8021Q);
	vlan(f, 30, ETH_P_IP);
	ip4(f, IPPROTO_UDP, 8);
	udp(f, 1, 2, 0);
}

static void f_vlan_trunc(struct frame *f)
{
	eth(f, ETH_P_8021Q);
	put16(f, 100);
}

static void f_arp(struct frame *f)
{
	eth(f, ETH_P_ARP);
	put16(f, 1);	  /* htype Ethernet */
	put16(f, 0x0800); /* ptype IPv4 */
	put8(f, 6);
	put8(f, 4);
	put16(f, 1); /* request */
	put_zero(f, 20);
}

static void f_vlan_arp(struct frame *f)
{
	eth(f, ETH_P_8021Q);
	vlan(f, 7, ETH_P_ARP);
	put_zero(f, 28);
}

static void f_lldp(struct frame *f)
{
	eth(f, 0x88cc);
	put_zero(f, 46);
}

static void f_ip4_ihl4(struct frame *f)
{
	f_ip4_udp(f);
	f->b[14] = 0x44;
}

/* IHL 15 is 60 bytes of header; the frame has 38 after Ethernet. */
static void f_ip4_ihl15(struct frame *f)
{
	f_ip4_udp(f);
	f->b[14] = 0x4f;
}

static void f_ip4_tot_len_big(struct frame *f)
{
	f_ip4_udp(f);
	set16(f, 14 + 2, 20 + 8 + UDP_PAYLOAD + 1);
}

static void f_ip4_tot_len_small(struct frame *f)
{
	f_ip4_udp(f);
	set16(f, 14 + 2, 19);
}

static void f_ip4_bad_ver(struct frame *f)
{
	f_ip4_udp(f);
	f->b[14] = 0x65;
}

static void f_ip4_trunc(struct frame *f)
{
	eth(f, ETH_P_IP);
	put_zero(f, 19);
}

static void f_udp_len_big(struct frame *f)
{
	f_ip4_udp(f);
	set16(f, 34 + 4, 8 + UDP_PAYLOAD + 1);
}

static void f_udp_len_small(struct frame *f)
{
	f_ip4_udp(f);
	set16(f, 34 + 4, 7);
}

/* The IP length leaves 4 bytes for a UDP header. */
static void f_udp_trunc(struct frame *f)
{
	eth(f, ETH_P_IP);
	ip4(f, IPPROTO_UDP, 4);
	put32(f, 0x04d20050);
}

/* As udp_trunc, but padding puts 8 bytes in the frame after the IP end. */
static void f_udp_past_ip_len(struct frame *f)
{
	f_udp_trunc(f);
	put_zero(f, 60 - f->len);
}

/* The IP length leaves 2 bytes of ICMP; padding makes up the frame. */
static void f_icmp_past_ip_len(struct frame *f)
{
	eth(f, ETH_P_IP);
	ip4(f, IPPROTO_ICMP, 2);
	icmp(f, 8, 0);
	put_zero(f, 60 - f->len);
}

static void f_tcp_doff4(struct frame *f)
{
	f_ip4_tcp(f);
	f->b[34 + 12] = 4 << 4;
}

static void f_tcp_doff_beyond(struct frame *f)
{
	f_ip4_tcp(f);
	f->b[34 + 12] = 15 << 4;
}

/* A 28-byte IPv4/UDP datagram padded to the 60-byte Ethernet minimum. */
static void f_ip4_padded(struct frame *f)
{
	eth(f, ETH_P_IP);
	ip4(f, IPPROTO_UDP, 8);
	udp(f, 1234, 80, 0);
	put_zero(f, 60 - f->len);
}

static void f_ip4_frag_later(struct frame *f)
{
	f_ip4_udp(f);
	set16(f, 14 + 6, 100); /* offset 800 bytes */
}

/* First fragment: MF set, UDP length counts the missing fragments. */
static void f_ip4_frag_first(struct frame *f)
{
	f_ip4_udp(f);
	set16(f, 14 + 6, FERRY_IP_MF);
	set16(f, 34 + 4, 1000);
}

/* ---- the table ---- */

struct parse_expect {
	int ret;
	/* Checked only when ret is FERRY_PARSE_OK. */
	uint16_t ethertype;
	uint8_t n_vlan;
	uint8_t family;
	uint8_t l4_proto;
	uint8_t is_frag;
	uint16_t l3_off;
	uint16_t l4_off;
	uint16_t sport;
	uint16_t dport;
};

struct parse_case {
	const char *name;
	void (*build)(struct frame *f);
	struct parse_expect want;
};

#define OK FERRY_PARSE_OK
#define DROP(r)                                                                \
	{                                                                      \
		.ret = FERRY_R_##r                                             \
	}

static const struct parse_case cases[] = {
	{"ip4_udp",
	 f_ip4_udp,
	 {.ret = OK,
	  .ethertype = ETH_P_IP,
	  .family = 4,
	  .l4_proto = IPPROTO_UDP,
	  .l3_off = 14,
	  .l4_off = 34,
	  .sport = 1234,
	  .dport = 80}},
	{"ip4_tcp",
	 f_ip4_tcp,
	 {.ret = OK,
	  .ethertype = ETH_P_IP,
	  .family = 4,
	  .l4_proto = IPPROTO_TCP,
	  .l3_off = 14,
	  .l4_off = 34,
	  .sport = 40000,
	  .dport = 443}},
	{"ip4_tcp_options",
	 f_ip4_tcp_opts,
	 {.ret = OK,
	  .ethertype = ETH_P_IP,
	  .family = 4,
	  .l4_proto = IPPROTO_TCP,
	  .l3_off = 14,
	  .l4_off = 34,
	  .sport = 40000,
	  .dport = 443}},
	{"ip4_icmp_echo",
	 f_ip4_icmp,
	 {.ret = OK,
	  .ethertype = ETH_P_IP,
	  .family = 4,
	  .l4_proto = IPPROTO_ICMP,
	  .l3_off = 14,
	  .l4_off = 34,
	  .sport = 8}},
	{"ip4_gre_no_ports",
	 f_ip4_gre,
	 {.ret = OK,
	  .ethertype = ETH_P_IP,
	  .family = 4,
	  .l4_proto = IPPROTO_GRE,
	  .l3_off = 14,
	  .l4_off = 34}},
	{"ip4_padded_to_60",
	 f_ip4_padded,
	 {.ret = OK,
	  .ethertype = ETH_P_IP,
	  .family = 4,
	  .l4_proto = IPPROTO_UDP,
	  .l3_off = 14,
	  .l4_off = 34,
	  .sport = 1234,
	  .dport = 80}},
	{"ip4_frag_first",
	 f_ip4_frag_first,
	 {.ret = OK,
	  .ethertype = ETH_P_IP,
	  .family = 4,
	  .l4_proto = IPPROTO_UDP,
	  .l3_off = 14,
	  .l4_off = 34,
	  .sport = 1234,
	  .dport = 80}},
	{"ip4_frag_later",
	 f_ip4_frag_later,
	 {.ret = OK,
	  .ethertype = ETH_P_IP,
	  .family = 4,
	  .l4_proto = IPPROTO_UDP,
	  .is_frag = 1,
	  .l3_off = 14,
	  .l4_off = 34}},
	{"ip6_udp",
	 f_ip6_udp,
	 {.ret = OK,
	  .ethertype = ETH_P_IPV6,
	  .family = 6,
	  .l4_proto = IPPROTO_UDP,
	  .l3_off = 14,
	  .l4_off = 54,
	  .sport = 5353,
	  .dport = 53}},
	{"ip6_hbh_frag_udp",
	 f_ip6_hbh_frag_udp,
	 {.ret = OK,
	  .ethertype = ETH_P_IPV6,
	  .family = 6,
	  .l4_proto = IPPROTO_UDP,
	  .l3_off = 14,
	  .l4_off = 70,
	  .sport = 5353,
	  .dport = 53}},
	{"ip6_routing_dstopts_tcp",
	 f_ip6_rt_dst_tcp,
	 {.ret = OK,
	  .ethertype = ETH_P_IPV6,
	  .family = 6,
	  .l4_proto = IPPROTO_TCP,
	  .l3_off = 14,
	  .l4_off = 78,
	  .sport = 40000,
	  .dport = 22}},
	{"ip6_frag_first",
	 f_ip6_frag_first,
	 {.ret = OK,
	  .ethertype = ETH_P_IPV6,
	  .family = 6,
	  .l4_proto = IPPROTO_UDP,
	  .l3_off = 14,
	  .l4_off = 62,
	  .sport = 5353,
	  .dport = 53}},
	{"ip6_frag_later",
	 f_ip6_frag_later,
	 {.ret = OK,
	  .ethertype = ETH_P_IPV6,
	  .family = 6,
	  .l4_proto = IPPROTO_UDP,
	  .is_frag = 1,
	  .l3_off = 14,
	  .l4_off = 62}},
	{"ip6_ext_max",
	 f_ip6_ext_max,
	 {.ret = OK,
	  .ethertype = ETH_P_IPV6,
	  .family = 6,
	  .l4_proto = IPPROTO_UDP,
	  .l3_off = 14,
	  .l4_off = 54 + FERRY_MAX_IP6_EXT * 8,
	  .sport = 1,
	  .dport = 2}},
	{"ndp_neighbour_solicit",
	 f_ndp_ns,
	 {.ret = OK,
	  .ethertype = ETH_P_IPV6,
	  .family = 6,
	  .l4_proto = IPPROTO_ICMPV6,
	  .l3_off = 14,
	  .l4_off = 54,
	  .sport = 135}},
	{"vlan_ip4_udp",
	 f_vlan_ip4_udp,
	 {.ret = OK,
	  .ethertype = ETH_P_IP,
	  .n_vlan = 1,
	  .family = 4,
	  .l4_proto = IPPROTO_UDP,
	  .l3_off = 18,
	  .l4_off = 38,
	  .sport = 1234,
	  .dport = 80}},
	{"qinq_ip4_udp",
	 f_qinq_ip4_udp,
	 {.ret = OK,
	  .ethertype = ETH_P_IP,
	  .n_vlan = 2,
	  .family = 4,
	  .l4_proto = IPPROTO_UDP,
	  .l3_off = 22,
	  .l4_off = 42,
	  .sport = 1234,
	  .dport = 80}},
	{"arp", f_arp, {.ret = OK, .ethertype = ETH_P_ARP, .l3_off = 14}},
	{"vlan_arp",
	 f_vlan_arp,
	 {.ret = OK, .ethertype = ETH_P_ARP, .n_vlan = 1, .l3_off = 18}},
	{"lldp_not_ip", f_lldp, {.ret = OK, .ethertype = 0x88cc, .l3_off = 14}},
	{"vlan_triple", f_vlan_triple, DROP(DROP_VLAN_DEPTH)},
	{"vlan_trunc", f_vlan_trunc, DROP(DROP_TRUNC_VLAN)},
	{"ip4_trunc", f_ip4_trunc, DROP(DROP_TRUNC_IP4)},
	{"ip4_ihl4", f_ip4_ihl4, DROP(DROP_BAD_IHL)},
	{"ip4_ihl15_beyond_data", f_ip4_ihl15, DROP(DROP_BAD_IHL)},
	{"ip4_tot_len_too_big", f_ip4_tot_len_big, DROP(DROP_BAD_IP4_LEN)},
	{"ip4_tot_len_below_ihl", f_ip4_tot_len_small, DROP(DROP_BAD_IP4_LEN)},
	{"ip4_version_6", f_ip4_bad_ver, DROP(DROP_BAD_IP_VER)},
	{"ip6_trunc", f_ip6_trunc, DROP(DROP_TRUNC_IP6)},
	{"ip6_payload_len_too_big", f_ip6_bad_len, DROP(DROP_BAD_IP6_LEN)},
	{"ip6_version_4", f_ip6_bad_ver, DROP(DROP_BAD_IP_VER)},
	{"ip6_ext_too_many", f_ip6_ext_too_many, DROP(DROP_IP6_EXT)},
	{"ip6_ext_trunc", f_ip6_ext_trunc, DROP(DROP_IP6_EXT)},
	{"ip6_ext_past_payload_len", f_ip6_ext_past_payload,
	 DROP(DROP_IP6_EXT)},
	{"udp_len_too_big", f_udp_len_big, DROP(DROP_BAD_L4_LEN)},
	{"udp_len_below_8", f_udp_len_small, DROP(DROP_BAD_L4_LEN)},
	{"udp_trunc", f_udp_trunc, DROP(DROP_TRUNC_L4)},
	{"udp_past_ip_len", f_udp_past_ip_len, DROP(DROP_TRUNC_L4)},
	{"icmp_past_ip_len", f_icmp_past_ip_len, DROP(DROP_TRUNC_L4)},
	{"tcp_doff4", f_tcp_doff4, DROP(DROP_TRUNC_L4)},
	{"tcp_doff_beyond_ip", f_tcp_doff_beyond, DROP(DROP_TRUNC_L4)},
};

#define N_CASES (sizeof(cases) / sizeof(cases[0]))

/* ---- running a frame ---- */

/* Parse the first len bytes of f from a heap copy of exactly that size. */
static int parse_len(const struct frame *f, size_t len, struct ferry_pkt *pkt)
{
	uint8_t *buf = malloc(len ? len : 1);
	int ret;

	assert_non_null(buf);
	memcpy(buf, f->b, len);
	ret = ferry_parse(buf, buf + len, pkt);
	free(buf);
	return ret;
}

static int is_reason_or_ok(int ret)
{
	return ret == FERRY_PARSE_OK || FERRY_R_IS_MALFORMED(ret);
}

static void run_case(void **state)
{
	const struct parse_case *c = *state;
	const struct parse_expect *w = &c->want;
	struct frame f = {0};
	struct ferry_pkt pkt;
	int ret;

	c->build(&f);
	ret = parse_len(&f, f.len, &pkt);
	assert_int_equal(ret, w->ret);
	if (ret != FERRY_PARSE_OK)
		return;
	assert_int_equal(pkt.ethertype, w->ethertype);
	assert_int_equal(pkt.n_vlan, w->n_vlan);
	assert_int_equal(pkt.family, w->family);
	assert_int_equal(pkt.l4_proto, w->l4_proto);
	assert_int_equal(pkt.is_frag, w->is_frag);
	assert_int_equal(pkt.l3_off, w->l3_off);
	assert_int_equal(pkt.l4_off, w->l4_off);
	assert_int_equal(pkt.sport, w->sport);
	assert_int_equal(pkt.dport, w->dport);
}

/* ---- tests outside the table ---- */

static void test_ip4_addrs(void **state __attribute__((unused)))
{
	struct frame f = {0};
	struct ferry_pkt pkt;

	f_ip4_udp(&f);
	assert_int_equal(parse_len(&f, f.len, &pkt), FERRY_PARSE_OK);
	assert_int_equal(pkt.src[0], htonl(IP4_SRC));
	assert_int_equal(pkt.dst[0], htonl(IP4_DST));
	assert_int_equal(pkt.src[1] | pkt.src[2] | pkt.src[3], 0);
	assert_int_equal(pkt.dst[1] | pkt.dst[2] | pkt.dst[3], 0);
}

static void test_ip6_addrs(void **state __attribute__((unused)))
{
	static const uint8_t src[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 1};
	static const uint8_t dst[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 2};
	struct frame f = {0};
	struct ferry_pkt pkt;

	f_ip6_hbh_frag_udp(&f);
	assert_int_equal(parse_len(&f, f.len, &pkt), FERRY_PARSE_OK);
	assert_memory_equal(pkt.src, src, sizeof(src));
	assert_memory_equal(pkt.dst, dst, sizeof(dst));
}

static void test_vlan_ids(void **state __attribute__((unused)))
{
	struct frame f = {0};
	struct ferry_pkt pkt;

	f_qinq_ip4_udp(&f);
	assert_int_equal(parse_len(&f, f.len, &pkt), FERRY_PARSE_OK);
	assert_int_equal(pkt.vlan[0], 10);
	assert_int_equal(pkt.vlan[1], 20);
}

/*
 * Every prefix of a good IPv4/UDP frame, with the exact reason each
 * length must give.
 */
static void test_trunc_ip4_udp(void **state __attribute__((unused)))
{
	struct frame f = {0};
	struct ferry_pkt pkt;
	size_t len;
	int want, ret;

	f_ip4_udp(&f);
	assert_int_equal(f.len, IP4_UDP_LEN);
	for (len = 0; len <= f.len; len++) {
		if (len < 14)
			want = FERRY_R_DROP_TRUNC_ETH;
		else if (len < 34)
			want = FERRY_R_DROP_TRUNC_IP4;
		else if (len < IP4_UDP_LEN)
			want = FERRY_R_DROP_BAD_IP4_LEN; /* tot_len > bytes */
		else
			want = FERRY_PARSE_OK;
		ret = parse_len(&f, len, &pkt);
		if (ret != want)
			fail_msg("len %zu: expected %d, got %d", len, want,
				 ret);
	}
}

/*
 * Every prefix of every frame in the table gives OK or a malformed
 * reason, and (under ASan) never reads past its end.
 */
static void test_trunc_all(void **state __attribute__((unused)))
{
	struct ferry_pkt pkt;
	size_t i, len;
	int ret;

	for (i = 0; i < N_CASES; i++) {
		struct frame f = {0};

		cases[i].build(&f);
		for (len = 0; len <= f.len; len++) {
			ret = parse_len(&f, len, &pkt);
			if (!is_reason_or_ok(ret))
				fail_msg("%s len %zu: result %d", cases[i].name,
					 len, ret);
			if (len < 14)
				assert_int_equal(ret, FERRY_R_DROP_TRUNC_ETH);
		}
	}
}

static const struct {
	const char *name;
	CMUnitTestFunction func;
} extra_tests[] = {
	{"ip4_addrs", test_ip4_addrs},
	{"ip6_addrs", test_ip6_addrs},
	{"vlan_ids", test_vlan_ids},
	{"trunc_ip4_udp_every_length", test_trunc_ip4_udp},
	{"trunc_every_case_every_length", test_trunc_all},
};

#define N_EXTRA (sizeof(extra_tests) / sizeof(extra_tests[0]))

int main(void)
{
	struct CMUnitTest tests[N_CASES + N_EXTRA];
	size_t i;

	memset(tests, 0, sizeof(tests));
	for (i = 0; i < N_CASES; i++) {
		tests[i].name = cases[i].name;
		tests[i].test_func = run_case;
		tests[i].initial_state = (void *)&cases[i];
	}
	for (i = 0; i < N_EXTRA; i++) {
		tests[N_CASES + i].name = extra_tests[i].name;
		tests[N_CASES + i].test_func = extra_tests[i].func;
	}
	return _cmocka_run_group_tests("ferry_parse", tests, N_CASES + N_EXTRA,
				       NULL, NULL);
}
