/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * Live migration as the host sees it: capabilities and compatibility key.
 */
#ifndef _GPUCTL_MIGRATION_H
#define _GPUCTL_MIGRATION_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* "8086:1234:1af4:1100/type-3/nvidia@550.54.14" and the like */
#define MIGRATION_COMPAT_BUFSZ 256

struct alloc_info;
struct dev_info;
struct nl_list;
struct vgpu_info;

void migration_print(bool known, __u32 caps);
void migration_caps_str(__u32 caps, char *buf, size_t size);
bool migration_live(bool known, __u32 caps);
void migration_compat_pci(__u16 vendor, __u16 device, __u16 subvendor,
			  __u16 subdevice, __u32 type, const char *driver,
			  char *buf, size_t size);
void migration_compat_mdev(const char *parent, const char *type,
			   const char *driver, char *buf, size_t size);
bool dev_migration_compat(const struct dev_info *d, char *buf, size_t size);
bool vgpu_migration_compat(const struct vgpu_info *v, char *buf, size_t size);
int alloc_migration_read(struct alloc_info *al, const struct nl_list *devs,
			 const struct nl_list *vgpus);

#endif /* _GPUCTL_MIGRATION_H */
