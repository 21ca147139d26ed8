/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The gpuctl authors
 */
#ifndef _GPUCTL_VF_SYSFS_H
#define _GPUCTL_VF_SYSFS_H

#include <stdbool.h>
#include <stddef.h>

#include "utils.h"

/* "NVIDIA L40S-24Q" */
#define VF_TYPE_NAME_BUFSZ 64

/* A vendor VF's address, in a list */
struct vf_addr {
	char addr[ADDR_BUFSZ];
};

/* A vGPU type a vendor VF lists as creatable: "1156  : NVIDIA L40S-24Q" */
struct vf_vgpu_type {
	u32 id;
	char name[VF_TYPE_NAME_BUFSZ];
};

bool vf_vgpu_capable(const char *addr);
int vf_vgpu_current(const char *addr, u32 *id);
int vf_vgpu_types_parse(char *text, struct vf_vgpu_type **types,
			size_t *n);
int vf_vgpu_creatable(const char *addr, struct vf_vgpu_type **types,
		      size_t *n);
int vf_vgpu_write(const char *addr, u32 id);
int vf_vgpu_list(struct vf_addr **vfs, size_t *n);
int vf_vgpu_physfn(const char *addr, char *pf, size_t size);

#endif /* _GPUCTL_VF_SYSFS_H */
