// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * The allocation ledger: which VM owns which GPUs, and where the GPUs of a
 * new allocation come from.
 *
 * Locking: gpuctl_lock protects the table, every allocation and the
 * dev->alloc pointers into it. An allocation points at its tracked
 * devices and each device back at its allocation; a device that is
 * removed drops out of both sides at once (gpuctl_alloc_dev_gone()), so
 * neither pointer ever dangles.
 */

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/numa.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/xarray.h>

#include "alloc.h"
#include "inventory.h"
#include "iommu.h"
#include "mdev.h"
#include "netlink.h"
#include "sriov.h"

/* Allocation id -> struct gpuctl_alloc, under gpuctl_lock. */
static DEFINE_XARRAY_ALLOC(gpuctl_allocs);

/*
 * The id the next allocation gets (or the first free one after it).
 * Readable in /sys/module/gpuctl/parameters, and given at load by "gpuctl
 * module reload" from the module it replaces, so that no allocation id is
 * ever reused: a cloud stack keys its records by it.
 */
static u32 gpuctl_alloc_next_id;
module_param_named(next_alloc_id, gpuctl_alloc_next_id, uint, 0444);
MODULE_PARM_DESC(next_alloc_id,
		 "The id the next allocation gets (gpuctl module reload carries it over)");

/**
 * gpuctl_alloc_unfit() - why a GPU cannot be allocated now
 * @dev: the device
 * @why: filled with the reason, naming the device, when it cannot
 * @len: size of @why
 *
 * A GPU can be allocated when a rule reserves it, it is on its rule's
 * driver, no allocation has it, no dev-set is changing its PF's VFs, and
 * VFIO can use its IOMMU group.
 *
 * Context: gpuctl_lock held; takes the IOMMU group's mutex.
 * Return: 0 when it can; -EINVAL when it is no GPU, -EBUSY otherwise.
 */
int gpuctl_alloc_unfit(const struct gpuctl_dev *dev, char *why, size_t len)
{
	const char *name = pci_name(dev->pdev);
	const struct gpuctl_dev *offender;

	lockdep_assert_held(&gpuctl_lock);

	if (dev->role != GPUCTL_DEV_ROLE_GPU) {
		snprintf(why, len, "%s is not a GPU", name);
		return -EINVAL;
	}
	if (dev->alloc) {
		snprintf(why, len, "%s is allocated to %u", name,
			 dev->alloc->info.id);
		return -EBUSY;
	}
	if (!dev->res.rule) {
		snprintf(why, len, "%s is not reserved", name);
		return -EBUSY;
	}
	switch (dev->res.state) {
	case GPUCTL_DEV_STATE_RESERVED:
		break;
	case GPUCTL_DEV_STATE_HELD:
		snprintf(why, len, "%s is held by %s", name, dev->driver);
		return -EBUSY;
	default:
		snprintf(why, len, "%s is blocked: %s", name, dev->res.blocked);
		return -EBUSY;
	}
	if (gpuctl_sriov_changing(dev->pdev)) {
		snprintf(why, len, "%s: PF %s is changing its VFs", name,
			 pci_name(pci_physfn(dev->pdev)));
		return -EBUSY;
	}
	if (!dev->group) {
		snprintf(why, len, "%s has no IOMMU group", name);
		return -EBUSY;
	}
	offender = gpuctl_group_offender(dev->group);
	if (offender) {
		snprintf(why, len, "group %u not viable: %s bound to %s",
			 dev->group->id, pci_name(offender->pdev),
			 offender->driver);
		return -EBUSY;
	}
	return 0;
}

/* Placement passes: the node asked for, then what the policy allows. */
enum gpuctl_place_pass {
	GPUCTL_PLACE_ON_NODE,
	GPUCTL_PLACE_ELSEWHERE,
};

static bool gpuctl_alloc_node_ok(const struct gpuctl_alloc_req *req,
				 const struct gpuctl_dev *dev,
				 enum gpuctl_place_pass pass)
{
	int node = dev_to_node(&dev->pdev->dev);

	if (req->numa_node == NUMA_NO_NODE)
		return pass == GPUCTL_PLACE_ON_NODE;
#ifdef GPUCTL_TEST_MUTANT_NUMA
	/*
	 * Test-only mutant, off unless built with -DGPUCTL_TEST_MUTANT_NUMA
	 * (scripts/teeth.sh): the first pass takes the GPUs off the node
	 * asked for, so that a selftest run shows which cases notice.
	 */
	if (pass == GPUCTL_PLACE_ON_NODE)
		return node != req->numa_node;
#endif
	if (pass == GPUCTL_PLACE_ON_NODE)
		return node == req->numa_node;

