// SPDX-License-Identifier: BSD-2-Clause
/*
 * render.c - replies for people.
 *
 * A view draws one command's reply into a memory stream; a last pass folds
 * every line to the width limit, so no view can print a line too wide for
 * the reader whatever the daemon sends. The views for what an operator
 * reads most (port show, stats, help, ...) sit in a table keyed by command
 * words (render_views.c); everything else goes through the generic renderer
 * here, which turns objects into "key: value" lines, arrays of objects into
 * tables (or into one block per row when a table would not fit) and never
 * prints JSON. The views use its pieces for the fields they do not know,
 * so that a counter or setting added to a reply later is never lost.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "render.h"
#include "render_int.h"

/* A packed "key value" item longer than this gets a line of its own. */
#define PACK_LONG 48

/* ---- values ---- */

bool is_scalar(const json_t *v)
{
	return !json_is_object(v) && !json_is_array(v);
}

/* A list of scalars: shown joined on one line. */
bool is_flat_array(const json_t *v)
{
	size_t i;
	json_t *e;

	if (!json_is_array(v))
		return false;
	json_array_foreach(v, i, e) if (!is_scalar(e)) return false;
	return true;
}

/* An object of integers only (drop_reasons, events, xdp): counters. */
static bool is_counter_set(const json_t *v)
{
	const char *k;
	json_t *e;

	if (!json_is_object(v) || json_object_size(v) == 0)
		return false;
	json_object_foreach((json_t *)v, k,
			    e) if (!json_is_integer(e)) return false;
	return true;
}

void scalar_text(const json_t *v, char *buf, size_t size)
{
	char *end;

	if (!v) {
		snprintf(buf, size, "-");
		return;
	}
	switch (json_typeof(v)) {
	case JSON_STRING:
		snprintf(buf, size, "%s",
			 json_string_length(v) ? json_string_value(v) : "-");
		break;
	case JSON_INTEGER:
		/* Settings (MTU 1500, port 8000) read better bare. */
		if (json_integer_value(v) > -10000 &&
		    json_integer_value(v) < 10000)
			snprintf(buf, size, "%" JSON_INTEGER_FORMAT,
				 json_integer_value(v));
		else
			render_count(json_integer_value(v), buf, size);
		break;
	case JSON_REAL:
		/* Up to two decimals: 1.5 not 1.50, 2 not 2.00. */
		snprintf(buf, size, "%.2f", json_real_value(v));
		end = buf + strlen(buf) - 1;
		while (end > buf && *end == '0')
			*end-- = '\0';
		if (*end == '.')
			*end = '\0';
		if (strcmp(buf, "-0") == 0)
			strcpy(buf, "0");
		break;
	case JSON_TRUE:
		snprintf(buf, size, "yes");
		break;
	case JSON_FALSE:
		snprintf(buf, size, "no");
		break;
	default:
		snprintf(buf, size, "-");
	}
}

/*
 * Text of a scalar or a list of scalars (joined by commas); malloc'd.
 * Strings may be long (a help text, a host check's value).
 */
