// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * The device table: every unit (a GPU, or any other function a rule names:
 * gpuctl_inventory_is_unit()) and every other member of a unit's IOMMU
 * group, kept current by a PCI bus notifier and, since what rules name
 * changes with them, by a rescan after each new rule and a prune after
 * each deleted one.
 *
 * Locking: gpuctl_lock protects the device and group tables, every field
 * of struct gpuctl_dev and struct gpuctl_group, and the generation counter.
 * The driver core calls the notifier with the device lock held for the
 * (UN)BIND/(UN)BOUND events, so gpuctl_lock nests inside device_lock and
 * gpuctl never takes a device lock under it. vfio calls gpuctl with its
 * device set lock held (vfio-track.c), so that one nests outside
 * gpuctl_lock too. IOMMU group mutexes nest inside gpuctl_lock
 * (gpuctl_group_collect()).
 *
 * Lifetimes: a tracked device holds a pci_dev reference and its group an
 * iommu_group reference, both dropped when the device or group leaves the
 * table.
 *
 * Hooks: what the table tells the rest of the module, by event (every
 * change is also announced, gpuctl_netlink_notify_dev()):
 *
 * - a device was added (ADD_DEVICE, a scan): gpuctl_reserve_refresh();
 *   then, for ADD_DEVICE, unlocked, gpuctl_reserve_claim() of the device
 * - the load-time scan is done: gpuctl_reserve_claim() of every device
 * - a device's driver changed ((UN)BOUND_DRIVER, DRIVER_NOT_BOUND):
 *   gpuctl_reserve_driver_changed(), gpuctl_vfio_watch_driver_changed()
 * - a device leaves the table but stays on the bus (its group lost its last
 *   unit, or a rule that named it went): gpuctl_reserve_dev_untracked()
 * - a device was deleted from the bus (DEL_DEVICE):
 *   gpuctl_reserve_dev_deleted(), then gpuctl_reserve_refresh()
 * - an entry is destroyed, for whatever reason: gpuctl_alloc_dev_gone()
 *
 * The hooks of one subsystem only are named after the event;
 * gpuctl_reserve_refresh() and gpuctl_reserve_claim() are named after what
 * they do, since rule changes (netlink-rule.c) and the worker call them too.
 */

#include <linux/device.h>
#include <linux/notifier.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include <uapi/linux/gpuctl.h>

#include "alloc.h"
#include "compat.h"
#include "inventory.h"
#include "iommu.h"
#include "netlink.h"
#include "reserve.h"
#include "rule.h"
#include "vfio-track.h"

/* Protects the device and group tables; see the top of this file. */
DEFINE_MUTEX(gpuctl_lock);

/* Device key -> struct gpuctl_dev, under gpuctl_lock. */
static DEFINE_XARRAY(gpuctl_devs);

/* Bumped on every change that a dump could see; never 0 (netlink's "unset"). */
static unsigned int gpuctl_generation = 1;

static unsigned long gpuctl_pdev_key(const struct pci_dev *pdev)
{
	return gpuctl_inventory_key(pci_domain_nr(pdev->bus),
				    pdev->bus->number, pdev->devfn);
}

/**
 * gpuctl_inventory_generation() - the current inventory generation
 *
 * Context: gpuctl_lock held.
 * Return: a number that changes whenever the inventory does.
 */
unsigned int gpuctl_inventory_generation(void)
{
	lockdep_assert_held(&gpuctl_lock);
	return gpuctl_generation;
}

/**
 * gpuctl_inventory_changed() - note a change that a dump could see
 *
 * Context: gpuctl_lock held.
 */
void gpuctl_inventory_changed(void)
{
	lockdep_assert_held(&gpuctl_lock);
	if (!++gpuctl_generation)
		gpuctl_generation = 1;
}

/**
 * gpuctl_inventory_find() - look up a tracked device
 * @key: from gpuctl_inventory_key()
 *
 * Context: gpuctl_lock held.
 * Return: the device, or NULL when it is not tracked.
 */
