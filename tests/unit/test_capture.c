// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_capture - the capture core (dataplane/capture/capture.c), its pcapng writer
 * (pcapng.c) and the XDP record consumer (capture_xdp.c), without a
 * daemon: frames are pushed the way a worker would, and the files are read
 * back by readers that are not ferry's: libpcap (pcap_open_offline), the
 * tcpdump binary, and a block walker here for what those two do not show
 * (interface names, comments, direction flags).
 *
 * Most tests run the capture in manual mode (no writer thread; the test
 * drains), so what they count does not depend on scheduling. The threaded
 * tests (count, stream, client gone, producers) are the ones TSan checks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pcap/pcap.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "capture_frames.h"
#include "capture_xdp.h"
#include "ferry_abi.h"
#include "ferry_capture_abi.h"

#define T0 1000000000ull /* a monotonic timestamp to start from */

static const char *const two_ports[] = {"p0", "p1"};

/* ------------------------------------------------------------- helpers */

static void tmp_path(char *buf, size_t len)
{
	int fd;

	snprintf(buf, len, "/tmp/ferry_cap_test_XXXXXX");
	fd = mkstemp(buf);
	assert_true(fd >= 0);
	close(fd);
}

static struct ferry_capture_params params(const char *path)
{
	return (struct ferry_capture_params){
		.name = "t",
		.ports = two_ports,
		.n_ports = 1,
		.n_producers = 1,
		.path = path,
		.fd = -1,
		.manual = true,
	};
}

static struct ferry_capture *cap_create(const struct ferry_capture_params *p)
{
	struct ferry_err msg = {""};
	struct ferry_capture *c = ferry_capture_create(p, &msg);

	if (!c)
		fail_msg("ferry_capture_create: %s (%s)", msg.msg,
			 strerror(errno));
	return c;
}

static bool push(const struct ferry_capture_tap *t, uint64_t ts, uint16_t queue,
		 uint16_t verdict, uint32_t len, uint32_t id, uint32_t seq,
		 uint16_t dport)
{
	uint8_t buf[2048];

	cf_build_udp(buf, len, id, seq, dport);
	return ferry_capture_pkt(t, ts, queue, verdict, buf, len);
}

static void ctrs_add_up(const struct ferry_capture_ctrs *k)
{
	uint64_t sum = k->written + k->dropped_ring_full + k->dropped_rate +
		       k->dropped_count_reached + k->dropped_output;

	if (sum != k->matched)
		fail_msg("matched %lu != written %lu + ring_full %lu + rate %lu"
			 " + count %lu + output %lu",
			 k->matched, k->written, k->dropped_ring_full,
			 k->dropped_rate, k->dropped_count_reached,
			 k->dropped_output);
}

/* What libpcap reads back, with nanosecond timestamps. */
struct rd_pkt {
	uint64_t ts_ns;
	uint32_t caplen, len;
	uint8_t data[2048];
};

struct rd {
	struct rd_pkt *p;
	unsigned n, max;
};

static void rd_cb(u_char *arg, const struct pcap_pkthdr *h, const u_char *b)
{
	struct rd *r = (struct rd *)arg;
	struct rd_pkt *p;

	assert_true(r->n < r->max);
	p = &r->p[r->n++];
	p->ts_ns = (uint64_t)h->ts.tv_sec * 1000000000ull +
		   (uint64_t)h->ts.tv_usec;
	p->caplen = h->caplen;
	p->len = h->len;
	memcpy(p->data, b,
	       h->caplen < sizeof(p->data) ? h->caplen : sizeof(p->data));
}

static void rd_file(const char *path, struct rd *r, unsigned max)
{
	char eb[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline_with_tstamp_precision(
		path, PCAP_TSTAMP_PRECISION_NANO, eb);

	if (!p)
		fail_msg("libpcap cannot read %s: %s", path, eb);
	r->p = calloc(max, sizeof(*r->p));
	r->n = 0;
	r->max = max;
	assert_non_null(r->p);
	assert_true(pcap_dispatch(p, -1, rd_cb, (u_char *)r) >= 0);
	pcap_close(p);
}

/* The pcapng blocks themselves: what libpcap does not hand out. */
struct ng_pkt {
	uint32_t if_id, caplen, origlen, flags;
	uint64_t ts;
	char comment[128];
};

struct ng {
	char ifname[8][32];
	uint8_t tsresol[8];
	uint32_t snaplen[8];
	unsigned n_if, n_pkts;
	struct ng_pkt pkts[1100];
};

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void ng_walk(const uint8_t *b, size_t n, struct ng *g)
{
	size_t off = 0;

	memset(g, 0, sizeof(*g));
	assert_true(n >= 12 && rd32(b) == 0x0A0D0D0A);
	assert_int_equal(rd32(b + 8), 0x1A2B3C4D);
	while (off + 12 <= n) {
		uint32_t type = rd32(b + off), len = rd32(b + off + 4), o, end;

		assert_true(len >= 12 && len % 4 == 0 && off + len <= n);
		assert_int_equal(rd32(b + off + len - 4), len);
		if (type == 1) { /* IDB */
			assert_true(g->n_if < 8);
			g->snaplen[g->n_if] = rd32(b + off + 12);
			o = off + 16;
		} else if (type == 6) { /* EPB */
			struct ng_pkt *p = &g->pkts[g->n_pkts];

			assert_true(g->n_pkts < 1100);
			p->if_id = rd32(b + off + 8);
			p->ts = (uint64_t)rd32(b + off + 12) << 32 |
				rd32(b + off + 16);
			p->caplen = rd32(b + off + 20);
			p->origlen = rd32(b + off + 24);
			o = off + 28 + ((p->caplen + 3) & ~3u);
		} else {
			off += len;
			continue;
		}
		end = off + len - 4;
		while (o + 4 <= end) { /* options */
			uint16_t code, olen;

			memcpy(&code, b + o, 2);
			memcpy(&olen, b + o + 2, 2);
			if (!code)
				break;
			if (type == 1 && code == 2)
				snprintf(g->ifname[g->n_if], 32, "%.*s", olen,
					 (const char *)b + o + 4);
			if (type == 1 && code == 9)
				g->tsresol[g->n_if] = b[o + 4];
			if (type == 6 && code == 1)
				snprintf(g->pkts[g->n_pkts].comment, 128,
					 "%.*s", olen, (const char *)b + o + 4);
			if (type == 6 && code == 2)
				g->pkts[g->n_pkts].flags = rd32(b + o + 4);
			o += 4 + ((olen + 3u) & ~3u);
		}
		if (type == 1)
			g->n_if++;
		else
			g->n_pkts++;
		off += len;
	}
	assert_int_equal(off, n);
}

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b;
	long sz;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	b = malloc((size_t)sz + 1);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)sz, f), (size_t)sz);
	fclose(f);
	*n = (size_t)sz;
	return b;
}

