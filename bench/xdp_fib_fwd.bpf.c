// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp_fib_fwd - the in-kernel XDP router ferry's `route` app is benchmarked
 * against (bench/route.sh), the way xdp-tools' xdp-forward forwards: parse
 * Ethernet and IPv4/IPv6, ask the kernel's FIB (bpf_fib_lookup, which also
 * resolves the neighbour), and on success decrement the TTL / hop limit,
 * rewrite both MACs and redirect through a DEVMAP_HASH keyed by the egress
 * ifindex. Anything else (no route, no neighbour, TTL about to expire,
 * options the helper does not handle, non-IP) goes to the kernel's stack
 * with XDP_PASS, which does the rest (ICMP errors, ARP).
 *
 * bpf_fib_lookup answers BPF_FIB_LKUP_RET_FWD_DISABLED unless forwarding is
 * on for the ingress device (net.ipv4.conf.DEV.forwarding,
 * net.ipv6.conf.DEV.forwarding): the loader turns it on, as a user of an
 * XDP forwarder does.
 *
 * Counters (per CPU, one slot per outcome) tell a run that redirected from
 * one where every frame fell back to the stack.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define AF_INET	 2
#define AF_INET6 10

/* Egress ports, key and value the ifindex (the loader fills them). */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} fib_tx_ports SEC(".maps");

enum fib_outcome {
	FIB_O_REDIRECT,	     /* bpf_redirect_map accepted the frame */
	FIB_O_PASS_LOOKUP,   /* the FIB said no (no route, no neighbour, ...) */
	FIB_O_PASS_TTL,	     /* TTL / hop limit <= 1: the stack sends ICMP */
	FIB_O_PASS_OTHER,    /* not IP, short, IPv4 options or fragments */
	FIB_O_FWD_DISABLED,  /* forwarding off on the ingress device */
	FIB_O_REDIRECT_FAIL, /* egress not in fib_tx_ports */
	FIB_O__COUNT
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FIB_O__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} fib_ctr SEC(".maps");

static __always_inline int count(__u32 outcome, int verdict)
{
	__u64 *n = bpf_map_lookup_elem(&fib_ctr, &outcome);

	if (n)
		(*n)++;
	return verdict;
}

/* RFC 1624 incremental update for TTL - 1 (the high byte of a 16-bit
 * word): what the kernel's ip_decrease_ttl() does. */
static __always_inline void ipv4_ttl_dec(struct iphdr *iph)
{
	__u32 check = iph->check;

	check += bpf_htons(0x0100);
	iph->check = (__sum16)(check + (check >= 0xffff));
	iph->ttl--;
}

/* 0 when the FIB has a route and a neighbour for p (p then holds the egress
 * ifindex and both MACs), else the verdict for the frame: XDP_PASS. */
static __always_inline int lookup(struct xdp_md *ctx, struct bpf_fib_lookup *p)
{
	long rc;

	rc = bpf_fib_lookup(ctx, p, sizeof(*p), 0);
	if (rc == BPF_FIB_LKUP_RET_FWD_DISABLED)
		return count(FIB_O_FWD_DISABLED, XDP_PASS);
	if (rc != BPF_FIB_LKUP_RET_SUCCESS)
		return count(FIB_O_PASS_LOOKUP, XDP_PASS);
	return 0;
}

static __always_inline int redirect(struct ethhdr *eth,
				    struct bpf_fib_lookup *p)
{
	long rc;

	__builtin_memcpy(eth->h_dest, p->dmac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, p->smac, ETH_ALEN);
	rc = bpf_redirect_map(&fib_tx_ports, p->ifindex, 0);
	if (rc == XDP_REDIRECT)
		return count(FIB_O_REDIRECT, XDP_REDIRECT);
	return count(FIB_O_REDIRECT_FAIL, XDP_PASS);
}

