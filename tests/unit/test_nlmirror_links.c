// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_nlmirror_links - VLAN, VRF and bond links through the netlink
 * mirror, as the kernel would send them (RTM_NEWLINK with IFLA_LINKINFO,
 * IFLA_LINK, IFLA_MASTER, a bond member's IFLA_INFO_SLAVE_DATA; routes of
 * the VRFs' tables; addresses and neighbours on the VLANs and the bond),
 * applied with nlmirror_apply(): interface numbers far above any real one,
 * so the dump of the test's own namespace does not meet them. Then
 * route_frame() on the views the mirror gives: two VLANs on one port pair,
 * the same addresses in two VRFs, each frame to its own VRF's neighbour
 * with its own VLAN's tag; a bond of two ferry ports, flows spread over
 * its members by the flow hash, a member that loses carrier or becomes a
 * backup left out, a VLAN on the bond.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>

#include "fib.h"
#include "nlmirror.h"
#include "route.h"
#include "route_csum.h"

#define IF_P0	    900001
#define IF_P1	    900002
#define IF_BLUE	    900010
#define IF_RED	    900011
#define IF_P0_100   900101
#define IF_P0_200   900102
#define IF_P1_100   900201
#define IF_P1_200   900202
#define IF_P0_AD    900300
#define IF_BOND	    900400
#define IF_M0	    900401
#define IF_M1	    900402
#define IF_BOND_300 900403
#define N_PORTS	    4
#define TABLE_BLUE  10
#define TABLE_RED   20
#define TABLE_OTHER 30

static const uint8_t mac_b100[6] = {2, 0, 0, 0, 0x10, 0x02};
static const uint8_t mac_b200[6] = {2, 0, 0, 0, 0x20, 0x02};

struct env {
	struct fib *fib;
	struct nlmirror *nlm;
	char buf[8192];
	struct route_port ports[N_PORTS], vlans[ROUTE_VLAN_MAX];
	struct route_vlan_map vmap;
	struct route_ctx ctx;
	struct route_counters c;
};

static int port_of(void *arg, int ifindex, const char *ifname)
{
	(void)arg;
	(void)ifname;
	return ifindex == IF_P0	  ? 0
	       : ifindex == IF_P1 ? 1
	       : ifindex == IF_M0 ? 2
	       : ifindex == IF_M1 ? 3
				  : -1;
}

static void apply(struct env *e, struct nlmsghdr *nlh)
{
	assert_int_equal(nlmirror_apply(e->nlm, nlh, nlh->nlmsg_len), 1);
}

static struct nlmsghdr *msg(struct env *e, uint16_t type, size_t hdr)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(e->buf);

	memset(e->buf, 0, sizeof(e->buf));
	nlh = mnl_nlmsg_put_header(e->buf);
	nlh->nlmsg_type = type;
	mnl_nlmsg_put_extra_header(nlh, hdr);
	return nlh;
}

/* kind "vlan" (proto 0: 802.1Q, vid), "vrf" (table), "bond" or NULL */
static void mklink(struct env *e, uint16_t type, int ifindex, const char *name,
		   const char *kind, uint32_t arg, int parent, int master,
		   uint32_t mtu, uint16_t proto)
{
	struct nlmsghdr *nlh = msg(e, type, sizeof(struct ifinfomsg));
	struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	uint8_t mac[6] = {
		2, 0, 0, 0xaa, (uint8_t)(ifindex >> 8), (uint8_t)ifindex};
	struct nlattr *li, *d;

	ifi->ifi_index = ifindex;
	ifi->ifi_flags = IFF_UP | IFF_RUNNING | IFF_LOWER_UP;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	mnl_attr_put_u32(nlh, IFLA_MTU, mtu);
	mnl_attr_put(nlh, IFLA_ADDRESS, 6, mac);
	if (parent)
		mnl_attr_put_u32(nlh, IFLA_LINK, (uint32_t)parent);
	if (master)
		mnl_attr_put_u32(nlh, IFLA_MASTER, (uint32_t)master);
	if (kind) {
		li = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
		mnl_attr_put_strz(nlh, IFLA_INFO_KIND, kind);
		d = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
		if (!strcmp(kind, "vlan")) {
			mnl_attr_put_u16(nlh, IFLA_VLAN_ID, (uint16_t)arg);
			if (proto)
				mnl_attr_put_u16(nlh, IFLA_VLAN_PROTOCOL,
						 htons(proto));
		} else if (!strcmp(kind, "vrf")) {
			mnl_attr_put_u32(nlh, IFLA_VRF_TABLE, arg);
		}
		mnl_attr_nest_end(nlh, d);
		mnl_attr_nest_end(nlh, li);
	}
	apply(e, nlh);
}

