// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_sockmap - the argument parsers of `sockmap attach` (port lists and
 * verdict modes) and `sockmap policy` (services, decisions), from tables of
 * cases: what is accepted, as what, and what is refused with which error;
 * the learning rule (ferry_abi.h) on the evidence of typical services; and
 * the policy table of a detached sockmap object; cgroup paths resolved to
 * ids, and policies by cgroup (on the host's cgroup2 mount: a child made
 * and removed here; its absence fails under CI=true).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sockmap.h"

struct ports_case {
	const char *in;
	int rc;
	const char *ranges; /* "lo-hi,lo-hi" when rc == 0 */
};

static const struct ports_case ports_cases[] = {
	{"80", 0, "80-80"},
	{"1,65535", 0, "1-1,65535-65535"},
	{"7000-7010,7020", 0, "7000-7010,7020-7020"},
	{"5-5", 0, "5-5"},
	{"1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16", 0,
	 "1-1,2-2,3-3,4-4,5-5,6-6,7-7,8-8,9-9,10-10,11-11,12-12,13-13,"
	 "14-14,15-15,16-16"},
	{"1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17", -E2BIG, NULL},
	{"", -EINVAL, NULL},
	{"0", -EINVAL, NULL},
	{"65536", -EINVAL, NULL},
	{"-5", -EINVAL, NULL},
	{"5-", -EINVAL, NULL},
	{"10-5", -EINVAL, NULL},
	{"80,", -EINVAL, NULL},
	{",80", -EINVAL, NULL},
	{"80,,81", -EINVAL, NULL},
	{"http", -EINVAL, NULL},
	{"80 ", -EINVAL, NULL},
	{"+80", -EINVAL, NULL},
	{"1-2-3", -EINVAL, NULL},
	{"0x50", -EINVAL, NULL},
	{"99999999999999999999", -EINVAL, NULL},
};

static void test_ports(void **state)
{
	struct ferry_sm_port_range r[FERRY_SM_MAX_RANGES];
	char got[512];
	struct ferry_err msg;
	size_t i, off;
	unsigned n, j;

	(void)state;
	for (i = 0; i < sizeof(ports_cases) / sizeof(ports_cases[0]); i++) {
		const struct ports_case *c = &ports_cases[i];
		int rc;

		msg.msg[0] = '\0';
		rc = ferry_sockmap_parse_ports(c->in, r, &n, &msg);
		if (rc != c->rc)
			fail_msg("ports '%s': expected %d, got %d (%s)", c->in,
				 c->rc, rc, msg.msg);
		if (rc) {
			/* A refusal always says why. */
			if (!msg.msg[0])
				fail_msg("ports '%s': no message", c->in);
			continue;
		}
		for (j = 0, off = 0; j < n; j++)
			off += snprintf(got + off, sizeof(got) - off, "%s%u-%u",
					j ? "," : "", r[j].lo, r[j].hi);
		if (strcmp(got, c->ranges))
			fail_msg("ports '%s': expected %s, got %s", c->in,
				 c->ranges, got);
	}
}

static void test_modes(void **state)
{
	static const char *const names[] = {"auto", "permanent", "apply-bytes",
					    "per-message"};
	size_t i;
	int m;

	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		assert_int_equal(ferry_sockmap_mode_parse(names[i], &m), 0);
		assert_string_equal(ferry_sockmap_mode_name(m), names[i]);
	}
	assert_int_equal(ferry_sockmap_mode_parse("Permanent", &m), -EINVAL);
	assert_int_equal(ferry_sockmap_mode_parse("", &m), -EINVAL);
	assert_string_equal(ferry_sockmap_mode_name(99), "?");
}

struct service_case {
	const char *in;
	int rc;
	const char *text; /* as printed back, when rc == 0 */
	int family;
};

