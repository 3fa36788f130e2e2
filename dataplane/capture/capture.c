// SPDX-License-Identifier: BSD-2-Clause
/*
 * capture.c - the capture object: filter, limits, per-producer rings and
 * the writer thread (see capture.h for the threads and the worker's side).
 *
 * Ring: one per producer, single producer (a worker) and single consumer
 * (the writer), a power-of-two number of bytes holding variable-size
 * records (a 32-byte header, then the captured bytes, rounded up to 64 so
 * each record starts a cache line), free-running 32-bit byte offsets for
 * head and tail. A record never wraps: when it does not fit before the
 * end, the producer writes a wrap marker there and starts at offset 0.
 * Variable size, because a 64-byte frame in a slot sized for a 9000-byte
 * snaplen would waste 99% of the ring. The producer owns head and its cached copy of tail,
 * the consumer owns tail and its cached copy of head; each pair sits on its
 * own cache line so the two sides share a line only when one of them must
 * look at the other's index (when its cached copy says full or empty).
 *
 * Limits shared by all producers (count, rate) are atomics on lines of
 * their own, touched only when the capture has that limit and a frame
 * matched: a capture is a debugging tool, its cost while it matches is
 * accepted, its cost while off or not matching is what must stay small.
 */
#include <errno.h>
#include <pcap/pcap.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "capture_filter.h"
#include "counters.h"
#include "ferry_abi.h"
#include "log.h"
#include "pcapng.h"
#include "util.h"

/* A record: this header, then the bytes; its size a multiple of 64. */
struct cap_slot {
	uint64_t ts_ns; /* CLOCK_MONOTONIC */
	uint32_t orig_len;
	uint32_t cap_len;
	uint16_t port_idx;
	uint16_t queue;
	uint16_t verdict;
	uint8_t dir;
	uint8_t pad[9];
	uint8_t data[];
};
_Static_assert(sizeof(struct cap_slot) == 32, "slot header is 32 bytes");

/* cap_len of the marker that sends the reader back to offset 0. */
#define CAP_WRAP UINT32_MAX

static inline uint32_t rec_size(uint32_t cap_len)
{
	return (uint32_t)(sizeof(struct cap_slot) + cap_len + 63) & ~63u;
}

struct cap_ring {
	/* read-only after create, read by both sides */
	_Alignas(64) uint8_t *slots;
	struct ferry_capture *cap;
	uint32_t mask; /* ring bytes - 1 */
	uint32_t size; /* ring bytes */
	/* producer: the worker */
	_Alignas(64) uint32_t head;
	uint32_t cached_tail;
	uint64_t matched;
	uint64_t dropped_ring_full;
	uint64_t dropped_rate;
	uint64_t dropped_count_reached;
	/* consumer: the writer thread */
	_Alignas(64) uint32_t tail;
	uint32_t cached_head;
	uint64_t written;
	uint64_t dropped_output;
};
_Static_assert(offsetof(struct cap_ring, head) % 64 == 0 &&
		       offsetof(struct cap_ring, tail) % 64 == 0,
	       "producer and consumer indexes on lines of their own");

#define CAP_FLUSH_MS_DEF 100
#define CAP_IDLE_NS	 1000000 /* writer's nap when every ring is empty */
/* Per producer: 4 MiB hold ~32k 64-byte frames or ~400 of 9000 bytes. */
#define CAP_RING_BYTES	(4u << 20)
#define CAP_RING_MIN	4096u
#define CAP_WRITE_BATCH 64
/* Burst the rate cap lets through at once: 50 ms worth, at least one. */
#define CAP_RATE_BURST_DIV 20

