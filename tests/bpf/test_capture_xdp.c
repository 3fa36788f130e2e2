// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_capture_xdp - the XDP capture record through the kernel: a program
 * making the classifier's capture call (progs/capture_xdp.bpf.c) runs on a
 * frame with BPF_PROG_TEST_RUN, the kernel's bpf_perf_event_output() emits the
 * sample into a perf event array, dataplane/capture/capture_xdp.c reads it with
 * libbpf's perf_buffer on its thread, and the capture writes the file,
 * whose blocks are walked here (libpcap's headers clash with the kernel's
 * <linux/bpf.h> over struct bpf_insn; test_capture reads with libpcap). Checks the record layout, the sample's padding
 * and the verdict comment against the real helper, not a synthetic record.
 * That program's maps are checked against the classifier's own.
 *
 * test_kernel_records needs root (BPF, perf events): skipped when not root,
 * failed under CI. test_maps_match_classifier only opens the two objects.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "capture.h"
#include "capture_frames.h"
#include "capture_xdp.h"
#include "ferry_abi.h"
#include "ferry_capture_abi.h"
#include "ferry_xdp.skel.h"

#define N_FRAMES 5
#define SNAP	 64
#define LEN	 200

static bool need_root(void)
{
	const char *ci = getenv("CI");

	if (geteuid() == 0)
		return true;
	if (ci && !strcmp(ci, "true"))
		fail_msg("test_capture_xdp needs root (BPF and perf events)");
	return false;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* The file's Enhanced Packet Blocks: [i] = offset of block i. */
static unsigned epbs(const uint8_t *b, size_t n, size_t *off, unsigned max)
{
	size_t o = 0;
	unsigned k = 0;

	while (o + 12 <= n && k < max) {
		uint32_t len = rd32(b + o + 4);

		assert_true(len >= 12 && o + len <= n);
		if (rd32(b + o) == 6)
			off[k++] = o;
		o += len;
	}
	return k;
}

static void test_kernel_records(void **state)
{
	struct ferry_cap_xdp_cfg cfg = {.reasons = 1ull << FERRY_R_DROP_RULE,
					.snaplen = SNAP};
	struct ferry_capture_xdp_params xp = {.n_ports = 1};
	struct ferry_capture_params p = {0};
	struct ferry_capture_xdp_ctrs xk;
	struct ferry_capture_ctrs k;
	static const char *const ports[] = {"p0"};
	struct ferry_capture_xdp *x;
	struct ferry_capture *c;
	struct bpf_object *obj;
	struct bpf_program *prog;
	char path[64];
	struct ferry_err msg;
	static uint8_t buf[1 << 16];
	size_t off[8], n;
	FILE *f;
	uint32_t ifindex = if_nametoindex("lo"), zero = 0, id, seq;
	uint8_t frame[LEN];
	unsigned i, waited;
	int fd;

	(void)state;
	if (!need_root())
		skip();
	assert_true(ifindex > 0);
	obj = bpf_object__open_file(BPF_TEST_OBJ, NULL);
	assert_non_null(obj);
	assert_int_equal(bpf_object__load(obj), 0);
	prog = bpf_object__find_program_by_name(obj, "capture_xdp_test");
	assert_non_null(prog);
	assert_int_equal(
		bpf_map_update_elem(bpf_object__find_map_fd_by_name(
					    obj, FERRY_CAP_CFG_MAP_NAME),
				    &zero, &cfg, 0),
		0);

	snprintf(path, sizeof(path), "/tmp/ferry_cap_xdp_XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	p = (struct ferry_capture_params){.name = "x",
					  .ports = ports,
					  .n_ports = 1,
					  .n_producers = 1,
					  .snaplen = SNAP,
					  .path = path,
					  .fd = -1,
					  .flush_ms = 10};
	c = ferry_capture_create(&p, &msg);
	if (!c)
		fail_msg("capture: %s", msg.msg);
	xp.cap = c;
	xp.ifindex = &ifindex;
	xp.events_fd =
		bpf_object__find_map_fd_by_name(obj, FERRY_CAP_EVENTS_MAP_NAME);
	x = ferry_capture_xdp_create(&xp);
	if (!x)
		fail_msg("capture_xdp: %s", strerror(errno));

	for (i = 0; i < N_FRAMES; i++) {
		struct xdp_md ctx = {.data_end = LEN,
				     .ingress_ifindex = ifindex};
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame,
			    .data_size_in = LEN, .ctx_in = &ctx,
			    .ctx_size_in = sizeof(ctx), .repeat = 1);

		cf_build_udp(frame, LEN, 9, i, 7777);
		assert_int_equal(
			bpf_prog_test_run_opts(bpf_program__fd(prog), &opts),
			0);
		assert_int_equal(opts.retval, 1 /* XDP_DROP */);
	}
	/* The polling thread queues them; bounded wait, not a timing check. */
	for (waited = 0; waited < 3000; waited++) {
		ferry_capture_xdp_ctrs(x, &xk);
		if (xk.queued + xk.malformed + xk.unknown_port >= N_FRAMES)
			break;
		nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
	}
	ferry_capture_xdp_destroy(x);
	assert_int_equal(xk.queued, N_FRAMES);
	assert_int_equal(xk.malformed, 0);
	assert_int_equal(ferry_capture_stop(c), 0);
	ferry_capture_ctrs(c, &k);
	assert_int_equal(k.written, N_FRAMES);
	ferry_capture_destroy(c);
	bpf_object__close(obj);

	f = fopen(path, "rb");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	assert_int_equal(epbs(buf, n, off, 8), N_FRAMES);
	for (i = 0; i < N_FRAMES; i++) {
		const uint8_t *e = buf + off[i];
		uint64_t ts = (uint64_t)rd32(e + 12) << 32 | rd32(e + 16);

		assert_int_equal(rd32(e + 20), SNAP); /* captured */
		assert_int_equal(rd32(e + 24), LEN);  /* original */
		cf_read_ids(e + 28, &id, &seq);
		assert_int_equal(id, 9);
		assert_int_equal(seq, i);
		/* bpf_ktime_get_ns() turned into wall-clock ns. */
		assert_true(llabs((long long)(ts / 1000000000ull) -
				  (long long)time(NULL)) < 3600);
	}
	assert_non_null(memmem(buf, n, "queue=0 xdp=drop_rule", 21));
	unlink(path);
}

