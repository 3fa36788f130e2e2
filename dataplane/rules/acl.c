// SPDX-License-Identifier: BSD-2-Clause
/*
 * acl.c - ACL rules (acl.h) on top of the shared rule table in steer.c,
 * which owns the table's writes and the order that keeps the classifier
 * consistent while it reads.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "acl.h"
#include "port.h"
#include "log.h"
#include "steer.h"

void ferry_acl_prefix_text(uint8_t family, const uint32_t addr[4], uint8_t plen,
			   char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "";

	if (!plen || (family != 4 && family != 6)) {
		snprintf(buf, len, "%s", "");
		return;
	}
	inet_ntop(family == 4 ? AF_INET : AF_INET6, addr, a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, plen);
}

void ferry_acl_range_text(uint16_t lo, uint16_t hi, char *buf, size_t len)
{
	if (lo == hi && lo)
		snprintf(buf, len, "%u", lo);
	else if (lo || hi)
		snprintf(buf, len, "%u-%u", lo, hi);
	else
		snprintf(buf, len, "%s", "");
}

int ferry_acl_add(struct ferry_rules *rs, const struct ferry_acl_params *ap,
		  struct ferry_err *msg)
{
	struct ferry_port *p;
	const struct ferry_rule *m = &ap->match;
	struct ferry_steer_rule r;
	struct ferry_steer_table *t;
	int err;

	p = ferry_rule_add_port(rs, ap->name, ap->port, "", msg, &err);
	if (!p)
		return err;
	if (ap->action != FERRY_ACT_DROP && ap->action != FERRY_ACT_APP)
		return ferry_fail(msg, -EINVAL, "action: drop or pass");
	/* Ports exist in TCP and UDP only: a rule asking for ports of ICMP
	 * (or of any protocol, which includes ICMP) would be misread. */
	if ((m->sport_lo || m->dport_lo) && m->l4_proto != IPPROTO_TCP &&
	    m->l4_proto != IPPROTO_UDP)
		return ferry_fail(msg, -EINVAL,
				  "sport and dport need proto tcp or udp");
	t = ferry_rules_table(rs, p);
	if (!t)
		return -ENOMEM;
	if (t->n >= FERRY_MAX_RULES)
		return ferry_fail(msg, -ENOSPC,
				  "port %s has %d rules, the most it can have",
				  p->name, FERRY_MAX_RULES);
	memset(&r, 0, sizeof(r));
	snprintf(r.name, sizeof(r.name), "%s", ap->name);
	r.kind = FERRY_RULE_ACL;
	r.match = *m;
	r.match.action = ap->action;
	r.match.arg = 0;
	err = ferry_rules_append(rs, p, &r);
	if (err)
		return ferry_fail(msg, err, "port %s: cannot write rule: %s",
				  p->name, strerror(-err));
	log_info("acl %s: port %s rule %u, %s", r.name, p->name, t->n - 1,
		 ap->action == FERRY_ACT_DROP ? "drop" : "pass");
	return 0;
}

int ferry_acl_del(struct ferry_rules *rs, const char *name,
		  struct ferry_err *msg)
{
	struct ferry_port *p = NULL;
	struct ferry_steer_rule *r;
	uint32_t at = 0;
	int err;

	r = ferry_rule_find(rs, name, &p, &at);
	if (!r)
		return ferry_fail(msg, -ENOENT, "no acl rule %s", name);
	if (r->kind != FERRY_RULE_ACL)
		return ferry_fail(msg, -EINVAL,
				  "%s is a steering rule (steer del %s)", name,
				  name);
	err = ferry_rules_remove(rs, p, at);
	if (err)
		return ferry_fail(msg, err, "port %s: cannot rewrite rules: %s",
				  p->name, strerror(-err));
	log_info("acl %s: deleted from port %s", name, p->name);
	return 0;
}

static const char *action_name(const struct ferry_steer_rule *r)
{
	switch (r->match.action) {
	case FERRY_ACT_DROP:
		return "drop";
	case FERRY_ACT_APP: /* an ACL's pass: on to the app */
		return "pass";
	case FERRY_ACT_PASS:
		return "kernel";
	case FERRY_ACT_CPU:
		return "cpu";
	default:
		return "xsk";
	}
}

static json_t *text_or_null(const char *s)
{
	return s[0] ? json_string(s) : json_null();
}

static json_t *rule_json(const struct ferry_rules *rs,
			 const struct ferry_port *p, uint32_t at)
{
	const struct ferry_steer_rule *r = &rs->table[p->slot]->rules[at];
	const struct ferry_rule *m = &r->match;
	char buf[INET6_ADDRSTRLEN + 8];
	struct ferry_verdict_ctr hits;
	json_t *o = json_object(), *mj = json_object();
	bool ok = !ferry_rule_hits(p, r, &hits);

	json_object_set_new(mj, "proto",
			    json_string(ferry_steer_proto_name(m->l4_proto)));
	ferry_acl_prefix_text(m->family, m->src, m->src_plen, buf, sizeof(buf));
	json_object_set_new(mj, "src", text_or_null(buf));
	ferry_acl_prefix_text(m->family, m->dst, m->dst_plen, buf, sizeof(buf));
	json_object_set_new(mj, "dst", text_or_null(buf));
	ferry_acl_range_text(m->sport_lo, m->sport_hi, buf, sizeof(buf));
	json_object_set_new(mj, "sport", text_or_null(buf));
	ferry_acl_range_text(m->dport_lo, m->dport_hi, buf, sizeof(buf));
	json_object_set_new(mj, "dport", text_or_null(buf));
	json_object_set_new(o, "name", json_string(r->name));
	json_object_set_new(o, "port", json_string(p->name));
	json_object_set_new(o, "index", json_integer(at));
	json_object_set_new(
		o, "kind",
		json_string(r->kind == FERRY_RULE_ACL ? "acl" : "steer"));
	json_object_set_new(o, "match", mj);
	json_object_set_new(o, "action", json_string(action_name(r)));
	json_object_set_new(o, "packets",
			    ok ? json_integer((json_int_t)hits.packets)
			       : json_null());
	json_object_set_new(o, "bytes",
			    ok ? json_integer((json_int_t)hits.bytes)
			       : json_null());
	return o;
}

json_t *ferry_acl_show(struct ferry_rules *rs, const char *name,
		       struct ferry_err *msg)
{
	json_t *arr;
	uint32_t j;
	int i;

	if (name && !ferry_rule_find(rs, name, NULL, NULL)) {
		ferry_errf(msg, "no rule %s", name);
		return NULL;
	}
	arr = json_array();
	for (i = 0; i < rs->ports->n; i++) {
		const struct ferry_port *p = rs->ports->v[i];

		for (j = 0;
		     rs->table[p->slot] && p->skel && j < rs->table[p->slot]->n;
		     j++)
			if (!name ||
			    !strcmp(name, rs->table[p->slot]->rules[j].name))
				json_array_append_new(arr, rule_json(rs, p, j));
	}
	return arr;
}

int ferry_acl_get(const struct ferry_rules *rs, int i, int j,
		  struct ferry_acl_params *ap)
{
	const struct ferry_port *p = NULL;
	const struct ferry_steer_rule *r;
	int rc;

	r = ferry_rule_at(rs, i, j, FERRY_RULE_ACL, &p, &rc);
	if (!r)
		return rc;
	*ap = (struct ferry_acl_params){
		.name = r->name,
		.port = p->name,
		.match = r->match,
		.action = r->match.action,
	};
	ap->match.action = 0;
	ap->match.ctr = 0;
	return 0;
}
