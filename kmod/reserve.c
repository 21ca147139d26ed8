// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * Enforcing reservation rules: which devices each rule reserves, their
 * driver_override, and a worker that binds reserved devices to the rule's
 * VFIO driver, takes them from host drivers, puts them back when they
 * leave it, and gives released devices back to the host.
 *
 * A GPU is reserved by the oldest rule that matches it; the companions of
 * a reserved GPU follow it, and the foreign members of its IOMMU group do
 * when the rule has "force". Bridges never do.
 *
 * Locking: struct gpuctl_reservation, each device's res, is under
 * gpuctl_lock. The driver core calls made here (the override setters and
 * readers, device_attach(), device_release_driver()) take device locks and
 * fire bus events whose notifier takes gpuctl_lock, so they run with no
 * lock of gpuctl's held and never from a notifier event that holds a device
 * lock (drivers/base/dd.c, really_probe() and __device_release_driver(),
 * 6.1 and 6.12): from the worker, or from gpuctl_reserve_claim()
 * for the device of an ADD_DEVICE event (no driver core lock of its own is
 * held then; a VF's event holds only its PF's lock) or in contexts that
 * hold no device lock at all. While acted on unlocked, a device is pinned
 * with pci_dev_get() and looked up again afterwards, since it may have
 * left the table meanwhile.
 *
 * Unbinding a VFIO driver from a device a VM uses would wait until the VM
 * let go, and tear the device away from it; so the worker unbinds a
 * device from a VFIO driver only while it holds its group's DMA ownership
 * (gpuctl_reserve_fence()), which VFIO needs to let a user in.
 *
 * A reserved companion or forced member leaves the table, still on the
 * rule's driver with gpuctl's override, when its group's last GPU goes
 * while it stays (a sysfs remove of the GPU function alone). It becomes an
 * orphan: kept, referenced, until it is tracked again (its GPU came back:
 * its entry takes over), it is removed, or the rule that reserved it is
 * deleted, when the worker releases it to the host like any other device.
 */

#include <linux/kmod.h>
#include <linux/list.h>
#include <linux/pci.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <uapi/linux/gpuctl.h>

#include "compat.h"
#include "inventory.h"
#include "iommu.h"
#include "netlink.h"
#include "reserve.h"
#include "rule.h"
#include "sriov.h"

/* A hot-added device the PCI core does not let drivers match yet. */
#define GPUCTL_RESERVE_RETRY (HZ / 10)

/*
 * How long a device that left its driver waits before it is put back. A
 * hot-removed device is unbound (pci_stop_dev()) a moment before it is
 * deleted; binding it again in between would only be undone.
 */
#define GPUCTL_RESERVE_SETTLE (HZ / 20)

static struct workqueue_struct *gpuctl_reserve_wq;
static void gpuctl_reserve_work_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(gpuctl_reserve_work, gpuctl_reserve_work_fn);

/* Set under gpuctl_lock at unload: nothing queues the worker any more. */
static bool gpuctl_reserve_stopped;

/*
 * The owner gpuctl claims a group's DMA with while it unbinds a VFIO
 * driver, and the group it holds, under gpuctl_lock: its claim is not a
 * VFIO user's (gpuctl_reserve_vfio_busy()).
 */
static const char gpuctl_reserve_fence_owner[] = "gpuctl";
static struct iommu_group *gpuctl_reserve_fenced;

/*
 * The device the worker is acting on, unlocked, and whether DEL_DEVICE
 * came for it meanwhile (under gpuctl_lock). The IOMMU core warns when a
 * group loses its last device while its DMA is claimed
 * (drivers/iommu/iommu.c, __iommu_group_free_device(), 6.1 and 6.12): a
 * VF destroyed by an SR-IOV disable while gpuctl fenced it did. So no
 * fence is taken for a deleted device, and a fence held for one is given
 * back at its DEL_DEVICE, before the IOMMU core's REMOVED_DEVICE.
 */
static struct pci_dev *gpuctl_reserve_acting;
static bool gpuctl_reserve_acting_deleted;

/**
 * struct gpuctl_orphan - a device gpuctl reserved that left the table
 * @node: in gpuctl_orphans, under gpuctl_lock
 * @pdev: the device, referenced
 * @rule: the id of the rule that reserved it, 0 when it was being released
 * @target: the driver gpuctl gave it, in its driver_override
 * @release: its rule is gone; the worker releases it
 */
struct gpuctl_orphan {
	struct list_head node;
	struct pci_dev *pdev;
	u32 rule;
	char target[GPUCTL_DRIVER_NAME_LEN];
	bool release;
};

static LIST_HEAD(gpuctl_orphans);

/**
 * struct gpuctl_enforce - what the worker does to one device, unlocked
 * @pdev: the device, referenced
 * @key: its table key, to find it again
 * @target: the driver it belongs on, or, to release it, the one it was on
 * @why: out: why it could not be bound
 * @reserve: keep it on @target; otherwise release it
 * @claimed: it was on @target, so put it back from wherever it went
 * @take: unbind a host driver that has it
 * @in_use: out: @why names a VFIO user or an allocation
 */
