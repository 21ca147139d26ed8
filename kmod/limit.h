/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2025 The gpuctl authors
 */

#ifndef _GPUCTL_LIMIT_H
#define _GPUCTL_LIMIT_H

#include <linux/types.h>
#include <uapi/linux/gpuctl.h>

struct gpuctl_alloc_info;

/**
 * struct gpuctl_limit - most GPUs the allocations of one tenant label hold
 * @id: table index, in the order limits were first set; the dump order
 * @scope: enum gpuctl_limit_scope, the label it counts
 * @name: the label's value
 * @max: the limit
 */
struct gpuctl_limit {
	u32 id;
	u32 scope;
	char name[GPUCTL_LABEL_LEN + 1];
	u32 max;
};

struct gpuctl_limit *gpuctl_limit_find(u32 scope, const char *name);
struct gpuctl_limit *gpuctl_limit_next(unsigned long *id);
struct gpuctl_limit *gpuctl_limit_set(u32 scope, const char *name, u32 max);
void gpuctl_limit_del(struct gpuctl_limit *limit);
u32 gpuctl_limit_used(u32 scope, const char *name);
int gpuctl_limit_check(const struct gpuctl_alloc_info *info, u32 gpus,
		       u32 *scope, char *why, size_t len);
const char *gpuctl_limit_scope_name(u32 scope);
void gpuctl_limit_flush(void);

#endif /* _GPUCTL_LIMIT_H */
