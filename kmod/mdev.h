/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2025 The gpuctl authors
 */

#ifndef _GPUCTL_MDEV_H
#define _GPUCTL_MDEV_H

#include <linux/list.h>
#include <linux/types.h>
#include <linux/uuid.h>

#include "inventory.h"

struct gpuctl_alloc;

/* mdev type ids are "<parent driver>-<type>": short in every driver */
#define GPUCTL_MDEV_TYPE_LEN	64
/* Type names such as "GRID T4-2B" or "NVIDIA L40S-4Q" */
#define GPUCTL_MDEV_NAME_LEN	64
/* A PCI address, or a virtual parent's name */
#define GPUCTL_MDEV_PARENT_LEN	32

/**
 * struct gpuctl_mdev - one instance on the mdev bus
 * @dev: the instance's device; dereferenced only under gpuctl_lock while
 *	the instance is listed (see mdev.c, mdev-watch.c)
 * @id: when gpuctl saw it appear, counting from 1; its index in mdev.c's
 *	xarray, the dump order and key
 * @uuid: its UUID
 * @type: its type's id, the directory name under mdev_supported_types
 * @type_name: its type's name, the type id when the driver gives none
 * @parent: the parent device's name
 * @group: its IOMMU group id, -1 until its driver bound it
 * @driver: name of its bound driver, "" when unbound
 * @told: mdev-add-ntf was sent, so its removal is announced too
 * @alloc: the allocation that holds it, NULL when free
 * @open: a VFIO user has it open, as gpuctl last looked (mdev-watch.c)
 * @open_since: when gpuctl saw it opened, in seconds since the epoch
 *
 * Everything is copied when the instance appears, while the mdev core
 * keeps its parent registered, so readers never follow pointers into the
 * parent's driver, which may unload once the instance is gone.
 */
struct gpuctl_mdev {
	struct device *dev;
	unsigned long id;
	guid_t uuid;
	char type[GPUCTL_MDEV_TYPE_LEN];
	char type_name[GPUCTL_MDEV_NAME_LEN];
	char parent[GPUCTL_MDEV_PARENT_LEN];
	int group;
	char driver[GPUCTL_DRIVER_NAME_LEN];
	bool told;
	struct gpuctl_alloc *alloc;
	bool open;
	time64_t open_since;
	struct gpuctl_migration mig;
};

struct gpuctl_mdev *gpuctl_mdev_find(const guid_t *uuid);
struct gpuctl_mdev *gpuctl_mdev_next(unsigned long *key);
int gpuctl_mdev_start(void);
void gpuctl_mdev_stop(void);

/* mdev-watch.c */
bool gpuctl_mdev_watch_sync(void);

#endif /* _GPUCTL_MDEV_H */
