// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * Who has a tracked device open through VFIO: the holder, whether the open
 * matched the device's allocation, the notifications, and the allocation
 * states and detach-on-stop that follow from opens and closes. The calls
 * come from vfio-hook.c (plain vfio-pci) and vfio-driver.c (gpuctl's own
 * variant driver, which also enforces the allocation's credentials).
 *
 * Context of every entry point: vfio calls open_device in the opener's
 * task and close_device in whichever task drops the last file reference
 * (kernel-facts 4.3), both under the device set's lock, which therefore
 * nests outside gpuctl_lock. Only the open looks at current.
 */

#include <linux/cred.h>
#include <linux/sched.h>
#include <linux/timekeeping.h>
#include <linux/uidgid.h>

#include "alloc.h"
#include "inventory.h"
#include "netlink.h"
#include "vfio-track.h"

/* "uid 4294967295 is not the owner's (4294967295)" */
#define GPUCTL_REFUSED_LEN 64

static struct gpuctl_dev *gpuctl_vfio_find(struct pci_dev *pdev)
{
	struct gpuctl_dev *dev;

	dev = gpuctl_inventory_find(gpuctl_inventory_key(pci_domain_nr(pdev->bus),
							 pdev->bus->number,
							 pdev->devfn));
	return dev && dev->pdev == pdev ? dev : NULL;
}

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
	holder->open = true;
	holder->pid = task_tgid_nr(current);
	get_task_comm(holder->comm, current);
	holder->uid = from_kuid_munged(&init_user_ns, current_euid());
	holder->since = ktime_get_real_seconds();
	holder->match = match;
}

/**
 * gpuctl_vfio_admit() - whether the enforcing driver lets an opener in
 * @pdev: the device
 *
 * A device without an allocation, or an opener whose uid or gid is not
 * the allocation's, is refused, and the refusal is announced.
 *
 * Context: the opener's task, under vfio's device set lock; takes
 * gpuctl_lock.
 * Return: 0, or -EPERM when refused.
 */
int gpuctl_vfio_admit(struct pci_dev *pdev)
{
	char why[GPUCTL_REFUSED_LEN];
	struct gpuctl_holder refused;
	struct gpuctl_dev *dev;
	u32 match;

	mutex_lock(&gpuctl_lock);
	dev = gpuctl_vfio_find(pdev);
	match = gpuctl_vfio_match(dev, why, sizeof(why));
	if (match == GPUCTL_OPEN_MATCH_OWNER) {
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
 * gpuctl_vfio_opened() - a VFIO user opened a device (first open)
 * @pdev: the device
 *
 * Records the opener as the device's holder, announces it, and marks its
 * allocation running.
 *
 * Context: the opener's task, under vfio's device set lock, after the
 * driver's open succeeded; takes gpuctl_lock.
 */
void gpuctl_vfio_opened(struct pci_dev *pdev)
{
	char why[GPUCTL_REFUSED_LEN];
	struct gpuctl_dev *dev;

	mutex_lock(&gpuctl_lock);
	dev = gpuctl_vfio_find(pdev);
	if (dev) {
		gpuctl_vfio_set_holder(&dev->holder,
				       gpuctl_vfio_match(dev, why, sizeof(why)));
		gpuctl_netlink_notify_vfio(dev, &dev->holder,
					   GPUCTL_CMD_VFIO_OPEN_NTF, NULL);
		if (dev->alloc)
			gpuctl_alloc_update_state(dev->alloc, true);
		gpuctl_inventory_changed();
	}
	mutex_unlock(&gpuctl_lock);
}

/**
 * gpuctl_vfio_adopt() - note a device that was open before gpuctl looked
 * @pdev: the device; vfio's open count is not 0
 *
 * Its holder is unknown (pid 0) until it closes.
 *
 * Context: under vfio's device set lock; takes gpuctl_lock.
 */
void gpuctl_vfio_adopt(struct pci_dev *pdev)
{
	struct gpuctl_dev *dev;

	mutex_lock(&gpuctl_lock);
	dev = gpuctl_vfio_find(pdev);
	if (dev && !dev->holder.open) {
		memset(&dev->holder, 0, sizeof(dev->holder));
		dev->holder.open = true;
		dev->holder.match = GPUCTL_OPEN_MATCH_UNKNOWN;
		gpuctl_netlink_notify_vfio(dev, &dev->holder,
					   GPUCTL_CMD_VFIO_OPEN_NTF, NULL);
		if (dev->alloc)
			gpuctl_alloc_update_state(dev->alloc, true);
		gpuctl_inventory_changed();
	}
	mutex_unlock(&gpuctl_lock);
}

/**
 * gpuctl_vfio_closed() - the last VFIO user of a device closed it
 * @pdev: the device
 *
 * Announces the close with the holder that had it open, then updates the
 * allocation: idle, or ended when it asked for detach-on-stop and none of
 * its devices is open any more.
 *
 * Context: any task, under vfio's device set lock; takes gpuctl_lock.
 */
void gpuctl_vfio_closed(struct pci_dev *pdev)
{
	struct gpuctl_alloc *alloc;
	struct gpuctl_dev *dev;

	mutex_lock(&gpuctl_lock);
	dev = gpuctl_vfio_find(pdev);
	if (!dev || !dev->holder.open)
		goto out;

	gpuctl_netlink_notify_vfio(dev, &dev->holder,
				   GPUCTL_CMD_VFIO_CLOSE_NTF, NULL);
	memset(&dev->holder, 0, sizeof(dev->holder));
	gpuctl_inventory_changed();

	alloc = dev->alloc;
	if (!alloc)
		goto out;
	if (alloc->info.detach_on_stop && !gpuctl_alloc_open_dev(alloc)) {
		pci_info(pdev, "allocation %u detached: its VM stopped\n",
			 alloc->info.id);
		gpuctl_alloc_destroy(alloc, GPUCTL_ALLOC_END_DETACHED);
	} else {
		gpuctl_alloc_update_state(alloc, true);
	}
out:
	mutex_unlock(&gpuctl_lock);
}
