// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_route - route_frame() on canned frames: each exception of both
 * families, the forwarded frame's rewrite (TTL, checksum, MACs), the ICMP
 * errors' contents and checksums, multipath, and the counters; and
 * route_frame_chain() on the first piece of multi-buffer frames.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fib.h"
#include "route.h"
#include "route_csum.h"

static const uint8_t mac_peer[6] = {2, 0, 0, 0, 0, 0x99};
static const uint8_t mac_nbr[6] = {2, 0, 0, 0, 1, 0x01};

struct env {
	struct fib *fib;
	struct route_port ports[3];
	struct route_ctx ctx;
	struct route_counters c;
	uint32_t nh_fwd, nh_local, nh_drop, nh_conn, nh_port2, nh_small;
	uint32_t nh_b, grp;
};

static uint32_t nh(struct env *e, uint16_t port, unsigned flags,
		   const uint8_t *mac)
{
	struct fib_nh_info in = {.port = port, .flags = (uint8_t)flags};
	int id;

	if (mac)
		memcpy(in.mac, mac, 6);
	id = fib_nh_alloc(e->fib, &in);
	assert_true(id > 0);
	return (uint32_t)id;
}

static void p6(const char *s, uint8_t *a)
{
	assert_int_equal(inet_pton(AF_INET6, s, a), 1);
}

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	uint8_t a[16];
	uint32_t m[2];
	unsigned i;

	e->fib = fib_create(NULL);
	for (i = 0; i < 3; i++) {
		struct route_port *p = &e->ports[i];

		memcpy(p->mac, (uint8_t[6]){2, 0, 0, 0xaa, 0, (uint8_t)i}, 6);
		p->routed = i < 2;
		p->mtu = 1500;
		p->ip4 = 0x0a000001 + (i << 8); /* 10.0.i.1 */
		p->has_ip6 = 1;
		p6("2001:db8::1", p->ip6);
		p->ip6[7] = (uint8_t)i;
	}
	e->ports[1].mtu = 1000;
	e->nh_fwd = nh(e, 1, FIB_NH_F_NEIGH, mac_nbr);
	e->nh_local = nh(e, FIB_PORT_NONE, FIB_NH_F_LOCAL, NULL);
	e->nh_drop = nh(e, FIB_PORT_NONE, FIB_NH_F_DROP, NULL);
	e->nh_conn = nh(e, 1, FIB_NH_F_CONNECTED, NULL);
	e->nh_port2 = nh(e, 2, FIB_NH_F_NEIGH, mac_nbr);
	e->nh_b = nh(e, 0, FIB_NH_F_NEIGH, mac_nbr);
	m[0] = e->nh_fwd;
	m[1] = e->nh_b;
	e->grp = (uint32_t)fib_nh_group_alloc(e->fib, m, 2);
	/* 10.1.0.0/16 via a neighbour on port 1; 10.0.0.1 is ours;
	 * 10.2/16 blackholed; 10.3/16 on-link, unresolved; 10.4/16 out of
	 * a port that does not route; 10.5/16 two paths */
	assert_int_equal(fib4_add(e->fib, 0x0a010000, 16, e->nh_fwd), 0);
	assert_int_equal(fib4_add(e->fib, 0x0a000001, 32, e->nh_local), 0);
	assert_int_equal(fib4_add(e->fib, 0x0a020000, 16, e->nh_drop), 0);
	assert_int_equal(fib4_add(e->fib, 0x0a030000, 16, e->nh_conn), 0);
	assert_int_equal(fib4_add(e->fib, 0x0a040000, 16, e->nh_port2), 0);
	assert_int_equal(fib4_add(e->fib, 0x0a050000, 16, e->grp), 0);
	p6("2001:db8:1::", a);
	assert_int_equal(fib6_add(e->fib, a, 48, e->nh_fwd), 0);
	p6("2001:db8::1", a);
	assert_int_equal(fib6_add(e->fib, a, 128, e->nh_local), 0);
	p6("2001:db8:3::", a);
	assert_int_equal(fib6_add(e->fib, a, 48, e->nh_conn), 0);
	e->ctx = (struct route_ctx){
		.fib = fib_dp(e->fib), .ports = e->ports, .n_ports = 3};
	*state = e;
	return 0;
}

/* A big-endian word at any offset of a frame (no aligned loads). */
static uint32_t be32_at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

static int teardown(void **state)
{
	struct env *e = *state;

	fib_destroy(e->fib);
	free(e);
	return 0;
}