struct gpuctl_enforce {
	struct pci_dev *pdev;
	unsigned long key;
	char target[GPUCTL_DRIVER_NAME_LEN];
	char why[GPUCTL_BLOCKED_LEN];
	bool reserve;
	bool claimed;
	bool take;
	bool in_use;
};

/* A rule's VF-only driver never reserves a PF, even one that is on it. */
static bool gpuctl_reserve_not_for(const struct pci_dev *pdev,
				   const char *target)
{
	return gpuctl_rule_driver_vf_only(target) && !pdev->is_virtfn;
}

/*
 * A device on another driver is held, unless the worker tried to move it
 * and a VFIO user or an allocation kept it there: that is blocked, and the
 * reason says who (Documentation/gpuctl.rst, "The fence").
 */
static void gpuctl_reserve_update_state(struct gpuctl_dev *dev)
{
	if (!dev->res.rule)
		dev->res.state = GPUCTL_DEV_STATE_FREE;
	else if (gpuctl_reserve_not_for(dev->pdev, dev->res.target))
		dev->res.state = GPUCTL_DEV_STATE_BLOCKED;
	else if (!strcmp(dev->driver, dev->res.target))
		dev->res.state = GPUCTL_DEV_STATE_RESERVED;
	else if (dev->driver[0] && !dev->res.blocked_in_use)
		dev->res.state = GPUCTL_DEV_STATE_HELD;
	else if (dev->res.blocked[0])
		dev->res.state = GPUCTL_DEV_STATE_BLOCKED;
	else
		dev->res.state = GPUCTL_DEV_STATE_RESERVED;
}

/**
 * gpuctl_reserve_kick() - have the worker look at pending devices
 *
 * Context: gpuctl_lock held.
 */
void gpuctl_reserve_kick(void)
{
	lockdep_assert_held(&gpuctl_lock);
	if (!gpuctl_reserve_stopped)
		mod_delayed_work(gpuctl_reserve_wq, &gpuctl_reserve_work, 0);
}

/* Like gpuctl_reserve_kick(), for a bus event: let the event settle. */
static void gpuctl_reserve_kick_later(void)
{
	lockdep_assert_held(&gpuctl_lock);
	if (!gpuctl_reserve_stopped)
		queue_delayed_work(gpuctl_reserve_wq, &gpuctl_reserve_work,
				   GPUCTL_RESERVE_SETTLE);
}

/**
 * gpuctl_reserve_pending() - whether the worker still has to act on a device
 * @dev: the device
 *
 * From a rule's change, or its driver's, until the worker recorded what it
 * did: rule-new and rule-del return before, and clients that want the
 * outcome wait for this to clear (the "pending" attribute).
 *
 * Context: gpuctl_lock held.
 * Return: true while the worker has work on @dev, or is at it.
 */
bool gpuctl_reserve_pending(const struct gpuctl_dev *dev)
{
	lockdep_assert_held(&gpuctl_lock);
	return (dev->res.pending && (dev->res.rule || dev->res.target[0])) ||
	       dev->res.needs_override || dev->res.enforcing;
}

/**
 * gpuctl_reserve_vfio_busy() - whether a VFIO user has a device open
 * @dev: the device
 *
 * VFIO claims DMA ownership of the whole IOMMU group while a user has it
 * open. A host DMA driver bound in the group also counts as an owner, and
 * then VFIO cannot have the group open, so the claim only means a VFIO user
 * when no member is bound to such a driver and gpuctl's own fence does not
 * hold it.
 *
 * Context: gpuctl_lock held; takes the IOMMU group's mutex.
 * Return: true when a VFIO user holds the device's group.
 */
bool gpuctl_reserve_vfio_busy(const struct gpuctl_dev *dev)
{
	lockdep_assert_held(&gpuctl_lock);

	return dev->group && dev->driver[0] && dev->dma_managed &&
	       dev->group->grp != gpuctl_reserve_fenced &&
	       !gpuctl_group_offender(dev->group) &&
	       iommu_group_dma_owner_claimed(dev->group->grp);
}

/* The rule that reserves a non-GPU member through a GPU of its group. */
static struct gpuctl_rule *gpuctl_reserve_rule_via_gpu(struct gpuctl_dev *dev)
{
	struct pci_dev *pdev = dev->pdev;
	struct gpuctl_dev *m;

	if (!dev->group || dev->role == GPUCTL_DEV_ROLE_BRIDGE)
		return NULL;

	list_for_each_entry(m, &dev->group->members, group_node) {
		if (!m->res.rule || !gpuctl_inventory_is_unit(m->pdev))
			continue;
		if (dev->role == GPUCTL_DEV_ROLE_COMPANION &&
		    m->pdev->bus == pdev->bus &&
		    PCI_SLOT(m->pdev->devfn) == PCI_SLOT(pdev->devfn))
			return m->res.rule;
		if (dev->role == GPUCTL_DEV_ROLE_FOREIGN && m->res.rule->force)
			return m->res.rule;
	}
	return NULL;
}

