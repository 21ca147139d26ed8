// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * PCI vendor and device names, from udev's hwdb when the host has one,
 * else from pci.ids through libpci. The hwdb is a trie mapped from
 * hwdb.bin (hwdb.c), so a lookup costs microseconds and nothing at
 * start-up, where libpci parses the whole of pci.ids (1.4 MB) at its first
 * lookup, which cost "gpuctl dev show" as much as all of lspci. The hwdb
 * is built from pci.ids (systemd's 20-pci-vendor-model.hwdb and
 * 20-pci-classes.hwdb), so the two name a device alike, as udev does in
 * ID_VENDOR_FROM_DATABASE and ID_MODEL_FROM_DATABASE, and an id the hwdb
 * lacks is not looked for in pci.ids: that would parse the file for every
 * unknown id, such as QEMU's 1234:1111, for a name it almost never has. A
 * local hwdb entry in the same form renames a device for gpuctl as it does
 * for udev. An unknown id reads as lspci prints it, "Vendor 1234" or
 * "Device 1111".
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pci/pci.h>

#include "hwdb.h"
#include "pci_names.h"

static struct hwdb *hwdb;
static bool hwdb_tried;
static struct pci_access *pacc;

/* The host's hwdb, opened at the first lookup; NULL when it has none */
static struct hwdb *hwdb_get(void)
{
	if (!hwdb_tried) {
		hwdb_tried = true;
		hwdb = hwdb_open();
	}
	return hwdb;
}

/* Copies the value of @key under the hwdb's @pattern into @buf, if any */
static void hwdb_copy(const char *pattern, const char *key, char *buf,
		      size_t size)
{
	const char *v = hwdb_value(hwdb, pattern, key);

	if (v)
		snprintf(buf, size, "%s", v);
}

/* The hwdb's names for @vendor and @device, in systemd's patterns */
static void hwdb_names(u16 vendor, u16 device, struct pci_id_names *n)
{
	char pattern[sizeof("pci:v00000000d00000000*")];

	snprintf(pattern, sizeof(pattern), "pci:v%08X*", vendor);
	hwdb_copy(pattern, "ID_VENDOR_FROM_DATABASE", n->vendor,
		  sizeof(n->vendor));
	snprintf(pattern, sizeof(pattern), "pci:v%08Xd%08X*", vendor, device);
	hwdb_copy(pattern, "ID_MODEL_FROM_DATABASE", n->device,
		  sizeof(n->device));
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

/* pci.ids's names for @vendor and @device, through libpci */
static void pci_ids_names(u16 vendor, u16 device, struct pci_id_names *n)
{
	if (!pci_lookup_name(pci_ids(), n->vendor, sizeof(n->vendor),
			     PCI_LOOKUP_VENDOR, vendor))
		n->vendor[0] = '\0';
	if (!pci_lookup_name(pci_ids(), n->device, sizeof(n->device),
			     PCI_LOOKUP_DEVICE, vendor, device))
		n->device[0] = '\0';
}

/*
 * The names looked up so far: a host has few distinct ids, and a dump
 * names each of its functions, so most lookups are repeats.
 */
#define PCI_NAMES_CACHED 32

static struct {
	u16 vendor;
	u16 device;
	struct pci_id_names names;
} cache[PCI_NAMES_CACHED];
static unsigned int cached, cache_next;

/**
 * pci_names() - the vendor and device names of a PCI id pair
 * @vendor: PCI vendor id
 * @device: PCI device id
 * @n: filled with both names
 *
 * From the hwdb, else pci.ids; an id neither has reads "Vendor 1234" or
 * "Device 1111".
 */
void pci_names(u16 vendor, u16 device, struct pci_id_names *n)
{
	unsigned int i;

	for (i = 0; i < cached; i++) {
		if (cache[i].vendor == vendor && cache[i].device == device) {
			*n = cache[i].names;
			return;
		}
	}
	n->vendor[0] = '\0';
	n->device[0] = '\0';
	if (hwdb_get())
		hwdb_names(vendor, device, n);
	else
		pci_ids_names(vendor, device, n);
	if (!n->vendor[0])
		snprintf(n->vendor, sizeof(n->vendor), "Vendor %04x", vendor);
	if (!n->device[0])
		snprintf(n->device, sizeof(n->device), "Device %04x", device);

	i = cache_next;
	cache_next = (cache_next + 1) % PCI_NAMES_CACHED;
	if (cached < PCI_NAMES_CACHED)
		cached++;
	cache[i].vendor = vendor;
	cache[i].device = device;
	cache[i].names = *n;
}

/**
 * pci_class_name() - a PCI class's name, as lspci gives it
 * @class: the 24-bit class code
 * @buf: where the name is written
 * @size: size of @buf
 *
 * The subclass's name ("3D controller", "VGA compatible controller"),
 * else the base class's, from the hwdb or else pci.ids; "Class 0302" when
 * neither knows it.
 *
 * Return: @buf.
 */
const char *pci_class_name(u32 class, char *buf, size_t size)
{
	/* the hwdb's class entries match any ids */
	char pattern[sizeof("pci:v*d*sv*sd*bc00sc00*")];
	unsigned int base = (class >> 16) & 0xff, sub = (class >> 8) & 0xff;

	buf[0] = '\0';
	if (hwdb_get()) {
		snprintf(pattern, sizeof(pattern), "pci:v*d*sv*sd*bc%02Xsc%02X*",
			 base, sub);
		hwdb_copy(pattern, "ID_PCI_SUBCLASS_FROM_DATABASE", buf, size);
		if (!buf[0]) {
			snprintf(pattern, sizeof(pattern),
				 "pci:v*d*sv*sd*bc%02X*", base);
			hwdb_copy(pattern, "ID_PCI_CLASS_FROM_DATABASE", buf,
				  size);
		}
	} else if (!pci_lookup_name(pci_ids(), buf, size,
				    PCI_LOOKUP_CLASS | PCI_LOOKUP_NO_NUMBERS,
				    class >> 8)) {
		buf[0] = '\0';
	}
	if (!buf[0])
		snprintf(buf, size, "Class %04x", class >> 8);
	return buf;
}

/* Frees what the lookups mapped and parsed, so that valgrind sees no leak */
void pci_names_cleanup(void)
{
	if (pacc)
		pci_cleanup(pacc);
	pacc = NULL;
	hwdb_close(hwdb);
	hwdb = NULL;
	hwdb_tried = false;
	cached = 0;
	cache_next = 0;
}
