// SPDX-License-Identifier: BSD-2-Clause
/*
 * kpath.c - the in-kernel path of xconnect (see kpath.h). Control thread
 * only.
 *
 * Switching path loses no frame. To kernel: the DEVMAP entry is written
 * first, then the classifier's kernel_fwd byte flips, which each frame
 * reads once; frames already in the AF_XDP rings are still forwarded by
 * the worker, whose queues keep the xconnect. To xsk: the byte flips
 * back, then a grace period (every XDP run that may have chosen the
 * DEVMAP has ended, and its bulk queue was flushed at the end of that
 * NAPI poll), and only then the entry goes.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gen.h"
#include "port.h"
#include "ferry_xdp.skel.h"
#include "hostcheck.h"
#include "kpath.h"
#include "log.h"

static int ferry_kpath_tp_attach(struct ferry_kpath *kt, struct ferry_port *p);

static struct bpf_devmap_val ferry_kpath_dev_val(struct ferry_kpath *kt,
						 const struct ferry_port *e);

static struct ferry_kpath_acct *acct(struct ferry_kpath *kt,
				     struct ferry_port *p)
{
	if (!kp(kt, p)->acct)
		kp(kt, p)->acct = calloc(1, sizeof(*kp(kt, p)->acct));
	return kp(kt, p)->acct;
}

int ferry_kpath_refusal(struct ferry_kpath *kt, const struct ferry_port *p,
			const struct ferry_port *peer, char *why, size_t len)
{
	char pname[IF_NAMESIZE + 80] = "?";
	int rc;

	if (!p->cls->kernel_path || !peer->cls->kernel_path) {
		const struct ferry_port *no = !p->cls->kernel_path ? p : peer;

		snprintf(why, len, "port %s %s: its frames need a worker",
			 no->name, no->cls->what);
		return -EOPNOTSUPP;
	}
	if (kt->gens->port[peer->slot].gen &&
	    ferry_gen_running(kt->gens->port[peer->slot].gen)) {
		snprintf(why, len, "a generator on %s shares its TX",
			 peer->name);
		return -EOPNOTSUPP;
	}
	if (strcmp(peer->driver, "veth"))
		return 0;
	rc = ferry_veth_peer_rx_ready(peer->ifname, pname, sizeof(pname));
	if (rc == 0) {
		snprintf(why, len,
			 "%s's veth peer %s has neither XDP nor GRO on: the "
			 "kernel drops frames redirected into %s; fix: "
			 "'ethtool -K %.*s gro on' (in its namespace), or an "
			 "XDP program on it",
			 peer->ifname, pname, peer->ifname,
			 (int)strcspn(pname, " "), pname);
		return -EOPNOTSUPP;
	}
	if (rc < 0) {
		snprintf(
			why, len,
			"cannot tell whether %s's veth peer %s takes "
			"redirected frames: it has no XDP program, and its GRO "
			"cannot be read from here (%s); XDP on it, or "
			"'ethtool -K %.*s gro on' and 'path kernel'",
			peer->ifname, pname, strerror(-rc),
			(int)strcspn(pname, " "), pname);
		return -EAGAIN;
	}
	return 0;
}

static void fib_slot_fold(struct ferry_kpath *kt, struct ferry_port *q,
			  uint32_t i);
static void tx_pre_tp(struct ferry_kpath *kt, struct ferry_port *p);
static void fib_tx_raw(struct ferry_kpath *kt, struct ferry_port *e,
		       uint64_t *pk, uint64_t *by);
static void fib_reset(struct ferry_kpath *kt, struct ferry_port *p);

/*
 * The classifier's kernel_fwd byte (0, FERRY_KFWD_DEV or FERRY_KFWD_FIB).
 * The tracepoints that count the path's failed redirects and transmits
 * (ferry_kpath_tp_attach) go on first: they run at every DEVMAP flush on
 * the host, whichever program redirected, so they are attached only
 * while the port forwards in the kernel (kpath_tp_sync takes them off).
 * Without them the path still works, its failures are not counted.
 */
static int cfg_kernel_fwd(struct ferry_kpath *kt, struct ferry_port *p,
			  uint8_t mode)
{
	struct ferry_xdp_cfg cfg;
	uint32_t key = 0;
	int fd = bpf_map__fd(p->skel->maps.ferry_cfg), err;

	if (bpf_map_lookup_elem(fd, &key, &cfg))
		return -errno;
	/* Also when the byte is already set: a hot restart finds it so. */
	if (mode && !kp(kt, p)->tp[0]) {
		err = ferry_kpath_tp_attach(kt, p);
		if (err && cfg.kernel_fwd != mode)
			log_warn("port %s: xdp_redirect_err or xdp_devmap_xmit "
				 "tracepoint unavailable (%s); kernel-path "
				 "transmit failures are not counted",
				 p->name, strerror(-err));
	}
	if (cfg.kernel_fwd == mode)
		return 0;
	cfg.kernel_fwd = mode;
	return bpf_map_update_elem(fd, &key, &cfg, 0) ? -errno : 0;
}

