// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_render - ferryctl's text for people: numbers with thousands
 * separated, rates scaled, lines folded to the width limit, and the stats
 * layout (per-port blocks) against replies with fields it does not know.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"

/* ---- helpers ---- */

struct capture {
	char *buf;
	size_t len;
	FILE *f;
};

static void capture_open(struct capture *c)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	assert_non_null(c->f);
}

static void capture_close(struct capture *c)
{
	assert_int_equal(fclose(c->f), 0);
}

/* Widest line of text, in columns. */
static size_t widest(const char *text)
{
	size_t w = 0;

	while (*text) {
		size_t n = strcspn(text, "\n");
		char *line = strndup(text, n);

		if (render_text_width(line) > w)
			w = render_text_width(line);
		free(line);
		text += n + (text[n] ? 1 : 0);
	}
	return w;
}

/* ---- numbers ---- */

static void test_count(void **state)
{
	static const struct {
		long long n;
		const char *want;
	} cases[] = {
		{0, "0"},
		{7, "7"},
		{999, "999"},
		{1000, "1,000"},
		{12345, "12,345"},
		{123456, "123,456"},
		{1234567, "1,234,567"},
		{-1234567, "-1,234,567"},
		{LLONG_MAX, "9,223,372,036,854,775,807"},
		{LLONG_MIN, "-9,223,372,036,854,775,808"},
	};
	char buf[40];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_string_equal(render_count(cases[i].n, buf, sizeof(buf)),
				    cases[i].want);
	/* A buffer too small for the separators still gets the digits. */
	assert_string_equal(render_count(1234567, buf, 9), "1234567");
}

static void test_rate(void **state)
{
	static const struct {
		double v;
		const char *want;
	} cases[] = {
		{0, "0"},	    {-5, "0"},		 {999, "999"},
		{1000, "1.00 k"},   {19200, "19.2 k"},	 {9.82e6, "9.82 M"},
		{123.4e6, "123 M"}, {14.88e9, "14.9 G"},
	};
	char buf[32];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_string_equal(render_rate(cases[i].v, buf, sizeof(buf)),
				    cases[i].want);
}

/* ---- folding ---- */

static void test_fold(void **state)
{
	const char *text = "short line\n"
			   "  a line of words that is longer than the "
			   "thirty columns it may take\n"
			   "0123456789012345678901234567890123456789\n"
			   "  \xc3\xa9t\xc3\xa9 \xc3\xa9t\xc3\xa9 \xc3\xa9t\xc3"
			   "\xa9 \xc3\xa9t\xc3\xa9 \xc3\xa9t\xc3\xa9 \xc3\xa9t"
			   "\xc3\xa9 \xc3\xa9t\xc3\xa9 \xc3\xa9t\xc3\xa9\n";
	struct capture c;

	(void)state;
	capture_open(&c);
	assert_int_equal(render_fold(text, strlen(text), 30, c.f), 0);
	capture_close(&c);
	printf("%s", c.buf);
	assert_true(widest(c.buf) <= 30);
	/* Unchanged when short; folded at a blank, four columns deeper. */
	assert_non_null(strstr(c.buf, "short line\n"));
	assert_non_null(strstr(c.buf, "\n  a line of words that is\n"
				      "      longer than the thirty\n"));
	/* No blank: cut hard, nothing lost. */
	assert_non_null(strstr(c.buf, "012345678901234567890123456789\n"
				      "    0123456789\n"));
	/* Two-byte characters take one column each: 8 words of 4 fit 30. */
	assert_non_null(strstr(c.buf, "\xc3\xa9t\xc3\xa9\n      "));
	free(c.buf);
}

/* ---- the stats layout ---- */

static const char *stats_reply =
	"{\"ports\":[{\"name\":\"p0\",\"ifname\":\"veth0\","
	"\"totals\":{\"rx_packets\":1234567,\"rx_bytes\":79012288,"
	"\"tx_packets\":0,\"tx_bytes\":0,\"tx_kicks\":0,\"rx_ring_full\":7,"
	"\"future_counter\":42,\"drops\":12,\"drop_reasons\":{\"no_app\":0,"
	"\"no_tx_queue\":12,\"future_reason\":0},\"rx_pps\":1000.0,"
	"\"tx_pps\":0.0},"
	"\"queues\":[{\"queue\":0,\"worker\":0,\"rx_packets\":1234567,"
	"\"rx_bytes\":79012288,\"tx_packets\":0,\"tx_bytes\":0,\"drops\":12,"
	"\"drop_reasons\":{\"no_tx_queue\":12}},{\"queue\":1,\"worker\":-1,"
	"\"rx_packets\":0,\"rx_bytes\":0,\"tx_packets\":0,\"tx_bytes\":0,"
	"\"drops\":0}],"
	"\"xdp\":{\"xsk_redirect\":1234567,\"drop_rule\":0},"
	"\"path\":\"xsk\",\"host_frames\":0,"
	"\"future_object\":{\"a\":{\"deep\":[1,2,{\"x\":1}]}}}],"
	"\"workers\":[{\"id\":0,\"cpu\":2,\"idle\":\"busy\",\"sockets\":2,"
	"\"rx_packets\":1234567,\"tx_packets\":0,\"loops\":99999,"
	"\"rx_pps\":1000.0,\"busy_share\":0.25}]}";