	switch (req->numa_policy) {
	case GPUCTL_NUMA_POLICY_PREFERRED:
		return node != req->numa_node;
	case GPUCTL_NUMA_POLICY_LEGACY:
		/* Devices whose platform gives no node fit anywhere. */
		return node == NUMA_NO_NODE;
	default:
		return false;
	}
}

/**
 * gpuctl_alloc_picked() - whether a request has a GPU already
 * @req: the request
 * @dev: the GPU
 *
 * Context: gpuctl_lock held.
 * Return: true when @dev is among @req's GPUs.
 */
bool gpuctl_alloc_picked(const struct gpuctl_alloc_req *req,
			 const struct gpuctl_dev *dev)
{
	unsigned int i;

	for (i = 0; i < req->nr_gpus; i++) {
		if (req->gpus[i] == dev)
			return true;
	}
	return false;
}

static void gpuctl_alloc_place_pass(struct gpuctl_alloc_req *req,
				    enum gpuctl_place_pass pass,
				    char *excluded, size_t len)
{
	struct gpuctl_dev *dev;
	unsigned long key = 0;
	char why[96];

	for (; (dev = gpuctl_inventory_next(&key)); key++) {
		if (req->nr_gpus == req->count)
			return;
		if (dev->role != GPUCTL_DEV_ROLE_GPU ||
		    gpuctl_alloc_picked(req, dev) ||
		    (req->has_match && !gpuctl_match_pdev(&req->match, dev->pdev)) ||
		    !gpuctl_alloc_node_ok(req, dev, pass))
			continue;
		if (gpuctl_alloc_unfit(dev, why, sizeof(why))) {
			/* Only a group that spoils a reserved GPU is news. */
			if (!excluded[0] && dev->res.rule && !dev->alloc &&
			    dev->res.state == GPUCTL_DEV_STATE_RESERVED)
				strscpy(excluded, why, len);
			continue;
		}
		req->gpus[req->nr_gpus++] = dev;
	}
}

/**
 * gpuctl_alloc_place() - pick the GPUs of a "count" request
 * @req: the request; its @gpus are filled in
 * @why: filled with why the request cannot be met
 * @len: size of @why
 *
 * Picks in address order among the GPUs gpuctl_alloc_unfit() accepts:
 * first those on the requested node, then, as the NUMA policy allows,
 * those elsewhere (preferred) or on no node (legacy).
 *
 * Context: gpuctl_lock held.
 * Return: 0, or -ENOSPC when fewer GPUs than asked for are free.
 */
int gpuctl_alloc_place(struct gpuctl_alloc_req *req, char *why, size_t len)
{
	char excluded[96] = "", match[GPUCTL_MATCH_STR_LEN] = "";
	char node[24] = "";

	lockdep_assert_held(&gpuctl_lock);

	req->nr_gpus = 0;
	gpuctl_alloc_place_pass(req, GPUCTL_PLACE_ON_NODE, excluded,
				sizeof(excluded));
	gpuctl_alloc_place_pass(req, GPUCTL_PLACE_ELSEWHERE, excluded,
				sizeof(excluded));
	if (req->nr_gpus == req->count)
		return 0;

	if (req->has_match)
		gpuctl_match_format(&req->match, match, sizeof(match));
	if (req->numa_node != NUMA_NO_NODE &&
	    req->numa_policy != GPUCTL_NUMA_POLICY_PREFERRED)
		snprintf(node, sizeof(node), " on node %d", req->numa_node);
	snprintf(why, len, "only %u free GPU%s%s%s%s", req->nr_gpus,
		 req->nr_gpus == 1 ? "" : "s", match[0] ? " matching " : "",
		 match, node);
	/* Why a reserved GPU was passed over, if the message has room. */
	if (excluded[0] &&
	    strlen(why) + 2 + strlen(excluded) < GPUCTL_ALLOC_WHY_LEN) {
		strlcat(why, "; ", len);
		strlcat(why, excluded, len);
	}
	req->nr_gpus = 0;
	return -ENOSPC;
}

