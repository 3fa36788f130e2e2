/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * route.h - what the route app does to one frame, as a pure function: no
 * I/O, no allocation, no locks. Given an Ethernet frame received on a
 * routed port, the FIB and the ports' addresses, route_frame() decides:
 *
 *   FWD    TTL / hop limit taken down by one (IPv4 checksum updated by RFC
 *          1624), MACs rewritten in place: send it out of res->port.
 *   HOST   for the kernel: the host's own addresses (the FIB's LOCAL next
 *          hops), ARP, NDP, IPv6 link-local, multicast, hop-by-hop options,
 *          anything not IP.
 *   REPLY  an ICMP / ICMPv6 error (time exceeded, destination unreachable,
 *          fragmentation needed / packet too big) was written to the
 *          caller's second buffer, from the ingress port's address, to go
 *          back out of the ingress port; the frame itself is dropped.
 *   DROP   the frame is dropped (malformed, blackhole, no neighbour yet,
 *          an ICMP error that must not be sent, ...).
 *
 * VLANs and VRFs. An 802.1Q-tagged frame is routed as received on the
 * VLAN sub-interface (port, VID) of route_ctx.vlans: its addresses,
 * MTU and FIB table are that interface's, an ICMP error goes back with the
 * tag. A next hop's port is a route interface (route_if()): a ferry port,
 * or ROUTE_VLAN_BASE + a VLAN slot, which sends out of its parent port
 * (route_result.port) with its tag. The tag is popped, pushed or
 * rewritten in the frame itself (route_l2_retag()): a push moves the
 * frame 4 bytes to the front, into the caller's headroom, so the 4 bytes
 * before frame must be writable. Each interface's lookups go to its FIB
 * table (struct route_port.table: 0 main, else its VRF's). 802.1ad (and
 * stacked) tags are dropped, counted as vlan_qinq.
 *
 * Every frame is counted once, by reason (ROUTE_REASONS). A next hop
 * without a neighbour leaves in res what to resolve: the control thread
 * asks the kernel (nlmirror_resolve()), the frame is not queued.
 *
 * The worker calls it per frame of a batch, between fib_quiescent() calls;
 * the counters are the worker's own (single writer).
 */
#ifndef FERRY_ROUTE_H
#define FERRY_ROUTE_H

#include <stddef.h>
#include <stdint.h>

#include "fib.h"

/* Frames, one reason each. */
#define ROUTE_REASONS(X)                                                       \
	X(routed)	/* forwarded to the next hop */                        \
	X(local)	/* to one of the host's addresses: to the kernel */    \
	X(arp)		/* ARP: to the kernel */                               \
	X(ndp)		/* IPv6 neighbour discovery: to the kernel */          \
	X(link_local)	/* IPv6 link-local source or destination */            \
	X(multicast)	/* multicast or broadcast destination */               \
	X(hop_by_hop)	/* IPv6 hop-by-hop options: to the kernel */           \
	X(not_ip)	/* neither IPv4, IPv6 nor ARP: to the kernel */        \
	X(ttl_exceeded) /* TTL / hop limit would reach 0 */                    \
	X(no_route)	/* no FIB entry: destination unreachable */            \
	X(blackhole)	/* the route says drop */                              \
	X(frag_needed)	/* IPv4 with DF over the egress MTU */                 \
	X(no_fragment)	/* IPv4 without DF over the MTU: not fragmented */     \
	X(pkt_too_big)	/* IPv6 over the egress MTU */                         \
	X(no_neigh)	/* next hop without a neighbour: resolution asked */   \
	X(egress_not_routed) /* next hop's port is not a routed port */        \
	X(vlan_unknown)	     /* 802.1Q VID with no sub-interface followed */   \
	X(vlan_qinq)	     /* 802.1ad outer tag or stacked tags: dropped */  \
	X(malformed)	     /* truncated, bad version/length/checksum */

