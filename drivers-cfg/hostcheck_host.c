// SPDX-License-Identifier: BSD-2-Clause
/*
 * hostcheck_host.c - the host's rows of `host check`: kernel features, BPF
 * sysctls, mounts, hugepages, memlock, the worker CPUs.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hostcheck_int.h"
#include "netdev_compat.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif
#define CAP_IPC_LOCK_BIT 14

/* ---------------------------------------------------- kernel features */

static int probe_af_xdp(void)
{
	int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);

	if (fd >= 0) {
		close(fd);
		return 1;
	}
	return errno == EAFNOSUPPORT ? 0 : -errno;
}

/*
 * XDP_MAX_TX_SKB_BUDGET needs a TX ring first (without one the kernel
 * answers EACCES), and takes budgets from 32 up to the ring's size; a
 * kernel that predates it answers ENOPROTOOPT.
 */
static int probe_xsk_tx_budget(void)
{
	int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0), rc;
	unsigned int ring = 64, budget = 32;

	if (fd < 0)
		return errno == EAFNOSUPPORT ? 0 : -errno;
	if (setsockopt(fd, SOL_XDP, XDP_TX_RING, &ring, sizeof(ring)))
		rc = -errno;
	else if (!setsockopt(fd, SOL_XDP, XDP_MAX_TX_SKB_BUDGET, &budget,
			     sizeof(budget)))
		rc = 1;
	else
		rc = errno == ENOPROTOOPT ? 0 : -errno;
	close(fd);
	return rc;
}

static int probe_map_type(int type)
{
	int rc = libbpf_probe_bpf_map_type((enum bpf_map_type)type, NULL);

	return rc < 0 ? rc : rc > 0;
}

const struct ferry_host_probes hc_real_probes = {
	.af_xdp = probe_af_xdp,
	.map_type = probe_map_type,
	.veth_peer_tx_csum = hc_probe_veth_peer_tx_csum,
	.netdev_family = ferry_netdev_family_probe,
	.xsk_tx_budget = probe_xsk_tx_budget,
	.netdev_feat = hc_probe_netdev_feat,
};

/* A probe's answer as a row: supported, missing, or unknown and why. */
static void probe_row(struct hc *h, const char *check, int rc,
		      const char *needed_for, const char *fix)
{
	if (rc > 0)
		hc_row(h, check, HC_OK, NULL, "available");
	else if (!rc)
		hc_row(h, check, HC_FAIL, fix, "missing: %s", needed_for);
	else
		hc_row(h, check, HC_WARN,
		       "run the check as root (or ask ferryd: it runs it with "
		       "its own privileges)",
		       "could not probe: %s", strerror(-rc));
}

/* A feature ferry uses when it is there and works around when not. */
static void optional_row(struct hc *h, const char *check, int rc,
			 const char *have, const char *missing, const char *fix)
{
	if (rc > 0)
		hc_row(h, check, HC_OK, NULL, "available: %s", have);
	else if (!rc)
		hc_row(h, check, HC_WARN, fix, "%s", missing);
	else
		hc_row(h, check, HC_WARN,
		       "run the check as root (or ask ferryd: it runs it with "
		       "its own privileges)",
		       "could not probe: %s", strerror(-rc));
}

void hc_check_kernel(struct hc *h)
{
	probe_row(h, "kernel: AF_XDP sockets", h->probes->af_xdp(),
		  "ferry's data path",
		  "a kernel with CONFIG_XDP_SOCKETS=y (4.18+)");
	probe_row(h, "kernel: CPUMAP", h->probes->map_type(BPF_MAP_TYPE_CPUMAP),
		  "steer rules", "a kernel with CONFIG_BPF_SYSCALL (4.15+)");
	probe_row(h, "kernel: sockmap",
		  h->probes->map_type(BPF_MAP_TYPE_SOCKHASH),
		  "the socket splice proxy",
		  "a kernel with CONFIG_BPF_STREAM_PARSER=y");
	if (h->probes->netdev_family)
		optional_row(
			h, "kernel: netdev family", h->probes->netdev_family(),
			"drivers report their XDP features; they decide "
			"zero-copy and multi-buffer",
			"missing (Linux < 6.3): the driver profiles decide "
			"zero-copy and multi-buffer",
			"Linux 6.3+ (ferry works without it)");
	if (h->probes->xsk_tx_budget)
		optional_row(
			h, "kernel: AF_XDP TX budget",
			h->probes->xsk_tx_budget(),
			"XDP_MAX_TX_SKB_BUDGET, a copy-mode TX kick sends up "
			"to 256 descriptors",
			"missing (Linux < 6.17): a copy-mode TX kick sends "
			"at most 32 descriptors, so more sendto calls",
			"Linux 6.17+ (ferry works without it)");
	if (hc_exists(h, "/sys/kernel/btf/vmlinux"))
		hc_row(h, "kernel: BTF", HC_OK, NULL,
		       "/sys/kernel/btf/vmlinux");
	else
		hc_row(h, "kernel: BTF", HC_WARN,
		       "a kernel with CONFIG_DEBUG_INFO_BTF=y",
		       "missing: CPUMAP enqueue drops are not counted");
}