/* Ethernet + IPv4 + 8 bytes of L4 + pad to len; returns the frame length. */
static size_t frame4(uint8_t *f, uint32_t src, uint32_t dst, uint8_t ttl,
		     uint8_t proto, unsigned ip_len, int df)
{
	uint8_t *ip = f + 14;
	uint16_t c;

	memset(f, 0, 14 + ip_len);
	memcpy(f, (uint8_t[6]){2, 0, 0, 0xaa, 0, 0}, 6);
	memcpy(f + 6, mac_peer, 6);
	f[12] = 0x08;
	ip[0] = 0x45;
	ip[2] = (uint8_t)(ip_len >> 8);
	ip[3] = (uint8_t)ip_len;
	ip[4] = 0x12;
	ip[6] = df ? 0x40 : 0;
	ip[8] = ttl;
	ip[9] = proto;
	src = htonl(src); /* frames are byte arrays: no aligned stores */
	dst = htonl(dst);
	memcpy(ip + 12, &src, 4);
	memcpy(ip + 16, &dst, 4);
	c = ip4_csum_full(ip, 20);
	ip[10] = (uint8_t)(c >> 8);
	ip[11] = (uint8_t)c;
	ip[20] = 8; /* ICMP echo request, or ports 0x0800 */
	return 14 + ip_len;
}

static size_t frame6(uint8_t *f, const char *src, const char *dst, uint8_t hlim,
		     uint8_t nxt, uint8_t l4_0, unsigned ip_len)
{
	uint8_t *ip = f + 14;

	memset(f, 0, 14 + ip_len);
	memcpy(f, (uint8_t[6]){2, 0, 0, 0xaa, 0, 0}, 6);
	memcpy(f + 6, mac_peer, 6);
	f[12] = 0x86;
	f[13] = 0xdd;
	ip[0] = 0x60;
	ip[4] = (uint8_t)((ip_len - 40) >> 8);
	ip[5] = (uint8_t)(ip_len - 40);
	ip[6] = nxt;
	ip[7] = hlim;
	p6(src, ip + 8);
	p6(dst, ip + 24);
	ip[40] = l4_0;
	return 14 + ip_len;
}

static uint8_t buf[2048], out[ROUTE_REPLY_MAX];

static enum route_verdict run(struct env *e, size_t len, uint32_t hash,
			      struct route_result *r, enum route_reason want)
{
	uint64_t before = e->c.n[want];
	enum route_verdict v = route_frame(&e->ctx, buf, len, 0, hash, out,
					   sizeof(out), r, &e->c);

	if (r->reason != want)
		fail_msg("reason: want %s, got %s", route_reason_names[want],
			 route_reason_names[r->reason]);
	assert_int_equal(e->c.n[want], before + 1);
	return v;
}

static void test_v4_forward(void **state)
{
	struct env *e = *state;
	struct route_result r;
	size_t len = frame4(buf, 0xc0000201, 0x0a010203, 64, 17, 100, 1);

	assert_int_equal(run(e, len, 0, &r, ROUTE_R_routed), ROUTE_FWD);
	assert_int_equal(r.port, 1);
	assert_int_equal(r.nh, e->nh_fwd);
	assert_int_equal(buf[14 + 8], 63);
	assert_int_equal(csum_partial(buf + 14, 20, 0), 0xffff);
	assert_memory_equal(buf, mac_nbr, 6);
	assert_memory_equal(buf + 6, e->ports[1].mac, 6);
}

static void check_icmp4(struct env *e, const struct route_result *r,
			uint8_t type, uint8_t code, unsigned mtu)
{
	const uint8_t *ip = out + 14, *icmp = ip + 20;
	unsigned tot = (unsigned)(ip[2] << 8 | ip[3]);

	assert_int_equal(r->verdict, ROUTE_REPLY);
	assert_int_equal(r->port, 0);
	assert_int_equal(r->len, 14 + tot);
	assert_memory_equal(out, mac_peer, 6);
	assert_memory_equal(out + 6, e->ports[0].mac, 6);
	assert_int_equal(out[12] << 8 | out[13], 0x0800);
	assert_int_equal(csum_partial(ip, 20, 0), 0xffff);
	assert_int_equal(be32_at(ip + 12), e->ports[0].ip4);
	assert_memory_equal(ip + 16, buf + 14 + 12, 4);
	assert_int_equal(icmp[0], type);
	assert_int_equal(icmp[1], code);
	assert_int_equal(icmp[6] << 8 | icmp[7], mtu);
	assert_int_equal(csum_partial(icmp, tot - 20, 0), 0xffff);
	assert_memory_equal(icmp + 8, buf + 14, 28); /* the quoted header */
}

