// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * capture_xdp - the classifier's capture call as bpf/ferry_capture_abi.h
 * sketches it, alone in a program, so that tests/bpf/test_capture_xdp.c can
 * run it with BPF_PROG_TEST_RUN and read what the kernel really emits
 * through dataplane/capture/capture_xdp.c. The reason and action come from
 * rodata; the real classifier passes its own verdict. The maps and the emit
 * code are the classifier's own (bpf/ferry_capture.bpf.h); test_capture_xdp
 * still checks the maps against the classifier's object, map by map.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "ferry_abi.h"
#include "ferry_capture.bpf.h"

const volatile __u16 test_reason = FERRY_R_DROP_RULE;

SEC("xdp")
int capture_xdp_test(struct xdp_md *ctx)
{
	cap_xdp(ctx, test_reason, XDP_DROP);
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
