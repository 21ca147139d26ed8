// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * gpuctl-vfio-pci: vfio-pci with the allocation ledger enforced. It is
 * vfio-pci built on vfio-pci-core (kernel-facts 4.2), except that its
 * open_device refuses a VFIO user the device's allocation does not admit
 * (vfio-track.c), before the device is enabled. Being gpuctl's own
 * vfio_device, it is also where gpuctl learns who holds a device. A rule
 * names it as its driver ("gpuctl reserve add ... driver
 * gpuctl-vfio-pci"); like vfio-pci it binds only through driver_override.
 *
 * vfio core pins this module while one of its devices is open, and
 * unregistering the driver waits until every user closed its device.
 */

#include <linux/module.h>
#include <linux/pci.h>
#include <linux/vfio.h>
#include <linux/vfio_pci_core.h>

#include "compat.h"
#include "vfio-track.h"

/*
 * The opener is admitted, and becomes the holder, before the device is
 * enabled; the open is announced once it succeeded.
 */
static int gpuctl_vfio_pci_open_device(struct vfio_device *core_vdev)
{
	struct vfio_pci_core_device *vdev =
		container_of(core_vdev, struct vfio_pci_core_device, vdev);
	int ret;

	ret = gpuctl_vfio_open_begin(vdev->pdev);
	if (ret)
		return ret;

	ret = vfio_pci_core_enable(vdev);
	if (!ret)
		vfio_pci_core_finish_enable(vdev);

	gpuctl_vfio_open_end(vdev->pdev, ret);
	return ret;
}

static void gpuctl_vfio_pci_close_device(struct vfio_device *core_vdev)
{
	struct vfio_pci_core_device *vdev =
		container_of(core_vdev, struct vfio_pci_core_device, vdev);

	vfio_pci_core_close_device(core_vdev);
	gpuctl_vfio_closed(vdev->pdev);
}

static const struct vfio_device_ops gpuctl_vfio_pci_ops = {
	.name		= GPUCTL_VFIO_DRIVER_NAME,
	.init		= vfio_pci_core_init_dev,
	.release	= vfio_pci_core_release_dev,
	.open_device	= gpuctl_vfio_pci_open_device,
	.close_device	= gpuctl_vfio_pci_close_device,
	.ioctl		= vfio_pci_core_ioctl,
	.device_feature	= vfio_pci_core_ioctl_feature,
	.read		= vfio_pci_core_read,
	.write		= vfio_pci_core_write,
	.mmap		= vfio_pci_core_mmap,
	.request	= vfio_pci_core_request,
	.match		= vfio_pci_core_match,
	GPUCTL_VFIO_IOMMUFD_OPS
};

static int gpuctl_vfio_pci_probe(struct pci_dev *pdev,
				 const struct pci_device_id *id)
{
	struct vfio_pci_core_device *vdev;
	int ret;

	vdev = vfio_alloc_device(vfio_pci_core_device, vdev, &pdev->dev,
				 &gpuctl_vfio_pci_ops);
	if (IS_ERR(vdev))
		return PTR_ERR(vdev);

	dev_set_drvdata(&pdev->dev, vdev);
	ret = vfio_pci_core_register_device(vdev);
	if (ret)
		vfio_put_device(&vdev->vdev);
	return ret;
}

static void gpuctl_vfio_pci_remove(struct pci_dev *pdev)
{
	struct vfio_pci_core_device *vdev = dev_get_drvdata(&pdev->dev);

	vfio_pci_core_unregister_device(vdev);
	vfio_put_device(&vdev->vdev);
}

static int gpuctl_vfio_pci_sriov_configure(struct pci_dev *pdev, int nr_virtfn)
{
	return vfio_pci_core_sriov_configure(dev_get_drvdata(&pdev->dev),
					     nr_virtfn);
}

/* Override-only, as vfio-pci: nothing binds here unless told to. */
static const struct pci_device_id gpuctl_vfio_pci_table[] = {
	{ PCI_DRIVER_OVERRIDE_DEVICE_VFIO(PCI_ANY_ID, PCI_ANY_ID) },
	{}
};

static struct pci_driver gpuctl_vfio_pci_driver = {
	.name			= GPUCTL_VFIO_DRIVER_NAME,
	.id_table		= gpuctl_vfio_pci_table,
	.probe			= gpuctl_vfio_pci_probe,
	.remove			= gpuctl_vfio_pci_remove,
	.sriov_configure	= gpuctl_vfio_pci_sriov_configure,
	.err_handler		= &vfio_pci_core_err_handlers,
	/* VFIO owns DMA; a bound device must not spoil its group. */
	.driver_managed_dma	= true,
};

/**
 * gpuctl_vfio_driver_init() - register gpuctl-vfio-pci
 *
 * Context: module init, before the rules that may name it are applied.
 * Return: 0 or a negative errno.
 */
int gpuctl_vfio_driver_init(void)
{
	return pci_register_driver(&gpuctl_vfio_pci_driver);
}

/**
 * gpuctl_vfio_driver_exit() - unregister gpuctl-vfio-pci
 *
 * Its devices are left unbound; their driver_override still names it, so
 * no host driver takes them until gpuctl is back.
 *
 * Context: module exit; waits until no user has one of its devices open.
 */
void gpuctl_vfio_driver_exit(void)
{
	pci_unregister_driver(&gpuctl_vfio_pci_driver);
}
