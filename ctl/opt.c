// SPDX-License-Identifier: BSD-2-Clause
/*
 * opt.c - parse, print, usage and completion from a command's option rows
 * (opt.h). Everything here reads the rows; nothing knows a command.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "opt.h"

#define MAX_ROWS 32

static void *field(void *params, const struct ctl_opt *o)
{
	return (char *)params + o->off;
}

static const void *cfield(const void *params, const struct ctl_opt *o)
{
	return (const char *)params + o->off;
}

static void store_uint(void *p, size_t size, uint64_t v)
{
	switch (size) {
	case 1:
		*(uint8_t *)p = (uint8_t)v;
		break;
	case 2:
		*(uint16_t *)p = (uint16_t)v;
		break;
	case 4:
		*(uint32_t *)p = (uint32_t)v;
		break;
	default:
		*(uint64_t *)p = v;
		break;
	}
}

static uint64_t load_uint(const void *p, size_t size)
{
	switch (size) {
	case 1:
		return *(const uint8_t *)p;
	case 2:
		return *(const uint16_t *)p;
	case 4:
		return *(const uint32_t *)p;
	default:
		return *(const uint64_t *)p;
	}
}

/* The value word i stores, cut to the field's size (so -1 matches). */
static uint64_t word_val(const struct ctl_opt *o, int i)
{
	uint64_t v = o->vals ? o->vals[i] : (uint64_t)i;

	return o->size < 8 ? v & ((UINT64_C(1) << (o->size * 8)) - 1) : v;
}

static bool is_str(const struct ctl_opt *o)
{
	return o->kind == CTL_OPT_NAME || o->kind == CTL_OPT_STRING;
}

static const char *pos_name(const struct ctl_opt *o)
{
	return o->key ? o->key : o->metavar;
}

/* The row a keyword names; positional rows have none. */
static int find_key(const struct ctl_syntax *s, const char *w)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!(s->opts[i].flags & CTL_OPT_POSITIONAL) &&
		    s->opts[i].key && !strcmp(s->opts[i].key, w))
			return (int)i;
	return -1;
}

static int literal_of(const struct ctl_syntax *s, int group)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->opts[i].kind == CTL_OPT_LITERAL &&
		    s->opts[i].group == group)
			return (int)i;
	return -1;
}

/* A group's rows count when its literal is required (or no group). */
static bool literal_required(const struct ctl_syntax *s, int group)
{
	int lit = group ? literal_of(s, group) : -1;

	return lit < 0 || (s->opts[lit].flags & CTL_OPT_REQUIRED);
}

static int usage_err(const struct ctl_syntax *s, struct ferry_err *err,
		     const char *why)
{
	char u[512];

	ctl_opt_usage(s, u, sizeof(u));
	return ferry_fail(err, -EINVAL, "%s%susage: %s %s", why ? why : "",
			  why ? "; " : "", s->command, u);
}

static int parse_value(const struct ctl_opt *o, const char *val, void *params,
		       struct ferry_err *err)
{
	const char *what = pos_name(o);
	uint64_t v;
	int rc, i;

	switch (o->kind) {
	case CTL_OPT_WORD:
		rc = ctl_parse_choice(val, o->words, &i, what, err);
		if (!rc)
			store_uint(field(params, o), o->size, word_val(o, i));
		return rc;
	case CTL_OPT_U64:
		rc = ctl_parse_u64(val, o->min, o->max, &v, what, err);
		if (!rc)
			store_uint(field(params, o), o->size, v);
		return rc;
	case CTL_OPT_CPULIST:
		rc = ctl_parse_list(val, &v, what, err);
		if (!rc && o->min && !v)
			return ferry_fail(err, -EINVAL, "%s: empty CPU list",
					  what);
		if (!rc)
			*(uint64_t *)field(params, o) = v;
		return rc;
	case CTL_OPT_NAME:
	case CTL_OPT_STRING:
		if (!val[0])
			return ferry_fail(err, -EINVAL, "%s: empty", what);
		*(const char **)field(params, o) = val;
		return 0;
	case CTL_OPT_MAC:
		return ctl_parse_mac(val, field(params, o), err);
	case CTL_OPT_CUSTOM:
		return o->parse(val, params, err);
	case CTL_OPT_LITERAL:
		break;
	}
	return 0;
}

