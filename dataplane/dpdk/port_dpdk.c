// SPDX-License-Identifier: BSD-2-Clause
/*
 * port_dpdk.c - the DPDK backend's control side: EAL, the workers' mbuf
 * pools, and a port's net_af_xdp vdev from setup to close. What it takes
 * to work with the PMD itself (its classifier, what it leaves behind) is
 * in dpdk_pmd.c; the data path in worker_dpdk.c.
 */
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/if_xdp.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_bus_vdev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_version.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_mempool.h>

#include "dpdk_int.h"
#include "port.h"
#include "log.h"
#include "util.h"
#include "port.h"

/* EAL memory: every worker's pool (~40 MB each) with room to spare. */
#define EAL_MEM_MB "512"
#define EAL_MEM_KB (512 * 1024)

bool ferry_dpdk_built(void)
{
	return true;
}

/* ------------------------------------------------------------------ EAL */

/* Are there enough free hugepages for all of EAL's memory? */
static bool hugepages_free(void)
{
	unsigned long free_pages = 0, page_kb = 0, v;
	char line[128];
	FILE *fp = fopen("/proc/meminfo", "r");

	if (!fp)
		return false;
	while (fgets(line, sizeof(line), fp)) {
		if (sscanf(line, "HugePages_Free: %lu", &v) == 1)
			free_pages = v;
		else if (sscanf(line, "Hugepagesize: %lu kB", &v) == 1)
			page_kb = v;
	}
	fclose(fp);
	return free_pages * page_kb >= EAL_MEM_KB;
}

/*
 * rte_eal_init runs once per process. In memory (no files in /var/run or
 * hugetlbfs; --in-memory, or --no-shconf with --no-huge), with a file prefix of ferryd's own so that other DPDK
 * processes (testpmd, a second ferryd) never meet ours; no PCI scan; one
 * lcore, the first CPU ferryd may use, as EAL's main lcore. The workers
 * are ferry's own threads, not lcores. EAL pins the calling thread (the
 * control thread) to its main lcore; we put its affinity back.
 */
static int eal_start(struct ferry_dpdk *d, struct ferry_err *msg)
{
	uint64_t allowed = ferry_allowed_cpus();
	char lcore[16], *argv[16];
	cpu_set_t saved;
	int argc = 0, ret, have_saved;

	if (d->eal_up)
		return 0;
	if (d->eal_err)
		return ferry_fail(msg, d->eal_err,
				  "DPDK EAL failed to start earlier (%s); it "
				  "starts once per process: restart ferryd",
				  strerror(-d->eal_err));
	snprintf(d->prefix, sizeof(d->prefix), "ferry-%d", (int)getpid());
	d->hugepages = hugepages_free();
	snprintf(lcore, sizeof(lcore), "%d",
		 allowed ? __builtin_ctzll(allowed) : 0);
	argv[argc++] = "ferryd";
	/* --no-huge means legacy memory, which --in-memory refuses; there
	 * --no-shconf keeps EAL's files away instead. */
	argv[argc++] = d->hugepages ? "--in-memory" : "--no-shconf";
	argv[argc++] = "--file-prefix";
	argv[argc++] = d->prefix;
	argv[argc++] = "--no-pci";
	argv[argc++] = "--no-telemetry";
	argv[argc++] = "--log-level=5"; /* warnings and worse */
	argv[argc++] = "-l";
	argv[argc++] = lcore;
	if (!d->hugepages) {
		argv[argc++] = "--no-huge";
		argv[argc++] = "-m";
		argv[argc++] = EAL_MEM_MB;
	}
	argv[argc] = NULL;

	have_saved =
		!pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved);
	ret = rte_eal_init(argc, argv);
	if (have_saved)
		pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
	if (ret < 0) {
		d->eal_err = -(rte_errno ? rte_errno : EINVAL);
		return ferry_fail(msg, d->eal_err,
				  "DPDK EAL did not start: %s (see ferryd's "
				  "log)",
				  rte_strerror(rte_errno));
	}
	d->eal_up = true;
	log_info("dpdk: EAL up (%s, file prefix %s, %s)", rte_version(),
		 d->prefix,
		 d->hugepages ? "hugepages"
			      : "ordinary pages: too few free hugepages");
	return 0;
}

