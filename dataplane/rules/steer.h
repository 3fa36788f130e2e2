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
 *
 * The table is shared: ACL rules (dataplane/rules/acl.c) live in the same one,
 * in the same order, each marked by its kind, and every rule has a row of
 * hit counters (ferry_rule_ctrs) whatever its kind. This file owns the
 * table's writes (append, remove) for both.
 */
#ifndef FERRY_STEER_H
#define FERRY_STEER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ferry_abi.h"
#include "ferry_err.h"
#include "port.h"
#include "strbuf.h"

struct ferry_port;
struct ferry_ports;
struct ferry_steer_table;

/*
 * The rule tables of every port (steering and ACL rules share one table per
 * port, rulecls.h): the ports' registry, and whether writing them to the
 * classifiers is held while a config file is applied. core/ holds one;
 * ferry_rules() in ferry.h hands it out.
 */
struct ferry_rules {
	struct ferry_ports *ports;
	bool held;
	/* each port's steering and ACL rules, by port slot (port.h); NULL
	 * until its first rule */
	struct ferry_steer_table *table[FERRY_MAX_PORTS];
};

#define FERRY_STEER_NAME_MAX 32

/* Counters of one rule on one CPU, summed over the per-CPU copies. */
struct ferry_steer_cpu_view {
	uint64_t steered;
	uint64_t redirect_failed; /* ABI enqueue_failed: no CPUMAP entry */
	uint64_t processed;
};

enum ferry_rule_kind {
	FERRY_RULE_STEER,
	FERRY_RULE_ACL,
};

struct ferry_steer_rule {
	char name[FERRY_STEER_NAME_MAX];
	uint8_t kind;			   /* enum ferry_rule_kind */
	struct ferry_verdict_ctr hit_base; /* ferry_rule_ctrs at stats reset */
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
	uint64_t slots_used; /* bit s: steering slot s taken */
	uint64_t ctrs_used[FERRY_MAX_RULES / 64]; /* rows of ferry_rule_ctrs */
	uint32_t gen; /* the classifier's live generation (rulecls.h) */
	bool dirty;   /* changed while held: not yet in the classifier */
	uint32_t cpumap_qsize[FERRY_MAX_CPUS];		     /* 0: no entry */
	struct ferry_cpumap_ctr cpumap_base[FERRY_MAX_CPUS]; /* stats reset */
};

struct ferry_steer_params {
	const char *name;
	const char *port;
	struct ferry_rule match; /* family, l4_proto, dst, dport range */
	uint64_t cpus;
	uint32_t qsize;
};

int ferry_steer_add(struct ferry_rules *rs, const struct ferry_steer_params *sp,
		    struct ferry_err *msg);
int ferry_steer_del(struct ferry_rules *rs, const char *name,
		    struct ferry_err *msg);
/* Rules with their counters; name NULL: all. NULL with msg if unknown. */
json_t *ferry_steer_show(struct ferry_rules *rs, const char *name,
			 struct ferry_err *msg);
/* The `steer` and `cpumap` arrays of `stats`; port NULL: all ports. */
json_t *ferry_steer_stats(struct ferry_rules *rs, const char *port);
json_t *ferry_steer_cpumap_stats(struct ferry_rules *rs, const char *port);
/* Port i's rule j in table order (the order a reload must keep); strings
 * point into the rule. 0, 1 when rule j is not a steering rule (an ACL:
 * ferry_acl_get), or -ENOENT past the end. */
int ferry_steer_get(const struct ferry_rules *rs, int i, int j,
		    struct ferry_steer_params *sp);
/* Frees a port's table (its maps go with the port's skeleton). */
void ferry_steer_port_free(struct ferry_rules *rs, struct ferry_port *p);

/* ---- the shared table (steering and ACL rules), for acl.c ---- */

/* The rule called name on any port, its port and position; NULL if none. */
struct ferry_steer_rule *ferry_rule_find(const struct ferry_rules *rs,
					 const char *name,
					 struct ferry_port **port,
					 uint32_t *at);
/*
 * What adding a rule of either kind checks first: a valid name that no
 * rule on any port has (exists names it "<what>rule NAME", what being
 * "steer " or ""), and a port that exists and has not failed. The port,
 * or NULL with msg set.
 */
struct ferry_port *ferry_rule_add_port(struct ferry_rules *rs, const char *name,
				       const char *port, const char *what,
				       struct ferry_err *msg, int *err);
/* Port i's rule j if it is of kind; *rc 0, 1 (another kind) or -ENOENT
 * (past the end), the rule NULL unless 0. */
const struct ferry_steer_rule *ferry_rule_at(const struct ferry_rules *rs,
					     int i, int j,
					     enum ferry_rule_kind kind,
					     const struct ferry_port **port,
					     int *rc);
/* The port's table, made empty on first use; NULL with errno. */
struct ferry_steer_table *ferry_rules_table(struct ferry_rules *rs,
					    struct ferry_port *p);
/* r (match, kind, name) goes live last in p's table, with a fresh row of
 * hit counters (r->match.ctr is set). 0 or -errno; nothing changed then. */
int ferry_rules_append(struct ferry_rules *rs, struct ferry_port *p,
		       struct ferry_steer_rule *r);
/* Rule `at` leaves the table; the others keep their order. 0 or -errno. */
int ferry_rules_remove(struct ferry_rules *rs, struct ferry_port *p,
		       uint32_t at);
/*
 * hold: rule changes (both kinds) update ferry's tables but not the
 * classifiers', so a config file of a thousand rules is installed once
 * per port instead of once per line. Release: every table changed while
 * held is installed; 0, or the first failure (-errno, msg filled).
 */
int ferry_rules_hold(struct ferry_rules *rs, bool hold, struct ferry_err *msg);
/* Frames and bytes the rule matched first, since the last stats reset. */
int ferry_rule_hits(const struct ferry_port *p,
		    const struct ferry_steer_rule *r,
		    struct ferry_verdict_ctr *out);

/* stats reset: the counters read from zero again. */
void ferry_steer_reset(struct ferry_rules *rs, struct ferry_port *p);
/* Counters since the last stats reset. */
int ferry_steer_read(const struct ferry_port *p,
		     const struct ferry_steer_rule *r,
		     struct ferry_steer_cpu_view out[FERRY_MAX_CPUS]);
/* The port's CPUMAP per target CPU; -ENOTSUP when not measured. */
int ferry_steer_cpumap_read(const struct ferry_rules *rs,
			    const struct ferry_port *p,
			    struct ferry_cpumap_ctr out[FERRY_MAX_CPUS]);

/* steer_view.c: the ferry_steer_*_total and
 * ferry_cpumap_enqueue_drops_total families of every port. */
void ferry_steer_metrics(const struct ferry_rules *rs, struct ferry_strbuf *b);

/* "tcp", "udp" or "any"; prefix as "a.b.c.d/n" or "x::/n", "" if none. */
const char *ferry_steer_proto_name(uint8_t l4_proto);
void ferry_steer_dst_text(const struct ferry_rule *m, char *buf, size_t len);

#endif /* FERRY_STEER_H */
