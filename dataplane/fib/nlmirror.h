/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nlmirror.h - the kernel as the router's control plane: follow the main
 * table's routes (IPv4, IPv6, multipath), the neighbours, addresses and
 * links over rtnetlink (libmnl), and apply them to a struct fib.
 *
 * VLANs and VRFs. A VLAN link (IFLA_LINKINFO kind "vlan", 802.1Q, its
 * IFLA_VLAN_ID) whose parent (IFLA_LINK) is a ferry port gets a VLAN slot:
 * its route interface is ROUTE_VLAN_BASE + slot (route.h), the port of
 * the next hops out of it. A VRF link (kind "vrf", IFLA_VRF_TABLE) gets a
 * FIB table (fib_table_open()), and the routes of its kernel table go
 * there; an interface enslaved to it (IFLA_MASTER) has its addresses'
 * LOCAL routes and its neighbours' host routes in that table too, and
 * its lookups there (route_port.table). Tables of no VRF but the main one
 * are ignored. A new VRF table asks for a re-dump, for routes the kernel
 * had in it before the VRF came.
 *
 * What goes into the FIB:
 *   - every unicast route of the main table, its next hop (ifindex,
 *     gateway) a FIB next hop shared by every route through it, carrying
 *     the neighbour's MAC once the kernel knows it; on-link routes (no
 *     gateway) a CONNECTED next hop per interface; RTA_MULTIPATH a group;
 *     blackhole / unreachable / prohibit a DROP next hop;
 *   - each neighbour with a link-layer address as a host route (/32, /128)
 *     to its own next hop, so on-link destinations forward once resolved
 *     (a kernel route of the same prefix wins over it);
 *   - each of the host's addresses as a host route to a LOCAL next hop.
 * Of several kernel routes for one prefix (metrics), the lowest metric is
 * installed; the others are counted as shadowed and not remembered: when
 * the installed one is deleted, the mirror asks the kernel which route of
 * the prefix now wins (RTM_GETROUTE, RTM_F_FIB_MATCH) and installs that.
 * IPv4 routes via IPv6 gateways (RTA_VIA) are counted as unsupported
 * (through a nexthop object of IPv6 they work: a next hop has no family).
 *
 * Bonds. A bond link (kind "bond") with at least one member (a link whose
 * IFLA_MASTER it is) that is a ferry port gets a slot like a VLAN's: its
 * route interface sends out of its members (route_port.members), of
 * which those with carrier that the bond does not hold as backups
 * (IFLA_BOND_SLAVE_STATE) carry traffic; a member's carrier or state
 * event changes the set at once. A member port's frames in are the
 * bond's (its addresses, table, MTU); a VLAN on a bond sends out of the
 * bond's members with its tag. LACP and the members' state are the
 * kernel's bond driver's: ferry passes LACPDUs (not IP) to it and
 * follows what it decides.
 *
 * Nexthop objects (`ip nexthop`, RTM_NEWNEXTHOP; what FRR's zebra installs
 * routes with): each object is a FIB next hop of its own, and a route
 * naming one (RTA_NH_ID) points at it, so `ip nexthop replace` changes
 * what every route through the object forwards to with one FIB store and
 * no route message. A single object (NHA_OIF, NHA_GATEWAY) copies its
 * (ifindex, gateway) next hop's word and follows its neighbour; a
 * blackhole is DROP; a group (NHA_GROUP, resilient ones as plain groups)
 * is a FIB group of its members' own next hops, each repeated by its
 * weight (FIB_MP_MAX paths at most), changed in place when it has room.
 * The kernel deletes the routes through a deleted object, and flushes the
 * objects on a link that goes down or loses carrier, without a message:
 * the mirror does the same.
 *
 * Driven by the caller's loop: nlmirror_create() does the initial dump
 * (blocking, once; nexthop objects before routes), then poll
 * nlmirror_fd() and call nlmirror_process(), which never blocks. Routes
 * arrive on a socket of their own, so that a burst of them (a full table;
 * with nexthop_compat_mode 1, every route through a changed object, which
 * the kernel sends before the object's message) never costs a link,
 * address, neighbour or object event. An overrun (ENOBUFS: events were
 * lost) is counted and answered on the next process() call by a re-dump:
 * of the routes if only theirs overran, else of everything, which also
 * drops the nexthop objects the kernel no longer has.
 * Control thread only; the FIB's readers are never stopped (fib.h).
 */
#ifndef FERRY_NLMIRROR_H
#define FERRY_NLMIRROR_H

#include <stddef.h>
#include <stdint.h>

#include "fib.h"
#include "route.h"

struct nlmirror;

#define NLMIRROR_COUNTERS(X)                                                   \
	X(messages)	/* netlink messages read */                            \
	X(routes_added) /* installed or replaced in the FIB */                 \
	X(routes_deleted)                                                      \
	X(routes_ignored)     /* other tables, types, cloned */                \
	X(routes_shadowed)    /* a lower-metric route holds the prefix */      \
	X(fib_match_asked)    /* after a delete: which route wins now? */      \
	X(routes_unsupported) /* IPv4 via IPv6 (RTA_VIA) */                    \
	X(nexthops_added)     /* RTM_NEWNEXTHOP of a new id */                 \
	X(nexthops_replaced)  /* RTM_NEWNEXTHOP of a known id: in place */     \
	X(nexthops_deleted)   /* deleted, emptied group, flushed, re-dump */   \
	X(nexthops_flushed)   /* their link went down (the kernel's flush) */  \
	X(nh_unknown)	      /* a route or group names an id not known */     \
	X(nh_unsupported)     /* fdb, encap; group paths past FIB_MP_MAX */    \
	X(neigh_updates)                                                       \
	X(addr_updates)                                                        \
	X(link_updates)                                                        \
	X(fib_errors)	     /* the FIB refused (full, ...) */                 \
	X(resolve_sent)	     /* RTM_NEWNEIGH NTF_USE requests */               \
	X(netlink_errors)    /* NLMSG_ERROR answers to our requests */         \
	X(overruns)	     /* ENOBUFS: events lost, full re-dump */          \
	X(vlans_unsupported) /* past ROUTE_VLAN_MAX, or 802.1ad VLAN links */  \
	X(vrfs_unsupported)  /* past the FIB's tables */

struct nlmirror_counters {
#define X(n) uint64_t n;
	NLMIRROR_COUNTERS(X)
#undef X
};

enum nlmirror_change {
	NLMIRROR_ROUTE_ADD,
	NLMIRROR_ROUTE_DEL,
};

struct nlmirror_params {
	struct fib *fib;
	/* The ferry port of an interface, or -1: routes out of it get next
	 * hops with FIB_PORT_NONE (the route app drops those, counted). */
	int (*port_of)(void *arg, int ifindex, const char *ifname);
	/* Optional: told of every route change applied to the FIB. prefix
	 * is 16 bytes (IPv4: the first 4, network order). */
	void (*on_route)(void *arg, enum nlmirror_change what, int family,
			 const uint8_t *prefix, unsigned len, uint32_t nh);
	void *arg;
	uint32_t table; /* 0: RT_TABLE_MAIN */
};

/* Subscribes, then dumps links, addresses, neighbours and routes into the
 * FIB. NULL and errno on failure. */
struct nlmirror *nlmirror_create(const struct nlmirror_params *p);
void nlmirror_destroy(struct nlmirror *nlm);

int nlmirror_fd(const struct nlmirror *nlm);
/* Read and apply whatever the kernel has sent, without blocking: the
 * number of messages applied, or -errno. */
int nlmirror_process(struct nlmirror *nlm);
/* Both event sockets' SO_RCVBUF (tests make overruns with a small one);
 * 0 or -errno. */
int nlmirror_set_rcvbuf(struct nlmirror *nlm, int bytes);
/* Apply len bytes of netlink messages as if they had come on the event
 * socket (tests: links, routes the kernel here cannot make). The number
 * of messages applied. */
int nlmirror_apply(struct nlmirror *nlm, const void *buf, size_t len);

/* The caller's ports changed (a port added or removed): ask port_of again
 * for every link and update the next hops through those that moved. */
void nlmirror_ports_changed(struct nlmirror *nlm);

/* What route_frame() needs of route interface `port` (a ferry port, or
 * ROUTE_VLAN_BASE + a VLAN slot), from the kernel's view of its
 * interface: MAC, MTU, the first IPv4 address and the first global IPv6
 * one (else link-local) as ICMP sources, its FIB table, and for a VLAN
 * its VID and parent port. routed is left as it was. -ENOENT if no link
 * maps to it. */
int nlmirror_route_port(const struct nlmirror *nlm, int port,
			struct route_port *out);
/* VLAN slots in use are below this. */
unsigned nlmirror_vlan_slots(const struct nlmirror *nlm);
/* The kernel's table id of FIB table t, 0 if t is not a VRF's. */
uint32_t nlmirror_table_id(const struct nlmirror *nlm, unsigned t);

/* A VRF whose table has no FIB table left: its interfaces look up here
 * (never opened: no route), not in the main table. */
#define NLMIRROR_TABLE_NONE (FIB_TABLES - 1)

/* Ask the kernel to resolve addr (4 or 16 bytes) on ifindex: RTM_NEWNEIGH
 * with NTF_USE, which makes the kernel send ARP / NS as if it had a packet
 * for addr; the answer comes back as a neighbour event. */
int nlmirror_resolve(struct nlmirror *nlm, int family, const uint8_t *addr,
		     int ifindex);
/* The gateway and interface a FIB next hop resolves through: what to pass
 * to nlmirror_resolve() after route_frame() says no_neigh. -ENOENT if nh
 * is not one of the mirror's. */
int nlmirror_nh_target(const struct nlmirror *nlm, uint32_t nh, int *family,
		       uint8_t addr[16], int *ifindex);

void nlmirror_counters(const struct nlmirror *nlm, struct nlmirror_counters *c);

/* What the mirror holds, for `neigh show` and friends. */
struct nlmirror_neigh {
	int family, ifindex;
	uint8_t addr[16];
	uint8_t mac[6];
	uint16_t state; /* NUD_* */
	uint32_t nh;	/* its FIB next hop */
};
enum nlmirror_link_kind {
	NLMIRROR_LINK_OTHER,
	NLMIRROR_LINK_VLAN,
	NLMIRROR_LINK_VRF,
	NLMIRROR_LINK_BOND,
};
struct nlmirror_link {
	int ifindex, port; /* port: its route interface, or -1 */
	char name[16];
	uint32_t mtu;
	uint8_t mac[6];
	uint8_t up;
	uint8_t kind;	     /* enum nlmirror_link_kind */
	uint16_t vid;	     /* VLAN: IFLA_VLAN_ID */
	uint16_t vlan_proto; /* VLAN: 0x8100 or 0x88a8 */
	int parent;	     /* VLAN: IFLA_LINK */
	int master;	     /* IFLA_MASTER, 0: none */
	uint32_t vrf_table;  /* VRF: IFLA_VRF_TABLE */
	uint8_t carrier;     /* up with carrier (IFF_RUNNING or LOWER_UP) */
	uint8_t bond_slave;  /* a bond's member (IFLA_INFO_SLAVE_KIND) */
	uint8_t bond_backup; /* member: IFLA_BOND_SLAVE_STATE not active */
};
struct nlmirror_addr {
	int family, ifindex;
	uint8_t addr[16];
	uint8_t prefixlen;
	uint8_t table; /* the FIB table of its LOCAL route */
};
typedef int (*nlmirror_neigh_fn)(void *arg, const struct nlmirror_neigh *n);
typedef int (*nlmirror_link_fn)(void *arg, const struct nlmirror_link *l);
typedef int (*nlmirror_addr_fn)(void *arg, const struct nlmirror_addr *a);
int nlmirror_walk_neigh(const struct nlmirror *nlm, nlmirror_neigh_fn fn,
			void *arg);
int nlmirror_walk_links(const struct nlmirror *nlm, nlmirror_link_fn fn,
			void *arg);
int nlmirror_walk_addrs(const struct nlmirror *nlm, nlmirror_addr_fn fn,
			void *arg);

#endif