/* -------------------------------------------------------- BPF sysctls */

/* net.core.bpf_* exist only in the initial network namespace. */
#define NOT_IN_NETNS "not visible in this network namespace"
#define FIX_NETNS    "ferryctl host check in the host's network namespace"

void hc_check_bpf_sysctls(struct hc *h)
{
	long v;
	int rc;

	rc = hc_read_long(h, &v, "/proc/sys/net/core/bpf_jit_enable");
	if (rc)
		hc_row(h, "net.core.bpf_jit_enable", HC_WARN, FIX_NETNS, "%s",
		       rc == -ENOENT ? NOT_IN_NETNS : strerror(-rc));
	else if (v)
		hc_row(h, "net.core.bpf_jit_enable", HC_OK, NULL, "%ld", v);
	else
		hc_row(h, "net.core.bpf_jit_enable", HC_WARN,
		       "sysctl -w net.core.bpf_jit_enable=1",
		       "0: the XDP classifier is interpreted, several times "
		       "slower");

	rc = hc_read_long(h, &v, "/proc/sys/net/core/bpf_jit_harden");
	if (rc)
		hc_row(h, "net.core.bpf_jit_harden", HC_WARN, FIX_NETNS, "%s",
		       rc == -ENOENT ? NOT_IN_NETNS : strerror(-rc));
	else if (v >= 2)
		hc_row(h, "net.core.bpf_jit_harden", HC_WARN,
		       "sysctl -w net.core.bpf_jit_harden=1 (hardens "
		       "unprivileged programs only)",
		       "%ld: constants of ferry's programs are blinded too: a "
		       "slower classifier, no functional change",
		       v);
	else
		hc_row(h, "net.core.bpf_jit_harden", HC_OK, NULL,
		       "%ld: ferry's programs (privileged) are not blinded", v);

	if (hc_read_long(h, &v, "/proc/sys/kernel/unprivileged_bpf_disabled"))
		hc_row(h, "kernel.unprivileged_bpf_disabled", HC_WARN,
		       "sysctl kernel.unprivileged_bpf_disabled", "unreadable");
	else if (!v)
		hc_row(h, "kernel.unprivileged_bpf_disabled", HC_WARN,
		       "sysctl -w kernel.unprivileged_bpf_disabled=2",
		       "0: any user may load BPF; ferry does not need it "
		       "(ferryd has CAP_BPF), so this only widens the attack "
		       "surface");
	else
		hc_row(h, "kernel.unprivileged_bpf_disabled", HC_OK, NULL,
		       "%ld: only privileged BPF; ferryd needs CAP_BPF and "
		       "CAP_NET_ADMIN (root or the systemd unit's "
		       "capabilities)",
		       v);
}

/* ------------------------------------------------- mounts and memory */

/* Mount point of the first mount of fstype (or at path, when given). */
static bool find_mount(const struct hc *h, const char *fstype, const char *at,
		       char *where, size_t len)
{
	char path[PATH_MAX], line[1024], mnt[512], type[64];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/proc/self/mounts", h->root);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %511s %63s", mnt, type) != 2)
			continue;
		if (strcmp(type, fstype) || (at && strcmp(mnt, at)))
			continue;
		snprintf(where, len, "%s", mnt);
		found = true;
	}
	fclose(f);
	return found;
}

