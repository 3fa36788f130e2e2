// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ferry_proxy - the splice proxy's sk_skb verdict: every skb a proxied
 * socket receives leaves through the other socket of its flow, in the
 * kernel, so payload never reaches userspace.
 *
 * Two sockmaps with the same keys (flow slot i: 2i client, 2i+1 backend):
 *   ferry_proxy_hold    every socket of every live flow, no program. It
 *                       keeps each socket's psock alive, so the socket stays
 *                       a redirect target while its own receive side is
 *                       paused; redirects look the peer up here.
 *   ferry_proxy_active  the sockets whose received bytes are forwarded now;
 *                       this program is attached to it. Userspace takes a
 *                       socket out to pause it (its bytes then wait in its
 *                       own receive queue and TCP flow control pushes back
 *                       on the sender) and puts it back to resume.
 * The egress redirect (flags 0) queues the skb on the peer's psock, which
 * sends it out of the peer with tcp_sendmsg; nothing charges that queue to
 * either socket, which is why userspace bounds it (dataplane/proxy.c).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "ferry_abi.h"

struct {
	__uint(type, BPF_MAP_TYPE_SOCKMAP);
	__uint(max_entries, FERRY_PROXY_N_KEYS);
	__type(key, __u32);
	__type(value, __u64);
} ferry_proxy_hold SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SOCKMAP);
	__uint(max_entries, FERRY_PROXY_N_KEYS);
	__type(key, __u32);
	__type(value, __u64);
} ferry_proxy_active SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FERRY_PROXY_N_KEYS);
	__type(key, __u64); /* socket cookie */
	__type(value, struct ferry_proxy_sock);
} ferry_proxy_socks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FERRY_PROXY_MAX_FLOWS);
	__type(key, __u32);
	__type(value, struct ferry_proxy_ctr);
} ferry_proxy_ctrs SEC(".maps");

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
	struct ferry_proxy_sock *s;
	__u32 zero = 0;
	long ret;

	s = bpf_map_lookup_elem(&ferry_proxy_socks, &cookie);
	ctr = s ? bpf_map_lookup_elem(&ferry_proxy_ctrs, &s->slot) : NULL;
	if (!s || !ctr) {
		struct ferry_proxy_misc *m =
			bpf_map_lookup_elem(&ferry_proxy_misc, &zero);

		if (m)
			__sync_fetch_and_add(&m->unknown, 1);
		return SK_PASS; /* to the socket's own reader: nothing lost */
	}
	d = &ctr->dir[s->dir & 1];
	/*
	 * The FIN arrives as an skb without payload. Sent on, it would make
	 * the peer's backlog see a zero-byte send, which it treats as a
	 * broken pipe; userspace propagates the FIN with shutdown() instead.
	 */
	if (!skb->len) {
		d->fin++;
		return SK_DROP;
	}
	/* Only this socket's verdict writes d: its runs are serialized by
	 * the socket lock, so plain adds suffice. */
	ret = bpf_sk_redirect_map(skb, &ferry_proxy_hold, s->peer_key, 0);
	if (ret != SK_PASS) {
		d->redirect_failed++;
		return SK_DROP;
	}
	d->bytes += skb->len;
	d->skbs++;
	return SK_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
