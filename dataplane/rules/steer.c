// SPDX-License-Identifier: BSD-2-Clause
/*
 * steer.c - CPU steering rules: the userspace table of each port, the BPF
 * maps it mirrors (ferry_rules, ferry_cpusets, cpu_map), and the counters.
 *
 * The classifier reads the rule table while we write it, so the order of
 * writes is what keeps it consistent: a new rule is written beyond n_rules
 * and made live by raising n_rules last; a deleted rule is overwritten by
 * its successors (each write copies a live rule one place up, so no other
 * rule is ever hidden) and n_rules is lowered after. CPUMAP entries are
 * shared by the port's rules: one per CPU any rule uses, sized for the
 * largest qsize asked for, removed when no rule uses the CPU any more.
 */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "port.h"
#include "ferry_xdp.skel.h"
#include "log.h"
#include "util.h"
#include "rulecls.h"
#include "steer.h"

/* ------------------------------------------------------------ helpers */

/* Online CPUs from sysfs ("0-3,5"); the affinity mask if it is unreadable. */
static uint64_t online_cpus(void)
{
	char buf[256], *p, *end;
	uint64_t mask = 0;
	unsigned long a, b, c;
	FILE *fp;

	fp = fopen("/sys/devices/system/cpu/online", "r");
	if (fp && fgets(buf, sizeof(buf), fp)) {
		for (p = buf; *p && *p != '\n';) {
			a = strtoul(p, &end, 10);
			if (end == p)
				break;
			b = a;
			if (*end == '-') {
				p = end + 1;
				b = strtoul(p, &end, 10);
			}
			for (c = a; c <= b && c < 64; c++)
				mask |= 1ull << c;
			p = *end == ',' ? end + 1 : end;
		}
	}
	if (fp)
		fclose(fp);
	return mask ? mask : ferry_allowed_cpus();
}

struct ferry_steer_rule *ferry_rule_find(const struct ferry_rules *rs,
					 const char *name,
					 struct ferry_port **port, uint32_t *at)
{
	int i;
	uint32_t j;

	for (i = 0; i < rs->ports->n; i++) {
		struct ferry_steer_table *t = rs->table[rs->ports->v[i]->slot];

		for (j = 0; t && j < t->n; j++) {
			if (strcmp(t->rules[j].name, name))
				continue;
			if (port)
				*port = rs->ports->v[i];
			if (at)
				*at = j;
			return &t->rules[j];
		}
	}
	return NULL;
}

struct ferry_port *ferry_rule_add_port(struct ferry_rules *rs, const char *name,
				       const char *port, const char *what,
				       struct ferry_err *msg, int *err)
{
	struct ferry_port *p = ferry_ports_find(rs->ports, port), *other;

	if (!ferry_name_ok(name, FERRY_STEER_NAME_MAX))
		*err = ferry_fail(
			msg, -EINVAL,
			"bad rule name '%s' (1-%d of A-Z a-z 0-9 _ . -)", name,
			FERRY_STEER_NAME_MAX - 1);
	else if (!p)
		*err = ferry_fail(msg, -ENOENT, "no port %s", port);
	else if (!p->skel)
		*err = ferry_fail(msg, -ENETDOWN, "port %s has failed (%s)",
				  p->name, p->reason);
	else if (ferry_rule_find(rs, name, &other, NULL))
		*err = ferry_fail(msg, -EEXIST, "%srule %s exists (on port %s)",
				  what, name, other->name);
	else
		return p;
	return NULL;
}

const struct ferry_steer_rule *ferry_rule_at(const struct ferry_rules *rs,
					     int i, int j,
					     enum ferry_rule_kind kind,
					     const struct ferry_port **port,
					     int *rc)
{
	const struct ferry_port *p;
	const struct ferry_steer_rule *r;

	*rc = -ENOENT;
	if (i < 0 || i >= rs->ports->n)
		return NULL;
	p = rs->ports->v[i];
	if (!rs->table[p->slot] || j < 0 ||
	    (uint32_t)j >= rs->table[p->slot]->n)
		return NULL;
	r = &rs->table[p->slot]->rules[j];
	*rc = r->kind == kind ? 0 : 1;
	*port = p;
	return *rc ? NULL : r;
}

/*
 * Publishes rules[0..n) of t, leaving out rule `skip` (-1: none) and
 * adding `extra` (NULL: none) at the end, as the next generation of the
 * port's classifier table (rulecls.c).
 */