static bool gpuctl_alloc_listed(struct gpuctl_dev **devs, unsigned int n,
				const struct gpuctl_dev *dev)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (devs[i] == dev)
			return true;
	}
	return false;
}

/*
 * The other functions of a GPU's slot that its rule reserves with it,
 * appended to @out[*@n] unless listed already: two GPU functions of one
 * slot share their companions. With @out NULL, only counts (an upper
 * bound).
 */
static void gpuctl_alloc_companions(struct gpuctl_dev *gpu,
				    struct gpuctl_dev **out, unsigned int *n)
{
	struct pci_dev *pdev = gpu->pdev;
	struct gpuctl_dev *m;

	if (!gpu->group)
		return;

	list_for_each_entry(m, &gpu->group->members, group_node) {
		if (m->role != GPUCTL_DEV_ROLE_COMPANION || !m->res.rule ||
		    m->alloc || m->pdev->bus != pdev->bus ||
		    PCI_SLOT(m->pdev->devfn) != PCI_SLOT(pdev->devfn))
			continue;
		if (out && gpuctl_alloc_listed(out, *n, m))
			continue;
		if (out)
			out[*n] = m;
		(*n)++;
	}
}

static int gpuctl_alloc_dev_cmp(const void *a, const void *b)
{
	const struct gpuctl_alloc_dev *x = a, *y = b;

	return x->dev->key < y->dev->key ? -1 : x->dev->key > y->dev->key;
}

/**
 * gpuctl_alloc_create() - enter an allocation into the ledger
 * @req: the request, with its GPUs named or placed and checked
 *
 * Each GPU brings its companions. The caller checked the GPUs with
 * gpuctl_alloc_unfit() and the tenant limits under the same hold of
 * gpuctl_lock, so nothing can fail here but memory and the id.
 *
 * Context: gpuctl_lock held.
 * Return: the allocation, or ERR_PTR(-EEXIST) when the requested id is
 * taken, -ENOMEM, or -ESHUTDOWN while the module unloads.
 */
struct gpuctl_alloc *gpuctl_alloc_create(const struct gpuctl_alloc_req *req)
{
	struct gpuctl_alloc *alloc;
	unsigned int i, n = 0;
	struct gpuctl_dev **devs;
	int ret;

	lockdep_assert_held(&gpuctl_lock);

	for (i = 0; i < req->nr_gpus; i++) {
		n++;
		gpuctl_alloc_companions(req->gpus[i], NULL, &n);
	}
	devs = kcalloc(n, sizeof(*devs), GFP_KERNEL);
	if (!devs)
		return ERR_PTR(-ENOMEM);

	for (i = 0, n = 0; i < req->nr_gpus; i++) {
		devs[n++] = req->gpus[i];
		gpuctl_alloc_companions(req->gpus[i], devs, &n);
	}

	alloc = kzalloc(struct_size(alloc, devs, n), GFP_KERNEL);
	if (!alloc) {
		ret = -ENOMEM;
		goto err_free;
	}
	if (req->nr_mdevs) {
		alloc->mdevs = kcalloc(req->nr_mdevs, sizeof(*alloc->mdevs),
				       GFP_KERNEL);
		if (!alloc->mdevs) {
			ret = -ENOMEM;
			goto err_free;
		}
	}

	alloc->info = req->info;
	if (alloc->info.id) {
		ret = xa_insert(&gpuctl_allocs, alloc->info.id, alloc,
				GFP_KERNEL);
		if (ret == -EBUSY)
			ret = -EEXIST;
	} else {
		ret = xa_alloc_cyclic(&gpuctl_allocs, &alloc->info.id, alloc,
				      XA_LIMIT(1, U32_MAX),
				      &gpuctl_alloc_next_id, GFP_KERNEL);
		ret = min(ret, 0);
	}
	if (ret)
		goto err_free;

	/* The ledger keeps the module; see struct gpuctl_alloc. */
	if (!try_module_get(THIS_MODULE)) {
		xa_erase(&gpuctl_allocs, alloc->info.id);
		ret = -ESHUTDOWN;
		goto err_free;
	}