static void same_u32(const char *map, const char *what, uint32_t want,
		     uint32_t got)
{
	if (want != got)
		fail_msg("%s: %s is %u in the classifier, %u in "
			 "progs/capture_xdp.bpf.c",
			 map, what, want, got);
}

/* The name of the map's value type in BTF, "" when it has none. */
static const char *value_type(const struct bpf_object *obj,
			      const struct bpf_map *map)
{
	const struct btf *btf = bpf_object__btf(obj);
	uint32_t id = bpf_map__btf_value_type_id(map);
	const struct btf_type *t;

	if (!btf || !id)
		return "";
	t = btf__type_by_id(btf, id);
	return t ? btf__name_by_offset(btf, t->name_off) : "";
}

/*
 * The test program declares its own copy of the capture maps, which
 * bpf/ferry_xdp.bpf.c owns: the copy must be the classifier's, or
 * test_kernel_records checks what the classifier does not do. Both objects
 * are only opened (no privileges needed): the maps as declared.
 */
static void test_maps_match_classifier(void **state)
{
	static const char *const names[] = {FERRY_CAP_EVENTS_MAP_NAME,
					    FERRY_CAP_CFG_MAP_NAME};
	struct ferry_xdp_bpf *skel;
	struct bpf_object *obj;
	unsigned i;

	(void)state;
	skel = ferry_xdp_bpf__open();
	assert_non_null(skel);
	obj = bpf_object__open_file(BPF_TEST_OBJ, NULL);
	assert_non_null(obj);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct bpf_map *a, *b;

		a = bpf_object__find_map_by_name(skel->obj, names[i]);
		b = bpf_object__find_map_by_name(obj, names[i]);
		if (!a || !b)
			fail_msg("map %s: %s in the classifier, %s in the "
				 "test program",
				 names[i], a ? "present" : "absent",
				 b ? "present" : "absent");
		same_u32(names[i], "type", bpf_map__type(a), bpf_map__type(b));
		same_u32(names[i], "key size", bpf_map__key_size(a),
			 bpf_map__key_size(b));
		same_u32(names[i], "value size", bpf_map__value_size(a),
			 bpf_map__value_size(b));
		same_u32(names[i], "max entries", bpf_map__max_entries(a),
			 bpf_map__max_entries(b));
		same_u32(names[i], "flags", bpf_map__map_flags(a),
			 bpf_map__map_flags(b));
		if (strcmp(value_type(skel->obj, a), value_type(obj, b)))
			fail_msg("%s: value type '%s' in the classifier, '%s' "
				 "in the test program",
				 names[i], value_type(skel->obj, a),
				 value_type(obj, b));
	}
	bpf_object__close(obj);
	ferry_xdp_bpf__destroy(skel);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_maps_match_classifier),
		cmocka_unit_test(test_kernel_records),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
