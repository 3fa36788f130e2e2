// SPDX-License-Identifier: BSD-2-Clause
/*
 * router.c - the route app wired in: the FIB and its netlink mirror, the
 * ports' view for route_frame() and each worker's tables (see router.h);
 * the worker's RX path for route ports is fastpath/route_rx.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "csum.h"
#include "ferry_xdp.skel.h"
#include "kpath.h"
#include "log.h"
#include "nlmirror.h"
#include "router.h"
#include "util.h"

/* A neighbour is asked for again at most this often. */
#define RESOLVE_EVERY_NS 1000000000ull
#define RESOLVE_SLOTS	 1024

struct ferry_router {
	struct ferry_ports *reg; /* the daemon's ports (core/) */
	struct ferry_workers *workers;
	struct ferry_kpath *kpath;
	struct fib *fib;
	struct nlmirror *nlm;
	struct route_port ports[FERRY_MAX_PORTS];
	struct route_port vlans[ROUTE_VLAN_MAX]; /* by the mirror's slot */
	struct route_vlan_map vmap;
	struct route_ctx ctx;
	struct ferry_route_wk *wk[FERRY_MAX_WORKERS]; /* by worker index */
	/* when resolution of an address was last asked: a small hash, by
	 * address; a collision only makes one ask wait or go early */
	struct {
		uint8_t addr[16];
		uint64_t ns;
	} asked[RESOLVE_SLOTS];
	uint64_t resolve_limited;
	uint64_t addr_gen;     /* nlmirror addr_updates the classifiers have */
	uint64_t local_errors; /* ferry_local map updates that failed */
	bool forwarding_warned;
	int lo_forwarding; /* the route kernel path's precondition, last seen */
};

static int port_of(void *arg, int ifindex, const char *ifname)
{
	struct ferry_router *r = arg;
	int i;

	(void)ifname;
	for (i = 0; i < r->reg->n; i++)
		if (r->reg->v[i]->ifindex == ifindex)
			return i;
	return -1;
}

/* The kernel forwarding too would send every frame the classifier passes
 * to it a second time: the operator's job to turn off, ours to say so. */
static void forwarding_check(struct ferry_router *r)
{
	static const char *const knobs[] = {
		"/proc/sys/net/ipv4/ip_forward",
		"/proc/sys/net/ipv6/conf/all/forwarding",
	};
	unsigned i;

	for (i = 0; i < 2; i++) {
		FILE *fp = fopen(knobs[i], "r");
		int v = 0;

		if (!fp)
			continue;
		if (fscanf(fp, "%d", &v) != 1)
			v = 0;
		fclose(fp);
		if (v && !r->forwarding_warned)
			log_warn("route: %s is 1: the kernel forwards too; "
				 "turn it off, ferry routes",
				 knobs[i]);
		r->forwarding_warned |= v != 0;
	}
}

static int worker_idx(const struct ferry_workers *ws,
		      const struct ferry_worker *w)
{
	int i;

	for (i = 0; i < ws->n; i++)
		if (ws->v[i] == w)
			return i;
	return -1;
}

/* The router sends through AF_XDP sockets only. */
static struct ferry_pq *pq_on(struct ferry_port *p, struct ferry_worker *w)
{
	struct ferry_pq *q = ferry_port_tx_pq(p, w);

	return q && q->xsk ? q : NULL;
}

/* What route_frame() reads of the ports and their VLANs. */
struct route_view {
	struct route_port ports[FERRY_MAX_PORTS];
	struct route_port vlans[ROUTE_VLAN_MAX];
	unsigned n_vlans;
};

/* The view: computed aside, installed with the workers paused. A VLAN
 * routes when its parent port does. */
