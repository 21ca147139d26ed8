// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * PCI vendor and device names, from udev's hwdb when the host has one,
 * else from pci.ids through libpci. The hwdb is a trie that libudev maps
 * from hwdb.bin, so a lookup costs microseconds and nothing at start-up,
 * where libpci parses the whole of pci.ids (1.4 MB) at its first lookup,
 * which cost "gpuctl dev show" as much as all of lspci. The hwdb is built
 * from pci.ids (systemd's 20-pci-vendor-model.hwdb), so the two name a
 * device alike, as udev does in ID_VENDOR_FROM_DATABASE and
 * ID_MODEL_FROM_DATABASE, and an id the hwdb lacks is not looked for in
 * pci.ids: that would parse the file for every unknown id, such as
 * QEMU's 1234:1111, for a name it almost never has. A local hwdb entry
 * renames a device for gpuctl as it does for udev. An unknown id reads as
 * lspci prints it, "Vendor 1234" or "Device 1111".
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libudev.h>
#include <pci/pci.h>

#include "pci_names.h"

static struct udev *udev;
static struct udev_hwdb *hwdb;
static bool hwdb_tried;
static struct pci_access *pacc;

/* The host's hwdb, opened at the first lookup; NULL when it has none */
static struct udev_hwdb *hwdb_get(void)
{
	if (!hwdb_tried) {
		hwdb_tried = true;
		udev = udev_new();
		if (udev)
			hwdb = udev_hwdb_new(udev);
	}
	return hwdb;
}

/* The hwdb's value of @key for @modalias; false when it has none */
static bool hwdb_lookup(const char *modalias, const char *key, char *buf,
			size_t size)
{
	struct udev_list_entry *e;

	udev_list_entry_foreach(e, udev_hwdb_get_properties_list_entry(hwdb,
								       modalias,
								       0)) {
		if (!strcmp(udev_list_entry_get_name(e), key)) {
			snprintf(buf, size, "%s", udev_list_entry_get_value(e));
			return true;
		}
	}
	return false;
}

/* libpci calls this only when it cannot go on, e.g. out of memory */
/* libpci's own attribute macros, as its handler type carries them */
static void PCI_NONRET PCI_PRINTF(1, 2) pci_error(char *msg, ...)
{
	va_list ap;

	va_start(ap, msg);
	fputs("gpuctl: libpci: ", stderr);
	vfprintf(stderr, msg, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

/* A missing pci.ids is not worth a message: names fall back to numbers */
static void PCI_PRINTF(1, 2) pci_quiet(char *msg, ...)
{
	(void)msg;
}

/*
 * Only the name database is used, so pci_init() and its probing of an
 * access method are skipped; the handlers it would set are set here.
 */
static struct pci_access *pci_ids(void)
{
	if (!pacc) {
		pacc = pci_alloc();
		pacc->error = pci_error;
		pacc->warning = pci_quiet;
		pacc->debug = pci_quiet;
	}
	return pacc;
}

/**
 * pci_vendor_name() - a PCI vendor's name, from the hwdb, else pci.ids
 * @vendor: PCI vendor id
 * @buf: where the name is written
 * @size: size of @buf
 *
 * Return: @buf.
 */
const char *pci_vendor_name(u16 vendor, char *buf, size_t size)
{
	char modalias[sizeof("pci:v00000000")];

	snprintf(modalias, sizeof(modalias), "pci:v%08X", vendor);
	if (hwdb_get() ?
	    !hwdb_lookup(modalias, "ID_VENDOR_FROM_DATABASE", buf, size) :
	    !pci_lookup_name(pci_ids(), buf, size, PCI_LOOKUP_VENDOR, vendor))
		snprintf(buf, size, "Vendor %04x", vendor);
	return buf;
}

/**
 * pci_device_name() - a PCI device's name, from the hwdb, else pci.ids
 * @vendor: PCI vendor id
 * @device: PCI device id
 * @buf: where the name is written
 * @size: size of @buf
 *
 * Return: @buf.
 */
const char *pci_device_name(u16 vendor, u16 device, char *buf, size_t size)
{
	char modalias[sizeof("pci:v00000000d00000000")];

	snprintf(modalias, sizeof(modalias), "pci:v%08Xd%08X", vendor, device);
	if (hwdb_get() ?
	    !hwdb_lookup(modalias, "ID_MODEL_FROM_DATABASE", buf, size) :
	    !pci_lookup_name(pci_ids(), buf, size, PCI_LOOKUP_DEVICE, vendor,
			     device))
		snprintf(buf, size, "Device %04x", device);
	return buf;
}

/* Frees what the lookups mapped and parsed, so that valgrind sees no leak */
void pci_names_cleanup(void)
{
	if (pacc)
		pci_cleanup(pacc);
	pacc = NULL;
	hwdb = udev_hwdb_unref(hwdb);
	udev = udev_unref(udev);
	hwdb_tried = false;
}
