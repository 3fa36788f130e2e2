/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ferry_capture_abi.h - what the classifier sends userspace for a frame it
 * captures in XDP: frames that never reach a worker (ACL drops, malformed
 * drops, steering to a CPU, passes to the kernel) are only visible there.
 *
 * The classifier emits one perf sample per captured frame with
 * bpf_perf_event_output() on its xdp_md context: the record below, then
 * cap_len bytes of the frame, which the helper appends itself when the
 * flags' upper 32 bits carry cap_len (in an XDP program the helper is the
 * kernel's bpf_xdp_event_output; bpf_xdp_output(), which xdp-tools'
 * xdpdump calls, is the same for fentry/fexit programs and is refused in
 * XDP programs: "program of this type cannot use helper", seen here). Userspace (dataplane/capture/capture_xdp.c)
 * reads the samples with libbpf's perf_buffer and queues them into the
 * capture's rings. A perf sample's raw data is padded to 8 bytes, so a
 * sample may be a few bytes longer than the record and its bytes.
 *
 * The classifier side, to be added to bpf/ferry_xdp.bpf.c (owned there):
 *
 *	struct {
 *		__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
 *		__uint(key_size, sizeof(__u32));
 *		__uint(value_size, sizeof(__u32));
 *	} ferry_cap_events SEC(".maps");
 *	struct {
 *		__uint(type, BPF_MAP_TYPE_ARRAY);
 *		__uint(max_entries, 1);
 *		__type(key, __u32);
 *		__type(value, struct ferry_cap_xdp_cfg);
 *	} ferry_cap_cfg SEC(".maps");
 *
 *	// once per frame, where the verdict (reason, action) is known:
 *	cfg = bpf_map_lookup_elem(&ferry_cap_cfg, &zero);
 *	if (cfg && (cfg->reasons & (1ull << reason))) {
 *		__u64 len = ctx->data_end - ctx->data;  // + frags: bpf_xdp_get_buff_len()
 *		struct ferry_cap_xdp_rec rec = {
 *			.ts_ns = bpf_ktime_get_ns(), .ifindex = ctx->ingress_ifindex,
 *			.rx_queue = ctx->rx_queue_index, .reason = reason,
 *			.action = action, .orig_len = len,
 *			.cap_len = len < cfg->snaplen ? len : cfg->snaplen };
 *		bpf_perf_event_output(ctx, &ferry_cap_events,
 *			       BPF_F_CURRENT_CPU | ((__u64)rec.cap_len << 32),
 *			       &rec, sizeof(rec));
 *	}
 *
 * With the capture off, cfg->reasons is 0: one map lookup and one branch
 * per frame. The helper copies from linear data and fragments alike.
 * bpf/ferry_capture.bpf.h is this snippet; tests/bpf/progs/capture_xdp.bpf.c
 * runs it alone, for test_capture_xdp.
 */
#ifndef FERRY_CAPTURE_ABI_H
#define FERRY_CAPTURE_ABI_H

#include <linux/types.h>

#define FERRY_CAP_EVENTS_MAP_NAME "ferry_cap_events"
#define FERRY_CAP_CFG_MAP_NAME	  "ferry_cap_cfg"

/* Bytes of a frame one record carries at most (the sample's size limit is
 * the perf buffer's page count; a jumbo frame's headers are what matter). */
#define FERRY_CAP_XDP_SNAP_MAX 4096

/* The classifier's capture switch: ferry_cap_cfg[0]. */
struct ferry_cap_xdp_cfg {
	__u64 reasons; /* bit r: capture frames of enum ferry_reason r; 0: off */
	__u32 snaplen; /* <= FERRY_CAP_XDP_SNAP_MAX */
	__u32 pad;
};

/* One captured frame; cap_len bytes of it follow. */
struct ferry_cap_xdp_rec {
	__u64 ts_ns;	/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 ifindex;	/* ingress; the egress in ferry_cap_tx's (dir tx) */
	__u32 rx_queue; /* ctx->rx_queue_index */
	__u16 reason;	/* enum ferry_reason (ferry_abi.h) */
	__u16 action;	/* the XDP verdict: XDP_DROP, XDP_PASS, XDP_REDIRECT */
	__u32 orig_len; /* the frame's length, fragments included */
	__u32 cap_len;	/* bytes that follow the record */
	__u32 pad;
};

_Static_assert(sizeof(struct ferry_cap_xdp_rec) == 32,
	       "capture record layout is shared with the BPF side");
_Static_assert(sizeof(struct ferry_cap_xdp_cfg) == 16,
	       "capture config layout is shared with the BPF side");

#endif /* FERRY_CAPTURE_ABI_H */