static const struct service_case service_cases[] = {
	{"6379", 0, "6379", 0},
	{"65535", 0, "65535", 0},
	{"127.0.0.1:6379", 0, "127.0.0.1:6379", 4},
	{"[::1]:80", 0, "[::1]:80", 6},
	{"[fd00::1:2]:443", 0, "[fd00::1:2]:443", 6},
	/* A dual-stack listener's sockets are keyed as IPv4. */
	{"[::ffff:127.0.0.1]:7000", 0, "127.0.0.1:7000", 4},
	{"", -EINVAL, NULL, 0},
	{"0", -EINVAL, NULL, 0},
	{"65536", -EINVAL, NULL, 0},
	{"redis", -EINVAL, NULL, 0},
	{"127.0.0.1", -EINVAL, NULL, 0},
	{"127.0.0.1:", -EINVAL, NULL, 0},
	{":80", -EINVAL, NULL, 0},
	{"1.2.3:80", -EINVAL, NULL, 0},
	{"::1:80", -EINVAL, NULL, 0},
	{"[::1:80", -EINVAL, NULL, 0},
	{"[::1]80", -EINVAL, NULL, 0},
	{"[]:80", -EINVAL, NULL, 0},
	{"127.0.0.1:0", -EINVAL, NULL, 0},
	{"127.0.0.1:http", -EINVAL, NULL, 0},
};

static void test_services(void **state)
{
	struct ferry_sm_policy_key k;
	struct ferry_err msg;
	char got[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(service_cases) / sizeof(service_cases[0]); i++) {
		const struct service_case *c = &service_cases[i];
		int rc;

		msg.msg[0] = '\0';
		rc = ferry_sockmap_service_parse(c->in, &k, &msg);
		if (rc != c->rc)
			fail_msg("service '%s': expected %d, got %d (%s)",
				 c->in, c->rc, rc, msg.msg);
		if (rc) {
			if (!msg.msg[0])
				fail_msg("service '%s': no message", c->in);
			continue;
		}
		ferry_sockmap_service_text(&k, got, sizeof(got));
		if (strcmp(got, c->text) || k.family != c->family)
			fail_msg("service '%s': expected %s (family %d), got "
				 "%s (family %d)",
				 c->in, c->text, c->family, got, k.family);
	}
}

static void test_decisions(void **state)
{
	static const char *const names[] = {"learn", "plain", "redirect"};
	size_t i;
	int d;

	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		assert_int_equal(ferry_sockmap_decision_parse(names[i], &d), 0);
		assert_int_equal(d, (int)i);
		assert_string_equal(ferry_sockmap_decision_name(d), names[i]);
	}
	assert_int_equal(ferry_sockmap_decision_parse("Redirect", &d), -EINVAL);
	assert_int_equal(ferry_sockmap_decision_parse("", &d), -EINVAL);
	assert_string_equal(ferry_sockmap_decision_name(FERRY_SM__DECISIONS),
			    "?");
}

/*
 * The learning rule (ferry_abi.h), with the thresholds the sockops program
 * is loaded with: a service's evidence in, its shape, decision and reason
 * out. The numbers are the evidence real traffic leaves (t_sockmap_learn):
 * 1 KiB stream writes, redis-like 64 B/128 B turns.
 */
struct rule_case {
	const char *what;
	__u64 samples, bytes, writes, turns;
	__u32 shape, decision, reason;
};

