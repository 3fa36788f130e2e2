// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ferry_sockmap - local TCP flow acceleration.
 *
 * sockops (on a cgroup): an established TCP socket whose port matches and
 * whose both ends are on this host gets socket storage (to be measured),
 * and goes into ferry_sm_socks, keyed by its 4-tuple, when its connection
 * is decided "redirect" (below); its flow entry is made first, so the
 * first verdict finds it.
 *
 * sk_msg (on ferry_sm_socks): redirects a send to the ingress of the socket
 * under the swapped tuple, the peer. The verdict is made to last, so that
 * it runs once per flow rather than once per send():
 *   permanent    BPF_F_PERMANENT, where the kernel has it;
 *   apply-bytes  bpf_msg_apply_bytes(max): the kernel keeps the verdict
 *                for the next 4 GiB - 1 bytes and then asks again;
 *   per-message  neither (the diagnostic baseline).
 * A direction whose peer is not in the map (a remote peer, a peer not yet
 * added, or a detach in progress) goes over plain TCP, and stays there:
 * redirected bytes would otherwise be read before the TCP bytes sent
 * earlier (tcp_bpf_recvmsg serves the psock queue first).
 *
 * tp_btf/sock_send_length: counts the bytes every send() on a socket of
 * ours returned, under redirected or TCP. The verdict sees only the first
 * message of the window it grants, so it can't count bytes itself.
 *
 * Which connections are redirected is decided per service (the server's
 * address and port), once per connection, when it is established: a
 * connection left out of the SOCKHASH then is never redirected later, so
 * its bytes are never reordered. The first socket of a connection to reach
 * ESTABLISHED decides and leaves the answer for its peer (ferry_sm_pending),
 * so both ends agree. Every socket of a matched local connection, plain or
 * redirected, is measured by the send/receive tracepoints (bytes, writes,
 * turns) and folded into its service, which learns from that (the rule
 * is ferry_sm_learned() in ferry_abi.h, shared with `sockmap show` and the
 * unit tests):
 *
 *   redirect  request/response: ev_bytes <= ev_turns * rr_max_bytes_per_turn
 *             (the redirect saves a trip through TCP per turn), or
 *             large writes: ev_bytes >= ev_writes * min_mean_write
 *   plain     a stream of smaller writes: an ingress redirect makes one
 *             sk_msg per send() and wakes the reader for each, which is
 *             slower than TCP's coalescing (bench/sockmap.sh measures it)
 *   learn     fewer than learn_samples sockets measured: plain TCP
 *
 * A policy (ferry_sm_policy, by address and port or port alone) pins a
 * service; attach's `default` does for services without a policy.
 *
 * A policy may name a cgroup: it then applies to the connections whose
 * server socket (the passive end, the service's side) is in that cgroup,
 * and the service is keyed by the cgroup too, so it learns and counts
 * apart from the same port elsewhere. The passive end reads its cgroup
 * from its own socket; the active end, usually established first, can't
 * see the server's socket, so listen() records each listener's cgroup
 * (ferry_sm_listeners) and the client looks its server up there; userspace
 * adds the listeners of its own network namespace that were there before
 * the attach (sock_diag). One of another namespace listening since before
 * the attach is not in it: its connections are decided without a cgroup
 * (counted in cg_missed where a rule names its cgroup). While no policy names a cgroup (cg_policies 0), none of this
 * is looked at: every service has cgroup 0.
 *
 * The tracepoints cost every send() and recv() of the host a dispatch, so
 * userspace detaches them while nothing needs them (quiet, below): then
 * sockops redirects nothing and asks for them back (wake) when a
 * connection would be measured or redirected.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_tracing.h>

#include "ferry_abi.h"

#define AF_INET	       2
#define AF_INET6       10
#define FERRY_MSG_PEEK 2

/* Load-time knobs, set in the skeleton's rodata before load. */
const volatile __u32 mode = FERRY_SM_APPLY_BYTES; /* enum ferry_sm_mode */
const volatile __u32 n_ranges;			  /* 0: every port */
const volatile struct ferry_sm_port_range ranges[FERRY_SM_MAX_RANGES];
/* The permanent-flag probe: a refused redirect fails the send (EACCES)
 * instead of falling back to TCP, so userspace sees the kernel's answer. */
const volatile __u32 probe;
/* What services without a policy get (enum ferry_sm_decision). */
const volatile __u32 default_decision = FERRY_SM_D_LEARN;
/* The learning rule's thresholds (see the head comment); docs/performance.md
 * has the measurements they come from. */
const volatile struct ferry_sm_rule rule = FERRY_SM_RULE_DEFAULT;
const volatile __u64 fold_writes = 64; /* a socket folds every N writes */
const volatile __u64 ev_cap = 1 << 16; /* evidence halves past N writes */
/* The lag guard (ferry_abi.h): unread bytes a redirected direction's peer
 * may have before it moves to TCP; 0: off. */
const volatile __u64 lag_max = FERRY_SM_LAG_MAX_DEFAULT;

/* Run-time knobs, written by userspace through the mmap'd .bss. */
__u32 draining;		/* detach in progress: add nothing, redirect nothing */
__u64 probe_flags;	/* extra redirect flags (the probe's flag bit 1) */
__u64 added;		/* sockets added to ferry_sm_socks */
__u64 add_failed;	/* the sockhash refused one (full, ...) */
__u64 not_local;	/* port matched, peer not on this host: left alone */
__u64 no_flow_slot;	/* socket storage could not be made: left alone */
__u64 no_svc_slot;	/* the service table refused an entry: plain TCP */
__u64 decided_redirect; /* connections decided: redirect */
__u64 decided_plain;	/* connections decided: plain (learning included) */
/*
 * Quiet: userspace detached the send/receive tracepoints, which every
 * send() and recv() of the host pays for while they are attached, because
 * nothing needs them (no socket in the SOCKHASH, no service learning or
 * decided redirect). A connection that would need them sets wake, and the
 * tick attaches them again; one that would be redirected meanwhile stays
 * plain (its bytes could not be counted), counted in quiet_plain.
 */
__u32 quiet;
__u32 wake;
__u64 quiet_plain;
/* Policies naming a cgroup, written by userspace: 0 skips every lookup. */
__u32 cg_policies;
/* Connections whose server's cgroup has a rule but which were decided
 * without it (its listener was not seen: in another namespace than
 * ferryd's, listening since before the attach). */
__u64 cg_missed;
/* Directions the lag guard moved to TCP. */
__u64 lag_moves;

struct {
	__uint(type, BPF_MAP_TYPE_SOCKHASH);
	__uint(max_entries, FERRY_SM_MAX_SOCKS);
	__type(key, struct ferry_sock_key);
	__type(value, __u64);
} ferry_sm_socks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FERRY_SM_MAX_FLOWS);
	__type(key, struct ferry_sock_key);
	__type(value, struct ferry_sm_flow);
} ferry_sm_flows SEC(".maps");

