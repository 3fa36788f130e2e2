// SPDX-License-Identifier: BSD-2-Clause
/*
 * nlmirror.c - the kernel's routes, nexthop objects, neighbours, addresses
 * and links, mirrored into the FIB over rtnetlink with libmnl (see
 * nlmirror.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/if_arp.h>
#include <linux/if_bonding.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "nlmirror.h"

/* Route tags kept with each FIB route: who installed it, and the metric. */
#define TAG_KERNEL (1u << 31) /* a main-table route; low bits: metric */
#define TAG_LOCAL  (1u << 30) /* one of the host's addresses */
#define TAG_NEIGH  0u	      /* a neighbour's host route */
#define TAG_SHADOW (1u << 29) /* kernel: a higher-metric route is behind */
#define TAG_METRIC 0x1fffffffu

/* What a FIB next-hop id stands for (map[id]): kind in the top bits. */
#define MAP_SINGLE (1u << 30)
#define MAP_GROUP  (2u << 30)
#define MAP_OBJ	   (3u << 30) /* a kernel nexthop object's own */
#define MAP_KIND   (3u << 30)

enum nh_kind { NH_GW = 1, NH_CONN = 2 };

struct nh_key {
	uint8_t kind;
	uint8_t family;
	uint8_t pad[2];
	int32_t ifindex;
	uint8_t addr[16]; /* the gateway / neighbour; zero for NH_CONN */
};

/* A next hop through (ifindex, gateway): shared by every route through it
 * and by the neighbour of that address. */
struct mnh {
	struct nh_key key;
	uint32_t fib_id; /* 0 while nothing uses it */
	uint32_t refs;	 /* routes, groups, and 1 while the neighbour is */
	uint8_t neigh;	 /* the kernel has a link-layer address for it */
	uint8_t mac[6];
	uint16_t state;
	uint32_t objs; /* nexthop objects through it: first's index + 1 */
	uint8_t table; /* FIB table of its neighbour's host route */
};

struct mgrp {
	uint32_t members[FIB_MP_MAX]; /* FIB ids, in the kernel's order */
	unsigned n;
	uint32_t fib_id;
	uint32_t refs;
};

/*
 * A kernel nexthop object (`ip nexthop`, what FRR's zebra installs routes
 * with): a FIB next hop of its own, which the routes naming it (RTA_NH_ID)
 * point at, so that a change of the object is one store under all of them
 * and no route is rewritten. A single object's word is a copy of its
 * (ifindex, gateway) next hop's, kept in step with the neighbour; a
 * blackhole's is DROP; a group's is a FIB group of its members' own next
 * hops, each repeated in proportion to its weight, with room to change in
 * place (fib_nh_group_set()).
 */
struct mmember {
	uint32_t obj;	 /* index in m->obj */
	uint32_t weight; /* the kernel's, 1..65536 */
};

struct mobj {
	uint32_t kid;	 /* the kernel's id */
	uint32_t fib_id; /* 0: the slot is free */
	uint32_t refs;	 /* 1 while the kernel has it, + routes, + groups */
	uint32_t routes; /* FIB routes through fib_id */
	uint8_t live;	 /* the kernel has it: in the id table */
	uint8_t stale;	 /* a re-dump has not shown it (yet) */
	uint8_t group;
	uint8_t blackhole;
	uint8_t fib_group; /* fib_id is a FIB group */
	uint8_t dying;	   /* gone from the kernel: objs_bury() pending */
	uint32_t nh;	   /* single, not blackhole: index in m->nh */
	uint32_t next;	   /* next object of that m->nh (or free): index + 1 */
	struct mmember *mem; /* group: the kernel's members */
	unsigned n_mem;
};

struct nlmirror {
	struct nlmirror_params p;
	/* Events on two sockets: a burst of routes (a full table; with
	 * nexthop_compat_mode every route through a changed object, sent
	 * before the object's own message) may overrun its socket, never the
	 * other's links, addresses, neighbours and objects. */
	struct mnl_socket *ev;	   /* routes; resolve and fib-match requests */
	struct mnl_socket *ev_obj; /* links, addresses, neighbours, nexthops */
	struct mnl_socket *req;	   /* dumps */
	int epfd;		   /* both event sockets: nlmirror_fd() */
	uint32_t req_portid, seq;
	struct nlmirror_counters c;
	bool resync;	    /* everything dumped again */
	bool resync_routes; /* only the routes (their socket overran) */

	struct mnh *nh; /* never shrinks: a key keeps its slot */
	size_t n_nh, cap_nh;
	uint32_t *nh_hash; /* slot + 1, 0 empty; power-of-two size */
	size_t cap_hash;
	struct mgrp *grp;
	size_t n_grp, cap_grp;
	uint32_t *map; /* FIB id -> MAP_* | index */
	uint32_t map_size;
	uint32_t nh_local, nh_drop;

	struct mobj *obj; /* a slot keeps its index; free ones are listed */
	size_t n_obj, cap_obj;
	uint32_t obj_free;  /* first free slot's index + 1 */
	uint32_t *obj_hash; /* kernel id -> index + 1, 0 empty; power of 2 */
	size_t cap_obj_hash, n_live, n_dying;

	struct nlmirror_link *links;
	size_t n_links, cap_links;
	int vlan_if[ROUTE_VLAN_MAX]; /* VLAN slot -> ifindex, 0 free */
	struct {
		uint32_t id;	 /* the kernel's table, 0: slot free */
		int vrf_ifindex; /* the VRF device of that table */
	} tables[FIB_TABLES];	 /* [0]: the main table (p.table) */
	struct nlmirror_addr *addrs;
	size_t n_addrs, cap_addrs;
	/* dump batches can be 32 KiB; room to spare avoids MSG_TRUNC */
	char buf[65536];
	char rbuf[65536]; /* a batch of routes, while objects are read */
};

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t cap2 = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return 0;
	while (cap2 < need)
		cap2 *= 2;
	p = realloc(*arr, cap2 * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = cap2;
	return 0;
}

static unsigned alen(int family)
{
	return family == 4 ? 4 : 16;
}

static int fam_of(int af)
{
	return af == AF_INET ? 4 : af == AF_INET6 ? 6 : 0;
}

/* ---- next hops ---- */

