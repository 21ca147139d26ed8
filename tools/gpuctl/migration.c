// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * Live migration, as far as the host can tell: the capabilities the
 * device's VFIO driver registered (the module's "migration" attribute,
 * kmod/migration.c), and a compatibility key. Two devices with the same
 * key are the same hardware (vendor, device and subsystem ids), of the
 * same vGPU type, under the same driver at the same version, so the host
 * sees nothing that keeps one from taking the other's migration stream.
 * What it cannot see, the firmware and the guest driver, it does not
 * claim.
 */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/gpuctl.h>

#include "gpuctl.h"
#include "json_print.h"
#include "mdev_sysfs.h"
#include "migration.h"
#include "utils.h"

static const struct {
	u32 flag;
	const char *name;
} migration_names[] = {
	{ GPUCTL_MIGRATION_CAPS_STOP_COPY, "stop-copy" },
	{ GPUCTL_MIGRATION_CAPS_P2P, "p2p" },
	{ GPUCTL_MIGRATION_CAPS_PRE_COPY, "pre-copy" },
	{ GPUCTL_MIGRATION_CAPS_DIRTY_TRACKING, "dirty-tracking" },
};

/**
 * migration_print() - "migration" in JSON: the capabilities' names
 * @known: the module reported them
 * @caps: enum gpuctl_migration_caps flags
 *
 * An array, empty for a VFIO device that cannot migrate; null when the
 * device has no VFIO device.
 */
void migration_print(bool known, u32 caps)
{
	size_t i;

	if (!known) {
		print_null(PRINT_JSON, "migration", NULL, NULL);
		return;
	}
	open_json_array(PRINT_JSON, "migration");
	for (i = 0; i < ARRAY_SIZE(migration_names); i++)
		if (caps & migration_names[i].flag)
			print_string(PRINT_JSON, NULL, NULL,
				     migration_names[i].name);
	close_json_array(PRINT_JSON, NULL);
}

/**
 * migration_caps_str() - the capabilities' names, joined by commas
 * @caps: enum gpuctl_migration_caps flags
 * @buf: out: "stop-copy,p2p", or "" for none
 * @size: its size
 */
void migration_caps_str(u32 caps, char *buf, size_t size)
{
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(migration_names) && len < size; i++)
		if (caps & migration_names[i].flag)
			len += snprintf(buf + len, size - len, "%s%s",
					len ? "," : "", migration_names[i].name);
}

/* Whether the VM can live-migrate with it: the device state can move */
bool migration_live(bool known, u32 caps)
{
	return known && (caps & GPUCTL_MIGRATION_CAPS_STOP_COPY);
}

/*
 * The version of the module that provides driver @drv of bus @bus: its
 * MODULE_VERSION, else its srcversion, else, for a driver built into the
 * kernel, the kernel's release.
 */
static void driver_version(const char *bus, const char *drv, char *buf,
			   size_t size)
{
	char path[PATH_MAX], mod[64];
	struct utsname u;

	snprintf(path, sizeof(path), "/sys/bus/%s/drivers/%s/module", bus, drv);
	if (!sysfs_link_base(path, mod, sizeof(mod))) {
		snprintf(path, sizeof(path), "/sys/module/%s/version", mod);
		read_first_line(path, buf, size);
		if (buf[0])
			return;
		snprintf(path, sizeof(path), "/sys/module/%s/srcversion", mod);
		read_first_line(path, buf, size);
		if (buf[0])
			return;
	}
	if (!uname(&u))
		snprintf(buf, size, "linux-%s", u.release);
	else
		snprintf(buf, size, "unknown");
}

/**
 * migration_compat_pci() - the compatibility key of a PCI function
 * @vendor: its ids
 * @device: as above
 * @subvendor: as above
 * @subdevice: as above
 * @type: its vendor vGPU type, 0 for none
 * @driver: the VFIO driver it is on
 * @buf: out: "VVVV:DDDD:SSSS:SSSS[/type-N]/DRIVER@VERSION"
 * @size: its size
 */
void migration_compat_pci(u16 vendor, u16 device, u16 subvendor,
			  u16 subdevice, u32 type, const char *driver,
			  char *buf, size_t size)
{
	char version[128], typed[24] = "";

	driver_version("pci", driver, version, sizeof(version));
	if (type)
		snprintf(typed, sizeof(typed), "/type-%u", type);
	snprintf(buf, size, "%04x:%04x:%04x:%04x%s/%s@%s", vendor, device,
		 subvendor, subdevice, typed, driver, version);
}

