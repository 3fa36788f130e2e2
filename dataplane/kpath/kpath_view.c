// SPDX-License-Identifier: BSD-2-Clause
/*
 * kpath_view.c - what the kernel path shows: its part of `stats`
 * (paths.kernel of a port) and its Prometheus families. Counter names
 * come from FERRY_KFWD_CTRS and FERRY_FIB_CTRS (ferry_abi.h). Control
 * thread only.
 */
#include <stdlib.h>

#include "kpath.h"
#include "prom.h"

static void ferry_kpath_fib_json(struct ferry_kpath *kt, struct ferry_port *p,
				 json_t *k);

json_t *ferry_kpath_stats_json(struct ferry_kpath *kt, struct ferry_port *p,
			       struct ferry_kpath_ctrs *kc, uint64_t *tx_pk,
			       uint64_t *tx_by)
{
	json_t *k = json_object();

	ferry_kpath_stats(kt, p, kc, tx_pk, tx_by);
	json_object_set_new(k, "rx_packets",
			    json_integer((json_int_t)kc->rx_packets));
	json_object_set_new(k, "rx_bytes",
			    json_integer((json_int_t)kc->rx_bytes));
	json_object_set_new(k, "tx_packets", json_integer((json_int_t)*tx_pk));
	json_object_set_new(k, "tx_bytes", json_integer((json_int_t)*tx_by));
	/* Of p's own redirects (p as ingress): what did not go out. */
#define K_SET(id) json_object_set_new(k, #id, json_integer((json_int_t)kc->id));
	FERRY_KFWD_CTRS(K_SET)
#undef K_SET
	json_object_set_new(
		k, "xdp_redirect_err",
		json_integer((json_int_t)(kc->err_down + kc->err_too_big +
					  kc->err_other)));
	ferry_kpath_fib_json(kt, p, k);
	return k;
}

/* p's route kernel-path counters (why frames went to a worker) into k,
 * since `stats reset`. */
static void ferry_kpath_fib_json(struct ferry_kpath *kt, struct ferry_port *p,
				 json_t *k)
{
	struct ferry_fib_ctr sum;
	json_t *o;

	if (ferry_kpath_fib_read(kt, p, &sum))
		return;
	o = json_object();
#define FSET(id) json_object_set_new(o, #id, json_integer((json_int_t)sum.id));
	FERRY_FIB_CTRS(FSET)
#undef FSET
	json_object_set_new(k, "fib", o);
}

/* The kernel path's counters per port (stats' paths.kernel). */
void ferry_kpath_metrics(struct ferry_kpath *kt, struct ferry_strbuf *b)
{
	struct ferry_kpath_ctrs *kc;
	uint64_t *tx;
	int i;

	kc = calloc(kt->ports->n ? kt->ports->n : 1, sizeof(*kc));
	tx = calloc(kt->ports->n ? 2 * kt->ports->n : 2, sizeof(*tx));
	if (!kc || !tx)
		goto out;
	for (i = 0; i < kt->ports->n; i++)
		ferry_kpath_stats(kt, kt->ports->v[i], &kc[i], &tx[2 * i],
				  &tx[2 * i + 1]);
#define KP_FAMILY(nm, help, expr)                                              \
	ferry_prom_family(b, "ferry_kpath_" nm "_total", help);                \
	for (i = 0; i < kt->ports->n; i++)                                     \
		ferry_strbuf_printf(                                           \
			b, "ferry_kpath_" nm "_total{port=\"%s\"} %llu\n",     \
			kt->ports->v[i]->name, (unsigned long long)(expr));
	KP_FAMILY("rx_packets",
		  "frames the classifier redirected in the kernel",
		  kc[i].rx_packets)
	KP_FAMILY("rx_bytes", "bytes the classifier redirected in the kernel",
		  kc[i].rx_bytes)
	KP_FAMILY("tx_packets",
		  "frames sent out of the port by the kernel path", tx[2 * i])
	KP_FAMILY("tx_bytes", "bytes sent out of the port by the kernel path",
		  tx[2 * i + 1])
#define KP_CTR(id)                                                             \
	KP_FAMILY(#id, "kernel-path counter " #id " of the port as ingress",   \
		  kc[i].id)
	FERRY_KFWD_CTRS(KP_CTR)
#undef KP_CTR
#undef KP_FAMILY
	/* The route kernel path: what stayed in XDP, and why the rest went
	 * to a worker (stats: paths.kernel.fib). */
	ferry_prom_family(
		b, "ferry_kpath_fib_total",
		"route ports' kernel path: frames forwarded in XDP (fwd) or "
		"left to a worker, by reason");
	for (i = 0; i < kt->ports->n; i++) {
		struct ferry_fib_ctr fc;

		if (ferry_kpath_fib_read(kt, kt->ports->v[i], &fc))
			continue;
#define KP_FIB(id)                                                             \
	ferry_strbuf_printf(b,                                                 \
			    "ferry_kpath_fib_total{port=\"%s\",reason=\"" #id  \
			    "\"} %llu\n",                                      \
			    kt->ports->v[i]->name, (unsigned long long)fc.id);
		FERRY_FIB_CTRS(KP_FIB)
#undef KP_FIB
	}
out:
	free(kc);
	free(tx);
}

void ferry_kpath_port_view(struct ferry_kpath *kt, const struct ferry_port *p,
			   json_t *o)
{
	const struct ferry_kpath_port *k = kp(kt, p);

	if (p->app != FERRY_APP_XCONNECT && p->app != FERRY_APP_ROUTE)
		return;
	json_object_set_new(
		o, "path",
		json_string(ferry_path_name(k->path == FERRY_PATH_KERNEL
						    ? FERRY_PATH_KERNEL
						    : FERRY_PATH_XSK)));
	json_object_set_new(o, "path_requested",
			    json_string(ferry_path_name(k->req)));
	json_object_set_new(o, "path_why", json_string(k->why));
}
