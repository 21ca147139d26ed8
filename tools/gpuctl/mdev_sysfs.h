/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2025 The gpuctl authors
 */
#ifndef _GPUCTL_MDEV_SYSFS_H
#define _GPUCTL_MDEV_SYSFS_H

#include <stdbool.h>
#include <stddef.h>

#include "utils.h"

/* A PCI address, or a virtual parent's name such as "mbochs" */
#define MDEV_PARENT_BUFSZ 64
/* "nvidia-222", "mbochs-small": "<parent driver>-<type>" */
#define MDEV_TYPE_BUFSZ 64
/* "GRID T4-2B", "Dual port serial" */
#define MDEV_NAME_BUFSZ 64
/* The description as the driver writes it, one line */
#define MDEV_DESC_BUFSZ 256

/**
 * struct mdev_type_info - one type of one parent, as its sysfs says now
 * @parent: the parent device's name
 * @id: the type's directory name under mdev_supported_types
 * @name: its "name" file, or "" when the driver gives none
 * @device_api: its "device_api" file ("vfio-pci")
 * @available: its "available_instances"
 * @description: its "description", "" when absent
 * @max_instance: from the description's "max_instance=N", when @has_*
 * @framebuffer_mb: from "framebuffer=2048M" (K, M, G or bytes), in MiB
 * @num_heads: from "num_heads=N"
 * @max_resolution: from "max_resolution=WxH", "" when absent
 *
 * The description's fields are the ones NVIDIA's vGPU manager writes
 * ("num_heads=4, frame_rate_limiter=0, framebuffer=2048M,
 * max_resolution=5120x2880, max_instance=8"), which CloudStack's
 * vgpu_profile needs; other drivers write prose, kept as it is.
 */
struct mdev_type_info {
	char parent[MDEV_PARENT_BUFSZ];
	char id[MDEV_TYPE_BUFSZ];
	char name[MDEV_NAME_BUFSZ];
	char device_api[32];
	u32 available;
	char description[MDEV_DESC_BUFSZ];
	bool has_max_instance;
	u32 max_instance;
	bool has_framebuffer;
	u32 framebuffer_mb;
	bool has_num_heads;
	u32 num_heads;
	char max_resolution[32];
};

/* The sysfs mount the mdev core's files are under; tests point it elsewhere */
extern const char *mdev_sysfs_root;

int sysfs_read_text(const char *path, char *buf, size_t size);
int sysfs_write_text(const char *path, const char *text);
int sysfs_link_base(const char *path, char *out, size_t size);
int mdev_parent_name(const char *arg, char *out, size_t size);
bool mdev_parent_exists(const char *parent);
int mdev_parent_node(const char *parent);
int mdev_types_read(const char *parent, struct mdev_type_info **types,
		    size_t *n);
void mdev_description_parse(struct mdev_type_info *t);
int mdev_type_list(const char *parent, char *buf, size_t size);
int mdev_parent_list(char *buf, size_t size);
bool mdev_exists(const char *uuid);
int mdev_identity(const char *uuid, char *type, char *parent, size_t size);
int mdev_create(const char *parent, const char *type, const char *uuid);
int mdev_remove(const char *uuid);
int mdev_uuid_generate(char *out, size_t size);

#endif /* _GPUCTL_MDEV_SYSFS_H */