static struct ng *ng_file(const char *path)
{
	struct ng *g = malloc(sizeof(*g));
	size_t n;
	uint8_t *b = slurp(path, &n);

	assert_non_null(g);
	ng_walk(b, n, g);
	free(b);
	return g;
}

/* tcpdump, for a reader that is not ours; tests need it (./run installs it). */
static const char *tcpdump_bin(void)
{
	static const char *const bins[] = {"/usr/bin/tcpdump",
					   "/usr/sbin/tcpdump"};
	unsigned i;

	for (i = 0; i < 2; i++)
		if (access(bins[i], X_OK) == 0)
			return bins[i];
	return NULL;
}

static bool need_tcpdump(void)
{
	const char *ci = getenv("CI");

	if (tcpdump_bin())
		return true;
	if (ci && !strcmp(ci, "true"))
		fail_msg("tcpdump is not installed (./run build installs it)");
	return false;
}

/*
 * Starts tcpdump -r SRC (a path, or "-" reading in_fd) with nanosecond
 * times, its output on *out_fd; tcpdump_collect() reads and reaps it.
 */
static void tcpdump_start(const char *src, int in_fd, pid_t *pid_out,
			  int *out_fd)
{
	int out[2];
	pid_t pid;

	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (in_fd >= 0)
			dup2(in_fd, 0);
		dup2(out[1], 1);
		close(out[0]);
		close(out[1]);
		execl(tcpdump_bin(), "tcpdump", "-r", src, "-nn", "-tt",
		      "--time-stamp-precision=nano", (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	*pid_out = pid;
	*out_fd = out[0];
}

/* Complete Enhanced Packet Blocks at the start of a stream so far. */
static unsigned ng_epbs(const uint8_t *b, size_t n)
{
	size_t off = 0;
	unsigned k = 0;

	while (off + 8 <= n) {
		uint32_t len = rd32(b + off + 4);

		if (off + len > n)
			break;
		k += rd32(b + off) == 6;
		off += len;
	}
	return k;
}

static char *tcpdump_collect(pid_t pid, int fd, unsigned *n_lines)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	ssize_t r;
	int st;
	size_t i;

	assert_non_null(buf);
	while ((r = read(fd, buf + n, cap - n - 1)) > 0) {
		n += (size_t)r;
		if (cap - n < 4096) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	buf[n] = 0;
	close(fd);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("tcpdump failed (status %d): %s", st, buf);
	*n_lines = 0;
	for (i = 0; i < n; i++)
		*n_lines += buf[i] == '\n';
	return buf;
}

/* "SEC.NSEC IP ..." -> ns; fails on a line without nine decimals. */
static uint64_t tcpdump_ts(const char *line)
{
	unsigned long long sec, nsec;
	int a, b;

	if (sscanf(line, "%llu.%n%llu%n", &sec, &a, &nsec, &b) != 2 ||
	    b - a != 9)
		fail_msg("tcpdump line without ns timestamp: %.60s", line);
	return sec * 1000000000ull + nsec;
}

/* ---------------------------------------------------------------- tests */

static void test_filter_match(void **state)
{
	struct ferry_capture_info info;
	struct ferry_capture_params p;
	struct stat st;
	struct ferry_capture_ctrs k;
	struct ferry_capture *c;
	struct ferry_capture_tap *t;
	uint8_t f[100];
	char path[64];
	uint32_t id, seq;
	struct rd r;

	(void)state;
	tmp_path(path, sizeof(path));
	p = params(path);
	p.filter = "udp and dst port 7777";
	c = cap_create(&p);
	t = ferry_capture_tap(c, 0, 0, FERRY_CAP_RX);
	assert_non_null(t);
	/* Only rx was asked for; producer and port out of range: no tap. */
	assert_null(ferry_capture_tap(c, 0, 0, FERRY_CAP_TX));
	assert_null(ferry_capture_tap(c, 1, 0, FERRY_CAP_RX));
	assert_null(ferry_capture_tap(c, 0, 1, FERRY_CAP_RX));

	assert_true(push(t, T0, 0, 0, 100, 0, 1, 7777));
	assert_false(push(t, T0, 0, 0, 100, 0, 2, 7778));
	cf_build_udp(f, sizeof(f), 0, 3, 7777);
	f[14 + 9] = 6; /* TCP to port 7777: not udp */
	assert_false(ferry_capture_pkt(t, T0, 0, 0, f, sizeof(f)));
	cf_build_udp(f, sizeof(f), 0, 4, 7777);
	f[12] = 0x08, f[13] = 0x06; /* ARP */
	assert_false(ferry_capture_pkt(t, T0, 0, 0, f, sizeof(f)));
	assert_true(push(t, T0, 0, 0, 100, 0, 5, 7777));

	assert_int_equal(ferry_capture_stop(c), 0);
	ferry_capture_info(c, &info);
	assert_string_equal(info.name, "t");
	assert_string_equal(info.filter, "udp and dst port 7777");
	assert_string_equal(info.output, path);
	assert_int_equal(info.n_ports, 1);
	assert_string_equal(info.ports[0], "p0");
	assert_int_equal(info.snaplen, FERRY_CAP_SNAPLEN_DEF);
	assert_int_equal(info.dirs, FERRY_CAP_DIR_BIT(FERRY_CAP_RX));
	assert_int_equal(info.state, 0);
	ferry_capture_ctrs(c, &k);
	assert_int_equal(k.matched, 2);
	assert_int_equal(k.written, 2);
	ctrs_add_up(&k);
	assert_int_equal(ferry_capture_destroy(c), 0);

	/* The bytes it reported are the file's size. */
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(info.bytes, st.st_size);
	rd_file(path, &r, 8);
	assert_int_equal(r.n, 2);
	cf_read_ids(r.p[0].data, &id, &seq);
	assert_int_equal(seq, 1);
	cf_read_ids(r.p[1].data, &id, &seq);
	assert_int_equal(seq, 5);
	free(r.p);
	unlink(path);
}

static void test_bad_filter(void **state)
{
	static const struct {
		const char *expr, *says;
	} cases[] = {
		{"udp and dst port", "syntax error"},
		{"udp port 99999", "99999"},
		{"frobnicate 3", "frobnicate"},
	};
	struct ferry_capture_params p;
	char path[64];
	struct ferry_err msg;
	unsigned i;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/ferry_cap_never_%d", getpid());
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		p = params(path);
		p.filter = cases[i].expr;
		msg.msg[0] = 0;
		errno = 0;
		assert_null(ferry_capture_create(&p, &msg));
		assert_int_equal(errno, EINVAL);
		if (!strstr(msg.msg, "bad filter") ||
		    !strstr(msg.msg, cases[i].says))
			fail_msg("filter \"%s\": message \"%s\" lacks \"%s\"",
				 cases[i].expr, msg.msg, cases[i].says);
		/* Nothing started: no file was made. */
		assert_int_equal(access(path, F_OK), -1);
	}
}

static void test_bad_output(void **state)
{
	struct ferry_capture_params p;
	struct ferry_err msg = {""};

	(void)state;
	p = params("/nonexistent-ferry-dir/x.pcapng");
	assert_null(ferry_capture_create(&p, &msg));
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(msg.msg, "/nonexistent-ferry-dir/x.pcapng"));
	assert_non_null(strstr(msg.msg, "No such file or directory"));

	/* Opens, but the header blocks cannot be written: the command
	 * fails at once, not later in the writer. */
	p = params("/dev/full");
	assert_null(ferry_capture_create(&p, &msg));
	assert_int_equal(errno, ENOSPC);
	assert_non_null(strstr(msg.msg, "/dev/full: No space left on device"));
	assert_int_equal(access("/dev/full", F_OK), 0);

	p = params(NULL);
	assert_null(ferry_capture_create(&p, &msg));
	assert_int_equal(errno, EINVAL);

	p = params("/tmp/x");
	p.ring_bytes = 100000;
	assert_null(ferry_capture_create(&p, &msg));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(msg.msg, "power of two"));
	p.ring_bytes = 8192; /* a 10 KiB copy would never fit */
	assert_null(ferry_capture_create(&p, &msg));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(msg.msg, "too small for snaplen"));
}