/*
 * Directions detach moved to TCP, written by userspace. Not a field of the
 * flow entry: userspace can only rewrite a whole value, which would race
 * with the byte counters the programs add to it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FERRY_SM_MAX_SOCKS);
	__type(key, struct ferry_sock_key);
	__type(value, __u32);
} ferry_sm_moved SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FERRY_SM_MAX_SERVICES);
	__type(key, struct ferry_sm_svc_key);
	__type(value, struct ferry_sm_svc);
} ferry_sm_svcs SEC(".maps");

/* Written by userspace (`sockmap policy`): a decision per service. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FERRY_SM_MAX_POLICIES);
	__type(key, struct ferry_sm_policy_key);
	__type(value, __u32);
} ferry_sm_policy SEC(".maps");

/*
 * A connection's decision, left by its first end to be established under
 * its other end's key. LRU: the entry of a peer that never comes (outside
 * the cgroup) ages out.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FERRY_SM_MAX_SOCKS);
	__type(key, struct ferry_sock_key);
	__type(value, struct ferry_sm_pend);
} ferry_sm_pending SEC(".maps");

/*
 * Listening sockets' cgroups, by their local address (0: any) and port,
 * cgroup 0 in the key: made at listen(), removed when the listener closes
 * (LRU: one whose close was missed ages out).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FERRY_SM_MAX_SERVICES);
	__type(key, struct ferry_sm_svc_key);
	__type(value, __u64);
} ferry_sm_listeners SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct ferry_sm_sk);
} ferry_sm_sks SEC(".maps");

/*
 * sock_ops and sk_msg_md name their address fields alike: ports are host
 * order locally, network order (in the high half on little endian, hence
 * bpf_ntohl) remotely. A v4-mapped IPv6 socket is keyed as IPv4, so that a
 * dual-stack listener's child and its IPv4 client find each other.
 */
