/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * The module's whole view at one moment, for the outputs that summarise
 * it: gpuctl metrics and gpuctl export.
 */
#ifndef _GPUCTL_VIEW_H
#define _GPUCTL_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "nl.h"

struct mdev_type_info;
struct vgpu_vf_type;

/**
 * struct view - every dump an output is made from, read before it prints
 * @devs: the tracked devices (struct dev_info), vendor VF types read
 * @allocs: the allocations (struct alloc_info)
 * @limits: the tenant limits (struct limit_info)
 * @vgpus: the mdev instances (struct vgpu_info)
 * @types: the mdev types of every parent, from sysfs
 * @ntypes: how many
 * @vf_types: the types vendor VFs can take now, per PF, from sysfs
 * @nvf_types: how many
 */
struct view {
	struct nl_list devs;
	struct nl_list allocs;
	struct nl_list limits;
	struct nl_list vgpus;
	struct mdev_type_info *types;
	size_t ntypes;
	struct vgpu_vf_type *vf_types;
	size_t nvf_types;
};

int view_read(struct nl_ctx *nl, struct view *v, const char *cmd);
void view_free(struct view *v);
const struct mdev_type_info *view_type(const struct view *v,
				       const char *parent, const char *id);
bool view_is_mdev_parent(const struct view *v, const char *addr);

#endif /* _GPUCTL_VIEW_H */