static void gpuctl_reserve_assign(struct gpuctl_dev *dev,
				  struct gpuctl_rule *rule)
{
	if (dev->res.rule == rule)
		return;

	dev->res.rule = rule;
	dev->res.blocked[0] = '\0';
	dev->res.blocked_in_use = false;
	if (rule) {
		strscpy(dev->res.target, rule->driver, sizeof(dev->res.target));
		dev->res.claimed = !strcmp(dev->driver, dev->res.target);
		dev->res.take = rule->take;
		dev->res.needs_override = true;
		dev->res.claim_told = false;
	} else {
		dev->res.claimed = false;
		dev->res.take = false;
		dev->res.needs_override = false;
	}
	dev->res.pending = true;
	gpuctl_reserve_update_state(dev);
	gpuctl_netlink_notify_dev(dev, GPUCTL_CMD_DEV_CHANGE_NTF, 0);
	gpuctl_inventory_changed();
}

static void gpuctl_reserve_orphan_free(struct gpuctl_orphan *o)
{
	list_del(&o->node);
	pci_dev_put(o->pdev);
	kfree(o);
}

/**
 * gpuctl_reserve_dev_untracked() - a device leaves the table, not the bus
 * @dev: the entry about to be destroyed while its device stays
 *
 * A device gpuctl reserved, or was releasing, becomes an orphan: it is
 * kept on its driver until the worker releases it or it is tracked again.
 *
 * Context: gpuctl_lock held; may be a DEL_DEVICE event (GFP_NOIO).
 */
void gpuctl_reserve_dev_untracked(struct gpuctl_dev *dev)
{
	struct gpuctl_orphan *o;

	lockdep_assert_held(&gpuctl_lock);

	if (!dev->res.target[0] || gpuctl_reserve_stopped)
		return;
	o = kzalloc(sizeof(*o), GFP_KERNEL);
	if (!o) {
		pci_warn(dev->pdev, "no memory to remember its reservation by rule %u\n",
			 dev->res.rule ? dev->res.rule->id : 0);
		return;
	}
	o->pdev = pci_dev_get(dev->pdev);
	o->rule = dev->res.rule ? dev->res.rule->id : 0;
	strscpy(o->target, dev->res.target, sizeof(o->target));
	list_add_tail(&o->node, &gpuctl_orphans);
	pci_dbg(dev->pdev, "orphaned on %s, rule %u\n", o->target, o->rule);
}

/**
 * gpuctl_reserve_dev_deleted() - a device left the bus: it is no orphan now
 * @pdev: the device
 *
 * Context: gpuctl_lock held.
 */
void gpuctl_reserve_dev_deleted(struct pci_dev *pdev)
{
	struct gpuctl_orphan *o, *tmp;

	lockdep_assert_held(&gpuctl_lock);

	list_for_each_entry_safe(o, tmp, &gpuctl_orphans, node)
		if (o->pdev == pdev)
			gpuctl_reserve_orphan_free(o);

	if (pdev != gpuctl_reserve_acting)
		return;
	gpuctl_reserve_acting_deleted = true;
	/* see gpuctl_reserve_acting: the unfence finds it given back */
	if (gpuctl_reserve_fenced) {
		iommu_group_release_dma_owner(gpuctl_reserve_fenced);
		gpuctl_reserve_fenced = NULL;
	}
}

/**
 * gpuctl_reserve_orphans_of() - walk the orphans a rule keeps
 * @rule: the rule's id
 * @fn: called with each orphan's device; a non-zero return ends the walk
 * @arg: passed to @fn
 *
 * An orphan whose rule went, and which waits for the worker's release, is
 * no longer the rule's.
 *
 * Context: gpuctl_lock held.
 * Return: 0, or what @fn returned.
 */