static uint64_t key_hash(const struct nh_key *k)
{
	const uint8_t *b = (const uint8_t *)k;
	uint64_t h = 1469598103934665603ull;
	size_t i;

	for (i = 0; i < sizeof(*k); i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h ^ (h >> 31);
}

static int hash_insert(struct nlmirror *m, size_t slot)
{
	size_t i;

	if ((m->n_nh + 1) * 2 > m->cap_hash) {
		size_t cap = m->cap_hash ? m->cap_hash * 2 : 256, j;
		uint32_t *h = calloc(cap, sizeof(*h));

		if (!h)
			return -ENOMEM;
		for (j = 0; j < m->n_nh; j++) {
			if (j == slot)
				continue;
			for (i = key_hash(&m->nh[j].key) & (cap - 1); h[i];
			     i = (i + 1) & (cap - 1))
				;
			h[i] = (uint32_t)j + 1;
		}
		free(m->nh_hash);
		m->nh_hash = h;
		m->cap_hash = cap;
	}
	for (i = key_hash(&m->nh[slot].key) & (m->cap_hash - 1); m->nh_hash[i];
	     i = (i + 1) & (m->cap_hash - 1))
		;
	m->nh_hash[i] = (uint32_t)slot + 1;
	return 0;
}

static struct mnh *nh_find(const struct nlmirror *m, const struct nh_key *k)
{
	size_t i;

	if (!m->cap_hash)
		return NULL;
	for (i = key_hash(k) & (m->cap_hash - 1); m->nh_hash[i];
	     i = (i + 1) & (m->cap_hash - 1)) {
		struct mnh *n = &m->nh[m->nh_hash[i] - 1];

		if (!memcmp(&n->key, k, sizeof(*k)))
			return n;
	}
	return NULL;
}

static const struct nlmirror_link *link_of(const struct nlmirror *m,
					   int ifindex)
{
	size_t i;

	for (i = 0; i < m->n_links; i++)
		if (m->links[i].ifindex == ifindex)
			return &m->links[i];
	return NULL;
}

/* The FIB table of kernel table id, -1 if it is not followed. */
static int table_slot(const struct nlmirror *m, uint32_t id)
{
	unsigned t;

	if (id == m->p.table)
		return 0;
	for (t = 1; t < NLMIRROR_TABLE_NONE; t++)
		if (m->tables[t].id == id)
			return (int)t;
	return -1;
}

/* The FIB table of interface ifindex: its master VRF's (a VRF: its own),
 * else the main one. */
static unsigned link_table(const struct nlmirror *m, int ifindex)
{
	const struct nlmirror_link *l = link_of(m, ifindex);
	int t;

	if (l && l->kind != NLMIRROR_LINK_VRF && l->master)
		l = link_of(m, l->master);
	if (!l || l->kind != NLMIRROR_LINK_VRF)
		return 0;
	t = table_slot(m, l->vrf_table);
	return t < 0 ? NLMIRROR_TABLE_NONE : (unsigned)t;
}

static void nh_info(const struct nlmirror *m, const struct mnh *n,
		    struct fib_nh_info *in)
{
	const struct nlmirror_link *l = link_of(m, n->key.ifindex);

	memset(in, 0, sizeof(*in));
	in->port = l && l->port >= 0 ? (uint16_t)l->port : FIB_PORT_NONE;
	if (n->key.kind == NH_CONN) {
		in->flags = FIB_NH_F_CONNECTED;
	} else if (n->neigh) {
		in->flags = FIB_NH_F_NEIGH;
		memcpy(in->mac, n->mac, 6);
	}
}

/* The neighbour or the port of n changed: its FIB word, and the words of
 * the nexthop objects through it, which are copies. */
static void nh_sync(struct nlmirror *m, struct mnh *n)
{
	struct fib_nh_info in;
	uint32_t o;

	if (!n->fib_id)
		return;
	nh_info(m, n, &in);
	fib_nh_set(m->p.fib, n->fib_id, &in);
	for (o = n->objs; o; o = m->obj[o - 1].next)
		fib_nh_set(m->p.fib, m->obj[o - 1].fib_id, &in);
}

/* A reference to the next hop of key, created if need be. */
static struct mnh *nh_get(struct nlmirror *m, const struct nh_key *k)
{
	struct mnh *n = nh_find(m, k);
	struct fib_nh_info in;
	int id;

	if (!n) {
		if (grow((void **)&m->nh, &m->cap_nh, m->n_nh + 1,
			 sizeof(*m->nh)))
			return NULL;
		n = &m->nh[m->n_nh];
		memset(n, 0, sizeof(*n));
		n->key = *k;
		if (hash_insert(m, m->n_nh))
			return NULL;
		m->n_nh++;
	}
	if (!n->fib_id) {
		nh_info(m, n, &in);
		id = fib_nh_alloc(m->p.fib, &in);
		if (id < 0) {
			m->c.fib_errors++;
			return NULL;
		}
		n->fib_id = (uint32_t)id;
		if ((uint32_t)id < m->map_size)
			m->map[id] = MAP_SINGLE | (uint32_t)(n - m->nh);
	}
	n->refs++;
	return n;
}

static void nh_put(struct nlmirror *m, struct mnh *n)
{
	if (--n->refs)
		return;
	if (n->fib_id < m->map_size)
		m->map[n->fib_id] = 0;
	fib_nh_free(m->p.fib, n->fib_id);
	n->fib_id = 0;
}

static void grp_put(struct nlmirror *m, struct mgrp *g);
static void obj_put(struct nlmirror *m, uint32_t idx);

/* Drop a reference to whatever FIB next hop id stands for. */
static void id_put(struct nlmirror *m, uint32_t id)
{
	uint32_t v;

	if (id == m->nh_local || id == m->nh_drop || id >= m->map_size)
		return;
	v = m->map[id];
	if ((v & MAP_KIND) == MAP_SINGLE) {
		nh_put(m, &m->nh[v & ~MAP_KIND]);
	} else if ((v & MAP_KIND) == MAP_GROUP) {
		grp_put(m, &m->grp[v & ~MAP_KIND]);
	} else if ((v & MAP_KIND) == MAP_OBJ) {
		/* only routes hold an object by its FIB id */
		m->obj[v & ~MAP_KIND].routes--;
		obj_put(m, v & ~MAP_KIND);
	}
}

static void grp_put(struct nlmirror *m, struct mgrp *g)
{
	unsigned i;

	if (--g->refs)
		return;
	if (g->fib_id < m->map_size)
		m->map[g->fib_id] = 0;
	fib_nh_free(m->p.fib, g->fib_id);
	g->fib_id = 0;
	for (i = 0; i < g->n; i++)
		id_put(m, g->members[i]);
	g->n = 0;
}

/* A reference to the group of these members (each already referenced:
 * the group keeps those references, or gives them back if it exists). */
static uint32_t grp_get(struct nlmirror *m, const uint32_t *ids, unsigned n)
{
	struct mgrp *g, *free_g = NULL;
	size_t i;
	unsigned k;
	int id;

	for (i = 0; i < m->n_grp; i++) {
		g = &m->grp[i];
		if (!g->fib_id) {
			free_g = free_g ? free_g : g;
			continue;
		}
		if (g->n == n && !memcmp(g->members, ids, n * sizeof(*ids))) {
			for (k = 0; k < n; k++)
				id_put(m, ids[k]);
			g->refs++;
			return g->fib_id;
		}
	}
	id = fib_nh_group_alloc(m->p.fib, ids, n);
	if (id < 0)
		goto err;
	if (!free_g) {
		if (grow((void **)&m->grp, &m->cap_grp, m->n_grp + 1,
			 sizeof(*m->grp))) {
			fib_nh_free(m->p.fib, (uint32_t)id);
			goto err;
		}
		free_g = &m->grp[m->n_grp++];
	}
	memcpy(free_g->members, ids, n * sizeof(*ids));
	free_g->n = n;
	free_g->fib_id = (uint32_t)id;
	free_g->refs = 1;
	if ((uint32_t)id < m->map_size)
		m->map[id] = MAP_GROUP | (uint32_t)(free_g - m->grp);
	return (uint32_t)id;
err:
	m->c.fib_errors++;
	for (k = 0; k < n; k++)
		id_put(m, ids[k]);
	return FIB_NH_NONE;
}

/* ---- routes in the FIB ---- */

static void key_bytes(int family, const uint8_t *addr, uint8_t out[16])
{
	memset(out, 0, 16);
	memcpy(out, addr, alen(family));
}

static uint32_t route_get(struct nlmirror *m, unsigned t, int family,
			  const uint8_t *k, unsigned len, uint32_t **tag)
{
	uint32_t nh;

	if (family == 4) {
		uint32_t a;

		memcpy(&a, k, 4);
		nh = fib4_get_in(m->p.fib, t, ntohl(a), len);
	} else {
		nh = fib6_get_in(m->p.fib, t, k, len);
	}
	*tag = nh ? fib_route_tag_in(m->p.fib, t, family, k, len) : NULL;
	return nh;
}

/* Install prefix -> nh (a reference the route takes over) with tag,
 * unless a route that wins over it holds the prefix. */
static void route_set(struct nlmirror *m, unsigned t, int family,
		      const uint8_t *k, unsigned len, uint32_t nh, uint32_t tag)
{
	uint32_t *old_tag, old = route_get(m, t, family, k, len, &old_tag);
	int err;

	if (old && old_tag) {
		bool wins;

		if (tag == TAG_NEIGH)
			wins = false; /* any route beats a neighbour's */
		else if (tag & TAG_LOCAL)
			wins = true;
		else if (*old_tag & TAG_LOCAL)
			wins = false;
		else if (*old_tag & TAG_KERNEL)
			wins = (tag & TAG_METRIC) <= (*old_tag & TAG_METRIC);
		else
			wins = true;
		if (!wins) {
			if ((tag & TAG_KERNEL) && (*old_tag & TAG_KERNEL)) {
				m->c.routes_shadowed++;
				*old_tag |= TAG_SHADOW;
			}
			id_put(m, nh);
			return;
		}
		if ((tag & TAG_KERNEL) && (*old_tag & TAG_KERNEL)) {
			/* same metric: a replace, whatever was behind stays
			 * behind; lower: the old route goes behind */
			if ((tag & TAG_METRIC) == (*old_tag & TAG_METRIC))
				tag |= *old_tag & TAG_SHADOW;
			else
				tag |= TAG_SHADOW;
		}
	}
	if (family == 4) {
		uint32_t a;

		memcpy(&a, k, 4);
		err = fib4_add_in(m->p.fib, t, ntohl(a), len, nh);
	} else {
		err = fib6_add_in(m->p.fib, t, k, len, nh);
	}
	if (err) {
		m->c.fib_errors++;
		id_put(m, nh);
		return;
	}
	*fib_route_tag_in(m->p.fib, t, family, k, len) = tag;
	if (old)
		id_put(m, old);
	if (tag & TAG_KERNEL)
		m->c.routes_added++;
	if (m->p.on_route)
		m->p.on_route(m->p.arg, NLMIRROR_ROUTE_ADD, family, k, len, nh);
}

/* Remove prefix if the route there is the one described (by tag kind and,
 * for kernel routes, metric; for neighbour routes, next hop). */
static void ask_fib_match(struct nlmirror *m, unsigned t, int family,
			  const uint8_t *k, unsigned len);

static void route_unset(struct nlmirror *m, unsigned t, int family,
			const uint8_t *k, unsigned len, uint32_t tag,
			uint32_t nh)
{
	uint32_t *old_tag, old = route_get(m, t, family, k, len, &old_tag);
	bool behind;

	if (!old || !old_tag)
		return;
	if ((tag & TAG_KERNEL) && (*old_tag & ~TAG_SHADOW) != tag)
		return;
	behind = *old_tag & TAG_SHADOW;
	if ((tag & TAG_LOCAL) && !(*old_tag & TAG_LOCAL))
		return;
	if (tag == TAG_NEIGH && (*old_tag != TAG_NEIGH || old != nh))
		return;
	if (family == 4) {
		uint32_t a;

		memcpy(&a, k, 4);
		fib4_del_in(m->p.fib, t, ntohl(a), len);
	} else {
		fib6_del_in(m->p.fib, t, k, len);
	}
	id_put(m, old);
	if (tag & TAG_KERNEL)
		m->c.routes_deleted++;
	/* a route of this prefix with a higher metric was behind it: the
	 * kernel's own lookup says which one wins now */
	if (behind)
		ask_fib_match(m, t, family, k, len);
	if (m->p.on_route)
		m->p.on_route(m->p.arg, NLMIRROR_ROUTE_DEL, family, k, len,
			      old);
}

/* ---- nexthop objects ---- */

static size_t kid_slot(uint32_t kid, size_t cap)
{
	return (size_t)(kid * 2654435761u) & (cap - 1);
}

static struct mobj *obj_find(const struct nlmirror *m, uint32_t kid)
{
	size_t i;

	if (!m->cap_obj_hash)
		return NULL;
	for (i = kid_slot(kid, m->cap_obj_hash); m->obj_hash[i];
	     i = (i + 1) & (m->cap_obj_hash - 1))
		if (m->obj[m->obj_hash[i] - 1].kid == kid)
			return &m->obj[m->obj_hash[i] - 1];
	return NULL;
}

static void obj_hash_put(uint32_t *h, size_t cap, uint32_t kid, uint32_t idx)
{
	size_t i;

	for (i = kid_slot(kid, cap); h[i]; i = (i + 1) & (cap - 1))
		;
	h[i] = idx + 1;
}

/* Object idx (kid set) into the id table: the kernel has it. */
static int obj_hash_add(struct nlmirror *m, uint32_t idx)
{
	size_t j;

	if ((m->n_live + 1) * 2 > m->cap_obj_hash) {
		size_t cap = m->cap_obj_hash ? m->cap_obj_hash * 2 : 64;
		uint32_t *h = calloc(cap, sizeof(*h));

		if (!h)
			return -ENOMEM;
		for (j = 0; j < m->n_obj; j++)
			if (m->obj[j].live)
				obj_hash_put(h, cap, m->obj[j].kid,
					     (uint32_t)j);
		free(m->obj_hash);
		m->obj_hash = h;
		m->cap_obj_hash = cap;
	}
	obj_hash_put(m->obj_hash, m->cap_obj_hash, m->obj[idx].kid, idx);
	m->obj[idx].live = 1;
	m->n_live++;
	return 0;
}

/* Linear probing's delete: the entries after the hole that may not stay
 * behind it (their home is not between the hole and them) move into it. */
static void obj_hash_del(struct nlmirror *m, uint32_t kid)
{
	size_t mask = m->cap_obj_hash - 1, i, j, home;

	for (i = kid_slot(kid, m->cap_obj_hash); m->obj_hash[i];
	     i = (i + 1) & mask)
		if (m->obj[m->obj_hash[i] - 1].kid == kid)
			break;
	if (!m->obj_hash[i])
		return;
	for (j = (i + 1) & mask; m->obj_hash[j]; j = (j + 1) & mask) {
		home = kid_slot(m->obj[m->obj_hash[j] - 1].kid,
				m->cap_obj_hash);
		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->obj_hash[i] = m->obj_hash[j];
			i = j;
		}
	}
	m->obj_hash[i] = 0;
	m->n_live--;
}

/* A free object slot (may move m->obj): its index, or -ENOMEM. */
static int obj_alloc(struct nlmirror *m)
{
	uint32_t idx;

	if (m->obj_free) {
		idx = m->obj_free - 1;
		m->obj_free = m->obj[idx].next;
	} else {
		if (grow((void **)&m->obj, &m->cap_obj, m->n_obj + 1,
			 sizeof(*m->obj)))
			return -ENOMEM;
		idx = (uint32_t)m->n_obj++;
	}
	memset(&m->obj[idx], 0, sizeof(m->obj[idx]));
	return (int)idx;
}

static void obj_release(struct nlmirror *m, uint32_t idx)
{
	memset(&m->obj[idx], 0, sizeof(m->obj[idx]));
	m->obj[idx].next = m->obj_free;
	m->obj_free = idx + 1;
}

/* A single object onto / off the list of its (ifindex, gateway) next hop,
 * whose neighbour changes it follows (nh_sync). */
