/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2025 The gpuctl authors
 */

#ifndef _GPUCTL_INVENTORY_H
#define _GPUCTL_INVENTORY_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/sched.h>
#include <linux/types.h>

#include "migration.h"
#include "pci-func.h"
#include "reserve.h"

struct gpuctl_alloc;
struct gpuctl_group;

/**
 * struct gpuctl_holder - the VFIO user that has a device open
 * @open: a VFIO user has the device open, or is opening it (@opening)
 * @opening: gpuctl-vfio-pci admitted the opener but has not announced the
 *	open yet: the device is being enabled
 * @observed: the open was observed from the IOMMU group's DMA ownership
 *	(any VFIO driver but gpuctl-vfio-pci), so the holder is unknown
 * @pid: its thread group id; 0 when unknown
 * @comm: its command name, "" when unknown
 * @uid: its effective uid when it opened the device
 * @since: when it opened the device (or when gpuctl saw it open), seconds
 *	since the epoch
 * @match: enum gpuctl_open_match
 *
 * Only the first open of a VFIO device reaches its driver (open_count 0 to
 * 1 in drivers/vfio/vfio_main.c: vfio_device_open() on 6.1, vfio_df_open()
 * on 6.12), so there is one holder; fds it passes on stay with it.
 */
struct gpuctl_holder {
	bool open;
	bool opening;
	bool observed;
	pid_t pid;
	char comm[TASK_COMM_LEN];
	u32 uid;
	time64_t since;
	u32 match;
};

/**
 * struct gpuctl_dev - one tracked PCI function
 * @pdev: the function; gpuctl holds a reference while it is tracked
 * @key: domain, bus and devfn packed; the table index and the dump order
 * @group: the IOMMU group it belongs to, NULL when it has none
 * @group_node: entry in @group's member list
 * @role: enum gpuctl_dev_role; 0 until the device was announced
 * @dma_managed: the bound driver manages DMA itself (vfio-pci, pci-stub)
 * @driver: name of the bound driver, "" when unbound
 * @res: its reservation, reserve.c's
 * @alloc: the allocation it belongs to, NULL when unallocated
 * @holder: the VFIO user that has it open, if any
 * @mig: its VFIO device's migration capabilities (migration.c), read
 *	where its opens are looked for (vfio-watch.c)
 *
 * The driver is cached from bus events, which run with the device lock
 * held, so readers never follow pdev->dev.driver of a device that may be
 * unbinding.
 */
struct gpuctl_dev {
	struct pci_dev *pdev;
	unsigned long key;
	struct gpuctl_group *group;
	struct list_head group_node;
	u32 role;
	bool dma_managed;
	char driver[GPUCTL_DRIVER_NAME_LEN];

	struct gpuctl_reservation res;

	struct gpuctl_alloc *alloc;
	struct gpuctl_holder holder;
	struct gpuctl_migration mig;
};

extern struct mutex gpuctl_lock;

unsigned int gpuctl_inventory_generation(void);
void gpuctl_inventory_changed(void);
struct gpuctl_dev *gpuctl_inventory_find(unsigned long key);
struct gpuctl_dev *gpuctl_inventory_find_pdev(const struct pci_dev *pdev);
struct gpuctl_dev *gpuctl_inventory_next(unsigned long *key);
bool gpuctl_inventory_is_unit(const struct pci_dev *pdev);
void gpuctl_inventory_prune(void);
void gpuctl_inventory_rescan(void);
int gpuctl_inventory_start(void);
void gpuctl_inventory_stop(void);
void gpuctl_inventory_flush(void);

#endif /* _GPUCTL_INVENTORY_H */