#define FERRY_SM_KEY_OF(ctx, k)                                                \
	do {                                                                   \
		__builtin_memset((k), 0, sizeof(*(k)));                        \
		(k)->netns = bpf_get_netns_cookie(ctx);                        \
		(k)->local_port = (__u16)(ctx)->local_port;                    \
		(k)->remote_port = (__u16)bpf_ntohl((ctx)->remote_port);       \
		if ((ctx)->family == AF_INET) {                                \
			(k)->family = 4;                                       \
			(k)->local_ip[0] = (ctx)->local_ip4;                   \
			(k)->remote_ip[0] = (ctx)->remote_ip4;                 \
		} else {                                                       \
			(k)->family = 6;                                       \
			(k)->local_ip[0] = (ctx)->local_ip6[0];                \
			(k)->local_ip[1] = (ctx)->local_ip6[1];                \
			(k)->local_ip[2] = (ctx)->local_ip6[2];                \
			(k)->local_ip[3] = (ctx)->local_ip6[3];                \
			(k)->remote_ip[0] = (ctx)->remote_ip6[0];              \
			(k)->remote_ip[1] = (ctx)->remote_ip6[1];              \
			(k)->remote_ip[2] = (ctx)->remote_ip6[2];              \
			(k)->remote_ip[3] = (ctx)->remote_ip6[3];              \
			unmap_v4(k);                                           \
		}                                                              \
	} while (0)

/*
 * A socket's cgroup v2 id. No sock_ops helper gives it (bpf_sk_cgroup_id
 * is refused there, bpf_get_current_cgroup_id names whatever task the
 * softirq interrupted), so it is read through the socket's BTF:
 * sk->sk_cgrp_data.cgroup->kn->id, which is the cgroup directory's inode
 * number, what name_to_handle_at() and stat() give userspace. These
 * declarations carry only the fields read; CO-RE finds their offsets in
 * the running kernel.
 */
struct kernfs_node {
	__u64 id;
} __attribute__((preserve_access_index));
struct cgroup {
	struct kernfs_node *kn;
} __attribute__((preserve_access_index));
struct sock_cgroup_data {
	struct cgroup *cgroup;
} __attribute__((preserve_access_index));
struct sock {
	struct sock_cgroup_data sk_cgrp_data;
} __attribute__((preserve_access_index));

static __always_inline __u64 sk_cgroup(struct bpf_sock *sk)
{
	/* A tcp_sock begins with its struct sock. */
	struct cgroup *cg;
	struct sock *s;

	if (!sk)
		return 0;
	s = (struct sock *)bpf_skc_to_tcp_sock(sk);
	if (!s)
		return 0;
	cg = s->sk_cgrp_data.cgroup;
	if (!cg || !cg->kn)
		return 0;
	return cg->kn->id;
}

