// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * Opens of tracked devices on VFIO drivers that are not gpuctl's own:
 * vfio-pci, its in-tree and vendor variants, and whatever binds the
 * functions of an IOMMU group that a VM uses.
 *
 * gpuctl does not touch those drivers' objects; it observes. While a VFIO
 * user has a group, VFIO holds the group's DMA ownership (it claims it when
 * the user attaches the group to a container: drivers/vfio/container.c,
 * vfio_container_attach_group(), 6.1 and 6.12), and no
 * host DMA driver can be bound in the group then. So a tracked device on
 * such a driver is open exactly while its group is claimed and has no
 * member on a host DMA driver (gpuctl_reserve_vfio_busy()). Nothing tells
 * when that changes, so gpuctl looks: at every bind and unbind of the
 * device, before every request that depends on it (dev-get, mdev-get,
 * dumps, alloc-del, rule-del), and once a second while any tracked device
 * is on such a driver or any mdev instance exists (mdev-watch.c). What is
 * not known is who: the holder shows pid 0.
 *
 * Locking: everything here runs under gpuctl_lock, which nests outside the
 * IOMMU group's mutex; the poll is a delayed work on the system queue that
 * takes gpuctl_lock and never sleeps otherwise.
 */

#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>
#include <uapi/linux/gpuctl.h>

#include "inventory.h"
#include "mdev.h"
#include "migration.h"
#include "reserve.h"
#include "vfio-track.h"

/* How often opens are looked for while a device is on a watched driver. */
#define GPUCTL_VFIO_WATCH_PERIOD HZ

static void gpuctl_vfio_watch_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(gpuctl_vfio_watch_work, gpuctl_vfio_watch_fn);

/* Under gpuctl_lock: the poll may run (between start and stop). */
static bool gpuctl_vfio_watch_on;

/* A device whose opens only its group's DMA ownership tells. */
static bool gpuctl_vfio_watched(const struct gpuctl_dev *dev)
{
	return dev->group && dev->dma_managed &&
	       dev->role != GPUCTL_DEV_ROLE_BRIDGE &&
	       strcmp(dev->driver, GPUCTL_VFIO_DRIVER_NAME) &&
	       strcmp(dev->driver, "pci-stub");
}

/* Keep looking while a device is watched; see the top of this file. */
static void gpuctl_vfio_watch_arm(void)
{
	lockdep_assert_held(&gpuctl_lock);
	if (gpuctl_vfio_watch_on)
		queue_delayed_work(system_wq, &gpuctl_vfio_watch_work,
				   GPUCTL_VFIO_WATCH_PERIOD);
}

/*
 * The migration capabilities of a device on a VFIO driver, gpuctl's own
 * included, read when its opens are; a device whose lock is held now
 * keeps what was last read, and is read at the next look.
 */
static void gpuctl_vfio_watch_migration(struct gpuctl_dev *dev)
{
	if (!dev->dma_managed || dev->role == GPUCTL_DEV_ROLE_BRIDGE) {
		dev->mig.known = false;
		return;
	}
	gpuctl_migration_read(&dev->pdev->dev, &dev->mig);
}

/*
 * Bring a device's observed open up to date: announce an open that started
 * or ended since gpuctl last looked, as gpuctl-vfio-pci's opens are. A
 * close may end the device's allocation (detach-on-stop), so callers must
 * not hold on to an allocation across this call. A device that left its
 * watched driver while open is closed. Takes the IOMMU group's mutex.
 */
static void gpuctl_vfio_watch_dev(struct gpuctl_dev *dev)
{
	struct gpuctl_holder *holder = &dev->holder;
	bool watched, open;

	lockdep_assert_held(&gpuctl_lock);

	watched = gpuctl_vfio_watched(dev);
	open = watched && gpuctl_reserve_vfio_busy(dev);
	if (open && !holder->open) {
		memset(holder, 0, sizeof(*holder));
		holder->open = true;
		holder->observed = true;
		holder->since = ktime_get_real_seconds();
		/* gpuctl_nl_holder_fill() tells the match from the ledger. */
		holder->match = GPUCTL_OPEN_MATCH_UNKNOWN;
		gpuctl_vfio_track_open(dev);
	} else if (!open && holder->open && holder->observed) {
		gpuctl_vfio_track_close(dev);
	}
	if (watched)
		gpuctl_vfio_watch_arm();
	gpuctl_vfio_watch_migration(dev);
}

/**
 * gpuctl_vfio_watch_driver_changed() - a tracked device's driver changed
 * @dev: the device; dev->driver is already the new driver
 *
 * A device that came to a watched driver is watched from now on; one that
 * left it while open is closed by now, and its close announced. A close
 * may end the device's allocation (detach-on-stop), so callers must not
 * hold on to an allocation across this call.
 *
 * Context: gpuctl_lock held; takes the IOMMU group's mutex.
 */
void gpuctl_vfio_watch_driver_changed(struct gpuctl_dev *dev)
{
	/* what the old driver registered is gone with it */
	dev->mig.known = false;
	gpuctl_vfio_watch_dev(dev);
}

/**
 * gpuctl_vfio_watch_sync() - bring every observed open up to date
 *
 * For requests whose answer depends on who has a device open. Any
 * allocation may be freed meanwhile (detach-on-stop), so this runs before
 * the request looks anything up.
 *
 * Context: gpuctl_lock held; takes IOMMU group mutexes.
 */
void gpuctl_vfio_watch_sync(void)
{
	struct gpuctl_dev *dev;
	unsigned long key;

	lockdep_assert_held(&gpuctl_lock);

	for (key = 0; (dev = gpuctl_inventory_next(&key)); key++)
		gpuctl_vfio_watch_dev(dev);
	/* an mdev's opens are looked at the same way (mdev-watch.c) */
	if (gpuctl_mdev_watch_sync())
		gpuctl_vfio_watch_arm();
}

/**
 * gpuctl_vfio_watch_poll() - start looking once a second, if not yet
 *
 * For a new mdev instance, whose opens nothing announces.
 *
 * Context: gpuctl_lock held.
 */
void gpuctl_vfio_watch_poll(void)
{
	gpuctl_vfio_watch_arm();
}

static void gpuctl_vfio_watch_fn(struct work_struct *work)
{
	mutex_lock(&gpuctl_lock);
	if (gpuctl_vfio_watch_on)
		gpuctl_vfio_watch_sync();
	mutex_unlock(&gpuctl_lock);
}

/**
 * gpuctl_vfio_watch_start() - start observing opens
 *
 * Looks at every tracked device once, so that a VM that had a device open
 * before gpuctl loaded is seen.
 *
 * Context: module init, after the load-time scan; takes gpuctl_lock.
 */
void gpuctl_vfio_watch_start(void)
{
	mutex_lock(&gpuctl_lock);
	gpuctl_vfio_watch_on = true;
	gpuctl_vfio_watch_sync();
	mutex_unlock(&gpuctl_lock);
}

/**
 * gpuctl_vfio_watch_stop() - stop observing opens
 *
 * Context: module exit or init failure; takes gpuctl_lock, waits for a
 * running poll.
 */
void gpuctl_vfio_watch_stop(void)
{
	mutex_lock(&gpuctl_lock);
	gpuctl_vfio_watch_on = false;
	mutex_unlock(&gpuctl_lock);
	cancel_delayed_work_sync(&gpuctl_vfio_watch_work);
}