/* After a grace period: the tracepoints off a port that no longer
 * forwards in the kernel (its last redirects have been flushed). */
static void kpath_tp_sync(struct ferry_kpath *kt, struct ferry_port *p)
{
	struct ferry_xdp_cfg cfg;
	uint32_t key = 0;

	if (!p->skel || !kp(kt, p)->tp[0])
		return;
	if (!bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.ferry_cfg), &key,
				 &cfg) &&
	    !cfg.kernel_fwd)
		ferry_kpath_tp_detach(kt, p);
}

static int kpath_on(struct ferry_kpath *kt, struct ferry_port *p)
{
	struct bpf_devmap_val v = ferry_kpath_dev_val(kt, p->peer);
	uint32_t key = 0;
	int err;

	if (bpf_map_update_elem(bpf_map__fd(p->skel->maps.ferry_tx_dev), &key,
				&v, 0))
		return -errno;
	err = cfg_kernel_fwd(kt, p, FERRY_KFWD_DEV);
	return err;
}

static void kpath_off(struct ferry_kpath *kt, struct ferry_port *p)
{
	uint32_t key = 0;
	int err = cfg_kernel_fwd(kt, p, 0);

	if (err)
		log_warn("port %s: cannot turn the kernel path off: %s",
			 p->name, strerror(-err));
	ferry_xdp_runs_wait();
	bpf_map_delete_elem(bpf_map__fd(p->skel->maps.ferry_tx_dev), &key);
	kpath_tp_sync(kt, p);
}

void ferry_kpath_apply(struct ferry_kpath *kt, struct ferry_port *p)
{
	enum ferry_path want = FERRY_PATH_XSK, was = kp(kt, p)->path;
	char why[sizeof(kp(kt, p)->why)];
	int err;

	if (p->app == FERRY_APP_ROUTE ||
	    (kp(kt, p)->acct && kp(kt, p)->acct->fib_on)) {
		/* an xconnect's DEVMAP redirect first goes, as for any
		 * xconnect leaving the kernel path */
		if (p->app == FERRY_APP_ROUTE && was == FERRY_PATH_KERNEL &&
		    p->skel && !(kp(kt, p)->acct && kp(kt, p)->acct->fib_on))
			kpath_off(kt, p);
		ferry_kpath_route_apply(kt);
		if (p->app == FERRY_APP_ROUTE)
			return;
		was = kp(kt, p)->path;
	}
	why[0] = 0;
	if (p->app != FERRY_APP_XCONNECT || !p->peer) {
		snprintf(why, sizeof(why), "not an xconnect");
	} else if (!p->skel || p->deferred) {
		snprintf(why, sizeof(why), "no classifier of ferry's yet");
	} else if (p->peer->state == FERRY_PORT_FAILED) {
		/* Its workers count what they cannot send (port_down). */
		snprintf(why, sizeof(why), "the egress %s has failed",
			 p->peer->name);
	} else if (kp(kt, p)->req == FERRY_PATH_XSK) {
		snprintf(why, sizeof(why), "asked for (path xsk)");
	} else if (kp(kt, p)->req == FERRY_PATH_KERNEL) {
		want = FERRY_PATH_KERNEL;
		snprintf(why, sizeof(why), "asked for (path kernel)");
	} else if (!ferry_kpath_refusal(kt, p, p->peer, why, sizeof(why))) {
		want = FERRY_PATH_KERNEL;
		snprintf(why, sizeof(why), "auto: nothing on %s needs a worker",
			 p->name);
	}
	if (want == FERRY_PATH_KERNEL) {
		err = kpath_on(kt, p);
		if (err) {
			log_warn("port %s: kernel path failed (%s); frames "
				 "stay on the workers",
				 p->name, strerror(-err));
			snprintf(why, sizeof(why),
				 "the kernel path could not be set up: %s",
				 strerror(-err));
			want = FERRY_PATH_XSK;
			kpath_off(kt, p);
		}
	} else if (was == FERRY_PATH_KERNEL && p->skel) {
		kpath_off(kt, p);
	}
	kp(kt, p)->path = want;
	snprintf(kp(kt, p)->why, sizeof(kp(kt, p)->why), "%s", why);
	if (was != want)
		log_info("port %s: path %s (%s)", p->name,
			 ferry_path_name(want), why);
}