	for (i = 0; i < n; i++) {
		alloc->devs[i].dev = devs[i];
		strscpy(alloc->devs[i].address, pci_name(devs[i]->pdev),
			sizeof(alloc->devs[i].address));
		devs[i]->alloc = alloc;
	}
	/* a typed VF has no companions: it is one of the named */
	for (i = 0; i < req->nr_gpus; i++) {
		unsigned int j;

		for (j = 0; req->gpu_typed[i] && j < n; j++)
			if (alloc->devs[j].dev == req->gpus[i])
				alloc->devs[j].typed = true;
	}
	sort(alloc->devs, n, sizeof(alloc->devs[0]), gpuctl_alloc_dev_cmp,
	     NULL);
	alloc->nr_devs = n;
	for (i = 0; i < req->nr_mdevs; i++) {
		alloc->mdevs[i].mdev = req->mdevs[i];
		alloc->mdevs[i].uuid = req->mdevs[i]->uuid;
		alloc->mdevs[i].made = req->mdev_made[i];
		req->mdevs[i]->alloc = alloc;
	}
	alloc->nr_mdevs = req->nr_mdevs;
	/* each vGPU counts as one GPU, as a VF does */
	alloc->gpus = req->nr_gpus + req->nr_mdevs;
	alloc->state = GPUCTL_ALLOC_STATE_IDLE;
	kfree(devs);

	/* A device restored into the ledger may be in use already. */
	gpuctl_alloc_update_state(alloc, false);
	gpuctl_netlink_notify_alloc(alloc, GPUCTL_CMD_ALLOC_NEW_NTF, 0);
	gpuctl_inventory_changed();
	return alloc;

err_free:
	kfree(devs);
	if (alloc)
		kfree(alloc->mdevs);
	kfree(alloc);
	return ERR_PTR(ret);
}

/**
 * gpuctl_alloc_destroy() - end an allocation and announce why
 * @alloc: the allocation
 * @end: enum gpuctl_alloc_end
 *
 * Context: gpuctl_lock held.
 */
void gpuctl_alloc_destroy(struct gpuctl_alloc *alloc, u32 end)
{
	unsigned int i;

	lockdep_assert_held(&gpuctl_lock);

	gpuctl_netlink_notify_alloc(alloc, GPUCTL_CMD_ALLOC_DEL_NTF, end);
	for (i = 0; i < alloc->nr_devs; i++) {
		if (alloc->devs[i].dev)
			alloc->devs[i].dev->alloc = NULL;
	}
	for (i = 0; i < alloc->nr_mdevs; i++) {
		if (alloc->mdevs[i].mdev)
			alloc->mdevs[i].mdev->alloc = NULL;
	}
	xa_erase(&gpuctl_allocs, alloc->info.id);
	kfree(alloc->mdevs);
	kfree(alloc);
	gpuctl_inventory_changed();
	module_put(THIS_MODULE);
}

/**
 * gpuctl_alloc_find() - look up an allocation
 * @id: its id
 *
 * Context: gpuctl_lock held.
 * Return: the allocation, or NULL.
 */
struct gpuctl_alloc *gpuctl_alloc_find(u32 id)
{
	lockdep_assert_held(&gpuctl_lock);
	return xa_load(&gpuctl_allocs, id);
}

/**
 * gpuctl_alloc_next() - iterate over allocations in id order
 * @id: in: the first id to consider; out: the id of the one returned
 *
 * Context: gpuctl_lock held.
 * Return: the first allocation with an id of at least *@id, or NULL.
 */
struct gpuctl_alloc *gpuctl_alloc_next(unsigned long *id)
{
	lockdep_assert_held(&gpuctl_lock);
	return xa_find(&gpuctl_allocs, id, U32_MAX, XA_PRESENT);
}

/**
 * gpuctl_alloc_open_dev() - a device of an allocation that is open
 * @alloc: the allocation
 *
 * Context: gpuctl_lock held.
 * Return: the first device a VFIO user has open, or NULL.
 */
const struct gpuctl_dev *gpuctl_alloc_open_dev(const struct gpuctl_alloc *alloc)
{
	unsigned int i;

	lockdep_assert_held(&gpuctl_lock);

	for (i = 0; i < alloc->nr_devs; i++) {
		if (alloc->devs[i].dev && alloc->devs[i].dev->holder.open)
			return alloc->devs[i].dev;
	}
	return NULL;
}

/**
 * gpuctl_alloc_open_mdev() - an mdev instance of an allocation that is open
 * @alloc: the allocation
 *
 * Context: gpuctl_lock held.
 * Return: the first instance a VFIO user has open, as gpuctl last looked
 * (mdev-watch.c), or NULL.
 */
