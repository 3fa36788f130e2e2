/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sockmap.h - local TCP flow acceleration: a sockops program on a cgroup
 * puts established loopback TCP sockets into a SOCKHASH, an sk_msg program
 * redirects each send straight to the peer socket's ingress, with a verdict
 * that lasts for the flow (bpf/ferry_sockmap.bpf.c).
 *
 * Which connections are redirected is decided per service, once per
 * connection when it is established, from what the service's earlier
 * connections were measured to do or from an operator's policy. While
 * every service is decided plain and nothing is redirected, the programs
 * that measure are detached (the tick does it, and brings them back).
 *
 * One attachment at a time. Detach stops adding sockets and moves every
 * flow it safely can back to plain TCP at once; a socket that has
 * redirected data queued for its reader stays until it closes (removing it
 * would free that data), and the attachment lingers, "draining", until the
 * last one has. Control thread only.
 */
#ifndef FERRY_SOCKMAP_H
#define FERRY_SOCKMAP_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "ferry_abi.h"
#include "ferry_err.h"

struct ferry_sockmap;

/* -1 in mode: auto (permanent where the kernel has it, else apply-bytes). */
#define FERRY_SM_MODE_AUTO (-1)

struct ferry_sockmap_params {
	const char *cgroup; /* a cgroup v2 directory, never the root */
	struct ferry_sm_port_range ranges[FERRY_SM_MAX_RANGES];
	unsigned n_ranges; /* 0: every port */
	int mode;	   /* enum ferry_sm_mode or FERRY_SM_MODE_AUTO */
	int dflt;	   /* enum ferry_sm_decision: services without policy */
	struct ferry_sm_rule rule; /* the learning rule's thresholds */
	/* the lag guard (ferry_abi.h): 0 off, else FERRY_SM_LAG_MAX_MIN to
	 * FERRY_SM_LAG_MAX_MAX unread bytes */
	uint64_t lag_max;
};

/* Where a relative cgroup path starts. */
#define FERRY_SM_CGROUP_ROOT "/sys/fs/cgroup"
/* The longest cgroup path a policy keeps (as given). */
#define FERRY_SM_CGROUP_MAX 256

/*
 * A pinned service: `sockmap policy add dst SERVICE DECISION [cgroup PATH]`.
 * The key's family 0 means every address of the port. With a cgroup, the
 * policy applies to connections whose server socket is in that cgroup,
 * and key.cgroup is its id, filled in by ferry_sockmap_policy_add (what
 * the caller puts there is ignored). Policies outlive attachments: they
 * are the daemon's, written into each attachment's map.
 */
struct ferry_sockmap_policy {
	struct ferry_sm_policy_key key;
	int decision;	    /* enum ferry_sm_decision; learn undoes a default */
	const char *cgroup; /* as given, or NULL: every cgroup */
};

struct ferry_sockmap *ferry_sockmap_create(void);
void ferry_sockmap_destroy(struct ferry_sockmap *sm);

int ferry_sockmap_attach(struct ferry_sockmap *sm,
			 const struct ferry_sockmap_params *p,
			 struct ferry_err *msg);
int ferry_sockmap_detach(struct ferry_sockmap *sm, json_t **data,
			 struct ferry_err *msg);
json_t *ferry_sockmap_show(struct ferry_sockmap *sm);
/* Frees a draining attachment once its last socket has closed. */
void ferry_sockmap_tick(struct ferry_sockmap *sm);
/* The attachment's params as given (cgroup points into it); -ENOENT when
 * detached. */
int ferry_sockmap_get(const struct ferry_sockmap *sm,
		      struct ferry_sockmap_params *p);

/* Adds or replaces the policy of p->key; -ENOSPC when the table is full. */
int ferry_sockmap_policy_add(struct ferry_sockmap *sm,
			     const struct ferry_sockmap_policy *p,
			     struct ferry_err *msg);
/* -ENOENT when the service has no policy; p->decision is not looked at. A
 * cgroup is found by its id, or by its path as given when it is gone. */
int ferry_sockmap_policy_del(struct ferry_sockmap *sm,
			     const struct ferry_sockmap_policy *p,
			     struct ferry_err *msg);
/* The i-th policy, in the order added (cgroup points into sm); -ENOENT
 * past the last. */
int ferry_sockmap_policy_get(const struct ferry_sockmap *sm, unsigned i,
			     struct ferry_sockmap_policy *p);

/* "PORT", "ADDR:PORT" or "[ADDR6]:PORT" (v4-mapped: as IPv4); -EINVAL. */
int ferry_sockmap_service_parse(const char *s, struct ferry_sm_policy_key *k,
				struct ferry_err *msg);
void ferry_sockmap_service_text(const struct ferry_sm_policy_key *k, char *buf,
				size_t len);
/*
 * The id of a cgroup v2 directory (absolute, or relative to
 * FERRY_SM_CGROUP_ROOT): the kernel's cgroup id, which is the directory's
 * inode number. -ENOENT (and others from open) when there is no such
 * directory, -EINVAL when it is not on a cgroup2 mount.
 */
int ferry_sockmap_cgroup_id(const char *path, uint64_t *id,
			    struct ferry_err *msg);
/* enum ferry_sm_decision by name; -EINVAL. */
int ferry_sockmap_decision_parse(const char *s, int *decision);
const char *ferry_sockmap_decision_name(int decision);

/* "80,443,8000-8099": ranges in order; -EINVAL/-E2BIG with msg. */
int ferry_sockmap_parse_ports(const char *s, struct ferry_sm_port_range *ranges,
			      unsigned *n, struct ferry_err *msg);
/* enum ferry_sm_mode by name, or FERRY_SM_MODE_AUTO for "auto"; -EINVAL. */
int ferry_sockmap_mode_parse(const char *s, int *mode);
const char *ferry_sockmap_mode_name(int mode);

#endif /* FERRY_SOCKMAP_H */