/* A bond's member (a veth, say): carrier or not, the bond's state of it
 * (BOND_STATE_ACTIVE 0, BACKUP 1). */
static void mkmember(struct env *e, int ifindex, const char *name, int bond,
		     int carrier, uint8_t state)
{
	struct nlmsghdr *nlh = msg(e, RTM_NEWLINK, sizeof(struct ifinfomsg));
	struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	/* the bond's MAC, as the bond gives its members */
	uint8_t mac[6] = {2, 0, 0, 0xbb, 0, 1};
	struct nlattr *li, *d;

	ifi->ifi_index = ifindex;
	ifi->ifi_flags =
		IFF_UP | IFF_SLAVE | (carrier ? IFF_RUNNING | IFF_LOWER_UP : 0);
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	mnl_attr_put_u32(nlh, IFLA_MTU, 1500);
	mnl_attr_put(nlh, IFLA_ADDRESS, 6, mac);
	mnl_attr_put_u32(nlh, IFLA_MASTER, (uint32_t)bond);
	li = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "veth");
	mnl_attr_put_strz(nlh, IFLA_INFO_SLAVE_KIND, "bond");
	d = mnl_attr_nest_start(nlh, IFLA_INFO_SLAVE_DATA);
	mnl_attr_put_u8(nlh, IFLA_BOND_SLAVE_STATE, state);
	mnl_attr_put_u8(nlh, IFLA_BOND_SLAVE_MII_STATUS, carrier ? 0 : 2);
	mnl_attr_nest_end(nlh, d);
	mnl_attr_nest_end(nlh, li);
	apply(e, nlh);
}

static void addr4(struct env *e, uint16_t type, int ifindex, const char *a,
		  unsigned plen)
{
	struct nlmsghdr *nlh = msg(e, type, sizeof(struct ifaddrmsg));
	struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
	struct in_addr in;

	assert_int_equal(inet_pton(AF_INET, a, &in), 1);
	ifa->ifa_family = AF_INET;
	ifa->ifa_prefixlen = (uint8_t)plen;
	ifa->ifa_index = (uint32_t)ifindex;
	mnl_attr_put(nlh, IFA_LOCAL, 4, &in);
	mnl_attr_put(nlh, IFA_ADDRESS, 4, &in);
	apply(e, nlh);
}

/* An on-link route dst/plen out of ifindex in table. */
static void route4(struct env *e, uint16_t type, uint32_t table,
		   const char *dst, unsigned plen, int ifindex)
{
	struct nlmsghdr *nlh = msg(e, type, sizeof(struct rtmsg));
	struct rtmsg *rt = mnl_nlmsg_get_payload(nlh);
	struct in_addr in;

	assert_int_equal(inet_pton(AF_INET, dst, &in), 1);
	rt->rtm_family = AF_INET;
	rt->rtm_dst_len = (uint8_t)plen;
	rt->rtm_table = (uint8_t)(table < 256 ? table : RT_TABLE_UNSPEC);
	rt->rtm_type = RTN_UNICAST;
	rt->rtm_scope = RT_SCOPE_LINK;
	rt->rtm_protocol = RTPROT_KERNEL;
	mnl_attr_put_u32(nlh, RTA_TABLE, table);
	mnl_attr_put(nlh, RTA_DST, 4, &in);
	mnl_attr_put_u32(nlh, RTA_OIF, (uint32_t)ifindex);
	apply(e, nlh);
}

static void neigh4(struct env *e, int ifindex, const char *a,
		   const uint8_t *mac)
{
	struct nlmsghdr *nlh = msg(e, RTM_NEWNEIGH, sizeof(struct ndmsg));
	struct ndmsg *nd = mnl_nlmsg_get_payload(nlh);
	struct in_addr in;

	assert_int_equal(inet_pton(AF_INET, a, &in), 1);
	nd->ndm_family = AF_INET;
	nd->ndm_ifindex = ifindex;
	nd->ndm_state = NUD_REACHABLE;
	mnl_attr_put(nlh, NDA_DST, 4, &in);
	mnl_attr_put(nlh, NDA_LLADDR, 6, mac);
	apply(e, nlh);
}

