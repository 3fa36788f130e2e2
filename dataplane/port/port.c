// SPDX-License-Identifier: BSD-2-Clause
/* port.c - the XDP side of a port: load, ownership checks, attach, detach. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_link.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ferry_xdp.skel.h"
#include "log.h"
#include "port.h"
#include "wire.h"
#include "pins.h"

static int read_sysfs_int(const char *ifname, const char *leaf, int dflt)
{
	char path[128];
	FILE *f;
	int v;

	snprintf(path, sizeof(path), "/sys/class/net/%s/%s", ifname, leaf);
	f = fopen(path, "r");
	if (!f)
		return dflt;
	if (fscanf(f, "%d", &v) != 1)
		v = dflt;
	fclose(f);
	return v;
}

uint32_t ferry_rx_queue_count(const char *ifname)
{
	char path[128];
	struct dirent *de;
	uint32_t n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/sys/class/net/%s/queues", ifname);
	d = opendir(path);
	if (!d)
		return 1;
	while ((de = readdir(d)))
		n += !strncmp(de->d_name, "rx-", 3);
	closedir(d);
	return n ? n : 1;
}

static int read_mac(const char *ifname, uint8_t mac[6])
{
	char path[128];
	unsigned int b[6];
	FILE *f;
	int i, ok;

	snprintf(path, sizeof(path), "/sys/class/net/%s/address", ifname);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	ok = fscanf(f, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4],
		    &b[5]) == 6;
	fclose(f);
	if (!ok)
		return -EINVAL;
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

int ferry_ifinfo_get(const char *ifname, struct ferry_ifinfo *out)
{
	memset(out, 0, sizeof(*out));
	out->ifindex = (int)if_nametoindex(ifname);
	if (!out->ifindex)
		return -ENODEV;
	out->n_rxq = ferry_rx_queue_count(ifname);
	out->numa_node = read_sysfs_int(ifname, "device/numa_node", -1);
	if (read_mac(ifname, out->mac))
		memset(out->mac, 0, sizeof(out->mac));
	if (ferry_driver_name(ifname, out->driver, sizeof(out->driver)))
		snprintf(out->driver, sizeof(out->driver), "unknown");
	return 0;
}

int ferry_bond_slaves(const char *ifname, char *out, size_t n)
{
	char path[96];
	size_t len = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/bonding/slaves",
		 ifname);
	f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	if (n && fgets(out, (int)n, f))
		len = strcspn(out, "\n");
	if (n)
		out[len] = 0;
	fclose(f);
	return 0;
}

/* ------------------------------------------------- who owns a program */

struct xdp_owner {
	uint32_t prog_id;
	uint32_t attach_flags; /* XDP_FLAGS_DRV_MODE or XDP_FLAGS_SKB_MODE */
	bool is_ferry;
	bool no_bpffs; /* a program is there and no pin can say whose */
	uint32_t owner_pid;
	int fd; /* is_ferry: the pinned program (old_prog_fd); else -1 */
	char name[BPF_OBJ_NAME_LEN];
};

static bool pid_is_live_ferryd(uint32_t pid)
{
	char path[64], comm[32] = "";
	FILE *f;

	if (!pid || (pid_t)pid == getpid())
		return false;
	if (kill((pid_t)pid, 0) && errno == ESRCH)
		return false;
	/* A recycled PID that is not a ferryd does not hold the port. */
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = 0;
	fclose(f);
	return !strncmp(comm, "ferryd", 6);
}

