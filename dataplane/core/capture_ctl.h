/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * capture_ctl.h - the control thread's side of `capture start|stop|show`:
 * makes a capture (capture.h) for one port, hands its taps to the workers
 * of the port's queues (each paused while its pointer changes), and ends
 * it on `capture stop`, when it is done (count reached) or when its output
 * failed (a streaming client went away): ferry_capture_tick.
 *
 * Captures are runtime state: they are not part of the configuration.
 */
#ifndef FERRY_CAPTURE_CTL_H
#define FERRY_CAPTURE_CTL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ferry_err.h"

struct ferry;

struct ferry_cap_req {
	const char *name;
	const char *port;
	unsigned dirs;	    /* FERRY_CAP_DIR_BIT()s; 0: rx */
	const char *filter; /* NULL/"": every frame */
	uint32_t snaplen;   /* 0: the default */
	uint64_t count, rate_pps;
	/* The CPU of the capture's threads (writer, XDP reader); -1: the
	 * CPUs no worker is pinned to, or anywhere when there are none. */
	int cpu;
	const char *path; /* or fd >= 0 (own_fd: closed by the capture) */
	int fd;
	bool own_fd;
};

/* 0, or -errno with msg; on failure nothing is left running. */
int ferry_capture_start(struct ferry *f, const struct ferry_cap_req *r,
			struct ferry_err *msg);
/* Retires the taps, stops and frees the capture; -ENOENT if none. */
int ferry_capture_stop_name(struct ferry *f, const char *name,
			    struct ferry_err *msg);
/* The running captures and their counters, as a JSON array. */
json_t *ferry_capture_show(struct ferry *f);
/* Ends captures that are done or whose output failed (1 s tick). */
void ferry_capture_tick(struct ferry *f);
/* Ends the captures of port (it is being deleted). */
void ferry_captures_port_gone(struct ferry *f, const char *port);
/* Ends them all as capture stop does (files complete and closed, streams
 * at their end), each said in the log: "ended by WHY" (a hot restart:
 * captures belong to the process that runs them). */
void ferry_captures_end(struct ferry *f, const char *why);
/* Ends them all (shutdown, before the ports go). */
void ferry_captures_fini(struct ferry *f);
#endif /* FERRY_CAPTURE_CTL_H */
