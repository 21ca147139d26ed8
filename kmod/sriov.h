/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The gpuctl authors
 */

#ifndef _GPUCTL_SRIOV_H
#define _GPUCTL_SRIOV_H

#include <linux/list.h>
#include <linux/pci.h>

#include "pci-func.h"

struct gpuctl_dev;

/* A change that may remove a PF's VFs, on the stack of whoever makes it. */
struct gpuctl_sriov_change {
	struct list_head node;
	struct pci_dev *pf;
};

/*
 * "VF 0000:11:00.1 of 0000:11:00.0 is open by a VFIO user through ...",
 * cut to what an extack message holds (NETLINK_MAX_FMTMSG_LEN).
 */
#define GPUCTL_SRIOV_WHY_LEN 80

/* What the change under the device lock found; told under gpuctl_lock. */
enum gpuctl_sriov_outcome {
	GPUCTL_SRIOV_DONE,
	GPUCTL_SRIOV_PF_GONE,
	GPUCTL_SRIOV_PF_LOCKED,
	GPUCTL_SRIOV_NO_DRIVER,
	GPUCTL_SRIOV_NO_CONFIGURE,
	GPUCTL_SRIOV_HAS_VFS,
	GPUCTL_SRIOV_VF_LOCKED,
	GPUCTL_SRIOV_VF_OPEN,
	GPUCTL_SRIOV_REFUSED,
	GPUCTL_SRIOV_SHORT,
};

/**
 * struct gpuctl_sriov_result - what the change found
 * @outcome: how it ended
 * @driver: the PF's driver, or the VFIO driver of the open VF
 * @vf: the VF that stood in the way, for the VF outcomes
 * @had: the PF's VF count before
 * @enabled: what the driver returned
 */
struct gpuctl_sriov_result {
	enum gpuctl_sriov_outcome outcome;
	char driver[GPUCTL_DRIVER_NAME_LEN];
	char vf[16];
	u16 had;
	int enabled;
};

struct pci_dev *gpuctl_sriov_changing(struct pci_dev *pdev);
const struct gpuctl_dev *gpuctl_sriov_busy_vf(struct pci_dev *pf);
int gpuctl_sriov_configure(struct pci_dev *pf, u16 want,
			   struct gpuctl_sriov_result *res);
void gpuctl_sriov_result_why(struct pci_dev *pf,
			     const struct gpuctl_sriov_result *res,
			     char *why, size_t len);
bool gpuctl_sriov_vf_in_use(struct pci_dev *pf, char *why, size_t len);
void gpuctl_sriov_change_begin(struct gpuctl_sriov_change *change,
			       struct pci_dev *pf);
void gpuctl_sriov_change_end(struct gpuctl_sriov_change *change);

#endif /* _GPUCTL_SRIOV_H */
