/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2025 The gpuctl authors
 */

#ifndef _GPUCTL_IOMMU_H
#define _GPUCTL_IOMMU_H

#include <linux/iommu.h>
#include <linux/list.h>
#include <linux/types.h>

struct gpuctl_dev;

/**
 * struct gpuctl_group - an IOMMU group that holds at least one GPU
 * @grp: the IOMMU core's group; gpuctl holds a reference
 * @id: iommu_group_id() of @grp
 * @members: tracked members (struct gpuctl_dev), ordered by address
 */
struct gpuctl_group {
	struct iommu_group *grp;
	unsigned int id;
	struct list_head members;
};

struct gpuctl_group *gpuctl_group_find(unsigned int id);
struct gpuctl_group *gpuctl_group_next(unsigned long *id);
struct gpuctl_group *gpuctl_group_create(struct iommu_group *grp);
void gpuctl_group_destroy(struct gpuctl_group *group);
void gpuctl_group_add_member(struct gpuctl_group *group,
			     struct gpuctl_dev *dev);
bool gpuctl_group_has_gpu(const struct gpuctl_group *group);
u32 gpuctl_group_role(const struct gpuctl_group *group,
		      const struct gpuctl_dev *dev);
struct gpuctl_dev *gpuctl_group_offender(const struct gpuctl_group *group);
int gpuctl_group_collect(struct iommu_group *grp, struct pci_dev ***pdevs);

#endif /* _GPUCTL_IOMMU_H */