const struct gpuctl_mdev *
gpuctl_alloc_open_mdev(const struct gpuctl_alloc *alloc)
{
	unsigned int i;

	lockdep_assert_held(&gpuctl_lock);

	for (i = 0; i < alloc->nr_mdevs; i++) {
		if (alloc->mdevs[i].mdev && alloc->mdevs[i].mdev->open)
			return alloc->mdevs[i].mdev;
	}
	return NULL;
}

/**
 * gpuctl_alloc_in_use() - whether a VFIO user has any of an allocation open
 * @alloc: the allocation
 *
 * Context: gpuctl_lock held.
 * Return: true when one of its devices or mdev instances is open.
 */
bool gpuctl_alloc_in_use(const struct gpuctl_alloc *alloc)
{
	return gpuctl_alloc_open_dev(alloc) || gpuctl_alloc_open_mdev(alloc);
}

/**
 * gpuctl_alloc_update_state() - follow the opens and closes of its devices
 * @alloc: the allocation
 * @notify: announce a change
 *
 * Running while any device or mdev instance is open, idle otherwise; lost
 * stays lost.
 *
 * Context: gpuctl_lock held.
 * Return: true when the state changed.
 */
bool gpuctl_alloc_update_state(struct gpuctl_alloc *alloc, bool notify)
{
	u32 state;

	lockdep_assert_held(&gpuctl_lock);

	if (alloc->state == GPUCTL_ALLOC_STATE_LOST)
		return false;

	state = gpuctl_alloc_in_use(alloc) ? GPUCTL_ALLOC_STATE_RUNNING :
					     GPUCTL_ALLOC_STATE_IDLE;
	if (state == alloc->state)
		return false;

	alloc->state = state;
	gpuctl_inventory_changed();
	if (notify)
		gpuctl_netlink_notify_alloc(alloc, GPUCTL_CMD_ALLOC_CHANGE_NTF,
					    0);
	return true;
}

/**
 * gpuctl_alloc_dev_gone() - a device of an allocation is no longer tracked
 * @dev: the device, about to be freed
 *
 * The allocation keeps the address and becomes lost; it stays in the
 * ledger until it is deleted, so that the loss is seen.
 *
 * Context: gpuctl_lock held.
 */
void gpuctl_alloc_dev_gone(struct gpuctl_dev *dev)
{
	struct gpuctl_alloc *alloc = dev->alloc;
	unsigned int i;

	lockdep_assert_held(&gpuctl_lock);

	if (!alloc)
		return;

	for (i = 0; i < alloc->nr_devs; i++) {
		if (alloc->devs[i].dev == dev)
			alloc->devs[i].dev = NULL;
	}
	dev->alloc = NULL;

	if (alloc->state != GPUCTL_ALLOC_STATE_LOST) {
		alloc->state = GPUCTL_ALLOC_STATE_LOST;
		snprintf(alloc->reason, sizeof(alloc->reason),
			 "%s was removed", pci_name(dev->pdev));
	}
	gpuctl_netlink_notify_alloc(alloc, GPUCTL_CMD_ALLOC_CHANGE_NTF, 0);
	gpuctl_inventory_changed();
}

/**
 * gpuctl_alloc_mdev_gone() - an mdev instance of an allocation was removed
 * @m: the instance, about to be freed
 *
 * As gpuctl_alloc_dev_gone(): the allocation keeps the UUID and becomes
 * lost, so that the loss is seen.
 *
 * Context: gpuctl_lock held.
 */
void gpuctl_alloc_mdev_gone(struct gpuctl_mdev *m)
{
	struct gpuctl_alloc *alloc = m->alloc;
	unsigned int i;

	lockdep_assert_held(&gpuctl_lock);

	if (!alloc)
		return;

	for (i = 0; i < alloc->nr_mdevs; i++) {
		if (alloc->mdevs[i].mdev == m)
			alloc->mdevs[i].mdev = NULL;
	}
	m->alloc = NULL;

	if (alloc->state != GPUCTL_ALLOC_STATE_LOST) {
		alloc->state = GPUCTL_ALLOC_STATE_LOST;
		snprintf(alloc->reason, sizeof(alloc->reason),
			 "%pUl was removed", &m->uuid);
	}
	gpuctl_netlink_notify_alloc(alloc, GPUCTL_CMD_ALLOC_CHANGE_NTF, 0);
	gpuctl_inventory_changed();
}
