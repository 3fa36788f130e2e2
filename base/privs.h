/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * privs.h - least privilege: the capabilities ferryd keeps once it is set up.
 *
 * Capabilities are per thread on Linux. ferryd narrows them twice on the
 * main thread (which runs every command): at start to the setup set, and
 * once the control socket exists and the config file is applied to the
 * run-time set. Worker threads drop every capability when they start: ring
 * work and wakeup syscalls on already-bound sockets need none.
 *
 * CAP_SYS_ADMIN is not among them: a killed ferryd's program is recognised
 * through its pin in bpffs (takeover.h), the DPDK PMD's through the fds it
 * left in this process; only opening programs by id would need it.
 */
#ifndef FERRY_PRIVS_H
#define FERRY_PRIVS_H

#include <stdbool.h>
#include <stddef.h>

/* What commands need while ferryd serves, and why: an X-macro, so the log
 * and the mask cannot drift apart. */
#define FERRY_RUNTIME_CAPS(X)                                                  \
	X(NET_ADMIN, "attach/detach XDP, busy-poll socket options")            \
	X(NET_RAW, "AF_XDP sockets")                                           \
	X(BPF, "load the classifier, update its maps")                         \
	X(PERFMON, "the CPUMAP enqueue tracepoint, BPF packet pointers")       \
	X(IPC_LOCK, "UMEM pages pinned beyond RLIMIT_MEMLOCK")                 \
	X(SYS_NICE, "a hot restart's pause at real-time priority (rt.h)")

/* Only while setting up: the control socket's directory, owner, mode. */
#define FERRY_SETUP_CAPS(X)                                                    \
	X(CHOWN, "give the control socket to group ferry")                     \
	X(FOWNER, "chmod the control socket")                                  \
	X(DAC_OVERRIDE, "make the socket directory, read the config file")     \
	X(NET_BIND_SERVICE, "--metrics on a port below 1024")

enum ferry_privs_stage {
	FERRY_PRIVS_SETUP,   /* run-time set plus the setup set */
	FERRY_PRIVS_RUNTIME, /* run-time set only */
	FERRY_PRIVS_NONE,    /* nothing: worker threads */
};

/*
 * Narrows the calling thread's permitted and effective capabilities to
 * those of stage it has now (it never asks for one it lacks, so it works
 * the same as root and under a unit that grants fewer). 0 or -errno.
 */
int ferry_privs_narrow(enum ferry_privs_stage stage);
/* Whether the calling thread has CAP_name in its effective set. */
bool ferry_privs_have(int cap);
/* "NET_ADMIN NET_RAW ..." of what the calling thread holds, for the log. */
void ferry_privs_describe(char *buf, size_t len);

#endif /* FERRY_PRIVS_H */