static __always_inline int fwd_ipv4(struct xdp_md *ctx, struct ethhdr *eth,
				    void *end)
{
	struct iphdr *iph = (void *)(eth + 1);
	struct bpf_fib_lookup p = {};
	int verdict;

	if ((void *)(iph + 1) > end)
		return count(FIB_O_PASS_OTHER, XDP_PASS);
	/* options and fragments: the stack's business, as in xdp-forward */
	if (iph->ihl != 5 || (iph->frag_off & bpf_htons(0x3fff)))
		return count(FIB_O_PASS_OTHER, XDP_PASS);
	if (iph->ttl <= 1)
		return count(FIB_O_PASS_TTL, XDP_PASS);
	p.family = AF_INET;
	p.tos = iph->tos;
	p.l4_protocol = iph->protocol;
	p.tot_len = bpf_ntohs(iph->tot_len);
	p.ipv4_src = iph->saddr;
	p.ipv4_dst = iph->daddr;
	p.ifindex = ctx->ingress_ifindex;
	verdict = lookup(ctx, &p);
	if (verdict)
		return verdict;
	ipv4_ttl_dec(iph);
	return redirect(eth, &p);
}

static __always_inline int fwd_ipv6(struct xdp_md *ctx, struct ethhdr *eth,
				    void *end)
{
	struct ipv6hdr *ip6h = (void *)(eth + 1);
	struct bpf_fib_lookup p = {};
	int verdict;

	if ((void *)(ip6h + 1) > end)
		return count(FIB_O_PASS_OTHER, XDP_PASS);
	if (ip6h->hop_limit <= 1)
		return count(FIB_O_PASS_TTL, XDP_PASS);
	p.family = AF_INET6;
	p.flowinfo = *(__be32 *)ip6h & bpf_htonl(0x0fffffff);
	p.l4_protocol = ip6h->nexthdr;
	p.tot_len = bpf_ntohs(ip6h->payload_len);
	__builtin_memcpy(p.ipv6_src, &ip6h->saddr, sizeof(p.ipv6_src));
	__builtin_memcpy(p.ipv6_dst, &ip6h->daddr, sizeof(p.ipv6_dst));
	p.ifindex = ctx->ingress_ifindex;
	verdict = lookup(ctx, &p);
	if (verdict)
		return verdict;
	ip6h->hop_limit--;
	return redirect(eth, &p);
}

SEC("xdp")
int xdp_fib_fwd(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > end)
		return count(FIB_O_PASS_OTHER, XDP_PASS);
	if (eth->h_proto == bpf_htons(ETH_P_IP))
		return fwd_ipv4(ctx, eth, end);
	if (eth->h_proto == bpf_htons(ETH_P_IPV6))
		return fwd_ipv6(ctx, eth, end);
	return count(FIB_O_PASS_OTHER, XDP_PASS);
}

/*
 * The benchmark's sink, on s0: counts and drops, and first sets an IPv4
 * TTL back to 64. The generator sends BPF_PROG_RUN live frames, whose pages
 * its page pool recycles without rewriting the headers; a forwarder that
 * edits the frame in place (the kernel, xdp_fib_fwd) hands the generator
 * back a page with TTL - 1, so without this reset a page that made 63 trips
 * would arrive with TTL 1 and be refused. Slot 0: frames; slot 1: frames
 * that came with a TTL under 63: a recycled page on its second trip or
 * more, which the reset kept valid.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} sink_ctr SEC(".maps");

/* RFC 1624 eqn. 3 for a new TTL (the high byte of its 16-bit word, taken
 * in memory order like the checksum field itself). */
static __always_inline void ipv4_ttl_set(struct iphdr *iph, __u8 ttl)
{
	__u32 sum = (__u16)~iph->check;

	sum += (__u16)~bpf_htons((__u16)iph->ttl << 8);
	sum += bpf_htons((__u16)ttl << 8);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	iph->check = (__sum16)~sum;
	iph->ttl = ttl;
}

SEC("xdp")
int xdp_sink_reset(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *iph = (void *)(eth + 1);
	__u32 key = 0;
	__u64 *n = bpf_map_lookup_elem(&sink_ctr, &key);

	if (n)
		(*n)++;
	if ((void *)(iph + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    iph->ttl == 64)
		return XDP_DROP;
	if (iph->ttl < 63) {
		key = 1;
		n = bpf_map_lookup_elem(&sink_ctr, &key);
		if (n)
			(*n)++;
	}
	ipv4_ttl_set(iph, 64);
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
