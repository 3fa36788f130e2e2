/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * steer.h - CPU steering rules: frames of a port that match a rule leave
 * XDP through the port's CPUMAP, to the CPU their flow hashes to among the
 * rule's CPUs, and become skbs for the kernel stack there.
 *
 * Each port has its own classifier, so rules are per port; their names are
 * unique across ports so that `steer del NAME` needs no port. A rule's
 * position in the port's rule table is the order it was added in; its slot
 * (CPU set and counters) is fixed for its lifetime. Control thread only.
 */
#ifndef FERRY_STEER_H
#define FERRY_STEER_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "ferry_abi.h"
#include "ferry_err.h"

struct ferry;
struct ferry_port;

#define FERRY_STEER_NAME_MAX 32

/* Counters of one rule on one CPU, summed over the per-CPU copies. */
struct ferry_steer_cpu_view {
	uint64_t steered;
	uint64_t redirect_failed; /* ABI enqueue_failed: no CPUMAP entry */
	uint64_t processed;
};

struct ferry_steer_rule {
	char name[FERRY_STEER_NAME_MAX];
	struct ferry_rule match; /* action and arg are filled in by add */
	uint64_t cpus;		 /* bit i: CPU i */
	uint32_t qsize;
	uint32_t slot; /* index into ferry_cpusets and the counters */
	struct ferry_steer_cpu_view base[FERRY_MAX_CPUS]; /* at stats reset */
};

/* A port's rules, in table order: rules[i] is ferry_rules[i]. */
struct ferry_steer_table {
	struct ferry_steer_rule rules[FERRY_MAX_RULES];
	uint32_t n;
	uint64_t slots_used;		       /* bit s: slot s taken */
	uint32_t cpumap_qsize[FERRY_MAX_CPUS]; /* 0: no entry */
	struct ferry_cpumap_ctr cpumap_base[FERRY_MAX_CPUS]; /* stats reset */
};

struct ferry_steer_params {
	const char *name;
	const char *port;
	struct ferry_rule match; /* family, l4_proto, dst, dport range */
	uint64_t cpus;
	uint32_t qsize;
};

int ferry_steer_add(struct ferry *f, const struct ferry_steer_params *sp,
		    struct ferry_err *msg);
int ferry_steer_del(struct ferry *f, const char *name, struct ferry_err *msg);
/* Rules with their counters; name NULL: all. NULL with msg if unknown. */
json_t *ferry_steer_show(struct ferry *f, const char *name,
			 struct ferry_err *msg);
/* The `steer` and `cpumap` arrays of `stats`; port NULL: all ports. */
json_t *ferry_steer_stats(struct ferry *f, const char *port);
json_t *ferry_steer_cpumap_stats(struct ferry *f, const char *port);
/* Port i's rule j in table order (the order a reload must keep); strings
 * point into the rule. 0 or -ENOENT. */
int ferry_steer_get(const struct ferry *f, int i, int j,
		    struct ferry_steer_params *sp);
/* Frees a port's table (its maps go with the port's skeleton). */
void ferry_steer_port_free(struct ferry_port *p);

/* stats reset: the counters read from zero again. */
void ferry_steer_reset(struct ferry_port *p);
/* Counters since the last stats reset. */
int ferry_steer_read(const struct ferry_port *p,
		     const struct ferry_steer_rule *r,
		     struct ferry_steer_cpu_view out[FERRY_MAX_CPUS]);
/* The port's CPUMAP per target CPU; -ENOTSUP when not measured. */
int ferry_steer_cpumap_read(const struct ferry_port *p,
			    struct ferry_cpumap_ctr out[FERRY_MAX_CPUS]);

/* "tcp", "udp" or "any"; prefix as "a.b.c.d/n" or "x::/n", "" if none. */
const char *ferry_steer_proto_name(uint8_t l4_proto);
void ferry_steer_dst_text(const struct ferry_rule *m, char *buf, size_t len);

#endif /* FERRY_STEER_H */