static const struct rule_case rule_cases[] = {
	{"nothing measured", 0, 0, 0, 0, FERRY_SM_SHAPE_NONE, FERRY_SM_D_LEARN,
	 FERRY_SM_R_LEARNING},
	{"request/response, 3 of 4 sockets", 3, 3 * 2000 * 96, 3 * 2000,
	 3 * 2000, FERRY_SM_SHAPE_REQ_RESP, FERRY_SM_D_LEARN,
	 FERRY_SM_R_LEARNING},
	{"1 KiB stream, 3 of 4 sockets", 3, 3 << 22, 3 << 12, 0,
	 FERRY_SM_SHAPE_STREAM, FERRY_SM_D_LEARN, FERRY_SM_R_LEARNING},
	{"request/response 64 B/128 B", 4, 4000 * 192, 8000, 7998,
	 FERRY_SM_SHAPE_REQ_RESP, FERRY_SM_D_REDIRECT, FERRY_SM_R_REQ_RESP},
	{"1 KiB stream", 4, 16000000, 15625, 0, FERRY_SM_SHAPE_STREAM,
	 FERRY_SM_D_PLAIN, FERRY_SM_R_SMALL_STREAM},
	{"1 KiB stream, a rare reply", 4, 16000000, 15625, 3,
	 FERRY_SM_SHAPE_STREAM, FERRY_SM_D_PLAIN, FERRY_SM_R_SMALL_STREAM},
	{"64 KiB stream", 4, 64 << 20, 1024, 0, FERRY_SM_SHAPE_STREAM,
	 FERRY_SM_D_REDIRECT, FERRY_SM_R_LARGE_WRITES},
	{"mean write exactly 16 KiB", 4, 100 * 16384, 100, 0,
	 FERRY_SM_SHAPE_STREAM, FERRY_SM_D_REDIRECT, FERRY_SM_R_LARGE_WRITES},
	{"mean write a byte below 16 KiB", 4, 100 * 16384 - 1, 100, 0,
	 FERRY_SM_SHAPE_STREAM, FERRY_SM_D_PLAIN, FERRY_SM_R_SMALL_STREAM},
	{"exactly 16 KiB per turn", 4, 10 * 16384, 160, 10,
	 FERRY_SM_SHAPE_REQ_RESP, FERRY_SM_D_REDIRECT, FERRY_SM_R_REQ_RESP},
	{"a byte over 16 KiB per turn, 1 KiB writes", 4, 10 * 16384 + 1, 160,
	 10, FERRY_SM_SHAPE_STREAM, FERRY_SM_D_PLAIN, FERRY_SM_R_SMALL_STREAM},
	{"1 MiB responses in 64 KiB writes", 8, 10 << 20, 160, 10,
	 FERRY_SM_SHAPE_STREAM, FERRY_SM_D_REDIRECT, FERRY_SM_R_LARGE_WRITES},
};

static void test_rule(void **state)
{
	const struct ferry_sm_rule rule = {
		.learn_samples = 4,
		.rr_max_bytes_per_turn = 16384,
		.min_mean_write = 16384,
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rule_cases) / sizeof(rule_cases[0]); i++) {
		const struct rule_case *c = &rule_cases[i];
		struct ferry_sm_svc s = {
			.samples = c->samples,
			.ev_bytes = c->bytes,
			.ev_writes = c->writes,
			.ev_turns = c->turns,
		};
		__u32 reason = FERRY_SM__REASONS, d, shape;

		shape = ferry_sm_shape_of(&s, &rule);
		d = ferry_sm_learned(&s, &rule, &reason);
		if (shape != c->shape || d != c->decision ||
		    reason != c->reason)
			fail_msg("%s: expected shape %u decision %s reason %u, "
				 "got shape %u decision %s reason %u",
				 c->what, c->shape,
				 ferry_sockmap_decision_name((int)c->decision),
				 c->reason, shape,
				 ferry_sockmap_decision_name((int)d), reason);
	}
}