static void test_v4_exceptions(void **state)
{
	struct env *e = *state;
	struct route_result r;
	size_t len;

	len = frame4(buf, 0xc0000201, 0x0a010203, 1, 17, 100, 1);
	run(e, len, 0, &r, ROUTE_R_ttl_exceeded);
	check_icmp4(e, &r, 11, 0, 0);

	len = frame4(buf, 0xc0000201, 0x0b000001, 64, 17, 100, 1);
	run(e, len, 0, &r, ROUTE_R_no_route);
	check_icmp4(e, &r, 3, 0, 0);

	len = frame4(buf, 0xc0000201, 0x0a010203, 64, 17, 1200, 1);
	run(e, len, 0, &r, ROUTE_R_frag_needed);
	check_icmp4(e, &r, 3, 4, 1000);
	/* the quote stops at 576 bytes of reply */
	assert_int_equal(r.len, 14 + 576);

	len = frame4(buf, 0xc0000201, 0x0a010203, 64, 17, 1200, 0);
	assert_int_equal(run(e, len, 0, &r, ROUTE_R_no_fragment), ROUTE_DROP);

	len = frame4(buf, 0xc0000201, 0x0a000001, 1, 6, 60, 1);
	assert_int_equal(run(e, len, 0, &r, ROUTE_R_local), ROUTE_HOST);

	len = frame4(buf, 0xc0000201, 0xe0000005, 1, 17, 60, 0);
	assert_int_equal(run(e, len, 0, &r, ROUTE_R_multicast), ROUTE_HOST);

	len = frame4(buf, 0xc0000201, 0x0a020304, 64, 17, 60, 0);
	assert_int_equal(run(e, len, 0, &r, ROUTE_R_blackhole), ROUTE_DROP);

	len = frame4(buf, 0xc0000201, 0x0a030304, 64, 17, 60, 0);
	assert_int_equal(run(e, len, 0, &r, ROUTE_R_no_neigh), ROUTE_DROP);
	assert_int_equal(r.nh, e->nh_conn);
	assert_true(r.connected);
	assert_int_equal(r.family, 4);
	{
		static const uint8_t d[4] = {10, 3, 3, 4};

		assert_memory_equal(r.dst, d, 4);
	}
	assert_int_equal(buf[14 + 8], 64); /* untouched */

	len = frame4(buf, 0xc0000201, 0x0a040304, 64, 17, 60, 0);
	assert_int_equal(run(e, len, 0, &r, ROUTE_R_egress_not_routed),
			 ROUTE_DROP);

	/* an ICMP error about an ICMP error is not sent */
	len = frame4(buf, 0xc0000201, 0x0a010203, 1, 1, 60, 0);
	buf[14 + 20] = 11;
	buf[14 + 10] = buf[14 + 11] = 0;
	{
		uint16_t c = ip4_csum_full(buf + 14, 20);

		buf[14 + 10] = (uint8_t)(c >> 8);
		buf[14 + 11] = (uint8_t)c;
	}
	uint64_t sup = e->c.n[ROUTE_R_icmp_suppressed];
	assert_int_equal(run(e, len, 0, &r, ROUTE_R_ttl_exceeded), ROUTE_DROP);
	assert_int_equal(e->c.n[ROUTE_R_icmp_suppressed], sup + 1);

	/* malformed: bad checksum, truncated, length past the frame */
	len = frame4(buf, 0xc0000201, 0x0a010203, 64, 17, 60, 0);
	buf[14 + 10] ^= 1;
	assert_int_equal(run(e, len, 0, &r, ROUTE_R_malformed), ROUTE_DROP);
	len = frame4(buf, 0xc0000201, 0x0a010203, 64, 17, 60, 0);
	assert_int_equal(run(e, 30, 0, &r, ROUTE_R_malformed), ROUTE_DROP);
	assert_int_equal(run(e, len - 1, 0, &r, ROUTE_R_malformed), ROUTE_DROP);

	/* ARP and the rest go to the kernel */
	buf[12] = 0x08, buf[13] = 0x06;
	assert_int_equal(run(e, 42, 0, &r, ROUTE_R_arp), ROUTE_HOST);
	buf[12] = 0x88, buf[13] = 0xcc;
	assert_int_equal(run(e, 60, 0, &r, ROUTE_R_not_ip), ROUTE_HOST);
}

static void test_multipath(void **state)
{
	struct env *e = *state;
	struct route_result r;
	unsigned seen[2] = {0}, i;

	for (i = 0; i < 64; i++) {
		uint32_t h = i * 0x9e3779b9u;
		size_t len = frame4(buf, 0xc0000201, 0x0a050001, 64, 17, 60, 0);
		unsigned p;

		assert_int_equal(run(e, len, h, &r, ROUTE_R_routed), ROUTE_FWD);
		p = r.port;
		seen[p]++;
		len = frame4(buf, 0xc0000201, 0x0a050001, 64, 17, 60, 0);
		run(e, len, h, &r, ROUTE_R_routed);
		assert_int_equal(r.port, p); /* same flow, same path */
	}
	assert_true(seen[0] > 0 && seen[1] > 0);
}