static void test_ring_full(void **state)
{
	struct ferry_capture_params p;
	struct ferry_capture_ctrs k;
	struct ferry_capture *c;
	struct ferry_capture_tap *t;
	unsigned i, queued = 0;
	uint32_t id, seq;
	char path[64];
	struct rd r;

	(void)state;
	tmp_path(path, sizeof(path));
	p = params(path);
	/* 80-byte frames take records of 128 bytes: 64 fit. */
	p.ring_bytes = 64 * 128;
	p.snaplen = 128;
	c = cap_create(&p);
	t = ferry_capture_tap(c, 0, 0, FERRY_CAP_RX);
	for (i = 0; i < 100; i++)
		queued += push(t, T0 + i, 0, 0, 80, 0, i, 1);
	assert_int_equal(queued, 64);
	ferry_capture_ctrs(c, &k);
	assert_int_equal(k.matched, 100);
	assert_int_equal(k.dropped_ring_full, 36);
	assert_int_equal(k.written, 0);
	/* The writer catches up: the ring takes copies again. */
	assert_int_equal(ferry_capture_drain(c), 64);
	for (i = 100; i < 110; i++)
		assert_true(push(t, T0 + i, 0, 0, 80, 0, i, 1));
	assert_int_equal(ferry_capture_stop(c), 0);
	ferry_capture_ctrs(c, &k);
	assert_int_equal(k.written, 74);
	ctrs_add_up(&k);
	ferry_capture_destroy(c);

	rd_file(path, &r, 128);
	assert_int_equal(r.n, 74);
	for (i = 0; i < 74; i++) {
		cf_read_ids(r.p[i].data, &id, &seq);
		assert_int_equal(seq, i < 64 ? i : 100 + (i - 64));
	}
	free(r.p);
	unlink(path);
}

