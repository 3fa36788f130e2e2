// SPDX-License-Identifier: BSD-2-Clause
/*
 * capture_bench - pushes synthetic frames through a capture the way a
 * worker will (dataplane/capture/capture.h): per burst of FERRY_BURST frames, one
 * load of the queue's tap pointer, and only if it is set one
 * ferry_capture_pkt() per frame. worker_burst() is that per-burst step;
 * bench/capture.sh counts its instructions with callgrind, and those of
 * ferry_capture_drain() (the writer's side, on another core in ferryd).
 *
 *   capture_bench [-n FRAMES] [-m off|none|1pct|all] [-p PRODUCERS]
 *                 [-s SIZE] [-w PATH] [-e ferry|libpcap] [-f EXPR]
 *
 *   -m off   no capture: the tap pointer is NULL
 *      none  a capture whose filter ("udp and dst port 7777") matches nothing
 *      1pct  the same filter, one frame in a hundred matches
 *      all   the same filter, every frame matches
 *   -p 0     one thread; the capture is drained between bursts, outside
 *            worker_burst (deterministic: the callgrind case)
 *   -p N     N producer threads, each with its own ring, and the capture's
 *            writer thread, as in ferryd; prints wall-clock ns per frame
 *   -w PATH  the pcapng output (default /dev/null)
 *   -e       the filter's evaluator: ferry's (capture_filter.c, default)
 *            or libpcap's bpf_filter(), the baseline
 *   -f EXPR  another filter, run on the same frames (the match count is
 *            then not checked, only that the counters add up)
 *
 * Exits non-zero if the capture's counters do not add up (matched =
 * written + drops) or the expected number of frames did not match, so it
 * doubles as a check.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "capture_frames.h"

#define BURST 256 /* FERRY_BURST: the worker's RX burst */

enum mode { M_OFF, M_NONE, M_1PCT, M_ALL };
static const char *const mode_names[] = {"off", "none", "1pct", "all"};

/* What a worker keeps per port queue: the tap pointer sits with its hot fields. */
struct fake_pq {
	struct ferry_capture_tap *cap_rx;
	uint64_t rx_packets, rx_bytes;
};

struct frames {
	uint8_t *data[BURST];
	uint32_t len[BURST];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * One burst as the worker will handle it. The per-frame loop stands for
 * the app's own work (it reads each descriptor's length); the capture adds
 * one pointer load and one branch per burst when off.
 */
__attribute__((noinline)) static void
worker_burst(struct fake_pq *pq, const struct frames *f, uint32_t n)
{
	struct ferry_capture_tap *t = ferry_capture_tap_get(&pq->cap_rx);
	uint64_t bytes = 0;
	uint32_t i;

	for (i = 0; i < n; i++)
		bytes += f->len[i];
	pq->rx_packets += n;
	pq->rx_bytes += bytes;
	if (__builtin_expect(t != NULL, 0)) {
		uint64_t now = now_ns();

		for (i = 0; i < n; i++)
			ferry_capture_pkt(t, now, 0,
					  FERRY_CAP_VERDICT(FERRY_CAP_V_APP, 1),
					  f->data[i], f->len[i]);
	}
}

static int frames_make(struct frames *f, enum mode m, uint32_t size,
		       uint32_t id)
{
	uint32_t i;

	for (i = 0; i < BURST; i++) {
		/* 1pct: frames 0, 100, 200 of each burst of 256, so a
		 * burst averages 3/256 (1.2%). */
		bool match = m == M_ALL || (m == M_1PCT && i % 100 == 0);

		f->data[i] = malloc(size);
		if (!f->data[i])
			return -ENOMEM;
		f->len[i] = size;
		cf_build_udp(f->data[i], size, id, i, match ? 7777 : 7778);
	}
	return 0;
}

static void frames_free(struct frames *f)
{
	for (uint32_t i = 0; i < BURST; i++)
		free(f->data[i]);
}

static uint64_t expected_matches(enum mode m, uint64_t frames)
{
	uint64_t per_burst = m == M_ALL ? BURST : m == M_1PCT ? 3 : 0;
	uint64_t full = frames / BURST, rest = frames % BURST, extra;

	extra = m == M_ALL ? rest : m == M_1PCT ? (rest + 99) / 100 : 0;
	return full * per_burst + extra;
}

struct prod {
	struct fake_pq pq;
	struct frames f;
	uint64_t frames;
	pthread_t th;
};

static void *prod_main(void *arg)
{
	struct prod *p = arg;
	uint64_t done;

	for (done = 0; done < p->frames; done += BURST)
		worker_burst(&p->pq, &p->f,
			     p->frames - done < BURST
				     ? (uint32_t)(p->frames - done)
				     : BURST);
	return NULL;
}