struct ferry_capture {
	/* shared limits, written by producers: lines of their own */
	_Alignas(64) uint64_t taken; /* copies granted under `count` */
	_Alignas(64) uint64_t tat;   /* rate cap: GCRA theoretical arrival */
	/* read-only after create: the producers' configuration */
	_Alignas(64) struct ferry_cfilter *filter; /* NULL: no filter */
	uint32_t snaplen;  /* as asked, in the interface blocks */
	uint32_t data_max; /* bytes a slot holds: min(snaplen, slot max) */
	uint64_t count;
	uint64_t interval_ns; /* rate cap: 1e9 / rate; 0: no cap */
	uint64_t tolerance_ns;
	/* cold */
	unsigned dirs, n_ports, n_rings;
	struct cap_ring *rings;
	struct ferry_capture_tap *taps; /* [ring][port][dir] */
	int if_id[FERRY_CAP_MAX_PORTS][FERRY_CAP__NDIR];
	struct ferry_pcapng *out;
	int out_fd; /* the caller's fd, closed at destroy; -1: none or not ours */
	int64_t mono_to_real;
	uint32_t flush_ms;
	const char *(*app_name)(unsigned app);
	const char *(*route_name)(unsigned reason);
	uint64_t cpus; /* the writer's; 0: anywhere */
	pthread_t writer;
	bool writer_running;
	bool stopped;
	int stop_err;
	int stop;  /* control -> writer */
	int state; /* writer -> control: 0, 1 done, -errno */
	/* writer only: the last comment made, reused while (queue, verdict)
	 * repeat, as they do within a burst: snprintf per frame was half
	 * the writer's instructions. */
	bool comment_valid;
	uint32_t comment_key;
	char comment[96];
	char name[FERRY_CAP_NAME_MAX];
	/* for ferry_capture_info: copies of what was asked */
	char *filter_text, *output_text;
	char *port_names[FERRY_CAP_MAX_PORTS];
	uint64_t rate_pps;
	uint64_t bytes_final; /* output bytes, kept when stop closes it */
};

static const char *const ctr_names[] = {
#define FERRY_CAP_CTR_NAME(name) #name,
	FERRY_CAPTURE_COUNTERS(FERRY_CAP_CTR_NAME)
#undef FERRY_CAP_CTR_NAME
};

static const char *const kind_names[] = {
#define FERRY_CAP_VK_NAME(id, name) [FERRY_CAP_V_##id] = name,
	FERRY_CAP_VERDICT_KINDS(FERRY_CAP_VK_NAME)
#undef FERRY_CAP_VK_NAME
};

static const char *const reason_names[] = {
#define FERRY_CAP_REASON_NAME(id, name) [FERRY_R_##id] = name,
	FERRY_REASONS(FERRY_CAP_REASON_NAME)
#undef FERRY_CAP_REASON_NAME
};

static const char *const drop_names[] = {
#define FERRY_CAP_DROP_NAME(name) #name,
	FERRY_DROP_REASONS(FERRY_CAP_DROP_NAME)
#undef FERRY_CAP_DROP_NAME
};

#ifndef unlikely
#endif

const char *ferry_capture_counter_name(unsigned i)
{
	return i < ARRAY_LEN(ctr_names) ? ctr_names[i] : NULL;
}