/* Records of many sizes around a small ring: wrap markers, order, bytes. */
static void test_ring_wrap(void **state)
{
	struct ferry_capture_params p;
	struct ferry_capture_ctrs k;
	struct ferry_capture *c;
	struct ferry_capture_tap *t;
	unsigned i, queued = 0, n = 0;
	uint8_t f[300];
	uint64_t rnd = 1;
	uint32_t *sent;
	char path[64];
	struct rd r;

	(void)state;
	tmp_path(path, sizeof(path));
	p = params(path);
	p.ring_bytes = 4096;
	p.snaplen = 256;
	c = cap_create(&p);
	t = ferry_capture_tap(c, 0, 0, FERRY_CAP_RX);
	sent = calloc(3000, sizeof(*sent));
	assert_non_null(sent);
	for (i = 0; i < 3000; i++) {
		uint32_t len;

		rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
		len = CF_MIN_LEN + (uint32_t)(rnd >> 33) % (300 - CF_MIN_LEN);
		if (push(t, T0 + i, 0, 0, len, 0, i, 1))
			sent[queued++] = i << 16 | len;
		/* Drain now and then: the ring runs full and wraps. */
		if ((rnd >> 40) % 8 == 0)
			n += ferry_capture_drain(c);
	}
	assert_int_equal(ferry_capture_stop(c), 0);
	ferry_capture_ctrs(c, &k);
	assert_int_equal(k.written, queued);
	assert_true(k.dropped_ring_full > 0); /* it did run full */
	ctrs_add_up(&k);
	ferry_capture_destroy(c);

	rd_file(path, &r, 3000);
	assert_int_equal(r.n, queued);
	for (i = 0; i < r.n; i++) {
		uint32_t seq = sent[i] >> 16, len = sent[i] & 0xffff;

		cf_build_udp(f, len, 0, seq, 1);
		assert_int_equal(r.p[i].len, len);
		assert_int_equal(r.p[i].caplen, len < 256 ? len : 256);
		assert_memory_equal(r.p[i].data, f, r.p[i].caplen);
	}
	free(r.p);
	free(sent);
	unlink(path);
}

static void test_rate_cap(void **state)
{
	struct ferry_capture_params p;
	struct ferry_capture_ctrs k;
	struct ferry_capture *c;
	struct ferry_capture_tap *t;
	unsigned i, queued = 0;
	char path[64];

	(void)state;
	tmp_path(path, sizeof(path));
	p = params(path);
	p.rate_pps = 1000;
	p.snaplen = 64;
	p.ring_bytes = 1 << 20;
	c = cap_create(&p);
	t = ferry_capture_tap(c, 0, 0, FERRY_CAP_RX);
	/* 5000 frames at 10 kpps for 0.5 s: 500 fit the rate, plus the
	 * bucket's burst (rate / 20 = 50) at the start. */
	for (i = 0; i < 5000; i++)
		queued += push(t, T0 + i * 100000ull, 0, 0, 64, 0, i, 1);
	ferry_capture_ctrs(c, &k);
	if (queued < 500 || queued > 551)
		fail_msg("rate 1000 pps over 0.5 s let %u through, expected"
			 " 500..551",
			 queued);
	assert_int_equal(k.matched, 5000);
	assert_int_equal(k.dropped_rate, 5000 - queued);
	/* After a long quiet spell the burst is available again, no more. */
	queued = 0;
	for (i = 0; i < 100; i++)
		queued += push(t, T0 + 10000000000ull, 0, 0, 64, 0, i, 1);
	assert_int_equal(queued, 50);
	assert_int_equal(ferry_capture_stop(c), 0);
	ferry_capture_ctrs(c, &k);
	ctrs_add_up(&k);
	ferry_capture_destroy(c);
	unlink(path);
}

static void test_count_limit(void **state)
{
	struct ferry_capture_params p;
	struct ferry_capture_ctrs k;
	struct ferry_capture *c;
	struct ferry_capture_tap *t;
	unsigned i, queued = 0, waited;
	uint32_t id, seq;
	char path[64];
	struct rd r;

	(void)state;
	tmp_path(path, sizeof(path));
	p = params(path);
	p.count = 10;
	p.manual = false; /* the writer thread says when it is done */
	c = cap_create(&p);
	t = ferry_capture_tap(c, 0, 0, FERRY_CAP_RX);
	for (i = 0; i < 100; i++)
		queued += push(t, T0 + i, 0, 0, 80, 0, i, 1);
	assert_int_equal(queued, 10);
	/* Bounded wait (60 s), not a timing assertion. */
	for (waited = 0; ferry_capture_state(c) == 0 && waited < 6000; waited++)
		nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
	assert_int_equal(ferry_capture_state(c), 1);
	ferry_capture_ctrs(c, &k);
	assert_int_equal(k.written, 10);
	assert_int_equal(k.dropped_count_reached, 90);
	assert_int_equal(ferry_capture_stop(c), 0);
	ctrs_add_up(&k);
	ferry_capture_destroy(c);

	rd_file(path, &r, 128);
	assert_int_equal(r.n, 10);
	for (i = 0; i < 10; i++) {
		cf_read_ids(r.p[i].data, &id, &seq);
		assert_int_equal(seq, i);
	}
	free(r.p);
	unlink(path);
}

