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

#include "ferry_int.h"
#include "ferry_xdp.skel.h"
#include "hostcheck.h"
#include "kpath.h"
#include "log.h"

static const char *const path_names[] = {
#define FERRY_PATH_NAME(id, name) [FERRY_PATH_##id] = name,
	FERRY_PATHS(FERRY_PATH_NAME)
#undef FERRY_PATH_NAME
};

const char *ferry_path_name(enum ferry_path path)
{
	return path < FERRY_PATH__COUNT ? path_names[path] : "?";
}

static struct ferry_kpath_acct *acct(struct ferry_port *p)
{
	if (!p->kacct)
		p->kacct = calloc(1, sizeof(*p->kacct));
	return p->kacct;
}

int ferry_kpath_refusal(const struct ferry_port *p,
			const struct ferry_port *peer, char *why, size_t len)
{
	char pname[IF_NAMESIZE + 80] = "?";
	int rc;

	if (p->dpdk || peer->dpdk) {
		snprintf(why, len,
			 "port %s uses the DPDK backend: its frames "
			 "need a worker",
			 p->dpdk ? p->name : peer->name);
		return -EOPNOTSUPP;
	}
	if (p->spread_n) {
		snprintf(why, len, "port %s is spread over workers", p->name);
		return -EOPNOTSUPP;
	}
	if (peer->gen && ferry_gen_running(peer->gen)) {
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

static int cfg_kernel_fwd(struct ferry_port *p, uint8_t on)
{
	struct ferry_xdp_cfg cfg;
	uint32_t key = 0;
	int fd = bpf_map__fd(p->skel->maps.ferry_cfg);

	if (bpf_map_lookup_elem(fd, &key, &cfg))
		return -errno;
	if (cfg.kernel_fwd == on)
		return 0;
	cfg.kernel_fwd = on;
	return bpf_map_update_elem(fd, &key, &cfg, 0) ? -errno : 0;
}

static int kpath_on(struct ferry_port *p)
{
	uint32_t key = 0, ifindex = (uint32_t)p->peer->ifindex;
	int err;

	if (bpf_map_update_elem(bpf_map__fd(p->skel->maps.ferry_tx_dev), &key,
				&ifindex, 0))
		return -errno;
	err = cfg_kernel_fwd(p, 1);
	return err;
}

static void kpath_off(struct ferry_port *p)
{
	uint32_t key = 0;
	int err = cfg_kernel_fwd(p, 0);

	if (err)
		log_warn("port %s: cannot turn the kernel path off: %s",
			 p->name, strerror(-err));
	ferry_xdp_runs_wait();
	bpf_map_delete_elem(bpf_map__fd(p->skel->maps.ferry_tx_dev), &key);
}

void ferry_kpath_apply(struct ferry *f, struct ferry_port *p)
{
	enum ferry_path want = FERRY_PATH_XSK, was = p->path;
	char why[sizeof(p->path_why)];
	int err;

	(void)f;
	why[0] = 0;
	if (p->app != FERRY_APP_XCONNECT || !p->peer) {
		snprintf(why, sizeof(why), "not an xconnect");
	} else if (!p->skel || p->deferred) {
		snprintf(why, sizeof(why), "no classifier of ferry's yet");
	} else if (p->peer->state == FERRY_PORT_FAILED) {
		/* Its workers count what they cannot send (port_down). */
		snprintf(why, sizeof(why), "the egress %s has failed",
			 p->peer->name);
	} else if (p->path_req == FERRY_PATH_XSK) {
		snprintf(why, sizeof(why), "asked for (path xsk)");
	} else if (p->path_req == FERRY_PATH_KERNEL) {
		want = FERRY_PATH_KERNEL;
		snprintf(why, sizeof(why), "asked for (path kernel)");
	} else if (!ferry_kpath_refusal(p, p->peer, why, sizeof(why))) {
		want = FERRY_PATH_KERNEL;
		snprintf(why, sizeof(why), "auto: nothing on %s needs a worker",
			 p->name);
	}
	if (want == FERRY_PATH_KERNEL) {
		err = kpath_on(p);
		if (err) {
			log_warn("port %s: kernel path failed (%s); frames "
				 "stay on the workers",
				 p->name, strerror(-err));
			snprintf(why, sizeof(why),
				 "the kernel path could not be set up: %s",
				 strerror(-err));
			want = FERRY_PATH_XSK;
			kpath_off(p);
		}
	} else if (was == FERRY_PATH_KERNEL && p->skel) {
		kpath_off(p);
	}
	p->path = want;
	snprintf(p->path_why, sizeof(p->path_why), "%s", why);
	if (was != want)
		log_info("port %s: path %s (%s)", p->name,
			 ferry_path_name(want), why);
}

int ferry_kpath_read(const struct ferry_port *p, struct ferry_kpath_ctrs *c)
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
	if (p->kfwd_tp[1])
		c->tx_packets = c->xmit_sent;
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

void ferry_kpath_fold(struct ferry_port *p)
{
	struct ferry_kpath_acct *a = acct(p), *pa;
	struct ferry_kpath_ctrs now;

	if (!a || ferry_kpath_read(p, &now))
		return;
	if (p->app == FERRY_APP_XCONNECT && p->peer && (pa = acct(p->peer))) {
		pa->tx_folded += now.tx_packets - a->snap.tx_packets;
		pa->tx_bytes_folded += now.tx_bytes - a->snap.tx_bytes;
	}
	a->snap = now;
}

/* p's kernel-path tx as an egress, since its classifiers loaded. */
static void tx_raw(struct ferry *f, struct ferry_port *p, uint64_t *pk,
		   uint64_t *by)
{
	struct ferry_kpath_acct *a = acct(p);
	int i;

	*pk = a ? a->tx_folded : 0;
	*by = a ? a->tx_bytes_folded : 0;
	for (i = 0; i < f->n_ports; i++) {
		struct ferry_port *q = f->ports[i];
		struct ferry_kpath_acct *qa = acct(q);
		struct ferry_kpath_ctrs now;

		if (q->app != FERRY_APP_XCONNECT || q->peer != p || !qa ||
		    ferry_kpath_read(q, &now))
			continue;
		*pk += now.tx_packets - qa->snap.tx_packets;
		*by += now.tx_bytes - qa->snap.tx_bytes;
	}
}

void ferry_kpath_stats(struct ferry *f, struct ferry_port *p,
		       struct ferry_kpath_ctrs *rx, uint64_t *tx_packets,
		       uint64_t *tx_bytes)
{
	struct ferry_kpath_acct *a = acct(p);

	ferry_kpath_read(p, rx);
	tx_raw(f, p, tx_packets, tx_bytes);
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

void ferry_kpath_reset(struct ferry *f, struct ferry_port *p)
{
	struct ferry_kpath_acct *a = acct(p);

	if (!a)
		return;
	ferry_kpath_read(p, &a->base);
	tx_raw(f, p, &a->tx_base, &a->tx_bytes_base);
}

void ferry_kpath_tick(struct ferry *f, struct ferry_port *p, double dt)
{
	struct ferry_kpath_acct *a = acct(p);
	struct ferry_kpath_ctrs c;
	uint64_t tx, tx_bytes;

	if (!a)
		return;
	if (ferry_kpath_read(p, &c))
		c.rx_packets = a->prev_rx;
	tx_raw(f, p, &tx, &tx_bytes);
	a->rx_pps = dt > 0 && c.rx_packets >= a->prev_rx
			    ? (double)(c.rx_packets - a->prev_rx) / dt
			    : 0;
	a->tx_pps =
		dt > 0 && tx >= a->prev_tx ? (double)(tx - a->prev_tx) / dt : 0;
	a->prev_rx = c.rx_packets;
	a->prev_tx = tx;
}

void ferry_kpath_ledger(const struct ferry_port *p, struct ferry_ledger *l)
{
	struct ferry_kpath_ctrs c;

	if (ferry_kpath_read(p, &c))
		return;
	l->kpath_rx += c.rx_packets;
	l->kpath_tx += c.tx_packets;
	l->kpath_err += c.err_down + c.err_too_big + c.err_other;
	l->kpath_xmit_drops += c.xmit_drops;
}

int ferry_kpath_tp_attach(struct ferry_port *p)
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
	p->skel->bss->ferry_rx_ifindex = (uint32_t)p->ifindex;
	p->skel->bss->ferry_rx_netns =
		stat("/proc/self/ns/net", &st) ? 0 : (uint32_t)st.st_ino;
	p->kfwd_tp[0] = bpf_program__attach(p->skel->progs.ferry_redirect_err);
	if (!p->kfwd_tp[0])
		return -errno;
	p->kfwd_tp[1] = bpf_program__attach(p->skel->progs.ferry_devmap_xmit);
	if (!p->kfwd_tp[1]) {
		int err = -errno;

		ferry_kpath_tp_detach(p);
		return err;
	}
	return 0;
}

void ferry_kpath_tp_detach(struct ferry_port *p)
{
	bpf_link__destroy(p->kfwd_tp[0]);
	bpf_link__destroy(p->kfwd_tp[1]);
	p->kfwd_tp[0] = p->kfwd_tp[1] = NULL;
}
