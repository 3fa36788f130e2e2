// SPDX-License-Identifier: BSD-2-Clause
/*
 * hostcheck.c - the rows of `host check`. Each check is a function in the
 * table at the bottom; it reads files under the root prefix and appends
 * rows. A check never fails as a whole: what it cannot read becomes a
 * "warn" row saying so.
 */
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <linux/bpf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hostcheck.h"
#include "numaplace.h"
#include "profiles.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif
#define CAP_IPC_LOCK_BIT 14

enum hc_status { HC_OK, HC_WARN, HC_FAIL };
static const char *const status_names[] = {
	[HC_OK] = "ok",
	[HC_WARN] = "warn",
	[HC_FAIL] = "fail",
};

struct hc {
	const struct ferry_hostcheck_params *p;
	const struct ferry_host_probes *probes;
	const char *root; /* "" for the real host */
	json_t *rows;
	uint64_t online;
	uint64_t cpus;
	int cpu_node[FERRY_NUMA_MAX_CPUS];
	/* the interface, when one was given */
	const char *ifname;
	int nic_node;
	char driver[32];
	const struct ferry_driver_profile *profile;
};

/* ------------------------------------------------------------- files */

static void hc_path(const struct hc *h, char *buf, size_t len, const char *fmt,
		    va_list ap)
{
	int n = snprintf(buf, len, "%s", h->root);

	vsnprintf(buf + n, len - (size_t)n, fmt, ap);
}

static int read_str(const struct hc *h, char *buf, size_t len, const char *fmt,
		    ...) __attribute__((format(printf, 4, 5)));
static int read_str(const struct hc *h, char *buf, size_t len, const char *fmt,
		    ...)
{
	char path[PATH_MAX];
	va_list ap;
	FILE *f;
	char *nl;

	va_start(ap, fmt);
	hc_path(h, path, sizeof(path), fmt, ap);
	va_end(ap);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	return 0;
}

