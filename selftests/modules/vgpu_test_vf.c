// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * Test only, never for a real host: NVIDIA-style vendor VFs (Ada, Hopper
 * and Blackwell with vGPU 17+) on a stand-in SR-IOV function, for the vGPU
 * tests. On real hosts the PF and its VFs stay on the "nvidia" driver,
 * which registers each VF as a VFIO device built on vfio-pci-core, and
 * each VF has a sysfs group nvidia/ with:
 *
 *  - creatable_vgpu_types (0444): a header line, then one "%-5d : %s" line
 *    per type the VF could take now; header only on a VF that has a type
 *    and on a card with no room left;
 *  - current_vgpu_type (0644): "%d\n", 0 for none. Writing an id gives the
 *    VF that type, writing 0 takes it away. Errors: EPERM (a type over a
 *    type, or 0 without one), EBUSY (the VF is open), ENODEV (no such
 *    id), EINVAL (another type than the one already on the card: cards
 *    are homogeneous), ENOSPC (past the type's max_instance).
 *
 * A VF without a type cannot be opened (ENODEV). Type writes make no
 * uevent. No emulator has such a device, so this driver plays it on
 * QEMU's nvme with SR-IOV: it is named "nvidia" and binds only through
 * driver_override, the PF first, then the VFs of a PF it holds. Its VFs
 * are real VFIO devices, so a nested VM can open them.
 */

#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/vfio.h>
#include <linux/vfio_pci_core.h>

/* An L40S-like card: one 48 GiB framebuffer, shared by VFs of one type. */
static const struct vtv_type {
	unsigned int id;
	const char *name;
	unsigned int max_instance;
} vtv_types[] = {
	{ 1155, "NVIDIA L40S-12Q", 4 },
	{ 1156, "NVIDIA L40S-24Q", 2 },
	{ 1157, "NVIDIA L40S-48Q", 1 },
};

/* A PF: the type its VFs have, and how many have it. */
struct vtv_card {
	struct mutex lock;		/* @type, @instances, each VF's state */
	const struct vtv_type *type;
	unsigned int instances;
};

/* A VF: a VFIO device first (vfio_alloc_device() wants it at offset 0). */
struct vtv_vf {
	struct vfio_pci_core_device core;
	struct vtv_card *card;
	const struct vtv_type *type;	/* under card->lock */
	bool open;			/* under card->lock */
};

static struct pci_driver vtv_driver;

static struct vtv_vf *vtv_vf_of(struct device *dev)
{
	return dev_get_drvdata(dev);
}

static const struct vtv_type *vtv_type_find(unsigned int id)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(vtv_types); i++)
		if (vtv_types[i].id == id)
			return &vtv_types[i];
	return NULL;
}

static bool vtv_card_accepts(const struct vtv_card *card,
			     const struct vtv_type *t)
{
	if (card->type && card->type != t)
		return false;
	return card->instances < t->max_instance;
}

static ssize_t creatable_vgpu_types_show(struct device *dev,
					 struct device_attribute *attr,
					 char *buf)
{
	struct vtv_vf *vf = vtv_vf_of(dev);
	ssize_t len;
	unsigned int i;

	len = sysfs_emit(buf, "ID    : vGPU Name\n");
	mutex_lock(&vf->card->lock);
	for (i = 0; !vf->type && i < ARRAY_SIZE(vtv_types); i++)
		if (vtv_card_accepts(vf->card, &vtv_types[i]))
			len += sysfs_emit_at(buf, len, "%-5u : %s\n",
					     vtv_types[i].id, vtv_types[i].name);
	mutex_unlock(&vf->card->lock);
	return len;
}
static DEVICE_ATTR_RO(creatable_vgpu_types);

static ssize_t current_vgpu_type_show(struct device *dev,
				      struct device_attribute *attr, char *buf)
{
	struct vtv_vf *vf = vtv_vf_of(dev);
	unsigned int id;

	mutex_lock(&vf->card->lock);
	id = vf->type ? vf->type->id : 0;
	mutex_unlock(&vf->card->lock);
	return sysfs_emit(buf, "%u\n", id);
}

/* Gives the VF type @id, or takes its type away for 0. */
static int vtv_vf_set_type(struct vtv_vf *vf, unsigned int id)
{
	struct vtv_card *card = vf->card;
	const struct vtv_type *t = NULL;

	lockdep_assert_held(&card->lock);
	if (vf->open)
		return -EBUSY;
	if (!id) {
		if (!vf->type)
			return -EPERM;
		vf->type = NULL;
		if (!--card->instances)
			card->type = NULL;
		return 0;
	}
	if (vf->type)
		return -EPERM;
	t = vtv_type_find(id);
	if (!t)
		return -ENODEV;
	if (card->type && card->type != t)
		return -EINVAL;
	if (card->instances >= t->max_instance)
		return -ENOSPC;
	vf->type = t;
	card->type = t;
	card->instances++;
	return 0;
}

static ssize_t current_vgpu_type_store(struct device *dev,
				       struct device_attribute *attr,
				       const char *buf, size_t count)
{
	struct vtv_vf *vf = vtv_vf_of(dev);
	unsigned int id;
	int ret;

	ret = kstrtouint(buf, 0, &id);
	if (ret)
		return ret;
	mutex_lock(&vf->card->lock);
	ret = vtv_vf_set_type(vf, id);
	mutex_unlock(&vf->card->lock);
	return ret ? ret : count;
}
static DEVICE_ATTR_RW(current_vgpu_type);

