// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * IOMMU groups that hold a GPU: their members, the role of each member and
 * whether VFIO could use the group today.
 *
 * gpuctl keeps its own table of groups, filled from the devices it tracks,
 * because iommu_group_get_by_id() is no longer exported (6.8+).
 */

#include <linux/slab.h>
#include <linux/xarray.h>
#include <uapi/linux/gpuctl.h>

#include "inventory.h"
#include "iommu.h"

/* Group id -> struct gpuctl_group, under gpuctl_lock. */
static DEFINE_XARRAY(gpuctl_groups);

/**
 * gpuctl_group_find() - look up a tracked group
 * @id: IOMMU group id
 *
 * Context: gpuctl_lock held.
 * Return: the group, or NULL when no tracked GPU is in group @id.
 */
struct gpuctl_group *gpuctl_group_find(unsigned int id)
{
	lockdep_assert_held(&gpuctl_lock);
	return xa_load(&gpuctl_groups, id);
}

/**
 * gpuctl_group_next() - iterate over tracked groups in id order
 * @id: in: the first id to consider; out: the id of the returned group
 *
 * Context: gpuctl_lock held.
 * Return: the first group with an id of at least *@id, or NULL.
 */
struct gpuctl_group *gpuctl_group_next(unsigned long *id)
{
	lockdep_assert_held(&gpuctl_lock);
	return xa_find(&gpuctl_groups, id, ULONG_MAX, XA_PRESENT);
}

/**
 * gpuctl_group_create() - start tracking an IOMMU group
 * @grp: the IOMMU core's group; a reference is taken
 *
 * Context: gpuctl_lock held; sleeps.
 * Return: the new, empty group, or an ERR_PTR().
 */
struct gpuctl_group *gpuctl_group_create(struct iommu_group *grp)
{
	struct gpuctl_group *group;
	int ret;

	lockdep_assert_held(&gpuctl_lock);

	group = kzalloc(sizeof(*group), GFP_KERNEL);
	if (!group)
		return ERR_PTR(-ENOMEM);

	group->id = iommu_group_id(grp);
	INIT_LIST_HEAD(&group->members);
	ret = xa_insert(&gpuctl_groups, group->id, group, GFP_KERNEL);
	if (ret) {
		kfree(group);
		return ERR_PTR(ret);
	}
	group->grp = iommu_group_ref_get(grp);
	return group;
}

/**
 * gpuctl_group_destroy() - stop tracking a group
 * @group: a group without members
 *
 * Context: gpuctl_lock held.
 */
void gpuctl_group_destroy(struct gpuctl_group *group)
{
	lockdep_assert_held(&gpuctl_lock);
	WARN_ON(!list_empty(&group->members));

	xa_erase(&gpuctl_groups, group->id);
	iommu_group_put(group->grp);
	kfree(group);
}

/**
 * gpuctl_group_add_member() - link a device into a group
 * @group: the group
 * @dev: a device not yet in any group
 *
 * Members stay ordered by address so replies list them in a stable order.
 *
 * Context: gpuctl_lock held.
 */
void gpuctl_group_add_member(struct gpuctl_group *group, struct gpuctl_dev *dev)
{
	struct gpuctl_dev *pos;

	lockdep_assert_held(&gpuctl_lock);

	list_for_each_entry(pos, &group->members, group_node) {
		if (pos->key > dev->key)
			break;
	}
	list_add_tail(&dev->group_node, &pos->group_node);
	dev->group = group;
}

/**
 * gpuctl_group_has_gpu() - whether a GPU is still a member
 * @group: the group
 *
 * Context: gpuctl_lock held.
 * Return: true when at least one member is a GPU.
 */
bool gpuctl_group_has_gpu(const struct gpuctl_group *group)
{
	const struct gpuctl_dev *m;

	lockdep_assert_held(&gpuctl_lock);

	list_for_each_entry(m, &group->members, group_node) {
		if (gpuctl_inventory_is_unit(m->pdev))
			return true;
	}
	return false;
}