static int read_long(const struct hc *h, long *v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int read_long(const struct hc *h, long *v, const char *fmt, ...)
{
	char path[PATH_MAX], buf[64], *end;
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	hc_path(h, path, sizeof(path), fmt, ap);
	va_end(ap);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	errno = 0;
	*v = strtol(buf, &end, 10);
	return errno || end == buf ? -EINVAL : 0;
}

static DIR *open_dir(const struct hc *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static DIR *open_dir(const struct hc *h, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	hc_path(h, path, sizeof(path), fmt, ap);
	va_end(ap);
	return opendir(path);
}

static bool exists(const struct hc *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static bool exists(const struct hc *h, const char *fmt, ...)
{
	char path[PATH_MAX];
	struct stat st;
	va_list ap;

	va_start(ap, fmt);
	hc_path(h, path, sizeof(path), fmt, ap);
	va_end(ap);
	return !stat(path, &st);
}

/* "0-3,6" -> mask; ids >= 64 are ignored (ferry's masks are 64 bits). */
static uint64_t cpulist_parse(const char *s)
{
	uint64_t mask = 0;
	char *end;

	while (*s) {
		long a = strtol(s, &end, 10), b = a;

		if (end == s)
			break;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			s = end;
		}
		for (; a <= b && a < 64; a++)
			if (a >= 0)
				mask |= 1ull << a;
		if (*s != ',')
			break;
		s++;
	}
	return mask;
}

/* --------------------------------------------------------------- rows */

static void row(struct hc *h, const char *check, enum hc_status st,
		const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void row(struct hc *h, const char *check, enum hc_status st,
		const char *fix, const char *fmt, ...)
{
	char value[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(value, sizeof(value), fmt, ap);
	va_end(ap);
	json_array_append_new(h->rows,
			      json_pack("{s:s, s:s, s:s, s:s}", "check", check,
					"status", status_names[st], "value",
					value, "fix", fix ? fix : "-"));
}

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

static int probe_map_type(int type)
{
	int rc = libbpf_probe_bpf_map_type((enum bpf_map_type)type, NULL);

	return rc < 0 ? rc : rc > 0;
}

static const struct ferry_host_probes real_probes = {
	.af_xdp = probe_af_xdp,
	.map_type = probe_map_type,
};

/* A probe's answer as a row: supported, missing, or unknown and why. */
static void probe_row(struct hc *h, const char *check, int rc,
		      const char *needed_for, const char *fix)
{
	if (rc > 0)
		row(h, check, HC_OK, NULL, "available");
	else if (!rc)
		row(h, check, HC_FAIL, fix, "missing: %s", needed_for);
	else
		row(h, check, HC_WARN,
		    "run the check as root (or ask ferryd: it runs it with "
		    "its own privileges)",
		    "could not probe: %s", strerror(-rc));
}

static void check_kernel(struct hc *h)
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
	if (exists(h, "/sys/kernel/btf/vmlinux"))
		row(h, "kernel: BTF", HC_OK, NULL, "/sys/kernel/btf/vmlinux");
	else
		row(h, "kernel: BTF", HC_WARN,
		    "a kernel with CONFIG_DEBUG_INFO_BTF=y",
		    "missing: CPUMAP enqueue drops are not counted");
}

/* -------------------------------------------------------- BPF sysctls */

/* net.core.bpf_* exist only in the initial network namespace. */
#define NOT_IN_NETNS "not visible in this network namespace"
#define FIX_NETNS    "ferryctl host check in the host's network namespace"

static void check_bpf_sysctls(struct hc *h)
{
	long v;
	int rc;

	rc = read_long(h, &v, "/proc/sys/net/core/bpf_jit_enable");
	if (rc)
		row(h, "net.core.bpf_jit_enable", HC_WARN, FIX_NETNS, "%s",
		    rc == -ENOENT ? NOT_IN_NETNS : strerror(-rc));
	else if (v)
		row(h, "net.core.bpf_jit_enable", HC_OK, NULL, "%ld", v);
	else
		row(h, "net.core.bpf_jit_enable", HC_WARN,
		    "sysctl -w net.core.bpf_jit_enable=1",
		    "0: the XDP classifier is interpreted, several times "
		    "slower");

	rc = read_long(h, &v, "/proc/sys/net/core/bpf_jit_harden");
	if (rc)
		row(h, "net.core.bpf_jit_harden", HC_WARN, FIX_NETNS, "%s",
		    rc == -ENOENT ? NOT_IN_NETNS : strerror(-rc));
	else if (v >= 2)
		row(h, "net.core.bpf_jit_harden", HC_WARN,
		    "sysctl -w net.core.bpf_jit_harden=1 (hardens "
		    "unprivileged programs only)",
		    "%ld: constants of ferry's programs are blinded too: a "
		    "slower classifier, no functional change",
		    v);
	else
		row(h, "net.core.bpf_jit_harden", HC_OK, NULL,
		    "%ld: ferry's programs (privileged) are not blinded", v);

	if (read_long(h, &v, "/proc/sys/kernel/unprivileged_bpf_disabled"))
		row(h, "kernel.unprivileged_bpf_disabled", HC_WARN,
		    "sysctl kernel.unprivileged_bpf_disabled", "unreadable");
	else if (!v)
		row(h, "kernel.unprivileged_bpf_disabled", HC_WARN,
		    "sysctl -w kernel.unprivileged_bpf_disabled=2",
		    "0: any user may load BPF; ferry does not need it "
		    "(ferryd has CAP_BPF), so this only widens the attack "
		    "surface");
	else
		row(h, "kernel.unprivileged_bpf_disabled", HC_OK, NULL,
		    "%ld: only privileged BPF; ferryd needs CAP_BPF and "
		    "CAP_NET_ADMIN (root or the systemd unit's capabilities)",
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

static void check_mounts(struct hc *h)
{
	char where[512];

	if (find_mount(h, "bpf", "/sys/fs/bpf", where, sizeof(where)))
		row(h, "bpffs", HC_OK, NULL, "mounted on /sys/fs/bpf");
	else
		row(h, "bpffs", HC_WARN, "mount -t bpf bpf /sys/fs/bpf",
		    "not mounted: nothing can be pinned (ferryd itself "
		    "pins nothing)");
	if (find_mount(h, "hugetlbfs", NULL, where, sizeof(where)))
		row(h, "hugetlbfs", HC_OK, NULL, "mounted on %s", where);
	else
		row(h, "hugetlbfs", HC_WARN,
		    "ferry-host-setup (hugetlbfs DIR) or mount -t hugetlbfs "
		    "none /mnt/huge",
		    "not mounted: ferryd does not need it (MAP_HUGETLB), "
		    "DPDK does");
}

static void check_hugepages(struct hc *h)
{
	static const char dir[] = "/sys/kernel/mm/hugepages/hugepages-2048kB";
	long nr = 0, free_pages = 0;
	int workers = __builtin_popcountll(h->cpus);
	long need = (long)workers * FERRY_HOSTCHECK_UMEM_MB / 2;
	char fix[160];

	if (read_long(h, &nr, "%s/nr_hugepages", dir) ||
	    read_long(h, &free_pages, "%s/free_hugepages", dir)) {
		row(h, "hugepages 2M", HC_WARN,
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
		row(h, "hugepages 2M", HC_OK, NULL,
		    "%ld free of %ld; %d worker(s) need %ld", free_pages, nr,
		    workers, need);
	else if (!nr)
		row(h, "hugepages 2M", HC_WARN, fix,
		    "none reserved: UMEM on ordinary pages (slower: TLB "
		    "misses); %d worker(s) need %ld",
		    workers, need);
	else
		row(h, "hugepages 2M", HC_WARN, fix,
		    "%ld free of %ld, %d worker(s) need %ld: some UMEMs on "
		    "ordinary pages",
		    free_pages, nr, workers, need);
}

/* RLIMIT_MEMLOCK matters for the UMEM unless the process has IPC_LOCK. */
static void check_memlock(struct hc *h)
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
		row(h, "memlock", HC_WARN, "ulimit -l", "unreadable");
	else if (!strcmp(soft, "unlimited"))
		row(h, "memlock", HC_OK, NULL, "unlimited");
	else if (ipc_lock)
		row(h, "memlock", HC_OK, NULL,
		    "%s bytes, but CAP_IPC_LOCK: UMEM is not charged to it; "
		    "BPF maps are charged to the cgroup (5.11+)",
		    soft);
	else
		row(h, "memlock", HC_WARN,
		    "LimitMEMLOCK=infinity in the unit, or ulimit -l "
		    "unlimited",
		    "%s bytes and no CAP_IPC_LOCK: a %d MB UMEM per worker "
		    "may not be pinned",
		    soft, FERRY_HOSTCHECK_UMEM_MB);
}

/* ------------------------------------------------------------ workers */

static void check_workers(struct hc *h)
{
	char list[128];

	ferry_cpulist_fmt(h->cpus, list, sizeof(list));
	row(h, "workers", HC_OK, NULL, "CPUs %s (%s)", list,
	    h->p->cpus_from ? h->p->cpus_from
			    : (h->p->cpus ? "given" : "every online CPU"));
}

/* ---------------------------------------------------- the interface */

static void read_cpu_nodes(struct hc *h)
{
	struct dirent *de;
	int c;

	for (c = 0; c < FERRY_NUMA_MAX_CPUS; c++) {
		DIR *d;

		h->cpu_node[c] = -1;
		if (!(h->online & (1ull << c)))
			continue;
		d = open_dir(h, "/sys/devices/system/cpu/cpu%d", c);
		while (d && (de = readdir(d)))
			if (!strncmp(de->d_name, "node", 4))
				h->cpu_node[c] = atoi(de->d_name + 4);
		if (d)
			closedir(d);
	}
}

static void check_driver(struct hc *h)
{
	char link[PATH_MAX], path[PATH_MAX];
	ssize_t n;
	const char *base;

	snprintf(path, sizeof(path), "%s/sys/class/net/%s/device/driver",
		 h->root, h->ifname);
	n = readlink(path, link, sizeof(link) - 1);
	if (n > 0) {
		link[n] = '\0';
		base = strrchr(link, '/');
		base = base ? base + 1 : link;
		snprintf(h->driver, sizeof(h->driver), "%.*s",
			 (int)sizeof(h->driver) - 1, base);
	} else if (h->root[0] ||
		   ferry_driver_name(h->ifname, h->driver, sizeof(h->driver))) {
		snprintf(h->driver, sizeof(h->driver), "unknown");
	}
	h->profile = ferry_profile_lookup(h->driver);
	if (strcmp(h->profile->driver, "generic"))
		row(h, "driver", HC_OK, NULL,
		    "%s: profile %s, %s XDP, %s, XDP MTU <= %u", h->driver,
		    h->profile->driver,
		    h->profile->native_xdp ? "native" : "generic",
		    h->profile->zerocopy ? "zero-copy" : "copy mode only",
		    h->profile->xdp_mtu_max);
	else
		row(h, "driver", HC_WARN,
		    "port add ... xdp native mode zc to try anyway",
		    "%s: no profile, generic one used (generic XDP, copy "
		    "mode)",
		    h->driver);
}

static void check_numa(struct hc *h)
{
	struct ferry_numa_plan plan;
	char check[32], fix[160], cpus[128];
	long node;
	int c;

	h->nic_node = read_long(h, &node, "/sys/class/net/%s/device/numa_node",
				h->ifname)
			      ? -1
			      : (int)node;
	if (h->nic_node < 0)
		row(h, "numa: nic", HC_OK, NULL,
		    "%s has no node (virtual device or one-node host)",
		    h->ifname);
	else
		row(h, "numa: nic", HC_OK, NULL, "%s on node %d", h->ifname,
		    h->nic_node);
	ferry_numa_plan(h->nic_node, h->cpus, h->cpu_node, &plan);
	ferry_cpulist_fmt(plan.nic_cpus, cpus, sizeof(cpus));
	snprintf(fix, sizeof(fix), "workers %s (the CPUs on node %d)",
		 cpus[0] ? cpus : "?", h->nic_node);
	for (c = 0; c < FERRY_NUMA_MAX_CPUS; c++) {
		if (!(h->cpus & (1ull << c)))
			continue;
		snprintf(check, sizeof(check), "numa: cpu %d", c);
		if (plan.off_node & (1ull << c))
			row(h, check, HC_WARN, fix,
			    "node %d, NIC on node %d: frames cross nodes",
			    h->cpu_node[c], h->nic_node);
		else if (h->cpu_node[c] < 0)
			row(h, check, HC_OK, NULL, "no node known");
		else
			row(h, check, HC_OK, NULL, "node %d", h->cpu_node[c]);
	}
}

/*
 * A profile's queues_cmd with its placeholders filled in: the word IFNAME
 * and every standalone word N.
 */
static void queues_fix(const char *tmpl, const char *ifname, int n, char *buf,
		       size_t len)
{
	FILE *out = fmemopen(buf, len, "w");
	const char *s;

	if (!out) {
		snprintf(buf, len, "%s", tmpl);
		return;
	}
	for (s = tmpl; *s; s++) {
		bool word_start = s == tmpl || s[-1] == ' ';

		if (word_start && !strncmp(s, "IFNAME", 6)) {
			fputs(ifname, out);
			s += 5;
		} else if (word_start && s[0] == 'N' &&
			   (!s[1] || strchr(" )", s[1]))) {
			fprintf(out, "%d", n);
		} else {
			fputc(*s, out);
		}
	}
	fclose(out);
}

static void check_queues(struct hc *h)
{
	int workers = __builtin_popcountll(h->cpus), rxq = 0;
	struct dirent *de;
	char cmd[160], fix[256];
	DIR *d;

	d = open_dir(h, "/sys/class/net/%s/queues", h->ifname);
	while (d && (de = readdir(d)))
		rxq += !strncmp(de->d_name, "rx-", 3);
	if (d)
		closedir(d);
	queues_fix(h->profile->queues_cmd, h->ifname, workers, cmd,
		   sizeof(cmd));
	snprintf(fix, sizeof(fix), "%s (or queues %s %d in host-setup.conf)",
		 cmd, h->ifname, workers);
	if (!rxq)
		row(h, "queues", HC_WARN, "ethtool -l IFNAME",
		    "%s: no queues in sysfs", h->ifname);
	else if (rxq < workers)
		row(h, "queues", HC_WARN, fix,
		    "%d RX queue(s), %d workers: %d worker(s) get no queue "
		    "of this port",
		    rxq, workers, workers - rxq);
	else if (rxq % workers)
		row(h, "queues", HC_WARN, fix,
		    "%d RX queues, %d workers: uneven (some workers poll "
		    "one more queue)",
		    rxq, workers);
	else
		row(h, "queues", HC_OK, NULL,
		    "%d RX queue(s), %d worker(s): %d per worker", rxq, workers,
		    rxq / workers);
}

/* IRQs of the device: its MSI vectors (a virtio NIC's are its parent's). */
static DIR *open_irq_dir(struct hc *h)
{
	DIR *d = open_dir(h, "/sys/class/net/%s/device/msi_irqs", h->ifname);

	return d ? d
		 : open_dir(h, "/sys/class/net/%s/device/../msi_irqs",
			    h->ifname);
}

static void check_irqs(struct hc *h)
{
	char aff[128], outside[128] = "", cpus[128], fix[256];
	int n = 0, bad = 0, first_bad = -1;
	struct dirent *de;
	DIR *d = open_irq_dir(h);

	if (!d) {
		row(h, "irq affinity", HC_OK, NULL,
		    "%s has no IRQs (virtual device): nothing to pin",
		    h->ifname);
		return;
	}
	while ((de = readdir(d))) {
		int irq;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		irq = atoi(de->d_name);
		n++;
		if (read_str(h, aff, sizeof(aff),
			     "/proc/irq/%d/smp_affinity_list", irq))
			continue;
		if (cpulist_parse(aff) & ~h->cpus) {
			if (!bad++) {
				first_bad = irq;
				snprintf(outside, sizeof(outside), "%s", aff);
			}
		}
	}
	closedir(d);
	ferry_cpulist_fmt(h->cpus, cpus, sizeof(cpus));
	snprintf(fix, sizeof(fix),
		 "irq-affinity %s %s in host-setup.conf (stop irqbalance), "
		 "or echo CPU > /proc/irq/N/smp_affinity_list",
		 h->ifname, cpus);
	if (bad)
		row(h, "irq affinity", HC_WARN, fix,
		    "%d of %d IRQs may run off the workers (irq %d on CPUs "
		    "%s): softirq work lands on other cores",
		    bad, n, first_bad, outside);
	else
		row(h, "irq affinity", HC_OK, NULL,
		    "%d IRQ(s), all on worker CPUs %s", n, cpus);
}

static void check_busy_poll(struct hc *h)
{
	long defer = -1, gft = -1;
	char fix[256];

	read_long(h, &defer, "/sys/class/net/%s/napi_defer_hard_irqs",
		  h->ifname);
	read_long(h, &gft, "/sys/class/net/%s/gro_flush_timeout", h->ifname);
	snprintf(fix, sizeof(fix),
		 "busy-poll %s defer=2 gro_flush_timeout=200000 in "
		 "host-setup.conf",
		 h->ifname);
	if (defer < 0 || gft < 0)
		row(h, "busy-poll", HC_WARN, "a kernel with these (5.10+)",
		    "napi_defer_hard_irqs/gro_flush_timeout unreadable");
	else if (!h->profile->zerocopy)
		row(h, "busy-poll", HC_OK, NULL,
		    "defer=%ld gro_flush_timeout=%ld; not used: %s is copy "
		    "mode only, and copy-mode sockets cannot busy-poll",
		    defer, gft, h->profile->driver);
	else if (defer > 0 && gft > 0)
		row(h, "busy-poll", HC_OK, NULL,
		    "defer=%ld gro_flush_timeout=%ld", defer, gft);
	else
		row(h, "busy-poll", HC_WARN, fix,
		    "defer=%ld gro_flush_timeout=%ld: with busy-poll on, "
		    "IRQs still interrupt the workers",
		    defer, gft);
}

/* ------------------------------------------------------------- table */

struct hc_check {
	void (*fn)(struct hc *h);
	bool per_interface;
};

static const struct hc_check checks[] = {
	{check_kernel, false},	 {check_bpf_sysctls, false},
	{check_mounts, false},	 {check_hugepages, false},
	{check_memlock, false},	 {check_workers, false},
	{check_driver, true},	 {check_numa, true},
	{check_queues, true},	 {check_irqs, true},
	{check_busy_poll, true},
};

json_t *ferry_host_check(const struct ferry_hostcheck_params *p, int *err,
			 char *msg, size_t len)
{
	struct hc h = {
		.p = p,
		.probes = p->probes ? p->probes : &real_probes,
		.root = p->root ? p->root : "",
		.ifname = p->ifname,
		.nic_node = -1,
	};
	char online[256] = "";
	size_t i;

	if (p->ifname && (strlen(p->ifname) >= 16 || strchr(p->ifname, '/') ||
			  !exists(&h, "/sys/class/net/%s", p->ifname))) {
		*err = -ENODEV;
		snprintf(msg, len, "no interface '%s' here", p->ifname);
		return NULL;
	}
	if (read_str(&h, online, sizeof(online),
		     "/sys/devices/system/cpu/online"))
		snprintf(online, sizeof(online), "0");
	h.online = cpulist_parse(online);
	if (p->cpus & ~h.online) {
		*err = -EINVAL;
		snprintf(msg, len, "CPU %d is not online",
			 __builtin_ctzll(p->cpus & ~h.online));
		return NULL;
	}
	h.cpus = p->cpus ? p->cpus : h.online;
	read_cpu_nodes(&h);
	h.rows = json_array();
	if (!h.rows) {
		*err = -ENOMEM;
		snprintf(msg, len, "out of memory");
		return NULL;
	}
	for (i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
		if (!checks[i].per_interface || h.ifname)
			checks[i].fn(&h);
	*err = 0;
	return h.rows;
}