char *value_text(const json_t *v)
{
	char *buf = NULL, item[64];
	size_t len = 0, i;
	FILE *f;
	json_t *e;

	if (!v)
		return strdup("-");
	if (json_is_string(v))
		return strdup(json_string_length(v) ? json_string_value(v)
						    : "-");
	if (!json_is_array(v)) {
		scalar_text(v, item, sizeof(item));
		return strdup(item);
	}
	if (json_array_size(v) == 0)
		return strdup("-");
	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	json_array_foreach(v, i, e)
	{
		if (i)
			fputs(json_is_number(e) ? "," : ", ", f);
		if (json_is_string(e))
			fputs(json_string_value(e), f);
		else {
			scalar_text(e, item, sizeof(item));
			fputs(item, f);
		}
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

bool is_zero(const json_t *v)
{
	return (json_is_integer(v) && json_integer_value(v) == 0) ||
	       (json_is_real(v) && json_real_value(v) == 0);
}

/* ---- packed "key value" lines ---- */

void pack_begin(struct pack *p, struct view *v, int indent)
{
	*p = (struct pack){.v = v, .indent = indent};
}

/* "title:" then the items on the same line, continued four columns in. */
static void pack_title(struct pack *p, struct view *v, int indent,
		       const char *title)
{
	*p = (struct pack){.v = v, .indent = indent + 4, .titled = true};
	fprintf(v->f, "%*s%s:", indent, "", title);
	p->col = (size_t)indent + render_text_width(title) + 1;
}

void pack_end(struct pack *p)
{
	if (p->col)
		fputc('\n', p->v->f);
	p->col = 0;
}

void pack_add(struct pack *p, const char *label, const char *text)
{
	size_t w = render_text_width(label) + (label[0] ? 1 : 0) +
		   render_text_width(text);

	if (w > PACK_LONG) {
		/* Long text on a line of its own, folded later. */
		pack_end(p);
		fprintf(p->v->f, "%*s%s%s%s\n", p->indent, "", label,
			label[0] ? ": " : "", text);
		return;
	}
	if (p->col && p->col + 3 + w > (size_t)p->v->width)
		pack_end(p);
	if (p->col) {
		fputs(p->titled ? " " : "   ", p->v->f);
		p->col += p->titled ? 1 : 3;
		p->titled = false;
	} else {
		fprintf(p->v->f, "%*s", p->indent, "");
		p->col = (size_t)p->indent;
	}
	fprintf(p->v->f, "%s%s%s", label, label[0] ? " " : "", text);
	p->col += w;
}

int pack_value(struct pack *p, const char *label, const json_t *v)
{
	char *text = value_text(v);

	if (!text)
		return -ENOMEM;
	pack_add(p, label, text);
	free(text);
	return 0;
}

/* "reasons: a 1   b 2": the counters of a set that are not zero. */
int pack_counters(struct view *v, int indent, const char *title,
		  const json_t *set, const char *const *skip)
{
	struct pack p;
	const char *k;
	bool any = false;
	json_t *e;
	size_t i;

	json_object_foreach((json_t *)set, k, e)
	{
		bool skipped = false;

		for (i = 0; skip && skip[i]; i++)
			skipped |= !strcmp(skip[i], k);
		if (skipped || (!v->all && is_zero(e)) || !is_scalar(e))
			continue;
		if (!any)
			pack_title(&p, v, indent, title);
		any = true;
		if (json_is_integer(e)) {
			char n[32];

			pack_add(&p, k,
				 render_count(json_integer_value(e), n,
					      sizeof(n)));
		} else if (pack_value(&p, k, e) < 0) {
			return -ENOMEM;
		}
	}
	if (any)
		pack_end(&p);
	return 0;
}

/* ---- generic: objects, tables, blocks ---- */

/* An object of scalars only (a flow direction's counters and flags). */
static bool is_flat_object(const json_t *v)
{
	const char *k;
	json_t *e;

	if (!json_is_object(v))
		return false;
	json_object_foreach((json_t *)v, k, e) if (!is_scalar(e)) return false;
	return true;
}

/* "title: a 1   b yes   c text", every member, continued four in. */
static int pack_object(struct view *v, int indent, const char *title,
		       const json_t *obj)
{
	struct pack p;
	const char *k;
	json_t *e;

	pack_title(&p, v, indent, title);
	json_object_foreach((json_t *)obj, k, e)
	{
		if (pack_value(&p, k, e) < 0)
			return -ENOMEM;
	}
	pack_end(&p);
	return 0;
}

static int gen_object(struct view *v, const json_t *obj, int indent);
static int gen_rows(struct view *v, const json_t *rows, int indent);

/* One named member of an object, whatever its kind. */
int gen_member(struct view *v, const char *key, const json_t *val, int indent)
{
	char *text;

	if (is_counter_set(val))
		return pack_counters(v, indent, key, val, NULL);
	if (is_scalar(val) || is_flat_array(val)) {
		text = value_text(val);
		if (!text)
			return -ENOMEM;
		fprintf(v->f, "%*s%s: %s\n", indent, "", key, text);
		free(text);
		return 0;
	}
	if (json_is_object(val)) {
		if (json_object_size(val) == 0) {
			fprintf(v->f, "%*s%s: -\n", indent, "", key);
			return 0;
		}
		if (is_flat_object(val))
			return pack_object(v, indent, key, val);
		fprintf(v->f, "%*s%s:\n", indent, "", key);
		return gen_object(v, val, indent + 2);
	}
	fprintf(v->f, "%*s%s:\n", indent, "", key);
	return gen_rows(v, val, indent + 2);
}

static int gen_object(struct view *v, const json_t *obj, int indent)
{
	const char *key;
	json_t *val;
	int rc;

	json_object_foreach((json_t *)obj, key, val)
	{
		rc = gen_member(v, key, val, indent);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* A table column: row[key], or row[key][sub] for a flattened object. */
struct column {
	const char *key;
	const char *sub;
	char title[64];
	size_t width;
	bool numeric;
};

struct table {
	struct column *cols;
	size_t n_cols, cap;
	char **cells; /* n_rows * n_cols */
	size_t n_rows;
};

static void table_free(struct table *t)
{
	size_t i;

	for (i = 0; t->cells && i < t->n_rows * t->n_cols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t->cols);
}

static int table_add_col(struct table *t, const char *key, const char *sub)
{
	struct column *c;
	size_t i;

	for (i = 0; i < t->n_cols; i++)
		if (!strcmp(t->cols[i].key, key) &&
		    ((!sub && !t->cols[i].sub) ||
		     (sub && t->cols[i].sub && !strcmp(t->cols[i].sub, sub))))
			return 0;
	if (t->n_cols == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 8;
		struct column *bigger = realloc(t->cols, cap * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		t->cols = bigger;
		t->cap = cap;
	}
	c = &t->cols[t->n_cols++];
	*c = (struct column){.key = key, .sub = sub, .numeric = true};
	snprintf(c->title, sizeof(c->title), "%s%s%s", key, sub ? "." : "",
		 sub ? sub : "");
	c->width = render_text_width(c->title);
	return 0;
}

/*
 * Columns from every row's keys (a key first seen in a later row still
 * gets one); an object of scalars becomes parent.child columns. False when
 * some value has no place in a cell (a list of objects, a deeper object).
 */
static bool table_plan(struct table *t, const json_t *rows, bool *nomem)
{
	const char *key, *sub;
	json_t *row, *val, *sv;
	size_t r;

	json_array_foreach(rows, r, row)
	{
		if (!json_is_object(row))
			return false;
		json_object_foreach(row, key, val)
		{
			if (is_scalar(val) || is_flat_array(val)) {
				if (table_add_col(t, key, NULL) < 0)
					goto err_nomem;
				continue;
			}
			if (!json_is_object(val) || json_object_size(val) == 0)
				return false;
			json_object_foreach(val, sub, sv)
			{
				if (!is_scalar(sv) && !is_flat_array(sv))
					return false;
				if (table_add_col(t, key, sub) < 0)
					goto err_nomem;
			}
		}
	}
	return t->n_cols > 0;

err_nomem:
	*nomem = true;
	return false;
}

static const json_t *cell_value(const json_t *row, const struct column *c)
{
	const json_t *v = json_object_get(row, c->key);

	if (c->sub)
		v = json_is_object(v) ? json_object_get(v, c->sub) : NULL;
	return v;
}

static int table_fill(struct table *t, const json_t *rows)
{
	size_t r, c;

	t->n_rows = json_array_size(rows);
	t->cells = calloc(t->n_rows * t->n_cols + 1, sizeof(*t->cells));
	if (!t->cells)
		return -ENOMEM;
	for (r = 0; r < t->n_rows; r++) {
		const json_t *row = json_array_get(rows, r);

		for (c = 0; c < t->n_cols; c++) {
			const json_t *v = cell_value(row, &t->cols[c]);
			char **cell = &t->cells[r * t->n_cols + c];
			size_t w;

			*cell = v ? value_text(v) : strdup("-");
			if (!*cell)
				return -ENOMEM;
			w = render_text_width(*cell);
			if (w > t->cols[c].width)
				t->cols[c].width = w;
			if (v && !json_is_number(v))
				t->cols[c].numeric = false;
		}
	}
	return 0;
}

static size_t table_width(const struct table *t, int indent)
{
	size_t c, w = (size_t)indent;

	for (c = 0; c < t->n_cols; c++)
		w += t->cols[c].width + (c ? 2 : 0);
	return w;
}

static void put_cell(FILE *f, const char *text, const struct column *c,
		     bool last)
{
	int pad = (int)(c->width - render_text_width(text));

	if (c->numeric)
		fprintf(f, "%*s%s", pad, "", text);
	else if (last)
		fputs(text, f);
	else
		fprintf(f, "%s%*s", text, pad, "");
	if (!last)
		fputs("  ", f);
}

static void table_print(FILE *f, const struct table *t, int indent)
{
	size_t r, c;

	fprintf(f, "%*s", indent, "");
	for (c = 0; c < t->n_cols; c++)
		put_cell(f, t->cols[c].title, &t->cols[c], c + 1 == t->n_cols);
	fputc('\n', f);
	for (r = 0; r < t->n_rows; r++) {
		fprintf(f, "%*s", indent, "");
		for (c = 0; c < t->n_cols; c++)
			put_cell(f, t->cells[r * t->n_cols + c], &t->cols[c],
				 c + 1 == t->n_cols);
		fputc('\n', f);
	}
}

/* The key naming a row, when it has one of the usual ones. */
static const char *title_key(const json_t *row)
{
	static const char *const keys[] = {"name", "command", "check", "id",
					   "port", "cpu",     "queue", "slot"};
	size_t i;

	for (i = 0; i < ARRAY_LEN(keys); i++)
		if (is_scalar(json_object_get(row, keys[i])) &&
		    json_object_get(row, keys[i]))
			return keys[i];
	return NULL;
}

/*
 * One row as a block: its name on a line, then its scalars packed and its
 * nested members below, four columns in. skip: keys a view shows itself.
 */
int gen_block(struct view *v, const json_t *row, int indent,
	      const char *const *skip, bool titled)
{
	const char *tk = title_key(row), *key;
	struct pack p;
	json_t *val;
	char *title;
	size_t i;
	int rc;

	if (!titled) {
		bool named =
			tk && (!strcmp(tk, "name") || !strcmp(tk, "command") ||
			       !strcmp(tk, "check"));

		title = tk ? value_text(json_object_get(row, tk)) : strdup("-");
		if (!title)
			return -ENOMEM;
		fprintf(v->f, "%*s%s%s%s\n", indent, "", tk && !named ? tk : "",
			tk && !named ? " " : "", title);
		free(title);
	}
	pack_begin(&p, v, indent + 4);
	json_object_foreach((json_t *)row, key, val)
	{
		bool skipped = tk && !strcmp(key, tk);

		for (i = 0; skip && skip[i]; i++)
			skipped |= !strcmp(skip[i], key);
		if (skipped || !(is_scalar(val) || is_flat_array(val)))
			continue;
		if (pack_value(&p, key, val) < 0)
			return -ENOMEM;
	}
	pack_end(&p);
	json_object_foreach((json_t *)row, key, val)
	{
		bool skipped = false;

		for (i = 0; skip && skip[i]; i++)
			skipped |= !strcmp(skip[i], key);
		if (skipped || is_scalar(val) || is_flat_array(val))
			continue;
		rc = gen_member(v, key, val, indent + 4);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* "- text": a scalar in a list of mixed things. */
static int gen_item(struct view *v, const json_t *e, int indent)
{
	char *text = value_text(e);

	if (!text)
		return -ENOMEM;
	fprintf(v->f, "%*s- %s\n", indent, "", text);
	free(text);
	return 0;
}

/* A list: a table when every value fits a cell and the width allows. */
int gen_rows(struct view *v, const json_t *rows, int indent)
{
	struct table t = {0};
	bool nomem = false;
	size_t i;
	json_t *e;
	int rc = 0;

	if (json_array_size(rows) == 0) {
		fprintf(v->f, "%*s-\n", indent, "");
		return 0;
	}
	if (table_plan(&t, rows, &nomem)) {
		rc = table_fill(&t, rows);
		if (rc == 0 && table_width(&t, indent) <= (size_t)v->width) {
			table_print(v->f, &t, indent);
			table_free(&t);
			return 0;
		}
	}
	table_free(&t);
	if (nomem || rc < 0)
		return -ENOMEM;
	json_array_foreach(rows, i, e)
	{
		if (json_is_object(e))
			rc = gen_block(v, e, indent, NULL, false);
		else if (is_scalar(e) || is_flat_array(e))
			rc = gen_item(v, e, indent);
		else
			rc = gen_rows(v, e, indent + 2);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int view_generic(struct view *v, const json_t *data)
{
	if (json_is_null(data))
		return 0;
	if (json_is_object(data))
		return gen_object(v, data, 0);
	if (json_is_array(data) && !is_flat_array(data))
		return gen_rows(v, data, 0);
	if (json_is_array(data)) {
		size_t i;
		json_t *e;

		json_array_foreach(data, i, e)
		{
			char *text = value_text(e);

			if (!text)
				return -ENOMEM;
			fprintf(v->f, "%s\n", text);
			free(text);
		}
		return 0;
	}
	if (json_is_string(data)) {
		fprintf(v->f, "%s\n", json_string_value(data));
		return 0;
	}
	return gen_member(v, "value", data, 0);
}

/* Writes text from column at, wrapped to the width, continuing at cont. */
void put_wrapped(struct view *v, size_t at, size_t cont, const char *s)
{
	size_t avail = (size_t)v->width > at + 20 ? (size_t)v->width - at : 20;
	size_t len = strlen(s);

	while (render_text_width(s) > avail) {
		size_t cut = render_cols_to_bytes(s, len, avail);

		while (cut > 0 && s[cut] != ' ')
			cut--;
		if (cut == 0)
			cut = render_cols_to_bytes(s, len, avail);
		fprintf(v->f, "%.*s\n%*s", (int)cut, s, (int)cont, "");
		while (s[cut] == ' ')
			cut++;
		s += cut;
		len -= cut;
		avail = (size_t)v->width > cont + 20 ? (size_t)v->width - cont
						     : 20;
	}
	fprintf(v->f, "%s\n", s);
}

/* An error reply, as "ferryctl: CODE: message" on stderr. */
void render_error(const json_t *reply)
{
	const json_t *error = json_object_get(reply, "error");
	const char *code = json_string_value(json_object_get(error, "code"));
	const char *msg = json_string_value(json_object_get(error, "message"));

	fprintf(stderr, "ferryctl: %s: %s\n", code ? code : "EIO",
		msg ? msg : "failed");
}

static int print_data(const json_t *data, int argc, char *const *argv,
		      const struct render_opts *opts)
{
	const struct view_row *row = render_view_for(argc, argv);
	int cols = render_term_cols(STDOUT_FILENO);
	struct view v = {.all = opts->all, .width = RENDER_MAX_WIDTH};
	bool is_help = row && row->help;
	char *buf = NULL;
	size_t len = 0;
	int rc;

	if (cols > 0 && cols < v.width)
		v.width = cols;
	if (is_help && json_is_object(data) && cols == 0)
		v.width = RENDER_PIPE_WIDTH;
	if (is_help && json_is_array(data) && v.width > HELP_LIST_WIDTH)
		v.width = HELP_LIST_WIDTH;
	v.f = open_memstream(&buf, &len);
	if (!v.f)
		return -ENOMEM;
	rc = row ? row->fn(&v, data) : view_generic(&v, data);
	if (fclose(v.f) && rc == 0)
		rc = -ENOMEM;
	if (rc == 0) {
		if (row && row->raw && json_is_string(data))
			fwrite(buf, 1, len, stdout);
		else
			rc = render_fold(buf, len, v.width, stdout);
	}
	free(buf);
	return rc;
}

int print_reply(const char *raw, int argc, char *const *argv,
		const struct render_opts *opts)
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
	if (opts->json)
		printf("%s\n", raw);

	if (json_is_true(ok)) {
		if (!opts->json && print_data(json_object_get(reply, "data"),
					      argc, argv, opts) < 0) {
			fprintf(stderr, "ferryctl: out of memory\n");
			rc = EXIT_COMM;
		}
	} else {
		if (!opts->json)
			render_error(reply);
		rc = EXIT_ERROR;
	}
	json_decref(reply);
	return rc;
}
