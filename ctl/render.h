/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * render.h - replies for people: arrays of objects become tables, objects
 * "key: value" lines, whatever the command. -j prints the raw line.
 */
#ifndef FERRY_CTL_RENDER_H
#define FERRY_CTL_RENDER_H

#include <jansson.h>
#include <stdbool.h>

/* Prints a reply line; returns the exit code (enum exit_code). */
int print_reply(const char *raw, bool json_out);
/* "ferryctl: CODE: message" on stderr. */
void print_error(const json_t *reply);

#endif /* FERRY_CTL_RENDER_H */
