/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ferry_fib.bpf.h - the route app's in-kernel path, part of ferry_xdp (included
 * once, by bpf/ferry_xdp.bpf.c, after count(), cap_xdp() and
 * ferry_csum_complete()). The contract is in ferry_abi.h (FERRY_KFWD_FIB).
 *
 * A frame is finished here only when nothing a worker does is needed: an
 * untagged, single-buffer IPv4 frame without options or IPv6 frame without
 * hop-by-hop options, TTL / hop limit above 1, a route whose neighbour the
 * kernel has, within the egress MTU (the helper's own check), and an
 * egress that is a route port on the kernel path. Everything else goes to
 * the worker untouched, which sends the ICMP errors and asks for
 * resolution exactly as without the kernel path.
 *
 * The lookup names the loopback device as the ingress, with
 * BPF_FIB_LOOKUP_DIRECT (the main table, the one ferry's netlink mirror
 * follows): bpf_fib_lookup answers FWD_DISABLED unless forwarding is on
 * for the ingress it is given (checked on 6.18, both families, whatever
 * the flags), and lo is the one device whose forwarding knob lets no
 * frame of the wire be forwarded by the kernel.
 */
#ifndef FERRY_FIB_H
#define FERRY_FIB_H

#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>

#ifndef AF_INET
#define AF_INET 2
#endif
#ifndef AF_INET6
#define AF_INET6 10
#endif

/* The egress devices, keyed by ifindex: route ports on the kernel path
 * (with a tx capture's DEVMAP program while one runs: ferry_cap_tx). */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, FERRY_FIB_EGRESS_MAX);
	__type(key, __u32);
	__type(value, struct bpf_devmap_val);
} ferry_fib_dev SEC(".maps");

/* ifindex -> counter slot; an egress is used only while it is here, so
 * userspace takes it out first and the DEVMAP entry after a grace period. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FERRY_FIB_EGRESS_MAX);
	__type(key, __u32);
	__type(value, __u32);
} ferry_fib_egress SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FERRY_FIB_EGRESS_MAX);
	__type(key, __u32);
	__type(value, struct ferry_fib_tx_ctr);
} ferry_fib_tx SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ferry_fib_ctr);
} ferry_fib_ctrs SEC(".maps");

/* Written by the daemon after load (the tracepoint filter). */
__u32 ferry_fib_dev_map_id;
/* Set by userspace while the port has egress slots (kpath.c: before the
 * classifier's byte turns the path on, cleared after the grace period
 * that turns it off), so the transmit tracepoint looks its egress up only
 * then. */
__u32 ferry_fib_on;

#define FIB_COUNT(field)                                                       \
	do {                                                                   \
		__u32 k0 = 0;                                                  \
		struct ferry_fib_ctr *fc =                                     \
			bpf_map_lookup_elem(&ferry_fib_ctrs, &k0);             \
		if (fc)                                                        \
			fc->field++;                                           \
	} while (0)

/* A bad header checksum is the worker's to count (malformed), and must not
 * be carried on by the incremental update. */
static __always_inline int ip4_csum_ok(struct iphdr *ip)
{
	__s64 sum = bpf_csum_diff(NULL, 0, (__be32 *)ip, sizeof(*ip), 0);
	__u32 s;

	if (sum < 0)
		return 0;
	s = (__u32)sum;
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return s == 0xffff;
}

/*
 * Looks the frame up, rewrites it and redirects it: XDP_REDIRECT, or
 * XDP_DROP when the frame was rewritten and the redirect then failed
 * (the egress left between the two lookups: userspace's ordering makes
 * that impossible, so it is counted as drop_no_dev, not hidden); -1: for
 * the worker, untouched. Global and noinline: the verifier checks it
 * once, and its 64-byte lookup struct is not on ferry_xdp's stack when
 * ferry_csum_complete runs.
 */
