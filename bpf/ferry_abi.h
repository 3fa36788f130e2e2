/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ferry_abi.h - the one contract between ferry's BPF programs and userspace.
 *
 * Everything both sides must agree on lives here and nowhere else: map
 * sizes, map value layouts, the rule table, actions and verdict reasons.
 * Included by the BPF objects (compiled with clang -target bpf) and by the
 * daemon, the tools and the unit tests, so it uses only <linux/types.h>.
 */
#ifndef FERRY_ABI_H
#define FERRY_ABI_H

#include <linux/types.h>

/* XSKMAP size: one slot per RX queue of a port, keyed by rx_queue_index. */
#define FERRY_MAX_QUEUES 64
/*
 * A port's rule table: steering and ACL rules in one order, first match
 * wins. FERRY_MAX_RULES bounds the linear walk (bench/acl_cost.sh measures
 * what it costs per rule); steering rules, which each own a CPU set and a
 * row of per-CPU counters, are at most FERRY_MAX_STEER of them.
 */
#define FERRY_MAX_RULES 1024
#define FERRY_MAX_STEER 64
/* 802.1Q/802.1ad tags the parser walks before it calls a frame malformed. */
#define FERRY_MAX_VLAN 2
/* IPv6 extension headers the parser walks before it gives up on L4. */
#define FERRY_MAX_IP6_EXT 4

/* Program name the daemon looks for when it meets an attached program. */
#define FERRY_XDP_PROG_NAME "ferry_xdp"
/* Name of the config map; a foreign program does not have it. */
#define FERRY_CFG_MAP_NAME "ferry_cfg"

/*
 * What the classifier does with a frame. A rule carries one action and one
 * argument, so later actions (CPUMAP steering by CPU-set id, ACL drops) slot
 * in without changing the shape of the rule table. APP is an ACL's "pass":
 * the frame goes on as the port's app takes it (its default action), and
 * the rules after this one are not looked at.
 */
#define FERRY_ACTIONS(X)                                                       \
	X(PASS, "pass")                                                        \
	X(XSK, "xsk")                                                          \
	X(DROP, "drop")                                                        \
	X(CPU, "cpu")                                                          \
	X(APP, "app")

enum ferry_action {
#define FERRY_ACT_ENUM(id, name) FERRY_ACT_##id,
	FERRY_ACTIONS(FERRY_ACT_ENUM)
#undef FERRY_ACT_ENUM
		FERRY_ACT__COUNT
};

/*
 * Why a frame got its verdict. Every frame the classifier sees is counted
 * under exactly one reason, so the counters add up to the frames received.
 */
#define FERRY_REASONS(X)                                                       \
	X(XSK_REDIRECT, "xsk_redirect")                                        \
	X(PASS_ARP, "pass_arp")                                                \
	X(PASS_NDP, "pass_ndp")                                                \
	X(PASS_RULE, "pass_rule")                                              \
	X(PASS_NO_RULE, "pass_no_rule")                                        \
	X(PASS_NO_XSK, "pass_no_xsk")                                          \
	X(DROP_RULE, "drop_rule")                                              \
	X(CPU_REDIRECT, "cpu_redirect")                                        \
	X(DROP_NO_CPU, "drop_no_cpu")                                          \
	X(DEV_REDIRECT, "dev_redirect")                                        \
	X(DROP_NO_DEV, "drop_no_dev")                                          \
	X(DROP_TRUNC_ETH, "drop_trunc_eth")                                    \
	X(DROP_TRUNC_VLAN, "drop_trunc_vlan")                                  \
	X(DROP_VLAN_DEPTH, "drop_vlan_depth")                                  \
	X(DROP_TRUNC_IP4, "drop_trunc_ip4")                                    \
	X(DROP_BAD_IHL, "drop_bad_ihl")                                        \
	X(DROP_BAD_IP4_LEN, "drop_bad_ip4_len")                                \
	X(DROP_BAD_IP_VER, "drop_bad_ip_ver")                                  \
	X(DROP_TRUNC_IP6, "drop_trunc_ip6")                                    \
	X(DROP_BAD_IP6_LEN, "drop_bad_ip6_len")                                \
	X(DROP_IP6_EXT, "drop_ip6_ext")                                        \
	X(DROP_TRUNC_L4, "drop_trunc_l4")                                      \
	X(DROP_BAD_L4_LEN, "drop_bad_l4_len")                                  \
	X(PASS_LOCAL, "pass_local")                                            \
	X(PASS_LINK_LOCAL, "pass_link_local")                                  \
	X(PASS_NOT_IP, "pass_not_ip")

enum ferry_reason {
#define FERRY_REASON_ENUM(id, name) FERRY_R_##id,
	FERRY_REASONS(FERRY_REASON_ENUM)
#undef FERRY_REASON_ENUM
		FERRY_R__COUNT
};

/* The malformed-frame drops: FIRST..LAST (the passes of route ports
 * come after them, so that older reasons keep their numbers). */
