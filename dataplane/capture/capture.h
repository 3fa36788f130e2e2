/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * capture.h - packet capture to pcapng, off the hot path.
 *
 * A capture is one operator request (`capture start NAME port P ...`): a
 * compiled pcap filter, a snaplen, optional count and rate limits, the
 * ports and directions it watches, one single-producer single-consumer
 * ring per producer (each worker, and the XDP consumer of capture_xdp.h),
 * and a writer thread that drains every ring into a pcapng file or socket.
 *
 * Threads:
 *   - control thread: create, taps, show, stop, destroy;
 *   - producers (workers): ferry_capture_frame() on the tap they were given,
 *     each on its own ring only;
 *   - the writer thread (started by create): the rings' only consumer, the
 *     pcapng writer's only user.
 *
 * The worker's side, and why it costs one branch per burst when off.
 * The control thread hands each (port queue, direction) it captures a tap:
 * a read-only { ring, port index, direction } owned by the capture. The
 * worker keeps one pointer per (port queue, direction), NULL when nothing
 * is captured there, and per burst does
 *
 *	struct ferry_capture_tap *t = ferry_capture_tap_get(&pq->cap_rx);
 *	if (unlikely(t))
 *		for (i = 0; i < n; i++)
 *			ferry_capture_frame(t, now, queue, verdict, seg, 1);
 *
 * With no capture that is one load of a pointer the worker already has in
 * cache (it sits beside the queue's other hot fields) and one
 * never-taken branch: no call, no per-frame test. When on, each frame
 * costs the filter (the program libpcap compiled, run by capture_filter.c
 * with libpcap's answers) and, if it matches,
 * one copy of up to snaplen bytes into a ring slot. The worker never
 * blocks and never makes a syscall for a capture: a full ring drops the
 * *copy* (counted dropped_ring_full), the frame goes on as if nothing
 * were captured.
 *
 * Publishing and retiring taps: the control thread stores a tap with
 * ferry_capture_tap_set() (release), and before destroying the capture it
 * stores NULL in every pointer it set and waits until no worker can still
 * be inside ferry_capture_frame() with the old tap: pausing and resuming
 * each worker that had it (ferry_worker_pause/resume) is that wait.
 *
 * Timestamps are CLOCK_MONOTONIC ns (the worker's per-burst ferry_now_ns(),
 * the XDP side's bpf_ktime_get_ns()); the writer adds the realtime offset
 * taken at create, so the file holds wall-clock ns.
 */
#ifndef FERRY_CAPTURE_H
#define FERRY_CAPTURE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture_filter.h"
#include "ferry_err.h"

struct ferry_capture;

/* Counters of a capture; `capture show` prints them in this order. */
#define FERRY_CAPTURE_COUNTERS(X)                                              \
	X(matched) /* frames the filter accepted */                            \
	X(written) /* copies handed to the output (a failed flush: state) */   \
	X(dropped_ring_full)	 /* the writer was behind: copy dropped */     \
	X(dropped_rate)		 /* over the rate cap */                       \
	X(dropped_count_reached) /* after `count` copies were taken */         \
	X(dropped_output) /* the output failed (the stream's reader left) */

struct ferry_capture_ctrs {
#define FERRY_CAP_CTR_FIELD(name) uint64_t name;
	FERRY_CAPTURE_COUNTERS(FERRY_CAP_CTR_FIELD)
#undef FERRY_CAP_CTR_FIELD
};

enum ferry_cap_dir {
	FERRY_CAP_RX = 0, /* as received */
	FERRY_CAP_TX = 1, /* as sent, after any rewrite */
	FERRY_CAP__NDIR,
};
#define FERRY_CAP_DIR_BIT(d) (1u << (d))
#define FERRY_CAP_BOTH                                                         \
	(FERRY_CAP_DIR_BIT(FERRY_CAP_RX) | FERRY_CAP_DIR_BIT(FERRY_CAP_TX))

/*
 * What happened to a frame, for the packet's comment: a kind and a code.
 * XDP: enum ferry_reason (bpf/ferry_abi.h); APP: the port's app (named by
 * params.app_name); DROP: index in FERRY_DROP_REASONS (counters.h); ROUTE:
 * the route app's reason for the frame (fib/route.h, named by
 * params.route_name).
 */
#define FERRY_CAP_VERDICT_KINDS(X)                                             \
	X(NONE, "")                                                            \
	X(XDP, "xdp")                                                          \
	X(APP, "app")                                                          \
	X(DROP, "drop")                                                        \
	X(ROUTE, "route")

enum ferry_cap_verdict_kind {
#define FERRY_CAP_VK_ENUM(id, name) FERRY_CAP_V_##id,
	FERRY_CAP_VERDICT_KINDS(FERRY_CAP_VK_ENUM)
#undef FERRY_CAP_VK_ENUM
		FERRY_CAP_V__COUNT
};
#define FERRY_CAP_VERDICT(kind, code)                                          \
	((uint16_t)(((unsigned)(kind) << 8) | ((unsigned)(code)&0xffu)))

/* Ports one capture may watch; frames larger than this are cut to it. */
#define FERRY_CAP_MAX_PORTS	16
#define FERRY_CAP_MAX_PRODUCERS 64
#define FERRY_CAP_SNAPLEN_DEF	65535u
/* Bytes a ring slot holds at most: the largest frame ferry forwards
 * (MTU 9000 + headers) fits; a larger snaplen is clamped to it. */
#define FERRY_CAP_SLOT_DATA_MAX 10240u
#define FERRY_CAP_NAME_MAX	32

struct ferry_capture_params {
	const char *name;   /* for the log and `capture show` */
	const char *filter; /* pcap filter expression; NULL/"": all */
	uint32_t snaplen;   /* 0: FERRY_CAP_SNAPLEN_DEF */
	uint64_t count;	    /* stop copying after this many; 0: no limit */
	uint64_t rate_pps;  /* copies per second at most; 0: no cap */
	unsigned dirs;	    /* FERRY_CAP_DIR_BIT()s; 0: rx */
	const char *const *ports; /* port names, for the interface blocks */
	unsigned n_ports;
	unsigned n_producers; /* rings: workers (+ 1 for the XDP consumer) */
	uint32_t ring_bytes;  /* per producer, power of two; 0: 4 MiB */
	uint32_t flush_ms;    /* file flush interval; 0: 100 ms */
	/* Output: PATH, or fd >= 0 (a socket, for `-w -`); own_fd: closed by destroy. */
	const char *path;
	int fd;
	bool own_fd;
	/* No writer thread: the caller drains (ferry_capture_drain). */
	bool manual;
	/* CPUs the writer thread runs on (bit i: CPU i); 0: anywhere. The
	 * caller checks them (an offline CPU fails create with EINVAL). */
	uint64_t cpus;
	/* Evaluate the filter with libpcap's bpf_filter() instead of
	 * capture_filter.c (same answers, slower: bench/capture.sh's
	 * baseline). */
	bool filter_libpcap;
	/* Names APP verdict codes in comments; NULL: the number. */
	const char *(*app_name)(unsigned app);
	/* Names ROUTE verdict codes in comments; NULL: the number. */
	const char *(*route_name)(unsigned reason);
};

/*
 * Compiles the filter, opens the output, writes the section and interface
 * blocks ("p0-rx", "p0-tx", ... in port order, rx before tx), allocates the
 * rings and starts the writer. NULL + errno on failure, with msg telling
 * the operator why (libpcap's own message for a bad filter, the open(2)
 * error for a path); nothing is left behind.
 */
struct ferry_capture *ferry_capture_create(const struct ferry_capture_params *p,
					   struct ferry_err *msg);

/*
 * The tap for (producer, port index, direction): NULL if the capture does
 * not watch that direction or an index is out of range. Owned by the
 * capture, valid until destroy.
 */
struct ferry_capture_tap *ferry_capture_tap(struct ferry_capture *c,
					    unsigned producer,
					    unsigned port_idx,
					    enum ferry_cap_dir dir);

/* Where a worker keeps a tap: publish (control) and read (worker). */
static inline void ferry_capture_tap_set(struct ferry_capture_tap **slot,
					 struct ferry_capture_tap *t)
{
	__atomic_store_n(slot, t, __ATOMIC_RELEASE);
}

static inline struct ferry_capture_tap *
ferry_capture_tap_get(struct ferry_capture_tap *const *slot)
{
	return __atomic_load_n(slot, __ATOMIC_ACQUIRE);
}

/* One piece of a frame: multi-buffer frames come as several. */
struct ferry_cap_seg {
	const void *data;
	uint32_t len;
};

/*
 * A tap, exposed only so that ferry_capture_frame() inlines into the
 * worker's loop (a call per frame that saves and restores the loop's
 * registers was a third of a non-matching frame's cost): do not touch.
 */
struct ferry_capture_tap {
	struct cap_ring *ring;
	const struct ferry_cfilter *filter; /* the capture's; NULL: none */
	uint16_t port_idx;
	uint8_t dir;
};

/* Producer: queues a copy of a frame that matched; see below. */
bool ferry_capture_copy(const struct ferry_capture_tap *t, uint64_t ts_ns,
			uint16_t queue, uint16_t verdict,
			const struct ferry_cap_seg *seg, unsigned n_seg,
			uint32_t wire_len);

/*
 * Producer, per frame of a burst whose tap is set: filters the frame (on
 * its first segment, where the headers are; the wire length is the sum)
 * and, if it matches, copies up to snaplen bytes into the tap's ring.
 * ts_ns: CLOCK_MONOTONIC, one reading per burst is enough. n_seg >= 1.
 * Never blocks.
 * Returns true if a copy was queued.
 */
static inline bool ferry_capture_frame(const struct ferry_capture_tap *t,
				       uint64_t ts_ns, uint16_t queue,
				       uint16_t verdict,
				       const struct ferry_cap_seg *seg,
				       unsigned n_seg)
{
	uint32_t total = seg[0].len;
	unsigned i;

	for (i = 1; i < n_seg; i++)
		total += seg[i].len;
	if (__builtin_expect(!total, 0) ||
	    (t->filter &&
	     !ferry_cfilter_run(t->filter, seg[0].data, total, seg[0].len)))
		return false;
	return ferry_capture_copy(t, ts_ns, queue, verdict, seg, n_seg, total);
}

/*
 * The same, for a source that holds only the first bytes of a frame (the
 * XDP records): wire_len is the frame's full length, kept as its original
 * length and seen by the filter's `len`. false if wire_len < the segments.
 */
bool ferry_capture_frame_len(const struct ferry_capture_tap *t, uint64_t ts_ns,
			     uint16_t queue, uint16_t verdict,
			     const struct ferry_cap_seg *seg, unsigned n_seg,
			     uint32_t wire_len);

static inline bool ferry_capture_pkt(const struct ferry_capture_tap *t,
				     uint64_t ts_ns, uint16_t queue,
				     uint16_t verdict, const void *data,
				     uint32_t len)
{
	struct ferry_cap_seg s = {.data = data, .len = len};

	return ferry_capture_frame(t, ts_ns, queue, verdict, &s, 1);
}

/* What `capture show` prints besides the counters (control thread). */
struct ferry_capture_info {
	const char *name;
	const char *filter; /* "" when none */
	const char *output; /* the path, or "stream" */
	uint32_t snaplen;
	uint64_t count, rate_pps;
	unsigned dirs, n_ports;
	const char *const *ports; /* copies, valid until destroy */
	uint64_t bytes;		  /* handed to the output so far */
	int state;		  /* ferry_capture_state() */
	uint64_t cpus;		  /* the writer's CPUs; 0: anywhere */
};

void ferry_capture_info(const struct ferry_capture *c,
			struct ferry_capture_info *out);

/* Sums the producers' and the writer's counters (any thread). */
void ferry_capture_ctrs(const struct ferry_capture *c,
			struct ferry_capture_ctrs *out);

/*
 * The writer's state: 0 while running; 1 when done (count reached and
 * everything written); -errno when writing failed (e.g. -EPIPE: the
 * streaming client went away). The control thread polls it to end
 * captures by themselves.
 */
int ferry_capture_state(const struct ferry_capture *c);

const char *ferry_capture_name(const struct ferry_capture *c);

/*
 * Starts one of a capture's threads (the writer, an XDP reader) already
 * pinned to cpus (0: anywhere), so it never runs elsewhere: 0 or -errno
 * (-EINVAL for a CPU that is not online), nothing started on failure.
 */
int ferry_capture_thread(pthread_t *t, uint64_t cpus, void *(*fn)(void *),
			 void *arg);
const char *ferry_capture_counter_name(unsigned i);

/*
 * Writes what the rings hold now; returns the slots taken. The writer
 * thread's step, exposed for a capture made with params.manual (tests and
 * the benchmark drive it by hand). Never while the writer thread runs.
 */
uint32_t ferry_capture_drain(struct ferry_capture *c);

/*
 * Ends the capture: the writer drains every ring, flushes and closes the
 * output (and the caller's fd if own_fd). Counters and state stay readable
 * until destroy. The caller must have retired every tap first (see above).
 * Returns the writer's final error, 0 if none; a second call returns the
 * same.
 */
int ferry_capture_stop(struct ferry_capture *c);

/* Stops (if not yet) and frees; returns what stop returned. */
int ferry_capture_destroy(struct ferry_capture *c);

#endif /* FERRY_CAPTURE_H */
