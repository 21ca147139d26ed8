/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2025 The gpuctl authors
 */

#ifndef _GPUCTL_RESERVE_H
#define _GPUCTL_RESERVE_H

#include <linux/types.h>

struct gpuctl_dev;
struct pci_dev;
struct gpuctl_rule;

void gpuctl_reserve_refresh(void);
void gpuctl_reserve_driver_changed(struct gpuctl_dev *dev);
void gpuctl_reserve_user_gone(struct gpuctl_dev *dev);
void gpuctl_reserve_claim(struct pci_dev *only);
void gpuctl_reserve_orphan(struct gpuctl_dev *dev);
void gpuctl_reserve_forget(struct pci_dev *pdev);
void gpuctl_reserve_kick(void);
bool gpuctl_reserve_pending(const struct gpuctl_dev *dev);
bool gpuctl_reserve_vfio_busy(const struct gpuctl_dev *dev);
int gpuctl_reserve_init(void);
void gpuctl_reserve_stop(void);
void gpuctl_reserve_exit(void);

#endif /* _GPUCTL_RESERVE_H */