int ctl_opt_parse(const struct ctl_syntax *s, int argc, char **argv,
		  void *params, struct ferry_err *err)
{
	int seen[MAX_ROWS] = {0}; /* word index of the key + 1 */
	int i = 0, last_lit = -1, r, rc;
	struct ferry_err why; /* a value's own message; err may be NULL */
	size_t k;

	if (s->n > MAX_ROWS)
		return ferry_fail(err, -EINVAL, "%s: too many option rows",
				  s->command);
	if (s->dflt)
		memcpy(params, s->dflt, s->size);
	else
		memset(params, 0, s->size);

	/* Positional values first, in row order. */
	for (k = 0; k < s->n; k++) {
		const struct ctl_opt *o = &s->opts[k];

		if (!(o->flags & CTL_OPT_POSITIONAL))
			continue;
		if (i >= argc || (!(o->flags & CTL_OPT_REQUIRED) &&
				  find_key(s, argv[i]) >= 0)) {
			/* Left out (an optional one before a keyword). */
			if (o->flags & CTL_OPT_REQUIRED)
				return usage_err(s, err, NULL);
			continue;
		}
		seen[k] = ++i;
	}
	/* The shape of the rest before any value is parsed. */
	while (i < argc) {
		const struct ctl_opt *o;

		r = find_key(s, argv[i]);
		if (r < 0) {
			char keys[256];
			size_t len = 0;

			keys[0] = 0;
			for (k = 0; k < s->n && len < sizeof(keys); k++)
				if (s->opts[k].key &&
				    !(s->opts[k].flags & CTL_OPT_POSITIONAL))
					len += (size_t)snprintf(
						keys + len, sizeof(keys) - len,
						"%s%s", len ? ", " : "",
						s->opts[k].key);
			if (!keys[0])
				return usage_err(s, err, NULL);
			return ferry_fail(err, -EINVAL,
					  "unknown keyword '%s' (expected: %s)",
					  argv[i], keys);
		}
		o = &s->opts[r];
		if (seen[r])
			return ferry_fail(err, -EINVAL,
					  "keyword '%s' given twice", argv[i]);
		seen[r] = i + 1;
		if (o->kind == CTL_OPT_LITERAL) {
			if (r < last_lit)
				return usage_err(s, err, NULL);
			last_lit = r;
			if (o->next &&
			    (i + 1 >= argc || strcmp(argv[i + 1], o->next))) {
				char why[96];

				snprintf(why, sizeof(why),
					 "'%s' must be followed by '%s'",
					 o->key, o->next);
				return usage_err(s, err, why);
			}
			i++;
			continue;
		}
		if (i + 1 >= argc)
			return ferry_fail(err, -EINVAL,
					  "keyword '%s' needs a value",
					  argv[i]);
		i += 2;
	}
	/* Groups and required rows. */
	for (k = 0; k < s->n; k++) {
		const struct ctl_opt *o = &s->opts[k];
		int lit = o->group && o->kind != CTL_OPT_LITERAL
				  ? literal_of(s, o->group)
				  : -1;

		if (o->flags & CTL_OPT_POSITIONAL)
			continue;
		if (lit >= 0 && seen[k] && !seen[lit])
			return ferry_fail(err, -EINVAL,
					  "%s: '%s' belongs after '%s'",
					  s->command, o->key, s->opts[lit].key);
		if (!(o->flags & CTL_OPT_REQUIRED) || seen[k])
			continue;
		if (lit >= 0 && !seen[lit])
			continue;
		if (o->kind == CTL_OPT_LITERAL) {
			if (o->next) {
				r = find_key(s, o->next);
				return ferry_fail(err, -EINVAL,
						  "%s: '%s %s %s' is required",
						  s->command, o->key, o->next,
						  r >= 0 && s->opts[r].metavar
							  ? s->opts[r].metavar
							  : "");
			}
			return usage_err(s, err, NULL);
		}
		return ferry_fail(err, -EINVAL, "%s: '%s %s' is required",
				  s->command, o->key,
				  o->metavar ? o->metavar : "");
	}
	/* The values. */
	for (k = 0; k < s->n; k++) {
		const struct ctl_opt *o = &s->opts[k];
		int at = seen[k] - 1;
		const char *val;

		if (!seen[k] || o->kind == CTL_OPT_LITERAL)
			continue;
		val = (o->flags & CTL_OPT_POSITIONAL) ? argv[at] : argv[at + 1];
		why.msg[0] = 0;
		rc = parse_value(o, val, params, &why);
		if (rc < 0) {
			if (why.msg[0])
				return ferry_fail(err, rc, "%s", why.msg);
			return ferry_fail(err, rc, "%s: '%s': %s", pos_name(o),
					  val, strerror(-rc));
		}
		if (o->flags & CTL_OPT_GIVEN)
			*(bool *)((char *)params + o->given_off) = true;
	}
	return 0;
}