static uint32_t ip4(const char *s)
{
	struct in_addr in;

	assert_int_equal(inet_pton(AF_INET, s, &in), 1);
	return ntohl(in.s_addr);
}

/* The route app's views, as router.c builds them. */
static void views(struct env *e)
{
	unsigned i, n = nlmirror_vlan_slots(e->nlm);

	memset(e->vlans, 0, sizeof(e->vlans));
	memset(e->ports, 0, sizeof(e->ports));
	for (i = 0; i < N_PORTS; i++) {
		/* a test's ports are links it made (some make fewer) */
		if (nlmirror_route_port(e->nlm, (int)i, &e->ports[i]))
			continue;
		e->ports[i].phys = (uint16_t)i; /* as router.c does */
		e->ports[i].routed = 1;
	}
	for (i = 0; i < n; i++)
		if (!nlmirror_route_port(e->nlm, (int)(ROUTE_VLAN_BASE + i),
					 &e->vlans[i]))
			e->vlans[i].routed = 1;
	assert_int_equal(route_vlan_map_build(&e->vmap, e->vlans, n), 0);
	e->ctx = (struct route_ctx){.fib = fib_dp(e->fib),
				    .ports = e->ports,
				    .n_ports = N_PORTS,
				    .vlans = e->vlans,
				    .n_vlans = n,
				    .vmap = &e->vmap};
}

/* A FIB and a mirror of it, the links of a test still to come. */
static struct env *env_new(void)
{
	struct env *e = calloc(1, sizeof(*e));
	struct nlmirror_params p = {.port_of = port_of};

	e->fib = fib_create(NULL);
	assert_non_null(e->fib);
	p.fib = e->fib;
	p.arg = e;
	e->nlm = nlmirror_create(&p);
	assert_non_null(e->nlm);
	return e;
}

static int setup(void **state)
{
	struct env *e = env_new();

	mklink(e, RTM_NEWLINK, IF_P0, "p0", NULL, 0, 0, 0, 1500, 0);
	mklink(e, RTM_NEWLINK, IF_P1, "p1", NULL, 0, 0, 0, 1500, 0);
	mklink(e, RTM_NEWLINK, IF_BLUE, "vrf-blue", "vrf", TABLE_BLUE, 0, 0,
	       65575, 0);
	mklink(e, RTM_NEWLINK, IF_RED, "vrf-red", "vrf", TABLE_RED, 0, 0, 65575,
	       0);
	mklink(e, RTM_NEWLINK, IF_P0_100, "p0.100", "vlan", 100, IF_P0, IF_BLUE,
	       1400, 0);
	mklink(e, RTM_NEWLINK, IF_P0_200, "p0.200", "vlan", 200, IF_P0, IF_RED,
	       1400, 0);
	mklink(e, RTM_NEWLINK, IF_P1_100, "p1.100", "vlan", 100, IF_P1, IF_BLUE,
	       1400, 0);
	mklink(e, RTM_NEWLINK, IF_P1_200, "p1.200", "vlan", 200, IF_P1, IF_RED,
	       1300, 0);
	/* the same addresses in both VRFs */
	addr4(e, RTM_NEWADDR, IF_P0_100, "10.1.0.1", 24);
	addr4(e, RTM_NEWADDR, IF_P0_200, "10.1.0.1", 24);
	addr4(e, RTM_NEWADDR, IF_P1_100, "10.2.0.1", 24);
	addr4(e, RTM_NEWADDR, IF_P1_200, "10.2.0.1", 24);
	route4(e, RTM_NEWROUTE, TABLE_BLUE, "10.2.0.0", 24, IF_P1_100);
	route4(e, RTM_NEWROUTE, TABLE_RED, "10.2.0.0", 24, IF_P1_200);
	route4(e, RTM_NEWROUTE, TABLE_BLUE, "10.1.0.0", 24, IF_P0_100);
	route4(e, RTM_NEWROUTE, TABLE_RED, "10.1.0.0", 24, IF_P0_200);
	neigh4(e, IF_P1_100, "10.2.0.2", mac_b100);
	neigh4(e, IF_P1_200, "10.2.0.2", mac_b200);
	views(e);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	nlmirror_destroy(e->nlm);
	fib_destroy(e->fib);
	free(e);
	return 0;
}