struct gpuctl_dev *gpuctl_inventory_find(unsigned long key)
{
	lockdep_assert_held(&gpuctl_lock);
	return xa_load(&gpuctl_devs, key);
}

/**
 * gpuctl_inventory_find_pdev() - the tracked device of a PCI function
 * @pdev: the function
 *
 * Context: gpuctl_lock held.
 * Return: the device, or NULL when @pdev is not tracked (another function
 * at its address may be, until its removal is seen).
 */
struct gpuctl_dev *gpuctl_inventory_find_pdev(const struct pci_dev *pdev)
{
	struct gpuctl_dev *dev = gpuctl_inventory_find(gpuctl_pdev_key(pdev));

	return dev && dev->pdev == pdev ? dev : NULL;
}

/**
 * gpuctl_inventory_next() - iterate over tracked devices in address order
 * @key: in: the first key to consider; out: the key of the returned device
 *
 * Context: gpuctl_lock held.
 * Return: the first device with a key of at least *@key, or NULL.
 */
struct gpuctl_dev *gpuctl_inventory_next(unsigned long *key)
{
	lockdep_assert_held(&gpuctl_lock);
	return xa_find(&gpuctl_devs, key, ULONG_MAX, XA_PRESENT);
}

/**
 * gpuctl_inventory_is_unit() - whether a function is handed to VMs whole
 * @pdev: the function
 *
 * GPUs are units; so is any other function that a rule selects by itself
 * (gpuctl_rule_selects()): a NIC or NVMe function or VF that an operator
 * named. A unit has the role "gpu": it is reserved by its own rule,
 * counted by limits and picked by allocations, and the other members of
 * its IOMMU group follow it.
 *
 * Context: gpuctl_lock held (the rule table).
 * Return: true when it is a unit.
 */
bool gpuctl_inventory_is_unit(const struct pci_dev *pdev)
{
	lockdep_assert_held(&gpuctl_lock);

	return gpuctl_inventory_is_gpu(pdev) || gpuctl_rule_for_pdev(pdev);
}

/*
 * @drv is the bound driver, NULL when none. The caller guarantees it stays
 * bound while we copy its name: the device lock is held (bus events), or
 * gpuctl_lock is and the driver's UNBOUND event, which needs gpuctl_lock,
 * has not run yet (load-time scan).
 */
static bool gpuctl_dev_set_driver(struct gpuctl_dev *dev,
				  struct device_driver *drv)
{
	const char *name = drv ? drv->name : "";
	bool managed = drv && to_pci_driver(drv)->driver_managed_dma;

	if (!strcmp(dev->driver, name) && dev->dma_managed == managed)
		return false;

	strscpy(dev->driver, name, sizeof(dev->driver));
	dev->dma_managed = managed;
	return true;
}

static struct gpuctl_dev *gpuctl_dev_create(struct pci_dev *pdev,
					    struct gpuctl_group *group)
{
	struct gpuctl_dev *dev;
	int ret;

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return ERR_PTR(-ENOMEM);

	dev->key = gpuctl_pdev_key(pdev);
	ret = xa_insert(&gpuctl_devs, dev->key, dev, GFP_KERNEL);
	if (ret) {
		kfree(dev);
		pr_warn("%s not tracked: %d\n", pci_name(pdev), ret);
		return ERR_PTR(ret);
	}

	dev->pdev = pci_dev_get(pdev);
	/* Free until gpuctl_reserve_refresh() finds a rule for it. */
	dev->res.state = GPUCTL_DEV_STATE_FREE;
	gpuctl_dev_set_driver(dev, READ_ONCE(pdev->dev.driver));
	if (group)
		gpuctl_group_add_member(group, dev);
	pr_debug("dev %s created\n", pci_name(pdev));
	return dev;
}

static void gpuctl_dev_destroy(struct gpuctl_dev *dev)
{
	pr_debug("dev %s destroyed\n", pci_name(dev->pdev));
	gpuctl_alloc_dev_gone(dev);
	if (dev->group)
		list_del(&dev->group_node);
	xa_erase(&gpuctl_devs, dev->key);
	pci_dev_put(dev->pdev);
	kfree(dev);
}

