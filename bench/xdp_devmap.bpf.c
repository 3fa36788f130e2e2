// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp_devmap - the in-kernel baseline ferry is benchmarked against: every
 * frame goes straight back out through DEVMAP entry 0, no parsing.
 *
 * xdp_pass_prog goes on the receiving veth peer: a veth only accepts
 * ndo_xdp_xmit frames when its peer has an XDP program (or GRO) enabled.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} tx_port SEC(".maps");

/* Frames forwarded (redirect accepted), per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} fwd_ctr SEC(".maps");

static __always_inline int devmap_fwd(void *tx, void *ctr)
{
	__u32 key = 0;
	__u64 *pkts;
	long ret;

	ret = bpf_redirect_map(tx, 0, 0);
	if (ret == XDP_REDIRECT) {
		pkts = bpf_map_lookup_elem(ctr, &key);
		if (pkts)
			(*pkts)++;
	}
	return ret;
}

SEC("xdp")
int xdp_devmap_fwd(struct xdp_md *ctx)
{
	return devmap_fwd(&tx_port, &fwd_ctr);
}

/* Frames the benchmark's sink saw, per CPU: the sink counts and drops. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} sink_ctr SEC(".maps");

static __always_inline int sink_count(void *ctr)
{
	__u32 key = 0;
	__u64 *pkts = bpf_map_lookup_elem(ctr, &key);

	if (pkts)
		(*pkts)++;
	return XDP_DROP;
}

SEC("xdp")
int xdp_sink_count(struct xdp_md *ctx)
{
	return sink_count(&sink_ctr);
}

SEC("xdp")
int xdp_pass_prog(struct xdp_md *ctx)
{
	return XDP_PASS;
}

/*
 * The same two in section xdp.frags: they take multi-buffer frames, so they
 * attach at MTU 9000 (bench/jumbo.sh) and count a chain as one frame. Maps
 * of their own: the kernel refuses to load a frags program that shares a
 * DEVMAP with one that is not. The single-buffer ones stay as they were:
 * tests attach them by section "xdp".
 */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} tx_port_mb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} fwd_ctr_mb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} sink_ctr_mb SEC(".maps");

SEC("xdp.frags")
int xdp_devmap_fwd_mb(struct xdp_md *ctx)
{
	return devmap_fwd(&tx_port_mb, &fwd_ctr_mb);
}

SEC("xdp.frags")
int xdp_sink_count_mb(struct xdp_md *ctx)
{
	return sink_count(&sink_ctr_mb);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
