// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_sockmap - the argument parsers of `sockmap attach` (port lists and
 * verdict modes), from a table of cases: what is accepted, as which ranges,
 * and what is refused with which error.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ports),
		cmocka_unit_test(test_modes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