/* "VVVV:DDDD:SSSS:SSSS" of the PCI device @addr, "" when it is none */
static void pci_ids(const char *addr, char *buf, size_t size)
{
	static const char *const files[] = {
		"vendor", "device", "subsystem_vendor", "subsystem_device",
	};
	char path[PATH_MAX], val[16];
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(files) && len < size; i++) {
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s",
			 addr, files[i]);
		read_first_line(path, val, sizeof(val));
		if (strncmp(val, "0x", 2)) {
			buf[0] = '\0';
			return;
		}
		len += snprintf(buf + len, size - len, "%s%s", i ? ":" : "",
				val + 2);
	}
}

/**
 * migration_compat_mdev() - the compatibility key of an mdev instance
 * @parent: its parent, a PCI address or a virtual parent's name
 * @type: its mdev type
 * @driver: its vendor driver, on the mdev bus
 * @buf: out: "IDS/TYPE/DRIVER@VERSION", IDS the PCI parent's ids or
 *	"virtual:PARENT"
 * @size: its size
 */
void migration_compat_mdev(const char *parent, const char *type,
			   const char *driver, char *buf, size_t size)
{
	char version[128], ids[64];

	pci_ids(parent, ids, sizeof(ids));
	if (!ids[0])
		snprintf(ids, sizeof(ids), "virtual:%.40s", parent);
	driver_version("mdev", driver, version, sizeof(version));
	snprintf(buf, size, "%s/%s/%s@%s", ids, type, driver, version);
}

/**
 * dev_migration_compat() - the compatibility key of a device
 * @d: the device
 * @buf: out: the key (migration_compat_pci())
 * @size: its size
 *
 * Return: false, and nothing written, when it is on no VFIO driver.
 */
bool dev_migration_compat(const struct dev_info *d, char *buf, size_t size)
{
	if (!d->has_migration || !d->has_driver)
		return false;
	migration_compat_pci(d->vendor_id, d->device_id,
			     d->subsystem_vendor_id, d->subsystem_device_id,
			     d->has_vgpu_type ? d->vgpu_type : 0, d->driver,
			     buf, size);
	return true;
}

/**
 * vgpu_migration_compat() - the compatibility key of an mdev instance
 * @v: the instance
 * @buf: out: the key (migration_compat_mdev())
 * @size: its size
 *
 * Return: false, and nothing written, when it has no VFIO device.
 */
bool vgpu_migration_compat(const struct vgpu_info *v, char *buf, size_t size)
{
	if (!v->has_migration || !v->driver[0])
		return false;
	migration_compat_mdev(v->parent, v->type, v->driver, buf, size);
	return true;
}

static int alloc_blocker_add(struct alloc_info *al, const char *dev)
{
	char (*b)[GPUCTL_UUID_LEN + 1];

	b = realloc(al->blockers, (al->nblockers + 1) * sizeof(*b));
	if (!b)
		return -ENOMEM;
	al->blockers = b;
	snprintf(b[al->nblockers++], sizeof(*b), "%s", dev);
	return 0;
}

static bool dev_live(const struct nl_list *devs, const char *addr)
{
	const struct dev_info *d = dev_find(devs, addr);

	return d && migration_live(d->has_migration, d->migration);
}

static bool vgpu_live(const struct nl_list *vgpus, const char *uuid)
{
	const struct vgpu_info *v = vgpu_find(vgpus, uuid);

	return v && migration_live(v->has_migration, v->migration);
}

/**
 * alloc_migration_read() - which of an allocation's devices cannot migrate
 * @al: the allocation; its blockers are set
 * @devs: the module's devices (struct dev_info)
 * @vgpus: the module's mdev instances (struct vgpu_info)
 *
 * The VM can live-migrate only when every device and vGPU it is given
 * can move its state. A device the module no longer lists, or one on no
 * VFIO driver, cannot.
 *
 * Return: 0 or -ENOMEM; al->migration_read says the blockers are known.
 */
int alloc_migration_read(struct alloc_info *al, const struct nl_list *devs,
			 const struct nl_list *vgpus)
{
	size_t i;

	for (i = 0; i < al->ndevs; i++)
		if (!dev_live(devs, al->devs[i]) &&
		    alloc_blocker_add(al, al->devs[i]))
			return -ENOMEM;
	for (i = 0; i < al->nvgpus; i++)
		if (!vgpu_live(vgpus, al->vgpus[i].uuid) &&
		    alloc_blocker_add(al, al->vgpus[i].uuid))
			return -ENOMEM;
	al->migration_read = true;
	return 0;
}