#define FERRY_R_FIRST_MALFORMED FERRY_R_DROP_TRUNC_ETH
#define FERRY_R_LAST_MALFORMED	FERRY_R_DROP_BAD_L4_LEN
#define FERRY_R_IS_MALFORMED(r)                                                \
	((r) >= FERRY_R_FIRST_MALFORMED && (r) <= FERRY_R_LAST_MALFORMED)

/* Value of the per-CPU verdict counter array, indexed by enum ferry_reason. */
struct ferry_verdict_ctr {
	__u64 packets;
	__u64 bytes;
};

/*
 * Match fields of a rule; a zero field matches anything. Ports match only
 * TCP and UDP frames that carry them (not later fragments). l4_proto
 * IPPROTO_ICMP matches ICMP in IPv4 and ICMPv6 in IPv6.
 */
struct ferry_rule {
	__u8 family;	/* 0 any, 4 IPv4, 6 IPv6 */
	__u8 l4_proto;	/* 0 any, else IPPROTO_TCP/UDP/ICMP... */
	__u8 dst_plen;	/* prefix length of dst; 0 matches any */
	__u8 action;	/* enum ferry_action */
	__u16 dport_lo; /* host order; lo = hi = 0 matches any */
	__u16 dport_hi;
	__u32 arg;    /* action argument (CPU-set id for FERRY_ACT_CPU) */
	__u32 dst[4]; /* network order; IPv4 in dst[0] */
	__u8 src_plen;
	__u8 pad;
	__u16 ctr;	/* row of ferry_rule_ctrs; fixed for the rule's life */
	__u16 sport_lo; /* as dport */
	__u16 sport_hi;
	__u32 src[4];
};
#define FERRY_RULE_CTRS_MAP_NAME "ferry_rule_ctrs"

/*
 * The rule table in two generations. Userspace builds the whole table of
 * the generation not in use (rules, and for the bit-vector matcher its
 * per-field lookups), then flips ferry_cls.gen: a frame sees one whole
 * generation, never a table half rewritten. Rule i of generation g is
 * ferry_rules[g * FERRY_MAX_RULES + i].
 *
 * Matchers (bench/acl_cost.sh measures both against the rule count):
 * LINEAR walks the rules in order; BITVEC looks each field up once, each
 * lookup giving the bitmap of rules whose field matches (bit i: rule i),
 * ANDs the bitmaps and takes the lowest bit set: the first match, in a
 * cost that grows with the words of the bitmap (n/64), not with n.
 *   family+proto  ferry_bv_maps[proto_base + fam * 256 + l4_proto], fam
 *                 0 (not IP), 1 (IPv4), 2 (IPv6)
 *   sport, dport  elementary intervals (the rules' range ends cut the
 *                 port space into at most 2n + 1): a direct index, port
 *                 to interval k, in ferry_bv_ports (FERRY_BV_PORT_ROWS
 *                 rows of 32 ports per generation and field, row
 *                 (g * 2 + field) * FERRY_BV_PORT_ROWS + port / 32);
 *                 interval k's bitmap is at base + k; a frame without
 *                 ports (not TCP/UDP, a later fragment) takes
 *                 base + FERRY_BV_NOPORT. A binary search over the
 *                 interval starts would be smaller, but its 12 data-
 *                 dependent branches multiply the verifier's states.
 *   src, dst      LPM tries keyed (gen, field, address): the longest
 *                 stored prefix's bitmap holds every rule whose prefix
 *                 covers it, and the rules with no prefix (the /0 entry)
 * A non-IP frame takes the family+proto bitmap only: it matches just the
 * rules without IP fields.
 */
#define FERRY_CLS_MATCHERS(X)                                                  \
	X(LINEAR, "linear")                                                    \
	X(BITVEC, "bitvec")

enum ferry_cls_matcher {
#define FERRY_CLS_ENUM(id, name) FERRY_CLS_##id,
	FERRY_CLS_MATCHERS(FERRY_CLS_ENUM)
#undef FERRY_CLS_ENUM
		FERRY_CLS__COUNT
};

/* The linear matcher walks up to this many rules in an inline loop (the
 * verifier takes it), more through bpf_loop (a call per rule). */
#define FERRY_CLS_WALK_INLINE 32

#define FERRY_BV_WORDS (FERRY_MAX_RULES / 64)
/* At most 2n + 1 intervals; bitmap base + FERRY_BV_NOPORT: no ports. */
#define FERRY_BV_NOPORT	   (2 * FERRY_MAX_RULES + 1)
#define FERRY_BV_PORT_ROWS (65536 / 32)
#define FERRY_BV_PER_GEN                                                       \
	(3 * 256 + 2 * (FERRY_BV_NOPORT + 1) + 4 * (FERRY_MAX_RULES + 1))
#define FERRY_BV_TRIE_MAX (2 * 2 * (FERRY_MAX_RULES + 1))

struct ferry_bv {
	__u64 w[FERRY_BV_WORDS];
};

