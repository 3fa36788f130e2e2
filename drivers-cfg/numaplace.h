/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * numaplace.h - where a port's workers and UMEM should sit: on the NIC's NUMA
 * node. The decision is a pure function of the topology (NIC node, node of
 * each CPU), so it can be tested with a made-up topology; ferry never moves
 * a worker the operator placed, it warns instead.
 */
#ifndef FERRY_NUMAPLACE_H
#define FERRY_NUMAPLACE_H

#include <stddef.h>
#include <stdint.h>

#define FERRY_NUMA_MAX_CPUS 64

struct ferry_numa_plan {
	int umem_node;	   /* node to bind UMEM to; -1: no preference */
	uint64_t off_node; /* worker CPUs on another node than the NIC */
	uint64_t nic_cpus; /* CPUs on the NIC's node: the better choice */
};

/*
 * nic_node: the NIC's node, -1 when it has none (virtual devices, one-node
 * hosts); cpu_node[c]: node of CPU c, -1 when unknown.
 */
void ferry_numa_plan(int nic_node, uint64_t worker_cpus,
		     const int cpu_node[FERRY_NUMA_MAX_CPUS],
		     struct ferry_numa_plan *out);

/*
 * The operator-facing warning for a plan with off-node CPUs; returns the
 * length written (0, buf empty, when there is nothing to warn about).
 */
int ferry_numa_warning(const struct ferry_numa_plan *plan, const char *ifname,
		       int nic_node, const int cpu_node[FERRY_NUMA_MAX_CPUS],
		       char *buf, size_t len);

/*
 * The CPU for a worker ferry starts on its own (no `workers` given): the
 * highest allowed CPU on the NIC's node, else the highest allowed one
 * (the last CPU is the one least likely to take the host's housekeeping).
 * -1 when nothing is allowed.
 */
int ferry_numa_pick_cpu(int nic_node, uint64_t allowed,
			const int cpu_node[FERRY_NUMA_MAX_CPUS]);

/* This host's CPU -> node map from libnuma; -1 without NUMA support. */
void ferry_numa_cpu_nodes(int cpu_node[FERRY_NUMA_MAX_CPUS]);

/* "0-3,6" for a CPU mask; returns buf. */
char *ferry_cpulist_fmt(uint64_t mask, char *buf, size_t len);

#endif /* FERRY_NUMAPLACE_H */