static void test_snaplen(void **state)
{
	struct ferry_capture_params p;
	struct ferry_capture *c;
	struct ferry_capture_tap *t64, *t700;
	struct ferry_cap_seg seg[3];
	uint8_t f[1000];
	char path[64];
	struct rd r;
	struct ng *g;

	(void)state;
	tmp_path(path, sizeof(path));
	p = params(path);
	p.snaplen = 64;
	c = cap_create(&p);
	t64 = ferry_capture_tap(c, 0, 0, FERRY_CAP_RX);
	cf_build_udp(f, sizeof(f), 7, 1, 1);
	for (unsigned i = 100; i < sizeof(f); i++)
		f[i] = (uint8_t)i;
	assert_true(ferry_capture_pkt(t64, T0, 0, 0, f, sizeof(f)));
	/* A multi-buffer frame: three pieces, 1000 bytes in all. */
	seg[0] = (struct ferry_cap_seg){f, 100};
	seg[1] = (struct ferry_cap_seg){f + 100, 500};
	seg[2] = (struct ferry_cap_seg){f + 600, 400};
	assert_true(ferry_capture_frame(t64, T0 + 1, 0, 0, seg, 3));
	assert_int_equal(ferry_capture_stop(c), 0);
	ferry_capture_destroy(c);

	rd_file(path, &r, 8);
	assert_int_equal(r.n, 2);
	for (unsigned i = 0; i < 2; i++) {
		assert_int_equal(r.p[i].caplen, 64);
		assert_int_equal(r.p[i].len, 1000);
		assert_memory_equal(r.p[i].data, f, 64);
	}
	free(r.p);
	g = ng_file(path);
	assert_int_equal(g->snaplen[0], 64);
	free(g);

	/* Across segments: 700 bytes taken from the first two and a half. */
	p.snaplen = 700;
	c = cap_create(&p);
	t700 = ferry_capture_tap(c, 0, 0, FERRY_CAP_RX);
	assert_true(ferry_capture_frame(t700, T0, 0, 0, seg, 3));
	assert_int_equal(ferry_capture_stop(c), 0);
	ferry_capture_destroy(c);
	rd_file(path, &r, 8);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.p[0].caplen, 700);
	assert_int_equal(r.p[0].len, 1000);
	assert_memory_equal(r.p[0].data, f, 700);
	free(r.p);
	unlink(path);
}

static const char *app_name(unsigned app)
{
	static const char *const names[] = {"none", "xconnect", "reflect"};

	return app < 3 ? names[app] : NULL;
}

/*
 * 1000 numbered frames over two ports and both directions, half of them
 * matching the filter: the file holds the 500, in order, with their bytes,
 * their ns timestamps, one interface per (port, direction) and a comment.
 */
static void test_pcapng_readers(void **state)
{
	static const char *const want_if[] = {"p0-rx", "p0-tx", "p1-rx",
					      "p1-tx"};
	struct ferry_capture_params p;
	struct ferry_capture_ctrs k;
	struct ferry_capture *c;
	uint8_t f[200];
	unsigned i, n_lines;
	uint64_t ts_real0;
	char path[64], *out, *line;
	struct rd r;
	struct ng *g;
	pid_t pid;
	int fd;

	(void)state;
	tmp_path(path, sizeof(path));
	p = params(path);
	p.n_ports = 2;
	p.dirs = FERRY_CAP_BOTH;
	p.filter = "udp and dst port 7777";
	p.app_name = app_name;
	p.ring_bytes = 1 << 20;
	c = cap_create(&p);
	for (i = 0; i < 1000; i++) {
		unsigned port = (i / 2) % 2;
		enum ferry_cap_dir dir =
			(i / 4) % 2 ? FERRY_CAP_TX : FERRY_CAP_RX;
		uint16_t v = dir == FERRY_CAP_RX
				     ? FERRY_CAP_VERDICT(FERRY_CAP_V_APP, 1)
				     : FERRY_CAP_VERDICT(FERRY_CAP_V_DROP, 2);

		/* ts one ns apart per frame: microseconds would lose it. */
		push(ferry_capture_tap(c, 0, port, dir), T0 + i, 3, v,
		     60 + i % 100, 0, i, i % 2 ? 7778 : 7777);
	}
	assert_int_equal(ferry_capture_stop(c), 0);
	ferry_capture_ctrs(c, &k);
	assert_int_equal(k.matched, 500);
	assert_int_equal(k.written, 500);
	ctrs_add_up(&k);
	ferry_capture_destroy(c);

	/* libpcap: count, bytes, order, ns timestamps. */
	rd_file(path, &r, 1000);
	assert_int_equal(r.n, 500);
	ts_real0 = r.p[0].ts_ns;
	for (i = 0; i < 500; i++) {
		uint32_t len = 60 + (2 * i) % 100;

		cf_build_udp(f, len, 0, 2 * i, 7777);
		assert_int_equal(r.p[i].len, len);
		assert_int_equal(r.p[i].caplen, len);
		assert_memory_equal(r.p[i].data, f, len);
		assert_int_equal(r.p[i].ts_ns - ts_real0, 2 * i);
	}
	/* Wall-clock time: the file's first frame is this year's. */
	assert_true(ts_real0 / 1000000000ull > 1700000000ull);
	free(r.p);

	/* The blocks: interfaces, resolution, direction, comments. */
	g = ng_file(path);
	assert_int_equal(g->n_if, 4);
	for (i = 0; i < 4; i++) {
		assert_string_equal(g->ifname[i], want_if[i]);
		assert_int_equal(g->tsresol[i], 9);
	}
	assert_int_equal(g->n_pkts, 500);
	for (i = 0; i < 500; i++) {
		unsigned f_i = 2 * i, port = (f_i / 2) % 2, tx = (f_i / 4) % 2;

		assert_int_equal(g->pkts[i].if_id, port * 2 + tx);
		assert_int_equal(g->pkts[i].flags, tx ? 2 : 1);
		assert_string_equal(g->pkts[i].comment,
				    tx ? "queue=3 drop=tx_ring_full"
				       : "queue=3 app=xconnect");
	}
	free(g);

	/* tcpdump reads it too: 500 lines, ns timestamps one frame apart. */
	if (need_tcpdump()) {
		tcpdump_start(path, -1, &pid, &fd);
		out = tcpdump_collect(pid, fd, &n_lines);
		assert_int_equal(n_lines, 500);
		line = out;
		for (i = 0; i < 500; i++) {
			assert_int_equal(tcpdump_ts(line) - ts_real0, 2 * i);
			assert_non_null(strstr(line, "> 10.0.0.2.7777: UDP"));
			line = strchr(line, '\n') + 1;
		}
		free(out);
	}
	unlink(path);
}

