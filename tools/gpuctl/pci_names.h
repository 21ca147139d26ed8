/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * PCI vendor and device names, as udev's hwdb or pci.ids has them.
 */
#ifndef GPUCTL_PCI_NAMES_H
#define GPUCTL_PCI_NAMES_H

#include <stddef.h>

#include "utils.h"

const char *pci_vendor_name(u16 vendor, char *buf, size_t size);
const char *pci_device_name(u16 vendor, u16 device, char *buf, size_t size);
void pci_names_cleanup(void);

#endif
