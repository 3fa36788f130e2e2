// SPDX-License-Identifier: BSD-2-Clause
/* umem.c - UMEM memory (a memfd, on hugepages when the host has them) and
 * frame pool. */
#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "umem.h"

#define HUGE_2M (2ull << 20)
#ifndef MFD_HUGE_2MB
#define MFD_HUGE_2MB (21u << 26) /* MFD_HUGE_SHIFT; <linux/memfd.h> */
#endif

#define POOL_HDR 4096 /* struct ferry_umem_shared, then the free stack */

static uint64_t round_2m(uint64_t n)
{
	return (n + HUGE_2M - 1) & ~(HUGE_2M - 1);
}

/* Frames first (what the sockets register), then the pool. */
static void umem_layout(struct ferry_umem *u, uint32_t n_frames)
{
	u->n_frames = n_frames;
	u->size = round_2m((uint64_t)n_frames * FERRY_FRAME_SIZE);
	u->map_size = round_2m(u->size + POOL_HDR +
			       (uint64_t)n_frames * sizeof(*u->free) +
			       (uint64_t)n_frames * sizeof(*u->owner));
}

static void umem_point(struct ferry_umem *u, uint8_t *base)
{
	u->area = base;
	u->sh = (struct ferry_umem_shared *)(base + u->size);
	u->free = (uint64_t *)(base + u->size + POOL_HDR);
	u->owner = (uint16_t *)(u->free + u->n_frames);
}

