/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2025 The gpuctl authors
 */

#ifndef _GPUCTL_VFIO_TRACK_H
#define _GPUCTL_VFIO_TRACK_H

#include <linux/pci.h>
#include <linux/types.h>

struct gpuctl_dev;

/* The variant driver's name, as rules and driver_override give it. */
#define GPUCTL_VFIO_DRIVER_NAME "gpuctl-vfio-pci"

/* vfio-track.c: opens seen by gpuctl-vfio-pci, and what follows an open */
int gpuctl_vfio_open_begin(struct pci_dev *pdev);
void gpuctl_vfio_open_end(struct pci_dev *pdev, int ret);
void gpuctl_vfio_closed(struct pci_dev *pdev);
void gpuctl_vfio_track_open(struct gpuctl_dev *dev);
void gpuctl_vfio_track_close(struct gpuctl_dev *dev);

/* vfio-watch.c: opens observed on every other VFIO driver */
void gpuctl_vfio_watch_driver_changed(struct gpuctl_dev *dev);
void gpuctl_vfio_watch_sync(void);
void gpuctl_vfio_watch_poll(void);
void gpuctl_vfio_watch_start(void);
void gpuctl_vfio_watch_stop(void);

/* vfio-driver.c: the enforcing variant driver */
int gpuctl_vfio_driver_init(void);
void gpuctl_vfio_driver_exit(void);

#endif /* _GPUCTL_VFIO_TRACK_H */
