// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_hostcheck - `host check` against made-up hosts: a temporary
 * directory holds the /proc and /sys files the check reads (it takes a
 * root prefix), and fake probes stand in for the AF_XDP and BPF map
 * probes. Covers hugepages and bpffs absent and present, a NIC on another
 * node than the workers, stray IRQ affinity, queue counts, BPF sysctls,
 * the driver's own XDP report (netdev family) against its profile, the
 * kernel features ferry can do without, and the errors for a missing
 * interface or an offline CPU.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hostcheck.h"
#include "data/netdev_replies.h"

struct fake {
	char root[64];
};

/* ------------------------------------------------------- the fake tree */

static void mkdirs(const char *path)
{
	char buf[PATH_MAX], *s;

	snprintf(buf, sizeof(buf), "%s", path);
	for (s = buf + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		mkdir(buf, 0755);
		*s = '/';
	}
	mkdir(buf, 0755);
}

static void put(const struct fake *f, const char *rel, const char *text)
{
	char path[PATH_MAX], dir[PATH_MAX];
	FILE *fp;

	snprintf(path, sizeof(path), "%s%s", f->root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	mkdirs(dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void put_dir(const struct fake *f, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s%s", f->root, rel);
	mkdirs(path);
}

static void put_link(const struct fake *f, const char *rel, const char *to)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s%s", f->root, rel);
	unlink(path);
	assert_int_equal(symlink(to, path), 0);
}

static const char mounts_base[] = "proc /proc proc rw 0 0\n"
				  "sysfs /sys sysfs rw 0 0\n";

/* A two-node, four-CPU host with everything ferry wants. */
static int setup(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	snprintf(f->root, sizeof(f->root), "/tmp/ferry-hostcheck-XXXXXX");
	if (!mkdtemp(f->root))
		return -1;
	put(f, "/sys/devices/system/cpu/online", "0-3\n");
	put_dir(f, "/sys/devices/system/cpu/cpu0/node0");
	put_dir(f, "/sys/devices/system/cpu/cpu1/node0");
	put_dir(f, "/sys/devices/system/cpu/cpu2/node1");
	put_dir(f, "/sys/devices/system/cpu/cpu3/node1");
	put(f, "/proc/self/mounts",
	    "proc /proc proc rw 0 0\n"
	    "sysfs /sys sysfs rw 0 0\n"
	    "bpf /sys/fs/bpf bpf rw 0 0\n"
	    "none /mnt/huge hugetlbfs rw,pagesize=2M 0 0\n");
	put(f, "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages",
	    "64\n");
	put(f, "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages",
	    "64\n");
	put(f, "/proc/self/limits",
	    "Limit                     Soft Limit           Hard Limit\n"
	    "Max locked memory         unlimited            unlimited  "
	    "bytes\n");
	put(f, "/proc/self/status",
	    "Name:\tferryd\nCapEff:\t0000000000000000\n");
	put(f, "/proc/sys/net/core/bpf_jit_enable", "1\n");
	put(f, "/proc/sys/net/core/bpf_jit_harden", "0\n");
	put(f, "/proc/sys/kernel/unprivileged_bpf_disabled", "2\n");
	put(f, "/sys/kernel/btf/vmlinux", "");
	/* eth9: ice on node 0, two queues, two IRQs */
	put_dir(f, "/sys/class/net/eth9/queues/rx-0");
	put_dir(f, "/sys/class/net/eth9/queues/rx-1");
	put_dir(f, "/sys/class/net/eth9/queues/tx-0");
	put(f, "/sys/class/net/eth9/device/numa_node", "0\n");
	put_dir(f, "/sys/bus/pci/drivers/ice");
	put_link(f, "/sys/class/net/eth9/device/driver",
		 "../../../../bus/pci/drivers/ice");
	put(f, "/sys/class/net/eth9/device/msi_irqs/40", "msix\n");
	put(f, "/sys/class/net/eth9/device/msi_irqs/41", "msix\n");
	put(f, "/proc/irq/40/smp_affinity_list", "0\n");
	put(f, "/proc/irq/41/smp_affinity_list", "1\n");
	put(f, "/sys/class/net/eth9/napi_defer_hard_irqs", "2\n");
	put(f, "/sys/class/net/eth9/gro_flush_timeout", "200000\n");
	/* vnet0: a virtual device, no node, no IRQs, unknown driver */
	put_dir(f, "/sys/class/net/vnet0/queues/rx-0");
	put(f, "/sys/class/net/vnet0/napi_defer_hard_irqs", "0\n");
	put(f, "/sys/class/net/vnet0/gro_flush_timeout", "0\n");
	*state = f;
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	return remove(path);
}

static int teardown(void **state)
{
	struct fake *f = *state;

	nftw(f->root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

/* ------------------------------------------------------ probes, rows */

static int yes(void)
{
	return 1;
}

static int no(void)
{
	return 0;
}

static int map_yes(int type)
{
	return 1;
}

static int map_eperm(int type)
{
	return -EPERM;
}

static const struct ferry_host_probes all_there = {yes, map_yes};

static json_t *run(const struct fake *f, const char *ifname, uint64_t cpus,
		   const struct ferry_host_probes *probes)
{
	struct ferry_hostcheck_params p = {
		.root = f->root,
		.ifname = ifname,
		.cpus = cpus,
		.probes = probes ? probes : &all_there,
	};
	struct ferry_err msg;
	json_t *rows;
	int err = 1;

	rows = ferry_host_check(&p, &err, &msg);
	if (!rows)
		print_error("host check failed: %s\n", msg.msg);
	assert_non_null(rows);
	assert_int_equal(err, 0);
	return rows;
}

/* The row named check; fails the test when there is none. */
static const json_t *row_of(const json_t *rows, const char *check)
{
	size_t i;
	json_t *r;

	json_array_foreach(rows, i, r)
	{
		if (!strcmp(json_string_value(json_object_get(r, "check")),
			    check))
			return r;
	}
	print_error("no row '%s'\n", check);
	fail();
	return NULL;
}

static void expect(const json_t *rows, const char *check, const char *status,
		   const char *value_part)
{
	const json_t *r = row_of(rows, check);
	const char *st = json_string_value(json_object_get(r, "status"));
	const char *val = json_string_value(json_object_get(r, "value"));
	const char *fix = json_string_value(json_object_get(r, "fix"));

	if (strcmp(st, status) || (value_part && !strstr(val, value_part))) {
		print_error("%s: expected %s with '%s', saw %s '%s'\n", check,
			    status, value_part ? value_part : "", st, val);
		fail();
	}
	/* Every row that is not ok says how to fix it. */
	if (strcmp(st, "ok"))
		assert_string_not_equal(fix, "-");
}

/* --------------------------------------------------------------- tests */

static void test_all_good(void **state)
{
	json_t *rows = run(*state, "eth9", 0x3, NULL);

	expect(rows, "kernel: AF_XDP sockets", "ok", NULL);
	expect(rows, "kernel: CPUMAP", "ok", NULL);
	expect(rows, "kernel: sockmap", "ok", NULL);
	expect(rows, "kernel: BTF", "ok", NULL);
	expect(rows, "bpffs", "ok", "/sys/fs/bpf");
	expect(rows, "hugetlbfs", "ok", "/mnt/huge");
	expect(rows, "hugepages 2M", "ok", "64 free of 64");
	expect(rows, "memlock", "ok", "unlimited");
	expect(rows, "net.core.bpf_jit_harden", "ok", "0");
	expect(rows, "kernel.unprivileged_bpf_disabled", "ok", "2");
	expect(rows, "workers", "ok", "CPUs 0-1");
	expect(rows, "driver", "ok", "profile ice");
	expect(rows, "numa: nic", "ok", "node 0");
	expect(rows, "numa: cpu 0", "ok", "node 0");
	expect(rows, "numa: cpu 1", "ok", "node 0");
	expect(rows, "queues", "ok", "2 RX queue(s), 2 worker(s)");
	expect(rows, "irq affinity", "ok", "2 IRQ(s)");
	expect(rows, "busy-poll", "ok", "defer=2");
	json_decref(rows);
}

static void test_hugepages_absent_and_present(void **state)
{
	struct fake *f = *state;
	json_t *rows;

	put(f, "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "0\n");
	put(f, "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages",
	    "0\n");
	put(f, "/proc/self/mounts", mounts_base);
	rows = run(f, NULL, 0x3, NULL);
	expect(rows, "hugepages 2M", "warn", "none reserved");
	expect(rows, "hugetlbfs", "warn", "not mounted");
	assert_non_null(strstr(json_string_value(json_object_get(
				       row_of(rows, "hugepages 2M"), "fix")),
			       "hugepages 34"));
	json_decref(rows);

	/* Some, not enough for two workers' UMEMs (17 each). */
	put(f, "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages",
	    "20\n");
	put(f, "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages",
	    "20\n");
	rows = run(f, NULL, 0x3, NULL);
	expect(rows, "hugepages 2M", "warn", "20 free of 20");
	json_decref(rows);

	put(f, "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages",
	    "34\n");
	put(f, "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages",
	    "34\n");
	put(f, "/proc/self/mounts",
	    "proc /proc proc rw 0 0\nhugetlbfs /dev/hugepages hugetlbfs rw 0 "
	    "0\n");
	rows = run(f, NULL, 0x3, NULL);
	expect(rows, "hugepages 2M", "ok", "34 free of 34");
	expect(rows, "hugetlbfs", "ok", "/dev/hugepages");
	json_decref(rows);
}

static void test_bpffs_absent_and_present(void **state)
{
	struct fake *f = *state;
	json_t *rows;

	/* bpffs somewhere else is not bpffs on /sys/fs/bpf */
	put(f, "/proc/self/mounts",
	    "proc /proc proc rw 0 0\nbpf /run/bpf bpf rw 0 0\n");
	rows = run(f, NULL, 0x1, NULL);
	expect(rows, "bpffs", "warn", "not mounted");
	json_decref(rows);
	put(f, "/proc/self/mounts",
	    "proc /proc proc rw 0 0\nbpf /sys/fs/bpf bpf rw 0 0\n");
	rows = run(f, NULL, 0x1, NULL);
	expect(rows, "bpffs", "ok", NULL);
	json_decref(rows);
}

static void test_numa_other_node(void **state)
{
	/* NIC on node 0, workers on CPUs 1 (node 0) and 2-3 (node 1). */
	json_t *rows = run(*state, "eth9", 0xe, NULL);
	const char *fix;

	expect(rows, "numa: cpu 1", "ok", "node 0");
	expect(rows, "numa: cpu 2", "warn", "node 1, NIC on node 0");
	expect(rows, "numa: cpu 3", "warn", "node 1");
	fix = json_string_value(
		json_object_get(row_of(rows, "numa: cpu 2"), "fix"));
	assert_non_null(strstr(fix, "workers 0-1"));
	/* 2 queues, 3 workers: one worker idle on this port */
	expect(rows, "queues", "warn", "1 worker(s) get no queue");
	json_decref(rows);
}

static void test_irq_affinity_off_workers(void **state)
{
	struct fake *f = *state;
	json_t *rows;

	put(f, "/proc/irq/41/smp_affinity_list", "0-3\n");
	rows = run(f, "eth9", 0x3, NULL);
	expect(rows, "irq affinity", "warn", "irq 41 on CPUs 0-3");
	json_decref(rows);
}

static void test_virtual_device(void **state)
{
	json_t *rows = run(*state, "vnet0", 0x3, NULL);

	expect(rows, "driver", "warn", "unknown");
	expect(rows, "numa: nic", "ok", "no node");
	expect(rows, "irq affinity", "ok", "no IRQs");
	/* generic profile: copy mode, busy polling not used */
	expect(rows, "busy-poll", "ok", "not used");
	expect(rows, "queues", "warn", "1 RX queue(s), 2 workers");
	json_decref(rows);
}

/* A veth peer's TX checksum offload: a note, never a failure. */
static int peer_on(const char *ifname, char *peer, size_t len)
{
	snprintf(peer, len, "h0 (netns host)");
	return 1;
}

static int peer_off(const char *ifname, char *peer, size_t len)
{
	snprintf(peer, len, "h0");
	return 0;
}

static int peer_unknown(const char *ifname, char *peer, size_t len)
{
	return -ENOENT;
}

static void test_veth_peer_checksums(void **state)
{
	struct fake *f = *state;
	struct ferry_host_probes p = {yes, map_yes, peer_on};
	json_t *rows;

	put_dir(f, "/sys/class/net/veth0/queues/rx-0");
	put_dir(f, "/sys/class/net/veth0/device");
	put_link(f, "/sys/class/net/veth0/device/driver",
		 "../../../../bus/virtual/drivers/veth");
	rows = run(f, "veth0", 0x1, &p);
	expect(rows, "driver", "ok", "profile veth");
	expect(rows, "veth peer checksums", "ok",
	       "h0 (netns host) has TX checksum offload on");
	expect(rows, "veth peer checksums", "ok", "ferry completes");
	json_decref(rows);
	p.veth_peer_tx_csum = peer_off;
	rows = run(f, "veth0", 0x1, &p);
	expect(rows, "veth peer checksums", "ok", "full checksums");
	json_decref(rows);
	p.veth_peer_tx_csum = peer_unknown;
	rows = run(f, "veth0", 0x1, &p);
	expect(rows, "veth peer checksums", "ok", "peer not found");
	json_decref(rows);
}

static void test_zc_driver_busy_poll_off(void **state)
{
	struct fake *f = *state;
	json_t *rows;

	put(f, "/sys/class/net/eth9/napi_defer_hard_irqs", "0\n");
	rows = run(f, "eth9", 0x3, NULL);
	expect(rows, "busy-poll", "warn", "defer=0");
	json_decref(rows);
}

/* eth9's driver answering like a multi-buffer-less zero-copy driver. */
static int feat_zc_single(const char *ifname, struct ferry_netdev_feat *out)
{
	assert_string_equal(ifname, "eth9");
	return ferry_netdev_dev_parse(mk_virtio_zc, sizeof(mk_virtio_zc),
				      REC_FAMILY, REC_IFINDEX_ZC, out);
}

static int feat_no_family(const char *ifname, struct ferry_netdev_feat *out)
{
	(void)ifname;
	(void)out;
	return -ENOENT;
}

static int feat_eperm(const char *ifname, struct ferry_netdev_feat *out)
{
	(void)ifname;
	(void)out;
	return -EPERM;
}

static void test_xdp_features(void **state)
{
	struct ferry_host_probes p = {
		.af_xdp = yes,
		.map_type = map_yes,
		.netdev_family = yes,
		.xsk_tx_budget = yes,
		.netdev_feat = feat_zc_single,
	};
	struct fake *f = *state;
	json_t *rows;

	rows = run(f, "eth9", 0x3, &p);
	expect(rows, "kernel: netdev family", "ok", "drivers report");
	expect(rows, "kernel: AF_XDP TX budget", "ok", "XDP_MAX_TX_SKB_BUDGET");
	expect(rows, "xdp features", "ok", "xdp-zc-max-segs 1");
	expect(rows, "xdp features", "ok", "zero-copy: yes (kernel)");
	/* the profile hopes for multi-buffer zero-copy; the driver says no */
	expect(rows, "xdp features", "ok",
	       "zero-copy no (kernel; profile ice says yes)");
	expect(rows, "busy-poll", "ok", "defer=2");
	json_decref(rows);

	/* a kernel before 6.3 and before 6.17 */
	p.netdev_family = no;
	p.xsk_tx_budget = no;
	p.netdev_feat = feat_no_family;
	rows = run(f, "eth9", 0x3, &p);
	expect(rows, "kernel: netdev family", "warn", "Linux < 6.3");
	expect(rows, "kernel: AF_XDP TX budget", "warn", "at most 32");
	expect(rows, "xdp features", "ok", "no netdev family");
	expect(rows, "xdp features", "ok", "zero-copy: yes (profile ice)");
	json_decref(rows);

	p.netdev_feat = feat_eperm;
	rows = run(f, "eth9", 0x3, &p);
	expect(rows, "xdp features", "warn", "could not ask");
	json_decref(rows);
}

static void test_bpf_sysctls(void **state)
{
	struct fake *f = *state;
	json_t *rows;

	put(f, "/proc/sys/net/core/bpf_jit_harden", "2\n");
	put(f, "/proc/sys/kernel/unprivileged_bpf_disabled", "0\n");
	put(f, "/proc/sys/net/core/bpf_jit_enable", "0\n");
	rows = run(f, NULL, 0x1, NULL);
	expect(rows, "net.core.bpf_jit_harden", "warn", "blinded");
	expect(rows, "kernel.unprivileged_bpf_disabled", "warn",
	       "any user may load BPF");
	expect(rows, "net.core.bpf_jit_enable", "warn", "interpreted");
	json_decref(rows);
}

static void test_probes_and_memlock(void **state)
{
	static const struct ferry_host_probes none = {no, map_eperm};
	struct fake *f = *state;
	json_t *rows;

	put(f, "/proc/self/limits",
	    "Max locked memory  8388608  8388608  "
	    "bytes\n");
	rows = run(f, NULL, 0x1, &none);
	expect(rows, "kernel: AF_XDP sockets", "fail", "missing");
	expect(rows, "kernel: CPUMAP", "warn", "could not probe");
	expect(rows, "memlock", "warn", "8388608 bytes and no CAP_IPC_LOCK");
	json_decref(rows);
	put(f, "/proc/self/status", "CapEff:\t0000000000004000\n");
	rows = run(f, NULL, 0x1, &none);
	expect(rows, "memlock", "ok", "CAP_IPC_LOCK");
	json_decref(rows);
}

static void test_bad_input(void **state)
{
	struct fake *f = *state;
	struct ferry_hostcheck_params p = {
		.root = f->root,
		.probes = &all_there,
	};
	const char *bad_names[] = {"eth7", "../../etc", "a-very-long-name-x",
				   NULL};
	struct ferry_err msg;
	int i, err;

	for (i = 0; bad_names[i]; i++) {
		p.ifname = bad_names[i];
		err = 0;
		assert_null(ferry_host_check(&p, &err, &msg));
		assert_int_equal(err, -ENODEV);
		assert_non_null(strstr(msg.msg, "no interface"));
	}
	p.ifname = "eth9";
	p.cpus = 1ull << 4; /* not online */
	assert_null(ferry_host_check(&p, &err, &msg));
	assert_int_equal(err, -EINVAL);
	assert_string_equal(msg.msg, "CPU 4 is not online");
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_all_good),
		T(test_hugepages_absent_and_present),
		T(test_bpffs_absent_and_present),
		T(test_numa_other_node),
		T(test_irq_affinity_off_workers),
		T(test_virtual_device),
		T(test_veth_peer_checksums),
		T(test_zc_driver_busy_poll_off),
		T(test_xdp_features),
		T(test_bpf_sysctls),
		T(test_probes_and_memlock),
		T(test_bad_input),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