static int table_publish(const struct ferry_rules *rs, struct ferry_port *p,
			 struct ferry_steer_table *t, int64_t skip,
			 const struct ferry_steer_rule *extra)
{
	struct ferry_rule *m;
	uint32_t i, n = 0;
	int err;

	/* Held (a config file being applied): the table as the caller
	 * leaves it goes out once, at ferry_rules_hold(rs, false). */
	if (rs->held) {
		t->dirty = true;
		return 0;
	}
	m = calloc(FERRY_MAX_RULES, sizeof(*m));
	if (!m)
		return -ENOMEM;
	for (i = 0; i < t->n; i++)
		if ((int64_t)i != skip)
			m[n++] = t->rules[i].match;
	if (extra && n < FERRY_MAX_RULES)
		m[n++] = extra->match;
	err = ferry_cls_publish(p->skel, &t->gen, m, n, FERRY_CLS__COUNT);
	free(m);
	if (!err)
		t->dirty = false;
	return err;
}

int ferry_rules_hold(struct ferry_rules *rs, bool hold, struct ferry_err *msg)
{
	int i, err, first = 0;

	rs->held = hold;
	if (hold)
		return 0;
	for (i = 0; i < rs->ports->n; i++) {
		struct ferry_port *p = rs->ports->v[i];

		if (!rs->table[p->slot] || !rs->table[p->slot]->dirty ||
		    !p->skel)
			continue;
		err = table_publish(rs, p, rs->table[p->slot], -1, NULL);
		if (!err)
			continue;
		log_err("port %s: cannot write its %u rules: %s", p->name,
			rs->table[p->slot]->n, strerror(-err));
		if (!first)
			first = ferry_fail(
				msg, err,
				"port %s: cannot write its %u rules: "
				"%s",
				p->name, rs->table[p->slot]->n, strerror(-err));
	}
	return first;
}

/*
 * Makes cpu_map match the table: an entry per CPU some rule uses, with the
 * largest qsize asked for it, running the counting program. On failure
 * returns -errno and the CPU in *bad_cpu; entries already changed stay.
 */
static int cpumap_sync(struct ferry_port *p, struct ferry_steer_table *t,
		       int *bad_cpu)
{
	int fd = bpf_map__fd(p->skel->maps.cpu_map);
	int prog = bpf_program__fd(p->skel->progs.ferry_cpumap);
	uint32_t want[FERRY_MAX_CPUS] = {0}, i, cpu;

	for (i = 0; i < t->n; i++)
		for (cpu = 0; cpu < FERRY_MAX_CPUS; cpu++)
			if ((t->rules[i].cpus & (1ull << cpu)) &&
			    t->rules[i].qsize > want[cpu])
				want[cpu] = t->rules[i].qsize;
	/* Software RSS through CPUMAP needs its CPUs' entries too. */
	for (cpu = 0; cpu < FERRY_MAX_CPUS; cpu++)
		if (ferry_port_spread_n(p) &&
		    p->req.spread_via == FERRY_SPREAD_CPUMAP &&
		    (p->req.spread_cpus & (1ull << cpu)) &&
		    want[cpu] < FERRY_CPUMAP_QSIZE_DEFAULT)
			want[cpu] = FERRY_CPUMAP_QSIZE_DEFAULT;
	for (cpu = 0; cpu < FERRY_MAX_CPUS; cpu++) {
		struct bpf_cpumap_val v = {.qsize = want[cpu]};

		if (want[cpu] == t->cpumap_qsize[cpu])
			continue;
		*bad_cpu = (int)cpu;
		if (want[cpu]) {
			/* Replacing an entry hands its queued frames to the
			 * old kthread, which drains them before it exits. */
			v.bpf_prog.fd = prog;
			if (bpf_map_update_elem(fd, &cpu, &v, 0))
				return -errno;
		} else if (bpf_map_delete_elem(fd, &cpu) && errno != ENOENT) {
			return -errno;
		}
		t->cpumap_qsize[cpu] = want[cpu];
	}
	return 0;
}

static int cpuset_write(struct ferry_port *p, const struct ferry_steer_rule *r)
{
	struct ferry_cpuset set = {0};
	uint32_t cpu;

	for (cpu = 0; cpu < FERRY_MAX_CPUS; cpu++)
		if (r->cpus & (1ull << cpu))
			set.cpu[set.n++] = cpu;
	if (bpf_map_update_elem(bpf_map__fd(p->skel->maps.ferry_cpusets),
				&r->slot, &set, 0))
		return -errno;
	return 0;
}