/*
 * After the members of @group changed: give every member its role and
 * announce what is new (role still 0) or has a new role.
 */
static void gpuctl_group_refresh(struct gpuctl_group *group)
{
	struct gpuctl_dev *m;
	u32 role;
	u8 cmd;

	list_for_each_entry(m, &group->members, group_node) {
		role = gpuctl_group_role(group, m);
		if (role == m->role)
			continue;

		cmd = m->role ? GPUCTL_CMD_DEV_CHANGE_NTF : GPUCTL_CMD_DEV_ADD_NTF;
		m->role = role;
		gpuctl_netlink_notify_dev(m, cmd, 0);
	}
}

static void gpuctl_track_group(struct pci_dev *gpu, struct iommu_group *grp)
{
	struct gpuctl_group *group;
	struct pci_dev **pdevs;
	int i, n;

	group = gpuctl_group_find(iommu_group_id(grp));
	if (!group) {
		group = gpuctl_group_create(grp);
		if (IS_ERR(group))
			return;
	}

	/* The unit first, so that it is tracked even if the walk fails. */
	gpuctl_dev_create(gpu, group);

	n = gpuctl_group_collect(grp, &pdevs);
	for (i = 0; i < n; i++) {
		if (!gpuctl_inventory_find(gpuctl_pdev_key(pdevs[i])))
			gpuctl_dev_create(pdevs[i], group);
		pci_dev_put(pdevs[i]);
	}
	if (n >= 0)
		kfree(pdevs);

	if (list_empty(&group->members)) {
		gpuctl_group_destroy(group);
		return;
	}
	gpuctl_group_refresh(group);
	gpuctl_inventory_changed();
}

static void gpuctl_inventory_del(struct pci_dev *pdev);

static void gpuctl_inventory_add(struct pci_dev *pdev)
{
	struct gpuctl_group *group;
	struct iommu_group *grp;
	struct gpuctl_dev *dev;

	lockdep_assert_held(&gpuctl_lock);

	/* The load-time scan and the notifier can both report a device. */
	dev = gpuctl_inventory_find(gpuctl_pdev_key(pdev));
	if (dev) {
		if (dev->pdev == pdev)
			return;
		/* A removal we missed left a stale entry at this address. */
		gpuctl_inventory_del(dev->pdev);
	}

	grp = iommu_group_get(&pdev->dev);

	if (gpuctl_inventory_is_unit(pdev)) {
		if (grp) {
			gpuctl_track_group(pdev, grp);
		} else {
			dev = gpuctl_dev_create(pdev, NULL);
			if (!IS_ERR(dev)) {
				dev->role = GPUCTL_DEV_ROLE_GPU;
				gpuctl_netlink_notify_dev(dev,
							  GPUCTL_CMD_DEV_ADD_NTF, 0);
				gpuctl_inventory_changed();
			}
		}
	} else if (grp) {
		/* A new member of a GPU's group, e.g. a hot-added function. */
		group = gpuctl_group_find(iommu_group_id(grp));
		if (group && !IS_ERR(gpuctl_dev_create(pdev, group))) {
			gpuctl_group_refresh(group);
			gpuctl_inventory_changed();
		}
	}

	iommu_group_put(grp);
}

/*
 * Stop tracking a device that stays on the bus (maybe reserved: it becomes
 * an orphan, which the worker releases once no rule keeps it).
 */
static void gpuctl_dev_untrack(struct gpuctl_dev *dev)
{
	gpuctl_netlink_notify_dev(dev, GPUCTL_CMD_DEV_DEL_NTF, 0);
	gpuctl_reserve_dev_untracked(dev);
	gpuctl_dev_destroy(dev);
}

/*
 * After a member left @group or the rules changed: the group goes with its
 * last unit, or its members get their roles again.
 */
static void gpuctl_group_settle(struct gpuctl_group *group)
{
	struct gpuctl_dev *m, *tmp;

	if (gpuctl_group_has_gpu(group)) {
		gpuctl_group_refresh(group);
		return;
	}
	list_for_each_entry_safe(m, tmp, &group->members, group_node)
		gpuctl_dev_untrack(m);
	gpuctl_group_destroy(group);
}