static char *draw(const json_t *data, const json_t *prev, double dt, bool all)
{
	struct capture c;

	capture_open(&c);
	assert_int_equal(render_stats(c.f, data, prev, dt, all, 120), 0);
	capture_close(&c);
	printf("%s\n", c.buf);
	return c.buf;
}

static void test_stats_layout(void **state)
{
	json_t *data = json_loads(stats_reply, 0, NULL);
	char *out, *all;

	(void)state;
	assert_non_null(data);
	out = draw(data, NULL, 0, false);
	/* A block per port; totals with thousands; the daemon's pps. */
	assert_non_null(strstr(out, "p0  veth0\n"));
	assert_non_null(strstr(out, "RX        1,234,567"));
	assert_non_null(strstr(out, "1.00 k"));
	/* Drop reasons by name; the zero ones left out. */
	assert_non_null(strstr(out, "dropped 12: no_tx_queue 12\n"));
	assert_null(strstr(out, "future_reason"));
	/* Counters and fields it does not know: shown, zero ones only -a. */
	assert_non_null(strstr(out, "future_counter 42"));
	assert_non_null(strstr(out, "path xsk"));
	assert_null(strstr(out, "host_frames"));
	assert_null(strstr(out, "tx_kicks"));
	/* Two queues: a sub-table; a queue without a worker says "-". */
	assert_non_null(strstr(out, "queue  worker"));
	/* Never JSON, whatever is nested. */
	assert_null(strpbrk(out, "{}[]\""));
	assert_true(widest(out) <= 120);

	all = draw(data, NULL, 0, true);
	assert_non_null(strstr(all, "future_reason 0"));
	assert_non_null(strstr(all, "host_frames 0"));
	assert_non_null(strstr(all, "tx_kicks 0"));
	assert_null(strpbrk(all, "{}[]\""));
	free(all);
	free(out);
	json_decref(data);
}

/* Watching: rates from two samples, not from the daemon's pps. */
static void test_stats_rates(void **state)
{
	json_t *prev = json_loads(stats_reply, 0, NULL);
	json_t *cur = json_deep_copy(prev);
	json_t *totals;
	char *out;

	(void)state;
	totals = json_object_get(
		json_array_get(json_object_get(cur, "ports"), 0), "totals");
	/* 2,000,000 frames of 64 bytes more, in 2 s. */
	json_object_set_new(totals, "rx_packets", json_integer(3234567));
	json_object_set_new(totals, "rx_bytes",
			    json_integer(79012288 + 128000000));
	out = draw(cur, prev, 2.0, false);
	assert_non_null(strstr(out, "1.00 M"));
	assert_non_null(strstr(out, "512 M"));
	free(out);
	json_decref(cur);
	json_decref(prev);
}

/* Shapes the layout does not expect: drawn generically, never JSON. */
static void test_stats_odd_shapes(void **state)
{
	static const char *const replies[] = {
		"{\"ports\":\"nope\",\"workers\":[1,2],\"gen\":{\"a\":1}}",
		"{\"ports\":[{\"name\":5,\"totals\":\"x\",\"queues\":7},3]}",
		"{\"ports\":[{}],\"workers\":[{}],\"steer\":[{\"match\":1}]}",
		"{\"x\":[[1,[2,{\"a\":[]}]],{\"y\":{\"z\":[{\"q\":null}]}}]}",
		"{}",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(replies) / sizeof(replies[0]); i++) {
		json_t *data = json_loads(replies[i], 0, NULL);
		char *out;

		assert_non_null(data);
		out = draw(data, NULL, 0, true);
		assert_null(strpbrk(out, "{}\""));
		free(out);
		json_decref(data);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_rate),
		cmocka_unit_test(test_fold),
		cmocka_unit_test(test_stats_layout),
		cmocka_unit_test(test_stats_rates),
		cmocka_unit_test(test_stats_odd_shapes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
