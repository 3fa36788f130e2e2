/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * watch.h - `ferryctl stats --watch [INTERVAL] [--count N]`: one connection,
 * stats every INTERVAL seconds, the per-port layout of `stats` redrawn like
 * top, fitted to the terminal.
 */
#ifndef FERRY_CTL_WATCH_H
#define FERRY_CTL_WATCH_H

#include <stdbool.h>
#include <stddef.h>

struct watch_opts {
	bool on;	     /* --watch given */
	double interval;     /* seconds between frames */
	unsigned long count; /* frames to draw; 0: until a signal */
	bool all;	     /* -a: counters that are zero too */
};

/* Takes --watch and its arguments out of a stats command line; -1 on a
 * usage error (printed). */
int take_watch_args(int *argc, char **argv, struct watch_opts *wo);
/* Runs the loop; returns the exit code. */
int watch_run(const char *path, const char *request, size_t len, bool json_out,
	      const struct watch_opts *opts);

#endif /* FERRY_CTL_WATCH_H */