static void *map_file(int fd, uint64_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * A file, not anonymous memory: a successor maps the same pages (a hot
 * restart). Ordinary pages are the fallback, never a silent one: the
 * caller reports u->hugepages in `port show` and the log.
 */
static int area_alloc(struct ferry_umem *u, bool try_huge)
{
	void *p;

	u->hugepages = false;
	if (try_huge) {
		u->fd = memfd_create("ferry-umem",
				     MFD_CLOEXEC | MFD_HUGETLB | MFD_HUGE_2MB);
		if (u->fd >= 0 && !ftruncate(u->fd, (off_t)u->map_size)) {
			p = map_file(u->fd, u->map_size);
			if (p) {
				u->hugepages = true;
				umem_point(u, p);
				return 0;
			}
		}
		log_warn("umem: no free 2 MB hugepages for %llu MiB (%s); "
			 "using ordinary pages",
			 (unsigned long long)(u->map_size >> 20),
			 strerror(errno));
		if (u->fd >= 0)
			close(u->fd);
	}
	u->fd = memfd_create("ferry-umem", MFD_CLOEXEC);
	if (u->fd < 0)
		return -errno;
	if (ftruncate(u->fd, (off_t)u->map_size))
		goto err_fd;
	p = map_file(u->fd, u->map_size);
	if (!p)
		goto err_fd;
	umem_point(u, p);
	return 0;

err_fd:
	close(u->fd);
	u->fd = -1;
	return -ENOMEM;
}

/* Bind the area to the NIC's node before first touch places it elsewhere. */
static void area_place(void *p, uint64_t size, int node)
{
	unsigned long mask;

	if (node < 0 || numa_available() < 0 || node >= 64)
		return;
	mask = 1ul << node;
	if (mbind(p, size, MPOL_PREFERRED, &mask, 64, 0))
		log_warn("umem: mbind to node %d: %s", node, strerror(errno));
}

struct ferry_umem *ferry_umem_create(const struct ferry_umem_params *p)
{
	struct ferry_umem *u;
	struct stat st;
	uint32_t i;

	if (!p->n_frames || (p->n_frames & (p->n_frames - 1))) {
		errno = EINVAL;
		return NULL;
	}
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	umem_layout(u, p->n_frames);
	u->reg_fd = -1;
	u->numa_node = p->numa_node;
	if (area_alloc(u, p->try_hugepages))
		goto err_umem;
	area_place(u->area, u->map_size, p->numa_node);
	u->ino = fstat(u->fd, &st) ? 0 : (uint64_t)st.st_ino;
	/* Touch every page now, not on the first packet. */
	memset(u->area, 0, u->map_size);
	for (i = 0; i < u->n_frames; i++)
		ferry_umem_put(u, (uint64_t)(u->n_frames - 1 - i)
					  << FERRY_FRAME_SHIFT);
	u->sh->magic = FERRY_UMEM_MAGIC;
	u->sh->version = 1;
	u->sh->n_frames = u->n_frames;
	u->sh->frame_size = FERRY_FRAME_SIZE;
	u->sh->area_size = u->size;
	return u;

err_umem:
	free(u);
	errno = ENOMEM;
	return NULL;
}

void ferry_umem_forget(struct ferry_umem *u)
{
	if (!u)
		return;
	munmap(u->area, u->map_size);
	if (u->fd >= 0)
		close(u->fd);
	free(u);
}

void ferry_umem_destroy(struct ferry_umem *u)
{
	ferry_umem_forget(u);
}

void ferry_umem_export(struct ferry_umem *u)
{
	u->sh->n_free = u->n_free;
	u->sh->multibuf = u->multibuf;
	memcpy(u->sh->sock_slots, u->sock_slots, sizeof(u->sock_slots));
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

void ferry_umem_import(struct ferry_umem *u)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	u->n_free = u->sh->n_free;
	u->multibuf = u->sh->multibuf;
	memcpy(u->sock_slots, u->sh->sock_slots, sizeof(u->sock_slots));
}

struct ferry_umem *ferry_umem_map(int fd, uint32_t n_frames, bool hugepages,
				  int numa_node)
{
	struct ferry_umem *u = calloc(1, sizeof(*u));
	struct stat st;
	void *base;
	int err = EPROTO;

	if (!u) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	umem_layout(u, n_frames);
	u->fd = fd;
	u->reg_fd = -1;
	u->numa_node = numa_node;
	u->hugepages = hugepages;
	if (!n_frames || (n_frames & (n_frames - 1)) || fstat(fd, &st) ||
	    (uint64_t)st.st_size != u->map_size)
		goto err_umem;
	u->ino = (uint64_t)st.st_ino;
	base = map_file(fd, u->map_size);
	if (!base) {
		err = errno;
		goto err_umem;
	}
	umem_point(u, base);
	return u;

err_umem:
	close(fd);
	free(u);
	errno = err;
	return NULL;
}

int ferry_umem_adopted(struct ferry_umem *u)
{
	const struct ferry_umem_shared *sh = u->sh;

	if (sh->magic != FERRY_UMEM_MAGIC || sh->version != 1 ||
	    sh->n_frames != u->n_frames || sh->frame_size != FERRY_FRAME_SIZE ||
	    sh->area_size != u->size || sh->n_free > u->n_frames)
		return -EPROTO;
	ferry_umem_import(u);
	return 0;
}

struct ferry_umem *ferry_umem_adopt(int fd, uint32_t n_frames, bool hugepages,
				    int numa_node)
{
	struct ferry_umem *u =
		ferry_umem_map(fd, n_frames, hugepages, numa_node);

	if (u && ferry_umem_adopted(u)) {
		ferry_umem_forget(u);
		errno = EPROTO;
		return NULL;
	}
	return u;
}

int ferry_umem_slot_get(struct ferry_umem *u)
{
	int i;

	for (i = 0; i < FERRY_OWNER_MAX_SOCK; i++) {
		if (!(u->sock_slots[i / 64] & (1ull << (i % 64)))) {
			u->sock_slots[i / 64] |= 1ull << (i % 64);
			return i;
		}
	}
	return -ENOSPC;
}

void ferry_umem_slot_put(struct ferry_umem *u, int slot)
{
	u->sock_slots[slot / 64] &= ~(1ull << (slot % 64));
}

uint32_t ferry_umem_reclaim(struct ferry_umem *u, uint16_t tag)
{
	uint32_t i, n = 0;

	for (i = 0; i < u->n_frames; i++) {
		if (u->owner[i] == tag) {
			ferry_umem_put(u, (uint64_t)i << FERRY_FRAME_SHIFT);
			n++;
		}
	}
	return n;
}

uint32_t ferry_umem_count(const struct ferry_umem *u, uint16_t tag)
{
	uint32_t i, n = 0;

	for (i = 0; i < u->n_frames; i++)
		n += u->owner[i] == tag;
	return n;
}
