/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pins.h - a port's maps and program pinned in bpffs, under
 * FERRY_PIN_ROOT/<ifname>/: how a restarted ferryd recognises a killed
 * one's program and how a successor reuses the verdict counters
 * (core/takeover.h). Control thread only.
 */
#ifndef FERRY_PINS_H
#define FERRY_PINS_H

#include <stdbool.h>
#include <stddef.h>

#define FERRY_PIN_ROOT "/sys/fs/bpf/ferry"

/*
 * FERRY_PIN_ROOT/<ifname>/ holds, besides the shared maps, the program
 * ferryd attached there and its config map (owner pid). They are how a
 * restarted or succeeding ferryd recognises that program as a ferryd's: the
 * pinned program's id equals the attached one's. Opening a pin needs file
 * permission and CAP_BPF; opening a program by id would need CAP_SYS_ADMIN.
 */
#define FERRY_PIN_PROG "ferry_xdp"
#define FERRY_PIN_CFG  "ferry_cfg"

/* Whether bpffs is mounted where FERRY_PIN_ROOT lives. */
bool ferry_pin_bpffs(void);
/* FERRY_PIN_ROOT/<ifname>/<name> into path; 0 or -ENAMETOOLONG. */
int ferry_pin_path(const char *ifname, const char *name, char *path,
		   size_t len);
/*
 * Makes FERRY_PIN_ROOT/<ifname> and writes it into dir; fresh: removes
 * pins left there first (a new port starts counting at zero) except, with
 * keep_prog, the program and config pins (the attached program's, until
 * ours replaces them). 0, or -errno (dir is then empty: no pinning):
 * -ENOENT when bpffs is not mounted, -EACCES when the directory is another
 * user's.
 */
int ferry_pin_dir(const char *ifname, bool fresh, bool keep_prog, char *dir,
		  size_t len);
/* Pins fd as dir/name, atomically replacing what was there; 0 or -errno. */
int ferry_pin_replace(const char *dir, const char *name, int fd);
/* Removes the port's pins and its directory (port del, clean exit). */
void ferry_pin_remove(const char *dir);

#endif /* FERRY_PINS_H */
