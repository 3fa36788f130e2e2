/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stream.h - `ferryctl capture PORT [OPTION...] -w FILE|-`: asks ferryd for
 * `capture stream PORT [OPTION...]` and copies the pcapng that comes back
 * on the connection to FILE or stdout until the daemon ends it, Ctrl-C, or
 * the reader of stdout goes away (`| tcpdump -r -c 10 -`). The daemon ends
 * the capture when this connection closes.
 */
#ifndef FERRY_CTL_STREAM_H
#define FERRY_CTL_STREAM_H

#include <stdbool.h>

/* argv (the command's words) asks for a stream. */
bool stream_wanted(int argc, char **argv);
/* Runs it; returns ferryctl's exit code. */
int stream_run(const char *path, int argc, char **argv);

#endif /* FERRY_CTL_STREAM_H */