static void check_icmp6(struct env *e, const struct route_result *r,
			uint8_t type, uint32_t mtu)
{
	const uint8_t *ip = out + 14, *icmp = ip + 40;
	unsigned plen = (unsigned)(ip[4] << 8 | ip[5]);
	uint32_t sum;

	assert_int_equal(r->verdict, ROUTE_REPLY);
	assert_int_equal(r->len, 14 + 40 + plen);
	assert_memory_equal(out, mac_peer, 6);
	assert_int_equal(out[12] << 8 | out[13], 0x86dd);
	assert_int_equal(ip[6], 58);
	assert_memory_equal(ip + 8, e->ports[0].ip6, 16);
	assert_memory_equal(ip + 24, buf + 14 + 8, 16);
	assert_int_equal(icmp[0], type);
	assert_int_equal(be32_at(icmp + 4), mtu);
	/* the pseudo-header sum with the checksum in place is 0xffff */
	sum = csum_partial(ip + 8, 32, 0) + plen + 58;
	assert_int_equal(csum_partial(icmp, plen, sum), 0xffff);
	assert_true(r->len <= 14 + 1280);
}

static void test_v6(void **state)
{
	struct env *e = *state;
	struct route_result r;
	size_t len;

	len = frame6(buf, "2001:db8:9::5", "2001:db8:1::7", 64, 17, 0, 100);
	assert_int_equal(run(e, len, 0, &r, ROUTE_R_routed), ROUTE_FWD);
	assert_int_equal(r.port, 1);
	assert_int_equal(buf[14 + 7], 63);
	assert_memory_equal(buf, mac_nbr, 6);

	len = frame6(buf, "2001:db8:9::5", "2001:db8:1::7", 1, 17, 0, 100);
	run(e, len, 0, &r, ROUTE_R_ttl_exceeded);
	check_icmp6(e, &r, 3, 0);

	len = frame6(buf, "2001:db8:9::5", "2001:db8:7::7", 64, 17, 0, 100);
	run(e, len, 0, &r, ROUTE_R_no_route);
	check_icmp6(e, &r, 1, 0);

	len = frame6(buf, "2001:db8:9::5", "2001:db8:1::7", 64, 17, 0, 1400);
	run(e, len, 0, &r, ROUTE_R_pkt_too_big);
	check_icmp6(e, &r, 2, 1000);
	assert_int_equal(r.len, 14 + 1280);

	len = frame6(buf, "2001:db8:9::5", "2001:db8:3::7", 64, 17, 0, 100);
	assert_int_equal(run(e, len, 0, &r, ROUTE_R_no_neigh), ROUTE_DROP);
	assert_true(r.connected);
	assert_int_equal(r.family, 6);

	len = frame6(buf, "2001:db8:9::5", "2001:db8::1", 64, 6, 0, 100);
	assert_int_equal(run(e, len, 0, &r, ROUTE_R_local), ROUTE_HOST);
	len = frame6(buf, "fe80::5", "2001:db8:1::7", 64, 17, 0, 100);
	assert_int_equal(run(e, len, 0, &r, ROUTE_R_link_local), ROUTE_HOST);
	len = frame6(buf, "2001:db8:9::5", "fe80::1", 255, 17, 0, 100);
	assert_int_equal(run(e, len, 0, &r, ROUTE_R_link_local), ROUTE_HOST);
	len = frame6(buf, "fe80::5", "2001:db8::1", 255, 58, 135, 64);
	assert_int_equal(run(e, len, 0, &r, ROUTE_R_ndp), ROUTE_HOST);
	len = frame6(buf, "2001:db8:9::5", "ff02::16", 1, 0, 58, 64);
	assert_int_equal(run(e, len, 0, &r, ROUTE_R_multicast), ROUTE_HOST);
	len = frame6(buf, "2001:db8:9::5", "2001:db8:1::7", 64, 0, 58, 64);
	assert_int_equal(run(e, len, 0, &r, ROUTE_R_hop_by_hop), ROUTE_HOST);
	/* an ICMPv6 error is not answered with one */
	len = frame6(buf, "2001:db8:9::5", "2001:db8:1::7", 1, 58, 1, 100);
	assert_int_equal(run(e, len, 0, &r, ROUTE_R_ttl_exceeded), ROUTE_DROP);
	len = frame6(buf, "2001:db8:9::5", "2001:db8:1::7", 64, 17, 0, 100);
	assert_int_equal(run(e, len - 1, 0, &r, ROUTE_R_malformed), ROUTE_DROP);
	buf[14] = 0x40;
	assert_int_equal(run(e, len, 0, &r, ROUTE_R_malformed), ROUTE_DROP);
}

/* A chain's whole length in the IPv4 header of its first piece. */
static void ip4_set_len(uint8_t *f, unsigned ip_len)
{
	uint8_t *ip = f + 14;
	uint16_t c;

	ip[2] = (uint8_t)(ip_len >> 8);
	ip[3] = (uint8_t)ip_len;
	ip[10] = ip[11] = 0;
	c = ip4_csum_full(ip, 20);
	ip[10] = (uint8_t)(c >> 8);
	ip[11] = (uint8_t)c;
}