/* A reused slot starts from zero. */
static int ctrs_zero(struct ferry_port *p, uint32_t slot)
{
	int ncpu = libbpf_num_possible_cpus(), fd, err = 0;
	struct ferry_steer_ctr *zero;
	uint32_t cpu, idx;

	if (ncpu <= 0)
		return -EINVAL;
	zero = calloc((size_t)ncpu, sizeof(*zero));
	if (!zero)
		return -ENOMEM;
	fd = bpf_map__fd(p->skel->maps.ferry_steer_ctrs);
	for (cpu = 0; cpu < FERRY_MAX_CPUS && !err; cpu++) {
		idx = FERRY_STEER_CTR_IDX(slot, cpu);
		if (bpf_map_update_elem(fd, &idx, zero, 0))
			err = -errno;
	}
	free(zero);
	return err;
}

/* ------------------------------------------------- the shared table */

struct ferry_steer_table *ferry_rules_table(struct ferry_rules *rs,
					    struct ferry_port *p)
{
	if (!rs->table[p->slot])
		rs->table[p->slot] = calloc(1, sizeof(*rs->table[p->slot]));
	return rs->table[p->slot];
}

/* A free row of ferry_rule_ctrs; the table has fewer rules than rows. */
static uint16_t ctr_free(const struct ferry_steer_table *t)
{
	uint32_t w;

	_Static_assert(FERRY_MAX_RULES % 64 == 0, "ctrs_used is u64 words");
	_Static_assert(FERRY_MAX_RULES <= 65536, "ferry_rule.ctr is a u16");
	for (w = 0; w < FERRY_MAX_RULES / 64; w++)
		if (~t->ctrs_used[w])
			return (uint16_t)(w * 64 + (uint32_t)__builtin_ctzll(
							   ~t->ctrs_used[w]));
	return 0; /* not reached: n < FERRY_MAX_RULES was checked */
}

static void ctr_mark(struct ferry_steer_table *t, uint16_t ctr, bool used)
{
	if (used)
		t->ctrs_used[ctr / 64] |= 1ull << (ctr % 64);
	else
		t->ctrs_used[ctr / 64] &= ~(1ull << (ctr % 64));
}

/* A reused row starts from zero. */
static int hits_zero(struct ferry_port *p, uint32_t ctr)
{
	int ncpu = libbpf_num_possible_cpus(), err = 0;
	struct ferry_verdict_ctr *zero;

	if (ncpu <= 0)
		return -EINVAL;
	zero = calloc((size_t)ncpu, sizeof(*zero));
	if (!zero)
		return -ENOMEM;
	if (bpf_map_update_elem(bpf_map__fd(p->skel->maps.ferry_rule_ctrs),
				&ctr, zero, 0))
		err = -errno;
	free(zero);
	return err;
}

static int hits_raw(const struct ferry_port *p,
		    const struct ferry_steer_rule *r,
		    struct ferry_verdict_ctr *out)
{
	int ncpu = libbpf_num_possible_cpus(), c, err = 0;
	struct ferry_verdict_ctr *vals;
	uint32_t key = r->match.ctr;

	memset(out, 0, sizeof(*out));
	if (ncpu <= 0 || !p->skel)
		return -EINVAL;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.ferry_rule_ctrs),
				&key, vals))
		err = -errno;
	for (c = 0; !err && c < ncpu; c++) {
		out->packets += vals[c].packets;
		out->bytes += vals[c].bytes;
	}
	free(vals);
	return err;
}

int ferry_rule_hits(const struct ferry_port *p,
		    const struct ferry_steer_rule *r,
		    struct ferry_verdict_ctr *out)
{
	int err = hits_raw(p, r, out);

	if (!err) {
		out->packets -= r->hit_base.packets;
		out->bytes -= r->hit_base.bytes;
	}
	return err;
}

int ferry_rules_append(struct ferry_rules *rs, struct ferry_port *p,
		       struct ferry_steer_rule *r)
{
	struct ferry_steer_table *t = rs->table[p->slot];
	int err;