/*
 * `-w -`: the capture writes into a stream. A reader sees frames while the
 * capture runs (the writer flushes on its interval, not at the end), and
 * `tcpdump -r -` reads the whole stream.
 */
static void test_stream(void **state)
{
	struct ferry_capture_params p;
	struct ferry_capture *c;
	struct ferry_capture_tap *t;
	uint8_t buf[1 << 16];
	size_t n = 0;
	unsigned i, n_lines;
	int sv[2], pfd[2], fd;
	struct ng *g;
	char *out;
	pid_t pid;

	(void)state;
	/* A socket, as the control connection will be. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	p = params(NULL);
	p.fd = sv[0];
	p.own_fd = true;
	p.manual = false;
	p.flush_ms = 10;
	c = cap_create(&p);
	t = ferry_capture_tap(c, 0, 0, FERRY_CAP_RX);
	for (i = 0; i < 5; i++)
		assert_true(push(t, T0 + i, 0, 0, 100, 0, i, 1));
	/* Read the five frames while the capture still runs. A writer that
	 * never flushed would hang here until meson's timeout fails the
	 * test. */
	while (ng_epbs(buf, n) < 5) {
		ssize_t r = read(sv[1], buf + n, sizeof(buf) - n);

		assert_true(r > 0);
		n += (size_t)r;
	}
	assert_int_equal(ferry_capture_state(c), 0);
	assert_int_equal(ferry_capture_stop(c), 0);
	for (;;) { /* stop closed our end: EOF */
		ssize_t r = read(sv[1], buf + n, sizeof(buf) - n);

		assert_true(r >= 0);
		if (!r)
			break;
		n += (size_t)r;
	}
	g = malloc(sizeof(*g));
	assert_non_null(g);
	ng_walk(buf, n, g);
	assert_int_equal(g->n_pkts, 5);
	free(g);
	ferry_capture_destroy(c);
	close(sv[1]);

	/* tcpdump -r - at the other end of a pipe. */
	if (!need_tcpdump())
		return;
	/* Close-on-exec: tcpdump must hold no write end, or it never sees EOF. */
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	tcpdump_start("-", pfd[0], &pid, &fd);
	close(pfd[0]);
	p = params(NULL);
	p.fd = pfd[1];
	p.own_fd = true;
	p.manual = false;
	c = cap_create(&p);
	t = ferry_capture_tap(c, 0, 0, FERRY_CAP_RX);
	for (i = 0; i < 100; i++)
		assert_true(push(t, T0 + i, 0, 0, 100, 0, i, 7777));
	assert_int_equal(ferry_capture_stop(c), 0);
	ferry_capture_destroy(c);
	out = tcpdump_collect(pid, fd, &n_lines);
	assert_int_equal(n_lines, 100);
	free(out);
}

/* The streaming client goes away: the writer says so, nothing hangs. */
static void test_client_gone(void **state)
{
	struct ferry_capture_params p;
	struct ferry_capture_ctrs k;
	struct ferry_capture *c;
	struct ferry_capture_tap *t;
	unsigned i, waited;
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	p = params(NULL);
	p.fd = sv[0];
	p.own_fd = true;
	p.manual = false;
	p.flush_ms = 1;
	c = cap_create(&p);
	close(sv[1]);
	t = ferry_capture_tap(c, 0, 0, FERRY_CAP_RX);
	for (waited = 0; ferry_capture_state(c) == 0 && waited < 6000;
	     waited++) {
		for (i = 0; i < 10; i++)
			push(t, T0 + i, 0, 0, 100, 0, i, 1);
		nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
	}
	assert_int_equal(ferry_capture_state(c), -EPIPE);
	/* Copies queued after the output failed are counted, not written. */
	for (i = 0; i < 10; i++)
		assert_true(push(t, T0 + i, 0, 0, 100, 0, i, 1));
	assert_int_equal(ferry_capture_stop(c), -EPIPE);
	ferry_capture_ctrs(c, &k);
	assert_true(k.dropped_output >= 10);
	ctrs_add_up(&k);
	ferry_capture_destroy(c);
}