static enum route_verdict run_chain(struct env *e, size_t head, size_t len,
				    struct route_result *r,
				    enum route_reason want)
{
	uint64_t before = e->c.n[want];
	enum route_verdict v = route_frame_chain(&e->ctx, buf, head, len, 0, 0,
						 out, sizeof(out), r, &e->c);

	if (r->reason != want)
		fail_msg("reason: want %s, got %s", route_reason_names[want],
			 route_reason_names[r->reason]);
	assert_int_equal(e->c.n[want], before + 1);
	return v;
}

/*
 * A 9000-byte frame whose first piece is 2048 bytes (a UMEM frame): routed
 * by its headers with the MTU checked against the whole length, only the
 * first piece rewritten; an ICMP error quotes from the first piece only.
 */
static void test_chain(void **state)
{
	struct env *e = *state;
	const size_t head = 2048, whole = 9000;
	struct route_result r;
	uint8_t tail[64];
	unsigned quoted;

	frame4(buf, 0xc0000201, 0x0a010203, 64, 17, head - 14, 1);
	ip4_set_len(buf, whole - 14);
	memset(buf + head - sizeof(tail), 0x5a, sizeof(tail));
	memcpy(tail, buf + head - sizeof(tail), sizeof(tail));

	/* port 1's MTU is 1000: too big, and DF set */
	run_chain(e, head, whole, &r, ROUTE_R_frag_needed);
	check_icmp4(e, &r, 3, 4, 1000);
	quoted = (unsigned)r.len - 14 - 20 - 8;
	assert_true(quoted <= head - 14);
	assert_int_equal(r.len, 14 + 576); /* the usual cap, within head */

	/* jumbo MTU on the egress: forwarded, the first piece rewritten */
	e->ports[1].mtu = 9000;
	assert_int_equal(run_chain(e, head, whole, &r, ROUTE_R_routed),
			 ROUTE_FWD);
	assert_int_equal(r.port, 1);
	assert_int_equal(buf[14 + 8], 63);
	assert_int_equal(csum_partial(buf + 14, 20, 0), 0xffff);
	assert_memory_equal(buf, mac_nbr, 6);
	assert_memory_equal(buf + head - sizeof(tail), tail, sizeof(tail));

	/* IPv6 the same way */
	frame6(buf, "2001:db8:9::5", "2001:db8:1::7", 64, 17, 0, head - 14);
	buf[14 + 4] = (uint8_t)((whole - 14 - 40) >> 8);
	buf[14 + 5] = (uint8_t)(whole - 14 - 40);
	assert_int_equal(run_chain(e, head, whole, &r, ROUTE_R_routed),
			 ROUTE_FWD);
	assert_int_equal(buf[14 + 7], 63);
	e->ports[1].mtu = 1000;
	frame6(buf, "2001:db8:9::5", "2001:db8:1::7", 64, 17, 0, head - 14);
	buf[14 + 4] = (uint8_t)((whole - 14 - 40) >> 8);
	buf[14 + 5] = (uint8_t)(whole - 14 - 40);
	run_chain(e, head, whole, &r, ROUTE_R_pkt_too_big);
	check_icmp6(e, &r, 2, 1000);

	/* a first piece too short for the headers, or longer than the
	 * frame: malformed, and nothing rewritten */
	frame4(buf, 0xc0000201, 0x0a010203, 64, 17, 100, 1);
	ip4_set_len(buf, whole - 14);
	assert_int_equal(
		run_chain(e, ROUTE_HEAD_MIN - 1, whole, &r, ROUTE_R_malformed),
		ROUTE_DROP);
	assert_int_equal(buf[14 + 8], 64);
	assert_int_equal(run_chain(e, 200, 150, &r, ROUTE_R_malformed),
			 ROUTE_DROP);
	/* one piece: route_frame's answer */
	frame4(buf, 0xc0000201, 0x0a010203, 64, 17, 100, 1);
	assert_int_equal(run_chain(e, 114, 114, &r, ROUTE_R_routed), ROUTE_FWD);
}

/* Every reason has a name, for the counters' JSON keys. */
static void test_names(void **state)
{
	unsigned i;

	(void)state;
	for (i = 0; i < ROUTE_R__COUNT; i++)
		assert_non_null(route_reason_names[i]);
	assert_string_equal(route_reason_names[ROUTE_R_no_neigh], "no_neigh");
}

/* ---- VLANs and VRFs ---- */

/*
 * Two ferry ports, each with VLANs 100 (VRF table 1) and 200 (table 2),
 * whose addresses overlap: 10.2.0.0/24 is behind VLAN 100 of port 1 in
 * table 1, behind VLAN 200 of port 1 in table 2, and behind port 1
 * untagged in the main table.
 */
struct venv {
	struct fib *fib;
	struct route_port ports[2], vlans[4];
	struct route_vlan_map vmap;
	struct route_ctx ctx;
	struct route_counters c;
};

