// SPDX-License-Identifier: BSD-2-Clause
/* umem.c - UMEM memory (hugepages when the host has them) and frame pool. */
#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "log.h"
#include "umem.h"

#define HUGE_2M (2ull << 20)

/*
 * Ordinary pages are the fallback, never a silent one: the caller reports
 * u->hugepages in `port show` and the log.
 */
static void *area_alloc(uint64_t size, bool try_huge, bool *huge)
{
	void *p;

	*huge = false;
	if (try_huge) {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB |
				 (21 << MAP_HUGE_SHIFT),
			 -1, 0);
		if (p != MAP_FAILED) {
			*huge = true;
			return p;
		}
		log_warn("umem: no free 2 MB hugepages for %llu MiB (%s); "
			 "using ordinary pages",
			 (unsigned long long)(size >> 20), strerror(errno));
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
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
	uint32_t i;

	if (!p->n_frames || (p->n_frames & (p->n_frames - 1))) {
		errno = EINVAL;
		return NULL;
	}
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->n_frames = p->n_frames;
	u->size = (uint64_t)p->n_frames * FERRY_FRAME_SIZE;
	u->size = (u->size + HUGE_2M - 1) & ~(HUGE_2M - 1);
	u->reg_fd = -1;
	u->numa_node = p->numa_node;

	u->area = area_alloc(u->size, p->try_hugepages, &u->hugepages);
	if (!u->area)
		goto err_umem;
	area_place(u->area, u->size, p->numa_node);
	/* Touch every page now, not on the first packet. */
	memset(u->area, 0, u->size);

	u->free = calloc(u->n_frames, sizeof(*u->free));
	u->owner = calloc(u->n_frames, sizeof(*u->owner));
	if (!u->free || !u->owner)
		goto err_arrays;
	for (i = 0; i < u->n_frames; i++)
		ferry_umem_put(u, (uint64_t)(u->n_frames - 1 - i)
					  << FERRY_FRAME_SHIFT);
	return u;

err_arrays:
	free(u->free);
	free(u->owner);
	munmap(u->area, u->size);
err_umem:
	free(u);
	errno = ENOMEM;
	return NULL;
}

void ferry_umem_destroy(struct ferry_umem *u)
{
	if (!u)
		return;
	munmap(u->area, u->size);
	free(u->free);
	free(u->owner);
	free(u);
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
