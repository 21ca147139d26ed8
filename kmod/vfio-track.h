/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2025 The gpuctl authors
 */

#ifndef _GPUCTL_VFIO_TRACK_H
#define _GPUCTL_VFIO_TRACK_H

#include <linux/pci.h>
#include <linux/types.h>

/* The variant driver's name, as rules and driver_override give it. */
#define GPUCTL_VFIO_DRIVER_NAME "gpuctl-vfio-pci"

int gpuctl_vfio_admit(struct pci_dev *pdev);
void gpuctl_vfio_opened(struct pci_dev *pdev);
void gpuctl_vfio_closed(struct pci_dev *pdev);
void gpuctl_vfio_adopt(struct pci_dev *pdev);

/* vfio-hook.c: open/close of devices on plain vfio-pci */
void gpuctl_vfio_hook_bound(struct pci_dev *pdev);
void gpuctl_vfio_hook_unbind(struct pci_dev *pdev);
void gpuctl_vfio_hook_unbound(struct pci_dev *pdev);
void gpuctl_vfio_hook_scan(void);
void gpuctl_vfio_hook_exit(void);

/* vfio-driver.c: the enforcing variant driver */
int gpuctl_vfio_driver_init(void);
void gpuctl_vfio_driver_exit(void);

#endif /* _GPUCTL_VFIO_TRACK_H */