static const uint8_t mac_b100[6] = {2, 0, 0, 0, 0x10, 0x01};
static const uint8_t mac_b200[6] = {2, 0, 0, 0, 0x20, 0x01};
static const uint8_t mac_main[6] = {2, 0, 0, 0, 0x30, 0x01};

static uint32_t vnh(struct venv *e, unsigned port, const uint8_t *mac)
{
	struct fib_nh_info in = {.port = (uint16_t)port,
				 .flags = FIB_NH_F_NEIGH};
	int id;

	memcpy(in.mac, mac, 6);
	id = fib_nh_alloc(e->fib, &in);
	assert_true(id > 0);
	return (uint32_t)id;
}

static int vsetup(void **state)
{
	struct venv *e = calloc(1, sizeof(*e));
	unsigned i;

	e->fib = fib_create(NULL);
	assert_non_null(e->fib);
	for (i = 0; i < 2; i++) {
		e->ports[i] = (struct route_port){.routed = 1, .mtu = 1500};
		memcpy(e->ports[i].mac,
		       (uint8_t[6]){2, 0, 0, 0xaa, 0, (uint8_t)i}, 6);
		e->ports[i].ip4 = 0x0a090001 + (i << 8);
	}
	for (i = 0; i < 4; i++) {
		struct route_port *v = &e->vlans[i];

		*v = e->ports[i / 2];
		v->phys = (uint16_t)(i / 2);
		v->vid = i % 2 ? 200 : 100;
		v->table = (uint8_t)(i % 2 ? 2 : 1);
		v->mtu = 1400;
		v->ip4 = i / 2 ? 0x0a020001 : 0x0a010001; /* the same in both */
	}
	assert_int_equal(route_vlan_map_build(&e->vmap, e->vlans, 4), 0);
	assert_int_equal(fib_table_open(e->fib, 1), 0);
	assert_int_equal(fib_table_open(e->fib, 2), 0);
	assert_int_equal(fib4_add_in(e->fib, 1, 0x0a020000, 24,
				     vnh(e, ROUTE_VLAN_BASE + 2, mac_b100)),
			 0);
	assert_int_equal(fib4_add_in(e->fib, 2, 0x0a020000, 24,
				     vnh(e, ROUTE_VLAN_BASE + 3, mac_b200)),
			 0);
	assert_int_equal(fib4_add(e->fib, 0x0a020000, 24, vnh(e, 1, mac_main)),
			 0);
	/* pop: table 1's 10.3/24 leaves untagged; push: main's 10.4/24
	 * leaves on VLAN 200 of port 1 */
	assert_int_equal(
		fib4_add_in(e->fib, 1, 0x0a030000, 24, vnh(e, 1, mac_main)), 0);
	assert_int_equal(fib4_add(e->fib, 0x0a040000, 24,
				  vnh(e, ROUTE_VLAN_BASE + 3, mac_b200)),
			 0);
	e->ctx = (struct route_ctx){.fib = fib_dp(e->fib),
				    .ports = e->ports,
				    .n_ports = 2,
				    .vlans = e->vlans,
				    .n_vlans = 4,
				    .vmap = &e->vmap};
	*state = e;
	return 0;
}

static int vteardown(void **state)
{
	struct venv *e = *state;

	fib_destroy(e->fib);
	free(e);
	return 0;
}

/* frame4's frame at f, with an 802.1Q tag of vid (tpid: its TPID). */
static size_t frame4_tagged(uint8_t *f, uint16_t tpid, uint16_t vid,
			    uint32_t dst, uint8_t ttl)
{
	size_t len = frame4(f, 0x0a010002, dst, ttl, 17, 100, 1);

	memmove(f + 16, f + 12, len - 12);
	f[12] = (uint8_t)(tpid >> 8);
	f[13] = (uint8_t)tpid;
	f[14] = (uint8_t)(0x20 | vid >> 8); /* priority 1 */
	f[15] = (uint8_t)vid;
	return len + 4;
}

static enum route_verdict vrun(struct venv *e, uint8_t *f, size_t len,
			       unsigned in, struct route_result *r,
			       enum route_reason want)
{
	uint64_t before = e->c.n[want];
	enum route_verdict v =
		route_frame(&e->ctx, f, len, in, 0, out, sizeof(out), r, &e->c);

	if (r->reason != want)
		fail_msg("reason: want %s, got %s", route_reason_names[want],
			 route_reason_names[r->reason]);
	assert_int_equal(e->c.n[want], before + 1);
	return v;
}

/* The same destination in each VLAN goes to its own VRF's next hop and
 * leaves with its own VLAN's tag; untagged, the main table's. */