static void gpuctl_inventory_del(struct pci_dev *pdev)
{
	struct gpuctl_group *group;
	struct gpuctl_dev *dev;

	lockdep_assert_held(&gpuctl_lock);

	dev = gpuctl_inventory_find_pdev(pdev);
	if (!dev)
		return;

	group = dev->group;
	gpuctl_netlink_notify_dev(dev, GPUCTL_CMD_DEV_DEL_NTF, 0);
	gpuctl_dev_destroy(dev);

	if (group)
		gpuctl_group_settle(group);
	gpuctl_inventory_changed();
}

/**
 * gpuctl_inventory_prune() - after the rules changed: drop what none names
 *
 * After a rule left, a function that is no unit now leaves the table with
 * its group, unless another unit keeps the group. The roles of the groups
 * that stay are computed again, after a new rule too (a foreign NIC it
 * names is a unit now). A reserved device that leaves becomes an orphan,
 * which the worker releases once gpuctl_reserve_refresh() finds its rule
 * gone. A new rule can make units the table does not hold, which only
 * gpuctl_inventory_rescan() finds.
 *
 * Context: gpuctl_lock held, the rule table already changed.
 */
void gpuctl_inventory_prune(void)
{
	struct gpuctl_dev *dev;
	unsigned long key;

	lockdep_assert_held(&gpuctl_lock);

	/* Settling a group can destroy later entries: look each one up. */
	for (key = 0; (dev = gpuctl_inventory_next(&key)); key++) {
		if (dev->group) {
			/* Its first member settles it, once. */
			if (list_first_entry(&dev->group->members,
					     struct gpuctl_dev,
					     group_node) != dev)
				continue;
			gpuctl_group_settle(dev->group);
		} else if (!gpuctl_inventory_is_unit(dev->pdev)) {
			gpuctl_dev_untrack(dev);
		}
	}
	/* Roles may have changed even where nothing left. */
	gpuctl_inventory_changed();
}

static void gpuctl_inventory_set_driver(struct pci_dev *pdev,
					struct device_driver *drv)
{
	struct gpuctl_dev *dev;

	lockdep_assert_held(&gpuctl_lock);

	dev = gpuctl_inventory_find_pdev(pdev);
	if (!dev || !gpuctl_dev_set_driver(dev, drv))
		return;

	gpuctl_reserve_driver_changed(dev);
	gpuctl_netlink_notify_dev(dev, GPUCTL_CMD_DEV_CHANGE_NTF, 0);
	gpuctl_inventory_changed();
	/* A VM's device that left its VFIO driver is closed by now. */
	gpuctl_vfio_watch_driver_changed(dev);
}

/* A VF came or went: its PF's VF count changed. */
static void gpuctl_inventory_vf_changed(struct pci_dev *pdev)
{
	struct gpuctl_dev *pf;

	lockdep_assert_held(&gpuctl_lock);

	if (!pdev->is_virtfn)
		return;

	pf = gpuctl_inventory_find(gpuctl_pdev_key(pci_physfn(pdev)));
	if (!pf)
		return;

	gpuctl_netlink_notify_dev(pf, GPUCTL_CMD_DEV_CHANGE_NTF, 0);
	gpuctl_inventory_changed();
}

/*
 * Devices deleted while a scan runs (at load, or after a new rule).
 * device_del() sends DEL_DEVICE and REMOVED_DEVICE while the device is
 * still registered, so the scan can reach a device after both events
 * passed; tracked then, it would never be removed. Both events record it:
 * a scan that began between them still holds it from the bus list. Each
 * entry holds a reference, so that no new device can take its address
 * meanwhile. Under gpuctl_lock.
 */
struct gpuctl_scan_gone {
	struct list_head node;
	struct pci_dev *pdev;
};

static LIST_HEAD(gpuctl_scan_gone_list);
static unsigned int gpuctl_scanning;

