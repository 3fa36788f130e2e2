/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * render_int.h - what render.c (the generic renderer and the fold) shares
 * with render_views.c (the per-command views). ferryctl's own.
 */
#ifndef FERRY_CTL_RENDER_INT_H
#define FERRY_CTL_RENDER_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "util.h"

/* `help`: one line per command, never wider than this. */
#define HELP_LIST_WIDTH 100

/* Where a view writes and what it may show. */
struct view {
	FILE *f;
	bool all;	    /* -a: zero counters too */
	int width;	    /* folded to this in the last pass */
	const json_t *prev; /* watch: the previous stats data, for rates */
	double dt;	    /* seconds between prev and this reply */
};

/*
 * Items written one after another, three blanks apart, a new line when the
 * next would pass the width: `mode copy   xdp native   prog 142`.
 */
struct pack {
	struct view *v;
	int indent;
	size_t col;  /* 0: nothing on the current line yet */
	bool titled; /* the line holds only a title: one blank after it */
};

/* A view of one command's reply, picked by the command's first words. */
struct view_row {
	const char *words; /* the command words that pick it */
	int (*fn)(struct view *v, const json_t *data);
	bool raw;  /* not folded: text to copy or feed to other tools */
	bool help; /* help CMD: wrapped to the terminal, 80 in a pipe */
};

/* The row whose words begin argv, the longest match; NULL if none. */
const struct view_row *render_view_for(int argc, char *const *argv);

/* ---- values ---- */
bool is_scalar(const json_t *v);
bool is_flat_array(const json_t *v);
bool is_zero(const json_t *v);
void scalar_text(const json_t *v, char *buf, size_t size);
/* A scalar or a list of scalars as text; malloc'd, NULL without memory. */
char *value_text(const json_t *v);

/* ---- packed "key value" lines ---- */
void pack_begin(struct pack *p, struct view *v, int indent);
void pack_end(struct pack *p);
void pack_add(struct pack *p, const char *label, const char *text);
int pack_value(struct pack *p, const char *label, const json_t *v);
/* "title: a 1   b 2": the set's counters (not zero, unless -a), not skip. */
int pack_counters(struct view *v, int indent, const char *title,
		  const json_t *set, const char *const *skip);

/* ---- generic ---- */
int gen_member(struct view *v, const char *key, const json_t *val, int indent);
int gen_block(struct view *v, const json_t *row, int indent,
	      const char *const *skip, bool titled);
int view_generic(struct view *v, const json_t *data);
void put_wrapped(struct view *v, size_t at, size_t cont, const char *s);

#endif /* FERRY_CTL_RENDER_INT_H */
