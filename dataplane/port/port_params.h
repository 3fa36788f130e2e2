/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * port_params.h - what `port add` asks for and the paths an app's frames
 * may take: the words of a port's configuration, for the public API
 * (core/ferry.h) without the port's insides (port.h).
 */
#ifndef FERRY_PORT_PARAMS_H
#define FERRY_PORT_PARAMS_H

#include <stdbool.h>
#include <stdint.h>

#include "xsk_mode.h"

struct ferry_port_params {
	const char *name;
	const char *ifname;
	bool queues_given;
	uint32_t q_first;
	uint32_t n_queues;
	enum ferry_xsk_mode mode;
	bool xdp_generic;
	bool xdp_given;	   /* else the driver profile picks native or generic */
	uint8_t busy_poll; /* enum ferry_busy_poll */
	bool default_pass; /* unmatched frames to the kernel, not the XSK */
	bool dpdk;	   /* backend dpdk: the af_xdp PMD (port_dpdk.h) */
	uint64_t spread_cpus; /* software RSS over these workers; 0: off */
	uint8_t spread_via;   /* enum ferry_spread_via */
	bool xdp_restore; /* put our program back if another tool takes it */
};

/*
 * Which path an xconnect's frames take: through the AF_XDP sockets and a
 * worker (xsk), or redirected by the classifier into the egress device
 * (kernel, a DEVMAP), which no worker touches. auto: kernel whenever
 * nothing on the port needs a worker (dataplane/kpath/kpath.h says what does).
 */
#define FERRY_PATHS(X)                                                         \
	X(AUTO, "auto")                                                        \
	X(XSK, "xsk")                                                          \
	X(KERNEL, "kernel")

enum ferry_path {
#define FERRY_PATH_ENUM(id, name) FERRY_PATH_##id,
	FERRY_PATHS(FERRY_PATH_ENUM)
#undef FERRY_PATH_ENUM
		FERRY_PATH__COUNT
};
const char *ferry_path_name(enum ferry_path path);

#endif /* FERRY_PORT_PARAMS_H */
