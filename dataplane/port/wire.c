// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * wire.c - a port's wire mode in its classifier, and what `port show`
 * says about it. Control thread only.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>

#include "ferry_xdp.skel.h"
#include "wire.h"

int ferry_port_wire_apply(struct ferry_port *p)
{
	struct ferry_xdp_cfg cfg;
	uint32_t key = 0;
	uint8_t want, route;
	int fd;

	if (!p->skel)
		return 0;
	fd = bpf_map__fd(p->skel->maps.ferry_cfg);
	/* Read, change one byte, write: the rule count and the spread
	 * settings in the same entry belong to other commands. */
	if (bpf_map_lookup_elem(fd, &key, &cfg))
		return -errno;
	want = ferry_port_is_wire(p) ? 0 : 1;
	route = p->app == FERRY_APP_ROUTE;
	if (cfg.pass_arp_ndp == want && cfg.route_host == route)
		return 0;
	cfg.pass_arp_ndp = want;
	cfg.route_host = route;
	if (bpf_map_update_elem(fd, &key, &cfg, 0))
		return -errno;
	return 0;
}

const char *ferry_port_host_frames(const struct ferry_port *p, bool rules,
				   char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	if (!ferry_port_is_wire(p))
		n += snprintf(buf + n, len - n, "arp,ndp");
	if (p->app == FERRY_APP_ROUTE && n < len)
		n += snprintf(buf + n, len - n, ",local,link-local");
	if (p->default_action == FERRY_ACT_PASS && n < len)
		n += snprintf(buf + n, len - n, "%sunmatched", n ? "," : "");
	if (rules && n < len)
		n += snprintf(buf + n, len - n, "%srules", n ? "," : "");
	if (!n)
		snprintf(buf, len, "none (wire)");
	return buf;
}