static __always_inline int is_v4_mapped(const __u32 ip[4])
{
	return !ip[0] && !ip[1] && ip[2] == bpf_htonl(0xffff);
}

static __always_inline void unmap_v4(struct ferry_sock_key *k)
{
	if (!is_v4_mapped(k->local_ip) || !is_v4_mapped(k->remote_ip))
		return;
	k->family = 4;
	k->local_ip[0] = k->local_ip[3];
	k->remote_ip[0] = k->remote_ip[3];
	k->local_ip[1] = k->local_ip[2] = k->local_ip[3] = 0;
	k->remote_ip[1] = k->remote_ip[2] = k->remote_ip[3] = 0;
}

static __always_inline void key_swap(const struct ferry_sock_key *k,
				     struct ferry_sock_key *out)
{
	__builtin_memset(out, 0, sizeof(*out));
	out->netns = k->netns;
	out->family = k->family;
	out->local_port = k->remote_port;
	out->remote_port = k->local_port;
	out->local_ip[0] = k->remote_ip[0];
	out->local_ip[1] = k->remote_ip[1];
	out->local_ip[2] = k->remote_ip[2];
	out->local_ip[3] = k->remote_ip[3];
	out->remote_ip[0] = k->local_ip[0];
	out->remote_ip[1] = k->local_ip[1];
	out->remote_ip[2] = k->local_ip[2];
	out->remote_ip[3] = k->local_ip[3];
}

/*
 * "Both ends on this host", as sockops can tell it: the connection runs
 * over loopback, i.e. the peer's address is the socket's own or a loopback
 * address (127/8, ::1). A peer in another namespace across a veth is
 * local too, but indistinguishable here from a remote one; it stays TCP.
 */
static __always_inline int both_local(const struct ferry_sock_key *k)
{
	if (k->remote_ip[0] == k->local_ip[0] &&
	    k->remote_ip[1] == k->local_ip[1] &&
	    k->remote_ip[2] == k->local_ip[2] &&
	    k->remote_ip[3] == k->local_ip[3])
		return 1;
	if (k->family == 4)
		return (bpf_ntohl(k->remote_ip[0]) >> 24) == 127;
	return !k->remote_ip[0] && !k->remote_ip[1] && !k->remote_ip[2] &&
	       k->remote_ip[3] == bpf_htonl(1);
}

static __always_inline int port_match(__u16 port)
{
	__u32 i;

	if (!n_ranges)
		return 1;
	for (i = 0; i < FERRY_SM_MAX_RANGES; i++) {
		if (i >= n_ranges)
			break;
		if (port >= ranges[i].lo && port <= ranges[i].hi)
			return 1;
	}
	return 0;
}

/*
 * Adds what a socket sent since its last fold to its service and moves the
 * learned decision. Atomic adds: the sockets of a service fold from any
 * CPU. The halving of the evidence is not atomic: a fold racing with it
 * may lose its share of the evidence, never of the counters.
 */
