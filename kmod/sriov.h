/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The gpuctl authors
 */

#ifndef _GPUCTL_SRIOV_H
#define _GPUCTL_SRIOV_H

#include <linux/pci.h>

struct pci_dev *gpuctl_sriov_changing(struct pci_dev *pdev);

#endif /* _GPUCTL_SRIOV_H */
