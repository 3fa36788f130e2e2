// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ferry_cap_tx.bpf.c - `capture ... dir tx` of a port the kernel path sends
 * to: a DEVMAP egress program. On the kernel path (xconnect's ferry_tx_dev,
 * the route app's ferry_fib_dev) no worker sends the frames, so the only
 * place that sees them as sent (after the router's MAC and TTL rewrite) is
 * the DEVMAP entry's own program, which the kernel runs on each frame just
 * before the egress driver's ndo_xdp_xmit.
 *
 * One object per running tx capture, loaded by dataplane/core/capture_ctl.c
 * when the capture starts and closed when it ends; its program is in the
 * DEVMAP entries that point at the captured port only meanwhile
 * (kpath.c: ferry_kpath_tx_prog), so with no tx capture the kernel path
 * runs no program at all. Its own object and not a function of the
 * classifier's: nothing is loaded per port for it, the perf event array
 * exists only while someone reads it, and the snaplen is rodata.
 *
 * Records are the classifier's (ferry_capture_abi.h): ifindex is the
 * egress, reason FERRY_R_DEV_REDIRECT (the kernel path's verdict), action
 * XDP_PASS (transmit), rx_queue what the DEVMAP rebuilt (0).
 *
 * xdp.frags: the kernel lets a DEVMAP entry hold only a program that
 * agrees on frags with the map's owner, the classifier (xdp.frags): the
 * same program as plain xdp/devmap is refused with EINVAL (measured on
 * 6.18). With it a multi-buffer (jumbo) frame goes through with the
 * program attached (t_capture_tx_jumbo).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "ferry_abi.h"
#include "ferry_capture_abi.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} ferry_cap_tx_events SEC(".maps");

/* Set before load: bytes of a frame a record carries. */
const volatile __u32 ferry_cap_tx_snaplen = FERRY_CAP_XDP_SNAP_MAX;

SEC("xdp.frags/devmap")
int ferry_cap_tx(struct xdp_md *ctx)
{
	struct ferry_cap_xdp_rec rec = {};
	__u64 len = bpf_xdp_get_buff_len(ctx);
	__u32 snap = ferry_cap_tx_snaplen;

	if (snap > FERRY_CAP_XDP_SNAP_MAX)
		snap = FERRY_CAP_XDP_SNAP_MAX;
	rec.ts_ns = bpf_ktime_get_ns();
	rec.ifindex = ctx->egress_ifindex;
	rec.rx_queue = ctx->rx_queue_index;
	rec.reason = FERRY_R_DEV_REDIRECT;
	rec.action = XDP_PASS;
	rec.orig_len = (__u32)len;
	rec.cap_len = len < snap ? (__u32)len : snap;
	bpf_perf_event_output(ctx, &ferry_cap_tx_events,
			      BPF_F_CURRENT_CPU | ((__u64)rec.cap_len << 32),
			      &rec, sizeof(rec));
	/* XDP_PASS in a DEVMAP program: the frame goes on to the egress. */
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
