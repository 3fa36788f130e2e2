/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ferry.h - the daemon's dataplane as one object: its workers, its ports and
 * what each port does. Every operation validates all of its input before
 * it changes anything; a failed operation leaves the state as it was and
 * writes a message for the operator into msg.
 *
 * Called from the control thread only; the workers see changes through
 * ferry_worker_pause/resume.
 */
#ifndef FERRY_FERRY_H
#define FERRY_FERRY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "apps.h"
#include "gen.h"
#include "port_params.h"
#include "ferry_err.h"

struct ferry;

struct ferry *ferry_create(void);
/* Stops generators, deletes ports (detaching XDP), stops workers. */
void ferry_destroy(struct ferry *f);

/* 0 if every CPU in the mask is online and allowed for ferryd. */
int ferry_cpus_check(uint64_t cpumask, struct ferry_err *msg);
/* Replaces the workers; only while no ports exist (-EBUSY otherwise). */
int ferry_workers_set(struct ferry *f, uint64_t cpumask, enum ferry_idle idle,
		      struct ferry_err *msg);
int ferry_port_count(const struct ferry *f);
/* CPUs of the running workers; 0 before any started. */
uint64_t ferry_worker_cpus(const struct ferry *f);
/* Drains and deletes every port (xconnects first); 0 or -EIO. */
int ferry_ports_del_all(struct ferry *f);

int ferry_port_add(struct ferry *f, const struct ferry_port_params *pp,
		   struct ferry_err *msg);
int ferry_port_del(struct ferry *f, const char *name, struct ferry_err *msg);

const char *ferry_app_name(enum ferry_app app);

/* xconnect (peer names the egress port), reflect, drop, none. */
int ferry_app_set(struct ferry *f, const char *port, enum ferry_app app,
		  const char *peer, struct ferry_err *msg);
int ferry_xconnect_del(struct ferry *f, const char *port,
		       struct ferry_err *msg);
/*
 * xconnect with the path asked for: as ferry_app_set, and first refuses
 * (-EOPNOTSUPP, with the fix in msg) a path kernel that cannot work.
 */
int ferry_xconnect_add(struct ferry *f, const char *port, const char *peer,
		       enum ferry_path path, struct ferry_err *msg);

/*
 * The router (route app): the netlink socket to watch once a route port
 * exists (-1 before), and what to call when it is readable. fib/neigh show
 * return arrays (empty before the first route port); NULL + msg on a bad
 * prefix.
 */
/*
 * route PORT with the path asked for (kernel: bpf_fib_lookup and a DEVMAP
 * in XDP for what needs no worker, dataplane/kpath/kpath.h): as ferry_app_set,
 * and first refuses (-EOPNOTSUPP, with the fix in msg) a path kernel that
 * cannot work.
 */
int ferry_route_add(struct ferry *f, const char *port, enum ferry_path path,
		    struct ferry_err *msg);
int ferry_route_fd(const struct ferry *f);
void ferry_route_process(struct ferry *f);
json_t *ferry_fib_show(struct ferry *f, const char *prefix,
		       struct ferry_err *msg);
json_t *ferry_neigh_show(struct ferry *f);

/* p->ifindex, src_mac and cpu are filled in from the port. */
int ferry_gen_begin(struct ferry *f, const char *port,
		    struct ferry_gen_params *p, struct ferry_err *msg);
int ferry_gen_end(struct ferry *f, const char *port, struct ferry_err *msg);

/* JSON views (new references; NULL with msg on a bad filter). */
json_t *ferry_port_show(struct ferry *f, const char *name,
			struct ferry_err *msg);
json_t *ferry_worker_show(struct ferry *f);
json_t *ferry_stats(struct ferry *f, const char *port, int worker,
		    struct ferry_err *msg);
void ferry_stats_reset(struct ferry *f);
/* Prometheus text exposition; malloc'd. */
char *ferry_metrics(struct ferry *f);
/*
 * What was configured, as typed values (daemon/ turns them into command
 * lines). The workers' CPUs and idle mode; returns how many workers run.
 */
int ferry_workers_get(const struct ferry *f, uint64_t *cpus,
		      enum ferry_idle *idle);
/* Port i (0..ferry_port_count-1) as a port add would make it again: the
 * queues and XDP mode it got count as given. Strings point into the port.
 * 0 or -ENOENT. */
int ferry_port_get(const struct ferry *f, int i, struct ferry_port_params *pp);
/* Port i's app; *peer is the xconnect's egress port, else NULL. */
int ferry_port_app_get(const struct ferry *f, int i, enum ferry_app *app,
		       const char **peer);
/* Port i's xconnect path as asked (auto unless given); 0 or -ENOENT. */
int ferry_port_path_get(const struct ferry *f, int i, enum ferry_path *path);

/* Called about once a second by the control thread: rates, and the watch
 * over each port's link, MTU, interface and XDP program (health.c). */
void ferry_tick(struct ferry *f);

/* The rule tables (steering and ACL rules, rules/steer.h, rules/acl.h). */
struct ferry_rules *ferry_rules(struct ferry *f);

#endif /* FERRY_FERRY_H */
