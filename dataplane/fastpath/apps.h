/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * apps.h - the names a worker's configuration is given in: what a port does
 * with what it receives, and how an idle worker waits. Small on purpose:
 * the public API (core/ferry.h) takes these without seeing the worker's
 * rings or queues (worker.h).
 */
#ifndef FERRY_APPS_H
#define FERRY_APPS_H

/* What a port does with what it receives: an X-macro, like every list. */
#define FERRY_APPS(X)                                                          \
	X(NONE, "none")                                                        \
	X(XCONNECT, "xconnect")                                                \
	X(REFLECT, "reflect")                                                  \
	X(DROP, "drop")                                                        \
	X(ROUTE, "route")

enum ferry_app {
#define FERRY_APP_ENUM(id, name) FERRY_APP_##id,
	FERRY_APPS(FERRY_APP_ENUM)
#undef FERRY_APP_ENUM
		FERRY_APP__COUNT
};

enum ferry_idle {
	FERRY_IDLE_BUSY, /* spin; sleep in poll() only after a long idle */
	FERRY_IDLE_POLL, /* poll() as soon as a loop finds nothing */
};

#endif /* FERRY_APPS_H */