/* Events beside the frame's reason. */
#define ROUTE_EVENTS(X)                                                        \
	X(icmp_sent)	   /* an ICMP error was built */                       \
	X(icmp_suppressed) /* one was due, not allowed (RFC 1812 4.3.2.7) */   \
	X(routed_chain)	   /* routed and sent as a multi-buffer chain */

enum route_reason {
#define X(n) ROUTE_R_##n,
	ROUTE_REASONS(X) ROUTE_EVENTS(X)
#undef X
		ROUTE_R__COUNT
};

extern const char *const route_reason_names[ROUTE_R__COUNT];

struct route_counters {
	uint64_t n[ROUTE_R__COUNT];
};

enum route_verdict {
	ROUTE_FWD,
	ROUTE_HOST,
	ROUTE_REPLY,
	ROUTE_DROP,
};

/*
 * Route interfaces: a next hop's port field. Below ROUTE_VLAN_BASE the
 * ferry port of that index, from ROUTE_VLAN_BASE the VLAN sub-interface
 * of slot (port - ROUTE_VLAN_BASE); both below FIB_PORT_NONE.
 */
#define ROUTE_VLAN_BASE 1024u
#define ROUTE_VLAN_MAX	128u
#define ROUTE_VLAN_HASH 512u /* (port, VID) -> slot, open addressing */
_Static_assert(ROUTE_VLAN_BASE + ROUTE_VLAN_MAX < FIB_PORT_NONE,
	       "route interfaces must fit a next hop's port field");
_Static_assert((ROUTE_VLAN_HASH & (ROUTE_VLAN_HASH - 1)) == 0 &&
		       ROUTE_VLAN_HASH >= 2 * ROUTE_VLAN_MAX,
	       "the VLAN map is a power of two, at most half full");

/* Member ports a bond's route interface sends out of, at most. */
#define ROUTE_BOND_MAX 8u

/* What route_frame needs of each route interface: a ferry port (index =
 * port index) or a VLAN sub-interface or bond (index = its slot).
 *
 * A bond (or a VLAN on one) sends out of its members: members[0..n_up)
 * are the ones the kernel's bond lets carry traffic (link up, not a
 * backup), the flow hash picks one, so a flow keeps its member; the rest
 * of members[0..n_members) only receive (their tagged frames are found).
 * With no member up it sends out of phys, a member whose link is down:
 * the frame is dropped as port_down. A ferry port that is a member is
 * the bond as far as its frames in are concerned (the bond's addresses,
 * MAC, MTU and table), with n_members 0. */
struct route_port {
	uint8_t mac[6];
	uint8_t routed;	 /* the port's app is route (a VLAN: its parent's) */
	uint8_t table;	 /* FIB table of lookups for frames in on it */
	uint16_t mtu;	 /* L3 MTU: largest IP packet it sends */
	uint16_t phys;	 /* the ferry port it sends out of */
	uint16_t vid;	 /* 802.1Q VID pushed on egress; 0: untagged */
	uint32_t ip4;	 /* source of ICMP errors (host order); 0: none */
	uint8_t ip6[16]; /* source of ICMPv6 errors; all zero: none */
	uint8_t has_ip6;
	uint8_t n_members; /* a bond's member ports; 0: not a bond */
	uint8_t n_up;	   /* members[0..n_up) carry traffic out */
	uint16_t members[ROUTE_BOND_MAX];
	uint8_t pad_[8]; /* 64 bytes: an index is a shift (4 instructions a
			  * frame fewer than 56, bench/route_cost.sh) */
};
_Static_assert(sizeof(struct route_port) == 64, "route_port is 64 bytes");

/* (ferry port, VID) -> VLAN slot: entries ROUTE_VMAP_E(), 0 empty. */
struct route_vlan_map {
	uint32_t e[ROUTE_VLAN_HASH];
};

struct route_ctx {
	const struct fib_dp *fib;
	const struct route_port *ports;
	unsigned n_ports;
	const struct route_port *vlans; /* by slot; NULL: none */
	unsigned n_vlans;
	const struct route_vlan_map *vmap; /* NULL: every tag unknown */
};

