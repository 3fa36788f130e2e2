/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rulecls.h - a port's rule table as the classifier reads it: two
 * generations (ferry_abi.h, ferry_cls), the linear table and the
 * bit-vector matcher's per-field lookups built from the rules in
 * userspace, installed in the generation not in use, then made live by
 * one write. Used by steer.c (steering and ACL rules) and by the tests
 * and bench/acl_cost.sh, which drive the classifier object directly.
 */
#ifndef FERRY_RULECLS_H
#define FERRY_RULECLS_H

#include <stdint.h>

#include "ferry_abi.h"

struct ferry_xdp_bpf;

/* Rule tables up to this many rules are walked (in the classifier's
 * inline loop); longer ones use the bit-vector matcher: the crossover
 * measured by bench/acl_cost.sh. */
#define FERRY_CLS_LINEAR_MAX 24
_Static_assert(FERRY_CLS_LINEAR_MAX <= FERRY_CLS_WALK_INLINE,
	       "a walked table is walked inline");

/*
 * Installs rules[0..n) as the generation after *gen and makes it live;
 * *gen is then the live one. matcher FERRY_CLS__COUNT: chosen by n.
 * On failure the live generation is untouched. 0 or -errno.
 */
int ferry_cls_publish(struct ferry_xdp_bpf *skel, uint32_t *gen,
		      const struct ferry_rule *rules, uint32_t n,
		      enum ferry_cls_matcher matcher);

/* The bit-vector tables of one generation, in userspace. */
struct ferry_bvset;

struct ferry_bvset *ferry_bv_build(const struct ferry_rule *rules, uint32_t n,
				   uint32_t gen);
void ferry_bv_free(struct ferry_bvset *b);
/* The reference lookup over the built tables, as the BPF matcher does it:
 * the first matching rule's index or -1 (family 0, 4 or 6; addresses in
 * network order, ports in host order; has_ports as the classifier says). */
int ferry_bv_lookup(const struct ferry_bvset *b, uint8_t family,
		    uint8_t l4_proto, const uint32_t src[4],
		    const uint32_t dst[4], int has_ports, uint16_t sport,
		    uint16_t dport);

#endif /* FERRY_RULECLS_H */