static void obj_link(struct nlmirror *m, uint32_t idx, uint32_t nh)
{
	m->obj[idx].nh = nh;
	m->obj[idx].next = m->nh[nh].objs;
	m->nh[nh].objs = idx + 1;
}

/* Off the list only: the caller puts the next hop once nothing copies it. */
static void obj_unlist(struct nlmirror *m, uint32_t idx)
{
	uint32_t *p = &m->nh[m->obj[idx].nh].objs;

	while (*p && *p != idx + 1)
		p = &m->obj[*p - 1].next;
	if (*p)
		*p = m->obj[idx].next;
	m->obj[idx].next = 0;
}

/* What the object held before a change: its next hop or its members. */
struct obj_was {
	uint8_t single; /* had m->nh[nh] (not a blackhole) */
	uint32_t nh;
	struct mmember *mem;
	unsigned n_mem;
};

static void obj_was_put(struct nlmirror *m, const struct obj_was *w)
{
	unsigned i;

	if (w->single)
		nh_put(m, &m->nh[w->nh]);
	for (i = 0; i < w->n_mem; i++)
		obj_put(m, w->mem[i].obj);
	free(w->mem);
}

static void obj_put(struct nlmirror *m, uint32_t idx)
{
	struct mobj *o = &m->obj[idx];
	struct obj_was w = {0};

	if (--o->refs)
		return;
	/* the kernel deleted it and nothing names it any more */
	if (o->fib_id) {
		if (o->fib_id < m->map_size)
			m->map[o->fib_id] = 0;
		fib_nh_free(m->p.fib, o->fib_id);
	}
	if (o->group) {
		w.mem = o->mem;
		w.n_mem = o->n_mem;
	} else if (!o->blackhole && o->fib_id) {
		obj_unlist(m, idx);
		w.single = 1;
		w.nh = o->nh;
	}
	obj_release(m, idx);
	obj_was_put(m, &w);
}

/* The routes through FIB next hop id (0: through any dying object), as
 * (family, prefix, len). */
struct rkey {
	uint8_t family, len, t;
	uint8_t k[16];
};

struct rkeys {
	const struct nlmirror *m;
	uint32_t id;
	int family;
	unsigned t;
	struct rkey *r;
	size_t n, cap;
};

static bool nh_dying(const struct nlmirror *m, uint32_t nh)
{
	return nh < m->map_size && (m->map[nh] & MAP_KIND) == MAP_OBJ &&
	       m->obj[m->map[nh] & ~MAP_KIND].dying;
}

static int rkeys_cb(void *arg, const uint8_t prefix[16], unsigned len,
		    uint32_t nh)
{
	struct rkeys *a = arg;

	if (a->id ? nh != a->id : !nh_dying(a->m, nh))
		return 0;
	if (grow((void **)&a->r, &a->cap, a->n + 1, sizeof(*a->r)))
		return -ENOMEM;
	a->r[a->n].family = (uint8_t)a->family;
	a->r[a->n].len = (uint8_t)len;
	a->r[a->n].t = (uint8_t)a->t;
	memcpy(a->r[a->n].k, prefix, 16);
	a->n++;
	return 0;
}

/* Collected first: the walk must not see the table change under it. */
static int routes_via(struct nlmirror *m, uint32_t id, struct rkeys *a)
{
	int err;

	memset(a, 0, sizeof(*a));
	a->m = m;
	a->id = id;
	err = 0;
	for (a->t = 0; !err && a->t < FIB_TABLES; a->t++) {
		a->family = 4;
		err = fib_walk_in(m->p.fib, a->t, 4, rkeys_cb, a);
		a->family = 6;
		if (!err)
			err = fib_walk_in(m->p.fib, a->t, 6, rkeys_cb, a);
	}
	if (err)
		m->c.fib_errors++;
	return err;
}

static int fib_route_add(struct nlmirror *m, unsigned t, int family,
			 const uint8_t *k, unsigned len, uint32_t nh)
{
	uint32_t a;

	if (family == 6)
		return fib6_add_in(m->p.fib, t, k, len, nh);
	memcpy(&a, k, 4);
	return fib4_add_in(m->p.fib, t, ntohl(a), len, nh);
}

/*
 * The object's FIB next hop becomes id (a group that outgrew its room,
 * a single made a group): each route through the old one is pointed at id
 * (a replace in place, its tag kept), then the old one is freed, through
 * the grace period. The only case where an object's change touches its
 * routes one by one.
 */