/* Policies: added, replaced, listed in order, removed; the table's bound. */
static void test_policies(void **state)
{
	struct ferry_sockmap *sm = ferry_sockmap_create();
	struct ferry_sockmap_policy p = {0}, got;
	struct ferry_err msg;
	unsigned i;

	(void)state;
	assert_non_null(sm);
	assert_int_equal(ferry_sockmap_service_parse("6379", &p.key, &msg), 0);
	p.decision = FERRY_SM_D_REDIRECT;
	assert_int_equal(ferry_sockmap_policy_add(sm, &p, &msg), 0);
	p.decision = FERRY_SM_D_PLAIN;
	assert_int_equal(ferry_sockmap_policy_add(sm, &p, &msg), 0);
	assert_int_equal(ferry_sockmap_policy_get(sm, 0, &got), 0);
	assert_int_equal(got.decision, FERRY_SM_D_PLAIN);
	assert_int_equal(ferry_sockmap_policy_get(sm, 1, &got), -ENOENT);
	for (i = 1; i < FERRY_SM_MAX_POLICIES; i++) {
		p.key.port = (uint16_t)(10000 + i);
		assert_int_equal(ferry_sockmap_policy_add(sm, &p, &msg), 0);
	}
	p.key.port = 9;
	assert_int_equal(ferry_sockmap_policy_add(sm, &p, &msg), -ENOSPC);
	assert_int_equal(ferry_sockmap_policy_del(sm, &p, &msg), -ENOENT);
	p.key.port = 6379;
	assert_int_equal(ferry_sockmap_policy_del(sm, &p, &msg), 0);
	assert_int_equal(ferry_sockmap_policy_get(sm, 0, &got), 0);
	assert_int_equal(got.key.port, 10001);
	ferry_sockmap_destroy(sm);
}

/* Paths that are no cgroup are refused, each with its reason. */
static void test_cgroup_refused(void **state)
{
	struct ferry_sockmap *sm = ferry_sockmap_create();
	struct ferry_sockmap_policy p = {0};
	struct ferry_err msg;
	uint64_t id;

	(void)state;
	assert_non_null(sm);
	assert_int_equal(
		ferry_sockmap_cgroup_id("/nonexistent-ferry-cg", &id, &msg),
		-ENOENT);
	assert_non_null(strstr(msg.msg, "no such cgroup"));
	/* Relative: under /sys/fs/cgroup, said in the message. */
	assert_int_equal(
		ferry_sockmap_cgroup_id("nonexistent-ferry-cg", &id, &msg),
		-ENOENT);
	assert_non_null(
		strstr(msg.msg, FERRY_SM_CGROUP_ROOT "/nonexistent-ferry-cg"));
	assert_int_equal(ferry_sockmap_cgroup_id("/proc", &id, &msg), -EINVAL);
	assert_non_null(strstr(msg.msg, "not on a cgroup v2 mount"));
	assert_int_equal(ferry_sockmap_cgroup_id("", &id, &msg), -EINVAL);
	/* A policy with such a cgroup is not added. */
	assert_int_equal(ferry_sockmap_service_parse("6379", &p.key, &msg), 0);
	p.decision = FERRY_SM_D_REDIRECT;
	p.cgroup = "/proc";
	assert_int_equal(ferry_sockmap_policy_add(sm, &p, &msg), -EINVAL);
	p.cgroup = "/sys/fs/cgroup/a\"b";
	assert_int_equal(ferry_sockmap_policy_add(sm, &p, &msg), -EINVAL);
	assert_int_equal(ferry_sockmap_policy_get(sm, 0, &p), -ENOENT);
	ferry_sockmap_destroy(sm);
}

/* The first cgroup2 mount of the host, or NULL. */
static const char *cgroup2_mount(char *buf, size_t len)
{
	FILE *f = setmntent("/proc/self/mounts", "r");
	struct mntent *m;
	const char *found = NULL;

	if (!f)
		return NULL;
	while ((m = getmntent(f)))
		if (!strcmp(m->mnt_type, "cgroup2")) {
			snprintf(buf, len, "%s", m->mnt_dir);
			found = buf;
			break;
		}
	endmntent(f);
	return found;
}

/* A child cgroup for the test, its path in *state; "" when none could be
 * made (the test then fails under CI=true, else skips). */
static int cg_setup(void **state)
{
	char mnt[256], *dir = calloc(1, 512);

	if (!dir)
		return -1;
	if (cgroup2_mount(mnt, sizeof(mnt))) {
		snprintf(dir, 512, "%s/ferry-unit-%d", mnt, (int)getpid());
		if (mkdir(dir, 0755))
			dir[0] = 0;
	}
	*state = dir;
	return 0;
}