void ferry_dpdk_destroy(struct ferry_dpdk *d)
{
	int i;

	if (!d)
		return;
	for (i = 0; i < FERRY_MAX_WORKERS; i++)
		rte_mempool_free(d->pools[i]);
	if (d->eal_up)
		rte_eal_cleanup();
	free(d);
}

/* ---------------------------------------------------------- mbuf pools */

/*
 * An mbuf pool the af_xdp PMD can use as a UMEM. The PMD registers
 * populated_size * object_size bytes from the pool's first object on, so
 * the objects must lie back to back. rte_pktmbuf_pool_create keeps each
 * object inside one page for IOVA contiguity; on 4 KiB pages (--no-huge)
 * that leaves gaps, the objects past the registered size are refused by
 * the kernel as fill addresses, and RX starves after a few thousand frames.
 * NO_IOVA_CONTIG packs them (AF_XDP works on virtual addresses).
 */
static struct rte_mempool *umem_pool_create(const char *name)
{
	struct rte_pktmbuf_pool_private priv = {
		.mbuf_data_room_size = RTE_MBUF_DEFAULT_BUF_SIZE,
		.mbuf_priv_size = 0,
	};
	struct rte_mempool *mp;

	/* No per-lcore cache: ferry's workers are not lcores. */
	mp = rte_mempool_create_empty(
		name, FERRY_DPDK_POOL_MBUFS,
		sizeof(struct rte_mbuf) + RTE_MBUF_DEFAULT_BUF_SIZE, 0,
		sizeof(priv), SOCKET_ID_ANY, RTE_MEMPOOL_F_NO_IOVA_CONTIG);
	if (!mp)
		return NULL;
	if (rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), NULL))
		goto err_pool;
	rte_pktmbuf_pool_init(mp, &priv);
	if (rte_mempool_populate_default(mp) < 0)
		goto err_pool;
	rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
	return mp;

err_pool:
	rte_mempool_free(mp);
	return NULL;
}

static struct rte_mempool *pool_get(struct ferry_dpdk *d,
				    const struct ferry_worker *w,
				    struct ferry_err *msg)
{
	char name[RTE_MEMPOOL_NAMESIZE];
	struct rte_mempool *mp = d->pools[w->id];

	if (mp)
		return mp;
	snprintf(name, sizeof(name), "ferry_w%d_%u", w->id, d->pool_gen++);
	mp = umem_pool_create(name);
	if (!mp) {
		ferry_fail(msg, -ENOMEM,
			   "cannot create the mbuf pool of worker %d: %s",
			   w->id, rte_strerror(rte_errno));
		return NULL;
	}
	/* The PMD registers the pool as one UMEM from its first chunk. */
	if (mp->nb_mem_chunks != 1) {
		rte_mempool_free(mp);
		ferry_fail(msg, -ENOMEM,
			   "the mbuf pool of worker %d is not in one piece of "
			   "memory, as the af_xdp PMD needs",
			   w->id);
		return NULL;
	}
	d->pools[w->id] = mp;
	return mp;
}

/* Frees a worker's pool with its last DPDK queue: mbufs the closed
 * devices still held (fill rings, TX rings) go with it. */
static void pool_put(struct ferry_dpdk *d, const struct ferry_worker *w)
{
	if (--d->pool_queues[w->id])
		return;
	rte_mempool_free(d->pools[w->id]);
	d->pools[w->id] = NULL;
}

/* ------------------------------------------------------------- the vdev */

/* Stops and removes the vdev; the PMD detaches the XDP program. */
static void vdev_close(struct ferry_dpdk_port *dp)
{
	if (dp->started)
		rte_eth_dev_stop(dp->port_id);
	dp->started = false;
	rte_vdev_uninit(dp->vdev);
	ferry_dpdk_xsk_fds_close(dp);
}