/* VLAN slots, their parents, VIDs, MTUs, tables and ICMP sources. */
static void test_links(void **state)
{
	struct env *e = *state;
	struct route_port *v100 = NULL, *v200 = NULL;
	unsigned i, tb, tr;

	assert_int_equal(nlmirror_vlan_slots(e->nlm), 4);
	for (i = 0; i < 4; i++) {
		if (e->vlans[i].phys == 0 && e->vlans[i].vid == 100)
			v100 = &e->vlans[i];
		if (e->vlans[i].phys == 1 && e->vlans[i].vid == 200)
			v200 = &e->vlans[i];
	}
	assert_non_null(v100);
	assert_non_null(v200);
	assert_int_equal(v100->mtu, 1400);
	assert_int_equal(v200->mtu, 1300);
	assert_int_equal(v100->ip4, ip4("10.1.0.1"));
	assert_int_equal(v200->ip4, ip4("10.2.0.1"));
	tb = v100->table;
	tr = v200->table;
	assert_true(tb > 0 && tr > 0 && tb != tr);
	assert_int_equal(nlmirror_table_id(e->nlm, tb), TABLE_BLUE);
	assert_int_equal(nlmirror_table_id(e->nlm, tr), TABLE_RED);
	assert_int_equal(e->ports[0].table, 0);
	assert_int_equal(e->ports[0].vid, 0);
	/* the host's addresses in their own tables, not in the main one */
	assert_int_not_equal(fib4_lookup_in(e->ctx.fib, tb, ip4("10.1.0.1")),
			     FIB_NH_NONE);
	/* (exact gets: the test's namespace has routes of its own) */
	assert_int_equal(fib4_get(e->fib, ip4("10.1.0.1"), 32), FIB_NH_NONE);
	assert_int_equal(fib4_get(e->fib, ip4("10.2.0.2"), 32), FIB_NH_NONE);
	assert_int_equal(fib4_get(e->fib, ip4("10.2.0.0"), 24), FIB_NH_NONE);
}

static size_t tagged4(uint8_t *f, uint16_t vid, const char *src,
		      const char *dst, uint8_t ttl)
{
	uint8_t *ip = f + 18;
	uint32_t s = htonl(ip4(src)), d = htonl(ip4(dst));
	uint16_t c;

	memset(f, 0, 18 + 84);
	memcpy(f, (uint8_t[6]){2, 0, 0, 0xaa, 0, 1}, 6);
	memcpy(f + 6, (uint8_t[6]){2, 0, 0, 0, 0, 0x99}, 6);
	f[12] = 0x81;
	f[14] = (uint8_t)(vid >> 8);
	f[15] = (uint8_t)vid;
	f[16] = 0x08;
	ip[0] = 0x45;
	ip[3] = 84;
	ip[8] = ttl;
	ip[9] = 1;
	memcpy(ip + 12, &s, 4);
	memcpy(ip + 16, &d, 4);
	c = ip4_csum_full(ip, 20);
	ip[10] = (uint8_t)(c >> 8);
	ip[11] = (uint8_t)c;
	return 18 + 84;
}

static uint8_t frame[2048], out[ROUTE_REPLY_MAX];

static enum route_verdict run(struct env *e, uint8_t *f, size_t len,
			      unsigned in, struct route_result *r)
{
	return route_frame(&e->ctx, f, len, in, 0, out, sizeof(out), r, &e->c);
}

/* The same destination in VLAN 100 and 200 reaches its own VRF's
 * neighbour, tagged with its own VLAN; untagged there is no route. */
