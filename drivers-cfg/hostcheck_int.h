/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hostcheck_int.h - what the files of `host check` share: the state of one
 * run, the file readers (every path is taken under the root prefix) and
 * the checks the table in hostcheck.c calls.
 */
#ifndef FERRY_HOSTCHECK_INT_H
#define FERRY_HOSTCHECK_INT_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hostcheck.h"
#include "drvcaps.h"
#include "numaplace.h"
#include "profiles.h"

enum hc_status { HC_OK, HC_WARN, HC_FAIL };

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
	struct ferry_driver_caps
		caps; /* the kernel's answer, or the profile's */
};

/* Readers of ROOT + printf(fmt): 0 or -errno; a line without its newline. */
int hc_read_str(const struct hc *h, char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int hc_read_long(const struct hc *h, long *v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
DIR *hc_open_dir(const struct hc *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
bool hc_exists(const struct hc *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "0-3,6" -> mask; ids >= 64 are ignored (ferry's masks are 64 bits). */
uint64_t hc_cpulist_parse(const char *s);

/* Appends {check, status, value: printf(fmt), fix (NULL: "-")}. */
void hc_row(struct hc *h, const char *check, enum hc_status st, const char *fix,
	    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

extern const struct ferry_host_probes hc_real_probes;

/* hostcheck_host.c */
void hc_check_kernel(struct hc *h);
void hc_check_bpf_sysctls(struct hc *h);
void hc_check_mounts(struct hc *h);
void hc_check_hugepages(struct hc *h);
void hc_check_memlock(struct hc *h);
void hc_check_workers(struct hc *h);
/* hostcheck_nic.c */
void hc_check_driver(struct hc *h);
void hc_check_xdp_features(struct hc *h);
void hc_check_numa(struct hc *h);
void hc_check_queues(struct hc *h);
void hc_check_irqs(struct hc *h);
void hc_check_busy_poll(struct hc *h);
void hc_check_veth_csum(struct hc *h);
int hc_probe_veth_peer_tx_csum(const char *ifname, char *peer, size_t len);
int hc_probe_netdev_feat(const char *ifname, struct ferry_netdev_feat *out);

#endif /* FERRY_HOSTCHECK_INT_H */