/* Records from the classifier, as capture_xdp reads them. */
static void test_xdp_records(void **state)
{
	static const uint32_t ifindex[] = {7, 9};
	struct ferry_capture_xdp_params xp = {.producer = 1,
					      .ifindex = ifindex,
					      .n_ports = 2,
					      .events_fd = -1};
	struct ferry_capture_xdp_ctrs xk;
	struct ferry_capture_params p;
	struct ferry_capture_xdp *x;
	struct ferry_cap_xdp_rec rec;
	struct ferry_capture *c;
	uint8_t s[sizeof(rec) + 104];
	char path[64];
	struct ng *g;
	struct rd r;

	(void)state;
	tmp_path(path, sizeof(path));
	p = params(path);
	p.n_ports = 2;
	p.n_producers = 2; /* a worker, and the XDP consumer */
	c = cap_create(&p);
	xp.cap = c;
	x = ferry_capture_xdp_create(&xp);
	assert_non_null(x);

	rec = (struct ferry_cap_xdp_rec){.ts_ns = T0,
					 .ifindex = 9,
					 .rx_queue = 2,
					 .reason = FERRY_R_DROP_BAD_IHL,
					 .action = 1 /* XDP_DROP */,
					 .orig_len = 1500,
					 .cap_len = 100};
	memcpy(s, &rec, sizeof(rec));
	cf_build_udp(s + sizeof(rec), 100, 0, 42, 53);
	/* A perf sample is padded: a few bytes more than record + data. */
	assert_int_equal(ferry_capture_xdp_feed(x, s, sizeof(s)), 0);
	assert_int_equal(ferry_capture_xdp_feed(x, s, 10), -EINVAL);
	assert_int_equal(ferry_capture_xdp_feed(x, s, sizeof(rec) + 50),
			 -EINVAL);
	rec.orig_len = 60; /* cap_len 100 > orig_len */
	memcpy(s, &rec, sizeof(rec));
	assert_int_equal(ferry_capture_xdp_feed(x, s, sizeof(s)), -EINVAL);
	rec.orig_len = 1500;
	rec.reason = FERRY_R__COUNT;
	memcpy(s, &rec, sizeof(rec));
	assert_int_equal(ferry_capture_xdp_feed(x, s, sizeof(s)), -EINVAL);
	rec.reason = FERRY_R_DROP_RULE;
	rec.ifindex = 5;
	memcpy(s, &rec, sizeof(rec));
	assert_int_equal(ferry_capture_xdp_feed(x, s, sizeof(s)), -ENOENT);

	ferry_capture_xdp_ctrs(x, &xk);
	assert_int_equal(xk.records, 6);
	assert_int_equal(xk.queued, 1);
	assert_int_equal(xk.malformed, 4);
	assert_int_equal(xk.unknown_port, 1);
	assert_int_equal(xk.lost, 0);
	ferry_capture_xdp_destroy(x);
	assert_int_equal(ferry_capture_stop(c), 0);
	ferry_capture_destroy(c);

	g = ng_file(path);
	assert_int_equal(g->n_pkts, 1);
	assert_string_equal(g->ifname[g->pkts[0].if_id], "p1-rx");
	assert_string_equal(g->pkts[0].comment, "queue=2 xdp=drop_bad_ihl");
	assert_int_equal(g->pkts[0].caplen, 100);
	assert_int_equal(g->pkts[0].origlen, 1500);
	free(g);
	rd_file(path, &r, 4);
	assert_int_equal(r.n, 1);
	assert_memory_equal(r.p[0].data, s + sizeof(rec), 100);
	free(r.p);
	unlink(path);
}

/* Records of the kernel path's DEVMAP program: the egress's tx side. */
static void test_xdp_tx_records(void **state)
{
	static const uint32_t ifindex[] = {7, 9};
	struct ferry_capture_xdp_params xp = {.producer = 2,
					      .ifindex = ifindex,
					      .n_ports = 2,
					      .events_fd = -1,
					      .dir = FERRY_CAP_TX};
	struct ferry_capture_params p;
	struct ferry_capture_xdp *x;
	struct ferry_cap_xdp_rec rec;
	struct ferry_capture *c;
	uint8_t s[sizeof(rec) + 64];
	char path[64];
	struct ng *g;

	(void)state;
	tmp_path(path, sizeof(path));
	p = params(path);
	p.n_ports = 2;
	p.dirs = FERRY_CAP_BOTH;
	p.n_producers = 3; /* a worker, the classifier's, the DEVMAP's */
	c = cap_create(&p);
	xp.cap = c;
	x = ferry_capture_xdp_create(&xp);
	assert_non_null(x);
	rec = (struct ferry_cap_xdp_rec){.ts_ns = T0,
					 .ifindex = 9,
					 .reason = FERRY_R_DEV_REDIRECT,
					 .action = 2 /* XDP_PASS */,
					 .orig_len = 64,
					 .cap_len = 64};
	memcpy(s, &rec, sizeof(rec));
	cf_build_udp(s + sizeof(rec), 64, 0, 1, 53);
	assert_int_equal(ferry_capture_xdp_feed(x, s, sizeof(s)), 0);
	ferry_capture_xdp_destroy(x);
	assert_int_equal(ferry_capture_stop(c), 0);
	ferry_capture_destroy(c);

	g = ng_file(path);
	assert_int_equal(g->n_pkts, 1);
	assert_string_equal(g->ifname[g->pkts[0].if_id], "p1-tx");
	assert_string_equal(g->pkts[0].comment, "queue=0 xdp=dev_redirect");
	free(g);
	unlink(path);
}

/* Producers on their own threads against the writer thread (TSan). */
struct prod_arg {
	const struct ferry_capture_tap *t;
	uint32_t id, n, queued;
};

static void *producer(void *arg)
{
	struct prod_arg *a = arg;
	uint32_t i;

	for (i = 0; i < a->n; i++)
		a->queued +=
			push(a->t, T0 + i, (uint16_t)a->id, 0, 64, a->id, i, 1);
	return NULL;
}