/* The one entry of ferry_cls: the generation frames use. */
struct ferry_cls {
	__u32 gen;
	__u32 pad;
};

/* Per generation (ferry_cls_gens[g]). */
struct ferry_cls_gen {
	__u32 n_rules;
	__u32 matcher; /* enum ferry_cls_matcher */
	__u32 n_words; /* BITVEC: words of the bitmaps in use */
	__u32 proto_base;
	__u32 port_base[2]; /* 0 sport, 1 dport */
	__u32 pad;
};

struct ferry_bv_ports {
	__u16 ivl[32]; /* ports row * 32 + i: interval ivl[i] */
};

/* LPM keys: prefixlen counts the two leading bytes (16 bits) too. */
struct ferry_bv_key4 {
	__u32 prefixlen;
	__u8 gen;
	__u8 field; /* 0 src, 1 dst */
	__u8 addr[4];
};

struct ferry_bv_key6 {
	__u32 prefixlen;
	__u8 gen;
	__u8 field;
	__u8 addr[16];
};

/*
 * Software RSS ("spread"): a port with fewer RX queues than workers gets one
 * AF_XDP socket per worker, all bound to the same queue and sharing its
 * buffer pool, and the classifier picks the socket by flow hash: XSKMAP key
 * i is socket i. DIRECT redirects there from the RX queue's NAPI, which
 * works only for frames that arrive on the sockets' queue; CPUMAP goes
 * through the CPU of socket i first, where the kernel rebuilds every frame
 * as one of queue 0 (so the sockets must be bound to queue 0).
 */
#define FERRY_SPREAD_MAX 16
#define FERRY_SPREAD_VIAS(X)                                                   \
	X(OFF, "off")                                                          \
	X(DIRECT, "direct")                                                    \
	X(CPUMAP, "cpumap")

enum ferry_spread_via {
#define FERRY_SPREAD_VIA_ENUM(id, name) FERRY_SPREAD_##id,
	FERRY_SPREAD_VIAS(FERRY_SPREAD_VIA_ENUM)
#undef FERRY_SPREAD_VIA_ENUM
		FERRY_SPREAD__COUNT
};

/*
 * Per spread socket, per CPU: steered on the RX CPU (the classifier chose
 * this socket), handed on by the CPUMAP program on the socket's CPU (via
 * CPUMAP only), or refused by the redirect helper (no XSKMAP entry).
 */
struct ferry_spread_ctr {
	__u64 steered;
	__u64 handed;
	__u64 failed;
};

/* The socket index travels to the CPUMAP program in the metadata area. */
#define FERRY_SPREAD_META_TAG 0xfe5a0000u

/* Per-program settings, one entry in FERRY_CFG_MAP_NAME, changed at run time. */
struct ferry_xdp_cfg {
	__u32 n_rules;	     /* rules[0..n_rules) are live */
	__u8 default_action; /* enum ferry_action when no rule matched */
	__u8 pass_arp_ndp;   /* 1: ARP and IPv6 NDP go to the kernel first */
	/* FERRY_KFWD_DEV: xsk-bound frames go to ferry_tx_dev[0] instead;
	 * FERRY_KFWD_FIB: to the egress bpf_fib_lookup finds (route) */
	__u8 kernel_fwd;
	/* 1 (route ports): frames for the host's own addresses (ferry_local)
	 * and link-local / multicast destinations go to the kernel */
	__u8 route_host;
	__u32 owner_pid; /* ferryd that attached it; stale if it is gone */
	__u8 spread_n;	 /* software RSS: sockets spread_key 0..n-1; 0: off */
	__u8 spread_via; /* enum ferry_spread_via */
	__u16 spread_queue;		   /* the one queue they are bound to */
	__u8 spread_cpu[FERRY_SPREAD_MAX]; /* via CPUMAP: CPU of socket i */
};

/*
 * The in-kernel path of xconnect ("path kernel"): with cfg.kernel_fwd set,
 * frames the classifier would hand to the port's AF_XDP socket go to the
 * egress device in slot 0 of its DEVMAP (ferry_tx_dev) instead, and no
 * worker sees them. They are counted under dev_redirect (or drop_no_dev
 * when the slot is empty); what the kernel then fails to send is counted
 * per port from two tracepoints, by reason, in ferry_kfwd_ctrs (one entry,
 * per-CPU copies), so rx = tx + the failures below.
 */
#define FERRY_DEV_SLOTS 1
#define FERRY_KFWD_CTRS(X)                                                       \
	X(xmit_sent)  /* handed to the egress driver (xdp_devmap_xmit) */        \
	X(xmit_drops) /* refused by it: full queue, no NAPI on a veth peer */    \
	X(xmit_no_napi) /* of xmit_drops: the veth peer has no XDP and no GRO */ \
	X(err_down)	/* xdp_redirect_err: egress down (ENETDOWN) */           \
	X(err_too_big) /* xdp_redirect_err: frame over its MTU (EMSGSIZE) */     \
	X(err_other)   /* xdp_redirect_err: any other error */