static int vdev_open(struct ferry_dpdk **dpp, const struct ferry_workers *ws,
		     struct ferry_port *p, struct ferry_dpdk_port *dp,
		     uint32_t *n_pooled, struct ferry_err *msg)
{
	struct rte_eth_conf conf;
	char args[256];
	uint32_t i, j, n_before;
	int fd, err;

	dp->n_xsk = 0;
	ferry_dpdk_xsk_fds_mark(dp, false);
	fd = ferry_dpdk_prog_memfd();
	if (fd < 0)
		return ferry_fail(msg, fd, "cannot stage the classifier: %s",
				  strerror(-fd));
	snprintf(args, sizeof(args),
		 "iface=%s,start_queue=%u,queue_count=%u,"
		 "xdp_prog=/proc/self/fd/%d%s",
		 p->ifname, p->q_first, p->n_queues, fd,
		 p->req.mode == FERRY_XSK_COPY ? ",force_copy=1" : "");
	ferry_dpdk_leaks_ignored(true);
	err = rte_vdev_init(dp->vdev, args);
	ferry_dpdk_leaks_ignored(false);
	if (err) {
		close(fd);
		return ferry_fail(msg, err < 0 ? err : -EINVAL,
				  "%s: the af_xdp PMD refused '%s' (see "
				  "ferryd's log)",
				  p->ifname, args);
	}
	memset(&conf, 0, sizeof(conf));
	err = rte_eth_dev_get_port_by_name(dp->vdev, &dp->port_id);
	if (!err)
		err = rte_eth_dev_configure(dp->port_id, (uint16_t)p->n_queues,
					    (uint16_t)p->n_queues, &conf);
	if (err) {
		ferry_fail(msg, err, "%s: cannot configure the ethdev: %s",
			   p->ifname, rte_strerror(-err));
		goto err_vdev;
	}
	for (i = 0; i < p->n_queues; i++) {
		struct ferry_worker *w = ws->v[i % (uint32_t)ws->n];
		struct rte_mempool *mp = pool_get((*dpp), w, msg);

		if (!mp) {
			err = -ENOMEM;
			goto err_vdev;
		}
		(*dpp)->pool_queues[w->id]++;
		(*n_pooled)++;
		dp->dq[i].port_id = dp->port_id;
		dp->dq[i].queue_id = (uint16_t)i;
		dp->dq[i].pool = mp;
		dp->dq[i].xsk_fd = -1;
		n_before = dp->n_xsk;
		/* The first RX queue makes the PMD load and attach the
		 * classifier (from the memfd). */
		ferry_dpdk_leaks_ignored(true);
		err = rte_eth_rx_queue_setup(
			dp->port_id, (uint16_t)i, FERRY_DPDK_RING_SIZE,
			(unsigned int)SOCKET_ID_ANY, NULL, mp);
		ferry_dpdk_leaks_ignored(false);
		ferry_dpdk_xsk_fds_mark(dp, true);
		/* The queue's socket is the one this setup opened. */
		for (j = dp->n_xsk; j > n_before; j--)
			if (dp->xsk_fd[j - 1] >= 0) {
				dp->dq[i].xsk_fd = dp->xsk_fd[j - 1];
				break;
			}
		if (!err)
			err = rte_eth_tx_queue_setup(
				dp->port_id, (uint16_t)i, FERRY_DPDK_RING_SIZE,
				(unsigned int)SOCKET_ID_ANY, NULL);
		if (err) {
			ferry_fail(msg, err < 0 ? err : -EINVAL,
				   "%s queue %u: the af_xdp PMD cannot set it "
				   "up (see ferryd's log)",
				   p->ifname, p->q_first + i);
			goto err_vdev;
		}
	}
	err = rte_eth_dev_start(dp->port_id);
	if (err) {
		ferry_fail(msg, err, "%s: cannot start the ethdev: %s",
			   p->ifname, rte_strerror(-err));
		goto err_vdev;
	}
	dp->started = true;
	close(fd);
	return 0;

err_vdev:
	vdev_close(dp);
	close(fd);
	return err;
}

/* ------------------------------------------------------------ the port */

/*
 * The PMD takes at most the interface's combined channel count of queues,
 * and 1 when it has none (veth: separate RX and TX channels only).
 */
static uint32_t pmd_max_queues(const char *ifname)
{
	struct ethtool_channels ch = {.cmd = ETHTOOL_GCHANNELS};
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret;

	if (fd < 0)
		return 1;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)&ch;
	ret = ioctl(fd, SIOCETHTOOL, &ifr);
	close(fd);
	return ret || !ch.max_combined ? 1 : ch.combined_count;
}

