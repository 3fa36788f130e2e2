/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * acl.h - ACL rules: frames of a port that match are dropped or passed to
 * the kernel in XDP, before any worker (or the in-kernel DEVMAP path) sees
 * them, whatever the port's app.
 *
 * ACL rules live in the port's one rule table (steer.h), beside the
 * steering rules, in the order they were added: the classifier takes the
 * first rule that matches, of either kind. Names are unique across ports
 * and kinds. Control thread only.
 */
#ifndef FERRY_ACL_H
#define FERRY_ACL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "ferry_abi.h"
#include "ferry_err.h"

struct ferry_rules;

struct ferry_acl_params {
	const char *name;
	const char *port;
	/* family, l4_proto, src, dst, sport and dport ranges */
	struct ferry_rule match;
	uint8_t action; /* FERRY_ACT_DROP, or FERRY_ACT_APP for pass */
};

int ferry_acl_add(struct ferry_rules *rs, const struct ferry_acl_params *ap,
		  struct ferry_err *msg);
int ferry_acl_del(struct ferry_rules *rs, const char *name,
		  struct ferry_err *msg);
/*
 * The rule tables of every port, both kinds, in table order, with the
 * frames and bytes each rule matched first; name: that rule only (of
 * either kind). NULL with msg if there is no such rule.
 */
json_t *ferry_acl_show(struct ferry_rules *rs, const char *name,
		       struct ferry_err *msg);
/* Port i's rule j in table order: 0 for an ACL rule (strings point into
 * the rule), 1 for a steering rule (ferry_steer_get), -ENOENT past the
 * end. */
int ferry_acl_get(const struct ferry_rules *rs, int i, int j,
		  struct ferry_acl_params *ap);

/* "a.b.c.d/n", "x::/n", or "" when plen is 0. */
void ferry_acl_prefix_text(uint8_t family, const uint32_t addr[4], uint8_t plen,
			   char *buf, size_t len);
/* "N", "N-M", or "" when both are 0. */
void ferry_acl_range_text(uint16_t lo, uint16_t hi, char *buf, size_t len);

#endif /* FERRY_ACL_H */