/* ---- printing ---- */

struct out {
	char *buf;
	size_t len, used;
	int overflow;
};

__attribute__((format(printf, 2, 3))) static void put(struct out *b,
						      const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->overflow)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->buf + b->used, b->len - b->used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= b->len - b->used) {
		b->overflow = 1;
		return;
	}
	b->used += (size_t)n;
}

static void put_cpulist(struct out *b, uint64_t mask)
{
	int cpu, end, first = 1;

	for (cpu = 0; cpu < 64; cpu++) {
		if (!(mask & (UINT64_C(1) << cpu)))
			continue;
		end = cpu;
		while (end + 1 < 64 && (mask & (UINT64_C(1) << (end + 1))))
			end++;
		put(b, first ? "%d" : ",%d", cpu);
		if (end > cpu)
			put(b, "-%d", end);
		first = 0;
		cpu = end;
	}
}

/* A word the tokenizer gives back as it was: quoted when it must be. */
static void put_word(struct out *b, const char *w)
{
	if (!w[0] || strpbrk(w, " \t\"#'\\"))
		put(b, "\"%s\"", w);
	else
		put(b, "%s", w);
}

static int put_value(struct out *b, const struct ctl_opt *o, const void *params)
{
	const void *p = cfield(params, o);
	const uint8_t *mac;
	char tmp[256];
	uint64_t v;
	int i;

	switch (o->kind) {
	case CTL_OPT_WORD:
		v = load_uint(p, o->size);
		for (i = 0; o->words[i]; i++)
			if (word_val(o, i) == v) {
				put(b, "%s", o->words[i]);
				return 0;
			}
		return -EINVAL;
	case CTL_OPT_U64:
		put(b, "%" PRIu64, load_uint(p, o->size));
		return 0;
	case CTL_OPT_CPULIST:
		put_cpulist(b, *(const uint64_t *)p);
		return 0;
	case CTL_OPT_NAME:
		put_word(b, *(const char *const *)p ?: "");
		return 0;
	case CTL_OPT_STRING:
		put(b, "\"%s\"", *(const char *const *)p ?: "");
		return 0;
	case CTL_OPT_MAC:
		mac = p;
		put(b, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2],
		    mac[3], mac[4], mac[5]);
		return 0;
	case CTL_OPT_CUSTOM:
		tmp[0] = 0;
		o->print(params, tmp, sizeof(tmp));
		put(b, "%s", tmp);
		return 0;
	case CTL_OPT_LITERAL:
		break;
	}
	return 0;
}

/* Does the row hold something other than the default? */
static bool differs(const struct ctl_syntax *s, const struct ctl_opt *o,
		    const void *params)
{
	static const uint8_t zeroes[64];
	const void *d = s->dflt ? cfield(s->dflt, o) : zeroes;
	const void *p = cfield(params, o);
	char tmp[256];

	switch (o->kind) {
	case CTL_OPT_CUSTOM:
		tmp[0] = 0;
		o->print(params, tmp, sizeof(tmp));
		return tmp[0] != 0;
	case CTL_OPT_NAME:
	case CTL_OPT_STRING: {
		const char *a = *(const char *const *)p;
		const char *z = s->dflt ? *(const char *const *)d : NULL;

		return a && (!z || strcmp(a, z));
	}
	case CTL_OPT_MAC:
		return memcmp(p, d, 6) != 0;
	case CTL_OPT_LITERAL:
		return false;
	default:
		return load_uint(p, o->size) != load_uint(d, o->size);
	}
}

static bool shown_alone(const struct ctl_syntax *s, const struct ctl_opt *o,
			const void *params)
{
	if (o->flags & CTL_OPT_GIVEN)
		return *(const bool *)((const char *)params + o->given_off);
	if (is_str(o) && !*(const char *const *)cfield(params, o))
		return false;
	if ((o->flags & (CTL_OPT_PIN | CTL_OPT_REQUIRED)) &&
	    o->kind != CTL_OPT_CUSTOM)
		return true;
	return differs(s, o, params);
}