struct ferry_kfwd_ctr {
#define FERRY_KFWD_FIELD(id) __u64 id;
	FERRY_KFWD_CTRS(FERRY_KFWD_FIELD)
#undef FERRY_KFWD_FIELD
};

/*
 * The route app's in-kernel path (bpf/ferry_fib.bpf.h): with cfg.kernel_fwd set
 * to FERRY_KFWD_FIB, an IP frame the classifier would hand to a route
 * port's socket is looked up with bpf_fib_lookup instead, rewritten (TTL /
 * hop limit, IPv4 checksum, MACs) and redirected into its egress through
 * ferry_fib_dev (a DEVMAP_HASH keyed by ifindex), counted under
 * dev_redirect like xconnect's; whatever needs a worker goes to the socket
 * as before, counted here by why. The egress must be in ferry_fib_egress
 * (ifindex -> slot): a route port on the kernel path. Per slot, per CPU,
 * ferry_fib_tx counts what went to that egress, and what its driver took.
 */
#define FERRY_KFWD_DEV	     1 /* kernel_fwd: xconnect, ferry_tx_dev[0] */
#define FERRY_KFWD_FIB	     2 /* kernel_fwd: route, bpf_fib_lookup */
#define FERRY_FIB_EGRESS_MAX 64
/* The lookup's ingress: the loopback device, whose forwarding knob is the
 * one bpf_fib_lookup checks (docs/design.md, "route: the kernel path"). */
#define FERRY_FIB_LOOKUP_IFINDEX 1
#define FERRY_FIB_CTRS(X)                                                      \
	X(fwd)		/* rewritten and redirected to the egress */           \
	X(ttl)		/* TTL / hop limit <= 1: time exceeded by a worker */  \
	X(vlan)		/* 802.1Q / 802.1ad tagged: the worker pops/pushes */  \
	X(not_plain)	/* IP options, bad IPv4 csum, multi-buffer */          \
	X(no_neigh)	/* no neighbour: a worker asks for resolution */       \
	X(frag_needed)	/* over the egress MTU: the ICMP error by a worker */  \
	X(fwd_disabled) /* lo's forwarding is off (FWD_DISABLED) */            \
	X(no_route)	/* no route, blackhole, unreachable, local, ... */     \
	X(egress_not_kernel) /* egress not a route port on the kernel path */

struct ferry_fib_ctr {
#define FERRY_FIB_FIELD(id) __u64 id;
	FERRY_FIB_CTRS(FERRY_FIB_FIELD)
#undef FERRY_FIB_FIELD
};

/* Per egress slot: redirected there (XDP) and taken by its driver
 * (xdp_devmap_xmit). */
struct ferry_fib_tx_ctr {
	__u64 packets;
	__u64 bytes;
	__u64 sent;
};

/* The host's addresses, for route ports (route_host): the key of the
 * ferry_local map, filled by the daemon from the kernel's addresses. */
#define FERRY_LOCAL_MAX 1024
struct ferry_local_key {
	__u32 family;  /* 4 or 6 */
	__u32 addr[4]; /* network order; IPv4 in [0], the rest 0 */
};

/* Parse result, filled by ferry_parse() (bpf/ferry_parse.h). */
struct ferry_pkt {
	__u16 ethertype; /* host order, after any VLAN tags */
	__u8 n_vlan;
	__u8 family;		    /* 0 (not IP), 4, 6 */
	__u16 vlan[FERRY_MAX_VLAN]; /* VIDs, host order */
	__u8 l4_proto;		    /* 0 when not IP or L4 not reached */
	__u8 is_frag;		    /* non-first fragment: no L4 ports */
	__u16 l3_off;
	__u16 l4_off;
	__u16 sport;  /* host order */
	__u16 dport;  /* host order */
	__u32 src[4]; /* network order; IPv4 in [0] */
	__u32 dst[4];
	__u16 l4_len;	 /* L4 bytes per the IP header(s), when family != 0 */
	__u8 more_frags; /* a fragment, not the last: L4 length unknown */
	__u8 pad;
};

/*
 * CPU steering. A FERRY_ACT_CPU rule's arg is its steering slot: the index
 * of its CPU set in ferry_cpusets and of its row of counters. A slot stays
 * with its rule while other rules come and go (the rule's position in the
 * table may change, its slot does not), so its counters never move.
 */
#define FERRY_MAX_CPUS 64
/* CPUMAP queue sizes ferry accepts; the kernel takes 1..16384. */
#define FERRY_CPUMAP_QSIZE_MIN	   1
#define FERRY_CPUMAP_QSIZE_MAX	   16384
#define FERRY_CPUMAP_QSIZE_DEFAULT 2048
/* Map names, for tools that look at a running classifier. */
#define FERRY_CPUSETS_MAP_NAME	  "ferry_cpusets"
#define FERRY_STEER_CTRS_MAP_NAME "ferry_steer_ctrs"

