/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * takeover.h - hot restart: a new ferryd (`ferryd --takeover`) adopts the
 * ports of a running one without detaching XDP.
 *
 * An (interface, queue) takes one AF_XDP buffer pool, so the two daemons'
 * sockets cannot overlap: the old one closes its sockets ("release"), the
 * new one binds its own, fills the XSKMAP and swaps its classifier in for
 * the old one's (XDP_FLAGS_REPLACE). Between the two, the classifier finds
 * no socket and passes frames to the kernel, counted as pass_no_xsk: the
 * frames a takeover loses.
 *
 * The XSKMAP and the verdict counters of each port are pinned in bpffs
 * (FERRY_PIN_ROOT/<ifname>/), with the program and its config map; the new
 * daemon recognises the old one's program by its pin, its skeleton reuses
 * the pinned maps, so the counters carry on across the restart and the new
 * sockets receive through the old program until the swap. Without bpffs
 * the new daemon recognises the old program by the id the old daemon names
 * in `handover begin`; its own maps then start at zero.
 *
 * Old side: `handover begin` (pid, running configuration, and the id of
 * each port's program, so a successor without bpffs knows them), `handover
 * release` (sockets closed, XDP left attached), then `handover commit`
 * (exit 0, leaving XDP and pins to the successor) or `handover abort` (the
 * sockets come back). Without a commit within FERRY_HANDOVER_TIMEOUT_MS of
 * the release, the old daemon resumes by itself.
 */
#ifndef FERRY_TAKEOVER_H
#define FERRY_TAKEOVER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ferry_err.h"
#include "ferry_limits.h"
#include "pins.h"

#define FERRY_HANDOVER_TIMEOUT_MS 5000

struct ferry;
struct ferry_port;

/* ---- old side ---- */

/* *out = {"pid":N} (the daemon adds "config", its command lines); 0 or
 * -errno with msg. Changes nothing. pass: the successor takes sockets as
 * they are (`handover offer`), so ports that only that restarts (spread)
 * are no reason to refuse. */
int ferry_handover_begin(struct ferry *f, bool pass, json_t **out,
			 struct ferry_err *msg);
/*
 * Closes every port's sockets, leaving XDP attached, and parks the
 * workers; *dropped: frames lost at those sockets since the last stats
 * reset (they are not counted anywhere else once this daemon is gone).
 */
int ferry_handover_release(struct ferry *f, uint64_t *dropped,
			   struct ferry_err *msg);
/*
 * The gapless alternative to a release (takeover_rings.c): parks every
 * worker at a batch boundary and describes, in *out, each worker's UMEM
 * and each socket (ring positions and frame tags stay in shared memory),
 * with counters; fds[*n_fds]: the UMEM files and sockets *out refers to
 * by index, for the daemon to send (SCM_RIGHTS). Refused (-EOPNOTSUPP, no
 * change) where only a rebuild can hand over: DPDK or spread ports. Abort
 * and the timeout resume as after a release; commit forgets the sockets.
 */
#define FERRY_HANDOVER_MAX_FDS 253 /* SCM_MAX_FD */
/* With begin: every worker's UMEM file ({"id","fd","frames","hugepages"}
 * in *out, fds to send), for the successor to map ahead of the pass. */
int ferry_handover_umems(struct ferry *f, json_t **out, int *fds, int *n_fds);
int ferry_handover_pass(struct ferry *f, json_t **out, int *fds, int *n_fds,
			struct ferry_err *msg);
/* Ends every generator, each said in the log: a run and its frames are
 * this process's, so neither pass nor release hands them over (both end
 * them first). */
void ferry_handover_gens_end(struct ferry *f);
/* Reopens the sockets after a release (abort or timeout); 0 or -errno. */
int ferry_handover_resume(struct ferry *f, struct ferry_err *msg);
/* After a release: the successor owns XDP and pins; exit leaves them. */
int ferry_handover_commit(struct ferry *f, struct ferry_err *msg);
/* From the tick: resumes when a release was not committed in time. */
void ferry_handover_tick(struct ferry *f);

/* ---- new side ---- */

typedef int (*ferry_release_fn)(void *arg, struct ferry_err *msg);

/* A program the old ferryd names as its own in `handover begin`. */
struct ferry_adopt_prog {
	int ifindex;
	uint32_t prog_id;
};
/*
 * Ports added from now on adopt the XDP programs of ferryd old_pid: they
 * only load their classifier (reusing pins) and wait, with their app.
 * progs[n]: the programs old_pid named as its own (`handover begin`'s
 * "progs"): a port recognises the one attached to its interface by that,
 * where bpffs (the pins) is not there to tell.
 */
void ferry_takeover_start(struct ferry *f, uint32_t old_pid,
			  const struct ferry_adopt_prog *progs, int n,
			  ferry_release_fn release, void *arg);
/*
 * Then, all at once: release(arg) (the old daemon closes its sockets),
 * every port's sockets bound, apps set, XSKMAPs filled, each program
 * swapped in; 0 or -errno with msg.
 */
int ferry_takeover_activate(struct ferry *f, struct ferry_err *msg);
/*
 * Instead of the release: serve the sockets and UMEMs the old ferryd
 * passed (ferry_handover_pass: desc and fds, all taken, closed or kept),
 * with its counters, and set the ports' apps; every worker held paused
 * until all is in place. 0, or -errno with msg and nothing adopted: the
 * old ferryd resumes on `handover abort`, and a rebuild can follow.
 */
int ferry_takeover_adopt(struct ferry *f, json_t *desc, int *fds, int n_fds,
			 struct ferry_err *msg);
/* The UMEM files begin sent (ferry_handover_umems: umems, fds, all
 * taken): mapped and faulted in now, used by ferry_takeover_adopt when
 * the pass names the same files. */
void ferry_takeover_premap(struct ferry *f, const json_t *umems, int *fds,
			   int n_fds);
/* A takeover that failed after the adoption: the sockets and UMEMs are
 * dropped as they are (their state written back), for the old ferryd to
 * resume on; before ferry_destroy(). Nothing when nothing was adopted. */
void ferry_takeover_giveback(struct ferry *f);
/* After a failed takeover: destroy leaves pins to the old daemon. */
void ferry_takeover_keep_pins(struct ferry *f);

#endif /* FERRY_TAKEOVER_H */