/* The port's own counters, raw (since its classifier loaded). */
static int ferry_kpath_read(struct ferry_kpath *kt, const struct ferry_port *p,
			    struct ferry_kpath_ctrs *c)
{
	int ncpu = libbpf_num_possible_cpus(), i, err = 0;
	uint32_t key = FERRY_R_DEV_REDIRECT;

	memset(c, 0, sizeof(*c));
	if (!p->skel || ncpu <= 0)
		return -ENOENT;
	{
		struct ferry_verdict_ctr v[ncpu];

		if (bpf_map_lookup_elem(
			    bpf_map__fd(p->skel->maps.ferry_verdicts), &key, v))
			err = -errno;
		for (i = 0; !err && i < ncpu; i++) {
			c->rx_packets += v[i].packets;
			c->rx_bytes += v[i].bytes;
		}
	}
	{
		struct ferry_kfwd_ctr k[ncpu];

		key = 0;
		if (!err && bpf_map_lookup_elem(
				    bpf_map__fd(p->skel->maps.ferry_kfwd_ctrs),
				    &key, k))
			err = -errno;
		for (i = 0; !err && i < ncpu; i++) {
#define KSUM(id) c->id += k[i].id;
			FERRY_KFWD_CTRS(KSUM)
#undef KSUM
		}
	}
	/* Sent is what the egress driver took; without the tracepoints,
	 * what was not refused at redirect time. Bytes in proportion: the
	 * tracepoint counts frames only. */
	if (kp(kt, p)->tp_seen)
		c->tx_packets =
			c->xmit_sent +
			(kp(kt, p)->acct ? kp(kt, p)->acct->tx_pre_tp : 0);
	else
		c->tx_packets = c->rx_packets - c->err_down - c->err_too_big -
				c->err_other;
	if (c->tx_packets > c->rx_packets)
		c->tx_packets = c->rx_packets;
	c->tx_bytes = c->rx_packets ? (uint64_t)((double)c->rx_bytes *
						 (double)c->tx_packets /
						 (double)c->rx_packets)
				    : 0;
	return err;
}

void ferry_kpath_fold(struct ferry_kpath *kt, struct ferry_port *p)
{
	struct ferry_kpath_acct *a = acct(kt, p), *pa;
	struct ferry_kpath_ctrs now;
	uint32_t i;

	if (!a || ferry_kpath_read(kt, p, &now))
		return;
	for (i = 0; a->fib_on && i < FERRY_FIB_EGRESS_MAX; i++)
		if (a->fib[i].ifindex)
			fib_slot_fold(kt, p, i);
	if (p->app == FERRY_APP_XCONNECT && p->peer &&
	    (pa = acct(kt, p->peer))) {
		pa->tx_folded += now.tx_packets - a->snap.tx_packets;
		pa->tx_bytes_folded += now.tx_bytes - a->snap.tx_bytes;
	}
	a->snap = now;
}

/* p's kernel-path tx as an egress, since its classifiers loaded. */
static void tx_raw(struct ferry_kpath *kt, struct ferry_port *p, uint64_t *pk,
		   uint64_t *by)
{
	struct ferry_kpath_acct *a = acct(kt, p);
	int i;

	*pk = a ? a->tx_folded : 0;
	*by = a ? a->tx_bytes_folded : 0;
	for (i = 0; i < kt->ports->n; i++) {
		struct ferry_port *q = kt->ports->v[i];
		struct ferry_kpath_acct *qa = acct(kt, q);
		struct ferry_kpath_ctrs now;

		if (q->app != FERRY_APP_XCONNECT || q->peer != p || !qa ||
		    ferry_kpath_read(kt, q, &now))
			continue;
		*pk += now.tx_packets - qa->snap.tx_packets;
		*by += now.tx_bytes - qa->snap.tx_bytes;
	}
	fib_tx_raw(kt, p, pk, by);
}

void ferry_kpath_stats(struct ferry_kpath *kt, struct ferry_port *p,
		       struct ferry_kpath_ctrs *rx, uint64_t *tx_packets,
		       uint64_t *tx_bytes)
{
	struct ferry_kpath_acct *a = acct(kt, p);

	ferry_kpath_read(kt, p, rx);
	tx_raw(kt, p, tx_packets, tx_bytes);
	if (!a)
		return;
	rx->rx_packets -= a->base.rx_packets;
	rx->rx_bytes -= a->base.rx_bytes;
	rx->tx_packets -= a->base.tx_packets;
	rx->tx_bytes -= a->base.tx_bytes;
#define KBASE(id) rx->id -= a->base.id;
	FERRY_KFWD_CTRS(KBASE)
#undef KBASE
	*tx_packets -= a->tx_base;
	*tx_bytes -= a->tx_bytes_base;
}

