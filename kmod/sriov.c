// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * dev-set: a tracked SR-IOV PF's number of VFs. The PF's driver enables
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
#include <net/genetlink.h>
#include <uapi/linux/gpuctl.h>

#include "alloc.h"
#include "compat.h"
#include "inventory.h"
#include "netlink.h"
#include "netlink-gen.h"
#include "sriov.h"
#include "vfio-track.h"

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

/* A VF of @pf that gpuctl sees allocated or open, if any. */
static const struct gpuctl_dev *gpuctl_sriov_busy_vf(struct pci_dev *pf)
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
 * "VF 0000:11:00.1 of 0000:11:00.0 is open by a VFIO user through ...",
 * cut to what an extack message holds (NETLINK_MAX_FMTMSG_LEN).
 */
#define GPUCTL_SRIOV_WHY_LEN 80

/* What the change under the device lock found; told under gpuctl_lock. */
enum gpuctl_sriov_outcome {
	GPUCTL_SRIOV_DONE,
	GPUCTL_SRIOV_PF_GONE,
	GPUCTL_SRIOV_PF_LOCKED,
	GPUCTL_SRIOV_NO_DRIVER,
	GPUCTL_SRIOV_NO_CONFIGURE,
	GPUCTL_SRIOV_HAS_VFS,
	GPUCTL_SRIOV_VF_LOCKED,
	GPUCTL_SRIOV_VF_OPEN,
	GPUCTL_SRIOV_REFUSED,
	GPUCTL_SRIOV_SHORT,
};

/**
 * struct gpuctl_sriov_result - what the change found
 * @outcome: how it ended
 * @driver: the PF's driver, or the VFIO driver of the open VF
 * @vf: the VF that stood in the way, for the VF outcomes
 * @had: the PF's VF count before
 * @enabled: what the driver returned
 */
struct gpuctl_sriov_result {
	enum gpuctl_sriov_outcome outcome;
	char driver[GPUCTL_DRIVER_NAME_LEN];
	char vf[16];
	u16 had;
	int enabled;
};

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

/* The VF outcomes of gpuctl_sriov_vf_busy() as a sentence. */
static void gpuctl_sriov_result_why(struct pci_dev *pf,
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

/*
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
static int gpuctl_sriov_configure(struct pci_dev *pf, u16 want,
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

/*
 * The VFs' own bus events come before the PF's count is updated
 * (sriov_enable() sets it after adding them), so the PF is announced
 * again once the change is done.
 */
static void gpuctl_sriov_changed(struct pci_dev *pf)
{
	struct gpuctl_dev *dev = gpuctl_inventory_find_pdev(pf);

	if (!dev)
		return;
	gpuctl_netlink_notify_dev(dev, GPUCTL_CMD_DEV_CHANGE_NTF, 0);
	gpuctl_inventory_changed();
}

/*
 * The switch a VFIO driver that enables VFs only when told to wants, as
 * its sriov_configure() returns -ENOENT without it (vfio_pci.c,
 * vfio_pci_sriov_configure(), 6.1 and 6.12; vfio-driver.c).
 */
static const char *gpuctl_sriov_opt_in(const char *driver)
{
	if (!strcmp(driver, "vfio-pci"))
		return "vfio_pci.enable_sriov=1";
	if (!strcmp(driver, GPUCTL_VFIO_DRIVER_NAME))
		return "gpuctl.enable_sriov=1";
	return NULL;
}

static void gpuctl_sriov_tell(struct genl_info *info, struct pci_dev *pf,
			      u16 want, const struct gpuctl_sriov_result *res)
{
	struct nlattr *attr = info->attrs[GPUCTL_A_DEV_SRIOV_NUMVFS];
	const char *name = pci_name(pf);
	char why[GPUCTL_SRIOV_WHY_LEN];

	switch (res->outcome) {
	case GPUCTL_SRIOV_DONE:
		break;
	case GPUCTL_SRIOV_PF_GONE:
		GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
				       "%s was removed", name);
		break;
	case GPUCTL_SRIOV_PF_LOCKED:
		GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
				       "%s is busy: its driver is being changed",
				       name);
		break;
	case GPUCTL_SRIOV_VF_LOCKED:
	case GPUCTL_SRIOV_VF_OPEN:
		gpuctl_sriov_result_why(pf, res, why, sizeof(why));
		GPUCTL_SET_ERR_MSG_FMT(info->extack, attr, "%s", why);
		break;
	case GPUCTL_SRIOV_NO_DRIVER:
		GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
				       "%s has no driver to enable its VFs",
				       name);
		break;
	case GPUCTL_SRIOV_NO_CONFIGURE:
		GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
				       "driver %s of %s cannot set its VFs",
				       res->driver, name);
		break;
	case GPUCTL_SRIOV_HAS_VFS:
		GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
				       "%s has %u VFs: set 0 before %u", name,
				       res->had, want);
		break;
	case GPUCTL_SRIOV_REFUSED:
		if (res->enabled == -ENOENT && gpuctl_sriov_opt_in(res->driver)) {
			GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
					       "%.16s needs %s to enable VFs on %s",
					       res->driver,
					       gpuctl_sriov_opt_in(res->driver),
					       name);
			break;
		}
		GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
				       "%s refused %u VFs on %s: error %d",
				       res->driver, want, name, res->enabled);
		break;
	case GPUCTL_SRIOV_SHORT:
		GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
				       "%s enabled %d of %u VFs on %s: disabled",
				       res->driver, res->enabled, want, name);
		break;
	}
}

