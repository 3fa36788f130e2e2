/* SPDX-License-Identifier: BSD-2-Clause */
/* prom.h - the Prometheus exposition's one shared line: a family's head. */
#ifndef FERRY_PROM_H
#define FERRY_PROM_H

#include "strbuf.h"

/* One metric family: HELP and TYPE once, then its samples together. */
static inline void ferry_prom_family(struct ferry_strbuf *b, const char *name,
				     const char *help)
{
	ferry_strbuf_printf(b, "# HELP %s %s\n# TYPE %s counter\n", name, help,
			    name);
}

#endif
