/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cmd_host.h - `host check [IFNAME] [cpus LIST]`, one handler for both
 * sides: ferryd answers it with its workers' CPUs as the default, and
 * ferryctl runs it in-process when no ferryd answers (before one runs).
 */
#ifndef FERRY_CTL_CMD_HOST_H
#define FERRY_CTL_CMD_HOST_H

#include <jansson.h>
#include <stdint.h>

#include "proto.h"

#define HOST_CHECK_ARGS "[IFNAME] [cpus CPULIST]"
#define HOST_CHECK_HELP                                                        \
	"is this host ready for ferry: kernel features, bpffs, hugepages, "    \
	"memlock, BPF sysctls; with IFNAME its driver profile, NUMA nodes, "   \
	"queues, IRQ affinity and busy-poll against the worker CPUs "          \
	"(default: ferryd's workers, else every online CPU); a fix per line"

/*
 * dflt_cpus: worker CPUs when no `cpus` is given (0: every online CPU);
 * cpus_from says where they came from.
 */
int ctl_host_check(int argc, char **argv, uint64_t dflt_cpus,
		   const char *cpus_from, json_t **data, struct ferry_err *err);

#endif /* FERRY_CTL_CMD_HOST_H */
