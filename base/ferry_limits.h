/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ferry_limits.h - how much one ferryd holds: the sizes of the tables that are
 * indexed by worker or by port slot, in every layer alike.
 */
#ifndef FERRY_FERRY_LIMITS_H
#define FERRY_FERRY_LIMITS_H

#define FERRY_MAX_WORKERS 64
#define FERRY_MAX_PORTS	  64 /* ports of one ferryd; a port's slot is below */

#endif /* FERRY_FERRY_LIMITS_H */
