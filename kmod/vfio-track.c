// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * Who has a tracked device open through VFIO: the holder, whether the open
 * matched the device's allocation, the notifications, and the allocation
 * states and detach-on-stop that follow from opens and closes.
 *
 * Opens reach gpuctl two ways. gpuctl-vfio-pci (vfio-driver.c) is gpuctl's
 * own vfio_device, so it sees each open with the opener's credentials and
 * enforces the allocation's before the device is enabled. Every other VFIO
 * driver's opens are observed from the IOMMU group's DMA ownership
 * (vfio-watch.c), without the holder's identity. Both end in
 * gpuctl_vfio_track_open() and gpuctl_vfio_track_close().
 *
 * Context of gpuctl-vfio-pci's calls: vfio calls open_device in the
 * opener's task and close_device in whichever task drops the last file
 * reference (6.1: drivers/vfio/vfio_main.c, vfio_device_open() and
 * vfio_device_fops_release(); 6.12: drivers/vfio/group.c,
 * vfio_df_group_open() and vfio_df_group_close()), both under the device
 * set's lock, which therefore nests outside gpuctl_lock. Only the open
 * looks at current.
 */

#include <linux/cred.h>
#include <linux/sched.h>
#include <linux/timekeeping.h>
#include <linux/uidgid.h>

#include "alloc.h"
#include "inventory.h"
#include "netlink.h"
#include "reserve.h"
#include "vfio-track.h"

/* "uid 4294967295 is not the owner's (4294967295)" */
#define GPUCTL_REFUSED_LEN 64

/* Whether the opener's credentials are those of the device's allocation. */
static u32 gpuctl_vfio_match(const struct gpuctl_dev *dev, char *why,
			     size_t len)
{
	const struct gpuctl_alloc_info *info;
	u32 uid, gid;

	if (!dev || !dev->alloc) {
		snprintf(why, len, "not allocated");
		return GPUCTL_OPEN_MATCH_UNALLOCATED;
	}

	info = &dev->alloc->info;
	uid = from_kuid_munged(&init_user_ns, current_euid());
	if (info->has_uid && uid != info->uid) {
		snprintf(why, len, "uid %u is not the owner's (%u)", uid,
			 info->uid);
		return GPUCTL_OPEN_MATCH_OTHER;
	}
	gid = from_kgid_munged(&init_user_ns, current_egid());
	if (info->has_gid &&
	    !in_egroup_p(make_kgid(&init_user_ns, info->gid))) {
		snprintf(why, len, "gid %u is not the owner's (%u)", gid,
			 info->gid);
		return GPUCTL_OPEN_MATCH_OTHER;
	}
	return GPUCTL_OPEN_MATCH_OWNER;
}

static void gpuctl_vfio_set_holder(struct gpuctl_holder *holder, u32 match)
{
	memset(holder, 0, sizeof(*holder));
	holder->open = true;
	holder->pid = task_tgid_nr(current);
	get_task_comm(holder->comm, current);
	holder->uid = from_kuid_munged(&init_user_ns, current_euid());
	holder->since = ktime_get_real_seconds();
	holder->match = match;
}

/**
 * gpuctl_vfio_open_begin() - admit an opener of a device on gpuctl-vfio-pci
 * @pdev: the device
 *
 * A device without an allocation, or an opener whose uid or gid is not the
 * allocation's, is refused, and the refusal is announced. An admitted
 * opener becomes the device's holder at once, before the device is
 * enabled, so that from here on alloc-del and rule-del see the device as
 * open and cannot take it away; gpuctl_vfio_open_end() then announces the
 * open, or forgets it when enabling failed.
 *
 * Context: the opener's task, under vfio's device set lock; takes
 * gpuctl_lock.
 * Return: 0, or -EPERM when refused.
 */
