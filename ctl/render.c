// SPDX-License-Identifier: BSD-2-Clause
/*
 * render.c - replies for people. The renderer knows nothing about
 * individual commands; it turns arrays of objects into tables and objects
 * into "key: value" lines, so new commands need no changes here.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "render.h"

/* ---- rendering ---- */

static bool is_scalar(const json_t *v)
{
	return !json_is_object(v) && !json_is_array(v);
}

static bool is_table(const json_t *v)
{
	return json_is_array(v) && json_is_object(json_array_get(v, 0));
}

static char *scalar_text(const json_t *v)
{
	char buf[64];
	char *end;

	switch (json_typeof(v)) {
	case JSON_STRING:
		return strdup(json_string_value(v));
	case JSON_INTEGER:
		snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT,
			 json_integer_value(v));
		return strdup(buf);
	case JSON_REAL:
		/* Up to two decimals: 1.5 not 1.50, 2 not 2.00. */
		snprintf(buf, sizeof(buf), "%.2f", json_real_value(v));
		end = buf + strlen(buf) - 1;
		while (*end == '0')
			*end-- = '\0';
		if (*end == '.')
			*end = '\0';
		if (strcmp(buf, "-0") == 0)
			strcpy(buf, "0");
		return strdup(buf);
	case JSON_TRUE:
		return strdup("true");
	case JSON_FALSE:
		return strdup("false");
	default:
		return strdup("-");
	}
}

/*
 * Text of one value in a cell or after "key: ": scalars as themselves, a
 * list of scalars joined by commas, anything deeper as compact JSON.
 */
