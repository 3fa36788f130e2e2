/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * capture_xdp.h - the userspace end of the classifier's capture records
 * (bpf/ferry_capture_abi.h): frames captured in XDP, before any worker.
 *
 * One consumer per capture that watches rx on ports with the classifier.
 * It is one more producer of the capture (its own ring, index `producer`):
 * a thread polls the perf buffer of the classifier's ferry_cap_events map
 * and queues each record, with the port found by ifindex and the verdict
 * (enum ferry_reason) as the packet's comment. Records are checked before
 * use: a short or inconsistent record is counted as malformed and dropped.
 *
 * Without an events map (events_fd < 0) no thread runs and records come
 * only from ferry_capture_xdp_feed(): the unit tests use that, and so can
 * any other source of records.
 */
#ifndef FERRY_CAPTURE_XDP_H
#define FERRY_CAPTURE_XDP_H

#include <stddef.h>
#include <stdint.h>

#include "capture.h"

struct ferry_capture_xdp;

#define FERRY_CAPTURE_XDP_COUNTERS(X)                                          \
	X(records)	/* records read */                                     \
	X(queued)	/* passed the filter and queued for the writer */      \
	X(malformed)	/* shorter than they claim, or cap_len > orig_len */   \
	X(unknown_port) /* ifindex of no port this capture watches */          \
	X(lost)		/* samples the kernel lost: perf buffer full */

struct ferry_capture_xdp_ctrs {
#define FERRY_CAP_XDP_CTR_FIELD(name) uint64_t name;
	FERRY_CAPTURE_XDP_COUNTERS(FERRY_CAP_XDP_CTR_FIELD)
#undef FERRY_CAP_XDP_CTR_FIELD
};

struct ferry_capture_xdp_params {
	struct ferry_capture *cap;
	unsigned producer;	 /* the capture's ring this consumer fills */
	const uint32_t *ifindex; /* ifindex of the capture's port i */
	unsigned n_ports;
	int events_fd;	/* ferry_cap_events map; < 0: feed only */
	unsigned pages; /* perf buffer pages per CPU; 0: 64 */
	/* The records' direction: RX from the classifier (ifindex: the
	 * ingress), TX from the DEVMAP program of bpf/ferry_cap_tx.bpf.c
	 * (ifindex: the egress). */
	enum ferry_cap_dir dir;
	uint64_t cpus; /* the polling thread's CPUs; 0: anywhere */
};

/* NULL + errno. Starts the polling thread when events_fd >= 0. */
struct ferry_capture_xdp *
ferry_capture_xdp_create(const struct ferry_capture_xdp_params *p);

/*
 * One sample: a struct ferry_cap_xdp_rec and its bytes, size as the perf
 * buffer gives it. Call from one thread only (the polling thread when it
 * runs). 0, or -EINVAL (malformed), -ENOENT (no such port): counted.
 */
int ferry_capture_xdp_feed(struct ferry_capture_xdp *x, const void *data,
			   size_t size);

void ferry_capture_xdp_ctrs(const struct ferry_capture_xdp *x,
			    struct ferry_capture_xdp_ctrs *out);

/* Stops the thread; the capture's taps for this producer are retired. */
void ferry_capture_xdp_destroy(struct ferry_capture_xdp *x);

#endif /* FERRY_CAPTURE_XDP_H */