static void test_vlan_vrf(void **state)
{
	struct venv *e = *state;
	struct route_result r;
	uint8_t *f = buf + 64;
	size_t len;

	len = frame4_tagged(f, 0x8100, 100, 0x0a020002, 64);
	assert_int_equal(vrun(e, f, len, 0, &r, ROUTE_R_routed), ROUTE_FWD);
	assert_int_equal(r.in_if, ROUTE_VLAN_BASE + 0);
	assert_int_equal(r.out_if, ROUTE_VLAN_BASE + 2);
	assert_int_equal(r.port, 1);
	assert_int_equal(r.shift, 0);
	assert_memory_equal(f, mac_b100, 6);
	assert_memory_equal(f + 6, e->vlans[2].mac, 6);
	assert_int_equal(f[12] << 8 | f[13], 0x8100);
	assert_int_equal((f[14] << 8 | f[15]) & 0xfff, 100);
	assert_int_equal(f[14] >> 5, 1); /* the priority kept */
	assert_int_equal(f[16] << 8 | f[17], 0x0800);
	assert_int_equal(f[18 + 8], 63);
	assert_int_equal(csum_partial(f + 18, 20, 0), 0xffff);

	len = frame4_tagged(f, 0x8100, 200, 0x0a020002, 64);
	assert_int_equal(vrun(e, f, len, 0, &r, ROUTE_R_routed), ROUTE_FWD);
	assert_int_equal(r.out_if, ROUTE_VLAN_BASE + 3);
	assert_memory_equal(f, mac_b200, 6);
	assert_int_equal((f[14] << 8 | f[15]) & 0xfff, 200);

	len = frame4(f, 0x0a010002, 0x0a020002, 64, 17, 100, 1);
	assert_int_equal(vrun(e, f, len, 0, &r, ROUTE_R_routed), ROUTE_FWD);
	assert_int_equal(r.in_if, 0);
	assert_int_equal(r.out_if, 1);
	assert_int_equal(r.shift, 0);
	assert_memory_equal(f, mac_main, 6);
	assert_int_equal(f[12] << 8 | f[13], 0x0800);

	/* not in table 2: 10.3/24 is table 1's only */
	len = frame4_tagged(f, 0x8100, 200, 0x0a030002, 64);
	vrun(e, f, len, 0, &r, ROUTE_R_no_route);
}

/* Tagged in, untagged out: popped; untagged in, tagged out: pushed into
 * the headroom. The IP packet is the same bytes but for TTL and sum. */
static void test_vlan_pop_push(void **state)
{
	struct venv *e = *state;
	struct route_result r;
	uint8_t *f = buf + 64, ip[100];
	size_t len;

	len = frame4_tagged(f, 0x8100, 100, 0x0a030002, 64);
	assert_int_equal(vrun(e, f, len, 0, &r, ROUTE_R_routed), ROUTE_FWD);
	assert_int_equal(r.shift, 4);
	assert_int_equal(r.port, 1);
	assert_memory_equal(f + 4, mac_main, 6);
	assert_memory_equal(f + 4 + 6, e->ports[1].mac, 6);
	assert_int_equal(f[4 + 12] << 8 | f[4 + 13], 0x0800);
	assert_int_equal(f[4 + 14 + 8], 63);
	assert_int_equal(csum_partial(f + 4 + 14, 20, 0), 0xffff);

	len = frame4(f, 0x0a010002, 0x0a040002, 64, 17, 100, 1);
	memcpy(ip, f + 14, 100);
	assert_int_equal(vrun(e, f, len, 0, &r, ROUTE_R_routed), ROUTE_FWD);
	assert_int_equal(r.shift, -4);
	assert_int_equal(r.port, 1);
	assert_int_equal(r.out_if, ROUTE_VLAN_BASE + 3);
	assert_memory_equal(f - 4, mac_b200, 6);
	assert_int_equal(f[-4 + 12] << 8 | f[-4 + 13], 0x8100);
	assert_int_equal(f[-4 + 14] << 8 | f[-4 + 15], 200);
	assert_int_equal(f[-4 + 16] << 8 | f[-4 + 17], 0x0800);
	ip[8]--; /* what the router changes: TTL and the header sum */
	memcpy(ip + 10, f + 14 + 10, 2);
	assert_memory_equal(f + 14, ip, 100);
}

/* The pure retag: pop then push gives the frame back. */
static void test_vlan_retag(void **state)
{
	uint8_t b[128], ref[128], *f = b + 8;
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)(i * 7 + 1);
	f[12] = 0x81;
	f[13] = 0;
	f[14] = 0xa0; /* priority 5, VID 0x064 */
	f[15] = 0x64;
	memcpy(ref, b, sizeof(b));
	assert_int_equal(route_l2_retag(f, 100, 1, 300), 0);
	assert_int_equal((f[14] << 8 | f[15]), 0xa000 | 300);
	assert_int_equal(route_l2_retag(f, 100, 1, 0), 4);
	assert_memory_equal(f + 4, ref + 8, 12);
	assert_memory_equal(f + 16, ref + 8 + 16, 84);
	assert_int_equal(route_l2_retag(f + 4, 96, 0, 100), -4);
	assert_memory_equal(f, ref + 8, 14);
	assert_int_equal(f[14] << 8 | f[15], 100);
	assert_memory_equal(f + 16, ref + 8 + 16, 84);
	assert_int_equal(route_l2_retag(f, 100, 0, 0), 0);
}

