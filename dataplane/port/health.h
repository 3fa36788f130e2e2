/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * health.h - the once-a-second watch over a port's interface (health.c):
 * link, MTU, the XDP program in ferry's place, and whether the interface is
 * still there. Control thread only.
 */
#ifndef FERRY_HEALTH_H
#define FERRY_HEALTH_H

#include <stddef.h>
#include <stdint.h>

#include "port.h"

enum ferry_health {
	FERRY_HEALTH_OK,   /* findings applied to the port (state, reason) */
	FERRY_HEALTH_GONE, /* the interface disappeared: fail the port */
};

/* Looks at p once; FERRY_HEALTH_GONE with why when its interface is gone. */
enum ferry_health ferry_port_health(struct ferry_port *p, int ifreq_fd,
				    char *why, size_t len);
/* Reads an interface's flags and MTU through ifreq_fd (an AF_INET socket
 * for SIOCGIFFLAGS/SIOCGIFMTU; -1: -ENOTSUP); 0 or -errno. */
int ferry_link_get(int ifreq_fd, const char *ifname, unsigned int *flags,
		   uint32_t *mtu);

#endif /* FERRY_HEALTH_H */
