// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * What a device's VFIO driver can do for live migration, as the cloud
 * stacks' schedulers want it said (Nova's live_migratable, KubeVirt,
 * Proxmox's live-migration-capable) rather than typed by hand.
 *
 * A VFIO driver states it when it registers its vfio_device: the
 * migration_flags (VFIO_MIGRATION_STOP_COPY, _P2P, _PRE_COPY) with
 * mig_ops, and log_ops when it tracks dirty pages itself. These members
 * are in the part of struct vfio_device that drivers set, "a static
 * property of the vfio_device which must be set prior to registering"
 * (include/linux/vfio.h, 6.1 and 6.12), so they do not change while the
 * device is registered, and gpuctl only reads them.
 *
 * The vfio_device is found as mdev-watch.c finds an instance's: it is the
 * device of class "vfio-dev" among the children of the PCI function or
 * the mdev instance. The walk runs under the parent's device lock, which
 * it only tries (gpuctl_lock must never wait for a device lock): the
 * vfio-dev child is added and deleted only by the driver's probe and
 * remove (vfio_register_group_dev(), vfio_unregister_group_dev()), which
 * run under that lock, so the vfio_device cannot be unregistered, nor
 * its last reference dropped, while gpuctl reads it. A parent whose lock
 * is held (it is being bound or unbound; or the caller is a bus event of
 * that very device) is looked at again at the next look.
 */

#include <linux/device.h>
#include <linux/vfio.h>
#include <uapi/linux/gpuctl.h>

#include "migration.h"

static int gpuctl_migration_child(struct device *child, void *data)
{
	const struct vfio_device *vdev;
	struct gpuctl_migration *mig = data;
	u32 caps = 0;

	if (!child->class || strcmp(child->class->name, "vfio-dev"))
		return 0;
	vdev = container_of(child, struct vfio_device, device);
	if (vdev->mig_ops) {
		if (vdev->migration_flags & VFIO_MIGRATION_STOP_COPY)
			caps |= GPUCTL_MIGRATION_CAPS_STOP_COPY;
		if (vdev->migration_flags & VFIO_MIGRATION_P2P)
			caps |= GPUCTL_MIGRATION_CAPS_P2P;
#ifdef VFIO_MIGRATION_PRE_COPY	/* 6.2 on; 6.1's drivers cannot say it */
		if (vdev->migration_flags & VFIO_MIGRATION_PRE_COPY)
			caps |= GPUCTL_MIGRATION_CAPS_PRE_COPY;
#endif
	}
	if (vdev->log_ops)
		caps |= GPUCTL_MIGRATION_CAPS_DIRTY_TRACKING;
	mig->known = true;
	mig->caps = caps;
	return 1;
}

/**
 * gpuctl_migration_read_locked() - read a device's migration capabilities
 * @parent: the PCI function's or the mdev instance's device, whose device
 *	lock the caller holds
 * @mig: out; not known when @parent has no vfio_device
 *
 * Context: @parent's device lock held.
 */
void gpuctl_migration_read_locked(struct device *parent,
				  struct gpuctl_migration *mig)
{
	device_lock_assert(parent);
	mig->known = false;
	mig->caps = 0;
	device_for_each_child(parent, mig, gpuctl_migration_child);
}

/**
 * gpuctl_migration_read() - read them, if the device lock is free
 * @parent: the device
 * @mig: updated when the lock was taken; kept as it was otherwise
 *
 * Context: any sleeping context; never waits for the device lock.
 * Return: 0, or -EAGAIN when the device lock is held.
 */
int gpuctl_migration_read(struct device *parent, struct gpuctl_migration *mig)
{
	if (!device_trylock(parent))
		return -EAGAIN;
	gpuctl_migration_read_locked(parent, mig);
	device_unlock(parent);
	return 0;
}
