// SPDX-License-Identifier: BSD-2-Clause
/*
 * acl_bench - the classifier's cost per frame against the size of its rule
 * table, linear walk beside the bit-vector matcher, in one run
 * (bench/acl_cost.sh). The object the daemon loads, through its skeleton,
 * run by BPF_PROG_TEST_RUN with repeat: the program alone, no NIC.
 *
 * Rules i = 0..n-1: proto udp, src 10.<i/256>.<i%256>.0/24, dport
 * 1000+i, drop. The frame (UDP 10.0.0.1:4000 -> 192.0.2.1:9) is in rule
 * 0's source prefix but matches no rule, so the linear walk reads all n
 * rules (the worst case, and the case of every frame an ACL lets through)
 * and fails each at its ports. The port's default is drop: no socket
 * needed. A second frame, to rule n-1's port, checks both matchers find it.
 *
 *   acl_bench [-r REPEAT] [-k RUNS] N...   one line per N and matcher:
 *   "n matcher ns_median install_ms"
 */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ferry_abi.h"
#include "ferry_xdp.skel.h"
#include "rulecls.h"

static size_t frame(uint8_t *b, uint16_t dport)
{
	static const uint8_t mac[12] = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1};
	uint8_t *ip = b + 14, *udp = ip + 20;
	uint32_t sum = 0;
	int i;

	memset(b, 0, 64);
	memcpy(b, mac, 12);
	b[12] = 0x08;
	ip[0] = 0x45;
	ip[3] = 20 + 8 + 18;
	ip[8] = 64;
	ip[9] = IPPROTO_UDP;
	memcpy(ip + 12, (uint8_t[4]){10, 0, 0, 1}, 4);
	memcpy(ip + 16, (uint8_t[4]){192, 0, 2, 1}, 4);
	for (i = 0; i < 20; i += 2)
		sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	ip[10] = (uint8_t)(~sum >> 8);
	ip[11] = (uint8_t)~sum;
	udp[0] = 4000 >> 8;
	udp[1] = 4000 & 0xff;
	udp[2] = (uint8_t)(dport >> 8);
	udp[3] = (uint8_t)dport;
	udp[5] = 8 + 18;
	return 64;
}

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int run(int prog, const uint8_t *f, size_t len, uint32_t repeat,
	       uint32_t *ns, uint32_t *ret)
{
	uint8_t out[128];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f,
		    .data_size_in = (uint32_t)len, .data_out = out,
		    .data_size_out = sizeof(out), .repeat = repeat);

	if (bpf_prog_test_run_opts(prog, &o))
		return -errno;
	*ns = o.duration;
	*ret = o.retval;
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const names[] = {"linear", "bitvec"};
	uint32_t repeat = 200000, runs = 5, gen = 0, key = 0, n, m, k, ret;
	struct ferry_xdp_cfg cfg = {.default_action = FERRY_ACT_DROP};
	struct ferry_rule *rules;
	struct ferry_xdp_bpf *skel;
	uint8_t miss[64], hit[64];
	int opt, i, prog, err;
	uint32_t ns[64];
	double t0, t1;

	while ((opt = getopt(argc, argv, "r:k:")) != -1) {
		if (opt == 'r')
			repeat = (uint32_t)atoi(optarg);
		else if (opt == 'k')
			runs = (uint32_t)atoi(optarg);
		else
			return 2;
	}
	if (runs < 1 || runs > 64 || optind >= argc) {
		fprintf(stderr,
			"usage: acl_bench [-r REPEAT] [-k RUNS] N...\n");
		return 2;
	}
	skel = ferry_xdp_bpf__open();
	if (!skel)
		return 1;
	bpf_program__set_autoload(skel->progs.ferry_cpumap_enqueue, false);
	if (ferry_xdp_bpf__load(skel)) {
		fprintf(stderr, "cannot load ferry_xdp: %s\n", strerror(errno));
		return 1;
	}
	prog = bpf_program__fd(skel->progs.ferry_xdp);
	bpf_map_update_elem(bpf_map__fd(skel->maps.ferry_cfg), &key, &cfg, 0);
	rules = calloc(FERRY_MAX_RULES, sizeof(*rules));
	if (!rules)
		return 1;
	for (i = 0; i < FERRY_MAX_RULES; i++) {
		rules[i] = (struct ferry_rule){
			.family = 4,
			.l4_proto = IPPROTO_UDP,
			.action = FERRY_ACT_DROP,
			.src_plen = 24,
			.dport_lo = (uint16_t)(1000 + i),
			.dport_hi = (uint16_t)(1000 + i),
			.ctr = (uint16_t)i,
		};
		rules[i].src[0] = htonl(0x0a000000u | (uint32_t)i << 8);
	}
	frame(miss, 9);
	for (k = (uint32_t)optind; k < (uint32_t)argc; k++) {
		n = (uint32_t)atoi(argv[k]);
		if (n > FERRY_MAX_RULES)
			return 2;
		frame(hit, (uint16_t)(1000 + (n ? n - 1 : 0)));
		for (m = 0; m < FERRY_CLS__COUNT; m++) {
			t0 = now_ms();
			err = ferry_cls_publish(skel, &gen, rules, n, m);
			t1 = now_ms();
			if (err) {
				fprintf(stderr, "publish: %s\n",
					strerror(-err));
				return 1;
			}
			/* Both matchers agree: the last rule's frame is
			 * dropped by it; the other falls to the default. */
			if (n &&
			    (run(prog, hit, 64, 1, &ns[0], &ret) || ret != 1)) {
				fprintf(stderr, "%s n=%u: rule %u not hit\n",
					names[m], n, n - 1);
				return 1;
			}
			for (i = 0; i < (int)runs; i++)
				if (run(prog, miss, 64, repeat, &ns[i], &ret))
					return 1;
			qsort(ns, runs, sizeof(ns[0]), cmp_u32);
			/* The third column is what the script reads; the
			 * fourth, the time the table took to install. */
			printf("%u %s %u %.1f\n", n, names[m], ns[runs / 2],
			       t1 - t0);
			fflush(stdout);
		}
	}
	free(rules);
	ferry_xdp_bpf__destroy(skel);
	return 0;
}
