/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ferry_capture.bpf.h - BPF code, not a userspace header: the capture maps
 * and the capture call of the classifier (bpf/ferry_xdp.bpf.c), included
 * there once, and by tests/bpf/progs/capture_xdp.bpf.c, so the unit test
 * runs the classifier's own maps and emit code. The record and the config
 * are the contract in ferry_capture_abi.h; userspace reads them in
 * dataplane/capture/capture_xdp.c.
 */
#ifndef FERRY_CAPTURE_BPF_H
#define FERRY_CAPTURE_BPF_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "ferry_capture_abi.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} ferry_cap_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ferry_cap_xdp_cfg);
} ferry_cap_cfg SEC(".maps");

/*
 * A frame dropped or steered here, without a worker: one perf sample with
 * its verdict for a running capture (ferry_capture_abi.h), the bytes
 * appended by the helper. Out of line: its record would add to ferry_xdp's
 * stack, which with ferry_csum_complete's is at the verifier's 512-byte
 * limit; and only a captured frame pays for the call (cap_xdp below).
 */
static __noinline void cap_emit(struct xdp_md *ctx, __u32 reason, __u32 action,
				__u32 snaplen)
{
	struct ferry_cap_xdp_rec rec = {};
	__u64 len;

	len = bpf_xdp_get_buff_len(ctx);
	rec.ts_ns = bpf_ktime_get_ns();
	rec.ifindex = ctx->ingress_ifindex;
	rec.rx_queue = ctx->rx_queue_index;
	rec.reason = (__u16)reason;
	rec.action = (__u16)action;
	rec.orig_len = (__u32)len;
	rec.cap_len = len < snaplen ? (__u32)len : snaplen;
	if (rec.cap_len > FERRY_CAP_XDP_SNAP_MAX)
		rec.cap_len = FERRY_CAP_XDP_SNAP_MAX;
	bpf_perf_event_output(ctx, &ferry_cap_events,
			      BPF_F_CURRENT_CPU | ((__u64)rec.cap_len << 32),
			      &rec, sizeof(rec));
}

/* Off (reasons 0): one inlined array lookup and one branch, no call. */
static __always_inline void cap_xdp(struct xdp_md *ctx, __u32 reason,
				    __u32 action)
{
	const struct ferry_cap_xdp_cfg *cfg;
	__u32 zero = 0;

	cfg = bpf_map_lookup_elem(&ferry_cap_cfg, &zero);
	if (cfg && (cfg->reasons & (1ull << (reason & 63))))
		cap_emit(ctx, reason, action, cfg->snaplen);
}

#endif /* FERRY_CAPTURE_BPF_H */