static void test_producers(void **state)
{
	enum { NP = 2, N = 20000 };
	struct ferry_capture_params p;
	struct ferry_capture_ctrs k;
	struct prod_arg a[NP];
	pthread_t th[NP];
	struct ferry_capture *c;
	uint32_t last[NP], id, seq, queued = 0;
	char path[64];
	struct rd r;
	unsigned i;

	(void)state;
	tmp_path(path, sizeof(path));
	p = params(path);
	p.n_producers = NP;
	p.ring_bytes = 8192; /* 64 records: the writer falls behind, often */
	p.snaplen = 128;
	p.manual = false;
	c = cap_create(&p);
	for (i = 0; i < NP; i++) {
		a[i] = (struct prod_arg){
			.t = ferry_capture_tap(c, i, 0, FERRY_CAP_RX),
			.id = i,
			.n = N};
		assert_int_equal(pthread_create(&th[i], NULL, producer, &a[i]),
				 0);
	}
	for (i = 0; i < NP; i++) {
		pthread_join(th[i], NULL);
		queued += a[i].queued;
	}
	assert_int_equal(ferry_capture_stop(c), 0);
	ferry_capture_ctrs(c, &k);
	assert_int_equal(k.matched, NP * N);
	assert_int_equal(k.written, queued);
	ctrs_add_up(&k);
	ferry_capture_destroy(c);

	rd_file(path, &r, NP * N);
	assert_int_equal(r.n, queued);
	memset(last, 0xff, sizeof(last));
	for (i = 0; i < r.n; i++) {
		cf_read_ids(r.p[i].data, &id, &seq);
		assert_true(id < NP);
		/* Each ring is FIFO: a producer's frames stay in order. */
		if (last[id] != UINT32_MAX && seq <= last[id])
			fail_msg("producer %u: seq %u after %u", id, seq,
				 last[id]);
		last[id] = seq;
	}
	free(r.p);
	unlink(path);
}

/* The capture's threads start on the CPUs asked for, or not at all. */
static void *affinity_of_self(void *arg)
{
	cpu_set_t *set = arg;

	CPU_ZERO(set);
	pthread_getaffinity_np(pthread_self(), sizeof(*set), set);
	return NULL;
}

static void test_thread_cpus(void **state)
{
	struct ferry_capture_params p;
	struct ferry_capture *c;
	cpu_set_t set, allowed;
	pthread_t t;
	char path[64];
	int cpu, off = -1;

	(void)state;
	assert_int_equal(
		ferry_capture_thread(&t, 1ull << 0, affinity_of_self, &set), 0);
	pthread_join(t, NULL);
	assert_int_equal(CPU_COUNT(&set), 1);
	assert_true(CPU_ISSET(0, &set));
	/* A CPU this process may not run on: nothing starts. */
	assert_int_equal(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
	for (cpu = 63; cpu >= 0 && off < 0; cpu--)
		if (!CPU_ISSET(cpu, &allowed))
			off = cpu;
	if (off >= 0)
		assert_int_equal(ferry_capture_thread(&t, 1ull << off,
						      affinity_of_self, &set),
				 -EINVAL);
	/* A threaded capture pinned to CPU 0 writes as any other. */
	tmp_path(path, sizeof(path));
	p = params(path);
	p.manual = false;
	p.cpus = 1ull << 0;
	c = cap_create(&p);
	assert_true(push(ferry_capture_tap(c, 0, 0, FERRY_CAP_RX), T0, 0, 0, 64,
			 0, 1, 1));
	assert_int_equal(ferry_capture_stop(c), 0);
	{
		struct ferry_capture_info in;

		ferry_capture_info(c, &in);
		assert_int_equal(in.cpus, 1);
	}
	ferry_capture_destroy(c);
	unlink(path);
}

static const char *route_name(unsigned reason)
{
	static const char *const names[] = {"routed", "local"};

	return reason < 2 ? names[reason] : NULL;
}

/* The route app's verdicts: named by route_name, a number without it. */
static void test_route_verdicts(void **state)
{
	static const char *const want[] = {"queue=1 route=routed",
					   "queue=1 route=local",
					   "queue=1 route=9"};
	struct ferry_capture_params p;
	struct ferry_capture *c;
	char path[64];
	struct ng *g;
	unsigned i;

	(void)state;
	tmp_path(path, sizeof(path));
	p = params(path);
	p.route_name = route_name;
	c = cap_create(&p);
	for (i = 0; i < 3; i++)
		assert_true(push(
			ferry_capture_tap(c, 0, 0, FERRY_CAP_RX), T0 + i, 1,
			FERRY_CAP_VERDICT(FERRY_CAP_V_ROUTE, i < 2 ? i : 9), 64,
			0, i, 7777));
	assert_int_equal(ferry_capture_stop(c), 0);
	ferry_capture_destroy(c);
	g = ng_file(path);
	assert_int_equal(g->n_pkts, 3);
	for (i = 0; i < 3; i++)
		assert_string_equal(g->pkts[i].comment, want[i]);
	free(g);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filter_match),
		cmocka_unit_test(test_bad_filter),
		cmocka_unit_test(test_bad_output),
		cmocka_unit_test(test_ring_full),
		cmocka_unit_test(test_ring_wrap),
		cmocka_unit_test(test_rate_cap),
		cmocka_unit_test(test_count_limit),
		cmocka_unit_test(test_snaplen),
		cmocka_unit_test(test_pcapng_readers),
		cmocka_unit_test(test_route_verdicts),
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_client_gone),
		cmocka_unit_test(test_xdp_records),
		cmocka_unit_test(test_xdp_tx_records),
		cmocka_unit_test(test_producers),
		cmocka_unit_test(test_thread_cpus),
	};

	/* A pipe whose reader died must be an error, not a signal. */
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
