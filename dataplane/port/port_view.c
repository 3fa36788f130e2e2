// SPDX-License-Identifier: BSD-2-Clause
/*
 * port_view.c - what a port shows in `port show`: its identity, XDP
 * program, sockets and queues, path, events (port_view.h). Control thread
 * only.
 */
#include <stdio.h>

#include "port_view.h"
#include "spread.h"
#include "wire.h"

static const char *const port_state_names[] = {
#define PORT_STATE_NAME(id, name) [FERRY_PORT_##id] = name,
	FERRY_PORT_STATES(PORT_STATE_NAME)
#undef PORT_STATE_NAME
};

static const char *mode_name(bool zc)
{
	return zc ? "zc" : "copy";
}

static const char *const mode_req_names[] = {
	[FERRY_XSK_AUTO] = "auto",
	[FERRY_XSK_ZC] = "zc",
	[FERRY_XSK_COPY] = "copy",
};

void ferry_port_view(const struct ferry_port *p,
		     const struct ferry_spread *spread, const char *app,
		     uint32_t steer_rules, json_t *o)
{
	json_t *workers = json_array();
	json_t *warnings = json_array();
	char mac[18], hf[48];
	uint64_t seen = 0;
	uint32_t i;

	for (i = 0; i < p->n_queues; i++) {
		const struct ferry_worker *w = p->pq[i].w;

		if (w && !(seen & (1ull << w->id))) {
			seen |= 1ull << w->id;
			json_array_append_new(workers, json_integer(w->id));
		}
	}
	if (p->numa_warning[0])
		json_array_append_new(warnings, json_string(p->numa_warning));
	if (p->mtu_warning[0])
		json_array_append_new(warnings, json_string(p->mtu_warning));
	if (p->tx_warning[0])
		json_array_append_new(warnings, json_string(p->tx_warning));
	snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", p->mac[0],
		 p->mac[1], p->mac[2], p->mac[3], p->mac[4], p->mac[5]);
	json_object_set_new(o, "name", json_string(p->name));
	json_object_set_new(o, "state",
			    json_string(port_state_names[p->state]));
	json_object_set_new(o, "reason", json_string(p->reason));
	json_object_set_new(o, "ifname", json_string(p->ifname));
	json_object_set_new(o, "ifindex", json_integer(p->ifindex));
	json_object_set_new(o, "mtu", json_integer(p->mtu));
	json_object_set_new(o, "mac", json_string(mac));
	json_object_set_new(o, "driver", json_string(p->driver));
	json_object_set_new(o, "profile", json_string(p->profile->driver));
	json_object_set_new(o, "driver_caps", ferry_driver_caps_json(&p->caps));
	json_object_set_new(
		o, "xdp_chosen_by",
		json_string(!p->req.xdp_given ? "profile" : "request"));
	json_object_set_new(o, "queue_first", json_integer(p->q_first));
	json_object_set_new(o, "queues", json_integer(p->n_queues));
	/* Queues the XDP attach added that receive only (virtio_net): the
	 * workers send on the others. */
	if (p->n_queues > 0 && !ferry_port_pq_can_tx(p, p->n_queues - 1))
		json_object_set_new(
			o, "rx_only_queues",
			json_pack("[i,i]",
				  (int)(p->q_first + p->n_queues_pre_xdp),
				  (int)(p->q_first + p->n_queues - 1)));
	json_object_set_new(o, "mode", json_string(mode_name(p->zerocopy)));
	json_object_set_new(o, "mode_requested",
			    json_string(mode_req_names[p->req.mode]));
	json_object_set_new(o, "xdp",
			    json_string(p->xdp_generic ? "generic" : "native"));
	json_object_set_new(o, "prog_id", json_integer(p->prog_id));
	json_object_set_new(o, "umem",
			    json_string(p->hugepages ? "hugepages" : "pages"));
	json_object_set_new(o, "numa_node", json_integer(p->numa_node));
	if (p->req.spread_cpus)
		json_object_set_new(o, "spread", ferry_spread_show(spread, p));
	json_object_set_new(o, "tx_budget",
			    json_string(p->zerocopy ? "driver"
					: p->tx_budget_set
						? "256"
						: "32 (kernel default)"));
	json_object_set_new(o, "need_wakeup", json_true());
	json_object_set_new(o, "busy_poll", json_boolean(p->req.busy_poll));
	json_object_set_new(o, "busy_poll_prefer",
			    json_boolean(ferry_port_busy_prefer(p)));
	json_object_set_new(o, "app", json_string(app));
	json_object_set_new(o, "default",
			    json_string(p->default_action == FERRY_ACT_PASS
						? "pass"
						: "xsk"));
	json_object_set_new(o, "steer_rules", json_integer(steer_rules));
	json_object_set_new(o, "host_frames",
			    json_string(ferry_port_host_frames(
				    p, steer_rules, hf, sizeof(hf))));
	json_object_set_new(o, "cpumap_enqueue_drops_measured",
			    json_boolean(p->cpumap_tp != NULL));
	json_object_set_new(o, "workers", workers);
	json_object_set_new(o, "warnings", warnings);
	json_object_set_new(o, "took_over_stale_program",
			    json_boolean(p->replaced_stale));
	json_object_set_new(o, "backend", json_string(p->cls->name));
}

void ferry_port_view_tail(const struct ferry_port *p, json_t *o)
{
	json_t *ev = json_object();

	json_object_set_new(o, "xdp_restore", json_boolean(p->req.xdp_restore));
#define EV_SET(ctr)                                                            \
	json_object_set_new(ev, #ctr, json_integer((json_int_t)p->events.ctr));
	FERRY_PORT_EVENTS(EV_SET)
#undef EV_SET
	json_object_set_new(o, "events", ev);
}

static const char *const path_names[] = {
#define FERRY_PATH_NAME(id, name) [FERRY_PATH_##id] = name,
	FERRY_PATHS(FERRY_PATH_NAME)
#undef FERRY_PATH_NAME
};

const char *ferry_path_name(enum ferry_path path)
{
	return path < FERRY_PATH__COUNT ? path_names[path] : "?";
}
