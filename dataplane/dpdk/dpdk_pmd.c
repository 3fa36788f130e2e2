// SPDX-License-Identifier: BSD-2-Clause
/*
 * dpdk_pmd.c - what ferry does around DPDK's af_xdp PMD: hands it ferry's
 * classifier, adopts the program it loaded (maps by id), and cleans up
 * what the 22.11 PMD leaves behind (sockets, XSKMAP entries, allocations
 * LeakSanitizer would report).
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <linux/if_link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dpdk_int.h"
#include "ferry_xdp.skel.h"
#include "log.h"
#include "port.h"
#include "wire.h"

/* ------------------------------------------------ the PMD's classifier */

/* ferry's classifier as a file the PMD's xdp_prog= can open. */
int ferry_dpdk_prog_memfd(void)
{
	size_t sz, off = 0;
	const uint8_t *elf = ferry_xdp_bpf__elf_bytes(&sz);
	int fd = memfd_create("ferry_xdp.bpf.o", MFD_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (off < sz) {
		ssize_t n = write(fd, elf + off, sz - off);

		if (n <= 0) {
			int err = n < 0 ? -errno : -EIO;

			close(fd);
			return err;
		}
		off += (size_t)n;
	}
	return fd;
}

/*
 * Points the skeleton's maps at the loaded program's maps of the same name
 * and shape. Returns how many of the maps a classifier must have were
 * found.
 */
static int maps_reuse(struct ferry_xdp_bpf *skel, int prog_fd)
{
	struct bpf_map *m;
	int found = 0, fd;

	bpf_object__for_each_map(m, skel->obj)
	{
		if (bpf_map__is_internal(m))
			continue;
		fd = ferry_prog_map_fd(prog_fd, m);
		if (fd < 0)
			continue;
		/* reuse_fd dups the fd: ours is closed below. */
		if (!bpf_map__reuse_fd(m, fd) &&
		    (m == skel->maps.ferry_cfg || m == skel->maps.ferry_rules ||
		     m == skel->maps.ferry_verdicts ||
		     m == skel->maps.xsks_map))
			found++;
		close(fd);
	}
	return found;
}

/*
 * A skeleton over the PMD's program (arg: its fd): its maps are the PMD's,
 * its own classifier is not loaded; the CPUMAP program (and the enqueue
 * tracepoint) are, so steering works as on a native port.
 */
static int skel_adopt(struct ferry_port *p, void *arg)
{
	int found = maps_reuse(p->skel, *(int *)arg);

	if (found != 4)
		return found < 0 ? found : -ENOENT;
	bpf_program__set_autoload(p->skel->progs.ferry_xdp, false);
	return 0;
}

/* Finds the program the PMD attached, adopts it and configures it. */
int ferry_dpdk_prog_adopt(struct ferry_port *p, struct ferry_err *msg)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct ferry_xdp_cfg cfg = {
		.default_action = p->default_action,
		.pass_arp_ndp = !ferry_port_is_wire(p),
		.owner_pid = (uint32_t)getpid(),
	};
	struct bpf_prog_info info = {0};
	uint32_t ilen = sizeof(info), id, key = 0;
	int fd, err;

	err = bpf_xdp_query(p->ifindex, 0, &q);
	if (err)
		return ferry_fail(msg, err, "%s: cannot query XDP: %s",
				  p->ifname, strerror(-err));
	id = q.drv_prog_id   ? q.drv_prog_id
	     : q.skb_prog_id ? q.skb_prog_id
			     : q.prog_id;
	/* The PMD loaded it in this process: its fd is ours already. */
	fd = id ? ferry_bpf_own_fd(true, id) : -ENOENT;
	if (fd < 0)
		return ferry_fail(msg, -ENOENT,
				  "%s: the af_xdp PMD attached no program",
				  p->ifname);
	if (bpf_obj_get_info_by_fd(fd, &info, &ilen) ||
	    strcmp(info.name, FERRY_XDP_PROG_NAME)) {
		close(fd);
		return ferry_fail(msg, -EBUSY,
				  "%s: program '%s' (id %u) is attached, not "
				  "ferry's classifier",
				  p->ifname, info.name, id);
	}
	err = ferry_port_skel_load(p, skel_adopt, &fd);
	if (err)
		close(fd);
	if (err)
		return ferry_fail(msg, err,
				  "%s: cannot adopt the classifier's maps: %s",
				  p->ifname, strerror(-err));
	if (bpf_map_update_elem(bpf_map__fd(p->skel->maps.ferry_cfg), &key,
				&cfg, 0)) {
		err = -errno;
		close(fd);
		ferry_port_xdp_unload(p);
		return ferry_fail(msg, err,
				  "cannot configure the classifier: %s",
				  strerror(-err));
	}
	p->prog_id = id;
	ferry_port_xdp_pin(p, fd);
	close(fd);
	return 0;
}

/* A dead ferryd's program (fd: its pin) is ours to take off before the
 * PMD attaches; the kernel detaches it only if it is still attached. */
