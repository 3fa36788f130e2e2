// SPDX-License-Identifier: BSD-2-Clause
/*
 * hostcheck_nic.c - one interface's rows of `host check`: its driver
 * profile, NUMA nodes of the NIC and the worker CPUs, queues against
 * workers, IRQ affinity, busy-poll knobs.
 */
#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostcheck_int.h"

/* ---------------------------------------------------- the interface */

void hc_check_driver(struct hc *h)
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
		hc_row(h, "driver", HC_OK, NULL,
		       "%s: profile %s, %s XDP, %s, XDP MTU <= %u", h->driver,
		       h->profile->driver,
		       h->profile->native_xdp ? "native" : "generic",
		       h->profile->zerocopy ? "zero-copy" : "copy mode only",
		       h->profile->xdp_mtu_max);
	else
		hc_row(h, "driver", HC_WARN,
		       "port add ... xdp native mode zc to try anyway",
		       "%s: no profile, generic one used (generic XDP, copy "
		       "mode)",
		       h->driver);
}

void hc_check_numa(struct hc *h)
{
	struct ferry_numa_plan plan;
	char check[32], fix[160], cpus[128];
	long node;
	int c;

	h->nic_node =
		hc_read_long(h, &node, "/sys/class/net/%s/device/numa_node",
			     h->ifname)
			? -1
			: (int)node;
	if (h->nic_node < 0)
		hc_row(h, "numa: nic", HC_OK, NULL,
		       "%s has no node (virtual device or one-node host)",
		       h->ifname);
	else
		hc_row(h, "numa: nic", HC_OK, NULL, "%s on node %d", h->ifname,
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
			hc_row(h, check, HC_WARN, fix,
			       "node %d, NIC on node %d: frames cross nodes",
			       h->cpu_node[c], h->nic_node);
		else if (h->cpu_node[c] < 0)
			hc_row(h, check, HC_OK, NULL, "no node known");
		else
			hc_row(h, check, HC_OK, NULL, "node %d",
			       h->cpu_node[c]);
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

void hc_check_queues(struct hc *h)
{
	int workers = __builtin_popcountll(h->cpus), rxq = 0;
	struct dirent *de;
	char cmd[160], fix[256];
	DIR *d;

	d = hc_open_dir(h, "/sys/class/net/%s/queues", h->ifname);
	while (d && (de = readdir(d)))
		rxq += !strncmp(de->d_name, "rx-", 3);
	if (d)
		closedir(d);
	queues_fix(h->profile->queues_cmd, h->ifname, workers, cmd,
		   sizeof(cmd));
	snprintf(fix, sizeof(fix), "%s (or queues %s %d in host-setup.conf)",
		 cmd, h->ifname, workers);
	if (!rxq)
		hc_row(h, "queues", HC_WARN, "ethtool -l IFNAME",
		       "%s: no queues in sysfs", h->ifname);
	else if (rxq < workers)
		hc_row(h, "queues", HC_WARN, fix,
		       "%d RX queue(s), %d workers: %d worker(s) get no queue "
		       "of this port",
		       rxq, workers, workers - rxq);
	else if (rxq % workers)
		hc_row(h, "queues", HC_WARN, fix,
		       "%d RX queues, %d workers: uneven (some workers poll "
		       "one more queue)",
		       rxq, workers);
	else
		hc_row(h, "queues", HC_OK, NULL,
		       "%d RX queue(s), %d worker(s): %d per worker", rxq,
		       workers, rxq / workers);
}

/* IRQs of the device: its MSI vectors (a virtio NIC's are its parent's). */
static DIR *open_irq_dir(struct hc *h)
{
	DIR *d = hc_open_dir(h, "/sys/class/net/%s/device/msi_irqs", h->ifname);

	return d ? d
		 : hc_open_dir(h, "/sys/class/net/%s/device/../msi_irqs",
			       h->ifname);
}

void hc_check_irqs(struct hc *h)
{
	char aff[128], outside[128] = "", cpus[128], fix[256];
	int n = 0, bad = 0, first_bad = -1;
	struct dirent *de;
	DIR *d = open_irq_dir(h);

	if (!d) {
		hc_row(h, "irq affinity", HC_OK, NULL,
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
		if (hc_read_str(h, aff, sizeof(aff),
				"/proc/irq/%d/smp_affinity_list", irq))
			continue;
		if (hc_cpulist_parse(aff) & ~h->cpus) {
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
		hc_row(h, "irq affinity", HC_WARN, fix,
		       "%d of %d IRQs may run off the workers (irq %d on CPUs "
		       "%s): softirq work lands on other cores",
		       bad, n, first_bad, outside);
	else
		hc_row(h, "irq affinity", HC_OK, NULL,
		       "%d IRQ(s), all on worker CPUs %s", n, cpus);
}

void hc_check_busy_poll(struct hc *h)
{
	long defer = -1, gft = -1;
	char fix[256];

	hc_read_long(h, &defer, "/sys/class/net/%s/napi_defer_hard_irqs",
		     h->ifname);
	hc_read_long(h, &gft, "/sys/class/net/%s/gro_flush_timeout", h->ifname);
	snprintf(fix, sizeof(fix),
		 "busy-poll %s defer=2 gro_flush_timeout=200000 in "
		 "host-setup.conf",
		 h->ifname);
	if (defer < 0 || gft < 0)
		hc_row(h, "busy-poll", HC_WARN, "a kernel with these (5.10+)",
		       "napi_defer_hard_irqs/gro_flush_timeout unreadable");
	else if (!h->profile->zerocopy)
		hc_row(h, "busy-poll", HC_OK, NULL,
		       "defer=%ld gro_flush_timeout=%ld; not used: %s is copy "
		       "mode only, and copy-mode sockets cannot busy-poll",
		       defer, gft, h->profile->driver);
	else if (defer > 0 && gft > 0)
		hc_row(h, "busy-poll", HC_OK, NULL,
		       "defer=%ld gro_flush_timeout=%ld", defer, gft);
	else
		hc_row(h, "busy-poll", HC_WARN, fix,
		       "defer=%ld gro_flush_timeout=%ld: with busy-poll on, "
		       "IRQs still interrupt the workers",
		       defer, gft);
}