int main(int argc, char **argv)
{
	uint64_t frames = 1000000, t0, t1, want, done;
	const char *path = "/dev/null", *filter = NULL;
	bool libpcap_eval = false;
	struct ferry_capture_params cp = {0};
	struct ferry_capture_ctrs k = {0};
	struct ferry_capture *c = NULL;
	unsigned producers = 0, i, n_rings;
	uint32_t size = 64;
	struct prod *pr;
	enum mode m = M_OFF;
	struct ferry_err msg;
	int opt, rc = 0;

	while ((opt = getopt(argc, argv, "n:m:p:s:w:e:f:")) != -1) {
		switch (opt) {
		case 'n':
			frames = strtoull(optarg, NULL, 0);
			break;
		case 'm':
			for (m = 0; m <= M_ALL; m++)
				if (!strcmp(optarg, mode_names[m]))
					break;
			if (m > M_ALL) {
				fprintf(stderr, "capture_bench: mode %s?\n",
					optarg);
				return 2;
			}
			break;
		case 'p':
			producers = (unsigned)atoi(optarg);
			break;
		case 's':
			size = (uint32_t)atoi(optarg);
			break;
		case 'w':
			path = optarg;
			break;
		case 'e':
			libpcap_eval = !strcmp(optarg, "libpcap");
			if (!libpcap_eval && strcmp(optarg, "ferry")) {
				fprintf(stderr,
					"capture_bench: evaluator %s?\n",
					optarg);
				return 2;
			}
			break;
		case 'f':
			filter = optarg;
			break;
		default:
			fprintf(stderr,
				"usage: capture_bench [-n FRAMES] "
				"[-m off|none|1pct|all] [-p PRODUCERS] "
				"[-s SIZE] [-w PATH] [-e ferry|libpcap] "
				"[-f EXPR]\n");
			return 2;
		}
	}
	if (size < CF_MIN_LEN || size > 9000) {
		fprintf(stderr, "capture_bench: size %u out of %u..9000\n",
			size, CF_MIN_LEN);
		return 2;
	}
	n_rings = producers ? producers : 1;
	pr = calloc(n_rings, sizeof(*pr));
	if (!pr)
		return 1;
	for (i = 0; i < n_rings; i++) {
		pr[i].frames = frames / n_rings;
		if (frames_make(&pr[i].f, m, size, i)) {
			perror("capture_bench");
			return 1;
		}
	}
	if (m != M_OFF) {
		static const char *const ports[] = {"p0"};

		cp = (struct ferry_capture_params){
			.name = "bench",
			.filter = filter ? filter : "udp and dst port 7777",
			.filter_libpcap = libpcap_eval,
			.ports = ports,
			.n_ports = 1,
			.n_producers = n_rings,
			.path = path,
			.fd = -1,
			.manual = producers == 0,
		};
		c = ferry_capture_create(&cp, &msg);
		if (!c) {
			fprintf(stderr, "capture_bench: %s\n", msg.msg);
			return 1;
		}
		for (i = 0; i < n_rings; i++)
			ferry_capture_tap_set(
				&pr[i].pq.cap_rx,
				ferry_capture_tap(c, i, 0, FERRY_CAP_RX));
	}

	t0 = now_ns();
	if (!producers) {
		for (done = 0; done < pr[0].frames; done += BURST) {
			worker_burst(&pr[0].pq, &pr[0].f,
				     pr[0].frames - done < BURST
					     ? (uint32_t)(pr[0].frames - done)
					     : BURST);
			if (c)
				ferry_capture_drain(c);
		}
	} else {
		for (i = 0; i < producers; i++)
			if (pthread_create(&pr[i].th, NULL, prod_main,
					   &pr[i])) {
				perror("capture_bench: thread");
				return 1;
			}
		for (i = 0; i < producers; i++)
			pthread_join(pr[i].th, NULL);
	}
	t1 = now_ns();

	want = 0;
	for (i = 0; i < n_rings; i++)
		want += expected_matches(m, pr[i].frames);
	if (c) {
		for (i = 0; i < n_rings; i++) /* retire the taps */
			ferry_capture_tap_set(&pr[i].pq.cap_rx, NULL);
		rc = ferry_capture_stop(c);
		if (rc)
			fprintf(stderr, "capture_bench: output: %s\n",
				strerror(-rc));
		ferry_capture_ctrs(c, &k);
		ferry_capture_destroy(c);
	}
	printf("mode %s eval %s producers %u frames %llu ns/frame %.1f",
	       mode_names[m], libpcap_eval ? "libpcap" : "ferry", producers,
	       (unsigned long long)(frames / n_rings * n_rings),
	       (double)(t1 - t0) * n_rings / (double)frames);
	for (i = 0; ferry_capture_counter_name(i); i++)
		printf(" %s %llu", ferry_capture_counter_name(i),
		       (unsigned long long)((uint64_t *)&k)[i]);
	printf("\n");
	if ((!filter && k.matched != want) ||
	    k.matched != k.written + k.dropped_ring_full + k.dropped_rate +
				 k.dropped_count_reached + k.dropped_output) {
		fprintf(stderr,
			"capture_bench: counters do not add up (expected %llu "
			"matches)\n",
			(unsigned long long)want);
		rc = 1;
	}
	for (i = 0; i < n_rings; i++)
		frames_free(&pr[i].f);
	free(pr);
	return rc ? 1 : 0;
}