static void obj_repoint(struct nlmirror *m, uint32_t idx, uint32_t id,
			bool group)
{
	struct mobj *o = &m->obj[idx];
	uint32_t old = o->fib_id;
	struct rkeys a = {0};
	size_t i;

	if (old && o->routes && !routes_via(m, old, &a)) {
		for (i = 0; i < a.n; i++) {
			struct rkey *r = &a.r[i];

			if (fib_route_add(m, r->t, r->family, r->k, r->len,
					  id)) {
				m->c.fib_errors++;
				continue;
			}
			if (m->p.on_route)
				m->p.on_route(m->p.arg, NLMIRROR_ROUTE_ADD,
					      r->family, r->k, r->len, id);
		}
	}
	free(a.r);
	if (id < m->map_size)
		m->map[id] = MAP_OBJ | idx;
	o->fib_id = id;
	o->fib_group = group;
	if (old) {
		if (old < m->map_size)
			m->map[old] = 0;
		fib_nh_free(m->p.fib, old);
	}
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * The FIB paths of group g: each member's own next hop, repeated by its
 * weight, since a FIB group picks its paths evenly. Weights are divided
 * by their common divisor; if they still need more than FIB_MP_MAX
 * slots, each member gets its share of FIB_MP_MAX (at least one), the
 * slots left over going to those furthest below theirs. Members past
 * FIB_MP_MAX are left out, counted.
 */
static unsigned grp_paths(struct nlmirror *m, uint32_t g, uint32_t *ids)
{
	const struct mobj *o = &m->obj[g];
	uint64_t w[FIB_MP_MAX], total = 0, div = 0;
	uint32_t fid[FIB_MP_MAX];
	unsigned cnt[FIB_MP_MAX], n = 0, sum = 0, i, k, out = 0;

	for (i = 0; i < o->n_mem; i++) {
		const struct mobj *p = &m->obj[o->mem[i].obj];

		if (p->group || !p->fib_id)
			continue; /* the kernel nests no groups either */
		if (n == FIB_MP_MAX) {
			m->c.nh_unsupported++;
			break;
		}
		fid[n] = p->fib_id;
		w[n] = o->mem[i].weight;
		div = gcd64(div, w[n]);
		n++;
	}
	for (i = 0; i < n; i++) {
		w[i] /= div;
		total += w[i];
	}
	for (i = 0; i < n; i++) {
		cnt[i] = total <= FIB_MP_MAX
				 ? (unsigned)w[i]
				 : (unsigned)(w[i] * FIB_MP_MAX / total);
		cnt[i] += !cnt[i];
		sum += cnt[i];
	}
	/* share error of i: w[i] * MAX - cnt[i] * total (scaled by total) */
	while (total > FIB_MP_MAX && sum != FIB_MP_MAX) {
		bool more = sum < FIB_MP_MAX;
		int64_t best = 0, e;
		unsigned pick = n;

		for (i = 0; i < n; i++) {
			e = (int64_t)(w[i] * FIB_MP_MAX) -
			    (int64_t)(cnt[i] * total);
			if (!more && cnt[i] == 1)
				continue;
			if (pick == n || (more ? e > best : e < best)) {
				best = e;
				pick = i;
			}
		}
		if (pick == n)
			break;
		cnt[pick] = more ? cnt[pick] + 1 : cnt[pick] - 1;
		sum = more ? sum + 1 : sum - 1;
	}
	for (i = 0; i < n; i++)
		for (k = 0; k < cnt[i] && out < FIB_MP_MAX; k++)
			ids[out++] = fid[i];
	return out;
}

/* Room for a group of n paths to grow without moving. */
static unsigned grp_room(unsigned n)
{
	unsigned r = 4;

	while (r <= n && r < FIB_MP_MAX)
		r *= 2;
	return r < n ? n : r;
}

/* The FIB side of group g after its members changed: in place when it
 * has the room, else a new FIB group the routes move to. */
static int grp_obj_sync(struct nlmirror *m, uint32_t g)
{
	uint32_t ids[FIB_MP_MAX];
	unsigned n = grp_paths(m, g, ids);
	int id;

	if (!n)
		return -ENOENT;
	if (m->obj[g].fib_group &&
	    !fib_nh_group_set(m->p.fib, m->obj[g].fib_id, ids, n))
		return 0;
	id = fib_nh_group_alloc_room(m->p.fib, ids, n, grp_room(n));
	if (id < 0) {
		m->c.fib_errors++;
		return id;
	}
	obj_repoint(m, g, (uint32_t)id, true);
	return 0;
}

/* The kernel no longer has object idx (RTM_DELNEXTHOP, its link went
 * down, or a re-dump did not show it): out of the id table, and marked
 * for objs_bury(), which takes away what goes with it. */
static void obj_doom(struct nlmirror *m, uint32_t idx)
{
	struct mobj *o = &m->obj[idx];

	if (!o->live)
		return;
	obj_hash_del(m, o->kid);
	o->live = 0;
	o->dying = 1;
	m->n_dying++;
	m->c.nexthops_deleted++;
}

/*
 * What the kernel does, silently, when objects go: each group drops its
 * members among them (a group left empty goes too), and every route
 * through one of them is deleted, without an RTM_DELROUTE (IPv4 always,
 * IPv6 unless net.ipv4.nexthop_compat_mode). Here the same, for all the
 * dying objects at once: one walk of the FIB however many went (a link
 * down takes all of its objects), each route removed as if deleted (a
 * higher-metric route behind it is asked for).
 */
static void objs_bury(struct nlmirror *m)
{
	struct rkeys a = {0};
	size_t g, i;
	bool walk = false;

	if (!m->n_dying)
		return;
	for (g = 0; g < m->n_obj; g++) {
		struct mobj *o = &m->obj[g];
		unsigned k = 0, n = o->n_mem;

		if (!o->live || !o->group)
			continue;
		/* the kept members to the front, the dying ones behind */
		for (i = 0; i < n; i++)
			if (!m->obj[o->mem[i].obj].dying) {
				struct mmember t = o->mem[k];

				o->mem[k++] = o->mem[i];
				o->mem[i] = t;
			}
		if (k == n)
			continue;
		o->n_mem = k;
		/* the paths rebuilt before a dying member may be freed */
		if (!k || grp_obj_sync(m, (uint32_t)g))
			obj_doom(m, (uint32_t)g);
		for (i = k; i < n; i++)
			obj_put(m, o->mem[i].obj);
	}
	for (i = 0; i < m->n_obj; i++)
		walk |= m->obj[i].dying && m->obj[i].routes;
	if (walk && !routes_via(m, 0, &a)) {
		for (i = 0; i < a.n; i++) {
			struct rkey *r = &a.r[i];
			uint32_t *tag = fib_route_tag_in(
				m->p.fib, r->t, r->family, r->k, r->len);

			if (tag)
				route_unset(m, r->t, r->family, r->k, r->len,
					    *tag & ~TAG_SHADOW, 0);
		}
	}
	free(a.r);
	for (i = 0; i < m->n_obj; i++) {
		if (!m->obj[i].dying)
			continue;
		m->obj[i].dying = 0;
		m->n_dying--;
		obj_put(m, (uint32_t)i); /* the kernel's */
	}
}

static void obj_kill(struct nlmirror *m, uint32_t idx)
{
	obj_doom(m, idx);
	objs_bury(m);
}

/* Groups listing idx, which is no longer a single next hop: their paths
 * without it (the kernel refuses this while it is a member; not relied
 * on). */
static void groups_resync(struct nlmirror *m, uint32_t idx)
{
	size_t g;
	unsigned i;

	for (g = 0; g < m->n_obj; g++) {
		struct mobj *o = &m->obj[g];

		if (!o->live || !o->group)
			continue;
		for (i = 0; i < o->n_mem && o->mem[i].obj != idx; i++)
			;
		if (i < o->n_mem && grp_obj_sync(m, (uint32_t)g))
			obj_doom(m, (uint32_t)g);
	}
	objs_bury(m);
}

/* Object idx becomes a single next hop: through key, or a blackhole. The
 * change of an existing single one is the one store of fib_nh_set(). */
static int obj_set_single(struct nlmirror *m, uint32_t idx,
			  const struct nh_key *key)
{
	struct fib_nh_info in = {.port = FIB_PORT_NONE, .flags = FIB_NH_F_DROP};
	struct obj_was was = {0};
	struct mobj *o = &m->obj[idx];
	uint32_t nh = 0;
	int id;

	if (key) {
		struct mnh *n = nh_get(m, key);

		if (!n)
			return -ENOMEM;
		nh = (uint32_t)(n - m->nh);
		nh_info(m, n, &in);
	}
	if (o->group) {
		was.mem = o->mem;
		was.n_mem = o->n_mem;
	} else if (!o->blackhole && o->fib_id) {
		/* its reference is put once the word no longer copies it */
		obj_unlist(m, idx);
		was.single = 1;
		was.nh = o->nh;
	}
	if (o->fib_id && !o->fib_group) {
		fib_nh_set(m->p.fib, o->fib_id, &in);
	} else {
		id = fib_nh_alloc(m->p.fib, &in);
		if (id < 0) {
			m->c.fib_errors++;
			if (key)
				nh_put(m, &m->nh[nh]);
			/* left as it was, but for the list: back on it */
			if (was.single)
				obj_link(m, idx, was.nh);
			return id;
		}
		obj_repoint(m, idx, (uint32_t)id, false);
	}
	o = &m->obj[idx];
	o->group = 0;
	o->mem = NULL;
	o->n_mem = 0;
	o->blackhole = !key;
	if (key)
		obj_link(m, idx, nh);
	obj_was_put(m, &was);
	return 0;
}

/* Object idx becomes a group of mem (n entries, each member referenced:
 * the object takes mem and those references over). */
static int obj_set_group(struct nlmirror *m, uint32_t idx, struct mmember *mem,
			 unsigned n)
{
	struct mobj *o = &m->obj[idx];
	struct obj_was was = {.mem = o->mem, .n_mem = o->n_mem};
	int err;

	if (!o->group && !o->blackhole && o->fib_id) {
		obj_unlist(m, idx);
		was.single = 1;
		was.nh = o->nh;
		was.mem = NULL;
		was.n_mem = 0;
	} else if (!o->group) {
		was.mem = NULL;
		was.n_mem = 0;
	}
	o->group = 1;
	o->blackhole = 0;
	o->mem = mem;
	o->n_mem = n;
	err = grp_obj_sync(m, idx);
	if (was.single)
		groups_resync(m, idx);
	obj_was_put(m, &was);
	return err;
}

/* ---- netlink messages ---- */

#define ATTR_MAX 64
_Static_assert(RTA_MAX < ATTR_MAX && IFLA_MAX < ATTR_MAX &&
		       NDA_MAX < ATTR_MAX && IFA_MAX < ATTR_MAX &&
		       NHA_MAX < ATTR_MAX,
	       "attribute table too small");

static int attrs_cb(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(a);

	if (type >= 0 && type < ATTR_MAX)
		tb[type] = a;
	return MNL_CB_OK;
}

static bool attr_addr(const struct nlattr *a, int family, uint8_t *out)
{
	if (!a || mnl_attr_get_payload_len(a) < alen(family))
		return false;
	memcpy(out, mnl_attr_get_payload(a), alen(family));
	return true;
}

struct path {
	int ifindex;
	bool gw;
	uint8_t addr[16];
};

static uint32_t path_ref(struct nlmirror *m, int family, const struct path *p)
{
	struct nh_key k = {.kind = p->gw ? NH_GW : NH_CONN,
			   .family = (uint8_t)family,
			   .ifindex = p->ifindex};
	struct mnh *n;

	if (p->gw)
		memcpy(k.addr, p->addr, alen(family));
	n = nh_get(m, &k);
	return n ? n->fib_id : FIB_NH_NONE;
}

static bool path_is(const struct nlmirror *m, uint32_t id, int family,
		    const struct path *p)
{
	const struct mnh *n;

	if (id >= m->map_size || (m->map[id] & MAP_KIND) != MAP_SINGLE)
		return false;
	n = &m->nh[m->map[id] & ~MAP_KIND];
	if (n->key.family != family || n->key.ifindex != p->ifindex ||
	    n->key.kind != (p->gw ? NH_GW : NH_CONN))
		return false;
	return !p->gw || !memcmp(n->key.addr, p->addr, alen(family));
}

/*
 * A route delete. IPv6 deletes one path of a multipath route on its own
 * (`ip -6 route del P via G`: one RTM_DELROUTE with that path, no new
 * route for the rest), so paths that leave a group the others of which
 * remain make a smaller group; a delete naming every path (IPv4 always
 * does) removes the route.
 */
static void route_del_paths(struct nlmirror *m, unsigned t, int family,
			    const uint8_t *k, unsigned len, uint32_t tag,
			    const struct path *paths, unsigned n)
{
	uint32_t *cur_tag, cur = route_get(m, t, family, k, len, &cur_tag);
	uint32_t members[FIB_MP_MAX], keep[FIB_MP_MAX];
	unsigned cnt = FIB_MP_MAX, kept = 0, i, j;

	if (!cur || !cur_tag || (*cur_tag & ~TAG_SHADOW) != tag ||
	    cur >= m->map_size || (m->map[cur] & MAP_KIND) != MAP_GROUP ||
	    fib_nh_group_get(m->p.fib, cur, members, &cnt)) {
		route_unset(m, t, family, k, len, tag, 0);
		return;
	}
	for (i = 0; i < cnt; i++) {
		for (j = 0; j < n && !path_is(m, members[i], family, &paths[j]);
		     j++)
			;
		if (j == n)
			keep[kept++] = members[i];
	}
	if (!kept || kept == cnt) {
		route_unset(m, t, family, k, len, tag, 0);
		return;
	}
	/* the remaining paths, referenced again for their new owner */
	for (i = 0; i < kept; i++)
		m->nh[m->map[keep[i]] & ~MAP_KIND].refs++;
	route_set(m, t, family, k, len,
		  kept == 1 ? keep[0] : grp_get(m, keep, kept), tag);
}

/* A route naming nexthop object kid: it points at the object's own FIB
 * next hop, whatever the object is (a blackhole's makes the route type
 * RTN_BLACKHOLE). */
static void route_obj(struct nlmirror *m, uint16_t type, unsigned t, int family,
		      const uint8_t *k, unsigned len, uint32_t tag,
		      uint32_t kid)
{
	struct mobj *o;

	if (type == RTM_DELROUTE) {
		route_unset(m, t, family, k, len, tag, 0);
		return;
	}
	o = obj_find(m, kid);
	if (!o) {
		m->c.nh_unknown++;
		return;
	}
	o->refs++;
	o->routes++;
	route_set(m, t, family, k, len, o->fib_id, tag);
}

/* A member's weight: the byte after the id holds weight - 1; the next one
 * (weight_high since 6.12, reserved and zero before, so older headers
 * lack the name) the high bits. */
_Static_assert(sizeof(struct nexthop_grp) == 8 &&
		       offsetof(struct nexthop_grp, weight) == 4,
	       "struct nexthop_grp layout");
static uint32_t grp_weight(const struct nexthop_grp *e)
{
	const uint8_t *b = (const uint8_t *)e;

	return ((uint32_t)b[5] << 8 | b[4]) + 1;
}

/* The members of an NHA_GROUP, each referenced; NULL (n 0) if none is
 * known. */
static struct mmember *grp_members(struct nlmirror *m, const struct nlattr *a,
				   unsigned *n)
{
	const struct nexthop_grp *e = mnl_attr_get_payload(a);
	unsigned cnt = mnl_attr_get_payload_len(a) / sizeof(*e), i;
	struct mmember *mem = calloc(cnt ? cnt : 1, sizeof(*mem));
	struct mobj *p;

	*n = 0;
	if (!mem)
		return NULL;
	for (i = 0; i < cnt; i++) {
		p = obj_find(m, e[i].id);
		if (!p || p->group) {
			m->c.nh_unknown++;
			continue;
		}
		p->refs++;
		mem[*n].obj = (uint32_t)(p - m->obj);
		mem[*n].weight = grp_weight(&e[i]);
		(*n)++;
	}
	if (!*n) {
		free(mem);
		return NULL;
	}
	return mem;
}

/*
 * RTM_NEWNEXTHOP / RTM_DELNEXTHOP. A new id is a new object; a known one
 * is replaced in place (`ip nexthop replace`): its routes follow through
 * its FIB next hop, with no route message. Groups of either type: a
 * resilient group's buckets only keep the kernel's own flows in place, so
 * here it is a plain group. FDB and encapsulating (MPLS, seg6) nexthops
 * are not forwarded: counted, and routes naming them count as unknown.
 */
static void on_nexthop(struct nlmirror *m, const struct nlmsghdr *nlh)
{
	const struct nhmsg *nhm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[ATTR_MAX] = {0};
	int family = fam_of(nhm->nh_family), idx, err;
	struct nh_key key = {0};
	struct mobj *o;
	uint32_t kid;
	bool created = false;

	mnl_attr_parse(nlh, sizeof(*nhm), attrs_cb, tb);
	if (!tb[NHA_ID])
		return;
	kid = mnl_attr_get_u32(tb[NHA_ID]);
	o = obj_find(m, kid);
	if (nlh->nlmsg_type == RTM_DELNEXTHOP) {
		if (o)
			obj_kill(m, (uint32_t)(o - m->obj));
		return;
	}
	if (tb[NHA_FDB] || tb[NHA_ENCAP] ||
	    (!tb[NHA_GROUP] && !tb[NHA_BLACKHOLE] &&
	     (!family || !tb[NHA_OIF]))) {
		m->c.nh_unsupported++;
		if (o)
			obj_kill(m, (uint32_t)(o - m->obj));
		return;
	}
	if (o) {
		idx = (int)(o - m->obj);
	} else {
		idx = obj_alloc(m);
		if (idx < 0)
			return;
		m->obj[idx].kid = kid;
		m->obj[idx].refs = 1; /* the kernel's */
		if (obj_hash_add(m, (uint32_t)idx)) {
			obj_release(m, (uint32_t)idx);
			return;
		}
		m->c.nexthops_added++;
		created = true;
	}
	m->obj[idx].stale = 0;
	if (tb[NHA_GROUP]) {
		unsigned n;
		struct mmember *mem = grp_members(m, tb[NHA_GROUP], &n);

		err = mem ? obj_set_group(m, (uint32_t)idx, mem, n) : -ENOENT;
	} else if (tb[NHA_BLACKHOLE]) {
		err = obj_set_single(m, (uint32_t)idx, NULL);
	} else {
		key.family = (uint8_t)family;
		key.ifindex = (int32_t)mnl_attr_get_u32(tb[NHA_OIF]);
		key.kind = attr_addr(tb[NHA_GATEWAY], family, key.addr)
				   ? NH_GW
				   : NH_CONN;
		err = obj_set_single(m, (uint32_t)idx, &key);
	}
	if (err) {
		/* not in the FIB as the kernel has it: not at all */
		obj_kill(m, (uint32_t)idx);
		return;
	}
	if (!created)
		m->c.nexthops_replaced++;
}

/* A link gone down, or without carrier: the kernel flushes the nexthop
 * objects through it (nexthop.c, nh_netdev_event) and tells no one, nor
 * of the routes and group paths that go with them. */
static void link_flush(struct nlmirror *m, int ifindex)
{
	size_t i;

	for (i = 0; i < m->n_obj; i++) {
		const struct mobj *o = &m->obj[i];

		if (o->live && !o->group && !o->blackhole &&
		    m->nh[o->nh].key.ifindex == ifindex) {
			obj_doom(m, (uint32_t)i);
			m->c.nexthops_flushed++;
		}
	}
	objs_bury(m);
}

static void on_route(struct nlmirror *m, const struct nlmsghdr *nlh)
{
	const struct rtmsg *rt = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[ATTR_MAX] = {0};
	int family = fam_of(rt->rtm_family);
	uint32_t table = rt->rtm_table, metric = 0, nh = FIB_NH_NONE, tag;
	struct path paths[FIB_MP_MAX];
	unsigned n = 0, i, t;
	int ts;
	uint8_t k[16] = {0};

	if (!family)
		return;
	mnl_attr_parse(nlh, sizeof(*rt), attrs_cb, tb);
	if (tb[RTA_TABLE])
		table = mnl_attr_get_u32(tb[RTA_TABLE]);
	ts = table_slot(m, table);
	if (ts < 0 || (rt->rtm_flags & RTM_F_CLONED) ||
	    (rt->rtm_type != RTN_UNICAST && rt->rtm_type != RTN_BLACKHOLE &&
	     rt->rtm_type != RTN_UNREACHABLE && rt->rtm_type != RTN_PROHIBIT)) {
		m->c.routes_ignored++;
		return;
	}
	/* with nexthop_compat_mode the route carries its object's paths
	 * too (RTA_GATEWAY, RTA_MULTIPATH): the object is what counts */
	if (!tb[RTA_NH_ID] && tb[RTA_VIA]) {
		m->c.routes_unsupported++;
		return;
	}
	if (rt->rtm_dst_len > alen(family) * 8 ||
	    (rt->rtm_dst_len && !attr_addr(tb[RTA_DST], family, k)))
		return;
	t = (unsigned)ts;
	if (tb[RTA_PRIORITY])
		metric = mnl_attr_get_u32(tb[RTA_PRIORITY]);
	tag = TAG_KERNEL | (metric < TAG_METRIC ? metric : TAG_METRIC);
	/* the prefix as the FIB keeps it: masked */
	for (i = rt->rtm_dst_len; i < 128; i++)
		k[i / 8] &= (uint8_t) ~(0x80 >> (i % 8));

	if (tb[RTA_NH_ID]) {
		route_obj(m, nlh->nlmsg_type, t, family, k, rt->rtm_dst_len,
			  tag, mnl_attr_get_u32(tb[RTA_NH_ID]));
		return;
	}
	if (tb[RTA_MULTIPATH]) {
		const struct rtnexthop *rtnh =
			mnl_attr_get_payload(tb[RTA_MULTIPATH]);
		int left = (int)mnl_attr_get_payload_len(tb[RTA_MULTIPATH]);

		while (left >= (int)sizeof(*rtnh) &&
		       rtnh->rtnh_len >= sizeof(*rtnh) &&
		       rtnh->rtnh_len <= left && n < FIB_MP_MAX) {
			const struct nlattr *nt[ATTR_MAX] = {0};

			mnl_attr_parse_payload(RTNH_DATA(rtnh),
					       rtnh->rtnh_len - sizeof(*rtnh),
					       attrs_cb, nt);
			if (nt[RTA_VIA]) {
				m->c.routes_unsupported++;
				return;
			}
			paths[n].ifindex = rtnh->rtnh_ifindex;
			paths[n].gw = attr_addr(nt[RTA_GATEWAY], family,
						paths[n].addr);
			n++;
			left -= RTNH_ALIGN(rtnh->rtnh_len);
			rtnh = RTNH_NEXT(rtnh);
		}
	} else {
		paths[0].ifindex =
			tb[RTA_OIF] ? (int)mnl_attr_get_u32(tb[RTA_OIF]) : 0;
		paths[0].gw = attr_addr(tb[RTA_GATEWAY], family, paths[0].addr);
		n = 1;
	}
	if (nlh->nlmsg_type == RTM_DELROUTE) {
		route_del_paths(m, t, family, k, rt->rtm_dst_len, tag, paths,
				n);
		return;
	}
	if (rt->rtm_type != RTN_UNICAST) {
		route_set(m, t, family, k, rt->rtm_dst_len, m->nh_drop, tag);
		return;
	}
	if (n == 1) {
		nh = path_ref(m, family, &paths[0]);
	} else if (n > 1) {
		uint32_t ids[FIB_MP_MAX];

		for (i = 0; i < n; i++) {
			ids[i] = path_ref(m, family, &paths[i]);
			if (ids[i] == FIB_NH_NONE) {
				while (i--)
					id_put(m, ids[i]);
				return;
			}
		}
		nh = grp_get(m, ids, n);
	}
	if (nh == FIB_NH_NONE)
		return;
	route_set(m, t, family, k, rt->rtm_dst_len, nh, tag);
}

static bool nud_valid(uint16_t state)
{
	return state & (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE |
			NUD_PERMANENT | NUD_NOARP);
}

static void on_neigh(struct nlmirror *m, const struct nlmsghdr *nlh)
{
	const struct ndmsg *nd = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[ATTR_MAX] = {0};
	int family = fam_of(nd->ndm_family);
	struct nh_key k = {.kind = NH_GW, .ifindex = nd->ndm_ifindex};
	bool valid;
	struct mnh *n;

	if (!family)
		return;
	mnl_attr_parse(nlh, sizeof(*nd), attrs_cb, tb);
	k.family = (uint8_t)family;
	if (!attr_addr(tb[NDA_DST], family, k.addr))
		return;
	/* multicast "neighbours" (NOARP, MAC derived from the group) are
	 * not next hops */
	if (family == 4 ? (k.addr[0] & 0xf0) == 0xe0 : k.addr[0] == 0xff)
		return;
	valid = nlh->nlmsg_type == RTM_NEWNEIGH && nud_valid(nd->ndm_state) &&
		tb[NDA_LLADDR] && mnl_attr_get_payload_len(tb[NDA_LLADDR]) == 6;
	m->c.neigh_updates++;
	n = nh_find(m, &k);
	if (valid) {
		uint8_t key[16];

		if (!n || !n->neigh) {
			n = nh_get(m, &k); /* the neighbour's reference */
			if (!n)
				return;
			n->neigh = 1;
			memcpy(n->mac, mnl_attr_get_payload(tb[NDA_LLADDR]), 6);
			n->state = nd->ndm_state;
			nh_sync(m, n);
			key_bytes(family, k.addr, key);
			n->refs++; /* the host route's */
			n->table = (uint8_t)link_table(m, k.ifindex);
			route_set(m, n->table, family, key, alen(family) * 8,
				  n->fib_id, TAG_NEIGH);
			return;
		}
		memcpy(n->mac, mnl_attr_get_payload(tb[NDA_LLADDR]), 6);
		n->state = nd->ndm_state;
		nh_sync(m, n);
		return;
	}
	if (n && n->neigh) {
		uint8_t key[16];

		n->neigh = 0;
		n->state = nd->ndm_state;
		nh_sync(m, n);
		key_bytes(family, k.addr, key);
		n->refs++; /* route_unset drops the route's if it goes */
		route_unset(m, n->table, family, key, alen(family) * 8,
			    TAG_NEIGH, n->fib_id);
		nh_put(m, n);
		nh_put(m, n); /* the neighbour's */
	}
}

static void addr_unset(struct nlmirror *m, const struct nlmirror_addr *a);

static void on_addr(struct nlmirror *m, const struct nlmsghdr *nlh)
{
	const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[ATTR_MAX] = {0};
	int family = fam_of(ifa->ifa_family);
	struct nlmirror_addr a = {.family = family,
				  .ifindex = (int)ifa->ifa_index,
				  .prefixlen = ifa->ifa_prefixlen};
	uint8_t key[16];
	size_t i;

	if (!family)
		return;
	mnl_attr_parse(nlh, sizeof(*ifa), attrs_cb, tb);
	if (!attr_addr(tb[IFA_LOCAL] ? tb[IFA_LOCAL] : tb[IFA_ADDRESS], family,
		       a.addr))
		return;
	m->c.addr_updates++;
	a.table = (uint8_t)link_table(m, a.ifindex);
	key_bytes(family, a.addr, key);
	for (i = 0; i < m->n_addrs; i++)
		if (m->addrs[i].family == family &&
		    m->addrs[i].ifindex == a.ifindex &&
		    !memcmp(m->addrs[i].addr, a.addr, 16))
			break;
	if (nlh->nlmsg_type == RTM_NEWADDR) {
		if (i == m->n_addrs) {
			if (grow((void **)&m->addrs, &m->cap_addrs,
				 m->n_addrs + 1, sizeof(a)))
				return;
			m->n_addrs++;
		}
		m->addrs[i] = a;
		route_set(m, a.table, family, key, alen(family) * 8,
			  m->nh_local, TAG_LOCAL);
		return;
	}
	if (i == m->n_addrs)
		return;
	a.table = m->addrs[i].table; /* where its route went */
	m->addrs[i] = m->addrs[--m->n_addrs];
	addr_unset(m, &a);
}

/* The LOCAL route of an address that went (or moved to another table),
 * unless the address is still the host's in that table elsewhere. */
static void addr_unset(struct nlmirror *m, const struct nlmirror_addr *a)
{
	uint8_t key[16];
	size_t i;

	for (i = 0; i < m->n_addrs; i++)
		if (m->addrs[i].family == a->family &&
		    m->addrs[i].table == a->table &&
		    !memcmp(m->addrs[i].addr, a->addr, 16))
			return;
	key_bytes(a->family, a->addr, key);
	route_unset(m, a->table, a->family, key, alen(a->family) * 8, TAG_LOCAL,
		    0);
}

/*
 * The interface ifindex changed table (enslaved to a VRF, or released):
 * its addresses' LOCAL routes and its neighbours' host routes move to the
 * new one (the kernel moves the connected routes itself, as messages).
 */
static void link_rehome(struct nlmirror *m, int ifindex)
{
	unsigned t = link_table(m, ifindex);
	size_t i;

	for (i = 0; i < m->n_addrs; i++) {
		struct nlmirror_addr a = m->addrs[i];
		uint8_t key[16];

		if (a.ifindex != ifindex || a.table == t)
			continue;
		m->addrs[i].table = (uint8_t)t;
		addr_unset(m, &a);
		key_bytes(a.family, a.addr, key);
		route_set(m, t, a.family, key, alen(a.family) * 8, m->nh_local,
			  TAG_LOCAL);
	}
	for (i = 0; i < m->n_nh; i++) {
		struct mnh *n = &m->nh[i];
		uint8_t key[16];
		unsigned old = n->table;

		if (n->key.ifindex != ifindex || !n->neigh || old == t)
			continue;
		key_bytes(n->key.family, n->key.addr, key);
		n->refs++; /* route_unset drops the route's if it goes */
		route_unset(m, old, n->key.family, key, alen(n->key.family) * 8,
			    TAG_NEIGH, n->fib_id);
		nh_put(m, n);
		n->table = (uint8_t)t;
		n->refs++; /* the new host route's */
		route_set(m, t, n->key.family, key, alen(n->key.family) * 8,
			  n->fib_id, TAG_NEIGH);
	}
}

/* Kind, VLAN id and protocol, VRF table, bond member state: IFLA_LINKINFO. */
static void link_info(const struct nlattr *li, struct nlmirror_link *l)
{
	const struct nlattr *tb[ATTR_MAX] = {0}, *db[ATTR_MAX] = {0};
	const char *kind;

	if (mnl_attr_parse_nested(li, attrs_cb, tb) < 0)
		return;
	if (tb[IFLA_INFO_SLAVE_KIND] &&
	    !strcmp(mnl_attr_get_str(tb[IFLA_INFO_SLAVE_KIND]), "bond")) {
		const struct nlattr *sd[ATTR_MAX] = {0};

		l->bond_slave = 1;
		if (tb[IFLA_INFO_SLAVE_DATA] &&
		    mnl_attr_parse_nested(tb[IFLA_INFO_SLAVE_DATA], attrs_cb,
					  sd) >= 0 &&
		    sd[IFLA_BOND_SLAVE_STATE])
			l->bond_backup =
				mnl_attr_get_u8(sd[IFLA_BOND_SLAVE_STATE]) !=
				BOND_STATE_ACTIVE;
	}
	if (!tb[IFLA_INFO_KIND])
		return;
	kind = mnl_attr_get_str(tb[IFLA_INFO_KIND]);
	if (tb[IFLA_INFO_DATA])
		mnl_attr_parse_nested(tb[IFLA_INFO_DATA], attrs_cb, db);
	if (!strcmp(kind, "vlan")) {
		l->kind = NLMIRROR_LINK_VLAN;
		l->vlan_proto = 0x8100;
		if (db[IFLA_VLAN_ID])
			l->vid = mnl_attr_get_u16(db[IFLA_VLAN_ID]) & 0x0fff;
		if (db[IFLA_VLAN_PROTOCOL])
			l->vlan_proto =
				ntohs(mnl_attr_get_u16(db[IFLA_VLAN_PROTOCOL]));
	} else if (!strcmp(kind, "vrf")) {
		l->kind = NLMIRROR_LINK_VRF;
		if (db[IFLA_VRF_TABLE])
			l->vrf_table = mnl_attr_get_u32(db[IFLA_VRF_TABLE]);
	} else if (!strcmp(kind, "bond")) {
		l->kind = NLMIRROR_LINK_BOND;
	}
}

/* A VRF's table gets a FIB table; a new one asks for a re-dump, for the
 * routes the kernel had in that table before the VRF came. */
static void vrf_table(struct nlmirror *m, const struct nlmirror_link *l)
{
	unsigned t, free_t = 0;

	if (!l->vrf_table || table_slot(m, l->vrf_table) >= 0) {
		for (t = 1; t < NLMIRROR_TABLE_NONE; t++)
			if (m->tables[t].id == l->vrf_table)
				m->tables[t].vrf_ifindex = l->ifindex;
		return;
	}
	for (t = 1; t < NLMIRROR_TABLE_NONE && !free_t; t++)
		if (!m->tables[t].id)
			free_t = t;
	if (!free_t || fib_table_open(m->p.fib, free_t)) {
		m->c.vrfs_unsupported++;
		return;
	}
	m->tables[free_t].id = l->vrf_table;
	m->tables[free_t].vrf_ifindex = l->ifindex;
	m->resync = true;
}

/* Each next hop out of ifindex: its port again (nh_info()). */
static void link_nh_sync(struct nlmirror *m, int ifindex)
{
	size_t i;

	for (i = 0; i < m->n_nh; i++)
		if (m->nh[i].key.ifindex == ifindex)
			nh_sync(m, &m->nh[i]);
}

/* A ferry port (not a VLAN's or bond's route interface). */
static bool is_port(int port)
{
	return port >= 0 && port < (int)ROUTE_VLAN_BASE;
}

/* Has bond b a member that is a ferry port? */
static bool bond_has_port(const struct nlmirror *m, int b)
{
	size_t i;

	for (i = 0; i < m->n_links; i++)
		if (m->links[i].master == b && is_port(m->links[i].port))
			return true;
	return false;
}

/* l wants a slot (want) or not: its port follows; the next hops out of it
 * too when it changed. */
static void slot_sync(struct nlmirror *m, struct nlmirror_link *l, bool want)
{
	int slot = -1, port = -1;
	unsigned s;

	for (s = 0; s < ROUTE_VLAN_MAX; s++)
		if (m->vlan_if[s] == l->ifindex)
			slot = (int)s;
	if (want && slot < 0) {
		for (s = 0; s < ROUTE_VLAN_MAX && slot < 0; s++)
			if (!m->vlan_if[s])
				slot = (int)s;
		if (slot >= 0)
			m->vlan_if[slot] = l->ifindex;
	} else if (!want && slot >= 0) {
		m->vlan_if[slot] = 0;
		slot = -1;
	}
	if (want && slot >= 0)
		port = (int)ROUTE_VLAN_BASE + slot;
	if (l->port == port)
		return;
	l->port = port;
	link_nh_sync(m, l->ifindex);
}

/*
 * Slots (route interfaces ROUTE_VLAN_BASE + slot): a bond with a member
 * that is a ferry port has one, and so has an 802.1Q VLAN link whose
 * parent is a ferry port or such a bond; any other VLAN or bond link
 * none; a slot whose link went is free again. Bonds first: their VLANs
 * need their slots. The next hops out of a link whose port changed
 * follow.
 */
static void vlans_sync(struct nlmirror *m)
{
	unsigned s;
	size_t i;

	for (s = 0; s < ROUTE_VLAN_MAX; s++) {
		const struct nlmirror_link *l;

		if (!m->vlan_if[s])
			continue;
		l = link_of(m, m->vlan_if[s]);
		if (!l || (l->kind != NLMIRROR_LINK_VLAN &&
			   l->kind != NLMIRROR_LINK_BOND))
			m->vlan_if[s] = 0; /* its next hops: on_link() */
	}
	for (i = 0; i < m->n_links; i++)
		if (m->links[i].kind == NLMIRROR_LINK_BOND)
			slot_sync(m, &m->links[i],
				  bond_has_port(m, m->links[i].ifindex));
	for (i = 0; i < m->n_links; i++) {
		struct nlmirror_link *l = &m->links[i];
		const struct nlmirror_link *par;

		if (l->kind != NLMIRROR_LINK_VLAN)
			continue;
		par = link_of(m, l->parent);
		slot_sync(m, l,
			  par && par->port >= 0 &&
				  (is_port(par->port) ||
				   par->kind == NLMIRROR_LINK_BOND) &&
				  l->vid && l->vlan_proto == 0x8100);
	}
}

static void on_link(struct nlmirror *m, const struct nlmsghdr *nlh)
{
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[ATTR_MAX] = {0};
	struct nlmirror_link l = {.ifindex = ifi->ifi_index, .port = -1};
	size_t i, j;
	int old_port = -2;
	unsigned old_table;

	mnl_attr_parse(nlh, sizeof(*ifi), attrs_cb, tb);
	m->c.link_updates++;
	for (i = 0; i < m->n_links; i++)
		if (m->links[i].ifindex == ifi->ifi_index)
			break;
	if (nlh->nlmsg_type == RTM_DELLINK) {
		if (i < m->n_links)
			m->links[i] = m->links[--m->n_links];
		link_flush(m, ifi->ifi_index);
		vlans_sync(m);
		link_nh_sync(m, ifi->ifi_index);
		return;
	}
	old_table = link_table(m, ifi->ifi_index);
	if (tb[IFLA_LINKINFO])
		link_info(tb[IFLA_LINKINFO], &l);
	if (tb[IFLA_LINK])
		l.parent = (int)mnl_attr_get_u32(tb[IFLA_LINK]);
	if (tb[IFLA_MASTER])
		l.master = (int)mnl_attr_get_u32(tb[IFLA_MASTER]);
	if (tb[IFLA_IFNAME])
		snprintf(l.name, sizeof(l.name), "%s",
			 mnl_attr_get_str(tb[IFLA_IFNAME]));
	if (tb[IFLA_MTU])
		l.mtu = mnl_attr_get_u32(tb[IFLA_MTU]);
	if (tb[IFLA_ADDRESS] && mnl_attr_get_payload_len(tb[IFLA_ADDRESS]) == 6)
		memcpy(l.mac, mnl_attr_get_payload(tb[IFLA_ADDRESS]), 6);
	l.up = !!(ifi->ifi_flags & IFF_UP);
	l.carrier = l.up && (ifi->ifi_flags & (IFF_RUNNING | IFF_LOWER_UP));
	if (l.kind == NLMIRROR_LINK_VLAN || l.kind == NLMIRROR_LINK_BOND)
		l.port =
			i < m->n_links ? m->links[i].port : -1; /* vlans_sync */
	else if (m->p.port_of)
		l.port = m->p.port_of(m->p.arg, l.ifindex, l.name);
	if (i == m->n_links) {
		if (grow((void **)&m->links, &m->cap_links, m->n_links + 1,
			 sizeof(l)))
			return;
		m->n_links++;
	} else {
		old_port = m->links[i].port;
	}
	m->links[i] = l;
	if (l.kind == NLMIRROR_LINK_VRF)
		vrf_table(m, &l);
	/* new, or it became (or stopped being) a ferry port; a port's
	 * VLANs with it */
	if (old_port != l.port)
		link_nh_sync(m, l.ifindex);
	vlans_sync(m);
	{
		const struct nlmirror_link *me = link_of(m, l.ifindex);
		const struct nlmirror_link *par = link_of(m, l.parent);

		/* a VLAN on a ferry port that is not followed: 802.1ad, or
		 * no slot left */
		if (me && me->kind == NLMIRROR_LINK_VLAN && me->port < 0 &&
		    par && par->port >= 0 && par->port < (int)ROUTE_VLAN_BASE)
			m->c.vlans_unsupported++;
	}
	/* enslaved to a VRF or released: it and, for a VRF, its members */
	if (link_table(m, l.ifindex) != old_table)
		link_rehome(m, l.ifindex);
	if (l.kind == NLMIRROR_LINK_VRF)
		for (j = 0; j < m->n_links; j++)
			if (m->links[j].master == l.ifindex)
				link_rehome(m, m->links[j].ifindex);
	/* the kernel's test (NETDEV_DOWN, or NETDEV_CHANGE without either
	 * flag); it refuses nexthops on such a link, so none is left */
	if (!(ifi->ifi_flags & IFF_UP) ||
	    !(ifi->ifi_flags & (IFF_RUNNING | IFF_LOWER_UP)))
		link_flush(m, ifi->ifi_index);
}

static int msg_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nlmirror *m = data;

	m->c.messages++;
	switch (nlh->nlmsg_type) {
	case RTM_NEWROUTE:
	case RTM_DELROUTE:
		on_route(m, nlh);
		break;
	case RTM_NEWNEIGH:
	case RTM_DELNEIGH:
		on_neigh(m, nlh);
		break;
	case RTM_NEWADDR:
	case RTM_DELADDR:
		on_addr(m, nlh);
		break;
	case RTM_NEWLINK:
	case RTM_DELLINK:
		on_link(m, nlh);
		break;
	case RTM_NEWNEXTHOP:
	case RTM_DELNEXTHOP:
		on_nexthop(m, nlh);
		break;
	}
	return MNL_CB_OK;
}