static uint32_t fd_prog_id(int fd)
{
	struct bpf_prog_info info = {0};
	uint32_t len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

/* The owner PID out of the pinned config map of ifname's program. */
static void read_owner_pin(const char *ifname, struct xdp_owner *o)
{
	struct ferry_xdp_cfg cfg;
	struct bpf_map_info mi = {0};
	uint32_t mlen = sizeof(mi), key = 0;
	char path[128];
	int fd;

	if (ferry_pin_path(ifname, FERRY_PIN_CFG, path, sizeof(path)))
		return;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return;
	if (!bpf_obj_get_info_by_fd(fd, &mi, &mlen) &&
	    mi.value_size == sizeof(cfg) &&
	    !bpf_map_lookup_elem(fd, &key, &cfg))
		o->owner_pid = cfg.owner_pid;
	close(fd);
}

/*
 * A foreign program's name, for messages: by id, which only CAP_SYS_ADMIN
 * may do; "?" without it (the id is in the message too).
 */
static void foreign_name(uint32_t id, char *name, size_t len)
{
	struct bpf_prog_info info = {0};
	uint32_t ilen = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(id);

	snprintf(name, len, "?");
	if (fd < 0)
		return;
	if (!bpf_obj_get_info_by_fd(fd, &info, &ilen))
		snprintf(name, len, "%s", info.name);
	close(fd);
}

/*
 * What is attached to ifindex (bpf_xdp_query: CAP_NET_ADMIN), and whether
 * it is a ferryd's: the program pinned for ifname is the attached one.
 * The caller closes o->fd.
 */
static int xdp_owner_get(const char *ifname, int ifindex, uint32_t named_id,
			 uint32_t named_pid, struct xdp_owner *o)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	char path[128];
	int err;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	err = bpf_xdp_query(ifindex, 0, &q);
	if (err)
		return err;
	if (q.drv_prog_id) {
		o->prog_id = q.drv_prog_id;
		o->attach_flags = XDP_FLAGS_DRV_MODE;
	} else if (q.skb_prog_id) {
		o->prog_id = q.skb_prog_id;
		o->attach_flags = XDP_FLAGS_SKB_MODE;
	} else if (q.prog_id) {
		o->prog_id = q.prog_id;
	}
	if (!o->prog_id)
		return 0;
	if (!ferry_pin_path(ifname, FERRY_PIN_PROG, path, sizeof(path)))
		o->fd = bpf_obj_get(path);
	if (o->fd >= 0 && fd_prog_id(o->fd) == o->prog_id) {
		o->is_ferry = true;
		snprintf(o->name, sizeof(o->name), "%s", FERRY_XDP_PROG_NAME);
		read_owner_pin(ifname, o);
		return 0;
	}
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	/* No pin says so, but the live ferryd we take over from named this
	 * program as its own (`handover begin`): bpffs may be absent here. */
	if (named_id && o->prog_id == named_id) {
		o->is_ferry = true;
		o->owner_pid = named_pid;
		snprintf(o->name, sizeof(o->name), "%s", FERRY_XDP_PROG_NAME);
		return 0;
	}
	o->no_bpffs = !ferry_pin_bpffs();
	foreign_name(o->prog_id, o->name, sizeof(o->name));
	return 0;
}

static void xdp_owner_put(struct xdp_owner *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
}

/* Pins p's attached program and its config map, for a successor or a
 * restart to recognise (see takeover.h); a failure only costs that. */
static void xdp_pin_prog(struct ferry_port *p, int prog_fd, int cfg_fd)
{
	int err;

	if (!p->pin_dir[0])
		return;
	err = ferry_pin_replace(p->pin_dir, FERRY_PIN_CFG, cfg_fd);
	if (!err)
		err = ferry_pin_replace(p->pin_dir, FERRY_PIN_PROG, prog_fd);
	if (err)
		log_warn("port %s: cannot pin its program in %s (%s): after a "
			 "crash a restart would not recognise it",
			 p->name, p->pin_dir, strerror(-err));
}

void ferry_port_xdp_pin(struct ferry_port *p, int prog_fd)
{
	if (!p->pin_dir[0] && ferry_pin_dir(p->ifname, true, false, p->pin_dir,
					    sizeof(p->pin_dir)))
		log_warn("port %s: bpffs is not mounted on /sys/fs/bpf: its "
			 "program is not pinned, so after a crash a restart "
			 "cannot recognise it (mount -t bpf bpf /sys/fs/bpf)",
			 p->name);
	xdp_pin_prog(p, prog_fd, bpf_map__fd(p->skel->maps.ferry_cfg));
}

/* ------------------------------------------------------- load / attach */

static uint32_t map_id(int fd)
{
	struct bpf_map_info mi = {0};
	uint32_t len = sizeof(mi);

	return bpf_obj_get_info_by_fd(fd, &mi, &len) ? 0 : mi.id;
}