static void ports_view(struct ferry_router *r, struct route_view *rv)
{
	struct route_port *v = rv->ports;
	unsigned s;
	int i;

	memset(rv, 0, sizeof(*rv));
	for (i = 0; i < r->reg->n; i++) {
		struct ferry_port *p = r->reg->v[i];

		if (nlmirror_route_port(r->nlm, i, &v[i])) {
			memcpy(v[i].mac, p->mac, 6);
			v[i].mtu = 1500;
		}
		v[i].phys = (uint16_t)i;
		v[i].vid = 0;
		v[i].routed = p->app == FERRY_APP_ROUTE &&
			      p->state != FERRY_PORT_FAILED;
	}
	rv->n_vlans = nlmirror_vlan_slots(r->nlm);
	for (s = 0; s < rv->n_vlans; s++) {
		struct route_port *vl = &rv->vlans[s];

		if (nlmirror_route_port(r->nlm, (int)(ROUTE_VLAN_BASE + s),
					vl) ||
		    vl->phys >= (unsigned)r->reg->n) {
			memset(vl, 0, sizeof(*vl)); /* a free slot */
			continue;
		}
		vl->routed = v[vl->phys].routed;
	}
}

static void pause_all(struct ferry_workers *ws, bool pause)
{
	int i;

	for (i = 0; i < ws->n; i++)
		if (ws->v[i]->started) {
			if (pause)
				ferry_worker_pause(ws->v[i]);
			else
				ferry_worker_resume(ws->v[i]);
		}
}

struct local_set {
	struct ferry_local_key k[FERRY_LOCAL_MAX];
	unsigned n;
};

static int local_add(void *arg, const struct nlmirror_addr *a)
{
	struct local_set *ls = arg;
	struct ferry_local_key *k;

	if (ls->n >= FERRY_LOCAL_MAX)
		return 0;
	k = &ls->k[ls->n++];
	memset(k, 0, sizeof(*k));
	k->family = (uint32_t)a->family;
	memcpy(k->addr, a->addr, a->family == 4 ? 4 : 16);
	return 0;
}

static bool local_has(const struct local_set *ls,
		      const struct ferry_local_key *k)
{
	unsigned i;

	for (i = 0; i < ls->n; i++)
		if (!memcmp(&ls->k[i], k, sizeof(*k)))
			return true;
	return false;
}

/*
 * The host's addresses into every route port's classifier (ferry_local):
 * the new ones first, then the ones gone, so an address that stays never
 * leaves the map. Every port gets all of them: a frame for the address of
 * another interface is the host's too.
 */
static void local_sync(struct ferry_router *r)
{
	struct nlmirror_counters nc;
	struct local_set *ls = malloc(sizeof(*ls));
	uint8_t one = 1;
	int i;

	if (!ls)
		return;
	ls->n = 0;
	nlmirror_walk_addrs(r->nlm, local_add, ls);
	nlmirror_counters(r->nlm, &nc);
	r->addr_gen = nc.addr_updates;
	for (i = 0; i < r->reg->n; i++) {
		struct ferry_port *p = r->reg->v[i];
		struct ferry_local_key k, next, *prev = NULL;
		unsigned j;
		int fd;

		if (!p->skel || p->app != FERRY_APP_ROUTE)
			continue;
		fd = bpf_map__fd(p->skel->maps.ferry_local);
		for (j = 0; j < ls->n; j++)
			if (bpf_map_update_elem(fd, &ls->k[j], &one, 0))
				r->local_errors++;
		while (!bpf_map_get_next_key(fd, prev, &next)) {
			k = next;
			if (!local_has(ls, &k) && !bpf_map_delete_elem(fd, &k))
				continue; /* deleted: start over */
			prev = &k;
		}
	}
	free(ls);
}

static void vrf_name(struct ferry_router *r, unsigned t, char *s, size_t n);

/* A route port enslaved to a VRF stays on path xsk (kpath.h): told to
 * the kernel path, which decides again when that changed. */
static void vrf_paths(struct ferry_router *r)
{
	bool changed = false;
	int i;

	for (i = 0; i < r->reg->n; i++) {
		char vrf[FERRY_NAME_MAX] = "";

		if (r->ports[i].table)
			vrf_name(r, r->ports[i].table, vrf, sizeof(vrf));
		if (r->ports[i].table && !vrf[0])
			snprintf(vrf, sizeof(vrf), "?");
		changed |= ferry_kpath_route_vrf(r->kpath, r->reg->v[i], vrf);
	}
	if (changed)
		ferry_kpath_route_apply(r->kpath);
}

