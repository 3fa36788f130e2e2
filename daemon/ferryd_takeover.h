/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ferryd_takeover.h - `ferryd --takeover`: the new daemon's side of a hot
 * restart, talking to the old daemon over its control socket (the old
 * side's commands are `handover begin|release|commit|abort`, takeover.h).
 *
 *   begin    the old daemon's pid and running configuration
 *   (the configuration is applied here: workers, classifiers loaded with
 *    the pinned maps, then at the first socket bind:)
 *   release  the old daemon drains and closes its sockets
 *   (our sockets bind, apps are set, the XSKMAPs filled, programs swapped)
 *   commit   the old daemon exits 0, leaving XDP attached
 *
 * On a failure after the release, our ports are deleted first (freeing
 * the queues) and then `abort` gives them back to the old daemon.
 */
#ifndef FERRY_FERRYD_TAKEOVER_H
#define FERRY_FERRYD_TAKEOVER_H

#include <stddef.h>

#include "commands.h"
#include "ferry_err.h"

struct ferryd_takeover;

/* Connects to the daemon serving path and asks it to begin; NULL + msg. */
struct ferryd_takeover *ferryd_takeover_connect(const char *path,
						struct ferry_err *msg);
/* Applies the old daemon's configuration to ctx->f and activates it. */
int ferryd_takeover_run(struct ferryd_takeover *t, struct ferryd_ctx *ctx,
			struct ferry_err *msg);
/* The old daemon exits; returns once it has closed the connection. */
int ferryd_takeover_commit(struct ferryd_takeover *t, struct ferry_err *msg);
/* After a failed run, once ctx->f's ports are gone: the old one resumes. */
void ferryd_takeover_abort(struct ferryd_takeover *t);
void ferryd_takeover_close(struct ferryd_takeover *t);

#endif /* FERRY_FERRYD_TAKEOVER_H */