	if (!t || !p->skel)
		return -EINVAL;
	if (t->n >= FERRY_MAX_RULES)
		return -ENOSPC;
	r->match.ctr = ctr_free(t);
	memset(&r->hit_base, 0, sizeof(r->hit_base));
	/* Its counter row is zeroed before any frame can reach it. */
	err = hits_zero(p, r->match.ctr);
	if (!err)
		err = table_publish(rs, p, t, -1, r);
	if (err)
		return err;
	ctr_mark(t, r->match.ctr, true);
	t->rules[t->n++] = *r;
	return 0;
}

int ferry_rules_remove(struct ferry_rules *rs, struct ferry_port *p,
		       uint32_t at)
{
	struct ferry_steer_table *t = rs->table[p->slot];
	uint16_t ctr;
	int err;

	if (!t || at >= t->n)
		return -ENOENT;
	ctr = t->rules[at].match.ctr;
	err = table_publish(rs, p, t, at, NULL);
	if (err)
		return err;
	memmove(&t->rules[at], &t->rules[at + 1],
		sizeof(t->rules[0]) * (t->n - at - 1));
	t->n--;
	ctr_mark(t, ctr, false);
	return 0;
}

/* ---------------------------------------------------------- add / del */

int ferry_steer_add(struct ferry_rules *rs, const struct ferry_steer_params *sp,
		    struct ferry_err *msg)
{
	struct ferry_port *p;
	uint64_t bad, online = online_cpus();
	struct ferry_steer_rule *r;
	struct ferry_steer_table *t;
	int ncpu = libbpf_num_possible_cpus(), bad_cpu = -1, err, e2;
	uint32_t slot;

	p = ferry_rule_add_port(rs, sp->name, sp->port, "steer ", msg, &err);
	if (!p)
		return err;
	if (!sp->cpus)
		return ferry_fail(msg, -EINVAL, "no CPUs given");
	bad = sp->cpus & ~online;
	if (ncpu > 0 && ncpu < 64)
		bad |= sp->cpus & ~((1ull << ncpu) - 1);
	if (bad)
		return ferry_fail(msg, -EINVAL, "CPU %d is not online",
				  __builtin_ctzll(bad));
	if (sp->qsize < FERRY_CPUMAP_QSIZE_MIN ||
	    sp->qsize > FERRY_CPUMAP_QSIZE_MAX)
		return ferry_fail(msg, -ERANGE,
				  "qsize %u is out of range (%d-%d)", sp->qsize,
				  FERRY_CPUMAP_QSIZE_MIN,
				  FERRY_CPUMAP_QSIZE_MAX);
	t = ferry_rules_table(rs, p);
	if (!t)
		return -ENOMEM;
	if (t->n >= FERRY_MAX_RULES)
		return ferry_fail(msg, -ENOSPC,
				  "port %s has %d rules, the most it can have",
				  p->name, FERRY_MAX_RULES);
	if (t->slots_used == UINT64_MAX)
		return ferry_fail(
			msg, -ENOSPC,
			"port %s has %d steering rules, the most it can have",
			p->name, FERRY_MAX_STEER);
	_Static_assert(FERRY_MAX_STEER == 64, "slots_used is one u64");
	slot = (uint32_t)__builtin_ctzll(~t->slots_used);

	r = &t->rules[t->n];
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", sp->name);
	r->kind = FERRY_RULE_STEER;
	r->match = sp->match;
	r->match.action = FERRY_ACT_CPU;
	r->match.arg = slot;
	r->match.ctr = ctr_free(t);
	r->cpus = sp->cpus;
	r->qsize = sp->qsize;
	r->slot = slot;

	/* Everything the rule points at first; the rule itself after, and
	 * live only when n_rules covers it. */
	err = ctrs_zero(p, slot);
	if (!err)
		err = hits_zero(p, r->match.ctr);
	if (!err)
		err = cpuset_write(p, r);
	if (err) {
		ferry_fail(msg, err, "port %s: cannot write CPU set: %s",
			   p->name, strerror(-err));
		return err;
	}
	t->n++;
	err = cpumap_sync(p, t, &bad_cpu);
	if (err) {
		ferry_fail(msg, err,
			   "port %s: cannot set CPUMAP entry for CPU %d "
			   "(qsize %u): %s",
			   p->name, bad_cpu, sp->qsize, strerror(-err));
		goto err_cpumap;
	}
	err = table_publish(rs, p, t, -1, NULL);
	if (err) {
		ferry_fail(msg, err, "port %s: cannot write rule: %s", p->name,
			   strerror(-err));
		goto err_cpumap;
	}
	t->slots_used |= 1ull << slot;
	ctr_mark(t, r->match.ctr, true);
	log_info("steer %s: port %s rule %u (slot %u), %u CPU(s), qsize %u",
		 r->name, p->name, t->n - 1, slot,
		 (unsigned)__builtin_popcountll(r->cpus), r->qsize);
	return 0;

err_cpumap:
	t->n--;
	e2 = cpumap_sync(p, t, &bad_cpu);
	if (e2)
		log_warn("port %s: CPUMAP entry for CPU %d not restored: %s",
			 p->name, bad_cpu, strerror(-e2));
	return err;
}