void ferry_router_ports_changed(struct ferry_router *r)
{
	struct route_view *v = malloc(sizeof(*v));
	int wi, i;

	if (!v) {
		log_err("route: out of memory for the ports' view");
		return;
	}
	nlmirror_ports_changed(r->nlm);
	ports_view(r, v);
	for (wi = 0; wi < r->workers->n; wi++)
		if (!r->wk[wi]) {
			struct ferry_route_wk *k =
				aligned_alloc(64, sizeof(*k));
			int slot = fib_reader_register(r->fib);

			if (!k || slot < 0) {
				free(k);
				if (slot >= 0)
					fib_reader_unregister(r->fib, slot);
				log_err("route: no room for worker %d", wi);
				continue;
			}
			memset(k, 0, sizeof(*k));
			k->ctx = &r->ctx;
			k->fib_slot = slot;
			/* online at its first batch: a worker that serves no
			 * route queue must not hold reclamation up */
			k->offline = 1;
			fib_reader_offline(fib_dp(r->fib), slot);
			r->wk[wi] = k;
		}
	/* Slots of workers that are gone (fewer workers now) must not hold
	 * reclamation up: offline until a worker of that index polls. */
	for (wi = r->workers->n; wi < FERRY_MAX_WORKERS; wi++)
		if (r->wk[wi])
			fib_reader_offline(r->ctx.fib, r->wk[wi]->fib_slot);
	pause_all(r->workers, true);
	memcpy(r->ports, v->ports, sizeof(r->ports));
	memcpy(r->vlans, v->vlans, sizeof(r->vlans));
	/* a (port, VID) twice cannot come from the kernel; if it did, the
	 * map says so and tagged frames are unknown rather than misrouted */
	if (route_vlan_map_build(&r->vmap, r->vlans, v->n_vlans))
		log_warn("route: the VLAN map cannot hold the VLANs");
	r->ctx.n_ports = (unsigned)r->reg->n;
	r->ctx.n_vlans = v->n_vlans;
	for (wi = 0; wi < r->workers->n; wi++) {
		struct ferry_route_wk *k = r->wk[wi];

		if (!k)
			continue;
		for (i = 0; i < FERRY_MAX_PORTS; i++)
			k->out[i] = i < r->reg->n ? pq_on(r->reg->v[i],
							  r->workers->v[wi])
						  : NULL;
	}
	for (i = 0; i < r->reg->n; i++) {
		struct ferry_port *p = r->reg->v[i];
		uint32_t q;

		for (q = 0; q < p->n_queues; q++) {
			struct ferry_pq *pq = &p->pq[q];
			int w = worker_idx(r->workers, pq->w);

			pq->rport = (uint16_t)i;
			pq->rw = p->app == FERRY_APP_ROUTE && w >= 0 ? r->wk[w]
								     : NULL;
		}
	}
	pause_all(r->workers, false);
	free(v);
	local_sync(r);
	vrf_paths(r);
}

struct ferry_router *ferry_router_create(struct ferry_ports *ports,
					 struct ferry_workers *workers,
					 struct ferry_kpath *kpath,
					 struct ferry_err *msg)
{
	struct ferry_router *r = calloc(1, sizeof(*r));
	struct nlmirror_params np = {0};
	struct fib_params fp = {0};

	if (!r) {
		ferry_errf(msg, "route: out of memory");
		return NULL;
	}
	r->reg = ports;
	r->workers = workers;
	r->kpath = kpath;
	fp.max_readers = FERRY_MAX_WORKERS;
	r->fib = fib_create(&fp);
	if (!r->fib) {
		ferry_errf(msg, "route: cannot create the FIB: %s",
			   strerror(errno));
		goto free_r;
	}
	r->ctx.fib = fib_dp(r->fib);
	r->ctx.ports = r->ports;
	r->ctx.vlans = r->vlans;
	r->ctx.vmap = &r->vmap;
	np.fib = r->fib;
	np.port_of = port_of;
	np.arg = r;
	r->nlm = nlmirror_create(&np);
	if (!r->nlm) {
		ferry_errf(msg,
			   "route: cannot follow the kernel's routes over "
			   "netlink: %s",
			   strerror(errno));
		goto destroy_fib;
	}
	forwarding_check(r);
	r->lo_forwarding = ferry_kpath_lo_forwarding();
	return r;

destroy_fib:
	fib_destroy(r->fib);
free_r:
	free(r);
	return NULL;
}