/* After the skeleton is loaded: attaches the xdp_cpumap_enqueue tracepoint
 * program, which counts the drops of p's own CPUMAP; 0 or -errno. */
static int ferry_port_cpumap_tp_attach(struct ferry_port *p)
{
	/* The tracepoint fires for every CPUMAP on the host: the program
	 * keeps to the one whose id it is given. */
	p->skel->bss->ferry_cpu_map_id =
		map_id(bpf_map__fd(p->skel->maps.cpu_map));
	p->cpumap_tp = bpf_program__attach(p->skel->progs.ferry_cpumap_enqueue);
	return p->cpumap_tp ? 0 : -errno;
}

/*
 * An fd this process already holds on the BPF object id (prog: a program,
 * else a map), duplicated; -ENOENT when none. The DPDK PMD loads its
 * program and maps in this process and never closes them: they are found
 * here without opening anything by id (which needs CAP_SYS_ADMIN).
 */
int ferry_bpf_own_fd(bool prog, uint32_t id)
{
	const char *want = prog ? "anon_inode:bpf-prog" : "anon_inode:bpf-map";
	char link[300], target[64];
	struct dirent *de;
	int fd, found = -ENOENT;
	ssize_t n;
	DIR *d;

	d = opendir("/proc/self/fd");
	if (!d)
		return -errno;
	while (found < 0 && (de = readdir(d))) {
		struct bpf_prog_info pi = {0};
		struct bpf_map_info mi = {0};
		uint32_t len = prog ? sizeof(pi) : sizeof(mi);

		if (de->d_name[0] == '.')
			continue;
		fd = atoi(de->d_name);
		snprintf(link, sizeof(link), "/proc/self/fd/%s", de->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (fd == dirfd(d) || n <= 0)
			continue;
		target[n] = 0;
		if (strcmp(target, want) ||
		    bpf_obj_get_info_by_fd(fd, prog ? (void *)&pi : (void *)&mi,
					   &len))
			continue;
		if ((prog ? pi.id : mi.id) == id)
			found = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	}
	closedir(d);
	return found;
}

int ferry_prog_map_fd(int prog_fd, const struct bpf_map *m)
{
	struct bpf_prog_info info = {0};
	uint32_t ids[16], len = sizeof(info), i;
	int fd;

	info.nr_map_ids = 16;
	info.map_ids = (uintptr_t)ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -errno;
	for (i = 0; i < info.nr_map_ids && i < 16; i++) {
		struct bpf_map_info mi = {0};
		uint32_t mlen = sizeof(mi);

		fd = ferry_bpf_own_fd(false, ids[i]);
		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &mi, &mlen) &&
		    !strncmp(mi.name, bpf_map__name(m), BPF_OBJ_NAME_LEN - 1) &&
		    mi.type == bpf_map__type(m) &&
		    mi.key_size == bpf_map__key_size(m) &&
		    mi.value_size == bpf_map__value_size(m) &&
		    mi.max_entries == bpf_map__max_entries(m))
			return fd;
		close(fd);
	}
	return -ENOENT;
}

/*
 * The maps a successor must share to carry on: the XSKMAP (its sockets
 * receive through the old program until the swap) and the verdict
 * counters (frames the handover passes to the kernel are counted there).
 * Rules, config and CPU sets belong to each program: the new one fills its
 * own from the configuration, and the old one keeps working unchanged
 * until it is replaced. They come from the pins (libbpf reuses a pinned
 * map of the same shape, or creates and pins one).
 */
#define SHARED_MAPS(s)                                                         \
	{                                                                      \
		(s)->maps.xsks_map, (s)->maps.ferry_verdicts                   \
	}

