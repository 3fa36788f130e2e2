// SPDX-License-Identifier: BSD-2-Clause
/*
 * capture_xdp.c - reads the classifier's capture records and queues them
 * into a capture (see capture_xdp.h). The polling thread is the only
 * producer of its ring and the only writer of the counters.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "capture_xdp.h"
#include "counters.h"
#include "ferry_abi.h"
#include "ferry_capture_abi.h"

#define CAP_XDP_PAGES_DEF 64
#define CAP_XDP_POLL_MS	  100

struct ferry_capture_xdp {
	struct ferry_capture_xdp_ctrs c;
	struct ferry_capture *cap;
	/* per port: ifindex and the tap (rx, or tx) of this consumer's ring */
	uint32_t ifindex[FERRY_CAP_MAX_PORTS];
	struct ferry_capture_tap *tap[FERRY_CAP_MAX_PORTS];
	unsigned n_ports;
	struct perf_buffer *pb;
	pthread_t thread;
	int stop;
};

int ferry_capture_xdp_feed(struct ferry_capture_xdp *x, const void *data,
			   size_t size)
{
	struct ferry_cap_xdp_rec rec;
	struct ferry_cap_seg seg;
	unsigned i;

	ferry_ctr_add(&x->c.records, 1);
	/* The record comes from the kernel, but from a program another
	 * version of ferry may have loaded: check it like any input. */
	if (size < sizeof(rec))
		goto malformed;
	memcpy(&rec, data, sizeof(rec));
	if (rec.cap_len > size - sizeof(rec) || rec.cap_len > rec.orig_len ||
	    rec.cap_len > FERRY_CAP_XDP_SNAP_MAX || !rec.cap_len ||
	    rec.reason >= FERRY_R__COUNT)
		goto malformed;
	for (i = 0; i < x->n_ports; i++)
		if (x->ifindex[i] == rec.ifindex)
			break;
	if (i == x->n_ports || !x->tap[i]) {
		ferry_ctr_add(&x->c.unknown_port, 1);
		return -ENOENT;
	}
	/* Only cap_len bytes came; orig_len stays the frame's length, for
	 * the file and for a filter on `len`. */
	seg.data = (const uint8_t *)data + sizeof(rec);
	seg.len = rec.cap_len;
	if (ferry_capture_frame_len(
		    x->tap[i], rec.ts_ns, (uint16_t)rec.rx_queue,
		    FERRY_CAP_VERDICT(FERRY_CAP_V_XDP, rec.reason), &seg, 1,
		    rec.orig_len))
		ferry_ctr_add(&x->c.queued, 1);
	return 0;

malformed:
	ferry_ctr_add(&x->c.malformed, 1);
	return -EINVAL;
}

static void on_sample(void *ctx, int cpu, void *data, __u32 size)
{
	(void)ferry_capture_xdp_feed(ctx, data, size);
}

static void on_lost(void *ctx, int cpu, __u64 n)
{
	struct ferry_capture_xdp *x = ctx;

	ferry_ctr_add(&x->c.lost, n);
}

static void *poll_main(void *arg)
{
	struct ferry_capture_xdp *x = arg;

	while (!__atomic_load_n(&x->stop, __ATOMIC_ACQUIRE)) {
		int n = perf_buffer__poll(x->pb, CAP_XDP_POLL_MS);

		if (n < 0 && n != -EINTR)
			break;
	}
	return NULL;
}

struct ferry_capture_xdp *
ferry_capture_xdp_create(const struct ferry_capture_xdp_params *p)
{
	struct ferry_capture_xdp *x;
	unsigned i;
	int err;

	if (!p->cap || p->n_ports > FERRY_CAP_MAX_PORTS) {
		errno = EINVAL;
		return NULL;
	}
	x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->cap = p->cap;
	x->n_ports = p->n_ports;
	for (i = 0; i < p->n_ports; i++) {
		x->ifindex[i] = p->ifindex[i];
		x->tap[i] = ferry_capture_tap(p->cap, p->producer, i, p->dir);
	}
	if (p->events_fd < 0)
		return x;
	x->pb = perf_buffer__new(p->events_fd,
				 p->pages ? p->pages : CAP_XDP_PAGES_DEF,
				 on_sample, on_lost, x, NULL);
	if (!x->pb) {
		err = errno;
		goto err_free;
	}
	err = -ferry_capture_thread(&x->thread, p->cpus, poll_main, x);
	if (err)
		goto err_pb;
	return x;

err_pb:
	perf_buffer__free(x->pb);
err_free:
	free(x);
	errno = err;
	return NULL;
}

void ferry_capture_xdp_ctrs(const struct ferry_capture_xdp *x,
			    struct ferry_capture_xdp_ctrs *out)
{
#define FERRY_CAP_XDP_CTR_READ(name) out->name = ferry_ctr_read(&x->c.name);
	FERRY_CAPTURE_XDP_COUNTERS(FERRY_CAP_XDP_CTR_READ)
#undef FERRY_CAP_XDP_CTR_READ
}

void ferry_capture_xdp_destroy(struct ferry_capture_xdp *x)
{
	if (!x)
		return;
	if (x->pb) {
		__atomic_store_n(&x->stop, 1, __ATOMIC_RELEASE);
		pthread_join(x->thread, NULL);
		/* What came since its last poll: this thread is the ring's
		 * producer now that the poller is gone. */
		perf_buffer__consume(x->pb);
		perf_buffer__free(x->pb);
	}
	free(x);
}