static char *value_text(const json_t *v)
{
	size_t i, len = 0, cap = 64;
	json_t *e;
	char *buf;

	if (!v)
		return strdup("-");
	if (is_scalar(v))
		return scalar_text(v);
	if (json_is_array(v)) {
		json_array_foreach(v, i, e) if (!is_scalar(e)) goto as_json;
		buf = malloc(cap);
		if (!buf)
			return NULL;
		buf[0] = '\0';
		json_array_foreach(v, i, e)
		{
			char *t = scalar_text(e);
			size_t need;

			if (!t) {
				free(buf);
				return NULL;
			}
			need = len + strlen(t) + 2;
			if (need >= cap) {
				char *bigger;

				while (need >= cap)
					cap *= 2;
				bigger = realloc(buf, cap);
				if (!bigger) {
					free(t);
					free(buf);
					return NULL;
				}
				buf = bigger;
			}
			len += (size_t)sprintf(buf + len, "%s%s", i ? "," : "",
					       t);
			free(t);
		}
		return buf;
	}
as_json:
	return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

/* Columns on a terminal: UTF-8 continuation bytes take none. */
static size_t text_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

struct column {
	const char *key; /* in each row */
	const char *sub; /* in row[key], when that is an object; or NULL */
	char *title;
	size_t width;
	bool numeric; /* right-aligned */
};

static const json_t *cell_value(const json_t *row, const struct column *col)
{
	const json_t *v = json_object_get(row, col->key);

	if (col->sub)
		v = json_is_object(v) ? json_object_get(v, col->sub) : NULL;
	return v;
}

/* Columns from the first row's keys; its objects become parent.child. */
static int table_columns(const json_t *first, struct column **out,
			 size_t *n_cols)
{
	struct column *cols = NULL;
	size_t n = 0, cap = 0;
	const char *key, *sub;
	json_t *v, *sv;

	json_object_foreach((json_t *)first, key, v)
	{
		bool flat = json_is_object(v) && json_object_size(v) > 0;
		void *it = flat ? json_object_iter(v) : NULL;

		do {
			struct column *col;

			sub = it ? json_object_iter_key(it) : NULL;
			sv = it ? json_object_iter_value(it) : v;
			if (n == cap) {
				struct column *bigger;

				cap = cap ? cap * 2 : 8;
				bigger = realloc(cols, cap * sizeof(*cols));
				if (!bigger)
					goto err_cols;
				cols = bigger;
			}
			col = &cols[n];
			col->key = key;
			col->sub = sub;
			if (sub) {
				col->title =
					malloc(strlen(key) + strlen(sub) + 2);
				if (col->title)
					sprintf(col->title, "%s.%s", key, sub);
			} else {
				col->title = strdup(key);
			}
			if (!col->title)
				goto err_cols;
			col->width = text_width(col->title);
			col->numeric = json_is_number(sv);
			n++;
			it = it ? json_object_iter_next(v, it) : NULL;
		} while (it);
	}
	*out = cols;
	*n_cols = n;
	return 0;

err_cols:
	while (n > 0)
		free(cols[--n].title);
	free(cols);
	return -ENOMEM;
}

static void print_cell(const char *text, const struct column *col, bool last)
{
	size_t pad = col->width - text_width(text);

	if (col->numeric)
		printf("%*s%s", (int)pad, "", text);
	else if (last)
		printf("%s", text);
	else
		printf("%s%*s", text, (int)pad, "");
	if (!last)
		printf("  ");
}

static int print_table(const json_t *rows, int indent)
{
	size_t n_rows = json_array_size(rows), n_cols, r, c;
	struct column *cols;
	char **cells;
	int rc;

	rc = table_columns(json_array_get(rows, 0), &cols, &n_cols);
	if (rc < 0)
		return rc;
	if (n_cols == 0)
		goto err_cols; /* rows of empty objects: nothing to show */
	cells = calloc(n_rows * n_cols + 1, sizeof(*cells));
	if (!cells) {
		rc = -ENOMEM;
		goto err_cols;
	}
	for (r = 0; r < n_rows; r++) {
		const json_t *row = json_array_get(rows, r);

		for (c = 0; c < n_cols; c++) {
			const json_t *v = cell_value(row, &cols[c]);
			char **cell = &cells[r * n_cols + c];
			size_t w;

			*cell = value_text(v);
			if (!*cell) {
				rc = -ENOMEM;
				goto err_cells;
			}
			w = text_width(*cell);
			if (w > cols[c].width)
				cols[c].width = w;
			if (v && !json_is_number(v))
				cols[c].numeric = false;
		}
	}

	printf("%*s", indent, "");
	for (c = 0; c < n_cols; c++)
		print_cell(cols[c].title, &cols[c], c + 1 == n_cols);
	printf("\n");
	for (r = 0; r < n_rows; r++) {
		printf("%*s", indent, "");
		for (c = 0; c < n_cols; c++)
			print_cell(cells[r * n_cols + c], &cols[c],
				   c + 1 == n_cols);
		printf("\n");
	}

err_cells:
	for (r = 0; r < n_rows * n_cols; r++)
		free(cells[r]);
	free(cells);
err_cols:
	for (c = 0; c < n_cols; c++)
		free(cols[c].title);
	free(cols);
	return rc;
}

static int print_object(const json_t *obj, int indent)
{
	bool after_block = false;
	const char *key;
	json_t *v;
	int rc;

	json_object_foreach((json_t *)obj, key, v)
	{
		if (is_table(v)) {
			printf("\n%*s%s:\n", indent, "", key);
			rc = print_table(v, indent);
			if (rc < 0)
				return rc;
			after_block = true;
		} else if (json_is_object(v)) {
			if (after_block)
				printf("\n");
			printf("%*s%s:\n", indent, "", key);
			rc = print_object(v, indent + 2);
			if (rc < 0)
				return rc;
			after_block = false;
		} else {
			char *text = value_text(v);

			if (!text)
				return -ENOMEM;
			if (after_block)
				printf("\n");
			printf("%*s%s:%s%s\n", indent, "", key,
			       text[0] ? " " : "", text);
			free(text);
			after_block = false;
		}
	}
	return 0;
}

static int print_data(const json_t *data)
{
	char *text;
	size_t i;
	json_t *e;

	if (json_is_null(data))
		return 0;
	if (is_table(data))
		return print_table(data, 0);
	if (json_is_object(data))
		return print_object(data, 0);
	if (json_is_array(data)) {
		json_array_foreach(data, i, e)
		{
			char *text = value_text(e);

			if (!text)
				return -ENOMEM;
			printf("%s\n", text);
			free(text);
		}
		return 0;
	}

	text = value_text(data);
	if (!text)
		return -ENOMEM;
	printf("%s\n", text);
	free(text);
	return 0;
}

/* ---- replies ---- */

/* An error reply, as "ferryctl: CODE: message" on stderr. */
void print_error(const json_t *reply)
{
	const json_t *error = json_object_get(reply, "error");
	const char *code = json_string_value(json_object_get(error, "code"));
	const char *msg = json_string_value(json_object_get(error, "message"));

	fprintf(stderr, "ferryctl: %s: %s\n", code ? code : "EIO",
		msg ? msg : "failed");
}

int print_reply(const char *raw, bool json_out)
{
	json_t *reply, *ok;
	json_error_t jerr;
	int rc = EXIT_OK;

	reply = json_loads(raw, JSON_DECODE_ANY, &jerr);
	ok = json_object_get(reply, "ok");
	if (!json_is_boolean(ok)) {
		fprintf(stderr, "ferryctl: malformed reply: %s\n", raw);
		json_decref(reply);
		return EXIT_COMM;
	}
	if (json_out)
		printf("%s\n", raw);

	if (json_is_true(ok)) {
		if (!json_out &&
		    print_data(json_object_get(reply, "data")) < 0) {
			fprintf(stderr, "ferryctl: out of memory\n");
			rc = EXIT_COMM;
		}
	} else {
		if (!json_out)
			print_error(reply);
		rc = EXIT_ERROR;
	}
	json_decref(reply);
	return rc;
}