static __always_inline void fold(struct ferry_sm_sk *st)
{
	__u64 b = st->bytes - st->folded_bytes;
	__u64 w = st->writes - st->folded_writes;
	__u64 t = st->turns - st->folded_turns;
	const struct ferry_sm_rule r = {
		.learn_samples = rule.learn_samples,
		.rr_max_bytes_per_turn = rule.rr_max_bytes_per_turn,
		.min_mean_write = rule.min_mean_write,
	};
	struct ferry_sm_svc *s;
	__u32 d, reason;

	if (!w)
		return;
	st->folded_bytes = st->bytes;
	st->folded_writes = st->writes;
	st->folded_turns = st->turns;
	s = bpf_map_lookup_elem(&ferry_sm_svcs, &st->svc);
	if (!s)
		return;
	if (st->redirected) {
		__sync_fetch_and_add(&s->bytes_redirected, b);
		__sync_fetch_and_add(&s->writes_redirected, w);
		__sync_fetch_and_add(&s->turns_redirected, t);
	} else {
		__sync_fetch_and_add(&s->bytes_plain, b);
		__sync_fetch_and_add(&s->writes_plain, w);
		__sync_fetch_and_add(&s->turns_plain, t);
	}
	if (!st->sampled) {
		st->sampled = 1;
		__sync_fetch_and_add(&s->samples, 1);
	}
	__sync_fetch_and_add(&s->ev_bytes, b);
	__sync_fetch_and_add(&s->ev_writes, w);
	__sync_fetch_and_add(&s->ev_turns, t);
	if (s->ev_writes > ev_cap) {
		s->ev_bytes /= 2;
		s->ev_writes /= 2;
		s->ev_turns /= 2;
	}
	d = ferry_sm_learned(s, &r, &reason);
	if (d != s->decision && s->decision != FERRY_SM_D_LEARN)
		__sync_fetch_and_add(&s->decision_changes, 1);
	s->decision = d;
	s->reason = reason;
}

/* The server's address and port: the passive end's local side. */
static __always_inline void svc_of(const struct ferry_sock_key *k, int passive,
				   struct ferry_sm_svc_key *svc)
{
	__builtin_memset(svc, 0, sizeof(*svc));
	svc->netns = k->netns;
	svc->family = k->family;
	svc->port = passive ? k->local_port : k->remote_port;
	svc->addr[0] = passive ? k->local_ip[0] : k->remote_ip[0];
	svc->addr[1] = passive ? k->local_ip[1] : k->remote_ip[1];
	svc->addr[2] = passive ? k->local_ip[2] : k->remote_ip[2];
	svc->addr[3] = passive ? k->local_ip[3] : k->remote_ip[3];
}

/* The policy of a service in cgroup cg (0: of every cgroup): for its
 * address and port, else for its port. */
static __always_inline __u32 *policy_lookup(const struct ferry_sm_svc_key *svc,
					    __u64 cg)
{
	struct ferry_sm_policy_key pk = {};
	__u32 *pol;

	pk.cgroup = cg;
	pk.family = svc->family;
	pk.port = svc->port;
	pk.addr[0] = svc->addr[0];
	pk.addr[1] = svc->addr[1];
	pk.addr[2] = svc->addr[2];
	pk.addr[3] = svc->addr[3];
	pol = bpf_map_lookup_elem(&ferry_sm_policy, &pk);
	if (pol)
		return pol;
	__builtin_memset(&pk, 0, sizeof(pk));
	pk.cgroup = cg;
	pk.port = svc->port;
	return bpf_map_lookup_elem(&ferry_sm_policy, &pk);
}

/* The cgroup of the listener a client connected to: its address, else
 * any address of its family, else (IPv4) a dual-stack [::] listener. */
static __always_inline __u64 listener_cgroup(const struct ferry_sm_svc_key *svc)
{
	struct ferry_sm_svc_key lk = *svc;
	__u64 *cg;

	lk.cgroup = 0;
	cg = bpf_map_lookup_elem(&ferry_sm_listeners, &lk);
	if (cg)
		return *cg;
	lk.addr[0] = lk.addr[1] = lk.addr[2] = lk.addr[3] = 0;
	cg = bpf_map_lookup_elem(&ferry_sm_listeners, &lk);
	if (cg)
		return *cg;
	if (lk.family != 4)
		return 0;
	lk.family = 6;
	cg = bpf_map_lookup_elem(&ferry_sm_listeners, &lk);
	return cg ? *cg : 0;
}

/*
 * A new connection's decision: a policy for the server's cgroup (cg, when
 * a policy names one; the service is keyed by it then), else a policy for
 * its address and port, else for its port, else attach's default, else
 * what the service learned.
 */