/* The CPUs a steering rule spreads flows over, in ascending order. */
struct ferry_cpuset {
	__u32 n; /* cpu[0..n) are live; 0: the rule drops (drop_no_cpu) */
	__u32 cpu[FERRY_MAX_CPUS];
};

/*
 * Per-CPU counters of one (slot, target CPU) pair, index
 * FERRY_STEER_CTR_IDX(slot, cpu). steered and enqueue_failed are written on
 * the RX CPU by the classifier, processed on the target CPU by the CPUMAP
 * program; userspace sums the per-CPU copies.
 */
struct ferry_steer_ctr {
	__u64 steered; /* redirected into the target CPU's CPUMAP entry */
	__u64 enqueue_failed; /* the redirect helper refused (no entry) */
	__u64 processed;      /* reached the CPUMAP program on the target CPU */
};
#define FERRY_STEER_CTR_IDX(slot, cpu) ((slot)*FERRY_MAX_CPUS + (cpu))
#define FERRY_STEER_N_CTRS	       (FERRY_MAX_STEER * FERRY_MAX_CPUS)

/*
 * What the xdp_cpumap_enqueue tracepoint reports for a port's CPUMAP, per
 * target CPU (index: the target CPU; per-CPU copies: the enqueuing CPU).
 * The tracepoint does not know the rule, so drops are per (port, CPU).
 */
struct ferry_cpumap_ctr {
	__u64 offered; /* frames flushed towards the queue, drops included */
	__u64 drops;   /* frames the full queue refused, freed by the kernel */
};

/*
 * The classifier hands the rule's slot to the CPUMAP program in the XDP
 * metadata area, tagged so a frame without it is told apart.
 */
#define FERRY_STEER_META_TAG  0xfe570000u
#define FERRY_STEER_META_MASK 0xffff0000u

/* Generator program (bpf/ferry_gen.bpf.c) counters, one per-CPU entry. */
/* Bytes of header (Ethernet + IPv4 + UDP) it rewrites on every frame; with
 * an 802.1Q tag, 4 more (FERRY_GEN_HDR_MAX). */
#define FERRY_GEN_HDR_LEN 42
#define FERRY_GEN_HDR_MAX 46
struct ferry_gen_ctr {
	__u64 frames;
	__u64 bytes;
};

/*
 * Splice proxy (bpf/ferry_proxy.bpf.c, dataplane/local/proxy.c). Flow slot i owns
 * keys 2i (client socket) and 2i+1 (backend socket) of the sockmap, and
 * entry i of the counter and control arrays. Direction 0 is client ->
 * backend (bytes the client socket received, sent out of the backend
 * socket), 1 the reverse; a socket's direction is what it receives.
 */
#define FERRY_PROXY_MAX_FLOWS 1024
#define FERRY_PROXY_N_KEYS    (2 * FERRY_PROXY_MAX_FLOWS)

/* Value of ferry_proxy_socks, keyed by the socket's cookie (SO_COOKIE). */
struct ferry_proxy_sock {
	__u32 peer_key; /* the other socket's key in the sockmap */
	__u32 slot;	/* flow slot: counters index */
	__u32 dir;	/* what this socket receives: 0 client, 1 backend */
	__u32 reserved;
};

/*
 * Per-direction counters of one flow slot, written by the verdict program
 * only (one writer per direction: the receiving socket's verdict runs are
 * serialized by its lock).
 */
#define FERRY_PROXY_CTRS(X)                                                    \
	X(bytes, "bytes") /* redirected to the peer's egress */                \
	X(skbs, "skbs")	  /* skbs redirected */                                \
	X(held, "held")	  /* bytes kept on the socket (over the limit) */      \
	X(held_skbs, "held_skbs")                                              \
	X(holds, "holds") /* times forwarding switched to holding */           \
	X(redirect_failed, "redirect_failed") /* peer not in map: held */      \
	X(fin, "fin") /* zero-length (FIN) skbs, dropped */

struct ferry_proxy_dir_ctr {
#define FERRY_PROXY_CTR_FIELD(id, name) __u64 id;
	FERRY_PROXY_CTRS(FERRY_PROXY_CTR_FIELD)
#undef FERRY_PROXY_CTR_FIELD
};

struct ferry_proxy_ctr {
	struct ferry_proxy_dir_ctr dir[2];
};

/*
 * Written by userspace, read by the verdict: the memory bound. Bytes of a
 * direction between the two TCP stacks are
 *   pending = bytes + copied - acked
 * (the peer's psock queue plus its write queue). An skb that would take
 * pending over limit is held: passed to the receiving socket itself, where
 * it is charged to that socket's receive buffer, so TCP closes the
 * sender's window. Userspace copies held bytes on in order (copied) and
 * forwarding resumes only once nothing held is left (held == copied).
 * acked is a snapshot: a stale one overstates pending, never understates.
 */