static void gpuctl_scan_forget(struct pci_dev *pdev)
{
	struct gpuctl_scan_gone *gone;

	lockdep_assert_held(&gpuctl_lock);
	if (!gpuctl_scanning)
		return;

	/* Without memory, the device may stay listed until unload. */
	gone = kmalloc(sizeof(*gone), GFP_KERNEL);
	if (!gone)
		return;
	gone->pdev = pci_dev_get(pdev);
	list_add(&gone->node, &gpuctl_scan_gone_list);
}

static bool gpuctl_scan_gone(struct pci_dev *pdev)
{
	struct gpuctl_scan_gone *gone;

	lockdep_assert_held(&gpuctl_lock);
	list_for_each_entry(gone, &gpuctl_scan_gone_list, node) {
		if (gone->pdev == pdev)
			return true;
	}
	return false;
}

static void gpuctl_scan_done(void)
{
	struct gpuctl_scan_gone *gone, *tmp;

	lockdep_assert_held(&gpuctl_lock);
	/* An entry must outlive every scan that was running when it came. */
	if (--gpuctl_scanning)
		return;
	list_for_each_entry_safe(gone, tmp, &gpuctl_scan_gone_list, node) {
		list_del(&gone->node);
		pci_dev_put(gone->pdev);
		kfree(gone);
	}
}

/*
 * Runs in process context for every PCI device event, after the IOMMU
 * core's notifier (registered earlier at the same priority), so a new
 * device is already in its IOMMU group. The (UN)BOUND events come with the
 * device lock held, and DEL_DEVICE under memalloc_noio_save(), where
 * GFP_KERNEL means GFP_NOIO.
 */
static int gpuctl_inventory_notify(struct notifier_block *nb,
				   unsigned long action, void *data)
{
	struct device *d = data;
	struct pci_dev *pdev = to_pci_dev(d);

	switch (action) {
	case BUS_NOTIFY_ADD_DEVICE:
		mutex_lock(&gpuctl_lock);
		gpuctl_inventory_add(pdev);
		gpuctl_inventory_vf_changed(pdev);
		gpuctl_reserve_refresh();
		mutex_unlock(&gpuctl_lock);
		/*
		 * No driver can match the device before this event returns.
		 * Only this device: a VF's event comes under its PF's device
		 * lock, which claiming the PF would take again.
		 */
		gpuctl_reserve_claim(pdev);
		break;
	case BUS_NOTIFY_BOUND_DRIVER:
		mutex_lock(&gpuctl_lock);
		gpuctl_inventory_set_driver(pdev, d->driver);
		mutex_unlock(&gpuctl_lock);
		break;
	case BUS_NOTIFY_UNBOUND_DRIVER:
	case BUS_NOTIFY_DRIVER_NOT_BOUND:
		/* dev->driver may still be set for a failed probe. */
		mutex_lock(&gpuctl_lock);
		gpuctl_inventory_set_driver(pdev, NULL);
		mutex_unlock(&gpuctl_lock);
		break;
	case BUS_NOTIFY_DEL_DEVICE:
		mutex_lock(&gpuctl_lock);
		gpuctl_scan_forget(pdev);
		gpuctl_reserve_dev_deleted(pdev);
		gpuctl_inventory_del(pdev);
		gpuctl_inventory_vf_changed(pdev);
		/* A foreign member may have lost the GPU that reserved it. */
		gpuctl_reserve_refresh();
		mutex_unlock(&gpuctl_lock);
		break;
	case BUS_NOTIFY_REMOVED_DEVICE:
		/*
		 * Normally a no-op. It catches a device that a group walk
		 * re-added between its DEL_DEVICE and its removal from the
		 * IOMMU group. And a scan that began after DEL_DEVICE may
		 * hold the device from the bus list and add it after this
		 * event, out of its group by then: even after a rescan
		 * added the device's successor at that address, which the
		 * stale one would then replace. The scan skips it.
		 */
		mutex_lock(&gpuctl_lock);
		gpuctl_scan_forget(pdev);
		gpuctl_inventory_del(pdev);
		mutex_unlock(&gpuctl_lock);
		break;
	default:
		return NOTIFY_DONE;
	}
	return NOTIFY_OK;
}

