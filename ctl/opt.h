/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * opt.h - a command's arguments as data: one typed row per keyword.
 *
 * A row says what a keyword is called, what kind of value it takes (a word
 * out of a list, a number in a range, a CPU list, a name...), where that
 * value goes in the command's params struct, and how it is shown in the
 * usage text. The same rows parse a command line into a params struct,
 * print a params struct back as a command line (only what differs from the
 * command's defaults), generate the usage text and tell bash completion
 * what may come next, so the four cannot drift apart (xdp-tools'
 * DEFINE_OPTION is the model).
 *
 * The grammar: positional rows first, in order; then keyword rows, each
 * "KEY VALUE", in any order. A literal row is a fixed word ("spread",
 * "match", "to") that opens a group of keywords: those rows name its group
 * and may only be given when the literal is.
 */
#ifndef FERRY_CTL_OPT_H
#define FERRY_CTL_OPT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto.h"

enum ctl_opt_kind {
	CTL_OPT_WORD,	 /* one of .words; stores .vals[i] (or i) */
	CTL_OPT_U64,	 /* an unsigned number in .min-.max */
	CTL_OPT_CPULIST, /* "0-3,5": a uint64_t mask; .min 1: not empty */
	CTL_OPT_NAME,	 /* a word, kept as a const char * into argv */
	CTL_OPT_STRING,	 /* as NAME, printed in double quotes (a path) */
	CTL_OPT_MAC,	 /* aa:bb:cc:dd:ee:ff into uint8_t[6] */
	CTL_OPT_LITERAL, /* a fixed word that opens the group .group */
	CTL_OPT_CUSTOM,	 /* .parse and .print do the work */
};

/* Row flags. */
#define CTL_OPT_POSITIONAL 0x1u /* no key: the value is the next word */
#define CTL_OPT_REQUIRED   0x2u /* must be given (in its group) */
#define CTL_OPT_PIN	   0x4u /* printed even when it is the default */
#define CTL_OPT_GIVEN	   0x8u /* .given_off names a bool set when given */

/* What completion offers for a value, beyond a row's words. */
enum ctl_opt_values {
	CTL_VAL_NONE,	/* free text: nothing to offer */
	CTL_VAL_PORT,	/* a port name */
	CTL_VAL_IFACE,	/* a network interface */
	CTL_VAL_WORKER, /* a worker id */
	CTL_VAL_PROXY,	/* a proxy name */
	CTL_VAL_FILE,	/* a path */
};

struct ctl_opt {
	const char *key; /* keyword, or the literal word; NULL if positional */
	enum ctl_opt_kind kind;
	unsigned int flags;
	size_t off;  /* of the field in the params struct */
	size_t size; /* of the field: 1, 2, 4 or 8 for numbers and words */
	const char *const *words; /* CTL_OPT_WORD: NULL-terminated */
	const uint64_t *vals;	  /* stored per word; NULL: the index */
	uint64_t min, max;	  /* CTL_OPT_U64 */
	const char *metavar;	  /* "IFNAME", "N|A-B"; WORD: from .words */
	const char *help;	  /* a few words, for `help CMD` */
	const char *example;	  /* a good value (CUSTOM rows: required) */
	int group;		  /* 0, or the group of the literal row */
	const char *next;	  /* LITERAL: the keyword that must follow */
	size_t given_off;	  /* CTL_OPT_GIVEN: offset of a bool */
	enum ctl_opt_values values;
	/* CTL_OPT_CUSTOM: parse into the params struct; print into buf what
	 * the row shows (an empty string: the default, left out). */
	int (*parse)(const char *val, void *params, struct ferry_err *err);
	void (*print)(const void *params, char *buf, size_t len);
};

/* The arguments of one command. */
struct ctl_syntax {
	const struct ctl_opt *opts;
	size_t n;
	size_t size;	     /* of the params struct */
	const void *dflt;    /* what parsing starts from; NULL: zeroes */
	const char *command; /* for messages: "port add" */
};

#define CTL_OPTS(rows) (rows), (sizeof(rows) / sizeof((rows)[0]))

/*
 * Parses argv into params (first set to the defaults). Unknown, repeated
 * or missing keywords, bad values, a keyword outside its group and missing
 * required rows are errors, with the usage in the message where it helps.
 * String fields point into argv. 0 or -errno with err filled.
 */
int ctl_opt_parse(const struct ctl_syntax *s, int argc, char **argv,
		  void *params, struct ferry_err *err);

/*
 * Appends params as words after the command name to buf (NUL-terminated):
 * positional values, then every keyword whose value differs from the
 * default (or is pinned or required). 0, or -ENOSPC when it did not fit.
 */
int ctl_opt_print(const struct ctl_syntax *s, const void *params, char *buf,
		  size_t len);

/* The synopsis of the arguments: "NAME dev IFNAME [queues N|A-B] ...". */
int ctl_opt_usage(const struct ctl_syntax *s, char *buf, size_t len);
/* The short one, for a list: what is required, then "[OPTION...]" when
 * there is more: "NAME dev IFNAME [OPTION...]". */
int ctl_opt_synopsis(const struct ctl_syntax *s, char *buf, size_t len);

/*
 * The rows as JSON for `help CMD` and completion:
 * [{"key":..,"kind":..,"metavar":..,"words":[..],"values":..,"help":..}].
 */
json_t *ctl_opt_json(const struct ctl_syntax *s);

/*
 * What may come next after the words typed (argv, the last one being the
 * one the cursor is after): a value's candidates (its words, or *values
 * set to what kind of names to ask for) or the keywords not yet used.
 * Returns a JSON array of strings.
 */
json_t *ctl_opt_complete(const struct ctl_syntax *s, int argc, char **argv,
			 enum ctl_opt_values *values);

/* Name of a values kind ("port", "iface"...), for JSON. */
const char *ctl_opt_values_name(enum ctl_opt_values v);

#endif /* FERRY_CTL_OPT_H */
