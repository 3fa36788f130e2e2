/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcapng.h - a writer of pcapng files (draft-ietf-opsawg-pcapng): one
 * Section Header Block, one Interface Description Block per interface the
 * caller declares, then Enhanced Packet Blocks.
 *
 * Why ferry writes the blocks itself: libpcap 1.10 (Debian 12) *reads*
 * pcapng but its dumper (pcap_dump_open/pcap_dump) writes only classic
 * pcap: one link type and one snaplen per file, microsecond or nanosecond
 * timestamps but no per-packet comment, no direction flags and no interface
 * per (port, direction). Those are what a capture of ferry needs to show
 * what happened to a frame, and the three block types are ~150 lines.
 *
 * Output goes to a file descriptor, buffered in memory; the buffer is
 * written out when it fills and by ferry_pcapng_flush(), which the capture
 * writer calls at a bounded interval so that a reader at the other end of a
 * pipe or socket (`ferryctl capture ... -w - | tcpdump -r -`) sees frames
 * promptly. Writes to a socket use MSG_NOSIGNAL | MSG_DONTWAIT (a client
 * that went away is EPIPE, not SIGPIPE; the socket's own flags, which the
 * control server owns, do not matter); a full socket or non-blocking fd is
 * waited on with poll() in short steps, so ferry_pcapng_cancel() from
 * another thread ends a write to a reader that stopped reading.
 *
 * One thread uses a writer (the capture's writer thread); only
 * ferry_pcapng_cancel() may be called from another one.
 */
#ifndef FERRY_PCAPNG_H
#define FERRY_PCAPNG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ferry_pcapng;

/* Direction bits of the EPB's epb_flags option (inbound/outbound). */
enum ferry_pcapng_dir {
	FERRY_PCAPNG_DIR_UNKNOWN = 0,
	FERRY_PCAPNG_DIR_IN = 1,
	FERRY_PCAPNG_DIR_OUT = 2,
};

/*
 * Starts a section on fd: writes (buffers) the Section Header Block.
 * own_fd: ferry_pcapng_close() closes fd. NULL + errno on failure.
 */
struct ferry_pcapng *ferry_pcapng_open_fd(int fd, bool own_fd);

/*
 * Creates (truncates) PATH, mode 0644 (umask applies). NULL + errno: the
 * open(2) error, so "Permission denied" reaches the operator as it is.
 */
struct ferry_pcapng *ferry_pcapng_open_path(const char *path);

/*
 * Declares an interface (Ethernet link type, nanosecond timestamps):
 * returns its id (0, 1, ... in order) for ferry_pcapng_packet(), or -errno.
 * All interfaces must be declared before the first packet.
 */
int ferry_pcapng_add_if(struct ferry_pcapng *w, const char *name,
			const char *description, uint32_t snaplen);

/*
 * One Enhanced Packet Block. data holds caplen bytes; orig_len is the
 * frame's length on the wire (>= caplen). dir: enum ferry_pcapng_dir;
 * comment may be NULL. 0 or -errno (the first write error sticks: every
 * later call returns it).
 */
int ferry_pcapng_packet(struct ferry_pcapng *w, uint32_t if_id, uint64_t ts_ns,
			const void *data, uint32_t caplen, uint32_t orig_len,
			enum ferry_pcapng_dir dir, const char *comment);

/* Writes out what is buffered. 0 or -errno. */
int ferry_pcapng_flush(struct ferry_pcapng *w);

/* Any thread: a write waiting on a full non-blocking fd gives up (-ECANCELED). */
void ferry_pcapng_cancel(struct ferry_pcapng *w);

/* Bytes handed to the fd so far (for `capture show`). */
uint64_t ferry_pcapng_bytes(const struct ferry_pcapng *w);

/* Flushes, closes (if owned) and frees; returns the flush's result. */
int ferry_pcapng_close(struct ferry_pcapng *w);

#endif /* FERRY_PCAPNG_H */