void ferry_kpath_reset(struct ferry_kpath *kt, struct ferry_port *p)
{
	struct ferry_kpath_acct *a = acct(kt, p);

	if (!a)
		return;
	ferry_kpath_read(kt, p, &a->base);
	tx_raw(kt, p, &a->tx_base, &a->tx_bytes_base);
	fib_reset(kt, p);
}

void ferry_kpath_tick(struct ferry_kpath *kt, struct ferry_port *p, double dt)
{
	struct ferry_kpath_acct *a = acct(kt, p);
	struct ferry_kpath_ctrs c;
	uint64_t tx, tx_bytes;

	if (!a)
		return;
	if (ferry_kpath_read(kt, p, &c))
		c.rx_packets = a->prev_rx;
	tx_raw(kt, p, &tx, &tx_bytes);
	a->rx_pps = dt > 0 && c.rx_packets >= a->prev_rx
			    ? (double)(c.rx_packets - a->prev_rx) / dt
			    : 0;
	a->tx_pps =
		dt > 0 && tx >= a->prev_tx ? (double)(tx - a->prev_tx) / dt : 0;
	a->prev_rx = c.rx_packets;
	a->prev_tx = tx;
}

void ferry_kpath_ledger(struct ferry_kpath *kt, const struct ferry_port *p,
			struct ferry_kpath_raw *l)
{
	struct ferry_kpath_ctrs c;

	if (ferry_kpath_read(kt, p, &c))
		return;
	l->rx += c.rx_packets;
	l->tx += c.tx_packets;
	l->err += c.err_down + c.err_too_big + c.err_other;
	l->xmit_drops += c.xmit_drops;
}

/* Attaches the two tracepoint programs and points them at p (after the
 * skeleton loaded); 0 or -errno. kpath.c does it when p's kernel path
 * turns on and detaches them once it is off. */
static int ferry_kpath_tp_attach(struct ferry_kpath *kt, struct ferry_port *p)
{
	struct stat st;

	p->skel->bss->ferry_tx_dev_map_id = 0;
	{
		struct bpf_map_info mi = {0};
		uint32_t len = sizeof(mi);

		if (!bpf_obj_get_info_by_fd(
			    bpf_map__fd(p->skel->maps.ferry_tx_dev), &mi, &len))
			p->skel->bss->ferry_tx_dev_map_id = mi.id;
	}
	p->skel->bss->ferry_fib_dev_map_id = 0;
	{
		struct bpf_map_info mi = {0};
		uint32_t len = sizeof(mi);

		if (!bpf_obj_get_info_by_fd(
			    bpf_map__fd(p->skel->maps.ferry_fib_dev), &mi,
			    &len))
			p->skel->bss->ferry_fib_dev_map_id = mi.id;
	}
	p->skel->bss->ferry_rx_ifindex = (uint32_t)p->ifindex;
	p->skel->bss->ferry_rx_netns =
		stat("/proc/self/ns/net", &st) ? 0 : (uint32_t)st.st_ino;
	kp(kt, p)->tp[0] =
		bpf_program__attach(p->skel->progs.ferry_redirect_err);
	if (!kp(kt, p)->tp[0])
		return -errno;
	kp(kt, p)->tp[1] =
		bpf_program__attach(p->skel->progs.ferry_devmap_xmit);
	if (!kp(kt, p)->tp[1]) {
		int err = -errno;

		ferry_kpath_tp_detach(kt, p);
		return err;
	}
	if (!kp(kt, p)->tp_seen)
		tx_pre_tp(kt, p);
	kp(kt, p)->tp_seen = true;
	return 0;
}

void ferry_kpath_adopted(struct ferry_kpath *kt)
{
	uint64_t by;
	int i;

	for (i = 0; i < kt->ports->n; i++) {
		struct ferry_port *p = kt->ports->v[i];

		if (!kp(kt, p)->acct)
			continue;
		if (kp(kt, p)->tp_seen)
			tx_pre_tp(kt, p);
		/* the folds of the replay moved rx-derived counts around:
		 * each xconnect's tx, since load, goes to its egress now */
		kp(kt, p)->acct->tx_folded = kp(kt, p)->acct->tx_bytes_folded =
			0;
		memset(&kp(kt, p)->acct->snap, 0,
		       sizeof(kp(kt, p)->acct->snap));
	}
	for (i = 0; i < kt->ports->n; i++)
		if (kp(kt, kt->ports->v[i])->acct)
			tx_raw(kt, kt->ports->v[i],
			       &kp(kt, kt->ports->v[i])->acct->prev_tx, &by);
}

