/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2025 The gpuctl authors
 */

#ifndef _GPUCTL_RESERVE_H
#define _GPUCTL_RESERVE_H

#include <linux/types.h>

#include "pci-func.h"

struct gpuctl_dev;
struct pci_dev;
struct gpuctl_rule;

/* Why a reserved device is blocked, e.g. "vfio-pci did not bind". */
#define GPUCTL_BLOCKED_LEN 80

/**
 * struct gpuctl_reservation - what reserve.c keeps for one tracked device
 * @rule: the rule that reserves the device, NULL when it is free
 * @target: the driver gpuctl keeps it on; kept after @rule went until the
 *	device is released, "" when there is nothing to keep or release
 * @blocked: why gpuctl could not bind it to @target, "" when it could
 * @blocked_in_use: @blocked names a VFIO user or an allocation, which only
 *	CAP_SYS_ADMIN is told
 * @state: enum gpuctl_dev_state, derived from the fields above and the
 *	device's driver
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
 *
 * Embedded in each struct gpuctl_dev (its res). Only reserve.c writes it
 * (inventory.c only starts @state at GPUCTL_DEV_STATE_FREE); netlink,
 * alloc.c and the rule handlers read @rule, @state, @blocked and
 * @blocked_in_use. Under gpuctl_lock, like the rest of the device.
 */
struct gpuctl_reservation {
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
};

void gpuctl_reserve_refresh(void);
void gpuctl_reserve_driver_changed(struct gpuctl_dev *dev);
void gpuctl_reserve_user_gone(struct gpuctl_dev *dev);
void gpuctl_reserve_claim(struct pci_dev *only);
void gpuctl_reserve_dev_untracked(struct gpuctl_dev *dev);
void gpuctl_reserve_dev_deleted(struct pci_dev *pdev);
int gpuctl_reserve_orphans_of(u32 rule,
			      int (*fn)(struct pci_dev *pdev, void *arg),
			      void *arg);
int gpuctl_reserve_adopt_orphan(struct pci_dev *pdev, u32 rule,
				const char *target);
void gpuctl_reserve_forget_orphans(u32 rule);
void gpuctl_reserve_kick(void);
bool gpuctl_reserve_pending(const struct gpuctl_dev *dev);
bool gpuctl_reserve_vfio_busy(const struct gpuctl_dev *dev);
int gpuctl_reserve_init(void);
void gpuctl_reserve_stop(void);
void gpuctl_reserve_exit(void);

#endif /* _GPUCTL_RESERVE_H */
