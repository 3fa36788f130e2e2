// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * fuzz_parse.c - libFuzzer target for bpf/ferry_parse.h, the frame parser
 * the XDP classifier runs, compiled here as plain C.
 *
 * libFuzzer hands over a heap buffer of exactly the input's size, so under
 * ASan a read one byte past data_end fails the run, as in test_parse.c.
 * What must hold for any frame:
 *   - the result is FERRY_PARSE_OK or a malformed-frame reason;
 *   - l3_off and l4_off lie within the frame, and l3_off is where the
 *     VLAN tags end; n_vlan is at most FERRY_MAX_VLAN;
 *   - a well-formed frame has family 0, 4 or 6 matching its ethertype, and
 *     its L4 header starts after a whole IP header;
 *   - parsing is a pure function of the bytes: twice gives the same.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ferry_parse.h"

#define FUZZ_CHECK(cond, ...)                                                  \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr,                                        \
				"fuzz_parse: check failed: %s: ", #cond);      \
			fprintf(stderr, __VA_ARGS__);                          \
			fputc('\n', stderr);                                   \
			abort();                                               \
		}                                                              \
	} while (0)

static void check_ok(const struct ferry_pkt *pkt, size_t size)
{
	FUZZ_CHECK(pkt->family == 0 || pkt->family == 4 || pkt->family == 6,
		   "family %u", pkt->family);
	FUZZ_CHECK(pkt->l3_off == ETH_HLEN + pkt->n_vlan * FERRY_VLAN_HLEN,
		   "l3_off %u with %u VLAN tags", pkt->l3_off, pkt->n_vlan);
	switch (pkt->family) {
	case 0:
		FUZZ_CHECK(pkt->ethertype != ETH_P_IP &&
				   pkt->ethertype != ETH_P_IPV6,
			   "IP ethertype %#x without a family", pkt->ethertype);
		FUZZ_CHECK(pkt->l4_off == 0 && pkt->l4_proto == 0,
			   "L4 fields on a non-IP frame");
		break;
	case 4:
		FUZZ_CHECK(pkt->ethertype == ETH_P_IP,
			   "family 4, ethertype %#x", pkt->ethertype);
		FUZZ_CHECK(pkt->l4_off >= pkt->l3_off + sizeof(struct iphdr),
			   "IPv4 l4_off %u, l3_off %u", pkt->l4_off,
			   pkt->l3_off);
		break;
	case 6:
		FUZZ_CHECK(pkt->ethertype == ETH_P_IPV6,
			   "family 6, ethertype %#x", pkt->ethertype);
		FUZZ_CHECK(pkt->l4_off >= pkt->l3_off + sizeof(struct ipv6hdr),
			   "IPv6 l4_off %u, l3_off %u", pkt->l4_off,
			   pkt->l3_off);
		break;
	}
	if (pkt->is_frag)
		FUZZ_CHECK(pkt->sport == 0 && pkt->dport == 0,
			   "ports on a non-first fragment");
	(void)size;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ferry_pkt pkt, again;
	int rc, rc2;

	rc = ferry_parse(data, data + size, &pkt);
	FUZZ_CHECK(rc == FERRY_PARSE_OK || FERRY_R_IS_MALFORMED(rc),
		   "result %d", rc);
	FUZZ_CHECK(pkt.l3_off <= size, "l3_off %u > length %zu", pkt.l3_off,
		   size);
	FUZZ_CHECK(pkt.l4_off <= size, "l4_off %u > length %zu", pkt.l4_off,
		   size);
	FUZZ_CHECK(pkt.n_vlan <= FERRY_MAX_VLAN, "n_vlan %u", pkt.n_vlan);
	if (rc == FERRY_PARSE_OK)
		check_ok(&pkt, size);

	rc2 = ferry_parse(data, data + size, &again);
	FUZZ_CHECK(rc2 == rc && !memcmp(&pkt, &again, sizeof(pkt)),
		   "second parse differs (%d, %d)", rc, rc2);
	return 0;
}