static void test_route_through_mirror(void **state)
{
	struct env *e = *state;
	struct route_result r;
	uint8_t *f = frame + 64;
	size_t len;

	len = tagged4(f, 100, "10.1.0.2", "10.2.0.2", 64);
	assert_int_equal(run(e, f, len, 0, &r), ROUTE_FWD);
	assert_int_equal(r.port, 1);
	assert_int_equal(r.shift, 0);
	assert_memory_equal(f, mac_b100, 6);
	assert_int_equal(f[14] << 8 | f[15], 100);

	len = tagged4(f, 200, "10.1.0.2", "10.2.0.2", 64);
	assert_int_equal(run(e, f, len, 0, &r), ROUTE_FWD);
	assert_int_equal(r.port, 1);
	assert_memory_equal(f, mac_b200, 6);
	assert_int_equal(f[14] << 8 | f[15], 200);

	/* to the host's own address in the VRF: the kernel's */
	len = tagged4(f, 200, "10.1.0.2", "10.1.0.1", 64);
	assert_int_equal(run(e, f, len, 0, &r), ROUTE_HOST);
	assert_int_equal(r.reason, ROUTE_R_local);

	/* untagged: the main table, which has none of it (the namespace's
	 * own default route, if any, is out of no ferry port) */
	len = tagged4(f, 100, "10.1.0.2", "10.2.0.2", 64);
	memmove(f + 12, f + 16, len - 16);
	len -= 4;
	assert_int_equal(run(e, f, len, 0, &r), ROUTE_DROP);
	assert_true(r.reason == ROUTE_R_no_route ||
		    r.reason == ROUTE_R_egress_not_routed);

	/* a VID no link has */
	len = tagged4(f, 300, "10.1.0.2", "10.2.0.2", 64);
	assert_int_equal(run(e, f, len, 0, &r), ROUTE_DROP);
	assert_int_equal(r.reason, ROUTE_R_vlan_unknown);
}

/* Links that come and go: a table of no VRF is ignored, an 802.1ad VLAN
 * is not followed, a deleted VLAN's next hops lose their port, a VLAN
 * released from its VRF takes its address to the main table. */
static void test_changes(void **state)
{
	struct env *e = *state;
	struct nlmirror_counters c0, c1;
	struct route_result r;
	uint8_t *f = frame + 64;
	size_t len;

	nlmirror_counters(e->nlm, &c0);
	route4(e, RTM_NEWROUTE, TABLE_OTHER, "10.9.0.0", 24, IF_P1_100);
	mklink(e, RTM_NEWLINK, IF_P0_AD, "p0.ad", "vlan", 300, IF_P0, 0, 1500,
	       0x88a8);
	nlmirror_counters(e->nlm, &c1);
	assert_int_equal(c1.routes_ignored, c0.routes_ignored + 1);
	assert_int_equal(c1.vlans_unsupported, c0.vlans_unsupported + 1);
	assert_int_equal(nlmirror_vlan_slots(e->nlm), 4);

	mklink(e, RTM_DELLINK, IF_P1_200, "p1.200", "vlan", 200, IF_P1, IF_RED,
	       1300, 0);
	views(e);
	len = tagged4(f, 200, "10.1.0.2", "10.2.0.2", 64);
	assert_int_equal(run(e, f, len, 0, &r), ROUTE_DROP);
	assert_int_equal(r.reason, ROUTE_R_egress_not_routed);

	assert_int_equal(fib4_get(e->fib, ip4("10.1.0.1"), 32), FIB_NH_NONE);
	mklink(e, RTM_NEWLINK, IF_P0_100, "p0.100", "vlan", 100, IF_P0, 0, 1400,
	       0);
	views(e);
	assert_int_not_equal(fib4_get(e->fib, ip4("10.1.0.1"), 32),
			     FIB_NH_NONE);
	len = tagged4(f, 100, "10.1.0.2", "10.1.0.1", 64);
	assert_int_equal(run(e, f, len, 0, &r), ROUTE_HOST);
	/* and the red one keeps its own */
	len = tagged4(f, 200, "10.1.0.2", "10.1.0.1", 64);
	assert_int_equal(run(e, f, len, 0, &r), ROUTE_HOST);
	addr4(e, RTM_DELADDR, IF_P0_200, "10.1.0.1", 24);
	len = tagged4(f, 200, "10.1.0.2", "10.1.0.1", 64);
	assert_int_not_equal(run(e, f, len, 0, &r), ROUTE_HOST);
	len = tagged4(f, 100, "10.1.0.2", "10.1.0.1", 64);
	assert_int_equal(run(e, f, len, 0, &r), ROUTE_HOST);
}

/*
 * The bond: p0 (plain, 10.1.0.1/24) and bond0 (10.2.0.1/24, its MAC on
 * both members) of m0 and m1, ferry ports 2 and 3; the neighbour
 * 10.2.0.2 behind the bond; bond0.300 (10.3.0.1/24) on it, its
 * neighbour 10.3.0.2.
 */