/* The route interface i (a next hop's port), NULL if there is none. */
static inline const struct route_port *route_if(const struct route_ctx *ctx,
						unsigned i)
{
	if (i < ctx->n_ports)
		return &ctx->ports[i];
	if (i >= ROUTE_VLAN_BASE && i - ROUTE_VLAN_BASE < ctx->n_vlans)
		return &ctx->vlans[i - ROUTE_VLAN_BASE];
	return NULL;
}

/* map from the VLANs (their phys and vid, a bond's VLAN: each member's;
 * a vid of 0 is left out): 0, or -ENOSPC past ROUTE_VLAN_MAX or when the
 * map would be over half full, -EEXIST for a (port, VID) twice. */
int route_vlan_map_build(struct route_vlan_map *map,
			 const struct route_port *vlans, unsigned n);
/* The slot of (port, vid), -1 if none. */
int route_vlan_find(const struct route_vlan_map *map, unsigned port,
		    unsigned vid);

/*
 * The 802.1Q tag of a frame of len bytes whose L2 header is 14 bytes
 * (untagged) or 18 (one tag, in_tagged): made vid's (0: untagged). A pop
 * moves the MACs 4 bytes back, a push 4 bytes to the front (the 4 bytes
 * before frame must be the caller's), a retag keeps the tag's priority.
 * Returns the shift: the frame now starts at frame + shift and is
 * len - shift bytes long (+4, -4 or 0).
 */
int route_l2_retag(uint8_t *frame, size_t len, int in_tagged, uint16_t vid);

struct route_result {
	enum route_verdict verdict;
	enum route_reason reason;
	uint16_t port;	 /* FWD: egress ferry port; REPLY: ingress port */
	uint16_t len;	 /* REPLY: bytes of the ICMP frame in out */
	uint16_t in_if;	 /* the route interface the frame came in on */
	uint16_t out_if; /* FWD: the route interface it goes out of */
	int8_t shift;	 /* FWD: the frame moved (route_l2_retag()) */
	uint32_t nh;	 /* the next hop picked (FWD, no_neigh) */
	/* no_neigh: the neighbour to resolve is dst if the next hop is
	 * on-link (CONNECTED), else the next hop's gateway (control side) */
	uint8_t family; /* 4 or 6 */
	uint8_t connected;
	uint8_t dst[16]; /* the destination (IPv4: first 4 bytes) */
};

/* Room out needs for any ICMP reply: IPv6's 1280-byte minimum MTU + L2
 * (a VLAN's tag included). */
#define ROUTE_REPLY_MAX (18 + 1280)

/*
 * Route one frame of len bytes received on in_port. flow_hash picks among
 * multipath next hops (the classifier's symmetric hash); out (out_cap
 * bytes, ROUTE_REPLY_MAX is always enough) takes an ICMP reply. The frame
 * is changed only for FWD: it then starts at frame + res->shift and is
 * len - res->shift bytes long (a VLAN tag popped or pushed). Counts the
 * reason in c.
 */
enum route_verdict route_frame(const struct route_ctx *ctx, uint8_t *frame,
			       size_t len, unsigned in_port, uint32_t flow_hash,
			       uint8_t *out, size_t out_cap,
			       struct route_result *res,
			       struct route_counters *c);

/*
 * A multi-buffer frame: its first piece (head bytes at frame) holds the
 * headers, len is the whole frame; route_frame_chain decides as route_frame
 * does (the MTU checks against len), rewrites only the first piece, and
 * quotes from it alone in an ICMP error. A first piece shorter than
 * ROUTE_HEAD_MIN (Ethernet, the longest IPv4 header, 8 bytes of L4) is
 * malformed. With head == len it is route_frame.
 */
#define ROUTE_HEAD_MIN (18 + 60 + 8)
enum route_verdict route_frame_chain(const struct route_ctx *ctx,
				     uint8_t *frame, size_t head, size_t len,
				     unsigned in_port, uint32_t flow_hash,
				     uint8_t *out, size_t out_cap,
				     struct route_result *res,
				     struct route_counters *c);

#endif