int ctl_opt_print(const struct ctl_syntax *s, const void *params, char *buf,
		  size_t len)
{
	struct out b = {buf, len, strlen(buf), 0};
	bool active[MAX_ROWS + 1] = {0}; /* by group */
	size_t k;
	int rc;

	if (s->n > MAX_ROWS || b.used >= len)
		return -ENOSPC;
	/* A group shows when its literal is required or one of its rows
	 * holds more than a default (a pinned row alone does not open it). */
	for (k = 0; k < s->n; k++) {
		const struct ctl_opt *o = &s->opts[k];

		if (o->group <= 0 || o->group > MAX_ROWS)
			continue;
		if (o->kind == CTL_OPT_LITERAL) {
			if (o->flags & CTL_OPT_REQUIRED)
				active[o->group] = true;
		} else if (o->flags & CTL_OPT_GIVEN ? shown_alone(s, o, params)
						    : differs(s, o, params)) {
			active[o->group] = true;
		}
	}
	active[0] = true;
	for (k = 0; k < s->n; k++) {
		const struct ctl_opt *o = &s->opts[k];

		if (o->group < 0 || o->group > MAX_ROWS || !active[o->group])
			continue;
		if (o->flags & CTL_OPT_POSITIONAL) {
			if (is_str(o) &&
			    !*(const char *const *)cfield(params, o))
				continue;
			put(&b, " ");
		} else if (o->kind == CTL_OPT_LITERAL) {
			put(&b, " %s", o->key);
			continue;
		} else if (shown_alone(s, o, params)) {
			put(&b, " %s ", o->key);
		} else {
			continue;
		}
		rc = put_value(&b, o, params);
		if (rc)
			return rc;
	}
	return b.overflow ? -ENOSPC : 0;
}

/* ---- usage ---- */

static void put_metavar(struct out *b, const struct ctl_opt *o)
{
	int i;

	if (o->kind == CTL_OPT_WORD && !o->metavar) {
		for (i = 0; o->words[i]; i++)
			put(b, i ? "|%s" : "%s", o->words[i]);
		return;
	}
	put(b, "%s", o->metavar ? o->metavar : "VALUE");
}

int ctl_opt_usage(const struct ctl_syntax *s, char *buf, size_t len)
{
	struct out b = {buf, len, 0, 0};
	int open = 0; /* the optional group whose bracket is open */
	size_t k;

	if (!len)
		return -ENOSPC;
	buf[0] = 0;
	for (k = 0; k < s->n; k++) {
		const struct ctl_opt *o = &s->opts[k];
		bool req = o->flags & CTL_OPT_REQUIRED;

		if (open && o->group != open) {
			put(&b, "]");
			open = 0;
		}
		put(&b, "%s", b.used ? " " : "");
		if (o->flags & CTL_OPT_POSITIONAL) {
			put(&b, req ? "" : "[");
			put_metavar(&b, o);
			put(&b, req ? "" : "]");
		} else if (o->kind == CTL_OPT_LITERAL) {
			if (!req) {
				put(&b, "[");
				open = o->group;
			}
			put(&b, "%s", o->key);
		} else {
			put(&b, req ? "%s " : "[%s ", o->key);
			put_metavar(&b, o);
			put(&b, req ? "" : "]");
		}
	}
	if (open)
		put(&b, "]");
	return b.overflow ? -ENOSPC : 0;
}

int ctl_opt_synopsis(const struct ctl_syntax *s, char *buf, size_t len)
{
	struct out b = {buf, len, 0, 0};
	bool more = false;
	size_t k;

	if (!len)
		return -ENOSPC;
	buf[0] = 0;
	for (k = 0; k < s->n; k++) {
		const struct ctl_opt *o = &s->opts[k];
		bool req = (o->flags & CTL_OPT_REQUIRED) &&
			   literal_required(s, o->group);

		if (!req && !(o->flags & CTL_OPT_POSITIONAL)) {
			more = true;
			continue;
		}
		put(&b, "%s%s", b.used ? " " : "", req ? "" : "[");
		if (o->kind == CTL_OPT_LITERAL) {
			put(&b, "%s", o->key);
			continue;
		}
		if (!(o->flags & CTL_OPT_POSITIONAL))
			put(&b, "%s ", o->key);
		put_metavar(&b, o);
		put(&b, "%s", req ? "" : "]");
	}
	if (more)
		put(&b, "%s[OPTION...]", b.used ? " " : "");
	return b.overflow ? -ENOSPC : 0;
}

/* ---- help and completion ---- */

