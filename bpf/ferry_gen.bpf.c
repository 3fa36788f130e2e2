// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ferry_gen - traffic generator, run with BPF_PROG_RUN and
 * BPF_F_TEST_XDP_LIVE_FRAMES.
 *
 * Userspace builds one template frame (Ethernet/IPv4/UDP) and asks the
 * kernel to run this program `repeat` times on copies of it; each run
 * rewrites the UDP source port so the frames spread over n_flows flows
 * (RSS queues, rule matches), then redirects the frame out of ifindex_out.
 *
 * Live-frames mode recycles its page pool, and a page comes back with
 * whatever was written into it on the way: a forwarder that edits frames in
 * place (the kernel's or an XDP FIB forwarder's TTL and MACs, over veth,
 * where the peer's XDP runs on the same page) would otherwise see the TTL
 * fall by one every time a page goes round. So every run writes the whole
 * Ethernet/IPv4/UDP header from the template, then the port and checksum.
 *
 * Pacing happens here, not in userspace: every BPF_PROG_RUN call costs tens
 * of milliseconds of setup and teardown on this kernel (measured ~28 ms,
 * whatever the frame count), so short paced calls can't reach a rate and
 * long unpaced ones send in bursts that overflow rings. Instead userspace
 * makes long calls and the program lets a frame out only when the schedule
 * says so; the rest of the runs end in XDP_DROP and cost a page recycle.
 * After a gap (the next call's setup) the schedule catches up at no more
 * than twice the rate, so the average is the rate asked for and no burst
 * is sharper than 2x.
 */
#include <linux/bpf.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "ferry_abi.h"

/* Load-time knobs, set in the skeleton's rodata before load. */
const volatile __u32 ifindex_out;
const volatile __u16 sport_base;
const volatile __u16 n_flows = 1;
const volatile __u16 udp_off; /* byte offset of the UDP header */
/*
 * The template's headers, written over every frame before it leaves. Read
 * through volatile 16-bit loads: a memcpy from const rodata would be folded
 * by the compiler into stores of the zeros it was initialised with.
 */
const volatile __u16 hdr[FERRY_GEN_HDR_MAX / 2];
/* of which this many 16-bit words are the header (23 with a VLAN tag) */
const volatile __u16 hdr_words = FERRY_GEN_HDR_LEN / 2;
const volatile __u64 interval_ns; /* 1e9 / rate; 0: as fast as possible */
const volatile __u64 max_frames;  /* stop after this many; 0: never */

/* Debt older than this is forgiven rather than sent as a burst. */
#define MAX_DEBT_NS 1000000000ull

__u64 sent;	/* frames let out, for max_frames */
__u64 sched_ns; /* when the next frame is due */
__u64 last_ns;	/* when the last frame left */

/*
 * Frame sequence number. BPF_PROG_RUN runs on the caller's CPU, so with one
 * generator thread there is a single writer. Several threads would race on
 * it; the flows would then be spread a little less evenly, which is
 * harmless, so it is not made atomic.
 */
__u64 seq;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ferry_gen_ctr);
} gen_ctrs SEC(".maps");

SEC("xdp")
int ferry_gen(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ferry_gen_ctr *ctr;
	struct udphdr *udp;
	__u32 key = 0, flows = n_flows ? n_flows : 1;
	__u16 flow;

	udp = data + udp_off;
	if ((void *)(udp + 1) > data_end || data + FERRY_GEN_HDR_LEN > data_end)
		return XDP_ABORTED;
	/* (hdr_words is frozen rodata: the verifier knows which) */
	if (hdr_words > FERRY_GEN_HDR_LEN / 2 &&
	    data + FERRY_GEN_HDR_MAX > data_end)
		return XDP_ABORTED;
	if (max_frames && sent >= max_frames)
		return XDP_DROP;
	if (interval_ns) {
		__u64 now = bpf_ktime_get_ns();

		if (now < sched_ns || now - last_ns < interval_ns / 2)
			return XDP_DROP;
		if (!sched_ns || now - sched_ns > MAX_DEBT_NS)
			sched_ns = now;
		sched_ns += interval_ns;
		last_ns = now;
	}
	sent++;

#pragma unroll
	for (int i = 0; i < FERRY_GEN_HDR_MAX / 2; i++) {
		if (i >= hdr_words)
			break;
		((__u16 *)data)[i] = hdr[i];
	}
	flow = seq++ % flows;
	udp->source = bpf_htons((__u16)(sport_base + flow));
	/* Zero means "no checksum", which IPv4 allows; cheaper than
	 * updating it for the port we changed. */
	udp->check = 0;

	ctr = bpf_map_lookup_elem(&gen_ctrs, &key);
	if (ctr) {
		ctr->frames++;
		ctr->bytes += data_end - data;
	}
	return bpf_redirect(ifindex_out, 0);
}

/* Run once at start with live frames: if the kernel takes the flag, the
 * generator uses this path; the frame is dropped, nothing is sent. */
SEC("xdp")
int ferry_gen_probe(struct xdp_md *ctx)
{
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