int ferry_dpdk_stale_detach(const struct ferry_port *p, int fd,
			    struct ferry_err *msg)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, opts);
	struct bpf_prog_info info = {0};
	uint32_t ilen = sizeof(info), id;
	int err;

	id = bpf_obj_get_info_by_fd(fd, &info, &ilen) ? 0 : info.id;
	opts.old_prog_fd = fd;
	err = bpf_xdp_detach(p->ifindex, 0, &opts);
	if (err)
		return ferry_fail(msg, err,
				  "%s: cannot remove the stale ferry program "
				  "%u: %s",
				  p->ifname, id, strerror(-err));
	log_info("port %s: removed stale ferry program id %u", p->name, id);
	return 0;
}

/*
 * Empties the port's XSKMAP slots. The PMD (22.11) never closes the BPF
 * object it loaded, so its XSKMAP outlives the device, and a socket in a
 * map stays alive, its queue bound, after the PMD closed it.
 */
void ferry_dpdk_xskmap_clear(const struct ferry_port *p)
{
	uint32_t i, q;

	if (!p->skel)
		return;
	for (i = 0; i < p->n_queues; i++) {
		q = p->q_first + i;
		bpf_map_delete_elem(bpf_map__fd(p->skel->maps.xsks_map), &q);
	}
}

/*
 * The PMD of DPDK 22.11 never frees a queue's UMEM on close (its refcount
 * test is off by one), and libxdp closes the first socket of a UMEM only
 * with the UMEM: so the socket stays open and its queue bound, and no
 * later port add, native or DPDK, can have it. ferry notes the AF_XDP
 * sockets that appear while the PMD sets a port up, and closes those
 * still open (same inode) once the PMD closed the device.
 */
static bool fd_is_xsk(int fd, uint64_t *ino)
{
	int dom = 0;
	socklen_t dlen = sizeof(dom);
	struct stat st;

	if (fstat(fd, &st) || !S_ISSOCK(st.st_mode) ||
	    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &dlen) || dom != AF_XDP)
		return false;
	*ino = (uint64_t)st.st_ino;
	return true;
}

/* Calls fn for each AF_XDP socket of the process. */
static void xsk_fds_each(void (*fn)(void *arg, int fd, uint64_t ino), void *arg)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	uint64_t ino;

	if (!d)
		return;
	while ((de = readdir(d))) {
		int fd = atoi(de->d_name);

		if (de->d_name[0] != '.' && fd != dirfd(d) &&
		    fd_is_xsk(fd, &ino))
			fn(arg, fd, ino);
	}
	closedir(d);
}

static void xsk_mark_old(void *arg, int fd, uint64_t ino)
{
	struct ferry_dpdk_port *dp = arg;

	if (dp->n_xsk < FERRY_DPDK_MAX_XSK_FDS) {
		dp->xsk_fd[dp->n_xsk] = -1; /* not the PMD's: keep */
		dp->xsk_ino[dp->n_xsk++] = ino;
	}
}

static void xsk_mark_new(void *arg, int fd, uint64_t ino)
{
	struct ferry_dpdk_port *dp = arg;
	uint32_t i;

	for (i = 0; i < dp->n_xsk; i++)
		if (dp->xsk_ino[i] == ino)
			return;
	if (dp->n_xsk < FERRY_DPDK_MAX_XSK_FDS) {
		dp->xsk_fd[dp->n_xsk] = fd;
		dp->xsk_ino[dp->n_xsk++] = ino;
	}
}

/* After the PMD closed the device: its sockets still open, closed. */
void ferry_dpdk_xsk_fds_close(struct ferry_dpdk_port *dp)
{
	uint32_t i, n = 0;
	uint64_t ino;

	for (i = 0; i < dp->n_xsk; i++) {
		int fd = dp->xsk_fd[i];

		if (fd >= 0 && fd_is_xsk(fd, &ino) && ino == dp->xsk_ino[i]) {
			close(fd);
			n++;
		}
	}
	if (n)
		log_info("dpdk: %s: closed %u AF_XDP socket(s) the PMD left "
			 "open",
			 dp->vdev, n);
	dp->n_xsk = 0;
}

/*
 * LeakSanitizer's switch, linked only in -Db_sanitize=address builds (weak:
 * NULL otherwise). What the PMD allocates while it sets a device up stays
 * allocated for good: it never frees a queue's UMEM (libxdp) nor the BPF
 * object it loaded (libbpf), and ferry cannot reach either to free them.
 * So the sanitizer is told to ignore allocations made during those calls.
 */
void __lsan_disable(void) __attribute__((weak));
void __lsan_enable(void) __attribute__((weak));

void ferry_dpdk_leaks_ignored(bool on)
{
	if (on && __lsan_disable)
		__lsan_disable();
	else if (!on && __lsan_enable)
		__lsan_enable();
}

/* Notes the process's AF_XDP sockets: as not the PMD's, or (fresh) as
 * the PMD's when they were not noted before. */
void ferry_dpdk_xsk_fds_mark(struct ferry_dpdk_port *dp, bool fresh)
{
	xsk_fds_each(fresh ? xsk_mark_new : xsk_mark_old, dp);
}