void ferry_router_destroy(struct ferry_router *r)
{
	int i;

	if (!r)
		return;
	nlmirror_destroy(r->nlm);
	for (i = 0; i < FERRY_MAX_WORKERS; i++)
		if (r->wk[i]) {
			fib_reader_unregister(r->fib, r->wk[i]->fib_slot);
			free(r->wk[i]);
		}
	fib_destroy(r->fib);
	free(r);
}

int ferry_router_fd(const struct ferry_router *r)
{
	return nlmirror_fd(r->nlm);
}

static bool view_differs(struct ferry_router *r)
{
	struct route_view *v = malloc(sizeof(*v));
	bool d;

	if (!v)
		return true;
	ports_view(r, v);
	d = memcmp(v->ports, r->ports, sizeof(r->ports)) ||
	    v->n_vlans != r->ctx.n_vlans ||
	    memcmp(v->vlans, r->vlans, sizeof(r->vlans));
	free(v);
	return d;
}

void ferry_router_process(struct ferry_router *r)
{
	int rc = nlmirror_process(r->nlm);

	if (rc < 0)
		log_warn("route: netlink: %s", strerror(-rc));
	/* An address or MTU change moves the ICMP source or the limit. */
	if (rc > 0 && view_differs(r))
		ferry_router_ports_changed(r);
	else if (rc > 0) {
		struct nlmirror_counters nc;

		nlmirror_counters(r->nlm, &nc);
		if (nc.addr_updates != r->addr_gen)
			local_sync(r);
	}
}

/* A neighbour the workers found missing: ask the kernel, at most once a
 * second per address. */
static void resolve_one(struct ferry_router *r, const struct ferry_route_ask *a,
			uint64_t now)
{
	uint8_t addr[16] = {0};
	int fam = 0, ifindex = 0, rc;
	uint32_t h = 2166136261u;
	unsigned i, slot;

	rc = nlmirror_nh_target(r->nlm, a->nh, &fam, addr, &ifindex);
	/* an on-link next hop answers -ENOENT with its interface filled */
	if (ifindex <= 0 || (rc && !a->connected))
		return;
	if (a->connected)
		memcpy(addr, a->dst, 16);
	for (i = 0; i < 16; i++)
		h = (h ^ addr[i]) * 16777619u;
	slot = h % RESOLVE_SLOTS;
	if (!memcmp(r->asked[slot].addr, addr, 16) &&
	    now - r->asked[slot].ns < RESOLVE_EVERY_NS) {
		r->resolve_limited++;
		return;
	}
	memcpy(r->asked[slot].addr, addr, 16);
	r->asked[slot].ns = now;
	(void)nlmirror_resolve(r->nlm, fam, addr, ifindex);
}

static void resolve_pending(struct ferry_router *r)
{
	uint64_t now = ferry_now_ns();
	int wi;

	for (wi = 0; wi < FERRY_MAX_WORKERS; wi++) {
		struct ferry_route_wk *k = r->wk[wi];
		uint32_t prod;

		if (!k)
			continue;
		prod = __atomic_load_n(&k->res_prod, __ATOMIC_ACQUIRE);
		while (k->res_cons != prod) {
			struct ferry_route_ask a =
				k->res[k->res_cons % FERRY_ROUTE_RESOLVE_RING];

			__atomic_store_n(&k->res_cons, k->res_cons + 1,
					 __ATOMIC_RELEASE);
			resolve_one(r, &a, now);
		}
	}
}

/* lo's forwarding knobs gate bpf_fib_lookup (kpath.c): when they change,
 * the route ports' paths are decided again, and say why. */
static void kpath_check(struct ferry_router *r)
{
	int on = ferry_kpath_lo_forwarding();

	if (on == r->lo_forwarding)
		return;
	r->lo_forwarding = on;
	ferry_kpath_route_apply(r->kpath);
}

void ferry_router_tick(struct ferry_router *r)
{
	resolve_pending(r);
	fib_reclaim(r->fib);
	forwarding_check(r);
	kpath_check(r);
}

