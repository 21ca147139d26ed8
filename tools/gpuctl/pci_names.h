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

/* The longest name kept: pci.ids's longest is about 110 bytes */
#define PCI_NAME_BUFSZ 128

struct pci_id_names {
	char vendor[PCI_NAME_BUFSZ];
	char device[PCI_NAME_BUFSZ];
};

void pci_names(u16 vendor, u16 device, struct pci_id_names *n);
const char *pci_class_name(u32 class, char *buf, size_t size);
void pci_names_cleanup(void);

#endif