/* Each worker's pool has room for so many DPDK queues. */
static int queues_fit(struct ferry_dpdk **dpp, const struct ferry_workers *ws,
		      const struct ferry_port *p, struct ferry_err *msg)
{
	uint32_t want[FERRY_MAX_WORKERS] = {0}, i;

	for (i = 0; i < p->n_queues; i++) {
		const struct ferry_worker *w = ws->v[i % (uint32_t)ws->n];

		if ((*dpp)->pool_queues[w->id] + ++want[w->id] >
		    FERRY_DPDK_QUEUES_PER_WORKER)
			return ferry_fail(
				msg, -ENOSPC,
				"worker %d would serve more than %d DPDK "
				"queues (its mbuf pool holds %d mbufs); add "
				"workers or use fewer queues",
				w->id, FERRY_DPDK_QUEUES_PER_WORKER,
				FERRY_DPDK_POOL_MBUFS);
	}
	return 0;
}

/* Undoes the queue count of pool_get for the first n queues. */
static void pools_put(struct ferry_dpdk **dpp, const struct ferry_workers *ws,
		      const struct ferry_port *p, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		pool_put((*dpp), ws->v[i % (uint32_t)ws->n]);
}

int ferry_dpdk_port_open(struct ferry_dpdk **dpp,
			 const struct ferry_workers *ws, struct ferry_port *p,
			 struct ferry_err *msg)
{
	struct ferry_dpdk_port *dp;
	uint32_t i, n_pooled = 0, max_q;
	int err, stale_fd;

	if (p->req.mode == FERRY_XSK_ZC)
		return ferry_fail(msg, -EINVAL,
				  "backend dpdk: the af_xdp PMD takes "
				  "zero-copy when the driver has it but cannot "
				  "insist; use 'mode auto' or 'mode copy'");
	if (p->xdp_generic)
		return ferry_fail(msg, -EINVAL,
				  "backend dpdk: the af_xdp PMD attaches XDP "
				  "in the driver's mode; drop 'xdp generic'");
	if (p->req.busy_poll)
		return ferry_fail(msg, -EINVAL,
				  "backend dpdk: 'busy-poll on' is not "
				  "supported (the PMD's busy_budget needs a "
				  "zero-copy socket)");
	max_q = pmd_max_queues(p->ifname);
	if (p->n_queues > max_q)
		return ferry_fail(msg, -ERANGE,
				  "backend dpdk: the af_xdp PMD serves at most "
				  "%u queue(s) of %s (its combined channel "
				  "count); use 'queues %u' or 'queues A-A'",
				  max_q, p->ifname, max_q);
	err = ferry_port_xdp_check_free(p->ifname, p->ifindex, &stale_fd, msg);
	if (err)
		return err;
	/* A stale program is a dead ferryd's: off it goes, port or not. */
	if (stale_fd >= 0) {
		err = ferry_dpdk_stale_detach(p, stale_fd, msg);
		close(stale_fd);
		if (err)
			return err;
		p->replaced_stale = true;
	}
	if (!(*dpp)) {
		(*dpp) = calloc(1, sizeof(*(*dpp)));
		if (!(*dpp))
			return ferry_fail(msg, -ENOMEM, "out of memory");
	}
	err = eal_start((*dpp), msg);
	if (!err)
		err = queues_fit(dpp, ws, p, msg);
	if (err)
		return err;

	dp = calloc(1, sizeof(*dp));
	if (dp)
		dp->dq = calloc(p->n_queues, sizeof(*dp->dq));
	if (!dp || !dp->dq) {
		free(dp);
		return ferry_fail(msg, -ENOMEM, "out of memory");
	}
	snprintf(dp->vdev, sizeof(dp->vdev), "net_af_xdp_%s", p->name);
	err = vdev_open(dpp, ws, p, dp, &n_pooled, msg);
	if (err)
		goto err_pools;
	err = ferry_dpdk_prog_adopt(p, msg);
	if (err)
		goto err_vdev;

