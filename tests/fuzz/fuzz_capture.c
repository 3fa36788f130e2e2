// SPDX-License-Identifier: BSD-2-Clause
/*
 * fuzz_capture.c - libFuzzer target for the capture's inputs: XDP capture
 * records (dataplane/capture/capture_xdp.c, bytes a BPF program wrote) and frames
 * of any length and segmentation through the filter and the ring copy
 * (dataplane/capture/capture.c), then the pcapng writer (pcapng.c, to /dev/null).
 *
 * Input: byte 0 picks the case; for a frame, bytes 1-2 say where to cut it
 * into up to three segments. What must hold for any input:
 *   - a record is queued, or counted malformed / unknown port, never both;
 *   - a frame is copied at most once and never past snaplen;
 *   - after a drain, the counters add up (matched = written + drops).
 * ASan catches a read past the input or a write past a ring record.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "capture_xdp.h"

#define FUZZ_CHECK(cond, ...)                                                  \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr,                                        \
				"fuzz_capture: check failed: %s: ", #cond);    \
			fprintf(stderr, __VA_ARGS__);                          \
			fputc('\n', stderr);                                   \
			abort();                                               \
		}                                                              \
	} while (0)

/* libFuzzer's entry points take no context: the capture lives here. */
static struct ferry_capture *cap;
static struct ferry_capture_xdp *xdp;
static struct ferry_capture_tap *tap_rx, *tap_tx;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const ports[] = {"p0", "p1"};
	static const uint32_t ifindex[] = {2, 3};
	struct ferry_capture_params p = {
		.name = "fuzz",
		.filter = "udp and dst port 7777 or tcp[13] & 2 != 0",
		.snaplen = 100,
		.dirs = FERRY_CAP_BOTH,
		.ports = ports,
		.n_ports = 2,
		.n_producers = 2,
		.ring_bytes = 1 << 16,
		.path = "/dev/null",
		.fd = -1,
		.manual = true,
	};
	struct ferry_capture_xdp_params xp = {.producer = 1,
					      .ifindex = ifindex,
					      .n_ports = 2,
					      .events_fd = -1};
	struct ferry_err msg;

	cap = ferry_capture_create(&p, &msg);
	FUZZ_CHECK(cap, "create: %s", msg.msg);
	xp.cap = cap;
	xdp = ferry_capture_xdp_create(&xp);
	FUZZ_CHECK(xdp, "xdp create: %s", strerror(errno));
	tap_rx = ferry_capture_tap(cap, 0, 0, FERRY_CAP_RX);
	tap_tx = ferry_capture_tap(cap, 0, 1, FERRY_CAP_TX);
	return 0;
}

static void one_record(const uint8_t *data, size_t size)
{
	struct ferry_capture_xdp_ctrs a, b;
	int err;

	ferry_capture_xdp_ctrs(xdp, &a);
	err = ferry_capture_xdp_feed(xdp, data, size);
	ferry_capture_xdp_ctrs(xdp, &b);
	FUZZ_CHECK(b.records == a.records + 1, "records");
	FUZZ_CHECK((b.malformed - a.malformed) +
				   (b.unknown_port - a.unknown_port) ==
			   (err ? 1u : 0u),
		   "err %d but malformed +%lu, unknown +%lu", err,
		   b.malformed - a.malformed, b.unknown_port - a.unknown_port);
	FUZZ_CHECK(!err || b.queued == a.queued, "an error queued a copy");
}

static void one_frame(const uint8_t *data, size_t size)
{
	struct ferry_cap_seg seg[3];
	unsigned n = 0;
	size_t cut1, cut2;
	uint8_t *copy;

	if (size < 3)
		return;
	cut1 = data[1], cut2 = cut1 + data[2];
	data += 3, size -= 3;
	if (!size)
		return;
	/* Each segment in its own heap block: ASan sees a read past one. */
	copy = malloc(size);
	FUZZ_CHECK(copy, "malloc");
	memcpy(copy, data, size);
	if (cut1 && cut1 < size)
		seg[n++] = (struct ferry_cap_seg){copy, (uint32_t)cut1};
	else
		cut1 = 0;
	if (cut2 > cut1 && cut2 < size)
		seg[n++] = (struct ferry_cap_seg){copy + cut1,
						  (uint32_t)(cut2 - cut1)};
	else
		cut2 = cut1;
	seg[n++] = (struct ferry_cap_seg){copy + cut2, (uint32_t)(size - cut2)};
	(void)ferry_capture_frame(size & 1 ? tap_tx : tap_rx, size, 0, 0, seg,
				  n);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ferry_capture_ctrs k;

	if (!size)
		return 0;
	if (data[0] & 1)
		one_record(data + 1, size - 1);
	else
		one_frame(data, size);
	ferry_capture_drain(cap);
	ferry_capture_ctrs(cap, &k);
	FUZZ_CHECK(k.matched ==
			   k.written + k.dropped_ring_full + k.dropped_rate +
				   k.dropped_count_reached + k.dropped_output,
		   "matched %lu written %lu", k.matched, k.written);
	FUZZ_CHECK(ferry_capture_state(cap) == 0, "output failed: %d",
		   ferry_capture_state(cap));
	return 0;
}