/* ---------------------------------------------------------- reports */

json_t *ferry_router_stats(struct ferry_router *r)
{
	struct route_counters sum = {0};
	struct nlmirror_counters nc;
	json_t *o = json_object(), *k;
	unsigned i;
	int wi;

	for (wi = 0; wi < FERRY_MAX_WORKERS; wi++)
		for (i = 0; r->wk[wi] && i < ROUTE_R__COUNT; i++)
			sum.n[i] += ferry_ctr_read(&r->wk[wi]->c.n[i]) -
				    r->wk[wi]->base.n[i];
	for (i = 0; i < ROUTE_R__COUNT; i++)
		json_object_set_new(o, route_reason_names[i],
				    json_integer((json_int_t)sum.n[i]));
	json_object_set_new(o, "resolve_limited",
			    json_integer((json_int_t)r->resolve_limited));
	json_object_set_new(o, "local_errors",
			    json_integer((json_int_t)r->local_errors));
	nlmirror_counters(r->nlm, &nc);
	k = json_object();
#define X(n) json_object_set_new(k, #n, json_integer((json_int_t)nc.n));
	NLMIRROR_COUNTERS(X)
#undef X
	json_object_set_new(o, "netlink", k);
	return o;
}

void ferry_router_stats_reset(struct ferry_router *r)
{
	unsigned i;
	int wi;

	for (wi = 0; wi < FERRY_MAX_WORKERS; wi++)
		for (i = 0; r->wk[wi] && i < ROUTE_R__COUNT; i++)
			r->wk[wi]->base.n[i] =
				ferry_ctr_read(&r->wk[wi]->c.n[i]);
}

static void addr_str(int family, const uint8_t *a, char *s, size_t n)
{
	inet_ntop(family == 4 ? AF_INET : AF_INET6, a, s, (socklen_t)n);
}

static void mac_str(const uint8_t *m, char *s, size_t n)
{
	snprintf(s, n, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3],
		 m[4], m[5]);
}

/* ---------------------------------------------------------- links */

/* A link by ifindex, else by VRF table, else by route interface. */
struct link_find {
	int ifindex, port;
	uint32_t vrf_table;
	struct nlmirror_link l;
	bool found;
};

static int link_find_cb(void *arg, const struct nlmirror_link *l)
{
	struct link_find *lf = arg;

	if (lf->ifindex	    ? l->ifindex != lf->ifindex
	    : lf->vrf_table ? l->kind != NLMIRROR_LINK_VRF ||
				      l->vrf_table != lf->vrf_table
			    : l->port != lf->port)
		return 0;
	lf->l = *l;
	lf->found = true;
	return 1;
}

static bool link_find(struct ferry_router *r, struct link_find *lf)
{
	lf->found = false;
	nlmirror_walk_links(r->nlm, link_find_cb, lf);
	return lf->found;
}

/* The name of route interface port: a ferry port's, or its VLAN link's. */
static void rif_name(struct ferry_router *r, unsigned port, char *s, size_t n)
{
	struct link_find lf = {.port = (int)port};

	if (port < (unsigned)r->reg->n)
		snprintf(s, n, "%s", r->reg->v[port]->name);
	else if (port >= ROUTE_VLAN_BASE && link_find(r, &lf))
		snprintf(s, n, "%s", lf.l.name);
	else
		snprintf(s, n, "-");
}

/* The VRF device of FIB table t, into s ("" for the main table). */
static void vrf_name(struct ferry_router *r, unsigned t, char *s, size_t n)
{
	struct link_find lf = {.vrf_table = nlmirror_table_id(r->nlm, t)};

	s[0] = 0;
	if (lf.vrf_table && link_find(r, &lf))
		snprintf(s, n, "%s", lf.l.name);
}

struct fib_walk_arg {
	struct ferry_router *r;
	json_t *a;
	unsigned table;
	int family;
	bool filter;
	uint8_t prefix[16];
	unsigned len;
};

