/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * capture_frames.h - numbered synthetic frames for the capture's unit test
 * and benchmark: Ethernet + IPv4 + UDP, the payload starting with the
 * producer's id and a sequence number (both u32, network order), so a
 * reader of the file can check which frames arrived and in what order.
 */
#ifndef FERRY_CAPTURE_FRAMES_H
#define FERRY_CAPTURE_FRAMES_H

#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

#define CF_HDR_LEN (14 + 20 + 8) /* Ethernet, IPv4, UDP */
#define CF_MIN_LEN (CF_HDR_LEN + 8)

/* Writes a frame of len bytes (>= CF_MIN_LEN) into buf. */
static inline void cf_build_udp(uint8_t *buf, uint32_t len, uint32_t id,
				uint32_t seq, uint16_t dport)
{
	static const uint8_t macs[12] = {0x02, 0, 0, 0, 0, 2,
					 0x02, 0, 0, 0, 0, 1};
	uint16_t ip_len = (uint16_t)(len - 14), udp_len = (uint16_t)(len - 34);
	uint8_t *ip = buf + 14, *udp = ip + 20;
	uint32_t v;

	memset(buf, 0, len);
	memcpy(buf, macs, 12);
	buf[12] = 0x08; /* IPv4 */
	ip[0] = 0x45;
	ip[2] = (uint8_t)(ip_len >> 8);
	ip[3] = (uint8_t)ip_len;
	ip[8] = 64;
	ip[9] = 17; /* UDP */
	memcpy(ip + 12, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
	udp[0] = 0x30; /* sport 12345 */
	udp[1] = 0x39;
	udp[2] = (uint8_t)(dport >> 8);
	udp[3] = (uint8_t)dport;
	udp[4] = (uint8_t)(udp_len >> 8);
	udp[5] = (uint8_t)udp_len;
	v = htonl(id);
	memcpy(udp + 8, &v, 4);
	v = htonl(seq);
	memcpy(udp + 12, &v, 4);
}

/* The numbers back from a frame's bytes. */
static inline void cf_read_ids(const uint8_t *buf, uint32_t *id, uint32_t *seq)
{
	uint32_t v;

	memcpy(&v, buf + CF_HDR_LEN, 4);
	*id = ntohl(v);
	memcpy(&v, buf + CF_HDR_LEN + 4, 4);
	*seq = ntohl(v);
}

#endif /* FERRY_CAPTURE_FRAMES_H */
