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

struct gpuctl_alloc;
struct gpuctl_group;
struct gpuctl_rule;

/* Long enough for every in-tree PCI driver name. */
#define GPUCTL_DRIVER_NAME_LEN 32

/* Why a reserved device is blocked, e.g. "vfio-pci did not bind". */
#define GPUCTL_BLOCKED_LEN 80

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
 * @rule: the rule that reserves the device, NULL when it is free
 * @target: the driver gpuctl keeps it on; kept after @rule went until the
 *	device is released, "" when there is nothing to keep or release
 * @blocked: why gpuctl could not bind it to @target, "" when it could
 * @blocked_in_use: @blocked names a VFIO user or an allocation, which only
 *	CAP_SYS_ADMIN is told
 * @state: enum gpuctl_dev_state
 * @claimed: it was on @target since @rule came, so gpuctl puts it back
 *	whenever it leaves (sticky); a device a host driver held when the rule
 *	came is only taken with @take
 * @take: take it from a host driver
 * @pending: the enforcement worker has to look at it
 * @enforcing: the worker took it for a pass and has not recorded the
 *	outcome yet (gpuctl_reserve_pending())
 * @needs_override: gives it its driver_override right away, before a
 *	driver can bind (gpuctl_reserve_claim())
 * @claim_told: "claimed" was announced for @rule's first override
 * @alloc: the allocation it belongs to, NULL when unallocated
 * @holder: the VFIO user that has it open, if any
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

	struct gpuctl_rule *rule;
	char target[GPUCTL_DRIVER_NAME_LEN];
	char blocked[GPUCTL_BLOCKED_LEN];
	bool blocked_in_use;
	u32 state;
	bool claimed;
	bool take;
	bool pending;
	bool enforcing;
	bool needs_override;
	bool claim_told;

	struct gpuctl_alloc *alloc;
	struct gpuctl_holder holder;
};

extern struct mutex gpuctl_lock;

unsigned long gpuctl_inventory_key(int domain, unsigned int bus,
				   unsigned int devfn);
unsigned int gpuctl_inventory_generation(void);
void gpuctl_inventory_changed(void);
struct gpuctl_dev *gpuctl_inventory_find(unsigned long key);
struct gpuctl_dev *gpuctl_inventory_find_pdev(const struct pci_dev *pdev);
struct gpuctl_dev *gpuctl_inventory_next(unsigned long *key);
bool gpuctl_inventory_is_gpu(const struct pci_dev *pdev);
bool gpuctl_inventory_is_unit(const struct pci_dev *pdev);
void gpuctl_inventory_prune(void);
void gpuctl_inventory_rescan(void);
int gpuctl_inventory_start(void);
void gpuctl_inventory_stop(void);
void gpuctl_inventory_flush(void);

#endif /* _GPUCTL_INVENTORY_H */