static void tx_pre_tp(struct ferry_kpath *kt, struct ferry_port *p)
{
	struct ferry_kpath_acct *a = acct(kt, p);
	struct ferry_kpath_ctrs c;
	uint64_t seen;

	if (!a || ferry_kpath_read(kt, p, &c))
		return;
	/* every redirect this program's tracepoints saw an outcome of */
	seen = c.xmit_sent + c.xmit_drops + c.err_down + c.err_too_big +
	       c.err_other;
	a->tx_pre_tp = c.rx_packets > seen ? c.rx_packets - seen : 0;
}

void ferry_kpath_tp_detach(struct ferry_kpath *kt, struct ferry_port *p)
{
	bpf_link__destroy(kp(kt, p)->tp[0]);
	bpf_link__destroy(kp(kt, p)->tp[1]);
	kp(kt, p)->tp[0] = kp(kt, p)->tp[1] = NULL;
}

/* ------------------------------------------------- route: bpf_fib_lookup */

static int knob_read(const char *path, int missing)
{
	FILE *fp = fopen(path, "r");
	int v = 0;

	if (!fp)
		return missing;
	if (fscanf(fp, "%d", &v) != 1)
		v = 0;
	fclose(fp);
	return v;
}

#define LO_FWD4 "/proc/sys/net/ipv4/conf/lo/forwarding"
#define LO_FWD6 "/proc/sys/net/ipv6/conf/lo/forwarding"

int ferry_kpath_lo_forwarding(void)
{
	/* No IPv6 on the host: no IPv6 frame to look up either. */
	return knob_read(LO_FWD4, 0) && knob_read(LO_FWD6, 1);
}

int ferry_kpath_route_refusal(struct ferry_kpath *kt,
			      const struct ferry_port *p, char *why, size_t len)
{
	if (!ferry_kpath_lo_forwarding()) {
		snprintf(
			why, len,
			"bpf_fib_lookup answers FWD_DISABLED: lo's forwarding "
			"is off; fix: 'sysctl -w net.ipv4.conf.lo.forwarding=1 "
			"net.ipv6.conf.lo.forwarding=1'");
		return -EOPNOTSUPP;
	}
	return ferry_kpath_refusal(kt, p, p, why, len);
}

/* A route port's slot counters, summed over CPUs. */
static int fib_slot_read(struct ferry_kpath *kt, const struct ferry_port *p,
			 uint32_t slot, struct ferry_fib_tx_ctr *c)
{
	int ncpu = libbpf_num_possible_cpus(), i;

	memset(c, 0, sizeof(*c));
	if (!p->skel || ncpu <= 0)
		return -ENOENT;
	{
		struct ferry_fib_tx_ctr v[ncpu];

		if (bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.ferry_fib_tx),
					&slot, v))
			return -errno;
		for (i = 0; i < ncpu; i++) {
			c->packets += v[i].packets;
			c->bytes += v[i].bytes;
			c->sent += v[i].sent;
		}
	}
	return 0;
}

/* Of a slot's frames since base, what its egress sent, and the bytes in
 * proportion (the tracepoint counts frames only). */
static void fib_slot_delta(struct ferry_kpath *kt, const struct ferry_port *p,
			   const struct ferry_fib_tx_ctr *now,
			   const struct ferry_fib_tx_ctr *base, uint64_t *pk,
			   uint64_t *by)
{
	uint64_t sent_pk = now->packets - base->packets;
	uint64_t sent = kp(kt, p)->tp_seen ? now->sent - base->sent : sent_pk;

	if (sent > sent_pk)
		sent = sent_pk;
	*pk = sent;
	*by = sent_pk ? (uint64_t)((double)(now->bytes - base->bytes) *
				   (double)sent / (double)sent_pk)
		      : 0;
}

/* What slot i of q sent since it was last credited goes to its egress. */
static void fib_slot_fold(struct ferry_kpath *kt, struct ferry_port *q,
			  uint32_t i)
{
	struct ferry_kpath_fib_slot *s = &kp(kt, q)->acct->fib[i];
	struct ferry_kpath_acct *ea = s->port ? acct(kt, s->port) : NULL;
	struct ferry_fib_tx_ctr now;
	uint64_t pk, by;

	if (fib_slot_read(kt, q, i, &now))
		return;
	fib_slot_delta(kt, q, &now, &s->base, &pk, &by);
	if (ea) {
		ea->tx_folded += pk;
		ea->tx_bytes_folded += by;
	}
	s->base = now;
}