static const uint8_t mac_srv[6] = {2, 0, 0, 0, 0x30, 0x02};
static const uint8_t mac_srv300[6] = {2, 0, 0, 0, 0x30, 0x03};

static int setup_bond(void **state)
{
	struct env *e = env_new();

	mklink(e, RTM_NEWLINK, IF_P0, "p0", NULL, 0, 0, 0, 1500, 0);
	/* members before the bond, as a dump may give them */
	mkmember(e, IF_M0, "m0", IF_BOND, 1, 0);
	mklink(e, RTM_NEWLINK, IF_BOND, "bond0", "bond", 0, 0, 0, 1500, 0);
	mkmember(e, IF_M1, "m1", IF_BOND, 1, 0);
	mklink(e, RTM_NEWLINK, IF_BOND_300, "bond0.300", "vlan", 300, IF_BOND,
	       0, 1400, 0);
	addr4(e, RTM_NEWADDR, IF_P0, "10.1.0.1", 24);
	addr4(e, RTM_NEWADDR, IF_BOND, "10.2.0.1", 24);
	addr4(e, RTM_NEWADDR, IF_BOND_300, "10.3.0.1", 24);
	route4(e, RTM_NEWROUTE, RT_TABLE_MAIN, "10.66.2.0", 24, IF_BOND);
	route4(e, RTM_NEWROUTE, RT_TABLE_MAIN, "10.66.3.0", 24, IF_BOND_300);
	neigh4(e, IF_BOND, "10.66.2.2", mac_srv);
	neigh4(e, IF_BOND_300, "10.66.3.2", mac_srv300);
	views(e);
	*state = e;
	return 0;
}

static size_t plain4(uint8_t *f, const char *src, const char *dst)
{
	size_t len = tagged4(f, 1, src, dst, 64);

	memmove(f + 12, f + 16, len - 16);
	return len - 4;
}

/* route interface of the bond (the one with members and no VID) */
static const struct route_port *bond_rif(struct env *e)
{
	unsigned i;

	for (i = 0; i < e->ctx.n_vlans; i++)
		if (e->vlans[i].n_members && !e->vlans[i].vid)
			return &e->vlans[i];
	return NULL;
}

/* 64 flows from p0 to dst: how many left by each port */
static void spread(struct env *e, const char *dst, unsigned by_port[N_PORTS])
{
	struct route_result r;
	uint8_t *f = frame + 64;
	uint32_t h;

	memset(by_port, 0, N_PORTS * sizeof(*by_port));
	for (h = 0; h < 64; h++) {
		size_t len = plain4(f, "10.1.0.2", dst);
		uint16_t first;

		assert_int_equal(route_frame(&e->ctx, f, len, 0,
					     h * 0x01000193u, out, sizeof(out),
					     &r, &e->c),
				 ROUTE_FWD);
		assert_true(r.port < N_PORTS);
		by_port[r.port]++;
		first = r.port;
		/* the same flow, the same member */
		len = plain4(f, "10.1.0.2", dst);
		route_frame(&e->ctx, f, len, 0, h * 0x01000193u, out,
			    sizeof(out), &r, &e->c);
		assert_int_equal(r.port, first);
	}
}

/* The bond's route interface: its members, its address on them; flows
 * over both members; the members' frames in are the bond's. */
static void test_bond(void **state)
{
	struct env *e = *state;
	const struct route_port *b = bond_rif(e);
	unsigned n[N_PORTS];
	struct route_result r;
	uint8_t *f = frame + 64;
	size_t len;

	assert_non_null(b);
	assert_int_equal(b->n_members, 2);
	assert_int_equal(b->n_up, 2);
	assert_int_equal(b->members[0], 2);
	assert_int_equal(b->members[1], 3);
	assert_int_equal(b->ip4, ip4("10.2.0.1"));
	/* a member port: the bond's address (ICMP source), no members */
	assert_int_equal(e->ports[2].ip4, ip4("10.2.0.1"));
	assert_int_equal(e->ports[3].n_members, 0);

	spread(e, "10.66.2.2", n);
	assert_int_equal(n[2] + n[3], 64);
	assert_true(n[2] >= 16 && n[3] >= 16);
	len = plain4(f, "10.1.0.2", "10.66.2.2");
	assert_int_equal(run(e, f, len, 0, &r), ROUTE_FWD);
	assert_memory_equal(f, mac_srv, 6);
	assert_memory_equal(f + 6, b->mac, 6);

	/* in on a member: to the bond's own address, the kernel's; routed
	 * back out of p0 */
	len = plain4(f, "10.66.2.2", "10.2.0.1");
	assert_int_equal(run(e, f, len, 3, &r), ROUTE_HOST);
	assert_int_equal(r.reason, ROUTE_R_local);
}