const char *ferry_capture_name(const struct ferry_capture *c)
{
	return c->name;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------- producer */

/*
 * Rate cap as a GCRA (a token bucket kept as one timestamp, so one CAS
 * updates it): a copy at time now is allowed if the bucket's theoretical
 * arrival time is at most tolerance ahead of now.
 */
static bool rate_allow(struct ferry_capture *c, uint64_t now)
{
	uint64_t tat = __atomic_load_n(&c->tat, __ATOMIC_RELAXED), base;

	do {
		base = tat > now ? tat : now;
		if (base - now > c->tolerance_ns)
			return false;
	} while (!__atomic_compare_exchange_n(
		&c->tat, &tat, base + c->interval_ns, true, __ATOMIC_RELAXED,
		__ATOMIC_RELAXED));
	return true;
}

/*
 * A matched frame: limits, then the copy. Called out of line from the
 * worker's loop (ferry_capture_frame, inline, filters), so that the common
 * case (no match) runs no more than the filter.
 */
static inline bool frame_copy(const struct ferry_capture_tap *t, uint64_t ts_ns,
			      uint16_t queue, uint16_t verdict,
			      const struct ferry_cap_seg *seg, unsigned n_seg,
			      uint32_t total, uint32_t wire_len)
{
	struct cap_ring *r = t->ring;
	struct ferry_capture *c = r->cap;
	uint32_t caplen, off, head, pos, rec, contig, need, i;
	struct cap_slot *s;

	ferry_ctr_add(&r->matched, 1);

	caplen = total < c->data_max ? total : c->data_max;
	rec = rec_size(caplen);
	head = r->head;
	pos = head & r->mask;
	contig = r->size - pos;
	/* Room for the record, and for the wrap marker's skip if it must
	 * start over at offset 0. */
	need = rec <= contig ? rec : contig + rec;
	if (r->size - (head - r->cached_tail) < need) {
		/* Pairs with the writer's release of tail: the bytes are free. */
		r->cached_tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
		if (r->size - (head - r->cached_tail) < need) {
			ferry_ctr_add(&r->dropped_ring_full, 1);
			return false;
		}
	}
	if (c->interval_ns && !rate_allow(c, ts_ns)) {
		ferry_ctr_add(&r->dropped_rate, 1);
		return false;
	}
	if (c->count) {
		/* A plain load first: once the count is reached, producers
		 * only read the line instead of fighting over it. */
		if (__atomic_load_n(&c->taken, __ATOMIC_RELAXED) >= c->count ||
		    __atomic_fetch_add(&c->taken, 1, __ATOMIC_RELAXED) >=
			    c->count) {
			ferry_ctr_add(&r->dropped_count_reached, 1);
			return false;
		}
	}

	if (rec > contig) {
		/* contig is a multiple of 64: the marker's header fits. */
		((struct cap_slot *)(r->slots + pos))->cap_len = CAP_WRAP;
		head += contig;
		pos = 0;
	}
	s = (struct cap_slot *)(r->slots + pos);
	s->ts_ns = ts_ns;
	s->orig_len = wire_len;
	s->cap_len = caplen;
	s->port_idx = t->port_idx;
	s->dir = t->dir;
	s->queue = queue;
	s->verdict = verdict;
	for (i = 0, off = 0; i < n_seg && off < caplen; i++) {
		uint32_t n =
			seg[i].len < caplen - off ? seg[i].len : caplen - off;

		memcpy(s->data + off, seg[i].data, n);
		off += n;
	}
	/* Pairs with the writer's acquire of head: marker and record are
	 * written. */
	__atomic_store_n(&r->head, head + rec, __ATOMIC_RELEASE);
	return true;
}

bool ferry_capture_copy(const struct ferry_capture_tap *t, uint64_t ts_ns,
			uint16_t queue, uint16_t verdict,
			const struct ferry_cap_seg *seg, unsigned n_seg,
			uint32_t wire_len)
{
	uint32_t total = 0;
	unsigned i;

	for (i = 0; i < n_seg; i++)
		total += seg[i].len;
	return frame_copy(t, ts_ns, queue, verdict, seg, n_seg, total,
			  wire_len);
}

/* The filter (capture_filter.h: libpcap's answers) on the first segment,
 * where the headers are (loads past it fail the match); wire_len is the
 * whole. */
bool ferry_capture_frame_len(const struct ferry_capture_tap *t, uint64_t ts_ns,
			     uint16_t queue, uint16_t verdict,
			     const struct ferry_cap_seg *seg, unsigned n_seg,
			     uint32_t wire_len)
{
	uint32_t total = 0;
	unsigned i;

	for (i = 0; i < n_seg; i++)
		total += seg[i].len;
	if (!total || wire_len < total ||
	    (t->filter &&
	     !ferry_cfilter_run(t->filter, seg[0].data, wire_len, seg[0].len)))
		return false;
	return frame_copy(t, ts_ns, queue, verdict, seg, n_seg, total,
			  wire_len);
}

/* --------------------------------------------------------------- writer */

static void verdict_comment(const struct ferry_capture *c,
			    const struct cap_slot *s, char *buf, size_t len)
{
	unsigned kind = s->verdict >> 8, code = s->verdict & 0xffu;
	const char *name = NULL;
	char num[8];

	switch (kind) {
	case FERRY_CAP_V_XDP:
		name = code < ARRAY_LEN(reason_names) ? reason_names[code]
						      : NULL;
		break;
	case FERRY_CAP_V_DROP:
		name = code < ARRAY_LEN(drop_names) ? drop_names[code] : NULL;
		break;
	case FERRY_CAP_V_APP:
		name = c->app_name ? c->app_name(code) : NULL;
		break;
	case FERRY_CAP_V_ROUTE:
		name = c->route_name ? c->route_name(code) : NULL;
		break;
	default:
		snprintf(buf, len, "queue=%u", s->queue);
		return;
	}
	if (!name) {
		snprintf(num, sizeof(num), "%u", code);
		name = num;
	}
	snprintf(buf, len, "queue=%u %s=%s", s->queue,
		 kind < FERRY_CAP_V__COUNT ? kind_names[kind] : "?", name);
}

static void slot_write(struct ferry_capture *c, struct cap_ring *r,
		       const struct cap_slot *s)
{
	uint32_t key = (uint32_t)s->queue << 16 | s->verdict;
	int err;

	if (__atomic_load_n(&c->state, __ATOMIC_RELAXED) < 0) {
		ferry_ctr_add(&r->dropped_output, 1);
		return;
	}
	if (!c->comment_valid || c->comment_key != key) {
		verdict_comment(c, s, c->comment, sizeof(c->comment));
		c->comment_key = key;
		c->comment_valid = true;
	}
	err = ferry_pcapng_packet(c->out,
				  (uint32_t)c->if_id[s->port_idx][s->dir],
				  s->ts_ns + (uint64_t)c->mono_to_real, s->data,
				  s->cap_len, s->orig_len,
				  s->dir == FERRY_CAP_TX ? FERRY_PCAPNG_DIR_OUT
							 : FERRY_PCAPNG_DIR_IN,
				  c->comment);
	if (err) {
		__atomic_store_n(&c->state, err, __ATOMIC_RELEASE);
		ferry_ctr_add(&r->dropped_output, 1);
		return;
	}
	ferry_ctr_add(&r->written, 1);
}

/* Drains what ring r holds now, a batch at a time; returns records taken. */
static uint32_t ring_drain(struct ferry_capture *c, struct cap_ring *r)
{
	uint32_t tail = r->tail, n = 0;

	for (;;) {
		uint32_t batch = 0;

		if (r->cached_head == tail)
			r->cached_head =
				__atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
		if (r->cached_head == tail)
			return n;
		while (tail != r->cached_head && batch < CAP_WRITE_BATCH) {
			uint32_t pos = tail & r->mask;
			const struct cap_slot *s =
				(const struct cap_slot *)(r->slots + pos);

			if (s->cap_len == CAP_WRAP) {
				tail += r->size - pos;
				continue;
			}
			slot_write(c, r, s);
			tail += rec_size(s->cap_len);
			batch++;
		}
		n += batch;
		/* The records are read: the producer may reuse the bytes. */
		__atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
	}
}

static void *writer_main(void *arg)
{
	struct ferry_capture *c = arg;
	uint64_t last_flush = clock_ns(CLOCK_MONOTONIC), now;
	bool dirty = false;

	for (;;) {
		/* Read stop before draining: what producers queued before it
		 * was set is in the rings by now and gets written. */
		int stop = __atomic_load_n(&c->stop, __ATOMIC_ACQUIRE);
		uint32_t n = ferry_capture_drain(c);

		if (stop)
			break;
		dirty |= n != 0;
		now = clock_ns(CLOCK_MONOTONIC);
		if (dirty && now - last_flush >= c->flush_ms * 1000000ull) {
			int err = ferry_pcapng_flush(c->out);

			if (err)
				__atomic_store_n(&c->state, err,
						 __ATOMIC_RELEASE);
			last_flush = now;
			dirty = false;
		}
		/* Straight back only while a ring had a batch's worth: a
		 * drain that took a few frames of a trickle (a 1% capture)
		 * would otherwise come back at once for the next one or two,
		 * spinning at the producers' rate; with the nap, the rings
		 * (~32k small frames each) hold what 1 ms brings. */
		if (n >= CAP_WRITE_BATCH)
			continue;
		if (!n && c->count &&
		    __atomic_load_n(&c->state, __ATOMIC_RELAXED) == 0 &&
		    __atomic_load_n(&c->taken, __ATOMIC_RELAXED) >= c->count) {
			/* Done once the granted copies are out: flush them so
			 * a reader sees the whole capture before it ends. */
			int err = ferry_pcapng_flush(c->out);

			__atomic_store_n(&c->state, err ? err : 1,
					 __ATOMIC_RELEASE);
			dirty = false;
		}
		nanosleep(&(struct timespec){.tv_nsec = CAP_IDLE_NS}, NULL);
	}
	return NULL;
}

/* --------------------------------------------------------------- control */

/* libpcap compiles; capture_filter.c decodes the program for the producers. */
static int compile_filter(struct ferry_capture *c, const char *expr,
			  bool libpcap_eval, struct ferry_err *msg)
{
	struct bpf_program prog;
	pcap_t *dead;
	int err = 0;

	if (!expr || !*expr)
		return 0;
	dead = pcap_open_dead(DLT_EN10MB, (int)c->snaplen);
	if (!dead)
		return ferry_fail(msg, -ENOMEM, "filter: out of memory");
	if (pcap_compile(dead, &prog, expr, 1, PCAP_NETMASK_UNKNOWN) < 0) {
		err = ferry_fail(msg, -EINVAL, "bad filter \"%s\": %s", expr,
				 pcap_geterr(dead));
		goto err_dead;
	}
	c->filter =
		ferry_cfilter_create(prog.bf_insns, prog.bf_len,
				     libpcap_eval ? FERRY_CFILTER_LIBPCAP : 0);
	if (!c->filter)
		err = ferry_fail(msg, -errno, "filter: %s", strerror(errno));
	pcap_freecode(&prog);
err_dead:
	pcap_close(dead);
	return err;
}

static int open_output(struct ferry_capture *c,
		       const struct ferry_capture_params *p,
		       struct ferry_err *msg)
{
	unsigned i, d;
	int id;

	/* The writer never owns a caller's fd: create leaves it open when it
	 * fails, destroy closes it when own_fd said so. */
	if (p->fd >= 0)
		c->out = ferry_pcapng_open_fd(p->fd, false);
	else if (p->path && *p->path)
		c->out = ferry_pcapng_open_path(p->path);
	else
		return ferry_fail(msg, -EINVAL,
				  "capture needs a file or a stream");
	if (!c->out)
		return ferry_fail(msg, -errno, "%s: %s",
				  p->fd >= 0 ? "stream" : p->path,
				  strerror(errno));
	for (i = 0; i < c->n_ports; i++)
		for (d = 0; d < FERRY_CAP__NDIR; d++) {
			char ifname[64], descr[96];

			c->if_id[i][d] = -1;
			if (!(c->dirs & FERRY_CAP_DIR_BIT(d)))
				continue;
			snprintf(ifname, sizeof(ifname), "%s-%s", p->ports[i],
				 d == FERRY_CAP_RX ? "rx" : "tx");
			snprintf(descr, sizeof(descr),
				 "ferry port %s, frames %s", p->ports[i],
				 d == FERRY_CAP_RX ? "as received" : "as sent");
			id = ferry_pcapng_add_if(c->out, ifname, descr,
						 c->snaplen);
			if (id < 0)
				return ferry_fail(msg, id, "%s: %s",
						  p->path ? p->path : "stream",
						  strerror(-id));
			c->if_id[i][d] = id;
		}
	/* The header blocks go out now: a streaming reader starts at once,
	 * and an unwritable output fails the command, not later. */
	id = ferry_pcapng_flush(c->out);
	if (id)
		return ferry_fail(msg, id, "%s: %s",
				  p->path ? p->path : "stream", strerror(-id));
	return 0;
}

static int alloc_rings(struct ferry_capture *c, uint32_t bytes,
		       struct ferry_err *msg)
{
	unsigned i, n_taps = c->n_rings * c->n_ports * FERRY_CAP__NDIR;

	if (!bytes)
		bytes = CAP_RING_BYTES;
	if (bytes & (bytes - 1) || bytes < CAP_RING_MIN)
		return ferry_fail(msg, -EINVAL,
				  "ring size %u is not a power of two >= %u",
				  bytes, CAP_RING_MIN);
	if (bytes < rec_size(c->data_max))
		return ferry_fail(msg, -EINVAL,
				  "ring size %u is too small for snaplen %u",
				  bytes, c->data_max);
	if (posix_memalign((void **)&c->rings, 64,
			   c->n_rings * sizeof(*c->rings)))
		return ferry_fail(msg, -ENOMEM, "capture: out of memory");
	memset(c->rings, 0, c->n_rings * sizeof(*c->rings));
	for (i = 0; i < c->n_rings; i++) {
		struct cap_ring *r = &c->rings[i];

		if (posix_memalign((void **)&r->slots, 64, bytes))
			return ferry_fail(msg, -ENOMEM,
					  "capture: out of memory");
		r->cap = c;
		r->mask = bytes - 1;
		r->size = bytes;
	}
	c->taps = calloc(n_taps, sizeof(*c->taps));
	if (!c->taps)
		return ferry_fail(msg, -ENOMEM, "capture: out of memory");
	for (i = 0; i < n_taps; i++) {
		c->taps[i].ring = &c->rings[i / (c->n_ports * FERRY_CAP__NDIR)];
		c->taps[i].port_idx =
			(uint16_t)(i / FERRY_CAP__NDIR % c->n_ports);
		c->taps[i].dir = (uint8_t)(i % FERRY_CAP__NDIR);
		c->taps[i].filter = c->filter;
	}
	return 0;
}

static void capture_free(struct ferry_capture *c)
{
	unsigned i;

	if (c->rings)
		for (i = 0; i < c->n_rings; i++)
			free(c->rings[i].slots);
	free(c->rings);
	free(c->taps);
	free(c->filter_text);
	free(c->output_text);
	for (i = 0; i < FERRY_CAP_MAX_PORTS; i++)
		free(c->port_names[i]);
	ferry_cfilter_destroy(c->filter);
	free(c);
}

int ferry_capture_thread(pthread_t *t, uint64_t cpus, void *(*fn)(void *),
			 void *arg)
{
	pthread_attr_t attr;
	cpu_set_t set;
	int err, i;

	err = pthread_attr_init(&attr);
	if (err)
		return -err;
	if (cpus) {
		/* Set on the attributes, not by the thread itself: it never
		 * runs a drain on a worker's CPU, even once. */
		CPU_ZERO(&set);
		for (i = 0; i < 64; i++)
			if (cpus & (1ull << i))
				CPU_SET(i, &set);
		err = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
	if (!err)
		err = pthread_create(t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return -err;
}

struct ferry_capture *ferry_capture_create(const struct ferry_capture_params *p,
					   struct ferry_err *msg)
{
	struct ferry_capture *c;
	int err;

	if (!p->n_ports || p->n_ports > FERRY_CAP_MAX_PORTS ||
	    !p->n_producers || p->n_producers > FERRY_CAP_MAX_PRODUCERS ||
	    (p->dirs & ~FERRY_CAP_BOTH)) {
		errno = -ferry_fail(
			msg, -EINVAL,
			"capture: bad ports, producers or directions");
		return NULL;
	}
	if (posix_memalign((void **)&c, 64, sizeof(*c))) {
		errno = -ferry_fail(msg, -ENOMEM, "capture: out of memory");
		return NULL;
	}
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", p->name ? p->name : "");
	c->snaplen = p->snaplen ? p->snaplen : FERRY_CAP_SNAPLEN_DEF;
	c->data_max = c->snaplen < FERRY_CAP_SLOT_DATA_MAX
			      ? c->snaplen
			      : FERRY_CAP_SLOT_DATA_MAX;
	c->count = p->count;
	if (p->rate_pps) {
		uint64_t burst = p->rate_pps / CAP_RATE_BURST_DIV;

		c->interval_ns = 1000000000ull / p->rate_pps;
		if (!c->interval_ns)
			c->interval_ns = 1;
		c->tolerance_ns = (burst ? burst - 1 : 0) * c->interval_ns;
	}
	c->dirs = p->dirs ? p->dirs : FERRY_CAP_DIR_BIT(FERRY_CAP_RX);
	c->n_ports = p->n_ports;
	c->n_rings = p->n_producers;
	c->flush_ms = p->flush_ms ? p->flush_ms : CAP_FLUSH_MS_DEF;
	c->app_name = p->app_name;
	c->route_name = p->route_name;

	c->rate_pps = p->rate_pps;
	c->filter_text = strdup(p->filter ? p->filter : "");
	c->output_text = strdup(p->fd >= 0 ? "stream" : p->path ? p->path : "");
	err = !c->filter_text || !c->output_text ? -ENOMEM : 0;
	for (unsigned i = 0; !err && i < p->n_ports; i++)
		if (!(c->port_names[i] = strdup(p->ports[i])))
			err = -ENOMEM;
	if (err) {
		ferry_fail(msg, err, "capture: out of memory");
		goto err_free;
	}
	err = compile_filter(c, p->filter, p->filter_libpcap, msg);
	if (err)
		goto err_free;
	err = alloc_rings(c, p->ring_bytes, msg);
	if (err)
		goto err_free;
	err = open_output(c, p, msg);
	if (err)
		goto err_out;
	c->mono_to_real =
		(int64_t)(clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC));
	c->cpus = p->cpus;
	if (!p->manual) {
		err = ferry_capture_thread(&c->writer, p->cpus, writer_main, c);
		if (err) {
			ferry_fail(msg, err, "capture: writer thread: %s",
				   strerror(-err));
			goto err_out;
		}
		c->writer_running = true;
	}
	c->out_fd = p->fd >= 0 && p->own_fd ? p->fd : -1;
	return c;

err_out:
	if (c->out) {
		ferry_pcapng_close(c->out);
		/* Nothing started: no half-written file either (only a
		 * regular file: never unlink /dev/full and the like). */
		struct stat st;

		if (p->fd < 0 && !stat(p->path, &st) && S_ISREG(st.st_mode))
			unlink(p->path);
	}
err_free:
	capture_free(c);
	errno = -err;
	return NULL;
}

struct ferry_capture_tap *ferry_capture_tap(struct ferry_capture *c,
					    unsigned producer,
					    unsigned port_idx,
					    enum ferry_cap_dir dir)
{
	if (producer >= c->n_rings || port_idx >= c->n_ports ||
	    dir >= FERRY_CAP__NDIR || !(c->dirs & FERRY_CAP_DIR_BIT(dir)))
		return NULL;
	return &c->taps[(producer * c->n_ports + port_idx) * FERRY_CAP__NDIR +
			dir];
}

void ferry_capture_ctrs(const struct ferry_capture *c,
			struct ferry_capture_ctrs *out)
{
	unsigned i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < c->n_rings; i++) {
		const struct cap_ring *r = &c->rings[i];

		out->matched += ferry_ctr_read(&r->matched);
		out->written += ferry_ctr_read(&r->written);
		out->dropped_ring_full += ferry_ctr_read(&r->dropped_ring_full);
		out->dropped_rate += ferry_ctr_read(&r->dropped_rate);
		out->dropped_count_reached +=
			ferry_ctr_read(&r->dropped_count_reached);
		out->dropped_output += ferry_ctr_read(&r->dropped_output);
	}
}

void ferry_capture_info(const struct ferry_capture *c,
			struct ferry_capture_info *out)
{
	*out = (struct ferry_capture_info){
		.name = c->name,
		.filter = c->filter_text,
		.output = c->output_text,
		.snaplen = c->snaplen,
		.count = c->count,
		.rate_pps = c->rate_pps,
		.dirs = c->dirs,
		.n_ports = c->n_ports,
		.ports = (const char *const *)c->port_names,
		.bytes = c->out ? ferry_pcapng_bytes(c->out) : c->bytes_final,
		.state = ferry_capture_state(c),
		.cpus = c->cpus,
	};
}

int ferry_capture_state(const struct ferry_capture *c)
{
	return __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
}

uint32_t ferry_capture_drain(struct ferry_capture *c)
{
	uint32_t n = 0;
	unsigned i;

	for (i = 0; i < c->n_rings; i++)
		n += ring_drain(c, &c->rings[i]);
	return n;
}

int ferry_capture_stop(struct ferry_capture *c)
{
	int err, state;

	if (c->stopped)
		return c->stop_err;
	if (c->writer_running) {
		__atomic_store_n(&c->stop, 1, __ATOMIC_RELEASE);
		/* The last drain writes what the output takes without
		 * waiting: a stream whose reader stopped reading must not
		 * hang the control thread (a file never makes it wait). */
		ferry_pcapng_cancel(c->out);
		pthread_join(c->writer, NULL);
	} else {
		ferry_pcapng_cancel(c->out);
		ferry_capture_drain(c);
	}
	state = ferry_capture_state(c);
	/* Its error is sticky: close returns it. */
	(void)ferry_pcapng_flush(c->out);
	c->bytes_final = ferry_pcapng_bytes(c->out);
	err = ferry_pcapng_close(c->out);
	c->out = NULL;
	if (c->out_fd >= 0 && close(c->out_fd) && !err)
		err = -errno;
	c->out_fd = -1;
	if (state < 0)
		err = state;
	c->stopped = true;
	c->stop_err = err;
	return err;
}

int ferry_capture_destroy(struct ferry_capture *c)
{
	int err;

	if (!c)
		return 0;
	err = ferry_capture_stop(c);
	capture_free(c);
	return err;
}