/**
 * gpuctl_group_role() - why a member of a group is tracked
 * @group: the group @dev belongs to
 * @dev: the member
 *
 * A function that shares a slot with a GPU of the group is its companion
 * (HDMI audio, USB-C); any other non-bridge member is foreign. The answer
 * depends on the other members, so it is recomputed whenever they change.
 *
 * Context: gpuctl_lock held.
 * Return: an enum gpuctl_dev_role value.
 */
u32 gpuctl_group_role(const struct gpuctl_group *group,
		      const struct gpuctl_dev *dev)
{
	struct pci_dev *pdev = dev->pdev;
	const struct gpuctl_dev *m;

	lockdep_assert_held(&gpuctl_lock);

	if (gpuctl_inventory_is_unit(pdev))
		return GPUCTL_DEV_ROLE_GPU;
	if (pci_is_bridge(pdev))
		return GPUCTL_DEV_ROLE_BRIDGE;

	list_for_each_entry(m, &group->members, group_node) {
		/* The same bus implies the same domain. */
		if (gpuctl_inventory_is_unit(m->pdev) &&
		    m->pdev->bus == pdev->bus &&
		    PCI_SLOT(m->pdev->devfn) == PCI_SLOT(pdev->devfn))
			return GPUCTL_DEV_ROLE_COMPANION;
	}
	return GPUCTL_DEV_ROLE_FOREIGN;
}

/**
 * gpuctl_group_offender() - the member that makes a group not viable
 * @group: the group
 *
 * This is the kernel's DMA ownership rule that VFIO relies on: a group is
 * usable only when no member is bound to a driver that uses the kernel DMA
 * API. Drivers that manage DMA themselves (vfio-pci and its variants,
 * pci-stub) and unbound devices do not count, and neither do bridges.
 *
 * Context: gpuctl_lock held.
 * Return: the first offending member in address order, or NULL when the
 * group is viable.
 */
struct gpuctl_dev *gpuctl_group_offender(const struct gpuctl_group *group)
{
	struct gpuctl_dev *m;

	lockdep_assert_held(&gpuctl_lock);

	list_for_each_entry(m, &group->members, group_node) {
		if (m->driver[0] && !m->dma_managed && !pci_is_bridge(m->pdev))
			return m;
	}
	return NULL;
}

struct gpuctl_collect {
	struct pci_dev **pdevs;
	unsigned int n;
	unsigned int size;
};

static int gpuctl_collect_one(struct device *dev, void *data)
{
	struct gpuctl_collect *c = data;
	struct pci_dev **p;

	if (!dev_is_pci(dev))
		return 0;

	if (c->n == c->size) {
		p = krealloc_array(c->pdevs, c->size + 8, sizeof(*p),
				   GFP_KERNEL);
		if (!p)
			return -ENOMEM;
		c->pdevs = p;
		c->size += 8;
	}
	c->pdevs[c->n++] = pci_dev_get(to_pci_dev(dev));
	return 0;
}

/**
 * gpuctl_group_collect() - take references on the PCI members of a group
 * @grp: the IOMMU core's group
 * @pdevs: out: an array of referenced members; the caller drops each
 *	reference with pci_dev_put() and frees the array with kfree()
 *
 * iommu_group_for_each_dev() holds the group's mutex, which the driver core
 * takes under the device lock when it binds a driver. So nothing but taking
 * references happens inside the walk; the caller acts after it returns.
 *
 * Context: sleeps; takes and releases the group's mutex.
 * Return: the number of members in *@pdevs, or a negative errno.
 */
int gpuctl_group_collect(struct iommu_group *grp, struct pci_dev ***pdevs)
{
	struct gpuctl_collect c = {};
	int ret;

	ret = iommu_group_for_each_dev(grp, &c, gpuctl_collect_one);
	if (ret) {
		while (c.n)
			pci_dev_put(c.pdevs[--c.n]);
		kfree(c.pdevs);
		return ret;
	}
	*pdevs = c.pdevs;
	return c.n;
}
