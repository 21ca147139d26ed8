// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * gpuctl-vfio-pci: vfio-pci with the allocation ledger enforced. It is
 * vfio-pci built on vfio-pci-core (drivers/vfio/pci/vfio_pci.c,
 * vfio_pci_ops and vfio_pci_open_device(), 6.1 and 6.12), except that its
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

/*
 * Devices vfio-pci refuses for known errata that an untrusted user could
 * exploit, the same list on 6.1 and 6.12 (drivers/vfio/pci/vfio_pci.c,
 * vfio_pci_dev_in_denylist()); gpuctl-vfio-pci has no switch to allow
 * them, as vfio-pci has disable_denylist.
 */
static bool gpuctl_vfio_pci_denylisted(const struct pci_dev *pdev)
{
	if (pdev->vendor != PCI_VENDOR_ID_INTEL)
		return false;
	switch (pdev->device) {
	case PCI_DEVICE_ID_INTEL_QAT_C3XXX:
	case PCI_DEVICE_ID_INTEL_QAT_C3XXX_VF:
	case PCI_DEVICE_ID_INTEL_QAT_C62X:
	case PCI_DEVICE_ID_INTEL_QAT_C62X_VF:
	case PCI_DEVICE_ID_INTEL_QAT_DH895XCC:
	case PCI_DEVICE_ID_INTEL_QAT_DH895XCC_VF:
	case PCI_DEVICE_ID_INTEL_DSA_SPR0:
	case PCI_DEVICE_ID_INTEL_IAX_SPR0:
		return true;
	}
	return false;
}

static int gpuctl_vfio_pci_probe(struct pci_dev *pdev,
				 const struct pci_device_id *id)
{
	struct vfio_pci_core_device *vdev;
	int ret;

	if (gpuctl_vfio_pci_denylisted(pdev)) {
		pci_warn(pdev, "%04x:%04x is on vfio-pci's denylist: not bound\n",
			 pdev->vendor, pdev->device);
		return -EINVAL;
	}

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

/*
 * vfio-pci's policy on VFs, kept (drivers/vfio/pci/vfio_pci.c,
 * vfio_pci_sriov_configure(), 6.1 and 6.12): a PF on it enables VFs only
 * when the administrator said so, since VFs of a PF whose driver is a
 * VM's may not work without that driver's help.
 */
static bool enable_sriov;
module_param(enable_sriov, bool, 0644);
MODULE_PARM_DESC(enable_sriov,
		 "Let gpuctl-vfio-pci enable the VFs of a PF bound to it, as vfio-pci's own enable_sriov does (default: off)");

static int gpuctl_vfio_pci_sriov_configure(struct pci_dev *pdev, int nr_virtfn)
{
	if (!READ_ONCE(enable_sriov) && nr_virtfn) {
		pci_info(pdev, "VFs not enabled: load gpuctl with enable_sriov=1 to let gpuctl-vfio-pci enable them\n");
		return -ENOENT;
	}
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