struct ferry_proxy_ctl {
	__u64 limit;
	__u64 acked[2];	 /* bytes_acked of the socket sending direction d */
	__u64 copied[2]; /* held bytes of direction d userspace wrote on */
};

/*
 * Skbs of a socket the verdict program does not know (a flow being torn
 * down): passed to the socket itself, never dropped. One entry.
 */
struct ferry_proxy_misc {
	__u64 unknown;
};

/*
 * Local flow acceleration (bpf/ferry_sockmap.bpf.c). A sockops program adds
 * established TCP sockets whose both ends are on this host to a SOCKHASH,
 * keyed by their 4-tuple as seen from the socket; an sk_msg program
 * redirects each send to the peer's ingress, found under the swapped tuple.
 */
#define FERRY_SM_MAX_SOCKS  65536
#define FERRY_SM_MAX_FLOWS  65536 /* directions; LRU: closed ones age out */
#define FERRY_SM_MAX_RANGES 16	  /* port ranges of `ports LIST` */
/* The largest apply_bytes window: the verdict runs once per 4 GiB - 1. */
#define FERRY_SM_APPLY_MAX 0xffffffffu
/* Flag bit 1 of the redirect helpers, from the unmerged permanent-redirect
 * patch; stock kernels answer SK_DROP. */
#define FERRY_SM_F_PERMANENT (1ull << 1)

/* How a flow's verdict is made to last. */
#define FERRY_SM_MODES(X)                                                      \
	X(PERMANENT, "permanent")     /* BPF_F_PERMANENT: once per flow */     \
	X(APPLY_BYTES, "apply-bytes") /* apply_bytes max: once per 4 GiB */    \
	X(PER_MESSAGE, "per-message") /* diagnostic: once per send() */

enum ferry_sm_mode {
#define FERRY_SM_MODE_ENUM(id, name) FERRY_SM_##id,
	FERRY_SM_MODES(FERRY_SM_MODE_ENUM)
#undef FERRY_SM_MODE_ENUM
		FERRY_SM__MODES
};

/*
 * A socket's 4-tuple from its own side; IPv4 in ip[0], network order. The
 * network namespace is part of it: two namespaces may each have a
 * 127.0.0.1:5000 <-> 127.0.0.1:40000 connection, and a redirect must never
 * cross from one to the other.
 */
struct ferry_sock_key {
	__u64 netns; /* bpf_get_netns_cookie(), SO_NETNS_COOKIE */
	__u32 local_ip[4];
	__u32 remote_ip[4];
	__u16 local_port;  /* host order */
	__u16 remote_port; /* host order */
	__u8 family;	   /* 4 or 6 */
	__u8 pad[3];
};

/* Why a flow direction is not (or no longer) redirected. */
#define FERRY_SM_DIR_REDIRECT 0 /* sends go to the peer's ingress */
#define FERRY_SM_DIR_TCP      1 /* sticky: plain TCP from now on */

/*
 * One direction of a connection, keyed by the sending socket's tuple.
 * Written by the sk_msg verdict (verdict_runs, redirects, state) and by
 * the sock_send_length tracepoint (bytes, counted per send() as it
 * returns: the verdict itself sees only the first message of its window).
 */
struct ferry_sm_flow {
	__u64 verdict_runs;
	__u64 redirects;	/* runs that redirected to the peer */
	__u64 bytes_redirected; /* sent while the direction redirected */
	__u64 bytes_tcp;	/* sent over plain TCP (peer unknown, detach) */
	/* what the peer has read of this direction, by either path
	 * (sock_recv_length on the peer): bytes_redirected - bytes_read is
	 * what waits in the peer's ingress queue */
	__u64 bytes_read;
	__u32 state;  /* FERRY_SM_DIR_* */
	__u32 closed; /* the socket reached TCP_CLOSE */
	__u32 lagged; /* moved to TCP: the peer fell lag_max behind */
	__u32 pad;
};

/*
 * The lag guard. An ingress redirect has no backpressure: the kernel
 * queues each send on the peer's psock whatever the peer has read, so a
 * writer faster than its reader queues until the host's TCP memory runs
 * out (measured: a 64 KiB-write stream with writer and reader on one CPU
 * queued about 2.4 GB, then its send() failed with ENOMEM). So the verdict
 * re-runs every lag_max / 4 bytes (apply_bytes), and a direction whose
 * peer has more than lag_max unread moves to plain TCP for good, where
 * the peer's receive window holds the writer back. Bytes stay in order:
 * the peer reads its ingress queue before its TCP queue, and nothing is
 * queued there again. 0 turns it off (one verdict per 4 GiB).
 */
#define FERRY_SM_LAG_MAX_DEFAULT (16u << 20)
#define FERRY_SM_LAG_MAX_MIN	 (256u << 10)
#define FERRY_SM_LAG_MAX_MAX	 (1u << 30)