int gpuctl_reserve_orphans_of(u32 rule,
			      int (*fn)(struct pci_dev *pdev, void *arg),
			      void *arg)
{
	struct gpuctl_orphan *o;
	int ret;

	lockdep_assert_held(&gpuctl_lock);

	list_for_each_entry(o, &gpuctl_orphans, node) {
		if (o->rule != rule || o->release)
			continue;
		ret = fn(o->pdev, arg);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * gpuctl_reserve_adopt_orphan() - keep a device as an orphan of a rule
 * @pdev: the device, which the previous module kept as the rule's orphan
 * @rule: the rule's id
 * @target: the driver the previous module gave it in its driver_override
 *
 * A module reload carries orphans over this way (rule-new with "orphan").
 * A device in the table is skipped: it is no orphan, and its entry
 * follows the rules as they are. The orphan is released like any other:
 * its override is cleared only while it still names @target, and it is
 * unbound only from @target (gpuctl_reserve_release()).
 *
 * Context: gpuctl_lock held; the caller runs gpuctl_reserve_refresh().
 * Return: 0 or -ENOMEM.
 */
int gpuctl_reserve_adopt_orphan(struct pci_dev *pdev, u32 rule,
				const char *target)
{
	struct gpuctl_orphan *o;

	lockdep_assert_held(&gpuctl_lock);

	if (gpuctl_reserve_stopped || gpuctl_inventory_find_pdev(pdev))
		return 0;
	list_for_each_entry(o, &gpuctl_orphans, node) {
		if (o->pdev == pdev)
			goto set;
	}
	o = kzalloc(sizeof(*o), GFP_KERNEL);
	if (!o)
		return -ENOMEM;
	o->pdev = pci_dev_get(pdev);
	list_add_tail(&o->node, &gpuctl_orphans);
set:
	o->rule = rule;
	o->release = false;
	strscpy(o->target, target, sizeof(o->target));
	pci_dbg(pdev, "orphan of rule %u on %s, carried over\n", rule, target);
	return 0;
}

/**
 * gpuctl_reserve_forget_orphans() - stop keeping a rule's orphans
 * @rule: the rule's id
 *
 * They stay on their driver with their override, untracked, as after an
 * unload: a rule-new that could not keep them all keeps none.
 *
 * Context: gpuctl_lock held.
 */
void gpuctl_reserve_forget_orphans(u32 rule)
{
	struct gpuctl_orphan *o, *tmp;

	lockdep_assert_held(&gpuctl_lock);

	list_for_each_entry_safe(o, tmp, &gpuctl_orphans, node)
		if (o->rule == rule && !o->release)
			gpuctl_reserve_orphan_free(o);
}

/*
 * An orphan tracked again hands over to its entry, which releases it when
 * no rule reserves it now; one whose rule is gone is released by the
 * worker. Returns true when there is work for the worker.
 */
static bool gpuctl_reserve_orphans_refresh(void)
{
	struct gpuctl_orphan *o, *tmp;
	struct gpuctl_dev *dev;
	bool pending = false;

	list_for_each_entry_safe(o, tmp, &gpuctl_orphans, node) {
		dev = gpuctl_inventory_find(gpuctl_inventory_key(pci_domain_nr(o->pdev->bus),
								 o->pdev->bus->number,
								 o->pdev->devfn));
		if (dev && dev->pdev == o->pdev) {
			if (!dev->res.rule && !dev->res.target[0]) {
				strscpy(dev->res.target, o->target,
					sizeof(dev->res.target));
				dev->res.pending = true;
				pending = true;
			}
			gpuctl_reserve_orphan_free(o);
			continue;
		}
		if (!o->release && !(o->rule && gpuctl_rule_find(o->rule)))
			o->release = true;
		pending |= o->release;
	}
	return pending;
}

/**
 * gpuctl_reserve_refresh() - give every device the rule that reserves it
 *
 * Runs after rules or the inventory changed. Devices whose rule changed
 * are announced and left for the worker, which is kicked.
 *
 * Context: gpuctl_lock held.
 */
void gpuctl_reserve_refresh(void)
{
	struct gpuctl_dev *dev;
	unsigned long key;
	bool pending = false;

	lockdep_assert_held(&gpuctl_lock);

	/* Units first: the other members follow their unit's rule. */
	for (key = 0; (dev = gpuctl_inventory_next(&key)); key++) {
		if (gpuctl_inventory_is_unit(dev->pdev))
			gpuctl_reserve_assign(dev, gpuctl_rule_for_pdev(dev->pdev));
	}
	for (key = 0; (dev = gpuctl_inventory_next(&key)); key++) {
		if (!gpuctl_inventory_is_unit(dev->pdev))
			gpuctl_reserve_assign(dev, gpuctl_reserve_rule_via_gpu(dev));
		pending |= dev->res.pending;
	}
	pending |= gpuctl_reserve_orphans_refresh();

	if (pending)
		gpuctl_reserve_kick();
}

/* A VFIO user or an allocation kept it from its rule's driver: try again. */
static void gpuctl_reserve_retry_in_use(struct gpuctl_dev *dev)
{
	if (dev && dev->res.rule && dev->res.blocked_in_use) {
		dev->res.pending = true;
		gpuctl_reserve_kick();
	}
}

/**
 * gpuctl_reserve_user_gone() - the last VFIO user of a device closed it
 * @dev: the device
 *
 * A device the worker left blocked because that user had it, or a PF left
 * blocked because this VF of it was open, is tried again now, rather than
 * at its next driver change.
 *
 * Context: gpuctl_lock held.
 */
void gpuctl_reserve_user_gone(struct gpuctl_dev *dev)
{
	struct pci_dev *pf = pci_physfn(dev->pdev);

	lockdep_assert_held(&gpuctl_lock);

	gpuctl_reserve_retry_in_use(dev);
	if (pf != dev->pdev)
		gpuctl_reserve_retry_in_use(gpuctl_inventory_find_pdev(pf));
}

/**
 * gpuctl_reserve_driver_changed() - a reserved device's driver changed
 * @dev: the device; dev->driver is already the new driver
 *
 * Called from bus events, maybe with the device lock held, so it only
 * records and kicks: a device that left its driver is put back, and an
 * unbound one is bound, by the worker.
 *
 * Context: gpuctl_lock held.
 */
void gpuctl_reserve_driver_changed(struct gpuctl_dev *dev)
{
	lockdep_assert_held(&gpuctl_lock);

	if (!dev->res.rule)
		return;

	if (gpuctl_reserve_not_for(dev->pdev, dev->res.target)) {
		/* blocked for good: never claimed, so never unbound */
	} else if (!strcmp(dev->driver, dev->res.target)) {
		dev->res.claimed = true;
		dev->res.blocked[0] = '\0';
		dev->res.blocked_in_use = false;
	} else if (!dev->driver[0] || dev->res.claimed) {
		dev->res.pending = true;
		gpuctl_reserve_kick_later();
	} else {
		/* a new host driver: what kept it on the old one is history */
		dev->res.blocked[0] = '\0';
		dev->res.blocked_in_use = false;
	}
	gpuctl_reserve_update_state(dev);
}

/*
 * Announce "claimed" for a device that may have left the table meanwhile,
 * once per rule: whichever of the worker and gpuctl_reserve_claim() gets
 * here first tells it.
 */
static void gpuctl_reserve_announce_claim(struct pci_dev *pdev)
{
	struct gpuctl_dev *dev;

	mutex_lock(&gpuctl_lock);
	dev = gpuctl_inventory_find_pdev(pdev);
	if (dev && dev->res.rule && !dev->res.claim_told) {
		dev->res.claim_told = true;
		gpuctl_netlink_notify_dev(dev, GPUCTL_CMD_DEV_CHANGE_NTF,
					  GPUCTL_DEV_ACTION_CLAIMED);
	}
	mutex_unlock(&gpuctl_lock);
}

/*
 * Give a device its override unless it has it. Returns 1 when it was set
 * now, 0 when it was there, or a negative errno. A first override (not a
 * lost one being restored) is announced as "claimed" before it is set, so
 * the announcement comes before any driver can bind through it.
 */
static int gpuctl_reserve_set_override(struct pci_dev *pdev,
				       const char *target, bool restore)
{
	if (gpuctl_override_is(pdev, target))
		return 0;
	if (!restore)
		gpuctl_reserve_announce_claim(pdev);
	return gpuctl_set_override(pdev, target) ?: 1;
}

static void gpuctl_reserve_pdev_driver(struct pci_dev *pdev, char *buf)
{
	struct device_driver *drv;

	device_lock(&pdev->dev);
	drv = pdev->dev.driver;
	strscpy(buf, drv ? drv->name : "", GPUCTL_DRIVER_NAME_LEN);
	device_unlock(&pdev->dev);
}

/*
 * The rule's driver may be a module nobody loaded yet: VFIO drivers have no
 * modalias for ordinary ids. Only the drivers gpuctl knows are loaded on
 * demand; a rule's name never reaches request_module(). Any other driver a
 * rule names must be registered already (gpuctl-vfio-pci always is).
 */
static bool gpuctl_reserve_load_driver(const char *name)
{
	static const char *const loadable[] = { "vfio-pci", "pci-stub" };
	unsigned int i;

	if (driver_find(name, &pci_bus_type))
		return true;
	for (i = 0; i < ARRAY_SIZE(loadable); i++) {
		if (!strcmp(name, loadable[i])) {
			request_module("%s", loadable[i]);
			break;
		}
	}
	return driver_find(name, &pci_bus_type);
}

/* The worker acts on @pdev now, unlocked; NULL when it is done. */
static void gpuctl_reserve_act_on(struct pci_dev *pdev)
{
	lockdep_assert_held(&gpuctl_lock);
	gpuctl_reserve_acting = pdev;
	gpuctl_reserve_acting_deleted = false;
}

/*
 * Keep VFIO users out of a device's IOMMU group while gpuctl unbinds its
 * driver. VFIO claims the group's DMA ownership before it lets a user open
 * a device, so while gpuctl holds that claim no VFIO user can start, and
 * taking it fails when one is in already (-EBUSY). A host DMA driver bound
 * in the group also owns its DMA, and then no VFIO user can be in: the
 * device is unbound without a fence (*@fence stays NULL), as it is when
 * it has no group at all. The worker holds one fence at a time.
 */
static int gpuctl_reserve_fence(struct gpuctl_enforce *e,
				struct iommu_group **fence)
{
	struct gpuctl_dev *dev;
	int ret = 0;

	struct iommu_group *grp;

	*fence = NULL;
	mutex_lock(&gpuctl_lock);
	if (gpuctl_reserve_acting_deleted) {
		ret = -ENODEV;
		goto out;
	}
	dev = gpuctl_inventory_find(e->key);
	if (dev && dev->pdev == e->pdev) {
		if (!dev->group || gpuctl_group_offender(dev->group))
			goto out;
		grp = dev->group->grp;
		iommu_group_ref_get(grp);
	} else {
		/*
		 * Not in the table (an orphan, or gone since): its group
		 * unknown to gpuctl, any claim in it counts as a VFIO user's.
		 */
		grp = iommu_group_get(&e->pdev->dev);
		if (!grp)
			goto out;
	}

	if (iommu_group_claim_dma_owner(grp,
					(void *)gpuctl_reserve_fence_owner)) {
		iommu_group_put(grp);
		ret = -EBUSY;
		goto out;
	}
	*fence = grp;
	gpuctl_reserve_fenced = grp;
out:
	mutex_unlock(&gpuctl_lock);
	return ret;
}

static void gpuctl_reserve_unfence(struct iommu_group *fence)
{
	if (!fence)
		return;
	mutex_lock(&gpuctl_lock);
	/* given back already if the device was deleted meanwhile */
	if (gpuctl_reserve_fenced == fence) {
		iommu_group_release_dma_owner(fence);
		gpuctl_reserve_fenced = NULL;
	}
	mutex_unlock(&gpuctl_lock);
	iommu_group_put(fence);
}

/*
 * Unbind whatever driver has the device, fenced. Returns 0, or -EBUSY with
 * @e->why saying why when a VFIO user has its group, or when it is an
 * SR-IOV PF one of whose VFs is allocated or open (its driver's remove
 * would destroy the VF): the device is left alone then. While a PF is
 * unbound, no allocation can take one of its VFs.
 */
static int gpuctl_reserve_unbind(struct gpuctl_enforce *e, const char *drv)
{
	struct gpuctl_sriov_change change = {};
	struct iommu_group *fence;
	bool busy;
	int ret;

	mutex_lock(&gpuctl_lock);
	busy = gpuctl_sriov_vf_in_use(e->pdev, e->why, sizeof(e->why));
	if (!busy && e->pdev->is_physfn)
		gpuctl_sriov_change_begin(&change, e->pdev);
	mutex_unlock(&gpuctl_lock);
	if (busy)
		return -EBUSY;

	ret = gpuctl_reserve_fence(e, &fence);
	if (ret == -ENODEV) {
		/* deleted: its removal unbinds it */
		snprintf(e->why, sizeof(e->why), "removed");
	} else if (ret) {
		snprintf(e->why, sizeof(e->why),
			 "open by a VFIO user through %s", drv);
	} else {
		device_release_driver(&e->pdev->dev);
		gpuctl_reserve_unfence(fence);
	}

	if (change.pf) {
		mutex_lock(&gpuctl_lock);
		gpuctl_sriov_change_end(&change);
		mutex_unlock(&gpuctl_lock);
	}
	return ret;
}

static u32 gpuctl_reserve_release(struct gpuctl_enforce *e)
{
	char drv[GPUCTL_DRIVER_NAME_LEN];
	bool cleared = false;
	int ret;

	/* never bound nor overridden by gpuctl: the PF stays as it is */
	if (gpuctl_reserve_not_for(e->pdev, e->target))
		return 0;

	if (gpuctl_override_is(e->pdev, e->target)) {
		ret = gpuctl_set_override(e->pdev, NULL);
		if (ret)
			pci_warn(e->pdev, "cannot clear driver_override: %d\n",
				 ret);
		cleared = !ret;
	}

	gpuctl_reserve_pdev_driver(e->pdev, drv);
	if (drv[0] && strcmp(drv, e->target))
		return cleared ? GPUCTL_DEV_ACTION_RELEASED : 0;

	/* rule-del refuses this; a user who opened it since keeps it. */
	if (drv[0] && gpuctl_reserve_unbind(e, drv)) {
		pci_info(e->pdev, "released, but left on %s: %s\n", drv,
			 e->why);
		return GPUCTL_DEV_ACTION_RELEASED;
	}

	/* The host's drivers probe it. */
	ret = device_attach(&e->pdev->dev);
	if (ret < 0)
		pci_info(e->pdev, "probe after release: %d\n", ret);
	return GPUCTL_DEV_ACTION_RELEASED;
}

/*
 * Put a reserved device on its driver. Returns the enum gpuctl_dev_action
 * value of what was done, 0 for nothing; sets *@retry when the PCI core
 * does not let drivers match the device yet.
 */
static u32 gpuctl_reserve_bind(struct gpuctl_enforce *e, bool *retry)
{
	char drv[GPUCTL_DRIVER_NAME_LEN];
	struct pci_dev *pdev = e->pdev;
	u32 claim_action, action;
	int ret;

	if (gpuctl_reserve_not_for(pdev, e->target)) {
		snprintf(e->why, sizeof(e->why),
			 "%s takes only vendor VFs; this is no VF", e->target);
		return GPUCTL_DEV_ACTION_BLOCKED;
	}

	ret = gpuctl_reserve_set_override(pdev, e->target, e->claimed);
	if (ret < 0) {
		snprintf(e->why, sizeof(e->why),
			 "cannot set driver_override: %d", ret);
		return GPUCTL_DEV_ACTION_BLOCKED;
	}
	/* A first override was announced; one that went missing is news. */
	claim_action = ret && e->claimed ? GPUCTL_DEV_ACTION_RESTORED : 0;

	gpuctl_reserve_pdev_driver(pdev, drv);
	if (!strcmp(drv, e->target))
		return claim_action;

	/* Held by a host driver since before the rule: only "take" moves it. */
	if (drv[0] && !e->claimed && !e->take)
		return claim_action;

	/* Hot-add: the core binds it itself once it lets drivers match. */
	if (!READ_ONCE(pdev->match_driver)) {
		*retry = true;
		return claim_action;
	}

	if (!gpuctl_reserve_load_driver(e->target)) {
		snprintf(e->why, sizeof(e->why), "driver %s is not available",
			 e->target);
		return GPUCTL_DEV_ACTION_BLOCKED;
	}

	if (e->claimed)
		action = GPUCTL_DEV_ACTION_RESTORED;
	else
		action = drv[0] ? GPUCTL_DEV_ACTION_TAKEN : GPUCTL_DEV_ACTION_BOUND;

	/*
	 * Another VFIO driver's user keeps the device, or a VF of this PF is
	 * in use; try again later.
	 */
	ret = drv[0] ? gpuctl_reserve_unbind(e, drv) : 0;
	if (ret) {
		e->in_use = ret == -EBUSY;
		return GPUCTL_DEV_ACTION_BLOCKED;
	}
	ret = device_attach(&pdev->dev);

	gpuctl_reserve_pdev_driver(pdev, drv);
	if (strcmp(drv, e->target)) {
		if (ret < 0)
			snprintf(e->why, sizeof(e->why), "%s did not bind: %d",
				 e->target, ret);
		else
			snprintf(e->why, sizeof(e->why),
				 "%s did not bind (see the kernel log)",
				 e->target);
		return GPUCTL_DEV_ACTION_BLOCKED;
	}
	return action;
}

/* The next device with work to do at a key of at least *@key, snapshotted. */
static bool gpuctl_reserve_next_pending(unsigned long *key,
					struct gpuctl_enforce *e)
{
	struct gpuctl_dev *dev;

	lockdep_assert_held(&gpuctl_lock);

	for (; (dev = gpuctl_inventory_next(key)); (*key)++) {
		if (!dev->res.pending)
			continue;
		dev->res.pending = false;
		if (!dev->res.rule && !dev->res.target[0])
			continue;
#ifdef GPUCTL_TEST_MUTANT_COMPANION
		/*
		 * Test-only mutant, off unless built with
		 * -DGPUCTL_TEST_MUTANT_COMPANION (scripts/teeth.sh): a rule's
		 * companion is left on its host driver.
		 */
		if (dev->role == GPUCTL_DEV_ROLE_COMPANION && dev->res.rule)
			continue;
#endif

		memset(e, 0, sizeof(*e));
		dev->res.enforcing = true;
		e->pdev = pci_dev_get(dev->pdev);
		e->key = dev->key;
		strscpy(e->target, dev->res.target, sizeof(e->target));
		e->reserve = !!dev->res.rule;
		e->claimed = dev->res.claimed;
		e->take = dev->res.take;
		return true;
	}
	return false;
}

/* The next orphan to release, taken off the list, its device pinned. */
static bool gpuctl_reserve_next_orphan(struct gpuctl_enforce *e)
{
	struct gpuctl_orphan *o;

	lockdep_assert_held(&gpuctl_lock);

	list_for_each_entry(o, &gpuctl_orphans, node) {
		if (!o->release)
			continue;
		memset(e, 0, sizeof(*e));
		e->pdev = pci_dev_get(o->pdev);
		e->key = gpuctl_inventory_key(pci_domain_nr(o->pdev->bus),
					      o->pdev->bus->number,
					      o->pdev->devfn);
		strscpy(e->target, o->target, sizeof(e->target));
		gpuctl_reserve_orphan_free(o);
		return true;
	}
	return false;
}

/* Record what the worker did to a device, if it is still the same one. */
static void gpuctl_reserve_finish(struct gpuctl_enforce *e, u32 action,
				  bool retry)
{
	struct gpuctl_dev *dev;

	lockdep_assert_held(&gpuctl_lock);

	dev = gpuctl_inventory_find(e->key);
	if (!dev || dev->pdev != e->pdev)
		return;
	dev->res.enforcing = false;

	if (e->reserve) {
		/* The rule went meanwhile; the release is pending already. */
		if (!dev->res.rule)
			return;
		if (action == GPUCTL_DEV_ACTION_BLOCKED) {
			if (!strcmp(dev->res.blocked, e->why))
				action = 0;
			strscpy(dev->res.blocked, e->why,
				sizeof(dev->res.blocked));
			dev->res.blocked_in_use = e->in_use;
		}
		if (!strcmp(dev->driver, dev->res.target) &&
		    !gpuctl_reserve_not_for(dev->pdev, dev->res.target))
			dev->res.claimed = true;
		if (retry)
			dev->res.pending = true;
	} else {
		/* A new rule came meanwhile and has its own pass pending. */
		if (dev->res.rule)
			return;
		dev->res.target[0] = '\0';
	}

	gpuctl_reserve_update_state(dev);
	if (action) {
		gpuctl_netlink_notify_dev(dev, GPUCTL_CMD_DEV_CHANGE_NTF, action);
		gpuctl_inventory_changed();
	}
}

/*
 * One pass over the table in address order. Devices that turn pending
 * behind the cursor were kicked, which queued another pass.
 */
static void gpuctl_reserve_work_fn(struct work_struct *work)
{
	struct gpuctl_enforce e;
	unsigned long key = 0;
	bool retry, again = false;
	u32 action;

	/* Overrides first, for every device a rule just reserved. */
	gpuctl_reserve_claim(NULL);

	mutex_lock(&gpuctl_lock);
	while (gpuctl_reserve_next_pending(&key, &e)) {
		gpuctl_reserve_act_on(e.pdev);
		mutex_unlock(&gpuctl_lock);

		retry = false;
		if (e.reserve)
			action = gpuctl_reserve_bind(&e, &retry);
		else
			action = gpuctl_reserve_release(&e);

		mutex_lock(&gpuctl_lock);
		gpuctl_reserve_act_on(NULL);
		gpuctl_reserve_finish(&e, action, retry);
		pci_dev_put(e.pdev);
		again |= retry;
		key++;
	}
	while (gpuctl_reserve_next_orphan(&e)) {
		gpuctl_reserve_act_on(e.pdev);
		mutex_unlock(&gpuctl_lock);
		if (gpuctl_reserve_release(&e))
			pci_info(e.pdev, "released: its rule went while its GPU was away\n");
		mutex_lock(&gpuctl_lock);
		gpuctl_reserve_act_on(NULL);
		pci_dev_put(e.pdev);
	}
	if (again && !gpuctl_reserve_stopped)
		queue_delayed_work(gpuctl_reserve_wq, &gpuctl_reserve_work,
				   GPUCTL_RESERVE_RETRY);
	mutex_unlock(&gpuctl_lock);
}

/**
 * gpuctl_reserve_claim() - give newly reserved devices their override now
 * @only: the one device to look at, or NULL for every device
 *
 * Setting driver_override at once, rather than from the worker, is what
 * keeps host drivers away: on a device's ADD_DEVICE event no driver can
 * match it yet (pci_device_add() in drivers/pci/probe.c clears match_driver
 * before device_add(), 6.1 and 6.12), and at module load the GPU drivers that
 * softdeps made wait are loaded right after gpuctl. Devices not claimed
 * here get their override from the worker before it binds them.
 *
 * Context: process context; no lock of gpuctl's held, and no device lock
 * held for any device claimed: an ADD_DEVICE event passes its own device
 * (whose lock the driver core does not hold then), callers that hold no
 * device lock at all may pass NULL.
 */
void gpuctl_reserve_claim(struct pci_dev *only)
{
	char target[GPUCTL_DRIVER_NAME_LEN];
	struct gpuctl_dev *dev;
	struct pci_dev *pdev;
	unsigned long key = 0;

	for (;;) {
		mutex_lock(&gpuctl_lock);
		for (; (dev = gpuctl_inventory_next(&key)); key++) {
			if (dev->res.needs_override &&
			    (!only || dev->pdev == only))
				break;
		}
		if (!dev) {
			mutex_unlock(&gpuctl_lock);
			return;
		}
		dev->res.needs_override = false;
		pdev = pci_dev_get(dev->pdev);
		strscpy(target, dev->res.target, sizeof(target));
		mutex_unlock(&gpuctl_lock);

		/* a PF stays as the host has it, without our override */
		if (!gpuctl_reserve_not_for(pdev, target) &&
		    gpuctl_reserve_set_override(pdev, target, false) < 0)
			pci_warn(pdev, "cannot set driver_override\n");
		pci_dev_put(pdev);
		key++;
	}
}

/**
 * gpuctl_reserve_init() - create the enforcement worker
 *
 * An ordered queue of gpuctl's own: unbinding a device can block for as
 * long as its driver or a VFIO user takes, which must not stall the
 * system's shared queues.
 *
 * Context: module init.
 * Return: 0 or -ENOMEM.
 */
int gpuctl_reserve_init(void)
{
	gpuctl_reserve_wq = alloc_ordered_workqueue("gpuctl", 0);
	return gpuctl_reserve_wq ? 0 : -ENOMEM;
}

/**
 * gpuctl_reserve_stop() - stop the enforcement worker
 *
 * Devices stay where they are, driver_override included: a reserved GPU
 * must not fall to a host driver because gpuctl is being upgraded.
 *
 * Context: module exit or init failure, once nothing kicks the worker any
 * more (the family and the bus notifier are gone); takes gpuctl_lock.
 * May be called twice.
 */
void gpuctl_reserve_stop(void)
{
	mutex_lock(&gpuctl_lock);
	WRITE_ONCE(gpuctl_reserve_stopped, true);
	mutex_unlock(&gpuctl_lock);

	cancel_delayed_work_sync(&gpuctl_reserve_work);

	/* Like the devices in the table, orphans keep their override. */
	mutex_lock(&gpuctl_lock);
	while (!list_empty(&gpuctl_orphans))
		gpuctl_reserve_orphan_free(list_first_entry(&gpuctl_orphans,
							    struct gpuctl_orphan,
							    node));
	mutex_unlock(&gpuctl_lock);
}

/**
 * gpuctl_reserve_exit() - free the worker's queue
 *
 * Context: module exit or init failure, after gpuctl_reserve_stop().
 */
void gpuctl_reserve_exit(void)
{
	destroy_workqueue(gpuctl_reserve_wq);
}
