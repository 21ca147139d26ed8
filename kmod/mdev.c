// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * The mdev instances (vGPUs) of the host, followed from the mdev bus.
 *
 * The mdev core exports no bus pointer (mdev_bus_type is declared only in
 * drivers/vfio/mdev/mdev_private.h, 6.1 and 6.12), but
 * mdev_register_driver() puts one into the driver it registers. gpuctl
 * registers a driver that never binds (mdev_match() matches nothing: the
 * core attaches each instance to its parent's driver explicitly) just to
 * learn the bus, and listens on it. The import also keeps mdev.ko loaded
 * while gpuctl is.
 *
 * An instance's fields are copied when it appears: ADD_DEVICE runs inside
 * mdev_device_create() with the parent's unreg_sem held, so its type and
 * parent cannot go away meanwhile. The load-time scan copies them under
 * the instance's device lock, bound or not: the parent's unregistration
 * (drivers/vfio/mdev/mdev_core.c, mdev_unregister_parent(), 6.1 and
 * 6.12) removes its instances before it frees its types, and removing
 * one waits for that lock (device_del() releases the driver under it,
 * bound or not). An instance the scan did not see, because it was added
 * before the notifier and then bound, is copied at its BOUND_DRIVER event,
 * which also runs under its device lock. gpuctl never holds a reference
 * to an instance: the mdev core frees its type's kobject, which the
 * parent's driver owns, when the last reference goes.
 *
 * Instances leave at DEL_DEVICE, or at REMOVED_DEVICE for one the scan
 * found after its DEL_DEVICE had passed, before the notifier was there.
 * An instance deleted while the scan runs is remembered so that the scan
 * does not add it back (struct gpuctl_mdev_gone).
 *
 * The instances are kept in an xarray indexed by their gpuctl id, which
 * only grows, so that a dump or a walk resumes from its last id in
 * O(log n) rather than from the start: a host with 1000 instances would
 * otherwise pay n^2/2 steps per dump.
 *
 * Locking: the xarray is under gpuctl_lock, taken inside the device lock
 * (bus events of a bound device run under it), never the other way round.
 */

#include <linux/device.h>
#include <linux/iommu.h>
#include <linux/mdev.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include <uapi/linux/gpuctl.h>

#include "alloc.h"
#include "mdev.h"
#include "netlink.h"
#include "vfio-track.h"

static DEFINE_XARRAY(gpuctl_mdevs);
static unsigned long gpuctl_mdev_next_id = 1;

/**
 * struct gpuctl_mdev_gone - an instance deleted during the load-time scan
 * @node: entry in gpuctl_mdev_gone_list
 * @dev: the deleted device, compared only
 */
struct gpuctl_mdev_gone {
	struct list_head node;
	const struct device *dev;
};

static LIST_HEAD(gpuctl_mdev_gone_list);
static bool gpuctl_mdev_scanning;

static int gpuctl_mdev_probe(struct mdev_device *mdev)
{
	return -ENODEV;
}

static void gpuctl_mdev_remove(struct mdev_device *mdev)
{
}

/* Never bound (see the top of the file): it only carries the bus. */
static struct mdev_driver gpuctl_mdev_driver = {
	.device_api = "gpuctl-watch",
	.probe = gpuctl_mdev_probe,
	.remove = gpuctl_mdev_remove,
	.driver = {
		.name = "gpuctl-watch",
		.owner = THIS_MODULE,
		.suppress_bind_attrs = true,
	},
};

static struct gpuctl_mdev *gpuctl_mdev_find_dev(const struct device *dev)
{
	struct gpuctl_mdev *m;
	unsigned long id;

	xa_for_each(&gpuctl_mdevs, id, m) {
		if (m->dev == dev)
			return m;
	}
	return NULL;
}

/**
 * gpuctl_mdev_find() - the instance with a UUID
 * @uuid: its UUID
 *
 * Context: gpuctl_lock held.
 * Return: the instance, or NULL.
 */
struct gpuctl_mdev *gpuctl_mdev_find(const guid_t *uuid)
{
	struct gpuctl_mdev *m;
	unsigned long id;

	lockdep_assert_held(&gpuctl_lock);

	xa_for_each(&gpuctl_mdevs, id, m) {
		if (guid_equal(&m->uuid, uuid))
			return m;
	}
	return NULL;
}

/**
 * gpuctl_mdev_next() - the first instance whose id is at least *@key
 * @key: where to start; set to the instance's id
 *
 * Context: gpuctl_lock held.
 * Return: the instance, or NULL when none is left.
 */
struct gpuctl_mdev *gpuctl_mdev_next(unsigned long *key)
{
	lockdep_assert_held(&gpuctl_lock);

	return xa_find(&gpuctl_mdevs, key, ULONG_MAX, XA_PRESENT);
}

/* The group VFIO gave it, -1 when none yet. */
static int gpuctl_mdev_group_id(struct device *dev)
{
	struct iommu_group *group = iommu_group_get(dev);
	int id = -1;

	if (group) {
		id = iommu_group_id(group);
		iommu_group_put(group);
	}
	return id;
}

/*
 * Copies what dumps show of a new instance.
 * Context: its parent is registered and stays so (see the top of the file).
 */
static struct gpuctl_mdev *gpuctl_mdev_new(struct device *dev)
{
	struct mdev_device *mdev = to_mdev_device(dev);
	struct mdev_type *type = mdev->type;
	struct gpuctl_mdev *m;

	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return NULL;

	m->dev = dev;
	guid_copy(&m->uuid, &mdev->uuid);
	strscpy(m->type, kobject_name(&type->kobj), sizeof(m->type));
	strscpy(m->type_name, type->pretty_name ?: type->sysfs_name,
		sizeof(m->type_name));
	strscpy(m->parent, dev_name(dev->parent), sizeof(m->parent));
	m->group = -1;
	return m;
}

/* Lists a new instance; an id is used up only by one that was listed. */
static int gpuctl_mdev_insert(struct gpuctl_mdev *m)
{
	int ret;

	m->id = gpuctl_mdev_next_id;
	ret = xa_insert(&gpuctl_mdevs, m->id, m, GFP_KERNEL);
	if (ret) {
		dev_warn(m->dev, "gpuctl: cannot track this mdev: %d\n", ret);
		return ret;
	}
	gpuctl_mdev_next_id++;
	gpuctl_inventory_changed();
	return 0;
}

/* A bound instance: its driver's name and the group its probe set up. */
static void gpuctl_mdev_bound(struct gpuctl_mdev *m, struct device *dev)
{
	strscpy(m->driver, dev->driver ? dev->driver->name : "",
		sizeof(m->driver));
	m->group = gpuctl_mdev_group_id(dev);
	gpuctl_inventory_changed();
	/* nothing announces its opens: look for them (mdev-watch.c) */
	gpuctl_vfio_watch_poll();
	if (!m->told) {
		m->told = true;
		gpuctl_netlink_notify_mdev(m, GPUCTL_CMD_MDEV_ADD_NTF);
	}
}

static void gpuctl_mdev_del(struct gpuctl_mdev *m)
{
	gpuctl_alloc_mdev_gone(m);
	xa_erase(&gpuctl_mdevs, m->id);
	gpuctl_inventory_changed();
	if (m->told)
		gpuctl_netlink_notify_mdev(m, GPUCTL_CMD_MDEV_DEL_NTF);
	kfree(m);
}

static void gpuctl_mdev_gone_note(const struct device *dev)
{
	struct gpuctl_mdev_gone *g;

	if (!gpuctl_mdev_scanning)
		return;
	g = kzalloc(sizeof(*g), GFP_KERNEL);
	/*
	 * Without memory the scan may list an instance that is gone; its
	 * REMOVED_DEVICE still takes it out.
	 */
	if (!g)
		return;
	g->dev = dev;
	list_add(&g->node, &gpuctl_mdev_gone_list);
}

static bool gpuctl_mdev_gone(const struct device *dev)
{
	struct gpuctl_mdev_gone *g;

	list_for_each_entry(g, &gpuctl_mdev_gone_list, node) {
		if (g->dev == dev)
			return true;
	}
	return false;
}

/* A device at the address of a deleted one is a new one. */
static void gpuctl_mdev_gone_forget(const struct device *dev)
{
	struct gpuctl_mdev_gone *g, *tmp;

	list_for_each_entry_safe(g, tmp, &gpuctl_mdev_gone_list, node) {
		if (g->dev == dev) {
			list_del(&g->node);
			kfree(g);
		}
	}
}

static int gpuctl_mdev_notify(struct notifier_block *nb, unsigned long action,
			      void *data)
{
	struct device *dev = data;
	struct gpuctl_mdev *m, *new = NULL;

	/*
	 * Copied outside gpuctl_lock: it allocates. BOUND_DRIVER copies too,
	 * for an instance added before the notifier and bound after the
	 * scan looked; it is dropped when the instance is listed already.
	 */
	if (action == BUS_NOTIFY_ADD_DEVICE ||
	    action == BUS_NOTIFY_BOUND_DRIVER) {
		new = gpuctl_mdev_new(dev);
		if (!new)
			dev_warn(dev, "gpuctl: no memory to track this mdev\n");
	}

	mutex_lock(&gpuctl_lock);
	m = gpuctl_mdev_find_dev(dev);
	switch (action) {
	case BUS_NOTIFY_ADD_DEVICE:
		gpuctl_mdev_gone_forget(dev);
		if (m)	/* stale: a device at this address went unseen */
			gpuctl_mdev_del(m);
		if (new && !gpuctl_mdev_insert(new))
			new = NULL;
		break;
	case BUS_NOTIFY_BOUND_DRIVER:
		if (!m && new && !gpuctl_mdev_gone(dev) &&
		    !gpuctl_mdev_insert(new)) {
			m = new;
			new = NULL;
		}
		if (m)
			gpuctl_mdev_bound(m, dev);
		break;
	case BUS_NOTIFY_UNBOUND_DRIVER:
		if (m) {
			m->driver[0] = '\0';
			gpuctl_inventory_changed();
		}
		break;
	case BUS_NOTIFY_DEL_DEVICE:
	case BUS_NOTIFY_REMOVED_DEVICE:
		gpuctl_mdev_gone_note(dev);
		if (m)
			gpuctl_mdev_del(m);
		break;
	}
	mutex_unlock(&gpuctl_lock);
	kfree(new);
	return NOTIFY_DONE;
}

static struct notifier_block gpuctl_mdev_nb = {
	.notifier_call = gpuctl_mdev_notify,
};

/*
 * An instance that existed before the notifier, bound or not (a sysfs
 * unbind leaves it so). Under its device lock its type and parent stay
 * (see the top of the file).
 */
static int gpuctl_mdev_scan_one(struct device *dev, void *data)
{
	struct gpuctl_mdev *m;

	device_lock(dev);
	m = gpuctl_mdev_new(dev);

	mutex_lock(&gpuctl_lock);
	if (m && !gpuctl_mdev_gone(dev) && !gpuctl_mdev_find_dev(dev) &&
	    !gpuctl_mdev_insert(m)) {
		if (dev->driver)
			gpuctl_mdev_bound(m, dev);
		else
			m->told = true;	/* as a bound one: its removal is told */
		m = NULL;
	}
	mutex_unlock(&gpuctl_lock);
	device_unlock(dev);

	kfree(m);
	return 0;
}

/**
 * gpuctl_mdev_start() - follow the mdev bus and list its instances
 *
 * Context: no lock held.
 * Return: 0 or a negative errno.
 */
int gpuctl_mdev_start(void)
{
	struct gpuctl_mdev_gone *g, *tmp;
	int ret;

	ret = mdev_register_driver(&gpuctl_mdev_driver);
	if (ret)
		return ret;

	mutex_lock(&gpuctl_lock);
	gpuctl_mdev_scanning = true;
	mutex_unlock(&gpuctl_lock);

	ret = bus_register_notifier(gpuctl_mdev_driver.driver.bus,
				    &gpuctl_mdev_nb);
	if (!ret)
		bus_for_each_dev(gpuctl_mdev_driver.driver.bus, NULL, NULL,
				 gpuctl_mdev_scan_one);

	mutex_lock(&gpuctl_lock);
	gpuctl_mdev_scanning = false;
	list_for_each_entry_safe(g, tmp, &gpuctl_mdev_gone_list, node) {
		list_del(&g->node);
		kfree(g);
	}
	mutex_unlock(&gpuctl_lock);

	if (ret)
		mdev_unregister_driver(&gpuctl_mdev_driver);
	return ret;
}

/**
 * gpuctl_mdev_stop() - stop following the mdev bus and forget its instances
 *
 * Context: no lock held; the netlink family is gone.
 */
void gpuctl_mdev_stop(void)
{
	struct gpuctl_mdev *m;
	unsigned long id;

	bus_unregister_notifier(gpuctl_mdev_driver.driver.bus, &gpuctl_mdev_nb);

	mutex_lock(&gpuctl_lock);
	xa_for_each(&gpuctl_mdevs, id, m) {
		xa_erase(&gpuctl_mdevs, id);
		kfree(m);
	}
	mutex_unlock(&gpuctl_lock);

	mdev_unregister_driver(&gpuctl_mdev_driver);
}
