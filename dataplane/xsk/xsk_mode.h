/* SPDX-License-Identifier: BSD-2-Clause */
/* xsk_mode.h - how a socket binds: what `port add ... mode` asks for. */
#ifndef FERRY_XSK_MODE_H
#define FERRY_XSK_MODE_H

enum ferry_xsk_mode {
	FERRY_XSK_AUTO,
	FERRY_XSK_ZC,
	FERRY_XSK_COPY,
};

#endif /* FERRY_XSK_MODE_H */