static const char *const kind_names[] = {
	[CTL_OPT_WORD] = "word",       [CTL_OPT_U64] = "u64",
	[CTL_OPT_CPULIST] = "cpulist", [CTL_OPT_NAME] = "name",
	[CTL_OPT_MAC] = "mac",	       [CTL_OPT_LITERAL] = "literal",
	[CTL_OPT_STRING] = "string",   [CTL_OPT_CUSTOM] = "custom",
};

static const char *const values_names[] = {
	[CTL_VAL_NONE] = "",	   [CTL_VAL_PORT] = "port",
	[CTL_VAL_IFACE] = "iface", [CTL_VAL_WORKER] = "worker",
	[CTL_VAL_PROXY] = "proxy", [CTL_VAL_FILE] = "file",
};

const char *ctl_opt_values_name(enum ctl_opt_values v)
{
	return (size_t)v < sizeof(values_names) / sizeof(values_names[0])
		       ? values_names[v]
		       : "";
}

json_t *ctl_opt_json(const struct ctl_syntax *s)
{
	json_t *a = json_array();
	size_t k;
	int i;

	for (k = 0; a && k < s->n; k++) {
		const struct ctl_opt *o = &s->opts[k];
		char mv[256];
		struct out b = {mv, sizeof(mv), 0, 0};
		json_t *row, *words = json_array();

		mv[0] = 0;
		if (o->kind != CTL_OPT_LITERAL)
			put_metavar(&b, o);
		for (i = 0; o->words && words && o->words[i]; i++)
			json_array_append_new(words, json_string(o->words[i]));
		row = json_pack("{s:s?,s:s,s:b,s:b,s:s,s:o,s:s,s:s,s:i,s:s?}",
				"key", o->key, "kind", kind_names[o->kind],
				"positional", !!(o->flags & CTL_OPT_POSITIONAL),
				"required", !!(o->flags & CTL_OPT_REQUIRED),
				"metavar", mv, "words", words, "values",
				ctl_opt_values_name(o->values), "help",
				o->help ? o->help : "", "group", o->group,
				"example", o->example);
		if (!row || json_array_append_new(a, row)) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static void add_str(json_t *a, const char *w)
{
	json_array_append_new(a, json_string(w));
}

json_t *ctl_opt_complete(const struct ctl_syntax *s, int argc, char **argv,
			 enum ctl_opt_values *values)
{
	int seen[MAX_ROWS] = {0};
	json_t *a = json_array();
	int i = 0, r, k;

	*values = CTL_VAL_NONE;
	if (!a || s->n > MAX_ROWS)
		return a;
	for (k = 0; k < (int)s->n; k++) {
		const struct ctl_opt *o = &s->opts[k];

		if (!(o->flags & CTL_OPT_POSITIONAL))
			continue;
		if (i >= argc) {
			/* This positional value comes next; an optional one
			 * may also be left out for a keyword. */
			for (r = 0; o->words && o->words[r]; r++)
				add_str(a, o->words[r]);
			*values = o->values;
			if (o->flags & CTL_OPT_REQUIRED)
				return a;
			break;
		}
		if (!(o->flags & CTL_OPT_REQUIRED) && find_key(s, argv[i]) >= 0)
			continue; /* left out, as the parser reads it */
		i++;
	}
	while (i < argc) {
		r = find_key(s, argv[i]);
		if (r < 0) { /* unknown: nothing sensible to offer */
			i++;
			continue;
		}
		seen[r] = 1;
		if (s->opts[r].kind == CTL_OPT_LITERAL) {
			if (s->opts[r].next && i + 1 == argc) {
				add_str(a, s->opts[r].next);
				return a;
			}
			i++;
			continue;
		}
		if (i + 1 == argc) { /* its value comes next */
			const struct ctl_opt *o = &s->opts[r];

			for (k = 0; o->words && o->words[k]; k++)
				add_str(a, o->words[k]);
			*values = o->values;
			return a;
		}
		i += 2;
	}
	for (k = 0; k < (int)s->n; k++) {
		const struct ctl_opt *o = &s->opts[k];
		int lit = o->group && o->kind != CTL_OPT_LITERAL
				  ? literal_of(s, o->group)
				  : -1;

		if ((o->flags & CTL_OPT_POSITIONAL) || seen[k] || !o->key)
			continue;
		if (lit >= 0 && !seen[lit])
			continue;
		add_str(a, o->key);
	}
	return a;
}