/* An error answer to a resolve request: counted, not fatal to the batch. */
static int err_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nlmirror *m = data;

	(void)nlh;
	m->c.netlink_errors++;
	return MNL_CB_OK;
}

static int noop_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(void)data;
	return MNL_CB_OK;
}

/* One dump on the request socket, applied as it arrives. The request's
 * header is hdr bytes (struct rtgenmsg, struct nhmsg, ...), all zero:
 * every family. */
static int dump(struct nlmirror *m, uint16_t type, size_t hdr)
{
	char *buf = m->buf;
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	ssize_t n;
	int ret;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = ++m->seq;
	mnl_nlmsg_put_extra_header(nlh, hdr); /* zeroed: AF_UNSPEC */
	if (mnl_socket_sendto(m->req, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		n = mnl_socket_recvfrom(m->req, buf, sizeof(m->buf));
		if (n < 0)
			return -errno;
		ret = mnl_cb_run(buf, (size_t)n, m->seq, m->req_portid, msg_cb,
				 m);
		if (ret < 0)
			return -errno;
		if (ret == MNL_CB_STOP)
			return 0;
	}
}

/*
 * The nexthop objects, before the routes that name them. A re-dump (after
 * an overrun) also drops what the kernel no longer has: every object is
 * marked, the dump unmarks those it shows, the rest went while events
 * were lost, and their routes with them.
 */
static int dump_nexthops(struct nlmirror *m)
{
	size_t i;
	int err;

	for (i = 0; i < m->n_obj; i++)
		m->obj[i].stale = m->obj[i].live;
	err = dump(m, RTM_GETNEXTHOP, sizeof(struct nhmsg));
	if (err == -EOPNOTSUPP || err == -EINVAL) {
		/* a kernel before nexthop objects (5.3): none to follow */
		m->c.netlink_errors++;
		err = 0;
		for (i = 0; i < m->n_obj; i++)
			m->obj[i].stale = 0;
	}
	for (i = 0; i < m->n_obj; i++) {
		if (!m->obj[i].stale)
			continue;
		m->obj[i].stale = 0;
		if (!err)
			obj_doom(m, (uint32_t)i);
	}
	objs_bury(m);
	return err;
}

static int dump_all(struct nlmirror *m)
{
	static const struct {
		uint16_t type;
		uint8_t hdr;
	} dumps[] = {
		{RTM_GETLINK, sizeof(struct rtgenmsg)},
		{RTM_GETADDR, sizeof(struct rtgenmsg)},
		{RTM_GETNEIGH, sizeof(struct rtgenmsg)},
		{RTM_GETNEXTHOP, 0}, /* dump_nexthops() */
		{RTM_GETROUTE, sizeof(struct rtgenmsg)},
	};
	size_t i;
	int err;

	for (i = 0; i < sizeof(dumps) / sizeof(dumps[0]); i++) {
		err = dumps[i].type == RTM_GETNEXTHOP
			      ? dump_nexthops(m)
			      : dump(m, dumps[i].type, dumps[i].hdr);
		if (err)
			return err;
	}
	return 0;
}

/* The re-dumps an overrun asked for. */
static int resync(struct nlmirror *m)
{
	int err = 0;

	if (m->resync)
		err = dump_all(m);
	else if (m->resync_routes)
		err = dump(m, RTM_GETROUTE, sizeof(struct rtgenmsg));
	if (!err)
		m->resync = m->resync_routes = false;
	return err;
}

/* One batch from sock into buf: its length, 0 when there is none now, or
 * -errno. ENOBUFS (the kernel dropped events) is counted and sets *lost. */
static ssize_t recv_batch(struct nlmirror *m, struct mnl_socket *sock,
			  char *buf, bool *lost)
{
	ssize_t n;

	for (;;) {
		n = recv(mnl_socket_get_fd(sock), buf, sizeof(m->buf),
			 MSG_DONTWAIT);
		if (n >= 0)
			return n;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		if (errno == ENOBUFS) {
			m->c.overruns++;
			*lost = true;
			continue;
		}
		if (errno != EINTR)
			return -errno;
	}
}

/* Route batches one process() call applies: a flood (1 M routes) leaves
 * the fd readable and the caller's loop serves its other work between. */
#define ROUTE_BATCHES_PER_CALL 64

int nlmirror_process(struct nlmirror *m)
{
	/* an error answer to a resolve request must not end the batch */
	mnl_cb_t ctl[NLMSG_MIN_TYPE] = {
		[NLMSG_NOOP] = noop_cb,
		[NLMSG_ERROR] = err_cb,
		[NLMSG_DONE] = noop_cb,
		[NLMSG_OVERRUN] = noop_cb,
	};
	char *buf = m->buf;
	uint64_t before = m->c.messages;
	unsigned batches = 0;
	bool drained = false;
	ssize_t n;
	int err = 0;

	while (!err && batches++ < ROUTE_BATCHES_PER_CALL) {
		/*
		 * Objects first, then one batch of routes, then the objects
		 * again before it is applied: whatever the kernel sent ahead
		 * of those routes (the object a route names, a neighbour)
		 * is in by then.
		 */
		while ((n = recv_batch(m, m->ev_obj, buf, &m->resync)) > 0)
			mnl_cb_run2(buf, (size_t)n, 0, 0, msg_cb, m, ctl,
				    NLMSG_MIN_TYPE);
		if (n < 0)
			return (int)n;
		n = recv_batch(m, m->ev, m->rbuf, &m->resync_routes);
		if (n <= 0) {
			if (n < 0)
				return (int)n;
			drained = true;
			break;
		}
		while ((err = (int)recv_batch(m, m->ev_obj, buf, &m->resync)) >
		       0)
			mnl_cb_run2(buf, (size_t)err, 0, 0, msg_cb, m, ctl,
				    NLMSG_MIN_TYPE);
		if (!err)
			mnl_cb_run2(m->rbuf, (size_t)n, 0, 0, msg_cb, m, ctl,
				    NLMSG_MIN_TYPE);
	}
	/* After an overrun, what was queued before it is read first, then
	 * the tables dumped: the dump is newer than all of it. */
	if (!err && drained)
		err = resync(m);
	return err ? err : (int)(m->c.messages - before);
}

int nlmirror_apply(struct nlmirror *m, const void *buf, size_t len)
{
	uint64_t before = m->c.messages;

	mnl_cb_run(buf, len, 0, 0, msg_cb, m);
	return (int)(m->c.messages - before);
}

/*
 * RTM_GETROUTE with RTM_F_FIB_MATCH for the prefix's first address: the
 * kernel answers with the FIB entry its lookup matches (`ip route get
 * fibmatch`), i.e. the best remaining route of this prefix if there is
 * one, on the event socket, where process() applies it like any other.
 * No route at all comes back as an error, counted.
 */
static void ask_fib_match(struct nlmirror *m, unsigned t, int family,
			  const uint8_t *k, unsigned len)
{
	uint32_t table = t ? m->tables[t].id : m->p.table;

	char buf[256];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rtmsg *rt;

	nlh->nlmsg_type = RTM_GETROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = ++m->seq;
	rt = mnl_nlmsg_put_extra_header(nlh, sizeof(*rt));
	rt->rtm_family = family == 4 ? AF_INET : AF_INET6;
	rt->rtm_dst_len = (uint8_t)(alen(family) * 8);
	rt->rtm_flags = RTM_F_FIB_MATCH;
	rt->rtm_table = (uint8_t)(table < 256 ? table : RT_TABLE_UNSPEC);
	mnl_attr_put(nlh, RTA_DST, alen(family), k);
	/* a VRF's table is the one a lookup out of its device uses */
	if (t && m->tables[t].vrf_ifindex)
		mnl_attr_put_u32(nlh, RTA_OIF,
				 (uint32_t)m->tables[t].vrf_ifindex);
	(void)len;
	if (mnl_socket_sendto(m->ev, nlh, nlh->nlmsg_len) >= 0)
		m->c.fib_match_asked++;
}

/* Bond b's members that are ferry ports into out, by port number, those
 * that carry traffic first; phys the first of them. */
static void bond_members(const struct nlmirror *m,
			 const struct nlmirror_link *b, struct route_port *out)
{
	uint16_t up[ROUTE_BOND_MAX], down[ROUTE_BOND_MAX];
	unsigned n_up = 0, n_down = 0, k;
	int last = -1;

	/* ascending port order, one port at a time: at most 8 of them */
	for (;;) {
		const struct nlmirror_link *next = NULL;
		size_t i;

		for (i = 0; i < m->n_links; i++) {
			const struct nlmirror_link *l = &m->links[i];

			if (l->master == b->ifindex && is_port(l->port) &&
			    l->port > last && (!next || l->port < next->port))
				next = l;
		}
		if (!next || n_up + n_down == ROUTE_BOND_MAX)
			break;
		last = next->port;
		if (next->carrier && !next->bond_backup && b->carrier)
			up[n_up++] = (uint16_t)next->port;
		else
			down[n_down++] = (uint16_t)next->port;
	}
	for (k = 0; k < n_up; k++)
		out->members[k] = up[k];
	for (k = 0; k < n_down; k++)
		out->members[n_up + k] = down[k];
	out->n_up = (uint8_t)n_up;
	out->n_members = (uint8_t)(n_up + n_down);
	out->phys = out->n_members ? out->members[0] : FIB_PORT_NONE;
}

int nlmirror_route_port(const struct nlmirror *m, int port,
			struct route_port *out)
{
	const struct nlmirror_link *l = NULL, *as;
	bool ll = false;
	size_t i;

	for (i = 0; i < m->n_links; i++)
		if (m->links[i].port == port)
			l = &m->links[i];
	if (!l)
		return -ENOENT;
	/* a bond's member: in, the bond's interface */
	as = l->bond_slave && l->master ? link_of(m, l->master) : NULL;
	if (!as || as->kind != NLMIRROR_LINK_BOND)
		as = l;
	memcpy(out->mac, as->mac, 6);
	out->mtu = (uint16_t)(as->mtu > 0xffff ? 0xffff : as->mtu);
	out->table = (uint8_t)link_table(m, as->ifindex);
	out->vid = 0;
	out->phys = (uint16_t)port;
	out->n_members = 0;
	out->n_up = 0;
	memset(out->members, 0, sizeof(out->members));
	if (l->kind == NLMIRROR_LINK_BOND) {
		bond_members(m, l, out);
	} else if (l->kind == NLMIRROR_LINK_VLAN) {
		const struct nlmirror_link *par = link_of(m, l->parent);

		out->vid = l->vid;
		out->phys = par ? (uint16_t)par->port : FIB_PORT_NONE;
		if (par && par->kind == NLMIRROR_LINK_BOND)
			bond_members(m, par, out);
	}
	out->ip4 = 0;
	out->has_ip6 = 0;
	for (i = 0; i < m->n_addrs; i++) {
		const struct nlmirror_addr *a = &m->addrs[i];
		bool a_ll = a->addr[0] == 0xfe && (a->addr[1] & 0xc0) == 0x80;

		if (a->ifindex != as->ifindex)
			continue;
		if (a->family == 4 && !out->ip4) {
			out->ip4 = (uint32_t)a->addr[0] << 24 |
				   (uint32_t)a->addr[1] << 16 |
				   (uint32_t)a->addr[2] << 8 | a->addr[3];
		} else if (a->family == 6 && (!out->has_ip6 || (ll && !a_ll))) {
			memcpy(out->ip6, a->addr, 16);
			out->has_ip6 = 1;
			ll = a_ll;
		}
	}
	return 0;
}

void nlmirror_ports_changed(struct nlmirror *m)
{
	size_t i;

	for (i = 0; i < m->n_links; i++) {
		struct nlmirror_link *l = &m->links[i];
		int port;

		if (l->kind == NLMIRROR_LINK_VLAN ||
		    l->kind == NLMIRROR_LINK_BOND)
			continue; /* vlans_sync(), from parents and members */
		port = m->p.port_of
			       ? m->p.port_of(m->p.arg, l->ifindex, l->name)
			       : -1;
		if (port == l->port)
			continue;
		l->port = port;
		link_nh_sync(m, l->ifindex);
	}
	vlans_sync(m);
}

unsigned nlmirror_vlan_slots(const struct nlmirror *m)
{
	unsigned s, n = 0;

	for (s = 0; s < ROUTE_VLAN_MAX; s++)
		if (m->vlan_if[s])
			n = s + 1;
	return n;
}

uint32_t nlmirror_table_id(const struct nlmirror *m, unsigned t)
{
	return t && t < FIB_TABLES ? m->tables[t].id : 0;
}

int nlmirror_resolve(struct nlmirror *m, int family, const uint8_t *addr,
		     int ifindex)
{
	char buf[256];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ndmsg *nd;

	if (family != 4 && family != 6)
		return -EINVAL;
	nlh->nlmsg_type = RTM_NEWNEIGH;
	/* no ACK: the answer is the neighbour event, errors are counted */
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_REPLACE;
	nlh->nlmsg_seq = ++m->seq;
	nd = mnl_nlmsg_put_extra_header(nlh, sizeof(*nd));
	nd->ndm_family = family == 4 ? AF_INET : AF_INET6;
	nd->ndm_ifindex = ifindex;
	nd->ndm_state = NUD_NONE;
	/* NTF_USE: neigh_event_send(), as if a packet waited for it */
	nd->ndm_flags = NTF_USE;
	mnl_attr_put(nlh, NDA_DST, alen(family), addr);
	if (mnl_socket_sendto(m->ev, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	m->c.resolve_sent++;
	return 0;
}

int nlmirror_nh_target(const struct nlmirror *m, uint32_t nh, int *family,
		       uint8_t addr[16], int *ifindex)
{
	const struct mobj *o;
	const struct mnh *n;

	if (nh >= m->map_size)
		return -ENOENT;
	switch (m->map[nh] & MAP_KIND) {
	case MAP_SINGLE:
		n = &m->nh[m->map[nh] & ~MAP_KIND];
		break;
	case MAP_OBJ:
		/* a group object's path is its member's own id: single */
		o = &m->obj[m->map[nh] & ~MAP_KIND];
		if (o->group || o->blackhole)
			return -ENOENT;
		n = &m->nh[o->nh];
		break;
	default:
		return -ENOENT;
	}
	*family = n->key.family;
	*ifindex = n->key.ifindex;
	memcpy(addr, n->key.addr, 16);
	return n->key.kind == NH_GW ? 0 : -ENOENT;
}

/* ---- object ---- */

static void obj_free_all(struct nlmirror *m)
{
	size_t i;

	for (i = 0; i < m->n_obj; i++)
		free(m->obj[i].mem);
	free(m->obj);
	free(m->obj_hash);
}

/*
 * An event socket on groups (and group 32, past what the bind's bit mask
 * can say, if nh), non-blocking, with a receive buffer for bursts (FORCE
 * works for root, the plain one otherwise), in epfd; NULL with errno.
 */
static struct mnl_socket *ev_open(unsigned groups, bool nh, int epfd)
{
	struct epoll_event e = {.events = EPOLLIN};
	int rcvbuf = 32 << 20, nh_group = RTNLGRP_NEXTHOP, fd, err;
	struct mnl_socket *s = mnl_socket_open(NETLINK_ROUTE);

	if (!s)
		return NULL;
	fd = mnl_socket_get_fd(s);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	e.data.fd = fd;
	if (mnl_socket_bind(s, groups, MNL_SOCKET_AUTOPID) < 0 ||
	    (nh && mnl_socket_setsockopt(s, NETLINK_ADD_MEMBERSHIP, &nh_group,
					 sizeof(nh_group)) < 0) ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0 ||
	    epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e) < 0) {
		err = errno;
		mnl_socket_close(s);
		errno = err;
		return NULL;
	}
	return s;
}

struct nlmirror *nlmirror_create(const struct nlmirror_params *p)
{
	const unsigned route_groups = RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE;
	const unsigned obj_groups = RTMGRP_LINK | RTMGRP_NEIGH |
				    RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR;
	struct fib_nh_info local = {.port = FIB_PORT_NONE,
				    .flags = FIB_NH_F_LOCAL};
	struct fib_nh_info drop = {.port = FIB_PORT_NONE,
				   .flags = FIB_NH_F_DROP};
	struct fib_stats st;
	struct nlmirror *m;
	int id, err = ENOMEM;

	if (!p || !p->fib) {
		errno = EINVAL;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->p = *p;
	if (!m->p.table)
		m->p.table = RT_TABLE_MAIN;
	fib_stats(p->fib, &st);
	m->map_size = st.nh_max;
	m->map = calloc(m->map_size, sizeof(*m->map));
	if (!m->map)
		goto err_m;
	id = fib_nh_alloc(p->fib, &local);
	if (id < 0) {
		err = -id;
		goto err_nh;
	}
	m->nh_local = (uint32_t)id;
	id = fib_nh_alloc(p->fib, &drop);
	if (id < 0) {
		err = -id;
		goto err_nh;
	}
	m->nh_drop = (uint32_t)id;

	/* subscribe first: what changes during the dump is not lost */
	m->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (m->epfd < 0) {
		err = errno;
		goto err_nh;
	}
	m->ev = ev_open(route_groups, false, m->epfd);
	if (!m->ev) {
		err = errno;
		goto err_epoll;
	}
	m->ev_obj = ev_open(obj_groups, true, m->epfd);
	if (!m->ev_obj) {
		err = errno;
		goto err_ev;
	}
	m->req = mnl_socket_open(NETLINK_ROUTE);
	if (!m->req) {
		err = errno;
		goto err_ev_obj;
	}
	if (mnl_socket_bind(m->req, 0, MNL_SOCKET_AUTOPID) < 0) {
		err = errno;
		goto err_req;
	}
	m->req_portid = mnl_socket_get_portid(m->req);
	m->seq = (uint32_t)time(NULL);
	err = dump_all(m);
	if (err) {
		err = -err;
		goto err_req;
	}
	return m;

err_req:
	mnl_socket_close(m->req);
err_ev_obj:
	mnl_socket_close(m->ev_obj);
err_ev:
	mnl_socket_close(m->ev);
err_epoll:
	close(m->epfd);
err_nh:
	free(m->map);
	free(m->nh);
	free(m->nh_hash);
	free(m->grp);
	obj_free_all(m);
	free(m->links);
	free(m->addrs);
err_m:
	free(m);
	errno = err;
	return NULL;
}

void nlmirror_destroy(struct nlmirror *m)
{
	if (!m)
		return;
	mnl_socket_close(m->ev);
	mnl_socket_close(m->ev_obj);
	mnl_socket_close(m->req);
	close(m->epfd);
	free(m->map);
	free(m->nh);
	free(m->nh_hash);
	free(m->grp);
	obj_free_all(m);
	free(m->links);
	free(m->addrs);
	free(m);
}

int nlmirror_set_rcvbuf(struct nlmirror *m, int bytes)
{
	if (setsockopt(mnl_socket_get_fd(m->ev), SOL_SOCKET, SO_RCVBUF, &bytes,
		       sizeof(bytes)) ||
	    setsockopt(mnl_socket_get_fd(m->ev_obj), SOL_SOCKET, SO_RCVBUF,
		       &bytes, sizeof(bytes)))
		return -errno;
	return 0;
}

int nlmirror_fd(const struct nlmirror *m)
{
	return m->epfd; /* readable when either event socket is */
}

void nlmirror_counters(const struct nlmirror *m, struct nlmirror_counters *c)
{
	*c = m->c;
}

int nlmirror_walk_neigh(const struct nlmirror *m, nlmirror_neigh_fn fn,
			void *arg)
{
	size_t i;
	int ret;

	for (i = 0; i < m->n_nh; i++) {
		const struct mnh *n = &m->nh[i];
		struct nlmirror_neigh v;

		if (!n->neigh)
			continue;
		v = (struct nlmirror_neigh){.family = n->key.family,
					    .ifindex = n->key.ifindex,
					    .state = n->state,
					    .nh = n->fib_id};
		memcpy(v.addr, n->key.addr, 16);
		memcpy(v.mac, n->mac, 6);
		ret = fn(arg, &v);
		if (ret)
			return ret;
	}
	return 0;
}

int nlmirror_walk_links(const struct nlmirror *m, nlmirror_link_fn fn,
			void *arg)
{
	size_t i;
	int ret;

	for (i = 0; i < m->n_links; i++) {
		ret = fn(arg, &m->links[i]);
		if (ret)
			return ret;
	}
	return 0;
}

int nlmirror_walk_addrs(const struct nlmirror *m, nlmirror_addr_fn fn,
			void *arg)
{
	size_t i;
	int ret;

	for (i = 0; i < m->n_addrs; i++) {
		ret = fn(arg, &m->addrs[i]);
		if (ret)
			return ret;
	}
	return 0;
}