/* Unknown VIDs, 802.1ad and stacked tags are dropped by name; an ICMP
 * error on a VLAN goes back tagged, from that VLAN's address. */
static void test_vlan_exceptions(void **state)
{
	struct venv *e = *state;
	struct route_result r;
	uint8_t *f = buf + 64, *ip;
	size_t len;

	len = frame4_tagged(f, 0x8100, 300, 0x0a020002, 64);
	assert_int_equal(vrun(e, f, len, 0, &r, ROUTE_R_vlan_unknown),
			 ROUTE_DROP);
	len = frame4_tagged(f, 0x88a8, 100, 0x0a020002, 64);
	assert_int_equal(vrun(e, f, len, 0, &r, ROUTE_R_vlan_qinq), ROUTE_DROP);
	len = frame4_tagged(f, 0x8100, 100, 0x0a020002, 64);
	f[16] = 0x81; /* a second tag inside */
	f[17] = 0;
	assert_int_equal(vrun(e, f, len, 0, &r, ROUTE_R_vlan_qinq), ROUTE_DROP);
	assert_int_equal(vrun(e, f, 15, 0, &r, ROUTE_R_malformed), ROUTE_DROP);

	len = frame4_tagged(f, 0x8100, 200, 0x0a020002, 1);
	assert_int_equal(vrun(e, f, len, 1, &r, ROUTE_R_ttl_exceeded),
			 ROUTE_REPLY);
	assert_int_equal(r.port, 1);
	assert_int_equal(r.in_if, ROUTE_VLAN_BASE + 3);
	assert_int_equal(out[12] << 8 | out[13], 0x8100);
	assert_int_equal(out[14] << 8 | out[15], 200);
	assert_int_equal(out[16] << 8 | out[17], 0x0800);
	ip = out + 18;
	assert_int_equal(r.len, 18 + (ip[2] << 8 | ip[3]));
	assert_int_equal(be32_at(ip + 12), e->vlans[3].ip4);
	assert_memory_equal(ip + 20 + 8, f + 18, 28); /* the quoted header */

	/* over the VLAN's MTU (1400), not the port's */
	len = frame4_tagged(f, 0x8100, 100, 0x0a020002, 64);
	f[18 + 2] = 0x05; /* tot 1420 > 1400, in a frame as long */
	f[18 + 3] = 0x8c;
	memset(f + len, 0, 1420 + 18 - len);
	f[18 + 10] = f[18 + 11] = 0;
	{
		uint16_t c = ip4_csum_full(f + 18, 20);

		f[18 + 10] = (uint8_t)(c >> 8);
		f[18 + 11] = (uint8_t)c;
	}
	assert_int_equal(vrun(e, f, 1420 + 18, 0, &r, ROUTE_R_frag_needed),
			 ROUTE_REPLY);
	assert_int_equal(out[18 + 20 + 6] << 8 | out[18 + 20 + 7], 1400);
}

/* The map: a (port, VID) twice is refused, past the limit too. */
static void test_vlan_map(void **state)
{
	static struct route_port v[ROUTE_VLAN_MAX + 1];
	struct route_vlan_map m;
	unsigned i;

	(void)state;
	for (i = 0; i <= ROUTE_VLAN_MAX; i++) {
		v[i].phys = (uint16_t)(i % 3);
		v[i].vid = (uint16_t)(1 + i);
	}
	assert_int_equal(route_vlan_map_build(&m, v, ROUTE_VLAN_MAX), 0);
	for (i = 0; i < ROUTE_VLAN_MAX; i++)
		assert_int_equal(route_vlan_find(&m, i % 3, 1 + i), (int)i);
	assert_int_equal(route_vlan_find(&m, 1, 1), -1);
	assert_int_equal(route_vlan_map_build(&m, v, ROUTE_VLAN_MAX + 1),
			 -ENOSPC);
	v[1] = v[0];
	assert_int_equal(route_vlan_map_build(&m, v, 2), -EEXIST);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v4_forward),
		cmocka_unit_test(test_v4_exceptions),
		cmocka_unit_test(test_multipath),
		cmocka_unit_test(test_v6),
		cmocka_unit_test(test_chain),
		cmocka_unit_test(test_names),
	};
	const struct CMUnitTest vtests[] = {
		cmocka_unit_test(test_vlan_vrf),
		cmocka_unit_test(test_vlan_pop_push),
		cmocka_unit_test(test_vlan_retag),
		cmocka_unit_test(test_vlan_exceptions),
		cmocka_unit_test(test_vlan_map),
	};

	return cmocka_run_group_tests(tests, setup, teardown) |
	       cmocka_run_group_tests(vtests, vsetup, vteardown);
}