static __always_inline __u32 decide(struct ferry_sm_svc_key *svc, __u64 cg,
				    int *learning)
{
	struct ferry_sm_svc zero = {}, *s;
	__u32 *pol = NULL;

	if (cg) {
		pol = policy_lookup(svc, cg);
		if (pol)
			svc->cgroup = cg;
	}
	if (!pol)
		pol = policy_lookup(svc, 0);
	s = bpf_map_lookup_elem(&ferry_sm_svcs, svc);
	if (!s) {
		bpf_map_update_elem(&ferry_sm_svcs, svc, &zero, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&ferry_sm_svcs, svc);
		if (!s) {
			__sync_fetch_and_add(&no_svc_slot, 1);
			return FERRY_SM_D_PLAIN;
		}
	}
	__sync_fetch_and_add(&s->conns, 1);
	if (pol && *pol != FERRY_SM_D_LEARN)
		return *pol;
	if (!pol && default_decision != FERRY_SM_D_LEARN)
		return default_decision;
	/* Learning: plain TCP until the evidence says a redirect wins. */
	*learning = s->decision == FERRY_SM_D_LEARN;
	return s->decision == FERRY_SM_D_REDIRECT ? FERRY_SM_D_REDIRECT
						  : FERRY_SM_D_PLAIN;
}

static __always_inline void conn_redirected(const struct ferry_sm_svc_key *svc)
{
	struct ferry_sm_svc *s = bpf_map_lookup_elem(&ferry_sm_svcs, svc);

	if (s)
		__sync_fetch_and_add(&s->conns_redirected, 1);
}

static __always_inline void sock_add(struct bpf_sock_ops *skops, int passive)
{
	struct ferry_sm_flow zero = {};
	struct ferry_sock_key k, peer;
	struct ferry_sm_svc_key svc;
	struct ferry_sm_pend *pend, pd = {};
	struct ferry_sm_sk *st;
	struct bpf_sock *sk;
	__u64 cg = 0;
	__u32 d;
	int first = 0, learning = 0;

	if (draining)
		return;
	if (skops->family != AF_INET && skops->family != AF_INET6)
		return;
	FERRY_SM_KEY_OF(skops, &k);
	if (!port_match(k.local_port) && !port_match(k.remote_port))
		return;
	if (!both_local(&k)) {
		__sync_fetch_and_add(&not_local, 1);
		return;
	}
	sk = skops->sk;
	if (!sk)
		return;
	st = bpf_sk_storage_get(&ferry_sm_sks, sk, 0,
				BPF_SK_STORAGE_GET_F_CREATE);
	if (!st) {
		__sync_fetch_and_add(&no_flow_slot, 1);
		return;
	}
	st->key = k;
	svc_of(&k, passive, &svc);
	/* To fold the socket's numbers into its service when it closes. */
	bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags |
						 BPF_SOCK_OPS_STATE_CB_FLAG);
	if (cg_policies)
		cg = passive ? sk_cgroup(sk) : listener_cgroup(&svc);
	pend = bpf_map_lookup_elem(&ferry_sm_pending, &k);
	if (pend) {
		d = pend->decision;
		svc.cgroup = pend->cgroup;
		bpf_map_delete_elem(&ferry_sm_pending, &k);
		if (cg && cg != svc.cgroup && policy_lookup(&svc, cg))
			__sync_fetch_and_add(&cg_missed, 1);
	} else {
		first = 1;
		d = decide(&svc, cg, &learning);
		if (quiet && (learning || d == FERRY_SM_D_REDIRECT))
			wake = 1;
		if (quiet && d == FERRY_SM_D_REDIRECT) {
			d = FERRY_SM_D_PLAIN;
			__sync_fetch_and_add(&quiet_plain, 1);
		}
		key_swap(&k, &peer);
		pd.decision = d;
		pd.cgroup = svc.cgroup;
		bpf_map_update_elem(&ferry_sm_pending, &peer, &pd, BPF_ANY);
	}
	st->svc = svc;
	if (d != FERRY_SM_D_REDIRECT) {
		if (first)
			__sync_fetch_and_add(&decided_plain, 1);
		return;
	}
	bpf_map_update_elem(&ferry_sm_flows, &k, &zero, BPF_ANY);
	if (bpf_sock_hash_update(skops, &ferry_sm_socks, &k, BPF_ANY)) {
		__sync_fetch_and_add(&add_failed, 1);
		bpf_map_delete_elem(&ferry_sm_flows, &k);
		return;
	}
	st->redirected = 1;
	__sync_fetch_and_add(&added, 1);
	if (first) {
		__sync_fetch_and_add(&decided_redirect, 1);
		conn_redirected(&svc);
	}
}