void hc_check_mounts(struct hc *h)
{
	char where[512];

	if (find_mount(h, "bpf", "/sys/fs/bpf", where, sizeof(where)))
		hc_row(h, "bpffs", HC_OK, NULL, "mounted on /sys/fs/bpf");
	else
		hc_row(h, "bpffs", HC_WARN, "mount -t bpf bpf /sys/fs/bpf",
		       "not mounted: nothing can be pinned (ferryd itself "
		       "pins nothing)");
	if (find_mount(h, "hugetlbfs", NULL, where, sizeof(where)))
		hc_row(h, "hugetlbfs", HC_OK, NULL, "mounted on %s", where);
	else
		hc_row(h, "hugetlbfs", HC_WARN,
		       "ferry-host-setup (hugetlbfs DIR) or mount -t hugetlbfs "
		       "none /mnt/huge",
		       "not mounted: ferryd does not need it (MAP_HUGETLB), "
		       "DPDK does");
}

void hc_check_hugepages(struct hc *h)
{
	static const char dir[] = "/sys/kernel/mm/hugepages/hugepages-2048kB";
	long nr = 0, free_pages = 0;
	int workers = __builtin_popcountll(h->cpus);
	long need = (long)workers * FERRY_HOSTCHECK_UMEM_MB / 2;
	char fix[160];

	if (hc_read_long(h, &nr, "%s/nr_hugepages", dir) ||
	    hc_read_long(h, &free_pages, "%s/free_hugepages", dir)) {
		hc_row(h, "hugepages 2M", HC_WARN,
		       "a kernel with CONFIG_HUGETLBFS and 2 MB pages",
		       "no 2 MB hugepage pool: UMEM on ordinary pages");
		return;
	}
	/* The pool to ask for: what others use now plus what ferry needs. */
	snprintf(fix, sizeof(fix),
		 "ferry-host-setup (hugepages %ld) or sysctl -w "
		 "vm.nr_hugepages=%ld",
		 nr - free_pages + need, nr - free_pages + need);
	if (free_pages >= need)
		hc_row(h, "hugepages 2M", HC_OK, NULL,
		       "%ld free of %ld; %d worker(s) need %ld", free_pages, nr,
		       workers, need);
	else if (!nr)
		hc_row(h, "hugepages 2M", HC_WARN, fix,
		       "none reserved: UMEM on ordinary pages (slower: TLB "
		       "misses); %d worker(s) need %ld",
		       workers, need);
	else
		hc_row(h, "hugepages 2M", HC_WARN, fix,
		       "%ld free of %ld, %d worker(s) need %ld: some UMEMs on "
		       "ordinary pages",
		       free_pages, nr, workers, need);
}

/* RLIMIT_MEMLOCK matters for the UMEM unless the process has IPC_LOCK. */
void hc_check_memlock(struct hc *h)
{
	char path[PATH_MAX], line[256], soft[32] = "";
	unsigned long long caps = 0;
	bool ipc_lock;
	FILE *f;

	snprintf(path, sizeof(path), "%s/proc/self/limits", h->root);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Max locked memory", 17))
			sscanf(line + 17, "%31s", soft);
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s/proc/self/status", h->root);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "CapEff:", 7))
			caps = strtoull(line + 7, NULL, 16);
	if (f)
		fclose(f);
	ipc_lock = caps & (1ull << CAP_IPC_LOCK_BIT);
	if (!soft[0])
		hc_row(h, "memlock", HC_WARN, "ulimit -l", "unreadable");
	else if (!strcmp(soft, "unlimited"))
		hc_row(h, "memlock", HC_OK, NULL, "unlimited");
	else if (ipc_lock)
		hc_row(h, "memlock", HC_OK, NULL,
		       "%s bytes, but CAP_IPC_LOCK: UMEM is not charged to it; "
		       "BPF maps are charged to the cgroup (5.11+)",
		       soft);
	else
		hc_row(h, "memlock", HC_WARN,
		       "LimitMEMLOCK=infinity in the unit, or ulimit -l "
		       "unlimited",
		       "%s bytes and no CAP_IPC_LOCK: a %d MB UMEM per worker "
		       "may not be pinned",
		       soft, FERRY_HOSTCHECK_UMEM_MB);
}

/* ------------------------------------------------------------ workers */

void hc_check_workers(struct hc *h)
{
	char list[128];

	ferry_cpulist_fmt(h->cpus, list, sizeof(list));
	hc_row(h, "workers", HC_OK, NULL, "CPUs %s (%s)", list,
	       h->p->cpus_from ? h->p->cpus_from
			       : (h->p->cpus ? "given" : "every online CPU"));
}
