/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * capture_filter.h - runs a compiled pcap filter (the struct bpf_insn array
 * pcap_compile makes) with exactly the answers of libpcap's bpf_filter(),
 * in about a third of its instructions.
 *
 * Why: a running capture filters every frame of the queues it watches,
 * whatever the match rate, and libpcap's interpreter takes ~18 instructions
 * per BPF instruction (a switch per instruction, a bounds check per load):
 * 187 for the 16-instruction `udp and dst port 7777`, most of what a capture
 * adds to a worker (docs/performance.md, "Capture: what it adds per frame").
 *
 * How: once, at capture start, the program is decoded into an array of
 * operations, each holding the address of its handler (GNU C computed goto:
 * threaded dispatch, one indirect jump per operation and no switch), its
 * operands and, for jumps, pointers to their targets. On top of that:
 *   - fused operations for the shapes tcpdump emits most: a load followed by
 *     `jeq #k` or `jset #k` (`ldh [12]; jeq #0x800`), `and #k; jeq #k`;
 *     the second instruction stays decoded for jumps that land on it;
 *   - the absolute loads' bounds checks hoisted: the decoder knows the
 *     largest offset any absolute load (or `ldxb 4*([k]&0xf)`) reads, and a
 *     frame at least that long runs a second copy of the program whose
 *     absolute loads check nothing; a shorter one runs the checked copy.
 *     Indexed loads ([x + k]) check, one comparison each;
 *   - conditional jumps as branches the processor predicts, not conditional
 *     moves: a move made each operation wait for the frame's bytes before
 *     the next one could start (28 against 18 ns per frame, one thread).
 * Any program it cannot prove it runs exactly as libpcap (an opcode it does
 * not know, a constant shift of 32 or more, a jump out of the program) is
 * run by bpf_filter() itself: same answers, libpcap's speed.
 *
 * tests/unit/test_capture_filter.c compares the two on many tcpdump
 * expressions and random programs over crafted and random frames, bit for
 * bit; bench/capture.sh counts both.
 */
#ifndef FERRY_CAPTURE_FILTER_H
#define FERRY_CAPTURE_FILTER_H

#include <stdbool.h>
#include <stdint.h>

struct bpf_insn;
struct ferry_cfilter;

/* Evaluate with libpcap's bpf_filter() (the benchmark's baseline). */
#define FERRY_CFILTER_LIBPCAP 1u

/*
 * Decodes n instructions (copied: the caller's array may go). NULL + errno
 * (ENOMEM, EINVAL for n == 0) on failure.
 */
struct ferry_cfilter *ferry_cfilter_create(const struct bpf_insn *insns,
					   unsigned n, unsigned flags);

void ferry_cfilter_destroy(struct ferry_cfilter *f);

/*
 * What bpf_filter(insns, pkt, wirelen, buflen) returns: pkt holds buflen
 * bytes of a frame of wirelen. Any thread; f is read-only.
 */
uint32_t ferry_cfilter_run(const struct ferry_cfilter *f, const uint8_t *pkt,
			   uint32_t wirelen, uint32_t buflen);

/* false when the program is run by bpf_filter() (see above). */
bool ferry_cfilter_native(const struct ferry_cfilter *f);

#endif /* FERRY_CAPTURE_FILTER_H */
