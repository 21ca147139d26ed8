// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * Changing a tracked SR-IOV PF's number of VFs: the mechanics of dev-set,
 * whose handler (gpuctl_nl_dev_set_doit() in netlink.c) checks the request
 * and tells its outcome. The PF's driver enables
 * and disables them through its sriov_configure(), called under the PF's
 * device lock with the checks of a write to sriov_numvfs in sysfs
 * (drivers/pci/iov.c), so that the ledger's checks and the change are one
 * request: no VF of the PF is allocated or open when the change starts,
 * and neither the PF nor its VFs can be allocated until it ends.
 *
 * Locking: the checks of the ledger run under gpuctl_lock; the change runs
 * with gpuctl_lock dropped, under the two locks sriov_numvfs_store() takes
 * on both kernels (drivers/pci/iov.c in 6.1.192 and 6.12.118): the PCI
 * core's rescan lock (pci_lock_rescan_remove()) and the PF's device lock,
 * around the driver's sriov_configure(). The rescan lock is what keeps a
 * bus rescan, a removal of the PF and a hot-plug event from adding or
 * removing the same VFs at once (a VF added twice, or removed twice with
 * virtfn_remove_bus() on a freed bus). They are taken in the order of the
 * PCI core's removal paths, not in sriov_numvfs_store()'s, which deadlocks
 * against them (gpuctl_sriov_configure()). No device lock is waited for
 * under gpuctl_lock, and the VFs' bus events, which take gpuctl_lock, come
 * from inside the change. The PF stays on gpuctl_sriov_changes meanwhile.
 *
 * Nothing here waits on a VM through a device lock: the PF's is tried for
 * a bounded time (a bind or an unbind of the PF holds it for as long as it
 * takes), and before VFs are disabled every VF, tracked or not, is looked
 * at under both locks: one that a VFIO user holds makes the request fail
 * with EBUSY, where the disable would wait for the VM to let go. The one
 * wait left is the rescan lock, which a hot-plug removal holds while it
 * unbinds what it removes, as the sysfs write waits for it too.
 */

#include <linux/delay.h>
#include <linux/device.h>
#include <linux/iommu.h>
#include <linux/list.h>
#include <linux/pci.h>

#include "alloc.h"
#include "inventory.h"
#include "sriov.h"

/* Under gpuctl_lock. */
static LIST_HEAD(gpuctl_sriov_changes);

/**
 * gpuctl_sriov_changing() - whether a dev-set is changing a PF's VFs
 * @pdev: the PF, or one of its VFs
 *
 * Context: gpuctl_lock held.
 * Return: the PF being changed, or NULL.
 */
struct pci_dev *gpuctl_sriov_changing(struct pci_dev *pdev)
{
	struct pci_dev *pf = pci_physfn(pdev);
	struct gpuctl_sriov_change *change;

	lockdep_assert_held(&gpuctl_lock);
	list_for_each_entry(change, &gpuctl_sriov_changes, node) {
		if (change->pf == pf)
			return pf;
	}
	return NULL;
}

/**
 * gpuctl_sriov_busy_vf() - a VF of a PF that gpuctl sees allocated or open
 * @pf: the PF
 *
 * Only VFs gpuctl tracks count; gpuctl_sriov_configure() looks at the
 * others under the PCI core's locks.
 *
 * Context: gpuctl_lock held.
 * Return: the first such VF, or NULL.
 */
const struct gpuctl_dev *gpuctl_sriov_busy_vf(struct pci_dev *pf)
{
	const struct gpuctl_dev *dev;
	unsigned long key;

	for (key = 0; (dev = gpuctl_inventory_next(&key)); key++) {
		if (!dev->pdev->is_virtfn || pci_physfn(dev->pdev) != pf)
			continue;
		if (dev->alloc || dev->holder.open)
			return dev;
	}
	return NULL;
}

/*
 * How long dev-set tries for the PF's device lock, in tries 10 ms apart. A
 * sysfs read of sriov_numvfs holds it for a moment; an unbind of the PF
 * that waits for a VM holds it for as long as the VM runs.
 */
#define GPUCTL_SRIOV_LOCK_TRIES 20

/*
 * Whether a VFIO user holds @vf: it is on a driver that leaves DMA to its
 * user (vfio-pci and its variants) and its IOMMU group's DMA ownership is
 * claimed, which VFIO does while a user has the group (a host DMA driver
 * would claim it too, hence the driver's flag). The VF's device lock keeps
 * its driver bound while it is looked at; it is only tried, since an
 * unbind that waits for a VM holds it.
 *
 * Context: @vf referenced; the PF's device lock and the rescan lock held
 * (dev-set), or gpuctl_lock (gpuctl_sriov_vf_in_use()).
 * Return: 0, or -EBUSY with @res saying why.
 */