int ferry_steer_del(struct ferry_rules *rs, const char *name,
		    struct ferry_err *msg)
{
	struct ferry_port *p = NULL;
	struct ferry_steer_rule *r;
	uint32_t at = 0, slot;
	int err, bad_cpu = -1;

	r = ferry_rule_find(rs, name, &p, &at);
	if (!r)
		return ferry_fail(msg, -ENOENT, "no steer rule %s", name);
	if (r->kind != FERRY_RULE_STEER)
		return ferry_fail(msg, -EINVAL,
				  "%s is an ACL rule (acl del %s)", name, name);
	slot = r->slot;
	err = ferry_rules_remove(rs, p, at);
	if (err)
		return ferry_fail(msg, err, "port %s: cannot rewrite rules: %s",
				  p->name, strerror(-err));
	rs->table[p->slot]->slots_used &= ~(1ull << slot);
	/* Frames of this rule still queued for a CPU whose entry goes now
	 * are processed by its kthread before it stops, not dropped. */
	err = cpumap_sync(p, rs->table[p->slot], &bad_cpu);
	if (err)
		log_warn("port %s: CPUMAP entry for CPU %d left in place: %s",
			 p->name, bad_cpu, strerror(-err));
	log_info("steer %s: deleted from port %s", name, p->name);
	return 0;
}

void ferry_steer_port_free(struct ferry_rules *rs, struct ferry_port *p)
{
	free(rs->table[p->slot]);
	rs->table[p->slot] = NULL;
}

/* ----------------------------------------------------------- counters */

static int steer_read_raw(const struct ferry_port *p,
			  const struct ferry_steer_rule *r,
			  struct ferry_steer_cpu_view out[FERRY_MAX_CPUS])
{
	int ncpu = libbpf_num_possible_cpus(), fd, c;
	struct ferry_steer_ctr *vals;
	uint32_t cpu, idx;

	memset(out, 0, sizeof(*out) * FERRY_MAX_CPUS);
	if (ncpu <= 0)
		return -EINVAL;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	fd = bpf_map__fd(p->skel->maps.ferry_steer_ctrs);
	for (cpu = 0; cpu < FERRY_MAX_CPUS; cpu++) {
		if (!(r->cpus & (1ull << cpu)))
			continue;
		idx = FERRY_STEER_CTR_IDX(r->slot, cpu);
		if (bpf_map_lookup_elem(fd, &idx, vals))
			continue;
		for (c = 0; c < ncpu; c++) {
			out[cpu].steered += vals[c].steered;
			out[cpu].redirect_failed += vals[c].enqueue_failed;
			out[cpu].processed += vals[c].processed;
		}
	}
	free(vals);
	return 0;
}

static int cpumap_read_raw(const struct ferry_port *p,
			   struct ferry_cpumap_ctr out[FERRY_MAX_CPUS])
{
	int ncpu = libbpf_num_possible_cpus(), fd, c;
	struct ferry_cpumap_ctr *vals;
	uint32_t cpu;

	memset(out, 0, sizeof(*out) * FERRY_MAX_CPUS);
	if (!p->cpumap_tp)
		return -ENOTSUP;
	if (ncpu <= 0)
		return -EINVAL;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	fd = bpf_map__fd(p->skel->maps.ferry_cpumap_ctrs);
	for (cpu = 0; cpu < FERRY_MAX_CPUS; cpu++) {
		if (bpf_map_lookup_elem(fd, &cpu, vals))
			continue;
		for (c = 0; c < ncpu; c++) {
			out[cpu].offered += vals[c].offered;
			out[cpu].drops += vals[c].drops;
		}
	}
	free(vals);
	return 0;
}