/* One next hop's gateway (or what stands for one) into via. */
static void nh_via(struct ferry_router *r, uint32_t nh,
		   const struct fib_nh_info *info, char *via, size_t len)
{
	uint8_t addr[16];
	int fam, ifindex;

	if (info->flags & FIB_NH_F_LOCAL)
		snprintf(via, len, "local");
	else if (info->flags & FIB_NH_F_DROP)
		snprintf(via, len, "blackhole");
	else if (!(info->flags & FIB_NH_F_CONNECTED) &&
		 !nlmirror_nh_target(r->nlm, nh, &fam, addr, &ifindex))
		addr_str(fam, addr, via, len);
	else
		snprintf(via, len, "on-link");
}

/* via, port and mac of a next hop; a multipath group's gateways joined
 * by commas, its port and MAC the first path's. */
static void nh_json(struct ferry_router *r, json_t *o, uint32_t nh)
{
	struct fib_nh_info info;
	uint32_t members[FIB_MP_MAX];
	unsigned n = FIB_MP_MAX, i;
	char via[FIB_MP_MAX * 8 + 64] = "", one[INET6_ADDRSTRLEN], s[32];
	size_t used = 0;

	if (fib_nh_group_get(r->fib, nh, members, &n)) {
		members[0] = nh;
		n = 1;
	} else {
		json_object_set_new(o, "paths", json_integer(n));
	}
	for (i = 0; i < n; i++) {
		if (fib_nh_get(r->fib, members[i], &info))
			continue;
		nh_via(r, members[i], &info, one, sizeof(one));
		if (used + strlen(one) + 2 < sizeof(via))
			used += (size_t)snprintf(via + used, sizeof(via) - used,
						 "%s%s", used ? "," : "", one);
	}
	if (fib_nh_get(r->fib, members[0], &info))
		return;
	json_object_set_new(o, "via", json_string(via));
	rif_name(r, info.port, s, sizeof(s));
	json_object_set_new(o, "port", json_string(s));
	if (info.flags & FIB_NH_F_NEIGH) {
		mac_str(info.mac, s, sizeof(s));
		json_object_set_new(o, "mac", json_string(s));
	} else
		json_object_set_new(o, "mac", json_string("-"));
}

static bool covers(const struct fib_walk_arg *wa, const uint8_t *p,
		   unsigned len)
{
	unsigned b;

	/* PREFIX given: the routes inside it and those that cover it */
	unsigned l = len < wa->len ? len : wa->len;

	for (b = 0; b < l; b++)
		if ((p[b / 8] ^ wa->prefix[b / 8]) & (0x80 >> (b % 8)))
			return false;
	return true;
}

static int fib_walk_cb(void *arg, const uint8_t prefix[16], unsigned len,
		       uint32_t nh)
{
	struct fib_walk_arg *wa = arg;
	char a[INET6_ADDRSTRLEN + 8], s[INET6_ADDRSTRLEN];
	json_t *o;

	if (wa->filter && !covers(wa, prefix, len))
		return 0;
	addr_str(wa->family, prefix, s, sizeof(s));
	snprintf(a, sizeof(a), "%s/%u", s, len);
	o = json_object();
	json_object_set_new(o, "prefix", json_string(a));
	if (wa->table) {
		char vrf[FERRY_NAME_MAX];

		json_object_set_new(
			o, "table",
			json_integer(nlmirror_table_id(wa->r->nlm, wa->table)));
		vrf_name(wa->r, wa->table, vrf, sizeof(vrf));
		json_object_set_new(o, "vrf", json_string(vrf));
	}
	json_object_set_new(o, "nh", json_integer(nh));
	nh_json(wa->r, o, nh);
	json_array_append_new(wa->a, o);
	return 0;
}

int ferry_route_prefix_parse(const char *s, int *family, uint8_t prefix[16],
			     unsigned *len, struct ferry_err *msg)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash, *end = NULL;
	unsigned long l;
	unsigned max;

	memset(prefix, 0, 16);
	if (snprintf(buf, sizeof(buf), "%s", s) >= (int)sizeof(buf))
		goto bad;
	slash = strchr(buf, '/');
	if (slash)
		*slash++ = 0;
	*family = strchr(buf, ':') ? 6 : 4;
	max = *family == 4 ? 32 : 128;
	if (inet_pton(*family == 4 ? AF_INET : AF_INET6, buf, prefix) != 1)
		goto bad;
	l = max;
	if (slash) {
		l = strtoul(slash, &end, 10);
		if (!*slash || *end || l > max)
			goto bad;
	}
	*len = (unsigned)l;
	return 0;
