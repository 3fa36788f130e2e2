// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * capture_xdp - the classifier's capture call as bpf/ferry_capture_abi.h
 * sketches it, alone in a program, so that tests/bpf/test_capture_xdp.c can
 * run it with BPF_PROG_TEST_RUN and read what the kernel really emits
 * through dataplane/capture_xdp.c. The reason and action come from rodata;
 * the real classifier passes its own verdict.
 *
 * The two maps are a copy of bpf/ferry_xdp.bpf.c's, which owns them: no
 * header shares their declarations yet. test_capture_xdp checks the copy
 * against the classifier's object, map by map.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "ferry_abi.h"
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

const volatile __u16 test_reason = FERRY_R_DROP_RULE;

SEC("xdp")
int capture_xdp_test(struct xdp_md *ctx)
{
	struct ferry_cap_xdp_cfg *cfg;
	__u32 zero = 0;
	__u64 len;

	cfg = bpf_map_lookup_elem(&ferry_cap_cfg, &zero);
	if (!cfg || !(cfg->reasons & (1ull << (test_reason & 63))))
		return XDP_DROP;
	len = ctx->data_end - ctx->data;
	struct ferry_cap_xdp_rec rec = {
		.ts_ns = bpf_ktime_get_ns(),
		.ifindex = ctx->ingress_ifindex,
		.rx_queue = ctx->rx_queue_index,
		.reason = test_reason,
		.action = XDP_DROP,
		.orig_len = (__u32)len,
		.cap_len = (__u32)(len < cfg->snaplen ? len : cfg->snaplen),
	};
	/* The helper wants a length it can bound: */
	if (rec.cap_len > FERRY_CAP_XDP_SNAP_MAX)
		rec.cap_len = FERRY_CAP_XDP_SNAP_MAX;
	bpf_perf_event_output(ctx, &ferry_cap_events,
			      BPF_F_CURRENT_CPU | ((__u64)rec.cap_len << 32),
			      &rec, sizeof(rec));
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
