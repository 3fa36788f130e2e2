// SPDX-License-Identifier: BSD-2-Clause
/*
 * route_bench - route_frame() on 64-byte frames to random routed
 * destinations, for callgrind (bench/route_cost.sh): instructions per
 * frame depend on the code only, not on this shared box's load.
 *
 *   route_bench FRAMES 4|6 [vlan]
 *
 * The FIB holds 100 000 random IPv4 /16-/24 routes or IPv6 /32-/48 ones,
 * all through one resolved next hop; every frame is forwarded. With vlan
 * the frames arrive tagged VID 100 (a VLAN sub-interface of port 0) and
 * the next hop is VID 200 of port 1: the tag is rewritten in place.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fib.h"
#include "route.h"
#include "route_csum.h"

static uint64_t seed = 1;

static uint32_t rnd(void)
{
	seed = seed * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(seed >> 32);
}

#define N_ROUTES 100000
#define N_TMPL	 4096
#define FRAME	 64 /* untagged; tagged frames are 4 bytes longer */

int main(int argc, char **argv)
{
	struct fib_params fp = {.v4_groups = 1024, .v6_groups = 1u << 18};
	struct fib_nh_info in = {
		.port = 1, .flags = FIB_NH_F_NEIGH, .mac = {2, 0, 0, 0, 0, 2}};
	struct route_port ports[2] = {
		{.mac = {2, 0, 0, 0, 0, 0xa},
		 .routed = 1,
		 .mtu = 1500,
		 .ip4 = 0x0a000001,
		 .has_ip6 = 1},
		{.mac = {2, 0, 0, 0, 0, 0xb},
		 .routed = 1,
		 .mtu = 1500,
		 .ip4 = 0x0a000101,
		 .has_ip6 = 1},
	};
	struct route_port vlans[2] = {ports[0], ports[1]};
	static uint8_t tmpl[N_TMPL][FRAME + 4], buf[4 + FRAME + 4],
		out[ROUTE_REPLY_MAX];
	static struct route_vlan_map vmap;
	uint8_t *frame = buf + 4; /* headroom, as AF_XDP frames have */
	struct route_counters c = {0};
	struct route_result res;
	struct route_ctx ctx;
	unsigned long n, i;
	struct fib *fib;
	int fam, nh, vlan;
	unsigned flen;

	if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "vlan"))) {
		fprintf(stderr, "usage: %s FRAMES 4|6 [vlan]\n", argv[0]);
		return 2;
	}
	n = strtoul(argv[1], NULL, 0);
	fam = atoi(argv[2]);
	vlan = argc == 4;
	flen = FRAME + (vlan ? 4u : 0u);
	vlans[0].phys = 0, vlans[0].vid = 100;
	vlans[1].phys = 1, vlans[1].vid = 200;
	if (route_vlan_map_build(&vmap, vlans, 2))
		return 1;
	if (vlan)
		in.port = ROUTE_VLAN_BASE + 1;
	fib = fib_create(&fp);
	if (!fib)
		return 1;
	nh = fib_nh_alloc(fib, &in);
	for (i = 0; i < N_TMPL; i++) {
		uint8_t *f = tmpl[i], *ip = f + 14;
		unsigned len = fam == 4 ? 16 + rnd() % 9 : 32 + 4 * (rnd() % 5);
		uint8_t a[16];
		unsigned j;

		for (j = 0; j < 16; j++)
			a[j] = (uint8_t)rnd();
		memset(f, 0, sizeof(tmpl[0]));
		memcpy(f, ports[0].mac, 6);
		f[6] = 2;
		if (vlan) { /* 802.1Q VID 100, then the same frame */
			f[12] = 0x81, f[14] = 0, f[15] = 100;
			f += 4, ip += 4;
		}
		if (fam == 4) {
			uint32_t d = (uint32_t)a[0] << 24 | a[1] << 16 |
				     a[2] << 8 | a[3];
			uint16_t cs;

			d = (d & 0x7fffffff) | 0x01000000; /* unicast */
			fib4_add(fib, d, len, (uint32_t)nh);
			f[12] = 0x08;
			ip[0] = 0x45;
			ip[3] = 50;
			ip[8] = 64;
			ip[9] = 17;
			ip[12] = 192, ip[13] = 0, ip[14] = 2, ip[15] = 1;
			ip[16] = (uint8_t)(d >> 24),
			ip[17] = (uint8_t)(d >> 16);
			ip[18] = (uint8_t)(d >> 8), ip[19] = (uint8_t)d;
			cs = ip4_csum_full(ip, 20);
			ip[10] = (uint8_t)(cs >> 8);
			ip[11] = (uint8_t)cs;
		} else {
			a[0] = 0x20, a[1] = 0x01;
			fib6_add(fib, a, len, (uint32_t)nh);
			f[12] = 0x86, f[13] = 0xdd;
			ip[0] = 0x60;
			ip[5] = 10;
			ip[6] = 17;
			ip[7] = 64;
			ip[8] = 0x20, ip[9] = 0x01, ip[10] = 0x0d,
			ip[11] = 0xb8;
			ip[23] = 1;
			memcpy(ip + 24, a, 16);
		}
	}
	/* the rest of the table: routes no frame goes to */
	for (i = N_TMPL; i < N_ROUTES; i++) {
		uint8_t a[16] = {0x20, 0x02};
		unsigned j;

		if (fam == 4) {
			fib4_add(fib, rnd() | 0x01000000, 16 + rnd() % 9,
				 (uint32_t)nh);
			continue;
		}
		for (j = 2; j < 16; j++)
			a[j] = (uint8_t)rnd();
		fib6_add(fib, a, 32 + 4 * (rnd() % 5), (uint32_t)nh);
	}
	ctx = (struct route_ctx){.fib = fib_dp(fib),
				 .ports = ports,
				 .n_ports = 2,
				 .vlans = vlans,
				 .n_vlans = 2,
				 .vmap = &vmap};
	for (i = 0; i < n; i++) {
		memcpy(frame, tmpl[i % N_TMPL], flen);
		route_frame(&ctx, frame, flen, 0, (uint32_t)i, out, sizeof(out),
			    &res, &c);
	}
	if (c.n[ROUTE_R_routed] != n) {
		fprintf(stderr, "route_bench: %llu of %lu frames routed\n",
			(unsigned long long)c.n[ROUTE_R_routed], n);
		return 1;
	}
	fib_destroy(fib);
	return 0;
}
