// SPDX-License-Identifier: BSD-2-Clause
/* pins.c - a port's pins in bpffs (pins.h). */
#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "log.h"
#include "pins.h"

/* keep_prog: leave the program and config pins (what is attached). */
static void pin_dir_empty(const char *dir, bool keep_prog)
{
	char path[512];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (keep_prog && (!strcmp(de->d_name, FERRY_PIN_PROG) ||
				  !strcmp(de->d_name, FERRY_PIN_CFG)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	closedir(d);
}

bool ferry_pin_bpffs(void)
{
	char parent[sizeof(FERRY_PIN_ROOT)];
	struct statfs sfs;

	snprintf(parent, sizeof(parent), "%s", FERRY_PIN_ROOT);
	*strrchr(parent, '/') = 0;
	return !statfs(parent, &sfs) && sfs.f_type == BPF_FS_MAGIC;
}

int ferry_pin_path(const char *ifname, const char *name, char *path, size_t len)
{
	if ((size_t)snprintf(path, len, "%s/%s/%s", FERRY_PIN_ROOT, ifname,
			     name) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int ferry_pin_dir(const char *ifname, bool fresh, bool keep_prog, char *dir,
		  size_t len)
{
	dir[0] = 0;
	/* Only on bpffs: elsewhere a pin would fail at load, not here. */
	if (!ferry_pin_bpffs())
		return -ENOENT;
	/* 0700: the pins are the daemon user's (bpf_obj_get checks them). */
	if (mkdir(FERRY_PIN_ROOT, 0700) && errno != EEXIST)
		return -errno;
	if ((size_t)snprintf(dir, len, "%s/%s", FERRY_PIN_ROOT, ifname) >=
	    len) {
		dir[0] = 0;
		return -ENAMETOOLONG;
	}
	/* Another user's directory (a ferryd run as root before): pins
	 * there would fail at load, with a less useful message. */
	if ((mkdir(dir, 0700) && errno != EEXIST) || access(dir, W_OK | X_OK)) {
		int err = -errno;

		dir[0] = 0;
		return err;
	}
	/* Pins of a killed ferryd: a new port counts from zero, as before. */
	if (fresh)
		pin_dir_empty(dir, keep_prog);
	return 0;
}

int ferry_pin_replace(const char *dir, const char *name, int fd)
{
	char path[128], tmp[136];

	/* bpffs refuses names with a dot: "new_" marks the one aside. */
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
		    sizeof(path) ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s/new_%s", dir, name) >=
		    sizeof(tmp))
		return -ENAMETOOLONG;
	unlink(tmp);
	/* Pinned aside, then renamed over: a reader (a successor, a restart
	 * after a crash right here) sees the old pin or the new, never none. */
	if (bpf_obj_pin(fd, tmp))
		return -errno;
	if (rename(tmp, path)) {
		int err = -errno;

		unlink(tmp);
		return err;
	}
	return 0;
}

void ferry_pin_remove(const char *dir)
{
	if (!dir[0])
		return;
	pin_dir_empty(dir, false);
	rmdir(dir);
	rmdir(FERRY_PIN_ROOT); /* fails while another port has pins: fine */
}