/*
 * The checks before the change: a PF, and a count it supports. Then
 * (gpuctl_sriov_busy()) allocations and opens, which count only on VFs
 * gpuctl tracks: an untracked VF in use makes disabling wait for its user,
 * as a write to sriov_numvfs would.
 */
static int gpuctl_sriov_check(struct genl_info *info, struct pci_dev *pf,
			      u16 want)
{
	struct nlattr *attr = info->attrs[GPUCTL_A_DEV_SRIOV_NUMVFS];
	const char *name = pci_name(pf);
	int total;

	if (!pf->is_physfn) {
		GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
				       "%s is not an SR-IOV PF", name);
		return -EOPNOTSUPP;
	}
	total = pci_sriov_get_totalvfs(pf);
	if (want > total) {
		GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
				       "%s supports %d VFs, not %u", name,
				       total, want);
		return -ERANGE;
	}
	return 0;
}

/* Whether anything gpuctl sees stands in the way of a change. */
static int gpuctl_sriov_busy(struct genl_info *info, struct pci_dev *pf)
{
	struct nlattr *attr = info->attrs[GPUCTL_A_DEV_SRIOV_NUMVFS];
	const char *name = pci_name(pf);
	const struct gpuctl_dev *vf;

	if (gpuctl_sriov_changing(pf)) {
		GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
				       "%s is changing its VFs already", name);
		return -EBUSY;
	}
	vf = gpuctl_sriov_busy_vf(pf);
	if (vf && vf->alloc) {
		GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
				       "VF %s of %s is allocated to %u",
				       pci_name(vf->pdev), name,
				       vf->alloc->info.id);
		return -EBUSY;
	}
	if (vf) {
		GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
				       "VF %s of %s is open", pci_name(vf->pdev),
				       name);
		return -EBUSY;
	}
	return 0;
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

/**
 * gpuctl_nl_dev_set_doit() - set a tracked PF's number of VFs
 * @skb: the request
 * @info: the request; user_ptr[0] holds the device pre_doit found
 *
 * Context: gpuctl_lock held by pre_doit; dropped while the PF's driver
 * changes its VFs, and taken again.
 * Return: 0 or a negative errno.
 */
int gpuctl_nl_dev_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct gpuctl_dev *dev = info->user_ptr[0];
	struct gpuctl_sriov_result res = {};
	struct gpuctl_sriov_change change;
	u16 want;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, GPUCTL_A_DEV_SRIOV_NUMVFS))
		return -EINVAL;
	want = nla_get_u16(info->attrs[GPUCTL_A_DEV_SRIOV_NUMVFS]);

	ret = gpuctl_sriov_check(info, dev->pdev, want);
	if (ret)
		return ret;
	/*
	 * The count it has already: nothing to change, nothing to refuse
	 * (gpuctl apply's second run). A sysfs write racing this unlocked
	 * read is ordered after it.
	 */
	if (want == pci_num_vf(dev->pdev))
		return 0;
	ret = gpuctl_sriov_busy(info, dev->pdev);
	if (ret)
		return ret;

	/* @dev may go while the lock is dropped; the PF may not. */
	gpuctl_sriov_change_begin(&change, dev->pdev);
	mutex_unlock(&gpuctl_lock);

	ret = gpuctl_sriov_configure(change.pf, want, &res);

	mutex_lock(&gpuctl_lock);
	gpuctl_sriov_tell(info, change.pf, want, &res);
	if (!ret && want != res.had)
		gpuctl_sriov_changed(change.pf);
	gpuctl_sriov_change_end(&change);
	return ret;
}