int gpuctl_vfio_open_begin(struct pci_dev *pdev)
{
	char why[GPUCTL_REFUSED_LEN];
	struct gpuctl_holder refused;
	struct gpuctl_dev *dev;
	u32 match;

	mutex_lock(&gpuctl_lock);
	dev = gpuctl_inventory_find_pdev(pdev);
	match = gpuctl_vfio_match(dev, why, sizeof(why));
	if (match == GPUCTL_OPEN_MATCH_OWNER) {
		gpuctl_vfio_set_holder(&dev->holder, match);
		dev->holder.opening = true;
		mutex_unlock(&gpuctl_lock);
		return 0;
	}

	pci_info(pdev, "refused VFIO open by %s[%d]: %s\n", current->comm,
		 task_tgid_nr(current), why);
	if (dev) {
		gpuctl_vfio_set_holder(&refused, match);
		gpuctl_netlink_notify_vfio(dev, &refused,
					   GPUCTL_CMD_VFIO_OPEN_NTF, why);
	}
	mutex_unlock(&gpuctl_lock);
	return -EPERM;
}

/**
 * gpuctl_vfio_open_end() - an admitted open of a device finished
 * @pdev: the device
 * @ret: 0 when the device is open now, or the error that failed the open
 *
 * Context: the opener's task, under vfio's device set lock; takes
 * gpuctl_lock.
 */
void gpuctl_vfio_open_end(struct pci_dev *pdev, int ret)
{
	struct gpuctl_dev *dev;

	mutex_lock(&gpuctl_lock);
	dev = gpuctl_inventory_find_pdev(pdev);
	if (dev && dev->holder.opening) {
		dev->holder.opening = false;
		if (ret)
			memset(&dev->holder, 0, sizeof(dev->holder));
		else
			gpuctl_vfio_track_open(dev);
	}
	mutex_unlock(&gpuctl_lock);
}

/**
 * gpuctl_vfio_closed() - the last VFIO user of a device on gpuctl-vfio-pci
 *	closed it
 * @pdev: the device
 *
 * Context: any task, under vfio's device set lock; takes gpuctl_lock.
 */
void gpuctl_vfio_closed(struct pci_dev *pdev)
{
	struct gpuctl_dev *dev;

	mutex_lock(&gpuctl_lock);
	dev = gpuctl_inventory_find_pdev(pdev);
	if (dev && dev->holder.open && !dev->holder.observed)
		gpuctl_vfio_track_close(dev);
	mutex_unlock(&gpuctl_lock);
}

/**
 * gpuctl_vfio_track_open() - a VFIO user opened a device
 * @dev: the device; its holder is set
 *
 * Announces the open and marks the device's allocation running.
 *
 * Context: gpuctl_lock held.
 */
void gpuctl_vfio_track_open(struct gpuctl_dev *dev)
{
	lockdep_assert_held(&gpuctl_lock);

	gpuctl_netlink_notify_vfio(dev, &dev->holder, GPUCTL_CMD_VFIO_OPEN_NTF,
				   NULL);
	if (dev->alloc)
		gpuctl_alloc_update_state(dev->alloc, true);
	gpuctl_inventory_changed();
}

/**
 * gpuctl_vfio_track_close() - the last VFIO user of a device closed it
 * @dev: the device; its holder is the user that had it open
 *
 * Announces the close with that holder, forgets it, has the reservation
 * worker try again what this user kept it from, then updates the
 * allocation: idle, or ended when it asked for detach-on-stop and none of
 * its devices is open any more. The allocation may be freed on return.
 *
 * Context: gpuctl_lock held.
 */
void gpuctl_vfio_track_close(struct gpuctl_dev *dev)
{
	struct gpuctl_alloc *alloc = dev->alloc;

	lockdep_assert_held(&gpuctl_lock);

	gpuctl_netlink_notify_vfio(dev, &dev->holder, GPUCTL_CMD_VFIO_CLOSE_NTF,
				   NULL);
	memset(&dev->holder, 0, sizeof(dev->holder));
	gpuctl_inventory_changed();
	gpuctl_reserve_user_gone(dev);

	if (!alloc)
		return;
	if (alloc->info.detach_on_stop && !gpuctl_alloc_in_use(alloc)) {
		pci_info(dev->pdev, "allocation %u detached: its VM stopped\n",
			 alloc->info.id);
		gpuctl_alloc_destroy(alloc, GPUCTL_ALLOC_END_DETACHED);
	} else {
		gpuctl_alloc_update_state(alloc, true);
	}
}
