// SPDX-License-Identifier: BSD-2-Clause
/*
 * fuzz_cfilter.c - libFuzzer target: ferry's evaluator of compiled capture
 * filters (dataplane/capture/capture_filter.c) against libpcap's bpf_filter(), the
 * definition it must agree with, on any frame the fuzzer makes.
 *
 * Input: byte 0 picks how much of the frame was captured (buflen may be
 * shorter than the wire length, as with a snaplen); the rest is the frame.
 * Every filter below, compiled once by pcap_compile with and without its
 * optimiser, must give the same answer both ways; ASan catches a read past
 * the captured bytes.
 */
#include <pcap/pcap.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture_filter.h"

static const char *const exprs[] = {
	"udp and dst port 7777",
	"tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn",
	"ip6 and tcp port 443",
	"vlan and udp",
	"net 10.0.0.0/8 and not host 10.1.2.3",
	"icmp[icmptype] == icmp-echo or icmp6",
	"portrange 1000-2000 and len > 100",
	"ether src 02:00:00:00:00:01 or arp",
	"ip[6:2] & 0x1fff != 0",
	"ip6 protochain 17",
	"(ip[2:2] - ((ip[0] & 0xf) << 2)) > 500",
};

#define N_EXPR (sizeof(exprs) / sizeof(exprs[0]))

/* libFuzzer's entry points take no context: the programs live here. */
static struct bpf_program progs[2 * N_EXPR];
static struct ferry_cfilter *filters[2 * N_EXPR];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	pcap_t *p = pcap_open_dead(DLT_EN10MB, 65535);
	unsigned i;

	(void)argc;
	(void)argv;
	if (!p)
		abort();
	for (i = 0; i < 2 * N_EXPR; i++) {
		if (pcap_compile(p, &progs[i], exprs[i / 2], (int)(i & 1),
				 PCAP_NETMASK_UNKNOWN)) {
			fprintf(stderr, "fuzz_cfilter: %s: %s\n", exprs[i / 2],
				pcap_geterr(p));
			abort();
		}
		filters[i] = ferry_cfilter_create(progs[i].bf_insns,
						  progs[i].bf_len, 0);
		if (!filters[i])
			abort();
	}
	pcap_close(p);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t wirelen, buflen, want, got;
	uint8_t *frame;
	unsigned i;

	if (size < 1 || size > 65536)
		return 0;
	wirelen = (uint32_t)(size - 1);
	buflen = data[0] >= 0x80 ? wirelen : wirelen * data[0] / 0x80;
	/* A copy of exactly buflen bytes, so ASan sees any read past it. */
	frame = malloc(buflen ? buflen : 1);
	if (!frame)
		return 0;
	memcpy(frame, data + 1, buflen);
	for (i = 0; i < 2 * N_EXPR; i++) {
		want = bpf_filter(progs[i].bf_insns, frame, wirelen, buflen);
		got = ferry_cfilter_run(filters[i], frame, wirelen, buflen);
		if (want != got) {
			fprintf(stderr,
				"fuzz_cfilter: \"%s\"%s: libpcap %u, ferry %u "
				"(wirelen %u, buflen %u)\n",
				exprs[i / 2], i & 1 ? " (optimised)" : "", want,
				got, wirelen, buflen);
			abort();
		}
	}
	free(frame);
	return 0;
}
