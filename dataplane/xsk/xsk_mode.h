/* SPDX-License-Identifier: BSD-2-Clause */
/* xsk_mode.h - how a socket binds: what `port add ... mode` asks for. */
#ifndef FERRY_XSK_MODE_H
#define FERRY_XSK_MODE_H

enum ferry_xsk_mode {
	FERRY_XSK_AUTO,
	FERRY_XSK_ZC,
	FERRY_XSK_COPY,
};

/*
 * `port add ... busy-poll`: off; on (SO_BUSY_POLL and its budget, and
 * SO_PREFER_BUSY_POLL where the driver profile says the NAPI a socket
 * busy-polls also sends its TX ring); prefer (SO_PREFER_BUSY_POLL
 * whatever the profile says).
 */
enum ferry_busy_poll {
	FERRY_BUSY_POLL_OFF,
	FERRY_BUSY_POLL_ON,
	FERRY_BUSY_POLL_PREFER,
};

#endif /* FERRY_XSK_MODE_H */