static struct notifier_block gpuctl_inventory_nb = {
	.notifier_call = gpuctl_inventory_notify,
};

static int gpuctl_inventory_scan_one(struct device *d, void *data)
{
	struct pci_dev *pdev = to_pci_dev(d);
	unsigned int gen;

	mutex_lock(&gpuctl_lock);
	if (!gpuctl_scan_gone(pdev)) {
		gen = gpuctl_generation;
		gpuctl_inventory_add(pdev);
		/* Most functions are no unit and in no unit's group: skip the
		 * refresh for them.
		 */
		if (gen != gpuctl_generation)
			gpuctl_reserve_refresh();
	}
	mutex_unlock(&gpuctl_lock);
	return 0;
}

/*
 * A scan tracks every present device that is a unit or in a unit's group.
 * A device deleted from gpuctl_scan_begin() on is not added
 * (gpuctl_scan_forget()).
 */
static void gpuctl_scan_begin(void)
{
	mutex_lock(&gpuctl_lock);
	gpuctl_scanning++;
	mutex_unlock(&gpuctl_lock);
}

static void gpuctl_scan_end(void)
{
	mutex_lock(&gpuctl_lock);
	gpuctl_scan_done();
	mutex_unlock(&gpuctl_lock);
}

/**
 * gpuctl_inventory_rescan() - after a rule came: track what it names
 *
 * A new rule can make a function a unit that the table does not hold yet
 * (a VF or NIC named by address). Devices are added, and their groups
 * walked, as at load; reserve.c learns of them as of any new device, and
 * the caller kicks the worker and claims them.
 *
 * Context: no lock held (takes gpuctl_lock, and the IOMMU group mutexes
 * under it, per device).
 */
void gpuctl_inventory_rescan(void)
{
	gpuctl_scan_begin();
	bus_for_each_dev(&pci_bus_type, NULL, NULL, gpuctl_inventory_scan_one);
	gpuctl_scan_end();
}

/**
 * gpuctl_inventory_start() - follow PCI bus events and track present devices
 *
 * The notifier goes first so that no device can appear unseen between the
 * scan and the registration; a device both report is added once, and one
 * deleted meanwhile is not added (gpuctl_scan_forget()). Then every device
 * a rule reserves gets its driver_override, before the GPU drivers that
 * softdeps made wait for gpuctl load.
 *
 * Context: module init; takes gpuctl_lock; no device lock held.
 * Return: 0 or a negative errno.
 */
int gpuctl_inventory_start(void)
{
	int ret;

	gpuctl_scan_begin();
	ret = bus_register_notifier(&pci_bus_type, &gpuctl_inventory_nb);
	if (!ret)
		bus_for_each_dev(&pci_bus_type, NULL, NULL,
				 gpuctl_inventory_scan_one);
	gpuctl_scan_end();
	if (ret)
		return ret;

	gpuctl_reserve_claim(NULL);
	return 0;
}

/**
 * gpuctl_inventory_stop() - stop following PCI bus events
 *
 * Returns after any running notifier call has finished, so the table no
 * longer changes.
 *
 * Context: module exit.
 */
void gpuctl_inventory_stop(void)
{
	bus_unregister_notifier(&pci_bus_type, &gpuctl_inventory_nb);
}

/**
 * gpuctl_inventory_flush() - forget every device and group, silently
 *
 * Context: module init failure or exit, after gpuctl_inventory_stop() and
 * once no netlink handler can run; takes gpuctl_lock.
 */
void gpuctl_inventory_flush(void)
{
	struct gpuctl_group *group;
	struct gpuctl_dev *dev;
	unsigned long key;

	mutex_lock(&gpuctl_lock);
	xa_for_each(&gpuctl_devs, key, dev) {
		group = dev->group;
		gpuctl_dev_destroy(dev);
		if (group && list_empty(&group->members))
			gpuctl_group_destroy(group);
	}
	gpuctl_inventory_changed();
	mutex_unlock(&gpuctl_lock);
}