bad:
	ferry_errf(msg, "'%s' is not a prefix (ADDR[/LEN], IPv4 or IPv6)", s);
	return -EINVAL;
}

json_t *ferry_router_fib_show(struct ferry_router *r, const char *prefix,
			      struct ferry_err *msg)
{
	struct fib_walk_arg wa = {.r = r};
	int fam, want = 0;

	if (prefix) {
		if (ferry_route_prefix_parse(prefix, &wa.family, wa.prefix,
					     &wa.len, msg))
			return NULL;
		wa.filter = true;
		want = wa.family;
	}
	wa.a = json_array();
	/* the main table first, as before VRFs; then each VRF's */
	for (wa.table = 0; wa.table < FIB_TABLES; wa.table++)
		for (fam = 4; fam <= 6; fam += 2) {
			if (wa.filter && fam != want)
				continue;
			wa.family = fam;
			fib_walk_in(r->fib, wa.table, fam, fib_walk_cb, &wa);
		}
	return wa.a;
}

static const char *nud_name(uint16_t s)
{
	/* linux/neighbour.h NUD_* */
	switch (s) {
	case 0x01:
		return "incomplete";
	case 0x02:
		return "reachable";
	case 0x04:
		return "stale";
	case 0x08:
		return "delay";
	case 0x10:
		return "probe";
	case 0x20:
		return "failed";
	case 0x40:
		return "noarp";
	case 0x80:
		return "permanent";
	default:
		return "other";
	}
}

struct neigh_arg {
	struct ferry_router *r;
	json_t *a;
};

static int neigh_cb(void *arg, const struct nlmirror_neigh *n)
{
	struct neigh_arg *na = arg;
	char a[INET6_ADDRSTRLEN], m[24], ifn[FERRY_NAME_MAX] = "?";
	json_t *o = json_object();
	int i;

	addr_str(n->family, n->addr, a, sizeof(a));
	mac_str(n->mac, m, sizeof(m));
	for (i = 0; i < na->r->reg->n; i++)
		if (na->r->reg->v[i]->ifindex == n->ifindex)
			snprintf(ifn, sizeof(ifn), "%s",
				 na->r->reg->v[i]->name);
	if (ifn[0] == '?') {
		struct link_find lf = {.ifindex = n->ifindex};

		/* a VLAN the mirror follows: its own name */
		if (link_find(na->r, &lf) && lf.l.port >= (int)ROUTE_VLAN_BASE)
			snprintf(ifn, sizeof(ifn), "%s", lf.l.name);
	}
	json_object_set_new(o, "address", json_string(a));
	json_object_set_new(o, "mac", json_string(m));
	json_object_set_new(o, "port", json_string(ifn));
	json_object_set_new(o, "ifindex", json_integer(n->ifindex));
	json_object_set_new(o, "state", json_string(nud_name(n->state)));
	json_object_set_new(o, "nh", json_integer(n->nh));
	json_array_append_new(na->a, o);
	return 0;
}

json_t *ferry_router_neigh_show(struct ferry_router *r)
{
	struct neigh_arg na = {.r = r, .a = json_array()};

	nlmirror_walk_neigh(r->nlm, neigh_cb, &na);
	return na.a;
}

/* Does route interface rp send (or, a bond's member, receive) on ferry
 * port `port`? */
static bool rif_sends_on(const struct route_port *rp, int port)
{
	unsigned k;

	if (!rp->n_members)
		return rp->phys == port;
	for (k = 0; k < rp->n_members; k++)
		if (rp->members[k] == port)
			return true;
	return false;
}

/* `port show`'s "bond": the bond port is a member of, its members (ferry
 * ports) and whether each carries traffic now. */
struct bond_arg {
	struct ferry_router *r;
	int port;
	json_t *o; /* NULL until found */
};

