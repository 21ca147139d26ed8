/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The gpuctl authors
 */

#ifndef _GPUCTL_SRIOV_H
#define _GPUCTL_SRIOV_H

#include <linux/list.h>
#include <linux/pci.h>

/* A change that may remove a PF's VFs, on the stack of whoever makes it. */
struct gpuctl_sriov_change {
	struct list_head node;
	struct pci_dev *pf;
};

struct pci_dev *gpuctl_sriov_changing(struct pci_dev *pdev);
bool gpuctl_sriov_vf_in_use(struct pci_dev *pf, char *why, size_t len);
void gpuctl_sriov_change_begin(struct gpuctl_sriov_change *change,
			       struct pci_dev *pf);
void gpuctl_sriov_change_end(struct gpuctl_sriov_change *change);

#endif /* _GPUCTL_SRIOV_H */
