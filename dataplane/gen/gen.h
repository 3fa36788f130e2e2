/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * gen.h - ferry's traffic generator.
 *
 * Frames are built once in userspace from a template and sent by the
 * kernel: BPF_PROG_RUN with BPF_F_TEST_XDP_LIVE_FRAMES runs ferry_gen on
 * each frame, which stamps the flow's UDP source port and redirects it out
 * of the port's interface. One thread per generator, pinned, paces calls
 * to the requested rate.
 */
#ifndef FERRY_GEN_H
#define FERRY_GEN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ferry_err.h"
#include "ferry_limits.h"

#define FERRY_GEN_MIN_SIZE 42 /* Ethernet + IPv4 + UDP headers */
/* MTU 9000 plus the Ethernet header: sent as a multi-buffer chain. */
#define FERRY_GEN_MAX_SIZE 9014
/* What the live engine's test-run page holds; longer frames go out of the
 * port's AF_XDP TX ring (engine auto), as chains of UMEM frames. */
#define FERRY_GEN_LIVE_MAX_SIZE 1514
#define FERRY_GEN_SPORT_BASE	1024
#define FERRY_GEN_DPORT		9 /* discard */

/*
 * live: BPF_PROG_RUN live frames (the kernel sends; fastest), frames up
 *       to FERRY_GEN_LIVE_MAX_SIZE.
 * xsk:  the port's worker writes frames into its AF_XDP TX ring; a frame
 *       longer than one UMEM frame goes out as a multi-buffer chain.
 * auto: live when the kernel has it and the frame fits, else xsk.
 */
enum ferry_gen_engine {
	FERRY_GEN_AUTO,
	FERRY_GEN_LIVE,
	FERRY_GEN_XSK,
};

struct ferry_pq;

struct ferry_gen_params {
	int ifindex;
	uint8_t src_mac[6];
	uint8_t dst_mac[6];
	uint32_t size;	/* frame bytes, no FCS */
	uint64_t rate;	/* frames per second; 0: as fast as possible */
	uint32_t flows; /* distinct UDP source ports, >= 1 */
	uint16_t vid;	/* 802.1Q VLAN id of the frames; 0: untagged */
	uint64_t count; /* frames in all; 0: until stopped */
	int cpu;	/* pin the thread here; -1: don't */
	enum ferry_gen_engine engine;
	struct ferry_pq *pq; /* socket the xsk engine sends from */
};

struct ferry_gen;

/*
 * Starts generating: live frames (loads the program, starts a thread) or
 * xsk (installs a ferry_txgen on p->pq, pausing its worker for a moment).
 * NULL with msg filled on error.
 */
struct ferry_gen *ferry_gen_start(const struct ferry_gen_params *p,
				  struct ferry_err *msg);
/* Stops the thread (waits for the call in flight); counters stay readable. */
void ferry_gen_stop(struct ferry_gen *g);
/* Stops and unloads. */
void ferry_gen_destroy(struct ferry_gen *g);
bool ferry_gen_running(const struct ferry_gen *g);
/* Frames the program sent (its own per-CPU counter). */
uint64_t ferry_gen_frames(const struct ferry_gen *g);
const struct ferry_gen_params *ferry_gen_params(const struct ferry_gen *g);
/* The engine in use: "live" or "xsk". */
const char *ferry_gen_engine_name(const struct ferry_gen *g);
/*
 * The generators of one ferryd, kept here by port slot (port.h), not in
 * struct ferry_port: at most one per port, sending out of it, with the
 * sampler's state for its rate.
 */
struct ferry_gen_port {
	struct ferry_gen *gen; /* NULL: none */
	uint64_t prev;	       /* sampler: frames at the last tick */
	double pps;
};

struct ferry_gens {
	struct ferry_gen_port port[FERRY_MAX_PORTS]; /* by port slot */
};

/* gen_view.c: g's row of `stats`, as the generator of port at pps. */
json_t *ferry_gen_json(const struct ferry_gen *g, const char *port, double pps);

#endif /* FERRY_GEN_H */