/*
 * Services: what a new connection of a server address and port gets. A
 * redirect is decided once per connection, at ESTABLISHED, and kept for its
 * life (plain TCP and redirected bytes can't be mixed in one connection
 * without reordering them). A service's learned decision comes from the
 * shape of its traffic measured on every connection of it, plain or
 * redirected (bpf/ferry_sockmap.bpf.c has the rule); a policy pins it.
 */
#define FERRY_SM_MAX_SERVICES 4096 /* LRU: idle services age out */
#define FERRY_SM_MAX_POLICIES 64

#define FERRY_SM_DECISIONS(X)                                                  \
	X(LEARN, "learn") /* measure on plain TCP, decide from evidence */     \
	X(PLAIN, "plain") /* new connections stay plain TCP */                 \
	X(REDIRECT, "redirect") /* new connections are redirected */

enum ferry_sm_decision {
#define FERRY_SM_DECISION_ENUM(id, name) FERRY_SM_D_##id,
	FERRY_SM_DECISIONS(FERRY_SM_DECISION_ENUM)
#undef FERRY_SM_DECISION_ENUM
		FERRY_SM__DECISIONS
};

/* Why a service's decision is what it is. */
#define FERRY_SM_REASONS(X)                                                    \
	X(LEARNING, "learning")		/* too few measured sockets yet */     \
	X(REQ_RESP, "req-resp")		/* few bytes per direction change */   \
	X(LARGE_WRITES, "large-writes") /* mean write >= the threshold */      \
	X(SMALL_STREAM, "small-stream") /* neither: plain TCP wins */          \
	X(POLICY, "policy")		/* pinned by `sockmap policy` */       \
	X(DEFAULT, "default")		/* attach's `default`, no learning */

enum ferry_sm_reason {
#define FERRY_SM_REASON_ENUM(id, name) FERRY_SM_R_##id,
	FERRY_SM_REASONS(FERRY_SM_REASON_ENUM)
#undef FERRY_SM_REASON_ENUM
		FERRY_SM__REASONS
};

/*
 * A service: the server's side of its connections (the passive socket's
 * local address and port), in its network namespace. The server socket's
 * cgroup is part of it only where a policy names that cgroup for the
 * address and port (`sockmap policy add dst SERVICE DECISION cgroup PATH`):
 * such a service learns and counts apart from the same port in other
 * cgroups. Every other service has cgroup 0, as before cgroups were known.
 */
struct ferry_sm_svc_key {
	__u64 netns;
	__u64 cgroup;  /* cgroup v2 id (its directory's inode) or 0 */
	__u32 addr[4]; /* IPv4 in addr[0], network order */
	__u16 port;    /* host order */
	__u8 family;   /* 4 or 6 */
	__u8 pad[5];
};

/* A policy row: family 0 matches every address of the port; cgroup 0
 * every cgroup (a row with a cgroup wins over one without). */
struct ferry_sm_policy_key {
	__u64 cgroup;
	__u32 addr[4];
	__u16 port;
	__u8 family;
	__u8 pad[5];
};

/*
 * A connection's decision, left by its first end under its other end's
 * key (ferry_sm_pending), with the cgroup of the service it was decided
 * for, so that both ends fold into the same service.
 */
struct ferry_sm_pend {
	__u32 decision; /* enum ferry_sm_decision */
	__u32 pad;
	__u64 cgroup;
};

/*
 * A service's counters, monotonic, folded in from each socket of it (by
 * whether the socket was redirected) every FOLD writes and when it closes;
 * a "turn" is a send() after the socket has received bytes, i.e. a change
 * of the direction data flows in. ev_* is the evidence the decision is
 * made from: the same sums, halved whenever ev_writes passes a cap, so that
 * the decision follows what the service does now.
 */
#define FERRY_SM_SVC_COUNTERS(X)                                               \
	X(conns)	    /* connections established (once, not per end) */  \
	X(conns_redirected) /* of which put in the SOCKHASH */                 \
	X(samples)	/* sockets measured (the first fold with writes) */    \
	X(bytes_plain)	/* sent on plain connections */                        \
	X(writes_plain) /* send() calls that sent bytes, plain */              \
	X(turns_plain)	/* direction changes, plain */                         \
	X(bytes_redirected) /* sent on redirected connections */               \
	X(writes_redirected)                                                   \
	X(turns_redirected)                                                    \
	X(ev_bytes)                                                            \
	X(ev_writes)                                                           \
	X(ev_turns)                                                            \
	X(decision_changes) /* the learned decision moved */

struct ferry_sm_svc {
#define FERRY_SM_SVC_FIELD(name) __u64 name;
	FERRY_SM_SVC_COUNTERS(FERRY_SM_SVC_FIELD)
#undef FERRY_SM_SVC_FIELD
	__u32 decision; /* learned: enum ferry_sm_decision */
	__u32 reason;	/* enum ferry_sm_reason */
};

/* What a service's evidence says its traffic is. */
#define FERRY_SM_SHAPES(X)                                                     \
	X(NONE, "none")		/* nothing measured yet */                     \
	X(REQ_RESP, "req-resp") /* both ends send, a few bytes per turn */     \
	X(STREAM, "stream")	/* one-way, or many bytes per turn */