/* Route ports' kernel-path frames sent out of e since last credited. */
static void fib_tx_raw(struct ferry_kpath *kt, struct ferry_port *e,
		       uint64_t *pk, uint64_t *by)
{
	int i;
	uint32_t j;

	for (i = 0; i < kt->ports->n; i++) {
		struct ferry_port *q = kt->ports->v[i];

		if (!kp(kt, q)->acct || !kp(kt, q)->acct->fib_on)
			continue;
		for (j = 0; j < FERRY_FIB_EGRESS_MAX; j++) {
			struct ferry_kpath_fib_slot *s =
				&kp(kt, q)->acct->fib[j];
			struct ferry_fib_tx_ctr now;
			uint64_t p1, b1;

			if (s->ifindex != e->ifindex ||
			    fib_slot_read(kt, q, j, &now))
				continue;
			fib_slot_delta(kt, q, &now, &s->base, &p1, &b1);
			*pk += p1;
			*by += b1;
		}
	}
}

static bool in_set(struct ferry_port *const *set, int n, int ifindex)
{
	int i;

	for (i = 0; i < n; i++)
		if (set[i]->ifindex == ifindex)
			return true;
	return false;
}

static enum ferry_path route_want(struct ferry_kpath *kt, struct ferry_port *p,
				  char *why, size_t len)
{
	if (p->app != FERRY_APP_ROUTE) {
		snprintf(why, len, "not a route port");
		return FERRY_PATH_XSK;
	}
	if (!p->skel || p->deferred) {
		snprintf(why, len, "no classifier of ferry's yet");
		return FERRY_PATH_XSK;
	}
	if (p->state == FERRY_PORT_FAILED) {
		snprintf(why, len, "the port has failed");
		return FERRY_PATH_XSK;
	}
	if (kp(kt, p)->req == FERRY_PATH_XSK) {
		snprintf(why, len, "asked for (path xsk)");
		return FERRY_PATH_XSK;
	}
	if (kp(kt, p)->vrf[0]) {
		snprintf(why, len,
			 "in VRF %s: a worker looks up its table "
			 "(bpf_fib_lookup here: the main table)",
			 kp(kt, p)->vrf);
		return FERRY_PATH_XSK;
	}
	switch (ferry_kpath_route_refusal(kt, p, why, len)) {
	case 0:
		break;
	case -EAGAIN:
		/* a veth peer whose GRO cannot be read: the operator's call */
		if (kp(kt, p)->req == FERRY_PATH_KERNEL)
			break;
		return FERRY_PATH_XSK;
	default:
		return FERRY_PATH_XSK;
	}
	if (kp(kt, p)->req == FERRY_PATH_KERNEL)
		snprintf(why, len,
			 "asked for (path kernel): frames bpf_fib_lookup "
			 "resolves stay in XDP");
	else
		snprintf(why, len,
			 "auto: frames bpf_fib_lookup resolves stay in XDP, "
			 "the rest go to a worker");
	return FERRY_PATH_KERNEL;
}

/* The port's route kernel path, in kacct and for its transmit tracepoint
 * (ferry_fib_on in bpf/ferry_fib.bpf.h). */
static void fib_on_set(struct ferry_kpath *kt, struct ferry_port *q, int on)
{
	kp(kt, q)->acct->fib_on = on;
	if (q->skel)
		q->skel->bss->ferry_fib_on = (uint32_t)on;
}

/* e into q's egresses: the DEVMAP first, the slot's base, then the
 * egress map the classifier reads. */
static int fib_egress_add(struct ferry_kpath *kt, struct ferry_port *q,
			  struct ferry_port *e)
{
	struct ferry_kpath_acct *a = kp(kt, q)->acct;
	uint32_t ifx = (uint32_t)e->ifindex, i;
	struct bpf_devmap_val v;

	for (i = 0; i < FERRY_FIB_EGRESS_MAX; i++)
		if (a->fib[i].ifindex == e->ifindex)
			return 0;
	for (i = 0; i < FERRY_FIB_EGRESS_MAX && a->fib[i].ifindex; i++)
		;
	if (i == FERRY_FIB_EGRESS_MAX)
		return -ENOSPC;
	v = ferry_kpath_dev_val(kt, e);
	if (bpf_map_update_elem(bpf_map__fd(q->skel->maps.ferry_fib_dev), &ifx,
				&v, 0))
		return -errno;
	fib_slot_read(kt, q, i, &a->fib[i].base);
	if (bpf_map_update_elem(bpf_map__fd(q->skel->maps.ferry_fib_egress),
				&ifx, &i, 0)) {
		int err = -errno;

		bpf_map_delete_elem(bpf_map__fd(q->skel->maps.ferry_fib_dev),
				    &ifx);
		return err;
	}
	a->fib[i].ifindex = e->ifindex;
	a->fib[i].port = e;
	return 0;
}

