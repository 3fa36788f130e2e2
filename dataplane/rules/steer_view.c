// SPDX-License-Identifier: BSD-2-Clause
/*
 * steer_view.c - the steering rules' Prometheus families: per (port, rule,
 * CPU) counters and the CPUMAP's enqueue drops. Control thread only.
 */
#include "port.h"
#include "prom.h"
#include "rulecls.h"
#include "steer.h"

/* One rule counter per (port, rule, CPU); `field` names the member. */
#define STEER_FAMILIES(X)                                                      \
	X(steered, "frames a steering rule sent into a CPU's CPUMAP queue")    \
	X(processed, "steered frames that reached their target CPU")           \
	X(redirect_failed, "steered frames dropped: no CPUMAP entry")

void ferry_steer_metrics(const struct ferry_rules *rs, struct ferry_strbuf *b)
{
	struct ferry_steer_cpu_view v[FERRY_MAX_CPUS];
	struct ferry_cpumap_ctr cm[FERRY_MAX_CPUS];
	int i;
	uint32_t j, cpu;

#define STEER_FAMILY(field, help)                                              \
	ferry_prom_family(b, "ferry_steer_" #field "_total", help);            \
	for (i = 0; i < rs->ports->n; i++) {                                   \
		const struct ferry_port *p = rs->ports->v[i];                  \
		for (j = 0; rs->table[p->slot] && j < rs->table[p->slot]->n;   \
		     j++) {                                                    \
			const struct ferry_steer_rule *r =                     \
				&rs->table[p->slot]->rules[j];                 \
			ferry_steer_read(p, r, v);                             \
			for (cpu = 0; cpu < FERRY_MAX_CPUS; cpu++)             \
				if (r->cpus & (1ull << cpu))                   \
					ferry_strbuf_printf(                   \
						b,                             \
						"ferry_steer_" #field          \
						"_total{port=\"%s\","          \
						"rule=\"%s\",cpu=\"%u\"} "     \
						"%llu\n",                      \
						p->name, r->name, cpu,         \
						(unsigned long long)v[cpu]     \
							.field);               \
		}                                                              \
	}
	STEER_FAMILIES(STEER_FAMILY)
#undef STEER_FAMILY

	ferry_prom_family(
		b, "ferry_cpumap_enqueue_drops_total",
		"frames a full CPUMAP queue refused, per port and target CPU "
		"(the kernel reports no rule)");
	for (i = 0; i < rs->ports->n; i++) {
		const struct ferry_port *p = rs->ports->v[i];

		if (!rs->table[p->slot] || ferry_steer_cpumap_read(rs, p, cm))
			continue;
		for (cpu = 0; cpu < FERRY_MAX_CPUS; cpu++)
			if (rs->table[p->slot]->cpumap_qsize[cpu] ||
			    cm[cpu].drops)
				ferry_strbuf_printf(
					b,
					"ferry_cpumap_enqueue_drops_total{"
					"port=\"%s\",cpu=\"%u\"} %llu\n",
					p->name, cpu,
					(unsigned long long)cm[cpu].drops);
	}
}