static int bond_cb(void *arg, const struct nlmirror_link *l)
{
	struct bond_arg *ba = arg;
	struct route_port rp;
	json_t *mem;
	unsigned k;

	if (ba->o || l->kind != NLMIRROR_LINK_BOND ||
	    l->port < (int)ROUTE_VLAN_BASE ||
	    nlmirror_route_port(ba->r->nlm, l->port, &rp) ||
	    !rif_sends_on(&rp, ba->port))
		return 0;
	ba->o = json_object();
	json_object_set_new(ba->o, "name", json_string(l->name));
	json_object_set_new(ba->o, "ifindex", json_integer(l->ifindex));
	json_object_set_new(ba->o, "up", json_boolean(l->carrier));
	mem = json_array();
	for (k = 0; k < rp.n_members; k++) {
		json_t *m = json_object();
		unsigned p = rp.members[k];

		json_object_set_new(m, "port",
				    json_string(p < (unsigned)ba->r->reg->n
							? ba->r->reg->v[p]->name
							: "-"));
		json_object_set_new(m, "active", json_boolean(k < rp.n_up));
		json_array_append_new(mem, m);
	}
	json_object_set_new(ba->o, "members", mem);
	return 0;
}

struct vlans_arg {
	struct ferry_router *r;
	int port; /* the parent's index */
	json_t *a;
};

static int vlans_cb(void *arg, const struct nlmirror_link *l)
{
	struct vlans_arg *va = arg;
	struct route_port rp;
	char vrf[FERRY_NAME_MAX];
	json_t *o;

	if (l->kind != NLMIRROR_LINK_VLAN || l->port < (int)ROUTE_VLAN_BASE ||
	    nlmirror_route_port(va->r->nlm, l->port, &rp) ||
	    !rif_sends_on(&rp, va->port))
		return 0;
	o = json_object();
	json_object_set_new(o, "name", json_string(l->name));
	json_object_set_new(o, "ifindex", json_integer(l->ifindex));
	json_object_set_new(o, "vid", json_integer(l->vid));
	json_object_set_new(o, "mtu", json_integer(rp.mtu));
	json_object_set_new(o, "up", json_boolean(l->up));
	vrf_name(va->r, rp.table, vrf, sizeof(vrf));
	json_object_set_new(o, "vrf", json_string(vrf));
	json_object_set_new(
		o, "table",
		json_integer(rp.table ? nlmirror_table_id(va->r->nlm, rp.table)
				      : 254 /* RT_TABLE_MAIN */));
	json_array_append_new(va->a, o);
	return 0;
}

void ferry_router_port_view(struct ferry_router *r, const struct ferry_port *p,
			    json_t *o)
{
	struct vlans_arg va = {.r = r, .port = -1, .a = json_array()};
	int i;

	for (i = 0; i < r->reg->n; i++)
		if (r->reg->v[i] == p)
			va.port = i;
	if (va.port >= 0)
		nlmirror_walk_links(r->nlm, vlans_cb, &va);
	json_object_set_new(o, "vlans", va.a);
	if (va.port >= 0) {
		struct bond_arg ba = {.r = r, .port = va.port};

		nlmirror_walk_links(r->nlm, bond_cb, &ba);
		if (ba.o)
			json_object_set_new(o, "bond", ba.o);
	}
}

void ferry_router_port_del(struct ferry_router *r, struct ferry_port *p)
{
	uint32_t q;
	int wi, i;

	pause_all(r->workers, true);
	for (wi = 0; wi < FERRY_MAX_WORKERS; wi++)
		for (i = 0; r->wk[wi] && i < FERRY_MAX_PORTS; i++)
			if (r->wk[wi]->out[i] && r->wk[wi]->out[i]->port == p)
				r->wk[wi]->out[i] = NULL;
	for (i = 0; i < r->reg->n; i++)
		if (r->reg->v[i] == p) {
			unsigned s;

			r->ports[i].routed = 0;
			for (s = 0; s < r->ctx.n_vlans; s++)
				if (rif_sends_on(&r->vlans[s], i))
					r->vlans[s].routed = 0;
		}
	for (q = 0; q < p->n_queues; q++)
		p->pq[q].rw = NULL;
	pause_all(r->workers, false);
}