bool ferry_kpath_route_vrf(struct ferry_kpath *kt, struct ferry_port *p,
			   const char *vrf)
{
	struct ferry_kpath_port *k = kp(kt, p);
	char v[sizeof(k->vrf)];

	snprintf(v, sizeof(v), "%s", vrf ? vrf : "");
	if (!strcmp(v, k->vrf))
		return false;
	memcpy(k->vrf, v, sizeof(v));
	return true;
}

void ferry_kpath_route_apply(struct ferry_kpath *kt)
{
	struct ferry_port *set[FERRY_MAX_PORTS];
	enum ferry_path want[FERRY_MAX_PORTS];
	char why[FERRY_MAX_PORTS][sizeof(((struct ferry_kpath_port *)0)->why)];
	uint32_t gone[FERRY_MAX_PORTS][FERRY_FIB_EGRESS_MAX];
	int n_gone[FERRY_MAX_PORTS] = {0};
	int i, n = 0, j, err, removed = 0;

	for (i = 0; i < kt->ports->n; i++) {
		struct ferry_port *p = kt->ports->v[i];

		why[i][0] = 0;
		want[i] = route_want(kt, p, why[i], sizeof(why[i]));
		if (want[i] == FERRY_PATH_KERNEL)
			set[n++] = p;
	}
	/* Removals: out of the egress map (and the byte off) now, out of
	 * the DEVMAP once no XDP run can still hold the old state. */
	for (i = 0; i < kt->ports->n; i++) {
		struct ferry_port *q = kt->ports->v[i];
		bool keep = want[i] == FERRY_PATH_KERNEL;

		if (!kp(kt, q)->acct || !kp(kt, q)->acct->fib_on || !q->skel)
			continue;
		if (!keep && cfg_kernel_fwd(kt, q, 0))
			log_warn("port %s: cannot turn the kernel path off",
				 q->name);
		for (j = 0; j < FERRY_FIB_EGRESS_MAX; j++) {
			struct ferry_kpath_fib_slot *s =
				&kp(kt, q)->acct->fib[j];
			uint32_t ifx = (uint32_t)s->ifindex;

			if (!s->ifindex || (keep && in_set(set, n, s->ifindex)))
				continue;
			bpf_map_delete_elem(
				bpf_map__fd(q->skel->maps.ferry_fib_egress),
				&ifx);
			gone[i][n_gone[i]++] = ifx;
			removed++;
		}
	}
	if (removed)
		ferry_xdp_runs_wait();
	for (i = 0; i < kt->ports->n; i++) {
		struct ferry_port *q = kt->ports->v[i];

		for (j = 0; j < n_gone[i]; j++) {
			uint32_t k;

			bpf_map_delete_elem(
				bpf_map__fd(q->skel->maps.ferry_fib_dev),
				&gone[i][j]);
			for (k = 0; k < FERRY_FIB_EGRESS_MAX; k++)
				if (kp(kt, q)->acct->fib[k].ifindex ==
				    (int)gone[i][j]) {
					/* what it sent to that egress, and
					 * any last flush, stays credited */
					fib_slot_fold(kt, q, k);
					kp(kt, q)->acct->fib[k].ifindex = 0;
					kp(kt, q)->acct->fib[k].port = NULL;
				}
		}
		if (kp(kt, q)->acct && want[i] != FERRY_PATH_KERNEL)
			fib_on_set(kt, q, 0);
		if (want[i] != FERRY_PATH_KERNEL)
			kpath_tp_sync(kt, q);
	}
	/* Additions, then the classifier's byte. */
	for (i = 0; i < kt->ports->n; i++) {
		struct ferry_port *q = kt->ports->v[i];
		enum ferry_path was = kp(kt, q)->path;

		if (q->app != FERRY_APP_ROUTE)
			continue;
		if (want[i] == FERRY_PATH_KERNEL) {
			err = acct(kt, q) ? 0 : -ENOMEM;
			for (j = 0; !err && j < n; j++)
				err = fib_egress_add(kt, q, set[j]);
			if (!err) {
				fib_on_set(kt, q, 1);
				err = cfg_kernel_fwd(kt, q, FERRY_KFWD_FIB);
			}
			if (err) {
				log_warn(
					"port %s: the route kernel path failed "
					"(%s); frames stay on the workers",
					q->name, strerror(-err));
				snprintf(why[i], sizeof(why[i]),
					 "the kernel path could not be set "
					 "up: %s",
					 strerror(-err));
				if (q->skel)
					cfg_kernel_fwd(kt, q, 0);
				want[i] = FERRY_PATH_XSK;
			}
		}
		kp(kt, q)->path = want[i];
		memcpy(kp(kt, q)->why, why[i], sizeof(kp(kt, q)->why));
		kp(kt, q)->why[sizeof(kp(kt, q)->why) - 1] = 0;
		if (was != want[i])
			log_info("port %s: route path %s (%s)", q->name,
				 ferry_path_name(want[i]), why[i]);
	}
}

