// SPDX-License-Identifier: BSD-2-Clause
/* numaplace.c - NUMA placement of a port's workers and UMEM: decide and warn. */
#include <numa.h>
#include <stdio.h>
#include <string.h>

#include "numaplace.h"

void ferry_numa_plan(int nic_node, uint64_t worker_cpus,
		     const int cpu_node[FERRY_NUMA_MAX_CPUS],
		     struct ferry_numa_plan *out)
{
	int c;

	memset(out, 0, sizeof(*out));
	out->umem_node = nic_node;
	/* No node on the NIC: nothing is remote, so nothing to warn about. */
	if (nic_node < 0)
		return;
	for (c = 0; c < FERRY_NUMA_MAX_CPUS; c++) {
		uint64_t bit = 1ull << c;

		if (cpu_node[c] == nic_node)
			out->nic_cpus |= bit;
		/* A CPU of unknown node is not known to be remote. */
		else if ((worker_cpus & bit) && cpu_node[c] >= 0)
			out->off_node |= bit;
	}
}

char *ferry_cpulist_fmt(uint64_t mask, char *buf, size_t len)
{
	size_t used = 0;
	int c = 0;

	buf[0] = '\0';
	while (c < 64 && used < len) {
		int end;

		if (!(mask & (1ull << c))) {
			c++;
			continue;
		}
		for (end = c; end + 1 < 64 && (mask & (1ull << (end + 1)));)
			end++;
		used += (size_t)snprintf(buf + used, len - used,
					 end > c ? "%s%d-%d" : "%s%d",
					 used ? "," : "", c, end);
		c = end + 1;
	}
	return buf;
}

int ferry_numa_warning(const struct ferry_numa_plan *plan, const char *ifname,
		       int nic_node, const int cpu_node[FERRY_NUMA_MAX_CPUS],
		       char *buf, size_t len)
{
	char off[128], better[128], where[32];
	int c, node = -1, n;

	buf[0] = '\0';
	if (!plan->off_node)
		return 0;
	for (c = 0; c < FERRY_NUMA_MAX_CPUS; c++) {
		if (!(plan->off_node & (1ull << c)))
			continue;
		if (node >= 0 && cpu_node[c] != node) {
			node = -2; /* more than one remote node */
			break;
		}
		node = cpu_node[c];
	}
	if (node >= 0)
		snprintf(where, sizeof(where), "node %d", node);
	else
		snprintf(where, sizeof(where), "other nodes");
	ferry_cpulist_fmt(plan->off_node, off, sizeof(off));
	ferry_cpulist_fmt(plan->nic_cpus, better, sizeof(better));
	n = snprintf(buf, len,
		     "worker CPU(s) %s on %s, but %s is on node %d: "
		     "every frame crosses the interconnect; UMEM stays on "
		     "node %d; use CPUs %s for workers",
		     off, where, ifname, nic_node, plan->umem_node,
		     better[0] ? better : "(none online)");
	return n < 0 ? 0 : n;
}

int ferry_numa_pick_cpu(int nic_node, uint64_t allowed,
			const int cpu_node[FERRY_NUMA_MAX_CPUS])
{
	int c;

	if (!allowed)
		return -1;
	for (c = FERRY_NUMA_MAX_CPUS - 1; nic_node >= 0 && c >= 0; c--)
		if ((allowed & (1ull << c)) && cpu_node[c] == nic_node)
			return c;
	return 63 - __builtin_clzll(allowed);
}

void ferry_numa_cpu_nodes(int cpu_node[FERRY_NUMA_MAX_CPUS])
{
	int c, ok = numa_available() >= 0;

	for (c = 0; c < FERRY_NUMA_MAX_CPUS; c++)
		cpu_node[c] = ok ? numa_node_of_cpu(c) : -1;
}
