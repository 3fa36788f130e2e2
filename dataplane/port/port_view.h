/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * port_view.h - a port's object of `port show`, in the order ferryctl
 * prints it. What layers above the port know (its app's name, its rule
 * count, the DPDK backend's keys) comes in from the caller: between
 * ferry_port_view() and ferry_port_view_tail() the caller adds the
 * backend's keys (ferry_dpdk_port_describe).
 */
#ifndef FERRY_PORT_VIEW_H
#define FERRY_PORT_VIEW_H

#include <jansson.h>
#include <stdint.h>

#include "port.h"

/* Into o: name, state, ..., backend. app: the app as shown ("xconnect
 * PEER", "route", ...); steer_rules: the port's rules in the table;
 * spread: the spread backend's state (spread.h). */
void ferry_port_view(const struct ferry_port *p,
		     const struct ferry_spread *spread, const char *app,
		     uint32_t steer_rules, json_t *o);
/* Into o: xdp_restore and the port's events. */
void ferry_port_view_tail(const struct ferry_port *p, json_t *o);

#endif