/* The listener's local address and port, as a service key (cgroup 0). */
static __always_inline void listener_key(struct bpf_sock_ops *skops,
					 struct ferry_sm_svc_key *lk)
{
	struct ferry_sock_key k;

	FERRY_SM_KEY_OF(skops, &k);
	svc_of(&k, 1, lk);
	/* A listener on a v4-mapped address takes IPv4 clients only. */
	if (lk->family == 6 && is_v4_mapped(lk->addr)) {
		lk->family = 4;
		lk->addr[0] = lk->addr[3];
		lk->addr[1] = lk->addr[2] = lk->addr[3] = 0;
	}
}

/* Every listener of a matched port, whether or not a policy names its
 * cgroup yet: one may be added while it listens. */
static __always_inline void listener_add(struct bpf_sock_ops *skops)
{
	struct ferry_sm_svc_key lk;
	__u64 cg;

	if (skops->family != AF_INET && skops->family != AF_INET6)
		return;
	if (!skops->sk || !port_match((__u16)skops->local_port))
		return;
	cg = sk_cgroup(skops->sk);
	if (!cg)
		return;
	listener_key(skops, &lk);
	bpf_map_update_elem(&ferry_sm_listeners, &lk, &cg, BPF_ANY);
	/* To forget it when it closes. */
	bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags |
						 BPF_SOCK_OPS_STATE_CB_FLAG);
}

static __always_inline void listener_del(struct bpf_sock_ops *skops)
{
	struct ferry_sm_svc_key lk;
	__u64 *cg, mine;

	listener_key(skops, &lk);
	cg = bpf_map_lookup_elem(&ferry_sm_listeners, &lk);
	/* Not a newer listener's entry (SO_REUSEPORT, a quick restart). */
	mine = sk_cgroup(skops->sk);
	if (cg && *cg == mine)
		bpf_map_delete_elem(&ferry_sm_listeners, &lk);
}

SEC("sockops")
int ferry_sm_sockops(struct bpf_sock_ops *skops)
{
	struct ferry_sm_flow *fl;
	struct ferry_sock_key k;

	struct ferry_sm_sk *st;

	switch (skops->op) {
	case BPF_SOCK_OPS_TCP_LISTEN_CB:
		listener_add(skops);
		break;
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
		sock_add(skops, 0);
		break;
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		sock_add(skops, 1);
		break;
	case BPF_SOCK_OPS_STATE_CB:
		if (skops->args[1] != BPF_TCP_CLOSE || !skops->sk)
			break;
		if (skops->args[0] == BPF_TCP_LISTEN) {
			listener_del(skops);
			break;
		}
		st = bpf_sk_storage_get(&ferry_sm_sks, skops->sk, 0, 0);
		if (st)
			fold(st);
		FERRY_SM_KEY_OF(skops, &k);
		fl = bpf_map_lookup_elem(&ferry_sm_flows, &k);
		if (fl)
			fl->closed = 1;
		break;
	}
	return 1;
}