static int skel_share(struct ferry_port *p, void *arg)
{
	struct bpf_map *maps[] = SHARED_MAPS(p->skel);
	char path[sizeof(p->pin_dir) + 32];
	int err = 0;
	size_t i;

	(void)arg; /* nothing beyond p */
	for (i = 0; p->pin_dir[0] && i < sizeof(maps) / sizeof(maps[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", p->pin_dir,
			 bpf_map__name(maps[i]));
		err = bpf_map__set_pin_path(maps[i], path);
		if (err)
			break;
	}
	return err;
}

/* Maps of its own, unpinned. */
static int skel_own(struct ferry_port *p, void *arg)
{
	(void)p;
	(void)arg;
	return 0;
}

/*
 * Opens p's skeleton, lets prep point its maps, loads it and, with_tp,
 * attaches the enqueue tracepoint program (it only counts, it changes no
 * frame). On failure nothing is left: p->skel is NULL.
 */
static int skel_try(struct ferry_port *p, ferry_skel_prep_fn prep, void *arg,
		    bool with_tp)
{
	int err;

	p->skel = ferry_xdp_bpf__open();
	if (!p->skel)
		return -errno;
	bpf_program__set_autoload(p->skel->progs.ferry_cpumap_enqueue, with_tp);
	bpf_program__set_autoload(p->skel->progs.ferry_redirect_err, with_tp);
	bpf_program__set_autoload(p->skel->progs.ferry_devmap_xmit, with_tp);
	err = prep(p, arg);
	if (!err)
		err = ferry_xdp_bpf__load(p->skel);
	/* The kernel path's tracepoints are loaded here and attached only
	 * while the port forwards on that path (kpath.c). */
	if (!err && with_tp)
		err = ferry_port_cpumap_tp_attach(p);
	if (err) {
		bpf_link__destroy(p->cpumap_tp);
		p->cpumap_tp = NULL;
		ferry_xdp_bpf__destroy(p->skel);
		p->skel = NULL;
	}
	return err;
}

int ferry_port_skel_load(struct ferry_port *p, ferry_skel_prep_fn prep,
			 void *arg)
{
	int err, tp_err;

	err = skel_try(p, prep, arg, true);
	if (!err)
		return 0;
	tp_err = err;
	err = skel_try(p, prep, arg, false);
	if (!err)
		log_warn("port %s: xdp_cpumap_enqueue, xdp_redirect_err or "
			 "xdp_devmap_xmit tracepoint unavailable (%s); CPUMAP "
			 "enqueue drops and kernel-path transmit failures are "
			 "not counted",
			 p->name, strerror(-tp_err));
	return err;
}

/*
 * Sharing the pinned maps is an extra, like the
 * enqueue tracepoint: pins from another build whose maps differ are left
 * alone and the counters restart, rather than the port being refused.
 */
static int skel_load_any(struct ferry_port *p)
{
	int err = ferry_port_skel_load(p, skel_share, NULL);

	if (!err || !p->pin_dir[0])
		return err;
	log_warn("port %s: cannot load with the pinned maps (%s); not "
		 "sharing them",
		 p->name, strerror(-err));
	/* A different build's pins. Adopting, they stay the old daemon's
	 * (it may resume); otherwise ours replace them, from zero. The
	 * program and config pins are replaced at attach either way. */
	if (p->adopt_pid)
		return ferry_port_skel_load(p, skel_own, NULL);
	ferry_pin_dir(p->ifname, true, true, p->pin_dir, sizeof(p->pin_dir));
	return ferry_port_skel_load(p, skel_share, NULL);
}

/*
 * What is on ifindex, in o, and whether ferry may take it: 0, or -EBUSY
 * with msg when a foreign program or a live ferryd (other than allow_pid,
 * the daemon a hot restart takes over from) holds it.
 */
static int xdp_owner_check(const char *ifname, int ifindex, uint32_t allow_pid,
			   uint32_t named_id, struct xdp_owner *o,
			   struct ferry_err *msg)
{
	int err = xdp_owner_get(ifname, ifindex, named_id, allow_pid, o);

	if (err)
		return ferry_fail(msg, err, "%s: cannot query XDP: %s", ifname,
				  strerror(-err));
	if (o->prog_id && o->no_bpffs)
		return ferry_fail(
			msg, -EBUSY,
			"%s has XDP program '%s' (id %u) and ferry cannot "
			"tell whether a killed ferryd left it: bpffs, where "
			"ferryd pins its programs, is not mounted on "
			"/sys/fs/bpf; mount it (mount -t bpf bpf /sys/fs/bpf) "
			"or remove the program (ip link set dev %s xdp off)",
			ifname, o->name, o->prog_id, ifname);
	if (o->prog_id && !o->is_ferry)
		return ferry_fail(
			msg, -EBUSY,
			"%s already has XDP program '%s' (id %u) that "
			"ferry did not load; remove it first "
			"(ip link set dev %s xdp off)",
			ifname, o->name, o->prog_id, ifname);
	if (o->prog_id && pid_is_live_ferryd(o->owner_pid) &&
	    o->owner_pid != allow_pid)
		return ferry_fail(msg, -EBUSY, "%s is driven by ferryd pid %u",
				  ifname, o->owner_pid);
	return 0;
}

/* xdp_owner_check, keeping nothing open. */
static int xdp_owner_check_put(const char *ifname, int ifindex,
			       uint32_t allow_pid, uint32_t named_id,
			       struct xdp_owner *o, struct ferry_err *msg)
{
	int err = xdp_owner_check(ifname, ifindex, allow_pid, named_id, o, msg);

	xdp_owner_put(o);
	return err;
}

int ferry_port_xdp_load(struct ferry_port *p, struct ferry_err *msg)
{
	struct ferry_xdp_cfg cfg = {
		.n_rules = 0,
		.default_action = p->default_action,
		.pass_arp_ndp = !ferry_port_is_wire(p),
		.owner_pid = (uint32_t)getpid(),
		.spread_n = (uint8_t)ferry_port_spread_n(p),
		.spread_via = p->req.spread_via,
		.spread_queue = (uint16_t)p->q_first,
	};
	struct xdp_owner o;
	uint32_t cpu, i = 0;
	uint32_t key = 0;
	int err;

	for (cpu = 0; cpu < FERRY_MAX_CPUS && i < FERRY_SPREAD_MAX; cpu++)
		if (ferry_port_spread_n(p) &&
		    (p->req.spread_cpus & (1ull << cpu)))
			cfg.spread_cpu[i++] = (uint8_t)cpu;
	err = xdp_owner_check_put(p->ifname, p->ifindex, p->adopt_pid,
				  p->adopt_pid ? p->adopt_prog_id : 0, &o, msg);
	if (err)
		return err;
	err = ferry_pin_dir(p->ifname, !p->adopt_pid, o.is_ferry, p->pin_dir,
			    sizeof(p->pin_dir));
	if (err && err != -ENOENT)
		return ferry_fail(msg, err,
				  "%s: cannot pin its program in %s/%s: %s "
				  "(the directory must belong to ferryd's "
				  "user: chown -R ferry:ferry %s)",
				  p->ifname, FERRY_PIN_ROOT, p->ifname,
				  strerror(-err), FERRY_PIN_ROOT);
	if (err)
		log_warn("port %s: bpffs is not mounted on /sys/fs/bpf: its "
			 "program is not pinned, so after a crash a restart "
			 "cannot recognise it (mount -t bpf bpf /sys/fs/bpf)",
			 p->name);

	err = skel_load_any(p);
	if (err)
		return ferry_fail(msg, err,
				  "cannot load the XDP classifier: %s",
				  strerror(-err));
	err = bpf_map_update_elem(bpf_map__fd(p->skel->maps.ferry_cfg), &key,
				  &cfg, 0);
	if (err) {
		err = -errno;
		ferry_fail(msg, err, "cannot configure the classifier: %s",
			   strerror(-err));
		ferry_port_xdp_unload(p);
		return err;
	}
	return 0;
}

int ferry_port_xsk_insert(struct ferry_port *p, uint32_t queue, int fd)
{
	if (bpf_map_update_elem(bpf_map__fd(p->skel->maps.xsks_map), &queue,
				&fd, 0))
		return -errno;
	return 0;
}

int ferry_port_xsk_remove(struct ferry_port *p, uint32_t queue)
{
	if (bpf_map_delete_elem(bpf_map__fd(p->skel->maps.xsks_map), &queue) &&
	    errno != ENOENT)
		return -errno;
	return 0;
}

struct ferry_worker *ferry_port_pq_worker(const struct ferry_workers *wk,
					  const struct ferry_port *p,
					  uint32_t i)
{
	int cpu;

	if (!wk->n)
		return NULL;
	if (!ferry_port_spread_n(p))
		return wk->v[i % (uint32_t)wk->n];
	for (cpu = 0; cpu < FERRY_MAX_CPUS; cpu++)
		if ((p->req.spread_cpus & (1ull << cpu)) && !i--)
			return ferry_workers_on_cpu(wk, cpu);
	return NULL;
}

struct ferry_pq *ferry_port_tx_pq(struct ferry_port *p,
				  const struct ferry_worker *w)
{
	uint32_t i;

	for (i = 0; i < p->n_queues; i++)
		if (p->pq[i].w == w && (p->pq[i].xsk || p->pq[i].dq) &&
		    ferry_port_pq_can_tx(p, i))
			return &p->pq[i];
	return NULL;
}

/* A spread port's sockets sit at their worker's slot, not a queue. */
static uint32_t xsk_key(const struct ferry_port *p, uint32_t i)
{
	return ferry_port_spread_n(p) ? i : p->pq[i].queue;
}

void ferry_port_xsks_unmap(struct ferry_port *p)
{
	uint32_t i;

	if (!p->skel)
		return; /* closed already (a failed port) */
	for (i = 0; i < p->n_queues; i++)
		if (p->pq[i].xsk)
			ferry_port_xsk_remove(p, xsk_key(p, i));
}

int ferry_port_xsks_map(struct ferry_port *p)
{
	uint32_t i;
	int err;

	for (i = 0; p->skel && i < p->n_queues; i++) {
		if (!p->pq[i].xsk)
			continue;
		err = ferry_port_xsk_insert(p, xsk_key(p, i), p->pq[i].xsk->fd);
		if (err)
			return err;
	}
	return 0;
}

int ferry_port_xdp_attach(struct ferry_port *p, struct ferry_err *msg)
{
	uint32_t mode =
		p->xdp_generic ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
	int prog_fd = bpf_program__fd(p->skel->progs.ferry_xdp);
	struct bpf_prog_info info = {0};
	uint32_t ilen = sizeof(info);
	struct xdp_owner o;
	int err, old_fd;

	/* Look again: the interface may have changed since the load. */
	err = xdp_owner_get(p->ifname, p->ifindex,
			    p->adopt_pid ? p->adopt_prog_id : 0, p->adopt_pid,
			    &o);
	if (err)
		return ferry_fail(msg, err, "%s: cannot query XDP: %s",
				  p->ifname, strerror(-err));
	if (o.prog_id && (!o.is_ferry || (pid_is_live_ferryd(o.owner_pid) &&
					  o.owner_pid != p->adopt_pid))) {
		xdp_owner_put(&o);
		return ferry_fail(msg, -EBUSY,
				  "%s: XDP program '%s' (id %u) appeared; "
				  "not replacing it",
				  p->ifname, o.name, o.prog_id);
	}

	if (o.prog_id) {
		LIBBPF_OPTS(bpf_xdp_attach_opts, opts);

		/* The pinned program: the kernel swaps only if it is still
		 * the attached one (XDP_FLAGS_REPLACE). A program the old
		 * ferryd only named (no bpffs, so no fd of it: opening one by
		 * id takes CAP_SYS_ADMIN) is swapped without that check; it
		 * was the attached one at the look just above. */
		old_fd = o.fd;
		opts.old_prog_fd = old_fd >= 0 ? old_fd : 0;
		if (o.attach_flags == mode) {
			err = bpf_xdp_attach(p->ifindex, prog_fd, mode, &opts);
		} else {
			/* Other mode: take the stale one off, then attach. */
			err = bpf_xdp_detach(p->ifindex, o.attach_flags, &opts);
			if (!err)
				err = bpf_xdp_attach(
					p->ifindex, prog_fd,
					mode | XDP_FLAGS_UPDATE_IF_NOEXIST,
					NULL);
		}
		xdp_owner_put(&o);
		if (!err && p->adopt_pid && o.owner_pid == p->adopt_pid) {
			log_info("port %s: took over from ferryd pid %u "
				 "(program id %u replaced)",
				 p->name, o.owner_pid, o.prog_id);
		} else if (!err) {
			p->replaced_stale = true;
			log_info("port %s: replaced stale ferry program id %u "
				 "(ferryd pid %u is gone)",
				 p->name, o.prog_id, o.owner_pid);
		}
	} else {
		err = bpf_xdp_attach(p->ifindex, prog_fd,
				     mode | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	}
	if (err == -EOPNOTSUPP && !p->xdp_generic)
		return ferry_fail(msg, err,
				  "%s (driver %s) has no native XDP; add "
				  "'xdp generic' (slower: runs after the skb "
				  "is built)",
				  p->ifname, p->driver);
	if (err)
		return ferry_fail(
			msg, err, "%s: cannot attach XDP in %s mode: %s",
			p->ifname, p->xdp_generic ? "generic" : "native",
			strerror(-err));
	if (!bpf_obj_get_info_by_fd(prog_fd, &info, &ilen))
		p->prog_id = info.id;
	xdp_pin_prog(p, prog_fd, bpf_map__fd(p->skel->maps.ferry_cfg));
	return 0;
}

void ferry_port_xdp_detach(struct ferry_port *p)
{
	uint32_t mode =
		p->xdp_generic ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
	LIBBPF_OPTS(bpf_xdp_attach_opts, opts);
	int err;

	if (!p->skel || !p->prog_id)
		return;
	/* Only our own program: the kernel checks old_prog_fd atomically. */
	opts.old_prog_fd = bpf_program__fd(p->skel->progs.ferry_xdp);
	err = bpf_xdp_detach(p->ifindex, mode, &opts);
	if (err && err != -ENODEV)
		log_warn("port %s: XDP program on %s was not ours any more; "
			 "left in place (%s)",
			 p->name, p->ifname, strerror(-err));
	p->prog_id = 0;
}

void ferry_port_xdp_unload(struct ferry_port *p)
{
	bpf_link__destroy(p->cpumap_tp);
	p->cpumap_tp = NULL;
	ferry_xdp_bpf__destroy(p->skel);
	p->skel = NULL;
}

int ferry_port_xdp_current(const struct ferry_port *p, uint32_t *id, char *name,
			   size_t name_len)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int err;

	*id = 0;
	err = bpf_xdp_query(p->ifindex, 0, &q);
	if (err)
		return err;
	*id = p->xdp_generic ? q.skb_prog_id : q.drv_prog_id;
	if (name && *id && *id == p->prog_id)
		snprintf(name, name_len, "%s", FERRY_XDP_PROG_NAME);
	else if (name && *id)
		foreign_name(*id, name, name_len);
	else if (name)
		snprintf(name, name_len, "?");
	return 0;
}

int ferry_port_xdp_restore(struct ferry_port *p, uint32_t foreign_id)
{
	uint32_t mode =
		p->xdp_generic ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
	int prog_fd = bpf_program__fd(p->skel->progs.ferry_xdp);
	LIBBPF_OPTS(bpf_xdp_attach_opts, opts);
	int err, old_fd;

	if (!foreign_id)
		return bpf_xdp_attach(p->ifindex, prog_fd,
				      mode | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	/* XDP_FLAGS_REPLACE: the kernel swaps only if the foreign program is
	 * still the attached one, so a third change in between is kept. Its
	 * fd comes by id, which needs CAP_SYS_ADMIN; without it ferry
	 * replaces whatever is attached, foreign_id a moment ago: a third
	 * change in that moment is lost (ferryd(8), CAPABILITIES). */
	old_fd = bpf_prog_get_fd_by_id(foreign_id);
	if (old_fd < 0 && errno == EPERM)
		return bpf_xdp_attach(p->ifindex, prog_fd, mode, NULL);
	if (old_fd < 0)
		return -errno;
	opts.old_prog_fd = old_fd;
	err = bpf_xdp_attach(p->ifindex, prog_fd, mode, &opts);
	close(old_fd);
	return err;
}

int ferry_port_verdicts(const struct ferry_port *p, uint64_t *out)
{
	int ncpu = libbpf_num_possible_cpus(), fd, c;
	struct ferry_verdict_ctr *vals;
	uint32_t r;

	if (!p->skel)
		return -ENODEV; /* failed port: its program is gone */
	if (ncpu <= 0)
		return -EINVAL;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	fd = bpf_map__fd(p->skel->maps.ferry_verdicts);
	for (r = 0; r < FERRY_R__COUNT; r++) {
		out[r] = 0;
		if (bpf_map_lookup_elem(fd, &r, vals))
			continue;
		for (c = 0; c < ncpu; c++)
			out[r] += vals[c].packets;
	}
	free(vals);
	return 0;
}

int ferry_port_xdp_check_free(const char *ifname, int ifindex, int *stale_fd,
			      struct ferry_err *msg)
{
	struct xdp_owner o;
	int err;

	*stale_fd = -1;
	err = xdp_owner_check(ifname, ifindex, 0, 0, &o, msg);
	if (err) {
		xdp_owner_put(&o);
		return err;
	}
	*stale_fd = o.fd;
	return 0;
}

int ferry_xsk_error(const struct ferry_port *p, uint32_t queue, int err,
		    struct ferry_err *msg)
{
	switch (err) {
	case -EOPNOTSUPP:
		return ferry_fail(msg, err,
				  "zero-copy is not supported on %s (driver "
				  "%s): %s; use 'mode auto' or 'mode copy'",
				  p->ifname, p->driver,
				  p->caps.why_no_zc[0]
					  ? p->caps.why_no_zc
					  : "the bind was refused");
	case -EINVAL:
		return ferry_fail(
			msg, err,
			"%s queue %u: mode %s clashes with the mode of the "
			"worker's shared UMEM (set by its first port)",
			p->ifname, queue,
			p->req.mode == FERRY_XSK_ZC ? "zc" : "copy");
	case -EBUSY:
		return ferry_fail(
			msg, err,
			"%s queue %u is already bound by another AF_XDP "
			"socket",
			p->ifname, queue);
	case -EPROTONOSUPPORT:
		return ferry_fail(
			msg, -EOPNOTSUPP,
			"busy-poll needs a socket with a NAPI id, and %s "
			"queue %u is in copy mode (since Linux 6.13 only a "
			"zero-copy bind gets one); drop 'busy-poll on'",
			p->ifname, queue);
	default:
		return ferry_fail(msg, err, "%s queue %u: AF_XDP socket: %s",
				  p->ifname, queue, strerror(-err));
	}
}

/*
 * Waits for an RCU grace period: every XDP program run (a NAPI poll, BH
 * off) that began before the call has ended, and with it the redirect it
 * chose. MEMBARRIER_CMD_GLOBAL is synchronize_rcu() from userspace; where
 * it is refused (nohz_full), a sleep far longer than any NAPI poll.
 */
void ferry_xdp_runs_wait(void)
{
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) < 0)
		usleep(10000);
}