static int gpuctl_sriov_vf_busy(struct pci_dev *vf,
				struct gpuctl_sriov_result *res)
{
	struct iommu_group *grp;
	struct pci_driver *drv;
	bool open = false;

	if (!device_trylock(&vf->dev)) {
		res->outcome = GPUCTL_SRIOV_VF_LOCKED;
		strscpy(res->vf, pci_name(vf), sizeof(res->vf));
		return -EBUSY;
	}
	drv = vf->dev.driver ? to_pci_driver(vf->dev.driver) : NULL;
	if (drv && drv->driver_managed_dma) {
		grp = iommu_group_get(&vf->dev);
		open = grp && iommu_group_dma_owner_claimed(grp);
		iommu_group_put(grp);
	}
	if (open) {
		res->outcome = GPUCTL_SRIOV_VF_OPEN;
		strscpy(res->vf, pci_name(vf), sizeof(res->vf));
		strscpy(res->driver, drv->name, sizeof(res->driver));
	}
	device_unlock(&vf->dev);
	return open ? -EBUSY : 0;
}

/**
 * gpuctl_sriov_result_why() - a VF outcome as a sentence
 * @pf: the PF
 * @res: GPUCTL_SRIOV_VF_OPEN or GPUCTL_SRIOV_VF_LOCKED, from
 *	gpuctl_sriov_vf_busy()
 * @why: out: the sentence
 * @len: the size of @why
 *
 * Context: any.
 */
void gpuctl_sriov_result_why(struct pci_dev *pf,
			     const struct gpuctl_sriov_result *res,
			     char *why, size_t len)
{
	if (res->outcome == GPUCTL_SRIOV_VF_OPEN)
		snprintf(why, len, "VF %s of %s is open by a VFIO user through %.24s",
			 res->vf, pci_name(pf), res->driver);
	else
		snprintf(why, len, "VF %s of %s is busy: its driver is being changed",
			 res->vf, pci_name(pf));
}

/*
 * Every VF of @pf, tracked by gpuctl or not, before they are disabled: the
 * disable would unbind each, and unbinding a VFIO driver waits until its
 * user lets go. A VM that opens a VF after this look and before the
 * driver's sriov_configure() removes it is still waited for, as by the
 * sysfs write.
 *
 * Context: the PF's device lock and the rescan lock held.
 */
static int gpuctl_sriov_vfs_busy(struct pci_dev *pf,
				 struct gpuctl_sriov_result *res)
{
	struct pci_dev *pdev = NULL;
	int ret = 0;

	/* VFs may sit on buses after the PF's: every device is looked at. */
	for_each_pci_dev(pdev) {
		if (!pdev->is_virtfn || pci_physfn(pdev) != pf)
			continue;
		ret = gpuctl_sriov_vf_busy(pdev, res);
		if (ret) {
			pci_dev_put(pdev);
			break;
		}
	}
	return ret;
}

/* The PF's device lock, tried for a bounded time. */
static bool gpuctl_sriov_lock_pf(struct pci_dev *pf)
{
	int i;

	for (i = 0; i < GPUCTL_SRIOV_LOCK_TRIES; i++) {
		if (device_trylock(&pf->dev))
			return true;
		usleep_range(10000, 11000);
	}
	return false;
}

/**
 * gpuctl_sriov_configure() - change a PF's number of VFs
 * @pf: the PF, referenced
 * @want: the number of VFs it is to have
 * @res: out: what the change found, for the request's answer
 *
 * The change itself, as sriov_numvfs_store() makes it: a PF with VFs goes
 * to 0 before it takes another number. A driver that enables fewer VFs
 * than asked has them disabled again, so that the request either sets the
 * number or changes nothing.
 *
 * The locks are sriov_numvfs_store()'s, in the order of the PCI core's
 * removal paths: the rescan lock first, then the PF's device lock, tried.
 * sriov_numvfs_store() takes the device lock first and then waits for the
 * rescan lock, while a removal of the PF (its sysfs "remove", hot-plug)
 * holds the rescan lock and waits for the device lock to unbind the PF:
 * the two wait for each other for good (stress_sriov's PF removal showed
 * it with that order). Taken this way, a removal makes dev-set wait until
 * it is done and then find the PF gone; a sysfs write that holds the
 * device lock makes it give up after GPUCTL_SRIOV_LOCK_TRIES.
 *
 * Context: takes the rescan lock, then the PF's device lock;
 * gpuctl_lock not held.
 */
int gpuctl_sriov_configure(struct pci_dev *pf, u16 want,
			   struct gpuctl_sriov_result *res)
{
	const struct pci_driver *drv = NULL;
	int ret = 0;

