/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * wire.h - which frames of a port the classifier hands to the host stack.
 *
 * A port whose app is xconnect or reflect is a wire: every frame that is
 * not malformed (ARP, NDP, LLDP, any ethertype, tagged, fragments) goes to
 * its worker, and the host sees only what a steering rule sends it. A port
 * with no app (or drop) keeps ARP and NDP for the kernel, which may own an
 * address on it. The classifier learns it from ferry_xdp_cfg.pass_arp_ndp;
 * the control thread rewrites that whenever the port's app changes.
 */
#ifndef FERRY_WIRE_H
#define FERRY_WIRE_H

#include <stdbool.h>

#include "port.h"

static inline bool ferry_app_is_wire(enum ferry_app app)
{
	return app == FERRY_APP_XCONNECT || app == FERRY_APP_REFLECT;
}

static inline bool ferry_port_is_wire(const struct ferry_port *p)
{
	return ferry_app_is_wire(p->app);
}

/* Writes the port's wire mode into its classifier (if loaded) and holds
 * the interface promiscuous while the port is a wire: 0 or -errno. */
int ferry_port_wire_apply(struct ferry_port *p);
/* Lets go of the promiscuous mode (port del). */
void ferry_port_wire_release(struct ferry_port *p);

/*
 * What reaches the host stack from this port, for `port show`: a comma
 * list of arp,ndp (not a wire), unmatched (default pass), rules (the caller
 * says steering rules exist), or "none (wire)". Written into buf, which is
 * returned.
 */
const char *ferry_port_host_frames(const struct ferry_port *p, bool rules,
				   char *buf, size_t len);

#endif /* FERRY_WIRE_H */
