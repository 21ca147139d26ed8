/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The gpuctl authors
 */

#ifndef _GPUCTL_MIGRATION_H
#define _GPUCTL_MIGRATION_H

#include <linux/types.h>

struct device;

/**
 * struct gpuctl_migration - a VFIO device's migration capabilities
 * @known: the device has a vfio_device, and gpuctl read it
 * @caps: enum gpuctl_migration_caps flags; 0 when it cannot migrate
 */
struct gpuctl_migration {
	bool known;
	u32 caps;
};

void gpuctl_migration_read_locked(struct device *parent,
				  struct gpuctl_migration *mig);
int gpuctl_migration_read(struct device *parent, struct gpuctl_migration *mig);

#endif /* _GPUCTL_MIGRATION_H */