	pci_lock_rescan_remove();
	if (!device_is_registered(&pf->dev)) {
		res->outcome = GPUCTL_SRIOV_PF_GONE;
		pci_unlock_rescan_remove();
		return -ENODEV;
	}
	if (!gpuctl_sriov_lock_pf(pf)) {
		res->outcome = GPUCTL_SRIOV_PF_LOCKED;
		pci_unlock_rescan_remove();
		return -EBUSY;
	}
	res->had = pci_num_vf(pf);
	if (pf->dev.driver) {
		drv = to_pci_driver(pf->dev.driver);
		strscpy(res->driver, drv->name, sizeof(res->driver));
	}

	if (want == res->had) {
		res->outcome = GPUCTL_SRIOV_DONE;
	} else if (!drv) {
		res->outcome = GPUCTL_SRIOV_NO_DRIVER;
		ret = -ENOENT;
	} else if (!drv->sriov_configure) {
		res->outcome = GPUCTL_SRIOV_NO_CONFIGURE;
		ret = -EOPNOTSUPP;
	} else if (want && res->had) {
		res->outcome = GPUCTL_SRIOV_HAS_VFS;
		ret = -EBUSY;
	} else {
		ret = want ? 0 : gpuctl_sriov_vfs_busy(pf, res);
		if (!ret) {
			ret = drv->sriov_configure(pf, want);
			res->enabled = ret;
		}
		if (res->outcome != GPUCTL_SRIOV_DONE) {
			/* a VF in the way: nothing was changed */
		} else if (ret < 0) {
			res->outcome = GPUCTL_SRIOV_REFUSED;
		} else if (want && pci_num_vf(pf) != want) {
			res->enabled = pci_num_vf(pf);
			drv->sriov_configure(pf, 0);
			res->outcome = GPUCTL_SRIOV_SHORT;
			ret = -EIO;
		} else {
			ret = 0;
		}
	}
	device_unlock(&pf->dev);
	pci_unlock_rescan_remove();
	return ret;
}

/**
 * gpuctl_sriov_vf_in_use() - whether taking a PF from its driver would
 *	take a VF from its user
 * @pf: the device; one that is no PF, or has no VFs, never is
 * @why: out: which VF, and why, when in use
 * @len: the size of @why
 *
 * Unbinding an SR-IOV PF destroys its VFs: its driver disables SR-IOV on
 * remove, as vfio-pci does. So every path that unbinds a PF (rule-del of
 * its rule, a rule with take, the worker) asks first. A VF gpuctl tracks
 * is in use while allocated or open; one it does not track while a VFIO
 * user holds it (gpuctl_sriov_vf_busy()).
 *
 * Context: gpuctl_lock held. Each untracked VF's device lock is only
 * tried: that cannot make gpuctl_lock wait for it.
 * Return: true when a VF is in use, with @why naming it.
 */
bool gpuctl_sriov_vf_in_use(struct pci_dev *pf, char *why, size_t len)
{
	struct gpuctl_sriov_result res = {};
	const struct gpuctl_dev *dev;
	struct pci_dev *pdev = NULL;

	lockdep_assert_held(&gpuctl_lock);

	if (!pf->is_physfn || !pci_num_vf(pf))
		return false;
	for_each_pci_dev(pdev) {
		if (!pdev->is_virtfn || pci_physfn(pdev) != pf)
			continue;
		dev = gpuctl_inventory_find_pdev(pdev);
		if (dev && dev->alloc) {
			snprintf(why, len, "VF %s of %s is allocated to %u",
				 pci_name(pdev), pci_name(pf),
				 dev->alloc->info.id);
			break;
		}
		if (dev && dev->holder.open) {
			snprintf(why, len, "VF %s of %s is open by a VFIO user",
				 pci_name(pdev), pci_name(pf));
			break;
		}
		if (gpuctl_sriov_vf_busy(pdev, &res)) {
			gpuctl_sriov_result_why(pf, &res, why, len);
			break;
		}
	}
	if (!pdev)
		return false;
	pci_dev_put(pdev);
	return true;
}

/**
 * gpuctl_sriov_change_begin() - a PF's VFs may go: allocate none of them
 * @change: the change, on the caller's stack until gpuctl_sriov_change_end()
 * @pf: the PF, referenced until then
 *
 * gpuctl_alloc_unfit() refuses the PF and its VFs meanwhile, so that no
 * allocation takes a VF that is about to go.
 *
 * Context: gpuctl_lock held.
 */
void gpuctl_sriov_change_begin(struct gpuctl_sriov_change *change,
			       struct pci_dev *pf)
{
	lockdep_assert_held(&gpuctl_lock);
	change->pf = pci_dev_get(pf);
	list_add(&change->node, &gpuctl_sriov_changes);
}

/**
 * gpuctl_sriov_change_end() - the change that began is over
 * @change: from gpuctl_sriov_change_begin()
 *
 * Context: gpuctl_lock held.
 */
void gpuctl_sriov_change_end(struct gpuctl_sriov_change *change)
{
	lockdep_assert_held(&gpuctl_lock);
	list_del(&change->node);
	pci_dev_put(change->pf);
}