	for (i = 0; i < p->n_queues; i++) {
		struct ferry_worker *w = ws->v[i % (uint32_t)ws->n];
		struct ferry_pq *pq = &p->pq[i];

		pq->port = p;
		pq->queue = p->q_first + i;
		pq->app = FERRY_APP_NONE;
		pq->dq = &dp->dq[i];
		pq->dpdk = 1;
		ferry_worker_pause(w);
		err = ferry_worker_dq_add(w, pq);
		ferry_worker_resume(w);
		if (err) {
			ferry_fail(msg, err, "worker %d serves too many queues",
				   w->id);
			goto err_workers;
		}
	}
	(*dpp)->port[p->slot] = dp;
	p->zerocopy = false; /* the PMD decides; it does not say */
	p->hugepages = (*dpp)->hugepages;
	log_info("port %s: DPDK ethdev %u (%s) over %s, mbuf pools on %s",
		 p->name, dp->port_id, dp->vdev, p->ifname,
		 (*dpp)->hugepages ? "hugepages" : "ordinary pages");
	return 0;

err_workers:
	for (i = 0; i < p->n_queues; i++) {
		struct ferry_pq *pq = &p->pq[i];

		if (!pq->w)
			continue;
		ferry_worker_pause(pq->w);
		ferry_worker_dq_del(pq->w, pq);
		ferry_worker_resume(pq->w);
		pq->w = NULL;
	}
	ferry_dpdk_xskmap_clear(p);
	ferry_port_xdp_unload(p);
	p->prog_id = 0;
err_vdev:
	vdev_close(dp);
err_pools:
	pools_put(dpp, ws, p, n_pooled);
	free(dp->dq);
	free(dp);
	return err;
}

void ferry_dpdk_port_close(struct ferry_dpdk **dpp,
			   const struct ferry_workers *ws, struct ferry_port *p)
{
	struct ferry_dpdk_port *dp = *dpp ? (*dpp)->port[p->slot] : NULL;
	uint32_t i;

	if (!dp)
		return;
	for (i = 0; i < p->n_queues; i++) {
		struct ferry_pq *pq = &p->pq[i];

		ferry_worker_pause(pq->w);
		ferry_worker_dq_del(pq->w, pq);
		ferry_worker_resume(pq->w);
	}
	ferry_dpdk_xskmap_clear(p);
	vdev_close(dp);
	pools_put(dpp, ws, p, p->n_queues);
	ferry_port_xdp_unload(p);
	p->prog_id = 0;
	free(dp->dq);
	free(dp);
	(*dpp)->port[p->slot] = NULL;
}

int ferry_dpdk_xsk_stats(const struct ferry_pq *pq, struct ferry_xsk_ctrs *out)
{
	struct xdp_statistics st = {0};
	socklen_t len = sizeof(st);

	if (!pq->dq || pq->dq->xsk_fd < 0)
		return -ENOENT;
	if (getsockopt(pq->dq->xsk_fd, SOL_XDP, XDP_STATISTICS, &st, &len))
		return -errno;
#define COPY_XSK_CTR(name) out->name = st.name;
	FERRY_XSK_COUNTERS(COPY_XSK_CTR)
#undef COPY_XSK_CTR
	return 0;
}

void ferry_dpdk_port_describe(const struct ferry_dpdk *dpdk,
			      const struct ferry_port *p, json_t *o)
{
	const struct ferry_dpdk_port *dp = dpdk ? dpdk->port[p->slot] : NULL;
	struct rte_eth_stats st;
	json_t *d;

	if (!dp)
		return;
	d = json_object();
	json_object_set_new(d, "vdev", json_string(dp->vdev));
	json_object_set_new(d, "port_id", json_integer(dp->port_id));
	json_object_set_new(d, "pmd", json_string("net_af_xdp"));
	json_object_set_new(d, "mbufs_per_worker_pool",
			    json_integer(FERRY_DPDK_POOL_MBUFS));
	if (p->n_queues && dp->dq[0].pool)
		json_object_set_new(
			d, "mbufs_free_queue0_pool",
			json_integer(rte_mempool_avail_count(dp->dq[0].pool)));
	if (!rte_eth_stats_get(dp->port_id, &st)) {
		json_object_set_new(d, "rx_nombuf",
				    json_integer((json_int_t)st.rx_nombuf));
		json_object_set_new(d, "imissed",
				    json_integer((json_int_t)st.imissed));
		json_object_set_new(d, "oerrors",
				    json_integer((json_int_t)st.oerrors));
	}
	json_object_set_new(o, "dpdk", d);
}