static struct attribute *vtv_vf_attrs[] = {
	&dev_attr_creatable_vgpu_types.attr,
	&dev_attr_current_vgpu_type.attr,
	NULL
};

static const struct attribute_group vtv_vf_group = {
	.name = "nvidia",
	.attrs = vtv_vf_attrs,
};

/* A VF opens only with a type, as on NVIDIA's driver. */
static int vtv_open_device(struct vfio_device *core_vdev)
{
	struct vtv_vf *vf = container_of(core_vdev, struct vtv_vf, core.vdev);
	int ret = 0;

	mutex_lock(&vf->card->lock);
	if (!vf->type)
		ret = -ENODEV;
	else
		vf->open = true;
	mutex_unlock(&vf->card->lock);
	if (ret)
		return ret;

	ret = vfio_pci_core_enable(&vf->core);
	if (!ret) {
		vfio_pci_core_finish_enable(&vf->core);
		return 0;
	}
	mutex_lock(&vf->card->lock);
	vf->open = false;
	mutex_unlock(&vf->card->lock);
	return ret;
}

static void vtv_close_device(struct vfio_device *core_vdev)
{
	struct vtv_vf *vf = container_of(core_vdev, struct vtv_vf, core.vdev);

	vfio_pci_core_close_device(core_vdev);
	mutex_lock(&vf->card->lock);
	vf->open = false;
	mutex_unlock(&vf->card->lock);
}

static const struct vfio_device_ops vtv_vfio_ops = {
	.name		= "nvidia-vf",
	.init		= vfio_pci_core_init_dev,
	.release	= vfio_pci_core_release_dev,
	.open_device	= vtv_open_device,
	.close_device	= vtv_close_device,
	.ioctl		= vfio_pci_core_ioctl,
	.device_feature	= vfio_pci_core_ioctl_feature,
	.read		= vfio_pci_core_read,
	.write		= vfio_pci_core_write,
	.mmap		= vfio_pci_core_mmap,
	.request	= vfio_pci_core_request,
	.match		= vfio_pci_core_match,
	/* 6.2's iommufd ops, probed by scripts/build-mdev-samples.sh */
#ifdef VTV_HAVE_VFIO_IOMMUFD_OPS
	.bind_iommufd	= vfio_iommufd_physical_bind,
	.unbind_iommufd	= vfio_iommufd_physical_unbind,
	.attach_ioas	= vfio_iommufd_physical_attach_ioas,
	.detach_ioas	= vfio_iommufd_physical_detach_ioas,
#endif
};

static int vtv_probe_vf(struct pci_dev *pdev)
{
	struct pci_dev *pf = pci_physfn(pdev);
	struct vtv_vf *vf;
	int ret;

	/* only the VFs of a card this driver holds */
	if (pf->dev.driver != &vtv_driver.driver)
		return -ENODEV;

	vf = vfio_alloc_device(vtv_vf, core.vdev, &pdev->dev, &vtv_vfio_ops);
	if (IS_ERR(vf))
		return PTR_ERR(vf);
	vf->card = pci_get_drvdata(pf);
	dev_set_drvdata(&pdev->dev, vf);

	ret = vfio_pci_core_register_device(&vf->core);
	if (ret)
		goto err_put;
	ret = sysfs_create_group(&pdev->dev.kobj, &vtv_vf_group);
	if (ret)
		goto err_unregister;
	return 0;

err_unregister:
	vfio_pci_core_unregister_device(&vf->core);
err_put:
	vfio_put_device(&vf->core.vdev);
	return ret;
}

static int vtv_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct vtv_card *card;

	if (pdev->is_virtfn)
		return vtv_probe_vf(pdev);
	if (!pdev->is_physfn)
		return -ENODEV;

	card = devm_kzalloc(&pdev->dev, sizeof(*card), GFP_KERNEL);
	if (!card)
		return -ENOMEM;
	mutex_init(&card->lock);
	pci_set_drvdata(pdev, card);
	return 0;
}

static void vtv_remove(struct pci_dev *pdev)
{
	struct vtv_vf *vf;

	if (!pdev->is_virtfn) {
		/* the VFs go first: they use the card */
		pci_disable_sriov(pdev);
		return;
	}
	vf = dev_get_drvdata(&pdev->dev);
	sysfs_remove_group(&pdev->dev.kobj, &vtv_vf_group);
	vfio_pci_core_unregister_device(&vf->core);
	/* an unbound VF gives its type back, as the card's VFs go */
	mutex_lock(&vf->card->lock);
	if (vf->type && !--vf->card->instances)
		vf->card->type = NULL;
	mutex_unlock(&vf->card->lock);
	vfio_put_device(&vf->core.vdev);
}

static int vtv_sriov_configure(struct pci_dev *pdev, int nr_virtfn)
{
	int ret;

	if (pdev->is_virtfn)
		return -EINVAL;
	if (!nr_virtfn) {
		pci_disable_sriov(pdev);
		return 0;
	}
	ret = pci_enable_sriov(pdev, nr_virtfn);
	return ret ? ret : nr_virtfn;
}

/* No id table: it binds only a device whose driver_override names it. */
static struct pci_driver vtv_driver = {
	.name			= "nvidia",
	.probe			= vtv_probe,
	.remove			= vtv_remove,
	.sriov_configure	= vtv_sriov_configure,
	/* VFIO owns the VFs' DMA, as for any VFIO driver */
	.driver_managed_dma	= true,
};
module_pci_driver(vtv_driver);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("gpuctl test only: NVIDIA-style vendor VFs with nvidia/ vGPU types on a stand-in SR-IOV function");