__noinline int ferry_fib_fwd(struct xdp_md *ctx, const struct ferry_pkt *pkt)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct bpf_fib_lookup fib;
	struct ethhdr *eth = data;
	struct iphdr *ip;
	struct ipv6hdr *ip6;
	__u32 *slot, s, len;
	struct ferry_fib_tx_ctr *tx;
	long rc;

	if (!pkt)
		return -1;
	len = (__u32)(data_end - data);
	/* A VLAN's lookup is its sub-interface's (and its VRF's): the
	 * worker does it, and pops / pushes the tags (route.h). */
	if (pkt->n_vlan) {
		FIB_COUNT(vlan);
		return -1;
	}
	if (bpf_xdp_get_buff_len(ctx) != len || (void *)(eth + 1) > data_end) {
		FIB_COUNT(not_plain);
		return -1;
	}
	__builtin_memset(&fib, 0, sizeof(fib));
	if (pkt->family == 4) {
		ip = (void *)(eth + 1);
		if ((void *)(ip + 1) > data_end || ip->ihl != 5 ||
		    !ip4_csum_ok(ip)) {
			FIB_COUNT(not_plain);
			return -1;
		}
		if (ip->ttl <= 1) {
			FIB_COUNT(ttl);
			return -1;
		}
		fib.family = AF_INET;
		fib.tos = ip->tos;
		fib.l4_protocol = ip->protocol;
		fib.tot_len = bpf_ntohs(ip->tot_len);
		fib.ipv4_src = ip->saddr;
		fib.ipv4_dst = ip->daddr;
	} else if (pkt->family == 6) {
		ip6 = (void *)(eth + 1);
		if ((void *)(ip6 + 1) > data_end || ip6->nexthdr == 0) {
			FIB_COUNT(not_plain);
			return -1;
		}
		if (ip6->hop_limit <= 1) {
			FIB_COUNT(ttl);
			return -1;
		}
		fib.family = AF_INET6;
		fib.flowinfo = *(__be32 *)ip6 & bpf_htonl(0x0fffffff);
		fib.l4_protocol = ip6->nexthdr;
		/* the helper compares tot_len with the MTU: the whole
		 * packet, header included */
		fib.tot_len = bpf_ntohs(ip6->payload_len) + sizeof(*ip6);
		__builtin_memcpy(fib.ipv6_src, &ip6->saddr, 16);
		__builtin_memcpy(fib.ipv6_dst, &ip6->daddr, 16);
	} else {
		FIB_COUNT(not_plain);
		return -1;
	}
	/* Ports for a multipath hash policy that uses them. */
	if (!pkt->is_frag &&
	    (pkt->l4_proto == IPPROTO_TCP || pkt->l4_proto == IPPROTO_UDP)) {
		fib.sport = bpf_htons(pkt->sport);
		fib.dport = bpf_htons(pkt->dport);
	}
	fib.ifindex = FERRY_FIB_LOOKUP_IFINDEX;
	rc = bpf_fib_lookup(ctx, &fib, sizeof(fib), BPF_FIB_LOOKUP_DIRECT);
	switch (rc) {
	case BPF_FIB_LKUP_RET_SUCCESS:
		break;
	case BPF_FIB_LKUP_RET_NO_NEIGH:
		FIB_COUNT(no_neigh);
		return -1;
	case BPF_FIB_LKUP_RET_FRAG_NEEDED:
		FIB_COUNT(frag_needed);
		return -1;
	case BPF_FIB_LKUP_RET_FWD_DISABLED:
		FIB_COUNT(fwd_disabled);
		return -1;
	default:
		FIB_COUNT(no_route);
		return -1;
	}
	slot = bpf_map_lookup_elem(&ferry_fib_egress, &fib.ifindex);
	if (!slot || *slot >= FERRY_FIB_EGRESS_MAX) {
		FIB_COUNT(egress_not_kernel);
		return -1;
	}
	s = *slot;
	/* An rx capture sees the frame as received: here, before the
	 * rewrite, where only a failed redirect can still turn it back. */
	cap_xdp(ctx, FERRY_R_DEV_REDIRECT, XDP_REDIRECT);

	/* The helper does not touch the frame; the pointers are reloaded
	 * for the verifier's sake all the same. */
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	eth = data;
	if (fib.family == AF_INET) {
		__u32 check;

		ip = (void *)(eth + 1);
		if ((void *)(ip + 1) > data_end)
			return -1;
		/* RFC 1624, as the kernel's ip_decrease_ttl(): TTL is the
		 * high byte of its 16-bit word */
		check = ip->check;
		check += bpf_htons(0x0100);
		ip->check = (__u16)(check + (check >= 0xffff));
		ip->ttl--;
	} else {
		ip6 = (void *)(eth + 1);
		if ((void *)(ip6 + 1) > data_end)
			return -1;
		ip6->hop_limit--;
	}
	__builtin_memcpy(eth->h_dest, fib.dmac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, fib.smac, ETH_ALEN);
	FIB_COUNT(fwd);
	if (bpf_redirect_map(&ferry_fib_dev, fib.ifindex, 0) != XDP_REDIRECT)
		return XDP_DROP;
	tx = bpf_map_lookup_elem(&ferry_fib_tx, &s);
	if (tx) {
		tx->packets++;
		tx->bytes += len;
	}
	return XDP_REDIRECT;
}

/* What the egress driver took, per egress slot (from xdp_devmap_xmit). */
static __always_inline void ferry_fib_sent(__u32 to_ifindex, int sent)
{
	struct ferry_fib_tx_ctr *tx;
	__u32 *slot;

	if (sent <= 0)
		return;
	slot = bpf_map_lookup_elem(&ferry_fib_egress, &to_ifindex);
	if (!slot)
		return;
	tx = bpf_map_lookup_elem(&ferry_fib_tx, slot);
	if (tx)
		tx->sent += sent;
}

#endif /* FERRY_FIB_H */