int ferry_steer_read(const struct ferry_port *p,
		     const struct ferry_steer_rule *r,
		     struct ferry_steer_cpu_view out[FERRY_MAX_CPUS])
{
	int err = steer_read_raw(p, r, out), cpu;

	for (cpu = 0; !err && cpu < FERRY_MAX_CPUS; cpu++) {
		out[cpu].steered -= r->base[cpu].steered;
		out[cpu].redirect_failed -= r->base[cpu].redirect_failed;
		out[cpu].processed -= r->base[cpu].processed;
	}
	return err;
}

int ferry_steer_cpumap_read(const struct ferry_rules *rs,
			    const struct ferry_port *p,
			    struct ferry_cpumap_ctr out[FERRY_MAX_CPUS])
{
	int err = cpumap_read_raw(p, out), cpu;

	for (cpu = 0; !err && rs->table[p->slot] && cpu < FERRY_MAX_CPUS;
	     cpu++) {
		out[cpu].offered -=
			rs->table[p->slot]->cpumap_base[cpu].offered;
		out[cpu].drops -= rs->table[p->slot]->cpumap_base[cpu].drops;
	}
	return err;
}

void ferry_steer_reset(struct ferry_rules *rs, struct ferry_port *p)
{
	uint32_t j;

	if (!rs->table[p->slot])
		return;
	for (j = 0; j < rs->table[p->slot]->n; j++) {
		struct ferry_steer_rule *r = &rs->table[p->slot]->rules[j];

		steer_read_raw(p, r, r->base);
		hits_raw(p, r, &r->hit_base);
	}
	cpumap_read_raw(p, rs->table[p->slot]->cpumap_base);
}

/* --------------------------------------------------------------- JSON */

const char *ferry_steer_proto_name(uint8_t l4_proto)
{
	switch (l4_proto) {
	case IPPROTO_TCP:
		return "tcp";
	case IPPROTO_UDP:
		return "udp";
	case IPPROTO_ICMP:
		return "icmp";
	default:
		return "any";
	}
}

void ferry_steer_dst_text(const struct ferry_rule *m, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "";

	if (!m->dst_plen || !m->family) {
		snprintf(buf, len, "%s", "");
		return;
	}
	inet_ntop(m->family == 4 ? AF_INET : AF_INET6, m->dst, a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, m->dst_plen);
}

static json_t *rule_json(const struct ferry_rules *rs,
			 const struct ferry_port *p, uint32_t at,
			 const struct ferry_cpumap_ctr *cm, bool cm_ok)
{
	const struct ferry_steer_rule *r = &rs->table[p->slot]->rules[at];
	struct ferry_steer_cpu_view v[FERRY_MAX_CPUS];
	json_t *o = json_object(), *m = json_object(), *cpus = json_array(),
	       *ctrs = json_array();
	char dst[INET6_ADDRSTRLEN + 8], dport[16] = "";
	uint32_t cpu;

	ferry_steer_read(p, r, v);
	ferry_steer_dst_text(&r->match, dst, sizeof(dst));
	if (r->match.dport_lo == r->match.dport_hi && r->match.dport_lo)
		snprintf(dport, sizeof(dport), "%u", r->match.dport_lo);
	else if (r->match.dport_lo || r->match.dport_hi)
		snprintf(dport, sizeof(dport), "%u-%u", r->match.dport_lo,
			 r->match.dport_hi);
	json_object_set_new(
		m, "proto",
		json_string(ferry_steer_proto_name(r->match.l4_proto)));
	json_object_set_new(m, "dst", dst[0] ? json_string(dst) : json_null());
	json_object_set_new(m, "dport",
			    dport[0] ? json_string(dport) : json_null());
	for (cpu = 0; cpu < FERRY_MAX_CPUS; cpu++) {
		json_t *c;

		if (!(r->cpus & (1ull << cpu)))
			continue;
		json_array_append_new(cpus, json_integer(cpu));
		c = json_object();
		json_object_set_new(c, "cpu", json_integer(cpu));
		json_object_set_new(c, "steered",
				    json_integer((json_int_t)v[cpu].steered));
		json_object_set_new(c, "processed",
				    json_integer((json_int_t)v[cpu].processed));
		json_object_set_new(
			c, "redirect_failed",
			json_integer((json_int_t)v[cpu].redirect_failed));
		/* The tracepoint knows the queue, not the rule. */
		json_object_set_new(
			c, "port_cpu_enqueue_drops",
			cm_ok ? json_integer((json_int_t)cm[cpu].drops)
			      : json_null());
		json_array_append_new(ctrs, c);
	}
	json_object_set_new(o, "name", json_string(r->name));
	json_object_set_new(o, "port", json_string(p->name));
	json_object_set_new(o, "index", json_integer(at));
	json_object_set_new(o, "slot", json_integer(r->slot));
	json_object_set_new(o, "match", m);
	json_object_set_new(o, "cpus", cpus);
	json_object_set_new(o, "qsize", json_integer(r->qsize));
	json_object_set_new(o, "counters", ctrs);
	json_object_set_new(o, "enqueue_drops_scope",
			    json_string(cm_ok ? "port,cpu" : "not measured"));
	return o;
}

