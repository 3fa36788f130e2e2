// SPDX-License-Identifier: BSD-2-Clause
/* privs.c - capability narrowing with libcap-ng (see privs.h). */
#include <cap-ng.h>
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>

#include "privs.h"

struct cap_entry {
	unsigned int cap;
	const char *name;
};

#define CAP_ENTRY(id, why) {CAP_##id, #id},
static const struct cap_entry runtime_caps[] = {FERRY_RUNTIME_CAPS(CAP_ENTRY)};
static const struct cap_entry setup_caps[] = {FERRY_SETUP_CAPS(CAP_ENTRY)};
#undef CAP_ENTRY

#define N_OF(a)	 (sizeof(a) / sizeof((a)[0]))
#define MAX_KEPT (N_OF(runtime_caps) + N_OF(setup_caps))
#define CAP_PE	 (CAPNG_EFFECTIVE | CAPNG_PERMITTED)

/* Appends to kept[] the caps of t the thread has now (state loaded). */
static size_t have_of(const struct cap_entry *t, size_t n, unsigned int *kept,
		      size_t k)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (capng_have_capability(CAPNG_PERMITTED, t[i].cap))
			kept[k++] = t[i].cap;
	return k;
}

int ferry_privs_narrow(enum ferry_privs_stage stage)
{
	unsigned int kept[MAX_KEPT];
	size_t k = 0, i;

	if (capng_get_caps_process())
		return -EPERM;
	if (stage != FERRY_PRIVS_NONE)
		k = have_of(runtime_caps, N_OF(runtime_caps), kept, k);
	if (stage == FERRY_PRIVS_SETUP)
		k = have_of(setup_caps, N_OF(setup_caps), kept, k);
	/* Permitted shrinks for good: nothing dropped can come back. The
	 * bounding set stays (changing it needs CAP_SETPCAP, which a unit
	 * does not grant); a smaller permitted set is what matters. */
	capng_clear(CAPNG_SELECT_CAPS);
	for (i = 0; i < k; i++)
		capng_update(CAPNG_ADD, CAP_PE, kept[i]);
	return capng_apply(CAPNG_SELECT_CAPS) ? -EPERM : 0;
}

bool ferry_privs_have(int cap)
{
	if (capng_get_caps_process())
		return false;
	return capng_have_capability(CAPNG_EFFECTIVE, (unsigned int)cap);
}

void ferry_privs_describe(char *buf, size_t len)
{
	size_t i, off = 0;

	buf[0] = 0;
	if (capng_get_caps_process())
		return;
	for (i = 0; i < N_OF(runtime_caps) && off < len; i++)
		if (capng_have_capability(CAPNG_EFFECTIVE, runtime_caps[i].cap))
			off += (size_t)snprintf(buf + off, len - off, "%s%s",
						off ? " " : "",
						runtime_caps[i].name);
	for (i = 0; i < N_OF(setup_caps) && off < len; i++)
		if (capng_have_capability(CAPNG_EFFECTIVE, setup_caps[i].cap))
			off += (size_t)snprintf(buf + off, len - off, "%s%s",
						off ? " " : "",
						setup_caps[i].name);
}