SEC("sk_msg")
int ferry_sm_verdict(struct sk_msg_md *msg)
{
	struct ferry_sock_key me, peer;
	struct ferry_sm_flow *fl;
	__u64 flags = BPF_F_INGRESS | probe_flags;

	FERRY_SM_KEY_OF(msg, &me);
	fl = bpf_map_lookup_elem(&ferry_sm_flows, &me);
	if (fl)
		__sync_fetch_and_add(&fl->verdict_runs, 1);
	if (draining || (fl && fl->state == FERRY_SM_DIR_TCP))
		goto tcp;
	if (fl && lag_max &&
	    (__s64)(fl->bytes_redirected - fl->bytes_read) > (__s64)lag_max) {
		fl->lagged = 1;
		__sync_fetch_and_add(&lag_moves, 1);
		goto tcp;
	}
	key_swap(&me, &peer);
	if (mode == FERRY_SM_PERMANENT)
		flags |= FERRY_SM_F_PERMANENT;
	if (bpf_msg_redirect_hash(msg, &ferry_sm_socks, &peer, flags) !=
	    SK_PASS) {
		if (probe)
			return SK_DROP;
		goto tcp;
	}
	if (fl)
		__sync_fetch_and_add(&fl->redirects, 1);
	if (mode == FERRY_SM_APPLY_BYTES)
		bpf_msg_apply_bytes(msg, lag_max ? (__u32)(lag_max / 4)
						 : FERRY_SM_APPLY_MAX);
	return SK_PASS;
tcp:
	if (fl)
		fl->state = FERRY_SM_DIR_TCP;
	/* A TCP verdict lasts as long as a redirect would. */
	if (mode != FERRY_SM_PER_MESSAGE)
		bpf_msg_apply_bytes(msg, FERRY_SM_APPLY_MAX);
	return SK_PASS;
}

struct sock;

/* Every send() in the host passes here; ours are the ones with storage. */
SEC("tp_btf/sock_send_length")
int BPF_PROG(ferry_sm_sent, struct sock *sk, int ret, int flags)
{
	struct ferry_sm_flow *fl;
	struct ferry_sm_sk *st;

	if (ret <= 0)
		return 0;
	st = bpf_sk_storage_get(&ferry_sm_sks, sk, 0, 0);
	if (!st)
		return 0;
	st->bytes += ret;
	st->writes++;
	if (st->recv_since_send) {
		st->recv_since_send = 0;
		st->turns++;
	}
	if (st->writes - st->folded_writes >= fold_writes)
		fold(st);
	if (!st->redirected)
		return 0;
	fl = bpf_map_lookup_elem(&ferry_sm_flows, &st->key);
	if (!fl)
		return 0;
	/* The second lookup only while a detach is under way. */
	if (fl->state == FERRY_SM_DIR_TCP ||
	    (draining && bpf_map_lookup_elem(&ferry_sm_moved, &st->key)))
		__sync_fetch_and_add(&fl->bytes_tcp, ret);
	else
		__sync_fetch_and_add(&fl->bytes_redirected, ret);
	return 0;
}

/* A receive makes the socket's next send a turn. MSG_PEEK reads nothing. */
SEC("tp_btf/sock_recv_length")
int BPF_PROG(ferry_sm_recvd, struct sock *sk, int ret, int flags)
{
	struct ferry_sm_sk *st;

	if (ret <= 0 || (flags & FERRY_MSG_PEEK))
		return 0;
	st = bpf_sk_storage_get(&ferry_sm_sks, sk, 0, 0);
	if (!st)
		return 0;
	if (!st->recv_since_send)
		st->recv_since_send = 1;
	/* The lag guard's reads: into the direction this socket reads. */
	if (st->redirected && lag_max) {
		struct ferry_sock_key peer;
		struct ferry_sm_flow *fl;

		key_swap(&st->key, &peer);
		fl = bpf_map_lookup_elem(&ferry_sm_flows, &peer);
		if (fl)
			__sync_fetch_and_add(&fl->bytes_read, ret);
	}
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