/* Rules of one port (or all), with counters; rule: only that one. */
static json_t *rules_json(struct ferry_rules *rs, const char *port,
			  const char *rule)
{
	struct ferry_cpumap_ctr cm[FERRY_MAX_CPUS];
	json_t *arr = json_array();
	int i;
	uint32_t j;

	for (i = 0; i < rs->ports->n; i++) {
		const struct ferry_port *p = rs->ports->v[i];
		bool cm_ok;

		if (!rs->table[p->slot] || (port && strcmp(port, p->name)))
			continue;
		cm_ok = !ferry_steer_cpumap_read(rs, p, cm);
		for (j = 0; j < rs->table[p->slot]->n; j++)
			if (rs->table[p->slot]->rules[j].kind ==
				    FERRY_RULE_STEER &&
			    (!rule ||
			     !strcmp(rule, rs->table[p->slot]->rules[j].name)))
				json_array_append_new(
					arr, rule_json(rs, p, j, cm, cm_ok));
	}
	return arr;
}

json_t *ferry_steer_show(struct ferry_rules *rs, const char *name,
			 struct ferry_err *msg)
{
	const struct ferry_steer_rule *r =
		name ? ferry_rule_find(rs, name, NULL, NULL) : NULL;

	if (name && (!r || r->kind != FERRY_RULE_STEER)) {
		ferry_errf(msg, "no steer rule %s", name);
		return NULL;
	}
	return rules_json(rs, NULL, name);
}

json_t *ferry_steer_stats(struct ferry_rules *rs, const char *port)
{
	return rules_json(rs, port, NULL);
}

json_t *ferry_steer_cpumap_stats(struct ferry_rules *rs, const char *port)
{
	struct ferry_cpumap_ctr cm[FERRY_MAX_CPUS];
	json_t *arr = json_array();
	int i;
	uint32_t cpu;

	for (i = 0; i < rs->ports->n; i++) {
		const struct ferry_port *p = rs->ports->v[i];
		bool ok;

		if (!rs->table[p->slot] || (port && strcmp(port, p->name)))
			continue;
		ok = !ferry_steer_cpumap_read(rs, p, cm);
		for (cpu = 0; cpu < FERRY_MAX_CPUS; cpu++) {
			json_t *o;

			if (!rs->table[p->slot]->cpumap_qsize[cpu] &&
			    !(ok && (cm[cpu].offered || cm[cpu].drops)))
				continue;
			o = json_object();
			json_object_set_new(o, "port", json_string(p->name));
			json_object_set_new(o, "cpu", json_integer(cpu));
			json_object_set_new(
				o, "qsize",
				json_integer(
					rs->table[p->slot]->cpumap_qsize[cpu]));
			json_object_set_new(
				o, "enqueued",
				ok ? json_integer((json_int_t)(cm[cpu].offered -
							       cm[cpu].drops))
				   : json_null());
			json_object_set_new(
				o, "enqueue_drops",
				ok ? json_integer((json_int_t)cm[cpu].drops)
				   : json_null());
			json_array_append_new(arr, o);
		}
	}
	return arr;
}

int ferry_steer_get(const struct ferry_rules *rs, int i, int j,
		    struct ferry_steer_params *sp)
{
	const struct ferry_port *p = NULL;
	const struct ferry_steer_rule *r;
	int rc;

	r = ferry_rule_at(rs, i, j, FERRY_RULE_STEER, &p, &rc);
	if (!r)
		return rc;
	*sp = (struct ferry_steer_params){
		.name = r->name,
		.port = p->name,
		.match = r->match,
		.cpus = r->cpus,
		.qsize = r->qsize,
	};
	return 0;
}
