// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ferry_proxy - the splice proxy's sk_skb verdict: every skb a proxied
 * socket receives leaves through the other socket of its flow, in the
 * kernel, so payload does not reach userspace while the receiver keeps up.
 *
 * The egress redirect (flags 0) queues the skb on the peer's psock, which
 * sends it out of the peer with tcp_sendmsg from a workqueue. Nothing
 * charges that queue to either socket and TCP keeps the sender's window
 * open, so a slow receiver lets it grow without bound (1.2 GB measured
 * here). The bound is therefore checked here, per skb, before the
 * redirect: see struct ferry_proxy_ctl in ferry_abi.h.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "ferry_abi.h"

/* Every socket of every live flow; the verdict is attached to it. */
struct {
	__uint(type, BPF_MAP_TYPE_SOCKMAP);
	__uint(max_entries, FERRY_PROXY_N_KEYS);
	__type(key, __u32);
	__type(value, __u64);
} ferry_proxy_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FERRY_PROXY_N_KEYS);
	__type(key, __u64); /* socket cookie */
	__type(value, struct ferry_proxy_sock);
} ferry_proxy_socks SEC(".maps");

/* Both arrays are mmap'd by userspace: read and written every tick. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, FERRY_PROXY_MAX_FLOWS);
	__type(key, __u32);
	__type(value, struct ferry_proxy_ctr);
} ferry_proxy_ctrs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, FERRY_PROXY_MAX_FLOWS);
	__type(key, __u32);
	__type(value, struct ferry_proxy_ctl);
} ferry_proxy_ctl SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ferry_proxy_misc);
} ferry_proxy_misc SEC(".maps");

SEC("sk_skb")
int ferry_proxy_verdict(struct __sk_buff *skb)
{
	__u64 cookie = bpf_get_socket_cookie(skb);
	struct ferry_proxy_dir_ctr *d;
	struct ferry_proxy_ctr *ctr;
	struct ferry_proxy_ctl *ctl = NULL;
	struct ferry_proxy_sock *s;
	__u64 copied, pending;
	__u32 zero = 0, dir;
	long ret;

	s = bpf_map_lookup_elem(&ferry_proxy_socks, &cookie);
	ctr = s ? bpf_map_lookup_elem(&ferry_proxy_ctrs, &s->slot) : NULL;
	if (s)
		ctl = bpf_map_lookup_elem(&ferry_proxy_ctl, &s->slot);
	if (!s || !ctr || !ctl) {
		struct ferry_proxy_misc *m =
			bpf_map_lookup_elem(&ferry_proxy_misc, &zero);

		if (m)
			__sync_fetch_and_add(&m->unknown, 1);
		return SK_PASS; /* to the socket's own reader: nothing lost */
	}
	dir = s->dir & 1;
	d = &ctr->dir[dir];
	/*
	 * The FIN arrives as an skb without payload. Sent on, it would make
	 * the peer's backlog see a zero-byte send, which it treats as a
	 * broken pipe; userspace passes the FIN on with shutdown() instead.
	 */
	if (!skb->len) {
		d->fin++;
		return SK_DROP;
	}
	copied = *(volatile __u64 *)&ctl->copied[dir];
	pending = d->bytes + copied + skb->len - ctl->acked[dir];
	/*
	 * Forward unless something held is still on the socket (order:
	 * those bytes go first) or this skb would break the limit.
	 */
	if (d->held == copied && (__s64)pending <= (__s64)ctl->limit) {
		ret = bpf_sk_redirect_map(skb, &ferry_proxy_map, s->peer_key,
					  0);
		if (ret == SK_PASS) {
			d->bytes += skb->len;
			d->skbs++;
			return SK_PASS;
		}
		/* The peer is not in the map (yet: the flow is being set
		 * up): hold rather than drop, userspace copies it on. */
		d->redirect_failed++;
	}
	if (d->held == copied)
		d->holds++;
	d->held += skb->len;
	d->held_skbs++;
	return SK_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