/* Queue fields the worker reads per packet change only while it is parked. */
void ferry_port_set_down(struct ferry_port *p, bool down)
{
	uint32_t i;

	for (i = 0; i < p->n_queues; i++) {
		struct ferry_pq *pq = &p->pq[i];

		if (!pq->w)
			continue;
		ferry_worker_pause(pq->w);
		pq->down = down;
		ferry_worker_resume(pq->w);
	}
}

void ferry_port_set_mtu(struct ferry_port *p, uint32_t mtu)
{
	uint32_t max_frame = ferry_mtu_frame_max(mtu), i;

	p->mtu = mtu;
	for (i = 0; i < p->n_queues; i++) {
		struct ferry_pq *pq = &p->pq[i];

		if (!pq->w || pq->max_frame == max_frame)
			continue;
		ferry_worker_pause(pq->w);
		pq->max_frame = max_frame;
		ferry_worker_resume(pq->w);
	}
}

struct ferry_port *ferry_ports_find(const struct ferry_ports *ps,
				    const char *name)
{
	int i;

	for (i = 0; i < ps->n; i++)
		if (!strcmp(ps->v[i]->name, name))
			return ps->v[i];
	return NULL;
}

int ferry_ports_slot_free(const struct ferry_ports *ps)
{
	uint64_t used = 0;
	int i;

	_Static_assert(FERRY_MAX_PORTS <= 64, "slots fit one mask");
	for (i = 0; i < ps->n; i++)
		used |= 1ull << ps->v[i]->slot;
	return ~used ? __builtin_ctzll(~used) : -ENOSPC;
}
