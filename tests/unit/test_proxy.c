// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_proxy - the splice proxy's address grammar (ferry_proxy_addr_parse
 * and ferry_proxy_addr_text in dataplane/local/proxy.c): what `proxy add` accepts
 * and the text `show config` writes back, which must parse to the same
 * address.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "proxy.h"

struct good_case {
	const char *in;
	const char *text; /* what show config writes */
	int family;
};

static const struct good_case goods[] = {
	{"10.0.0.1:80", "10.0.0.1:80", AF_INET},
	{"0.0.0.0:65535", "0.0.0.0:65535", AF_INET},
	{"[::1]:1", "[::1]:1", AF_INET6},
	{"[2001:db8:0::1]:8443", "[2001:db8::1]:8443", AF_INET6},
};

struct bad_case {
	const char *in;
	int err;
};

static const struct bad_case bads[] = {
	{"10.0.0.1", -EINVAL},
	{"10.0.0.1:", -EINVAL},
	{":80", -EINVAL},
	{"10.0.0.300:80", -EINVAL},
	{"::1:80", -EINVAL},
	{"[::1]80", -EINVAL},
	{"[::1:80", -EINVAL},
	{"[10.0.0.1]:80", -EINVAL},
	{"host:80", -EINVAL},
	{"10.0.0.1:8x", -EINVAL},
	{"10.0.0.1:-1", -EINVAL},
	{"10.0.0.1:0", -ERANGE},
	{"10.0.0.1:65536", -ERANGE},
	{"10.0.0.1:99999999999", -EINVAL},
};

static void test_good(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(goods) / sizeof(goods[0]); i++) {
		struct ferry_proxy_addr a, b;
		char text[64];
		struct ferry_err msg = {""};

		assert_int_equal(ferry_proxy_addr_parse(goods[i].in, &a, &msg),
				 0);
		assert_int_equal(a.ss.ss_family, goods[i].family);
		ferry_proxy_addr_text(&a, text, sizeof(text));
		assert_string_equal(text, goods[i].text);
		/* The text parses back to the same address. */
		assert_int_equal(ferry_proxy_addr_parse(text, &b, &msg), 0);
		assert_int_equal(a.len, b.len);
		assert_memory_equal(&a.ss, &b.ss, a.len);
	}
}

static void test_bad(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		struct ferry_proxy_addr a;
		struct ferry_err msg = {""};
		int rc = ferry_proxy_addr_parse(bads[i].in, &a, &msg);

		if (rc != bads[i].err)
			fprintf(stderr, "'%s': expected %d, got %d (%s)\n",
				bads[i].in, bads[i].err, rc, msg.msg);
		assert_int_equal(rc, bads[i].err);
		/* The message names the input, so the operator sees it. */
		assert_non_null(strstr(msg.msg, bads[i].in));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