/* Removes what the test left, failed asserts included. */
static int cg_teardown(void **state)
{
	char *dir = *state;

	if (dir[0])
		rmdir(dir);
	free(dir);
	return 0;
}

/*
 * A real cgroup: its id is its inode; a policy by cgroup is another row
 * than the same service without one, shows its path, and is removed by
 * its path even once the cgroup is gone.
 */
static void test_cgroup_policies(void **state)
{
	const char *dir = *state, *ci = getenv("CI");
	struct ferry_sockmap *sm;
	struct ferry_sockmap_policy p = {0}, got;
	struct ferry_err msg;
	struct stat st;
	uint64_t id;

	if (!dir[0]) {
		if (ci && !strcmp(ci, "true"))
			fail_msg("no cgroup2 mount to make a child cgroup in");
		skip();
	}
	sm = ferry_sockmap_create();
	assert_non_null(sm);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(ferry_sockmap_cgroup_id(dir, &id, &msg), 0);
	assert_true(id == (uint64_t)st.st_ino);

	assert_int_equal(ferry_sockmap_service_parse("6379", &p.key, &msg), 0);
	p.decision = FERRY_SM_D_PLAIN;
	p.key.cgroup = 12345; /* ignored without a cgroup */
	assert_int_equal(ferry_sockmap_policy_add(sm, &p, &msg), 0);
	p.decision = FERRY_SM_D_REDIRECT;
	p.cgroup = dir;
	assert_int_equal(ferry_sockmap_policy_add(sm, &p, &msg), 0);
	assert_int_equal(ferry_sockmap_policy_get(sm, 0, &got), 0);
	assert_true(got.key.cgroup == 0);
	assert_null(got.cgroup);
	assert_int_equal(got.decision, FERRY_SM_D_PLAIN);
	assert_int_equal(ferry_sockmap_policy_get(sm, 1, &got), 0);
	assert_true(got.key.cgroup == id);
	assert_string_equal(got.cgroup, dir);
	assert_int_equal(got.decision, FERRY_SM_D_REDIRECT);
	/* The same service and cgroup again: replaced, not added. */
	p.decision = FERRY_SM_D_LEARN;
	assert_int_equal(ferry_sockmap_policy_add(sm, &p, &msg), 0);
	assert_int_equal(ferry_sockmap_policy_get(sm, 2, &got), -ENOENT);
	assert_int_equal(ferry_sockmap_policy_get(sm, 1, &got), 0);
	assert_int_equal(got.decision, FERRY_SM_D_LEARN);

	/* del without the cgroup takes the row without one. */
	p.cgroup = NULL;
	assert_int_equal(ferry_sockmap_policy_del(sm, &p, &msg), 0);
	assert_int_equal(ferry_sockmap_policy_get(sm, 0, &got), 0);
	assert_true(got.key.cgroup == id);
	assert_int_equal(ferry_sockmap_policy_del(sm, &p, &msg), -ENOENT);
	/* The cgroup gone, its policy is still removed by its path. */
	assert_int_equal(rmdir(dir), 0);
	p.cgroup = dir;
	assert_int_equal(ferry_sockmap_policy_add(sm, &p, &msg), -ENOENT);
	assert_int_equal(ferry_sockmap_policy_del(sm, &p, &msg), 0);
	assert_int_equal(ferry_sockmap_policy_get(sm, 0, &got), -ENOENT);
	ferry_sockmap_destroy(sm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ports),
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_services),
		cmocka_unit_test(test_decisions),
		cmocka_unit_test(test_rule),
		cmocka_unit_test(test_policies),
		cmocka_unit_test(test_cgroup_refused),
		cmocka_unit_test_setup_teardown(test_cgroup_policies, cg_setup,
						cg_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
