// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * Opens of mdev instances (vGPUs): whether a VFIO user, a VM's QEMU, has
 * one open, for its allocation's state, detach-on-stop and alloc-del.
 *
 * Neither way gpuctl sees PCI opens works for an mdev. Its vfio_device
 * belongs to the vendor driver, whose open_device and close_device gpuctl
 * never sees; and VFIO gives it an emulated IOMMU group, whose DMA
 * ownership it does not claim (only VFIO_IOMMU groups are claimed), so
 * vfio-watch.c's signal is absent too. What stays is the vfio core's own
 * count: every vfio_device is a device of class "vfio-dev"
 * (/sys/class/vfio-dev/vfioN), a child of the instance's device, and
 * counts its opens in open_count. gpuctl reads that count and never
 * writes it. It reads it without the device set's lock, which
 * vfio_device_set_open_count() wants but which nests outside gpuctl_lock
 * (vfio-track.c): a status read, as iommu_group_dma_owner_claimed() is.
 * open_count is in include/linux/vfio.h among the members marked private
 * to the vfio core; gpuctl is built against each kernel's own header.
 * Who has it open is not known: the state is "running", without holder.
 *
 * gpuctl looks when vfio-watch.c looks: before requests whose answer
 * depends on opens, and once a second while any instance exists.
 *
 * Lifetime: an instance on gpuctl's list is alive, since it leaves the
 * list at DEL_DEVICE under gpuctl_lock, before its device can be freed;
 * device_for_each_child() holds a reference on each child while it looks,
 * and a vfio_device is freed only with its device's last reference.
 *
 * That reference must never be the last one: the vfio_device's release
 * (drivers/vfio/vfio_main.c, vfio_device_release(), 6.1 and 6.12) takes
 * its device set's lock, which nests outside gpuctl_lock (vfio-track.c).
 * A child leaves its parent's list in device_del(), and the vfio-dev child
 * of an instance is deleted only by its driver's probe or remove
 * (vfio_unregister_group_dev()), under the instance's device lock. So the
 * walk runs under that lock, which it only tries, as gpuctl_lock must not
 * wait for a device lock: an instance whose lock is held (it is being
 * bound or unbound) keeps its last state until the next look.
 */

#include <linux/device.h>
#include <linux/timekeeping.h>
#include <linux/vfio.h>

#include "alloc.h"
#include "mdev.h"
#include "migration.h"
#include "netlink.h"

static int gpuctl_mdev_vfio_open(struct device *child, void *data)
{
	const struct vfio_device *vdev;

	if (!child->class || strcmp(child->class->name, "vfio-dev"))
		return 0;
	vdev = container_of(child, struct vfio_device, device);
	if (READ_ONCE(vdev->open_count))
		*(bool *)data = true;
	return 0;
}

/* Whether a VFIO user has @m open; -EAGAIN when it cannot look now. */
static int gpuctl_mdev_vfio_busy(struct gpuctl_mdev *m)
{
	bool open = false;

	if (!device_trylock(m->dev))
		return -EAGAIN;
	device_for_each_child(m->dev, &open, gpuctl_mdev_vfio_open);
	/* read under the same lock, for the same reason (migration.c) */
	gpuctl_migration_read_locked(m->dev, &m->mig);
	device_unlock(m->dev);
	return open;
}

/*
 * The last VFIO user of an allocated instance closed it: the allocation
 * is idle, or ends when it asked for detach-on-stop and nothing of it is
 * open any more. The allocation may be freed on return.
 */
static void gpuctl_mdev_closed(struct gpuctl_mdev *m)
{
	struct gpuctl_alloc *alloc = m->alloc;

	if (alloc->info.detach_on_stop && !gpuctl_alloc_in_use(alloc)) {
		pr_info("allocation %u detached: its VM stopped (%pUl closed)\n",
			alloc->info.id, &m->uuid);
		gpuctl_alloc_destroy(alloc, GPUCTL_ALLOC_END_DETACHED);
	} else {
		gpuctl_alloc_update_state(alloc, true);
	}
}

/**
 * gpuctl_mdev_watch_sync() - bring every instance's open up to date
 *
 * Context: gpuctl_lock held. An allocation may be freed meanwhile
 * (detach-on-stop).
 * Return: true when there is an instance, to keep looking.
 */
bool gpuctl_mdev_watch_sync(void)
{
	struct gpuctl_mdev *m;
	unsigned long key;
	bool any = false;
	int open;

	lockdep_assert_held(&gpuctl_lock);

	for (key = 0; (m = gpuctl_mdev_next(&key)); key++) {
		any = true;
		open = gpuctl_mdev_vfio_busy(m);
		if (open < 0 || open == m->open)
			continue;
		m->open = open;
		m->open_since = open ? ktime_get_real_seconds() : 0;
		gpuctl_inventory_changed();
		if (!m->alloc)
			continue;
		if (open)
			gpuctl_alloc_update_state(m->alloc, true);
		else
			gpuctl_mdev_closed(m);
	}
	return any;
}