int ferry_kpath_fib_read(struct ferry_kpath *kt, const struct ferry_port *p,
			 struct ferry_fib_ctr *out)
{
	int ncpu = libbpf_num_possible_cpus(), i;
	uint32_t key = 0;

	memset(out, 0, sizeof(*out));
	if (!p->skel || ncpu <= 0 || p->app != FERRY_APP_ROUTE)
		return -ENOENT;
	{
		struct ferry_fib_ctr v[ncpu];

		if (bpf_map_lookup_elem(
			    bpf_map__fd(p->skel->maps.ferry_fib_ctrs), &key, v))
			return -errno;
		for (i = 0; i < ncpu; i++) {
#define FSUM(id) out->id += v[i].id;
			FERRY_FIB_CTRS(FSUM)
#undef FSUM
		}
	}
	if (kp(kt, p)->acct) {
#define FBASE(id) out->id -= kp(kt, p)->acct->fib_base.id;
		FERRY_FIB_CTRS(FBASE)
#undef FBASE
	}
	return 0;
}

static void fib_reset(struct ferry_kpath *kt, struct ferry_port *p)
{
	int ncpu = libbpf_num_possible_cpus(), i;
	uint32_t key = 0;

	if (!p->skel || ncpu <= 0 || !kp(kt, p)->acct)
		return;
	{
		struct ferry_fib_ctr v[ncpu];

		memset(&kp(kt, p)->acct->fib_base, 0,
		       sizeof(kp(kt, p)->acct->fib_base));
		if (bpf_map_lookup_elem(
			    bpf_map__fd(p->skel->maps.ferry_fib_ctrs), &key, v))
			return;
		for (i = 0; i < ncpu; i++) {
#define FSUM(id) kp(kt, p)->acct->fib_base.id += v[i].id;
			FERRY_FIB_CTRS(FSUM)
#undef FSUM
		}
	}
}

/* ---- a tx capture on the kernel path (capture_ctl.c) ---- */

/* The DEVMAP value for egress e: its ifindex and that program, if any. */
static struct bpf_devmap_val ferry_kpath_dev_val(struct ferry_kpath *kt,
						 const struct ferry_port *e)
{
	struct bpf_devmap_val v = {.ifindex = (uint32_t)e->ifindex};

	if (kp(kt, e)->acct && kp(kt, e)->acct->tx_prog_fd > 0)
		v.bpf_prog.fd = kp(kt, e)->acct->tx_prog_fd;
	return v;
}

/* Rewrites fd's entry key if it holds egress e (a DEVMAP reads back the
 * program's id, not its fd: the value is written whole). */
static int dev_entry_set(struct ferry_kpath *kt, int fd, uint32_t key,
			 const struct ferry_port *e)
{
	struct bpf_devmap_val old, v = ferry_kpath_dev_val(kt, e);

	if (bpf_map_lookup_elem(fd, &key, &old) ||
	    old.ifindex != (uint32_t)e->ifindex)
		return 0;
	return bpf_map_update_elem(fd, &key, &v, BPF_EXIST) ? -errno : 0;
}

int ferry_kpath_tx_prog(struct ferry_kpath *kt, struct ferry_port *e,
			int prog_fd)
{
	struct ferry_kpath_acct *a = acct(kt, e);
	int i, err = 0, rc;

	if (!a)
		return -ENOMEM;
	a->tx_prog_fd = prog_fd > 0 ? prog_fd : 0;
	for (i = 0; i < kt->ports->n; i++) {
		struct ferry_port *q = kt->ports->v[i];

		if (!q->skel)
			continue;
		rc = dev_entry_set(kt, bpf_map__fd(q->skel->maps.ferry_tx_dev),
				   0, e);
		if (!err)
			err = rc;
		rc = dev_entry_set(kt, bpf_map__fd(q->skel->maps.ferry_fib_dev),
				   (uint32_t)e->ifindex, e);
		if (!err)
			err = rc;
	}
	return err;
}

void ferry_kpath_port_init(struct ferry_kpath *kt, struct ferry_port *p)
{
	*kp(kt, p) = (struct ferry_kpath_port){.req = FERRY_PATH_AUTO,
					       .path = FERRY_PATH_XSK};
}

void ferry_kpath_port_gone(struct ferry_kpath *kt, struct ferry_port *p)
{
	ferry_kpath_tp_detach(kt, p);
	free(kp(kt, p)->acct);
	kp(kt, p)->acct = NULL;
}
