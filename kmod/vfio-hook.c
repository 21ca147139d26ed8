// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * Open and close of tracked devices on plain vfio-pci.
 *
 * vfio-pci exports no hook, and a bus notifier sees no open. But every
 * call vfio makes into the driver goes through the vfio_device's ops
 * pointer, and open_device/close_device are called only under the device
 * set's lock (kernel-facts 4.3). So for each tracked device bound to
 * vfio-pci, gpuctl points vdev->ops at a copy of vfio-pci's ops whose
 * open_device and close_device call vfio-pci's and then tell vfio-track.c.
 * The swap is made and undone under the device set's lock, so no open or
 * close runs half through either table.
 *
 * Lifetime of a hook (the copy): installed when the device is bound to
 * vfio-pci (or at load, for one bound already), undone when it is being
 * unbound (UNBIND_DRIVER, before vfio-pci's remove), freed once it is
 * unbound (UNBOUND_DRIVER): vfio-pci's remove waits until every user
 * closed the device, so by then nothing can still be inside the copy; a
 * close that went past the undone hook is reported then. At unload, every
 * hook is undone under the device lock, which keeps remove (and its
 * request calls) away; no tracked device is open then, since each open
 * holds a reference on the module.
 *
 * Locking: device_lock > gpuctl_vfio_hooks_lock > device set lock >
 * gpuctl_lock.
 */

#include <linux/device.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/vfio.h>
#include <linux/vfio_pci_core.h>

#include "inventory.h"
#include "vfio-track.h"

/**
 * struct gpuctl_vfio_hook - vfio-pci's ops for one device, with gpuctl's
 *	open_device and close_device
 * @ops: the copy vdev->ops points at while @installed
 * @orig: vfio-pci's ops
 * @vdev: the device's vfio_device; only followed while the device is
 *	bound to vfio-pci
 * @pdev: the device; the hook holds a reference
 * @installed: vdev->ops is @ops
 * @held: a VFIO user has the device open, counted in a module reference
 * @node: entry in gpuctl_vfio_hooks
 */
struct gpuctl_vfio_hook {
	struct vfio_device_ops ops;
	const struct vfio_device_ops *orig;
	struct vfio_device *vdev;
	struct pci_dev *pdev;
	bool installed;
	bool held;
	struct list_head node;
};

static LIST_HEAD(gpuctl_vfio_hooks);
static DEFINE_MUTEX(gpuctl_vfio_hooks_lock);

static struct gpuctl_vfio_hook *gpuctl_vfio_hook_of(struct vfio_device *vdev)
{
	return container_of(vdev->ops, struct gpuctl_vfio_hook, ops);
}

static int gpuctl_vfio_hook_open(struct vfio_device *vdev)
{
	struct gpuctl_vfio_hook *hook = gpuctl_vfio_hook_of(vdev);
	int ret;

	ret = hook->orig->open_device ? hook->orig->open_device(vdev) : 0;
	if (ret)
		return ret;

	/* Fails only while the module unloads; the open is then not seen. */
	hook->held = try_module_get(THIS_MODULE);
	if (hook->held)
		gpuctl_vfio_opened(hook->pdev);
	return 0;
}

static void gpuctl_vfio_hook_close(struct vfio_device *vdev)
{
	struct gpuctl_vfio_hook *hook = gpuctl_vfio_hook_of(vdev);

	if (hook->orig->close_device)
		hook->orig->close_device(vdev);

	if (hook->held) {
		gpuctl_vfio_closed(hook->pdev);
		hook->held = false;
		module_put(THIS_MODULE);
	}
}

static struct gpuctl_vfio_hook *gpuctl_vfio_hook_find(struct pci_dev *pdev)
{
	struct gpuctl_vfio_hook *hook;

	lockdep_assert_held(&gpuctl_vfio_hooks_lock);

	list_for_each_entry(hook, &gpuctl_vfio_hooks, node) {
		if (hook->pdev == pdev)
			return hook;
	}
	return NULL;
}

static bool gpuctl_vfio_hook_tracked(struct pci_dev *pdev)
{
	struct gpuctl_dev *dev;

	mutex_lock(&gpuctl_lock);
	dev = gpuctl_inventory_find(gpuctl_inventory_key(pci_domain_nr(pdev->bus),
							 pdev->bus->number,
							 pdev->devfn));
	mutex_unlock(&gpuctl_lock);
	return dev && dev->pdev == pdev;
}

/* Device lock held, so the driver and its drvdata stay. */
static void gpuctl_vfio_hook_install(struct pci_dev *pdev)
{
	struct vfio_pci_core_device *core;
	struct gpuctl_vfio_hook *hook;
	struct vfio_device *vdev;

	device_lock_assert(&pdev->dev);

	if (!pdev->dev.driver || strcmp(pdev->dev.driver->name, "vfio-pci") ||
	    !gpuctl_vfio_hook_tracked(pdev))
		return;

	/* vfio_pci_core_register_device() insists on this drvdata. */
	core = dev_get_drvdata(&pdev->dev);
	if (!core)
		return;
	vdev = &core->vdev;

	mutex_lock(&gpuctl_vfio_hooks_lock);
	if (gpuctl_vfio_hook_find(pdev))
		goto out;

	/* Without memory the device works, only its opens go unseen. */
	hook = kzalloc(sizeof(*hook), GFP_KERNEL);
	if (!hook)
		goto out;
	hook->orig = vdev->ops;
	hook->ops = *vdev->ops;
	hook->ops.open_device = gpuctl_vfio_hook_open;
	hook->ops.close_device = gpuctl_vfio_hook_close;
	hook->vdev = vdev;
	hook->pdev = pci_dev_get(pdev);

	mutex_lock(&vdev->dev_set->lock);
	WRITE_ONCE(vdev->ops, &hook->ops);
	hook->installed = true;
	/* Open before gpuctl looked: its close comes through the hook. */
	if (vdev->open_count) {
		hook->held = try_module_get(THIS_MODULE);
		if (hook->held)
			gpuctl_vfio_adopt(pdev);
	}
	mutex_unlock(&vdev->dev_set->lock);

	list_add_tail(&hook->node, &gpuctl_vfio_hooks);
out:
	mutex_unlock(&gpuctl_vfio_hooks_lock);
}

static void gpuctl_vfio_hook_undo(struct gpuctl_vfio_hook *hook)
{
	struct vfio_device *vdev = hook->vdev;

	if (!hook->installed)
		return;
	mutex_lock(&vdev->dev_set->lock);
	WRITE_ONCE(vdev->ops, hook->orig);
	hook->installed = false;
	mutex_unlock(&vdev->dev_set->lock);
}

static void gpuctl_vfio_hook_free(struct gpuctl_vfio_hook *hook)
{
	pci_dev_put(hook->pdev);
	kfree(hook);
}

/**
 * gpuctl_vfio_hook_bound() - a device was bound to a driver
 * @pdev: the device
 *
 * Context: BUS_NOTIFY_BOUND_DRIVER, device lock held, gpuctl_lock not.
 */
void gpuctl_vfio_hook_bound(struct pci_dev *pdev)
{
	gpuctl_vfio_hook_install(pdev);
}

/**
 * gpuctl_vfio_hook_unbind() - a device is about to be unbound
 * @pdev: the device
 *
 * Puts vfio-pci's own ops back before its remove starts.
 *
 * Context: BUS_NOTIFY_UNBIND_DRIVER, device lock held, gpuctl_lock not.
 */
void gpuctl_vfio_hook_unbind(struct pci_dev *pdev)
{
	struct gpuctl_vfio_hook *hook;

	mutex_lock(&gpuctl_vfio_hooks_lock);
	hook = gpuctl_vfio_hook_find(pdev);
	if (hook)
		gpuctl_vfio_hook_undo(hook);
	mutex_unlock(&gpuctl_vfio_hooks_lock);
}

/**
 * gpuctl_vfio_hook_unbound() - a device was unbound
 * @pdev: the device
 *
 * Frees its hook. A user that had the device open when the unbind began
 * has closed it by now (vfio-pci's remove waited for that), through
 * vfio-pci's own ops; this reports that close.
 *
 * Context: BUS_NOTIFY_UNBOUND_DRIVER, device lock held, gpuctl_lock not.
 */
void gpuctl_vfio_hook_unbound(struct pci_dev *pdev)
{
	struct gpuctl_vfio_hook *hook;

	mutex_lock(&gpuctl_vfio_hooks_lock);
	hook = gpuctl_vfio_hook_find(pdev);
	if (hook)
		list_del(&hook->node);
	mutex_unlock(&gpuctl_vfio_hooks_lock);
	if (!hook)
		return;

	if (hook->held) {
		gpuctl_vfio_closed(pdev);
		module_put(THIS_MODULE);
	}
	gpuctl_vfio_hook_free(hook);
}

static int gpuctl_vfio_hook_scan_one(struct device *d, void *data)
{
	device_lock(d);
	gpuctl_vfio_hook_install(to_pci_dev(d));
	device_unlock(d);
	return 0;
}

/**
 * gpuctl_vfio_hook_scan() - hook the tracked devices vfio-pci has already
 *
 * Context: module init, after the bus notifier is registered (a device
 * both see is hooked once); takes device locks.
 */
void gpuctl_vfio_hook_scan(void)
{
	bus_for_each_dev(&pci_bus_type, NULL, NULL, gpuctl_vfio_hook_scan_one);
}

/**
 * gpuctl_vfio_hook_exit() - give every device vfio-pci's own ops back
 *
 * Context: module exit, after the bus notifier is gone; takes device locks.
 */
void gpuctl_vfio_hook_exit(void)
{
	struct gpuctl_vfio_hook *hook, *tmp;
	LIST_HEAD(hooks);

	mutex_lock(&gpuctl_vfio_hooks_lock);
	list_splice_init(&gpuctl_vfio_hooks, &hooks);
	mutex_unlock(&gpuctl_vfio_hooks_lock);

	list_for_each_entry_safe(hook, tmp, &hooks, node) {
		device_lock(&hook->pdev->dev);
		gpuctl_vfio_hook_undo(hook);
		device_unlock(&hook->pdev->dev);
		list_del(&hook->node);
		gpuctl_vfio_hook_free(hook);
	}
}
