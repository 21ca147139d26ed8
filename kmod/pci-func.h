/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * What gpuctl tells from a PCI function alone, with no table and no lock:
 * its table key, whether it is a GPU, and how long a driver name may be.
 * Kept apart from inventory.h so that rule.c and reserve.h, which need only
 * these, depend on nothing of inventory.c's.
 */

#ifndef _GPUCTL_PCI_FUNC_H
#define _GPUCTL_PCI_FUNC_H

#include <linux/pci.h>
#include <linux/types.h>

#include "compat.h"

/* Long enough for every in-tree PCI driver name. */
#define GPUCTL_DRIVER_NAME_LEN 32

/**
 * gpuctl_inventory_key() - the table index of a PCI address
 * @domain: PCI domain
 * @bus: bus number
 * @devfn: device and function
 *
 * Context: any.
 * Return: a key that sorts like the address.
 */
static inline unsigned long gpuctl_inventory_key(int domain, unsigned int bus,
						 unsigned int devfn)
{
	return (unsigned long)domain << 16 | bus << 8 | devfn;
}

/**
 * gpuctl_inventory_is_gpu() - whether a PCI function is a GPU
 * @pdev: the function
 *
 * Context: any.
 * Return: true for display controllers and processing accelerators.
 */
static inline bool gpuctl_inventory_is_gpu(const struct pci_dev *pdev)
{
	unsigned int base = pdev->class >> 16;

	return base == PCI_BASE_CLASS_DISPLAY ||
	       base == PCI_BASE_CLASS_ACCELERATOR;
}

#endif /* _GPUCTL_PCI_FUNC_H */