enum ferry_sm_shape {
#define FERRY_SM_SHAPE_ENUM(id, name) FERRY_SM_SHAPE_##id,
	FERRY_SM_SHAPES(FERRY_SM_SHAPE_ENUM)
#undef FERRY_SM_SHAPE_ENUM
		FERRY_SM__SHAPES
};

/*
 * The learning rule's thresholds: load-time knobs of the sockops program
 * (rodata), read back by userspace to show the shape it sees.
 */
struct ferry_sm_rule {
	__u64 learn_samples;	     /* sockets measured before deciding */
	__u64 rr_max_bytes_per_turn; /* request/response: at most this */
	__u64 min_mean_write;	     /* large writes: at least this */
};

/*
 * Its defaults (attach's `warmup`, `rr-max`, `min-write` change them):
 * docs/performance.md has the measurements they come from. Streams stay
 * plain by default (min-write at its maximum, 1 GiB, which no mean write
 * reaches): a redirected 16-64 KiB-write stream led plain TCP 1.2-2.2x in
 * one run and trailed it 0.5-0.8x in a later, quieter one on the same
 * kind of host; request/response led in every run. `min-write 16384`
 * redirects large-write streams where the bench shows them winning.
 */
#define FERRY_SM_MIN_WRITE_OFF (1ull << 30)
#define FERRY_SM_RULE_DEFAULT                                                  \
	{                                                                      \
		.learn_samples = 4, .rr_max_bytes_per_turn = 16384,            \
		.min_mean_write = FERRY_SM_MIN_WRITE_OFF,                      \
	}
/* Their bounds: ev_turns <= ev_writes < 2^17 (the evidence halves past
 * 2^16 writes), so the rule's products stay below 2^47. */
#define FERRY_SM_LEARN_SAMPLES_MAX 1000000
#define FERRY_SM_RULE_BYTES_MAX	   (1ull << 30)

/*
 * The learning rule, a pure function of a service's evidence, so that the
 * sockops program, `sockmap show` and the unit tests (test_sockmap.c) use
 * the same one. Request/response: ev_bytes <= ev_turns * per-turn max
 * (every turn saves a trip through TCP). Products, not divisions: the BPF
 * side has no cheap 64-bit divide, and with the thresholds' bounds above
 * they cannot overflow.
 */
static inline __attribute__((always_inline)) __u32
ferry_sm_shape_of(const struct ferry_sm_svc *s, const struct ferry_sm_rule *r)
{
	if (!s->ev_writes)
		return FERRY_SM_SHAPE_NONE;
	if (s->ev_turns &&
	    s->ev_bytes <= s->ev_turns * r->rr_max_bytes_per_turn)
		return FERRY_SM_SHAPE_REQ_RESP;
	return FERRY_SM_SHAPE_STREAM;
}

/*
 * The decision the evidence gives (enum ferry_sm_decision), reason in
 * *reason: learning until learn_samples sockets were measured; then
 * redirect for request/response or large writes, plain for a stream of
 * smaller writes (an ingress redirect makes one sk_msg and one wake-up per
 * send(), slower than TCP's coalescing).
 */
static inline __attribute__((always_inline)) __u32
ferry_sm_learned(const struct ferry_sm_svc *s, const struct ferry_sm_rule *r,
		 __u32 *reason)
{
	if (s->samples < r->learn_samples || !s->ev_writes) {
		*reason = FERRY_SM_R_LEARNING;
		return FERRY_SM_D_LEARN;
	}
	if (ferry_sm_shape_of(s, r) == FERRY_SM_SHAPE_REQ_RESP) {
		*reason = FERRY_SM_R_REQ_RESP;
		return FERRY_SM_D_REDIRECT;
	}
	if (s->ev_bytes >= s->ev_writes * r->min_mean_write) {
		*reason = FERRY_SM_R_LARGE_WRITES;
		return FERRY_SM_D_REDIRECT;
	}
	*reason = FERRY_SM_R_SMALL_STREAM;
	return FERRY_SM_D_PLAIN;
}

/*
 * Per-socket storage: the key its flow entry is under, its service, and
 * what it has sent since it was established (single writer: the socket's
 * sender; the receive tracepoint only sets recv_since_send).
 */
struct ferry_sm_sk {
	struct ferry_sock_key key;
	struct ferry_sm_svc_key svc;
	__u64 bytes, writes, turns;			 /* since ESTABLISHED */
	__u64 folded_bytes, folded_writes, folded_turns; /* into svc */
	__u8 redirected;				 /* in the SOCKHASH */
	__u8 recv_since_send; /* the next send is a turn */
	__u8 sampled;	      /* counted in svc.samples */
	__u8 pad[5];
};

/* One range of `ports LIST`, host order, inclusive. */
struct ferry_sm_port_range {
	__u16 lo;
	__u16 hi;
};

#endif /* FERRY_ABI_H */