/* A member without carrier, or held as a backup by the bond, carries
 * nothing; with none left the bond sends nothing. */
static void test_bond_member_down(void **state)
{
	struct env *e = *state;
	unsigned n[N_PORTS];
	struct route_result r;
	uint8_t *f = frame + 64;
	size_t len;

	mkmember(e, IF_M1, "m1", IF_BOND, 0, 0);
	views(e);
	assert_int_equal(bond_rif(e)->n_up, 1);
	assert_int_equal(bond_rif(e)->n_members, 2);
	spread(e, "10.66.2.2", n);
	assert_int_equal(n[2], 64);

	mkmember(e, IF_M1, "m1", IF_BOND, 1, 0);
	mkmember(e, IF_M0, "m0", IF_BOND, 1, 1); /* backup */
	views(e);
	assert_int_equal(bond_rif(e)->n_up, 1);
	assert_int_equal(bond_rif(e)->members[0], 3);
	spread(e, "10.66.2.2", n);
	assert_int_equal(n[3], 64);

	mkmember(e, IF_M1, "m1", IF_BOND, 0, 0);
	views(e);
	assert_int_equal(bond_rif(e)->n_up, 0);
	len = plain4(f, "10.1.0.2", "10.66.2.2");
	/* out of a member that is down: the worker drops it (port_down) */
	assert_int_equal(run(e, f, len, 0, &r), ROUTE_FWD);
	assert_true(r.port == 2 || r.port == 3);

	/* released from the bond: the bond has no ferry port, no slot */
	mklink(e, RTM_NEWLINK, IF_M0, "m0", NULL, 0, 0, 0, 1500, 0);
	mklink(e, RTM_NEWLINK, IF_M1, "m1", NULL, 0, 0, 0, 1500, 0);
	views(e);
	assert_null(bond_rif(e));
	len = plain4(f, "10.1.0.2", "10.66.2.2");
	assert_int_equal(run(e, f, len, 0, &r), ROUTE_DROP);
	assert_int_equal(r.reason, ROUTE_R_egress_not_routed);
}

/* A VLAN on the bond: its tagged frames are found on either member, and
 * it sends out of the members with its tag. */
static void test_bond_vlan(void **state)
{
	struct env *e = *state;
	unsigned n[N_PORTS];
	struct route_result r;
	uint8_t *f = frame + 64;
	size_t len;

	len = tagged4(f, 300, "10.66.3.2", "10.3.0.1", 64);
	assert_int_equal(run(e, f, len, 2, &r), ROUTE_HOST);
	len = tagged4(f, 300, "10.66.3.2", "10.3.0.1", 64);
	assert_int_equal(run(e, f, len, 3, &r), ROUTE_HOST);
	assert_int_equal(r.reason, ROUTE_R_local);

	spread(e, "10.66.3.2", n);
	assert_true(n[2] >= 16 && n[3] >= 16);
	len = plain4(f, "10.1.0.2", "10.66.3.2");
	assert_int_equal(run(e, f, len, 0, &r), ROUTE_FWD);
	/* a tag pushed: the frame moved 4 bytes to the front */
	assert_int_equal(r.shift, -4);
	assert_memory_equal(f - 4, mac_srv300, 6);
	assert_int_equal(f[-4 + 12] << 8 | f[-4 + 13], 0x8100);
	assert_int_equal((f[-4 + 14] << 8 | f[-4 + 15]) & 0xfff, 300);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_links, setup, teardown),
		cmocka_unit_test_setup_teardown(test_route_through_mirror,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_changes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bond, setup_bond,
						teardown),
		cmocka_unit_test_setup_teardown(test_bond_member_down,
						setup_bond, teardown),
		cmocka_unit_test_setup_teardown(test_bond_vlan, setup_bond,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
